"""Determinism, and what happens when two threads touch systems at once.

``step`` releases the GIL. A second thread that steps or resizes the *same* system
meanwhile gets a RuntimeError (and the running step is unaffected); threads working
on *different* systems run side by side and get exactly the sequential results.
"""

import threading
import time

import numpy as np
import pytest
from state import assert_same, snapshot

import springsim as ss

# ---- determinism -----------------------------------------------------------------


def make_random_system(seed=11):
    """Sixty nodes in a jittered 3D grid, springs to near neighbours, every feature on."""
    rng = np.random.default_rng(seed)
    grid = np.stack(np.meshgrid(np.arange(5), np.arange(4), np.arange(3)), -1).reshape(-1, 3)
    x = grid * 0.1 + rng.normal(scale=0.01, size=grid.shape)
    n = len(x)
    distance = np.linalg.norm(grid[:, None] - grid[None], axis=-1)
    pairs = np.argwhere(np.triu(distance < 1.5, k=1))
    sim = ss.System(dim=3)
    sim.add_nodes(
        x,
        masses=rng.uniform(0.05, 0.2, n),
        velocities=rng.normal(scale=0.1, size=(n, 3)),
        pinned=np.arange(n) < 3,
    )
    sim.add_springs(
        pairs,
        stiffness=rng.uniform(50.0, 150.0, len(pairs)),
        damping=rng.uniform(0.0, 0.05, len(pairs)),
        rest_lengths=rng.uniform(0.08, 0.16, len(pairs)),
    )
    sim.external_forces = rng.normal(scale=0.1, size=(n, 3))
    sim.wind = [0.5, 0.0, -0.2]
    sim.drag = 0.01
    sim.energy_loss = 0.9995
    return sim


DT = 2e-4


@pytest.mark.parametrize("method", ss.METHODS)
def test_same_system_stepped_twice_is_bit_identical(method):
    sim = make_random_system()
    sim.step(DT, steps=10, method=method)  # copy mid-run: any hidden state must come along
    dup = sim.copy()
    sim.step(DT, steps=100, method=method)
    dup.step(DT, steps=100, method=method)
    assert_same(snapshot(sim), snapshot(dup))

    rebuilt = make_random_system()
    rebuilt.step(DT, steps=10, method=method)
    rebuilt.step(DT, steps=100, method=method)
    assert_same(snapshot(sim), snapshot(rebuilt))
    assert np.all(np.isfinite(sim.positions))


@pytest.mark.parametrize("method", ss.METHODS)
def test_splitting_a_run_into_calls_changes_nothing(method):
    whole = make_random_system()
    whole.step(DT, steps=60, method=method)
    pieces = make_random_system()
    for _ in range(6):
        pieces.step(DT, steps=10, method=method)
    a, b = snapshot(whole), snapshot(pieces)
    assert b.pop("time") == pytest.approx(a.pop("time"), rel=1e-12)
    assert_same(a, b)


# ---- one system, two threads -----------------------------------------------------

CHAIN_DT = 1e-4


def make_chain(n=20_000, stiffness=100.0):
    """A long hanging chain: cheap to build, as slow to step as we like."""
    sim = ss.System(dim=3)
    x = np.zeros((n, 3))
    x[:, 0] = np.arange(n) * 0.01
    sim.add_nodes(x, masses=0.01, pinned=np.arange(n) == 0)
    pairs = np.column_stack([np.arange(n - 1), np.arange(1, n)])
    sim.add_springs(pairs, stiffness=stiffness, damping=0.01)
    return sim


def steps_lasting(sim, seconds):
    """How many substeps of CHAIN_DT take about ``seconds`` on this machine."""
    probe = sim.copy()
    probe.step(CHAIN_DT, steps=5)  # warm up
    start = time.perf_counter()
    probe.step(CHAIN_DT, steps=20)
    elapsed = max(time.perf_counter() - start, 1e-6)
    return max(20, int(20 * seconds / elapsed))


OPS = {
    "step": lambda sim: sim.step(CHAIN_DT),
    "add_nodes": lambda sim: sim.add_nodes(np.ones((1, 3))),
    "add_springs": lambda sim: sim.add_springs([[0, 2]], stiffness=1.0),
    "remove_springs": lambda sim: sim.remove_springs([0]),
}


@pytest.mark.parametrize("op", list(OPS))
def test_second_thread_on_same_system_gets_runtime_error(op):
    sim = make_chain()
    steps = steps_lasting(sim, 0.4)
    for _attempt in range(3):
        expected = sim.copy()
        started = threading.Event()
        failure = []

        def run_long_step(sim=sim, steps=steps, started=started, failure=failure):
            started.set()
            try:
                sim.step(CHAIN_DT, steps=steps)
            except BaseException as error:  # reported by the main thread
                failure.append(error)

        runner = threading.Thread(target=run_long_step)
        runner.start()
        started.wait()
        time.sleep(0.05)  # let the runner get into the C loop
        outcome = None
        if runner.is_alive():
            try:
                OPS[op](sim)
                outcome = "succeeded"
            except RuntimeError as error:
                outcome = error
            still_running = runner.is_alive()
        runner.join()

        assert not failure, f"the running step failed: {failure[0]!r}"
        if outcome == "succeeded":
            assert not still_running, f"{op} succeeded while another thread was stepping"
        if isinstance(outcome, RuntimeError):
            assert not isinstance(outcome, ss.UnstableError)
            # The refused call changed nothing and the running step completed normally.
            expected.step(CHAIN_DT, steps=steps)
            assert_same(snapshot(expected), snapshot(sim))
            # Once the step is over, the same call is allowed again.
            OPS[op](sim)
            return
        # The runner finished before we could try (a slow machine): try a longer step.
        sim = make_chain()
        steps *= 3
    pytest.fail(
        f"{op} never raised RuntimeError during another thread's step: it waited for the"
        " step to end, or step holds the GIL"
    )


def test_two_threads_two_systems_match_sequential_results():
    systems = [make_chain(stiffness=100.0), make_chain(stiffness=80.0)]
    steps = steps_lasting(systems[0], 0.3)
    expected = [s.copy() for s in systems]
    barrier = threading.Barrier(len(systems))
    failures = []

    def run(sim):
        barrier.wait()
        try:
            sim.step(CHAIN_DT, steps=steps)
        except BaseException as error:  # reported by the main thread
            failures.append(error)

    threads = [threading.Thread(target=run, args=(s,)) for s in systems]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures

    for e in expected:
        e.step(CHAIN_DT, steps=steps)
    for e, s in zip(expected, systems, strict=True):
        assert_same(snapshot(e), snapshot(s))
