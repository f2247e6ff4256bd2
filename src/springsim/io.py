"""Files: save and load a whole System (``.npz``), read and write Wavefront OBJ meshes.

:func:`save` / :func:`load` are an exact round trip: every array, every parameter and
the integrators' hidden state, so that a loaded system steps bit for bit like the one
that was saved. The file is a plain NumPy ``.npz`` archive (no pickle), readable with
``np.load`` from any language that reads ``.npy``:

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
``iterations``        (), int64             XPBD constraint passes per substep
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
``contact_law``       (4,) float64          contact radius, stiffness, restitution,
                                            friction
``contact_off``       (K, 2) int32          the group pairs that do not touch
``self_collision``    (3,) or (0,) float64  thickness, stiffness, friction of
                                            :meth:`System.enable_self_collision`; empty: off
``dissipated``        (), float64           :attr:`System.dissipated`, J
``track_energy``      (), bool              :attr:`System.track_energy`
``crossings``         (), int64             :attr:`System.self_collision_crossings`
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
books at 0, untracked, and the crossings counted from 0.

A drive whose path is a function cannot be kept (it is code, and the file holds no
pickle): :func:`save` warns and leaves it out, and the loaded system holds those nodes
still (they stay pinned). Per-substep target arrays and the drags of
``pin(velocity=...)`` are kept, with their progress, and step bit for bit as before.

Gas body ids are not stored: :func:`load` adds the bodies in order, numbered 0, 1, ...,
which are the original's ids unless bodies were removed from it (ids are never
reused, so the bodies after a removed one get new, lower ids).

:func:`read_obj` builds a mesh system from an OBJ file as modelling programs write it,
and :func:`write_obj` writes a frame that Blender or MeshLab opens (both live in
:mod:`springsim.obj`); :func:`read_mesh` reads the other mesh formats, through meshio
(STL, PLY, VTK, ...; :mod:`springsim.mesh_io`), and :func:`write_vtk` writes a run's
frames as a ParaView time series (:mod:`springsim.vtk_export`).

Every problem with a file's content raises ValueError naming the file (and, for an OBJ,
the line: ``path:line: problem``); nothing is half-loaded. A missing file raises the
usual OSError.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from springsim import _core
from springsim._collider_files import add_colliders, check_collider_entries, collider_entries
from springsim._drive_files import DRIVE_KEYS as _DRIVE_KEYS
from springsim._drive_files import check_entries as _check_drive_entries
from springsim._drive_files import describe as _describe_drive
from springsim._drive_files import drive_entries as _drive_entries
from springsim._drive_files import drives_from_entries as _drives_from_entries
from springsim._files import StrPath
from springsim._files import path_name as _path_name
from springsim._files import quote as _quote
from springsim._files import write_atomically as _write_atomically
from springsim._npz import (
    _DEFAULT_FACTOR,
    _FACE_ARRAYS,
    _FLOATS,
    _KEYS_BY_VERSION,
    _NODE_ARRAYS,
    _SPRING_ARRAYS,
    _UNREADABLE,
    _VECTORS,
    FORMAT,
    FORMAT_VERSION,
    _check_headers,
)
from springsim._touch_files import apply_touch_entries, check_touch_entries, touch_entries
from springsim._warn import warn as _warn
from springsim.mesh_io import read_mesh
from springsim.obj import read_obj, write_obj
from springsim.system import System
from springsim.vtk_export import write_vtk

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


def _pressure_entries(sim: _core.System) -> dict[str, np.ndarray]:
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


def _check_savable(sim: _core.System, name: str) -> None:
    """ValueError naming the file if ``sim`` holds a value :func:`load` would refuse
    (possible only after writing through a view, which the kernel cannot check when it
    happens): the kernel's validation checks every array a view can write, with the
    limits :func:`load` applies."""
    try:
        sim._validate()
    except ValueError as error:
        raise ValueError(f"cannot save to {name}: the system is invalid: {error}") from None


def save(sim: System, path: StrPath) -> None:
    """Save a system's every array and parameter to a ``.npz`` file.

    The file holds the whole state (see the table in :mod:`springsim.io`), including
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
    name = _path_name(path)
    _check_savable(sim, name)
    arrays: dict[str, Any] = state_arrays(sim)  # (np.savez's stubs want **Any)
    _, dropped = _drive_entries(sim.__dict__.get("_drives", []), sim.dim)
    if dropped:  # before writing: a warning turned into an error writes nothing
        _warn(
            f"save() cannot keep {len(dropped)} drive{'s' * (len(dropped) > 1)}, "
            f"{'; '.join(map(_describe_drive, dropped))}: a function is code, which the "
            "file cannot hold. The loaded system holds those nodes still (pinned); "
            "drive them again after load(). Per-substep target arrays and "
            "pin(velocity=...) drags are kept"
        )
    _write_atomically(name, lambda file: np.savez(file, **arrays))


