"""A run as a ParaView time series: :func:`springsim.io.write_vtk` writes each frame of a
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
from typing import BinaryIO, Protocol
from xml.sax.saxutils import quoteattr

import numpy as np

from springsim.files.paths import StrPath, path_name, write_atomically


class Frames(Protocol):
    """What a series is written from: the frames of a :class:`springsim.History`."""

    dim: int
    frame_times: np.ndarray
    frame_nodes: np.ndarray
    frames: np.ndarray
    frame_velocities: np.ndarray
    frame_pinned: np.ndarray
    frame_tensions: np.ndarray
    frame_strains: np.ndarray
    edges: np.ndarray
    faces: np.ndarray


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


def _frame(history: Frames, k: int, faces: bool) -> str:
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


def write_vtk(history: Frames, path: StrPath, faces: bool = False) -> list[str]:
    """Write the frames of ``history`` as a ParaView time series (see
    :func:`springsim.io.write_vtk`); returns the files written, the ``.pvd`` last."""
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
