"""Self-collision of surfaces (issue 17, item 2): node–triangle repulsion with a thickness.

The crossing test here is written in plain NumPy, independently of the kernel: between
two frames, a node crosses a triangle it is not a vertex of when its side of the
triangle's plane changes and, at the moment it meets the plane (node and triangle
moving linearly between the frames), it is inside the triangle.
"""

import pickle

import numpy as np
import pytest

import springsim as ss
from springsim import reference
from springsim.files import npz
from springsim.files.npz import _KEYS_BY_VERSION, FORMAT_VERSION


def crossings(x0: np.ndarray, x1: np.ndarray, faces: np.ndarray) -> int:
    """Node–triangle crossings between frames x0 and x1 (every node, every triangle it is
    not a vertex of)."""
    a0, b0, c0 = (x0[faces[:, k]] for k in range(3))
    a1, b1, c1 = (x1[faces[:, k]] for k in range(3))
    s0 = np.einsum("ptk,tk->pt", x0[:, None, :] - a0[None], np.cross(b0 - a0, c0 - a0))
    s1 = np.einsum("ptk,tk->pt", x1[:, None, :] - a1[None], np.cross(b1 - a1, c1 - a1))
    p, t = np.nonzero(s0 * s1 < 0)
    keep = ~(faces[t] == p[:, None]).any(axis=1)
    p, t = p[keep], t[keep]
    tau = (s0[p, t] / (s0[p, t] - s1[p, t]))[:, None]  # when it meets the plane

    def at_tau(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        return u + tau * (v - u)

    point = at_tau(x0[p], x1[p])
    a, b, c = at_tau(a0[t], a1[t]), at_tau(b0[t], b1[t]), at_tau(c0[t], c1[t])
    e1, e2, r = b - a, c - a, point - a
    normal = np.cross(e1, e2)
    nn = np.einsum("ij,ij->i", normal, normal)
    u = np.einsum("ij,ij->i", np.cross(r, e2), normal) / nn
    v = np.einsum("ij,ij->i", np.cross(e1, r), normal) / nn
    return int(np.count_nonzero((u >= 0) & (v >= 0) & (u + v <= 1)))


def folded_cloth(n: int, gap: float = 0.04, width: float = 0.5) -> ss.System:
    """A flat n × n cloth folded over a half-cylinder of diameter ``gap`` at x = 0, the
    upper layer ``gap`` above the lower; its springs at rest in the folded shape."""
    sim = ss.cloth(
        n,
        n,
        width=width,
        height=width,
        mass=0.05,
        stiffness=500.0,
        damping=0.01,
        pin=None,
        bend=False,  # bend springs across the fold would be squeezed to a third
        normal=(0, 1, 0),
        origin=(-width / 2, 0.0, -width / 2),
    )
    x = sim.positions.copy()
    r = gap / 2
    along = x[:, 0]  # the fold line is x = 0
    angle = along / r
    arc = (along > 0) & (angle <= np.pi)
    back = angle > np.pi
    x[arc, 0] = r * np.sin(angle[arc])
    x[arc, 1] += r * (1 - np.cos(angle[arc]))
    x[back, 0] = np.pi * r - along[back]
    x[back, 1] += 2 * r
    sim.positions = x
    sim.rest_lengths = sim.spring_lengths()
    return sim


def edge(sim: ss.System) -> float:
    return 0.5 / (int(round(np.sqrt(sim.num_nodes))) - 1)


def run_counting(sim: ss.System, dt: float, steps: int) -> tuple[int, float, float]:
    """Step one substep at a time: the crossings the NumPy test finds, the largest
    contact energy seen, and the largest node speed."""
    faces = sim.faces.copy()
    total, contact, fastest = 0, 0.0, 0.0
    for _ in range(steps):
        x0 = sim.positions.copy()
        sim.step(dt)
        total += crossings(x0, sim.positions, faces)
        contact = max(contact, sim.energy().contact)
        fastest = max(fastest, float(np.linalg.norm(sim.velocities, axis=1).max()))
    return total, contact, fastest


def within_bound(sim: ss.System, dt: float, fastest: float) -> bool:
    """The bound of docs/guide/self-collision.md: relative speed v (at most twice the
    fastest node) with v dt < h and v < h sqrt(k / m), m the heaviest node."""
    setting = sim.self_collision
    assert setting is not None
    v = 2 * fastest
    h, k = setting.thickness, setting.stiffness
    return v * dt < h and v < h * np.sqrt(k / sim.masses.max())


def test_folded_cloth_dropped_on_a_sphere_never_crosses_itself():
    sim = folded_cloth(10)
    sim.positions[:, 1] += 0.1
    sim.add_sphere((-0.12, 0.0, 0.0), 0.06, friction=0.5)
    bare = sim.copy()
    sim.enable_self_collision(0.3 * edge(sim), friction=0.2)
    dt = 0.5 * sim.critical_dt()
    total, contact, fastest = run_counting(sim, dt, 2000)
    assert contact > 0.0  # the layers did touch
    assert within_bound(sim, dt, fastest)
    assert total == 0
    assert sim.self_collision_crossings == 0
    # The same drop without self-collision: the upper layer falls through the lower
    # one, and the test sees it (so it can fail).
    assert run_counting(bare, dt, 2000)[0] > 10


def test_cloth_dropped_on_a_sphere_never_crosses():
    sim = ss.cloth(
        9,
        9,
        width=0.4,
        height=0.4,
        mass=0.05,
        stiffness=500.0,
        damping=0.01,
        pin=None,
        bend_stiffness=1.0,
        normal=(0, 1, 0),
        origin=(-0.2, 0.08, -0.2),
    )
    sim.add_sphere((0.0, 0.0, 0.0), 0.06, friction=0.5)
    sim.add_plane((0, 1, 0), -0.06, friction=0.5)
    sim.enable_self_collision(0.4 * 0.05, friction=0.2)
    dt = 0.5 * sim.critical_dt()
    total, _, fastest = run_counting(sim, dt, 2500)
    assert within_bound(sim, dt, fastest)
    assert total == 0 and sim.self_collision_crossings == 0


def thrown_at_a_triangle(speed: float) -> ss.System:
    """A free node of 1 kg 0.15 m above a pinned triangle (h = 0.1 m, k = 1e4 N/m),
    thrown at it at ``speed``."""
    sim = ss.System(dim=3)
    sim.gravity = 0
    sim.add_nodes([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0.25, 0.25, 0.15]], masses=1.0)
    sim.pin([0, 1, 2])
    sim.add_faces([[0, 1, 2]])
    sim.velocities[3] = (0, 0, -speed)
    sim.enable_self_collision(0.1, stiffness=1e4)
    return sim


