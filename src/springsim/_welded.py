"""What :func:`springsim.read_obj` and :func:`springsim.read_mesh` share: the ``weld``
argument, :class:`MeshWarning`, and the system built from a file's vertices and
polygons with coincident vertices welded (:mod:`springsim.weld`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from springsim.builders.arguments import _node_masses
from springsim.builders.bodies import mesh
from springsim.builders.geometry import bend_pairs, unique_edges
from springsim.reference import MIN_SPRING_LENGTH
from springsim.system import System
from springsim.weld import weld_polygons, weld_vertices

# Vertex coordinates beyond this would give squared distances (rest lengths) that
# overflow to inf: (2e150)² times 3 is still finite, (2e155)² is not.
LARGEST_COORDINATE = 1e150


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


def _masses(mass: npt.ArrayLike, vertices: int, node_of: np.ndarray, nodes: int) -> npt.ArrayLike:
    """The masses for :func:`springsim.mesh`: a total as given, or per-vertex masses
    (one per vertex of the file) added up over each node's welded vertices."""
    m = np.asarray(mass)
    if m.dtype.kind not in "iuf" or m.ndim == 0:
        return mass  # a total (or a bad value: mesh() says what is wrong)
    return np.bincount(node_of, weights=_node_masses(m, vertices), minlength=nodes)


class Welded(NamedTuple):
    """A mesh system built from a file: ``node_of`` is the node of each of the file's
    vertices, ``report`` the MeshWarning to issue (None if nothing was welded)."""

    sim: System
    node_of: np.ndarray
    report: MeshWarning | None


#: explain(polygon, joins, a, b, hint): the error for polygon ``polygon`` of the file,
#: which joins (``joins`` True) or is next to a face that holds the coincident
#: vertices ``a`` and ``b`` (0-based, of the file).
Explain = Callable[[int, bool, int, int, str], ValueError]


def build_welded(
    name: str,
    vertices: np.ndarray,
    polygons: Sequence[Sequence[int]],
    mass: npt.ArrayLike,
    stiffness: npt.ArrayLike,
    damping: npt.ArrayLike,
    bend: bool,
    fraction: float | None,
    explain: Explain,
) -> Welded:
    """The system :func:`springsim.mesh` builds from ``vertices`` (N, dim) and
    ``polygons`` (vertex indices, checked) once the vertices closer than ``fraction``
    of the bounding-box diagonal are welded (None: none). A spring that would join two
    coincident nodes raises ``explain``'s error."""
    diagonal = float(np.linalg.norm(vertices.max(axis=0) - vertices.min(axis=0)))
    if fraction is None:
        welded = np.arange(len(vertices))
    else:
        welded = weld_vertices(vertices, fraction * diagonal)
    kept = np.flatnonzero(welded == np.arange(len(vertices)))
    node_of = (np.cumsum(welded == np.arange(len(vertices))) - 1)[welded]
    found, sources, degenerate = weld_polygons(polygons, node_of.tolist())
    triangles = np.array(found, dtype=np.int64).reshape(-1, 3)
    masses = _masses(mass, len(vertices), node_of, len(kept))
    try:
        sim = mesh(
            vertices[kept], triangles, mass=masses, stiffness=stiffness, damping=damping, bend=bend
        )
    except ValueError:
        hint = (
            "read it with weld=1e-9 (the default) or more to weld them"
            if fraction is None
            else f"weld={fraction:g} of the diagonal did not weld them: raise it"
        )
        pair = _coincident(vertices[kept], triangles, bend)
        if pair is None:
            raise
        i, j = pair
        both = np.flatnonzero((triangles == i).any(axis=1) & (triangles == j).any(axis=1))
        either = np.flatnonzero((triangles == i).any(axis=1) | (triangles == j).any(axis=1))
        polygon = sources[both[0] if both.size else either[0]]
        raise explain(polygon, bool(both.size), kept[i], kept[j], hint) from None
    report = None
    if len(kept) < len(vertices) or degenerate:
        dropped = (
            f"; dropped {degenerate} triangles welding left degenerate (two equal corners)"
            if degenerate
            else ""
        )
        message = (
            f"{name}: welded {len(vertices) - len(kept)} of {len(vertices)} vertices into "
            f"coincident ones ({len(kept)} nodes){dropped} (weld={fraction:g} of the "
            f"bounding-box diagonal, {diagonal:g} m)"
        )
        report = MeshWarning(message, len(vertices), len(kept), degenerate, node_of)
    return Welded(sim, node_of, report)


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
