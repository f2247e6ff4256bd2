"""Colliders in save files and pickles (:mod:`springsim.io`).

Every collider is a row of the ``colliders`` entry (kind, vector, scalar, restitution,
friction, as :meth:`springsim.System.colliders` lists them); from format version 6 the
boxes' half-extents and the capsules' other ends are in ``collider_ends`` (one row per
collider, zeros for the other kinds) and the mesh colliders' triangles in
``mesh_counts`` (vertices and faces of each, in order), ``mesh_vertices`` and
``mesh_faces`` (all of them, concatenated in order).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import numpy as np

from springsim import _core
from springsim.colliders import BOX, CAPSULE, MESH, PLANE, SPHERE

#: The entries format version 6 added.
COLLIDER_KEYS = ("collider_ends", "mesh_counts", "mesh_vertices", "mesh_faces")


def _padded(vector: tuple[float, ...]) -> list[float]:
    return [*vector, *([0.0] * (3 - len(vector)))]


def collider_entries(sim: _core.System) -> dict[str, np.ndarray]:
    """The ``colliders`` entry and the version 6 entries for ``sim``."""
    rows, ends, counts = [], [], []
    vertices: list[np.ndarray] = [np.zeros((0, 3))]
    faces: list[np.ndarray] = [np.zeros((0, 3), dtype=np.int32)]
    for cid, kind, vector, scalar, restitution, friction in sim._colliders():
        rows.append([kind, *_padded(vector), scalar, restitution, friction])
        shape = sim._collider_shape(cid)
        if kind in (BOX, CAPSULE):
            ends.append(_padded(cast("tuple[float, ...]", shape)))
        else:
            ends.append([0.0] * 3)
        if kind == MESH:
            v, f = cast("tuple[np.ndarray, np.ndarray]", shape)
            counts.append([v.shape[0], f.shape[0]])
            vertices.append(v)
            faces.append(f)
    return {
        "colliders": np.array(rows, dtype=np.float64).reshape(-1, 7),
        "collider_ends": np.array(ends, dtype=np.float64).reshape(-1, 3),
        "mesh_counts": np.array(counts, dtype=np.int64).reshape(-1, 2),
        "mesh_vertices": np.concatenate(vertices).astype(np.float64),
        "mesh_faces": np.concatenate(faces).astype(np.int32),
    }


def check_collider_entries(
    entry: Callable[[str], np.ndarray],
    version: int,
    colliders: np.ndarray,
    invalid: Callable[[str], ValueError],
) -> dict[str, np.ndarray]:
    """The version 6 entries, checked against ``colliders`` (K rows), or for an older
    file what they hold when there are only planes and spheres."""
    rows = colliders.shape[0]
    if version < 6:
        return {
            "collider_ends": np.zeros((rows, 3)),
            "mesh_counts": np.zeros((0, 2), dtype=np.int64),
            "mesh_vertices": np.zeros((0, 3)),
            "mesh_faces": np.zeros((0, 3), dtype=np.int32),
        }
    data = {key: entry(key) for key in COLLIDER_KEYS}
    ends, counts = data["collider_ends"], data["mesh_counts"]
    if ends.shape != (rows, 3) or ends.dtype != np.float64:
        raise invalid(f"entry 'collider_ends' must be float64 of shape ({rows}, 3)")
    meshes = int(np.count_nonzero(colliders[:, 0] == MESH))
    if counts.shape != (meshes, 2) or counts.dtype.kind not in "iu":
        raise invalid(f"entry 'mesh_counts' must be int64 of shape ({meshes}, 2)")
    if np.any(counts < 0):
        raise invalid("entry 'mesh_counts' holds a negative count")
    for key, dtype, column in (("mesh_vertices", "f", 0), ("mesh_faces", "iu", 1)):
        value = data[key]
        total = sum(int(c) for c in counts[:, column].tolist())
        if value.ndim != 2 or value.shape != (total, 3) or value.dtype.kind not in dtype:
            raise invalid(f"entry {key!r} must have shape ({total}, 3) (from 'mesh_counts')")
    return data


def add_colliders(sim: _core.System, data: dict[str, np.ndarray]) -> None:
    """Add the colliders that checked entries describe to ``sim``, in order."""
    dim = sim.dim
    meshes = iter(data["mesh_counts"].tolist())
    at_vertex = at_face = 0
    for row, end in zip(data["colliders"].tolist(), data["collider_ends"], strict=True):
        kind, *vector, scalar, restitution, friction = row
        center = np.array(vector[:dim])
        if kind in (PLANE, SPHERE):
            sim._add_collider(int(kind), center, scalar, restitution, friction)
        elif kind in (BOX, CAPSULE):
            other = np.ascontiguousarray(end[:dim])
            sim._add_shape(int(kind), center, other, scalar, restitution, friction)
        elif kind == MESH:
            num_vertices, num_faces = next(meshes)
            vertices = data["mesh_vertices"][at_vertex : at_vertex + num_vertices]
            faces = data["mesh_faces"][at_face : at_face + num_faces]
            at_vertex, at_face = at_vertex + num_vertices, at_face + num_faces
            sim._add_mesh(
                np.ascontiguousarray(vertices, dtype=np.float64),
                np.ascontiguousarray(faces, dtype=np.int32),
                scalar,
                restitution,
                friction,
            )
        else:
            raise ValueError(f"unknown collider kind {kind}")
