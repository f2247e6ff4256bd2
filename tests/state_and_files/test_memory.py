"""Nothing leaks (not systems, not views, not error paths), and sim.nbytes is what a
system holds.

The kernel allocates through PyMem_RawMalloc, so tracemalloc sees its memory as
well as NumPy's and Python's. Each leak check runs a warm-up first (caches, free lists,
interned strings) and then requires memory to stay flat over many more cycles. The
nbytes checks compare it with the blocks tracemalloc saw allocated, and with the growth
of a fresh process (anonymous resident memory).
"""

import gc
import math
import sys
import tracemalloc

import numpy as np
import psutil
import pytest

import springsim as ss
from springsim.bench.memory import process_growth

WARMUP = 1_000
CYCLES = 10_000

RNG = np.random.default_rng(3)
X = RNG.random((20, 3))
PAIRS = np.column_stack([np.arange(19), np.arange(1, 20)])
MORE = RNG.random((5, 3))
TETRA = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
TETRA_FACES = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])


def lifecycle():
    """Create, fill, step, look at and destroy one small system."""
    sim = ss.System(dim=3)
    sim.add_nodes(X, masses=1.0, pinned=np.arange(20) == 0)
    sim.add_springs(PAIRS, stiffness=50.0, damping=0.1)
    views = [sim.positions, sim.velocities, sim.masses, sim.pinned, sim.springs, sim.stiffness]
    sim.add_nodes(MORE)  # moves arrays that views still hold
    sim.add_springs([[19, 20]], stiffness=10.0)
    sim.step(1e-3, steps=5)
    sim.velocities = 0.0
    sim.positions = sim.positions
    views += [sim.external_forces, sim.rest_lengths, sim.damping, sim.gravity, sim.wind]
    sim.energy()
    sim.momentum()
    sim.center_of_mass()
    sim.spring_lengths()
    sim.spring_tensions()
    sim.critical_dt()
    repr(sim)
    dup = sim.copy()
    dup.step(1e-3, steps=2, method="rk4")
    dup.step(1e-3, steps=2, method="implicit_euler")
    dup._stiffness_triplets()
    dup.remove_springs([0, 1])
    dup.pin([3])
    # Gas bodies own their boundaries: add, copy with the system, remove, free.
    gas = ss.System(dim=3)
    gas.add_nodes(TETRA)
    body = gas.add_pressure(TETRA_FACES, nrt=1.0)
    gas.add_pressure(TETRA_FACES[:, ::-1], nrt=2.0)  # stored reversed: a second buffer
    gas.copy().step(1e-3, steps=2)
    gas.remove_pressure(body)
    gas.add(gas)
    del views, sim, dup, gas


def make_small():
    sim = ss.System(dim=3)
    sim.add_nodes(X, masses=1.0, pinned=np.arange(20) == 0)
    sim.add_springs(PAIRS, stiffness=1e4)
    return sim


def failing_calls(sim):
    """One of each kind of rejected call, including an UnstableError rollback."""
    calls = (
        lambda: sim.add_springs([[0, 20]], stiffness=1.0),
        lambda: sim.add_nodes(np.ones((2, 3)), masses=[1.0, math.nan]),
        lambda: sim.add_nodes("abc"),
        lambda: sim.step(0.0),
        lambda: sim.step(1e-3, method="bogus"),
        lambda: setattr(sim, "masses", -1.0),
        lambda: setattr(sim, "positions", np.zeros((20, 4))),
        lambda: sim.remove_springs([99]),
        lambda: sim.add_pressure([[0, 1, 2], [0, 2, 3]], nrt=1.0),  # open: check_surface
        lambda: sim.add_pressure([[0, 1, 2], [0, 3, 2], [0, 3, 1], [1, 3, 2]], nrt=1.0),
        lambda: sim.add_pressure([[0, 1, 2], [0, 2, 1]], nrt=1.0),  # encloses nothing
        lambda: sim.step(100.0 * sim.critical_dt(), steps=300, method="euler"),
    )
    for call in calls:
        try:
            call()
        except (TypeError, ValueError, RuntimeError):
            pass
        else:
            raise AssertionError("a bad call was accepted")


def traced_growth(work, warmup=WARMUP, cycles=CYCLES):
    """Bytes traced by tracemalloc that ``cycles`` more calls of ``work`` left behind."""
    gc.collect()
    tracemalloc.start()
    try:
        for _ in range(warmup):
            work()
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(cycles):
            work()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return after - before


