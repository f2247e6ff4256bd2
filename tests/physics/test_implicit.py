"""Implicit Euler, the stiffness matrix and normal modes, against the textbook.

(The convergence order, free fall and momentum checks of implicit_euler run with every
other method in test_physics.py; its agreement with the oracle in test_oracle.py.)
"""

import warnings

import numpy as np
import pytest
from state import assert_same, snapshot

import springsim as ss
from springsim import reference


def oscillator(k=100.0, m=2.0, damping=0.0):
    """One mass on a spring from a pin, moving along the spring (exactly linear)."""
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 0.0], [0.0, -1.0]], masses=[1.0, m])
    sim.pin(0)
    sim.add_springs([0, 1], stiffness=k, damping=damping, rest_lengths=0.8)
    sim.gravity = (0, 0)
    sim.velocities[1] = (0.0, 0.3)
    return sim


@pytest.mark.parametrize("omega_dt", [0.05, 1.0, 30.0, 1e4])
def test_one_step_shrinks_the_amplitude_by_the_backward_euler_factor(omega_dt):
    # Backward Euler on y'' = -w² y maps (w y, v) by a matrix whose singular values are
    # both 1/sqrt(1 + (w dt)²): the amplitude sqrt(w² y² + v²) shrinks by exactly that.
    # Along the spring the force is linear, so the linearised step is exact.
    k, m = 100.0, 2.0
    omega = np.sqrt(k / m)
    sim = oscillator(k, m)

    def amplitude():
        return np.hypot(omega * (sim.positions[1, 1] + 0.8), sim.velocities[1, 1])

    before = amplitude()
    with warnings.catch_warnings():  # ω dt = 10⁴ warns (StiffnessWarning): tested below
        warnings.simplefilter("ignore", ss.StiffnessWarning)
        sim.step(omega_dt / omega, method="implicit_euler")
    assert amplitude() / before == pytest.approx(1 / np.sqrt(1 + omega_dt**2), rel=1e-10)
    assert sim.positions[1, 0] == 0.0  # stays on its line


def test_damping_and_drag_enter_the_matrix():
    # With damping c along the spring and drag b, backward Euler's v' solves
    # (m + dt (c + b) + dt² k) v' = m v - dt k y: exact for this linear oscillator.
    k, m, c, b, dt = 100.0, 2.0, 3.0, 0.5, 0.1
    sim = oscillator(k, m, damping=c)
    sim.drag = b
    y, v = sim.positions[1, 1] + 0.8, sim.velocities[1, 1]
    sim.step(dt, method="implicit_euler")
    v_new = (m * v - dt * k * y) / (m + dt * (c + b) + dt * dt * k)
    assert sim.velocities[1, 1] == pytest.approx(v_new, rel=1e-12)
    assert sim.positions[1, 1] + 0.8 == pytest.approx(y + dt * v_new, rel=1e-12)


def horizontal_cloth(n=50, stiffness=1e4):
    """A cloth held at its two top corners, laid out flat (horizontal) so that it
    swings down: large, nonlinear motion."""
    cloth = ss.cloth(n, n, width=1.0, height=1.0, mass=0.5, stiffness=stiffness)
    x = cloth.positions.copy()
    cloth.positions[:, 1] = 0.0
    cloth.positions[:, 2] = x[:, 1] - x[:, 1].max()
    cloth.rest_positions = cloth.positions
    return cloth


@pytest.mark.slow
def test_stiff_cloth_at_ten_times_the_explicit_limit():
    # 50×50 cloth with shear and bend springs: at dt = 10 critical_dt (as if the springs
    # were 100× stiffer than the explicit limit allows) it swings down, stays finite, and
    # its total energy never rises from one step to the next (backward Euler only
    # dissipates; allowance: rounding, 1e-12 of the energy scale). Every CG solve
    # converges within cg_max_iterations (measured: ~136 iterations, the cap is 1000).
    # Symplectic Euler at that dt blows up and rolls back.
    cloth = horizontal_cloth()
    dt = 10 * cloth.critical_dt()
    explicit = cloth.copy()
    with pytest.raises(ss.UnstableError, match="implicit_euler"):
        explicit.step(dt, steps=1000, method="symplectic_euler")
    energies = [cloth.energy().total]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ss.ConvergenceWarning)
        for _ in range(1000):
            cloth.step(dt, method="implicit_euler")
            energies.append(cloth.energy().total)
            solve = cloth.last_solve()
            assert solve.capped == 0 and solve.residual <= cloth.cg_tolerance
    assert np.all(np.isfinite(cloth.positions)) and np.all(np.isfinite(cloth.velocities))
    scale = max(abs(e) for e in energies)
    assert np.diff(energies).max() <= 1e-12 * scale
    assert energies[-1] < energies[0] - 0.1  # it did swing down, a lot
    assert cloth.positions[:, 1].min() < -0.5


