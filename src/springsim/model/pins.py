"""Pins and drives: holding nodes, dragging them at a constant velocity, prescribed
paths; the drives' data (:class:`_Drive`, :class:`_Line`), kept in the System's
instance dictionary, and the copy of a System that gives each drive its own progress.

The step of a system with driven nodes is :mod:`springsim.stepping.driven`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from springsim import _core
from springsim._checks import _as_indices, _as_vectors

#: The class of the system a method is called on: springsim.System, or a subclass.
System = TypeVar("System", bound=_core.System)


class _Drive:
    """Nodes that follow a path: a function of time, or per-substep targets.

    ``rows`` picks which rows of the function's value drive ``indices``, after some of
    the nodes were removed (None: all of them); ``width`` is how many rows the function
    was written for.
    """

    __slots__ = ("indices", "function", "targets", "counter", "rows", "width")
    function: Any  # the path (a callable) when targets is None

    def __init__(
        self,
        indices: np.ndarray,
        function: Callable[[float], npt.ArrayLike] | None,
        targets: np.ndarray | None,
        counter: int = 0,
        rows: np.ndarray | None = None,
        width: int | None = None,
    ) -> None:
        self.indices, self.function, self.targets, self.counter = (
            indices,
            function,
            targets,
            counter,
        )
        self.rows = rows
        self.width = indices.size if width is None else width

    def copy(self) -> _Drive:
        """The same drive with its own progress (the counter)."""
        return _Drive(
            self.indices, self.function, self.targets, self.counter, self.rows, self.width
        )

    def renumbered(self, old_to_new: np.ndarray) -> _Drive | None:
        """This drive after nodes were removed (``old_to_new`` from the kernel), or None
        if none of its nodes is left."""
        new = old_to_new[self.indices]
        keep = new >= 0
        if not keep.any():
            return None
        if self.targets is not None:
            return _Drive(new[keep], None, self.targets[:, keep], self.counter)
        rows = (np.arange(self.width) if self.rows is None else self.rows)[keep]
        return _Drive(new[keep], self.function, None, self.counter, rows, self.width)

    def target(self, t: float, dim: int) -> np.ndarray:
        """Where the nodes must be at time t (the end of the coming substep)."""
        if self.targets is not None:
            return self.targets[min(self.counter, len(self.targets) - 1)]
        value = np.asarray(self.function(t))
        if value.dtype.kind not in "biuf":
            raise ValueError(f"the drive path returned {value.dtype} values at t = {t:g} s")
        try:
            value = np.broadcast_to(value, (self.width, dim)).astype(np.float64)
        except ValueError:
            raise ValueError(
                f"the drive path returned shape {value.shape} at t = {t:g} s; "
                f"expected ({self.width}, {dim})"
            ) from None
        if not np.all(np.isfinite(value)):
            raise ValueError(f"the drive path returned non-finite targets at t = {t:g} s")
        return value if self.rows is None else value[self.rows]


class _Line:
    """A picklable drive path: ``start + velocity (t − t0)``, what ``pin(velocity=...)``
    drags nodes along."""

    __slots__ = ("start", "velocity", "t0")

    def __init__(self, start: np.ndarray, velocity: np.ndarray, t0: float):
        self.start, self.velocity, self.t0 = start, velocity, t0

    def __call__(self, t: float) -> np.ndarray:
        return self.start + self.velocity * (t - self.t0)


def pin(self: _core.System, indices: npt.ArrayLike, velocity: npt.ArrayLike | None = None) -> None:
    """Pin nodes: hold them where they are, or drag them at a constant velocity.

    A pinned node ignores every force (springs, gravity, drag, contacts) and
    ``energy_loss``. Held (``velocity=None``), its velocity is zero and it stays
    where it is until you move it: write its position (``sim.positions[i] = ...``:
    it is then held there) or :meth:`drive` it. A velocity written to a held node
    does not move it: every :meth:`step` call (and :meth:`run`) starts by setting
    the velocity of each held node to zero. Held nodes therefore add nothing to
    the kinetic energy or the momentum.

    With ``velocity``, the nodes are dragged: from where they are now they move
    in a straight line at that velocity, x(t) = x(t0) + v (t − t0), which is
    :meth:`drive` along that line; their velocity is v, so spring damping,
    energies and momentum see it. Pin them again without a velocity to stop them.

    Pinning nodes that are driven ends their drive (other nodes of the same
    drive carry on).

    Parameters
    ----------
    indices : int, array_like of int, or array_like of bool, shape (N,)
        The nodes, or a boolean mask with one entry per node
        (``sim.positions[:, 1] > 0.9``).
    velocity : array_like, shape (dim,) or (k, dim), optional
        Drag velocity, m/s, finite: one for all the nodes or one per node, with all
        its components (a single number other than 0 is refused).

    Raises
    ------
    TypeError
        Non-integer indices, a non-numeric velocity.
    ValueError
        An index out of range, a velocity of the wrong shape or not finite.
        Nothing changes.
    IndexError
        A boolean mask whose length is not the number of nodes.

    Examples
    --------
    An anchor stays put, whatever velocity the string is given, until it is
    dragged:

    >>> import springsim as ss
    >>> s = ss.string(10, length=1.0, mass=0.1, stiffness=100.0, dim=2)
    >>> s.velocities = (0.5, 0.0)  # every node, the anchor too
    >>> s.step(1e-3, steps=2000)
    >>> s.positions[0].tolist(), s.velocities[0].tolist()
    ([0.0, 0.0], [0.0, 0.0])
    >>> s.pin(0, velocity=(0.5, 0.0))  # drag it: 0.5 m/s along x
    >>> s.step(1e-3, steps=2000)
    >>> round(float(s.positions[0, 0]), 9), round(float(s.velocities[0, 0]), 6)
    (1.0, 0.5)
    >>> s.pin(0)  # held again, where it is
    >>> s.step(1e-3, steps=100)
    >>> round(float(s.positions[0, 0]), 9)
    1.0
    """
    idx = _as_indices(indices, "indices", self.num_nodes)
    if velocity is None:
        self._set_pinned(idx, True)  # checks the indices first: no change if one is bad
        undrive(self, idx)
        self._view("velocities")[idx] = 0.0
        return
    v = _as_vectors(velocity, "velocity", np.float64, (idx.size, self.dim))
    if not np.all(np.isfinite(v)):
        raise ValueError("velocity must be finite")
    self._set_pinned(idx, True)
    if idx.size:  # no nodes, no drive (a drive makes every step return to Python)
        drive(self, idx, _Line(np.array(self._view("positions")[idx]), v.copy(), self.time))
        self._view("velocities")[idx] = v


def unpin(self: _core.System, indices: npt.ArrayLike) -> None:
    """Release pinned nodes: forces act on them again.

    They keep the velocity they have (zero if they were held; a dragged or
    driven node flies on at its last velocity), and a drive on them ends.

    Parameters
    ----------
    indices : int, array_like of int, or array_like of bool, shape (N,)
        The nodes, or a boolean mask with one entry per node.

    Raises
    ------
    TypeError, ValueError
        Non-integer indices, an index out of range; nothing changes.
    IndexError
        A boolean mask whose length is not the number of nodes.
    """
    idx = _as_indices(indices, "indices", self.num_nodes)
    self._set_pinned(idx, False)
    undrive(self, idx)


def drive(
    self: _core.System,
    indices: npt.ArrayLike,
    path: Callable[[float], npt.ArrayLike] | npt.ArrayLike | None,
) -> None:
    """Make nodes follow a prescribed path: a shaken string end, a moving hand.

    The nodes are pinned. Before every substep their velocity is set to
    (target − x)/dt, so the step moves them onto the target at the end of the
    substep, and forces and energies see the velocity they really have (the
    other pinned nodes are held still, as in any step). For a constant velocity,
    :meth:`pin` ``(indices, velocity=v)`` is the shorthand.

    Parameters
    ----------
    indices : int, array_like of int, or array_like of bool, shape (N,)
        The driven nodes, or a boolean mask with one entry per node.
    path : callable, array_like or None
        ``path(t) -> positions`` of shape (k, dim) (or broadcastable to it), the
        targets at time t (s); or an array of per-substep targets, shape
        (steps, k, dim) (or broadcastable), used one per substep and then held
        at the last; or None to stop driving these nodes (they stay pinned, at
        rest). Nodes of earlier drives that are not in ``indices`` keep theirs.

    Raises
    ------
    TypeError
        ``path`` is neither callable, an array nor None.
    ValueError
        An index out of range, a path array of the wrong shape or not finite.
        A callable that returns a bad value raises ValueError from ``step``,
        which then changes nothing.
    IndexError
        A boolean mask whose length is not the number of nodes.

    Notes
    -----
    :meth:`save` keeps array paths and :meth:`pin` ``(velocity=...)`` drags; a
    callable path cannot be stored in the file, so ``save`` warns and the loaded
    system holds those nodes still. Pickling keeps a callable that pickle can
    store (a module-level function, an instance of a module-level class); a lambda
    or a local function makes pickling fail with an error naming the drive.

    Examples
    --------
    >>> import numpy as np
    >>> import springsim as ss
    >>> sim = ss.string(5, length=1.0, mass=0.1, stiffness=50.0, dim=2)
    >>> sim.drive(0, lambda t: [0.0, 0.1 * np.sin(2 * np.pi * t)])
    >>> sim.step(1e-3, steps=250)
    >>> round(float(sim.positions[0, 1]), 9)  # at t = 0.25 s: the top of the sine
    0.1
    """
    idx = _as_indices(indices, "indices", self.num_nodes)
    if idx.size and (idx.min() < 0 or idx.max() >= self.num_nodes):
        raise ValueError(f"indices must be in [0, {self.num_nodes})")
    shape = (idx.size, self.dim)
    if path is None:
        new = None
    elif callable(path):
        new = _Drive(idx, path, None)
    else:
        targets = np.asarray(path)
        if targets.dtype.kind not in "biuf":
            raise TypeError("path must be a callable, an array of targets or None")
        if targets.ndim < 1:
            raise ValueError("a path array needs one row of targets per substep")
        try:
            targets = np.broadcast_to(targets, (len(targets), *shape)).astype(np.float64)
        except ValueError:
            raise ValueError(
                f"path must have shape (steps, {idx.size}, {self.dim}), got {np.shape(path)}"
            ) from None
        if not np.all(np.isfinite(targets)):
            raise ValueError("path targets must be finite")
        new = _Drive(idx, None, targets)
    self._set_pinned(idx, True)
    undrive(self, idx)
    if new is None:
        self._view("velocities")[idx] = 0.0
    else:
        set_drives(self, [*self.__dict__.get("_drives", []), new])


def copy(self: System) -> System:
    """A deep copy (driven anchors included, each with its own progress)."""
    new = _core.System.copy(self)
    drives = self.__dict__.get("_drives")
    if drives:
        set_drives(new, [d.copy() for d in drives])
    return new


def undrive(self: _core.System, idx: np.ndarray) -> None:
    """Stop driving nodes ``idx`` (valid indices); the rest of their drives go on."""
    drives = self.__dict__.get("_drives")
    if not drives or idx.size == 0:
        return
    remaining = np.arange(self.num_nodes)
    remaining[idx] = -1
    kept = (d.renumbered(remaining) for d in drives)
    set_drives(self, [d for d in kept if d is not None])


def held(self: _core.System) -> np.ndarray:
    """Which nodes a step call holds (velocity set to zero): the pinned ones that
    are not driven."""
    held = np.array(self._view("pinned"))
    for d in self.__dict__.get("_drives", []):
        held[d.indices] = False
    return held


def set_drives(self: _core.System, drives: list[_Drive]) -> None:
    """Make ``drives`` the system's drives (in its instance dictionary); the kernel's
    step hands over to the driven step (:mod:`springsim.stepping.driven`) while any node
    is driven."""
    self.__dict__["_drives"] = drives
    self._driven = bool(drives)
