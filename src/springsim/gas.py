"""Gas: enclosed bodies under pressure. The System's methods that add, read and remove
them, and :class:`Gas`, the handle to one body's gas (the kernel owns them).

A pressure body is a closed boundary (a loop of edges in 2D, a surface of triangles
in 3D) filled with an isothermal ideal gas: P·V = nrt. A :class:`Gas` handle reads
the body's current pressure and volume from the kernel at every access, and writes
``nrt`` and ``ambient`` through to it: inflate or deflate a balloon between steps.

Units: in 3D, V is a volume (m³), P a pressure (Pa) and nrt an energy (J). In 2D
the body is a prism of unit depth: V is an area (m²), P a force per length (N/m)
and nrt is in J/m.
"""

from __future__ import annotations

import math
import operator
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from springsim import _core
from springsim._checks import _scalar


class _State(NamedTuple):
    nrt: float
    ambient: float
    volume: float


def _pressure(state: _State) -> float:
    """nrt / V; at V = 0 the limit: inf with gas in the body, 0 without."""
    if state.volume == 0:
        return math.inf if state.nrt > 0 else 0.0
    return state.nrt / state.volume


class Gas:
    """The gas of one pressure body: live values, ``nrt`` and ``ambient`` writable.

    Get one from :meth:`springsim.System.add_pressure`'s id with
    :meth:`springsim.System.gas`, or all of them from :attr:`springsim.System.gases`.

    Examples
    --------
    >>> import springsim as ss
    >>> ring = ss.ball(nodes=40, radius=1.0, mass=1.0, stiffness=1e3, dim=2, nrt=3.0)
    >>> gas = ring.gas(0)
    >>> round(gas.volume, 4), round(gas.pressure, 4)  # the 40-gon's area, nrt / V
    (3.1287, 0.9589)
    >>> gas.nrt = 6.0  # twice the gas: twice the pressure at this volume
    >>> round(gas.pressure, 4)
    1.9177
    """

    __slots__ = ("_system", "_id")

    def __init__(self, system: _core.System, body: int):
        self._system = system
        self._id = body

    def _state(self) -> _State:
        for body, nrt, ambient, volume in self._system._pressure_bodies():
            if body == self._id:
                return _State(nrt, ambient, volume)
        raise ValueError(f"pressure body {self._id} was removed from its system")

    def _write(self, nrt: float | None = None, ambient: float | None = None) -> None:
        state = self._state()
        nrt = state.nrt if nrt is None else _scalar(nrt, "nrt")
        ambient = state.ambient if ambient is None else _scalar(ambient, "ambient")
        self._system._set_pressure(self._id, nrt, ambient)

    @property
    def body(self) -> int:
        """The body id, as returned by :meth:`springsim.System.add_pressure`."""
        return self._id

    @property
    def volume(self) -> float:
        """Enclosed volume now, m³ (3D), or area, m² (2D)."""
        return self._state().volume

    @property
    def pressure(self) -> float:
        """Gas pressure now, P = nrt / V: Pa (3D) or N/m (2D).

        A flat body (V = 0) has P = inf if it holds gas (nrt > 0), else 0.
        """
        return _pressure(self._state())

    @property
    def nrt(self) -> float:
        """Amount of gas times temperature, n·R·T = P·V: J (3D) or J/m (2D), >= 0."""
        return self._state().nrt

    @nrt.setter
    def nrt(self, value: float) -> None:
        self._write(nrt=value)

    @property
    def ambient(self) -> float:
        """Pressure outside the body, Pa (3D) or N/m (2D), >= 0; the net push on the
        skin is P − ambient."""
        return self._state().ambient

    @ambient.setter
    def ambient(self, value: float) -> None:
        self._write(ambient=value)

    @property
    def energy(self) -> float:
        """This body's term of :attr:`springsim.Energy.pressure`: −nrt·ln V + ambient·V, J.

        Only differences are physical (ln V depends on the unit of V)."""
        state = self._state()
        gas = -state.nrt * math.log(state.volume) if state.nrt else 0.0
        return gas + state.ambient * state.volume

    @property
    def boundary(self) -> np.ndarray:
        """The boundary as stored: (K, 2) directed edges in 2D, (K, 3) triangles in
        3D, oriented outward (a copy)."""
        return self._system._pressure_elements(self._id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Gas) and other._system is self._system and other._id == self._id

    def __hash__(self) -> int:
        return hash((id(self._system), self._id))

    def __repr__(self) -> str:
        state = self._state()
        return (
            f"Gas(body={self._id}, pressure={_pressure(state):g}, "
            f"volume={state.volume:g}, nrt={state.nrt:g}, ambient={state.ambient:g})"
        )


