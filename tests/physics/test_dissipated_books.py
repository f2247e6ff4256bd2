"""``sim.dissipated`` in plain ``step()`` calls, and no silent trap (issue 28, item 1).

The books are off by default in plain ``step()`` calls (they cost a pass over the
damped springs per substep: the bench's ``track_energy`` line); reading ``dissipated``
then warns, once, on a system that can dissipate. With ``sim.track_energy = True``
each test steps a system with plain ``step()`` calls and compares ``dissipated`` with
the energy the motion lost, ``E0 - E(t)`` from ``sim.energy()`` (which adds the
kinetic, elastic, gravitational, gas and contact terms independently of the books), for
one way of losing energy each: spring damping, drag, friction on a plane, node–node
contact with restitution below 1 and the strain limit. Each loses a large share of its
energy, so books left at 0 fail by far.
"""

import warnings

import numpy as np
import pytest

import springsim as ss

# Symplectic Euler (the default method) conserves a shadow energy that differs from
# the true one by at most about (omega dt / 2) E for an oscillation of angular frequency
# omega (for x'' = -omega^2 x it conserves v^2 + omega^2 x^2 - omega^2 dt x v); the
# trapezoid rule on the damping power errs by O((c dt / m)^2) per unit of time. So the
# books E0 - E(t) - dissipated stay within omega dt E0, with a margin of 2.


def books_gap(sim, dt, steps, calls):
    """Turn the books on and step ``calls`` times ``steps`` substeps of ``dt`` by plain
    step() calls; the largest |E0 - E(t) - dissipated| over the calls, the final loss
    E0 - E(t) and the final dissipated."""
    sim.track_energy = True
    e0 = sim.energy().total
    gap = 0.0
    for _ in range(calls):
        sim.step(dt, steps=steps)
        gap = max(gap, abs(e0 - sim.energy().total - sim.dissipated))
    return gap, e0 - sim.energy().total, sim.dissipated


def test_a_damped_oscillator_dissipates_the_energy_it_loses():
    k, m, c = 100.0, 1.0, 0.5  # N/m, kg, N s/m: omega = 10 rad/s, zeta = 0.025
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 0.0], [0.0, -1.3]], masses=[m, m])
    sim.pin(0)
    sim.add_springs([[0, 1]], stiffness=k, damping=c, rest_lengths=1.0)
    sim.gravity = 0  # oscillating about the rest length, with 1/2 k 0.3^2 = 4.5 J
    omega, dt = np.sqrt(k / m), 1e-3
    start = sim.energy()
    scale = start.kinetic + start.elastic  # the oscillation's energy, J
    gap, lost, dissipated = books_gap(sim, dt, steps=1, calls=3000)  # 3 s: 12 periods
    assert lost > 0.5 * scale  # damping took most of it (exp(-2 zeta omega t) = 0.22)
    assert gap < omega * dt * scale, (gap, lost, dissipated)


def test_drag_dissipates_the_energy_it_loses():
    # One node falling with linear drag towards terminal velocity. Per substep symplectic
    # Euler loses 1/2 m v^2 (2a - a^2) with a = drag dt / m, and the trapezoid rule on
    # the drag power counts 1/2 m v^2 a (2 - 2a + a^2): they differ by a relative
    # a (1 - a) / 2 at most, so the books hold to a times the loss.
    m, drag, dt = 0.2, 0.5, 1e-3
    sim = ss.System(dim=3)
    sim.add_nodes([[0.0, 0.0, 0.0]], masses=[m])
    sim.velocities = [[3.0, 2.0, 0.0]]
    sim.drag = drag
    gap, lost, dissipated = books_gap(sim, dt, steps=10, calls=200)  # 2 s: 5 time constants
    assert dissipated > 0.5 * lost > 0  # drag took energy, which gravity also fed
    assert gap < (drag * dt / m) * lost, (gap, lost, dissipated)


def test_friction_on_a_plane_dissipates_the_energy_it_loses():
    # A node sliding on the floor at 1 m/s with friction 0.4 stops after v^2 / (2 mu g)
    # = 0.127 m, 0.25 s, having lost its kinetic energy 1/2 m v^2 = 0.5 J; the contact
    # counts what it takes exactly (colliders.c), so the books hold to rounding and the
    # energy of the one substep's fall g dt^2 that the floor gives back each substep.
    m, g, dt = 1.0, 9.81, 1e-4
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 0.0]], masses=[m])
    sim.velocities = [[1.0, 0.0]]
    sim.add_plane((0, 1), friction=0.4)
    gap, lost, dissipated = books_gap(sim, dt, steps=50, calls=100)  # 0.5 s
    assert sim.velocities[0, 0] == pytest.approx(0.0, abs=1e-12)  # it stopped
    assert lost == pytest.approx(0.5 * m, rel=1e-3)  # 1/2 m v^2, up to its dip g dt^2
    assert gap < m * g * g * dt**2 + 1e-12, (gap, lost, dissipated)


