"""Long runs: many steps in C between records, a progress bar, Ctrl-C that keeps what
was recorded: :meth:`springsim.System.run`."""

from __future__ import annotations

import math
import operator
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from springsim import _core
from springsim._checks import _as_indices
from springsim.analysis import diagnostics
from springsim.analysis.diagnostics import kernel_dissipated
from springsim.colliders import collider_rows, collider_triangles
from springsim.model.pins import held
from springsim.stepping import divergence, probes
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


#: A frame interval within this fraction of dt of a whole number of steps is taken in
#: whole steps: a frame time that is a whole step up to round-off gets no tiny substep.
WHOLE_STEP = 1e-9


def _legs(duration: float, dt: float, legs: int) -> tuple[int, int]:
    """How each of ``legs`` equal intervals of a run of ``duration`` is stepped: (whole
    substeps of dt, 1 if one shortened substep then takes it to its end exactly, else 0).

    The interval L = duration / legs takes n = floor(L / dt) whole substeps and a last
    one of L − n dt; or, when L is n dt within WHOLE_STEP dt (n >= 1), n whole ones.
    """
    ratio = duration / legs / dt
    whole = round(ratio)
    if whole >= 1 and abs(ratio - whole) <= WHOLE_STEP:
        return whole, 0
    return math.floor(ratio), 1


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
    springs: npt.ArrayLike | None = None,
    bodies: bool | Sequence[npt.ArrayLike] | None = None,
) -> History:
    """Step for ``duration`` seconds, recording energies, momentum, frames and probes.

    Substeps of ``dt`` run in C between records (in calls of about 0.1 s, so that
    the progress bar moves and Ctrl-C is answered). The run ends at exactly
    ``duration`` after it began, and every frame falls exactly on its time: the last
    substep before a frame (and before the end) is shortened to land on it, unless
    the frame is a whole number of steps away (within 1e-9 dt). While it runs,
    :attr:`track_energy` is on, so the record holds the energy dissipated so far as
    well as every energy term.

    Parameters
    ----------
    duration, dt : float
        Seconds, > 0; ``duration`` at least ``dt`` (a shorter one raises
        ValueError: a sign of a slip in units).
    method : str, optional
        The integrator (default: :attr:`method`).
    record_every : int, optional
        Substeps between records (default: about 1000 records in all). The start,
        the end and every frame are recorded too; a shortened substep counts as one.
    frames : int, optional
        Frames to keep, at the times t0 + k·duration/(frames − 1), exactly
        ``numpy.linspace(t0, t0 + duration, frames)`` (``frames=1``: the start
        only): positions, velocities and pins of ``frame_nodes``, the tension and
        strain of the springs among them, and the probes ``springs`` and
        ``bodies`` (see :class:`History`). Between two frames the run takes
        whole substeps of ``dt`` and then one shorter substep to the frame's
        time, so the frames are evenly spaced, as a spectrum needs, whatever
        ``dt``. A frame interval shorter than ``dt`` is one short substep. None
        (default): no frames.
    frame_nodes : array_like of int or of bool, optional
        The nodes the frames hold, or a boolean mask with one entry per node
        (default: all); :meth:`History.node` reads one.
    progress : bool
        Show a progress bar (tqdm's: a widget in a notebook that has ipywidgets, a
        line of text elsewhere) when the run will take longer than about a second.
    callback : callable, optional
        ``callback(sim)`` after each record; return True to stop the run there.
        An exception it raises ends the run and propagates, with the records so
        far (that record included) on its ``history`` attribute.
    springs : array_like of int or of bool, optional
        Springs (indices at the start, or a mask) whose length and tension each
        frame records, followed through tearing (NaN once gone):
        :meth:`History.spring`. Needs ``frames``.
    bodies : True or sequence of array_like, optional
        Groups of nodes whose mass, momentum, centre of mass, kinetic energy (in
        bulk and internal), elastic and gravitational energy each frame records:
        True for the connected pieces of :meth:`bodies`, or a list of node index
        arrays or boolean masks (one per body): :meth:`History.body`. Needs
        ``frames``.

    Returns
    -------
    History
        The records; ``interrupted`` is True if the run stopped early: Ctrl-C
        (KeyboardInterrupt) or the callback. The system stays where it stopped.
        After a Ctrl-C the last record is where it stopped, and ``steps`` counts
        every substep taken (shortened ones included).

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

    Notes
    -----
    A shortened substep is a step like any other, of a shorter dt: ``energy_loss``
    (a fraction per substep) acts on it, and a drive given as an array of
    per-substep targets takes its next row there (give a drive a function of time,
    or pick frames a whole number of steps apart, to keep its timing). Node–node
    contact's stiffness from the step keeps the run's ``dt`` on it, so the law
    does not change at the frames.

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

    Frames fall on their times even when ``dt`` does not divide their interval
    (here 1/6 s: 166 whole substeps and a shortened one each):

    >>> import numpy as np
    >>> h = sim.run(1.0, dt=1e-3, frames=7, progress=False)
    >>> bool(np.allclose(h.frame_times - h.frame_times[0], np.linspace(0, 1, 7),
    ...                  rtol=0, atol=1e-13)), h.steps
    (True, 1002)
    """
    duration, dt = _seconds(duration, "duration"), _seconds(dt, "dt")
    method = self.method if method is None else method
    if duration < dt * (1 - WHOLE_STEP):  # (a duration of one dt, rounded, is one step)
        raise ValueError(
            f"duration = {duration:g} s is shorter than one step, dt = {dt:g} s. Use a "
            "smaller dt, or step(dt) for a single step"
        )
    frame_count = 0 if frames is None else _count(frames, "frames", 1)
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
    probed_springs = probes.spring_selection(self, springs)
    groups = probes.body_groups(self, bodies)
    if (probed_springs.size or groups) and not frame_count:
        raise ValueError(
            "springs= and bodies= are recorded at the frames: give frames= (e.g. frames=101)"
        )
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable, not {type(callback).__name__}")
    self._validate()  # a bad value raises here, before anything is recorded
    # Check the method name the same way step does, without stepping.
    if method not in _core.METHODS:
        raise ValueError(f"unknown method {method!r}; valid: {', '.join(_core.METHODS)}")

    # The run in legs of equal length, each ending on an exact time (a frame's, or the
    # end): `whole` substeps of dt, then `short` (0 or 1) substep to the leg's end.
    legs = max(1, frame_count - 1)
    whole, short = _legs(duration, dt, legs)
    per_leg = whole + short
    total = legs * per_leg
    start_time = self.time
    leg_ends = np.linspace(start_time, start_time + duration, legs + 1)
    record_every = (
        max(1, total // DEFAULT_RECORDS)
        if record_every is None
        else _count(record_every, "record_every", 1)
    )
    frame_steps = set(range(0, total + 1, per_leg)) if frame_count > 1 else set()
    frame_steps |= {0} if frame_count else set()
    record_steps = set(range(0, total, record_every)) | {total} | frame_steps
    stops = sorted(record_steps)

    columns: dict[str, list[Any]] = {
        name: [] for name in (*ENERGY_TERMS, "times", "dissipated", "momentum")
    }
    # One tuple per frame (appended whole, so that a Ctrl-C cannot leave half of one):
    # time, positions, velocities, pinned flags, edge tensions, edge strains, probed
    # springs' lengths and tensions, the bodies' figures.
    frame_records: list[tuple[Any, ...]] = []
    renumber = np.full(self.num_nodes, -1, dtype=np.int64)
    renumber[nodes] = np.arange(len(nodes))
    start_springs = np.array(self._view("springs"), dtype=np.int64)
    framed_springs = renumber[start_springs]
    edge_rows = np.flatnonzero(np.all(framed_springs >= 0, axis=1))
    edges = framed_springs[edge_rows]
    corners = renumber[np.asarray(self._view("faces"), dtype=np.int64)]
    faces = corners[np.all(corners >= 0, axis=1)]
    colliders, shapes = collider_rows(self), collider_triangles(self)
    radii = (
        np.array(self._view("radii")[nodes]) if self._has_radii() else None
    )  # (no array if none)

    # The first step call would set the held pins' velocities to zero: do it before the
    # first record, so that it holds the energy the run starts with (undone if the run
    # fails before its first substep, which then changes nothing).
    start_nodes = self.num_nodes
    velocities = self._view("velocities")
    stopped = np.flatnonzero(held(self) & np.any(velocities != 0.0, axis=1))
    stopped_velocities = np.array(velocities[stopped])
    velocities[stopped] = 0.0
    # (the kernel's count as it stands: the books may be off until here, and no warning)
    was_tracking, start_dissipated = self.track_energy, kernel_dissipated(self)
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
        add_row()
        if step in frame_steps:
            _, tension, strain = probes.spring_values(self, start_springs, edge_rows)
            lengths, tensions, _ = probes.spring_values(self, start_springs, probed_springs)
            x, v = (
                np.array(self._view("positions")[nodes]),
                np.array(self._view("velocities")[nodes]),
            )
            pinned = np.array(self._view("pinned")[nodes])
            figures = probes.body_values(self, groups)
            frame_records.append(
                (self.time, x, v, pinned, tension, strain, lengths, tensions, figures)
            )
        return bool(callback(self)) if callback is not None else False

    def history() -> History:
        # A Ctrl-C inside record() may leave one column a value longer: cut to the rest.
        rows = min(len(c) for c in columns.values())
        shown = len(frame_records)

        def frame_column(k: int, *shape: int, dtype: Any = np.float64) -> np.ndarray:
            # (shown, ...) even with no frames or no nodes (reshape(-1, 0, dim) cannot
            # infer the first axis)
            return np.array([r[k] for r in frame_records], dtype=dtype).reshape(shown, *shape)

        def body_column(name: str) -> np.ndarray:
            shape = (len(groups), self.dim) if name in probes.BODY_VECTORS else (len(groups),)
            values = [r[8][name] for r in frame_records]
            return np.array(values, dtype=np.float64).reshape(shown, *shape)

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
            spring_ids=probed_springs,
            spring_lengths=frame_column(6, len(probed_springs)),
            spring_tensions=frame_column(7, len(probed_springs)),
            body_members=np.concatenate([np.zeros(0, np.int64), *groups]),
            body_offsets=np.cumsum([0] + [len(g) for g in groups]),
            **{f"body_{name}": body_column(name) for name in probes.BODY_FIGURES},
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

    # (steps done, self.time, the call's dt) at one moment, taken together before each
    # call: a Ctrl-C can land after a call's substeps ran but before `done` counts them,
    # so after one the count is rebuilt from the clock (a call runs all its substeps
    # or, rolled back, none).
    anchor = (0, self.time, dt)

    def steps_taken() -> int:
        steps, at, call_dt = anchor
        return steps + max(0, round((self.time - at) / call_dt))

    try:
        stop = record(0)
        for target in stops[1:]:
            if stop:
                interrupted = True
                break
            while done < target:
                in_leg = done % per_leg
                if in_leg < whole:  # whole substeps of dt, within this leg
                    chunk = min(target - done, whole - in_leg)
                    if seconds_per_step is not None:
                        most = max(1, int(CHUNK_SECONDS / max(seconds_per_step, 1e-12)))
                        chunk = min(chunk, most)
                    else:
                        chunk = min(chunk, 16)  # a short first call measures the speed
                    call_dt = dt
                else:  # the leg's last substep, to its end exactly (by the clock)
                    chunk, call_dt = 1, float(leg_ends[done // per_leg + 1]) - self.time
                started = time.perf_counter()
                anchor = (done, self.time, call_dt)
                # One set of divergence books over the run, checked at every call's end;
                # what the callback (or anything between the calls) put in counts.
                books = divergence.CONTINUE if done else divergence.START
                if call_dt > 0.0:  # (never <= 0 unless the clock drifted by 1e-9 dt)
                    # (node-node contact's law from the step keeps the run's dt)
                    self._step_in_run(call_dt, chunk, method, books | divergence.CHECK_END, dt)
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
