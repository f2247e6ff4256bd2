"""The save format: a whole System in a ``.npz`` file, and in a pickle.

:func:`springsim.io.save` / :func:`springsim.io.load` are an exact round trip: every
array, every parameter and the integrators' hidden state, so that a loaded system steps
bit for bit like the one that was saved. The file is a plain NumPy ``.npz`` archive
(no pickle), readable with ``np.load`` from any language that reads ``.npy``:

===================== ===================== ==========================================
key                   shape, dtype          meaning
===================== ===================== ==========================================
``format``            (), str               ``"springsim.System"``: what the file holds
``version``           (), int64             format version, :data:`FORMAT_VERSION`
``dim``               (), int64             2 or 3
``positions``         (N, dim) float64      as :class:`springsim.System`, for each
``velocities``        (N, dim) float64      array of the same name
``masses``            (N,) float64
``pinned``            (N,) bool
``external_forces``   (N, dim) float64
``uvs``               (N, 2) float64
``rest_positions``    (N, dim) float64
``springs``           (M, 2) int32
``rest_lengths``      (M,) float64
``stiffness``         (M,) float64
``damping``           (M,) float64
``faces``             (F, 3) int32
``gravity``           (dim,) float64
``wind``              (dim,) float64
``drag``              (), float64
``energy_loss``       (), float64
``time``              (), float64
``method``            (), str               the default integrator
``_prev_accel``       (N, dim) float64      position Verlet's last acceleration, m/s²
``_verlet_valid``     (), bool              whether ``_prev_accel`` is current
``break_strains``     (M,) float64          as :attr:`System.break_strains` (inf: never)
``max_strain``        (), float64           the strain limit; NaN for None (off)
``iterations``        (), int64             passes per substep of XPBD and VBD
``colliders``         (K, 7) float64        one row per collider, in order: kind (0
                                            plane, 1 sphere, 2 box, 3 capsule, 4 mesh),
                                            normal, center or start (3; 0 for a mesh),
                                            offset, radius or thickness (0 for a box),
                                            restitution, friction
``collider_ends``     (K, 3) float64        a box's half-extents, a capsule's end; 0
``mesh_counts``       (Km, 2) int64         vertices and faces of each mesh collider
``mesh_vertices``     (sum V, 3) float64    the mesh colliders' vertices, in order
``mesh_faces``        (sum F, 3) int32      their faces (indices into their own mesh)
``pressure``          (B, 2) float64        one row per gas body, in order: nrt, ambient
``pressure_counts``   (B,) int64            the number of boundary elements of each body
``pressure_elements`` (E, dim) int32        every body's boundary as stored (outward:
                                            edges in 2D, triangles in 3D), concatenated
                                            in body order; E = sum of ``pressure_counts``
``cg_tolerance``      (), float64           implicit_euler's CG relative residual
``cg_max_iterations`` (), int64             implicit_euler's CG iterations per substep
``air_density``       (), float64           kg/m³, the air on faces
``drag_coefficient``  (), float64           C_d of the faces (0: no air on faces)
``divergence_factor`` (), float64           the divergence watch's factor; NaN for None
``drives``            (D, 4) int64          one row per drive (:meth:`System.drive`) the
                                            file keeps, in order: kind (0 per-substep
                                            targets, 1 a ``pin(velocity=...)`` line),
                                            driven nodes k, target rows S (0 for a
                                            line), substeps done
``drive_t0``          (D,) float64          a line's start time, s (NaN for targets)
``drive_nodes``       (sum k,) int64        the driven nodes, concatenated in order
``drive_values``      (R, dim) float64      targets, S × k rows each; a line's k start
                                            positions then its k velocities
``radii``             (N,) float64          node–node contact radii, m
``groups``            (N,) int32            contact groups
``contact_law``       (4,) or (5,) float64  contact radius, stiffness (0: from the
                                            step, ``contact_stiffness = None``),
                                            restitution, friction, then 1.0 when
                                            :attr:`System.segment_contact` is on
                                            (else left out)
``contact_off``       (K, 2) int32          the group pairs that do not touch
``self_collision``    (3,), (4,) or (0,)    thickness, stiffness, friction of
                      float64               :meth:`System.enable_self_collision`, then 1.0
                                            when ``edges`` is on (else left out); empty: off
``dissipated``        (), float64           :attr:`System.dissipated`, J
``track_energy``      (), bool              :attr:`System.track_energy`
``crossings``         (), int64             :attr:`System.self_collision_crossings`
``contact_dt``        (), float64           the substep of the last step that succeeded,
                                            s (0: none), at which the contact law from
                                            the step is counted between steps
===================== ===================== ==========================================

Version 1 files (no ``colliders``, ``break_strains``, ``max_strain`` or ``iterations``
entries) load as systems without colliders, strain limit or tearing, with 10 XPBD
iterations. Version 1 and 2 files (no ``pressure`` entries) load with no gas bodies
and the default CG settings. Files before version 4 (no ``air_density``,
``drag_coefficient`` and ``divergence_factor``) load with no air on faces and the
default divergence factor. Files before version 5 (no ``drives`` entries) load with no
driven nodes. Files before version 6 (no ``collider_ends``, ``mesh_*`` or
``self_collision`` entries) hold planes and spheres only, and load with no node–node
contact (no radii, the default law) and self-collision off. Files before version 7 (no
``dissipated``, ``track_energy`` or ``crossings``) load with the energy
books at 0, untracked, and the crossings counted from 0. Files before version 8 (no
``contact_dt``) load with it at 0, as if never stepped: the contact law from the step
counts its energy again from the first step. Files written before the stiffness from
the step hold a stiffness in N/m (1e4, the old default) and load with it.

A drive whose path is a function cannot be kept (it is code, and the file holds no
pickle): :func:`springsim.io.save` warns and leaves it out, and the loaded system holds
those nodes still (they stay pinned). Per-substep target arrays and the drags of
``pin(velocity=...)`` are kept, with their progress, and step bit for bit as before.

Gas body ids are not stored: :func:`springsim.io.load` adds the bodies in order,
numbered 0, 1, ..., which are the original's ids unless bodies were removed from it (ids
are never reused, so the bodies after a removed one get new, lower ids).

Pickles (:mod:`springsim.files.pickling`) hold the same entries, with the drives
themselves (a drive that follows a function pickles if pickle can store the function).

What a file holds is read in steps, each refusing a bad file with ValueError naming it
before anything is built: :func:`check_headers` (from the ``.npy`` headers alone, before
any array is read), :func:`read` (every entry's dtype and shape), then
:func:`system_from_arrays` (the kernel checks every value).
"""