def boundary_elements(boundary: npt.ArrayLike, dim: int) -> np.ndarray:
    """A user's boundary as the kernel's (K, dim) int64 elements.

    In 2D, a 1-D sequence of nodes is a closed loop (the edge from the last node back
    to the first is implied; a repeated first node at the end is dropped); a (K, 2)
    array is a set of directed edges. In 3D, a (K, 3) array of triangles.
    """
    array = np.asarray(boundary)
    if array.size == 0:
        array = array.astype(np.int64)
    if array.dtype.kind not in "iu":
        raise TypeError(f"boundary must be node indices (integers), got dtype {array.dtype}")
    if dim == 2 and array.ndim == 1:
        if len(array) > 1 and array[0] == array[-1]:
            array = array[:-1]
        array = np.stack([array, np.roll(array, -1)], axis=1)
    if array.ndim != 2 or array.shape[1] != dim:
        want = "a loop of node indices or (K, 2) edges" if dim == 2 else "(K, 3) triangles"
        raise ValueError(f"a {dim}D boundary must be {want}, got shape {array.shape}")
    if array.dtype.kind == "u" and array.size and array.max() > np.iinfo(np.int64).max:
        raise ValueError(f"boundary has an index beyond any system's size: {array.max()}")
    return np.ascontiguousarray(array, dtype=np.int64)


def add_pressure(
    self: _core.System, boundary: npt.ArrayLike, nrt: float, ambient: float = 0.0
) -> int:
    """Fill a closed boundary with an isothermal ideal gas; returns the body id.

    At every force evaluation the kernel computes the enclosed volume V (area in
    2D), the gas pressure P = nrt / V, and pushes every boundary element outward
    with (P − ambient) times its area (length in 2D), shared equally by the
    element's nodes. That force is exactly −∂E/∂x of the gas energy
    E = −nrt·ln V + ambient·V, which :meth:`energy` reports as ``pressure``, so
    symplectic methods conserve the total. This is Matyka's pressure soft body:
    a ring or a sphere of springs that a gas keeps round.

    Units: 3D, V in m³, P and ambient in Pa, nrt in J. 2D, a body of unit depth:
    V in m², P and ambient in N/m, nrt in J/m.

    Parameters
    ----------
    boundary : array_like of int
        2D: a loop of node indices (a closed polygon; the last node joins the
        first), or (K, 2) directed edges forming closed loops. 3D: (K, 3)
        triangles forming a closed surface, all ordered the same way round.
        Either orientation is accepted: a boundary enclosing a negative volume
        (clockwise, or triangles facing inward) is stored reversed, outward.
    nrt : float
        n·R·T of the gas, >= 0: the product P·V it keeps. To hold pressure P at
        volume V, pass P·V.
    ambient : float
        Pressure outside, >= 0.

    Returns
    -------
    int
        The body id (0 for the first body; ids are never reused). Pass it to
        :meth:`gas` to read the pressure and change ``nrt``.

    Raises
    ------
    TypeError
        A boundary that is not integers, a non-numeric nrt or ambient.
    ValueError
        A node index out of range, an element repeating a node, a boundary that
        is not closed or not consistently oriented (the message names the node or
        edge), one enclosing zero volume, nrt or ambient negative or not finite.
        Nothing is added.

    Notes
    -----
    During a step, a body whose volume reaches zero or below (turned inside out)
    makes the step fail with :class:`springsim.UnstableError` and the usual
    rollback. :meth:`remove_nodes` refuses to remove a node of a body's boundary.

    Examples
    --------
    A ring of 12 springs inflated in 2D: at rest, the tension of its springs
    balances the gas (Laplace's law, T = P·r, with r the distance from the centre
    to the springs).

    >>> import numpy as np
    >>> import springsim as ss
    >>> ring = ss.ball(nodes=12, radius=1.0, mass=1.0, stiffness=100.0, damping=1.0, dim=2)
    >>> ring.gravity = (0, 0)
    >>> body = ring.add_pressure(range(12), nrt=20.0)
    >>> ring.step(1e-3, steps=20000)
    >>> gas = ring.gas(body)
    >>> middles = (ring.positions + np.roll(ring.positions, -1, axis=0)) / 2
    >>> r = np.linalg.norm(middles - ring.center_of_mass(), axis=1).mean()
    >>> round(float(ring.spring_tensions().mean() / (gas.pressure * r)), 6)
    1.0
    """
    elements = boundary_elements(boundary, self.dim)
    return self._add_pressure(elements, _scalar(nrt, "nrt"), _scalar(ambient, "ambient"))


def gas(self: _core.System, body: int) -> Gas:
    """The gas of pressure body ``body`` (an id from :meth:`add_pressure`).

    Returns
    -------
    Gas
        A live handle: ``pressure``, ``volume`` and ``energy`` are read now, at
        every access; ``nrt`` and ``ambient`` can be assigned between steps.

    Raises
    ------
    ValueError
        No body has this id.
    """
    body = operator.index(body)
    if not any(b == body for b, *_ in self._pressure_bodies()):
        raise ValueError(f"there is no pressure body {body} in this system")
    return Gas(self, body)


def gases(self: _core.System) -> list[Gas]:
    """The gas of every pressure body, as :class:`springsim.gas.Gas` handles, in order."""
    return [Gas(self, body) for body, *_ in self._pressure_bodies()]


def remove_pressure(self: _core.System, body: int) -> None:
    """Remove pressure body ``body`` (its nodes and springs stay).

    Raises
    ------
    ValueError
        No body has this id.
    """
    self._remove_pressure(operator.index(body))