def test_hitting_the_iteration_cap_warns_and_stays_finite():
    cloth = horizontal_cloth(n=20)
    cloth.step(10 * cloth.critical_dt(), steps=5, method="implicit_euler")  # swinging
    cloth.cg_max_iterations = 3
    with pytest.warns(
        ss.ConvergenceWarning,
        match=r"cg_max_iterations = 3 in 5 of 5 substeps "
        r"\(last relative residual [0-9.e-]+ > cg_tolerance 1e-08\)",
    ):
        cloth.step(10 * cloth.critical_dt(), steps=5, method="implicit_euler")
    solve = cloth.last_solve()
    assert solve == (3, solve.residual, 5, 5) and solve.residual > cloth.cg_tolerance
    assert np.all(np.isfinite(cloth.positions)) and np.all(np.isfinite(cloth.velocities))
    cloth.cg_max_iterations = 1000
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cloth.step(10 * cloth.critical_dt(), steps=5, method="implicit_euler")
    assert cloth.last_solve().capped == 0


def test_last_solve_before_any_implicit_step():
    sim = oscillator()
    solve = sim.last_solve()
    assert (solve.iterations, solve.substeps, solve.capped) == (0, 0, 0)
    assert np.isnan(solve.residual)
    sim.step(1e-3, method="rk4")
    assert sim.last_solve().substeps == 0


def test_pinned_nodes_are_held_or_dragged():
    cloth = horizontal_cloth(n=10)
    corners = np.flatnonzero(cloth.pinned)
    cloth.velocities[corners] = (0.1, 0.0, 0.0)  # held: the step sets it to zero
    x0 = cloth.positions[corners].copy()
    cloth.step(1e-2, steps=10, method="implicit_euler")
    np.testing.assert_array_equal(cloth.velocities[corners], 0.0)
    np.testing.assert_array_equal(cloth.positions[corners], x0)
    cloth.pin(corners, velocity=(0.1, 0.0, 0.0))  # dragged: not unknowns of the solve
    cloth.step(1e-2, steps=10, method="implicit_euler")
    np.testing.assert_allclose(cloth.velocities[corners], [[0.1, 0.0, 0.0]] * 2, rtol=1e-12)
    np.testing.assert_allclose(cloth.positions[corners], x0 + [0.1 * 0.1, 0, 0], rtol=1e-14)


def test_gas_is_explicit_and_a_ball_inflates():
    ball = ss.ball(nodes=24, radius=1.0, mass=1.0, stiffness=100.0, damping=1.0, dim=2, nrt=20.0)
    ball.gravity = (0, 0)
    area = ball.gas(0).volume
    ball.step(0.01, steps=300, method="implicit_euler")
    assert ball.gas(0).volume > 1.1 * area


@pytest.mark.parametrize(
    "name, value, error",
    [
        ("cg_tolerance", 0.0, ValueError),
        ("cg_tolerance", 1.0, ValueError),
        ("cg_tolerance", float("nan"), ValueError),
        ("cg_tolerance", "1e-6", TypeError),
        ("cg_max_iterations", 0, ValueError),
        ("cg_max_iterations", 2.5, TypeError),
        ("cg_max_iterations", True, TypeError),
    ],
)
def test_bad_cg_settings_are_rejected(name, value, error):
    sim = oscillator()
    before = snapshot(sim)
    with pytest.raises(error, match=name):
        setattr(sim, name, value)
    assert_same(before, snapshot(sim))


def test_cg_settings_are_copied_and_saved(tmp_path):
    sim = oscillator()
    sim.cg_tolerance, sim.cg_max_iterations = 1e-5, 77
    assert (sim.copy().cg_tolerance, sim.copy().cg_max_iterations) == (1e-5, 77)
    sim.save(tmp_path / "cg.npz")
    loaded = ss.load(tmp_path / "cg.npz")
    assert (loaded.cg_tolerance, loaded.cg_max_iterations) == (1e-5, 77)


def test_critical_dt_and_unstable_error_point_to_implicit_euler():
    assert "implicit_euler" in ss.System.critical_dt.__doc__
    sim = oscillator()
    with pytest.raises(ss.UnstableError, match="method='implicit_euler'"):
        sim.step(3 * sim.critical_dt(), steps=500, method="symplectic_euler")


def horizontal_pendulum(k):
    """1 kg on a 1 m spring from a pinned node, released horizontally."""
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 0.0], [1.0, 0.0]])
    sim.pin(0)
    sim.add_springs([0, 1], stiffness=k)
    return sim