def node_at_triangle(speed: float, method: str = "symplectic_euler") -> tuple[ss.System, int]:
    """The node of :func:`thrown_at_a_triangle` for 0.1 s of 1 ms substeps: the NumPy
    crossings and the kernel's count."""
    sim = thrown_at_a_triangle(speed)
    faces, total = sim.faces.copy(), 0
    for _ in range(100):
        x0 = sim.positions.copy()
        sim.step(1e-3, method=method)
        total += crossings(x0, sim.positions, faces)
    return sim, total


@pytest.mark.parametrize("method", ss.METHODS)
def test_a_node_below_the_bound_is_stopped_by_every_method(method):
    # Bound: v < h sqrt(k / m) = 0.1 * 100 = 10 m/s and v dt < h (v < 100 m/s).
    sim, total = node_at_triangle(5.0, method)
    assert total == 0 and sim.self_collision_crossings == 0
    if method == "xpbd":  # a hard, inelastic constraint: stopped on the layer, d = h
        assert sim.positions[3, 2] == pytest.approx(0.1, rel=1e-9)
        assert sim.velocities[3, 2] >= -1e-9
    else:
        assert sim.positions[3, 2] > 0.0 and sim.velocities[3, 2] > 0.0  # it bounced back


def test_a_node_beyond_the_bound_can_go_through_and_is_counted():
    # 30 m/s: its kinetic energy 450 J is more than the layer can take, k h^2 / 2 = 50 J.
    sim, total = node_at_triangle(30.0)
    assert total == 1
    assert sim.self_collision_crossings == 1
    assert sim.positions[3, 2] < 0.0


