"""Builders: one call for each model of the source articles, each returning a System.

Mass is the body's total mass, spread equally over its nodes, unless per-node
masses are given. Stiffness and damping apply to every spring (or per spring where
an array is given). Every builder makes each spring once, never a zero-length one,
with rest lengths equal to the initial distances.
"""

from __future__ import annotations

import numpy as np

from springsim.system import System


def _node_masses(mass, count: int) -> np.ndarray:
    """Per-node masses: a scalar total spread equally, or an array taken as is."""
    m = np.asarray(mass, dtype=np.float64)
    return np.full(count, float(m) / count) if m.ndim == 0 else m


def triangulate(polygons) -> np.ndarray:
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
    triangles = []
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


def mesh(vertices, faces, mass, stiffness, damping=0.0, bend=False) -> System:
    """A mass-spring system from a polygon mesh: each unique edge becomes one spring.

    The Gamasutra article's converter, deduplicated: an edge shared by two faces is
    one spring, not two. Polygons are fan-triangulated and kept as ``faces``.

    Parameters
    ----------
    vertices : array_like, shape (N, dim)
        Vertex positions, m; dim 2 or 3.
    faces : sequence of sequences of int, or array_like of int, shape (F, 3)
        Polygons (triangles, quads, n-gons) as vertex indices, counter-clockwise
        seen from outside.
    mass : float or array_like, shape (N,)
        Total mass, kg, spread equally over the vertices; or per-vertex masses.
    stiffness, damping : float or array_like
        Spring stiffness (N/m) and axial damping (N·s/m).
    bend : bool
        Also add a spring across each interior edge, between the two vertices
        opposite it (resists folding), with the same stiffness and damping.

    Returns
    -------
    System

    Examples
    --------
    >>> import springsim as ss
    >>> square = ss.mesh([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], [[0, 1, 2, 3]],
    ...                  mass=1.0, stiffness=100.0)
    >>> square.num_springs, square.num_faces
    (5, 2)
    """
    x = np.asarray(vertices, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] not in (2, 3):
        raise ValueError(f"vertices must have shape (N, 2) or (N, 3), got {x.shape}")
    triangles = triangulate(faces)
    sim = System(dim=x.shape[1])
    sim.add_nodes(x, masses=_node_masses(mass, len(x)))
    sim.add_faces(triangles)
    edges = unique_edges(triangles)
    if bend:
        edges = np.concatenate([edges, bend_pairs(triangles, edges)])
    if len(edges):
        sim.add_springs(edges, stiffness=stiffness, damping=damping)
    return sim
