"""Threads: results are bit-identical for any thread count; the settings are checked.

The kernel colours the springs so that threads never add into the same node at once
and every node sums its springs in one order (csrc/parallel.c). Systems need at
least 8192 springs before threads are used, so the systems here are that large.
"""

import hashlib

import numpy as np
import pytest
from state import ARRAYS

import springsim as ss
from springsim import reference


def state_hash(sim) -> str:
    digest = hashlib.sha256()
    for name in ARRAYS:
        digest.update(np.ascontiguousarray(sim._view(name)).tobytes())
    digest.update(np.float64(sim.time).tobytes())
    return digest.hexdigest()


@pytest.fixture
def threads():
    """Set the thread count inside a test; restore the default afterwards."""
    yield ss.set_num_threads
    ss.set_num_threads(None)


def big_cloth():
    sim = ss.cloth(60, 60, 1.0, 1.0, mass=1.0, stiffness=500.0, damping=0.02)
    assert sim.num_springs >= 8192
    rng = np.random.default_rng(5)
    sim.velocities = rng.normal(scale=0.1, size=sim.velocities.shape)
    sim.drag, sim.wind = 0.01, (0.0, 0.0, 1.0)
    return sim


def big_cluster():
    """130 points all joined: 129 springs per node, more than the 63 colours of the
    mask, so the overflow colour (one thread, in order) is exercised too."""
    rng = np.random.default_rng(6)
    sim = ss.cluster(rng.uniform(size=(130, 3)), mass=1.0, stiffness=20.0, damping=0.01)
    assert sim.num_springs >= 8192
    sim.velocities = rng.normal(scale=0.1, size=sim.velocities.shape)
    return sim


@pytest.mark.skipif(not ss.threading_available(), reason="built without OpenMP")
def test_two_threads_really_are_used(threads):
    assert threads(2) == 2 and ss.get_num_threads() == 2


@pytest.mark.parametrize("build", [big_cloth, big_cluster])
@pytest.mark.parametrize("method", ss.METHODS)
def test_one_and_two_threads_hash_identically(threads, build, method):
    hashes = []
    for n in (1, 2, 1):
        threads(n)
        sim = build()
        dt = 0.3 * sim.critical_dt()
        sim.step(dt, steps=100, method=method)
        hashes.append(state_hash(sim))
    assert hashes[0] == hashes[1] == hashes[2]


def test_threaded_kernel_equals_reference_across_topology_edits(threads):
    # The colouring is rebuilt after every topology edit: springs added, removed and
    # nodes removed between steps must give the oracle's result.
    threads(2)
    sim = big_cloth()
    dt = 0.3 * sim.critical_dt()
    sim.step(dt, steps=5)
    sim.add_springs([[0, 3599], [10, 2000]], stiffness=100.0)
    sim.remove_springs(np.arange(0, 3000, 7))
    sim.remove_nodes([1234, 77])
    ref = reference.State.from_system(sim)
    sim.step(dt, steps=20)
    reference.step(ref, dt, steps=20)
    scale = np.abs(ref.x).max()
    np.testing.assert_allclose(sim.positions, ref.x, rtol=1e-12, atol=1e-12 * scale)


def test_set_num_threads_rejects_bad_values(threads, monkeypatch):
    before = ss.get_num_threads()
    for bad, error in ((0, ValueError), (-3, ValueError), (1.5, TypeError), ("2", TypeError)):
        with pytest.raises(error):
            threads(bad)
        assert ss.get_num_threads() == before
    monkeypatch.setenv("SPRINGSIM_NUM_THREADS", "two")
    with pytest.raises(ValueError, match="SPRINGSIM_NUM_THREADS"):
        threads(None)
    monkeypatch.setenv("SPRINGSIM_NUM_THREADS", "1")
    assert threads(None) == 1
