"""Colliders: planes and spheres (circles in 2D) with restitution and friction.

A node found inside a collider after a substep is projected to its surface; if it
moves into the surface (v·n < 0) its normal velocity is reflected with restitution
e (acting on the speed it meets the surface with: without forces, its own), and its
tangential velocity is cut by Coulomb friction: by μ times the change of normal
velocity, at most to zero (it never reverses; stopped, it stays where it touched).
Pinned nodes are ignored. The energy books of contacts: test_contact_energy.py;
static friction on a slope: test_friction.py.

Expected values are analytic: a bounce rebounds to e²·h, a frictionless incline
accelerates at g sin θ, friction decelerates a slider by μ g per unit time.
"""

import math

import numpy as np
import pytest
from state import assert_same, snapshot

import springsim as ss

G = 9.81
METHODS = ss.METHODS
# The methods that take colliders.c's rule after each substep, whose exact projection onto
# the surface these tests check; vbd holds planes, spheres, boxes and capsules by contact
# energy in its solve (its tests: tests/physics/test_vbd_contact.py).
RULE_METHODS = [m for m in METHODS if m != "vbd"]


def describe(sim):
    """Every collider's type and parameters, as plain values, in list order."""
    out = []
    for c in sim.colliders:
        fields = {
            name: np.array(getattr(c, name), dtype=float).tolist()
            for name in ("normal", "offset", "center", "radius", "restitution", "friction")
            if hasattr(c, name)
        }
        out.append((type(c).__name__, fields))
    return out


def one_node(position, velocity=None, dim=3, gravity=None, pinned=False):
    sim = ss.System(dim=dim)
    sim.add_nodes(position, velocities=velocity, pinned=pinned)
    if gravity is not None:
        sim.gravity = gravity
    return sim


# ---- rebound height ----------------------------------------------------------------


def rebound_apex(method, e, h=1.0, dt=1e-4):
    """Drop one node from height h onto the plane y = 0; the apex after the first bounce."""
    sim = one_node([0.0, h, 0.0])
    sim.add_plane((0, 1, 0), 0.0, restitution=e)
    bounced, apex = False, -math.inf
    for _ in range(int(4.0 / dt)):
        sim.step(dt, method=method)
        y, vy = sim.positions[0, 1], sim.velocities[0, 1]
        assert y >= -1e-12, f"node inside the plane: y = {y}"
        if not bounced:
            bounced = vy > 0
            if not bounced:
                continue
        apex = max(apex, y)
        if vy < 0:
            return apex
    raise AssertionError(f"no apex after the first bounce (bounced={bounced})")


@pytest.mark.parametrize("e", [0.5, 0.8, 1.0])
@pytest.mark.parametrize("method", RULE_METHODS)
def test_bounce_rebounds_to_e_squared_h(method, e):
    # Tolerance: the node overshoots the surface by at most v·dt ≈ 4.4e-4 m before it
    # is projected back, and the apex is sampled every dt (error ~ g dt²): far below 2%.
    h = 1.0
    apex = rebound_apex(method, e, h)
    assert apex == pytest.approx(e**2 * h, rel=0.02), f"{method} e={e}: apex {apex}"


@pytest.mark.parametrize("method", RULE_METHODS)
def test_no_restitution_comes_to_rest_on_the_plane(method):
    sim = one_node([0.0, 0.5, 0.0])
    sim.add_plane((0, 1, 0), 0.0, restitution=0.0)
    for _ in range(800):
        sim.step(1e-3, method=method)
        assert sim.positions[0, 1] >= -1e-12
    assert sim.positions[0, 1] == pytest.approx(0.0, abs=1e-9)
    assert abs(sim.velocities[0, 1]) < 2 * G * 1e-3  # at most one substep of gravity


# ---- cloth on a sphere ---------------------------------------------------------------


