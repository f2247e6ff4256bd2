"""XPBD: springs as compliant distance constraints (method="xpbd")."""

import numpy as np
import pytest
from state import assert_same, snapshot

import springsim as ss
from springsim import reference
from springsim.stepping import divergence


def rod_chain(links=5, length=0.2):
    """A chain of rigid rods (stiffness inf) pinned at its top, starting horizontal."""
    sim = ss.System(dim=2)
    sim.add_nodes(np.column_stack([np.arange(links + 1) * length, np.zeros(links + 1)]), masses=0.1)
    sim.pin(0)
    sim.add_springs(np.column_stack([np.arange(links), np.arange(1, links + 1)]), stiffness=np.inf)
    return sim


def test_rigid_rods_keep_their_length():
    sim = rod_chain()
    sim.iterations = 50
    lowest = 0.0
    for _ in range(100):  # 1000 steps
        sim.step(1e-3, steps=10, method="xpbd")
        lengths = sim.spring_lengths()
        np.testing.assert_allclose(lengths, sim.rest_lengths, rtol=1e-6)
        lowest = min(lowest, sim.positions[-1, 1])
    assert lowest < -0.5  # it really swung down
    assert sim.energy().elastic == 0.0  # rods store no energy


def test_one_rod_pendulum_period():
    # Small amplitude (0.05 rad): T = 2 pi sqrt(L/g) to within (theta0^2/16) ~ 1.6e-4.
    length, g = 1.0, 9.81
    sim = ss.System(dim=2)
    theta = 0.05
    sim.add_nodes([[0.0, 0.0], [length * np.sin(theta), -length * np.cos(theta)]])
    sim.pin(0)
    sim.add_springs([0, 1], stiffness=np.inf)
    sim.iterations = 20
    dt, xs = 1e-3, []
    for _ in range(6000):
        sim.step(dt, method="xpbd")
        xs.append(sim.positions[1, 0])
    xs = np.array(xs)
    down = np.flatnonzero((xs[:-1] > 0) & (xs[1:] <= 0))
    # Linear interpolation of the downward zero crossings.
    t = (down + xs[down] / (xs[down] - xs[down + 1]) + 1) * dt
    period = np.diff(t).mean()
    assert abs(period / (2 * np.pi * np.sqrt(length / g)) - 1) < 5e-3


def large_swing_period(dt):
    """Period of a rigid-rod pendulum released at 170 degrees, stepped by xpbd."""
    length, theta = 1.0, np.radians(170.0)
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 0.0], [length * np.sin(theta), -length * np.cos(theta)]])
    sim.pin(0)
    sim.add_springs([0, 1], stiffness=np.inf)
    chunk = 20  # record every 20 substeps: the crossing is interpolated within 20 dt
    xs = []
    for _ in range(int(7.0 / (chunk * dt))):
        sim.step(dt, steps=chunk, method="xpbd")
        xs.append(sim.positions[1, 0])
    xs = np.array(xs)
    cross = np.flatnonzero(np.sign(xs[:-1]) != np.sign(xs[1:]))
    t = (cross + xs[cross] / (xs[cross] - xs[cross + 1]) + 1) * chunk * dt
    return 2.0 * np.diff(t)[:2].mean()  # two half periods after the first crossing


def test_xpbd_damping_shortens_a_large_swing_at_first_order():
    # The documented limit (docs/guide/integrators.md): XPBD loses amplitude, so a
    # 170-degree pendulum's period, T = 4 sqrt(L/g) K(sin^2(theta0/2)) (complete elliptic
    # integral of the first kind), comes out short, and the error halves with dt (first
    # order).
    from scipy.special import ellipk

    exact = 4.0 * np.sqrt(1.0 / 9.81) * ellipk(np.sin(np.radians(85.0)) ** 2)
    coarse, fine = (large_swing_period(dt) / exact - 1.0 for dt in (1e-4, 5e-5))
    assert -0.10 < coarse < fine < -0.02  # short, and less so at the smaller step
    assert 1.5 < coarse / fine < 2.3  # first order: halving dt about halves the error


