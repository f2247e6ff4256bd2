"""The save file's schema, and the checks made on an .npz before any array is read.

Shared by :mod:`springsim.io`, which writes and reads the files.
"""

from __future__ import annotations

import math
import zipfile
import zlib
from collections.abc import Callable

import numpy as np

#: The ``format`` entry of a springsim save file.
FORMAT = "springsim.System"
#: The version of the save format this springsim writes, and the newest it reads.
FORMAT_VERSION = 7

# Per-node and per-spring arrays: name -> (dtype, columns), columns "dim" or an int
# (None for one value per row). Their order is the order they are written in.
_NODE_ARRAYS = {
    "positions": (np.float64, "dim"),
    "velocities": (np.float64, "dim"),
    "masses": (np.float64, None),
    "pinned": (np.bool_, None),
    "external_forces": (np.float64, "dim"),
    "uvs": (np.float64, 2),
    "rest_positions": (np.float64, "dim"),
    "_prev_accel": (np.float64, "dim"),
}
_SPRING_ARRAYS = {
    "springs": (np.int32, 2),
    "rest_lengths": (np.float64, None),
    "stiffness": (np.float64, None),
    "damping": (np.float64, None),
}
_FACE_ARRAYS = {"faces": (np.int32, 3)}
_VECTORS = ("gravity", "wind")
_FLOATS = ("drag", "energy_loss", "time")
#: The divergence factor of a System that files before version 4 did not hold.
_DEFAULT_FACTOR = 100.0
_KEYS_BY_VERSION = {
    1: frozenset(
        ["format", "version", "dim", "method", "_verlet_valid", *_VECTORS, *_FLOATS]
        + [*_NODE_ARRAYS, *_SPRING_ARRAYS, *_FACE_ARRAYS]
    )
}
_KEYS_BY_VERSION[2] = _KEYS_BY_VERSION[1] | {
    "colliders",
    "break_strains",
    "max_strain",
    "iterations",
}
_KEYS_BY_VERSION[3] = _KEYS_BY_VERSION[2] | {
    "pressure",
    "pressure_counts",
    "pressure_elements",
    "cg_tolerance",
    "cg_max_iterations",
}
_KEYS_BY_VERSION[4] = _KEYS_BY_VERSION[3] | {"air_density", "drag_coefficient", "divergence_factor"}
_KEYS_BY_VERSION[5] = _KEYS_BY_VERSION[4] | {"drives", "drive_t0", "drive_nodes", "drive_values"}
_KEYS_BY_VERSION[6] = _KEYS_BY_VERSION[5] | {
    "collider_ends",
    "mesh_counts",
    "mesh_vertices",
    "mesh_faces",
    "radii",
    "groups",
    "contact_law",
    "contact_off",
    "self_collision",
}
_KEYS_BY_VERSION[7] = _KEYS_BY_VERSION[6] | {
    "dissipated",
    "track_energy",
    "crossings",
}
_KEYS = _KEYS_BY_VERSION[FORMAT_VERSION]


# What reading a truncated or corrupt zip raises (zipfile raises NotImplementedError for
# an unknown compression or version field and RuntimeError for an "encrypted" flag).
_UNREADABLE = (
    ValueError,
    EOFError,
    OSError,
    zipfile.BadZipFile,
    zlib.error,
    NotImplementedError,
    RuntimeError,
)


# What a file may make load() allocate, at most: its arrays together may declare no
# more than _MAX_INFLATION times the file's size (a save file is stored uncompressed,
# ratio 1; even a freshly built cloth, recompressed, stays near 12), or _FREE_BYTES
# whatever the file's size. Deflate reaches about 1000: a zip bomb is refused.
_MAX_INFLATION = 128
_FREE_BYTES = 64 << 20


def _check_headers(
    archive: zipfile.ZipFile, size: int, invalid: Callable[[str], ValueError]
) -> None:
    """Refuse, from the .npy headers alone and before any array is read or allocated,
    a file whose arrays declare more data than their zip members hold, row counts that
    disagree (the node arrays' with ``positions``, the spring arrays' with ``springs``),
    or more data in all than a file of ``size`` bytes can sensibly inflate to."""
    shapes = {}
    total = 0
    for info in archive.infolist():
        name = info.filename
        key = name.removesuffix(".npy")
        if key not in _KEYS:
            continue  # never read: the entries check refuses the file
        if not name.endswith(".npy"):
            raise invalid(f"entry {key!r} is not a NumPy array (a .npy member)")
        with archive.open(info) as member:
            try:
                version = np.lib.format.read_magic(member)
                if version == (1, 0):
                    shape, _, dtype = np.lib.format.read_array_header_1_0(member)
                elif version == (2, 0):
                    shape, _, dtype = np.lib.format.read_array_header_2_0(member)
                else:
                    raise ValueError(f".npy format version {version} is not 1.0 or 2.0")
            except ValueError as error:
                raise invalid(f"entry {key!r} is not a NumPy array ({error})") from None
            holds = info.file_size - member.tell()
        if dtype.hasobject or any(length < 0 for length in shape):
            raise invalid(f"entry {key!r} declares {dtype} {shape}: not a springsim array")
        declared = math.prod(shape) * dtype.itemsize  # Python ints: no overflow
        if declared > holds:
            raise invalid(
                f"entry {key!r} declares {dtype} {shape} ({declared} bytes), but its zip "
                f"member holds {max(holds, 0)} bytes of data: truncated or corrupt"
            )
        shapes[key] = shape
        total += declared
    for first, others in (("positions", _NODE_ARRAYS), ("springs", _SPRING_ARRAYS)):
        rows = shapes.get(first, ())[:1]
        for key in (*others, "break_strains") if first == "springs" else others:
            if rows and key in shapes and shapes[key][:1] != rows:
                raise invalid(
                    f"entry {key!r} declares shape {shapes[key]}, but {first!r} has {rows[0]} rows"
                )
    if total > max(_FREE_BYTES, _MAX_INFLATION * size):
        raise invalid(
            f"its arrays declare {total} bytes of data, more than {_MAX_INFLATION} times "
            f"the file's {size} bytes: a zip bomb, not a springsim save file"
        )
