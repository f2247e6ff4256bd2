"""Gas pressure bodies against the textbook: polygon and polyhedron volumes, the ideal
gas law P·V = nrt, Laplace's law for an inflated ring, energy conservation with the
gas term, a soft ball bouncing on the floor, and every validation error."""

import numpy as np
import pytest
from state import assert_same, snapshot

import springsim as ss
from springsim import reference


def shoelace(x):
    """Area of the polygon x[0], x[1], ..., counter-clockwise positive (independent of
    the kernel's formula, which measures from the first node)."""
    return 0.5 * float(np.sum(x[:, 0] * np.roll(x[:, 1], -1) - np.roll(x[:, 0], -1) * x[:, 1]))


def polyhedron_volume(x, faces):
    """Volume by the divergence theorem about the centroid: Σ (a·(b × c)) / 6."""
    c = x.mean(axis=0)
    a, b, d = (x[faces[:, k]] - c for k in range(3))
    return float(np.sum(a * np.cross(b, d)) / 6.0)


def mesh_system(x):
    sim = ss.System(dim=3)
    sim.add_nodes(x)
    return sim


def octahedron(a):
    """Regular octahedron of edge a: V = √2/3 a³."""
    r = a / np.sqrt(2)
    x = r * np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]])
    faces = [[0, 2, 4], [2, 1, 4], [1, 3, 4], [3, 0, 4], [2, 0, 5], [1, 2, 5], [3, 1, 5], [0, 3, 5]]
    return x.astype(float), np.array(faces)


def cube(a):
    """Cube of edge a from 12 outward triangles: V = a³."""
    x = a * np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)], float)
    quads = [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]]
    faces = [t for q in quads for t in ([q[0], q[1], q[2]], [q[0], q[2], q[3]])]
    return x, np.array(faces)


# ---- Geometry -----------------------------------------------------------------------


@pytest.mark.parametrize("offset", [0.0, 1e3])
def test_icosahedron_volume_is_the_analytic_one(offset):
    # ball(0) is the regular icosahedron inscribed in the unit sphere: edge
    # a = 4 / sqrt(10 + 2 sqrt(5)), V = 5/12 (3 + sqrt 5) a³. Also far from the origin,
    # where a formula about the origin would lose digits.
    sim = ss.ball(
        subdivisions=0, radius=1.0, mass=1.0, stiffness=1.0, nrt=1.0, center=(offset, 0, 0)
    )
    a = 4.0 / np.sqrt(10.0 + 2.0 * np.sqrt(5.0))
    assert sim.gas(0).volume == pytest.approx(5.0 / 12.0 * (3.0 + np.sqrt(5.0)) * a**3, rel=1e-12)


@pytest.mark.parametrize(
    "shape, volume",
    [(octahedron(0.7), np.sqrt(2) / 3 * 0.7**3), (cube(1.3), 1.3**3)],
    ids=["octahedron", "cube"],
)
def test_polyhedron_volumes_are_analytic(shape, volume):
    x, faces = shape
    sim = mesh_system(x)
    body = sim.add_pressure(faces, nrt=1.0)
    assert sim.gas(body).volume == pytest.approx(volume, rel=1e-12)


@pytest.mark.parametrize("level", [1, 3])
def test_icosphere_volume_equals_the_sum_of_its_tetrahedra(level):
    sim = ss.ball(subdivisions=level, radius=2.0, mass=1.0, stiffness=1.0, nrt=1.0)
    expected = polyhedron_volume(sim.positions, sim.faces)
    assert sim.gas(0).volume == pytest.approx(expected, rel=1e-12)
    assert expected < 4 / 3 * np.pi * 8  # inscribed in its sphere


@pytest.mark.parametrize("n", [3, 7, 64])
def test_regular_polygon_area_is_analytic(n):
    # A regular n-gon of circumradius r: A = n/2 r² sin(2π/n).
    r = 1.7
    ring = ss.ball(nodes=n, radius=r, mass=1.0, stiffness=1.0, dim=2, nrt=1.0, center=(5.0, -3.0))
    assert ring.gas(0).volume == pytest.approx(n / 2 * r * r * np.sin(2 * np.pi / n), rel=1e-12)


