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

import numpy as np
import numpy.typing as npt

from springsim._bodies import ball, cluster, mesh
from springsim._geometry import (
    MAX_LEVEL,
    _box_triangles,
    _lattice_pairs,
    _quad_triangles,
    bend_pairs,
    triangulate,
    unique_edges,
)
from springsim._shape_args import (
    _choice,
    _dimension,
    _integer,
    _node_masses,
    _number,
    _pin_nodes,
    _system,
    _vector,
)
from springsim.system import System

__all__ = [
    "MAX_LEVEL",
    "ball",
    "balloon",
    "bend_pairs",
    "cloth",
    "cluster",
    "jelly",
    "mesh",
    "string",
    "triangulate",
    "unique_edges",
]


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
