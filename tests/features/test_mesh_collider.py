"""Boxes, capsules and triangle-mesh colliders.

They share the planes' and spheres' contact response
(csrc/kernel/contact/colliders.c), so the expected
values are the plane's analytic ones (test_collide.py, test_contact_energy.py): a bounce
rebounds to e² h, one impact keeps −e v_n and takes μ (1 + e)|v_n| off |v_t|, a slider
decelerates by μ g. A mesh collider of a box's 12 triangles must move a node as the
analytic box does. A cloth dropped on an icosphere mesh must never cross a triangle:
checked here by an independent continuous test (the segment each node moved along in a
frame against every triangle, in plain NumPy) and by the distance from every node to
the mesh (also plain NumPy).
"""

import gc
import math
import pickle

import numpy as np
import pytest
from state import assert_same, snapshot

import springsim as ss
from springsim.colliders import MeshCollider
from springsim.files.npz import _KEYS_BY_VERSION, COLLIDER_KEYS, FORMAT_VERSION
from springsim.io import load, save

G = 9.81
METHODS = ss.METHODS
# The methods whose meshes act by colliders.c's rule alone; vbd adds contact energy in
# its solve, with the rule as a safety net after it (its tests:
# tests/physics/test_vbd_contact.py).
RULE_METHODS = [m for m in METHODS if m != "vbd"]


def box_mesh(center=(0.0, 0.0, 0.0), half=(0.5, 0.25, 0.5)):
    """The 12 triangles of an axis-aligned box, outward by the right-hand rule."""
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    faces = [[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1]]
    faces += [[2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]]
    return corners * np.asarray(half) + np.asarray(center), np.array(faces)


def icosphere(radius=0.3, subdivisions=1):
    ball = ss.ball(radius=radius, mass=1.0, stiffness=1.0, subdivisions=subdivisions)
    return ball.positions.copy(), ball.faces.copy()


def one_node(position, velocity=None, dim=3, gravity=None, mass=1.0):
    sim = ss.System(dim=dim)
    sim.add_nodes(position, velocities=velocity, masses=mass)
    if gravity is not None:
        sim.gravity = gravity
    return sim


# ---- independent geometry (plain NumPy) -----------------------------------------------


def crossings(x0, x1, vertices, faces):
    """(node, face) pairs whose segment x0 -> x1 passes through the triangle (edges
    included; Möller–Trumbore on every pair)."""
    a, b, c = (vertices[faces[:, k]] for k in range(3))
    e1, e2 = b - a, c - a
    d = (x1 - x0)[:, None, :]
    p = np.cross(d, e2[None])
    det = np.einsum("nfk,fk->nf", p, e1)
    ok = np.abs(det) > 1e-300
    inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
    s = x0[:, None, :] - a[None]
    u = np.einsum("nfk,nfk->nf", s, p) * inv
    q = np.cross(s, e1[None])
    v = (d * q).sum(axis=2) * inv
    t = np.einsum("nfk,fk->nf", q, e2) * inv
    hit = ok & (u >= 0) & (v >= 0) & (u + v <= 1) & (t > 0) & (t < 1)
    return np.argwhere(hit)


def distances(points, vertices, faces):
    """The distance from each point to the nearest triangle: to the plane where the
    projection falls inside, else to the nearest of the three edges."""
    a, b, c = (vertices[faces[:, k]] for k in range(3))
    n = np.cross(b - a, c - a)
    n /= np.linalg.norm(n, axis=1)[:, None]
    r = points[:, None, :] - a[None]
    plane = np.einsum("nfk,fk->nf", r, n)
    foot = points[:, None, :] - plane[..., None] * n[None]
    inside = np.ones(plane.shape, dtype=bool)
    for u, w in ((a, b), (b, c), (c, a)):
        edge_normal = np.cross(n, w - u)  # points into the triangle
        inside &= np.einsum("nfk,fk->nf", foot - u[None], edge_normal) >= 0
    best = np.where(inside, np.abs(plane), np.inf)
    for u, w in ((a, b), (b, c), (c, a)):
        e = w - u
        t = np.clip(np.einsum("nfk,fk->nf", points[:, None, :] - u[None], e) / (e * e).sum(1), 0, 1)
        nearest = u[None] + t[..., None] * e[None]
        best = np.minimum(best, np.linalg.norm(points[:, None, :] - nearest, axis=2))
    return best.min(axis=1)


