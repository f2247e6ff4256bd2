"""Files: save and load a whole System, read and write meshes, write a run's frames.

:func:`save` / :func:`load` are an exact round trip through a plain NumPy ``.npz``
archive (no pickle): every array, every parameter and the integrators' hidden state,
so that a loaded system steps bit for bit like the one that was saved. The format, entry
by entry, with what older versions load as, is :mod:`springsim.files.npz`; pickling a
System writes the same arrays (:mod:`springsim.files.pickling`).

:func:`read_obj` builds a mesh system from an OBJ file as modelling programs write it,
and :func:`write_obj` writes a frame that Blender or MeshLab opens
(:mod:`springsim.files.obj`); :func:`read_mesh` reads the other mesh formats, through
meshio (STL, PLY, VTK, ...; :mod:`springsim.files.mesh_io`), welding coincident
vertices as :func:`read_obj` does (:mod:`springsim.files.weld`); and :func:`write_vtk`
writes a run's frames as a ParaView time series (:mod:`springsim.files.vtk`).

Every problem with a file's content raises ValueError naming the file (and, for an OBJ,
the line: ``path:line: problem``); nothing is half-loaded. A missing file raises the
usual OSError.
"""

from __future__ import annotations

import warnings

import numpy as np
import numpy.typing as npt

from springsim import _core
from springsim.builders.arguments import _node_masses
from springsim.builders.bodies import mesh
from springsim.files import mesh_io, npz, obj, vtk
from springsim.files.npz import FORMAT, FORMAT_VERSION
from springsim.files.paths import StrPath, path_name
from springsim.files.weld import MeshFile, MeshWarning, check_coincident, weld_fraction, weld_mesh
from springsim.stepping.history import History
from springsim.system import System

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "load",
    "read_mesh",
    "read_obj",
    "save",
    "write_obj",
    "write_vtk",
]


def save(sim: System, path: StrPath) -> None:
    """Save a system's every array and parameter to a ``.npz`` file.

    The file holds the whole state (see the table in :mod:`springsim.files.npz`), including
    position Verlet's last acceleration, so that the system :func:`load` returns steps
    bit for bit like this one. It is written to exactly ``path``: unlike
    ``np.savez``, nothing is appended to the name, so ``save(sim, p)`` then
    ``load(p)`` works for any ``p`` (end it in ``.npz`` by convention). The data go
    to a temporary file first, renamed into place when complete, so an interrupted
    save never leaves a half-written file (an existing file is replaced whole).

    Parameters
    ----------
    sim : System
        The system to save (it is not changed).
    path : str or os.PathLike
        The file to write; replaced if it exists.

    Raises
    ------
    TypeError
        ``sim`` is not a System, or ``path`` not a path.
    ValueError
        The system holds a value the kernel would refuse (written through a view: a
        NaN or inf, a mass <= 0, a negative rest length, stiffness, damping or break
        strain, ...): such a file could not be loaded, so none is written.
    OSError
        The file cannot be written.

    Warns
    -----
    UserWarning
        A drive follows a function (:meth:`System.drive` with a callable), which the
        file cannot hold: it is left out, and the loaded system holds those nodes
        still. Per-substep target arrays and ``pin(velocity=...)`` drags are kept.

    See Also
    --------
    load : the inverse.

    Examples
    --------
    >>> import os, tempfile
    >>> import springsim as ss
    >>> from springsim.io import load, save
    >>> sim = ss.mesh([[0, 0], [1, 0], [0, 1]], [[0, 1, 2]], mass=1.0, stiffness=100.0)
    >>> sim.step(1e-3, steps=10, method="verlet")
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "triangle.npz")
    ...     save(sim, path)
    ...     copy = load(path)
    >>> copy.step(1e-3, steps=10, method="verlet")
    >>> sim.step(1e-3, steps=10, method="verlet")
    >>> bool((copy.positions == sim.positions).all()), copy.time == sim.time
    (True, True)
    """
    if not isinstance(sim, _core.System):
        raise TypeError(f"sim must be a springsim.System, not {type(sim).__name__}")
    npz.save(sim, path)


