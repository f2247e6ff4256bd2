"""Gas bodies that start in equilibrium: ``ball(..., nrt=..., settle=True)`` (issue 28).

Checked against the NumPy oracle's forces (:mod:`springsim.reference`: the springs'
and the gas's, computed apart from the kernel and from ``relax``), against the regular
polygon's closed-form equilibrium, and by stepping: a settled ball left alone keeps
still, an unsettled one wobbles with the energy its springs' stretch stores.
"""

import math

import numpy as np
import pytest

import springsim as ss
from springsim import reference

pytest.importorskip("scipy")  # settle relaxes, which needs SciPy

K, NRT_2D, NRT_3D = 1e4, 80.0, 40.0  # N/m; J/m (about 100 N/m at r = 0.5); J (~75 Pa)


def net_forces(sim):
    """Spring plus gas force on every node, N, by the NumPy oracle."""
    s = reference.State.from_system(sim)
    still = np.zeros_like(s.x)
    return reference.spring_forces(s, s.x, still) + reference.pressure_forces(s, s.x)


@pytest.mark.parametrize("dim", [2, 3])
def test_a_settled_ball_is_in_equilibrium_under_its_gas(dim):
    count = {"nodes": 20} if dim == 2 else {"subdivisions": 2}
    nrt = NRT_2D if dim == 2 else NRT_3D
    sim = ss.ball(radius=0.5, mass=1.0, stiffness=K, dim=dim, nrt=nrt, settle=True, **count)
    assert sim.gravity[1] == -9.81  # given back
    # relax's tolerance is 1e-10 of the largest single force (a spring's tension here);
    # the oracle sums the same forces in another order, a few ulps of the tension apart.
    forces = net_forces(sim)
    tension = np.abs(sim.spring_tensions()).max()
    assert tension > 1.0  # the gas does stretch the springs
    assert np.abs(forces).max() < 1e-8 * tension
    np.testing.assert_allclose(sim.positions.mean(axis=0), np.zeros(dim), atol=1e-12)
    unsettled = ss.ball(radius=0.5, mass=1.0, stiffness=K, dim=dim, nrt=nrt, **count)
    assert np.abs(net_forces(unsettled)).max() > 0.1 * tension  # far from it by default


def test_a_settled_ring_has_the_regular_polygons_radius():
    # A regular N-gon of circumradius R full of gas at P = nrt / A, A = N R^2 sin(2 pi/N)/2:
    # each node gets P s cos(pi/N) outward from its two half edges (s = 2 R sin(pi/N)) and
    # 2 T sin(pi/N) inward from its springs, so T = P R cos(pi/N) with T = k (s - L).
    n, radius = 20, 0.5
    rest = 2 * radius * math.sin(math.pi / n)

    def unbalanced(r):
        pressure = NRT_2D / (0.5 * n * r * r * math.sin(2 * math.pi / n))
        return K * (2 * r * math.sin(math.pi / n) - rest) - pressure * r * math.cos(math.pi / n)

    low, high = radius, 2 * radius  # unbalanced(low) < 0 < unbalanced(high)
    for _ in range(100):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if unbalanced(middle) < 0 else (low, middle)
    sim = ss.ball(nodes=n, radius=radius, mass=1.0, stiffness=K, dim=2, nrt=NRT_2D, settle=True)
    radii = np.linalg.norm(sim.positions, axis=1)
    # relax leaves positions within about 1e-10 of the stretch (0.025 m here)
    np.testing.assert_allclose(radii, low, rtol=1e-9)


@pytest.mark.parametrize("dim", [2, 3])
def test_a_settled_ball_keeps_still_and_an_unsettled_one_wobbles(dim):
    # Gravity off, no contact, 0.05 s (several periods of the ring's breathing mode).
    # Unsettled, the gas inflates the ball and it wobbles with about the elastic energy
    # it reaches at equilibrium (computed from the settled ball, apart from the step),
    # of order 1e-2 J here. Settled, the net force is 1e-10 of a tension (above), so the
    # motion it starts stores about (1e-10)^2 of that energy: 1e-6 J leaves room for
    # round-off over 500 steps and is still 1e4 times below the wobble.
    count = {"nodes": 20} if dim == 2 else {"subdivisions": 2}
    nrt = NRT_2D if dim == 2 else NRT_3D
    args = dict(radius=0.5, mass=1.0, stiffness=K, dim=dim, nrt=nrt, **count)
    calm, wobbly = ss.ball(**args, settle=True), ss.ball(**args)
    stretch = calm.energy().elastic  # J stored at equilibrium
    wobble = []
    for sim in (calm, wobbly):
        sim.gravity = 0
        dt = 0.2 * sim.critical_dt()
        peak = 0.0
        for _ in range(50):
            sim.step(dt, steps=10)
            peak = max(peak, sim.energy().kinetic)
        wobble.append(peak)
    assert wobble[1] > 0.3 * stretch > 1e-3  # unsettled: a real wobble
    assert wobble[0] < 1e-6


def test_a_settled_balloon_ties_its_string_to_the_inflated_ball():
    toy = ss.balloon(radius=0.2, string_length=1.0, mass=0.05, stiffness=50.0, nrt=0.5, settle=True)
    ball = ss.ball(subdivisions=1, radius=0.2, mass=0.045, stiffness=50.0, nrt=0.5, settle=True)
    np.testing.assert_allclose(toy.positions[: ball.num_nodes], ball.positions, atol=1e-12)
    knot = toy.springs[-1]
    np.testing.assert_allclose(toy.spring_lengths()[-1], toy.rest_lengths[-1])  # knot at rest
    assert knot[0] == 11  # the ball's lowest node


def test_settle_must_be_a_bool_and_needs_nothing_without_gas():
    with pytest.raises(TypeError, match="settle must be True or False"):
        ss.ball(nodes=8, radius=0.5, mass=1.0, stiffness=K, dim=2, nrt=1.0, settle="yes")
    bare = ss.ball(nodes=8, radius=0.5, mass=1.0, stiffness=K, dim=2, settle=True)
    np.testing.assert_allclose(np.linalg.norm(bare.positions, axis=1), 0.5)  # at rest as built
