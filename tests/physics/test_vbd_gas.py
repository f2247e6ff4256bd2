"""method="vbd" with gas bodies in the vertex block: against the NumPy oracle, and a
balloon that settles to the gas law at a step where explicit gas cannot go."""

import numpy as np
import pytest

import springsim as ss
from springsim import reference


def gas_ball(dim: int) -> ss.System:
    if dim == 3:
        sim = ss.ball(subdivisions=1, radius=1.0, mass=1.0, stiffness=200.0, damping=0.5, nrt=30.0)
    else:
        sim = ss.ball(nodes=12, radius=1.0, mass=1.0, stiffness=200.0, damping=0.5, dim=2, nrt=5.0)
    sim.velocities[:] = np.random.default_rng(dim).normal(size=sim.velocities.shape)
    sim.iterations = 6
    return sim


@pytest.mark.parametrize("dim", [2, 3])
def test_kernel_matches_the_numpy_oracle(dim):
    sim = gas_ball(dim)
    z = np.zeros(dim)
    z[1] = 1.0
    sim.add_plane(z, offset=-1.05, friction=0.3)  # the gas and a collider in one block
    s = reference.State.from_system(sim)
    sim.step(0.01, steps=5, method="vbd")
    reference.step(s, 0.01, steps=5, method="vbd")
    # The same operations in the same order: round-off apart at most (1e-12 of
    # coordinates of order 1; the velocities are those over dt = 0.01).
    np.testing.assert_allclose(sim.positions, s.x, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sim.velocities, s.v, rtol=0, atol=1e-10)


def balloon() -> ss.System:
    """A ring of 32 soft springs (10 N/m, rest length half the start's) and 1 g in all,
    holding nrt = 300 J: the gas, not the springs, sets its size (it grows sevenfold)."""
    n = 32
    ring = ss.ball(nodes=n, radius=1.0, mass=1e-3, stiffness=10.0, dim=2)
    ring.gravity = (0, 0)
    ring.rest_lengths[:] *= 0.5
    ring.add_pressure(np.arange(n), nrt=300.0)
    ring.iterations = 30
    return ring


def test_a_balloon_settles_to_the_gas_law_at_a_large_step():
    # At rest the two springs at each node pull inward with 2 T sin(π/n) and the gas
    # pushes out with P times one edge, 2 a tan(π/n) (a: the centre to the springs'
    # middles): P = T / a, and then P V = nrt (V: the shoelace area). dt = 0.05 s is
    # 28 times the springs' critical_dt (symplectic Euler, its gas and springs explicit,
    # fails); vbd with the gas in its blocks settles (backward Euler damps the
    # breathing), to the settling's 1e-9. With the gas explicit (vbd before it was in
    # the blocks) the same balloon still moved at 0.17 m/s after 10 s.
    ring = balloon()
    dt = 0.05
    assert dt > 20 * ring.critical_dt()
    with pytest.raises(ss.UnstableError):
        ring.copy().step(dt, steps=200, method="symplectic_euler")
    ring.step(dt, steps=200, method="vbd")
    assert np.abs(ring.velocities).max() < 1e-9
    x = ring.positions
    centre = x.mean(axis=0)
    middles = 0.5 * (x + np.roll(x, -1, axis=0))
    a = np.linalg.norm(middles - centre, axis=1).mean()
    area = 0.5 * float(np.sum(x[:, 0] * np.roll(x[:, 1], -1) - np.roll(x[:, 0], -1) * x[:, 1]))
    p = ring.spring_tensions().mean() / a
    assert p * area == pytest.approx(300.0, rel=1e-9)
    assert ring.gas(0).pressure == pytest.approx(p, rel=1e-9)
    assert np.linalg.norm(x - centre, axis=1).mean() > 5.0  # the gas blew it up


def test_the_books_balance_with_gas():
    sim = gas_ball(3)
    sim.track_energy = True
    e0 = sim.energy().total
    sim.step(0.01, steps=20, method="vbd")
    # dissipated gains E0 + W − E1 each substep (W = 0 here): the books balance to
    # round-off of the energies (order 10 J), the gas energy −nrt ln V included.
    assert sim.energy().total + sim.dissipated == pytest.approx(e0, abs=1e-9)
    assert sim.dissipated > 0.0


def test_bit_identical_on_one_and_two_threads():
    def run(threads):
        ss.set_num_threads(threads)
        try:
            sim = ss.ball(subdivisions=5, radius=1.0, mass=1.0, stiffness=500.0, nrt=30.0)
            sim.iterations = 3
            sim.step(0.01, steps=3, method="vbd")
            return np.array(sim.positions)
        finally:
            ss.set_num_threads(None)

    assert np.array_equal(run(1), run(2))