def test_the_geometry_helpers_find_what_they_should():
    vertices, faces = box_mesh()
    x0 = np.array([[0.1, 1.0, 0.2], [2.0, 1.0, 0.0]])
    x1 = np.array([[0.1, 0.0, 0.2], [2.0, 0.0, 0.0]])
    assert {tuple(p) for p in crossings(x0, x1, vertices, faces)} <= {(0, 6), (0, 7)}
    assert len(crossings(x0, x1, vertices, faces)) == 1  # the top, once; the other misses
    np.testing.assert_allclose(distances(x0, vertices, faces), [0.75, math.hypot(1.5, 0.75)])
    assert len(crossings(x0[:1], np.array([[0.1, 0.0, 0.1]]), vertices, faces)) >= 1  # an edge


# ---- boxes and capsules: the plane's analytic values ----------------------------------


def shape_under(kind, dim=3):
    """A collider whose surface is the plane y = 0 near x = z = 0, normal +y."""
    sim = ss.System(dim=dim)
    if kind == "box":
        sim.add_box([0.0, -0.5, 0.0][:dim], [2.0, 0.5, 2.0][:dim])
    elif kind == "capsule":
        sim.add_capsule([-2.0, -0.5, 0.0][:dim], [2.0, -0.5, 0.0][:dim], radius=0.5)
    else:
        sim.add_mesh_collider(*box_mesh((0, -0.5, 0), (2.0, 0.5, 2.0)))
    return sim


SHAPES = ["box", "capsule", "mesh"]


def set_contact(sim, e, mu):
    (collider,) = sim.colliders
    collider.restitution, collider.friction = e, mu


def rebound_apex(kind, method, e, h=1.0, dt=1e-4):
    sim = shape_under(kind)
    set_contact(sim, e, 0.0)
    sim.add_nodes([[0.0, h, 0.0]])
    sim.gravity = (0, -G, 0)
    bounced = False
    apex = -math.inf
    for _ in range(int(4.0 / dt)):
        sim.step(dt, method=method)
        assert sim.positions[0, 1] >= -1e-12
        bounced = bounced or sim.velocities[0, 1] > 0
        if bounced:
            apex = max(apex, sim.positions[0, 1])
            if sim.velocities[0, 1] < 0:
                return apex
    raise AssertionError("no apex after the first bounce")