@pytest.mark.slow
def test_lifecycle_does_not_leak_traced_memory():
    growth = traced_growth(lifecycle)
    assert growth < 100_000, f"{growth} bytes left behind by {CYCLES} cycles"


@pytest.mark.slow  # a leak check of seconds: a long test
def test_lifecycle_does_not_grow_rss():
    process = psutil.Process()
    for _ in range(WARMUP):
        lifecycle()
    gc.collect()
    before = process.memory_info().rss
    for _ in range(CYCLES):
        lifecycle()
    gc.collect()
    growth = process.memory_info().rss - before
    assert growth < 2_000_000, f"RSS grew by {growth} bytes over {CYCLES} cycles"


def test_error_paths_do_not_leak():
    sim = make_small()
    growth = traced_growth(lambda: failing_calls(sim), warmup=200, cycles=2_000)
    assert growth < 100_000, f"{growth} bytes left behind by failing calls"
    assert sim.num_nodes == 20 and sim.num_springs == 19 and sim.time == 0.0


@pytest.mark.parametrize("resize", [False, True])
def test_views_outliving_the_system_are_freed_when_dropped(resize):
    n = 50_000
    gc.collect()
    tracemalloc.start()
    try:
        baseline = tracemalloc.get_traced_memory()[0]
        sim = ss.System(dim=3)
        sim.add_nodes(np.zeros((n, 3)))
        sim.add_springs(np.column_stack([np.arange(n - 1), np.arange(1, n)]), stiffness=1.0)
        views = [sim.positions, sim.velocities, sim.external_forces, sim.springs, sim.stiffness]
        if resize:  # the views now hold blocks the system has left
            sim.add_nodes(np.zeros((10, 3)))
            sim.add_springs([[0, n]], stiffness=1.0)
        del sim
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - baseline
        # Three (n, 3) float64 arrays at least: the views keep the kernel's memory alive.
        assert held > 3 * n * 3 * 8, f"only {held} bytes traced: is kernel memory traced?"
        del views
        gc.collect()
        left = tracemalloc.get_traced_memory()[0] - baseline
    finally:
        tracemalloc.stop()
    assert left < 50_000, f"{left} bytes still allocated after the last view was dropped"


# ---------------------------------------------------------------------- what nbytes counts


def kernel_allocations():
    """The traced blocks allocated from this file's lines: the kernel's, made while a
    call from here runs (not tracemalloc's snapshots, nor other threads' objects)."""
    return tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(True, __file__)])


def growths(sim, call):
    """(sim.nbytes growth, growth of the blocks traced at this file's lines) across
    ``call()``, tracemalloc running."""
    gc.collect()
    nbytes = sim.nbytes
    before = kernel_allocations()
    call()
    gc.collect()
    after = kernel_allocations()
    return sim.nbytes - nbytes, sum(stat.size_diff for stat in after.compare_to(before, "lineno"))


@pytest.fixture
def tracing():
    """tracemalloc running; a step that allocates nothing is seen to trace nothing."""
    tracemalloc.start()
    try:
        warm = ss.cloth(4, 4, width=1.0, height=1.0, mass=1.0, stiffness=100.0)
        for method in ss.METHODS:
            warm.step(1e-4, method=method)
        for method in ss.METHODS:
            assert growths(warm, lambda method=method: warm.step(1e-4, method=method)) == (0, 0)
        yield
    finally:
        tracemalloc.stop()


@pytest.mark.slow  # a leak check of seconds: a long test
def test_nbytes_counts_the_plan_and_scratch_a_step_makes(tracing):
    # The kernel allocates through PyMem_RawMalloc: tracemalloc sees every block, at its
    # size. A 40x40 cloth (9,202 springs) gets a plan of 4 blocks, with between-block
    # springs, on its first step.
    sim = ss.cloth(40, 40, width=1.0, height=1.0, mass=1.0, stiffness=1000.0, damping=0.01)
    n, dim, dt = sim.num_nodes, sim.dim, 0.5 * sim.critical_dt()
    grown, allocated = growths(sim, lambda: sim.step(dt))
    assert grown == allocated
    # At least the rollback copy of x and v (scratch), the force rows (4 doubles per node
    # in 3D) and the inverse masses (plan).
    assert grown >= (2 * n * dim + 4 * n + n) * 8
    assert growths(sim, lambda: sim.step(dt)) == (0, 0)  # made once, then reused
    # Other methods' scratch, and implicit Euler's spring colouring.
    for method in ("rk4", "implicit_euler"):
        grown, allocated = growths(sim, lambda method=method: sim.step(dt, method=method))
        assert grown > 0 and grown == allocated, method
    # A topology edit drops the plan and colouring; the next step makes the plan again.
    grown, allocated = growths(sim, lambda: sim.remove_springs([0]))
    assert grown < 0 and grown == allocated
    grown, allocated = growths(sim, lambda: sim.step(dt))
    assert grown > 4 * n * 8 and grown == allocated