def test_clockwise_loop_and_inward_triangles_are_stored_outward():
    ring = ss.ball(nodes=8, radius=1.0, mass=1.0, stiffness=1.0, dim=2)
    clockwise = np.arange(8)[::-1]
    body = ring.add_pressure(clockwise, nrt=1.0)
    assert shoelace(ring.positions) > 0
    assert ring.gas(body).volume == pytest.approx(shoelace(ring.positions), rel=1e-12)
    edges = np.stack([clockwise, np.roll(clockwise, -1)], 1)
    np.testing.assert_array_equal(ring.gas(body).boundary, edges[:, ::-1])
    sphere = ss.ball(subdivisions=1, radius=1.0, mass=1.0, stiffness=1.0)
    inward = sphere.faces[:, ::-1]
    body = sphere.add_pressure(inward, nrt=1.0)
    assert sphere.gas(body).volume > 0
    np.testing.assert_array_equal(sphere.gas(body).boundary, inward[:, [0, 2, 1]])


def test_loop_given_closed_or_as_edges_is_the_same_body():
    ring = ss.ball(nodes=6, radius=1.0, mass=1.0, stiffness=1.0, dim=2)
    a = ring.add_pressure([0, 1, 2, 3, 4, 5, 0], nrt=1.0)  # first node repeated at the end
    b = ring.add_pressure(np.stack([np.arange(6), np.roll(np.arange(6), -1)], 1), nrt=1.0)
    np.testing.assert_array_equal(ring.gas(a).boundary, ring.gas(b).boundary)


def test_volume_gradient_is_the_derivative_of_the_volume():
    # The force direction dV/dx (reference.volume_gradient, the kernel's formula)
    # against central differences of the enclosed volume, on a jittered icosphere
    # and ring: to 1e-8 (differences with h = 1e-6 are exact for V's cubic terms up to
    # rounding ~1e-10).
    rng = np.random.default_rng(7)
    for sim, elements in (
        (ss.ball(subdivisions=1, radius=1.0, mass=1.0, stiffness=1.0), None),
        (ss.ball(nodes=9, radius=1.0, mass=1.0, stiffness=1.0, dim=2), None),
    ):
        body = sim.add_pressure(sim.faces if sim.dim == 3 else np.arange(9), nrt=1.0)
        elements = sim.gas(body).boundary.astype(np.int64)
        x = sim.positions + rng.uniform(-0.05, 0.05, sim.positions.shape)
        g = reference.volume_gradient(elements, x)
        h = 1e-6
        numeric = np.zeros_like(x)
        for i in range(len(x)):
            for k in range(sim.dim):
                up, down = x.copy(), x.copy()
                up[i, k] += h
                down[i, k] -= h
                numeric[i, k] = (
                    reference.enclosed_volume(elements, up)
                    - reference.enclosed_volume(elements, down)
                ) / (2 * h)
        np.testing.assert_allclose(g, numeric, atol=1e-8)


# ---- The ideal gas law and Laplace's law -------------------------------------------


def settle(sim, dt, seconds):
    sim.step(dt, steps=int(round(seconds / dt)))
    return float(np.abs(sim.velocities).max())