def test_node_contact_with_restitution_dissipates_the_energy_it_loses():
    # Two 1 kg nodes of radius 0.1 m meet head on at 1 m/s each, gravity off, with
    # restitution 0.5: they part at about a quarter of their kinetic energy, 1 J ->
    # 0.25 J. The contact is a damped penalty spring of k_c = 1e4 N/m, so the books
    # hold to the integrator's error over the contact, omega dt E as above, with
    # omega = sqrt(k_c / m_eff) = 141 rad/s the pair's contact frequency.
    k_c, m_eff = 1e4, 0.5
    sim = ss.System(dim=2)
    sim.add_nodes([[-0.15, 0.0], [0.15, 0.0]], masses=[1.0, 1.0])
    sim.velocities = [[1.0, 0.0], [-1.0, 0.0]]
    sim.gravity = 0
    sim.radii = 0.1
    sim.contact_stiffness, sim.contact_restitution = k_c, 0.5
    dt = 1e-5
    gap, lost, dissipated = books_gap(sim, dt, steps=100, calls=100)  # 0.1 s: met and parted
    assert sim.velocities[0, 0] < 0 < sim.velocities[1, 0]  # they bounced
    assert lost == pytest.approx(0.75, rel=0.1)  # (1 - e^2) of 1 J, e as the law sets it
    assert gap < np.sqrt(k_c / m_eff) * dt * 1.0, (gap, lost, dissipated)


def test_the_strain_limit_dissipates_the_energy_it_takes():
    # A soft 10-node string swinging down from level, pinned at one end: gravity pulls
    # it past 10 % strain, so the limit shortens its springs each substep, taking
    # elastic and kinetic energy, which the books count as the change of the whole
    # energy across it. The bound is omega dt E as above with omega the string's fastest
    # mode, 2 / critical_dt() (symplectic Euler's limit is omega dt = 2), and E the
    # energy gravity released.
    sim = ss.string(10, length=1.0, mass=0.1, stiffness=20.0, dim=2)
    sim.max_strain = 0.1
    omega, dt = 2 / sim.critical_dt(), 0.05 * sim.critical_dt()
    start = sim.energy()
    gap, lost, dissipated = books_gap(sim, dt, steps=20, calls=400)  # 9 s, 4 swings
    assert np.max(sim.spring_lengths() / sim.rest_lengths) == pytest.approx(1.1)  # limited
    scale = abs(start.gravity - sim.energy().gravity)  # J that gravity released
    assert dissipated > 0.3 * scale  # the limit took a good share
    assert gap < omega * dt * scale, (gap, lost, dissipated)


# ---- the books off: a warning, never a silent 0 ------------------------------------


def damped_spring():
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 0.0], [0.0, -1.3]], masses=[1.0, 1.0])
    sim.pin(0)
    sim.add_springs([[0, 1]], stiffness=100.0, damping=0.5, rest_lengths=1.0)
    return sim


def test_reading_dissipated_untracked_warns_once_per_system():
    sim = damped_spring()
    assert not sim.track_energy  # off by default
    sim.step(1e-3, steps=500)
    with pytest.warns(ss.UntrackedEnergyWarning, match="track_energy = True") as caught:
        assert sim.dissipated == 0.0  # nothing counted while the books were off
    assert len(caught) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second read on the same system: no warning
        assert sim.dissipated == 0.0
    with pytest.warns(ss.UntrackedEnergyWarning):
        assert sim.copy().dissipated == 0.0  # another system: told again


@pytest.mark.parametrize(
    "can_dissipate",
    [
        lambda s: setattr(s, "drag", 0.1),
        lambda s: setattr(s, "energy_loss", 0.999),
        lambda s: s.add_plane((0, 1), offset=-5.0),
        lambda s: setattr(s, "radii", 0.01),
        lambda s: setattr(s, "max_strain", 0.5),
        lambda s: s.damping.__setitem__(0, 0.1),
    ],
)
def test_each_way_to_dissipate_makes_an_untracked_read_warn(can_dissipate):
    sim = ss.string(4, length=1.0, mass=0.4, stiffness=40.0, dim=2)  # undamped: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sim.dissipated == 0.0
    sim = ss.string(4, length=1.0, mass=0.4, stiffness=40.0, dim=2)
    can_dissipate(sim)
    with pytest.warns(ss.UntrackedEnergyWarning):
        assert sim.dissipated == 0.0


def test_tracked_books_and_runs_do_not_warn():
    sim = damped_spring()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        history = sim.run(0.5, dt=1e-3, progress=False)  # run() keeps the books itself
        assert not sim.track_energy  # and gives the setting back
        assert history.dissipated[-1] > 0
        sim.track_energy = True
        sim.step(1e-3, steps=100)
        assert sim.dissipated > 0
