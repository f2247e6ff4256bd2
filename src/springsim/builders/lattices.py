"""Builders of lattices: :func:`cloth` (a sheet) and :func:`jelly` (a block), following
the conventions of :mod:`springsim.builders`."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from springsim.builders.arguments import (
    _choice,
    _damping,
    _dimension,
    _integer,
    _node_masses,
    _number,
    _pin_nodes,
    _system,
    _vector,
)
from springsim.builders.geometry import (
    _box_triangles,
    _lattice_pairs,
    _quad_triangles,
)
from springsim.builders.materials import (
    _either,
    _from_normal,
    _placement,
    _rotation,
    cloth_springs,
    edge_weights,
)
from springsim.system import System


def cloth(
    nx: int,
    ny: int,
    *,
    width: float,
    height: float,
    mass: npt.ArrayLike | None = None,
    stiffness: float | None = None,
    damping: float | None = None,
    shear: bool = True,
    bend: bool = True,
    shear_stiffness: float | None = None,
    bend_stiffness: float | None = None,
    dim: int = 3,
    origin: npt.ArrayLike | None = None,
    normal: npt.ArrayLike | None = None,
    rotation: npt.ArrayLike | None = None,
    pin: str | npt.ArrayLike | None = "top_corners",
    areal_density: float | None = None,
    youngs_modulus: float | None = None,
    poisson: float | None = None,
    damping_ratio: float | None = None,
) -> System:
    """A rectangular cloth of ``nx × ny`` nodes, hanging in the x–y plane unless placed.

    The Gamasutra and xbdev cloth: a grid of nodes with three families of springs,

    - structural: each node to its right and lower neighbour (stretching);
    - shear: both diagonals of each cell (keeps the cells square);
    - bend: each node to the node two away, right and down (resists folding).

    Node ``r·nx + c`` is in row r (0 = top) and column c (0 = left), at
    ``origin + R (c·width/(nx−1), −r·height/(ny−1), 0)``: unrotated (R = I), the
    cloth hangs from its top edge along −y, so gravity pulls along it, and its
    triangles face +z (normals +z while it is flat). ``normal`` turns +z onto the
    given normal by the shortest rotation (about z × normal; half a turn about x for
    −z): ``normal=(0, 1, 0)`` lays it flat, facing up, rows running along +z — a
    table cloth. ``uvs`` map it onto [0, 1]²: u left to right, v bottom (0) to top (1).

    Per spring (``mass``, ``stiffness``, ...) or as a material: ``areal_density``
    ρ_A (kg/m²; each node carries the quarter cells around it) and a 2D Young's
    modulus E (N/m, the 3D modulus times the thickness) and Poisson ratio ν. The
    lattice's springs then give the elastic constants C11 = C22 = E/(1 − ν²) and
    C12 = ν E/(1 − ν²) (see below): E and ν hold exactly along x and y (the weave).
    Springs between nodes have the Cauchy relation C66 = C12, so the cloth is
    isotropic only at ν = 1/3 (the default); at another ν its shear modulus is
    ν E/(1 − ν²) instead of E/(2(1 + ν)): too soft below 1/3, too stiff above. On
    square cells, with k the structural, k_d the shear and k_b the bend springs,
    C11 = k + k_d + 4 k_b and C12 = C66 = k_d (the bend springs, 2 cells long, count
    four times in stretching); without ``bend_stiffness`` the bend springs are as
    stiff as the structural ones.

    Parameters
    ----------
    nx, ny : int
        Nodes across (x) and down (y), each >= 2.
    width, height : float
        Size of the cloth, m, > 0.
    mass : float or array_like, shape (nx·ny,)
        Total mass, kg, spread equally over the nodes; or per-node masses. Or give
        ``areal_density``.
    stiffness : float
        Of each structural spring, N/m, >= 0. Or give ``youngs_modulus``.
    damping : float, optional
        Axial damping of every spring, N·s/m, >= 0; 0 by default. Or ``damping_ratio``.
    shear, bend : bool
        Whether to add the shear and the bend springs.
    shear_stiffness, bend_stiffness : float, optional
        Of each shear / bend spring, N/m (absolute, not a factor); ``stiffness`` if
        omitted. Real fabric bends far more easily than it stretches: try a tenth.
        With ``youngs_modulus`` the shear springs' follows from E and ν.
    dim : {3, 2}
        Spatial dimension; a 2D cloth is the same grid in the plane.
    origin : array_like, shape (dim,), optional
        Position of the top-left node (node 0), m; the origin by default.
    normal : array_like, shape (3,), optional
        The side the faces face (3D): the cloth turned from +z onto it, about ``origin``.
    rotation : array_like, shape (dim, dim), float (2D) or scipy Rotation, optional
        Instead of ``normal``: any rotation about ``origin``; in 2D also an angle, rad.
    pin : {"top_corners", "top", "left", "none"}, None or array_like of int
        Anchors: the two top corners (a hanging cloth), the whole top row (a
        curtain), the left column (a flag on its pole), nothing, or these nodes.
    areal_density : float, optional
        ρ_A, kg/m², > 0: instead of ``mass``.
    youngs_modulus : float, optional
        E, N/m, > 0 (2D: force per unit width per unit strain): instead of
        ``stiffness`` and ``shear_stiffness``; needs ``shear``.
    poisson : float, optional
        ν, 0 < ν < 1, with ``youngs_modulus``; 1/3 by default (isotropic). Cells far
        from square need (height/width per cell)² > ν and its inverse too.
    damping_ratio : float, optional
        ζ >= 0, instead of ``damping``: c = 2 ζ √(k m_eff) per spring (see
        :func:`string`).

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
        name (the message lists the valid ones), both or neither of mass and
        areal_density (stiffness and youngs_modulus), a ν or cell shape the lattice
        cannot represent, normal in 2D, normal and rotation.

    Examples
    --------
    >>> import springsim as ss
    >>> flag = ss.cloth(4, 3, width=0.6, height=0.4, mass=0.1, stiffness=300.0)
    >>> flag.num_nodes, flag.num_springs, flag.num_faces
    (12, 39, 12)
    >>> flag.normals()[0].tolist(), flag.uvs[0].tolist(), flag.uvs[-1].tolist()
    ([0.0, 0.0, 1.0], [0.0, 1.0], [1.0, 0.0])

    A table cloth, 1 m square, 0.2 kg/m², E = 300 N/m, lying flat at 0.8 m:

    >>> table = ss.cloth(11, 11, width=1.0, height=1.0, areal_density=0.2,
    ...                  youngs_modulus=300.0, origin=(-0.5, 0.8, -0.5), normal=(0, 1, 0))
    >>> bool((table.positions[:, 1] == 0.8).all()), table.normals()[0].round(12).tolist()
    (True, [0.0, 1.0, 0.0])
    >>> round(float(table.masses.sum()), 12), table.stiffness[:3].tolist()  # k = E/(1+ν)/5
    (0.2, [45.0, 45.0, 45.0])
    """
    nx, ny = _integer(nx, "nx", 2), _integer(ny, "ny", 2)
    width = _number(width, "width", positive=True)
    height = _number(height, "height", positive=True)
    _either(mass, areal_density, "mass or areal_density")
    _either(stiffness, youngs_modulus, "stiffness or youngs_modulus")
    c, ratio = _damping(damping, damping_ratio)
    k_bend = None if bend_stiffness is None else _number(bend_stiffness, "bend_stiffness")
    dim = _dimension(dim)
    origin = _vector(origin, "origin", dim)
    if normal is not None and dim != 3:
        raise ValueError("normal is for a 3D cloth; turn a 2D one with rotation=")
    turn, given = _placement(rotation, dim, normal, "normal")
    if given:
        turn = _from_normal(normal)  # type: ignore[arg-type]
    a, b = width / (nx - 1), height / (ny - 1)
    if youngs_modulus is None:
        if poisson is not None:
            raise ValueError("poisson goes with youngs_modulus")
        k_x = k_y = _number(stiffness, "stiffness")
        k_d = k_x if shear_stiffness is None else _number(shear_stiffness, "shear_stiffness")
        k_bx = k_by = k_x if k_bend is None else k_bend
    else:
        if not shear or shear_stiffness is not None:
            raise ValueError(
                "with youngs_modulus the shear springs follow from E and ν: "
                "keep shear=True and leave out shear_stiffness"
            )
        e = _number(youngs_modulus, "youngs_modulus", positive=True)
        nu = 1 / 3 if poisson is None else _number(poisson, "poisson")
        k_x, k_y, k_d, k_bx, k_by = cloth_springs(a, b, e, nu, bend, k_bend)
    count = nx * ny
    if mass is not None:
        masses = _node_masses(mass, count)
    else:
        rho = _number(areal_density, "areal_density", positive=True)
        masses = rho * a * b * np.outer(edge_weights(ny), edge_weights(nx)).ravel()
    grid = np.arange(count).reshape(ny, nx)  # grid[r, c]: axis 0 runs down (−y), 1 right
    named = {
        "top_corners": np.array([0, nx - 1]),
        "top": grid[0],
        "left": grid[:, 0],
    }
    pinned = _pin_nodes(pin, named, count)

    r, col = np.divmod(np.arange(count), nx)
    u, v = col / (nx - 1), 1.0 - r / (ny - 1)
    local = np.zeros((count, dim))
    local[:, 0] = u * width
    local[:, 1] = (v - 1.0) * height
    x = origin + local @ turn.T
    families = [(_lattice_pairs(grid, [(0, 1)]), k_x), (_lattice_pairs(grid, [(1, 0)]), k_y)]
    if shear:
        families.append((_lattice_pairs(grid, [(1, 1), (1, -1)]), k_d))
    if bend:
        families.append((_lattice_pairs(grid, [(0, 2)]), k_bx))
        families.append((_lattice_pairs(grid, [(2, 0)]), k_by))
    pairs = np.concatenate([p for p, _ in families])
    k_all = np.concatenate([np.full(len(p), value) for p, value in families])
    # (down) × (right) = (−y) × (+x) = +z: the triangles face +z, then R z.
    sim = _system(
        x,
        masses,
        pairs,
        k_all,
        c,
        faces=_quad_triangles(grid),
        pinned=pinned,
        damping_ratio=ratio,
    )
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
    damping: float | None = None,
    arrangement: str = "stable",
    origin: npt.ArrayLike | None = None,
    rotation: npt.ArrayLike | None = None,
    pin: str | npt.ArrayLike | None = None,
    damping_ratio: float | None = None,
) -> System:
    """A block of jelly: an ``nx × ny × nz`` lattice of nodes (``nx × ny`` in 2D).

    The Gamasutra article's jelly. ``arrangement="simple"`` joins each node to its
    lattice neighbours only (the article's Figure 5): cubes of springs have no
    resistance to shearing, and the block folds flat at the slightest push.
    ``"stable"`` (Figure 8) also joins both diagonals of every lattice square (face
    diagonals) and, in 3D, the four body diagonals of every cell: every cell is
    then rigid and the block keeps its shape.

    Node ``i + nx·(j + ny·k)`` is at ``origin + R ((i, j, k) · size / (nx−1, ny−1, nz−1))``
    (R = ``rotation``, the identity by default).
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
    stiffness : float
        Of each spring, N/m, >= 0.
    damping : float, optional
        Axial damping of each spring, N·s/m, >= 0; 0 by default. Or ``damping_ratio``.
    arrangement : {"stable", "simple"}
        With diagonals (the default) or the lattice edges only.
    origin : array_like, shape (dim,), optional
        The block's lowest corner (node 0), m; the origin by default.
    rotation : array_like, shape (dim, dim), float (2D) or scipy Rotation, optional
        The block turned about ``origin``; in 2D also an angle, rad.
    pin : {"bottom", "none"}, None or array_like of int
        Anchors: the bottom face (y = lowest before the rotation: a jelly stuck to its
        plate), nothing (the default), or these nodes.
    damping_ratio : float, optional
        ζ >= 0, instead of ``damping``: c = 2 ζ √(k m_eff) per spring (see
        :func:`string`).

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
    k = _number(stiffness, "stiffness")
    c, ratio = _damping(damping, damping_ratio)
    arrangement = _choice(arrangement, "arrangement", JELLY_ARRANGEMENTS)
    origin = _vector(origin, "origin", dim)
    turn = _rotation(rotation, dim)
    count = int(np.prod(counts))
    masses = _node_masses(mass, count)
    grid = np.arange(count).reshape(counts[::-1]).T  # grid[i, j(, k)], x fastest
    pinned = _pin_nodes(pin, {"bottom": np.sort(grid[:, 0].ravel())}, count)

    steps = size / (np.array(counts) - 1)
    local = np.stack(np.unravel_index(np.arange(count), counts[::-1])[::-1], axis=1) * steps
    x = origin + local @ turn.T
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
    return _system(x, masses, pairs, k, c, faces=faces, pinned=pinned, damping_ratio=ratio)
