"""Handles to the planes and spheres of a System (the kernel owns the colliders).

A handle reads and writes its collider in the kernel: change ``plane.offset`` or
``sphere.center`` between steps to move an obstacle. Every value is checked; a bad
one raises ValueError and changes nothing.
"""

from __future__ import annotations

from typing import Any, Final, Literal, overload

import numpy as np
import numpy.typing as npt

from springsim import _core

PLANE: Final = 0
SPHERE: Final = 1


class _Collider:
    """Common to Plane and Sphere: identity, restitution, friction."""

    __slots__ = ("_system", "_id")
    _vector_name = _scalar_name = ""

    def __init__(self, system: _core.System, collider_id: int):
        self._system = system
        self._id = collider_id

    def _values(self) -> tuple[np.ndarray, float, float, float]:
        for cid, _kind, vector, scalar, restitution, friction in self._system._colliders():
            if cid == self._id:
                return np.array(vector), scalar, restitution, friction
        raise ValueError("this collider was removed from its system")

    def _replace(self, index: int, value: npt.ArrayLike) -> None:
        from springsim._checks import _as_vectors

        values: list[Any] = list(self._values())
        if index == 0:
            values[0] = _as_vectors(value, self._vector_name, np.float64, (self._system.dim,))
        else:
            if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
                raise TypeError(f"must be a number, not {type(value).__name__}")
            values[index] = float(value)
        vector, scalar, restitution, friction = values
        self._system._set_collider(
            self._id, np.ascontiguousarray(vector), scalar, restitution, friction
        )

    @property
    def restitution(self) -> float:
        """Fraction of the speed a node meets the surface with that it leaves with, in
        [0, 1]; the impact dissipates ½ m (1 − e²) v² of its kinetic energy."""
        return self._values()[2]

    @restitution.setter
    def restitution(self, value: float) -> None:
        self._replace(2, value)

    @property
    def friction(self) -> float:
        """Coulomb friction coefficient μ >= 0: the tangential velocity changes by at
        most μ times the normal velocity change; a node it stops sticks where it
        touched the surface."""
        return self._values()[3]

    @friction.setter
    def friction(self, value: float) -> None:
        self._replace(3, value)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _Collider) and other._system is self._system and other._id == self._id
        )

    def __hash__(self) -> int:
        return hash((id(self._system), self._id))


class Plane(_Collider):
    """A plane: the half-space n·x >= offset is free, nodes are kept out of the rest."""

    __slots__ = ()
    _vector_name, _scalar_name = "normal", "offset"

    @property
    def normal(self) -> np.ndarray:
        """Unit normal pointing into free space (a copy; assign to change it).

        An assigned vector is normalised, unless it is already a unit vector to within
        rounding (``|n|²`` within 8 ε of 1): then it is kept bit for bit, so that
        ``p.normal = p.normal``, pickling and :func:`springsim.io.load` store exactly
        the normal that was read and the system steps exactly as before.
        """
        return self._values()[0]

    @normal.setter
    def normal(self, value: npt.ArrayLike) -> None:
        self._replace(0, value)

    @property
    def offset(self) -> float:
        """m: the plane is n·x = offset."""
        return self._values()[1]

    @offset.setter
    def offset(self, value: float) -> None:
        self._replace(1, value)

    def __repr__(self) -> str:
        n, offset, e, mu = self._values()
        return f"Plane(normal={n.tolist()}, offset={offset:g}, restitution={e:g}, friction={mu:g})"


class Sphere(_Collider):
    """A solid sphere (a disc in 2D) that nodes are kept out of."""

    __slots__ = ()
    _vector_name, _scalar_name = "center", "radius"

    @property
    def center(self) -> np.ndarray:
        """m (a copy; assign to move the sphere)."""
        return self._values()[0]

    @center.setter
    def center(self, value: npt.ArrayLike) -> None:
        self._replace(0, value)

    @property
    def radius(self) -> float:
        """m > 0."""
        return self._values()[1]

    @radius.setter
    def radius(self, value: float) -> None:
        self._replace(1, value)

    def __repr__(self) -> str:
        c, r, e, mu = self._values()
        return f"Sphere(center={c.tolist()}, radius={r:g}, restitution={e:g}, friction={mu:g})"


def collider_rows(system: _core.System) -> np.ndarray:
    """The planes and spheres of ``system``, one row each, shape (K, dim + 2): the kind
    (:data:`PLANE` or :data:`SPHERE`), the normal or the centre, the offset or the
    radius (m) — as :attr:`springsim.History.colliders` holds them."""
    rows = [[kind, *vector, scalar] for _id, kind, vector, scalar, *_ in system._colliders()]
    return np.array(rows, dtype=np.float64).reshape(-1, system.dim + 2)


@overload
def handle(system: _core.System, collider_id: int, kind: Literal[0]) -> Plane: ...
@overload
def handle(system: _core.System, collider_id: int, kind: Literal[1]) -> Sphere: ...
@overload
def handle(system: _core.System, collider_id: int, kind: int) -> Plane | Sphere: ...
def handle(system: _core.System, collider_id: int, kind: int) -> Plane | Sphere:
    """The handle class for a collider kind."""
    return (Plane if kind == PLANE else Sphere)(system, collider_id)
