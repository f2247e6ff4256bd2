"""Physics against the textbook: periods, convergence orders, energy, free fall,
momentum, normal modes, pinned nodes and energy_loss.

Every test runs twice through the ``model`` fixture (tests/conftest.py): on the C
kernel and on the NumPy oracle ``springsim.reference``, because the oracle defines
the integrators and must itself be right. Expected values are analytic; each
tolerance is justified where it is used.

Most systems here move along x only (y = 0, gravity 0): a spring along the x axis
then pulls with exactly -k y - c y' (y = stretch), a linear ODE with a closed form.
"""

import numpy as np
import pytest

from springsim import reference

# The textbook checks here are for the force-based integrators; xpbd has its own.
METHODS = tuple(m for m in reference.METHODS if m != "xpbd")
#: Global order of accuracy of each integrator (textbook).
ORDER = {
    "euler": 1,
    "symplectic_euler": 1,
    "verlet": 2,
    "velocity_verlet": 2,
    "rk2": 2,
    "rk4": 4,
    "implicit_euler": 1,
    "vbd": 1,
}
REST = 1.0  # rest length of the single-oscillator spring, m


def crossings(t, s):
    """Times where the sampled signal s(t) changes sign, by linear interpolation."""
    t, s = np.asarray(t, float), np.asarray(s, float)
    i = np.flatnonzero((s[:-1] < 0) != (s[1:] < 0))
    return t[i] - s[i] * (t[i + 1] - t[i]) / (s[i + 1] - s[i])


def mean_period(t, s):
    """Period of an oscillating signal from its first and last zero crossings."""
    tc = crossings(t, s)
    assert len(tc) >= 6, f"only {len(tc)} zero crossings: run longer"
    return 2.0 * (tc[-1] - tc[0]) / (len(tc) - 1)


def oscillator(model, m, k, c=0.0, y0=0.0, v0=0.0):
    """Mass m on a spring (k, c) from a pinned anchor at the origin, along x.

    With y = x - REST the equation of motion is m y'' = -k y - c y', exactly.
    """
    return model(
        positions=[[0.0, 0.0], [REST + y0, 0.0]],
        masses=[1.0, m],
        velocities=[[0.0, 0.0], [v0, 0.0]],
        pinned=[True, False],
        springs=[[0, 1]],
        stiffness=k,
        damping=c,
        rest_lengths=[REST],
    )


def damped_solution(t, m, k, c, y0, v0):
    """Exact y(t), y'(t) of m y'' + c y' + k y = 0 (underdamped or undamped)."""
    w0 = np.sqrt(k / m)
    zeta = c / (2.0 * np.sqrt(k * m))
    wd = w0 * np.sqrt(1.0 - zeta**2)
    a, b = y0, (v0 + zeta * w0 * y0) / wd
    decay = np.exp(-zeta * w0 * t)
    cos, sin = np.cos(wd * t), np.sin(wd * t)
    y = decay * (a * cos + b * sin)
    v = decay * ((wd * b - zeta * w0 * a) * cos - (wd * a + zeta * w0 * b) * sin)
    return y, v


# --------------------------------------------------------------------------- period


@pytest.mark.parametrize("method", METHODS)
def test_mass_on_spring_period(model, method):
    # Textbook T = 2 pi sqrt(m/k), measured from ~6 zero crossings over 3.3 periods.
    # At 1000 steps per period (w dt = 6.3e-3) the methods' own period errors are
    # (w dt)^2/24 = 1.6e-6 (symplectic Euler, both Verlets), (w dt)^2/6 = 6.6e-6 (Heun),
    # (w dt)^2/3 = 1.3e-5 (explicit Euler: arg(1 + i w dt) = atan(w dt)) and
    # O((w dt)^4) for RK4; linear interpolation of a sine's zero costs ~(w dt)^2 dt/6,
    # 1e-8 T. So 1e-4 (the figure) holds with margin for every method, while a
    # wrong factor anywhere (force, mass, dt, a lost half) is off by percents.
    m, k = 0.5, 20.0
    period = 2.0 * np.pi * np.sqrt(m / k)
    omega = 2.0 * np.pi / period
    dt = period / 1000
    amplitude, phase = 0.1, 0.3  # start off a sampling grid point
    osc = oscillator(
        model,
        m,
        k,
        y0=amplitude * np.cos(phase),
        v0=-amplitude * omega * np.sin(phase),
    )
    steps = 3300
    y = np.empty(steps + 1)
    y[0] = osc.x[1, 0] - REST
    for i in range(1, steps + 1):
        osc.step(dt, 1, method)
        y[i] = osc.x[1, 0] - REST
    measured = mean_period(np.arange(steps + 1) * dt, y)
    assert measured == pytest.approx(period, rel=1e-4)


