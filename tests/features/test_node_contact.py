"""Node–node contact (issue 17, item 1) against the textbook and against the oracle.

The law is the linear spring–dashpot of DEM (Cundall & Strack 1979): for two nodes of
radii r_i, r_j closer than r_i + r_j by δ, a normal force k_c δ − c v_n with
c = 2ζ√(k_c m_eff). In the relative coordinate δ of a head-on collision this is the
damped oscillator m_eff δ'' + c δ' + k_c δ = 0 started at δ = 0, δ' = v0, whose solution

    δ(t) = (v0 / ω_d) exp(−ζ ω t) sin(ω_d t),   ω = √(k_c / m_eff), ω_d = ω √(1 − ζ²),

returns to δ = 0 at t = π / ω_d with speed v0 exp(−ζπ/√(1 − ζ²)) = e v0 for the ζ the
kernel derives from the restitution e. Its deepest overlap is at tan(ω_d t*) =
√(1 − ζ²)/ζ (ω t* = π/2 undamped: δ_max = v0 √(m_eff / k_c)).
"""

import gc
import tracemalloc

import numpy as np
import pytest
from state import assert_same, snapshot

import springsim as ss
from springsim import reference
from springsim.reference import contact_energy, contact_pairs, contact_power


def zeta(e):
    return 1.0 if e == 0 else -np.log(e) / np.sqrt(np.pi**2 + np.log(e) ** 2)


def two_balls(e=0.5, k=1e4, masses=(1.0, 1.0), speed=1.0, r=0.1, dim=2, friction=0.0):
    """Two balls of radius r, 4r apart on the x axis, closing at 2 speed, no gravity."""
    sim = ss.System(dim=dim)
    sim.gravity = 0
    x = np.zeros((2, dim))
    x[1, 0] = 4 * r
    v = np.zeros((2, dim))
    v[0, 0], v[1, 0] = speed, -speed
    sim.add_nodes(x, masses=list(masses), velocities=v)
    sim.radii = r
    sim.contact_stiffness, sim.contact_restitution = k, e
    sim.contact_friction = friction
    return sim


def collide(sim, dt, method="symplectic_euler", duration=0.3):
    """Step ``duration`` s one substep at a time (the balls of :func:`two_balls` meet
    after 0.1 s); the closest approach of nodes 0 and 1."""
    closest = np.inf
    steps = int(duration / dt)
    for _ in range(steps):
        sim.step(dt, method=method)
        closest = min(closest, float(np.linalg.norm(sim.positions[1] - sim.positions[0])))
    return closest


def deepest_overlap(v_rel, k, m_eff, e):
    z = zeta(e)
    w = np.sqrt(k / m_eff)
    wd = w * np.sqrt(1 - z * z)
    t = np.arctan2(np.sqrt(1 - z * z), z) / wd
    return v_rel / wd * np.exp(-z * w * t) * np.sin(wd * t)


# ---- the textbook ------------------------------------------------------------------


@pytest.mark.parametrize("e", [1.0, 0.5, 0.1])
def test_two_balls_stop_near_2r_and_leave_with_the_restitution(e):
    # Symplectic Euler is first order: the speed ratio and the deepest overlap are off by
    # O(ω dt). Measured at ω dt = 0.01: at most 1.1 % (e = 0.1, the strongest dashpot);
    # so the check is |error| <= 2 ω dt at two steps, and that halving dt at least
    # nearly halves it (the error is the method's, not the law's).
    k, r, m_eff = 1e4, 0.1, 0.5
    omega = np.sqrt(k / m_eff)
    errors = []
    for w_dt in (0.01, 0.005):
        sim = two_balls(e, k=k, r=r)
        closest = collide(sim, w_dt / omega)
        ratio = (sim.velocities[1, 0] - sim.velocities[0, 0]) / 2.0  # leaving / arriving
        overlap = 2 * r - closest
        expected = deepest_overlap(2.0, k, m_eff, e)
        errors.append((abs(ratio / e - 1), abs(overlap / expected - 1)))
        assert abs(ratio / e - 1) <= 2 * w_dt
        assert abs(overlap / expected - 1) <= 2 * w_dt
        assert overlap < 2.0 * np.sqrt(m_eff / k) + 1e-12  # never deeper than undamped
    if e != 1.0:  # (e = 1: both errors are round-off sized already)
        assert errors[1][0] <= 0.6 * errors[0][0]


