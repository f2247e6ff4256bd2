"""Static friction holds; kinetic friction slides at Coulomb's rate.

A node whose tangential velocity friction can cancel (|v_t| <= mu dv_n, dv_n the
normal velocity change of the contact) sticks: it stays where it touched the surface,
so a body on a slope below the friction angle does not creep, whatever dt. Above the
angle it slides with a = g (sin θ - mu cos θ).

The body is the issue's: a 2D 6 × 3 jelly, 0.5 m × 0.2 m, 1 kg, stiff (10⁴ N/m) and
well damped (20 N·s/m, a third of critical for a node on one spring), laid unloaded on
the slope. Before, it crept 30, 15 and 7.7 mm in 3 s at critical_dt()/2, /4 and /8
(symplectic Euler): in proportion to dt, one step's sliding per step.
"""

import math

import numpy as np
import pytest

import springsim as ss

G, MU = 9.81, 0.5
FRICTION_ANGLE = math.atan(MU)


def jelly_on_slope(theta, mu=MU):
    """The jelly lying unloaded on the plane through the origin tilted by theta (rising
    to the right); returns it and the unit vector down the slope."""
    sim = ss.jelly(6, 3, size=(0.5, 0.2), mass=1.0, stiffness=1e4, damping=20.0)
    c, s = math.cos(theta), math.sin(theta)
    sim.positions = sim.positions @ np.array([[c, s], [-s, c]])  # rotated by theta
    sim.add_plane((-s, c), 0.0, friction=mu)
    return sim, np.array([-c, -s])


@pytest.mark.parametrize("method", ["symplectic_euler", "velocity_verlet", "rk4"])
@pytest.mark.parametrize("fraction", [0.5, 0.25, 0.125])
def test_a_jelly_below_the_friction_angle_does_not_creep(method, fraction):
    # 1° below tan θ = μ. What moves is the jelly settling elastically under its weight
    # (0.38-0.47 mm, the same at every dt: the springs' static deflection); the slope
    # contact does not slide.
    sim, down = jelly_on_slope(FRICTION_ANGLE - math.radians(1.0))
    start = sim.positions.copy()
    dt = fraction * sim.critical_dt()
    sim.step(dt, steps=round(2.0 / dt), method=method)
    settled = sim.positions.copy()
    sim.step(dt, steps=round(1.0 / dt), method=method)
    assert np.linalg.norm(sim.positions - start, axis=1).max() < 1e-3
    # ... and it has come to rest: in the last second the contacts did not move at all
    # (before, they crept 2.5-10 mm), the jelly above them by less than a micrometre.
    bottom = np.arange(6)
    assert np.array_equal(sim.positions[bottom], settled[bottom])
    assert np.linalg.norm(sim.positions - settled, axis=1).max() < 1e-6


@pytest.mark.parametrize("method", ["symplectic_euler", "velocity_verlet", "rk4"])
@pytest.mark.parametrize("fraction", [0.5, 0.125])
@pytest.mark.parametrize("above", [1.0, 5.0])
def test_a_jelly_above_the_friction_angle_slides_at_coulombs_rate(method, fraction, above):
    # Once the transient of laying it down is over (0.5 s), the centre of mass
    # accelerates at g (sin θ - μ cos θ): measured from the momentum over the next
    # 2.5 s, within 2 % (measured: within 1e-4).
    theta = FRICTION_ANGLE + math.radians(above)
    sim, down = jelly_on_slope(theta)
    dt = fraction * sim.critical_dt()
    mass = sim.masses.sum()
    sim.step(dt, steps=round(0.5 / dt), method=method)
    v0, t0 = sim.momentum() @ down / mass, sim.time
    sim.step(dt, steps=round(2.5 / dt), method=method)
    accel = (sim.momentum() @ down / mass - v0) / (sim.time - t0)
    assert accel == pytest.approx(G * (math.sin(theta) - MU * math.cos(theta)), rel=0.02)


# vbd: colliders as contact energy, not colliders.c's rule (tests/physics/test_vbd_contact.py)
@pytest.mark.parametrize("method", [m for m in ss.METHODS if m != "vbd"])
def test_a_node_held_by_static_friction_does_not_move_at_all(method):
    # One node on a 30° slope with μ = 1 > tan 30°: exactly where it was put.
    theta = math.radians(30)
    sim = ss.System(dim=3)
    sim.add_nodes([[0.0, 0.0, 0.0]])
    sim.add_plane((-math.sin(theta), math.cos(theta), 0.0), friction=1.0)
    sim.step(1e-3, steps=1000, method=method)
    if method == "xpbd":
        # XPBD takes the slip back by a subtraction in its passes (collider_constraints.c),
        # which leaves the round-off of the substep's g dt² = 1e-5 m, 1e-21 m, not 0 bits:
        # 1e-18 m (and 1e-15 m/s) in 1000 substeps cannot hide a creep.
        assert np.abs(sim.positions[0]).max() < 1e-18
        assert np.abs(sim.velocities[0]).max() < 1e-15
        return
    assert sim.positions[0].tolist() == [0.0, 0.0, 0.0]
    assert sim.velocities[0].tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize(
    ("method", "dt", "tolerance"),
    [("velocity_verlet", 1e-3, 2e-6), ("rk4", 1e-4, 2e-8), ("symplectic_euler", 1e-4, 2e-4)],
)
def test_a_thrown_node_sticks_where_it_lands(method, dt, tolerance):
    # Thrown at 4 m/s from 1 m onto a floor with μ = 5: the impact's friction impulse
    # stops it dead, at the point where it met the floor, v0 sqrt(2 h / g). Its place
    # within the landing step is interpolated linearly (an error ~ g dt² for these
    # exact parabolas: measured 1.1e-6 m at 1 ms, 1e-8 m at 0.1 ms), symplectic Euler's
    # own parabola is a step off (2e-4 m at 0.1 ms).
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 1.0]], velocities=[[4.0, 0.0]])
    sim.add_plane((0, 1), friction=5.0)
    sim.step(dt, steps=round(1.0 / dt), method=method)
    assert sim.positions[0, 1] == 0.0 and sim.velocities[0].tolist() == [0.0, 0.0]
    assert sim.positions[0, 0] == pytest.approx(4.0 * math.sqrt(2.0 / G), abs=tolerance)


def test_friction_holds_on_a_sphere_too():
    # A node laid on a sphere 20° from its top (tan 20° = 0.36 < μ = 0.5) stays there.
    sim = ss.System(dim=2)
    angle = math.radians(20)
    sim.add_nodes([[math.sin(angle), math.cos(angle)]])
    sim.add_sphere((0.0, 0.0), 1.0, friction=0.5)
    start = sim.positions.copy()
    sim.step(1e-3, steps=2000)
    np.testing.assert_allclose(sim.positions, start, rtol=0, atol=1e-12)
    # With μ = 0.3 < tan 20° it slides off.
    sim.colliders[0].friction = 0.3
    sim.step(1e-3, steps=2000)
    assert sim.positions[0, 0] > 1.0
