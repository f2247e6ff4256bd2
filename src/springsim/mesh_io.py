"""Meshes in the formats meshio reads (STL, PLY, VTK, VTU, OFF, Gmsh, ...):
:func:`read_mesh` builds a mesh system from one, welding coincident vertices as
:func:`springsim.read_obj` does. Needs meshio (``pip install meshio``),
imported when :func:`read_mesh` is first called.
"""

from __future__ import annotations

import io
import types
import warnings
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import numpy.typing as npt

from springsim._files import StrPath, path_name, quote
from springsim._welded import LARGEST_COORDINATE, build_welded, weld_fraction
from springsim.reference import MIN_SPRING_LENGTH
from springsim.system import System

__all__ = ["read_mesh"]

#: The cells that become faces; every other kind is left out.
SURFACE_CELLS = ("triangle", "quad", "polygon")


def _meshio() -> types.ModuleType:
    try:
        import meshio
    except ImportError as err:
        raise ImportError("springsim.read_mesh needs meshio: pip install meshio") from err
    return meshio


def _checked_points(name: str, points: np.ndarray) -> np.ndarray:
    """The file's points as float64 (N, 2) or (N, 3), finite and within ±1e150."""
    x = np.asarray(points, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] not in (2, 3):
        raise ValueError(f"{name}: points must have 2 or 3 coordinates, got shape {x.shape}")
    if len(x) == 0:
        raise ValueError(f"{name}: no points: not a mesh")
    bad = ~np.isfinite(x).all(axis=1) | (np.abs(x) > LARGEST_COORDINATE).any(axis=1)
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(
            f"{name}: point {k} is {x[k].tolist()}: coordinates must be finite and within "
            f"±{LARGEST_COORDINATE:g} (beyond, squared distances overflow)"
        )
    return x


def _polygons(name: str, cells: list[tuple[str, np.ndarray]], points: int) -> list[list[int]]:
    """The surface cells' corners, checked: indices of points, none twice in a cell."""
    polygons: list[list[int]] = []
    others: dict[str, int] = {}
    for kind, corners in cells:
        if kind not in SURFACE_CELLS:
            others[kind] = others.get(kind, 0) + len(corners)
            continue
        corners = np.asarray(corners)
        if corners.size and (corners.min() < 0 or corners.max() >= points):
            k = int(np.argmax(((corners < 0) | (corners >= points)).any(axis=1)))
            raise ValueError(
                f"{name}: {kind} cell {k} uses point {corners[k].tolist()}: out of range, "
                f"the file has {points} points"
            )
        ordered = np.sort(corners, axis=1)
        twice = (ordered[:, 1:] == ordered[:, :-1]).any(axis=1)
        if twice.any():
            k = int(np.argmax(twice))
            raise ValueError(f"{name}: {kind} cell {k} uses a point twice: {corners[k].tolist()}")
        polygons += corners.tolist()
    if others and not polygons:
        held = ", ".join(f"{count} {kind}" for kind, count in others.items())
        raise ValueError(
            f"{name}: no surface cells ({', '.join(SURFACE_CELLS)}) to make a mesh of: "
            f"the file holds {held} cells"
        )
    return polygons