def test_unequal_masses_keep_momentum_and_the_restitution():
    # m_eff = m1 m2 / (m1 + m2) sets the dashpot, so e holds for any mass ratio: the
    # relative speed leaves e times as fast; momentum is conserved to round-off.
    sim = two_balls(0.6, masses=(1.0, 3.0), speed=1.0)
    p0 = sim.momentum().copy()
    dt = 0.005 / np.sqrt(1e4 / 0.75)
    collide(sim, dt)
    v = sim.velocities[:, 0]
    assert (v[1] - v[0]) / 2.0 == pytest.approx(0.6, rel=0.01)  # 2 ω dt, as above
    np.testing.assert_allclose(sim.momentum(), p0, atol=1e-14 * 4)


def test_a_pinned_ball_counts_as_infinitely_heavy():
    # m_eff = the free node's mass: the free ball bounces back with e times its speed.
    sim = two_balls(0.5)
    sim.pin(1)
    omega = np.sqrt(1e4 / 1.0)
    collide(sim, 0.005 / omega, duration=0.5)
    assert sim.velocities[0, 0] == pytest.approx(-0.5, rel=0.01)
    assert np.all(sim.positions[1] == [0.4, 0.0])


@pytest.mark.parametrize("method", ss.METHODS)
def test_every_method_bounces_two_balls_and_keeps_momentum(method):
    # Each method gets the contact forces (xpbd in its prediction, implicit_euler
    # explicitly in its right-hand side). Momentum: the pair forces are equal and
    # opposite; Verlet and XPBD rebuild v from positions, which rounds differently for
    # the two nodes: measured 1e-11 after 3600 substeps, so 1e-10 of sum m|v| = 2.
    sim = two_balls(0.5)
    dt = 0.01 / np.sqrt(1e4 / 0.5)
    collide(sim, dt, method=method)
    assert sim.velocities[1, 0] > 0.45 and sim.velocities[0, 0] < -0.45  # bounced
    np.testing.assert_allclose(sim.momentum(), 0.0, atol=1e-10 * 2.0)


def test_critical_dt_includes_the_contact_stiffness():
    # Two free balls, no springs: one contact, the Gershgorin row of either node is
    # w² = k (1/m + 1/m) = 2k/m and g = c · 2/m with c = 2ζ√(k m/2).
    k, m, e = 1e4, 0.5, 0.5
    sim = two_balls(e, k=k, masses=(m, m))
    w2, g = 2 * k / m, 2 * 2 * zeta(e) * np.sqrt(k * m / 2) / m
    assert sim.critical_dt() == pytest.approx(4 / (g + np.sqrt(g * g + 4 * w2)), rel=1e-12)
    sim.radii = 0.0
    assert sim.critical_dt() == np.inf


# ---- momentum and energy of soft bodies --------------------------------------------


def jelly_blocks(e=0.5, friction=0.0, n=4, gap=0.1):
    """Two n x n x n jelly blocks (0.3 m, 1 kg each), gap apart, flying into each
    other at 2 m/s."""
    a = ss.jelly(n, n, n, size=(0.3, 0.3, 0.3), mass=1.0, stiffness=2000.0)
    b = ss.jelly(
        n, n, n, size=(0.3, 0.3, 0.3), mass=1.0, stiffness=2000.0, origin=(0.3 + gap, 0.05, 0.02)
    )
    a.add(b)
    a.gravity = 0
    a.radii = 0.45 * 0.3 / (n - 1)
    half = a.num_nodes // 2
    a.velocities[:half, 0], a.velocities[half:, 0] = 1.0, -1.0
    a.contact_stiffness, a.contact_restitution, a.contact_friction = 5000.0, e, friction
    return a