def test_springs_nearly_rigid_at_the_step_warn_that_the_swing_freezes():
    # Exact: y = -0.9204 m after 0.5 s (the rigid pendulum's ODE). At ω dt = 1 the step
    # gets it to 1e-3; at ω dt = 3162 (k = 10¹³ N/m) it has dropped only 5 cm, and says so.
    sim = horizontal_pendulum(1e6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim.step(1e-3, steps=500, method="implicit_euler")
    assert sim.positions[1, 1] == pytest.approx(-0.9204, abs=1e-3)
    sim = horizontal_pendulum(1e13)
    with pytest.warns(ss.StiffnessWarning, match=r"omega_max dt = 3\.16e\+03 > 1000.*xpbd"):
        sim.step(1e-3, steps=500, method="implicit_euler")
    assert sim.positions[1, 1] > -0.1
    # The threshold is the bound behind critical_dt(): ω = 2 / critical_dt() undamped.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        horizontal_pendulum(1e13).step(
            999.0 * horizontal_pendulum(1e13).critical_dt() / 2.0, method="implicit_euler"
        )
    with pytest.warns(ss.StiffnessWarning):
        horizontal_pendulum(1e13).step(
            1001.0 * horizontal_pendulum(1e13).critical_dt() / 2.0, method="implicit_euler"
        )


# ---- The stiffness matrix ---------------------------------------------------------------


def spring_forces(sim, x):
    """Spring forces on every node at positions x, from the kernel's tensions (v = 0)."""
    probe = sim.copy()
    probe.positions = x
    probe.velocities = 0.0
    pairs, tension = probe.springs, probe.spring_tensions()
    d = x[pairs[:, 1]] - x[pairs[:, 0]]
    f_i = (tension / np.linalg.norm(d, axis=1))[:, None] * d
    f = np.zeros_like(x)
    np.add.at(f, pairs[:, 0], f_i)
    np.add.at(f, pairs[:, 1], -f_i)
    return f.reshape(-1)


@pytest.mark.parametrize("dim", [2, 3])
def test_stiffness_matrix_is_minus_the_jacobian_of_the_spring_forces(dim):
    # A jittered jelly, some springs stretched and some compressed (rest lengths drawn
    # 0.7..1.3 of the current ones), against central differences with h = 1e-6:
    # truncation O(h² f''') ~ 1e-10 and rounding ~1e-16 |f| / h ~ 1e-8 of the entry
    # scale k, so 1e-6 of it is a safe bound. Also: symmetric, equal to the oracle.
    rng = np.random.default_rng(dim)
    sim = ss.jelly(3, 3, None if dim == 2 else 3, size=1.0, mass=1.0, stiffness=50.0)
    sim.positions = sim.positions + rng.uniform(-0.1, 0.1, sim.positions.shape)
    sim.rest_lengths = sim.spring_lengths() * rng.uniform(0.7, 1.3, sim.num_springs)
    x = sim.positions.copy()
    k = sim.stiffness_matrix().toarray()
    h = 1e-6
    jacobian = np.zeros_like(k)
    for q in range(x.size):
        up, down = x.copy().reshape(-1), x.copy().reshape(-1)
        up[q] += h
        down[q] -= h
        jacobian[:, q] = (
            spring_forces(sim, up.reshape(x.shape)) - spring_forces(sim, down.reshape(x.shape))
        ) / (2 * h)
    np.testing.assert_allclose(k, -jacobian, atol=1e-6 * 50.0)
    np.testing.assert_allclose(k, k.T, rtol=0, atol=1e-14 * 50.0)  # duplicates summed in any order
    state = reference.State.from_system(sim)
    np.testing.assert_allclose(k, reference.hessian(state, x), rtol=1e-12, atol=1e-12 * 50.0)
    assert np.linalg.eigvalsh(k).min() < -1e-3  # the compressed springs can buckle


def test_stiffness_matrix_of_one_spring_by_hand():
    # Along x, length 2, rest 1, k = 10: axial 10, sideways k (1 - L/l) = 5.
    sim = ss.System(dim=3)
    sim.add_nodes([[0, 0, 0], [2, 0, 0]])
    sim.add_springs([0, 1], stiffness=10.0, rest_lengths=1.0)
    block = np.diag([10.0, 5.0, 5.0])
    expected = np.block([[block, -block], [-block, block]])
    np.testing.assert_array_equal(sim.stiffness_matrix().toarray(), expected)
    sim.stiffness = np.inf
    with pytest.raises(ValueError, match="rigid rod"):
        sim.stiffness_matrix()


# ---- Normal modes -----------------------------------------------------------------------


