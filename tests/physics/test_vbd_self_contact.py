"""vbd takes self-collision (node–triangle, edge–edge) and segment contact as contact
energy in the vertex blocks (vbd.c, "4-node contacts").

Each contact found near the substep's inertial target is ½ k (T − d)² in the blocks of
its four nodes (the others held), d the distance of its closest points found again at the
block's iterate, k = κ m_eff / h² + k_s (self-collision, k_s its stiffness) or κ m_eff /
h² (segments, unless contact_stiffness is set); its nodes are coloured apart. The checks
are against the textbook (a resting node's depth m g / k, backward Euler's momentum),
against geometry computed here in NumPy (overlaps, exact crossing tests between
substeps), against springsim.reference (the same mathematics in NumPy) and across
threads.
"""

import numpy as np
import pytest
from features.test_segment_contact import RADIUS, crossed_strings, crossings_between, string_edges
from features.test_self_collision import crossings

import springsim as ss
from springsim import reference

KAPPA = reference.VBD_CONTACT_KAPPA
WIDTH = 0.5


def two_sheets(
    n: int, gap: float, speed: float = 0.0, pin_lower: bool = False, edges: bool = False
) -> tuple[ss.System, int, float]:
    """Two flat n × n cloths 0.5 m wide (ss.cloth's mass=0.05, 500 N/m), the upper one
    ``gap`` above the lower, shifted by half a cell, thrown down at ``speed``;
    self-collision with thickness 0.4 of a cell (its default stiffness, the stiffest
    spring). Returns the system, the first node of the upper cloth and the thickness."""
    sheets = [
        ss.cloth(
            n,
            n,
            width=WIDTH,
            height=WIDTH,
            mass=0.05,
            stiffness=500.0,
            damping=0.01,
            pin=None,
            normal=(0, 1, 0),
            origin=(-WIDTH / 2 + shift, y, -WIDTH / 2 + shift),
        )
        for shift, y in ((0.0, 0.0), (0.5 * WIDTH / (n - 1), gap))
    ]
    sim, upper = sheets
    first = sim.add_nodes(upper.positions, masses=upper.masses)[0]
    sim.add_springs(upper.springs + first, upper.stiffness, upper.damping, upper.rest_lengths)
    sim.add_faces(upper.faces + first)
    sim.velocities[first:, 1] = -speed
    if pin_lower:
        sim.pin(list(range(first)))
    thickness = 0.4 * WIDTH / (n - 1)
    sim.enable_self_collision(thickness, edges=edges)
    return sim, int(first), thickness


