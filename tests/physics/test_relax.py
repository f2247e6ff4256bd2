"""System.relax(): statics in one call, against independent solutions.

The hanging chain is checked against the discrete elastic catenary solved here by
shooting (scipy.optimize.fsolve on the horizontal tension and the first segment's
vertical force), the gas ring against Laplace's balance solved by brentq, and every
other equilibrium against the kernel's own forces: one symplectic Euler step from rest
gives each free node the velocity F dt / m, so F = m v / dt is the kernel's net force,
computed by none of relax()'s code.
"""

import warnings

import numpy as np
import pytest
from scipy.optimize import brentq, fsolve
from state import assert_same, snapshot

import springsim as ss

G = 9.81


def chain(n, span, rise, rest, mass, stiffness, dim=2):
    """n nodes on a straight line from a pin at the origin to one at (span, rise),
    joined by n − 1 springs of rest length ``rest``; free nodes of mass ``mass``."""
    sim = ss.System(dim=dim)
    t = np.linspace(0.0, 1.0, n)[:, None]
    end = np.zeros(dim)
    end[:2] = span, rise
    sim.add_nodes(t * end, masses=mass)
    sim.pin([0, n - 1])
    sim.add_springs(
        np.c_[np.arange(n - 1), np.arange(1, n)], stiffness=stiffness, rest_lengths=rest
    )
    return sim


def catenary(n, span, rise, rest, mass, stiffness):
    """The discrete elastic catenary, (n, 2): segment i pulls node i + 1 back along
    (H, V_i) with tension T_i = |(H, V_i)| and has length rest + T_i / k (the kernel's
    stiffness k is per spring, in N/m: T = k (l − L)); the vertical
    force grows by m g at each free node; the free ends of the shot must meet the pin."""
    weights = mass * G * np.ones(n - 2)

    def segments(h, v0):
        v = v0 + np.r_[0.0, np.cumsum(weights)]
        tension = np.hypot(h, v)
        return ((rest + tension / stiffness) / tension)[:, None] * np.c_[np.full_like(v, h), v]

    def miss(unknowns):
        return segments(*unknowns).sum(axis=0) - (span, rise)

    # Start from the parabola of the same length: sag s with length ≈ chord + 8 s²/(3 chord),
    # horizontal tension ≈ weight × chord / (8 s); fsolve polishes to round-off.
    total, chord = weights.sum(), np.hypot(span, rise)
    sag = np.sqrt(3 * chord * max((n - 1) * rest - chord, 1e-3 * chord) / 8)
    h = total * chord / (8 * sag)
    solution, *_ = fsolve(miss, (h, -total / 2 - h * rise / span), xtol=1e-15, full_output=True)
    assert np.abs(miss(solution)).max() < 1e-12 * (n * rest)
    return np.r_[np.zeros((1, 2)), np.cumsum(segments(*solution), axis=0)]


def kernel_forces(sim, dt=1e-3):
    """Net force on every free node as the kernel computes it (colliders left out)."""
    probe = sim.copy()
    for collider in probe.colliders:
        probe.remove_collider(collider)
    probe.velocities = 0.0
    probe.step(dt, method="symplectic_euler")
    force = probe.masses[:, None] * probe.velocities / dt
    return force[~sim.pinned]


@pytest.mark.parametrize(
    "n, span, rise, stiffness",
    [(21, 8.0, 0.0, 500.0), (31, 6.0, 2.5, 40.0), (16, 9.5, -1.0, 1e6)],
    ids=["level", "uneven-soft", "stiff-downhill"],
)
def test_hanging_chain_is_the_discrete_catenary_in_one_call(n, span, rise, stiffness):
    rest, mass = 10.0 / (n - 1), 0.3
    sim = chain(n, span, rise, rest, mass, stiffness)
    result = sim.relax()
    assert result.converged and result.iterations <= 50
    expected = catenary(n, span, rise, rest, mass, stiffness)
    length = (n - 1) * rest
    # The bar: 1e-9 of the chain's length. Newton ends at round-off, well below.
    assert np.abs(sim.positions - expected).max() <= 1e-9 * length
    assert result.residual <= 1e-10 * mass * G * n
    assert np.all(sim.velocities == 0.0)


