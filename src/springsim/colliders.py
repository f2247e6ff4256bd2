"""Handles to the colliders of a System: planes, spheres, boxes, capsules and triangle
meshes (the kernel owns them).

A handle reads and writes its collider in the kernel: change ``plane.offset``,
``sphere.center`` or ``mesh.vertices`` between steps to move an obstacle. Every value
is checked; a bad one raises ValueError and changes nothing.
"""

from __future__ import annotations

from typing import Any, Final, Literal, cast, overload

import numpy as np
import numpy.typing as npt

from springsim import _core

PLANE: Final = 0
SPHERE: Final = 1
BOX: Final = 2
CAPSULE: Final = 3
MESH: Final = 4


class _Collider:
    """Common to every collider: identity, restitution, friction."""

    __slots__ = ("_system", "_id")
    _vector_name = _scalar_name = ""
    # The values as _values() lists them: each one's name, and "vector" or "number".
    _fields: tuple[tuple[str, str], ...] = (
        ("vector", "vector"),
        ("scalar", "number"),
        ("restitution", "number"),
        ("friction", "number"),
    )

    def __init__(self, system: _core.System, collider_id: int):
        self._system = system
        self._id = collider_id

    def _row(self) -> tuple[Any, ...]:
        for row in self._system._colliders():
            if row[0] == self._id:
                return row
        raise ValueError("this collider was removed from its system")

    def _values(self) -> list[Any]:
        _cid, _kind, vector, scalar, restitution, friction = self._row()
        return [np.array(vector), scalar, restitution, friction]

    def _store(self, values: list[Any]) -> None:
        vector, scalar, restitution, friction = values
        self._system._set_collider(
            self._id, np.ascontiguousarray(vector), scalar, restitution, friction
        )

    def _replace(self, index: int, value: npt.ArrayLike) -> None:
        from springsim._checks import _as_vectors

        values = self._values()
        name, form = self._fields[index]
        if form == "vector":
            name = self._vector_name if name == "vector" else name
            values[index] = _as_vectors(value, name, np.float64, (self._system.dim,))
        else:
            if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
                raise TypeError(f"{name} must be a number, not {type(value).__name__}")
            values[index] = float(value)
        self._store(values)

    @property
    def restitution(self) -> float:
        """Fraction of the speed a node meets the surface with that it leaves with, in
        [0, 1]; the impact dissipates ½ m (1 − e²) v² of its kinetic energy."""
        return float(self._values()[-2])

    @restitution.setter
    def restitution(self, value: float) -> None:
        self._replace(len(self._fields) - 2, value)

    @property
    def friction(self) -> float:
        """Coulomb friction coefficient μ >= 0: the tangential velocity changes by at
        most μ times the normal velocity change; a node it stops sticks where it
        touched the surface."""
        return float(self._values()[-1])

    @friction.setter
    def friction(self, value: float) -> None:
        self._replace(len(self._fields) - 1, value)

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


class Box(_Collider):
    """A solid axis-aligned box (a rectangle in 2D) that nodes are kept out of: a node
    found inside leaves through the nearest face. To tilt a box, use a
    :class:`MeshCollider` of its 12 triangles."""

    __slots__ = ()
    _vector_name = "center"
    _fields = (
        ("center", "vector"),
        ("half_extents", "vector"),
        ("restitution", "number"),
        ("friction", "number"),
    )

    def _values(self) -> list[Any]:
        _cid, _kind, center, _radius, restitution, friction = self._row()
        end = self._system._collider_shape(self._id)
        return [np.array(center), np.array(end), restitution, friction]

    def _store(self, values: list[Any]) -> None:
        center, half, restitution, friction = values
        self._system._set_shape(
            self._id,
            np.ascontiguousarray(center),
            np.ascontiguousarray(half),
            0.0,
            restitution,
            friction,
        )

    @property
    def center(self) -> np.ndarray:
        """m (a copy; assign to move the box)."""
        return np.asarray(self._values()[0])

    @center.setter
    def center(self, value: npt.ArrayLike) -> None:
        self._replace(0, value)

    @property
    def half_extents(self) -> np.ndarray:
        """m, each > 0: the box is ``|x_k − center_k| <= half_extents_k`` for every k."""
        return np.asarray(self._values()[1])

    @half_extents.setter
    def half_extents(self, value: npt.ArrayLike) -> None:
        self._replace(1, value)

    def __repr__(self) -> str:
        c, h, e, mu = self._values()
        return (
            f"Box(center={c.tolist()}, half_extents={h.tolist()}, restitution={e:g}, "
            f"friction={mu:g})"
        )