@pytest.mark.parametrize("kind", SHAPES)
@pytest.mark.parametrize("method", RULE_METHODS)
def test_a_dropped_node_rebounds_to_e_squared_h(kind, method):
    # As for the plane (test_collide.py): the overshoot before the node is put back is
    # at most v dt = 4.4e-4 m and the apex is sampled every dt: far below 2 %.
    e = 0.7
    assert rebound_apex(kind, method, e) == pytest.approx(e**2, rel=0.02)


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("kind", SHAPES)
@pytest.mark.parametrize(("e", "mu"), [(0.5, 0.0), (0.5, 0.3), (0.0, 0.5), (1.0, 0.2), (0.3, 9.0)])
def test_one_oblique_impact_keeps_e_vn_and_loses_mu_dvn(kind, dim, e, mu):
    # No forces: the contact alone acts, as on the plane: v_n -> -e v_n and
    # |v_t| -> max(0, |v_t| - μ (1 + e)|v_n|); and the books count exactly the kinetic
    # energy that went (to rounding).
    if kind == "mesh" and dim == 2:
        return  # meshes are 3D (test_a_2d_system_refuses_a_mesh)
    # (along a capsule's axis, so that its normal stays +y)
    vt = np.array([5.0, 0.0, 0.0] if kind == "capsule" else [3.0, 0.0, 4.0])[:dim]
    vn, m = -2.0, 2.5
    v = vt + np.array([0.0, vn, 0.0])[:dim]
    sim = shape_under(kind, dim)
    set_contact(sim, e, mu)
    sim.add_nodes([[0.0, 1e-3, 0.0][:dim]], velocities=[v], masses=m)
    sim.gravity = np.zeros(dim)
    sim.track_energy = True
    sim.step(1e-3)  # ends 1e-3 m inside
    keep = max(0.0, 1.0 - mu * (1 + e) * -vn / np.linalg.norm(vt))
    expected = vt * keep + np.array([0.0, -e * vn, 0.0])[:dim]
    np.testing.assert_allclose(sim.velocities[0], expected, rtol=1e-12, atol=1e-12)
    # the mesh puts the node back at its skin, 1e-9 of its extent (5.7 m) above y = 0
    assert sim.positions[0, 1] == pytest.approx(0.0, abs=1e-8 if kind == "mesh" else 1e-15)
    lost = 0.5 * m * (v @ v - expected @ expected)
    assert sim.dissipated == pytest.approx(lost, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("kind", SHAPES)
@pytest.mark.parametrize("mu", [0.2, 0.5])
def test_a_slider_decelerates_by_mu_g(kind, mu):
    # Symplectic Euler, as on the plane (test_collide.py): each substep the contact
    # takes back g dt of normal speed and friction μ g dt of the sliding speed.
    dt, v0 = 1e-3, 1.0
    sim = shape_under(kind)
    set_contact(sim, 0.0, mu)
    sim.add_nodes([[0.0, 0.0, 0.0]], velocities=[[v0, 0.0, 0.0]])
    vx = v0
    for _ in range(600):
        sim.step(dt, method="symplectic_euler")
        vx = max(0.0, vx - mu * G * dt)
        assert sim.velocities[0, 0] == pytest.approx(vx, abs=1e-9)
    assert sim.positions[0, 0] == pytest.approx(v0**2 / (2 * mu * G), rel=0.02)


@pytest.mark.parametrize("method", RULE_METHODS)
def test_static_friction_on_a_tilted_mesh_does_not_creep(method):
    # A node on a 30° slope of two triangles, μ = 1 > tan 30°: it stays where it was
    # (to the rounding of putting it back on the layer, 1e-15 m per substep at most).
    theta = math.radians(30)
    down = np.array([math.cos(theta), -math.sin(theta), 0.0])  # along the slope
    square = np.array([-down * 2 - [0, 0, 2], down * 2 - [0, 0, 2], down * 2 + [0, 0, 2]])
    square = np.vstack([square, -down * 2 + [0, 0, 2]])
    sim = ss.System()
    normal = np.array([math.sin(theta), math.cos(theta), 0.0])
    start = 0.01 * normal
    sim.add_nodes([start])
    sim.add_mesh_collider(square, [[0, 1, 2], [0, 2, 3]], thickness=0.01, friction=1.0)
    sim.step(1e-3, steps=1000, method=method)
    assert np.abs(sim.positions[0] - start).max() < 1e-12
    assert np.abs(sim.velocities[0]).max() < 2 * G * 1e-3  # one substep of gravity


def test_a_capsule_pushes_a_node_out_radially_and_off_its_axis():
    sim = ss.System()
    sim.add_nodes([[0.5, 0.1, 0.0], [0.5, 0.0, 0.0], [1.2, 0.0, 0.0]])
    sim.add_capsule([0, 0, 0], [1, 0, 0], radius=0.4)
    sim.step(1e-9)
    x = sim.positions
    np.testing.assert_allclose(x[0], [0.5, 0.4, 0.0], atol=1e-8)
    assert abs(x[1, 0] - 0.5) < 1e-8 and math.hypot(x[1, 1], x[1, 2]) == pytest.approx(0.4)
    np.testing.assert_allclose(x[2], [1.4, 0.0, 0.0], atol=1e-8)  # out of the round end


def test_a_box_pushes_a_node_through_its_nearest_face():
    sim = ss.System(dim=2)
    sim.add_nodes([[0.9, 0.2], [-0.1, -0.45]])
    sim.add_box([0, 0], [1.0, 0.5])
    sim.step(1e-9)
    np.testing.assert_allclose(sim.positions, [[1.0, 0.2], [-0.1, -0.5]], atol=1e-8)


# ---- the mesh of a box moves a node as the box does ----------------------------------


@pytest.mark.parametrize("method", RULE_METHODS)
def test_a_box_mesh_moves_a_node_as_the_analytic_box(method):
    # Thrown onto the box at an angle, bouncing (e = 0.6) and braked (μ = 0.3). The
    # mesh keeps the node at its skin, 1e-9 of the extent (~1e-9 m) off the box's
    # surface: the motions agree to a few times that, far below any contact's effect.
    runs = []
    for kind in ("box", "mesh"):
        sim = ss.System()
        if kind == "box":
            sim.add_box([0, 0, 0], [0.5, 0.25, 0.5], restitution=0.6, friction=0.3)
        else:
            sim.add_mesh_collider(*box_mesh(), restitution=0.6, friction=0.3)
        sim.add_nodes([[-0.3, 0.8, 0.1]], velocities=[[1.0, 0.0, 0.3]])
        path = []
        for _ in range(600):
            sim.step(1e-3, method=method)
            path.append(sim.positions[0].copy())
        runs.append(np.array(path))
    assert runs[0][:, 1].min() < 0.26  # it did land on the top
    np.testing.assert_allclose(runs[1], runs[0], atol=1e-7)


# ---- a cloth on an icosphere mesh ---------------------------------------------------


def cloth_over(vertices, faces, n=12, thickness=0.01, friction=0.5, height=0.4):
    sim = ss.cloth(n, n, width=1.0, height=1.0, mass=0.2, stiffness=50.0, damping=0.02, pin=None)
    x = sim.positions.copy()
    sim.positions = np.stack([x[:, 0] - 0.4, np.full(len(x), height), x[:, 1] + 0.5], axis=1)
    sim.add_mesh_collider(vertices, faces, thickness=thickness, friction=friction)
    return sim


def test_a_cloth_dropped_on_a_mesh_never_crosses_it_and_comes_to_rest():
    vertices, faces = icosphere()
    h = 0.01
    sim = cloth_over(vertices, faces, thickness=h, friction=0.8)
    # Air drag of 0.01 N s/m on nodes of 1.4 g: a time constant of 0.14 s, so that
    # the flaps hanging off the ball stop swinging within the 3 s.
    sim.drag = 0.01
    dt = 1e-3
    assert dt < sim.critical_dt()
    crossed, fastest = 0, 0.0
    for frame in range(3000):
        before = sim.positions.copy()
        sim.step(dt)
        crossed += len(crossings(before, sim.positions, vertices, faces))
        fastest = max(fastest, sim.energy().kinetic)
        if frame % 250 == 0:
            # every node at least h from every triangle: to the rounding of putting it
            # back (1e-16 m), with 1e-12 m of room
            assert distances(sim.positions, vertices, faces).min() >= h - 1e-12
    assert crossed == 0
    d = distances(sim.positions, vertices, faces)
    assert d.min() >= h - 1e-12
    assert np.sum(d < h + 1e-6) > 15  # it rests on the mesh (measured 26 nodes touch)
    # At rest: 21 drag time constants after the drop, the kinetic energy is a
    # millionth of its largest (0.1 J; measured 2e-9 of it).
    assert sim.energy().kinetic < 1e-6 * fastest


@pytest.mark.parametrize("method", METHODS)
def test_every_method_keeps_a_cloth_outside_a_mesh(method):
    vertices, faces = icosphere()
    sim = cloth_over(vertices, faces, n=8, height=0.35)
    # explicit Euler gains energy at any dt: a smaller one keeps it stable for 0.4 s
    dt = (0.1 if method == "euler" else 0.5) * sim.critical_dt()
    for _ in range(int(0.4 / dt)):
        before = sim.positions.copy()
        sim.step(dt, method=method)
        assert len(crossings(before, sim.positions, vertices, faces)) == 0
    assert distances(sim.positions, vertices, faces).min() >= 0.01 - 1e-12
    assert np.sum(distances(sim.positions, vertices, faces) < 0.011) > 3  # touching


def test_inside_a_closed_mesh_its_concave_corners_hold_a_thrown_cloth():
    # From inside, every edge of an icosphere is a concave corner: a node pushed off one
    # triangle's layer can land in its neighbour's, which the passes of colliders.c
    # handle. A cloth thrown about inside (random 1 m/s velocities) never crosses a
    # triangle and keeps its distance h from every one.
    vertices, faces = icosphere(radius=0.5)
    sim = ss.cloth(10, 10, width=0.6, height=0.6, mass=0.2, stiffness=50.0, damping=0.02, pin=None)
    x = sim.positions.copy()
    sim.positions = np.stack([x[:, 0] - 0.3, np.full(len(x), 0.2), x[:, 1] + 0.3], axis=1)
    sim.velocities = np.random.default_rng(1).normal(scale=1.0, size=x.shape)
    sim.add_mesh_collider(vertices, faces, thickness=0.02, friction=0.3, restitution=0.2)
    for frame in range(1000):
        before = sim.positions.copy()
        sim.step(1e-3)
        assert len(crossings(before, sim.positions, vertices, faces)) == 0, frame
        if frame % 100 == 99:
            assert distances(sim.positions, vertices, faces).min() >= 0.02 - 1e-12
    assert np.linalg.norm(sim.positions, axis=1).max() < 0.5  # inside


def test_nothing_passes_a_thin_mesh_at_any_dt():
    # A node at 1000 m/s against a single triangle: it moves 10 m per substep, 1000
    # times the sheet's thickness, and still stops at the sheet.
    sim = one_node([[0.0, 1.0, 0.0]], velocity=[[0.0, -1000.0, 0.0]], gravity=(0, 0, 0))
    sim.add_mesh_collider([[-1, 0, -1], [1, 0, -1], [0, 0, 2]], [[0, 1, 2]], thickness=0.001)
    sim.step(1e-2)
    assert sim.positions[0].tolist() == pytest.approx([0.0, 0.001, 0.0], abs=1e-15)
    assert sim.velocities[0].tolist() == [0.0, 0.0, 0.0]


def test_a_node_keeps_the_side_it_started_on():
    # From below, a sheet stops a node as well as from above; inside a closed mesh a
    # node stays inside (a closed mesh is a solid only to nodes outside it).
    sheet = ([[-1, 0, -1], [1, 0, -1], [0, 0, 2]], [[0, 1, 2]])
    sim = one_node([[0.0, -0.5, 0.0], [0.0, 0.5, 0.0]], velocity=[[0, 3.0, 0], [0, -3.0, 0]])
    sim.add_mesh_collider(*sheet, thickness=0.01)
    vertices, faces = box_mesh()
    sim.add_nodes([[0.0, 0.0, 0.0]], velocities=[[0.0, 5.0, 0.0]])
    sim.add_mesh_collider(vertices + [5, 0, 0], faces)
    sim.positions[2] = [5.0, 0.0, 0.0]
    sim.step(1e-3, steps=500)
    assert sim.positions[0, 1] <= -0.01 + 1e-12 and sim.positions[1, 1] >= 0.01 - 1e-12
    assert np.all(np.abs(sim.positions[2] - [5, 0, 0]) <= [0.5, 0.25, 0.5])


def test_a_mesh_moved_by_less_than_its_thickness_pushes_nodes_along():
    vertices, faces = box_mesh(half=(1.0, 0.1, 1.0))
    sim = one_node([[0.2, 0.15, 0.0]], gravity=(0, 0, 0))
    mesh = sim.add_mesh_collider(vertices, faces, thickness=0.05)
    for k in range(1, 101):  # up 1 cm per step, thickness 5 cm
        mesh.vertices = vertices + [0.0, 0.01 * k, 0.0]
        sim.step(1e-3)
    assert sim.positions[0, 1] == pytest.approx(0.1 + 1.0 + 0.05, abs=1e-12)


# ---- books, threads, files -----------------------------------------------------------


def dropped_jelly_on_mesh(e, mu, damping):
    sim = ss.jelly(4, 3, 3, size=(0.4, 0.2, 0.3), mass=1.0, stiffness=500.0, damping=damping)
    sim.positions[:, 1] += 0.6
    sim.add_mesh_collider(*box_mesh(half=(2.0, 0.25, 2.0)), restitution=e, friction=mu)
    return sim


def books_error(method, fraction, e, mu, damping):
    sim = dropped_jelly_on_mesh(e, mu, damping)
    h = sim.run(0.6, fraction * sim.critical_dt(), method=method, record_every=1, progress=False)
    assert h.dissipated[-1] > 0.05 or (e == 1.0 and mu == 0.0)
    return np.abs(h.total + h.dissipated - h.total[0]).max(), np.abs(h.total).max()


@pytest.mark.parametrize(("method", "order"), [("symplectic_euler", 1), ("velocity_verlet", 2)])
@pytest.mark.parametrize(("e", "mu", "damping"), [(1.0, 0.0, 0.0), (0.5, 0.5, 2.0)])
def test_the_books_balance_on_a_mesh_to_the_integrators_own_error(method, order, e, mu, damping):
    # As for the plane (test_contact_energy.py): kept exactly, the books' error is the
    # integrator's own, and falls with dt at its order (2^order per halving, within
    # 25 %), to a few per cent of the energy (symplectic Euler) or 1e-3 (Verlet).
    errors = [books_error(method, f, e, mu, damping) for f in (0.25, 0.125, 0.0625)]
    assert errors[-1][0] < (0.04 if order == 1 else 1e-3) * errors[0][1]
    for coarse, fine in zip(errors[:-1], errors[1:], strict=True):
        assert coarse[0] / fine[0] > 0.75 * 2**order


def test_an_elastic_frictionless_mesh_dissipates_exactly_nothing():
    sim = dropped_jelly_on_mesh(1.0, 0.0, 0.0)
    h = sim.run(0.6, 0.25 * sim.critical_dt(), record_every=1, progress=False)
    assert h.kinetic.max() > 1.0 and np.all(h.dissipated == 0.0)


@pytest.mark.slow  # a cloth of over 8,192 springs on a mesh, stepped twice: a long test
@pytest.mark.skipif(not ss.threading_available(), reason="built without OpenMP")
def test_a_mesh_gives_bit_identical_results_for_1_and_2_threads():
    vertices, faces = icosphere(subdivisions=3)
    states = []
    try:
        for threads in (1, 2):
            ss.set_num_threads(threads)
            sim = ss.cloth(45, 45, width=1.0, height=1.0, mass=1.0, stiffness=500.0, pin=None)
            assert sim.num_springs >= 8192  # threads are used
            x = sim.positions.copy()
            sim.positions = np.stack([x[:, 0] - 0.4, np.full(len(x), 0.32), x[:, 1] + 0.5], 1)
            sim.velocities = np.random.default_rng(3).normal(scale=0.3, size=x.shape)
            sim.add_mesh_collider(vertices, faces, thickness=0.01, restitution=0.3, friction=0.6)
            sim.track_energy = True
            sim.step(0.5 * sim.critical_dt(), steps=400)
            assert np.sum(distances(sim.positions, vertices, faces) < 0.0101) > 10  # touching
            states.append((sim.positions.tobytes(), sim.velocities.tobytes(), sim.dissipated))
    finally:
        ss.set_num_threads(None)
    assert states[0] == states[1]


def every_kind():
    sim = ss.cloth(5, 5, width=1.0, height=1.0, mass=0.2, stiffness=50.0, pin=None)
    x = sim.positions.copy()
    sim.positions = np.stack([x[:, 0] - 0.5, np.full(len(x), 0.5), x[:, 1] + 0.5], axis=1)
    sim.add_plane([0, 1, 0], offset=-1.0, restitution=0.2)
    sim.add_box([0.3, 0.0, 0.0], [0.2, 0.3, 0.2], restitution=0.4, friction=0.3)
    sim.add_capsule([-0.5, 0.1, 0.0], [0.0, 0.1, 0.3], radius=0.1, friction=0.7)
    sim.add_mesh_collider(*icosphere(0.2, 1), thickness=0.02, restitution=0.1, friction=0.5)
    sim.add_sphere([0, -0.5, 0], 0.1)
    return sim


def describe(sim):
    out = []
    for c in sim.colliders:
        fields = [getattr(c, name) for name in ("restitution", "friction")]
        for name in ("normal", "offset", "center", "radius", "half_extents", "start", "end"):
            if hasattr(c, name):
                fields.append(np.asarray(getattr(c, name)).tolist())
        if isinstance(c, MeshCollider):
            fields += [c.vertices.tolist(), c.faces.tolist(), c.thickness]
        out.append((type(c).__name__, fields))
    return out


def test_save_load_pickle_and_copy_keep_every_kind_and_step_alike(tmp_path):
    sim = every_kind()
    sim.step(1e-3, steps=50)
    save(sim, tmp_path / "s.npz")
    others = [load(tmp_path / "s.npz"), pickle.loads(pickle.dumps(sim)), sim.copy()]
    for other in others:
        assert describe(other) == describe(sim)
    for s in (sim, *others):
        s.step(1e-3, steps=300)
    for other in others:
        assert_same(snapshot(other), snapshot(sim))
    assert sim.nbytes > ss.System().nbytes


def test_a_copy_owns_its_mesh():
    sim = every_kind()
    other = sim.copy()
    mesh = sim.colliders[3]
    vertices = mesh.vertices
    mesh.vertices = vertices + 1.0
    np.testing.assert_array_equal(other.colliders[3].vertices, vertices)
    sim.remove_collider(mesh)
    del sim
    other.step(1e-3, steps=10)  # its mesh is still there
    assert len(other.colliders) == 5


def test_older_files_without_the_new_entries_still_load(tmp_path):
    sim = ss.cloth(3, 3, width=1.0, height=1.0, mass=0.2, stiffness=50.0)
    sim.add_sphere([0, -1, 0], 0.5, restitution=0.3)
    save(sim, tmp_path / "new.npz")
    with np.load(tmp_path / "new.npz") as npz:
        # (every entry version 6 added, the colliders' and node contact's alike)
        new = _KEYS_BY_VERSION[6] - _KEYS_BY_VERSION[5]
        assert set(COLLIDER_KEYS) <= new
        later = _KEYS_BY_VERSION[FORMAT_VERSION] - _KEYS_BY_VERSION[5]
        entries = {k: npz[k] for k in npz.files if k not in later}
    entries["version"] = np.array(5, dtype=np.int64)
    np.savez(tmp_path / "old.npz", **entries)
    assert describe(load(tmp_path / "old.npz")) == describe(sim)


# ---- bad input ------------------------------------------------------------------------


def good_box():
    return box_mesh()


BAD_MESHES = [
    ("non-finite", lambda v, f: (np.where(v == v.max(), np.nan, v), f), ValueError),
    ("infinite", lambda v, f: (v * np.inf, f), ValueError),
    ("out of range", lambda v, f: (v, f + 1), IndexError),
    ("negative", lambda v, f: (v, f - 1), IndexError),
    ("degenerate", lambda v, f: (v, np.vstack([f, [[0, 0, 1]]])), ValueError),
    (
        "collinear",
        lambda v, f: (np.vstack([v, [2 * v[7] - v[0]]]), np.vstack([f, [[0, 7, 8]]])),
        ValueError,
    ),
    ("vertices 2 columns", lambda v, f: (v[:, :2], f), ValueError),
    ("faces 4 columns", lambda v, f: (v, np.hstack([f, f[:, :1]])), ValueError),
    ("no faces", lambda v, f: (v, np.zeros((0, 3), dtype=int)), ValueError),
    ("float faces", lambda v, f: (v, f + 0.5), TypeError),
    ("text vertices", lambda v, f: ([["a", "b", "c"]], f), TypeError),
]


@pytest.mark.parametrize(("name", "make", "error"), BAD_MESHES, ids=[b[0] for b in BAD_MESHES])
def test_bad_meshes_raise_and_change_nothing(name, make, error):
    sim = every_kind()
    before = describe(sim)
    vertices, faces = make(*good_box())
    with pytest.raises(error):
        sim.add_mesh_collider(vertices, faces)
    assert describe(sim) == before
    mesh = sim.colliders[3]
    if name in ("non-finite", "infinite"):
        with pytest.raises(ValueError, match="finite"):
            mesh.vertices = np.full_like(mesh.vertices, np.nan)
    assert describe(sim) == before


@pytest.mark.parametrize(
    ("index", "attribute", "value", "error"),
    [
        (1, "half_extents", [0.1, 0.0, 0.1], ValueError),
        (1, "half_extents", [0.1, -1.0, 0.1], ValueError),
        (1, "center", [np.inf, 0, 0], ValueError),
        (1, "center", [0, 0], ValueError),
        (2, "radius", 0.0, ValueError),
        (2, "radius", "1", TypeError),
        (2, "end", [np.nan, 0, 0], ValueError),
        (3, "thickness", -0.1, ValueError),
        (3, "thickness", math.inf, ValueError),
        (3, "restitution", 1.5, ValueError),
        (3, "friction", -1.0, ValueError),
        (3, "vertices", np.zeros((3, 3)), ValueError),
        (3, "vertices", np.zeros((42, 3)), ValueError),  # every triangle degenerate
    ],
)
def test_bad_values_raise_and_change_nothing(index, attribute, value, error):
    sim = every_kind()
    before = describe(sim)
    with pytest.raises(error):
        setattr(sim.colliders[index], attribute, value)
    assert describe(sim) == before


def test_bad_arguments_raise_and_change_nothing():
    sim = every_kind()
    before = describe(sim)
    with pytest.raises(ValueError, match="radius"):
        sim.add_capsule([0, 0, 0], [1, 0, 0], radius=-1.0)
    with pytest.raises(ValueError, match="half-extents"):
        sim.add_box([0, 0, 0], [1, 1, 0])
    with pytest.raises(ValueError, match="thickness"):
        sim.add_mesh_collider(*good_box(), thickness=-1.0)
    with pytest.raises(TypeError, match="faces"):
        sim.add_mesh_collider(good_box()[0])
    with pytest.raises(AttributeError):
        sim.colliders[3].faces = np.zeros((1, 3))  # read-only
    assert describe(sim) == before


def test_a_2d_system_refuses_a_mesh():
    sim = ss.System(dim=2)
    with pytest.raises(ValueError, match="3D"):
        sim.add_mesh_collider(*good_box())
    assert sim.colliders == []


def test_a_mesh_from_an_obj_file(tmp_path):
    vertices, faces = box_mesh()
    path = tmp_path / "box.obj"
    lines = [f"v {x} {y} {z}" for x, y, z in vertices]
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in faces]
    path.write_text("\n".join(lines) + "\n")
    sim = ss.System()
    mesh = sim.add_mesh_collider(path, thickness=0.01)
    np.testing.assert_array_equal(mesh.vertices, vertices)
    assert sorted(map(sorted, mesh.faces.tolist())) == sorted(map(sorted, faces.tolist()))
    with pytest.raises(TypeError, match="not both"):
        sim.add_mesh_collider(path, faces)


