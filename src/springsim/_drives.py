"""Pins and drives: holding nodes, dragging them, prescribed paths, run.

:class:`springsim.System` inherits these methods; this module never imports it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt

from springsim._checks import _as_indices, _as_vectors
from springsim._system_host import SystemHost
from springsim.stepping.divergence import substep_books as _substep_books

if TYPE_CHECKING:
    from springsim.stepping.history import History
    from springsim.system import System


class _Drive:
    """Nodes that follow a path: a function of time, or per-substep targets.

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

    def copy(self) -> _Drive:
        """The same drive with its own progress (the counter)."""
        return _Drive(
            self.indices, self.function, self.targets, self.counter, self.rows, self.width
        )

    def renumbered(self, old_to_new: np.ndarray) -> _Drive | None:
        """This drive after nodes were removed (``old_to_new`` from the kernel), or None
        if none of its nodes is left."""
        new = old_to_new[self.indices]
        keep = new >= 0
        if not keep.any():
            return None
        if self.targets is not None:
            return _Drive(new[keep], None, self.targets[:, keep], self.counter)
        rows = (np.arange(self.width) if self.rows is None else self.rows)[keep]
        return _Drive(new[keep], self.function, None, self.counter, rows, self.width)

    def target(self, t: float, dim: int) -> np.ndarray:
        """Where the nodes must be at time t (the end of the coming substep)."""
        if self.targets is not None:
            return self.targets[min(self.counter, len(self.targets) - 1)]
        value = np.asarray(self.function(t))
        if value.dtype.kind not in "biuf":
            raise ValueError(f"the drive path returned {value.dtype} values at t = {t:g} s")
        try:
            value = np.broadcast_to(value, (self.width, dim)).astype(np.float64)
        except ValueError:
            raise ValueError(
                f"the drive path returned shape {value.shape} at t = {t:g} s; "
                f"expected ({self.width}, {dim})"
            ) from None
        if not np.all(np.isfinite(value)):
            raise ValueError(f"the drive path returned non-finite targets at t = {t:g} s")
        return value if self.rows is None else value[self.rows]


class _Line:
    """A picklable drive path: ``start + velocity (t − t0)``, what ``pin(velocity=...)``
    drags nodes along."""

    __slots__ = ("start", "velocity", "t0")

    def __init__(self, start: np.ndarray, velocity: np.ndarray, t0: float):
        self.start, self.velocity, self.t0 = start, velocity, t0

    def __call__(self, t: float) -> np.ndarray:
        return self.start + self.velocity * (t - self.t0)


