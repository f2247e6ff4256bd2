"""Welding a mesh's coincident vertices, as :func:`springsim.read_obj` and
:func:`springsim.read_mesh` do.

Modelling programs write one vertex per (position, texture coordinate, normal): the
poles of a sphere or capsule and the vertices along a texture seam come out as several
vertices at one place. A mass-spring model needs one node there, so
:func:`weld_vertices` finds which vertices coincide (within a distance), and
:func:`weld_polygons` rewrites the faces on the welded vertices, dropping the
triangles that end up with two equal corners. :func:`weld_mesh` does both to a mesh
read from a file (:class:`MeshFile`) and reports it with a :class:`MeshWarning`; a
spring that would still join two coincident nodes is an error naming the file's
polygon (:func:`check_coincident`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from springsim.builders.geometry import bend_pairs, unique_edges
from springsim.reference import MIN_SPRING_LENGTH

__all__ = ["MeshWarning", "weld_polygons", "weld_vertices"]

# Vertex coordinates beyond this would give squared distances (rest lengths) that
# overflow to inf: (2e150)² times 3 is still finite, (2e155)² is not.
LARGEST_COORDINATE = 1e150

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


class MeshWarning(UserWarning):
    """:func:`~springsim.read_obj` or :func:`~springsim.read_mesh` changed the mesh it
    read: it welded coincident vertices, and dropped the triangles that welding left
    with two equal corners.

    The numbers are attributes, for a program to check: ``vertices`` (in the file),
    ``nodes`` (of the system), ``welded`` (vertices merged into others, ``vertices -
    nodes``), ``degenerate`` (triangles dropped) and ``node_of_vertex`` (ndarray of
    int64, the node each of the file's vertices became). Silence it with
    ``warnings.filterwarnings("ignore", category=springsim.MeshWarning)``.
    """

    def __init__(
        self,
        message: str,
        vertices: int = 0,
        nodes: int = 0,
        degenerate: int = 0,
        node_of_vertex: np.ndarray | None = None,
    ) -> None:
        super().__init__(message)
        self.vertices, self.nodes, self.degenerate = vertices, nodes, degenerate
        self.welded = vertices - nodes
        self.node_of_vertex = node_of_vertex


def weld_fraction(weld: object) -> float | None:
    """``weld`` checked: a fraction of the bounding-box diagonal in [0, 1], or None."""
    if weld is None or weld is False:
        return None
    if isinstance(weld, bool) or not isinstance(weld, (int, float, np.integer, np.floating)):
        raise TypeError(
            f"weld must be a number (a fraction of the mesh's bounding-box diagonal) or None "
            f"(no welding), not {weld!r}"
        )
    if not 0.0 <= float(weld) <= 1.0:
        raise ValueError(f"weld must be in [0, 1] (a fraction of the diagonal), got {weld!r}")
    return float(weld)


#: explain(polygon, joins, a, b, hint): the error for polygon ``polygon`` of the file,
#: which joins (``joins`` True) or is next to a face that holds the coincident
#: vertices ``a`` and ``b`` (0-based, of the file).
Explain = Callable[[int, bool, int, int, str], ValueError]


class MeshFile(NamedTuple):
    """A mesh as a file holds it: ``vertices`` (V, dim), ``polygons`` (their vertex
    indices, checked), the file's ``name`` and how to ``explain`` a face that joins
    coincident vertices."""

    name: str
    vertices: np.ndarray
    polygons: list[list[int]]
    explain: Explain


class Welded(NamedTuple):
    """A mesh file's vertices welded: ``vertices`` (one per node), ``triangles`` on the
    nodes, ``kept`` (the file's vertex of each node), ``node_of`` (the node of each of
    the file's vertices), ``sources`` (the polygon of each triangle), ``report`` (the
    MeshWarning to issue, None if nothing was welded), and the ``file`` and weld
    ``fraction`` it came from."""

    vertices: np.ndarray
    triangles: np.ndarray
    kept: np.ndarray
    node_of: np.ndarray
    sources: list[int]
    report: MeshWarning | None
    file: MeshFile
    fraction: float | None


def weld_mesh(mesh: MeshFile, fraction: float | None) -> Welded:
    """``mesh`` with the vertices closer than ``fraction`` of its bounding-box diagonal
    welded (None: none) and its polygons fan-triangulated on the nodes."""
    vertices = mesh.vertices
    diagonal = float(np.linalg.norm(vertices.max(axis=0) - vertices.min(axis=0)))
    if fraction is None:
        welded = np.arange(len(vertices))
    else:
        welded = weld_vertices(vertices, fraction * diagonal)
    kept = np.flatnonzero(welded == np.arange(len(vertices)))
    node_of = (np.cumsum(welded == np.arange(len(vertices))) - 1)[welded]
    found, sources, degenerate = weld_polygons(mesh.polygons, node_of.tolist())
    triangles = np.array(found, dtype=np.int64).reshape(-1, 3)
    report = None
    if len(kept) < len(vertices) or degenerate:
        dropped = (
            f"; dropped {degenerate} triangles welding left degenerate (two equal corners)"
            if degenerate
            else ""
        )
        message = (
            f"{mesh.name}: welded {len(vertices) - len(kept)} of {len(vertices)} vertices "
            f"into coincident ones ({len(kept)} nodes){dropped} (weld={fraction:g} of the "
            f"bounding-box diagonal, {diagonal:g} m)"
        )
        report = MeshWarning(message, len(vertices), len(kept), degenerate, node_of)
    return Welded(vertices[kept], triangles, kept, node_of, sources, report, mesh, fraction)


def check_coincident(welded: Welded, bend: bool) -> None:
    """ValueError (the file's ``explain``) if a spring of the mesh (an edge of its
    triangles; with ``bend``, also across each interior edge) would join two coincident
    nodes: it would have no length."""
    pair = _coincident(welded.vertices, welded.triangles, bend)
    if pair is None:
        return
    hint = (
        "read it with weld=1e-9 (the default) or more to weld them"
        if welded.fraction is None
        else f"weld={welded.fraction:g} of the diagonal did not weld them: raise it"
    )
    i, j = pair
    triangles, kept = welded.triangles, welded.kept
    both = np.flatnonzero((triangles == i).any(axis=1) & (triangles == j).any(axis=1))
    either = np.flatnonzero((triangles == i).any(axis=1) | (triangles == j).any(axis=1))
    polygon = welded.sources[both[0] if both.size else either[0]]
    raise welded.file.explain(polygon, bool(both.size), kept[i], kept[j], hint) from None


def _coincident(x: np.ndarray, triangles: np.ndarray, bend: bool) -> tuple[int, int] | None:
    """The first spring (node pair) that would join two coincident nodes, or None."""
    edges = unique_edges(triangles)
    if bend:
        edges = np.concatenate([edges, bend_pairs(triangles, edges)])
    short = np.linalg.norm(x[edges[:, 1]] - x[edges[:, 0]], axis=1) < MIN_SPRING_LENGTH
    if not short.any():
        return None
    i, j = edges[np.argmax(short)].tolist()
    return i, j