@pytest.mark.parametrize("friction", [0.0, 0.5])
def test_jelly_blocks_keep_momentum_to_round_off(friction):
    # Every pair force is added to one node and subtracted from the other: momentum
    # changes only by the rounding of m (v + f/m dt) over 128 nodes and 600 substeps;
    # measured 1.2e-15 kg m/s, so 1e-13 of sum m|v| (2 kg m/s).
    sim = jelly_blocks(friction=friction)
    p0 = sim.momentum().copy()
    dt = 0.2 * sim.critical_dt()
    touched = 0
    for _ in range(60):
        sim.step(dt, steps=10)
        touched += len(sim.contact_pairs())
        np.testing.assert_allclose(sim.momentum(), p0, atol=1e-13 * 2.0)
    assert touched > 0  # they did collide
    half = sim.num_nodes // 2
    assert sim.velocities[:half, 0].mean() < 0 < sim.velocities[half:, 0].mean()


def test_the_energy_books_balance_to_the_methods_order():
    # total + dissipated stays what it was, up to symplectic Euler's O(ω dt) energy
    # error (ω = √(k_c/m_eff) of one node pair: 800 rad/s). Measured 0.1 of ω dt at
    # 0.2 critical_dt; checked <= 0.1 ω dt, and first order (halving dt halves it).
    errors = []
    for fraction in (0.1, 0.05):
        sim = jelly_blocks(e=0.5)
        sim.track_energy = True
        start = sim.energy().total
        dt = fraction * sim.critical_dt()
        sim.step(dt, steps=int(0.06 / dt))
        assert sim.dissipated > 0.1  # the dashpots took a real share
        error = abs(sim.energy().total + sim.dissipated - start) / start
        omega = np.sqrt(5000.0 / (1.0 / 128))
        assert error <= 0.1 * omega * dt
        errors.append(error)
    assert errors[1] <= 0.6 * errors[0]


def test_contact_energy_and_power_are_the_oracles():
    rng = np.random.default_rng(3)
    sim = overlapping_cloud(rng, dim=3, n=30)
    sim.damping = 0.0  # what is dissipated is then the contacts' alone
    ref = reference.State.from_system(sim)
    assert sim.energy().contact == pytest.approx(contact_energy(ref, ref.x), rel=1e-12)
    assert sim.energy().contact > 0
    sim.track_energy = True
    sim.dissipated = 0.0
    # one substep's booking is the trapezoid of the power at its ends: at the start it
    # is the oracle's
    power = contact_power(ref, ref.x, ref.v)
    assert power > 0
    dt = 1e-9
    sim.step(dt, method="symplectic_euler")
    assert sim.dissipated == pytest.approx(power * dt, rel=1e-6)  # dt² terms: 1e-9 · ω


# ---- which pairs touch --------------------------------------------------------------


def test_switched_off_groups_pass_through_each_other():
    sim = two_balls(0.5)
    sim.groups = [1, 2]
    sim.set_contact(2, 1, False)
    x0 = sim.positions.copy()
    collide(sim, 1e-4, duration=0.5)
    # free flight: no force ever acted
    np.testing.assert_allclose(sim.positions[:, 0], x0[:, 0] + [0.5, -0.5], rtol=1e-12)
    assert np.all(sim.velocities[:, 0] == [1.0, -1.0])
    sim.set_contact(1, 2, True)
    assert sim.contact_enabled(1, 2)


def test_one_group_touches_unless_a_spring_joins_them():
    sim = two_balls(0.5)
    sim.positions[1, 0] = 0.15  # overlapping by 0.05
    assert sim.contact_pairs().tolist() == [[0, 1]]
    sim.add_springs([[0, 1]], stiffness=1.0)
    assert sim.contact_pairs().tolist() == []
    sim.groups = [0, 5]  # different groups touch even when joined
    assert sim.contact_pairs().tolist() == [[0, 1]]
    sim.set_contact(5, 5, False)  # within group 5: nothing to switch here
    assert sim.contact_pairs().tolist() == [[0, 1]]
    sim.groups = [5, 5]
    sim.remove_springs([0])
    assert sim.contact_pairs().tolist() == []  # switched off within group 5