def read_mesh(
    path: StrPath,
    mass: npt.ArrayLike,
    stiffness: npt.ArrayLike,
    damping: npt.ArrayLike = 0.0,
    bend: bool = False,
    weld: float | None = 1e-9,
    file_format: str | None = None,
) -> System:
    """A mesh system from any surface mesh file meshio reads: STL, PLY, VTK, VTU, OFF, ...

    The file is read with `meshio <https://github.com/nschloe/meshio>`_ (the format from
    its extension, or ``file_format``); one node per point, one spring per edge of its
    triangles, quads and polygons (the quads and polygons fan-triangulated). Other
    cells (lines, vertices, volume cells such as tetrahedra, higher-order elements)
    are left out: a volume mesh's boundary triangles are read, its tetrahedra are not.

    Coincident points are welded into one node exactly as :func:`springsim.read_obj`
    welds vertices: within ``weld`` times the bounding-box diagonal of an earlier kept
    point, the first point in the file kept, nodes in the file's order, per-point
    masses adding up; the triangles welding leaves with two equal corners are dropped,
    and a :class:`springsim.MeshWarning` reports what was done. (meshio's STL reader
    already merges the exact copies an STL repeats for every triangle; a PLY or VTK
    file written one vertex per corner is welded here.) The system is then built as
    :func:`springsim.mesh` builds it. Points with two coordinates make a 2D system,
    with three a 3D one.

    Parameters
    ----------
    path : str or os.PathLike
        The mesh file.
    mass : float or array_like, shape (V,)
        Total mass, kg, spread equally over the nodes; or one mass per point of the
        file (V of them), welded points' masses adding up.
    stiffness, damping : float or array_like
        Spring stiffness (N/m) and axial damping (N·s/m).
    bend : bool
        Also add a spring across each interior edge (see :func:`springsim.mesh`).
    weld : float or None
        Weld points closer than this fraction of the bounding-box diagonal (default
        1e-9: the copies exporters write); 0: exact copies only; None (or False): keep
        every point (then two coincident points joined by a face are an error).
    file_format : str, optional
        meshio's name of the format (``"stl"``, ``"ply"``, ``"vtk"``, ``"vtu"``,
        ``"obj"``, ``"off"``, ``"gmsh"``, ...) when the extension does not say it.

    Returns
    -------
    System
        Its ``faces`` are the file's triangles (and triangulated quads and polygons),
        its rest lengths the edges' lengths.

    Raises
    ------
    ImportError
        meshio is not installed.
    TypeError
        ``path`` is not a path, ``weld`` not a number or None.
    ValueError
        ``weld`` outside [0, 1]. meshio cannot read the file (unknown extension,
        malformed or truncated content); the file has no points, a point that is not
        finite or beyond ±1e150, a cell using a point out of range or twice, no
        surface cells while it has others (a line or volume mesh), or a face joining
        two coincident points that were not welded. The message names the file;
        no system is returned.
    OSError
        The file cannot be read.

    Warns
    -----
    MeshWarning
        Points were welded or degenerate triangles dropped.

    Examples
    --------
    >>> import os, tempfile, warnings
    >>> import meshio
    >>> import springsim as ss
    >>> corners = [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [1, 0, 0], [1, 1, 0]]
    >>> square = meshio.Mesh(corners, [("triangle", [[0, 1, 2], [0, 5, 3]])])
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "square.vtk")
    ...     square.write(path)
    ...     with warnings.catch_warnings(record=True) as caught:
    ...         warnings.simplefilter("always")
    ...         sim = ss.read_mesh(path, mass=1.0, stiffness=100.0)
    >>> sim.num_nodes, sim.num_springs, sim.faces.tolist()
    (4, 5, [[0, 1, 2], [0, 2, 3]])
    >>> caught[0].message.welded  # the last two points were copies
    2
    """
    fraction = weld_fraction(weld)
    name = path_name(path)
    if file_format is not None and not isinstance(file_format, str):
        raise TypeError(f"file_format must be a str or None, not {type(file_format).__name__}")
    meshio = _meshio()
    with open(name, "rb"):
        pass  # a missing or unreadable file is the usual OSError, not a bad file
    # meshio prints what it skips and why it failed (and, when a reader fails on a file
    # of a known format, calls sys.exit): its text is kept for the error message.
    said = io.StringIO()
    try:
        with warnings.catch_warnings(), redirect_stdout(said), redirect_stderr(said):
            warnings.simplefilter("ignore")
            data = meshio.read(name, file_format=file_format)
    except OSError:
        raise
    except (Exception, SystemExit) as error:  # ReadError, or what a bad file made it raise
        problem = " ".join(said.getvalue().split()) or f"{type(error).__name__}: {error}"
        raise ValueError(f"{name}: meshio cannot read it: {quote(problem, 300)}") from None
    points = _checked_points(name, data.points)
    polygons = _polygons(name, [(block.type, block.data) for block in data.cells], len(points))

    def explain(face: int, joins: bool, a: int, b: int, hint: str) -> ValueError:
        what = "joins" if joins else "is next to a face that holds"
        return ValueError(
            f"{name}: surface cell {face} (counting from 0) {what} points {a} and {b}, "
            f"which coincide (closer than {MIN_SPRING_LENGTH:g} m): a spring between them "
            f"would have no length; {hint}"
        )

    sim, _node_of, report = build_welded(
        name, points, polygons, mass, stiffness, damping, bend, fraction, explain
    )
    if report is not None:
        warnings.warn(report, stacklevel=2)
    return sim