def drop_cloth_on_sphere(friction, seconds=1.5, dt=1e-3, radius=0.3, off=0.1):
    """A 15 × 15 cloth, horizontal, dropped from 0.1 m above a sphere at the origin,
    off-centre by ``off`` along x. Returns the positions before and after; asserts after
    every step that no node is inside the sphere by more than 1e-9."""
    width = 1.0
    sim = ss.cloth(
        15,
        15,
        width=width,
        height=width,
        mass=0.2,
        stiffness=50.0,
        damping=0.02,
        pin=None,
        origin=(-width / 2 + off, width / 2, 0.0),
    )
    x = sim.positions.copy()
    sim.positions = np.stack([x[:, 0], np.full(len(x), radius + 0.1), x[:, 1]], axis=1)
    assert dt < sim.critical_dt()
    sphere = sim.add_sphere((0, 0, 0), radius, restitution=0.0, friction=friction)
    assert sim.colliders == [sphere]
    start = sim.positions.copy()
    for k in range(int(seconds / dt)):
        sim.step(dt)
        depth = radius - np.linalg.norm(sim.positions, axis=1)
        assert depth.max() <= 1e-9, f"step {k}: a node {depth.max()} m inside the sphere"
    return start, sim.positions.copy()


def test_cloth_with_friction_stays_draped_without_slides_off():
    radius = 0.3
    start, rough = drop_cloth_on_sphere(friction=1.0, radius=radius)
    _, smooth = drop_cloth_on_sphere(friction=0.0, radius=radius)
    shift_rough = rough.mean(axis=0)[0] - start.mean(axis=0)[0]
    shift_smooth = smooth.mean(axis=0)[0] - start.mean(axis=0)[0]
    # Draped: the centre of mass stays above the sphere's centre, most nodes above it.
    assert rough.mean(axis=0)[1] > 0.0
    assert np.mean(rough[:, 1] > 0.0) > 0.5
    assert abs(shift_rough) < 0.1
    # Slid off (towards the heavier, off-centre side) and fell past the sphere.
    assert shift_smooth > 0.2
    assert smooth.mean(axis=0)[1] < -radius
    assert np.mean(smooth[:, 1] > 0.0) < 0.05


# ---- bad input -------------------------------------------------------------------------


def populated(dim=3):
    """A system with nodes, a spring, non-default state and two colliders."""
    sim = ss.System(dim=dim)
    sim.add_nodes(np.arange(2 * dim, dtype=float).reshape(2, dim) + 1.0, masses=[1.0, 2.0])
    sim.add_springs([0, 1], stiffness=10.0)
    sim.step(1e-3, steps=3)
    sim.add_plane(np.eye(dim)[1], -5.0, restitution=0.3, friction=0.2)
    sim.add_sphere(np.full(dim, -3.0), 0.5, restitution=0.7, friction=0.1)
    return sim


def assert_rejected(sim, call):
    """``call()`` raises ValueError and changes nothing: state, colliders, parameters."""
    before, handles, params = snapshot(sim), sim.colliders, describe(sim)
    with pytest.raises(ValueError):
        call()
    assert_same(before, snapshot(sim))
    assert sim.colliders == handles
    assert describe(sim) == params


NAN, INF = math.nan, math.inf
BAD_PLANES = [
    {"normal": (0, 0, 0)},
    {"normal": (0.0, -0.0, 0.0)},
    {"normal": (NAN, 1, 0)},
    {"normal": (INF, 0, 0)},
    {"normal": (0, 1)},  # wrong length for 3D
    {"normal": (0, 1, 0, 0)},
    {"offset": NAN},
    {"offset": INF},
    {"restitution": -0.1},
    {"restitution": 1.0001},
    {"restitution": NAN},
    {"friction": -0.1},
    {"friction": NAN},
]
BAD_SPHERES = [
    {"radius": -1.0},
    {"radius": 0.0},
    {"radius": NAN},
    {"radius": INF},
    {"center": (NAN, 0, 0)},
    {"center": (0, 0)},  # wrong length for 3D
    {"restitution": -0.1},
    {"restitution": 1.5},
    {"restitution": NAN},
    {"friction": -0.5},
    {"friction": NAN},
]


@pytest.mark.parametrize("bad", BAD_PLANES, ids=str)
def test_add_plane_bad_input(bad):
    sim = populated()
    kwargs = {"normal": (0, 1, 0), "offset": 0.0, "restitution": 0.5, "friction": 0.5} | bad
    assert_rejected(sim, lambda: sim.add_plane(**kwargs))


