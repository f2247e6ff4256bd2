"""What one owner at a time costs: the check every call on a System makes.

Every call that reads or writes a System first checks that no other thread owns it
(``sim.lock``; the check reads the thread's id and compares it with the owner's). The
bench times that check alone (``System._check_turns``: the check, ``count`` times, in
C) against a whole one-substep ``step()`` call on a small system, interleaved, one
thread, by thread CPU time, and reports the share: the cost of the check on the call
that pays it most often.
"""

import springsim as ss
from springsim.bench.timing import Contender, interleave, median

#: Calls per timed round.
CALLS = 20_000


def ownership_cost(repeats: int = 5) -> dict:
    """Median seconds per one-substep ``step()`` of a 10-node string and per ownership
    check, and their ratio (``share``)."""
    sim = ss.string(10, length=1.0, mass=0.1, stiffness=100.0, dim=2)
    dt = 0.5 * sim.critical_dt()

    def steps(count: int) -> None:
        for _ in range(count):
            sim.step(dt)

    timed = interleave(
        [
            Contender("step", steps, steps=CALLS),
            Contender("check", sim._check_turns, steps=CALLS),
        ],
        rounds=repeats,
    )
    step = median(timed["step"]["seconds"]) / CALLS
    check = median(timed["check"]["seconds"]) / CALLS
    return {"step_seconds": step, "check_seconds": check, "share": check / step}


def ownership_line(row: dict) -> str:
    """The report's line for :func:`ownership_cost`'s figures."""
    return (
        f"ownership check: {row['check_seconds'] * 1e9:.1f} ns of a one-substep step() call"
        f" of {row['step_seconds'] * 1e6:.2f} µs (10-node string, 1 thread):"
        f" {100 * row['share']:.2f} %"
    )
