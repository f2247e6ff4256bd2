"""Gas: enclosed bodies under pressure.

:class:`springsim.System` inherits these methods; this module never imports it.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING

import numpy.typing as npt

from springsim._checks import _scalar
from springsim._system_host import SystemHost

if TYPE_CHECKING:
    from springsim.gas import Gas


class GasMixin(SystemHost):
    """Gas: enclosed bodies under pressure."""

    def add_pressure(self, boundary: npt.ArrayLike, nrt: float, ambient: float = 0.0) -> int:
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
        from springsim.gas import boundary_elements

        elements = boundary_elements(boundary, self.dim)
        return self._add_pressure(elements, _scalar(nrt, "nrt"), _scalar(ambient, "ambient"))

    def gas(self, body: int) -> Gas:
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
        from springsim.gas import Gas

        body = operator.index(body)
        if not any(b == body for b, *_ in self._pressure_bodies()):
            raise ValueError(f"there is no pressure body {body} in this system")
        return Gas(self, body)

    @property
    def gases(self) -> list[Gas]:
        """The gas of every pressure body, as :class:`springsim.gas.Gas` handles, in order."""
        from springsim.gas import Gas

        return [Gas(self, body) for body, *_ in self._pressure_bodies()]

    def remove_pressure(self, body: int) -> None:
        """Remove pressure body ``body`` (its nodes and springs stay).

        Raises
        ------
        ValueError
            No body has this id.
        """
        self._remove_pressure(operator.index(body))
