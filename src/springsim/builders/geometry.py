"""Mesh geometry for the builders: lattices, triangulations, icospheres, edges."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

#: The largest icosphere level :func:`ball` builds (655 362 nodes, 1 966 080 springs).
MAX_LEVEL = 8


def _lattice_pairs(grid: np.ndarray, offsets: Sequence[tuple[int, ...]]) -> np.ndarray:
    """Pairs (grid[p], grid[p + o]) for every lattice point p with p + o inside, per offset.

    ``grid`` holds node indices on a regular lattice; each offset gives one family of
    springs, in the order the offsets are given, and within one in the order of their
    first node: consecutive springs then touch nearby nodes, which the kernel's loop
    (and its split of the nodes among threads) needs to be fast.
    """
    pairs = [np.zeros((0, 2), dtype=np.int64)]
    for offset in offsets:
        a = tuple(slice(max(0, -o), n - max(0, o)) for o, n in zip(offset, grid.shape, strict=True))
        b = tuple(slice(max(0, o), n - max(0, -o)) for o, n in zip(offset, grid.shape, strict=True))
        family = np.stack([grid[a].ravel(), grid[b].ravel()], axis=1)
        pairs.append(family[np.argsort(family[:, 0], kind="stable")])
    return np.concatenate(pairs).astype(np.int64)


def _quad_triangles(grid: np.ndarray) -> np.ndarray:
    """Two triangles per cell of a 2D index grid, counter-clockwise seen from the side
    that the cross product (axis 0 direction) × (axis 1 direction) points to."""
    q0, q1 = grid[:-1, :-1].ravel(), grid[1:, :-1].ravel()
    q2, q3 = grid[1:, 1:].ravel(), grid[:-1, 1:].ravel()
    return np.concatenate([np.stack([q0, q1, q2], axis=1), np.stack([q0, q2, q3], axis=1)]).astype(
        np.int64
    )


def _box_triangles(grid: np.ndarray) -> np.ndarray:
    """The surface of a 3D index grid (axes x, y, z) as outward triangles."""
    triangles = []
    for a in range(3):
        b, c = (a + 1) % 3, (a + 2) % 3  # e_b × e_c = e_a
        t = grid.transpose(a, b, c)
        triangles.append(_quad_triangles(t[0])[:, ::-1])  # the −a side: reversed
        triangles.append(_quad_triangles(t[-1]))  # the +a side
    return np.concatenate(triangles)


def _icosahedron() -> tuple[np.ndarray, np.ndarray]:
    """The unit icosahedron with a vertex at each pole of the y axis.

    Vertex 0 is the top (0, 1, 0), 1–5 the upper ring at y = 1/√5, 6–10 the lower
    ring at y = −1/√5 (turned by 36°), 11 the bottom (0, −1, 0).
    """
    k = np.arange(5)
    ring = 2.0 / np.sqrt(5.0)  # ring radius; ring² + (1/√5)² = 1
    up, low = 2 * np.pi * k / 5, 2 * np.pi * (k + 0.5) / 5  # the rings' longitudes
    up = np.stack([ring * np.cos(up), np.full(5, 1 / np.sqrt(5)), ring * np.sin(up)], axis=1)
    low = np.stack([ring * np.cos(low), np.full(5, -1 / np.sqrt(5)), ring * np.sin(low)], axis=1)
    x = np.concatenate([[[0.0, 1.0, 0.0]], up, low, [[0.0, -1.0, 0.0]]])
    u, lo, u1, lo1 = 1 + k, 6 + k, 1 + (k + 1) % 5, 6 + (k + 1) % 5
    tri = np.concatenate(
        [
            np.stack([np.zeros(5, int), u, u1], axis=1),
            np.stack([u, lo, u1], axis=1),
            np.stack([u1, lo, lo1], axis=1),
            np.stack([np.full(5, 11), lo1, lo], axis=1),
        ]
    ).astype(np.int64)
    # Orient every face outward: its normal must point away from the centre.
    normal = np.cross(x[tri[:, 1]] - x[tri[:, 0]], x[tri[:, 2]] - x[tri[:, 0]])
    inward = np.einsum("ij,ij->i", normal, x[tri].sum(axis=1)) < 0
    tri[inward] = tri[inward][:, ::-1]
    return x, tri


def _subdivide(x: np.ndarray, tri: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Split each triangle into four at its edge midpoints, projected to the unit sphere.

    Midpoints are shared between the two triangles of an edge; old vertices keep their
    indices and each child keeps its parent's orientation.
    """
    edges = np.sort(np.stack([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [2, 0]]], axis=1), axis=2)
    unique, inverse = np.unique(edges.reshape(-1, 2), axis=0, return_inverse=True)
    middle = x[unique[:, 0]] + x[unique[:, 1]]
    middle /= np.linalg.norm(middle, axis=1, keepdims=True)
    ab, bc, ca = (len(x) + inverse.reshape(-1, 3)).T
    a, b, c = tri.T
    children = [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
    tri = np.concatenate([np.stack(child, axis=1) for child in children])
    return np.concatenate([x, middle]), tri


def _icosphere(level: int) -> tuple[np.ndarray, np.ndarray]:
    """Unit icosphere: 10·4^level + 2 vertices, 20·4^level outward faces."""
    x, tri = _icosahedron()
    for _ in range(level):
        x, tri = _subdivide(x, tri)
    return x, tri


def triangulate(polygons: Iterable[Sequence[int]] | np.ndarray) -> np.ndarray:
    """Fan-triangulate polygons (sequences of >= 3 vertex indices) into (F, 3) int64.

    A polygon (p0, p1, ..., pk) becomes (p0, p1, p2), (p0, p2, p3), ..., which keeps
    its orientation; exact for convex polygons, as modellers' quads and n-gons are.

    Examples
    --------
    >>> triangulate([[0, 1, 2, 3]]).tolist()
    [[0, 1, 2], [0, 2, 3]]
    """
    if isinstance(polygons, np.ndarray) and polygons.ndim == 2 and polygons.shape[1] == 3:
        return polygons.astype(np.int64)
    triangles: list[tuple[int, int, int]] = []
    for k, polygon in enumerate(polygons):
        p = [int(i) for i in polygon]
        if len(p) < 3:
            raise ValueError(f"face {k} has {len(p)} vertices; a face needs at least 3")
        triangles.extend((p[0], p[i], p[i + 1]) for i in range(1, len(p) - 1))
    return np.array(triangles, dtype=np.int64).reshape(-1, 3)


def unique_edges(triangles: np.ndarray) -> np.ndarray:
    """The edges of a triangle mesh, each once, as sorted (i < j) pairs in first-seen order."""
    tri = np.asarray(triangles, dtype=np.int64)
    edges = np.stack([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [2, 0]]], axis=1).reshape(-1, 2)
    edges.sort(axis=1)
    _, first = np.unique(edges, axis=0, return_index=True)
    return edges[np.sort(first)]


def bend_pairs(triangles: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """For each interior edge (shared by two triangles), the two opposite vertices.

    Pairs that are already edges, or repeat, are left out.
    """
    opposite: dict[tuple[int, int], list[int]] = {}
    for a, b, c in np.asarray(triangles, dtype=np.int64).tolist():
        for i, j, k in ((a, b, c), (b, c, a), (c, a, b)):
            opposite.setdefault((min(i, j), max(i, j)), []).append(k)
    taken = {tuple(e) for e in np.asarray(edges).tolist()}
    pairs = []
    for across in opposite.values():
        if len(across) != 2 or across[0] == across[1]:
            continue
        pair = (min(across), max(across))
        if pair not in taken:
            taken.add(pair)
            pairs.append(pair)
    return np.array(pairs, dtype=np.int64).reshape(-1, 2)
