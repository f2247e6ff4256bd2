"""Contacts keep the books: what a collider takes is counted in `dissipated`, exactly.

The rule (csrc/kernel/contact/colliders.c; docs/guide/colliders.md, "How contact energy
is counted"): a
node found inside a collider, moving in with normal speed v_n, is put back on the
surface, which costs potential energy dU (gravity, its springs, the gas) less the work
its dampers and drag do meanwhile; it meets the surface with 1/2 m v_s^2 = 1/2 m v_n^2 -
dU and leaves with e v_s, the impact dissipating 1/2 m (1 - e^2) v_s^2; friction
dissipates the kinetic energy it takes. So:

- one free particle (dU = 0 without gravity) dissipates 1/2 m (1 - e^2) v_n^2 per
  impact, and a dropped ball m g h (1 - e^2) e^(2k) at its k-th bounce;
- e = 1 without friction dissipates exactly nothing, and `dissipated` never decreases;
- total + dissipated is conserved up to the integrator's own error, which shrinks with
  dt at the integrator's order (first for symplectic Euler, second for velocity Verlet).

XPBD does not take this rule: it projects colliders as constraints in its passes
(collider_constraints.c; its textbook tests are in tests/physics/test_xpbd_contact.py).
Its one-impact case still gives the values above (the velocity pass leaves e times the
normal speed and Coulomb takes mu times the whole normal change off |v_t|), and its books
take what a substep with a contact lost, so total + dissipated never grows.
"""

import math

import numpy as np
import pytest

import springsim as ss

G = 9.81


def one_node(position, velocity, mass=1.0, gravity=None):
    sim = ss.System(dim=3)
    sim.add_nodes([position], masses=mass, velocities=[velocity])
    if gravity is not None:
        sim.gravity = gravity
    sim.track_energy = True
    return sim


# ---- one particle: analytic values --------------------------------------------------


# vbd: colliders as contact energy, not colliders.c's rule (tests/physics/test_vbd_contact.py)
@pytest.mark.parametrize("method", [m for m in ss.METHODS if m != "vbd"])
@pytest.mark.parametrize("e", [0.0, 0.5, 0.8, 1.0])
@pytest.mark.parametrize("mu", [0.0, 0.3, 3.0])
def test_one_impact_dissipates_its_normal_and_friction_losses(method, e, mu):
    # No forces: every method moves the node by v dt and keeps v, so the contact alone
    # acts, on v_n = -2 m/s and |v_t| = 5 m/s. It keeps -e v_n, friction takes
    # mu (1 + e) |v_n| off |v_t| (all of it when that is more), and the books say so:
    # 1/2 m (1 - e^2) v_n^2 + 1/2 m (|v_t|^2 - |v_t'|^2), to rounding.
    m, vn, vt = 2.5, -2.0, np.array([3.0, 0.0, 4.0])
    sim = one_node([0.0, 1e-3, 0.0], vt + [0.0, vn, 0.0], mass=m, gravity=(0, 0, 0))
    sim.add_plane((0, 1, 0), restitution=e, friction=mu)
    sim.step(1e-3, method=method)  # ends 1e-3 m inside
    keep = max(0.0, 1.0 - mu * (1 + e) * -vn / 5.0)
    expected = 0.5 * m * (1 - e * e) * vn**2 + 0.5 * m * 25.0 * (1 - keep**2)
    assert sim.dissipated == pytest.approx(expected, rel=1e-12, abs=1e-12)
    assert 0.5 * m * (sim.velocities[0] @ sim.velocities[0]) == pytest.approx(
        0.5 * m * 29.0 - expected, rel=1e-12, abs=1e-12
    )


BALLISTIC = ["velocity_verlet", "verlet", "rk2", "rk4"]  # exact on a parabola


@pytest.mark.parametrize("method", BALLISTIC)
@pytest.mark.parametrize("e", [0.5, 0.8])
def test_each_bounce_of_a_dropped_ball_dissipates_m_g_h_1_minus_e_squared(method, e):
    # Dropped from h, the ball meets the floor at sqrt(2 g h) and leaves at e times
    # that, so bounce k (from 0) dissipates m g h (1 - e^2) e^(2k). These methods follow
    # the parabola exactly, so the only error left is rounding: 1e-9 is far above it
    # (measured 1e-13) and far below any error of the model (a step's worth, ~1e-3).
    m, h, dt = 2.0, 1.0, 1e-3
    sim = one_node([0.0, h, 0.0], [0.0, 0.0, 0.0], mass=m)
    sim.add_plane((0, 1, 0), restitution=e)
    losses, before = [], 0.0
    while len(losses) < 4:
        sim.step(dt, method=method)
        assert sim.dissipated >= before
        if sim.dissipated > before:
            losses.append(sim.dissipated - before)
            before = sim.dissipated
        assert sim.time < 3.0, "fewer than four bounces"
    expected = [m * G * h * (1 - e * e) * e ** (2 * k) for k in range(4)]
    np.testing.assert_allclose(losses, expected, rtol=1e-9)


