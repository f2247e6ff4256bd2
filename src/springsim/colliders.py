"""Colliders: the planes, spheres, boxes, capsules and triangle meshes that nodes cannot
pass, which the kernel owns; the System's methods that add, list and remove them, and
the handles those return.

A handle reads and writes its collider in the kernel: change ``plane.offset``,
``sphere.center`` or ``mesh.vertices`` between steps to move an obstacle. Every value
is checked; a bad one raises ValueError and changes nothing. The colliders' triangles
(:func:`collider_triangles`) are what plots, runs and the viewer show of boxes,
capsules and meshes.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Final, Literal, cast, overload

import numpy as np
import numpy.typing as npt

from springsim import _core
from springsim._checks import _as_real_array, _as_vectors, _scalar
from springsim.files import mesh_io, obj, weld

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


#: How much of a mesh file's bounding-box diagonal welds its vertices (read_obj's and
#: read_mesh's default).
_WELD_FRACTION = 1e-9


def add_plane(
    self: _core.System,
    normal: npt.ArrayLike,
    offset: float = 0.0,
    restitution: float = 0.0,
    friction: float = 0.0,
) -> Plane:
    """Add a plane that nodes cannot pass: the half-space n·x >= offset is free.

    After every substep, of every method but "xpbd" (which projects colliders as
    constraints inside its passes: docs/guide/colliders.md, "Colliders in XPBD") and
    "vbd" (contact energy in its solve: docs/guide/integrators.md), a
    free node found behind the plane is moved onto it; if it was moving inwards, it
    leaves with ``restitution`` e times the speed it met the plane with (its normal
    speed, less what climbing back out costs in potential energy), and Coulomb
    friction reduces its tangential velocity by μ times the normal velocity change (about
    (1 + e)|v·n|), at most to zero. A node that friction stops stays where it
    touched the plane: static friction holds without creeping. What contacts
    take goes into :attr:`dissipated` (docs/guide/colliders.md, "How contact energy
    is counted"). Pinned nodes are left alone.

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
    self: _core.System,
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
    vector = _as_vectors(center, "center", np.float64, (self.dim,))
    cid = self._add_collider(
        SPHERE,
        vector,
        _scalar(radius, "radius"),
        _scalar(restitution, "restitution"),
        _scalar(friction, "friction"),
    )
    return handle(self, cid, SPHERE)


def add_box(
    self: _core.System,
    center: npt.ArrayLike,
    half_extents: npt.ArrayLike,
    restitution: float = 0.0,
    friction: float = 0.0,
) -> Box:
    """Add a solid axis-aligned box (a rectangle in 2D) that nodes cannot enter.

    Contact works as for :meth:`add_plane`: a free node found inside is put back on
    the nearest point of the surface (through the nearest face), with restitution
    and Coulomb friction along the outward normal there. The box is axis-aligned;
    a tilted box is a :meth:`add_mesh_collider` of its 12 triangles.

    Parameters
    ----------
    center : array_like, shape (dim,)
        m.
    half_extents : array_like, shape (dim,)
        m, each > 0: the box is ``|x_k − center_k| <= half_extents_k``.
    restitution, friction : float
        As for :meth:`add_plane`.

    Returns
    -------
    Box
        A handle: change ``center``, ``half_extents``, ``restitution`` or
        ``friction`` between steps.

    Raises
    ------
    ValueError
        A half-extent <= 0, non-finite values, restitution outside [0, 1],
        negative friction.

    Examples
    --------
    >>> import springsim as ss
    >>> sim = ss.System(dim=2)
    >>> _ = sim.add_nodes([0.2, 1.0])
    >>> table = sim.add_box([0, 0], [1.0, 0.5])
    >>> sim.step(1e-3, steps=1000)
    >>> sim.positions[0].round(12).tolist()
    [0.2, 0.5]
    """
    cid = self._add_shape(
        BOX,
        _as_vectors(center, "center", np.float64, (self.dim,)),
        _as_vectors(half_extents, "half_extents", np.float64, (self.dim,)),
        0.0,
        _scalar(restitution, "restitution"),
        _scalar(friction, "friction"),
    )
    return handle(self, cid, BOX)


def add_capsule(
    self: _core.System,
    start: npt.ArrayLike,
    end: npt.ArrayLike,
    radius: float,
    restitution: float = 0.0,
    friction: float = 0.0,
) -> Capsule:
    """Add a solid capsule (a stadium in 2D): every point within ``radius`` of the
    segment from ``start`` to ``end``. Nodes cannot enter it.

    Contact works as for :meth:`add_sphere`, about the nearest point of the segment
    (a node exactly on the axis leaves perpendicular to it). ``start == end`` is a
    sphere.

    Parameters
    ----------
    start, end : array_like, shape (dim,)
        m: the ends of the axis.
    radius : float
        m, > 0.
    restitution, friction : float
        As for :meth:`add_plane`.

    Returns
    -------
    Capsule
        A handle: change ``start``, ``end``, ``radius``, ``restitution`` or
        ``friction`` between steps.

    Raises
    ------
    ValueError
        radius <= 0, non-finite ends, restitution outside [0, 1], negative friction.

    Examples
    --------
    >>> import springsim as ss
    >>> sim = ss.System(dim=2)
    >>> _ = sim.add_nodes([0.3, 1.0])
    >>> rod = sim.add_capsule([-1, 0], [1, 0], radius=0.25)
    >>> sim.step(1e-3, steps=1000)
    >>> sim.positions[0].round(12).tolist()
    [0.3, 0.25]
    """
    cid = self._add_shape(
        CAPSULE,
        _as_vectors(start, "start", np.float64, (self.dim,)),
        _as_vectors(end, "end", np.float64, (self.dim,)),
        _scalar(radius, "radius"),
        _scalar(restitution, "restitution"),
        _scalar(friction, "friction"),
    )
    return handle(self, cid, CAPSULE)


def add_mesh_collider(
    self: _core.System,
    vertices: npt.ArrayLike | str | os.PathLike[str],
    faces: npt.ArrayLike | None = None,
    *,
    thickness: float = 0.0,
    restitution: float = 0.0,
    friction: float = 0.0,
) -> MeshCollider:
    """Add a triangle mesh (3D systems) that nodes cannot pass through.

    The mesh is a surface of ``thickness`` h: a node belongs on the side of it that
    it started the substep on, and is kept at least h from every triangle. After
    every substep (in "xpbd": in each pass of its solve, as a constraint), the
    segment each free node moved along is tested
    against the triangles (continuous detection: nothing passes through a static
    mesh, at any dt), and a node closer than h to a triangle, or that crossed one,
    is put back at distance h on its side, with restitution and Coulomb friction
    as for :meth:`add_plane` (the normal: from the nearest point of the triangle
    towards the node). A closed mesh is a solid to nodes outside it; a node that
    starts inside stays inside. h = 0 is a skin of 10⁻⁹ of the mesh's extent, so
    that a node put back is on a definite side. In a concave corner a node is put
    back up to 4 times (once per triangle it is then too close to); one still too
    close goes back to where it started the substep. A bounding volume hierarchy,
    built once when the mesh is added or moved, makes a node's test cost about
    log F (F triangles); the results do not depend on the number of threads.

    Moving the mesh (assigning :attr:`MeshCollider.vertices` between steps) is a
    jump: a node it comes closer than h to is pushed out on its side, so a mesh
    moved by less than h per step pushes nodes along; one moved farther than h in
    one step may jump past nodes, which then stay on their (new) side. The work
    of a moving mesh is not counted (as for every moving collider).

    Parameters
    ----------
    vertices : array_like, shape (V, 3), or str or path
        m. A path reads the mesh from a file: ``.obj`` with
        :func:`springsim.read_obj`, any other with :func:`springsim.read_mesh`
        (meshio); then ``faces`` must be None.
    faces : array_like of int, shape (F, 3)
        Vertex triples (F >= 1); no degenerate triangle. Their orientation does
        not matter.
    thickness : float
        m >= 0.
    restitution, friction : float
        As for :meth:`add_plane`.

    Returns
    -------
    MeshCollider
        A handle: change ``vertices``, ``thickness``, ``restitution`` or
        ``friction`` between steps.

    Raises
    ------
    ValueError
        A 2D system, non-finite vertices, degenerate triangles, wrong shapes,
        thickness < 0, restitution outside [0, 1], negative friction.
    IndexError
        A face names a vertex that does not exist.

    Examples
    --------
    >>> import springsim as ss
    >>> sim = ss.System()
    >>> _ = sim.add_nodes([0.2, 1.0, 0.1])
    >>> square = sim.add_mesh_collider(
    ...     [[-1, 0, -1], [1, 0, -1], [1, 0, 1], [-1, 0, 1]], [[0, 1, 2], [0, 2, 3]],
    ...     thickness=0.01,
    ... )
    >>> sim.step(1e-3, steps=1000)
    >>> sim.positions[0].round(12).tolist()
    [0.2, 0.01, 0.1]
    """
    if isinstance(vertices, (str, os.PathLike)):
        if faces is not None:
            raise TypeError("give a file, or vertices and faces, not both")
        vertices, faces = _read_mesh_file(vertices)
    if faces is None:
        raise TypeError("add_mesh_collider needs faces with the vertices (or a file)")
    if self.dim != 3:
        raise ValueError("a mesh collider needs a 3D system (this one is 2D)")
    v = np.ascontiguousarray(_as_real_array(vertices, "vertices"), dtype=np.float64)
    if v.ndim != 2 or v.shape[1] != 3:
        raise ValueError(f"vertices must have shape (V, 3), got {v.shape}")
    f_array = np.asarray(faces)
    if f_array.ndim != 2 or f_array.shape[1] != 3:
        raise ValueError(f"faces must have shape (F, 3), got {f_array.shape}")
    if f_array.size and not np.issubdtype(f_array.dtype, np.integer):
        raise TypeError(f"faces must be integers, not {f_array.dtype}")
    if f_array.size and (f_array.min() < 0 or f_array.max() >= v.shape[0]):
        raise IndexError(f"faces name vertices outside 0 .. {v.shape[0] - 1}")
    cid = self._add_mesh(
        v,
        np.ascontiguousarray(f_array, dtype=np.int32),
        _scalar(thickness, "thickness"),
        _scalar(restitution, "restitution"),
        _scalar(friction, "friction"),
    )
    return handle(self, cid, MESH)


def colliders(self: _core.System) -> list[AnyCollider]:
    """The colliders of this system, as handles, in the order added."""
    return [handle(self, cid, kind) for cid, kind, *_ in self._colliders()]


def remove_collider(self: _core.System, collider: AnyCollider) -> None:
    """Remove a collider (a handle from this system).

    Raises
    ------
    ValueError
        The collider is not (or no longer) in this system.
    """
    if not isinstance(collider, _Collider):
        raise TypeError(f"expected a collider handle, not {type(collider).__name__}")
    if collider._system is not self:
        raise ValueError("this collider belongs to another system")
    self._remove_collider(collider._id)


def _read_mesh_file(path: str | os.PathLike[str]) -> tuple[np.ndarray, np.ndarray]:
    """A mesh file's vertices and triangles, as :func:`springsim.read_obj` (``.obj``) or
    :func:`springsim.read_mesh` (others, through meshio) read and weld them: the positions
    and faces of the system they would build."""
    if os.fspath(path).lower().endswith(".obj"):
        mesh = obj.read(path)[0]
    else:
        mesh = mesh_io.read(path)
    welded = weld.weld_mesh(mesh, _WELD_FRACTION)
    # (the system read_obj and read_mesh would build needs nothing else: masses 1, no
    # stiffness; only a spring between coincident nodes would stop it)
    weld.check_coincident(welded, False)
    if welded.report is not None:
        warnings.warn(welded.report, stacklevel=2)
    return np.array(welded.vertices, dtype=np.float64), np.array(welded.triangles, dtype=np.int32)
