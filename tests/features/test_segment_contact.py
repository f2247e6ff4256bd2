"""Segment contact (issue 27, item 4): strings with radii that cannot pass through each
other between their nodes.

Whether anything crossed is checked by features/test_edge_contact.py's plain-NumPy
test (exact crossing times of linearly moving segments, the roots of a cubic), written
independently of the kernel, after every substep.
"""

import numpy as np
import pytest
from features.test_edge_contact import edge_crossings
from features.test_node_contact import stepped_with_the_reference

import springsim as ss
from springsim import reference
from springsim.bench.segments import strings_heap

#: The strings: 11 nodes 0.1 m apart, radius 0.02 m: 2 r = 0.04 m, far less than the
#: spacing, so node–node contact alone lets a string through between two nodes.
N, SPACING, RADIUS = 11, 0.1, 0.02


def crossed_strings(speed: float = 1.0, segments: bool = True, slide: float = 0.0) -> ss.System:
    """A string along x (its ends pinned) and, 5 cm above, one along y, thrown down at
    ``speed`` (and along its length at ``slide``), no gravity. The upper string's nodes
    sit between the lower one's (at x = 0.05, y = 0.05 + 0.1 k): no two nodes ever come
    within 2 r of each other, so only segments can meet, at the crossing."""
    sim = ss.System(dim=3)
    sim.gravity = 0
    s = (np.arange(N) - (N - 1) / 2) * SPACING
    lower = sim.add_nodes(np.c_[s, 0 * s, 0 * s], masses=0.01)
    upper = sim.add_nodes(np.c_[0 * s + 0.05, s + 0.05, 0 * s + 0.05], masses=0.01)
    for string in (lower, upper):
        sim.add_springs(np.c_[string[:-1], string[1:]], stiffness=200.0, damping=0.01)
    sim.pin([int(lower[0]), int(lower[-1])])
    sim.radii = RADIUS
    sim.velocities[upper] = [0.0, slide, -speed]
    sim.segment_contact = segments
    return sim


def string_edges(sim: ss.System) -> tuple[np.ndarray, np.ndarray]:
    springs = np.sort(sim.springs.astype(np.int64), axis=1)
    return springs[: N - 1], springs[N - 1 :]


def crossings_between(x0: np.ndarray, x1: np.ndarray, sim: ss.System) -> int:
    """Segments of one string that went through segments of the other between x0 and x1
    (all pairs, less each string's own)."""
    lower, upper = string_edges(sim)
    both = np.concatenate([lower, upper])
    return (
        edge_crossings(x0, x1, both) - edge_crossings(x0, x1, lower) - edge_crossings(x0, x1, upper)
    )


def run_counting(sim: ss.System, dt: float, steps: int, method: str) -> int:
    total = 0
    for _ in range(steps):
        x0 = sim.positions.copy()
        sim.step(dt, method=method)
        total += crossings_between(x0, sim.positions, sim)
    return total


