"""Contact: the plane and sphere colliders.

:class:`springsim.System` inherits these methods; this module never imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from springsim._checks import _as_vectors, _scalar
from springsim._system_host import SystemHost

if TYPE_CHECKING:
    from springsim.colliders import Plane, Sphere


class ContactMixin(SystemHost):
    """Contact: the plane and sphere colliders."""

    def add_plane(
        self,
        normal: npt.ArrayLike,
        offset: float = 0.0,
        restitution: float = 0.0,
        friction: float = 0.0,
    ) -> Plane:
        """Add a plane that nodes cannot pass: the half-space n·x >= offset is free.

        After every substep, of every method, a free node found behind the plane is
        moved onto it; if it was moving inwards, it leaves with ``restitution`` e
        times the speed it met the plane with (its normal speed, less what climbing
        back out costs in potential energy), and Coulomb friction reduces its
        tangential velocity by μ times the normal velocity change (about
        (1 + e)|v·n|), at most to zero. A node that friction stops stays where it
        touched the plane: static friction holds without creeping. What contacts
        take goes into :attr:`dissipated` (the README's "How contact energy is
        counted"). Pinned nodes are left alone.

        Parameters
        ----------
        normal : array_like, shape (dim,)
            Points into free space; normalised here. Nonzero and finite.
        offset : float
            m: the plane is n·x = offset (with the normalised n).
        restitution : float
            In [0, 1]: 0 stops the node, 1 bounces it back at full speed.
        friction : float
            Coulomb coefficient μ >= 0.

        Returns
        -------
        Plane
            A handle: change its ``normal``, ``offset``, ``restitution`` or
            ``friction`` between steps to move the plane.

        Raises
        ------
        ValueError
            A zero or non-finite normal, restitution outside [0, 1], negative friction.

        Examples
        --------
        >>> import springsim as ss
        >>> sim = ss.System(dim=2)
        >>> _ = sim.add_nodes([0.0, 1.0])
        >>> floor = sim.add_plane([0, 1], restitution=0.5)
        >>> sim.step(1e-3, steps=2000)
        >>> bool(sim.positions[0, 1] >= 0.0)
        True
        """
        from springsim.colliders import PLANE, handle

        vector = _as_vectors(normal, "normal", np.float64, (self.dim,))
        cid = self._add_collider(
            PLANE,
            vector,
            _scalar(offset, "offset"),
            _scalar(restitution, "restitution"),
            _scalar(friction, "friction"),
        )
        return handle(self, cid, PLANE)

    def add_sphere(
        self,
        center: npt.ArrayLike,
        radius: float,
        restitution: float = 0.0,
        friction: float = 0.0,
    ) -> Sphere:
        """Add a solid sphere (a disc in 2D) that nodes cannot enter.

        Contact works as for :meth:`add_plane`, with the normal pointing out of the
        sphere from its centre through the node.

        Parameters
        ----------
        center : array_like, shape (dim,)
            m.
        radius : float
            m, > 0.
        restitution, friction : float
            As for :meth:`add_plane`.

        Returns
        -------
        Sphere
            A handle: change ``center``, ``radius``, ``restitution`` or ``friction``
            between steps.

        Raises
        ------
        ValueError
            radius <= 0, restitution outside [0, 1], negative friction, a non-finite center.

        Examples
        --------
        >>> import springsim as ss
        >>> sim = ss.System(dim=2)
        >>> _ = sim.add_nodes([0.1, 0.0])
        >>> ball = sim.add_sphere([0, 0], radius=1.0)
        >>> sim.step(1e-3)
        >>> round(float(np.hypot(*sim.positions[0])), 12)
        1.0
        """
        from springsim.colliders import SPHERE, handle

        vector = _as_vectors(center, "center", np.float64, (self.dim,))
        cid = self._add_collider(
            SPHERE,
            vector,
            _scalar(radius, "radius"),
            _scalar(restitution, "restitution"),
            _scalar(friction, "friction"),
        )
        return handle(self, cid, SPHERE)

    @property
    def colliders(self) -> list[Plane | Sphere]:
        """The planes and spheres of this system, as handles, in the order added."""
        from springsim.colliders import handle

        return [handle(self, cid, kind) for cid, kind, *_ in self._colliders()]

    def remove_collider(self, collider: Plane | Sphere) -> None:
        """Remove a plane or sphere (a handle from this system).

        Raises
        ------
        ValueError
            The collider is not (or no longer) in this system.
        """
        from springsim.colliders import _Collider

        if not isinstance(collider, _Collider):
            raise TypeError(f"expected a Plane or Sphere, not {type(collider).__name__}")
        if collider._system is not self:
            raise ValueError("this collider belongs to another system")
        self._remove_collider(collider._id)
