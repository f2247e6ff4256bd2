"""XPBD: springs as compliant distance constraints (method="xpbd")."""

import numpy as np
import pytest
from state import assert_same, snapshot

import springsim as ss


def rod_chain(links=5, length=0.2):
    """A chain of rigid rods (stiffness inf) pinned at its top, starting horizontal."""
    sim = ss.System(dim=2)
    sim.add_nodes(np.column_stack([np.arange(links + 1) * length, np.zeros(links + 1)]), masses=0.1)
    sim.pin(0)
    sim.add_springs(np.column_stack([np.arange(links), np.arange(1, links + 1)]), stiffness=np.inf)
    return sim


def test_rigid_rods_keep_their_length():
    sim = rod_chain()
    sim.iterations = 50
    lowest = 0.0
    for _ in range(100):  # 1000 steps
        sim.step(1e-3, steps=10, method="xpbd")
        lengths = sim.spring_lengths()
        np.testing.assert_allclose(lengths, sim.rest_lengths, rtol=1e-6)
        lowest = min(lowest, sim.positions[-1, 1])
    assert lowest < -0.5  # it really swung down
    assert sim.energy().elastic == 0.0  # rods store no energy


def test_one_rod_pendulum_period():
    # Small amplitude (0.05 rad): T = 2 pi sqrt(L/g) to within (theta0^2/16) ~ 1.6e-4.
    length, g = 1.0, 9.81
    sim = ss.System(dim=2)
    theta = 0.05
    sim.add_nodes([[0.0, 0.0], [length * np.sin(theta), -length * np.cos(theta)]])
    sim.pin(0)
    sim.add_springs([0, 1], stiffness=np.inf)
    sim.iterations = 20
    dt, xs = 1e-3, []
    for _ in range(6000):
        sim.step(dt, method="xpbd")
        xs.append(sim.positions[1, 0])
    xs = np.array(xs)
    down = np.flatnonzero((xs[:-1] > 0) & (xs[1:] <= 0))
    # Linear interpolation of the downward zero crossings.
    t = (down + xs[down] / (xs[down] - xs[down + 1]) + 1) * dt
    period = np.diff(t).mean()
    assert abs(period / (2 * np.pi * np.sqrt(length / g)) - 1) < 5e-3


def test_cloth_stretches_less_with_more_iterations():
    stretch = []
    for iterations in (1, 5, 20, 50):
        sim = ss.cloth(12, 12, 1.0, 1.0, mass=0.5, stiffness=1e6, pin="top")
        sim.iterations = iterations
        sim.step(2e-3, steps=250, method="xpbd")
        stretch.append(float((sim.spring_lengths() / sim.rest_lengths).max() - 1))
    assert all(a > b for a, b in zip(stretch, stretch[1:], strict=False)), stretch
    assert stretch[-1] < 0.1 * stretch[0]


def test_pins_and_colliders_are_respected():
    sim = rod_chain(links=4)
    floor = sim.add_plane([0, 1], offset=-0.3)
    top = sim.positions[0].copy()
    for _ in range(200):
        sim.step(1e-3, steps=5, method="xpbd")
        assert np.array_equal(sim.positions[0], top)
        assert sim.positions[:, 1].min() >= floor.offset - 1e-12


def test_compliant_spring_sags_like_hooke():
    # One mass on a finite spring comes to rest at the Hooke extension m g / k.
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 0.0], [0.0, -1.0]], masses=[1.0, 2.0])
    sim.pin(0)
    sim.add_springs([0, 1], stiffness=500.0, damping=5.0)
    sim.iterations = 20
    sim.step(1e-3, steps=20000, method="xpbd")  # 20 s: the oscillation has died out
    np.testing.assert_allclose(-sim.positions[1, 1], 1.0 + 2.0 * 9.81 / 500.0, rtol=1e-9)


@pytest.mark.parametrize("bad, error", [(0, ValueError), (-3, ValueError), (2.5, TypeError)])
def test_bad_iterations_raise_and_change_nothing(bad, error):
    sim = rod_chain()
    before = snapshot(sim)
    with pytest.raises(error):
        sim.iterations = bad
    assert_same(before, snapshot(sim))
    assert sim.iterations == 10


def test_rigid_rods_cannot_be_stepped_by_force_methods():
    sim = rod_chain()
    sim.positions[1, 0] += 1e-3  # a rod that is not at its rest length: infinite force
    before = snapshot(sim)
    with pytest.raises(ValueError, match="method='xpbd'"):  # refused, not a blow-up
        sim.step(1e-3, steps=10, method="symplectic_euler")
    assert_same(before, snapshot(sim))


def test_a_spring_of_zero_stiffness_is_no_constraint():
    # Compliance 1/k is infinite for k = 0: the spring must pull nothing (it once made
    # 0 * inf = NaN). Two stretched nodes joined by it move exactly as free nodes.
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 0.0], [1.0, 0.0]], velocities=[[-1.0, 0.0], [1.0, 0.0]])
    sim.add_springs([0, 1], stiffness=0.0, damping=2.0, rest_lengths=0.5)
    sim.gravity = (0, 0)
    sim.step(1e-2, steps=100, method="xpbd")
    np.testing.assert_allclose(sim.positions, [[-1.0, 0.0], [2.0, 0.0]], rtol=1e-12)