# ---------------------------------------------------------------- convergence order


@pytest.mark.parametrize("damping", [0.0, 0.5], ids=["undamped", "damped"])
@pytest.mark.parametrize("method", METHODS)
def test_convergence_order(model, method, damping):
    # Error at t = 2 s against the exact solution of m y'' + c y' + k y = 0, with
    # w0 = 3.16 rad/s (one period) and zeta = 0.08 when damped: the damped case runs
    # the velocity-dependent (spring damping) force through every stage of each method.
    # The error is the phase-space distance sqrt(dy^2 + (dv/w0)^2), which does not
    # vanish by accident at one phase. dt ranges (w0 dt = 4e-3..3e-2; 0.03..0.25 for
    # RK4) are in the asymptotic regime (consecutive orders settle within 0.05 of the
    # limit) and far above rounding (smallest error 1e-9 vs 1e-13 accumulated
    # rounding). Each halving must give the textbook order within 0.2.
    m, k, y0, v0, t_end = 1.0, 10.0, 0.3, 0.2, 2.0
    w0 = np.sqrt(k / m)
    counts = (25, 50, 100, 200) if method == "rk4" else (200, 400, 800, 1600)
    errors = []
    for n in counts:
        osc = oscillator(model, m, k, c=damping, y0=y0, v0=v0)
        dt = t_end / n
        osc.step(dt, n, method)
        y, v = damped_solution(n * dt, m, k, damping, y0, v0)
        errors.append(np.hypot(osc.x[1, 0] - REST - y, (osc.v[1, 0] - v) / w0))
    errors = np.array(errors)
    orders = np.log2(errors[:-1] / errors[1:])
    assert np.all(np.abs(orders - ORDER[method]) < 0.2), (
        f"{method}: measured orders {orders} (errors {errors}), expected {ORDER[method]}"
    )


# -------------------------------------------------------------------------- energy

CHAIN_M, CHAIN_K = 0.1, 10.0
#: Upper bound of a free chain's normal-mode frequencies, 2 sqrt(k/m) (rad/s).
CHAIN_OMEGA = 2.0 * np.sqrt(CHAIN_K / CHAIN_M)


def free_chain(model, damping=0.0, seed=0, n=5):
    """A 2D chain of n nodes, unit spacing, at rest length, with random velocities.

    No gravity, no pins: the motion (stretching, swinging, spinning) is nonlinear.
    """
    rng = np.random.default_rng(seed)
    x = np.zeros((n, 2))
    x[:, 0] = np.arange(n)
    return model(
        positions=x,
        masses=CHAIN_M,
        velocities=rng.normal(0.0, 0.5, (n, 2)),
        springs=[[i, i + 1] for i in range(n - 1)],
        stiffness=CHAIN_K,
        damping=damping,
    )


def energy_history(body, dt, chunks, chunk, method):
    """Total energy at the start and after each of `chunks` step() calls."""
    energies = [body.energy()[3]]
    for _ in range(chunks):
        body.step(dt, chunk, method)
        energies.append(body.energy()[3])
    return np.array(energies)