@pytest.mark.parametrize("method", ss.METHODS)
def test_crossed_strings_do_not_pass_through_each_other(method):
    sim = crossed_strings(speed=1.0)
    # 0.06 s at 1 m/s: 6 cm, past the 5 cm gap (through it, had nothing stopped it).
    assert run_counting(sim, 2e-4, 300, method) == 0
    assert sim.self_collision_crossings == 0
    # They met where they cross: the upper string's middle is still above the lower's
    # (by about 2 r, less the overlap), and the lower one was pushed down.
    middle_upper, middle_lower = sim.positions[N + N // 2], sim.positions[N // 2]
    assert middle_upper[2] - middle_lower[2] > RADIUS
    assert middle_lower[2] < -0.005


def test_without_segment_contact_the_upper_string_falls_through():
    # The control: the same scene with node–node contact only; the NumPy test sees it.
    sim = crossed_strings(speed=1.0, segments=False)
    assert run_counting(sim, 2e-4, 300, "symplectic_euler") == 1
    assert sim.positions[N + N // 2, 2] < sim.positions[N // 2, 2] - 0.005


def thrown_at_a_pinned_string(speed: float) -> ss.System:
    """A pinned segment (−1, 0, 0)–(1, 0, 0) and, 0.15 m above, a free one along z of two
    1 kg nodes, thrown down at ``speed``; radii 0.05 m (thickness T = 0.1 m), k = 1e4 N/m,
    restitution 1 (no dashpot), no gravity."""
    sim = ss.System(dim=3)
    sim.gravity = 0
    sim.add_nodes([[-1, 0, 0], [1, 0, 0], [0, 0.15, -1], [0, 0.15, 1]], masses=1.0)
    sim.add_springs([[0, 1], [2, 3]], stiffness=100.0)
    sim.pin([0, 1])
    sim.radii = 0.05
    sim.contact_stiffness = 1e4
    sim.contact_restitution = 1.0
    sim.segment_contact = True
    sim.velocities[[2, 3], 1] = -speed
    return sim


def test_below_the_bound_the_counter_stays_zero_and_beyond_it_counts():
    # The guarantee (docs/guide/node-contact.md, "Strings with radii"): v < T sqrt(k W),
    # W = 1/(4 m) + 1/(4 m) = 1/(2 m) at the middle of the free segment against a pinned
    # one: 0.1 * sqrt(1e4 / 2) = 7.07 m/s; and v dt < T.
    def thrown(speed: float) -> tuple[int, int, float]:
        sim = thrown_at_a_pinned_string(speed)
        total = 0
        edges = np.array([[0, 1], [2, 3]])
        for _ in range(15):
            x0 = sim.positions.copy()
            sim.step(1e-3, steps=2)
            total += edge_crossings(x0, sim.positions, edges)
        return total, sim.self_collision_crossings, float(sim.positions[2, 1])

    assert thrown(5.0)[:2] == (0, 0)
    # 30 m/s: 450 J against the 50 J the layer holds at d = 0; 30 ms: 0.9 m, through.
    total, counted, y = thrown(30.0)
    assert total == 1 and counted == 1 and y < 0.0
    # The swept check counts a move of more than T in one substep too: at 130 m/s a
    # substep of 1 ms moves 0.13 m > T, from 0.15 m above to 0.02 m, then to 0.11 m below.
    sim = thrown_at_a_pinned_string(130.0)
    sim.step(1e-3, steps=2)
    assert sim.self_collision_crossings == 1 and sim.positions[2, 1] < 0.0
    # At 300 m/s one substep of 1 ms carries the segment from 0.15 m above to 0.15 m below:
    # the pair is never within reach at a check (nor felt by a force), only the sweep
    # over the substep's move sees it.
    sim = thrown_at_a_pinned_string(300.0)
    sim.step(1e-3)
    assert sim.self_collision_crossings == 1 and sim.positions[2, 1] == pytest.approx(-0.15)


def test_momentum_is_conserved_to_round_off_without_friction():
    sim = crossed_strings(speed=1.0, slide=0.5)
    sim.unpin(list(range(sim.num_nodes)))
    p0 = sim.momentum()
    scale = float(np.sum(sim.masses * np.linalg.norm(sim.velocities, axis=1)))
    touched = 0.0
    for _ in range(30):
        sim.step(2e-4, steps=10)
        touched = max(touched, sim.energy().contact)
    assert touched > 0.0
    # Each pair's four forces sum to F ((1 - s) + s - (1 - t) - t) = 0 to round-off; the
    # springs' and dashpots' pairs too: 300 substeps of sums of a few terms.
    assert np.abs(sim.momentum() - p0).max() <= 1e-12 * scale


def test_the_energy_books_balance():
    sim = crossed_strings(speed=1.0, slide=0.5)
    sim.contact_friction = 0.5
    sim.contact_stiffness = 2000.0
    sim.track_energy = True
    start = sim.energy().total
    books, peak = [], 0.0
    for _ in range(60):
        sim.step(5e-5, steps=20, method="rk4")
        e = sim.energy()
        peak = max(peak, e.contact)
        books.append(e.total + sim.dissipated - start)
    # The contact stores a share of the kinetic energy (the lower string gives way) and
    # the dashpot and friction take some. The books close to RK4's error and the
    # trapezoid rule on the dissipated power: each substep's is O((w dt)^2) of the
    # power's change, w = sqrt(k W) ~ 450 /s, (w dt)^2 = 5e-4; a thousandth of the
    # kinetic energy bounds them with room.
    assert peak > 0.02 * start
    assert sim.dissipated > 0.0
    assert np.abs(books).max() < 1e-3 * start


def test_the_divergence_watch_counts_what_the_segments_store():
    # Two segments that start crossed 1 cm apart (radii 0.1 m: 0.19 m deep) hold
    # 1/2 k delta^2 = 1805 J and nothing else: the step releases it into their motion. The
    # watch allows divergence_factor (100) times the energy available, which is this
    # stored energy alone: were it not counted, the first check would call the motion
    # diverged (UnstableError). The books balance too: symplectic Euler at w dt = 0.03
    # (w = sqrt(k W), W = 1/(2 m) + ...) and the trapezoid rule on the dashpot's power
    # leave a few 1e-3 of the energy.
    sim = ss.System(dim=3)
    sim.gravity = 0
    sim.add_nodes([[-1, 0, 0], [1, 0, 0], [0, -1, 0.01], [0, 1, 0.01]], masses=1.0)
    sim.add_springs([[0, 1], [2, 3]], stiffness=10.0)
    sim.radii = 0.1
    sim.contact_stiffness = 1e5
    sim.segment_contact = True
    sim.track_energy = True
    stored = sim.energy().contact
    assert stored == pytest.approx(0.5 * 1e5 * 0.19**2, rel=1e-12)
    sim.step(1e-4, steps=200)
    e = sim.energy()
    assert e.contact == 0.0 and e.kinetic > 0.3 * stored  # apart, flying (restitution 0.5)
    assert abs(e.total + sim.dissipated - stored) < 5e-3 * stored


def random_strings(seed: int) -> ss.System:
    """Four random 5-node strings in a 0.4 m cube, random radii 0.03-0.08 m, masses and
    velocities, one node pinned, groups 0 and 1 (0-1 switched off in odd seeds)."""
    rng = np.random.default_rng(seed)
    sim = ss.System(dim=3)
    sim.gravity = 0
    for _ in range(4):
        x = rng.uniform(0, 0.4, size=(5, 3))
        nodes = sim.add_nodes(
            x, masses=rng.uniform(0.5, 2.0, 5), velocities=rng.normal(size=(5, 3))
        )
        sim.add_springs(np.c_[nodes[:-1], nodes[1:]], stiffness=50.0)
    sim.radii = rng.uniform(0.03, 0.08, sim.num_nodes)
    sim.groups = rng.integers(0, 2, sim.num_nodes)
    sim.pin([3])
    if seed % 2:
        sim.set_contact(0, 1, False)
    return sim


def kernel_force(sim: ss.System) -> np.ndarray:
    """The contact force at the current state: explicit Euler with dt = 1 and no other
    force, so m (v' − v) is it (a probe, not a motion)."""
    v = sim.velocities.copy()
    sim.divergence_factor = None
    for k in range(sim.num_springs):
        sim.stiffness[k] = 0.0
    sim.step(1.0, method="euler")
    force = (sim.velocities - v) * sim.masses[:, None]
    force[sim.pinned] = 0.0  # (a pinned node's velocity is held at 0, whatever it was)
    return force


@pytest.mark.parametrize("seed", range(6))
def test_kernel_agrees_with_the_reference(seed):
    sim = random_strings(seed)
    sim.contact_friction = 0.4 * (seed % 3)
    if seed >= 3:
        sim.contact_stiffness = 500.0
    else:
        sim.step(1e-3, steps=1)  # the law from the step at 1 ms
        sim.velocities = np.random.default_rng(seed).normal(size=(sim.num_nodes, 3))
        sim.velocities[sim.pinned] = 0.0
    sim.segment_contact = True
    ref = reference.State.from_system(sim)
    x, v = sim.positions.copy(), sim.velocities.copy()
    assert ref.contact is not None
    ref.contact.method = "euler"
    f_seg, e_seg, _ = reference.segment_contact(ref, x, v)
    pairs = reference.segment_pairs(ref)
    assert len(pairs) > 0 and e_seg > 0.0  # segments touch: the test tests something
    e_kernel = sim.energy().contact
    e_ref = reference.contact_energy(ref, x)
    # The same formulas in another order (and closest points by another route): round-off.
    assert e_kernel == pytest.approx(e_ref, rel=1e-12, abs=1e-15)
    with_segments = kernel_force(sim)
    ref.contact.dt = 1.0  # the probe's step: the law from the step at dt = 1 s
    f_seg, _, _ = reference.segment_contact(ref, x, v)
    f_ref = reference.contact_forces(ref, x, v)
    f_ref[sim.pinned] = 0.0
    assert np.abs(with_segments - f_ref).max() <= 1e-12 * np.abs(f_ref).max()
    # and the segments' share is real: without them the force differs by f_seg
    sim.positions, sim.velocities = x, v
    sim.segment_contact = False
    without = kernel_force(sim)
    f_seg[sim.pinned] = 0.0
    assert np.abs((with_segments - without) - f_seg).max() <= 1e-12 * np.abs(f_ref).max()


@pytest.mark.parametrize("method", ss.METHODS)
@pytest.mark.parametrize("stiffness", [500.0, None])
def test_kernel_steps_as_the_reference_does(method, stiffness):
    # Both integrate the same law (xpbd: the same constraints in the same order) from a
    # state where segments touch; they sum the same terms in other orders (~1e-16
    # relative per operation): after 10 substeps 1e-11 of the scale allows for the
    # contacts' amplification over a fraction of their period (w dt ~ 0.1 or less).
    sim = random_strings(0)
    sim.contact_friction = 0.3
    sim.contact_stiffness = stiffness
    sim.segment_contact = True
    ref = reference.State.from_system(sim)
    assert reference.segment_contact(ref, ref.x, ref.v)[1] > 0.0 or stiffness is None
    assert len(reference.segment_pairs(ref)) > 0
    a, r = stepped_with_the_reference(sim, 2e-4, method, steps=10)
    e_ref = reference.contact_energy(r, r.x)
    assert a.energy().contact == pytest.approx(e_ref, rel=1e-9, abs=1e-15 * max(e_ref, 1.0))


def test_the_setting_is_kept_and_checked(tmp_path):
    sim = crossed_strings()
    sim.step(1e-3)
    assert sim.copy().segment_contact
    path = tmp_path / "strings.npz"
    sim.save(path)
    assert ss.load(path).segment_contact
    import pickle

    assert pickle.loads(pickle.dumps(sim)).segment_contact
    sim.segment_contact = False
    sim.save(path)
    assert not ss.load(path).segment_contact
    # bad input: a clear error, nothing changed
    for bad in (1, "yes", None):
        with pytest.raises(TypeError, match="segment_contact must be a bool"):
            sim.segment_contact = bad
        assert sim.segment_contact is False
    plane = ss.System(dim=2)
    with pytest.raises(ValueError, match="3D"):
        plane.segment_contact = True
    assert plane.segment_contact is False


@pytest.mark.parametrize("method", ["symplectic_euler", "xpbd"])
def test_threads_and_simd_paths_give_the_same_bits(method):
    """Segment pairs are found in an order fixed by the positions, their forces computed
    alone (shared by threads with the node pairs) and added in pair order: the state
    after N steps is bit-identical for 1 and 2 threads and every SIMD path (xpbd runs on
    one thread: its SIMD paths)."""
    paths = [path for path, available in ss.simd_paths().items() if available]
    results = {}
    try:
        for threads in (1, 2):
            for path in paths:
                ss.set_num_threads(threads)
                ss.set_simd(path)
                sim = strings_heap(45, 190)  # 8,505 springs: the kernel uses threads
                sim.step(2e-4, steps=30, method=method)  # the layers touch from the 21st
                results[(threads, path)] = (
                    sim.positions.tobytes() + sim.velocities.tobytes(),
                    sim.self_collision_crossings,
                )
    finally:
        ss.set_simd(None)
        ss.set_num_threads(None)
    assert len(set(results.values())) == 1
    # and the segments acted in those steps: without them the bits differ
    off = strings_heap(45, 190)
    off.segment_contact = False
    off.step(2e-4, steps=30, method=method)
    assert off.positions.tobytes() + off.velocities.tobytes() != next(iter(results.values()))[0]


@pytest.mark.parametrize("method", ss.METHODS)
def test_one_call_of_n_substeps_gives_the_bits_of_n_calls(method):
    # Within a call, a force evaluation at the positions the last crossing check saw
    # keeps its list (a superset of the pairs in reach); a call's first searches afresh.
    # The pairs are sorted either way, so the touching ones are summed in one order.
    one, many = strings_heap(), strings_heap()
    one.step(2e-4, steps=40, method=method)
    for _ in range(40):
        many.step(2e-4, method=method)
    assert one.energy().contact > 0.0  # strings touch
    assert one.positions.tobytes() == many.positions.tobytes()
    assert one.velocities.tobytes() == many.velocities.tobytes()
