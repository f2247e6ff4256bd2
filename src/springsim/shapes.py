"""Builders: one call for each model of the source articles, each returning a System.

Mass is the body's total mass, spread equally over its nodes, unless per-node
masses are given. Stiffness (N/m) and damping (N·s/m) are those of each spring, not
of the whole body: :func:`mesh` also takes per-spring arrays; the other builders
take one number per spring family (vary them afterwards by writing ``sim.stiffness``
— each builder documents its spring order). Every builder makes each spring once,
never a zero-length one, with rest lengths equal to the initial distances.

Conventions: y is up (the default gravity pulls along −y), so strings and cloth
hang along −y; faces are counter-clockwise seen from outside (outward normals by
the right-hand rule); ``pin`` takes a name, ``None``/``"none"``, or node indices.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from springsim.system import System

#: The largest icosphere level :func:`ball` builds (655 362 nodes, 1 966 080 springs).
MAX_LEVEL = 8


# ---------------------------------------------------------------------- argument checks


def _integer(value: object, name: str, minimum: int) -> int:
    """``value`` as an int >= ``minimum``: TypeError for a non-integer, else ValueError."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def _number(value: object, name: str, positive: bool = False) -> float:
    """One finite real number, > 0 if ``positive`` else >= 0."""
    array = np.asarray(value)
    if array.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a real number, not {type(value).__name__}")
    if array.ndim != 0:
        raise ValueError(f"{name} must be a single number, got shape {array.shape}")
    number = float(array)
    if not np.isfinite(number) or number < 0 or (positive and number == 0):
        bound = "> 0" if positive else ">= 0"
        raise ValueError(f"{name} must be finite and {bound}, got {number}")
    return number


def _dimension(dim: object) -> int:
    """2 or 3."""
    dim = _integer(dim, "dim", 2)
    if dim not in (2, 3):
        raise ValueError(f"dim must be 2 or 3, got {dim}")
    return dim


def _vector(
    value: npt.ArrayLike | None,
    name: str,
    dim: int,
    default: npt.ArrayLike | None = None,
    positive: bool = False,
) -> np.ndarray:
    """A finite (dim,) float vector; a scalar is broadcast when ``positive`` (a size)."""
    if value is None:
        return np.zeros(dim) if default is None else np.array(default, dtype=np.float64)
    array = np.asarray(value)
    if array.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be real numbers, not {type(value).__name__}")
    if positive and array.ndim == 0:
        array = np.full(dim, array)
    if array.shape != (dim,):
        raise ValueError(f"{name} must have shape ({dim},), got {array.shape}")
    array = array.astype(np.float64)
    if not np.all(np.isfinite(array)) or (positive and np.any(array <= 0)):
        raise ValueError(f"{name} must be finite{' and > 0' if positive else ''}, got {array}")
    return array


def _node_masses(mass: npt.ArrayLike, count: int) -> np.ndarray:
    """Per-node masses: a scalar total spread equally, or an (count,) array taken as is.

    Raises TypeError for non-numbers and ValueError for a wrong length or a mass
    that is not finite and > 0.
    """
    m = np.asarray(mass)
    if m.dtype.kind not in "iuf":
        raise TypeError(f"mass must be a real number or an array of them, not {m.dtype}")
    m = m.astype(np.float64)
    if m.ndim == 0:
        if not np.isfinite(m) or m <= 0:
            raise ValueError(f"mass (the total, kg) must be finite and > 0, got {float(m)}")
        return np.full(count, float(m) / count)
    if m.shape != (count,):
        raise ValueError(f"per-node masses must have shape ({count},), got {m.shape}")
    if not np.all(np.isfinite(m)) or np.any(m <= 0):
        raise ValueError("per-node masses must be finite and > 0 kg")
    return m


def _pin_nodes(
    pin: str | npt.ArrayLike | None, named: dict[str, np.ndarray], count: int
) -> np.ndarray:
    """The nodes ``pin`` names: a key of ``named``, None/"none" (no node), or indices."""
    valid = ", ".join(repr(name) for name in [*named, "none"])
    if pin is None or (isinstance(pin, str) and pin == "none"):
        return np.zeros(0, dtype=np.int64)
    if isinstance(pin, str):
        if pin not in named:
            raise ValueError(f"unknown pin {pin!r}; valid: {valid}, None or node indices")
        return named[pin]
    indices = np.asarray(pin)
    if indices.size == 0:
        return np.zeros(0, dtype=np.int64)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"pin must be one of {valid}, None or node indices, not {pin!r}")
    indices = indices.reshape(-1).astype(np.int64)
    if indices.min() < 0 or indices.max() >= count:
        raise ValueError(f"pin indices must be in [0, {count}), got {indices.tolist()}")
    return indices