def test_nodes_added_later_get_the_default_radius():
    sim = ss.System(dim=3)
    sim.add_nodes([[0, 0, 0]])
    sim.contact_radius = 0.2
    sim.add_nodes([[0.3, 0, 0], [5, 0, 0]])
    assert sim.radii.tolist() == [0.0, 0.2, 0.2]
    assert sim.groups.tolist() == [0, 0, 0]
    sim.radii[0] = 0.2
    assert sim.contact_pairs().tolist() == [[0, 1]]


# ---- the oracle: every pair, no grid -------------------------------------------------


def overlapping_cloud(rng, dim, n, stiffness=3e3):
    """n nodes in a box small enough that many overlap, some joined by springs, some
    pinned, three groups with one pair of them switched off, friction on; the contact
    stiffness ``stiffness`` N/m (None: from the step)."""
    sim = ss.System(dim=dim)
    x = rng.uniform(0, 1.0 if dim == 2 else 0.6, size=(n, dim))  # crowded enough to touch
    sim.add_nodes(x, masses=rng.uniform(0.5, 2.0, n), velocities=rng.normal(size=(n, dim)))
    sim.radii = rng.uniform(0.0, 0.15, n) * (rng.uniform(size=n) > 0.1)  # some without
    sim.groups = rng.integers(0, 3, n)
    sim.set_contact(1, 2, False)
    sim.pin([0, 1])
    pairs_ = rng.integers(0, n, size=(n // 2, 2))
    pairs_ = np.unique(np.sort(pairs_[pairs_[:, 0] != pairs_[:, 1]], axis=1), axis=0)
    sim.add_springs(pairs_, stiffness=50.0, damping=0.1)
    sim.contact_stiffness, sim.contact_restitution, sim.contact_friction = stiffness, 0.4, 0.3
    sim.gravity = rng.normal(size=dim)
    return sim


def stepped_with_the_reference(sim, dt, method, steps=20):
    """A copy of ``sim`` and its reference state, both stepped ``steps`` substeps of
    ``dt`` by ``method``; their positions and velocities checked to agree to 1e-11 of
    their scales (the same terms summed in other orders, amplified by the contacts)."""
    a, r = sim.copy(), reference.State.from_system(sim)
    a.cg_tolerance = 1e-15  # the reference solves exactly
    a.step(dt, steps=steps, method=method)
    reference.step(r, dt, steps=steps, method=method)
    scale = np.abs(r.x).max()
    np.testing.assert_allclose(a.positions, r.x, rtol=1e-11, atol=1e-11 * scale)
    np.testing.assert_allclose(a.velocities, r.v, rtol=1e-11, atol=1e-11 * np.abs(r.v).max())
    return a, r


@pytest.mark.parametrize("far", [False, True])
@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize(
    ("seed", "stiffness"), [(0, 3e3), (1, 3e3), (2, 3e3), (3, 3e3), (4, None), (5, None)]
)
def test_kernel_finds_the_pairs_and_forces_of_the_brute_force_oracle(dim, seed, far, stiffness):
    # The grid must find exactly the pairs that trying all N²/2 finds; then both
    # integrate the same law. RK4 over 20 substeps of 0.05 critical_dt: the two sum
    # the same terms in different orders, ~1e-16 relative per step; 1e-11 allows for
    # the contacts' amplification over a few periods. far: one node 1 km away makes
    # the bounding box too sparse for a dense grid, so the kernel hashes the cells.
    # stiffness None: each pair's from the step, m_eff (a/dt)² (a = 0.3 / (2ζ + 2) here,
    # with friction), at the step's dt; the energies after, at that dt, agree too.
    rng = np.random.default_rng(seed)
    sim = overlapping_cloud(rng, dim, n=40, stiffness=stiffness)
    if far:
        sim.positions[-1] += 1e3
    ref = reference.State.from_system(sim)
    found = sim.contact_pairs()
    expected = contact_pairs(ref, ref.x)
    assert len(expected) > 5
    assert sorted(map(tuple, found.tolist())) == sorted(map(tuple, expected.tolist()))
    dt = 0.05 * sim.critical_dt()
    for method in ("rk4", "xpbd", "symplectic_euler", "implicit_euler"):
        a, r = stepped_with_the_reference(sim, dt, method)
        assert a.energy().contact == pytest.approx(contact_energy(r, r.x), rel=1e-9)
        # xpbd's constraints are hard at the stiffness from the step: no overlap is left
        assert a.energy().contact > 0 or (method == "xpbd" and stiffness is None)


@pytest.mark.parametrize("stiffness", [5000.0, None])
def test_one_and_two_threads_give_the_same_bits(stiffness):
    # The pairs are found in one order and their forces summed in it, by one thread
    # (the threads only compute each pair's force), so a second thread changes nothing
    # (the springs are summed per their plan as ever). None: the law from the step.
    # 12³ nodes a block: over 8192 springs, so that the kernel does use two threads.
    hashes = []
    try:
        for threads in (1, 2, 1):
            ss.set_num_threads(threads)
            sim = jelly_blocks(friction=0.3, n=12, gap=0.0)  # touching from the start
            sim.contact_stiffness = stiffness
            assert sim.num_springs >= 8192
            for method in ("symplectic_euler", "rk4", "implicit_euler"):
                sim.step(0.2 * sim.critical_dt(), steps=100, method=method)
            assert len(sim.contact_pairs()) > 0
            hashes.append(snapshot(sim))
    finally:
        ss.set_num_threads(None)
    assert_same(hashes[0], hashes[1])
    assert_same(hashes[0], hashes[2])


# ---- settling: 100 balls in a box ---------------------------------------------------


def test_a_hundred_balls_poured_into_a_box_settle_without_deep_overlap():
    # Balls of radius r, mass m on a floor and four walls (planes act on node centres,
    # so they stand r inside the box's faces). At rest the deepest overlap of any pair
    # carries at most the weight of all the balls, N m g: δ <= N m g / k_c (= 1 mm,
    # 2 % of r, here), and no ball is outside the box.
    rng = np.random.default_rng(0)
    n, r, m, k = 100, 0.05, 0.01, 1e4
    side = 0.5
    sim = ss.System(dim=3)
    # poured: a loose 4 x 4 x 7 lattice (2.2 r apart, jittered) above the floor
    lattice = np.stack(np.unravel_index(np.arange(n), (4, 7, 4)), axis=1).astype(float)
    x = r + lattice * 2.2 * r + rng.uniform(0, 0.1 * r, (n, 3))
    x[:, 1] += 0.1
    x[lattice[:, 1] % 2 == 1] += [r, 0, r]  # odd layers over the hollows of the even
    sim.add_nodes(x, masses=m)
    sim.radii = r
    sim.contact_stiffness, sim.contact_restitution, sim.contact_friction = k, 0.3, 0.3
    sim.add_plane([0, 1, 0], r)  # floor at y = 0
    sim.add_plane([1, 0, 0], r)
    sim.add_plane([-1, 0, 0], -(side - r))
    sim.add_plane([0, 0, 1], r)
    sim.add_plane([0, 0, -1], -(side - r))
    sim.drag = 1e-3  # the air: lets the heap come to rest within the test
    dt = 0.25 * sim.critical_dt()
    sim.step(dt, steps=int(3.0 / dt))
    assert sim.energy().kinetic < 1e-4 * n * m * 9.81 * r  # at rest
    pairs_ = sim.contact_pairs()
    assert len(pairs_) > n  # a heap, not a rain
    d = np.linalg.norm(sim.positions[pairs_[:, 1]] - sim.positions[pairs_[:, 0]], axis=1)
    assert (2 * r - d).max() <= n * m * 9.81 / k
    assert sim.positions[:, 1].min() >= r - 1e-9
    assert np.all((sim.positions[:, [0, 2]] >= r - 1e-9) & (sim.positions[:, [0, 2]] <= side))


# ---- files, copies, rollback, bad input ---------------------------------------------


def test_a_file_keeps_radii_of_minus_zero(tmp_path):
    # -0.0 is a valid radius (>= 0) whose bits differ from the cold array's +0.0: the
    # file must bring the same bits back (found by the long fuzz run).
    sim = ss.string(3, length=1.0, mass=0.1, stiffness=10.0, dim=2)
    sim.radii = -0.0
    sim.save(tmp_path / "minus.npz")
    loaded = ss.load(tmp_path / "minus.npz")
    assert np.array_equal(np.signbit(loaded.radii), np.ones(3, dtype=bool))
    assert_same(snapshot(sim), snapshot(loaded))


def test_save_load_and_copy_step_bit_for_bit(tmp_path):
    sim = jelly_blocks(friction=0.2)
    sim.groups = np.arange(sim.num_nodes) % 3
    sim.set_contact(0, 2, False)
    sim.save(tmp_path / "blocks.npz")
    for other in (ss.load(tmp_path / "blocks.npz"), sim.copy()):
        assert_same(snapshot(other), snapshot(sim))
        dt = 0.2 * sim.critical_dt()
        a, b = sim.copy(), other
        a.step(dt, steps=200)
        b.step(dt, steps=200)
        assert_same(snapshot(a), snapshot(b))


def test_a_blow_up_rolls_back_with_the_contacts():
    # A contact far too stiff for dt blows up; the state is restored exactly and the
    # next, stable, step works (the pairs are rebuilt from the state).
    sim = two_balls(0.5)
    sim.positions[1, 0] = 0.15
    sim.contact_stiffness = 1e12
    before = snapshot(sim)
    with pytest.raises(ss.UnstableError):
        sim.step(1e-3, steps=200)
    assert_same(snapshot(sim), before)
    sim.contact_stiffness = 1e4
    sim.step(1e-4, steps=100)
    assert sim.velocities[1, 0] > sim.velocities[0, 0]  # pushed apart


BAD = [
    ("contact_stiffness", 0.0, ValueError),
    ("contact_stiffness", np.inf, ValueError),
    ("contact_stiffness", "1e4", TypeError),
    ("contact_restitution", 1.5, ValueError),
    ("contact_restitution", np.nan, ValueError),
    ("contact_friction", -0.1, ValueError),
    ("contact_radius", -1.0, ValueError),
    ("contact_radius", None, TypeError),
    ("radii", -0.1, ValueError),
    ("radii", np.nan, ValueError),
    ("radii", [0.1, 0.2, 0.3], ValueError),
    ("groups", 1.5, ValueError),
    ("groups", 2**40, ValueError),
    ("groups", "a", TypeError),
]


@pytest.mark.parametrize(("name", "value", "error"), BAD)
def test_bad_settings_raise_and_change_nothing(name, value, error):
    sim = two_balls(0.5)
    sim.set_contact(3, 4, False)
    before = snapshot(sim)
    with pytest.raises(error, match=name.rstrip("s") if name != "radii" else "radi"):
        setattr(sim, name, value)
    assert_same(snapshot(sim), before)


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("a", 1, False), TypeError),
        ((1, 2.0, False), TypeError),
        ((1, 2, "no"), TypeError),
        ((1, 2**31, False), ValueError),
        ((True, 1, False), TypeError),
    ],
)
def test_bad_filters_raise_and_change_nothing(args, error):
    sim = two_balls(0.5)
    before = snapshot(sim)
    with pytest.raises(error):
        sim.set_contact(*args)
    assert_same(snapshot(sim), before)