def load(path: StrPath) -> System:
    """Load a system saved by :func:`save`.

    First every array's ``.npy`` header is checked, before any data is read: a
    declared shape must fit in its zip member, agree with the other arrays' row counts,
    and all arrays together may declare at most 128 times the file's size (or 64 MiB),
    so that a small file claiming a huge array, or a zip bomb, is refused without
    allocating it. Then the whole file is read and checked (format name and version,
    every entry present with its dtype and a shape consistent with the others) before
    a new System is built from it; the kernel then checks every value (finite,
    masses > 0, indices in range). Anything wrong raises ValueError naming the file:
    no system is returned half-loaded.

    Parameters
    ----------
    path : str or os.PathLike
        The file, read exactly as named (see :func:`save`).

    Returns
    -------
    System
        A new system equal to the saved one bit for bit: arrays, parameters, method,
        time and position Verlet's history, so that it steps exactly like the
        original would have. Its gas bodies are added in the saved order, with ids
        0, 1, ...: the original's ids unless bodies were removed from it (then the
        later bodies are renumbered, in order).

    Raises
    ------
    TypeError
        ``path`` is not a path.
    ValueError
        The file is truncated, not an ``.npz`` (a text file, say), an ``.npz`` that is
        not a springsim save file, one saved by a newer springsim (a higher format
        version), one whose arrays declare more data than it holds or than it could
        sensibly inflate to, or one with a missing entry, a wrong shape or dtype, gas body
        element counts that do not add up, or a value the kernel refuses (an index
        out of range, a negative mass, a NaN, a gas boundary that is not closed).
    OSError
        The file cannot be opened (FileNotFoundError when it does not exist).

    Examples
    --------
    >>> import os, tempfile
    >>> import springsim as ss
    >>> from springsim.io import load
    >>> sim = ss.System(dim=2)
    >>> _ = sim.add_nodes([[0, 0], [1, 0]], masses=2.0)
    >>> sim.gravity = (0, -1.62)  # the Moon
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "moon")  # no suffix is added
    ...     sim.save(path)
    ...     print(load(path), load(path).gravity)
    <springsim.System dim=2 nodes=2 springs=0 method='symplectic_euler' t=0s> [ 0.   -1.62]
    """
    name = path_name(path)
    return npz.system_from_arrays(npz.read(name), name, System)