def assert_steps_as_the_reference(sim: ss.System, dt: float, steps: int) -> float:
    """Step the kernel and springsim.reference one substep at a time: positions equal to
    1e-12 of their scale at every substep (the same formulas, summed in other orders and
    with the closest points found by another route: round-off, which the stiff contacts
    amplify little over a few substeps), and so velocities, (x − x0) / h, to 1e-12 of the
    scale over h. Returns the largest contact energy seen (> 0: the contacts acted)."""
    ref = reference.State.from_system(sim)
    touched = 0.0
    for _ in range(steps):
        sim.step(dt, method="vbd")
        reference.step(ref, dt, method="vbd")
        scale = np.abs(ref.x).max()
        np.testing.assert_allclose(sim.positions, ref.x, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(sim.velocities, ref.v, rtol=0, atol=1e-12 * scale / dt)
        touched = max(touched, sim.energy().contact)
    return touched


@pytest.mark.parametrize(
    ("edges", "friction", "speed", "dt"),
    [
        (False, 0.0, 1.0, 1 / 240),
        (True, 0.0, 1.0, 1 / 240),
        (True, 0.4, 1.0, 1 / 240),
        (True, 0.0, 6.0, 1 / 60),
    ],
)
def test_two_cloths_meeting_step_as_the_reference_does(edges, friction, speed, dt):
    # The upper 3 × 3 cloth is thrown at the lower from 12 cm (thickness 10 cm), under
    # gravity: at 1 m/s and 1/240 s they touch from the fifth substep on; at 6 m/s and 1/60
    # s (10 cm a substep) each node of a contact moves at most 0.4 of its distance at the
    # start of the substep (vbd.c), which the reference must do as well.
    sim, _first, thickness = two_sheets(3, gap=0.12, speed=speed, edges=edges)
    sim.enable_self_collision(thickness, friction=friction, edges=edges)
    sim.gravity = (0.0, -9.81, 0.0)
    sim.iterations = 5  # the reference's passes are Python loops
    ref = reference.State.from_system(sim)
    assert ref.self_collision is not None
    touched = assert_steps_as_the_reference(sim, dt, 8)
    assert touched > 0.0  # they touched: the test tested the contacts


def test_crossed_strings_step_as_the_reference_does():
    # Strings of radius 2 cm, the upper thrown at 1 m/s from 5 cm (1 cm apart): they
    # touch from the third substep of 1/240 s.
    sim = crossed_strings(speed=1.0, slide=0.3)
    sim.contact_friction = 0.3
    assert assert_steps_as_the_reference(sim, 1 / 240, 10) > 0.0


def test_one_and_two_threads_give_the_same_bits(settings):
    # 2 × 784 nodes, 8,852 springs (over the 8,192 that make the kernel use threads):
    # the contacts' nodes are coloured apart, so two threads solving a colour's nodes in
    # any order give one thread's bits.
    def run(threads: int) -> np.ndarray:
        ss.set_num_threads(threads)
        sim, _first, _t = two_sheets(28, gap=0.008, speed=1.0, edges=True)
        sim.iterations = 3
        touched = 0.0
        for _ in range(4):
            sim.step(1 / 60, method="vbd")
            touched = max(touched, sim.energy().contact)
        assert touched > 0.0
        return np.concatenate([sim.positions, sim.velocities])

    assert np.array_equal(run(1), run(2))


@pytest.mark.parametrize("edges", [False, True])
def test_a_cloth_dropped_on_a_cloth_rests_without_overlap_or_crossing(edges):
    # A 10 × 10 cloth falls 1 cm onto a pinned flat one at 1/60 s × 10 passes (vbd's
    # step). The lower cloth is the plane y = 0 under the upper one's nodes above it, so
    # a node's overlap is T − y exactly. At rest the contact holds each node's share of
    # the load, about m g, at m g / k, k = κ m / h² + k_s: 0.02 % of T (measured; with
    # self-collision explicit the step diverged at 0.37 s). Checked against the issue's
    # 2 % of T at rest, and during the fall's landing against 10 %; no crossing by the
    # NumPy test between substeps, nor by the counter.
    sim, first, thickness = two_sheets(10, gap=0.03, pin_lower=True, edges=edges)
    faces = sim.faces.copy()
    dt, worst, seen = 1 / 60, -np.inf, 0
    for _ in range(90):
        x0 = sim.positions.copy()
        sim.step(dt, method="vbd")
        seen += crossings(x0, sim.positions, faces)
        x = sim.positions[first:]
        over = (np.abs(x[:, 0]) <= WIDTH / 2) & (np.abs(x[:, 2]) <= WIDTH / 2)
        worst = max(worst, float(np.max(thickness - x[over, 1])))
    x = sim.positions[first:]
    over = (np.abs(x[:, 0]) <= WIDTH / 2) & (np.abs(x[:, 2]) <= WIDTH / 2)
    assert float(np.max(thickness - x[over, 1])) < 0.02 * thickness
    assert worst < 0.1 * thickness
    assert worst > 0.0  # it landed: the contacts held it
    assert seen == 0 and sim.self_collision_crossings == 0


def string_gap(x: np.ndarray, sim: ss.System) -> float:
    """The least distance between a segment of one string and one of the other (exact
    closest points of every pair, by NumPy: reference._closest_on_segments)."""
    lower, upper = string_edges(sim)
    best = np.inf
    for a, b in lower:
        for c, d in upper:
            s, t = reference._closest_on_segments(x[a], x[b], x[c], x[d])
            gap = (x[a] + s * (x[b] - x[a])) - (x[c] + t * (x[d] - x[c]))
            best = min(best, float(np.sqrt(gap @ gap)))
    return best


@pytest.mark.parametrize("dt", [1 / 60, 1 / 240])
def test_strings_dropped_crosswise_do_not_cross(dt):
    # The upper string (free) falls under gravity from 5 cm onto the lower (pinned at its
    # ends), crosswise, at vbd's steps: the exact crossing test (roots of the twist's
    # cubic) between substeps finds none, nor the counter. Resting on it, the closest
    # segments are 2 R apart less the overlap, which holds the upper string's weight
    # shared by the two segments at the crossing: about M g / k with k = κ m_eff / h²
    # (measured 0.05 % of 2 R at 1/60 s); checked against 2 % of 2 R, and that they do
    # touch (the gap is under 2 R).
    sim = crossed_strings(speed=0.0)
    n = sim.num_nodes // 2
    sim.positions[n:, 1] -= 0.05  # the upper string's middle node over the crossing
    sim.gravity = (0.0, 0.0, -9.81)
    seen = 0
    for _ in range(int(round(0.5 / dt))):
        x0 = sim.positions.copy()
        sim.step(dt, method="vbd")
        seen += crossings_between(x0, sim.positions, sim)
    assert seen == 0 and sim.self_collision_crossings == 0
    gap = string_gap(sim.positions, sim)
    assert 2 * RADIUS * 0.98 < gap < 2 * RADIUS


@pytest.mark.parametrize("h", [1 / 60, 1 / 240])
def test_a_node_resting_on_a_pinned_cloth_sinks_m_g_over_k(h):
    # A free node on a pinned triangle: resting, the block's minimum has k (T − d) = m g
    # with k = κ m_eff / h² + k_s and m_eff = m (the triangle pinned), so it rests
    # m g / (κ m / h² + k_s) inside the thickness (backward Euler's fixed point, exact).
    m, k_s, thickness = 0.1, 50.0, 0.1
    sim = ss.System(dim=3)
    sim.add_nodes([[0, 0, 0], [1, 0, 0], [0, 0, 1], [0.2, thickness, 0.2]], masses=[1, 1, 1, m])
    sim.add_faces([[0, 1, 2]])
    sim.pin([0, 1, 2])
    sim.enable_self_collision(thickness, stiffness=k_s)
    sim.step(h, steps=int(round(1.0 / h)), method="vbd")
    depth = m * 9.81 / (KAPPA * m / (h * h) + k_s)
    assert thickness - sim.positions[3, 1] == pytest.approx(depth, rel=1e-9)
    assert abs(sim.velocities[3, 1]) < 1e-12


@pytest.mark.parametrize("passes", [3, 10, 40])
def test_frictionless_momentum_changes_by_gravity_alone_at_any_number_of_passes(passes):
    # Two free strings, the upper thrown onto the lower at 1 m/s and sliding, under
    # gravity: each contact's forces on its four nodes sum to zero (the weights do), so
    # the momentum changes by M g t alone. Gauss–Seidel's passes short of convergence are
    # not equal and opposite (measured before the translation: |ΔP − M g t| / Σ m |v| of
    # 2.2e-3 at 10 passes, 1.9e-4 at 40); the whole system's translation after them
    # (vbd.c, translate) makes it exact: to 1e-12 of Σ m |v| (round-off of v = (x − x0) /
    # h over 24 substeps; measured below 1e-14).
    sim = crossed_strings(speed=1.0, slide=0.5)
    sim.unpin(list(range(sim.num_nodes)))
    sim.gravity = (0.0, 0.0, -9.81)
    sim.iterations = passes
    p0 = sim.momentum().copy()
    scale = float(np.sum(sim.masses * np.linalg.norm(sim.velocities, axis=1)))
    dt, steps, touched = 1 / 240, 24, 0.0
    for _ in range(steps):
        sim.step(dt, method="vbd")
        touched = max(touched, sim.energy().contact)
    assert touched > 0.0  # the strings met
    gravity = np.sum(sim.masses) * np.array([0.0, 0.0, -9.81]) * dt * steps
    assert float(np.abs(sim.momentum() - p0 - gravity).max()) / scale < 1e-12


def test_the_books_balance_with_self_contact():
    # dissipated gains E0 + W − E1 every substep (no external force or drag: W = 0), so
    # the books balance to the energies' round-off; the implicit step and the contacts
    # took a share of the fall's energy.
    sim, _first, _t = two_sheets(6, gap=0.06, speed=1.0, edges=True)
    sim.enable_self_collision(0.4 * WIDTH / 5, friction=0.3, edges=True)
    sim.gravity = 0
    sim.track_energy = True
    e0 = sim.energy().total
    sim.step(1 / 240, steps=48, method="vbd")
    assert sim.energy().total + sim.dissipated == pytest.approx(e0, abs=1e-9 * max(e0, 1.0))
    assert sim.dissipated > 1e-3 * e0


@pytest.mark.parametrize("method", ["symplectic_euler", "vbd"])
def test_the_counter_counts_a_node_driven_through_a_triangle(method):
    # A pinned node dragged at 1 m/s (2 cm a substep of 1/50 s) straight through a
    # pinned triangle: nothing can stop it, and the counter must see it once in
    # vbd as in the force methods (self-collision's list, searched by vbd along the moves,
    # is checked at the end of each step call).
    sim = ss.System(dim=3)
    sim.add_nodes([[0, 0, 0], [1, 0, 0], [0, 0, 1], [0.2, 0.05, 0.2]], masses=1.0)
    sim.add_faces([[0, 1, 2]])
    sim.pin([0, 1, 2])
    sim.pin(3, velocity=(0.0, -1.0, 0.0))  # dragged
    sim.enable_self_collision(0.01, stiffness=100.0)
    for _ in range(5):
        sim.step(1 / 50, method=method)
    assert sim.positions[3, 1] == pytest.approx(-0.05)
    assert sim.self_collision_crossings == 1