def test_single_mass_hangs_m_g_over_k_below_rest():
    for mass, stiffness in [(2.0, 500.0), (0.01, 3.0), (70.0, 2e5)]:
        sim = ss.System(dim=3)
        sim.add_nodes(
            [[0, 0, 0], [0, -1, 0]], masses=[1.0, mass], velocities=[[0, 0, 0], [1, 2, 3]]
        )
        sim.pin(0, velocity=[0.5, 0, 0])  # dragged: relax() keeps its velocity, not it
        sim.add_springs([0, 1], stiffness=stiffness)
        assert sim.relax().converged
        y = sim.positions[1, 1]
        # y = −(1 + m g / k): the only error is the rounding of that sum (|y| ~ 1).
        assert abs(-y - 1.0 - mass * G / stiffness) <= 4 * np.finfo(float).eps * abs(y)
        assert sim.positions[1, [0, 2]].tolist() == [0.0, 0.0]
        assert sim.velocities.tolist() == [[0.5, 0.0, 0.0], [0.0, 0.0, 0.0]]
        assert sim.positions[0].tolist() == [0.0, 0.0, 0.0] and sim.time == 0.0


@pytest.mark.parametrize("start", ["bunched", "zigzag"])
def test_crumpled_start_reaches_the_same_catenary(start):
    n, span, rest, mass, stiffness = 21, 7.0, 0.5, 0.2, 300.0
    sim = chain(n, span, 0.0, rest, mass, stiffness)
    rng = np.random.default_rng(3)
    x = sim.positions
    if start == "bunched":  # every free node within 5 cm of the left pin: all compressed
        x[1:-1] = rng.uniform(0.0, 0.05, size=(n - 2, 2))
    else:  # a tight zigzag along the span
        x[1:-1, 1] = 0.02 * (-1.0) ** np.arange(n - 2)
    assert np.all(sim.spring_lengths()[:-1] < rest)  # all but the one to the far pin
    result = sim.relax()
    assert result.converged
    expected = catenary(n, span, 0.0, rest, mass, stiffness)
    assert np.abs(sim.positions - expected).max() <= 1e-9 * (n - 1) * rest


@pytest.mark.parametrize("corners", ["adjacent", "diagonal"])
def test_cloth_sags_to_zero_kernel_force(corners):
    # Built horizontal, held by two corners: it swings down a metre and wrinkles
    # (hundreds of compressed springs), which dynamics would take seconds to damp.
    cloth = ss.cloth(15, 15, width=1.0, height=1.0, mass=0.3, stiffness=2e3, damping=0.5)
    x = cloth.positions
    cloth.positions = np.c_[x[:, 0], x[:, 2], x[:, 1]]
    if corners == "diagonal":
        cloth.unpin(range(cloth.num_nodes))
        cloth.pin([0, cloth.num_nodes - 1])
    start = cloth.positions.copy()
    result = cloth.relax()
    assert result.converged
    assert np.abs(cloth.positions - start).max() > 0.5  # it fell
    assert np.sum(cloth.spring_lengths() < cloth.rest_lengths) > 100
    # The kernel's net force, against the largest spring tension: zero to round-off
    # (the tolerance, 1e-10 of the largest force, with room for the summation order).
    largest = np.abs(cloth.spring_tensions()).max()
    assert np.linalg.norm(kernel_forces(cloth), axis=1).max() <= 1e-9 * largest


def test_gas_ring_balances_laplace():
    n, k, rest, nrt, ambient = 16, 200.0, 0.3, 40.0, 2.0
    ring = ss.ball(nodes=n, radius=1.0, mass=0.1, stiffness=k, dim=2, nrt=nrt)
    ring.rest_lengths = rest
    ring.gas(0).ambient = ambient
    ring.gravity = (0.0, 0.0)
    ring.positions = ring.positions * 0.7 + (0.3, -0.1)  # squeezed and moved
    assert ring.relax().converged
    half = np.pi / n

    def imbalance(r):  # springs' inward pull against the gas's outward push, per node
        area = 0.5 * n * r * r * np.sin(2 * half)
        return 2 * k * (2 * r * np.sin(half) - rest) * np.sin(half) - (
            nrt / area - ambient
        ) * r * np.sin(2 * half)

    radius = brentq(imbalance, 0.1, 10.0, xtol=1e-15)
    distances = np.linalg.norm(ring.positions - ring.positions.mean(axis=0), axis=1)
    np.testing.assert_allclose(distances, radius, rtol=1e-11)
    np.testing.assert_allclose(ring.gas(0).pressure, nrt / (0.5 * n * radius**2 * np.sin(2 * half)))