def chain(tension_factor=1.0):
    """10 masses of 1 kg between two pins, 11 springs of k = 4 N/m, spacing 1 m; rest
    lengths 1/tension_factor m (> 1: taut)."""
    sim = ss.string(12, length=11.0, mass=12.0, stiffness=4.0, dim=2, pin="both")
    sim.gravity = (0, 0)
    sim.rest_lengths = 1.0 / tension_factor
    return sim


def test_chain_between_pins_has_the_textbook_frequencies():
    # Longitudinal modes of 10 masses between pins: w_n = 2 sqrt(k/m) sin(n pi / 22).
    # At rest length the sideways motions cost no energy: 10 zero modes come first.
    n = np.arange(1, 11)
    modes = chain().normal_modes(20)
    np.testing.assert_allclose(modes.frequencies[:10], 0.0, atol=1e-8)
    np.testing.assert_allclose(modes.frequencies[10:], 4 * np.sin(n * np.pi / 22), rtol=1e-8)
    # Mass-normalised shapes, zero at the pins, each u_j ~ sin(n j pi / 11) along x.
    shapes = modes.shapes[10:]
    np.testing.assert_array_equal(shapes[:, [0, -1]], 0.0)
    np.testing.assert_allclose(np.sum(shapes**2, axis=(1, 2)), 1.0, rtol=1e-10)
    j = np.arange(12)
    for mode, shape in zip(n, shapes, strict=True):
        expected = np.sin(mode * j * np.pi / 11)
        along = shape[:, 0] / np.abs(shape[:, 0]).max() * np.sign(shape[1, 0])
        np.testing.assert_allclose(along, expected / np.abs(expected).max(), atol=1e-8)


def test_taut_chain_has_the_string_frequencies():
    # Pulled taut (rest 0.8 m at 1 m spacing: tension T = k (1 - 0.8) = 0.8 N), the
    # sideways modes are a beaded string's, w_n = 2 sqrt(T / (m a)) sin(n pi / 22);
    # the stretching ones are unchanged.
    n = np.arange(1, 11)
    omega = chain(tension_factor=1.25).normal_modes(20).frequencies
    sideways = 2 * np.sqrt(0.8) * np.sin(n * np.pi / 22)
    stretching = 4 * np.sin(n * np.pi / 22)
    np.testing.assert_allclose(omega, np.sort(np.concatenate([sideways, stretching])), rtol=1e-8)


@pytest.mark.parametrize("dim, rigid", [(2, 3), (3, 6)])
def test_free_stable_jelly_has_only_rigid_zero_modes(dim, rigid):
    # A free body moves rigidly without stretching a spring: dim translations and
    # 1 (2D) or 3 (3D) rotations. The stable arrangement (with diagonals) resists every
    # other motion; the simple one (edges only) can also shear, so it has more.
    nz = None if dim == 2 else 3

    def zero_modes(arrangement):
        sim = ss.jelly(3, 3, nz, size=1.0, mass=1.0, stiffness=100.0, arrangement=arrangement)
        omega = sim.normal_modes(dim * sim.num_nodes).frequencies
        return int(np.sum(np.abs(omega) < 1e-6 * omega.max()))

    assert zero_modes("stable") == rigid
    assert zero_modes("simple") > rigid


def test_sparse_and_dense_normal_modes_agree():
    # Above DENSE_LIMIT free coordinates SciPy's shift-invert Lanczos is used: force it
    # on a small cloth and compare with the dense solution.
    from springsim.analysis import modes

    cloth = ss.cloth(12, 12, width=1.0, height=1.0, mass=0.2, stiffness=100.0)
    cloth.step(1e-3, steps=200)  # a hanging, stretched state
    dense = cloth.normal_modes(8)
    limit, modes.DENSE_LIMIT = modes.DENSE_LIMIT, 10
    try:
        sparse = cloth.normal_modes(8)
    finally:
        modes.DENSE_LIMIT = limit
    np.testing.assert_allclose(sparse.frequencies, dense.frequencies, rtol=1e-8)
    for a, b in zip(sparse.shapes, dense.shapes, strict=True):  # up to sign
        assert abs(np.sum(a * b * cloth.masses[:, None])) == pytest.approx(1.0, rel=1e-6)


def test_normal_modes_validation():
    sim = chain()
    with pytest.raises(ValueError, match="between 1 and 20"):
        sim.normal_modes(21)
    with pytest.raises(ValueError, match="between 1 and 20"):
        sim.normal_modes(0)
    with pytest.raises(TypeError):
        sim.normal_modes(2.5)
    sim.pin(range(12))
    with pytest.raises(ValueError, match="every node is pinned"):
        sim.normal_modes(1)
