"""Boxes, capsules and mesh colliders as triangles, for :func:`springsim.draw` and
:func:`springsim.animate` (planes and spheres are drawn by :mod:`springsim.plot`).

Every such collider becomes a triangle soup in the system's coordinates, shape
(T, 3, dim): a mesh its own faces, a box its 12 (2 in 2D) and a capsule a tessellated
cylinder with two hemispheres (a stadium's fan in 2D). :attr:`springsim.History.
collider_triangles` holds them as the run started; they are drawn in the grey of the
other colliders.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

from springsim import _core
from springsim.colliders import BOX, CAPSULE, MESH

if TYPE_CHECKING:
    from matplotlib.axes import Axes

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
    """The boxes, capsules and mesh colliders of ``system`` as triangles, (T, 3, dim)."""
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


def add_collider_triangles(ax: Axes, triangles: np.ndarray, dim: int) -> None:
    """Draw triangles from :func:`collider_triangles` (already in matplotlib's axes
    order) in the colliders' grey, under the rest."""
    if len(triangles) == 0:
        return
    style: dict[str, Any] = {"facecolor": "0.55", "alpha": 0.3, "gid": "springsim-shape"}
    if dim == 3:
        from mpl_toolkits.mplot3d.art3d import Poly3DCollection

        ax.add_collection(Poly3DCollection(triangles, edgecolor="0.45", linewidth=0.2, **style))
    else:
        from matplotlib.collections import PolyCollection

        ax.add_collection(PolyCollection(triangles, edgecolor="none", zorder=0.5, **style))