def test_gas_ball_3d_matches_a_long_damped_run():
    ball = ss.ball(
        subdivisions=1, radius=1.0, mass=1.0, stiffness=50.0, damping=2.0, dim=3, nrt=30.0
    )
    ball.gravity = (0.0, 0.0, 0.0)
    settled = ball.copy()
    assert ball.relax().converged
    # Independent: the dynamics, its motion damped out over 60 s (the spring damping's
    # slowest decay is far faster), drifting nowhere since nothing pushes the body.
    settled.step(2e-3, steps=30000, method="rk4")
    assert np.abs(settled.velocities).max() < 1e-9
    np.testing.assert_allclose(ball.gas(0).volume, settled.gas(0).volume, rtol=1e-9)
    np.testing.assert_allclose(ball.spring_lengths(), settled.spring_lengths(), rtol=1e-8)
    assert np.linalg.norm(kernel_forces(ball), axis=1).max() <= 1e-9 * ball.spring_tensions().max()


def test_normal_modes_about_the_equilibrium():
    sim = chain(12, 9.0, 0.0, 1.0, 1.0, 100.0)  # 11 m of springs between pins 9 m apart
    before = snapshot(sim)
    assert sim.normal_modes(3).frequencies[0] < 0  # compressed: a false "mode"
    modes = sim.normal_modes(20, about="equilibrium")
    assert_same(snapshot(sim), before)
    assert modes.frequencies.min() > 0
    # The same modes about the catenary computed here: the state relax() found.
    hanging = sim.copy()
    hanging.positions = catenary(12, 9.0, 0.0, 1.0, 1.0, 100.0)
    np.testing.assert_allclose(modes.frequencies, hanging.normal_modes(20).frequencies, rtol=1e-7)
    with pytest.raises(ValueError, match="about"):
        sim.normal_modes(3, about="rest")
    with pytest.raises(ValueError, match="k must be"):
        sim.normal_modes(0, about="equilibrium")


def test_floor_holds_a_chain_frictionlessly():
    sim = chain(25, 6.0, 0.0, 0.5, 0.2, 400.0)
    sim.positions = sim.positions + (0.0, 1.0)  # pins 1 m above the floor, 12 m of chain
    sim.add_plane([0, 1], offset=0.0, friction=0.8)
    result = sim.relax()
    assert result.converged
    y = sim.positions[:, 1]
    on = np.flatnonzero(y <= 1e-12)
    assert len(on) >= 3 and np.all(y >= 0.0)
    force = kernel_forces(sim)  # with the floor left out: what the floor must take
    free = np.flatnonzero(~sim.pinned)
    resting = np.isin(free, on)
    largest = np.abs(sim.spring_tensions()).max()
    assert np.abs(force[~resting]).max() <= 1e-9 * largest
    assert np.abs(force[resting, 0]).max() <= 1e-9 * largest  # frictionless: no sideways pull
    assert np.all(force[resting, 1] < 0)  # pressed into the floor


@pytest.mark.parametrize("rest, stiffness", [(0.2, 1e3), (0.15, 1e5)], ids=["slack", "stiff"])
def test_disc_supports_a_draped_chain(rest, stiffness):
    sim = chain(31, 4.0, 0.0, rest, 0.1, stiffness)
    disc = sim.add_sphere([2.0, -0.5], radius=0.8)  # its top 0.3 m above the pins
    result = sim.relax()
    assert result.converged
    offset = sim.positions - disc.center
    distance = np.linalg.norm(offset, axis=1)
    assert np.all(distance >= 0.8 - 1e-12)
    free = np.flatnonzero(~sim.pinned)
    on = np.abs(distance[free] - 0.8) <= 1e-12
    assert on.sum() >= 3
    force = kernel_forces(sim)
    normal = offset[free] / distance[free, None]
    along = force - np.sum(force * normal, axis=1)[:, None] * normal
    largest = np.abs(sim.spring_tensions()).max()
    assert np.abs(force[~on]).max() <= 1e-9 * largest
    assert np.abs(along[on]).max() <= 1e-9 * largest
    assert np.all(np.sum(force[on] * normal[on], axis=1) < 0)


