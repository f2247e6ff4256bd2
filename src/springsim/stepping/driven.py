"""The step of a system with driven nodes (:meth:`springsim.System.drive`,
:meth:`~springsim.System.pin` with a velocity): the kernel's ``step`` hands over to it
while any node is driven, and it places the driven nodes between one-substep kernel
calls, as one call: undone whole on failure, its cuts held to its end, its energy books
kept across its substeps (:mod:`springsim.stepping.divergence`).
"""

from __future__ import annotations

import numpy as np

from springsim import _core
from springsim.model.pins import held
from springsim.stepping.divergence import substep_books


def driven_step(self: _core.System, dt: float, steps: int = 1, method: str | None = None) -> None:
    """:meth:`springsim.System.step` for a system with driven nodes (the kernel's step
    calls ``System._driven_step`` when ``_driven`` is set): one kernel call per
    substep, undone whole on failure, and watched for divergence as one call (one set of
    books over its substeps)."""
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
    saved = self._state()  # every field of the state (its one definition)
    counters = [d.counter for d in drives]
    defer = self._defer_tearing
    self._defer_tearing = self._hold_cuts = True
    # The kernel holds no pins in these calls (the drives set their nodes'
    # velocities): the other pinned nodes are held here, once.
    self._view("velocities")[held(self)] = 0.0
    self._drag_pins = True
    done = False
    try:
        for books_mode in substep_books(books, steps):
            targets = [d.target(self.time + dt, self.dim) for d in drives]
            for d, target in zip(drives, targets, strict=True):
                with np.errstate(over="ignore"):  # (checked next: a clear message)
                    velocity = (target - self._view("positions")[d.indices]) / dt
                if not np.all(np.isfinite(velocity)):
                    raise ValueError(
                        f"the drive path's target at t = {self.time + dt:g} s is too far "
                        "to reach in one substep: its velocity is not finite"
                    )
                self._view("velocities")[d.indices] = velocity
            self._books = books_mode
            self._step(dt, 1, method)
            for d, target in zip(drives, targets, strict=True):
                self._view("positions")[d.indices] = target
                d.counter += 1
        done = True
    finally:
        self._drag_pins = self._hold_cuts = False
        self._settle_cuts(done)
        self._defer_tearing = defer
        if not done:
            self._set_state(saved)
            for d, counter in zip(drives, counters, strict=True):
                d.counter = counter
    if not defer:
        self._tear()
    return None