@pytest.mark.parametrize("bad", BAD_SPHERES, ids=str)
def test_add_sphere_bad_input(bad):
    sim = populated()
    kwargs = {"center": (0, 0, 0), "radius": 1.0, "restitution": 0.5, "friction": 0.5} | bad
    assert_rejected(sim, lambda: sim.add_sphere(**kwargs))


@pytest.mark.parametrize("bad", BAD_PLANES, ids=str)
def test_plane_handle_bad_attribute(bad):
    sim = populated()
    plane = sim.colliders[0]
    ((name, value),) = bad.items()
    assert_rejected(sim, lambda: setattr(plane, name, value))


@pytest.mark.parametrize("bad", BAD_SPHERES, ids=str)
def test_sphere_handle_bad_attribute(bad):
    sim = populated()
    sphere = sim.colliders[1]
    ((name, value),) = bad.items()
    assert_rejected(sim, lambda: setattr(sphere, name, value))


def test_2d_bad_input():
    sim = populated(dim=2)
    assert_rejected(sim, lambda: sim.add_plane((0, 0)))
    assert_rejected(sim, lambda: sim.add_plane((0, 1, 0)))  # a 3-vector in 2D
    assert_rejected(sim, lambda: sim.add_sphere((0, 0, 0), 1.0))
    assert_rejected(sim, lambda: sim.add_sphere((0, 0), -1.0))
    assert_rejected(sim, lambda: setattr(sim.colliders[1], "center", (1, 2, 3)))


def test_limits_are_inclusive():
    sim = one_node([0, 1, 0])
    plane = sim.add_plane((0, 1, 0), restitution=0.0, friction=0.0)
    sphere = sim.add_sphere((0, -5, 0), 1.0, restitution=1.0, friction=0.0)
    plane.restitution, sphere.restitution = 1.0, 0.0
    plane.friction = 25.0
    assert (plane.restitution, sphere.restitution, plane.friction) == (1.0, 0.0, 25.0)


def test_defaults_and_normalised_normal():
    sim = one_node([0, 5, 0])
    plane = sim.add_plane((0, 2, 0), offset=1.0)
    sphere = sim.add_sphere((1, 2, 3), 0.5)
    assert (plane.offset, plane.restitution, plane.friction) == (1.0, 0.0, 0.0)
    assert (sphere.radius, sphere.restitution, sphere.friction) == (0.5, 0.0, 0.0)
    np.testing.assert_array_equal(plane.normal, [0, 1, 0])
    np.testing.assert_array_equal(sphere.center, [1, 2, 3])
    plane.normal = (3, 4, 0)
    np.testing.assert_allclose(plane.normal, [0.6, 0.8, 0], rtol=0, atol=1e-15)
    # The half-space is n̂·x >= offset with the unit normal.
    plane.normal = (0, 0, -7)
    sim.positions = [[0, 0, 0]]
    sim.gravity = (0, 0, 0)
    sim.step(1e-3)
    assert sim.positions[0].tolist() == pytest.approx([0, 0, -1.0], abs=1e-15)


@pytest.mark.parametrize("scale", [1e-200, 1e-160, 1e160, 1e200])
def test_any_finite_nonzero_normal_is_normalised(scale):
    # Tiny or huge but finite and nonzero: |n|² under- or overflows, n itself does not.
    sim = one_node([0, 5, 0])
    plane = sim.add_plane((0, 3 * scale, 4 * scale))
    np.testing.assert_allclose(plane.normal, [0, 0.6, 0.8], rtol=1e-15)
    plane.normal = (scale, 0, 0)
    np.testing.assert_allclose(plane.normal, [1, 0, 0], rtol=1e-15)


# ---- moving obstacles ------------------------------------------------------------------