def test_inflated_ring_obeys_the_gas_law_and_laplace():
    # A ring of n = 64 equal springs, no gravity, damped until at rest. Mechanics alone
    # gives the pressure: at each node the two springs pull inward with 2 T sin(π/n),
    # the gas pushes out with P times one edge length 2 a tan(π/n), where a is the
    # distance from the centre to the springs: P = T / a exactly. Then
    #   P·V = nrt with V the shoelace area (to 1e-6, the settling accuracy), and
    #   T = P·R, Laplace's law with R the equilibrium radius (within 1%: R = a/cos(π/n)).
    n, nrt = 64, 20.0
    ring = ss.ball(nodes=n, radius=1.0, mass=1.0, stiffness=1000.0, damping=2.0, dim=2)
    ring.gravity = (0, 0)
    ring.drag = 0.5
    body = ring.add_pressure(np.arange(n), nrt=nrt)
    assert settle(ring, 1e-3, 40.0) < 1e-9
    x = ring.positions
    centre = x.mean(axis=0)
    tension = ring.spring_tensions()
    assert np.ptp(tension) < 1e-9 * tension.mean()  # all equal by symmetry
    middles = 0.5 * (x + np.roll(x, -1, axis=0))
    a = np.linalg.norm(middles - centre, axis=1).mean()
    radius = np.linalg.norm(x - centre, axis=1).mean()
    p_mechanical = tension.mean() / a
    area = shoelace(x)
    assert p_mechanical * area == pytest.approx(nrt, rel=1e-6)
    assert ring.gas(body).pressure == pytest.approx(p_mechanical, rel=1e-6)
    assert ring.gas(body).volume == pytest.approx(area, rel=1e-12)
    assert tension.mean() == pytest.approx(p_mechanical * radius, rel=0.01)
    assert radius > 1.05  # it did inflate: the springs carry the load


def spring_forces(sim):
    """Force of every spring on every node, from the kernel's tensions."""
    x, pairs, t = sim.positions, sim.springs, sim.spring_tensions()
    d = x[pairs[:, 1]] - x[pairs[:, 0]]
    f_i = (t / np.linalg.norm(d, axis=1))[:, None] * d
    f = np.zeros_like(x)
    np.add.at(f, pairs[:, 0], f_i)
    np.add.at(f, pairs[:, 1], -f_i)
    return f


def test_pressurised_icosphere_obeys_the_gas_law_and_grows_with_nrt():
    # At rest every node's spring force balances P dV/dx. The best P (least squares
    # over all nodes) times the volume (divergence theorem) is nrt, to 1e-6; raising
    # nrt inflates the ball.
    sphere = ss.ball(subdivisions=2, radius=1.0, mass=1.0, stiffness=500.0, damping=1.0, nrt=30.0)
    sphere.gravity = (0, 0, 0)
    sphere.drag = 0.5
    assert settle(sphere, 1e-3, 30.0) < 1e-9
    x, faces = sphere.positions, sphere.faces

    def mechanical_pressure():
        g = reference.volume_gradient(sphere.gas(0).boundary.astype(np.int64), x)
        f = spring_forces(sphere)
        p = -np.sum(f * g) / np.sum(g * g)
        assert np.abs(f + p * g).max() < 1e-6 * np.abs(f).max()  # in balance
        return p

    volume = polyhedron_volume(x, faces)
    assert mechanical_pressure() * volume == pytest.approx(30.0, rel=1e-6)
    radius = np.linalg.norm(x - x.mean(axis=0), axis=1).mean()
    sphere.gas(0).nrt = 60.0
    assert settle(sphere, 1e-3, 30.0) < 1e-9
    x = sphere.positions
    assert np.linalg.norm(x - x.mean(axis=0), axis=1).mean() > radius * 1.002
    assert mechanical_pressure() * polyhedron_volume(x, faces) == pytest.approx(60.0, rel=1e-6)


def test_ambient_pressure_compresses_the_gas_to_nrt_over_ambient():
    # Springs of zero stiffness (damping only): the gas alone against the ambient
    # pressure. Equilibrium is P = ambient, so V = nrt / ambient (Boyle's law), both
    # starting larger and starting smaller.
    for nrt in (2.0, 5.0):
        ring = ss.ball(nodes=32, radius=1.0, mass=1.0, stiffness=0.0, damping=0.5, dim=2, nrt=nrt)
        ring.gravity = (0, 0)
        ring.drag = 0.2
        ring.gas(0).ambient = 1.0
        settle(ring, 1e-3, 50.0)
        assert ring.gas(0).volume == pytest.approx(nrt / 1.0, rel=1e-6)
        assert ring.gas(0).pressure == pytest.approx(1.0, rel=1e-6)


# ---- Energy ------------------------------------------------------------------------