def test_a_radius_written_through_the_view_is_refused_by_step():
    sim = two_balls(0.5)
    sim.radii[0] = -1.0
    with pytest.raises(ValueError, match="contact radius of node 0"):
        sim.step(1e-4)
    assert sim.time == 0.0


def test_nbytes_counts_the_contact_buffers_and_steps_then_allocate_nothing():
    # The kernel allocates through PyMem_RawMalloc, so tracemalloc sees its blocks (see
    # tests/state_and_files/test_memory.py): what a step grew must be what nbytes grew, and once the
    # buffers have room for the contacts, a step allocates nothing at all.
    def traced():
        return tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(True, __file__)])

    def growths(sim, call):
        gc.collect()
        nbytes, before = sim.nbytes, traced()
        call()
        gc.collect()
        after = traced()  # on its own line: the sum's generator is not the kernel's
        return sim.nbytes - nbytes, sum(
            stat.size_diff for stat in after.compare_to(before, "lineno")
        )

    tracemalloc.start()
    try:
        for _attempt in range(2):  # the first warms Python's own caches at these lines
            sim = jelly_blocks()
            dt = 0.2 * sim.critical_dt()
            meet = growths(sim, lambda sim=sim, dt=dt: sim.step(dt, steps=300))
            part = growths(sim, lambda sim=sim, dt=dt: sim.step(dt, steps=300))
        grown, traced_grown = meet
        assert grown == traced_grown and grown > 0
        assert part == (0, 0)
    finally:
        tracemalloc.stop()


