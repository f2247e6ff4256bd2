"""What a pin drag costs: a string whose end is dragged, against the same string free.

A drive moves its nodes inside the kernel's loop of substeps (csrc/kernel/step/drives.c):
before each substep it sets their velocities, after it their positions. The bench times a
100-node string with its end dragged (``pin(0, velocity=...)``) against the same string
with its end held, :data:`STEPS` substeps per call, interleaved, one thread, by thread
CPU time, and reports both per substep and their ratio. (When a drive returned to
Python for every substep, the drag cost about 30 times the free string.)
"""

import springsim as ss
from springsim.bench.timing import Contender, interleave, median

#: Substeps per timed call.
STEPS = 1000


def drag_cost(repeats: int = 5) -> dict:
    """Median seconds per substep of the 100-node string free (``plain``) and with its
    end dragged at 0.1 m/s (``drag``), stepped at half its critical dt, and their
    ``ratio`` (drag / plain).

    Examples
    --------
    >>> from springsim.bench.drag import drag_cost
    >>> row = drag_cost(repeats=1)
    >>> row["plain_seconds"] > 0 and row["drag_seconds"] > 0, row["substeps"]
    (True, 1000)
    """
    free = ss.string(100, length=1.0, mass=0.1, stiffness=100.0, dim=2)
    dragged = free.copy()
    dragged.pin(0, velocity=[0.1, 0.0])
    dt = 0.5 * free.critical_dt()
    for sim in (free, dragged):
        sim.step(dt)  # the plan and scratch made before the timing

    def stepper(sim: ss.System):
        return lambda steps: sim.step(dt, steps=steps)

    timed = interleave(
        [
            Contender("plain", stepper(free), steps=STEPS),
            Contender("drag", stepper(dragged), steps=STEPS),
        ],
        rounds=repeats,
    )
    plain = median(timed["plain"]["seconds"]) / STEPS
    drag = median(timed["drag"]["seconds"]) / STEPS
    return {
        "substeps": STEPS,
        "plain_seconds": plain,
        "drag_seconds": drag,
        "ratio": drag / plain,
    }


def drag_line(row: dict) -> str:
    """The report's line for :func:`drag_cost`'s figures."""
    return (
        f"pin drag: {row['drag_seconds'] * 1e6:.2f} µs per substep of a 100-node string"
        f" with its end dragged, {row['plain_seconds'] * 1e6:.2f} µs free (1 thread):"
        f" {row['ratio']:.2f}×"
    )
