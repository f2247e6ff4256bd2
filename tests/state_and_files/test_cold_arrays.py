"""Cold arrays cost nothing until a feature uses them.

External forces, Verlet's last acceleration, texture coordinates and break strains
hold no memory in a new system: every row is its default (0; inf for break strains).
A view of one, an assignment to it, or the feature that needs it (a Verlet step)
gives it memory, filled with the defaults; nothing else changes, not a bit.
"""

import numpy as np
import pytest
from state import assert_same, snapshot

import springsim as ss

COLD = {"external_forces": 0.0, "_prev_accel": 0.0, "uvs": 0.0, "break_strains": np.inf}


def chain(n=2000):
    """A string of n nodes (n - 1 springs), built without touching a cold array."""
    sim = ss.System(dim=3)
    x = np.zeros((n, 3))
    x[:, 0] = np.arange(n) * 0.01
    sim.add_nodes(x, masses=0.01, pinned=np.arange(n) == 0)
    sim.add_springs(np.column_stack([np.arange(n - 1), np.arange(1, n)]), stiffness=50.0)
    return sim


def test_a_new_system_holds_no_memory_for_its_cold_arrays():
    sim = chain()
    cold_bytes = sim.num_nodes * (3 + 3 + 2) * 8 + sim.num_springs * 8
    warm = chain()
    for name in COLD:
        warm._view(name)  # a view makes the array real
    assert warm.nbytes - sim.nbytes >= cold_bytes
    sim.step(1e-4, steps=3)  # symplectic Euler needs none of them
    warm.step(1e-4, steps=3)
    assert warm.nbytes - sim.nbytes >= cold_bytes


def test_a_view_shows_the_defaults_and_takes_writes():
    sim = chain(50)
    for name, default in COLD.items():
        view = sim._view(name)
        assert np.all(view == default), name
    sim.external_forces[3] = (0.0, -1.0, 0.0)
    sim.break_strains[:] = 0.5
    assert sim.external_forces[3, 1] == -1.0 and sim.break_strains[7] == 0.5


@pytest.mark.parametrize("method", ss.METHODS)
def test_absent_and_materialised_defaults_step_bit_identically(method):
    # A system that never touched its cold arrays and one whose views were made (all
    # defaults) must step to the same bits: the kernel treats absence as the defaults.
    lean, warm = chain(300), chain(300)
    for name in COLD:
        warm._view(name)
    dt = 0.2 * lean.critical_dt()
    lean.step(dt, steps=40, method=method)
    warm.step(dt, steps=40, method=method)
    assert_same(snapshot(lean), snapshot(warm))


def test_verlet_makes_its_history_real_and_copies_stay_lean():
    sim = chain(100)
    copy = sim.copy()
    assert copy.nbytes <= sim.nbytes
    before = sim.nbytes
    sim.step(1e-4, steps=2, method="verlet")
    assert sim.nbytes >= before + sim.num_nodes * 3 * 8  # the Verlet history exists now
    copy.step(1e-4, steps=2, method="verlet")
    assert_same(snapshot(sim), snapshot(copy))


def test_topology_edits_keep_cold_arrays_cold_and_right():
    sim = chain(100)
    sim.add_nodes(np.ones((3, 3)))
    sim.add_springs([[99, 100]], stiffness=1.0)
    sim.remove_nodes([5])
    sim.remove_springs([0])
    assert np.all(sim.external_forces == 0.0) and np.all(np.isinf(sim.break_strains))
    assert sim.uvs.shape == (sim.num_nodes, 2) and np.all(sim.uvs == 0.0)