class Capsule(_Collider):
    """A solid capsule (a stadium in 2D): the points within ``radius`` of the segment
    from ``start`` to ``end``, kept free of nodes."""

    __slots__ = ()
    _fields = (
        ("start", "vector"),
        ("end", "vector"),
        ("radius", "number"),
        ("restitution", "number"),
        ("friction", "number"),
    )

    def _values(self) -> list[Any]:
        _cid, _kind, start, radius, restitution, friction = self._row()
        end = self._system._collider_shape(self._id)
        return [np.array(start), np.array(end), radius, restitution, friction]

    def _store(self, values: list[Any]) -> None:
        start, end, radius, restitution, friction = values
        self._system._set_shape(
            self._id,
            np.ascontiguousarray(start),
            np.ascontiguousarray(end),
            radius,
            restitution,
            friction,
        )

    @property
    def start(self) -> np.ndarray:
        """m: one end of the axis (a copy; assign to move it)."""
        return np.asarray(self._values()[0])

    @start.setter
    def start(self, value: npt.ArrayLike) -> None:
        self._replace(0, value)

    @property
    def end(self) -> np.ndarray:
        """m: the other end of the axis (a copy; assign to move it)."""
        return np.asarray(self._values()[1])

    @end.setter
    def end(self, value: npt.ArrayLike) -> None:
        self._replace(1, value)

    @property
    def radius(self) -> float:
        """m > 0."""
        return float(self._values()[2])

    @radius.setter
    def radius(self, value: float) -> None:
        self._replace(2, value)

    def __repr__(self) -> str:
        a, b, r, e, mu = self._values()
        return (
            f"Capsule(start={a.tolist()}, end={b.tolist()}, radius={r:g}, restitution={e:g}, "
            f"friction={mu:g})"
        )


class MeshCollider(_Collider):
    """A triangle mesh (3D) that nodes stay on their side of, at ``thickness`` from it.

    Assign ``vertices`` (same shape) between steps to move or deform it: its bounding
    volume hierarchy is built again. See :meth:`springsim.System.add_mesh_collider`
    for what is guaranteed.
    """

    __slots__ = ()
    _fields = (
        ("vertices", "vertices"),
        ("thickness", "number"),
        ("restitution", "number"),
        ("friction", "number"),
    )

    def _values(self) -> list[Any]:
        _cid, _kind, _zero, thickness, restitution, friction = self._row()
        return [None, thickness, restitution, friction]

    def _store(self, values: list[Any]) -> None:
        vertices, thickness, restitution, friction = values
        self._system._set_mesh(self._id, vertices, thickness, restitution, friction)

    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        self._row()  # raises if removed
        vertices, faces = cast(
            "tuple[np.ndarray, np.ndarray]", self._system._collider_shape(self._id)
        )
        return vertices, faces

    @property
    def vertices(self) -> np.ndarray:
        """(V, 3) m (a copy; assign an array of the same shape to move the mesh)."""
        return self._arrays()[0]

    @vertices.setter
    def vertices(self, value: npt.ArrayLike) -> None:
        from springsim._checks import _as_vectors

        values = self._values()
        count = self._arrays()[0].shape[0]
        values[0] = np.ascontiguousarray(_as_vectors(value, "vertices", np.float64, (count, 3)))
        self._store(values)

    @property
    def faces(self) -> np.ndarray:
        """(F, 3) int32 vertex triples (a copy; fixed when the mesh is added)."""
        return self._arrays()[1]

    @property
    def thickness(self) -> float:
        """m >= 0: nodes are kept this far from the triangles (0 means a skin of 1e-9 of
        the mesh's extent, so that a node put back is on a definite side)."""
        return float(self._values()[1])

    @thickness.setter
    def thickness(self, value: float) -> None:
        self._replace(1, value)

    def __repr__(self) -> str:
        _, h, e, mu = self._values()
        v, f = self._arrays()
        return (
            f"MeshCollider({v.shape[0]} vertices, {f.shape[0]} faces, thickness={h:g}, "
            f"restitution={e:g}, friction={mu:g})"
        )


def collider_rows(system: _core.System) -> np.ndarray:
    """The planes and spheres of ``system``, one row each, shape (K, dim + 2): the kind
    (:data:`PLANE` or :data:`SPHERE`), the normal or the centre, the offset or the
    radius (m) — as :attr:`springsim.History.colliders` holds them. Boxes, capsules and
    meshes are not in these rows (:func:`springsim.draw` reads them from the system)."""
    rows = [
        [kind, *vector, scalar]
        for _id, kind, vector, scalar, *_ in system._colliders()
        if kind in (PLANE, SPHERE)
    ]
    return np.array(rows, dtype=np.float64).reshape(-1, system.dim + 2)


# The triangles of boxes, capsules and meshes (what draw(), animate(), the viewer and
# History.collider_triangles show of them; planes and spheres are drawn as such).

