"""Long runs: many steps in C between records, a progress bar, Ctrl-C that keeps what
was recorded: :meth:`springsim.System.run`."""

from __future__ import annotations

import math
import operator
import time
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from springsim import _core
from springsim._checks import _as_indices
from springsim._warn import warn
from springsim.analysis import diagnostics
from springsim.colliders import collider_rows, collider_triangles
from springsim.model.pins import held
from springsim.stepping import divergence
from springsim.stepping.history import ENERGY_TERMS, History

#: The class of the system a run is called on: springsim.System, or a subclass.
System = TypeVar("System", bound=_core.System)

#: Target wall time of one call into C, s: short enough that the progress bar moves
#: and Ctrl-C is answered promptly, long enough that the Python between calls is noise.
CHUNK_SECONDS = 0.1
#: Runs predicted to take longer than this (s) show a progress bar.
PROGRESS_AFTER = 1.0
#: Records by default: about this many.
DEFAULT_RECORDS = 1000


def _count(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an int, not bool")
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an int, not {type(value).__name__}") from None
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def _seconds(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number of seconds, not {type(value).__name__}")
    value = float(value)
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be a positive, finite time in seconds, got {value}")
    return value


def _schedule(total: int, record_every: int, frames: int) -> tuple[list[int], set[int], set[int]]:
    """The step counts at which the run stops to record (0 and total included)."""
    records = set(range(0, total, record_every)) | {total}
    frame_steps = set()
    if frames:
        frame_steps = set(np.round(np.linspace(0, total, frames)).astype(int).tolist())
    return sorted(records | frame_steps), records, frame_steps


def _bar_class() -> Any:
    """tqdm.auto's bar (a widget in a notebook) if ipywidgets, which draws the widget, is
    installed; tqdm's text bar otherwise. (tqdm.auto in a notebook without ipywidgets
    warns, TqdmWarning "IProgress not found", before it falls back to the text bar.)"""
    try:
        import ipywidgets  # noqa: F401
    except Exception:  # missing (ImportError), or broken: the text bar works anyway
        from tqdm.std import tqdm

        return tqdm
    from tqdm.auto import tqdm

    return tqdm


class _Progress:
    """A tqdm bar (a widget in notebooks that have ipywidgets, a line of text
    elsewhere), or nothing."""

    def __init__(self, total: int, wanted: bool):
        self.bar: Any = None  # a tqdm bar once started
        self.total = total
        self.wanted = wanted

    def start_if_long(self, done: int, seconds_per_step: float) -> None:
        if self.bar is not None or not self.wanted:
            return
        if seconds_per_step * (self.total - done) < PROGRESS_AFTER:
            return
        try:
            tqdm = _bar_class()
        except ImportError:  # pragma: no cover - tqdm is a dependency
            self.wanted = False
            return
        self.bar = tqdm(total=self.total, initial=done, unit="step", desc="springsim run")

    def update(self, steps: int) -> None:
        if self.bar is not None:
            self.bar.update(steps)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _occurrences(pairs: np.ndarray) -> np.ndarray:
    """(lower node, higher node, k) for each node pair: k equal pairs come before it."""
    ends = np.sort(pairs, axis=1)
    _, group = np.unique(ends, axis=0, return_inverse=True)
    group = group.reshape(-1)
    order = np.argsort(group, kind="stable")  # equal pairs together, in spring order
    grouped, count = group[order], np.arange(len(group))
    first = np.r_[True, grouped[1:] != grouped[:-1]][: len(group)]
    rank = np.empty(len(group), dtype=np.int64)
    rank[order] = count - np.maximum.accumulate(np.where(first, count, 0))
    return np.column_stack([ends, rank])


def _spring_rows(start: np.ndarray, rows: np.ndarray, current: np.ndarray) -> np.ndarray:
    """Where the springs ``start[rows]`` (node pairs) are in ``current``, or -1 if gone.

    Removing springs (tearing, remove_springs) keeps the others in order, so the k-th
    spring joining two nodes stays the k-th: a spring is followed by its nodes and k.
    """
    if np.array_equal(start, current):
        return rows
    both = np.concatenate([_occurrences(start)[rows], _occurrences(current)])
    _, ids = np.unique(both, axis=0, return_inverse=True)
    ids = ids.reshape(-1)
    where = np.full(len(both), -1, dtype=np.int64)
    where[ids[len(rows) :]] = np.arange(len(current))
    return where[ids[: len(rows)]]


def _edge_values(sim: _core.System, start: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, ...]:
    """Tension (N) and strain (l/L − 1; 0 where L = 0) of the springs ``start[rows]``
    now; NaN for those gone."""
    found = _spring_rows(start, rows, np.asarray(sim._view("springs"), dtype=np.int64))
    now = found[found >= 0]
    tension, strain = np.full(len(rows), np.nan), np.full(len(rows), np.nan)
    tension[found >= 0] = sim.spring_tensions()[now]
    rest, length = np.asarray(sim._view("rest_lengths"))[now], sim.spring_lengths()[now]
    strain[found >= 0] = np.divide(length, rest, out=np.ones(len(now)), where=rest > 0) - 1.0
    return tension, strain


def _attach_history(error: BaseException, history: History) -> None:
    """Put the run's records on the error as ``error.history``, with a note saying so."""
    try:
        error.history = history  # type: ignore[attr-defined]
    except (AttributeError, TypeError):  # pragma: no cover - an exception without __dict__
        return
    if hasattr(error, "add_note"):  # Python >= 3.11
        error.add_note(
            f"springsim: the run's records so far ({len(history)}, {history.steps} steps) "
            "are on this exception's .history"
        )


def run(
    self: System,
    duration: float,
    dt: float,
    method: str | None = None,
    record_every: int | None = None,
    frames: int | None = None,
    frame_nodes: npt.ArrayLike | None = None,
    progress: bool = True,
    callback: Callable[[System], object] | None = None,
) -> History:
    """Step for ``duration`` seconds, recording energies, momentum and frames.

    ``round(duration / dt)`` substeps of ``dt`` run in C between records (in calls
    of about 0.1 s, so that the progress bar moves and Ctrl-C is answered).
    While it runs, :attr:`track_energy` is on, so the record holds the energy
    dissipated so far as well as every energy term.

    Parameters
    ----------
    duration, dt : float
        Seconds, > 0; ``duration`` at least ``dt`` (a shorter one raises
        ValueError rather than run a whole step, longer than asked).
    method : str, optional
        The integrator (default: :attr:`method`).
    record_every : int, optional
        Substeps between records (default: about 1000 records in all). The start
        and the end are always recorded.
    frames : int, optional
        Frames to keep, at evenly spaced times from start to end (``frames=1``:
        the start only): positions, velocities and pins of ``frame_nodes``, and
        the tension and strain of the springs among them (see :class:`History`).
        None (default): none. A run of n substeps has n + 1 distinct times: asking
        for more frames than that warns (UserWarning) and keeps one frame per
        substep.
    frame_nodes : array_like of int or of bool, optional
        The nodes the frames hold, or a boolean mask with one entry per node
        (default: all).
    progress : bool
        Show a progress bar (tqdm's: a widget in a notebook that has ipywidgets, a
        line of text elsewhere) when the run will take longer than about a second.
    callback : callable, optional
        ``callback(sim)`` after each record; return True to stop the run there.
        An exception it raises ends the run and propagates, with the records so
        far (that record included) on its ``history`` attribute.

    Returns
    -------
    History
        The records; ``interrupted`` is True if the run stopped early: Ctrl-C
        (KeyboardInterrupt) or the callback. The system stays where it stopped.
        After a Ctrl-C the last record is where it stopped, and ``steps`` counts
        every substep taken (``steps * dt`` is the time advanced).

    Raises
    ------
    TypeError, ValueError
        A bad argument or a bad value in the system; nothing has run. A drive path
        that returns a bad target part-way raises ValueError too, from the step call
        it spoils: that call is undone, the earlier ones stand, and the records so
        far are on the error's ``history``.
    springsim.UnstableError
        A step blew up: the system is rolled back to the start of that call (see
        :meth:`step`), and the error's ``history`` attribute holds the records so far.
    Exception
        Whatever ``callback`` raised, with the records so far on its ``history``
        attribute (and a note saying so); the system stays where it stopped.

    Examples
    --------
    A string falls from the horizontal; damping takes some of its energy, and
    ``total + dissipated`` stays where it started:

    >>> import springsim as ss
    >>> sim = ss.string(20, length=1.0, mass=0.2, stiffness=200.0, damping=0.05, dim=2)
    >>> h = sim.run(2.0, dt=5e-4, method="rk4", record_every=200, frames=11,
    ...             progress=False)
    >>> len(h.times), h.frames.shape, h.steps
    (21, (11, 20, 2), 4000)
    >>> books = h.total + h.dissipated - h.total[0]
    >>> bool(h.dissipated[-1] > 0), bool(abs(books).max() < 1e-4 * abs(h.total).max())
    (True, True)
    """
    duration, dt = _seconds(duration, "duration"), _seconds(dt, "dt")
    method = self.method if method is None else method
    if duration < dt * (1 - 1e-9):  # (a duration of one dt, rounded, is one step)
        raise ValueError(
            f"duration = {duration:g} s is shorter than one step, dt = {dt:g} s: a run "
            "takes round(duration / dt) whole steps. Use a smaller dt, or step(dt) for a "
            "single step"
        )
    total = max(1, round(duration / dt))
    record_every = (
        max(1, total // DEFAULT_RECORDS)
        if record_every is None
        else _count(record_every, "record_every", 1)
    )
    frame_count = 0 if frames is None else _count(frames, "frames", 1)
    if frame_count > total + 1:
        warn(
            f"frames = {frame_count} is more than the run's {total} steps have distinct "
            f"times ({total + 1}, start and end included): the history keeps "
            f"{total + 1} frames, one per step. Use a smaller dt for more"
        )
    nodes = (
        np.arange(self.num_nodes)
        if frame_nodes is None
        else _as_indices(frame_nodes, "frame_nodes", self.num_nodes)
    )
    if nodes.size and (nodes.min() < 0 or nodes.max() >= self.num_nodes):
        raise ValueError(
            f"frame_nodes must be in [0, {self.num_nodes}), got {nodes.min()}..{nodes.max()}"
        )
    nodes = nodes.astype(np.int64)
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable, not {type(callback).__name__}")
    self._validate()  # a bad value raises here, before anything is recorded
    # Check the method name the same way step does, without stepping.
    if method not in _core.METHODS:
        raise ValueError(f"unknown method {method!r}; valid: {', '.join(_core.METHODS)}")

    stops, record_steps, frame_steps = _schedule(total, record_every, frame_count)
    columns: dict[str, list[Any]] = {
        name: [] for name in (*ENERGY_TERMS, "times", "dissipated", "momentum")
    }
    # One tuple per frame (appended whole, so that a Ctrl-C cannot leave half of one):
    # time, positions, velocities, pinned flags, edge tensions, edge strains.
    frame_records: list[tuple[Any, ...]] = []
    renumber = np.full(self.num_nodes, -1, dtype=np.int64)
    renumber[nodes] = np.arange(len(nodes))
    start_springs = np.array(self._view("springs"), dtype=np.int64)
    springs = renumber[start_springs]
    edge_rows = np.flatnonzero(np.all(springs >= 0, axis=1))
    edges = springs[edge_rows]
    corners = renumber[np.asarray(self._view("faces"), dtype=np.int64)]
    faces = corners[np.all(corners >= 0, axis=1)]
    colliders, shapes = collider_rows(self), collider_triangles(self)
    radii = (
        np.array(self._view("radii")[nodes]) if self._has_radii() else None
    )  # (no array if none)

    # The first step call would set the held pins' velocities to zero: do it before the
    # first record, so that it holds the energy the run starts with (undone if the run
    # fails before its first substep, which then changes nothing).
    start_nodes, start_time = self.num_nodes, self.time
    velocities = self._view("velocities")
    stopped = np.flatnonzero(held(self) & np.any(velocities != 0.0, axis=1))
    stopped_velocities = np.array(velocities[stopped])
    velocities[stopped] = 0.0
    was_tracking, start_dissipated = self.track_energy, self.dissipated
    self.track_energy = True
    # The C calls are sized by the clock; torn springs leave only at the records (the
    # spring order, and so the rounding, then depends on steps alone): _step_in_run
    # leaves them in place.
    done, interrupted, bar = 0, False, _Progress(total, progress)
    seconds_per_step = None

    def add_row() -> None:
        energy, momentum = diagnostics.energy(self), self.momentum()
        row = {term: getattr(energy, term) for term in ENERGY_TERMS}
        row.update(times=self.time, dissipated=self.dissipated - start_dissipated)
        for name, value in row.items():
            columns[name].append(value)
        columns["momentum"].append(momentum)

    def record(step: int) -> bool:
        """Record at `step`; True if the callback asks to stop."""
        self._tear()  # springs cut since the last stop go now: at steps, not seconds
        if step in record_steps:
            add_row()
        if step in frame_steps:
            tension, strain = _edge_values(self, start_springs, edge_rows)
            x, v = (
                np.array(self._view("positions")[nodes]),
                np.array(self._view("velocities")[nodes]),
            )
            pinned = np.array(self._view("pinned")[nodes])
            frame_records.append((self.time, x, v, pinned, tension, strain))
        return bool(callback(self)) if callback is not None and step in record_steps else False

    def history() -> History:
        # A Ctrl-C inside record() may leave one column a value longer: cut to the rest.
        rows = min(len(c) for c in columns.values())
        shown = len(frame_records)

        def frame_column(k: int, *shape: int, dtype: Any = np.float64) -> np.ndarray:
            # (shown, ...) even with no frames or no nodes (reshape(-1, 0, dim) cannot
            # infer the first axis)
            return np.array([r[k] for r in frame_records], dtype=dtype).reshape(shown, *shape)

        return History(
            times=columns["times"][:rows],
            **{term: columns[term][:rows] for term in ENERGY_TERMS},
            dissipated=columns["dissipated"][:rows],
            momentum=np.array(columns["momentum"][:rows]).reshape(-1, self.dim),
            frame_times=frame_column(0),
            frames=frame_column(1, len(nodes), self.dim),
            frame_velocities=frame_column(2, len(nodes), self.dim),
            frame_pinned=frame_column(3, len(nodes), dtype=bool),
            frame_nodes=nodes,
            edges=edges,
            frame_tensions=frame_column(4, len(edges)),
            frame_strains=frame_column(5, len(edges)),
            faces=faces,
            colliders=colliders,
            collider_triangles=shapes,
            radii=radii,
            dim=self.dim,
            dt=dt,
            method=method,
            steps=done,
            interrupted=interrupted,
        )

    # (steps done, self.time) at one moment, taken together before each call: a Ctrl-C
    # can land after a call's substeps ran but before `done` counts them, so after one
    # the count is rebuilt from the clock (a call runs all its substeps or, rolled
    # back, none).
    anchor = (0, self.time)

    def steps_taken() -> int:
        steps, at = anchor
        return steps + max(0, round((self.time - at) / dt))

    try:
        stop = record(0)
        for target in stops[1:]:
            if stop:
                interrupted = True
                break
            while done < target:
                chunk = target - done
                if seconds_per_step is not None:
                    chunk = min(chunk, max(1, int(CHUNK_SECONDS / max(seconds_per_step, 1e-12))))
                else:
                    chunk = min(chunk, 16)  # a short first call measures the speed
                started = time.perf_counter()
                anchor = (done, self.time)
                # One set of divergence books over the run, checked at every call's end;
                # what the callback (or anything between the calls) put in counts.
                books = divergence.CONTINUE if done else divergence.START
                self._step_in_run(dt, chunk, method, books | divergence.CHECK_END)
                elapsed = time.perf_counter() - started
                seconds_per_step = elapsed / chunk
                done += chunk
                if bar.bar is None:
                    bar.start_if_long(done, seconds_per_step)  # starts at `done`
                else:
                    bar.update(chunk)
            stop = record(done)
    except KeyboardInterrupt:
        interrupted = True
        done = steps_taken()
        try:
            # End the records where the system stopped (the calls are sized by the
            # clock, so that is rarely at a record); a second Ctrl-C skips this.
            rows = min(len(c) for c in columns.values())
            if rows == 0 or columns["times"][rows - 1] != self.time:
                for column in columns.values():
                    del column[rows:]
                add_row()
        except KeyboardInterrupt:
            pass
    except Exception as error:
        # A blow-up (UnstableError: step rolled back its call) or a failing callback:
        # the error carries what was recorded.
        if done == 0 and self.time == start_time and self.num_nodes == start_nodes:
            self._view("velocities")[stopped] = stopped_velocities  # nothing stepped
        _attach_history(error, history())
        raise
    finally:
        bar.close()
        self._tear()
        self.track_energy = was_tracking
    return history()