@pytest.mark.parametrize("method", RULE_METHODS)
def test_rising_plane_pushes_resting_nodes_up(method):
    sim = ss.cloth(5, 5, width=1.0, height=1.0, mass=0.1, stiffness=20.0, damping=0.01, pin=None)
    x = sim.positions.copy()
    sim.positions = np.stack([x[:, 0], np.zeros(len(x)), x[:, 1]], axis=1)  # flat, y = 0
    floor = sim.add_plane((0, 1, 0), 0.0)
    dt, rise = 1e-3, 5e-4  # the floor rises at 0.5 m/s
    for k in range(1, 601):
        floor.offset = k * rise
        sim.step(dt, method=method)
        np.testing.assert_allclose(sim.positions[:, 1], k * rise, rtol=0, atol=1e-12)
    assert sim.positions[:, 1].min() == pytest.approx(0.3, abs=1e-12)


def test_moving_sphere_pushes_a_node_aside():
    sim = one_node([1.0, 0.0, 0.0], gravity=(0, 0, 0))
    sphere = sim.add_sphere((-1.0, 0.0, 0.0), 0.5)
    for k in range(200):
        sphere.center = (-1.0 + 0.01 * k, 0.0, 0.0)
        sim.step(1e-3)
        gap = np.linalg.norm(sim.positions[0] - sphere.center)
        assert gap >= 0.5 - 1e-12
    # The sphere's centre is now at 0.99: the node was pushed along +x to 1.49.
    assert sim.positions[0].tolist() == pytest.approx([1.49, 0, 0], abs=1e-12)


# ---- friction and the velocity response --------------------------------------------------


