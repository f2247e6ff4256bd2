"""What segment contact costs: strings with radii falling onto each other, timed with
segment contact on and off (node–node contact alone).

The scene (:func:`strings_heap`): 20 strings of 50 nodes (radius 5 mm, nodes 2 cm apart,
so that node–node contact alone lets them through each other) in five layers turned 45°
to each other, the upper layers thrown down under gravity. It is stepped untimed until
segments touch, then the same substeps are timed with :attr:`System.segment_contact` on
and off, interleaved, one thread, by thread CPU time, and the medians compared. (Off,
the strings pass through each other and the steps cost node–node contact's search only.)
"""

import numpy as np

import springsim as ss
from springsim.bench.timing import Contender, interleave, median

#: Substeps per timed call, and the substep, s.
STEPS, DT = 100, 2e-4
#: Untimed substeps before the timing: the layers have met.
SETTLE = 250


def strings_heap(strings: int = 20, nodes: int = 50) -> ss.System:
    """``strings`` strings of ``nodes`` nodes (radius 5 mm, 2 g, 2 cm apart, 500 N/m) in
    five layers 12 mm apart, each turned 45° from the one below and thrown down at 0.5 m/s
    more, under gravity (−z), segment contact on: they fall onto each other.

    Examples
    --------
    >>> from springsim.bench.segments import strings_heap
    >>> sim = strings_heap(5, 10)
    >>> sim.num_nodes, sim.num_springs, sim.segment_contact
    (50, 45, True)
    """
    sim = ss.System(dim=3)
    sim.gravity = (0, 0, -9.81)
    s = (np.arange(nodes) - (nodes - 1) / 2) * 0.02
    for k in range(strings):
        angle = (k % 5) * np.pi / 4
        y = (k // 5 - (strings // 5 - 1) / 2) * 0.05
        x = np.c_[
            np.cos(angle) * s - np.sin(angle) * y,
            np.sin(angle) * s + np.cos(angle) * y,
            0 * s + 0.012 * (k % 5),
        ]
        added = sim.add_nodes(x, masses=0.002, velocities=[[0.0, 0.0, -0.5 * (k % 5)]] * nodes)
        sim.add_springs(np.c_[added[:-1], added[1:]], stiffness=500.0, damping=0.001)
    sim.radii = 0.005
    sim.segment_contact = True
    return sim


def segment_contact_cost(repeats: int = 5) -> dict:
    """Median seconds per substep of :func:`strings_heap` with segment contact
    (``segments_seconds``) and with node–node contact alone (``nodes_seconds``),
    symplectic Euler, one thread, and their ``ratio``; ``contact_energy`` (J, > 0: the
    segments touch as the timing starts) and ``crossings`` after it.

    Examples
    --------
    >>> from springsim.bench.segments import segment_contact_cost
    >>> row = segment_contact_cost(repeats=1)
    >>> row["ratio"] > 1.0, row["substeps"], row["contact_energy"] > 0
    (True, 100, True)
    """
    on = strings_heap()
    on.step(DT, steps=SETTLE)
    off = on.copy()
    off.segment_contact = False
    energy = on.energy().contact

    def stepper(sim: ss.System):
        return lambda steps: sim.step(DT, steps=steps)

    timed = interleave(
        [Contender("on", stepper(on), steps=STEPS), Contender("off", stepper(off), steps=STEPS)],
        rounds=repeats,
    )
    with_, without = (median(timed[name]["seconds"]) / STEPS for name in ("on", "off"))
    return {
        "substeps": STEPS,
        "segments_seconds": with_,
        "nodes_seconds": without,
        "ratio": with_ / without,
        "contact_energy": energy,
        "crossings": on.self_collision_crossings,
    }


def segment_contact_line(row: dict) -> str:
    """The report's line for :func:`segment_contact_cost`'s figures."""
    return (
        f"segment contact: {row['segments_seconds'] * 1e3:.3f} ms per substep of 20 strings"
        f" of 50 nodes falling onto each other, {row['nodes_seconds'] * 1e3:.3f} ms with"
        f" node-node contact alone (1 thread): {row['ratio']:.2f}×"
    )
