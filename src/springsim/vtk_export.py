"""A run as a ParaView time series: :func:`write_vtk` writes each frame of a
:class:`springsim.History` as a VTK PolyData file (``.vtp``, VTK's XML format) and a
``.pvd`` collection that lists them with their times.

The files need nothing beyond NumPy to write; ParaView, VisIt and VTK's own readers
(``vtkXMLPolyDataReader``) open them. Each ``.vtp`` holds, for one frame:

================= =========== =================================================
array             on          meaning
================= =========== =================================================
(points)                      the positions of ``frame_nodes``, m (z = 0 in 2D)
``velocity``      points      m/s, 3 components (0 in z in 2D)
``pinned``        points      1 for a pinned node, else 0 (UInt8)
``node``          points      the node's index in the system (Int64)
``tension``       cells       N, signed: positive pulls the ends together
``strain``        cells       l/L − 1 (0 for a spring of rest length 0)
``TimeValue``     field       the frame's time, s
================= =========== =================================================

The cells are the springs (``History.edges``) still in the system at that frame, as
lines (a spring torn during the run is absent from the frames after it), then, with
``faces=True``, the triangles (``History.faces``) as polygons, whose ``tension`` and
``strain`` are NaN.
"""

from __future__ import annotations

import base64
import os
from functools import partial
from typing import TYPE_CHECKING, BinaryIO
from xml.sax.saxutils import quoteattr

import numpy as np

from springsim._files import StrPath, path_name, write_atomically

if TYPE_CHECKING:
    from springsim.stepping.history import History

__all__ = ["write_vtk"]

# The VTK XML types written, as little-endian NumPy dtypes.
_DTYPES = {"Float64": "<f8", "Int64": "<i8", "UInt8": "u1"}


def _data_array(
    values: np.ndarray, kind: str, name: str = "", components: int = 0, tuples: int = 0
) -> str:
    """One ``<DataArray>`` in VTK's inline binary form: base64 of the byte count (the
    UInt64 header) followed by the raw little-endian values. (Field data must say its
    number of tuples.)"""
    raw = np.ascontiguousarray(values, dtype=_DTYPES[kind]).tobytes()
    payload = base64.b64encode(np.array(len(raw), dtype="<u8").tobytes() + raw).decode()
    attributes = f'type="{kind}"'
    if name:
        attributes += f" Name={quoteattr(name)}"
    if components:
        attributes += f' NumberOfComponents="{components}"'
    if tuples:
        attributes += f' NumberOfTuples="{tuples}"'
    return f'<DataArray {attributes} format="binary">{payload}</DataArray>'


def _cells(tag: str, corners: np.ndarray) -> str:
    """A ``<Lines>`` or ``<Polys>`` block: connectivity and offsets (empty: none)."""
    if len(corners) == 0:
        return ""
    width = corners.shape[1]
    offsets = np.arange(1, len(corners) + 1, dtype=np.int64) * width
    return (
        f"<{tag}>\n"
        f"{_data_array(corners.reshape(-1), 'Int64', 'connectivity')}\n"
        f"{_data_array(offsets, 'Int64', 'offsets')}\n"
        f"</{tag}>\n"
    )


def _frame(history: History, k: int, faces: bool) -> str:
    """The ``.vtp`` text of frame ``k``."""
    n, dim = len(history.frame_nodes), history.dim
    points, velocities = np.zeros((n, 3)), np.zeros((n, 3))
    points[:, :dim], velocities[:, :dim] = history.frames[k], history.frame_velocities[k]
    present = ~np.isnan(history.frame_tensions[k])
    lines = history.edges[present]
    triangles = history.faces if faces else np.zeros((0, 3), dtype=np.int32)
    polygons = np.full(len(triangles), np.nan)
    tension = np.concatenate([history.frame_tensions[k][present], polygons])
    strain = np.concatenate([history.frame_strains[k][present], polygons])
    time = np.array([history.frame_times[k]])
    return (
        '<?xml version="1.0"?>\n'
        '<VTKFile type="PolyData" version="1.0" byte_order="LittleEndian" '
        'header_type="UInt64">\n<PolyData>\n'
        f"<FieldData>\n{_data_array(time, 'Float64', 'TimeValue', tuples=1)}\n</FieldData>\n"
        f'<Piece NumberOfPoints="{n}" NumberOfVerts="0" NumberOfLines="{len(lines)}" '
        f'NumberOfStrips="0" NumberOfPolys="{len(triangles)}">\n'
        '<PointData Vectors="velocity" Scalars="pinned">\n'
        f"{_data_array(velocities, 'Float64', 'velocity', 3)}\n"
        f"{_data_array(history.frame_pinned[k], 'UInt8', 'pinned')}\n"
        f"{_data_array(history.frame_nodes, 'Int64', 'node')}\n"
        "</PointData>\n"
        '<CellData Scalars="tension">\n'
        f"{_data_array(tension, 'Float64', 'tension')}\n"
        f"{_data_array(strain, 'Float64', 'strain')}\n"
        "</CellData>\n"
        f"<Points>\n{_data_array(points, 'Float64', '', 3)}\n</Points>\n"
        f"{_cells('Lines', lines)}{_cells('Polys', triangles)}"
        "</Piece>\n</PolyData>\n</VTKFile>\n"
    )


def _write(text: str, file: BinaryIO) -> None:
    file.write(text.encode())


def write_vtk(history: History, path: StrPath, faces: bool = False) -> list[str]:
    """Write a run's frames as a ParaView time series: a ``.pvd`` and a ``.vtp`` per frame.

    ``path`` names the ``.pvd`` collection, which lists each frame's file with its
    time (``timestep``, s); the frames go into a folder next to it named after it:
    ``run.pvd`` and ``run/run_0000.vtp``, ``run/run_0001.vtp``, ... (the folder is
    created if needed). Open the ``.pvd`` in ParaView: the time slider steps
    through the frames at their real times. Each frame holds the points with their
    velocity, pinned flag and node index, and the springs as lines with their tension
    and strain (the table in :mod:`springsim.vtk_export`). Values are written exactly
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
    from springsim.stepping.history import History

    if not isinstance(history, History):
        raise TypeError(f"history must be a springsim.History, not {type(history).__name__}")
    name = path_name(path)
    if not name.lower().endswith(".pvd"):
        raise ValueError(f"{name}: the collection's name must end in .pvd")
    if len(history.frame_times) == 0:
        raise ValueError("this history holds no frames: run with frames=F (F >= 1)")
    for array in ("frames", "frame_velocities"):
        if not np.all(np.isfinite(getattr(history, array))):
            raise ValueError(f"cannot write {name}: {array} must be finite")
    folder = name[: -len(".pvd")]
    stem = os.path.basename(folder)
    width = max(4, len(str(len(history.frame_times) - 1)))
    os.makedirs(folder, exist_ok=True)
    written: list[str] = []
    entries: list[str] = []
    for k, time in enumerate(history.frame_times.tolist()):
        file = f"{stem}_{k:0{width}d}.vtp"
        written.append(os.path.join(folder, file))
        write_atomically(written[-1], partial(_write, _frame(history, k, faces)))
        entries.append(
            f'<DataSet timestep="{time!r}" group="" part="0" file={quoteattr(f"{stem}/{file}")}/>'
        )
    collection = (
        '<?xml version="1.0"?>\n'
        '<VTKFile type="Collection" version="0.1" byte_order="LittleEndian">\n'
        "<Collection>\n" + "".join(f"{entry}\n" for entry in entries) + "</Collection>\n"
        "</VTKFile>\n"
    )
    write_atomically(name, partial(_write, collection))
    return [*written, name]