@pytest.mark.parametrize("method", ["symplectic_euler", "verlet", "velocity_verlet"])
def test_symplectic_methods_keep_energy(model, method):
    # An undamped chain over 1e5 steps (2e4 on the slow NumPy oracle), energy sampled
    # every 1000 steps. dt = 1.5e-3 / w_max. Symplectic Euler's energy error is first
    # order and bounded: per mode it exactly conserves E - (k dt/2) y v (checked below),
    # so |E/E0 - 1| <= w dt/(2 - w dt) ~ 7.5e-4 < 1e-3. The Verlets' error is (w dt)^2/8
    # ~ 3e-7. Measured max: 3.1e-4 (symplectic Euler), 8e-7 (Verlet), 2e-7 (v. Verlet).
    # A secular drift (a non-symplectic step, a lost half kick) leaves the 1e-3 band.
    dt = 1.5e-3 / CHAIN_OMEGA
    chunks = 100 if model.backend == "kernel" else 20
    energies = energy_history(free_chain(model), dt, chunks, 1000, method)
    drift = np.abs(energies / energies[0] - 1.0)
    assert drift.max() < 1e-3, f"{method}: max |E/E0 - 1| = {drift.max():.3g}"


def test_explicit_euler_gains_energy(model):
    # Same chain and dt as above: explicit Euler multiplies each mode's energy by
    # 1 + (w dt)^2 per step, so the energy rises at every sample and leaves the 1e-3
    # band the symplectic methods keep (measured: +8.5e-2 after 1e5 steps, +1.8e-2 after 2e4).
    dt = 1.5e-3 / CHAIN_OMEGA
    chunks = 100 if model.backend == "kernel" else 20
    energies = energy_history(free_chain(model), dt, chunks, 1000, "euler")
    assert np.all(np.diff(energies) > 0.0)
    assert energies[-1] / energies[0] - 1.0 > 2e-3


def test_explicit_euler_energy_growth_is_exactly_one_plus_w2dt2(model):
    # On y'' = -w^2 y explicit Euler maps (w y, v) to sqrt(1 + (w dt)^2) times a
    # rotation, so E_n = E0 (1 + (w dt)^2)^n exactly. w dt = 0.01, n = 2000: growth
    # 1.22. Tolerance: y = x - REST loses a digit to the offset (|x| ~ 10 |y|), and
    # rounding random-walks over n steps: ~1e-15 sqrt(n) ~ 5e-14; 1e-11 is generous,
    # and the next order term of any other growth law is ~1e-4.
    m, k, dt, n = 1.0, 4.0, 0.005, 2000
    osc = oscillator(model, m, k, y0=0.1, v0=0.05)
    e0 = osc.energy()[3]
    osc.step(dt, n, "euler")
    assert osc.energy()[3] == pytest.approx(e0 * (1.0 + k / m * dt * dt) ** n, rel=1e-11)


@pytest.mark.parametrize("method", ["symplectic_euler", "velocity_verlet"])
def test_symplectic_modified_energy_is_exactly_conserved(model, method):
    # The textbook reason symplectic methods do not drift: on y'' = -w^2 y each
    # conserves a modified energy exactly (Hairer, Lubich & Wanner, ch. IX):
    #   symplectic Euler:  m v^2/2 + k y^2/2 - (k dt/2) y v
    #   velocity Verlet:   m v^2/2 + (k/2) (1 - (w dt)^2/4) y^2
    # w dt = 0.15 (coarse, so the modified terms matter at 1e-2), 2000 steps.
    # Only rounding remains: ~1e-15 per step (offset REST costs a digit), random walk
    # over 2000 steps ~5e-14 (measured 3e-14); 1e-11 leaves margin, while the plain
    # energy is off by 8e-2 (symplectic Euler) and 4e-3 (velocity Verlet) at the end.
    m, k, dt, n = 2.0, 2.0, 0.15, 2000
    w2 = k / m

    def invariant(osc):
        y, v = osc.x[1, 0] - REST, osc.v[1, 0]
        if method == "symplectic_euler":
            return 0.5 * m * v * v + 0.5 * k * y * y - 0.5 * k * dt * y * v
        return 0.5 * m * v * v + 0.5 * k * (1.0 - w2 * dt * dt / 4.0) * y * y

    osc = oscillator(model, m, k, y0=0.2, v0=0.1)
    i0, e0 = invariant(osc), osc.energy()[3]
    osc.step(dt, n, method)
    assert invariant(osc) == pytest.approx(i0, rel=1e-11)
    assert abs(osc.energy()[3] / e0 - 1.0) > 1e-4  # the plain energy is not conserved