class DrivesMixin(SystemHost):
    """Pins and drives: holding nodes, dragging them, prescribed paths, run."""

    def pin(self, indices: npt.ArrayLike, velocity: npt.ArrayLike | None = None) -> None:
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
            self._undrive(idx)
            self.velocities[idx] = 0.0
            return
        v = _as_vectors(velocity, "velocity", np.float64, (idx.size, self.dim))
        if not np.all(np.isfinite(v)):
            raise ValueError("velocity must be finite")
        self._set_pinned(idx, True)
        if idx.size:  # no nodes, no drive (a drive makes every step return to Python)
            self.drive(idx, _Line(np.array(self.positions[idx]), v.copy(), self.time))
            self.velocities[idx] = v

    def unpin(self, indices: npt.ArrayLike) -> None:
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
        self._undrive(idx)

    def _undrive(self, idx: np.ndarray) -> None:
        """Stop driving nodes ``idx`` (valid indices); the rest of their drives go on."""
        drives = self.__dict__.get("_drives")
        if not drives or idx.size == 0:
            return
        remaining = np.arange(self.num_nodes)
        remaining[idx] = -1
        kept = (d.renumbered(remaining) for d in drives)
        self._set_drives([d for d in kept if d is not None])

    def _held(self) -> np.ndarray:
        """Which nodes a step call holds (velocity set to zero): the pinned ones that
        are not driven."""
        held = np.array(self.pinned)
        for d in self.__dict__.get("_drives", []):
            held[d.indices] = False
        return held

    def drive(
        self, indices: npt.ArrayLike, path: Callable[[float], npt.ArrayLike] | npt.ArrayLike | None
    ) -> None:
        """Make nodes follow a prescribed path: a shaken string end, a moving hand.

        The nodes are pinned. Before every substep their velocity is set to
        (target − x)/dt, so the step moves them onto the target at the end of the
        substep, and forces and energies see the velocity they really have (the
        other pinned nodes are held still, as in any step). For a constant velocity,
        :meth:`pin` ``(indices, velocity=v)`` is the shorthand.

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
        self._set_pinned(idx, True)
        self._undrive(idx)
        if new is None:
            self.velocities[idx] = 0.0
        else:
            self._set_drives([*self.__dict__.get("_drives", []), new])

    def _set_drives(self, drives: list[_Drive]) -> None:
        # The kernel's step hands over to _driven_step while any node is driven.
        self.__dict__["_drives"] = drives
        self._driven = bool(drives)

    def _driven_step(self, dt: float, steps: int = 1, method: str | None = None) -> None:
        """:meth:`step` for a system with driven nodes (the kernel's step calls this
        when ``_driven`` is set): one kernel call per substep, undone whole on failure,
        and watched for divergence as one call (one set of books over its substeps)."""
        books = self._books  # how the caller (run()) keeps the books; reset by any step
        drives = self.__dict__["_drives"]
        if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
            raise TypeError(f"steps must be an int, not {type(steps).__name__}")
        if not 0 <= steps < 2**63 - 1:
            raise ValueError(f"steps must be >= 0 and < 2**63 - 1, got {steps}")
        self._step(dt, 0, method)  # checks dt, method and the state; steps nothing
        if steps == 0:
            return None
        # One kernel call per substep, undone together if any part fails: the state,
        # the clock, the energy books and the springs cut so far (held, not removed,
        # until the last substep: then torn as one call would).
        saved = {
            name: self._view(name).copy() for name in ("positions", "velocities", "_prev_accel")
        }
        saved_state = (self.time, self._verlet_valid, self.dissipated)
        counters = [d.counter for d in drives]
        defer = self._defer_tearing
        self._defer_tearing = self._hold_cuts = True
        # The kernel holds no pins in these calls (the drives set their nodes'
        # velocities): the other pinned nodes are held here, once.
        self.velocities[self._held()] = 0.0
        self._drag_pins = True
        done = False
        try:
            for books_mode in _substep_books(books, steps):
                targets = [d.target(self.time + dt, self.dim) for d in drives]
                for d, target in zip(drives, targets, strict=True):
                    with np.errstate(over="ignore"):  # (checked next: a clear message)
                        velocity = (target - self.positions[d.indices]) / dt
                    if not np.all(np.isfinite(velocity)):
                        raise ValueError(
                            f"the drive path's target at t = {self.time + dt:g} s is too far "
                            "to reach in one substep: its velocity is not finite"
                        )
                    self.velocities[d.indices] = velocity
                self._books = books_mode
                self._step(dt, 1, method)
                for d, target in zip(drives, targets, strict=True):
                    self.positions[d.indices] = target
                    d.counter += 1
            done = True
        finally:
            self._drag_pins = self._hold_cuts = False
            self._settle_cuts(done)
            self._defer_tearing = defer
            if not done:
                for name, array in saved.items():
                    self._view(name)[...] = array
                self.time, self._verlet_valid, self.dissipated = saved_state
                for d, counter in zip(drives, counters, strict=True):
                    d.counter = counter
        if not defer:
            self._tear()
        return None

    def run(
        self,
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
        from springsim.stepping.run import run

        return run(
            cast("System", self),  # (a mixin: self is always a System)
            duration,
            dt,
            method=method,
            record_every=record_every,
            frames=frames,
            frame_nodes=frame_nodes,
            progress=progress,
            callback=callback,
        )