def test_cloth_stretches_less_with_more_iterations():
    stretch = []
    for iterations in (1, 5, 20, 50):
        sim = ss.cloth(12, 12, width=1.0, height=1.0, mass=0.5, stiffness=1e6, pin="top")
        sim.iterations = iterations
        sim.step(2e-3, steps=250, method="xpbd")
        stretch.append(float((sim.spring_lengths() / sim.rest_lengths).max() - 1))
    assert all(a > b for a, b in zip(stretch, stretch[1:], strict=False)), stretch
    assert stretch[-1] < 0.1 * stretch[0]


def test_pins_and_colliders_are_respected():
    sim = rod_chain(links=4)
    floor = sim.add_plane([0, 1], offset=-0.3)
    top = sim.positions[0].copy()
    for _ in range(200):
        sim.step(1e-3, steps=5, method="xpbd")
        assert np.array_equal(sim.positions[0], top)
        assert sim.positions[:, 1].min() >= floor.offset - 1e-12


def test_compliant_spring_sags_like_hooke():
    # One mass on a finite spring comes to rest at the Hooke extension m g / k.
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 0.0], [0.0, -1.0]], masses=[1.0, 2.0])
    sim.pin(0)
    sim.add_springs([0, 1], stiffness=500.0, damping=5.0)
    sim.iterations = 20
    sim.step(1e-3, steps=20000, method="xpbd")  # 20 s: the oscillation has died out
    np.testing.assert_allclose(-sim.positions[1, 1], 1.0 + 2.0 * 9.81 / 500.0, rtol=1e-9)


@pytest.mark.parametrize("bad, error", [(0, ValueError), (-3, ValueError), (2.5, TypeError)])
def test_bad_iterations_raise_and_change_nothing(bad, error):
    sim = rod_chain()
    before = snapshot(sim)
    with pytest.raises(error):
        sim.iterations = bad
    assert_same(before, snapshot(sim))
    assert sim.iterations == 10


def test_rigid_rods_cannot_be_stepped_by_force_methods():
    sim = rod_chain()
    sim.positions[1, 0] += 1e-3  # a rod that is not at its rest length: infinite force
    before = snapshot(sim)
    with pytest.raises(ValueError, match="method='xpbd'"):  # refused, not a blow-up
        sim.step(1e-3, steps=10, method="symplectic_euler")
    assert_same(before, snapshot(sim))


def test_a_spring_of_zero_stiffness_is_no_constraint():
    # Compliance 1/k is infinite for k = 0: the spring must pull nothing (it once made
    # 0 * inf = NaN). Two stretched nodes joined by it move exactly as free nodes.
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 0.0], [1.0, 0.0]], velocities=[[-1.0, 0.0], [1.0, 0.0]])
    sim.add_springs([0, 1], stiffness=0.0, damping=2.0, rest_lengths=0.5)
    sim.gravity = (0, 0)
    sim.step(1e-2, steps=100, method="xpbd")
    np.testing.assert_allclose(sim.positions, [[-1.0, 0.0], [2.0, 0.0]], rtol=1e-12)


# ---- The solve order: colour by colour (csrc/kernel/step/xpbd.c, reference.colour_order) ---

#: K4, springs in index order. Greedy colours (the lowest colour not yet taken at
#: either end): 0-1 takes 0; 1-2 finds 0 taken at 1, takes 1; 2-3 takes 0; 3-0 finds 0
#: taken at both, takes 1; 0-2 and 1-3 find 0 and 1 taken, take 2.
K4 = [[0, 1], [1, 2], [2, 3], [3, 0], [0, 2], [1, 3]]
K4_ORDER = [0, 2, 1, 3, 4, 5]  # colour 0: 0, 2; colour 1: 1, 3; colour 2: 4, 5

#: A hub (node 0) with 65 spokes, then one spring between spoke ends. Spoke k takes
#: colour k up to 62; spokes 63 and 64 find all 63 colours taken at the hub and go to
#: the overflow colour (solved last); 64-1 finds 0 taken at node 1 and nothing at node
#: 64 (the overflow colour marks nothing), so it takes colour 1, after spoke 1.
STAR = [[0, k] for k in range(1, 66)] + [[64, 1]]
STAR_ORDER = [0, 1, 65, *range(2, 63), 63, 64]