@pytest.mark.parametrize("method", ["symplectic_euler", "verlet", "velocity_verlet", "rk2", "rk4"])
@pytest.mark.parametrize("seed", [1, 2])
def test_spring_damping_never_increases_energy(model, method, seed):
    # Damped free chain (c = 0.2 N s/m), energy after every single step for 1500 steps
    # at dt = 0.01 / w_max. Exact physics: dE/dt = -sum c ((vj - vi).u)^2 <= 0.
    # Symplectic Euler's energy error rises at a rate (w^2 dt/2) v^2 at most, less than
    # the axial damping loss 2 zeta w v^2 with zeta = c w / 2k while dt < 2c/k = 0.04
    # (here 5e-4); the second- and fourth-order methods' errors are smaller still.
    # Explicit Euler is left out: it gains (w dt)^2 E per step, more than lightly damped
    # modes lose (test_explicit_euler_gains_energy). Allowance: rounding of one step and
    # of the energy sum, ~1e-15 E0; 1e-12 E0 is far below a real per-step gain (~1e-7).
    body = free_chain(model, damping=0.2, seed=seed, n=6)
    energies = energy_history(body, 0.01 / CHAIN_OMEGA, 1500, 1, method)
    rises = np.diff(energies)
    assert rises.max() <= 1e-12 * energies[0], f"energy rose by {rises.max():.3g} J in one step"
    assert energies[-1] < 0.99 * energies[0]  # and the damping did dissipate


# ------------------------------------------------------------------------ free fall


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("method", METHODS)
def test_free_fall(model, method, dim):
    # Constant acceleration: Verlet, velocity Verlet, Heun and RK4 are exact,
    # x = x0 + v0 t + g t^2/2. The first-order methods have an exactly known error:
    # explicit Euler x = ... - g t dt/2 (it moves with the old velocity), symplectic
    # Euler + g t dt/2 (with the new one). Velocities are v0 + g t for all of them.
    # Only rounding differs: ~1e-16 per operation over 40 steps, except that Verlet
    # rebuilds v from (x' - x)/dt and carries x_prev, so its rounding grows to at most
    # n ulp(|x|)/dt = 40 * 3.6e-15 / 0.05 ~ 3e-12 m/s, 1.7e-13 of |v| ~ 17 m/s
    # (measured 4e-15). 1e-12 of the scale (max |expected|) covers every method.
    g = np.array([0.3, -9.81, 0.7][:dim])
    x0 = np.array([0.5, 1.0, -0.2][:dim])
    v0 = np.array([1.0, 2.0, -0.5][:dim])
    dt, n = 0.05, 40
    t = n * dt
    # Implicit Euler and VBD with no spring: v' = v + g dt, x' = x + v' dt, symplectic Euler.
    lag = {"euler": -0.5, "symplectic_euler": 0.5, "implicit_euler": 0.5, "vbd": 0.5}.get(
        method, 0.0
    )
    body = model(positions=[x0], velocities=[v0], masses=2.0, gravity=g)
    body.step(dt, n, method)
    x_expected = x0 + v0 * t + 0.5 * g * t * t + lag * g * t * dt
    v_expected = v0 + g * t
    np.testing.assert_allclose(
        body.x[0], x_expected, rtol=1e-12, atol=1e-12 * np.abs(x_expected).max()
    )
    np.testing.assert_allclose(
        body.v[0], v_expected, rtol=1e-12, atol=1e-12 * np.abs(v_expected).max()
    )