@pytest.mark.slow  # a leak check of seconds: a long test
def test_nbytes_counts_tear_marks_and_the_broken_list(tracing):
    sim = ss.cloth(30, 30, width=1.0, height=1.0, mass=1.0, stiffness=200.0, pin="top")
    sim.break_strains = 0.3
    sim.gravity = (0.0, -200.0, 0.0)
    sim._defer_tearing = True  # as run() does: cut springs stay marked between calls
    dt = 0.5 * sim.critical_dt()
    for _ in range(100):
        grown, allocated = growths(sim, lambda: sim.step(dt, steps=10))
        assert grown == allocated
        if sim.num_springs and np.any(sim.stiffness == 0.0):
            break
    else:
        raise AssertionError("nothing tore")
    grown, allocated = growths(sim, sim._tear)  # the marks go, the broken list comes
    assert grown == allocated
    assert len(sim.broken_springs()) > 0


@pytest.mark.slow  # a leak check of seconds: a long test
def test_nbytes_counts_the_pins_a_step_held(tracing):
    # A step holds the pinned nodes that move (v = 0), keeping their velocities for a
    # rollback in arrays of its own, kept for the next step.
    sim = ss.string(20, length=1.0, mass=0.1, stiffness=10.0, dim=3, pin="both")
    sim.step(1e-4)
    sim.velocities[[0, -1]] = (1.0, 0.0, 0.0)
    grown, allocated = growths(sim, lambda: sim.step(1e-4))
    assert grown == allocated == 2 * (8 + 3 * 8)


@pytest.mark.slow  # a leak check of seconds: a long test
def test_nbytes_counts_the_drives(tracing):
    # Each kind of drive, its scratch (targets, the velocities a rollback restores) and
    # the list; made, renumbered, released and copied by the kernel's own calls (made
    # from this file, where tracemalloc sees their blocks; every array made first, as
    # NumPy keeps small blocks of its own).
    sim = ss.string(50, length=1.0, mass=0.1, stiffness=10.0, dim=3)
    sim.step(1e-4)
    line_nodes, target_nodes, hook_nodes = (
        np.array(n, dtype=np.int64) for n in ([1, 2, 3], [4, 5], [6])
    )
    line = np.ascontiguousarray(np.vstack([sim.positions[line_nodes], np.ones((3, 3))]))
    targets = np.zeros((30, 2, 3))
    released = [np.array(n, dtype=np.int64) for n in ([6, 7], [2], [1, 2], range(5))]
    np.empty(sim.num_nodes, dtype=np.int64)  # the block of _remove_nodes' map, cached
    for call in [
        lambda: sim._add_drive(ss._core.DRIVE_LINE, line_nodes, line, 0.0, 3, None, 0),
        lambda: sim._add_drive(ss._core.DRIVE_TARGETS, target_nodes, targets, 0.0, 2, None, 0),
        lambda: sim._add_drive(ss._core.DRIVE_HOOK, hook_nodes, None, 0.0, 1, None, 0),
        lambda: sim._undrive(released[0]),
        lambda: sim.step(1e-4, steps=3),
        lambda: sim._remove_nodes(released[1]),
        lambda: sim._undrive(released[2]),
    ]:
        grown, allocated = growths(sim, call)
        assert grown == allocated
    grown, allocated = growths(sim, lambda: sim._undrive(released[3]))
    assert grown < 0 and grown == allocated  # the last drive went, and the list with it
    sim._add_drive(ss._core.DRIVE_TARGETS, line_nodes, np.zeros((4, 3, 3)), 0.0, 3, None, 0)
    copies = []
    grown, allocated = growths(sim, lambda: copies.append(ss._core.System.copy(sim)))
    assert grown == 0 and copies[0].nbytes <= allocated


# ---------------------------------------------------------------------- the process's view


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_rss_growth_of_a_fresh_process_is_within_10_percent_of_nbytes():
    # A fresh interpreter builds and steps the 100x100 cloth: its anonymous resident memory
    # grows by sim.nbytes, give or take 10 %. Without the heap trim after a large build,
    # the builder's freed NumPy temporaries stayed resident: 1.19x.
    figures = process_growth("cloth_100")
    assert figures["springs"] == 59_002
    assert 0.9 <= figures["growth_ratio"] <= 1.10, figures