# ---- seen ----------------------------------------------------------------------------


def test_draw_and_animate_show_the_radii():
    import matplotlib

    matplotlib.use("Agg")
    from springsim.plot import animate, draw

    def radii_artists(ax):
        return [c for c in ax.collections if c.get_gid() == "springsim-radii"]

    sim = two_balls(0.5)
    assert radii_artists(draw(sim, colliders=False)) != []
    sim.radii = [0.1, 0.0]  # only nodes with a radius get a disc
    (discs,) = radii_artists(draw(sim))
    np.testing.assert_array_equal(discs.get_offsets(), sim.positions[:1])
    assert discs._widths.tolist() == [0.1]  # half widths in data units: the radius
    h = sim.run(0.3, 1e-4, frames=4, progress=False)
    anim = animate(h)
    anim.to_jshtml()  # draws every frame; the last stays
    (moving,) = radii_artists(anim._fig.axes[0])
    np.testing.assert_array_equal(moving.get_offsets(), h.frames[-1][:1])
    plain = ss.System(dim=3)
    plain.add_nodes([[0, 0, 0], [1, 0, 0]])
    assert radii_artists(draw(plain)) == []
    plain.radii = 0.2
    assert len(radii_artists(draw(plain))) == 1


def test_radii_and_groups_follow_their_nodes_through_add_and_remove():
    a = ss.System(dim=2)
    a.add_nodes([[0, 0], [1, 0], [2, 0]])
    a.radii, a.groups = [0.1, 0.2, 0.3], [4, 5, 6]
    b = ss.System(dim=2)
    b.add_nodes([[0, 5]])
    b.contact_radius = 0.7  # b's default: a's nodes bring their own radii
    b.add(a)
    assert b.radii.tolist() == [0.0, 0.1, 0.2, 0.3] and b.groups.tolist() == [0, 4, 5, 6]
    b.remove_nodes([2])
    assert b.radii.tolist() == [0.0, 0.1, 0.3] and b.groups.tolist() == [0, 4, 6]


