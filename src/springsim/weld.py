"""Welding a mesh's coincident vertices, as :func:`springsim.io.read_obj` does.

Modelling programs write one vertex per (position, texture coordinate, normal): the
poles of a sphere or capsule and the vertices along a texture seam come out as several
vertices at one place. A mass-spring model needs one node there, so
:func:`weld_vertices` finds which vertices coincide (within a distance), and
:func:`weld_polygons` rewrites the faces on the welded vertices, dropping the
triangles that end up with two equal corners.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["weld_polygons", "weld_vertices"]

# The cells of the search grid are this many times the weld distance h, and a second
# grid per axis is shifted by half a cell (1.25 h): two points at most h apart share a
# cell in at least one of the 2^dim grids, with a margin of 0.25 h against rounding.
_CELL = 2.5
# A distance below this fraction of the mesh's largest side welds exactly coincident
# vertices only: finer, the grid's cell numbers (up to 4e11 across the mesh here) would
# lose that margin to rounding.
_FINEST = 1e-12
# Odd 64-bit constants that spread a cell's integer coordinates over one hash key.
_MIX = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9], dtype=np.uint64)


def weld_vertices(vertices: npt.ArrayLike, distance: float) -> np.ndarray:
    """For each vertex, the vertex it is welded to: the first one (in index order) that
    is kept and lies within ``distance`` of it, or itself.

    Vertices are taken in index order; a vertex within ``distance`` of an earlier kept
    vertex is welded to the first such one, otherwise it is kept. Welds do not chain: a
    vertex near a welded (not kept) vertex only is kept. Exactly coincident vertices
    always weld. Expected time O(N log N): a hashed grid of cells about the size of
    ``distance`` finds the candidates (vertices with a neighbour in their cell), and
    only those are compared one by one.

    Parameters
    ----------
    vertices : array_like, shape (N, dim)
        Finite coordinates, m.
    distance : float
        Vertices this close (Euclidean distance, m) or closer weld; 0: only exactly
        coincident ones (so does a distance below 1e-12 of the mesh's largest side,
        finer than the search's grid resolves).

    Returns
    -------
    ndarray of int64, shape (N,)
        The kept vertex each vertex becomes (``result[i] <= i``; kept vertices map to
        themselves).

    Examples
    --------
    >>> weld_vertices([[0, 0, 0], [1, 0, 0], [0, 0, 0], [1, 1e-12, 0]], 1e-9).tolist()
    [0, 1, 0, 1]
    """
    x = np.asarray(vertices, dtype=np.float64)
    if len(x) == 0:
        return np.zeros(0, dtype=np.int64)
    # Exact copies first, all at once (what exporters write): each is welded where its
    # first occurrence is, so only the distinct points, in order of first occurrence,
    # need the search.
    first, inverse = _first_copies(x)
    lowest = x.min(axis=0)
    extent = float(np.max(x.max(axis=0) - lowest))
    if not distance >= _FINEST * extent or distance == 0:
        return first[inverse].astype(np.int64)
    order = np.argsort(first)  # the distinct points in file order
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    within = _weld_distinct(x[first[order]] - lowest, distance)  # ranks -> ranks
    return first[order][within][rank[inverse]].astype(np.int64)


def _first_copies(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first index of each distinct row of ``x`` (in sorted order), and for each
    row which of them it equals (as ``np.unique(x, axis=0)``, faster: one lexsort)."""
    order = np.lexsort(x.T[::-1])  # stable: equal rows stay in index order
    rows = x[order]
    starts = np.r_[True, np.any(rows[1:] != rows[:-1], axis=1)]  # -0.0 == 0.0
    group = np.cumsum(starts) - 1
    inverse = np.empty(len(x), dtype=np.int64)
    inverse[order] = group
    return order[starts], inverse


def _weld_distinct(x: np.ndarray, distance: float) -> np.ndarray:
    """:func:`weld_vertices` for distinct points with coordinates >= 0."""
    n, dim = x.shape
    cell = _CELL * distance
    scaled = x / cell
    groups = []  # per grid: the (hashed) cell of each point, numbered 0, 1, ...
    candidate = np.zeros(n, dtype=bool)
    for shift in itertools.product((0.0, 0.5), repeat=dim):
        coordinates = np.floor(scaled + np.array(shift)).astype(np.int64).view(np.uint64)
        keys = np.bitwise_xor.reduce(coordinates * _MIX[:dim], axis=1)  # wraps, mod 2^64
        _, group, counts = np.unique(keys, return_inverse=True, return_counts=True)
        group = group.reshape(-1)
        candidate |= counts[group] > 1
        groups.append(group)
    welded = np.arange(n, dtype=np.int64)
    close = distance * distance
    # Each cell of each grid keeps the kept points in it: a handful (kept points are
    # more than `distance` apart), so each point is compared with a few at most.
    kept_in: list[dict[int, list[tuple[int, list[float]]]]] = [{} for _ in groups]
    chosen = np.flatnonzero(candidate)
    cells = np.stack([g[chosen] for g in groups], axis=1).tolist()
    for i, p, its_cells in zip(chosen.tolist(), x[chosen].tolist(), cells, strict=True):
        best = -1
        for grid, c in zip(kept_in, its_cells, strict=True):
            for k, q in grid.get(c, ()):
                near = sum((a - b) ** 2 for a, b in zip(p, q, strict=True)) <= close
                if near and (best < 0 or k < best):
                    best = k
        if best < 0:
            for grid, c in zip(kept_in, its_cells, strict=True):
                grid.setdefault(c, []).append((i, p))
        else:
            welded[i] = best
    return welded


def weld_polygons(
    polygons: Iterable[Sequence[int]], node_of: Sequence[int]
) -> tuple[list[tuple[int, int, int]], list[int], int]:
    """Triangles of polygons whose vertices are renumbered by ``node_of``.

    Each polygon's corners become nodes; a run of corners on one node (an edge welded
    to nothing) becomes one corner, then the polygon is fan-triangulated as
    :func:`springsim.builders.geometry.triangulate` does and the triangles with two equal corners
    (a polygon pinched at a welded vertex) are dropped. A polygon left with fewer than
    3 corners gives no triangle.

    Parameters
    ----------
    polygons : sequence of sequences of int
        Each polygon's vertex indices (>= 3 of them, none twice).
    node_of : sequence of int
        The node of each vertex.

    Returns
    -------
    triangles : list of (int, int, int)
        In polygon order.
    sources : list of int
        The polygon each triangle comes from.
    degenerate : int
        Triangles dropped: those the polygons would give without welding, less those
        returned.

    Examples
    --------
    A quad at a sphere's pole, two of its corners welded into one:

    >>> weld_polygons([[0, 1, 2, 3], [4, 5, 6]], [0, 0, 1, 2, 3, 4, 5])
    ([(0, 1, 2), (3, 4, 5)], [0, 1], 1)
    """
    triangles, sources, degenerate = [], [], 0
    for k, polygon in enumerate(polygons):
        p = [node_of[v] for v in polygon]
        q = [a for j, a in enumerate(p) if a != p[j - 1]]  # p[-1] before p[0]: cyclic
        fan = [(q[0], q[j], q[j + 1]) for j in range(1, len(q) - 1)]
        kept = [t for t in fan if t[0] != t[1] != t[2] != t[0]]
        degenerate += len(polygon) - 2 - len(kept)
        triangles += kept
        sources += [k] * len(kept)
    return triangles, sources, degenerate
