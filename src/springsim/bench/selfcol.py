"""The cost of self-collision: a 100×100 cloth falling onto itself, timed with and without.

The scene (:func:`cloth_fold_100`) is a 1 m cloth folded in half on the floor, its upper
layer falling onto its lower one. It is first stepped, with self-collision, until the
layers touch (about 0.03 s); from that state the same steps are timed with self-collision on and off
(off, the upper layer passes through the lower one), interleaved, and the medians
compared (:func:`self_collision_cost`). The target is at most 1.5× (issue 17, item 4).
"""

import numpy as np

import springsim as ss
from springsim.bench.kernel import kernel_contender
from springsim.bench.scenes import DAMPING, DT_FRACTION, TARGET_METHOD
from springsim.bench.timing import calibrate, interleave, median

#: The most self-collision may cost, in units of the same steps without it.
SELF_COLLISION_FACTOR = 1.5
#: Thickness, in units of the cloth's cell (below the half the kernel allows).
THICKNESS = 0.4
#: Substeps per chunk of the untimed fall before the timing, which starts at the chunk
#: in which the layers first touch (at most MAX_CHUNKS).
CHUNK, MAX_CHUNKS = 25, 200


def cloth_fold_100() -> ss.System:
    """A 1 m 100×100 cloth folded in half on the floor (59,002 springs), self-collision
    on, its upper layer falling at 1 m/s onto its lower one, 4 cm below."""
    n, width, gap = 100, 1.0, 0.04
    sim = ss.cloth(
        n,
        n,
        width=width,
        height=width,
        mass=1.0,
        stiffness=1000.0,
        damping=DAMPING,
        pin=None,
        normal=(0, 1, 0),
        origin=(-width / 2, 0.0, -width / 2),
    )
    x = sim.positions.copy()
    r = gap / 2
    angle = x[:, 0] / r  # folded over a half-cylinder at x = 0
    arc = (angle > 0) & (angle <= np.pi)
    back = angle > np.pi
    x[arc, 0] = r * np.sin(angle[arc])
    x[arc, 1] += r * (1 - np.cos(angle[arc]))
    x[back, 0] = np.pi * r - x[back, 0]
    x[back, 1] += gap
    sim.positions = x
    sim.rest_lengths = sim.spring_lengths()  # at rest in the folded shape
    sim.velocities[back, 1] = -1.0
    sim.add_plane((0, 1, 0), -1e-3, friction=0.5)
    sim.enable_self_collision(THICKNESS * width / (n - 1))
    sim.track_energy = False  # the stepping alone, as in the table
    return sim


def self_collision_cost(seconds: float = 0.2, repeats: int = 5) -> dict:
    """Time :func:`cloth_fold_100`'s steps with and without self-collision (1 thread,
    symplectic Euler, thread CPU time, interleaved rounds, medians).

    Returns
    -------
    dict
        ``steps`` per timed call, ``seconds_with`` and ``seconds_without`` (medians),
        ``ns_with`` and ``ns_without`` (per spring-step), ``ratio`` = with / without,
        ``target``, ``contact_energy`` (J, at the start of the timed steps: > 0, the
        layers touch) and ``crossings`` (the kernel's count after one timed call).
    """
    pristine = cloth_fold_100()
    dt = DT_FRACTION * pristine.critical_dt()
    for _ in range(MAX_CHUNKS):
        pristine.step(dt, steps=CHUNK, method=TARGET_METHOD)
        if pristine.energy().contact > 0.0:
            break
    bare = pristine.copy()
    bare.disable_self_collision()
    on, off = (
        kernel_contender(name, sim, dt, TARGET_METHOD, 1)
        for name, sim in (("with", pristine), ("without", bare))
    )
    off.steps = calibrate(on, seconds)
    timed = interleave([on, off], repeats)
    with_, without = (median(timed[name]["seconds"]) for name in ("with", "without"))
    per_spring_step = 1e9 / (on.steps * pristine.num_springs)
    timed_system = on.system()  # type: ignore[attr-defined]
    return {
        "steps": on.steps,
        "seconds_with": with_,
        "seconds_without": without,
        "ns_with": with_ * per_spring_step,
        "ns_without": without * per_spring_step,
        "ratio": with_ / without,
        "target": SELF_COLLISION_FACTOR,
        "contact_energy": pristine.energy().contact,
        "crossings": timed_system.self_collision_crossings,
    }


def self_collision_line(row: dict) -> str:
    """The report's line for :func:`self_collision_cost`'s figures."""
    verdict = "ok" if row["ratio"] <= row["target"] else "MISSED"
    return (
        f"self-collision, 100×100 cloth falling onto itself: {row['ratio']:.2f}× the same"
        f" steps without ({row['ns_with']:.2f} vs {row['ns_without']:.2f} ns per spring-step,"
        f" 1 thread), target <= {row['target']:g}×: {verdict}"
    )