def colliding_layers(n: int, friction: float, gap: float = 0.03, speed: float = 1.0) -> ss.System:
    """Two flat n × n cloths in free space, ``gap`` apart (the upper one shifted by half
    a cell), the upper one thrown down onto the lower at ``speed``."""
    width = 0.5
    sheets = [
        ss.cloth(
            n,
            n,
            width=width,
            height=width,
            mass=0.05,
            stiffness=500.0,
            damping=0.01,
            pin=None,
            normal=(0, 1, 0),
            origin=(-width / 2 + shift, y, -width / 2 + shift),
        )
        for shift, y in ((0.0, 0.0), (0.5 * width / (n - 1), gap))
    ]
    sim, upper = sheets
    first = sim.add_nodes(upper.positions, masses=upper.masses)[0]
    sim.add_springs(upper.springs + first, upper.stiffness, upper.damping, upper.rest_lengths)
    sim.add_faces(upper.faces + first)
    sim.gravity = 0
    sim.velocities[first:, 1] = -speed
    sim.enable_self_collision(0.4 * width / (n - 1), friction=friction)
    return sim


def test_momentum_is_conserved_to_round_off():
    sim = colliding_layers(8, friction=0.3)
    p0 = sim.momentum()
    scale = float(np.sum(sim.masses * np.linalg.norm(sim.velocities, axis=1)))
    dt, touched = 0.5 * sim.critical_dt(), 0.0
    for _ in range(40):
        sim.step(dt, steps=10)
        touched = max(touched, sim.energy().contact)
    assert touched > 0.0
    # Each pair's forces sum to F (1 - w_a - w_b - w_c): zero to round-off; 400
    # substeps of sums of ~1e3 terms of relative error 1e-16.
    assert np.abs(sim.momentum() - p0).max() <= 1e-12 * scale


def test_the_energy_books_balance():
    sim = colliding_layers(8, friction=0.3)
    sim.track_energy = True
    start = sim.energy().total
    dt, books, peak = 0.1 * sim.critical_dt(), [], 0.0
    for _ in range(100):
        sim.step(dt, steps=20, method="rk4")
        e = sim.energy()
        peak = max(peak, e.contact)
        books.append(e.total + sim.dissipated - start)
    kinetic = 0.5 * float(np.sum(sim.masses * np.sum(colliding_layers(8, 0.0).velocities ** 2, 1)))
    # The contact potential is a real share of the motion's energy (35 % at its peak)
    # and the books close far tighter than it (0.2 %: RK4's error at 0.1 critical_dt,
    # and the trapezoid rule on the damping and friction power).
    assert peak > 0.2 * kinetic
    assert sim.dissipated > 0.0
    assert np.abs(books).max() < 0.01 * kinetic


def state_bytes(sim: ss.System) -> bytes:
    return sim.positions.tobytes() + sim.velocities.tobytes()


@pytest.mark.parametrize("method", ["symplectic_euler", "rk4", "xpbd"])
def test_one_and_two_threads_are_bit_identical(method):
    # 42,004 springs (the kernel uses both threads) and, once the sheets meet, tens of
    # thousands of candidates: two threads compute their forces in pieces, one adds them
    # in list order, which must give one thread's bits.
    results = []
    try:
        for n in (1, 2):
            ss.set_num_threads(n)
            sim = colliding_layers(60, friction=0.2, gap=0.01, speed=3.0)
            dt = 0.3 * sim.critical_dt()
            sim.step(dt, steps=250, method=method)
            # the sheets met and slowed (xpbd's inelastic constraints share the momentum:
            # -1.5 m/s each, gravity adding a little)
            assert sim.velocities[3600:, 1].mean() > -1.6

            results.append(state_bytes(sim))
    finally:
        ss.set_num_threads(None)
    assert results[0] == results[1]