def test_run_records_the_contact_energy_and_its_books_balance():
    # run() records energy().contact (in History.total) at every record: while the
    # blocks overlap it is positive, and total + dissipated stays within the method's
    # error (velocity Verlet; first order at the impacts: 1 % at 0.1 critical_dt).
    sim = jelly_blocks(e=0.5)
    h = sim.run(0.06, 0.1 * sim.critical_dt(), method="velocity_verlet", progress=False)
    assert h.contact.max() > 0 and h.contact[0] == 0.0
    np.testing.assert_allclose(
        h.total, h.kinetic + h.elastic + h.gravity + h.pressure + h.contact, rtol=1e-15
    )
    books = h.total + h.dissipated
    assert np.abs(books - books[0]).max() <= 0.01 * books[0]
    assert h.dissipated[-1] > 0.05 * books[0]


def test_implicit_euler_holds_a_contact_beyond_the_explicit_limit():
    # implicit_euler takes each contact into its Jacobian (a compressed spring k_c with
    # its dashpot along the normal), so at twice critical_dt() (which counts k_c) it
    # stays stable and only damps: the balls part no faster than they met. Symplectic
    # Euler at that dt gains energy at the contact (measured: 6.9 times the speed).
    leaving = {}
    for method in ("implicit_euler", "symplectic_euler"):
        sim = two_balls(0.5)
        dt = 2.0 * sim.critical_dt()
        closest = collide(sim, dt, method=method, duration=0.5)
        assert closest > 0.1  # they never passed through each other
        np.testing.assert_allclose(sim.momentum(), 0.0, atol=1e-14)
        leaving[method] = sim.velocities[1, 0]
    assert 0.0 < leaving["implicit_euler"] <= 1.0 < leaving["symplectic_euler"]
