"""Pins and drives: holding nodes, dragging them at a constant velocity, prescribed
paths; drives as Python hands them to the kernel and reads them back (:class:`_Drive`,
:class:`_Line`, which files and pickles hold), and the copy of a System that gives each
drive its own progress.

The kernel keeps the drives and moves their nodes in every substep of a step
(csrc/kernel/step/drives.c): along a line, along per-substep targets, or along a Python
function, which the step calls once per substep. The System's instance dictionary keeps
only those functions, as ``_drive_paths`` (drive id -> function).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

from springsim import _core
from springsim._checks import _as_indices, _as_vectors

#: The class of the system a method is called on: springsim.System, or a subclass.
System = TypeVar("System", bound=_core.System)


class _Drive:
    """A drive as files and pickles hold it: nodes that follow a path, a function of
    time (a :class:`_Line` for a drag) or per-substep targets, with the substeps it has
    run (``counter``). A copy of what the kernel keeps (:func:`drives`,
    :func:`set_drives`).

    ``rows`` picks which rows of the function's value drive ``indices``, after some of
    the nodes were removed (None: all of them); ``width`` is how many rows the function
    was written for.
    """

    __slots__ = ("indices", "function", "targets", "counter", "rows", "width")
    function: Any  # the path (a callable) when targets is None

    def __init__(
        self,
        indices: np.ndarray,
        function: Callable[[float], npt.ArrayLike] | None,
        targets: np.ndarray | None,
        counter: int = 0,
        rows: np.ndarray | None = None,
        width: int | None = None,
    ) -> None:
        self.indices, self.function, self.targets, self.counter = (
            indices,
            function,
            targets,
            counter,
        )
        self.rows = rows
        self.width = indices.size if width is None else width


class _Line:
    """A picklable drive path: ``start + velocity (t − t0)``, what ``pin(velocity=...)``
    drags nodes along (the kernel's line drive)."""

    __slots__ = ("start", "velocity", "t0")

    def __init__(self, start: np.ndarray, velocity: np.ndarray, t0: float):
        self.start, self.velocity, self.t0 = start, velocity, t0

    def __call__(self, t: float) -> np.ndarray:
        return self.start + self.velocity * (t - self.t0)


def pin(self: _core.System, indices: npt.ArrayLike, velocity: npt.ArrayLike | None = None) -> None:
    """Pin nodes: hold them where they are, or drag them at a constant velocity.

    A pinned node ignores every force (springs, gravity, drag, contacts) and
    ``energy_loss``. Held (``velocity=None``), its velocity is zero and it stays
    where it is until you move it: write its position (``sim.positions[i] = ...``:
    it is then held there) or :meth:`drive` it. A velocity written to a held node
    does not move it: every :meth:`step` call (and :meth:`run`) starts by setting
    the velocity of each held node to zero. Held nodes therefore add nothing to
    the kinetic energy or the momentum.

    With ``velocity``, the nodes are dragged: from where they are now they move
    in a straight line at that velocity, x(t) = x(t0) + v (t − t0), which is
    :meth:`drive` along that line; their velocity is v, so spring damping,
    energies and momentum see it. Pin them again without a velocity to stop them.

    Pinning nodes that are driven ends their drive (other nodes of the same
    drive carry on).

    Parameters
    ----------
    indices : int, array_like of int, or array_like of bool, shape (N,)
        The nodes, or a boolean mask with one entry per node
        (``sim.positions[:, 1] > 0.9``).
    velocity : array_like, shape (dim,) or (k, dim), optional
        Drag velocity, m/s, finite: one for all the nodes or one per node, with all
        its components (a single number other than 0 is refused).

    Raises
    ------
    TypeError
        Non-integer indices, a non-numeric velocity.
    ValueError
        An index out of range, a velocity of the wrong shape or not finite.
        Nothing changes.
    IndexError
        A boolean mask whose length is not the number of nodes.

    Examples
    --------
    An anchor stays put, whatever velocity the string is given, until it is
    dragged:

    >>> import springsim as ss
    >>> s = ss.string(10, length=1.0, mass=0.1, stiffness=100.0, dim=2)
    >>> s.velocities = (0.5, 0.0)  # every node, the anchor too
    >>> s.step(1e-3, steps=2000)
    >>> s.positions[0].tolist(), s.velocities[0].tolist()
    ([0.0, 0.0], [0.0, 0.0])
    >>> s.pin(0, velocity=(0.5, 0.0))  # drag it: 0.5 m/s along x
    >>> s.step(1e-3, steps=2000)
    >>> round(float(s.positions[0, 0]), 9), round(float(s.velocities[0, 0]), 6)
    (1.0, 0.5)
    >>> s.pin(0)  # held again, where it is
    >>> s.step(1e-3, steps=100)
    >>> round(float(s.positions[0, 0]), 9)
    1.0
    """
    idx = _as_indices(indices, "indices", self.num_nodes)
    if velocity is None:
        self._set_pinned(idx, True)  # checks the indices first: no change if one is bad
        undrive(self, idx)
        self._view("velocities")[idx] = 0.0
        return
    v = _as_vectors(velocity, "velocity", np.float64, (idx.size, self.dim))
    if not np.all(np.isfinite(v)):
        raise ValueError("velocity must be finite")
    self._set_pinned(idx, True)
    if idx.size:  # no nodes, no drive
        line = _Line(np.array(self._view("positions")[idx]), v.copy(), self.time)
        add_drive(self, _Drive(idx, line, None))
        self._view("velocities")[idx] = v


def unpin(self: _core.System, indices: npt.ArrayLike) -> None:
    """Release pinned nodes: forces act on them again.

    They keep the velocity they have (zero if they were held; a dragged or
    driven node flies on at its last velocity), and a drive on them ends.

    Parameters
    ----------
    indices : int, array_like of int, or array_like of bool, shape (N,)
        The nodes, or a boolean mask with one entry per node.

    Raises
    ------
    TypeError, ValueError
        Non-integer indices, an index out of range; nothing changes.
    IndexError
        A boolean mask whose length is not the number of nodes.
    """
    idx = _as_indices(indices, "indices", self.num_nodes)
    self._set_pinned(idx, False)
    undrive(self, idx)


def drive(
    self: _core.System,
    indices: npt.ArrayLike,
    path: Callable[[float], npt.ArrayLike] | npt.ArrayLike | None,
) -> None:
    """Make nodes follow a prescribed path: a shaken string end, a moving hand.

    The nodes are pinned. Before every substep their velocity is set to
    (target − x)/dt, so the step moves them onto the target at the end of the
    substep, and forces and energies see the velocity they really have (the
    other pinned nodes are held still, as in any step). For a constant velocity,
    :meth:`pin` ``(indices, velocity=v)`` is the shorthand. The step does this in
    its C loop; a function ``path`` is called once per substep, with the time at
    the substep's end (the step keeps the GIL for it), and may look at the
    System but not change or step it (RuntimeError).

    Parameters
    ----------
    indices : int, array_like of int, or array_like of bool, shape (N,)
        The driven nodes, or a boolean mask with one entry per node.
    path : callable, array_like or None
        ``path(t) -> positions`` of shape (k, dim) (or broadcastable to it), the
        targets at time t (s); or an array of per-substep targets, shape
        (steps, k, dim) (or broadcastable), used one per substep and then held
        at the last; or None to stop driving these nodes (they stay pinned, at
        rest). Nodes of earlier drives that are not in ``indices`` keep theirs.

    Raises
    ------
    TypeError
        ``path`` is neither callable, an array nor None.
    ValueError
        An index out of range, a path array of the wrong shape or not finite.
        A callable that returns a bad value raises ValueError from ``step``,
        which then changes nothing.
    IndexError
        A boolean mask whose length is not the number of nodes.

    Notes
    -----
    :meth:`save` keeps array paths and :meth:`pin` ``(velocity=...)`` drags; a
    callable path cannot be stored in the file, so ``save`` warns and the loaded
    system holds those nodes still. Pickling keeps a callable that pickle can
    store (a module-level function, an instance of a module-level class); a lambda
    or a local function makes pickling fail with an error naming the drive.

    Examples
    --------
    >>> import numpy as np
    >>> import springsim as ss
    >>> sim = ss.string(5, length=1.0, mass=0.1, stiffness=50.0, dim=2)
    >>> sim.drive(0, lambda t: [0.0, 0.1 * np.sin(2 * np.pi * t)])
    >>> sim.step(1e-3, steps=250)
    >>> round(float(sim.positions[0, 1]), 9)  # at t = 0.25 s: the top of the sine
    0.1
    """
    idx = _as_indices(indices, "indices", self.num_nodes)
    if idx.size and (idx.min() < 0 or idx.max() >= self.num_nodes):
        raise ValueError(f"indices must be in [0, {self.num_nodes})")
    shape = (idx.size, self.dim)
    if path is None:
        new = None
    elif callable(path):
        new = _Drive(idx, path, None)
    else:
        targets = np.asarray(path)
        if targets.dtype.kind not in "biuf":
            raise TypeError("path must be a callable, an array of targets or None")
        if targets.ndim < 1:
            raise ValueError("a path array needs one row of targets per substep")
        try:
            targets = np.broadcast_to(targets, (len(targets), *shape)).astype(np.float64)
        except ValueError:
            raise ValueError(
                f"path must have shape (steps, {idx.size}, {self.dim}), got {np.shape(path)}"
            ) from None
        if not np.all(np.isfinite(targets)):
            raise ValueError("path targets must be finite")
        new = _Drive(idx, None, targets)
    if new is None or not idx.size:
        self._set_pinned(idx, True)
        undrive(self, idx)
        if new is None:
            self._view("velocities")[idx] = 0.0
    else:
        add_drive(self, new)  # pins its nodes and takes them from earlier drives


def copy(self: System) -> System:
    """A deep copy (driven anchors included, each with its own progress)."""
    new = _core.System.copy(self)  # the kernel copies the drives, with their ids
    paths = self.__dict__.get("_drive_paths")
    if paths:
        new.__dict__["_drive_paths"] = dict(paths)
    return new


def undrive(self: _core.System, idx: np.ndarray) -> None:
    """Stop driving nodes ``idx`` (valid indices); the rest of their drives go on."""
    if idx.size:
        self._undrive(idx)
        forget_paths(self)


def held(self: _core.System) -> np.ndarray:
    """Which nodes a step call holds (velocity set to zero): the pinned ones that
    are not driven."""
    held = np.array(self._view("pinned"))
    for row in self._drive_table():
        held[row[2]] = False
    return held


def drives(self: _core.System) -> list[_Drive]:
    """Copies of the system's drives, in the order they were added (what a file or a
    pickle keeps): a line as a :class:`_Line`, a function with the rows it drives."""
    paths = self.__dict__.get("_drive_paths", {})
    found = []
    for drive_id, kind, nodes, counter, t0, values, width, rows in self._drive_table():
        if kind == _core.DRIVE_LINE:
            line = cast(np.ndarray, values)  # (a line always has its values)
            k = nodes.size
            found.append(_Drive(nodes, _Line(line[:k], line[k:], t0), None, counter))
        elif kind == _core.DRIVE_TARGETS:
            found.append(_Drive(nodes, None, values, counter))
        else:
            taken = cast(np.ndarray, rows)  # (a hook always has its rows)
            every = width == nodes.size and np.array_equal(taken, np.arange(width))
            found.append(
                _Drive(nodes, paths.get(drive_id), None, counter, None if every else rows, width)
            )
    return found


def add_drive(self: _core.System, drive: _Drive) -> None:
    """Give the kernel ``drive`` (its function, if it follows one, into
    ``_drive_paths``): its nodes are pinned and leave the drives that had them."""
    nodes = np.ascontiguousarray(drive.indices, dtype=np.int64)
    counter, width = int(drive.counter), getattr(drive, "width", None) or nodes.size
    rows = getattr(drive, "rows", None)
    if drive.targets is not None:
        targets = np.ascontiguousarray(drive.targets, dtype=np.float64)
        self._add_drive(_core.DRIVE_TARGETS, nodes, targets, 0.0, nodes.size, None, counter)
    elif isinstance(drive.function, _Line):
        line = drive.function
        start, velocity = (
            np.broadcast_to(np.asarray(a, dtype=np.float64), (width, self.dim))
            for a in (line.start, line.velocity)
        )
        if rows is not None:  # nodes were removed: the rows still driven
            start, velocity = start[rows], velocity[rows]
        values = np.ascontiguousarray(np.concatenate([start, velocity]))
        self._add_drive(_core.DRIVE_LINE, nodes, values, float(line.t0), nodes.size, None, counter)
    else:
        if rows is not None:
            rows = np.ascontiguousarray(rows, dtype=np.int64)
        drive_id = self._add_drive(_core.DRIVE_HOOK, nodes, None, 0.0, width, rows, counter)
        self.__dict__.setdefault("_drive_paths", {})[drive_id] = drive.function
    forget_paths(self)


def set_drives(self: _core.System, drives: list[_Drive]) -> None:
    """Make ``drives`` the system's drives (a loaded file's, a pickle's), in order: a
    node of two of them follows the later."""
    self._clear_drives()
    self.__dict__["_drive_paths"] = {}
    for drive in drives:
        add_drive(self, drive)


def forget_paths(self: _core.System) -> None:
    """Drop the functions of drives that are gone (their nodes were released or
    removed) from ``_drive_paths``."""
    paths = self.__dict__.get("_drive_paths")
    if paths:
        kept = set(self._hook_drives())
        self.__dict__["_drive_paths"] = {k: f for k, f in paths.items() if k in kept}
