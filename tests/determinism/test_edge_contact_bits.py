"""Edge–edge contact gives the same bits on any thread count and SIMD path.

The edge pairs are found in an order fixed by the positions (csrc/kernel/contact/
edge_contact.c), their forces computed alone (by any thread, in pieces shared with the
node–triangle candidates) and added by one thread in pair order, so the state after N
steps must be bit-identical whichever threads and spring path ran.
"""

import numpy as np
import pytest

import springsim as ss

PATHS = [path for path, available in ss.simd_paths().items() if available]


def crossed_cloths(n: int = 40) -> ss.System:
    """Two n × n cloths 0.5 m wide in free space, the upper one turned 45° about the
    vertical and 1 cm above, thrown down at 3 m/s: their edges cross everywhere."""
    width = 0.5
    sheets = [
        ss.cloth(
            n,
            n,
            width=width,
            height=width,
            mass=0.05,
            stiffness=500.0,
            damping=0.01,
            pin=None,
            normal=(0, 1, 0),
            origin=(-width / 2, y, -width / 2),
        )
        for y in (0.0, 0.01)
    ]
    sim, upper = sheets
    x = upper.positions.copy()
    c, s = np.cos(np.pi / 4), np.sin(np.pi / 4)
    x[:, 0], x[:, 2] = c * x[:, 0] - s * x[:, 2], s * x[:, 0] + c * x[:, 2]
    first = sim.add_nodes(x, masses=upper.masses)[0]
    sim.add_springs(upper.springs + first, upper.stiffness, upper.damping, upper.rest_lengths)
    sim.add_faces(upper.faces + first)
    sim.gravity = 0
    sim.velocities[first:, 1] = -3.0
    sim.enable_self_collision(0.4 * width / (n - 1), friction=0.2, edges=True)
    assert sim.num_springs >= 8192  # the kernel uses threads
    return sim


@pytest.mark.parametrize("method", ["symplectic_euler", "xpbd"])
def test_threads_and_simd_paths_give_the_same_bits(method, settings):
    results = {}
    # One and two threads on the default path, two on every other one (the paths differ
    # in the spring loop only, the threads in how the pairs' forces are shared).
    runs = [(PATHS[0], 1)] + [(path, 2) for path in PATHS]
    for path, threads in runs:
        ss.set_simd(path)
        ss.set_num_threads(threads)
        sim = crossed_cloths()
        sim.iterations = 4
        sim.step(1e-4, steps=40, method=method)
        # the sheets met: the upper one slowed (its edges and nodes took the blow)
        assert sim.velocities[sim.num_nodes // 2 :, 1].mean() > -2.9
        results[path, threads] = sim.positions.tobytes() + sim.velocities.tobytes()
    first = next(iter(results.values()))
    assert all(bits == first for bits in results.values()), list(results)
