"""Threads: results are bit-identical for any thread count; the settings are checked.

The kernel colours the springs so that threads never add into the same node at once
and every node sums its springs in one order (csrc/kernel/threads/parallel.c). Systems need at
least 8192 springs before threads are used, so the systems here are that large.
"""

import hashlib
import json
import os
import subprocess
import sys

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
    sim = ss.cloth(60, 60, width=1.0, height=1.0, mass=1.0, stiffness=500.0, damping=0.02)
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


def cloth_in_contact_with_itself():
    """A 60 × 60 cloth whose nodes have a contact radius of 1.2 cells: every node
    overlaps the up to 8 nodes 2 and 2.2 cells away that no spring joins (the ones
    closer are its structural, shear and bend neighbours): 13,688 pairs."""
    sim = ss.cloth(60, 60, width=1.0, height=1.0, mass=1.0, stiffness=500.0, damping=0.02)
    sim.gravity = 0.0
    sim.radii = 1.2 / 59
    sim.contact_stiffness = 50.0  # N/m: the overlaps push the nodes apart gently
    sim.contact_friction = 0.3
    rng = np.random.default_rng(7)
    sim.velocities = rng.normal(scale=0.1, size=sim.velocities.shape)
    return sim


@pytest.mark.parametrize("method", ["symplectic_euler", "rk4"])
def test_contact_pairs_shared_by_two_threads_give_the_bits_of_one(threads, method):
    # One thread sums each pair's force straight into its nodes; two compute the pairs'
    # forces in pieces of at least 512 pairs (forces.c), one of them then adds them in
    # pair order. A node meets up to 8 pairs, so adding them in any other order would
    # round differently within a few of the 50 steps.
    hashes = []
    for n in (1, 2):
        threads(n)
        sim = cloth_in_contact_with_itself()
        assert sim.num_springs >= 8192  # the kernel does use the threads
        assert len(sim.contact_pairs()) >= 4 * 512  # so the pairs are cut into pieces
        sim.step(0.2 * sim.critical_dt(), steps=50, method=method)
        assert np.isfinite(sim.positions).all()
        assert len(sim.contact_pairs()) >= 4 * 512
        hashes.append(state_hash(sim))
    assert hashes[0] == hashes[1]


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


IMPORT_UNDER_ENV = """
import json, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import springsim as ss
try:
    ss.set_num_threads(None)
    explicit = "returned"
except ValueError as error:
    explicit = f"ValueError: {error}"
print(json.dumps({
    "threads": ss.get_num_threads(),
    "warnings": [(w.category.__name__, str(w.message)) for w in caught],
    "explicit": explicit,
    "default": ss.runtime.threads._cores() if ss.threading_available() else 1,
}))
"""


@pytest.mark.parametrize("value", ["abc", "0", "-3", "99999", "1" * 30, "2.5"])
def test_a_bad_environment_variable_warns_at_import_instead_of_failing(value):
    env = dict(os.environ, SPRINGSIM_NUM_THREADS=value)
    child = subprocess.run(
        [sys.executable, "-c", IMPORT_UNDER_ENV], env=env, capture_output=True, text=True
    )
    assert child.returncode == 0, child.stderr
    out = json.loads(child.stdout)
    assert out["threads"] == out["default"]  # the default: every core
    runtime = [message for category, message in out["warnings"] if category == "RuntimeWarning"]
    assert len(runtime) == 1 and f"SPRINGSIM_NUM_THREADS={value!r}" in runtime[0]
    # Asked for explicitly, the default still refuses the bad value, naming it.
    assert out["explicit"].startswith("ValueError: SPRINGSIM_NUM_THREADS=")