@pytest.mark.parametrize("method", ["symplectic_euler", "velocity_verlet", "rk4"])
def test_a_node_resting_on_the_floor_keeps_its_energy_and_dissipates_nothing(method):
    # Each substep gravity carries the node a little into the floor and gives it g dt
    # of downward speed; putting it back costs the potential energy that motion
    # released. Nothing is dissipated (it does not move), and the energy stays.
    sim = one_node([0.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    sim.add_plane((0, 1, 0), friction=0.5)
    start = sim.energy().total
    sim.step(1e-3, steps=1000, method=method)
    assert sim.positions[0].tolist() == [0.0, 0.0, 0.0]
    assert abs(sim.dissipated) <= 1e-15
    assert sim.energy().total == pytest.approx(start, abs=1e-12)


@pytest.mark.parametrize("method", ["symplectic_euler", "velocity_verlet", "rk4"])
def test_friction_dissipates_the_kinetic_energy_it_takes(method):
    # A 3 kg node pushed along a level floor comes to rest: friction took all of its
    # 1/2 m v0^2, and nothing else changed.
    sim = one_node([0.0, 0.0, 0.0], [2.0, 0.0, 1.0], mass=3.0)
    sim.add_plane((0, 1, 0), friction=0.4)
    start = sim.energy().total
    sim.step(1e-3, steps=2000, method=method)  # stops after 0.57 s
    assert sim.velocities[0].tolist() == [0.0, 0.0, 0.0]
    assert sim.dissipated == pytest.approx(0.5 * 3.0 * 5.0, rel=1e-12)
    assert sim.energy().total + sim.dissipated == pytest.approx(start, abs=1e-12)


@pytest.mark.parametrize("method", ["velocity_verlet", "rk4"])
def test_sliding_down_a_slope_the_books_balance(method):
    # Friction on a 30° slope (mu = 0.3 < tan 30°): gravity's work goes into motion and
    # into `dissipated`; these methods are exact for the constant acceleration.
    theta = math.radians(30)
    sim = one_node([0.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    sim.add_plane((-math.sin(theta), math.cos(theta), 0.0), friction=0.3)
    start = sim.energy().total
    sim.step(1e-3, steps=1000, method=method)
    assert sim.dissipated > 0.5
    assert sim.energy().total + sim.dissipated == pytest.approx(start, abs=1e-12)


# ---- a soft body -----------------------------------------------------------------------


def dropped_jelly(restitution, friction, damping=0.0):
    """The issue's scene: a 2D 6 × 3 jelly (1 kg, 500 N/m) dropped 1 m onto a floor."""
    sim = ss.jelly(6, 3, size=(0.5, 0.2), mass=1.0, stiffness=500.0, damping=damping)
    sim.positions[:, 1] += 1.0
    sim.add_plane((0, 1), restitution=restitution, friction=friction)
    return sim


@pytest.mark.parametrize("method", [m for m in ss.METHODS if m != "xpbd"])
def test_an_elastic_frictionless_floor_dissipates_exactly_nothing(method):
    # Restitution 1, no friction, no damping: nothing in the system dissipates, so
    # `dissipated` must stay 0, not merely small (measured before: -0.99 J).
    sim = dropped_jelly(1.0, 0.0)
    sim.divergence_factor = None  # explicit Euler gains energy: the contacts are the point
    dt = 0.25 * sim.critical_dt()
    h = sim.run(1.0, dt, method=method, record_every=1, progress=False)
    assert h.kinetic.max() > 5.0  # it fell, hit the floor and bounced
    if method == "vbd":
        # vbd books what its backward-Euler step itself takes out of the jelly's
        # vibration (E0 − E per substep): not 0, but the books balance to rounding of
        # the energies (order 10 J), and the floor adds nothing to them.
        assert h.dissipated[-1] > 0.0
        books = h.total + h.dissipated - h.total[0]
        assert np.abs(books).max() < 1e-9 * np.abs(h.total).max()
        return
    assert np.all(h.dissipated == 0.0)


@pytest.mark.parametrize(("e", "mu"), [(1.0, 0.0), (0.5, 0.5)])
def test_xpbd_floor_books_never_grow(e, mu):
    # XPBD projects the floor as a constraint in its passes (collider_constraints.c), not
    # by the rule above: in a substep where a constraint pushed, the books take what the
    # substep lost, never less than 0 (integrate.c), which holds XPBD's own loss of that
    # substep too, so an elastic floor books a little (not exactly 0). What must hold
    # for any e and mu: total + dissipated never grows (to rounding), dissipated never
    # decreases, and the jelly bounces (it fell 1 m: kinetic energy > 5 J at impact).
    sim = dropped_jelly(e, mu)
    sim.track_energy = True
    start = sim.energy().total
    dt = 0.25 * sim.critical_dt()
    books, booked, kinetic = [], [], 0.0
    for _ in range(760):  # 1 s
        sim.step(dt, method="xpbd")
        energy = sim.energy()
        kinetic = max(kinetic, energy.kinetic)
        books.append(energy.total + sim.dissipated)
        booked.append(sim.dissipated)
    assert kinetic > 5.0
    assert np.diff(books).max() <= 1e-12 * start and books[0] <= start * (1 + 1e-12)
    assert np.diff(booked).min() >= 0.0 and booked[-1] > 0.0


@pytest.mark.parametrize("method", ["symplectic_euler", "velocity_verlet", "rk4"])
@pytest.mark.parametrize(
    ("e", "mu", "damping"), [(1.0, 0.0, 2.0), (0.5, 0.5, 2.0), (0.0, 1.0, 0.5)]
)
def test_dissipated_never_decreases(method, e, mu, damping):
    sim = dropped_jelly(e, mu, damping)
    h = sim.run(1.5, 0.25 * sim.critical_dt(), method=method, record_every=1, progress=False)
    assert h.dissipated[-1] > 1.0
    assert np.diff(h.dissipated).min() >= 0.0


def books_error(method, e, mu, fraction, damping=0.0):
    """The largest |total + dissipated - total(0)| in the first second, J."""
    sim = dropped_jelly(e, mu, damping)
    h = sim.run(1.0, fraction * sim.critical_dt(), method=method, record_every=1, progress=False)
    return np.abs(h.total + h.dissipated - h.total[0]).max(), np.abs(h.total).max()


@pytest.mark.parametrize(("method", "order"), [("symplectic_euler", 1), ("velocity_verlet", 2)])
@pytest.mark.parametrize(("e", "mu", "damping"), [(1.0, 0.0, 0.0), (0.5, 0.5, 2.0)])
def test_soft_body_books_balance_to_the_integrators_own_error(method, order, e, mu, damping):
    # The jelly hits the floor ~80 times a second at up to 4.4 m/s. If the contacts
    # kept the books only to the time step's first order, velocity Verlet's error would
    # halve with dt; kept exactly, it falls 4 times (its own order), as symplectic
    # Euler's falls 2 times. Measured ratios: 1.7-2.3 and 3.8-4.0; required: 2^order
    # within 25 %.
    errors = [books_error(method, e, mu, f, damping) for f in (0.25, 0.125, 0.0625)]
    scale = errors[0][1]
    assert errors[-1][0] < (0.04 if order == 1 else 1e-3) * scale  # measured 0.02, 4e-4
    for coarse, fine in zip(errors[:-1], errors[1:], strict=True):
        assert coarse[0] / fine[0] > 0.75 * 2**order


def test_a_damped_gas_ball_on_a_rough_floor_keeps_second_order_books():
    # Gas, damping, friction and restitution together: with rk4 the books close to
    # second order in dt (the damping's trapezoid rule and the contacts' step error).
    def error(dt):
        ball = ss.ball(nodes=12, radius=0.3, mass=1.0, stiffness=500.0, damping=0.2, dim=2, nrt=2.0)
        ball.velocities[:, 0] = 1.0
        ball.add_plane((0, 1), offset=-0.8, restitution=0.4, friction=0.3)
        h = ball.run(2.0, dt, method="rk4", progress=False)
        return np.abs(h.total + h.dissipated - h.total[0]).max() / np.abs(h.total).max()

    coarse, fine = error(2e-4), error(1e-4)
    assert fine < 2e-6  # measured 1.2e-6
    assert coarse / fine > 3.0  # measured 4.1


# ---- determinism ----------------------------------------------------------------------


def contact_scene():
    """A 45 × 45 cloth (enough springs for threads) with random velocities falling onto a
    rough sphere and a tilted floor."""
    sim = ss.cloth(45, 45, width=1.0, height=1.0, mass=1.0, stiffness=500.0, damping=0.02, pin=None)
    assert sim.num_springs >= 8192
    rng = np.random.default_rng(11)
    x = sim.positions.copy()
    sim.positions = np.stack([x[:, 0] - 0.4, np.full(len(x), 0.32), x[:, 1] + 0.5], axis=1)
    sim.velocities = rng.normal(scale=0.3, size=sim.velocities.shape)
    sim.add_sphere((0.1, 0.0, 0.0), 0.3, restitution=0.3, friction=0.6)
    sim.add_plane((0.05, 1.0, 0.0), offset=-0.2, restitution=0.6, friction=0.2)
    sim.track_energy = True
    return sim


def contact_state(sim):
    return (sim.positions.tobytes(), sim.velocities.tobytes(), sim.dissipated)


@pytest.mark.skipif(not ss.threading_available(), reason="built without OpenMP")
def test_contacts_are_bit_identical_for_any_thread_count_and_simd_path():
    states = []
    try:
        for threads in (1, 2):
            for path in [p for p, ok in ss.simd_paths().items() if ok]:
                ss.set_num_threads(threads)
                ss.set_simd(path)
                sim = contact_scene()
                sim.step(0.5 * sim.critical_dt(), steps=1000)
                on = np.linalg.norm(sim.positions - (0.1, 0.0, 0.0), axis=1) < 0.3 + 1e-9
                assert on.sum() > 100 and sim.dissipated > 0.0  # many contacts
                states.append(contact_state(sim))
    finally:
        ss.set_num_threads(None)
        ss.set_simd(None)
    assert all(state == states[0] for state in states)