def read_obj(
    path: StrPath,
    mass: npt.ArrayLike,
    stiffness: npt.ArrayLike,
    damping: npt.ArrayLike = 0.0,
    bend: bool = False,
    weld: float | None = 1e-9,
) -> System:
    """A 3D mesh system from a Wavefront OBJ file: one node per vertex, one spring per edge.

    Reads OBJ as modelling programs write it: ``v x y z [w]`` (w and any vertex
    colours after it are ignored), ``vt u [v [w]]``, ``vn``, and faces ``f`` whose
    corners are ``v``, ``v/vt``, ``v//vn`` or ``v/vt/vn``, with 1-based or negative
    (relative: -1 is the last defined so far) indices. Quads and n-gons are
    fan-triangulated (:func:`springsim.builders.geometry.triangulate`). Comments, blank lines,
    lines continued with a trailing backslash (joined in linear time, however many),
    and every other statement (``o``, ``g``, ``s``, ``usemtl``, ``mtllib``, ``l``,
    ...) are accepted and ignored.

    Coincident vertices are welded into one node (:func:`springsim.files.weld.weld_vertices`):
    each vertex within ``weld`` times the bounding-box diagonal of an earlier kept
    vertex becomes that vertex's node, so the first vertex in the file is the one kept,
    and nodes keep the file's order. Faces are rewritten on the nodes: an edge whose
    ends were welded disappears (a quad at a pole becomes a triangle), and the
    triangles left with two equal corners are dropped
    (:func:`springsim.files.weld.weld_polygons`). If anything was welded or dropped, a
    :class:`MeshWarning` says how many, and carries the numbers and the node of each
    of the file's vertices. Vertices that no face uses stay, as nodes without springs.
    The system is then built exactly as :func:`springsim.mesh` builds it from the nodes
    and triangles; each node's uv is that of the first face corner (in file order) on
    it that has one, else (0, 0).

    Parameters
    ----------
    path : str or os.PathLike
        The ``.obj`` file (UTF-8 or ASCII text).
    mass : float or array_like, shape (V,)
        Total mass, kg, spread equally over the nodes; or one mass per vertex of the
        file (V of them), welded vertices' masses adding up.
    stiffness, damping : float or array_like
        Spring stiffness (N/m) and axial damping (N·s/m).
    bend : bool
        Also add a spring across each interior edge (see :func:`springsim.mesh`).
    weld : float or None
        Weld vertices closer than this fraction of the mesh's bounding-box diagonal
        (scale-free: OBJ has no units). The default, 1e-9, welds the copies exporters
        write (equal, or equal to rounding) and nothing a mesh means; 0 welds exactly
        equal ones only (and so, in effect, does anything below about 1e-12). None (or
        False) keeps every vertex: then two coincident vertices joined by a face are an
        error.

    Returns
    -------
    System
        A 3D system whose ``faces`` are the file's triangles, ``uvs`` its texture
        coordinates, rest lengths the edges' lengths.

    Raises
    ------
    TypeError
        ``path`` is not a path, ``weld`` not a number or None.
    ValueError
        ``weld`` outside [0, 1]. A malformed or truncated line (``v 1 2``, ``f 1 x 3``,
        ``f 1 2``, an index 0 or out of range, a face using a vertex twice, a
        non-finite number, a vertex coordinate beyond ±1e150, whose squared distances
        would overflow), a face joining two coincident vertices that were not welded, a
        binary file, or a file without vertices: the message names the file and the
        line (``model.obj:12: ...``) and quotes at most 80 characters of it. No
        system is returned.
    OSError
        The file cannot be read.

    Warns
    -----
    MeshWarning
        Vertices were welded or degenerate triangles dropped.

    Examples
    --------
    >>> import os, tempfile, warnings
    >>> from springsim.io import read_obj
    >>> square = '''# a unit square, one quad
    ... o square
    ... v 0 0 0
    ... v 1 0 0
    ... v 1 1 0
    ... v 0 1 0
    ... vt 0 0
    ... vt 1 0
    ... vt 1 1
    ... vt 0 1
    ... f 1/1 2/2 3/3 4/4
    ... '''
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "square.obj")
    ...     with open(path, "w") as file:
    ...         _ = file.write(square)
    ...     sim = read_obj(path, mass=1.0, stiffness=100.0)
    >>> sim.num_nodes, sim.num_springs, sim.faces.tolist()
    (4, 5, [[0, 1, 2], [0, 2, 3]])
    >>> sim.uvs[2].tolist()
    [1.0, 1.0]

    A fan around a pole written as a modeller does, one pole vertex per triangle:

    >>> cone = '''v 0 0 1
    ... v 0 0 1
    ... v 0 0 1
    ... v 1 0 0
    ... v -0.5 0.866 0
    ... v -0.5 -0.866 0
    ... f 1 4 5
    ... f 2 5 6
    ... f 3 6 4
    ... '''
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "cone.obj")
    ...     with open(path, "w") as file:
    ...         _ = file.write(cone)
    ...     with warnings.catch_warnings(record=True) as caught:
    ...         warnings.simplefilter("always")
    ...         sim = read_obj(path, mass=1.0, stiffness=100.0)
    >>> sim.num_nodes, sim.faces.tolist()
    (4, [[0, 1, 2], [0, 2, 3], [0, 3, 1]])
    >>> report = caught[0].message  # a MeshWarning
    >>> report.welded, report.nodes, report.degenerate, report.node_of_vertex.tolist()
    (2, 4, 0, [0, 0, 0, 1, 2, 3])
    >>> print(str(report).split(": ", 1)[1])  # doctest: +NORMALIZE_WHITESPACE
    welded 2 of 6 vertices into coincident ones (4 nodes)
    (weld=1e-09 of the bounding-box diagonal, 2.49996 m)
    """
    fraction = weld_fraction(weld)
    file, faces, uv_table = obj.read(path)
    sim, node_of, report = _welded_system(file, mass, stiffness, damping, bend, fraction)
    sim.uvs = obj.node_uvs(faces, uv_table, node_of, sim.num_nodes)
    if report is not None:
        warnings.warn(report, stacklevel=2)
    return sim


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
    file = mesh_io.read(path, file_format)
    sim, _node_of, report = _welded_system(file, mass, stiffness, damping, bend, fraction)
    if report is not None:
        warnings.warn(report, stacklevel=2)
    return sim