def stretched(springs, dim, seed):
    """Nodes at random, the springs' rest lengths 0.6 to 1.4 times their length: each
    constraint moves its ends a lot, so the order of the solve shows in the result."""
    rng = np.random.default_rng(seed)
    springs = np.array(springs)
    sim = ss.System(dim=dim)
    n = springs.max() + 1
    sim.add_nodes(rng.normal(size=(n, dim)), masses=rng.uniform(0.5, 2.0, size=n))
    lengths = np.linalg.norm(sim.positions[springs[:, 1]] - sim.positions[springs[:, 0]], axis=1)
    rest = lengths * rng.uniform(0.6, 1.4, size=len(springs))
    sim.add_springs(springs, stiffness=rng.uniform(100, 1000, len(springs)), rest_lengths=rest)
    sim.iterations = 3
    return sim


@pytest.mark.parametrize("path", [p for p, ok in ss.simd_paths().items() if ok])
@pytest.mark.parametrize("springs, order", [(K4, K4_ORDER), (STAR, STAR_ORDER)])
@pytest.mark.parametrize("dim", [2, 3])
def test_springs_are_solved_in_colour_order(monkeypatch, path, springs, order, dim):
    assert reference.colour_order(np.array(springs), max(map(max, springs)) + 1) == order
    # The kernel against the oracle made to solve in the order written out above, and
    # not in index order (so that the order really shows).
    ss.set_simd(path)
    try:
        sim = stretched(springs, dim, seed=dim)
        results = {}
        for name, solve_order in (("colour", order), ("index", range(len(springs)))):
            ref = reference.State.from_system(sim)
            monkeypatch.setattr(reference, "colour_order", lambda s, n, o=solve_order: list(o))
            reference.step(ref, 1e-2, steps=2, method="xpbd")
            results[name] = ref.x
        sim.step(1e-2, steps=2, method="xpbd")
    finally:
        ss.set_simd(None)
    scale = np.abs(results["colour"]).max()
    np.testing.assert_allclose(sim.positions, results["colour"], rtol=1e-12, atol=1e-12 * scale)
    assert np.abs(results["index"] - results["colour"]).max() > 1e-6 * scale


def test_the_solve_order_follows_topology_edits():
    # Adding and removing springs and nodes recolours: the kernel still solves in the
    # colour order of the springs it has (the oracle colours them afresh every step).
    sim = ss.cloth(6, 6, width=1.0, height=1.0, mass=1.0, stiffness=500.0, damping=0.1, pin="top")
    sim.positions = sim.positions * 1.1  # every spring stretched
    edits = [
        lambda: sim.add_springs([[0, 35], [7, 20], [13, 22]], stiffness=200.0),
        lambda: sim.remove_springs([3, 10, 11, 40]),
        lambda: sim.remove_nodes([14, 21]),
        lambda: sim.add_nodes([[0.5, 0.5, 0.5]]),
        lambda: sim.add_springs([[sim.num_nodes - 1, 5]], stiffness=300.0, rest_lengths=0.1),
    ]
    for edit in [lambda: None, *edits]:
        edit()
        ref = reference.State.from_system(sim)
        sim.step(2e-3, steps=5, method="xpbd")
        reference.step(ref, 2e-3, steps=5, method="xpbd")
        scale = np.abs(ref.x).max()
        np.testing.assert_allclose(sim.positions, ref.x, rtol=1e-12, atol=1e-12 * scale)


def tearing_cloth():
    sim = ss.cloth(8, 8, width=1.0, height=1.0, mass=0.1, stiffness=50.0, damping=0.1, pin="top")
    sim.external_forces[-8:] = (0.0, -3.0, 0.0)  # a pull that tears it within 0.05 s
    sim.break_strain = 0.15
    return sim


def deferring(sim, steps):
    """``steps`` substeps of xpbd in one call as run() makes it: torn springs stay, with
    k = c = 0, until sim._tear()."""
    sim._step_in_run(1e-3, steps, "xpbd", divergence.CALL)


def test_a_spring_torn_within_a_call_pulls_no_more():
    # A call computes its constraints once and again after each tear: 300 substeps in
    # one call equal 300 calls of one (each computing them anew), bit for bit, while
    # springs tear. (Removing the torn springs recolours the rest, and so changes the
    # rounding: run() removes them at its records only, whatever its calls.)
    whole, split = tearing_cloth(), tearing_cloth()
    deferring(whole, 300)
    for _ in range(300):
        deferring(split, 1)
    torn = np.count_nonzero(whole.stiffness == 0.0)
    assert torn > 10 and np.count_nonzero(split.stiffness == 0.0) == torn
    assert_same(snapshot(whole), snapshot(split))