def state_arrays(sim: System, drives: bool = True) -> dict[str, np.ndarray]:
    """Every entry of the save format for ``sim``: copies of its exact bits
    (``drives=False``: the drive entries empty, for a pickle, which keeps the drives
    themselves)."""
    arrays = {
        "format": np.array(FORMAT),
        "version": np.array(FORMAT_VERSION, dtype=np.int64),
        "dim": np.array(sim.dim, dtype=np.int64),
    }
    for array in (*_NODE_ARRAYS, *_SPRING_ARRAYS, *_FACE_ARRAYS, *_VECTORS):
        arrays[array] = np.array(sim._view(array))  # a copy of the kernel's exact bits
    for scalar in _FLOATS:
        arrays[scalar] = np.array(getattr(sim, scalar), dtype=np.float64)
    arrays["method"] = np.array(sim.method)
    arrays["_verlet_valid"] = np.array(sim._verlet_valid, dtype=np.bool_)
    arrays.update(collider_entries(sim))
    arrays["break_strains"] = np.array(sim.break_strains)
    arrays["iterations"] = np.array(sim.iterations, dtype=np.int64)
    arrays["cg_tolerance"] = np.array(sim.cg_tolerance, dtype=np.float64)
    arrays["cg_max_iterations"] = np.array(sim.cg_max_iterations, dtype=np.int64)
    arrays["max_strain"] = np.array(np.nan if sim.max_strain is None else sim.max_strain)
    arrays["air_density"] = np.array(sim.air_density, dtype=np.float64)
    arrays["drag_coefficient"] = np.array(sim.drag_coefficient, dtype=np.float64)
    factor = sim.divergence_factor
    arrays["divergence_factor"] = np.array(np.nan if factor is None else factor)
    setting = sim.self_collision
    arrays["self_collision"] = np.array([] if setting is None else setting[:3], dtype=np.float64)
    arrays["dissipated"] = np.array(sim.dissipated, dtype=np.float64)
    arrays["track_energy"] = np.array(sim.track_energy, dtype=np.bool_)
    arrays["crossings"] = np.array(sim.self_collision_crossings, dtype=np.int64)
    arrays.update(_pressure_entries(sim))
    arrays.update(touch_entries(sim))
    kept = sim.__dict__.get("_drives", []) if drives else []
    arrays.update(_drive_entries(kept, sim.dim)[0])
    return arrays


def _read_npz(name: str) -> dict[str, np.ndarray]:
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
                _check_headers(npz.zip, size, invalid)  # type: ignore[arg-type]  # open: a zip
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
    """The checked entries of an open NpzFile (see :func:`_read_npz`)."""
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
        raise invalid(f"not a springsim save file (format {_quote(entry('format').item())})")
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
        data.update(_check_drive_entries(entry, dim, invalid))
    if version >= 6:
        data.update(check_touch_entries(entry, data["positions"].shape[0], invalid))
    data["self_collision"] = entry("self_collision") if version >= 6 else np.zeros(0)
    if data["self_collision"].shape not in ((0,), (3,)) or data["self_collision"].dtype.kind != "f":
        raise invalid("entry 'self_collision' must be float64 of shape (3,) or (0,)")
    if version >= 7:
        data["dissipated"] = scalar("dissipated", "f")
        data["track_energy"] = scalar("track_energy", "b")
        data["crossings"] = scalar("crossings", "iu")
    return data


def _indices(value: np.ndarray, key: str, invalid: Callable[[str], ValueError]) -> np.ndarray:
    """Topology as the int64 the kernel takes, refusing values beyond int64."""
    if value.size and value.dtype.kind == "u" and value.max() > np.iinfo(np.int64).max:
        raise invalid(f"entry {key!r} holds an index beyond any system's size")
    return np.ascontiguousarray(value, dtype=np.int64)


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
    name = _path_name(path)
    return system_from_arrays(_read_npz(name), name)


def system_from_arrays(
    data: dict[str, np.ndarray], name: str = "<arrays>", cls: type[System] | None = None
) -> System:
    """Build a system from checked save-format entries (see :func:`load`); the
    kernel checks every value. Errors are ValueError starting with ``name``."""

    def invalid(problem: str) -> ValueError:
        return ValueError(f"{name}: {problem}")

    def contiguous(key: str) -> np.ndarray:
        return np.ascontiguousarray(data[key])

    dim = int(data["dim"])
    try:
        sim = (System if cls is None else cls)(dim=dim)
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
        for key in ("external_forces", "uvs", "rest_positions", "_prev_accel", *_VECTORS):
            sim._set_array(key, contiguous(key))
        for key in _FLOATS:
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
        if all(key in data for key in _DRIVE_KEYS):  # (files before version 5: none)
            drives = _drives_from_entries(data, sim.num_nodes, invalid)
            if drives:
                sim._set_drives(drives)
        apply_touch_entries(sim, data)
        if "dissipated" in data:  # (files before version 7: the books start at 0)
            sim.dissipated = float(data["dissipated"])
            sim.track_energy = bool(data["track_energy"])
            sim._set_self_collision_crossings(int(data["crossings"]))
        sim._verlet_valid = bool(data["_verlet_valid"])  # last: adding nodes resets it
    except (ValueError, TypeError) as error:
        if str(error).startswith(name):
            raise
        raise invalid(f"invalid content: {error}") from None
    return sim
