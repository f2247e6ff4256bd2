"""Timing on a shared machine: thread CPU time, interleaved rounds, medians.

The machine the bench runs on is shared (2 cores, other jobs come and go), so:

- a figure on **one thread** is the calling thread's CPU time (``time.thread_time``):
  the time the kernel actually ran, not the time another process held the core;
- a figure on **several threads** is wall time (``time.perf_counter``): CPU time
  would add the threads up;
- the contenders of one comparison are timed in the same process, **interleaved**:
  every round runs each contender once, in a freshly shuffled order, so a slow
  spell of the machine hits all of them alike;
- each figure is the **median** over the rounds.

Examples
--------
>>> import time
>>> from springsim.bench.timing import Contender, interleave, median
>>> work = Contender("sum", lambda n: sum(range(100 * n)), steps=10)
>>> timed = interleave([work, Contender("wait", time.sleep, clock="wall")], rounds=3)
>>> sorted(timed), len(timed["sum"]["seconds"]), median(timed["sum"]["seconds"]) > 0
(['sum', 'wait'], 3, True)
"""

import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

#: The clocks a contender is timed by, by name.
CLOCKS: dict[str, Callable[[], float]] = {
    "thread": time.thread_time,
    "process": time.process_time,
    "wall": time.perf_counter,
}
#: How the report names them.
CLOCK_NAMES = {
    "thread": "thread CPU time (time.thread_time)",
    "process": "process CPU time (time.process_time: every thread of the process)",
    "wall": "wall time",
}
#: A "thread"-clocked contender whose calling thread got less than this share of its
#: wall time, relative to springsim's share in the same rounds, did its work on
#: another thread: its figure is flagged (``off_thread``).
MIN_CPU_SHARE = 0.5


def clock_for(threads: int) -> str:
    """The clock for a figure on ``threads`` threads: "thread" for 1, else "wall"."""
    return "thread" if threads == 1 else "wall"


def _nothing() -> None:
    pass


@dataclass
class Contender:
    """One thing timed in an interleaved comparison.

    Attributes
    ----------
    name : str
        Its key in the result of :func:`interleave`.
    run : callable
        ``run(steps)``: the timed call.
    reset : callable
        Called, untimed, before every timed call (a fresh copy, a warm-up step, the
        thread setting).
    clock : {"thread", "process", "wall"}
        What its figure is measured by (see :func:`clock_for`; "process" for a
        one-thread library that runs its loops on a worker thread, as Taichi does).
    steps : int
        The ``steps`` given to ``run`` (see :func:`calibrate`).
    """

    name: str
    run: Callable[[int], object]
    reset: Callable[[], object] = _nothing
    clock: str = "thread"
    steps: int = 1


def calibrate(contender: Contender, seconds: float, max_steps: int = 10**7) -> int:
    """Set and return ``contender.steps`` so that one timed call takes about ``seconds``.

    Measured by the contender's own clock, after one ``reset()``; at least 1 step.
    """
    clock = CLOCKS[contender.clock]
    contender.reset()

    def once(steps: int) -> float:
        start = clock()
        contender.run(steps)
        return clock() - start

    steps, elapsed = 1, once(1)
    while elapsed < seconds / 8 and steps < max_steps:
        steps = min(max_steps, steps * 4)
        elapsed = once(steps)
    contender.steps = int(min(max_steps, max(1, round(steps * seconds / max(elapsed, 1e-9)))))
    return contender.steps


def interleave(contenders: Sequence[Contender], rounds: int, seed: int = 0) -> dict[str, dict]:
    """Time every contender once per round, in a shuffled order each round.

    Parameters
    ----------
    contenders : sequence of Contender
        With distinct names and their ``steps`` set.
    rounds : int
        Timed calls per contender.
    seed : int
        Of the shuffles (the order is reproducible, and differs from round to round).

    Returns
    -------
    dict
        Per contender name: ``seconds`` (by its clock, one per round), ``cpu`` (the
        calling thread's CPU time) and ``wall`` (one per round), ``clock`` and ``steps``.
    """
    rng = random.Random(seed)
    timed: dict[str, dict[str, Any]] = {
        c.name: {"seconds": [], "cpu": [], "wall": [], "clock": c.clock, "steps": c.steps}
        for c in contenders
    }
    for _ in range(rounds):
        order = list(contenders)
        rng.shuffle(order)
        for contender in order:
            contender.reset()
            clock = CLOCKS[contender.clock]
            wall, cpu, own = time.perf_counter(), time.thread_time(), clock()
            contender.run(contender.steps)
            own, cpu, wall = clock() - own, time.thread_time() - cpu, time.perf_counter() - wall
            record = timed[contender.name]
            record["cpu"].append(cpu)
            record["wall"].append(wall)
            record["seconds"].append(own)
    return timed


def median(values: Sequence[float]) -> float:
    """The median of ``values``."""
    return float(statistics.median(values))


def summarize(record: dict, springs: int) -> dict:
    """The figures of one contender's record from :func:`interleave`, on ``springs`` springs.

    Returns
    -------
    dict
        ``steps``, ``seconds`` (median), ``seconds_min``, ``spread`` (slowest / fastest
        − 1), ``rounds``, ``clock``, ``cpu_share`` (thread CPU time / wall time: about 1
        for work done on the calling thread), ``ns_per_spring_step`` and
        ``steps_per_second``, both from the median.
    """
    seconds = record["seconds"]
    middle, fastest = median(seconds), min(seconds)
    steps = record["steps"]
    return {
        "steps": steps,
        "seconds": middle,
        "seconds_min": fastest,
        "spread": max(seconds) / fastest - 1.0 if fastest > 0 else None,
        "rounds": len(seconds),
        "clock": record["clock"],
        "cpu_share": sum(record["cpu"]) / max(sum(record["wall"]), 1e-12),
        "ns_per_spring_step": middle / (steps * springs) * 1e9,
        "steps_per_second": steps / middle,
    }