def _choice(value: object, name: str, valid: tuple[str, ...]) -> str:
    """One of the strings ``valid``; the error lists them."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, one of {valid}, not {value!r}")
    if value not in valid:
        raise ValueError(f"unknown {name} {value!r}; valid: {', '.join(map(repr, valid))}")
    return value


# ---------------------------------------------------------------------- topology helpers


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


def _system(
    positions: np.ndarray,
    masses: npt.ArrayLike,
    pairs: np.ndarray,
    stiffness: npt.ArrayLike,
    damping: npt.ArrayLike,
    faces: np.ndarray | None = None,
    pinned: np.ndarray | Sequence[int] = (),
) -> System:
    """A new System holding these nodes, springs (rest = current length) and faces."""
    sim = System(dim=positions.shape[1])
    sim.add_nodes(positions, masses=masses)
    if len(pairs):
        sim.add_springs(pairs, stiffness=stiffness, damping=damping)
    if faces is not None and len(faces):
        sim.add_faces(faces)
    if len(pinned):
        sim.pin(pinned)
    return sim


# ---------------------------------------------------------------------- public builders


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


def mesh(
    vertices: npt.ArrayLike,
    faces: Iterable[Sequence[int]] | np.ndarray,
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


def string(
    n: int,
    length: float,
    mass: npt.ArrayLike,
    stiffness: float,
    damping: float = 0.0,
    dim: int = 3,
    start: npt.ArrayLike | None = None,
    direction: npt.ArrayLike | None = None,
    pin: str | npt.ArrayLike | None = "start",
) -> System:
    """A string (a chain) of ``n`` nodes joined by ``n − 1`` equal springs.

    The Gamasutra article's first model and the forum tutorial's: a straight line of
    nodes, each joined to the next. Node 0 is at ``start``; spring i joins nodes i and
    i + 1. Stretched out horizontally (the default) and pinned at one end, it swings
    down under gravity like a pendulum that bends.

    Parameters
    ----------
    n : int
        Number of nodes, >= 2.
    length : float
        Length of the whole string at rest, m, > 0; each spring is ``length / (n − 1)``.
    mass : float or array_like, shape (n,)
        Total mass, kg, spread equally over the nodes; or per-node masses.
    stiffness, damping : float
        Of each spring: N/m and axial damping N·s/m, >= 0. A chain of n − 1 springs
        of stiffness k stretches like one spring of k / (n − 1).
    dim : {3, 2}
        Spatial dimension.
    start : array_like, shape (dim,), optional
        Position of node 0, m; the origin by default.
    direction : array_like, shape (dim,), optional
        Direction from node 0 to node n − 1 (normalised here); +x by default.
    pin : {"start", "end", "both", "middle", "none"}, None or array_like of int
        Which nodes are anchors. "middle" pins node ``(n − 1) // 2``, as the forum
        tutorial does: the middle node for odd n, and for even n the one of the
        two middle nodes nearer the start.

    Returns
    -------
    System

    Raises
    ------
    TypeError
        A non-integer ``n`` or ``dim``, a non-numeric value or pin.
    ValueError
        n < 2, length <= 0, a negative stiffness or damping, a zero direction, a
        wrong shape, an unknown pin name (the message lists the valid ones).

    Examples
    --------
    >>> import springsim as ss
    >>> rope = ss.string(5, length=2.0, mass=0.5, stiffness=200.0, dim=2)
    >>> rope.positions[:, 0].tolist(), rope.num_springs, rope.pinned.tolist()
    ([0.0, 0.5, 1.0, 1.5, 2.0], 4, [True, False, False, False, False])
    >>> rope.step(1e-3, steps=500)  # it swings down
    >>> bool(rope.positions[-1, 1] < -0.5)
    True
    """
    n = _integer(n, "n", 2)
    length = _number(length, "length", positive=True)
    stiffness, damping = _number(stiffness, "stiffness"), _number(damping, "damping")
    dim = _dimension(dim)
    start = _vector(start, "start", dim)
    direction = _vector(direction, "direction", dim, default=np.eye(dim)[0])
    norm = np.linalg.norm(direction)
    if norm == 0:
        raise ValueError("direction must not be the zero vector")
    masses = _node_masses(mass, n)
    last = n - 1
    named = {
        "start": np.array([0]),
        "end": np.array([last]),
        "both": np.array([0, last]),
        "middle": np.array([last // 2]),
    }
    pinned = _pin_nodes(pin, named, n)
    x = start + np.linspace(0.0, length, n)[:, None] * (direction / norm)
    pairs = np.stack([np.arange(last), np.arange(1, n)], axis=1)
    return _system(x, masses, pairs, stiffness, damping, pinned=pinned)


def cloth(
    nx: int,
    ny: int,
    width: float,
    height: float,
    mass: npt.ArrayLike,
    stiffness: float,
    damping: float = 0.0,
    shear: bool = True,
    bend: bool = True,
    shear_stiffness: float | None = None,
    bend_stiffness: float | None = None,
    dim: int = 3,
    origin: npt.ArrayLike | None = None,
    pin: str | npt.ArrayLike | None = "top_corners",
) -> System:
    """A rectangular cloth of ``nx × ny`` nodes hanging in the x–y plane.

    The Gamasutra and xbdev cloth: a grid of nodes with three families of springs,

    - structural: each node to its right and lower neighbour (stretching);
    - shear: both diagonals of each cell (keeps the cells square);
    - bend: each node to the node two away, right and down (resists folding).

    Node ``r·nx + c`` is in row r (0 = top) and column c (0 = left), at
    ``origin + (c·width/(nx−1), −r·height/(ny−1), 0)``: the cloth hangs from its top
    edge along −y, so gravity pulls along it, and its triangles face +z (normals
    +z while it is flat). ``uvs`` map it onto [0, 1]²: u left to right, v bottom (0)
    to top (1).

    Parameters
    ----------
    nx, ny : int
        Nodes across (x) and down (y), each >= 2.
    width, height : float
        Size of the cloth, m, > 0.
    mass : float or array_like, shape (nx·ny,)
        Total mass, kg, spread equally over the nodes; or per-node masses.
    stiffness : float
        Of each structural spring, N/m, >= 0.
    damping : float
        Axial damping of every spring, N·s/m, >= 0.
    shear, bend : bool
        Whether to add the shear and the bend springs.
    shear_stiffness, bend_stiffness : float, optional
        Of each shear / bend spring, N/m (absolute, not a factor); ``stiffness`` if
        omitted. Real fabric bends far more easily than it stretches: try a tenth.
    dim : {3, 2}
        Spatial dimension; a 2D cloth is the same grid in the plane.
    origin : array_like, shape (dim,), optional
        Position of the top-left node (node 0), m; the origin by default.
    pin : {"top_corners", "top", "left", "none"}, None or array_like of int
        Anchors: the two top corners (a hanging cloth), the whole top row (a
        curtain), the left column (a flag on its pole), nothing, or these nodes.

    Returns
    -------
    System
        Springs in this order: structural rows (ny·(nx−1), row by row), structural
        columns (nx·(ny−1)), shear (2·(nx−1)(ny−1)), bend along rows (ny·(nx−2)),
        bend along columns (nx·(ny−2)). Faces: 2·(nx−1)(ny−1) triangles.

    Raises
    ------
    TypeError
        A non-integer count, a non-numeric value or pin.
    ValueError
        nx or ny < 2, a size <= 0, a negative stiffness or damping, an unknown pin
        name (the message lists the valid ones).

    Examples
    --------
    >>> import springsim as ss
    >>> flag = ss.cloth(4, 3, width=0.6, height=0.4, mass=0.1, stiffness=300.0)
    >>> flag.num_nodes, flag.num_springs, flag.num_faces
    (12, 39, 12)
    >>> flag.normals()[0].tolist(), flag.uvs[0].tolist(), flag.uvs[-1].tolist()
    ([0.0, 0.0, 1.0], [0.0, 1.0], [1.0, 0.0])
    """
    nx, ny = _integer(nx, "nx", 2), _integer(ny, "ny", 2)
    width = _number(width, "width", positive=True)
    height = _number(height, "height", positive=True)
    k = _number(stiffness, "stiffness")
    c = _number(damping, "damping")
    k_shear = k if shear_stiffness is None else _number(shear_stiffness, "shear_stiffness")
    k_bend = k if bend_stiffness is None else _number(bend_stiffness, "bend_stiffness")
    dim = _dimension(dim)
    origin = _vector(origin, "origin", dim)
    count = nx * ny
    masses = _node_masses(mass, count)
    grid = np.arange(count).reshape(ny, nx)  # grid[r, c]: axis 0 runs down (−y), 1 right
    named = {
        "top_corners": np.array([0, nx - 1]),
        "top": grid[0],
        "left": grid[:, 0],
    }
    pinned = _pin_nodes(pin, named, count)

    r, col = np.divmod(np.arange(count), nx)
    u, v = col / (nx - 1), 1.0 - r / (ny - 1)
    x = np.tile(origin, (count, 1))
    x[:, 0] += u * width
    x[:, 1] += (v - 1.0) * height
    families = [(_lattice_pairs(grid, [(0, 1), (1, 0)]), k)]
    if shear:
        families.append((_lattice_pairs(grid, [(1, 1), (1, -1)]), k_shear))
    if bend:
        families.append((_lattice_pairs(grid, [(0, 2), (2, 0)]), k_bend))
    pairs = np.concatenate([p for p, _ in families])
    k_all = np.concatenate([np.full(len(p), value) for p, value in families])
    # (down) × (right) = (−y) × (+x) = +z: the triangles face +z.
    sim = _system(x, masses, pairs, k_all, c, faces=_quad_triangles(grid), pinned=pinned)
    sim.uvs = np.stack([u, v], axis=1)
    return sim


JELLY_ARRANGEMENTS = ("stable", "simple")


def jelly(
    nx: int,
    ny: int,
    nz: int | None = None,
    *,
    size: npt.ArrayLike,
    mass: npt.ArrayLike,
    stiffness: float,
    damping: float = 0.0,
    arrangement: str = "stable",
    origin: npt.ArrayLike | None = None,
    pin: str | npt.ArrayLike | None = None,
) -> System:
    """A block of jelly: an ``nx × ny × nz`` lattice of nodes (``nx × ny`` in 2D).

    The Gamasutra article's jelly. ``arrangement="simple"`` joins each node to its
    lattice neighbours only (the article's Figure 5): cubes of springs have no
    resistance to shearing, and the block folds flat at the slightest push.
    ``"stable"`` (Figure 8) also joins both diagonals of every lattice square (face
    diagonals) and, in 3D, the four body diagonals of every cell: every cell is
    then rigid and the block keeps its shape.

    Node ``i + nx·(j + ny·k)`` is at ``origin + (i, j, k) · size / (nx−1, ny−1, nz−1)``.
    In 3D the block's surface is kept as outward ``faces``; in 2D (``nz=None``), the
    cells as counter-clockwise triangles (for drawing).

    Parameters
    ----------
    nx, ny : int
        Nodes along x and y, each >= 2.
    nz : int, optional
        Nodes along z, >= 2; omit (None) for a 2D jelly, a square lattice in x–y.
    size : float or array_like, shape (dim,)
        Size of the whole block, m, > 0: one number for a cube (square), or its
        extent along each axis. A cell is ``size / (n − 1)`` along each axis.
    mass : float or array_like, shape (N,)
        Total mass, kg, spread equally over the nodes; or per-node masses.
    stiffness, damping : float
        Of each spring: N/m and axial damping N·s/m, >= 0.
    arrangement : {"stable", "simple"}
        With diagonals (the default) or the lattice edges only.
    origin : array_like, shape (dim,), optional
        The block's lowest corner (node 0), m; the origin by default.
    pin : {"bottom", "none"}, None or array_like of int
        Anchors: the bottom face (y = lowest: a jelly stuck to its plate), nothing
        (the default), or these nodes.

    Returns
    -------
    System
        Springs in this order, with a = nx−1, b = ny−1, c = nz−1 cells per axis:
        lattice edges along x, y, z (a·ny·nz + nx·b·nz + nx·ny·c); for "stable",
        both diagonals of each square in the x–y, y–z and x–z planes
        (2·(a·b·nz + nx·b·c + a·ny·c)), then the four body diagonals of each cell
        (4·a·b·c). In 2D: lattice edges (a·ny + nx·b), then 2·a·b diagonals.

    Raises
    ------
    TypeError
        A non-integer count, a non-numeric value, arrangement or pin.
    ValueError
        A count < 2, a size <= 0, a negative stiffness or damping, an unknown
        arrangement or pin name (the message lists the valid ones).

    Examples
    --------
    >>> import springsim as ss
    >>> block = ss.jelly(2, 2, 2, size=0.1, mass=0.2, stiffness=500.0)
    >>> block.num_nodes, block.num_springs, block.num_faces
    (8, 28, 12)
    >>> ss.jelly(2, 2, 2, size=0.1, mass=0.2, stiffness=500.0, arrangement="simple").num_springs
    12
    >>> ss.jelly(3, 3, size=1.0, mass=1.0, stiffness=10.0).num_springs  # 2D: 12 + 8
    20
    """
    nx, ny = _integer(nx, "nx", 2), _integer(ny, "ny", 2)
    counts = (nx, ny) if nz is None else (nx, ny, _integer(nz, "nz", 2))
    dim = len(counts)
    size = _vector(size, "size", dim, positive=True)
    k, c = _number(stiffness, "stiffness"), _number(damping, "damping")
    arrangement = _choice(arrangement, "arrangement", JELLY_ARRANGEMENTS)
    origin = _vector(origin, "origin", dim)
    count = int(np.prod(counts))
    masses = _node_masses(mass, count)
    grid = np.arange(count).reshape(counts[::-1]).T  # grid[i, j(, k)], x fastest
    pinned = _pin_nodes(pin, {"bottom": np.sort(grid[:, 0].ravel())}, count)

    steps = size / (np.array(counts) - 1)
    x = origin + np.stack(np.unravel_index(np.arange(count), counts[::-1])[::-1], axis=1) * steps
    if dim == 2:
        edges: list[tuple[int, ...]] = [(1, 0), (0, 1)]
        diagonals: list[tuple[int, ...]] = [(1, 1), (1, -1)]
        faces = _quad_triangles(grid)  # (+x) × (+y) = +z
    else:
        edges = [(1, 0, 0), (0, 1, 0), (0, 0, 1)]
        diagonals = [(1, 1, 0), (1, -1, 0), (0, 1, 1), (0, 1, -1), (1, 0, 1), (1, 0, -1)]
        diagonals += [(1, 1, 1), (1, 1, -1), (1, -1, 1), (1, -1, -1)]
        faces = _box_triangles(grid)
    offsets = edges + (diagonals if arrangement == "stable" else [])
    pairs = _lattice_pairs(grid, offsets)
    return _system(x, masses, pairs, k, c, faces=faces, pinned=pinned)


def ball(
    n: int,
    radius: float,
    mass: npt.ArrayLike,
    stiffness: float,
    damping: float = 0.0,
    dim: int = 3,
    center: npt.ArrayLike | None = None,
    nrt: float | None = None,
) -> System:
    """A hollow ball: an icosphere in 3D, a ring of nodes in 2D; with ``nrt``, full of gas.

    3D: the icosphere of subdivision level ``n``. Level 0 is the icosahedron (12
    nodes, 30 springs, 20 faces) with a node at each pole of the y axis; each level
    splits every triangle into four at its edge midpoints, projected onto the
    sphere: 10·4ⁿ + 2 nodes, 30·4ⁿ springs (its unique edges), 20·4ⁿ outward faces.
    Node 0 is the top (+y), node 11 the bottom (−y).

    2D: a ring of ``n`` nodes, node 0 at the bottom (−y), counter-clockwise, each
    joined to the next (the last to node 0): ``n`` springs, no faces.

    Either way it is a skin without a filling: it holds its shape only under
    tension. Give ``nrt`` to fill it with gas, Matyka's pressure soft body: the
    ball is then pressure body 0 (see :meth:`System.add_pressure`), its boundary
    the ring (2D) or the faces (3D). For a solid, use :func:`jelly`.

    Parameters
    ----------
    n : int
        3D: the subdivision level, 0 to :data:`MAX_LEVEL`. 2D: the number of nodes, >= 3.
    radius : float
        m, > 0.
    mass : float or array_like, shape (N,)
        Total mass, kg, spread equally over the nodes; or per-node masses.
    stiffness, damping : float
        Of each spring: N/m and axial damping N·s/m, >= 0.
    dim : {3, 2}
        Spatial dimension.
    center : array_like, shape (dim,), optional
        m; the origin by default.
    nrt : float, optional
        n·R·T of the gas inside, >= 0: J in 3D, J/m in 2D. P·V = nrt, so to start at
        pressure P pass P times the initial volume (area in 2D). None (the
        default): no gas.

    Returns
    -------
    System

    Raises
    ------
    TypeError
        A non-integer ``n`` or ``dim``, a non-numeric value.
    ValueError
        ``n`` out of range, radius <= 0, a negative stiffness, damping or nrt.

    Examples
    --------
    >>> import springsim as ss
    >>> sphere = ss.ball(1, radius=0.5, mass=1.0, stiffness=100.0)
    >>> sphere.num_nodes, sphere.num_springs, sphere.num_faces
    (42, 120, 80)
    >>> ring = ss.ball(12, radius=0.5, mass=1.0, stiffness=100.0, dim=2)
    >>> ring.num_springs, ring.positions[0].round(12).tolist()
    (12, [0.0, -0.5])

    A 2D soft ball in the style of Matyka's demo, dropped on the floor:

    >>> soft = ss.ball(20, radius=0.5, mass=1.0, stiffness=1e4, damping=1.0, dim=2,
    ...                center=(0, 1), nrt=80.0)
    >>> floor = soft.add_plane((0, 1))  # the floor y = 0, restitution 0: only gas bounces
    >>> soft.step(1e-4, steps=4000)  # 0.4 s: squashed on the floor
    >>> bool(soft.center_of_mass()[1] < 0.4)  # its centre is lower than its radius
    True
    >>> soft.step(1e-4, steps=4000)  # 0.8 s: bounced back up
    >>> bool(soft.center_of_mass()[1] > 0.75)
    True
    """
    dim = _dimension(dim)
    if dim == 3:
        n = _integer(n, "n (the icosphere level)", 0)
        if n > MAX_LEVEL:
            raise ValueError(
                f"n is the icosphere level in 3D, 0 to {MAX_LEVEL}; level {n} would "
                f"have {10 * 4**n + 2} nodes"
            )
    else:
        n = _integer(n, "n (the ring's nodes)", 3)
    radius = _number(radius, "radius", positive=True)
    k, c = _number(stiffness, "stiffness"), _number(damping, "damping")
    center = _vector(center, "center", dim)
    if dim == 3:
        unit, faces = _icosphere(n)
        pairs = unique_edges(faces)
    else:
        angle = -np.pi / 2 + 2 * np.pi * np.arange(n) / n
        unit = np.stack([np.cos(angle), np.sin(angle)], axis=1)
        pairs, faces = np.stack([np.arange(n), (np.arange(n) + 1) % n], axis=1), None
    masses = _node_masses(mass, len(unit))
    nrt = None if nrt is None else _number(nrt, "nrt")
    sim = _system(center + radius * unit, masses, pairs, k, c, faces=faces)
    if nrt is not None:
        sim.add_pressure(np.arange(n) if dim == 2 else faces, nrt)  # type: ignore[arg-type]
    return sim


def cluster(
    points: npt.ArrayLike, mass: npt.ArrayLike, stiffness: float, damping: float = 0.0
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
    stiffness, damping : float
        Of each spring: N/m and axial damping N·s/m, >= 0.

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
    k, c = _number(stiffness, "stiffness"), _number(damping, "damping")
    masses = _node_masses(mass, len(x))
    pairs = np.stack(np.triu_indices(len(x), 1), axis=1)
    lengths = np.linalg.norm(x[pairs[:, 1]] - x[pairs[:, 0]], axis=1)
    if np.any(lengths == 0):
        i, j = pairs[np.argmax(lengths == 0)]
        raise ValueError(f"points {i} and {j} are at the same place (a zero-length spring)")
    return _system(x, masses, pairs, k, c)


def balloon(
    radius: float,
    string_length: float,
    mass: float,
    stiffness: float,
    damping: float = 0.0,
    dim: int = 3,
    n: int | None = None,
    string_nodes: int = 10,
    string_mass: float | None = None,
    string_stiffness: float | None = None,
    center: npt.ArrayLike | None = None,
    pin: str | npt.ArrayLike | None = "end",
    nrt: float | None = None,
) -> System:
    """A balloon on a string: a :func:`ball` with a :func:`string` tied below it.

    The Gamasutra article's balloon, "a string connected to a spherical jelly". The
    string hangs straight down (−y) from the ball's lowest node: its top node is
    ``string_length / string_nodes`` below that node and joined to it by one more
    spring, so the string's springs span ``string_length`` in all. Its bottom node
    is pinned: someone holds the balloon.

    Nodes: the ball's (see :func:`ball`), then the string's, top to bottom. Springs:
    the ball's, the string's (top to bottom), and last the knot joining them.
    Faces: the ball's.

    Without ``nrt`` the ball is a bare skin: limp, it falls onto the hand. With
    ``nrt`` it is full of gas (pressure body 0) and keeps its round shape. Gas
    pressure alone pushes equally on every side and lifts nothing: to make the
    balloon float, give its nodes a lift (buoyancy), e.g.
    ``sim.external_forces[:-string_nodes, 1] = lift / (sim.num_nodes - string_nodes)``.

    Parameters
    ----------
    radius : float
        Of the ball, m, > 0.
    string_length : float
        From the ball's lowest node to the string's end, m, > 0.
    mass : float
        Total mass of the balloon, ball and string, kg, > 0.
    stiffness : float
        Of each spring of the ball, N/m, >= 0.
    damping : float
        Axial damping of every spring, N·s/m, >= 0.
    dim : {3, 2}
        Spatial dimension.
    n : int, optional
        The ball's ``n``: its icosphere level in 3D (default 1), its ring nodes in
        2D (default 16).
    string_nodes : int
        Nodes of the string, >= 1; it has as many springs (one is the knot).
    string_mass : float, optional
        The part of ``mass`` on the string, spread over its nodes, 0 < string_mass
        < mass; a tenth of ``mass`` by default.
    string_stiffness : float, optional
        Of each spring of the string and of the knot, N/m; ``stiffness`` by default.
    center : array_like, shape (dim,), optional
        The ball's centre, m; the origin by default.
    pin : {"end", "none"}, None or array_like of int
        Anchors: the string's bottom node (the default), nothing, or these nodes.
    nrt : float, optional
        n·R·T of the gas in the ball (see :func:`ball`); None: no gas.

    Returns
    -------
    System

    Raises
    ------
    TypeError
        A non-integer count, a non-numeric value or pin.
    ValueError
        A size <= 0, a count out of range, string_mass not in (0, mass), a negative
        stiffness, damping or nrt, an unknown pin name (the message lists the valid ones).

    Examples
    --------
    >>> import springsim as ss
    >>> toy = ss.balloon(radius=0.2, string_length=1.0, mass=0.05, stiffness=50.0)
    >>> toy.num_nodes, toy.num_springs, round(float(toy.masses.sum()), 12)
    (52, 130, 0.05)
    >>> toy.positions[-1].round(12).tolist(), bool(toy.pinned[-1])
    ([0.0, -1.2, 0.0], True)
    """
    dim = _dimension(dim)
    n = (1 if dim == 3 else 16) if n is None else n
    string_length = _number(string_length, "string_length", positive=True)
    string_nodes = _integer(string_nodes, "string_nodes", 1)
    total = _number(mass, "mass", positive=True)
    string_mass = total / 10 if string_mass is None else _number(string_mass, "string_mass")
    if not 0 < string_mass < total:
        raise ValueError(f"string_mass must be in (0, mass = {total}), got {string_mass}")
    k = _number(stiffness, "stiffness")
    k_string = k if string_stiffness is None else _number(string_stiffness, "string_stiffness")
    center = _vector(center, "center", dim)
    if not (pin is None or isinstance(pin, str)):
        pin_nodes = pin  # indices into the whole balloon: pinned once it is assembled
        pin = None
    else:
        pin_nodes = None
        _pin_nodes(pin, {"end": np.zeros(1, np.int64)}, 1)  # check the name first

    sim = ball(n, radius, total - string_mass, k, damping, dim=dim, center=center, nrt=nrt)
    lowest = int(np.argmin(sim.positions[:, 1]))
    segment = string_length / string_nodes
    down = -np.eye(dim)[1]
    top = sim.positions[lowest] + segment * down
    if string_nodes == 1:
        tail = System(dim=dim)
        tail.add_nodes(top, masses=string_mass, pinned=pin == "end")
    else:
        tail = string(
            string_nodes,
            string_length - segment,
            string_mass,
            k_string,
            damping,
            dim=dim,
            start=top,
            direction=down,
            pin="end" if pin == "end" else None,
        )
    nodes = sim.add(tail)
    sim.connect(lowest, nodes[0], stiffness=k_string, damping=damping)
    if pin_nodes is not None:
        sim.pin(_pin_nodes(pin_nodes, {"end": np.array([-1])}, sim.num_nodes))
    return sim
