"""A write through a view that races a step can give a meaningless result, but never
makes the kernel read or write outside its buffers.

``sim.positions`` and ``sim.velocities`` are zero-copy views, and ``step`` releases the
GIL: another thread can write them while the contact searches run. The searches read
each position once per node (the grids compute a node's cell once and clamp it into the
grid), so a position that changes between two reads, or turns NaN, infinite or huge
mid-search, cannot send an index out of range. Each case runs in a child process, so
that a crash fails the test instead of killing the suite.
"""

import os
import subprocess
import sys
import textwrap

import pytest

#: The child: one thread steps a cloth in a loop while the main thread writes random,
#: hostile and far-flung values into its positions and velocities through views.
CHILD = textwrap.dedent(
    """
    import sys, threading, time
    import numpy as np
    import springsim as ss

    kind, seconds = sys.argv[1], float(sys.argv[2])
    sim = ss.cloth(24, 24, width=1.0, height=1.0, mass=0.5, pin=None, stiffness=200.0)
    if kind == "radii":
        sim.radii = 0.02  # a dense grid of cells 0.04 m wide over the cloth
    elif kind == "self_collision":
        sim.enable_self_collision(0.01)
    elif kind == "mesh":
        grid = np.array([[i, j] for j in range(9) for i in range(9)], float) / 4 - 1
        vertices = np.column_stack([grid[:, 0], np.full(len(grid), -0.05), grid[:, 1]])
        faces = [[j * 9 + i, j * 9 + i + 1, (j + 1) * 9 + i + 1] for j in range(8)
                 for i in range(8)] + [[j * 9 + i, (j + 1) * 9 + i + 1, (j + 1) * 9 + i]
                 for j in range(8) for i in range(8)]
        sim.add_mesh_collider(vertices, faces, thickness=0.01)
    else:
        raise SystemExit(f"unknown case {kind}")
    x, v = sim.positions, sim.velocities  # views, taken once: they follow the system
    x_start = x.copy()
    n = len(x)
    stop = threading.Event()
    counts = {"steps": 0, "refused": 0}

    def stepper():
        while not stop.is_set():
            try:
                sim.step(1e-4, steps=8)  # 8 (N + M) > 16384: the GIL is released
                counts["steps"] += 1
            except (ss.UnstableError, ValueError):
                counts["refused"] += 1  # a racing write may make a step fail: fine

    rng = np.random.default_rng(int(sys.argv[3]))
    hostile = np.array([1e300, -1e300, np.nan, np.inf, -np.inf, 1e20, -1e15, 5e-324])
    thread = threading.Thread(target=stepper)
    thread.start()
    end = time.perf_counter() + seconds
    writes = 0
    while time.perf_counter() < end:
        rows = rng.integers(0, n, size=rng.integers(1, 40))
        pick = rng.random()
        if pick < 0.35:  # across many cells, in and out of the grid's box
            x[rows] = x_start[rows] + rng.uniform(-2.0, 2.0, (len(rows), 3))
        elif pick < 0.5:  # a little: a cell boundary or two
            x[rows] += rng.uniform(-0.05, 0.05, (len(rows), 3))
        elif pick < 0.65:
            x[rows] = rng.choice(hostile, size=(len(rows), 3))
        elif pick < 0.75:
            v[rows] = rng.choice(hostile, size=(len(rows), 3))
        elif pick < 0.85:
            v[rows] = rng.uniform(-1e3, 1e3, (len(rows), 3))
        else:  # back to a sane state, so that steps pass their checks and search
            x[:] = x_start + rng.uniform(-0.01, 0.01, x.shape)
            v[:] = 0.0
        writes += 1
    stop.set()
    thread.join()
    print(kind, "steps", counts["steps"], "refused", counts["refused"], "writes", writes)
    """
)


@pytest.mark.parametrize("kind", ["radii", "self_collision", "mesh"])
def test_writes_through_views_racing_a_step_stay_inside_the_buffers(kind):
    seconds = float(os.environ.get("SPRINGSIM_RACE_SECONDS", "2"))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, kind, str(seconds), "29"],
        capture_output=True,
        text=True,
        timeout=120 + 20 * seconds,
    )
    assert done.returncode == 0, (
        f"the child died (status {done.returncode}):\n{done.stdout}\n{done.stderr[-4000:]}"
    )
    steps = int(done.stdout.split()[2])
    assert steps > 0, done.stdout  # the race was run: steps went through