def write_obj(sim: System, path: StrPath) -> None:
    """Write a system's current shape as a Wavefront OBJ file (opens in Blender, MeshLab).

    Writes a header comment naming springsim, then one ``v x y z`` per node
    (z = 0 for a 2D system), one ``vt u v`` per node (its :attr:`~springsim.System.uvs`),
    one ``f i/i j/j k/k`` per face (1-based), and the springs that are not an edge of
    a face as ``l`` polylines (``l 1 2 3 ...``: springs end to end make one line, so
    a string opens in Blender as a single polyline; a cloth's shear and bend springs
    as loose edges). Numbers are written with ``repr``, the shortest text that reads
    back as the same float, so :func:`read_obj` recovers positions and uvs exactly;
    ``read_obj`` rebuilds the springs from the faces' edges (it ignores ``l``).
    The file is written to exactly ``path``, through a temporary file renamed into
    place when complete.

    Parameters
    ----------
    sim : System
        The system to write (it is not changed).
    path : str or os.PathLike
        The file to write; replaced if it exists. Call once per frame, with names
        like ``frame_0001.obj``, for an animation.

    Raises
    ------
    TypeError
        ``sim`` is not a System, or ``path`` not a path.
    ValueError
        A position or uv is not finite (no viewer could read it); nothing is written.
    OSError
        The file cannot be written.

    Examples
    --------
    >>> import os, tempfile
    >>> import springsim as ss
    >>> from springsim.io import write_obj
    >>> sim = ss.mesh([[0, 0], [1, 0], [0, 1]], [[0, 1, 2]], mass=1.0, stiffness=100.0)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "frame.obj")
    ...     write_obj(sim, path)
    ...     with open(path) as file:
    ...         print(file.read())  # doctest: +ELLIPSIS
    # springsim ... Wavefront OBJ: vertices 3, faces 1, lines 0, time 0.0 s
    o springsim
    v 0.0 0.0 0.0
    v 1.0 0.0 0.0
    v 0.0 1.0 0.0
    vt 0.0 0.0
    vt 0.0 0.0
    vt 0.0 0.0
    f 1/1 2/2 3/3
    <BLANKLINE>

    A string has no faces: its springs are one polyline.

    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "string.obj")
    ...     write_obj(ss.string(4, length=1.0, mass=0.1, stiffness=10.0), path)
    ...     with open(path) as file:
    ...         print(file.read().splitlines()[-1])
    l 1 2 3 4
    """
    if not isinstance(sim, _core.System):
        raise TypeError(f"sim must be a springsim.System, not {type(sim).__name__}")
    obj.write_obj(sim, path)