_AROUND = 24  # segments around a capsule, and per half-turn of its ends


def _box(center: np.ndarray, half: np.ndarray) -> np.ndarray:
    dim = len(center)
    if dim == 2:
        corners = center + half * np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]])
        return corners[np.array([[0, 1, 2], [0, 2, 3]])]
    corners = center + half * np.array(
        [[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
    )
    faces = [[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1]]
    faces += [[2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]]
    return corners[np.array(faces)]


def _frame(axis: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A unit vector along ``axis`` (+y if it is zero) and two perpendicular to it."""
    length = float(np.linalg.norm(axis))
    u = axis / length if length > 0 else np.array([0.0, 1.0, 0.0])
    helper = np.eye(3)[int(np.argmin(np.abs(u)))]
    v = np.cross(u, helper)
    v /= np.linalg.norm(v)
    return u, v, np.cross(u, v)


def _capsule(start: np.ndarray, end: np.ndarray, radius: float) -> np.ndarray:
    if len(start) == 2:  # a stadium: a fan from its middle over its outline
        axis = end - start
        length = float(np.linalg.norm(axis))
        angle0 = float(np.arctan2(axis[1], axis[0])) if length > 0 else 0.0
        turn = np.linspace(-np.pi / 2, np.pi / 2, _AROUND + 1)
        ring = [end + radius * np.stack([np.cos(angle0 + turn), np.sin(angle0 + turn)], 1)]
        ring.append(
            start
            + radius * np.stack([np.cos(angle0 + np.pi + turn), np.sin(angle0 + np.pi + turn)], 1)
        )
        outline = np.concatenate(ring)
        middle = (start + end) / 2
        following = np.roll(outline, -1, axis=0)
        return np.stack([np.broadcast_to(middle, outline.shape), outline, following], 1)
    u, v, w = _frame(end - start)
    around = np.linspace(0, 2 * np.pi, _AROUND + 1)
    # rings from the pole beyond `start` to the pole beyond `end`
    tilt = np.linspace(-np.pi / 2, np.pi / 2, _AROUND // 2 + 1)
    rings = []
    for centre, half in ((start, tilt[tilt <= 0]), (end, tilt[tilt >= 0])):
        for t in half:
            circle = np.cos(t) * (np.outer(np.cos(around), v) + np.outer(np.sin(around), w))
            rings.append(centre + radius * (circle + np.sin(t) * u))
    grid = np.array(rings)
    a, b = grid[:-1, :-1], grid[:-1, 1:]
    c, d = grid[1:, 1:], grid[1:, :-1]
    return np.concatenate([np.stack([a, b, c], 2), np.stack([a, c, d], 2)]).reshape(-1, 3, 3)


def collider_triangles(system: _core.System) -> np.ndarray:
    """The boxes, capsules and mesh colliders of ``system`` as triangles, (T, 3, dim), in
    the system's coordinates: a mesh its own faces, a box its 12 (2 in 2D) and a capsule
    a tessellated cylinder with two hemispheres (a stadium's fan in 2D).
    :attr:`springsim.History.collider_triangles` holds them as a run started."""
    dim = system.dim
    parts = [np.zeros((0, 3, dim))]
    for cid, kind, vector, scalar, *_ in system._colliders():
        if kind not in (BOX, CAPSULE, MESH):
            continue
        shape = system._collider_shape(cid)
        if kind == MESH:
            vertices, faces = cast("tuple[np.ndarray, np.ndarray]", shape)
            parts.append(vertices[faces])
        elif kind == BOX:
            parts.append(_box(np.array(vector), np.array(shape)))
        else:
            parts.append(_capsule(np.array(vector), np.array(shape), scalar))
    return np.concatenate(parts).astype(np.float64)


AnyCollider = Plane | Sphere | Box | Capsule | MeshCollider


@overload
def handle(system: _core.System, collider_id: int, kind: Literal[0]) -> Plane: ...
@overload
def handle(system: _core.System, collider_id: int, kind: Literal[1]) -> Sphere: ...
@overload
def handle(system: _core.System, collider_id: int, kind: Literal[2]) -> Box: ...
@overload
def handle(system: _core.System, collider_id: int, kind: Literal[3]) -> Capsule: ...
@overload
def handle(system: _core.System, collider_id: int, kind: Literal[4]) -> MeshCollider: ...
@overload
def handle(system: _core.System, collider_id: int, kind: int) -> AnyCollider: ...
def handle(system: _core.System, collider_id: int, kind: int) -> AnyCollider:
    """The handle class for a collider kind."""
    classes: dict[int, type[AnyCollider]] = {
        PLANE: Plane,
        SPHERE: Sphere,
        BOX: Box,
        CAPSULE: Capsule,
        MESH: MeshCollider,
    }
    return classes[kind](system, collider_id)
