"""Issue 29's kernel side: a write through a view that races a step can give a
meaningless result, but never makes the kernel read or write outside its buffers; and
the queries (energy(), critical_dt(), contact_pairs()) keep out of the step's scratch.

``sim.positions`` and ``sim.velocities`` are zero-copy views, and ``step`` releases the
GIL: another thread can write them while the contact searches run. The searches read
each position once per node (the grids compute a node's cell once and clamp it into the
grid), so a position that changes between two reads, or turns NaN, infinite or huge
mid-search, cannot send an index out of range. Each case runs in a child process, so
that a crash fails the test instead of killing the suite.
"""

import gc
import os
import subprocess
import sys
import textwrap
import tracemalloc

import numpy as np
import pytest

import springsim as ss
from springsim import reference
from springsim.reference import contact_energy, contact_pairs

#: The child: one thread steps a cloth in a loop while the main thread writes random,
#: hostile and far-flung values into its positions and velocities through views.
CHILD = textwrap.dedent(
    """
    import sys, threading, time
    import numpy as np
    import springsim as ss

    kind, seconds = sys.argv[1], float(sys.argv[2])
    sim = ss.cloth(24, 24, width=1.0, height=1.0, mass=0.5, pin=None, stiffness=200.0)
    queries = kind.startswith("queries")
    if kind == "queries":  # radii and self-collision: both searches
        sim.radii = 0.02
        sim.enable_self_collision(0.01)
    elif kind == "radii":
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
    while queries and time.perf_counter() < end:
        # reads while the other thread steps: they must not free or grow what the step
        # searches in (a RuntimeError is a refusal to run meanwhile: fine too)
        for query in (sim.energy, sim.critical_dt, sim.contact_pairs):
            try:
                query()
            except RuntimeError:
                counts["refused"] += 1
        writes += 1
    while not queries and (
        time.perf_counter() < end or (counts["steps"] == 0 and time.perf_counter() < end + 30)
    ):
        if writes % 400 == 399:
            # A calm spell: a sane state until one step goes through, so that a slow
            # build (sanitizers) races steps that run to the end, not only ones that a
            # hostile write made fail. Written again and again: a step that fails rolls
            # back to the state it saved, which may hold a hostile write.
            target, calm = counts["steps"] + 1, time.perf_counter() + 10
            while counts["steps"] < target and time.perf_counter() < calm:
                x[:] = x_start
                v[:] = 0.0
                time.sleep(0.01)
        rows = rng.integers(0, n, size=rng.integers(1, 40))
        pick = rng.random()
        if pick < 0.45:  # across many cells, in and out of the grid's box
            x[rows] = x_start[rows] + rng.uniform(-2.0, 2.0, (len(rows), 3))
        elif pick < 0.7:  # a little: a cell boundary or two
            x[rows] += rng.uniform(-0.05, 0.05, (len(rows), 3))
        elif pick < 0.75:  # (most steps then fail their checks: rarely)
            x[rows] = rng.choice(hostile, size=(len(rows), 3))
        elif pick < 0.8:
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


def race(kind):
    """Run the child for ``kind``; its report: steps made, refused, writes (or query
    rounds) made meanwhile."""
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
    words = done.stdout.split()
    return int(words[2]), int(words[4]), int(words[6])


@pytest.mark.parametrize("kind", ["radii", "self_collision", "mesh"])
def test_writes_through_views_racing_a_step_stay_inside_the_buffers(kind):
    steps, _refused, writes = race(kind)
    assert steps > 0 and writes > 0  # the race was run: steps went through meanwhile


def test_queries_racing_a_step_do_not_free_what_it_searches_in():
    # The crash: energy() or critical_dt() while another thread steps a system
    # with radii freed the contact search's buffers under the step (a segfault).
    steps, _refused, rounds = race("queries")
    assert steps > 0 and rounds > 0


# ---- queries keep out of the step's scratch -------------------------------------------

THICKNESS, SELF_STIFFNESS = 0.02, 1.0


def two_layers():
    """Two 6 x 6 cloths 12 mm apart, with node radii (8 mm: the layers' nodes overlap
    across the gap) and self-collision (20 mm: each layer's nodes are inside the other's
    triangles' layer), both soft: contacts of both kinds from the start, for a while."""
    sim = ss.cloth(6, 6, width=0.3, height=0.3, mass=0.1, stiffness=300.0, pin=None)
    top = ss.cloth(6, 6, width=0.3, height=0.3, mass=0.1, stiffness=300.0, pin=None)
    top.positions += (0.0, 0.0, 0.012)
    sim.add(top)
    sim.gravity = 0
    sim.radii = 0.008
    sim.contact_stiffness = 1.0
    sim.enable_self_collision(THICKNESS, stiffness=SELF_STIFFNESS)
    return sim


def oracle_critical_dt(sim, ref):
    """critical_dt() in NumPy, from its docstring: per free node, the Gershgorin bounds
    w^2 (springs' k / m_i + k / sqrt(m_i m_j)) and g (the same with c, plus drag / m_i),
    with node-node contacts as springs of k_c and dashpot + friction, or one contact
    with a node of equal mass if that is more; the limit 4 / (g + sqrt(g^2 + 4 w^2))."""
    m, pinned, n = ref.m, ref.pinned, len(ref.m)
    w2, g = np.zeros(n), np.where(pinned, 0.0, ref.drag / m)
    for (i, j), k, c in zip(ref.springs.tolist(), ref.k, ref.c, strict=True):
        for a, b in ((i, j), (j, i)):
            if not pinned[a]:
                weight = 1 / m[a] + (0.0 if pinned[b] else 1 / np.sqrt(m[a] * m[b]))
                w2[a] += k * weight
                g[a] += c * weight
    contact = ref.contact
    k = contact.stiffness
    damping = 2 * contact.zeta() + (2.0 if contact.friction > 0 else 0.0)
    own_w2, own_g = np.zeros(n), np.zeros(n)
    for i, j in contact_pairs(ref, ref.x).tolist():
        if pinned[i] and pinned[j]:
            continue
        m_eff = m[j] if pinned[i] else m[i] if pinned[j] else m[i] * m[j] / (m[i] + m[j])
        for a, b in ((i, j), (j, i)):
            if not pinned[a]:
                weight = 1 / m[a] + (0.0 if pinned[b] else 1 / np.sqrt(m[a] * m[b]))
                own_w2[a] += k * weight
                own_g[a] += damping * np.sqrt(k * m_eff) * weight
    for i in np.flatnonzero(~pinned & (contact.radii > 0)):
        one_w2 = 2 * k / m[i]
        one_g = 2 * damping * np.sqrt(0.5 * k * m[i]) / m[i]
        w2[i] += max(own_w2[i], one_w2)
        g[i] += own_g[i] if own_w2[i] > one_w2 else one_g
    acting = (w2 != 0) | (g != 0)
    return float(np.min(4 / (g[acting] + np.sqrt(g[acting] ** 2 + 4 * w2[acting]))))


def test_queries_between_steps_are_the_oracles_and_change_nothing_a_step_reads():
    sim = two_layers()
    twin = sim.copy()  # stepped alike, never queried: the queries must not change a bit
    dt = 0.5 * sim.copy().critical_dt()
    touched = 0
    for call in range(4):
        ref = reference.State.from_system(sim)
        energy = sim.energy()
        kinetic, elastic, gravity, _gas = reference.energy(ref)
        self_energy = reference.self_collision_forces(
            ref.x, ref.v, sim.faces, THICKNESS, SELF_STIFFNESS
        )[1]
        node_energy = contact_energy(ref, ref.x)
        assert node_energy > 0 and self_energy > 0  # both kinds of contact, every time
        assert energy.contact == pytest.approx(node_energy + self_energy, rel=1e-12)
        assert (energy.kinetic, energy.elastic, energy.gravity) == pytest.approx(
            (kinetic, elastic, gravity), rel=1e-12, abs=1e-15
        )
        found = sim.contact_pairs()
        assert sorted(map(tuple, found.tolist())) == sorted(
            map(tuple, contact_pairs(ref, ref.x).tolist())
        )
        touched += len(found)
        assert sim.critical_dt() == pytest.approx(oracle_critical_dt(sim, ref), rel=1e-12)
        for each in (sim, twin):
            each.step(dt, steps=5, method=("symplectic_euler", "rk4", "implicit_euler")[call % 3])
    assert touched > 4 * 18  # the layers still overlap at the end
    assert sim.positions.tobytes() == twin.positions.tobytes()
    assert sim.velocities.tobytes() == twin.velocities.tobytes()
    assert sim.self_collision_crossings == twin.self_collision_crossings


def test_queries_leave_the_step_scratch_as_it_was_and_keep_no_memory():
    # A query searches in memory of its own and frees it: the system's memory (nbytes,
    # which counts the step's scratch) and the process's (tracemalloc: the kernel
    # allocates through PyMem_RawMalloc) are the same after it. Before, energy(),
    # critical_dt() and contact_pairs() searched in the step's scratch (building it on
    # a system never stepped, and growing it when more pairs touched than at the last
    # step), the scratch that a step running meanwhile in another thread was using.
    for stepped in (False, True):
        sim, warm = two_layers(), two_layers()
        if stepped:
            sim.step(1e-5, steps=2)
            sim.positions[:] *= 0.2  # more pairs now than the step found
        for query in (warm.energy, warm.critical_dt, warm.contact_pairs):
            query()  # Python's own caches, at these lines (on another system)
        tracemalloc.start()
        try:
            gc.collect()
            nbytes, before = sim.nbytes, tracemalloc.take_snapshot()
            for query in (sim.energy, sim.critical_dt, sim.contact_pairs):
                query()
            gc.collect()
            after = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
        kept = [
            stat
            for stat in after.compare_to(before, "filename")
            if stat.size_diff > 0 and "tracemalloc" not in stat.traceback[0].filename
        ]
        assert sim.nbytes == nbytes, f"stepped={stepped}: {sim.nbytes} bytes, not {nbytes}"
        assert sum(stat.size_diff for stat in kept) < 2048, kept  # the queries' results