def write_vtk(history: History, path: StrPath, faces: bool = False) -> list[str]:
    """Write a run's frames as a ParaView time series: a ``.pvd`` and a ``.vtp`` per frame.

    ``path`` names the ``.pvd`` collection, which lists each frame's file with its
    time (``timestep``, s); the frames go into a folder next to it named after it:
    ``run.pvd`` and ``run/run_0000.vtp``, ``run/run_0001.vtp``, ... (the folder is
    created if needed). Open the ``.pvd`` in ParaView: the time slider steps
    through the frames at their real times. Each frame holds the points with their
    velocity, pinned flag and node index, and the springs as lines with their tension
    and strain (the table in :mod:`springsim.files.vtk`). Values are written exactly
    (binary float64). Each file is written through a temporary file renamed into
    place, the ``.pvd`` last: it never lists a frame that is not there.

    Parameters
    ----------
    history : springsim.History
        From :meth:`springsim.System.run` with ``frames=F``.
    path : str or os.PathLike
        The collection to write, ending in ``.pvd``; replaced if it exists (as are
        frame files of the same names).
    faces : bool
        Also write the triangles (``history.faces``) as polygons, to render the
        surface; their ``tension`` and ``strain`` are NaN, so colour them by a point
        array (``velocity``) or draw them apart (ParaView's "Extract Cells By Type").

    Returns
    -------
    list of str
        The files written: the frames in order, then the ``.pvd``.

    Raises
    ------
    TypeError
        ``history`` is not a History, or ``path`` not a path.
    ValueError
        ``path`` does not end in ``.pvd``; the history holds no frames, or a position
        or velocity that is not finite. Nothing is written.
    OSError
        A file or the folder cannot be written.

    Examples
    --------
    >>> import os, tempfile
    >>> import springsim as ss
    >>> sim = ss.string(5, length=1.0, mass=0.1, stiffness=50.0)
    >>> h = sim.run(0.2, 1e-3, frames=3, progress=False)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     written = h.write_vtk(os.path.join(folder, "string.pvd"))
    ...     print([os.path.relpath(name, folder) for name in written])
    ...     print(open(written[-1]).read())  # doctest: +NORMALIZE_WHITESPACE
    ['string/string_0000.vtp', 'string/string_0001.vtp', 'string/string_0002.vtp',
     'string.pvd']
    <?xml version="1.0"?>
    <VTKFile type="Collection" version="0.1" byte_order="LittleEndian">
    <Collection>
    <DataSet timestep="0.0" group="" part="0" file="string/string_0000.vtp"/>
    <DataSet timestep="0.1..." group="" part="0" file="string/string_0001.vtp"/>
    <DataSet timestep="0.2..." group="" part="0" file="string/string_0002.vtp"/>
    </Collection>
    </VTKFile>
    """
    if not isinstance(history, History):
        raise TypeError(f"history must be a springsim.History, not {type(history).__name__}")
    return vtk.write_vtk(history, path, faces)


def _welded_system(
    file: MeshFile,
    mass: npt.ArrayLike,
    stiffness: npt.ArrayLike,
    damping: npt.ArrayLike,
    bend: bool,
    fraction: float | None,
) -> tuple[System, np.ndarray, MeshWarning | None]:
    """The system :func:`springsim.mesh` builds from a mesh file's vertices and polygons
    once the vertices closer than ``fraction`` of the bounding-box diagonal are welded
    (None: none); the node of each of the file's vertices; the MeshWarning to issue. A
    spring that would join two coincident nodes raises the file's error."""
    welded = weld_mesh(file, fraction)
    masses = _masses(mass, len(file.vertices), welded.node_of, len(welded.kept))
    try:
        sim = mesh(
            welded.vertices,
            welded.triangles,
            mass=masses,
            stiffness=stiffness,
            damping=damping,
            bend=bend,
        )
    except ValueError:
        check_coincident(welded, bend)  # the file's own message, if that was it
        raise
    return sim, welded.node_of, welded.report


def _masses(mass: npt.ArrayLike, vertices: int, node_of: np.ndarray, nodes: int) -> npt.ArrayLike:
    """The masses for :func:`springsim.mesh`: a total as given, or per-vertex masses
    (one per vertex of the file) added up over each node's welded vertices."""
    m = np.asarray(mass)
    if m.dtype.kind not in "iuf" or m.ndim == 0:
        return mass  # a total (or a bad value: mesh() says what is wrong)
    return np.bincount(node_of, weights=_node_masses(m, vertices), minlength=nodes)
