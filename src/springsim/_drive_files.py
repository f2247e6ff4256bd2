"""Driven nodes in save files (format version 5) and pickles.

A file holds the drives that are data: arrays of per-substep targets and the straight
lines of ``pin(velocity=...)``. A callable path is code, which an ``.npz`` without
pickle cannot hold: :func:`springsim.io.save` leaves it out and warns. A pickle keeps
every drive whose path pickle can store; one it cannot (a lambda, a local function)
fails with an error naming the drive.

The entries (see the table in :mod:`springsim.io`):

``drives`` (D, 4) int64
    One row per drive, in order: kind (0 targets, 1 line), driven nodes k, target rows
    per node S (targets; 0 for a line), substeps done (the counter).
``drive_t0`` (D,) float64
    A line's start time t0, s (NaN for targets).
``drive_nodes`` (sum k,) int64
    The driven nodes of every drive, concatenated.
``drive_values`` (R, dim) float64
    Each drive's numbers, concatenated: targets as S × k rows (substep by substep),
    a line as its k start positions, then its k velocities (x = start + v (t − t0)).
"""

from __future__ import annotations

import pickle
import sys
from collections.abc import Callable

import numpy as np

from springsim._drives import _Drive, _Line

#: The save-format entries of the drives (format version 5).
DRIVE_KEYS = ("drives", "drive_t0", "drive_nodes", "drive_values")
_TARGETS, _LINE = 0, 1


def describe(drive: _Drive) -> str:
    """The words "the drive of nodes [...] (path ...)", for messages."""
    nodes = drive.indices.tolist()
    shown = str(nodes) if len(nodes) <= 8 else str(nodes[:8])[:-1] + ", ...]"
    return f"the drive of nodes {shown} (path {drive.function!r})"


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


def check_entries(
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


def _by_value_pickler() -> bool:
    """Whether the pickler at work stores functions by value (cloudpickle, dill: their
    ``dump`` is a Python frame on the stack), so that a lambda path pickles."""
    frame = sys._getframe(1)
    while frame is not None:
        if str(frame.f_globals.get("__name__", "")).startswith(("cloudpickle", "dill")):
            return True
        frame = frame.f_back  # type: ignore[assignment]  # None ends the loop
    return False


def check_picklable(drives: list[_Drive]) -> None:
    """PicklingError naming the drive whose path pickle cannot store (a lambda, a local
    function), instead of pickle's own error about a function (which does not say what
    held it). Under cloudpickle or dill every path goes through."""
    paths = [d for d in drives if d.function is not None and not isinstance(d.function, _Line)]
    if not paths or _by_value_pickler():
        return
    for d in paths:
        try:
            pickle.dumps(d.function, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as error:
            raise pickle.PicklingError(
                f"cannot pickle this System: {describe(d)} cannot be pickled ({error}). "
                "Make the path a module-level function or an instance of a module-level "
                "class, give per-substep targets as an array, stop the drive "
                "(sim.drive(nodes, None)) first, or pickle with cloudpickle"
            ) from error