def breathing_ball(dim):
    """An undamped ball in free space, started at its uninflated size with a sideways
    kick: it breathes in and out, sloshing energy between kinetic, elastic and gas."""
    sim = ss.ball(
        **({"nodes": 32} if dim == 2 else {"subdivisions": 2}),
        radius=1.0,
        mass=1.0,
        stiffness=200.0,
        dim=dim,
        nrt=20.0,
    )
    sim.gravity = np.zeros(dim)
    sim.velocities[:, 0] = 0.2 * np.sign(sim.positions[:, 0])
    return sim


def energy_record(sim, dt, steps, method, every=100):
    record = [sim.energy()]
    for _ in range(steps // every):
        sim.step(dt, every, method=method)
        record.append(sim.energy())
    return record


def swing(record):
    """The energy that flows between terms: the largest range of any one term. (The
    total's own size means nothing: −nrt ln V depends on the unit of V.)"""
    return max(np.ptp([getattr(e, t) for e in record]) for t in ("kinetic", "elastic", "pressure"))


@pytest.mark.parametrize("dim", [2, 3])
def test_symplectic_euler_conserves_energy_with_the_gas_term(dim):
    # Undamped, no gravity, started off balance: over 10⁴ steps of dt = critical_dt /
    # 200 the total moves by < 1e-3 of the energy that flows between kinetic, elastic
    # and gas. Symplectic Euler's energy error is bounded and O(dt): about 0.08 dt /
    # critical_dt of that swing here, measured 2.9e-4 (2D) and 3.9e-4 (3D) at this dt.
    # Without the gas term the "total" swings by a third or more: the term is what
    # makes it conserved.
    sim = breathing_ball(dim)
    record = energy_record(sim, sim.critical_dt() / 200, 10_000, "symplectic_euler", every=10)
    total = np.array([e.total for e in record])
    assert np.ptp(total) < 1e-3 * swing(record)
    assert np.ptp([e.total - e.pressure for e in record]) > 0.3 * swing(record)


@pytest.mark.parametrize("method, order", [("velocity_verlet", 2), ("rk4", 4)])
def test_energy_error_converges_at_the_method_order(method, order):
    # Only a force that is exactly −∂E/∂x lets the energy error of an order-p method
    # shrink as dt^p: halving dt must divide it by 2^p (within 2^±0.5).
    errors = []
    for fraction in (0.04, 0.02):
        sim = breathing_ball(3)
        dt = fraction * sim.critical_dt()
        record = energy_record(sim, dt, int(round(0.5 / dt)), method, every=20)
        errors.append(np.ptp([e.total for e in record]) / swing(record))
    assert np.log2(errors[0] / errors[1]) > order - 0.5


def test_energy_pressure_term_is_minus_nrt_ln_v_plus_ambient_v():
    sim = ss.ball(subdivisions=1, radius=0.8, mass=1.0, stiffness=1.0, nrt=3.0)
    sim.gas(0).ambient = 0.5
    v = polyhedron_volume(sim.positions, sim.faces)
    assert sim.energy().pressure == pytest.approx(-3.0 * np.log(v) + 0.5 * v, rel=1e-12)
    assert sim.gas(0).energy == pytest.approx(sim.energy().pressure, rel=1e-15)
    e = sim.energy()
    assert e.total == e.kinetic + e.elastic + e.gravity + e.pressure


# ---- Contact --------------------------------------------------------------------------


def test_soft_ball_bounces_on_the_floor_and_keeps_its_area():
    # Matyka's demo: a 2D ring of 20 springs full of gas, dropped 0.5 m onto a floor
    # with restitution 0 (the floor itself returns nothing: only the gas and springs
    # can bounce the ball). It must come back up by at least half of its drop and keep
    # 90% of its rest area at the lowest point.
    ball = ss.ball(nodes=20, radius=0.5, mass=1.0, stiffness=1e4, damping=1.0, dim=2, nrt=80.0)
    ball.gravity = (0, 0)
    ball.drag = 1.0
    settle(ball, 1e-4, 2.0)
    rest_area = ball.gas(0).volume
    ball.drag = 0.0
    ball.gravity = (0, -9.81)
    ball.positions[:, 1] += 1.0 - ball.center_of_mass()[1]
    ball.velocities = 0.0
    ball.add_plane((0, 1))
    heights, areas = [], []
    for _ in range(1000):
        ball.step(1e-4, steps=10)
        heights.append(ball.center_of_mass()[1])
        areas.append(ball.gas(0).volume)
    lowest = int(np.argmin(heights))
    assert heights[lowest] < 0.5  # it did hit the floor and squash
    assert min(areas) >= 0.9 * rest_area
    assert min(areas[lowest - 50 : lowest + 50]) == min(areas)  # squashed most at the bottom
    rebound = max(heights[lowest:]) - heights[lowest]
    assert rebound > 0.5 * (1.0 - heights[lowest])


# ---- Several bodies, copies, edits ------------------------------------------------------


def test_several_bodies_are_independent_and_add_copies_them():
    a = ss.ball(nodes=10, radius=1.0, mass=1.0, stiffness=100.0, dim=2, nrt=2.0)
    b = ss.ball(nodes=6, radius=0.5, mass=1.0, stiffness=100.0, dim=2, nrt=7.0, center=(5, 0))
    nodes = a.add(b)
    assert [g.body for g in a.gases] == [0, 1]
    assert a.gas(1).nrt == 7.0
    np.testing.assert_array_equal(a.gas(1).boundary, b.gas(0).boundary + nodes[0])
    assert a.gas(1).volume == pytest.approx(b.gas(0).volume, rel=1e-15)
    a.gravity = b.gravity = (0, 0)
    a.step(1e-3, 500)
    b.step(1e-3, 500)
    # Body 1 moves exactly as b alone (the bodies share no node); body 0 has its own gas.
    np.testing.assert_array_equal(a.positions[nodes], b.positions)
    assert a.gas(0).volume != pytest.approx(a.gas(1).volume)


def test_copy_owns_its_gas():
    sim = ss.ball(subdivisions=1, radius=1.0, mass=1.0, stiffness=100.0, nrt=2.0)
    twin = sim.copy()
    twin.gas(0).nrt = 9.0
    assert sim.gas(0).nrt == 2.0
    sim.step(1e-3, 100)
    twin.remove_pressure(0)
    assert sim.gas(0).nrt == 2.0 and twin.gases == []
    same = sim.copy()
    sim.step(1e-3, 100)
    same.step(1e-3, 100)
    assert_same(snapshot(sim), snapshot(same))


def test_nrt_and_ambient_write_through_and_change_the_motion():
    sim = ss.ball(nodes=12, radius=1.0, mass=1.0, stiffness=100.0, dim=2, nrt=1.0)
    gas = sim.gas(0)
    gas.nrt = 4.0
    gas.ambient = 0.25
    assert (sim.gas(0).nrt, sim.gas(0).ambient) == (4.0, 0.25)
    assert gas.pressure == pytest.approx(4.0 / shoelace(sim.positions), rel=1e-12)
    sim.gravity = (0, 0)
    sim.step(1e-3, 200)
    area = shoelace(sim.positions)
    gas.nrt = 0.0  # deflate: the springs pull it back in
    sim.step(1e-3, 200)
    assert shoelace(sim.positions) < area
    assert sim.gas(0) == gas and hash(sim.gas(0)) == hash(gas)
    assert "nrt=0" in repr(gas)


def test_pinned_boundary_nodes_feel_no_gas():
    sim = ss.ball(nodes=12, radius=1.0, mass=1.0, stiffness=0.0, dim=2, nrt=10.0)
    sim.gravity = (0, 0)
    sim.pin([0, 3])
    x0 = sim.positions[[0, 3]].copy()
    sim.step(1e-3, 100)
    np.testing.assert_array_equal(sim.positions[[0, 3]], x0)
    assert np.abs(sim.velocities[1]).max() > 0  # the free ones were pushed


def test_threads_do_not_change_a_gas_step(monkeypatch):
    # A cloth-sized sphere runs its springs on several threads (>= 8192 springs); the
    # gas force is added in one fixed order: bit-identical results for 1 and 2 threads.
    results = []
    for threads in (1, 2):
        ss.set_num_threads(threads)
        try:
            sim = ss.ball(subdivisions=5, radius=1.0, mass=1.0, stiffness=1e3, nrt=5.0)
            assert sim.num_springs >= 8192
            sim.step(1e-4, 20)
            results.append(snapshot(sim))
        finally:
            ss.set_num_threads(None)
    assert_same(*results)


# ---- Validation ------------------------------------------------------------------------


def ring_and_sphere():
    return (
        ss.ball(nodes=6, radius=1.0, mass=1.0, stiffness=1.0, dim=2),
        ss.ball(subdivisions=0, radius=1.0, mass=1.0, stiffness=1.0),
    )


def rejects(sim, boundary, error, match, nrt=1.0, ambient=0.0):
    before = snapshot(sim)
    with pytest.raises(error, match=match):
        sim.add_pressure(boundary, nrt, ambient=ambient)
    assert sim.gases == []
    assert_same(before, snapshot(sim))


def test_open_boundaries_are_rejected():
    ring, sphere = ring_and_sphere()
    rejects(ring, [[0, 1], [1, 2], [2, 3]], ValueError, "not closed: node 0 ends an open chain")
    rejects(sphere, sphere.faces[1:], ValueError, r"not closed: edge \(\d+, \d+\) belongs to 1")


def test_inconsistently_oriented_boundaries_are_rejected():
    ring, sphere = ring_and_sphere()
    edges = np.stack([np.arange(6), np.roll(np.arange(6), -1)], 1)
    edges[2] = edges[2, ::-1]
    rejects(ring, edges, ValueError, r"not consistently oriented: 0 edge\(s\) leave node 2 and 2")
    faces = sphere.faces.copy()
    faces[4] = faces[4, ::-1]
    rejects(sphere, faces, ValueError, "not consistently oriented: edge .* runs the same way")


@pytest.mark.parametrize("bad", [12, -1, 2**40])
def test_missing_nodes_are_rejected(bad):
    ring, sphere = ring_and_sphere()
    rejects(ring, [0, 1, 2, bad], ValueError, f"refers to node {bad}, but the system has 6")
    faces = sphere.faces.astype(np.int64)
    faces[0, 0] = bad
    rejects(sphere, faces, ValueError, f"refers to node {bad}, but the system has 12")


def test_degenerate_boundaries_are_rejected():
    ring, sphere = ring_and_sphere()
    rejects(ring, [], ValueError, "is empty")
    rejects(ring, [[0, 0], [0, 0]], ValueError, "repeats node 0")
    rejects(ring, [0, 3], ValueError, "encloses an area of 0")  # there and back
    rejects(sphere, [[0, 1, 1]], ValueError, "repeats node 1")
    line = ss.System(dim=2)
    line.add_nodes([[0, 0], [1, 0], [2, 0]])
    rejects(line, [0, 1, 2], ValueError, "encloses an area of 0")


@pytest.mark.parametrize(
    "nrt, ambient, match",
    [
        (-1.0, 0.0, "nrt is -1"),
        (np.nan, 0.0, "nrt is nan"),
        (np.inf, 0.0, "nrt is inf"),
        (1.0, -2.0, "ambient is -2"),
        (1.0, np.nan, "ambient is nan"),
    ],
)
def test_bad_gas_values_are_rejected(nrt, ambient, match):
    ring, _ = ring_and_sphere()
    rejects(ring, range(6), ValueError, match, nrt=nrt, ambient=ambient)
    body = ring.add_pressure(range(6), 1.0)
    with pytest.raises(ValueError, match=match):
        ring.gas(body).nrt, ring.gas(body).ambient = nrt, ambient
    assert (ring.gas(body).nrt, ring.gas(body).ambient) == (1.0, 0.0)


def test_wrong_types_and_shapes_are_rejected():
    ring, sphere = ring_and_sphere()
    rejects(ring, [0.0, 1.0, 2.0], TypeError, "integers")
    rejects(ring, np.zeros((2, 3), int), ValueError, r"2D boundary must be .* shape \(2, 3\)")
    rejects(sphere, [0, 1, 2], ValueError, r"3D boundary must be \(K, 3\) triangles")
    rejects(ring, range(6), TypeError, "nrt must be a real number", nrt="1")
    with pytest.raises(ValueError, match="no pressure body 3"):
        ring.gas(3)
    with pytest.raises(TypeError):
        ring.gas(0.5)
    with pytest.raises(ValueError, match="no pressure body 0"):
        ring.remove_pressure(0)


def test_a_removed_body_handle_raises():
    ring, _ = ring_and_sphere()
    gas = ring.gas(ring.add_pressure(range(6), 1.0))
    ring.remove_pressure(gas.body)
    with pytest.raises(ValueError, match="removed"):
        _ = gas.volume
    assert ring.add_pressure(range(6), 1.0) == 1  # ids are not reused


def test_removing_a_boundary_node_is_refused():
    ring = ss.ball(nodes=6, radius=1.0, mass=1.0, stiffness=1.0, dim=2, nrt=1.0)
    ring.add_nodes([5.0, 5.0])
    before = snapshot(ring)
    with pytest.raises(ValueError, match="node 2 is on the boundary of pressure body 0"):
        ring.remove_nodes([6, 2])
    assert_same(before, snapshot(ring))
    assert ring.num_nodes == 7
    ring.add_nodes([7.0, 7.0])
    ring.remove_nodes([6])  # not on the boundary: the body is renumbered
    assert ring.gas(0).boundary.max() == 5


def test_removing_nodes_before_a_body_renumbers_it():
    sim = ss.System(dim=2)
    sim.add_nodes([[9.0, 9.0]])
    ring = ss.ball(nodes=6, radius=1.0, mass=1.0, stiffness=1.0, dim=2, nrt=1.0)
    sim.add(ring)
    volume = sim.gas(0).volume
    sim.remove_nodes([0])
    np.testing.assert_array_equal(sim.gas(0).boundary, ring.gas(0).boundary)
    assert sim.gas(0).volume == volume


def test_an_inside_out_body_is_refused_before_stepping():
    ring = ss.ball(nodes=6, radius=1.0, mass=1.0, stiffness=1.0, dim=2, nrt=1.0)
    ring.positions[:, 0] *= -1  # mirrored: the loop now runs clockwise
    before = snapshot(ring)
    with pytest.raises(ValueError, match="pressure body 0 encloses an area of -2.59"):
        ring.step(1e-3)
    assert_same(before, snapshot(ring))


@pytest.mark.parametrize("method", ss.METHODS)
def test_a_collapsing_body_raises_unstable_and_rolls_back(method):
    # A weak gas under a crushing ambient pressure, no springs to resist: the ring
    # turns inside out within the step. The step raises UnstableError naming the body,
    # and the state is exactly as before the call.
    ring = ss.ball(nodes=8, radius=1.0, mass=1.0, stiffness=0.0, dim=2, nrt=0.01)
    ring.gravity = (0, 0)
    ring.gas(0).ambient = 100.0
    ring.step(1e-3, 3, method=method)
    before = snapshot(ring)
    with pytest.raises(ss.UnstableError, match="pressure body 0 turned inside out"):
        ring.step(1e-3, 2000, method=method)
    assert_same(before, snapshot(ring))


def test_a_flat_body_has_infinite_pressure_or_none():
    # Squashed flat (every node on a line), the loop encloses exactly 0: P = nrt / 0
    # is inf with gas inside, 0 without (it used to raise ZeroDivisionError).
    ring = ss.ball(nodes=8, radius=1.0, mass=1.0, stiffness=1e3, dim=2, nrt=3.0)
    ring.positions[:, 1] = 0.0
    gas = ring.gas(0)
    assert gas.volume == 0.0
    assert gas.pressure == np.inf and "pressure=inf" in repr(gas)
    gas.nrt = 0.0
    assert gas.pressure == 0.0 and "pressure=0," in repr(gas)