# ---------------------------------------------------------------------------- drag


@pytest.mark.parametrize("method", METHODS)
def test_linear_drag_terminal_velocity(model, method):
    # m v' = m g - b (v - w): every velocity relaxes at rate b/m to the terminal
    # velocity v_inf = w + m g / b, a fixed point of every method (a = 0 there).
    # b dt / m = 0.2 and 200 steps: the transient has decayed by 0.82^200 ~ 6e-18 or
    # faster, so only rounding remains: ~1e-16 per step, but Verlet rebuilds v from
    # (x' - x)/dt, costing ulp(x)/(v dt) ~ 1e-16 t/dt = 2e-14 per step, which can
    # accumulate (measured 5e-14). 1e-12 relative.
    m, b = 2.0, 0.5
    g, wind = np.array([0.0, -9.81]), np.array([1.5, 0.3])
    body = model(
        positions=[[0.0, 0.0]],
        velocities=[[-2.0, 3.0]],
        masses=m,
        gravity=g,
        drag=b,
        wind=wind,
    )
    body.step(0.2 * m / b, 200, method)
    v_inf = wind + m * g / b
    np.testing.assert_allclose(body.v[0], v_inf, rtol=1e-12, atol=1e-12 * np.abs(v_inf).max())


def test_linear_drag_relaxation_rate(model):
    # The approach itself: v(t) = v_inf + (v0 - v_inf) exp(-b t / m), checked with RK4
    # at t = m / b (100 steps, b dt / m = 0.01): its error is ~(b dt/m)^4 / 120 of
    # |v0 - v_inf| ~ 1e-10 (measured 3e-11); 1e-9 of |v0 - v_inf| is the bound, while
    # a wrong rate (b instead of b/m, say) is off by 40%.
    m, b = 2.0, 0.5
    g, wind, v0 = np.array([0.0, -9.81]), np.array([1.5, 0.3]), np.array([-2.0, 3.0])
    body = model(positions=[[0.0, 0.0]], velocities=[v0], masses=m, gravity=g, drag=b, wind=wind)
    body.step(0.01 * m / b, 100, "rk4")
    v_inf = wind + m * g / b
    expected = v_inf + (v0 - v_inf) * np.exp(-1.0)
    np.testing.assert_allclose(body.v[0], expected, rtol=0, atol=1e-9 * np.abs(v0 - v_inf).max())


# ------------------------------------------------------------------------- momentum


def random_system(model, dim, seed, **params):
    """6 nodes on a jittered lattice (never closer than 0.4 m), 9 random springs with
    random stiffness, damping and rest lengths 0.7..1.3 x current, random masses and
    velocities. Returns (model, masses, dt) with dt = 0.1 x the critical step."""
    rng = np.random.default_rng(seed)
    n, m = 6, 9
    lattice = np.stack(np.unravel_index(np.arange(n), (3,) * dim), axis=1)
    x = lattice + rng.uniform(-0.3, 0.3, (n, dim))
    i = rng.integers(0, n, m)
    j = (i + rng.integers(1, n, m)) % n  # never i
    springs = np.stack([i, j], axis=1)
    masses = rng.uniform(0.5, 2.0, n)
    stiffness = rng.uniform(1.0, 100.0, m)
    rest = rng.uniform(0.7, 1.3, m) * np.linalg.norm(x[j] - x[i], axis=1)
    body = model(
        positions=x,
        masses=masses,
        velocities=rng.normal(0.0, 1.0, (n, dim)),
        springs=springs,
        stiffness=stiffness,
        damping=rng.uniform(0.0, 1.0, m),
        rest_lengths=rest,
        **params,
    )
    dt = 0.1 / np.sqrt(np.max(stiffness / np.minimum(masses[i], masses[j])))
    return body, masses, dt


