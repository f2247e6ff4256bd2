"""Meshes in the formats meshio reads (STL, PLY, VTK, VTU, OFF, Gmsh, ...): :func:`read`
reads one (:func:`springsim.read_mesh` builds a system from it, welding coincident
vertices as :func:`springsim.read_obj` does). Needs meshio (``pip install meshio``),
imported when a file is first read.
"""

from __future__ import annotations

import io
import types
import warnings
from contextlib import redirect_stderr, redirect_stdout

import numpy as np

from springsim.files.paths import StrPath, path_name, quote
from springsim.files.weld import LARGEST_COORDINATE, MeshFile
from springsim.reference import MIN_SPRING_LENGTH

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


def read(path: StrPath, file_format: str | None = None) -> MeshFile:
    """The surface mesh a file holds, read by meshio (for :func:`springsim.read_mesh`):
    its points and polygons (triangles, quads and polygons; other cells left out),
    checked. ValueError naming the file."""
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

    return MeshFile(name, points, polygons, explain)