def test_not_converged_warns_and_keeps_a_lower_energy():
    sim = chain(21, 7.0, 0.0, 0.5, 0.2, 300.0)
    sim.positions[1:-1] = np.random.default_rng(0).uniform(0, 0.05, size=(19, 2))
    start = sim.energy().total
    with pytest.warns(ss.ConvergenceWarning, match="relax"):
        result = sim.relax(max_iterations=2)
    assert not result.converged and result.iterations == 2
    assert sim.energy().total < start


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"tolerance": 0.0}, ValueError),
        ({"tolerance": 1.0}, ValueError),
        ({"tolerance": float("nan")}, ValueError),
        ({"tolerance": "1e-9"}, TypeError),
        ({"max_iterations": 0}, ValueError),
        ({"max_iterations": 2.5}, TypeError),
        ({"max_iterations": True}, TypeError),
    ],
)
def test_bad_arguments_raise_and_change_nothing(kwargs, error):
    sim = chain(6, 3.0, 0.0, 1.0, 0.5, 100.0)
    before = snapshot(sim)
    with pytest.raises(error):
        sim.relax(**kwargs)
    assert_same(snapshot(sim), before)


def test_systems_relax_refuses_change_nothing():
    falling = chain(6, 3.0, 0.0, 1.0, 0.5, 100.0)
    falling.unpin([0, 5])
    rod = chain(4, 3.0, 0.0, 1.0, 0.5, 100.0)
    rod.stiffness[1] = np.inf
    broken = chain(4, 3.0, 0.0, 1.0, 0.5, 100.0)
    broken.positions[1, 0] = np.nan  # written through a view: checked when used
    for sim, match in [(falling, "no equilibrium"), (rod, "rigid"), (broken, "finite")]:
        before = snapshot(sim)
        with pytest.raises(ValueError, match=match):
            sim.relax()
        assert_same(snapshot(sim), before)


def test_nothing_free_or_nothing_acting_returns_at_once():
    pinned = chain(5, 3.0, 0.0, 1.0, 0.5, 100.0)
    pinned.pin(range(5))
    before = snapshot(pinned)
    assert pinned.relax() == (0.0, 0, True)
    assert_same(snapshot(pinned), before)
    floating = ss.System(dim=2)
    floating.gravity = (0.0, 0.0)
    floating.add_nodes([[0, 0], [1, 0]])
    floating.add_springs([0, 1], stiffness=10.0)
    assert floating.relax() == (0.0, 0, True)
    assert floating.positions.tolist() == [[0.0, 0.0], [1.0, 0.0]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ss.System(dim=3).relax() == (0.0, 0, True)


@pytest.mark.parametrize("dim", [2, 3])
def test_volume_hessian_is_the_derivative_of_the_volume_gradient(dim):
    # relax()'s Newton matrix for gas: checked against central differences of the
    # oracle's ∂V/∂x (exact for V quadratic in 2D, cubic in 3D: differences of a
    # quadratic gradient are exact up to rounding).
    from springsim.analysis.statics import _volume_hessian
    from springsim.reference import volume_gradient

    count = {"nodes": 10} if dim == 2 else {"subdivisions": 1}
    body = ss.ball(**count, radius=1.0, mass=1.0, stiffness=1.0, dim=dim, nrt=1.0)
    x = body.positions + np.random.default_rng(dim).normal(scale=0.1, size=body.positions.shape)
    elements = body._pressure_elements(0).astype(np.int64)
    rows, cols, values = _volume_hessian(elements, x)
    size = x.size
    hessian = np.zeros((size, size))
    np.add.at(hessian, (rows, cols), values)
    h = 1e-4
    for coordinate in range(size):
        step = np.zeros(size)
        step[coordinate] = h
        step = step.reshape(x.shape)
        column = (volume_gradient(elements, x + step) - volume_gradient(elements, x - step)) / (
            2 * h
        )
        np.testing.assert_allclose(hessian[:, coordinate], column.reshape(-1), atol=1e-11)