@pytest.mark.filterwarnings("ignore::springsim.DuplicateSpringWarning")  # random springs
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("method", METHODS)
def test_momentum_is_conserved(model, method, dim, seed):
    # Springs (with damping) are internal forces, F_j = -F_i: with no gravity, drag,
    # pins or external forces, sum m v is constant. Wind without drag must not push.
    # Rounding only: m (F/m) != F by ~1e-16 relative per evaluation, over 100 steps
    # ~1e-14 of the momentum scale sum m |v|; 1e-12 of it is the bound. (implicit_euler
    # conserves it exactly only with an exact solve: the Model sets cg_tolerance 1e-14.)
    body, masses, dt = random_system(model, dim, seed, wind=np.full(dim, 3.0))
    p0 = masses @ body.v
    scale = masses @ np.linalg.norm(body.v, axis=1)
    body.step(dt, 100, method)
    scale = max(scale, masses @ np.linalg.norm(body.v, axis=1))
    assert not np.allclose(body.v, 0.0)  # the springs did act
    np.testing.assert_allclose(masses @ body.v, p0, rtol=0, atol=1e-12 * scale)


# --------------------------------------------------------------------- normal modes


@pytest.mark.parametrize("n", [1, 2, 5, 10])
@pytest.mark.parametrize("method", ["velocity_verlet", "rk4"])
def test_normal_modes_of_a_chain_between_pinned_ends(model, method, n):
    # 10 equal masses between two pinned ends (12 nodes, 11 springs), longitudinal
    # motion along x with no gravity: exactly linear. Started at rest in mode n,
    # u_j = A sin(n j pi / 11), it oscillates at w_n = 2 sqrt(k/m) sin(n pi / 22).
    # 400 steps per period of mode n, 3.25 periods: the integrators' phase error is
    # (w dt)^2/24 = 1e-5 (velocity Verlet) or ~1e-10 (RK4) and interpolated zero
    # crossings cost ~1e-8, so 1e-3 (tighter than the 0.5%) has a 100x margin;
    # the neighbouring modes differ by >= 2%.
    # The shape must stay mode n: every integrator here is linear, so the other modes
    # stay at rounding (measured 3e-12 of A); 1e-9 A allows for that.
    k, m, spacing, amplitude = 50.0, 0.2, 1.0, 0.01
    j = np.arange(12)
    shape = np.sin(n * j * np.pi / 11)
    x = np.zeros((12, 2))
    x[:, 0] = j * spacing + amplitude * shape
    chain = model(
        positions=x,
        masses=m,
        pinned=(j == 0) | (j == 11),
        springs=np.stack([j[:-1], j[1:]], axis=1),
        stiffness=k,
        rest_lengths=spacing,
    )
    omega = 2.0 * np.sqrt(k / m) * np.sin(n * np.pi / 22)
    dt = 2.0 * np.pi / omega / 400
    steps = 1300
    q = np.empty(steps + 1)  # amplitude of mode n
    off_mode = 0.0  # largest displacement outside mode n
    for i in range(steps + 1):
        if i:
            chain.step(dt, 1, method)
        u = chain.x[:, 0] - j * spacing
        q[i] = u @ shape / (shape @ shape)
        off_mode = max(off_mode, np.abs(u - q[i] * shape).max())
    measured = 2.0 * np.pi / mean_period(np.arange(steps + 1) * dt, q)
    assert measured == pytest.approx(omega, rel=1e-3)
    assert off_mode < 1e-9 * amplitude
    assert np.all(chain.x[:, 1] == 0.0)


# ---------------------------------------------------------------------------- pins


def pinned_pair(model):
    """Nodes 0 and 2 pinned, with velocities; node 1 free between them; every force on."""
    return model(
        positions=[[0.0, 0.0], [0.5, -0.8], [1.0, 0.1]],
        velocities=[[0.3, -0.2], [0.0, 0.0], [-0.1, 0.05]],
        masses=[1.0, 0.5, 2.0],
        pinned=[True, False, True],
        springs=[[0, 1], [1, 2]],
        stiffness=50.0,
        damping=0.3,
        rest_lengths=0.5,
        gravity=[0.0, -9.81],
        drag=0.2,
        wind=[1.0, 0.5],
        energy_loss=0.95,
        external_forces=[[5.0, 5.0], [0.0, 0.0], [-5.0, 3.0]],
    )