from __future__ import annotations

import math
import os
import zipfile
import zlib
from collections.abc import Callable
from typing import Any, TypeVar, cast

import numpy as np

from springsim import _core
from springsim._warn import warn
from springsim.colliders import BOX, CAPSULE, MESH, PLANE, SPHERE
from springsim.files.paths import StrPath, path_name, quote, write_atomically
from springsim.model import pins
from springsim.model.pins import _Drive, _Line

#: The class a file is loaded into: springsim.System, or a subclass.
System = TypeVar("System", bound=_core.System)

#: The ``format`` entry of a springsim save file.
FORMAT = "springsim.System"
#: The version of the save format this springsim writes, and the newest it reads.
FORMAT_VERSION = 8

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
_KEYS_BY_VERSION[8] = _KEYS_BY_VERSION[7] | {"contact_dt"}
_KEYS = _KEYS_BY_VERSION[FORMAT_VERSION]

#: The state's entries: one per field of the kernel's state (``_core.STATE_FIELDS``,
#: the one definition that rollback, copy and pickling share), by the field's name.
STATE_KEYS = tuple(name for name, _ in _core.STATE_FIELDS)
# The dtype each kind of state field is stored as.
_STATE_DTYPES = {"array": np.float64, "real": np.float64, "flag": np.bool_, "count": np.int64}
# What the state fields an older file lacks start at (versions 7 and 8 added them).
_STATE_DEFAULTS = {"dissipated": 0.0, "crossings": 0, "contact_dt": 0.0}


#: The entries of the colliders that format version 6 added (boxes' and capsules' ends,
#: the mesh colliders' triangles): see :func:`collider_entries`.
COLLIDER_KEYS = ("collider_ends", "mesh_counts", "mesh_vertices", "mesh_faces")
#: The entries of the drives (format version 5): see :func:`drive_entries`.
DRIVE_KEYS = ("drives", "drive_t0", "drive_nodes", "drive_values")
#: The entries of node–node contact (format version 6): see :func:`contact_entries`.
CONTACT_KEYS = ("radii", "groups", "contact_law", "contact_off")
# The kinds of drive in the ``drives`` entry.
_TARGETS, _LINE = 0, 1


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


