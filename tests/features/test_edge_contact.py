"""Edge–edge contact of self-colliding surfaces (issue 27, item 4): edges that cannot pass.

The crossing test here is written in plain NumPy, independently of the kernel: between
two frames every node moves linearly, so the signed volume of two edges (a, b) and
(c, d), V = ((b − a) × (d − c))·(c − a), is a cubic in the frame's time τ; the edges
pass through each other when, at a root τ in [0, 1], the two segments meet.
"""

import functools

import numpy as np
import pytest

import springsim as ss
from springsim import reference


def face_edges(faces: np.ndarray) -> np.ndarray:
    """The faces' edges, each once, (lo, hi)."""
    e = np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]])
    return np.unique(np.sort(e, axis=1), axis=0).astype(np.int64)


def volume(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", np.cross(b - a, d - c), c - a)


def segment_gap(a, b, c, d) -> float:
    """The distance between parallel segments (a, b) and (c, d): for 401 points along the
    first, the closest point of the second (a projection, clamped), the least of them
    (exact for parallel segments, whose distance is the same all along their overlap)."""
    p = a + np.linspace(0.0, 1.0, 401)[:, None] * (b - a)
    e = d - c
    t = np.clip((p - c) @ e / max(float(e @ e), 1e-300), 0.0, 1.0)
    return float(np.sqrt((((c + t[:, None] * e) - p) ** 2).sum(1).min()))


def meet(a, b, c, d, scale: float) -> bool:
    """Whether coplanar segments (a, b) and (c, d) meet: each one's ends on the two sides
    of the other's line (orientations along their common normal); parallel ones when
    their distance is below round-off."""
    normal = np.cross(b - a, d - c)
    if float(normal @ normal) <= (1e-12 * scale * scale) ** 2:
        return segment_gap(a, b, c, d) < 1e-9 * scale
    side = [float(np.cross(q - p, r - p) @ normal) for p, q, r in ((a, b, c), (a, b, d))]
    other = [float(np.cross(q - p, r - p) @ normal) for p, q, r in ((c, d, a), (c, d, b))]
    return side[0] * side[1] <= 0.0 and other[0] * other[1] <= 0.0


@functools.lru_cache(maxsize=4)
def unshared_pairs(key: bytes, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Every two of the edges (given as the bytes of their (E, 2) int64 array) with no
    node in common: their indices i < j."""
    edges = np.frombuffer(key, dtype=np.int64).reshape(count, 2)
    i, j = np.triu_indices(count, k=1)
    share = (edges[i][:, :, None] == edges[j][:, None, :]).any(axis=(1, 2))
    return i[~share], j[~share]


def edge_crossings(x0: np.ndarray, x1: np.ndarray, edges: np.ndarray) -> int:
    """Pairs of edges (with no node in common) that pass through each other while every
    node moves linearly from x0 to x1."""
    i, j = unshared_pairs(edges.tobytes(), len(edges))
    start = np.stack([x0[edges[i, 0]], x0[edges[i, 1]], x0[edges[j, 0]], x0[edges[j, 1]]])
    end = np.stack([x1[edges[i, 0]], x1[edges[i, 1]], x1[edges[j, 0]], x1[edges[j, 1]]])
    # Only pairs whose swept boxes meet can meet.
    both = np.concatenate([start, end])  # (8, P, 3): a, b, c, d then and now
    first, second = both[[0, 1, 4, 5]], both[[2, 3, 6, 7]]
    near = np.all((first.min(0) <= second.max(0)) & (second.min(0) <= first.max(0)), axis=1)
    start, move = start[:, near], end[:, near] - start[:, near]
    # V(τ) is a cubic: its values at four times give its coefficients exactly.
    taus = np.array([0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0])
    values = np.stack([volume(*(start + t * move)) for t in taus], axis=1)  # (P, 4)
    coefficients = np.linalg.solve(np.vander(taus, 4), values.T).T  # highest power first
    # Between 0, 1 and V's turning points in (0, 1), V is monotone: it has a root in
    # [0, 1] exactly when it changes sign (or is 0) between two of them.
    c3, c2, c1 = coefficients[:, 0], coefficients[:, 1], coefficients[:, 2]
    root_disc = np.sqrt(np.maximum(4 * c2 * c2 - 12 * c3 * c1, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        turns = np.stack(
            [(-2 * c2 + root_disc) / (6 * c3), (-2 * c2 - root_disc) / (6 * c3), -c1 / (2 * c2)],
            axis=1,
        )
    turns = np.where(np.isfinite(turns) & (turns > 0) & (turns < 1), turns, 0.0)
    ends = [np.zeros((len(turns), 1)), turns, np.ones((len(turns), 1))]
    points = np.sort(np.concatenate(ends, axis=1), axis=1)
    signs = np.sign(sum(coefficients[:, [k]] * points ** (3 - k) for k in range(4)))
    bracketed = np.any(signs[:, 1:] * signs[:, :-1] <= 0, axis=1)
    count = 0
    for k in np.nonzero(bracketed)[0]:
        a0, b0, c0, d0 = start[:, k]
        scale = max(np.linalg.norm(b0 - a0), np.linalg.norm(d0 - c0))
        if np.abs(coefficients[k]).max() <= 1e-12 * scale**3:  # coplanar all along
            times = [0.0, 1.0]
        else:
            times = [r.real for r in np.roots(coefficients[k]) if abs(r.imag) <= 1e-9]
        for tau in times:
            if not -1e-12 <= tau <= 1 + 1e-12:
                continue
            if meet(*(start[:, k] + tau * move[:, k]), scale):
                count += 1
                break
    return count


def strip(n: int, length: float, width: float, y: float, along_z: bool) -> ss.System:
    """A 2 × n strip of cloth (one cell wide), its long edges ``length`` apart along x
    (or z), centred, its nodes at ±length/2, ±3 length/2, ... so that the middle of an
    edge lies on the axis."""
    sim = ss.cloth(
        n,
        2,
        width=(n - 1) * length,
        height=width,
        mass=0.01,
        stiffness=200.0,
        damping=0.01,
        pin=None,
        normal=(0, 1, 0),
        origin=(-(n - 1) * length / 2, y, -width / 2),
    )
    if along_z:
        x = sim.positions.copy()
        sim.positions = x[:, [2, 1, 0]]
    return sim


def crossed_strips(
    speed: float = 1.0, friction: float = 0.0, slide: float = 0.0, edges: bool = True
) -> ss.System:
    """Two strips of 6 × 2 nodes (cells 0.1 m × 0.04 m) crosswise, the upper one 3 cm above
    and thrown down at ``speed`` (and along its length at ``slide``), no gravity: no node
    of one ever comes over a triangle of the other (they lie 3 cm beside it), so only
    their edges can meet, at the four corners of the square where the strips cross."""
    lower = strip(6, 0.1, 0.04, 0.0, along_z=False)
    upper = strip(6, 0.1, 0.04, 0.03, along_z=True)
    first = lower.add_nodes(upper.positions, masses=upper.masses)[0]
    lower.add_springs(upper.springs + first, upper.stiffness, upper.damping, upper.rest_lengths)
    lower.add_faces(upper.faces + first)
    lower.gravity = 0
    lower.velocities[first:, 1] = -speed
    lower.velocities[first:, 2] = slide
    lower.enable_self_collision(0.4 * 0.04, stiffness=200.0, friction=friction, edges=edges)
    return lower


def middles(sim: ss.System) -> tuple[float, float]:
    """The mean heights of the four nodes around the crossing square, upper strip's and
    lower strip's."""
    x = sim.positions
    upper = x[12:][np.abs(x[12:, 2]) < 0.06]
    lower = x[:12][np.abs(x[:12, 0]) < 0.06]
    return float(upper[:, 1].mean()), float(lower[:, 1].mean())


def run_counting(sim: ss.System, dt: float, steps: int, method: str = "symplectic_euler"):
    """One substep per call: the NumPy crossings, and the largest contact energy seen."""
    edges = face_edges(sim.faces)
    total, contact = 0, 0.0
    for _ in range(steps):
        x0 = sim.positions.copy()
        sim.step(dt, method=method)
        total += edge_crossings(x0, sim.positions, edges)
        contact = max(contact, sim.energy().contact)
    return total, contact


@pytest.mark.parametrize("method", ["symplectic_euler", "rk4", "implicit_euler", "xpbd"])
def test_crossed_strips_do_not_pass_through_each_other(method):
    sim = crossed_strips(speed=1.0)
    total, contact = run_counting(sim, 2e-4, 350, method)
    assert total == 0 and sim.self_collision_crossings == 0
    # They met: the lower strip was pushed down (xpbd's hard layer stores no energy, the
    # others' layer did), and the upper one is still above it where they cross, by
    # about the thickness (0.016 m). (The strips' free ends fall on past each other.)
    assert sim.velocities[:12, 1].mean() < -0.2
    if method != "xpbd":
        assert contact > 0.0
    upper, lower = middles(sim)
    assert upper - lower > 0.01


def test_without_edges_the_strips_pass_and_the_numpy_test_sees_it():
    sim = crossed_strips(speed=1.0, edges=False)
    total, _ = run_counting(sim, 2e-4, 220)
    assert total >= 4  # the four corners of the crossing square
    upper, lower = middles(sim)
    assert upper < lower - 0.01  # through, and now below it


def thrown_at_an_edge(speed: float) -> ss.System:
    """Triangle A pinned, upright in the plane z = 0 under its top edge (−1, 0, 0)–(1, 0, 0);
    triangle B in the plane x = 0, its bottom edge (0, 0.15, ±1) free (1 kg nodes) and its
    top vertex pinned, thrown down at ``speed``: B's edge crosses A's at right angles
    over the origin, and nothing else meets (h = 0.1 m, k = 1e4 N/m)."""
    sim = ss.System(dim=3)
    sim.gravity = 0
    sim.add_nodes(
        [[-1, 0, 0], [1, 0, 0], [0.5, -1, 0], [0, 0.15, -1], [0, 0.15, 1], [0, 1.15, 0]],
        masses=1.0,
    )
    sim.pin([0, 1, 2, 5])
    sim.add_faces([[0, 1, 2], [3, 4, 5]])
    sim.velocities[[3, 4], 1] = -speed
    sim.enable_self_collision(0.1, stiffness=1e4, edges=True)
    return sim


@pytest.mark.parametrize("method", ss.METHODS)
def test_an_edge_below_the_bound_is_stopped_by_every_method(method):
    # The bound of docs/guide/self-collision.md for edges: v dt < h and v < h sqrt(k / (2 m)):
    # 0.1 * 100 / sqrt(2) = 7.07 m/s (two 1 kg nodes carry the edge at its middle).
    sim = thrown_at_an_edge(5.0)
    edges = face_edges(sim.faces)
    total = 0
    for _ in range(100):
        x0 = sim.positions.copy()
        sim.step(1e-3, method=method)
        total += edge_crossings(x0, sim.positions, edges)
    assert total == 0 and sim.self_collision_crossings == 0
    if method == "xpbd":  # a hard, inelastic layer: stopped on it, d = h
        assert sim.positions[3, 1] == pytest.approx(0.1, rel=1e-9)
    else:  # it bounced back: the layer took all of the 25 J (it holds 50 J at d = 0)
        assert sim.positions[3, 1] > 0.0 and sim.velocities[3, 1] > 0.0


def test_an_edge_beyond_the_bound_goes_through_and_is_counted():
    # 30 m/s: 900 J of kinetic energy against the layer's 50 J. 15 ms: 0.45 m, through
    # A's top edge only.
    sim = thrown_at_an_edge(30.0)
    edges = face_edges(sim.faces)
    total = 0
    for _ in range(15):
        x0 = sim.positions.copy()
        sim.step(1e-3)
        total += edge_crossings(x0, sim.positions, edges)
    assert total == 1
    assert sim.self_collision_crossings == 1
    assert sim.positions[3, 1] < 0.0


@pytest.mark.parametrize("method", ["symplectic_euler", "xpbd"])
def test_friction_between_edges_holds_back_the_slide(method):
    # The upper strip slides along its length (z) at 0.5 m/s as it hits the lower one;
    # with no gravity, the momentum it gains is the contacts' impulse only (its springs
    # are internal): normal (y), and along z only what friction takes.
    def impulse(mu: float) -> np.ndarray:
        sim = crossed_strips(speed=1.0, friction=mu, slide=0.5)
        p0 = sim.masses[12:] @ sim.velocities[12:]
        sim.step(2e-4, steps=400, method=method)
        assert sim.self_collision_crossings == 0
        return sim.masses[12:] @ sim.velocities[12:] - p0

    free, rough = impulse(0.0), impulse(0.5)
    normal = rough[1]
    assert normal > 0.0 and free[1] == pytest.approx(normal, rel=0.05)  # the same blow
    assert abs(free[2]) < 0.05 * normal  # frictionless: the slide goes on
    assert rough[2] < -0.3 * 0.5 * normal  # friction takes a good part of μ |J_n| ...
    if method != "xpbd":  # ... and never more (Coulomb's bound; the normals tilt a little
        # as the strips bend). XPBD's positional cone bounds each substep's correction by
        # μ times its normal multiplier, which springs undo in part: no bound on impulses.
        assert abs(rough[2]) <= 1.05 * 0.5 * normal


def test_momentum_is_conserved_to_round_off():
    sim = crossed_strips(speed=1.0, slide=0.5)
    p0 = sim.momentum()
    scale = float(np.sum(sim.masses * np.linalg.norm(sim.velocities, axis=1)))
    touched = 0.0
    for _ in range(50):
        sim.step(2e-4, steps=10)
        touched = max(touched, sim.energy().contact)
    assert touched > 0.0
    # Each pair's four forces sum to F ((1 - s) + s - (1 - t) - t) = 0 to round-off; 500
    # substeps of sums of a few terms of relative error 1e-16.
    assert np.abs(sim.momentum() - p0).max() <= 1e-12 * scale


def test_the_energy_books_balance():
    sim = crossed_strips(speed=1.0, friction=0.5, slide=0.5)
    sim.track_energy = True
    start = sim.energy().total
    kinetic = start  # no gravity: it is all motion
    books, peak = [], 0.0
    for _ in range(100):
        sim.step(5e-5, steps=20, method="rk4")
        e = sim.energy()
        peak = max(peak, e.contact)
        books.append(e.total + sim.dissipated - start)
    # The contact stores a real share of the energy and friction takes some (the upper
    # strip slides along the lower one while they touch); the books close far tighter
    # (RK4's error and the trapezoid rule on the damping and friction power).
    assert peak > 0.05 * kinetic
    assert sim.dissipated > 0.0
    assert np.abs(books).max() < 2e-3 * kinetic


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


def kernel_force(sim: ss.System) -> np.ndarray:
    """The self-collision force at the current state: explicit Euler with m = 1, dt = 1,
    no gravity, so v' - v is the force (a probe, not a motion)."""
    v = sim.velocities.copy()
    sim.divergence_factor = None
    sim.step(1.0, method="euler")
    return sim.velocities - v


@pytest.mark.parametrize("seed", range(6))
def test_kernel_agrees_with_the_reference(seed):
    sim, k = random_system(seed)
    mu = 0.5 if seed % 2 else 0.0
    sim.enable_self_collision(0.19, stiffness=k, friction=mu, edges=True)
    x, v = sim.positions.copy(), sim.velocities.copy()
    f_nodes, e_nodes, _ = reference.self_collision_forces(x, v, sim.faces, 0.19, k, mu)
    f_edges, e_edges, _ = reference.edge_contact_forces(x, v, sim.faces, 0.19, k, mu)
    assert e_edges > 0.0 and np.count_nonzero(np.abs(f_edges).sum(1)) > 3  # edges to compare
    energy = sim.energy().contact
    f = f_nodes + f_edges
    # Round-off: the terms (|f| up to ~1e2) summed in a different order, and v' - v
    # cancelling |v| ~ 1: 1e-12 of the largest force is ample and far below any formula
    # difference (a wrong weight, sign or pair changes forces at order 1).
    np.testing.assert_allclose(kernel_force(sim), f, rtol=0, atol=1e-12 * np.abs(f).max())
    assert energy == pytest.approx(e_nodes + e_edges, rel=1e-12)


def test_kernel_agrees_with_the_reference_where_only_edges_touch():
    sim = crossed_strips(speed=1.0, friction=0.4, slide=0.5)
    while sim.energy().contact == 0.0 and sim.time < 0.05:
        sim.step(2e-4, steps=5)  # into contact
    x, v = sim.positions.copy(), sim.velocities.copy()
    setting = sim.self_collision
    assert setting is not None
    h, k, mu = setting.thickness, setting.stiffness, setting.friction
    _, e_nodes, _ = reference.self_collision_forces(x, v, sim.faces, h, k, mu)
    f_edges, e_edges, p_edges = reference.edge_contact_forces(x, v, sim.faces, h, k, mu)
    assert e_nodes == 0.0 and e_edges > 0.0 and p_edges > 0.0  # edges only, and sliding
    assert sim.energy().contact == pytest.approx(e_edges, rel=1e-12)
    probe = ss.System(dim=3)
    probe.add_nodes(x, masses=1.0, velocities=v)
    probe.gravity = 0
    probe.add_faces(sim.faces)
    probe.enable_self_collision(h, stiffness=k, friction=mu, edges=True)
    np.testing.assert_allclose(
        kernel_force(probe), f_edges, rtol=0, atol=1e-12 * np.abs(f_edges).max()
    )


def test_the_edge_list_follows_topology_edits():
    # Faces added, then nodes removed (renumbering every face): each time the energy is
    # the reference's for the faces as they are now, so the list was rebuilt.
    sim = crossed_strips(speed=1.0)
    while sim.energy().contact == 0.0 and sim.time < 0.05:
        sim.step(2e-4, steps=5)
    setting = sim.self_collision
    assert setting is not None

    def check() -> None:
        x, v = sim.positions, sim.velocities
        args = (sim.faces, setting.thickness, setting.stiffness, setting.friction)
        expected = reference.self_collision_forces(x, v, *args)[1]
        expected += reference.edge_contact_forces(x, v, *args)[1]
        assert expected > 0.0 and sim.energy().contact == pytest.approx(expected, rel=1e-12)
        sim.step(2e-4, steps=2)

    check()
    sim.add_faces([[0, 6, 13]])  # a long triangle from the lower strip to the upper one
    check()
    sim.remove_nodes([5, 11])  # the lower strip's far end: the faces are renumbered
    check()


def test_the_setting_is_kept_and_checked(tmp_path):
    import pickle

    sim = crossed_strips(friction=0.25)
    expected = ss.SelfCollision(0.016, 200.0, 0.25, 0, True)
    path = tmp_path / "strips.npz"
    sim.save(path)
    for other in (ss.load(path), sim.copy(), pickle.loads(pickle.dumps(sim))):
        assert other.self_collision == expected
    before = sim.self_collision
    with pytest.raises(TypeError, match="edges must be True or False"):
        sim.enable_self_collision(0.01, edges=1)
    assert sim.self_collision == before
    sim.enable_self_collision(0.016, stiffness=200.0)
    assert sim.self_collision is not None and sim.self_collision.edges is False


def test_off_by_default_is_exactly_node_triangle_contact():
    plain, toggled = crossed_strips(edges=False), crossed_strips(edges=False)
    toggled.enable_self_collision(0.016, stiffness=200.0, edges=True)
    toggled.enable_self_collision(0.016, stiffness=200.0)
    for sim in (plain, toggled):
        sim.step(2e-4, steps=300)
    assert plain.positions.tobytes() == toggled.positions.tobytes()


def test_two_cloths_dropped_onto_each_other_do_not_cross():
    # Two coarse 6 × 6 cloths, the upper one turned 45° about the vertical, dropped 4 cm
    # onto the lower one lying on a floor (the scene). With edges on, no edge
    # passes another (the NumPy test above, at every substep), the kernel counts no
    # crossing either, and the upper cloth ends resting on the lower one, about a
    # thickness above it. (At this speed node–triangle contact alone also holds them,
    # measured: the crossed strips above are the scene only edges can hold.)
    def sheet(y, turn):
        sim = ss.cloth(
            6,
            6,
            width=0.5,
            height=0.5,
            mass=0.05,
            stiffness=200.0,
            damping=0.01,
            pin=None,
            normal=(0, 1, 0),
            origin=(-0.25, y, -0.25),
        )
        c, s = np.cos(turn), np.sin(turn)
        x = sim.positions.copy()
        sim.positions = np.c_[c * x[:, 0] - s * x[:, 2], x[:, 1], s * x[:, 0] + c * x[:, 2]]
        return sim

    sim, upper = sheet(0.0, 0.0), sheet(0.04, np.pi / 4)
    first = sim.add_nodes(upper.positions, masses=upper.masses)[0]
    sim.add_springs(upper.springs + first, upper.stiffness, upper.damping, upper.rest_lengths)
    sim.add_faces(upper.faces + first)
    sim.add_plane((0, 1, 0), -0.001)  # n.x >= offset: the floor 1 mm below the lower cloth
    thickness = 0.016
    sim.enable_self_collision(thickness, stiffness=500.0, edges=True)
    total, contact = run_counting(sim, 5e-4, 500)  # 0.25 s: it lands at 0.09 s
    assert total == 0 and sim.self_collision_crossings == 0
    assert contact > 0.0  # they touched
    gap = sim.positions[first:, 1].mean() - sim.positions[:first, 1].mean()
    assert 0.5 * thickness < gap < 2.0 * thickness


def scissors() -> tuple[ss.System, np.ndarray]:
    """Triangle A in the plane z = 0 under its top edge (0, 0, 0)–(1, 0, 0); triangle B's
    bottom edge, 0.8 m long, centred 5 mm above A's middle and turned 0.2° from it, which
    one substep turns to −0.2° about its centre: a scissor's blade over the other, never
    touching. h = 6 mm: the pair is in the list. Returns the system, its velocities set
    for the substep, and the moves' targets."""
    th, gap = np.radians(0.2), 0.005
    turned = [np.array([np.cos(th), s * np.sin(th), 0.0]) for s in (1.0, -1.0)]
    centre = np.array([0.5, 0.0, gap])
    x0 = np.array(
        [[0, 0, 0], [1, 0, 0], [0.5, -0.5, 0], centre, centre, [0.5, 0.5, gap]], dtype=float
    )
    x0[3], x0[4] = centre - 0.4 * turned[0], centre + 0.4 * turned[0]
    x1 = x0.copy()
    x1[3], x1[4] = centre - 0.4 * turned[1], centre + 0.4 * turned[1]
    sim = ss.System(dim=3)
    sim.gravity = 0
    sim.add_nodes(x0, masses=1.0)
    sim.add_faces([[0, 1, 2], [3, 4, 5]])
    sim.enable_self_collision(0.006, stiffness=100.0, edges=True)
    sim.step(1e-3, method="symplectic_euler")  # at rest: the first check's positions
    sim.velocities = (x1 - x0) / 1e-3
    return sim, x1


def test_edges_turning_through_parallel_apart_are_not_counted():
    # The counter finds the moments the four nodes are coplanar (the roots of the cubic
    # volume) and counts the pair only when the segments meet there. The sign of the
    # volume alone counted the scissor: its normal turns through 0 at a distance of 5 mm
    # (1 false crossing; on two 28 × 28 sheets at 1/60 s with edges, vbd's counter
    # reached 58 while exact tests found none). The exact NumPy test of the straight moves
    # between the two checks is the reference.
    sim, x1 = scissors()
    start = sim.positions.copy()
    sim.step(1e-3, method="symplectic_euler")
    np.testing.assert_allclose(sim.positions, x1, rtol=0, atol=1e-5)  # the moves given
    assert edge_crossings(start, sim.positions, face_edges(sim.faces)) == 0
    assert sim.self_collision_crossings == 0