@pytest.mark.parametrize("method", reference.METHODS)
def test_pinned_nodes_are_held_whatever_their_velocity(model, method):
    # A pin holds its node: every step call starts by zeroing the pinned nodes'
    # velocities (here set to nonzero values), and no force (springs, gravity, drag,
    # wind, their own external force) or energy_loss moves them: they stay exactly
    # where they are, at rest, and add nothing to the kinetic energy or momentum.
    body = pinned_pair(model)
    x0 = body.x
    body.step(0.01, 50, method)
    np.testing.assert_array_equal(body.x[[0, 2]], x0[[0, 2]])
    np.testing.assert_array_equal(body.v[[0, 2]], 0.0)
    assert not np.allclose(body.x[1], x0[1])  # the free node did feel the forces
    kinetic = body.energy()[0]
    assert kinetic == pytest.approx(0.5 * 0.5 * np.sum(body.v[1] ** 2), rel=1e-15)
    if model.backend == "kernel":
        np.testing.assert_allclose(body.sim.momentum(), 0.5 * body.v[1], rtol=1e-15)


@pytest.mark.parametrize("method", reference.METHODS)
def test_dragged_pinned_nodes_move_exactly_with_their_velocity(model, method):
    # Dragged, pinned nodes move at their velocity and ignore every force and
    # energy_loss. The kernel's drag (pin(velocity=v) at t = 0) puts them on the line
    # x0 + v t after each substep, t its clock (a sum of dt), at the velocity that took
    # them there; the oracle's drag_pins moves them by x += v dt, v unchanged. The same
    # float operations in NumPy must give the same bits.
    body = pinned_pair(model)
    x0, v0 = body.x, body.v
    dt, n = 0.01, 50
    body.step(dt, n, method, drag_pins=True)
    expected, velocity, t = x0.copy(), v0, 0.0
    for _ in range(n):
        if model.backend == "kernel":
            t += dt
            expected, last = x0 + v0 * t, expected
            velocity = (expected - last) / dt
        else:
            expected = expected + v0 * dt
    np.testing.assert_array_equal(body.x[[0, 2]], expected[[0, 2]])
    np.testing.assert_array_equal(body.v[[0, 2]], velocity[[0, 2]])
    np.testing.assert_allclose(velocity, v0, rtol=1e-12, atol=1e-15)
    assert not np.allclose(body.x[1], expected[1])  # the free node did feel the forces


# --------------------------------------------------------------------- energy_loss


@pytest.mark.parametrize("method", METHODS)
def test_energy_loss_scales_free_velocity_geometrically(model, method):
    # No forces at all: after each step the free velocity is multiplied by q, so
    # v_n = v0 q^n and x_n = x0 + v0 dt (1 - q^n) / (1 - q) (the velocity moves the
    # node before it is scaled). Rounding: n = 20 multiplications, ~2e-15; Verlet
    # rebuilds v as (x' - x)/dt, ~ulp(|x|)/(|v| dt) per step, below 4e-14 each here,
    # so at most ~1e-12 in the worst case.
    q, dt, n = 0.9, 0.1, 20
    rng = np.random.default_rng(7)
    x0 = rng.uniform(-0.5, 0.5, (3, 3))
    v0 = rng.uniform(-1.0, 1.0, (3, 3))
    body = model(positions=x0, velocities=v0, energy_loss=q)
    body.step(dt, n, method)
    np.testing.assert_allclose(body.v, v0 * q**n, rtol=1e-12)
    x_expected = x0 + v0 * dt * (1.0 - q**n) / (1.0 - q)
    np.testing.assert_allclose(body.x, x_expected, rtol=1e-12, atol=1e-12)