# ---- drawing --------------------------------------------------------------------------


def segment_distance(points, a, b):
    t = np.clip((points - a) @ (b - a) / ((b - a) @ (b - a)), 0.0, 1.0)
    return np.linalg.norm(points - (a + t[:, None] * (b - a)), axis=1)


@pytest.mark.parametrize("dim", [2, 3])
def test_the_triangles_drawn_are_the_colliders_surfaces(dim):
    from springsim.colliders import collider_triangles

    sim = ss.System(dim=dim)
    sim.add_nodes([np.zeros(dim)])
    sim.add_plane(np.eye(dim)[1])  # drawn by plot.py, not here
    center, half = np.array([1.0, 2.0, 3.0])[:dim], np.array([0.5, 0.25, 0.75])[:dim]
    sim.add_box(center, half)
    a, b = np.array([-1.0, 0.0, 0.5])[:dim], np.array([-0.5, 1.0, 0.0])[:dim]
    sim.add_capsule(a, b, radius=0.2)
    boxes = 12 if dim == 3 else 2
    if dim == 3:
        vertices, faces = icosphere()
        sim.add_mesh_collider(vertices, faces)
    triangles = collider_triangles(sim)
    box, capsule = triangles[:boxes], triangles[boxes:]
    if dim == 3:
        capsule, mesh = capsule[: -len(faces)], capsule[-len(faces) :]
        np.testing.assert_array_equal(mesh, vertices[faces])
    # the box's corners, each of its 2^dim corners used
    corners = box.reshape(-1, dim)
    np.testing.assert_allclose(np.abs(corners - center), np.broadcast_to(half, corners.shape))
    assert len(np.unique(corners, axis=0)) == 2**dim
    # the capsule's surface points are at its radius from its axis (a 2D fan also has
    # its middle, on the axis)
    r = segment_distance(capsule.reshape(-1, dim), a, b)
    assert np.all(np.isclose(r, 0.2, atol=1e-12) | (np.isclose(r, 0.0) & (dim == 2)))
    assert len(capsule) > 20