def check_headers(
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


# ---------------------------------------------------------------- a System as entries


def state_arrays(sim: _core.System, drives: bool = True) -> dict[str, np.ndarray]:
    """Every entry of the save format for ``sim``: copies of its exact bits
    (``drives=False``: the drive entries empty, for a pickle, which keeps the drives
    themselves)."""
    arrays = {
        "format": np.array(FORMAT),
        "version": np.array(FORMAT_VERSION, dtype=np.int64),
        "dim": np.array(sim.dim, dtype=np.int64),
    }
    kinds = dict(_core.STATE_FIELDS)
    for key, value in sim._state().items():  # copies of the kernel's exact bits
        arrays[key] = np.array(value, dtype=_STATE_DTYPES[kinds[key]])
    for array in (*_NODE_ARRAYS, *_SPRING_ARRAYS, *_FACE_ARRAYS, *_VECTORS):
        if array not in kinds:
            arrays[array] = np.array(sim._view(array))  # a copy of the kernel's exact bits
    for scalar in _FLOATS:
        if scalar not in kinds:
            arrays[scalar] = np.array(getattr(sim, scalar), dtype=np.float64)
    arrays["method"] = np.array(sim.method)
    arrays.update(collider_entries(sim))
    arrays["break_strains"] = np.array(sim._view("break_strains"))
    arrays["iterations"] = np.array(sim.iterations, dtype=np.int64)
    arrays["cg_tolerance"] = np.array(sim.cg_tolerance, dtype=np.float64)
    arrays["cg_max_iterations"] = np.array(sim.cg_max_iterations, dtype=np.int64)
    arrays["max_strain"] = np.array(np.nan if sim.max_strain is None else sim.max_strain)
    arrays["air_density"] = np.array(sim.air_density, dtype=np.float64)
    arrays["drag_coefficient"] = np.array(sim.drag_coefficient, dtype=np.float64)
    factor = sim.divergence_factor
    arrays["divergence_factor"] = np.array(np.nan if factor is None else factor)
    setting = sim._self_collision()
    values = [] if setting is None else list(setting[:3]) + ([1.0] if setting[4] else [])
    arrays["self_collision"] = np.array(values, dtype=np.float64)
    arrays["track_energy"] = np.array(sim.track_energy, dtype=np.bool_)
    arrays.update(pressure_entries(sim))
    arrays.update(contact_entries(sim))
    kept = pins.drives(sim) if drives else []
    arrays.update(drive_entries(kept, sim.dim)[0])
    return arrays


def pressure_entries(sim: _core.System) -> dict[str, np.ndarray]:
    """The gas bodies of ``sim`` as the ``pressure``, ``pressure_counts`` and
    ``pressure_elements`` entries."""
    bodies = sim._pressure_bodies()
    elements = [sim._pressure_elements(body) for body, *_ in bodies]
    return {
        "pressure": np.array(
            [[nrt, ambient] for _body, nrt, ambient, _volume in bodies], dtype=np.float64
        ).reshape(-1, 2),
        "pressure_counts": np.array([len(e) for e in elements], dtype=np.int64),
        "pressure_elements": np.concatenate(
            [np.zeros((0, sim.dim), dtype=np.int32), *elements]
        ).astype(np.int32, copy=False),
    }


def _padded(vector: tuple[float, ...]) -> list[float]:
    return [*vector, *([0.0] * (3 - len(vector)))]


def collider_entries(sim: _core.System) -> dict[str, np.ndarray]:
    """The ``colliders`` entry and the version 6 entries for ``sim``."""
    rows, ends, counts = [], [], []
    vertices: list[np.ndarray] = [np.zeros((0, 3))]
    faces: list[np.ndarray] = [np.zeros((0, 3), dtype=np.int32)]
    for cid, kind, vector, scalar, restitution, friction in sim._colliders():
        rows.append([kind, *_padded(vector), scalar, restitution, friction])
        shape = sim._collider_shape(cid)
        if kind in (BOX, CAPSULE):
            ends.append(_padded(cast("tuple[float, ...]", shape)))
        else:
            ends.append([0.0] * 3)
        if kind == MESH:
            v, f = cast("tuple[np.ndarray, np.ndarray]", shape)
            counts.append([v.shape[0], f.shape[0]])
            vertices.append(v)
            faces.append(f)
    return {
        "colliders": np.array(rows, dtype=np.float64).reshape(-1, 7),
        "collider_ends": np.array(ends, dtype=np.float64).reshape(-1, 3),
        "mesh_counts": np.array(counts, dtype=np.int64).reshape(-1, 2),
        "mesh_vertices": np.concatenate(vertices).astype(np.float64),
        "mesh_faces": np.concatenate(faces).astype(np.int32),
    }


def drive_entries(drives: list[_Drive], dim: int) -> tuple[dict[str, np.ndarray], list[_Drive]]:
    """The save-format entries of ``drives``, and the drives they leave out (those that
    follow a function: code, which a file cannot hold)."""
    rows, t0, nodes, values, dropped = [], [], [], [], []
    for d in drives:
        if d.targets is not None:
            steps = d.targets.shape[0]
            rows.append([_TARGETS, d.indices.size, steps, d.counter])
            t0.append(np.nan)
            values.append(d.targets.reshape(-1, dim))
        elif isinstance(d.function, _Line):
            line = d.function
            start, velocity = (
                np.broadcast_to(a, (d.width, dim)) for a in (line.start, line.velocity)
            )
            if d.rows is not None:  # nodes were removed: keep the rows still driven
                start, velocity = start[d.rows], velocity[d.rows]
            rows.append([_LINE, d.indices.size, 0, d.counter])
            t0.append(line.t0)
            values.extend([start, velocity])
        else:
            dropped.append(d)
            continue
        nodes.append(d.indices)
    entries = {
        "drives": np.array(rows, dtype=np.int64).reshape(-1, 4),
        "drive_t0": np.array(t0, dtype=np.float64),
        "drive_nodes": np.concatenate([np.zeros(0, np.int64), *nodes]).astype(np.int64),
        "drive_values": np.concatenate([np.zeros((0, dim)), *values]).astype(np.float64),
    }
    return entries, dropped


def describe(drive: _Drive) -> str:
    """The words "the drive of nodes [...] (path ...)", for messages."""
    nodes = drive.indices.tolist()
    shown = str(nodes) if len(nodes) <= 8 else str(nodes[:8])[:-1] + ", ...]"
    return f"the drive of nodes {shown} (path {drive.function!r})"


def contact_entries(sim: _core.System) -> dict[str, np.ndarray]:
    """The contact entries of ``sim``: copies of its exact bits."""
    off = sim._contact_filter()
    return {
        "radii": np.array(sim._view("radii")),
        "groups": np.array(sim._view("groups")),
        "contact_law": np.array(
            sim._contact_law() + ((1.0,) if sim._segment_contact() else ()), dtype=np.float64
        ),
        "contact_off": np.array(off, dtype=np.int32).reshape(len(off), 2),
    }


# ---------------------------------------------------------------- the file


def check_savable(sim: _core.System, name: str) -> None:
    """ValueError naming the file if ``sim`` holds a value :func:`springsim.io.load`
    would refuse (possible only after writing through a view, which the kernel cannot
    check when it happens): the kernel's validation checks every array a view can write,
    with the limits loading applies."""
    try:
        sim._validate()
    except ValueError as error:
        raise ValueError(f"cannot save to {name}: the system is invalid: {error}") from None


def save(self: _core.System, path: StrPath) -> None:
    """Save every array and parameter to a ``.npz`` file; see :func:`springsim.load`.

    Drives (:meth:`drive`) whose paths are arrays of targets, and the drags of
    :meth:`pin` ``(velocity=...)``, are kept; a drive that follows a function
    cannot be, and ``save`` warns (UserWarning) naming it: the loaded system holds
    those nodes still. See :func:`springsim.io.save`.
    """
    name = path_name(path)
    check_savable(self, name)
    arrays: dict[str, Any] = state_arrays(self)  # (np.savez's stubs want **Any)
    _, dropped = drive_entries(pins.drives(self), self.dim)
    if dropped:  # before writing: a warning turned into an error writes nothing
        warn(
            f"save() cannot keep {len(dropped)} drive{'s' * (len(dropped) > 1)}, "
            f"{'; '.join(map(describe, dropped))}: a function is code, which the "
            "file cannot hold. The loaded system holds those nodes still (pinned); "
            "drive them again after load(). Per-substep target arrays and "
            "pin(velocity=...) drags are kept"
        )
    write_atomically(name, lambda file: np.savez(file, **arrays))


def read(name: str) -> dict[str, np.ndarray]:
    """Every entry of a springsim save file, read into memory and checked for format,
    version, keys, dtypes and shapes (values are checked by the kernel)."""

    def invalid(problem: str) -> ValueError:
        return ValueError(f"{name}: {problem}")

    with open(name, "rb") as file:  # a missing file is an OSError, not a bad file
        try:
            npz = np.load(file, allow_pickle=False)
        except _UNREADABLE as error:
            raise invalid(f"not a springsim save file (not a readable .npz: {error})") from None
        if not isinstance(npz, np.lib.npyio.NpzFile):
            raise invalid("not a springsim save file (a single .npy array, not an .npz)")
        with npz:
            try:
                size = os.fstat(file.fileno()).st_size
                check_headers(npz.zip, size, invalid)  # type: ignore[arg-type]  # open: a zip
                return _read_entries(npz, invalid)
            except _UNREADABLE as error:
                if str(error).startswith(name):
                    raise
                raise invalid(
                    f"truncated, corrupt or foreign ({type(error).__name__}: {error})"
                ) from None


def _read_entries(
    npz: np.lib.npyio.NpzFile, invalid: Callable[[str], ValueError]
) -> dict[str, np.ndarray]:
    """The checked entries of an open NpzFile (see :func:`read`)."""
    keys = set(npz.files)

    def entry(key: str) -> np.ndarray:
        value = npz[key]
        if not isinstance(value, np.ndarray):
            raise invalid(f"entry {key!r} is not a NumPy array")
        return value

    def scalar(key: str, kinds: str) -> np.ndarray:
        value = entry(key)
        if value.shape != () or value.dtype.kind not in kinds:
            raise invalid(f"entry {key!r} must be a single value, got {value.dtype} {value.shape}")
        return value

    if "format" not in keys or "version" not in keys:
        raise invalid("not a springsim save file (it has no 'format' and 'version' entries)")
    if scalar("format", "U").item() != FORMAT:
        raise invalid(f"not a springsim save file (format {quote(entry('format').item())})")
    version = scalar("version", "iu").item()
    if version > FORMAT_VERSION:
        raise invalid(
            f"format version {version} was written by a newer springsim; this one reads "
            f"versions up to {FORMAT_VERSION}: upgrade springsim to load it"
        )
    if version < 1:
        raise invalid(f"unknown format version {version}")
    expected = _KEYS_BY_VERSION[version]
    if keys != expected:
        missing, unexpected = sorted(expected - keys), sorted(keys - expected)
        raise invalid(
            f"entries do not match format version {version}:"
            + (f" missing {', '.join(missing)}" if missing else "")
            + (";" if missing and unexpected else "")
            + (f" unexpected {', '.join(unexpected)}" if unexpected else "")
        )
    data = {"dim": scalar("dim", "iu"), "method": scalar("method", "U")}
    data["_verlet_valid"] = scalar("_verlet_valid", "b")
    for key in _FLOATS:
        data[key] = scalar(key, "f")
    dim = int(data["dim"])
    if dim not in (2, 3):
        raise invalid(f"dim must be 2 or 3, got {dim}")
    for group, count_key in (
        (_NODE_ARRAYS, "positions"),
        (_SPRING_ARRAYS, "springs"),
        (_FACE_ARRAYS, "faces"),
    ):
        rows = entry(count_key).shape[0] if entry(count_key).ndim else -1
        for key, (dtype, columns) in group.items():
            value = entry(key)
            width = dim if columns == "dim" else columns
            shape = (rows,) if width is None else (rows, width)
            kind_ok = (
                value.dtype.kind in "iu" if np.dtype(dtype).kind == "i" else value.dtype == dtype
            )
            if value.shape != shape or not kind_ok:
                raise invalid(
                    f"entry {key!r} must be {np.dtype(dtype)} of shape {shape}"
                    f" (from {count_key!r}), got {value.dtype} {value.shape}"
                )
            data[key] = value
    for key in _VECTORS:
        value = entry(key)
        if value.shape != (dim,) or value.dtype != np.float64:
            raise invalid(
                f"entry {key!r} must be float64 of shape ({dim},), got {value.dtype} {value.shape}"
            )
        data[key] = value
    rows = data["springs"].shape[0]
    data["break_strains"] = entry("break_strains") if version >= 2 else np.full(rows, np.inf)
    if data["break_strains"].shape != (rows,) or data["break_strains"].dtype != np.float64:
        raise invalid(f"entry 'break_strains' must be float64 of shape ({rows},)")
    data["max_strain"] = scalar("max_strain", "f") if version >= 2 else np.array(np.nan)
    data["iterations"] = scalar("iterations", "iu") if version >= 2 else np.array(10)
    data["cg_tolerance"] = scalar("cg_tolerance", "f") if version >= 3 else np.array(1e-8)
    data["cg_max_iterations"] = (
        scalar("cg_max_iterations", "iu") if version >= 3 else np.array(1000)
    )
    for key, default in (("air_density", 1.2), ("drag_coefficient", 0.0)):
        data[key] = scalar(key, "f") if version >= 4 else np.array(default)
    data["divergence_factor"] = (
        scalar("divergence_factor", "f") if version >= 4 else np.array(_DEFAULT_FACTOR)
    )
    data["colliders"] = entry("colliders") if version >= 2 else np.zeros((0, 7))
    if data["colliders"].ndim != 2 or data["colliders"].shape[1] != 7:
        raise invalid(f"entry 'colliders' must have shape (K, 7), got {data['colliders'].shape}")
    if data["colliders"].dtype != np.float64:
        raise invalid(f"entry 'colliders' must be float64, got {data['colliders'].dtype}")
    data.update(check_collider_entries(entry, version, data["colliders"], invalid))
    if version >= 3:
        pressure, counts = entry("pressure"), entry("pressure_counts")
        elements = entry("pressure_elements")
    else:
        pressure, counts = np.zeros((0, 2)), np.zeros(0, dtype=np.int64)
        elements = np.zeros((0, dim), dtype=np.int32)
    if pressure.ndim != 2 or pressure.shape[1] != 2 or pressure.dtype != np.float64:
        raise invalid(
            f"entry 'pressure' must be float64 of shape (B, 2), got {pressure.dtype} "
            f"{pressure.shape}"
        )
    bodies = pressure.shape[0]
    if counts.shape != (bodies,) or counts.dtype.kind not in "iu":
        raise invalid(
            f"entry 'pressure_counts' must be int64 of shape ({bodies},) (from 'pressure'),"
            f" got {counts.dtype} {counts.shape}"
        )
    if elements.ndim != 2 or elements.shape[1] != dim or elements.dtype.kind not in "iu":
        raise invalid(
            f"entry 'pressure_elements' must be int32 of shape (E, {dim}), got "
            f"{elements.dtype} {elements.shape}"
        )
    sizes = counts.tolist()  # Python ints: no overflow in the sum
    if any(size < 0 for size in sizes):
        raise invalid(f"entry 'pressure_counts' holds a negative count: {min(sizes)}")
    if sum(sizes) != elements.shape[0]:
        raise invalid(
            f"entry 'pressure_counts' sums to {sum(sizes)}, but 'pressure_elements' has "
            f"{elements.shape[0]} rows"
        )
    data["pressure"], data["pressure_counts"] = pressure, counts
    data["pressure_elements"] = elements
    if version >= 5:
        data.update(check_drive_entries(entry, dim, invalid))
    if version >= 6:
        data.update(check_contact_entries(entry, data["positions"].shape[0], invalid))
    data["self_collision"] = entry("self_collision") if version >= 6 else np.zeros(0)
    if (
        data["self_collision"].shape not in ((0,), (3,), (4,))
        or data["self_collision"].dtype.kind != "f"
    ):
        raise invalid("entry 'self_collision' must be float64 of shape (3,), (4,) or (0,)")
    if version >= 7:
        data["dissipated"] = scalar("dissipated", "f")
        data["track_energy"] = scalar("track_energy", "b")
        data["crossings"] = scalar("crossings", "iu")
    if version >= 8:
        data["contact_dt"] = scalar("contact_dt", "f")
    return data


def check_collider_entries(
    entry: Callable[[str], np.ndarray],
    version: int,
    colliders: np.ndarray,
    invalid: Callable[[str], ValueError],
) -> dict[str, np.ndarray]:
    """The version 6 entries, checked against ``colliders`` (K rows), or for an older
    file what they hold when there are only planes and spheres."""
    rows = colliders.shape[0]
    if version < 6:
        return {
            "collider_ends": np.zeros((rows, 3)),
            "mesh_counts": np.zeros((0, 2), dtype=np.int64),
            "mesh_vertices": np.zeros((0, 3)),
            "mesh_faces": np.zeros((0, 3), dtype=np.int32),
        }
    data = {key: entry(key) for key in COLLIDER_KEYS}
    ends, counts = data["collider_ends"], data["mesh_counts"]
    if ends.shape != (rows, 3) or ends.dtype != np.float64:
        raise invalid(f"entry 'collider_ends' must be float64 of shape ({rows}, 3)")
    meshes = int(np.count_nonzero(colliders[:, 0] == MESH))
    if counts.shape != (meshes, 2) or counts.dtype.kind not in "iu":
        raise invalid(f"entry 'mesh_counts' must be int64 of shape ({meshes}, 2)")
    if np.any(counts < 0):
        raise invalid("entry 'mesh_counts' holds a negative count")
    for key, dtype, column in (("mesh_vertices", "f", 0), ("mesh_faces", "iu", 1)):
        value = data[key]
        total = sum(int(c) for c in counts[:, column].tolist())
        if value.ndim != 2 or value.shape != (total, 3) or value.dtype.kind not in dtype:
            raise invalid(f"entry {key!r} must have shape ({total}, 3) (from 'mesh_counts')")
    return data


def check_drive_entries(
    entry: Callable[[str], np.ndarray], dim: int, invalid: Callable[[str], ValueError]
) -> dict[str, np.ndarray]:
    """The drive entries of a file, their dtypes and shapes checked (not their values:
    :func:`drives_from_entries` does, with the system's node count)."""
    table, t0, nodes, values = (entry(key) for key in DRIVE_KEYS)
    count = table.shape[0] if table.ndim == 2 else -1
    checks = (
        ("drives", table, table.ndim == 2 and table.shape[1] == 4, "iu", "int64 (D, 4)"),
        ("drive_t0", t0, t0.shape == (count,), "f", f"float64 ({count},) (from 'drives')"),
        ("drive_nodes", nodes, nodes.ndim == 1, "iu", "int64 (n,)"),
        (
            "drive_values",
            values,
            values.ndim == 2 and values.shape[1] == dim,
            "f",
            f"float64 (R, {dim})",
        ),
    )
    for key, value, shaped, kinds, wanted in checks:
        if not shaped or value.dtype.kind not in kinds:
            raise invalid(f"entry {key!r} must be {wanted}, got {value.dtype} {value.shape}")
    return dict(zip(DRIVE_KEYS, (table, t0, nodes, values), strict=True))


def check_contact_entries(
    entry: Callable[[str], np.ndarray], rows: int, invalid: Callable[[str], ValueError]
) -> dict[str, np.ndarray]:
    """The contact entries of a version-6 file, checked for dtype and shape."""
    expected = {
        "radii": (np.float64, (rows,)),
        "groups": (np.int32, (rows,)),
        "contact_law": (np.float64, (4,)),
    }
    data = {}
    for key, (dtype, shape) in expected.items():
        value = entry(key)
        if key == "contact_law" and value.shape == (5,) and value[4] == 1.0:
            shape = (5,)  # segment contact on
        if value.dtype != dtype or value.shape != shape:
            raise invalid(
                f"entry {key!r} must be {np.dtype(dtype)} of shape {shape}, got "
                f"{value.dtype} {value.shape}"
            )
        data[key] = value
    off = entry("contact_off")
    if off.dtype != np.int32 or off.ndim != 2 or off.shape[1] != 2:
        raise invalid(f"entry 'contact_off' must be int32 of shape (K, 2), got {off.shape}")
    data["contact_off"] = off
    return data


# ---------------------------------------------------------------- entries as a System


def system_from_arrays(data: dict[str, np.ndarray], name: str, cls: type[System]) -> System:
    """A new ``cls`` (:class:`springsim.System`, or a subclass) built from checked
    save-format entries (see :func:`springsim.io.load`); the kernel checks every value.
    Errors are ValueError starting with ``name``."""

    def invalid(problem: str) -> ValueError:
        return ValueError(f"{name}: {problem}")

    def contiguous(key: str) -> np.ndarray:
        return np.ascontiguousarray(data[key])

    dim = int(data["dim"])
    try:
        sim = cls(dim=dim)
        sim._add_nodes(
            contiguous("positions"),
            contiguous("velocities"),
            contiguous("masses"),
            contiguous("pinned"),
        )
        sim._add_springs(
            _indices(data["springs"], "springs", invalid),
            contiguous("stiffness"),
            contiguous("damping"),
            contiguous("rest_lengths"),
        )
        sim._add_faces(_indices(data["faces"], "faces", invalid))
        for key in ("external_forces", "uvs", "rest_positions", *_VECTORS):
            sim._set_array(key, contiguous(key))
        for key in _FLOATS:
            if key not in STATE_KEYS:
                setattr(sim, key, float(data[key]))
        sim.method = str(data["method"])
        sim._set_array("break_strains", contiguous("break_strains"))
        sim.iterations = int(data["iterations"])
        sim.cg_tolerance = float(data["cg_tolerance"])
        sim.cg_max_iterations = int(data["cg_max_iterations"])
        sim.air_density = float(data["air_density"])
        sim.drag_coefficient = float(data["drag_coefficient"])
        max_strain = float(data["max_strain"])
        sim.max_strain = None if math.isnan(max_strain) else max_strain
        factor = float(data["divergence_factor"])
        sim.divergence_factor = None if math.isnan(factor) else factor
        if data["self_collision"].size:  # the kernel checks the values
            sim._set_self_collision(*(float(value) for value in data["self_collision"]))
        add_colliders(sim, data)
        elements = _indices(data["pressure_elements"], "pressure_elements", invalid)
        start = 0
        for (nrt, ambient), size in zip(
            data["pressure"].tolist(), data["pressure_counts"].tolist(), strict=True
        ):
            sim._add_pressure(np.ascontiguousarray(elements[start : start + size]), nrt, ambient)
            start += size
        if all(key in data for key in DRIVE_KEYS):  # (files before version 5: none)
            drives = drives_from_entries(data, sim.num_nodes, invalid)
            if drives:
                restore_drives(sim, drives, contiguous("pinned"))
        apply_contact_entries(sim, data)
        if "track_energy" in data:  # (files before version 7: untracked)
            sim.track_energy = bool(data["track_energy"])
        # The state, last (adding nodes resets Verlet's history), through its one
        # definition; files before version 7 start the books and crossings at 0.
        state: dict[str, Any] = {}
        for key in STATE_KEYS:
            value = np.asarray(data[key] if key in data else _STATE_DEFAULTS[key])
            state[key] = np.ascontiguousarray(value) if value.ndim else value.item()
        sim._set_state(state)
    except (ValueError, TypeError) as error:
        if str(error).startswith(name):
            raise
        raise invalid(f"invalid content: {error}") from None
    return sim


def restore_drives(sim: _core.System, drives: list[_Drive], pinned: np.ndarray) -> None:
    """Give a system being rebuilt (a load, an unpickling) its drives, then the pinned
    flags it was saved with: adding a drive pins its nodes, but the original's may have
    been unpinned since through the ``pinned`` view (then the drive still moves them)."""
    pins.set_drives(sim, drives)
    sim._set_array("pinned", pinned)


def _indices(value: np.ndarray, key: str, invalid: Callable[[str], ValueError]) -> np.ndarray:
    """Topology as the int64 the kernel takes, refusing values beyond int64."""
    if value.size and value.dtype.kind == "u" and value.max() > np.iinfo(np.int64).max:
        raise invalid(f"entry {key!r} holds an index beyond any system's size")
    return np.ascontiguousarray(value, dtype=np.int64)


def add_colliders(sim: _core.System, data: dict[str, np.ndarray]) -> None:
    """Add the colliders that checked entries describe to ``sim``, in order."""
    dim = sim.dim
    meshes = iter(data["mesh_counts"].tolist())
    at_vertex = at_face = 0
    for row, end in zip(data["colliders"].tolist(), data["collider_ends"], strict=True):
        kind, *vector, scalar, restitution, friction = row
        center = np.array(vector[:dim])
        if kind in (PLANE, SPHERE):
            sim._add_collider(int(kind), center, scalar, restitution, friction)
        elif kind in (BOX, CAPSULE):
            other = np.ascontiguousarray(end[:dim])
            sim._add_shape(int(kind), center, other, scalar, restitution, friction)
        elif kind == MESH:
            num_vertices, num_faces = next(meshes)
            vertices = data["mesh_vertices"][at_vertex : at_vertex + num_vertices]
            faces = data["mesh_faces"][at_face : at_face + num_faces]
            at_vertex, at_face = at_vertex + num_vertices, at_face + num_faces
            sim._add_mesh(
                np.ascontiguousarray(vertices, dtype=np.float64),
                np.ascontiguousarray(faces, dtype=np.int32),
                scalar,
                restitution,
                friction,
            )
        else:
            raise ValueError(f"unknown collider kind {kind}")


def drives_from_entries(
    data: dict[str, np.ndarray], num_nodes: int, invalid: Callable[[str], ValueError]
) -> list[_Drive]:
    """The drives the entries describe, every value checked (ValueError from
    ``invalid`` naming the problem)."""
    table = data["drives"].tolist()  # Python ints: no overflow in the sums
    t0 = data["drive_t0"].astype(np.float64)
    nodes = data["drive_nodes"]
    values = data["drive_values"].astype(np.float64)
    if nodes.size and (nodes.min() < 0 or nodes.max() >= num_nodes):
        raise invalid(f"entry 'drive_nodes' holds a node out of range [0, {num_nodes})")
    if not np.all(np.isfinite(values)):
        raise invalid("entry 'drive_values' holds a value that is not finite")
    wanted_nodes = sum(k for _kind, k, _steps, _counter in table)
    wanted_rows = sum(k * (steps if kind == _TARGETS else 2) for kind, k, steps, _ in table)
    if wanted_nodes != nodes.size or wanted_rows != values.shape[0]:
        raise invalid(
            f"the drives need {wanted_nodes} nodes and {wanted_rows} rows of values, the "
            f"file has {nodes.size} and {values.shape[0]}"
        )
    drives, node, row = [], 0, 0
    for number, (kind, k, steps, counter) in enumerate(table):
        valid = (
            k >= 1
            and counter >= 0
            and ((kind == _TARGETS and steps >= 1) or (kind == _LINE and steps == 0))
        )
        if not valid or (kind == _LINE and not np.isfinite(t0[number])):
            raise invalid(
                f"entry 'drives': row {number} is not a drive: {[kind, k, steps, counter]}"
            )
        indices = np.array(nodes[node : node + k], dtype=np.int64)
        node += k
        if kind == _TARGETS:
            targets = values[row : row + steps * k].reshape(steps, k, -1).copy()
            drives.append(_Drive(indices, None, targets, counter))
            row += steps * k
        else:
            start, velocity = values[row : row + k].copy(), values[row + k : row + 2 * k].copy()
            drives.append(_Drive(indices, _Line(start, velocity, float(t0[number])), None, counter))
            row += 2 * k
    return drives


def apply_contact_entries(sim: _core.System, data: dict[str, np.ndarray]) -> None:
    """Give ``sim`` (built from a file) its contact settings; absent entries: defaults."""
    if "contact_law" not in data:
        return
    radius, stiffness, restitution, friction = data["contact_law"].tolist()[:4]
    sim._set_contact_law(radius, stiffness, restitution, friction)
    if data["contact_law"].shape == (5,):
        sim._set_segment_contact(True)
    for key in ("radii", "groups"):  # all zero bits: left cold (no memory), as it was saved
        bits = np.ascontiguousarray(data[key])
        if np.any(bits.view(np.uint8)):  # (bits, not values: a radius of -0.0 is kept)
            sim._set_array(key, bits)
    for a, b in data["contact_off"].tolist():
        sim._set_contact_filter(int(a), int(b), False)