@pytest.mark.parametrize("method", RULE_METHODS)
@pytest.mark.parametrize(
    ("e", "mu"), [(0.5, 0.0), (0.5, 0.3), (0.0, 0.5), (1.0, 0.2), (0.5, 2.0), (0.0, 100.0)]
)
def test_one_oblique_impact(method, e, mu):
    # Without forces every method moves x by v dt and leaves v alone, so the step's
    # velocity change is the contact's alone: v_n -> -e v_n, |v_t| -> |v_t| - μ Δv_n.
    vt, vn = np.array([3.0, 0.0, 4.0]), -2.0
    sim = one_node([0.0, 1e-3, 0.0], velocity=vt + [0, vn, 0], gravity=(0, 0, 0))
    sim.add_plane((0, 1, 0), restitution=e, friction=mu)
    sim.step(1e-3, method=method)  # ends 1e-3 m inside
    dvn = (1 + e) * -vn
    keep = max(0.0, 1.0 - mu * dvn / np.linalg.norm(vt))
    expected = vt * keep + [0, -e * vn, 0]
    assert sim.positions[0, 1] == pytest.approx(0.0, abs=1e-15)
    np.testing.assert_allclose(sim.velocities[0], expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("method", RULE_METHODS)
def test_node_leaving_the_surface_keeps_its_velocity(method):
    # Inside but moving out (v·n > 0): projected, but no velocity response.
    v = [1.0, 0.5, -0.25]
    sim = one_node([0.0, -0.1, 0.0], velocity=v, gravity=(0, 0, 0))
    sim.add_plane((0, 1, 0), restitution=0.5, friction=1.0)
    sim.step(1e-3, method=method)
    # XPBD moves a node that starts a substep inside onto the surface first, then lets
    # it move (collider_constraints.c): it ends v_y dt above it; the others put it back
    # on the surface at the end.
    surface = v[1] * 1e-3 if method == "xpbd" else 0.0
    assert sim.positions[0, 1] == pytest.approx(surface, abs=1e-15)
    assert sim.velocities[0].tolist() == pytest.approx(v, rel=1e-14)


@pytest.mark.parametrize("mu", [0.0, 0.2, 0.5])
def test_sliding_node_decelerates_by_mu_g(mu):
    # Symplectic Euler on the plane y = 0: each substep gravity gives v_n = -g dt, the
    # contact takes it back (Δv_n = g dt, e = 0) and friction takes μ g dt off v_x.
    dt, v0 = 1e-3, 1.0
    sim = one_node([0.0, 0.0, 0.0], velocity=[v0, 0, 0])
    sim.add_plane((0, 1, 0), restitution=0.0, friction=mu)
    vx = v0
    for _ in range(600):
        sim.step(dt, method="symplectic_euler")
        vx = max(0.0, vx - mu * G * dt)
        assert sim.velocities[0, 0] >= 0.0  # never reverses
        assert sim.velocities[0, 0] == pytest.approx(vx, abs=1e-12)
        assert sim.velocities[0, 1] == pytest.approx(0.0, abs=1e-15)
        assert sim.velocities[0, 2] == 0.0
        assert sim.positions[0, 1] == pytest.approx(0.0, abs=1e-15)
    if mu == 0.0:
        assert sim.velocities[0, 0] == v0  # contact does not touch tangential velocity
        assert sim.positions[0, 0] == pytest.approx(v0 * 600 * dt, rel=1e-12)
    elif mu >= 0.2:
        distance = v0**2 / (2 * mu * G)  # stops within the 0.6 s
        assert sim.positions[0, 0] == pytest.approx(distance, rel=0.02)


@pytest.mark.parametrize("method", METHODS)
def test_friction_never_reverses_sliding(method):
    sim = one_node([0.0, 0.0, 0.0], velocity=[0.5, 0, -0.2])
    sim.add_plane((0, 1, 0), restitution=0.3, friction=0.8)
    for _ in range(300):
        sim.step(1e-3, method=method)
        v = sim.velocities[0]
        assert v[0] >= 0.0 and v[2] <= 0.0
        assert abs(v[0] * -0.2 - v[2] * 0.5) < 1e-12  # direction kept
    assert sim.velocities[0, 0] == pytest.approx(0.0, abs=1e-9)  # stopped after ~0.07 s


@pytest.mark.parametrize(("mu", "accel_factor"), [(0.0, 1.0), (0.3, None), (1.0, 0.0)])
def test_incline(mu, accel_factor):
    # A plane tilted by θ = 30°: a node on it slides at a = g (sin θ - μ cos θ), or
    # stays (v_t = 0) when μ >= tan θ.
    theta = math.radians(30)
    normal = np.array([-math.sin(theta), math.cos(theta), 0.0])
    down = np.array([-math.cos(theta), -math.sin(theta), 0.0])  # down the slope
    sim = one_node([0.0, 0.0, 0.0])
    sim.add_plane(normal, 0.0, friction=mu)
    dt, steps = 1e-3, 500
    for _ in range(steps):
        sim.step(dt)
        assert sim.positions[0] @ normal >= -1e-12
    t = steps * dt
    a = max(0.0, G * (math.sin(theta) - mu * math.cos(theta)))
    if accel_factor is not None:
        assert a == pytest.approx(accel_factor * G * math.sin(theta))
    v = sim.velocities[0]
    assert v @ normal == pytest.approx(0.0, abs=1e-12)
    assert v @ down == pytest.approx(a * t, rel=1e-9, abs=1e-12)
    if a == 0.0:
        # Held by static friction: it does not move at all.
        assert sim.positions[0].tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("method", METHODS)
def test_many_substeps_in_one_call_collide_after_each(method):
    # Colliders act after every substep: step(dt, steps=n) is bit for bit n step(dt).
    def scene():
        sim = ss.cloth(
            4, 4, width=0.5, height=0.5, mass=0.1, stiffness=30.0, damping=0.01, pin=None
        )
        x = sim.positions.copy()
        sim.positions = np.stack([x[:, 0] - 0.2, np.full(len(x), 0.3), x[:, 1]], axis=1)
        sim.add_sphere((0, 0, 0), 0.2, restitution=0.4, friction=0.6)
        sim.add_plane((0.1, 1, 0), offset=-0.1, restitution=0.7, friction=0.2)
        return sim

    one, many = scene(), scene()
    one.step(1e-3, steps=700, method=method)
    for _ in range(700):
        many.step(1e-3, method=method)
    assert_same(snapshot(one), snapshot(many))


# ---- pinned nodes, 2D, removal, copies -------------------------------------------------


def test_pinned_nodes_are_ignored():
    # A held node inside both colliders stays there; a dragged one moves through them.
    sim = one_node([0.1, 0.0, 0.0], velocity=[0, -1, 0], pinned=True)
    sim.add_sphere((0, 0, 0), 1.0, restitution=1.0, friction=1.0)
    sim.add_plane((0, 1, 0), offset=5.0)
    sim.step(1e-3, steps=10)
    assert sim.positions[0].tolist() == [0.1, 0.0, 0.0]
    assert sim.velocities[0].tolist() == [0.0, 0.0, 0.0]
    sim.pin(0, velocity=[0, -1, 0])
    sim.step(1e-3, steps=10)
    assert sim.positions[0].tolist() == pytest.approx([0.1, -0.01, 0.0], abs=1e-15)
    assert sim.velocities[0].tolist() == pytest.approx([0.0, -1.0, 0.0], abs=1e-12)


def test_2d_circle_pushes_a_node_out_to_the_radius():
    sim = one_node([1.1, 2.2], dim=2, gravity=(0, 0))
    circle = sim.add_sphere((1.0, 2.0), 0.5)
    sim.step(1e-3)
    d = sim.positions[0] - circle.center
    assert np.linalg.norm(d) == pytest.approx(0.5, rel=1e-15)
    np.testing.assert_allclose(d / np.linalg.norm(d), np.array([1, 2]) / math.sqrt(5), atol=1e-15)
    assert sim.velocities[0].tolist() == [0.0, 0.0]


@pytest.mark.parametrize("method", RULE_METHODS)
def test_2d_bounce_on_a_circle_and_a_line(method):
    sim = one_node([0.0, 1.0], dim=2)
    circle = sim.add_sphere((0.0, -0.5), 0.5, restitution=0.8)
    line = sim.add_plane((0, 1), offset=-5.0)
    assert sim.colliders == [circle, line]
    apex, bounced = -math.inf, False
    for _ in range(10000):
        sim.step(1e-4, method=method)
        assert np.linalg.norm(sim.positions[0] - circle.center) >= 0.5 - 1e-12
        if sim.velocities[0, 1] > 0:
            bounced = True
            apex = max(apex, sim.positions[0, 1])
        elif bounced:
            break
    assert apex == pytest.approx(0.64, rel=0.02)  # head-on on the top of the circle


def test_node_at_a_sphere_centre_is_pushed_out():
    sim = one_node([1.0, 2.0, 3.0], gravity=(0, 0, 0))
    sim.add_sphere((1.0, 2.0, 3.0), 0.25)
    sim.step(1e-3)
    assert np.all(np.isfinite(sim.positions))
    assert np.linalg.norm(sim.positions[0] - [1, 2, 3]) == pytest.approx(0.25, rel=1e-12)


def test_colliders_list_equality_and_removal():
    sim = one_node([0.0, 1.0, 0.0])
    assert sim.colliders == []
    plane = sim.add_plane((0, 1, 0))
    sphere = sim.add_sphere((0, 0, 0), 0.1)
    plane2 = sim.add_plane((1, 0, 0), offset=-3.0)
    assert isinstance(sim.colliders, list)
    assert sim.colliders == [plane, sphere, plane2]
    assert sim.colliders[1] == sphere and not (sim.colliders[1] != sphere)
    assert plane != sphere and plane != plane2 and plane != "plane"
    sim.colliders.clear()  # a fresh list: the system's colliders are not touched
    assert len(sim.colliders) == 3

    sim.remove_collider(sphere)
    assert sim.colliders == [plane, plane2]
    before, params = snapshot(sim), describe(sim)
    with pytest.raises(ValueError):
        sim.remove_collider(sphere)
    assert_same(before, snapshot(sim))
    assert describe(sim) == params and sim.colliders == [plane, plane2]

    sim.remove_collider(plane)
    sim.remove_collider(plane2)
    assert sim.colliders == []
    sim.step(1e-3, steps=500)  # nothing left to stop the fall
    assert sim.positions[0, 1] < 0.0


def test_handles_of_another_system_are_not_equal_and_not_removable():
    a, b = one_node([0, 1, 0]), one_node([0, 1, 0])
    pa, pb = a.add_plane((0, 1, 0)), b.add_plane((0, 1, 0))
    assert pa != pb
    before, params = snapshot(a), describe(a)
    with pytest.raises(ValueError):
        a.remove_collider(pb)
    assert_same(before, snapshot(a))
    assert describe(a) == params and a.colliders == [pa]


def test_copy_copies_colliders_independently():
    sim = one_node([0.0, 1.0, 0.0])
    plane = sim.add_plane((0, 1, 0), offset=0.5, restitution=0.5, friction=0.25)
    sphere = sim.add_sphere((3, 0, 0), 0.75, restitution=0.2, friction=1.5)
    dup = sim.copy()
    assert describe(dup) == describe(sim)
    assert len(dup.colliders) == 2
    assert dup.colliders[0] != plane and dup.colliders[1] != sphere
    # The copy collides (its floor is at 0.5) ...
    dup.step(1e-3, steps=2000)  # settled after the bounces (e = 0.5)
    assert dup.positions[0, 1] == pytest.approx(0.5, abs=1e-9)
    # ... and its colliders are its own.
    dup.colliders[0].offset = -1.0
    dup.colliders[1].radius = 2.0
    dup.remove_collider(dup.colliders[1])
    assert plane.offset == 0.5 and sphere.radius == 0.75
    assert sim.colliders == [plane, sphere]
    sim.step(1e-3, steps=2000)
    assert sim.positions[0, 1] == pytest.approx(0.5, abs=1e-9)


# ---- normals are stored once: re-normalising a stored normal keeps its bits ----------


def random_normals(rng, count, dim):
    """Random directions at random scales, as a user might pass them."""
    return rng.normal(size=(count, dim)) * np.exp(rng.uniform(-5, 5, size=(count, 1)))


def planes_system(dim, seed=0, count=1000):
    """Nodes in a bowl of ``count`` planes with random normals (many contacts)."""
    rng = np.random.default_rng(seed)
    sim = ss.System(dim=dim)
    sim.add_nodes(rng.uniform(-0.5, 0.5, size=(20, dim)), velocities=rng.normal(size=(20, dim)))
    for normal in random_normals(rng, count, dim):
        sim.add_plane(normal, offset=-rng.uniform(0.6, 0.7), restitution=0.5, friction=0.3)
    return sim


def normal_bits(sim):
    return np.array([c.normal for c in sim.colliders]).tobytes()


@pytest.mark.parametrize("dim", [2, 3])
def test_stored_normals_survive_assignment_pickle_and_files_bit_for_bit(tmp_path, dim):
    import pickle

    from springsim.io import load, save

    sim = planes_system(dim)
    bits = normal_bits(sim)
    assert np.allclose(np.linalg.norm([c.normal for c in sim.colliders], axis=1), 1.0)
    save(sim, tmp_path / "planes.npz")
    loaded = load(tmp_path / "planes.npz")
    unpickled = pickle.loads(pickle.dumps(sim))
    assert normal_bits(loaded) == bits
    assert normal_bits(unpickled) == bits
    for plane in sim.colliders:
        plane.normal = plane.normal
    assert normal_bits(sim) == bits
    # ... so a copy made any of these ways steps bit for bit like the original.
    for copy in (loaded, unpickled, sim):
        copy.step(1e-3, steps=200)
    original = planes_system(dim)
    original.step(1e-3, steps=200)
    for copy in (loaded, unpickled, sim):
        assert_same(snapshot(copy), snapshot(original))


@pytest.mark.parametrize("dim", [2, 3])
def test_a_normal_unit_to_within_rounding_is_kept_any_other_normalised(dim):
    rng = np.random.default_rng(dim)
    vectors = random_normals(rng, 1000, dim)
    units = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)  # NumPy's rounding
    sim = ss.System(dim=dim)
    for unit in units:
        sim.add_plane(unit)
    assert normal_bits(sim) == units.tobytes()
    for plane, vector in zip(sim.colliders, vectors, strict=True):
        plane.normal = vector * (1 + 1e-12)  # far from unit: normalised
        np.testing.assert_allclose(
            plane.normal, vector / np.linalg.norm(vector), rtol=1e-15, atol=1e-16
        )
