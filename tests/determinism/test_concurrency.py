"""Determinism, and what happens when two threads touch systems at once.

``step`` releases the GIL. A System has one owner at a time (its ``lock``): a second
thread's call on the *same* system meanwhile waits for the step to end, then acts as
if the two ran in turn; threads working on *different* systems run side by side and get
exactly the sequential results.
"""

import pickle
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


def _saved(sim, path):
    sim.save(path)
    return snapshot(ss.load(path))


#: Calls a second thread makes while the first steps: each returns what to compare.
OPS = {
    "step": lambda sim, tmp: sim.step(CHAIN_DT),
    "add_nodes": lambda sim, tmp: sim.add_nodes(np.ones((1, 3))).tolist(),
    "add_springs": lambda sim, tmp: sim.add_springs([[0, 2]], stiffness=1.0).tolist(),
    "remove_springs": lambda sim, tmp: sim.remove_springs([0]),
    "energy": lambda sim, tmp: sim.energy(),
    "critical_dt": lambda sim, tmp: sim.critical_dt(),
    "momentum": lambda sim, tmp: sim.momentum().tolist(),
    "spring_tensions": lambda sim, tmp: sim.spring_tensions().tobytes(),
    "positions": lambda sim, tmp: sim.positions.tobytes(),
    "set time": lambda sim, tmp: setattr(sim, "time", 1.0),
    "save": lambda sim, tmp: _saved(sim, tmp / "saved.npz"),
    "pickle": lambda sim, tmp: snapshot(pickle.loads(pickle.dumps(sim))),
    "copy": lambda sim, tmp: snapshot(sim.copy()),
}


@pytest.mark.parametrize("op", list(OPS))
def test_a_call_during_another_threads_step_waits_for_it(op, tmp_path):
    """One owner at a time: the call waits until the step is over (it never races it,
    and never fails), then acts on the stepped system: as if the two ran in turn."""
    sim = make_chain()
    steps = steps_lasting(sim, 0.4)
    expected = sim.copy()
    started = threading.Event()
    failure, ended = [], []

    def run_long_step():
        started.set()
        try:
            sim.step(CHAIN_DT, steps=steps)
            ended.append(time.monotonic())
        except BaseException as error:  # reported by the main thread
            failure.append(error)

    runner = threading.Thread(target=run_long_step)
    runner.start()
    started.wait()
    deadline = time.monotonic() + 5.0
    while not sim.lock.locked() and runner.is_alive() and time.monotonic() < deadline:
        time.sleep(0.001)  # until the step owns the system
    held = sim.lock.locked()
    result = OPS[op](sim, tmp_path)
    returned = time.monotonic()
    runner.join()

    assert not failure, f"the running step failed: {failure[0]!r}"
    assert held, "the step never held the system's lock"
    # The call returned after the step did (within a thread switch: the step lets go
    # of the lock just before it returns), not while it still had a long way to go.
    assert returned >= ended[0] - 0.1, f"{op} returned while the other thread was stepping"
    expected.step(CHAIN_DT, steps=steps)
    expected_result = OPS[op](expected, tmp_path)
    if isinstance(result, dict):
        assert_same(result, expected_result)
    else:
        assert result == expected_result
    assert_same(snapshot(expected), snapshot(sim))


def test_a_call_while_another_thread_holds_the_lock_waits_then_sees_its_changes():
    sim = make_chain(n=50)
    inside, let_go = threading.Event(), threading.Event()

    def holder():
        with sim.lock:
            sim.velocities[:] = 0.0
            inside.set()
            let_go.wait(5.0)
            sim.velocities[:, 1] = 2.0  # a second write, which the waiter must not miss

    thread = threading.Thread(target=holder)
    thread.start()
    inside.wait(5.0)
    assert sim.lock.locked() and not sim.lock._is_owned()
    timer = threading.Timer(0.1, let_go.set)
    timer.start()
    began = time.monotonic()
    momentum = sim.momentum()  # waits for the holder's second write
    waited = time.monotonic() - began
    thread.join()
    timer.join()
    assert waited >= 0.05
    assert momentum.tolist() == pytest.approx([0.0, 2.0 * 0.01 * 50, 0.0], rel=1e-12)


def test_the_lock_is_reentrant_like_an_rlock():
    sim = make_chain(n=10)
    lock = sim.lock
    assert not lock.locked()
    with sim.lock:
        with sim.lock:  # re-entrant, and every call of the owner goes through
            sim.step(CHAIN_DT)
            assert lock.locked() and lock._is_owned()
        assert lock.locked()
    assert not lock.locked()
    with pytest.raises(RuntimeError, match="does not hold"):
        lock.release()
    assert lock.acquire(blocking=False) is True
    lock.release()
    with pytest.raises(ValueError, match="non-blocking"):
        lock.acquire(blocking=False, timeout=1.0)
    with pytest.raises(ValueError, match="non-negative"):
        lock.acquire(timeout=-2.0)


def test_another_thread_times_out_and_a_condition_waits_on_the_lock():
    sim = make_chain(n=10)
    outcome = []
    with sim.lock:
        thread = threading.Thread(
            target=lambda: outcome.append((sim.lock.acquire(timeout=0.05), sim.lock.locked()))
        )
        thread.start()
        thread.join()
    assert outcome == [(False, True)]
    # threading.Condition lets go of every level while it waits
    condition = threading.Condition(sim.lock)
    with condition:
        with sim.lock:
            other = threading.Thread(target=lambda: outcome.append(sim.energy().total))
            other.start()
            condition.wait(0.2)  # the other thread's call runs meanwhile
            other.join(5.0)
    assert len(outcome) == 2 and not sim.lock.locked()


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