def random_system(seed: int) -> tuple[ss.System, float]:
    """30 nodes in the unit cube, 10 triangles with edges >= 0.4, h = 0.19 m."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(30, 3))
    faces: list[list[int]] = []
    while len(faces) < 10:
        tri = rng.choice(30, size=3, replace=False)
        if all(np.linalg.norm(x[tri[i]] - x[tri[i - 1]]) >= 0.4 for i in range(3)):
            faces.append(tri.tolist())
    sim = ss.System(dim=3)
    sim.gravity = 0
    sim.add_nodes(x, masses=1.0, velocities=rng.normal(size=(30, 3)))
    sim.add_faces(faces)
    return sim, float(rng.uniform(10.0, 1000.0))


@pytest.mark.parametrize("seed", range(5))
def test_kernel_agrees_with_the_reference(seed):
    sim, k = random_system(seed)
    mu = 0.5 if seed % 2 else 0.0
    sim.enable_self_collision(0.19, stiffness=k, friction=mu)
    x, v = sim.positions.copy(), sim.velocities.copy()
    f, energy, _ = reference.self_collision_forces(x, v, sim.faces, 0.19, k, mu)
    assert energy > 0.0 and np.count_nonzero(np.abs(f).sum(1)) > 3  # contacts to compare
    # Explicit Euler with m = 1, dt = 1, no gravity: v' - v is the force at (x, v). (A
    # probe, not a motion: its energy books would call it the blow-up it is.)
    sim.divergence_factor = None
    sim.step(1.0, method="euler")
    force = sim.velocities - v
    # Round-off: the force's terms (|f| up to ~1e2) summed in a different order, and
    # v' - v cancelling |v| ~ 1: 1e-12 of the largest force is ample and far below
    # any formula difference (a wrong weight or sign changes forces at order 1).
    np.testing.assert_allclose(force, f, rtol=0, atol=1e-12 * np.abs(f).max())
    check, _ = random_system(seed)
    check.enable_self_collision(0.19, stiffness=k, friction=mu)
    assert check.energy().contact == pytest.approx(energy, rel=1e-12)


def test_save_load_copy_and_pickle_keep_the_setting(tmp_path):
    sim = folded_cloth(6)
    sim.enable_self_collision(0.02, stiffness=300.0, friction=0.25)
    path = tmp_path / "cloth.npz"
    sim.save(path)
    expected = ss.SelfCollision(0.02, 300.0, 0.25, 0)
    for other in (ss.load(path), sim.copy(), pickle.loads(pickle.dumps(sim))):
        assert other.self_collision == expected
    # A version 5 file (before self-collision) loads with it off.
    arrays = npz.state_arrays(sim)
    for key in _KEYS_BY_VERSION[FORMAT_VERSION] - _KEYS_BY_VERSION[5]:  # (entries since 5)
        del arrays[key]
    arrays["version"] = np.array(5, dtype=np.int64)
    np.savez(tmp_path / "old.npz", **arrays)
    assert ss.load(tmp_path / "old.npz").self_collision is None


def test_the_default_stiffness_is_the_stiffest_spring():
    sim = folded_cloth(6)
    sim.stiffness[3] = 1234.0
    sim.enable_self_collision(0.02)
    assert sim.self_collision is not None and sim.self_collision.stiffness == 1234.0


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "words"),
    [
        ((0.06,), {}, ValueError, "half the shortest face edge"),
        ((0.0,), {}, ValueError, "must be > 0"),
        ((float("nan"),), {}, ValueError, "must be > 0"),
        ((0.01,), {"stiffness": -1.0}, ValueError, "stiffness is -1"),
        ((0.01,), {"stiffness": float("inf")}, ValueError, "stiffness is inf"),
        ((0.01,), {"friction": -0.5}, ValueError, "friction is -0.5"),
        (("0.01",), {}, TypeError, "thickness must be a real number"),
        ((0.01,), {"friction": None}, TypeError, "friction must be a real number"),
    ],
)
def test_bad_input_raises_and_changes_nothing(args, kwargs, error, words):
    sim = folded_cloth(6)  # shortest face edge 0.1 m
    sim.enable_self_collision(0.02, stiffness=100.0, friction=0.1)
    before = sim.self_collision
    with pytest.raises(error, match=words):
        sim.enable_self_collision(*args, **kwargs)
    assert sim.self_collision == before


def test_systems_it_cannot_act_on_are_refused():
    flat = ss.System(dim=2)
    with pytest.raises(ValueError, match="3D system"):
        flat.enable_self_collision(0.1, stiffness=1.0)
    bare = ss.System(dim=3)
    bare.add_nodes([[0, 0, 0], [1, 0, 0]], masses=1.0)
    with pytest.raises(ValueError, match="has none"):
        bare.enable_self_collision(0.1, stiffness=1.0)
    springless = ss.System(dim=3)
    springless.add_nodes([[0, 0, 0], [1, 0, 0], [0, 1, 0]], masses=1.0)
    springless.add_faces([[0, 1, 2]])
    with pytest.raises(ValueError, match="give stiffness"):
        springless.enable_self_collision(0.1)
    assert flat.self_collision is None and springless.self_collision is None


def test_disabled_is_exactly_as_never_enabled():
    plain, toggled = colliding_layers(8, 0.0), colliding_layers(8, 0.0)
    plain.disable_self_collision()
    toggled.disable_self_collision()
    toggled.enable_self_collision(0.01)
    toggled.disable_self_collision()
    for sim in (plain, toggled):
        sim.step(1e-4, steps=200)
    assert state_bytes(plain) == state_bytes(toggled)
    assert toggled.self_collision is None and toggled.energy().contact == 0.0


def test_a_rolled_back_step_leaves_everything_as_it_was():
    sim = colliding_layers(8, friction=0.3)
    sim.step(0.5 * sim.critical_dt(), steps=300)
    sim.track_energy = True
    x, v, e = sim.positions.copy(), sim.velocities.copy(), sim.energy()
    before = (sim.self_collision, sim.dissipated, sim.time)
    with pytest.raises(ss.UnstableError):
        sim.step(30 * sim.critical_dt(), steps=300)
    assert (sim.self_collision, sim.dissipated, sim.time) == before
    np.testing.assert_array_equal(sim.positions, x)
    np.testing.assert_array_equal(sim.velocities, v)
    assert sim.energy() == e


def test_memory_grows_with_the_contacts_not_with_n_squared():
    sim = colliding_layers(60, friction=0.0, gap=0.01, speed=3.0)
    before = sim.nbytes
    sim.step(0.3 * sim.critical_dt(), steps=300)
    assert sim.velocities[3600:, 1].mean() > -1.5  # the sheets met and slowed
    # The list, grid and position copies, and the threads' scratch (each candidate's
    # force and weights, 49 bytes): a few hundred bytes per node (N = 7200; 556 here),
    # where N^2 = 1.3e7 pairs of list alone would be 14,400 per node.
    assert sim.nbytes - before < 800 * sim.num_nodes


def test_the_bench_scene_times_layers_that_touch():
    from springsim.bench.selfcol import self_collision_cost

    cost = self_collision_cost(seconds=0.01, repeats=1)
    assert cost["contact_energy"] > 0.0  # timed from the moment the layers touch
    assert cost["crossings"] == 0
    assert cost["ratio"] == pytest.approx(cost["seconds_with"] / cost["seconds_without"])
    assert cost["ns_with"] / cost["ns_without"] == pytest.approx(cost["ratio"])
