"""Bodies from points, meshes and spheres: :func:`mesh`, :func:`ball`, :func:`cluster`
(following the conventions of :mod:`springsim.builders`).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from springsim.builders.arguments import (
    _damping,
    _dimension,
    _integer,
    _node_masses,
    _number,
    _system,
    _vector,
)
from springsim.builders.geometry import (
    MAX_LEVEL,
    _icosphere,
    bend_pairs,
    triangulate,
    unique_edges,
)
from springsim.builders.materials import _rotation
from springsim.system import System


def mesh(
    vertices: npt.ArrayLike,
    faces: Iterable[Sequence[int]] | np.ndarray,
    *,
    mass: npt.ArrayLike,
    stiffness: npt.ArrayLike,
    damping: npt.ArrayLike = 0.0,
    bend: bool = False,
) -> System:
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
    if x.ndim != 2 or x.shape[1] not in (2, 3) or len(x) == 0:
        raise ValueError(f"vertices must have shape (N, 2) or (N, 3), N > 0, got {x.shape}")
    triangles = triangulate(faces)
    sim = System(dim=x.shape[1])
    sim.add_nodes(x, masses=_node_masses(mass, len(x)))
    sim.add_faces(triangles)
    edges = unique_edges(triangles)
    if bend:
        edges = np.concatenate([edges, bend_pairs(triangles, edges)])
    # A spring with no length has no direction: coincident vertices are an error.
    short = np.flatnonzero(np.linalg.norm(x[edges[:, 1]] - x[edges[:, 0]], axis=1) < 1e-12)
    if short.size:
        i, j = edges[short[0]]
        raise ValueError(f"vertices {i} and {j} coincide: they cannot share a spring")
    if len(edges):
        sim.add_springs(edges, stiffness=stiffness, damping=damping)
    return sim


def ball(
    *positional: object,
    radius: float,
    mass: npt.ArrayLike,
    stiffness: float,
    damping: float | None = None,
    dim: int = 3,
    subdivisions: int | None = None,
    nodes: int | None = None,
    center: npt.ArrayLike | None = None,
    rotation: npt.ArrayLike | None = None,
    nrt: float | None = None,
    damping_ratio: float | None = None,
    settle: bool = False,
) -> System:
    """A hollow ball: an icosphere in 3D, a ring of nodes in 2D; with ``nrt``, full of gas.

    3D: the icosphere of ``subdivisions`` levels. Level 0 is the icosahedron (12
    nodes, 30 springs, 20 faces) with a node at each pole of the y axis; each level
    splits every triangle into four at its edge midpoints, projected onto the
    sphere: 10·4ˢ + 2 nodes, 30·4ˢ springs (its unique edges), 20·4ˢ outward faces.
    Node 0 is the top (+y), node 11 the bottom (−y), before ``rotation``.

    2D: a ring of ``nodes`` nodes, node 0 at the bottom (−y), counter-clockwise, each
    joined to the next (the last to node 0): ``nodes`` springs, no faces.

    Either way it is a skin without a filling: it holds its shape only under
    tension. Give ``nrt`` to fill it with gas, Matyka's pressure soft body: the
    ball is then pressure body 0 (see :meth:`System.add_pressure`), its boundary
    the ring (2D) or the faces (3D). For a solid, use :func:`jelly`.

    **Gas and equilibrium.** By default (``settle=False``) a ball with gas starts
    with its springs at their rest lengths, which cannot hold the gas: it is not
    in equilibrium, and the first steps inflate it and set it wobbling, with as
    much energy as the springs' stretch will store (often more than a collision
    you meant to study). ``settle=True`` starts it at rest in its equilibrium
    shape instead: with gravity off, :meth:`System.relax` inflates it until the
    springs' tension holds the gas (the size grows from ``radius``, which is the
    springs' rest shape, by their stretch), the ball is put back with its
    centre at ``center``, and gravity is given back. It then moves as a whole
    (falls) without wobbling. This needs SciPy, as ``relax`` does.

    Parameters
    ----------
    radius : float
        m, > 0.
    mass : float or array_like, shape (N,)
        Total mass, kg, spread equally over the nodes; or per-node masses.
    stiffness : float
        Of each spring, N/m, >= 0.
    damping : float, optional
        Axial damping of each spring, N·s/m, >= 0; 0 by default. Or ``damping_ratio``.
    dim : {3, 2}
        Spatial dimension.
    subdivisions : int
        3D only: the icosphere level, 0 to :data:`MAX_LEVEL`.
    nodes : int
        2D only: the ring's number of nodes, >= 3.
    center : array_like, shape (dim,), optional
        m; the origin by default.
    rotation : array_like, shape (dim, dim), float (2D) or scipy Rotation, optional
        The ball turned about its centre (where its poles, or node 0, are); in 2D also
        an angle, rad.
    nrt : float, optional
        n·R·T of the gas inside, >= 0: J in 3D, J/m in 2D. P·V = nrt, so to start at
        pressure P pass P times the initial volume (area in 2D). None (the
        default): no gas.
    damping_ratio : float, optional
        ζ >= 0, instead of ``damping``: c = 2 ζ √(k m_eff) per spring (see
        :func:`string`).
    settle : bool
        Start in equilibrium under the gas (see above): False (the default) starts
        at the springs' rest shape, out of equilibrium as soon as there is gas;
        True inflates the ball to its equilibrium first. Without gas the ball is at
        rest either way.

    Returns
    -------
    System

    Raises
    ------
    TypeError
        A positional argument (the count is ``subdivisions=`` or ``nodes=``), a
        non-integer count or ``dim``, a non-numeric value, a ``settle`` that is
        not a bool.
    ValueError
        The count of the other dimension (``nodes`` in 3D, ``subdivisions`` in 2D)
        or none, a count out of range, radius <= 0, a negative stiffness, damping or
        nrt.

    Examples
    --------
    >>> import springsim as ss
    >>> sphere = ss.ball(subdivisions=1, radius=0.5, mass=1.0, stiffness=100.0)
    >>> sphere.num_nodes, sphere.num_springs, sphere.num_faces
    (42, 120, 80)
    >>> ring = ss.ball(nodes=12, radius=0.5, mass=1.0, stiffness=100.0, dim=2)
    >>> ring.num_springs, ring.positions[0].round(12).tolist()
    (12, [0.0, -0.5])

    A 2D soft ball in the style of Matyka's demo, dropped on the floor:

    >>> soft = ss.ball(nodes=20, radius=0.5, mass=1.0, stiffness=1e4, damping=1.0, dim=2,
    ...                center=(0, 1), nrt=80.0)
    >>> floor = soft.add_plane((0, 1))  # the floor y = 0, restitution 0: only gas bounces
    >>> soft.step(1e-4, steps=4000)  # 0.4 s: squashed on the floor
    >>> bool(soft.center_of_mass()[1] < 0.4)  # its centre is lower than its radius
    True
    >>> soft.step(1e-4, steps=4000)  # 0.8 s: bounced back up
    >>> bool(soft.center_of_mass()[1] > 0.75)
    True

    Settled, a ball full of gas starts at rest in its inflated shape:

    >>> calm = ss.ball(nodes=20, radius=0.5, mass=1.0, stiffness=1e4, dim=2, nrt=80.0,
    ...                settle=True)
    >>> calm.gravity = 0
    >>> calm.step(1e-4, steps=1000)
    >>> bool(calm.energy().kinetic < 1e-12)  # no wobble
    True
    """
    if positional:
        raise TypeError(
            "ball() takes keywords only: its count is subdivisions= (the icosphere level, "
            f"3D) or nodes= (the ring's nodes, 2D), not a positional {positional[0]!r}"
        )
    n = _ball_count(_dimension(dim), subdivisions, nodes)
    dim = _dimension(dim)
    radius = _number(radius, "radius", positive=True)
    k = _number(stiffness, "stiffness")
    c, ratio = _damping(damping, damping_ratio)
    center = _vector(center, "center", dim)
    turn = _rotation(rotation, dim)
    if dim == 3:
        unit, faces = _icosphere(n)
        pairs = unique_edges(faces)
    else:
        angle = -np.pi / 2 + 2 * np.pi * np.arange(n) / n
        unit = np.stack([np.cos(angle), np.sin(angle)], axis=1)
        pairs, faces = np.stack([np.arange(n), (np.arange(n) + 1) % n], axis=1), None
    masses = _node_masses(mass, len(unit))
    nrt = None if nrt is None else _number(nrt, "nrt")
    if not isinstance(settle, (bool, np.bool_)):
        raise TypeError(f"settle must be True or False, got {settle!r}")
    sim = _system(
        center + radius * unit @ turn.T, masses, pairs, k, c, faces=faces, damping_ratio=ratio
    )
    if nrt is not None:
        sim.add_pressure(np.arange(n) if dim == 2 else faces, nrt)  # type: ignore[arg-type]
        if settle:
            _settle(sim, center)
    return sim


def _settle(sim: System, center: np.ndarray) -> None:
    """Inflate a ball full of gas to its equilibrium shape, at rest, centred on ``center``.

    A free body in gravity has no equilibrium (it falls), so its shape's is found with
    gravity off: the gas and the springs alone, by :meth:`System.relax`. The result
    has the ball's symmetry about its centre up to the solver's tolerance; it is put
    back on ``center`` (relax may drift along the free body's rigid motions), and
    gravity is given back.
    """
    gravity = sim.gravity.copy()
    sim.gravity = 0
    try:
        sim.relax()
    finally:
        sim.gravity = gravity
    sim.positions += center - sim.positions.mean(axis=0)


# Shown as keywords only: the positional slot exists only to explain the old ball(n, ...).
_signature = inspect.signature(ball)
ball.__signature__ = _signature.replace(  # type: ignore[attr-defined]
    parameters=[p for p in _signature.parameters.values() if p.name != "positional"]
)


def _ball_count(dim: int, subdivisions: object, nodes: object) -> int:
    """The ball's count: the icosphere level in 3D, the ring's nodes in 2D."""
    if dim == 3:
        if nodes is not None:
            raise ValueError(
                "nodes= is the node count of a 2D ring; a 3D ball takes subdivisions= "
                f"(the icosphere level, 0 to {MAX_LEVEL})"
            )
        if subdivisions is None:
            raise ValueError(
                f"a 3D ball needs subdivisions= (the icosphere level, 0 to {MAX_LEVEL})"
            )
        level = _integer(subdivisions, "subdivisions", 0)
        if level > MAX_LEVEL:
            raise ValueError(
                f"subdivisions is the icosphere level, 0 to {MAX_LEVEL}; level {level} would "
                f"have {10 * 4**level + 2} nodes"
            )
        return level
    if subdivisions is not None:
        raise ValueError(
            "subdivisions= is the level of a 3D icosphere; a 2D ball (a ring) takes nodes="
        )
    if nodes is None:
        raise ValueError("a 2D ball needs nodes= (the ring's number of nodes, >= 3)")
    return _integer(nodes, "nodes", 3)


def cluster(
    points: npt.ArrayLike,
    *,
    mass: npt.ArrayLike,
    stiffness: float,
    damping: float | None = None,
    damping_ratio: float | None = None,
) -> System:
    """Nodes at ``points``, every pair joined by a spring: a squishy body.

    The xbdev article's squishy objects: linking every vertex to every other keeps
    a small shape (a cube, a pyramid) from collapsing. Each pair is joined once:
    N(N − 1)/2 springs, in the order (0, 1), (0, 2), ..., (1, 2), ...; a cube's 8
    corners give 28. The count grows as N², so keep N small (tens of nodes).

    Parameters
    ----------
    points : array_like, shape (N, dim)
        Node positions, m; dim 2 or 3, N >= 2, no two the same.
    mass : float or array_like, shape (N,)
        Total mass, kg, spread equally over the nodes; or per-node masses.
    stiffness : float
        Of each spring, N/m, >= 0.
    damping : float, optional
        Axial damping of each spring, N·s/m, >= 0; 0 by default. Or ``damping_ratio``.
    damping_ratio : float, optional
        ζ >= 0, instead of ``damping``: c = 2 ζ √(k m_eff) per spring (see
        :func:`string`).

    Returns
    -------
    System

    Raises
    ------
    TypeError
        Non-numeric points or values.
    ValueError
        A wrong shape, fewer than two points, two points at the same place (a
        zero-length spring), a negative stiffness or damping.

    Examples
    --------
    >>> import itertools
    >>> import springsim as ss
    >>> cube = ss.cluster(list(itertools.product([0, 1], repeat=3)), mass=1.0,
    ...                   stiffness=100.0)
    >>> cube.num_nodes, cube.num_springs
    (8, 28)
    """
    x = np.asarray(points)
    if x.dtype.kind not in "iuf":
        raise TypeError(f"points must be real numbers, not an array of dtype {x.dtype}")
    if x.ndim != 2 or x.shape[1] not in (2, 3):
        raise ValueError(f"points must have shape (N, 2) or (N, 3), got {x.shape}")
    if len(x) < 2:
        raise ValueError(f"a cluster needs at least 2 points, got {len(x)}")
    x = x.astype(np.float64)
    if not np.all(np.isfinite(x)):
        raise ValueError("points must be finite")
    k = _number(stiffness, "stiffness")
    c, ratio = _damping(damping, damping_ratio)
    masses = _node_masses(mass, len(x))
    pairs = np.stack(np.triu_indices(len(x), 1), axis=1)
    lengths = np.linalg.norm(x[pairs[:, 1]] - x[pairs[:, 0]], axis=1)
    if np.any(lengths == 0):
        i, j = pairs[np.argmax(lengths == 0)]
        raise ValueError(f"points {i} and {j} are at the same place (a zero-length spring)")
    return _system(x, masses, pairs, k, c, damping_ratio=ratio)