@pytest.mark.filterwarnings("ignore:Animation was deleted:UserWarning")
def test_draw_and_animate_show_them():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from springsim.plot import animate, draw

    sim = every_kind()
    history = sim.run(0.05, 1e-3, frames=3, progress=False)
    # a box's 12, the mesh's 80, the capsule's 2 × 24 around × 13 bands (14 rings: 7
    # for each hemisphere)
    assert history.collider_triangles.shape == (12 + 80 + 2 * 24 * 13, 3, 3)
    assert pickle.loads(pickle.dumps(history)) == history
    anim = animate(history)
    anim._func(2)  # the last frame
    for ax in (draw(sim), anim._fig.axes[0]):
        (shape,) = [c for c in ax.collections if c.get_gid() == "springsim-shape"]
        assert len(shape.get_facecolor()) >= 1
        high = max(ax.get_xlim()[1], ax.get_ylim()[1], ax.get_zlim()[1])
        assert high >= 0.5  # the view holds the box (up to x = 0.5)
    plt.close("all")
    del anim
    gc.collect()  # the animation goes now, under this test's warning filter


def test_relax_refuses_the_new_kinds_clearly():
    sim = ss.string(3, length=1.0, mass=0.1, stiffness=10.0)
    sim.add_capsule([0, -2, 0], [1, -2, 0], radius=0.1)
    with pytest.raises(ValueError, match="planes and spheres"):
        sim.relax()
