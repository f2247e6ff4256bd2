"""Node–node contact at its defaults (issue 27, items 1, 2 and 5): radii set, nothing else.

By default (``contact_stiffness = None``) each touching pair's stiffness comes from the
substep dt of the call: k = m_eff ω_c², ω_c = a / dt with
a = min(0.1, 0.3 / (2ζ + 2·[μ > 0])) (csrc/kernel/contact/contact.c, "The stiffness from
the step"). A load F then rests at an overlap F / k = F dt² / (m_eff a²), and an impact at
relative speed v overlaps by at most v / ω_c = v dt / a (the undamped linear law's deepest
overlap, v √(m_eff / k)). The scenes are the issue's: two balls meeting head-on, 100 balls
poured into a box, a stack of 10 jelly cubes on a plane, two jelly cubes placed
overlapping.
"""

import pickle

import numpy as np
import pytest

import springsim as ss
from springsim import reference

A = 0.1  # ω_c dt of the default law (restitution 0.5, no friction)


def zeta(e):
    return 1.0 if e == 0 else -np.log(e) / np.sqrt(np.pi**2 + np.log(e) ** 2)


def omega_dt(e, mu):
    damping = 2 * zeta(e) + (2.0 if mu > 0 else 0.0)
    return min(0.1, 0.3 / damping) if damping > 0 else 0.1


def worst_overlap(sim, r):
    """The deepest overlap of the pairs touching now, m (0 with none)."""
    pairs = sim.contact_pairs()
    if len(pairs) == 0:
        return 0.0
    gap = np.linalg.norm(sim.positions[pairs[:, 1]] - sim.positions[pairs[:, 0]], axis=1)
    return float((2 * r - gap).max())


# ---- the law ------------------------------------------------------------------------


@pytest.mark.parametrize(("e", "mu"), [(0.5, 0.0), (0.0, 0.0), (0.5, 0.4), (1.0, 0.0)])
def test_each_pair_gets_m_eff_times_omega_c_squared_from_the_step(e, mu):
    # Three overlapping pairs of unequal masses, one partner pinned (infinitely heavy:
    # m_eff is the free node's mass). energy().contact is ½ Σ k δ², k = m_eff (a/dt)²,
    # at the dt of the last step call; none before the first.
    sim = ss.System(dim=2)
    sim.gravity = 0
    x = [[0, 0], [0.15, 0], [0, 5], [0.18, 5], [5, 0], [5.12, 0]]
    sim.add_nodes(x, masses=[1.0, 3.0, 0.5, 0.5, 2.0, 1.0])
    sim.pin(4)
    sim.radii = 0.1
    sim.contact_restitution, sim.contact_friction = e, mu
    assert sim.contact_stiffness is None  # the default
    assert sim.energy().contact == 0.0  # no step yet: no stiffness
    dt = 1e-3
    delta_before = 0.2 - np.array([0.15, 0.18, 0.12])
    sim.step(dt, steps=1, method="symplectic_euler")
    d = sim.positions[[1, 3, 5]] - sim.positions[[0, 2, 4]]
    delta = 0.2 - np.linalg.norm(d, axis=1)
    m_eff = np.array([0.75, 0.25, 1.0])
    a = omega_dt(e, mu)
    assert a == reference.Contact(np.zeros(0), np.zeros(0), None, e, mu).omega_dt()
    expected = 0.5 * np.sum(m_eff * (a / dt) ** 2 * delta**2)
    assert sim.energy().contact == pytest.approx(expected, rel=1e-12)
    assert np.all(delta < delta_before)  # pushed apart
    # the kernel's constants are the reference's
    assert (ss._core.CONTACT_OMEGA_DT, ss._core.CONTACT_DAMPING_DT) == (
        reference.CONTACT_OMEGA_DT,
        reference.CONTACT_DAMPING_DT,
    )


@pytest.mark.parametrize("method", ["symplectic_euler", "rk4", "implicit_euler"])
def test_a_resting_overlap_is_g_dt_squared_over_a_squared(method):
    # A ball resting on a pinned ball: k δ = m g with k = m (a/dt)², so δ = g dt² / a²,
    # whatever the mass: it shrinks four times when dt halves. At rest the integrators
    # hold the static balance exactly (to round-off; 1e-9 allows for the dashpot's
    # decay of the first bounce to 1e-11 of it).
    overlaps = []
    for dt in (1e-3, 5e-4):
        sim = ss.System(dim=2)
        sim.add_nodes([[0.0, 0.0], [0.0, 0.2]], masses=[1.0, 7.0])
        sim.pin(0)
        sim.radii = 0.1
        sim.step(dt, steps=int(2.0 / dt), method=method)
        overlaps.append(0.2 - sim.positions[1, 1])
        assert overlaps[-1] == pytest.approx(9.81 * dt**2 / A**2, rel=1e-9)
    assert overlaps[0] / overlaps[1] == pytest.approx(4.0, rel=1e-9)


def test_critical_dt_leaves_the_law_from_the_step_out():
    # Two balls and no spring: nothing but the contact acts, and the law from the step is
    # stable at every dt (ω_c dt = a), so there is no limit; a number in N/m has one.
    sim = ss.System(dim=2)
    sim.gravity = 0
    sim.add_nodes([[0, 0], [0.15, 0]], masses=[1.0, 1.0])
    sim.radii = 0.1
    assert sim.critical_dt() == np.inf
    sim.step(1e-3)
    assert sim.critical_dt() == np.inf  # not a moving target either
    sim.contact_stiffness = 1e4
    assert 0.0 < sim.critical_dt() < 2 / np.sqrt(2 * 1e4 / 1.0)  # (the dashpot lowers it)


def test_the_contact_energy_is_counted_at_the_last_calls_dt(tmp_path):
    # The dt is state: a copy, a pickle and a file keep it; a call that fails does not
    # change it; what was kept then steps (and counts) bit for bit like the original.
    sim = ss.System(dim=2)
    sim.gravity = 0
    sim.add_nodes([[0, 0], [0.15, 0], [5, 0], [6.5, 0]], masses=1.0)
    sim.add_springs([2, 3], stiffness=1e6, rest_lengths=1.0)  # stretched: unstable at 1e-2
    sim.radii = [0.1, 0.1, 0.0, 0.0]
    sim.step(1e-4)
    energy = sim.energy().contact
    assert energy > 0 and sim._contact_dt() == 1e-4
    assert sim.copy().energy().contact == energy
    with pytest.raises(ss.UnstableError):
        sim.step(1e-2, steps=100)  # rolled back, and its dt with it
    assert sim.energy().contact == energy and sim._contact_dt() == 1e-4
    sim.contact_restitution = 0.5  # a setter: the law is the same
    assert sim.energy().contact == energy
    ref = reference.State.from_system(sim)
    assert reference.contact_energy(ref, ref.x) == pytest.approx(energy, rel=1e-12)
    sim.save(tmp_path / "s.npz")
    twins = [pickle.loads(pickle.dumps(sim)), ss.load(tmp_path / "s.npz")]
    for twin in twins:
        assert twin.contact_stiffness is None and twin.energy().contact == energy
    for each in (sim, *twins):
        each.step(1e-4)
    for twin in twins:
        assert twin.energy().contact == sim.energy().contact
        np.testing.assert_array_equal(twin.positions, sim.positions)


def test_none_sets_the_law_from_the_step_and_numbers_must_be_positive():
    sim = ss.System(dim=2)
    sim.contact_stiffness = 3e3
    assert sim.contact_stiffness == 3e3
    sim.contact_stiffness = None
    assert sim.contact_stiffness is None
    for bad in (0.0, -0.0, -1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="contact_stiffness"):
            sim.contact_stiffness = bad
        assert sim.contact_stiffness is None
    with pytest.raises(TypeError, match="contact_stiffness"):
        sim.contact_stiffness = "stiff"


def test_a_file_keeps_the_law_from_the_step_and_an_old_files_number(tmp_path):
    sim = ss.System(dim=2)
    sim.add_nodes([[0, 0], [0.15, 0]])
    sim.radii = 0.1
    sim.save(tmp_path / "new.npz")
    assert np.load(tmp_path / "new.npz")["contact_law"][1] == 0.0  # "from the step"
    assert ss.load(tmp_path / "new.npz").contact_stiffness is None
    sim.contact_stiffness = 1e4  # what every file before the law from the step holds
    sim.save(tmp_path / "old.npz")
    assert ss.load(tmp_path / "old.npz").contact_stiffness == 1e4


@pytest.mark.parametrize("method", ["symplectic_euler", "velocity_verlet", "rk4"])
def test_the_energy_books_balance_to_the_contacts_error(method):
    # Two 1 kg 4 x 4 x 4 jelly blocks flying into each other at 2 m/s (as in
    # test_node_contact.py), with the stiffness from the step: total + dissipated keeps
    # its start to within the contacts' own error. The law's force has no step (the
    # dashpot is capped at twice the spring, so the force starts and ends at 0): what is
    # left is the method's error over a contact resolved by about pi / a = 31 substeps,
    # of order a^2 = 1 % of the energy that goes through it (measured 0.002 to 0.75 %,
    # with 16 to 26 % of the energy dissipated).
    for fraction in (0.2, 0.05):
        kw = {"size": (0.3, 0.3, 0.3), "mass": 1.0, "stiffness": 2000.0}
        sim = ss.jelly(4, 4, 4, **kw)
        sim.add(ss.jelly(4, 4, 4, origin=(0.4, 0.05, 0.02), **kw))
        sim.gravity = 0
        sim.radii = 0.45 * 0.1
        sim.velocities[:64, 0], sim.velocities[64:, 0] = 1.0, -1.0
        sim.track_energy = True
        dt = fraction * sim.critical_dt()  # the springs' limit
        sim.step(dt, method=method)  # the law has a dt from here on
        start = sim.energy().total + sim.dissipated
        booked = [sim.dissipated]
        for _ in range(6):  # the capped dashpot's power -F_d v_n is never negative
            sim.step(dt, steps=int(0.01 / dt), method=method)
            booked.append(sim.dissipated)
        assert np.all(np.diff(booked) >= 0.0)
        assert sim.dissipated > 0.1  # the dashpots took a real share
        assert abs(sim.energy().total + sim.dissipated - start) <= A * A * start


# ---- two balls meeting head-on --------------------------------------------------------


def two_balls(e=None):
    """The issue's scene: 1 kg balls of radius 0.1 m, 4r apart, closing at 2 m/s, 2D."""
    sim = ss.System(dim=2)
    sim.gravity = 0
    sim.add_nodes([[0, 0], [0.4, 0]], masses=1.0, velocities=[[1, 0], [-1, 0]])
    sim.radii = 0.1
    if e is not None:
        sim.contact_restitution = e
    return sim


def collide(sim, method, dt=1e-4):
    """Step through the collision one substep at a time: the closest approach, m."""
    closest = np.inf
    for _ in range(int(0.25 / dt)):
        sim.step(dt, method=method)
        closest = min(closest, sim.positions[1, 0] - sim.positions[0, 0])
    return closest


@pytest.mark.parametrize("method", ss.METHODS)
def test_two_balls_at_the_defaults_come_no_closer_than_98_percent_of_2r(method):
    # The undamped law's deepest overlap is v / ω_c = v dt / a = 2 mm (1 % of 2r); the
    # dashpot makes it less (measured 0.74 to 0.77 times that with e = 0.5; 0.96 with
    # e = 0.9 and 1).
    sim = two_balls()
    closest = collide(sim, method)
    assert closest >= 0.98 * 0.2
    assert 0.2 - closest <= 2.0 * 1e-4 / A
    np.testing.assert_allclose(sim.momentum(), 0.0, atol=1e-10 * 2.0)


@pytest.mark.parametrize("phase", [0.0, 0.3, 0.7])
@pytest.mark.parametrize("e", [0.1, 0.5, 0.9, 1.0])
@pytest.mark.parametrize("method", ss.METHODS)
def test_two_balls_leave_with_the_restitution_within_1_percent(method, e, phase):
    # The target, at several impact phases: the balls start `phase` of a
    # substep's approach (v dt = 0.2 mm) further apart, so that they meet at another
    # point within a substep. A contact lasts about π / a = 31 substeps whatever dt is,
    # so the step's error in the bounce does not shrink with dt; the law is built so
    # that it is small: the dashpot (at most twice the spring) puts no step in the force
    # at the impact or the release, and its damping ratio is calibrated for each method
    # so that the bounce, averaged over the impact phase, leaves at e (contact.c, "The
    # restitution of the law from the step"). What is left depends on the phase:
    # measured at most 0.6 % over 12 phases and e = 0.1 to 1, every method (XPBD's
    # restitution is exact: a velocity pass).
    sim = two_balls(e)
    sim.positions[1, 0] += phase * 2.0 * 1e-4
    closest = collide(sim, method)
    ratio = (sim.velocities[1, 0] - sim.velocities[0, 0]) / 2.0
    assert abs(ratio / e - 1.0) <= 0.01
    assert closest >= 0.98 * 0.2
    np.testing.assert_allclose(sim.momentum(), 0.0, atol=1e-10 * 2.0)  # round-off


@pytest.mark.parametrize("method", ss.FORCE_METHODS)
def test_the_law_from_the_step_is_the_references(method):
    # An oblique, frictional collision of unequal balls at e = 0.3: the kernel's law (the
    # capped dashpot, its calibration for the method, implicit Euler leaving it
    # explicit) against springsim.reference's own, to round-off over the contact.
    sim = ss.System(dim=2)
    sim.gravity = 0
    sim.add_nodes([[0, 0], [0.2007, 0.03]], masses=[1.0, 2.0], velocities=[[1, 0.3], [-1, 0]])
    sim.radii = 0.1
    sim.contact_restitution, sim.contact_friction = 0.3, 0.4
    ref = reference.State.from_system(sim)
    for _ in range(60):  # in contact from the fourth substep to past the release
        sim.step(1e-4, method=method)
        reference.step(ref, 1e-4, method=method)
    assert sim.velocities[1, 0] > sim.velocities[0, 0]  # they have parted
    np.testing.assert_allclose(sim.positions, ref.x, rtol=0, atol=1e-14)
    np.testing.assert_allclose(sim.velocities, ref.v, rtol=0, atol=1e-12)


@pytest.mark.parametrize("method", ss.FORCE_METHODS)
def test_the_calibration_finds_e_in_the_references_model(method):
    # The calibrated damping ratio, from the reference's own 1D model of one contact
    # (reference.calibrated_zeta), makes the reference's two-ball bounce leave at e; and
    # it lies above the textbook ζ (the cap takes some of the dashpot's work away),
    # except for explicit Euler's gain, which needs more.
    for e in (0.1, 0.5, 0.9):
        z = reference.calibrated_zeta(e, False, method)
        assert zeta(e) < z < 10.0
        ref = reference.State.from_system(two_balls(e))
        ref.x[1, 0] = 0.2 + 0.5e-3  # touching after 2.5 substeps
        for _ in range(100):
            reference.step(ref, 1e-4, method=method)
        assert abs((ref.v[1, 0] - ref.v[0, 0]) / 2.0 / e - 1.0) <= 0.01


# ---- 100 balls poured into a box --------------------------------------------------------


def poured(seed=0):
    """The issue's pile: 100 balls of radius 4 cm (1 kg, the default) in a box of three
    planes (the floor and two walls, 0.96 m apart: 12 balls), poured as a loose lattice,
    every other row over the gaps of the one below, 2.2 r apart, jittered."""
    rng = np.random.default_rng(seed)
    n, r, width = 100, 0.04, 0.96
    row, column = np.divmod(np.arange(n), 10)
    x = np.empty((n, 2))
    x[:, 0] = 1.1 * r + 2.2 * r * column + 1.1 * r * (row % 2) + rng.uniform(0, 0.05 * r, n)
    x[:, 1] = 1.2 * r + 2.2 * r * row + rng.uniform(0, 0.05 * r, n)
    sim = ss.System(dim=2)
    sim.add_nodes(x)
    sim.radii = r
    sim.add_plane([0, 1], r)  # planes act on node centres: each stands r in
    sim.add_plane([1, 0], r)
    sim.add_plane([-1, 0], -(width - r))
    return sim, r


@pytest.mark.parametrize("method", ss.METHODS)
def test_a_hundred_balls_poured_at_the_defaults_rest_without_sinking(method):
    # At rest a contact of the bottom rows carries the balls above it: about 9 rows of
    # m g, shared by two contacts at 60° (÷ √3): δ ≈ 9 m g / (√3 k), k = m/2 (a/dt)²,
    # 1.0 % of r at dt = 2e-4 s (measured 0.97-1.08 %; with the old 1e4 N/m, 34 %);
    # checked against twice that and the target, 2 %.
    # After 3 s no ball moves faster than 1 cm/s (measured at most 2.2e-3 m/s), measured
    # as distance over the last 50 ms: explicit Euler's velocity lags its position by a
    # step, so a ball pressed onto the floor shows v = dt × (its load / m), 2 cm/s here,
    # while it stays where it is.
    sim, r = poured()
    dt = 2e-4
    sim.step(dt, steps=int(2.95 / dt), method=method)
    before = sim.positions.copy()
    sim.step(dt, steps=int(0.05 / dt), method=method)
    moved = np.linalg.norm(sim.positions - before, axis=1).max()
    assert moved / 0.05 < 0.01
    speed = np.linalg.norm(sim.velocities, axis=1).max()
    if method == "euler":
        assert speed < dt * 100 * 9.81  # at most the whole heap's weight on one ball
    else:
        assert speed < 0.01
    assert worst_overlap(sim, r) < 0.02 * r
    assert worst_overlap(sim, r) < 2 * 9 * 9.81 / (np.sqrt(3) * 0.5 * (A / dt) ** 2)
    assert len(sim.contact_pairs()) > 150  # a heap, not a rain
    # vbd holds the floor by contact energy, k_c = κ m / dt² (vbd.c): a bottom ball under
    # at most the heap's 10 rows goes in by 10 m g / k_c at most
    sink = 10 * 9.81 * dt * dt / reference.VBD_CONTACT_KAPPA if method == "vbd" else 1e-9
    assert np.all(sim.positions[:, 1] >= r - sink)


# ---- a stack of 10 jelly cubes ------------------------------------------------------------


def jelly_stack(stiffness=5000.0, kick=0.02, seed=1):
    """Ten jelly cubes on a plane: 4 and 3 nodes a side by turns (4 at the bottom), 5 cm
    apart, each centred on one vertical axis, so that the 3 x 3 bottom face of a small
    cube sits in the hollows of the 4 x 4 face below it and the middle 2 x 2 of a big
    cube's in those of the 3 x 3 face below: they hold without friction. (Nodes stacked
    straight on nodes, balls on balls, fall off each other at the slightest push, and
    regularised friction only slows that.) 4 g a node, radius 0.4 of the spacing; every
    node kicked at up to `kick` m/s, so that nothing holds by symmetry alone."""
    s = 0.05
    r = 0.4 * s
    lift = np.sqrt((2 * r) ** 2 - 0.5 * s * s)  # a node in the hollow of four below
    sim, y, cubes = None, 0.0, []
    for c in range(10):
        n = 4 if c % 2 == 0 else 3
        size = (n - 1) * s
        cube = ss.jelly(
            n, n, n, size=size, mass=0.004 * n**3, stiffness=stiffness, damping_ratio=0.3,
            origin=(-size / 2, y, -size / 2),
        )  # fmt: skip
        first = 0 if sim is None else sim.num_nodes
        cubes.append(slice(first, first + n**3))
        y += size + lift
        if sim is None:
            sim = cube
        else:
            sim.add(cube)
    sim.radii = r
    sim.velocities = np.random.default_rng(seed).uniform(-kick, kick, sim.velocities.shape)
    sim.add_plane([0, 1, 0], 0.0)
    return sim, r, cubes


def stack_holds(method, duration):
    sim, r, cubes = jelly_stack()
    # the springs' limit (the law from the step is not in it); vbd, a large-step
    # method with its contacts in the solve, at the step it is for: 1/240 s, 23 times
    # that (measured 0.47 % of r there)
    dt = 1 / 240 if method == "vbd" else 0.5 * sim.critical_dt()
    top = sim.positions[:, 1].max()
    for _ in range(int(duration / 0.5)):
        sim.step(dt, steps=int(0.5 / dt), method=method)
        assert worst_overlap(sim, r) < 0.02 * r
    centres = np.array([sim.positions[c].mean(axis=0) for c in cubes])
    assert np.abs(centres[:, [0, 2]] - centres[0, [0, 2]]).max() < 0.005  # upright
    assert sim.positions[:, 1].max() > top - 0.01  # not crushed
    # The bottom interface carries the 9 cubes above (1.56 kg) on 36 contacts (9 nested
    # nodes touching 4 each, 62° from the vertical): δ ≈ W / (36 cos 62° k), with
    # k = m_eff (a/dt)², m_eff = 2 g: 0.31 % of r at this dt (measured 0.34-0.38 %).
    return worst_overlap(sim, r)


def test_a_stack_of_ten_jelly_cubes_holds_with_symplectic_euler():
    assert stack_holds("symplectic_euler", 1.0) < 0.02 * 0.02


@pytest.mark.slow
@pytest.mark.parametrize("method", ss.METHODS)
def test_a_stack_of_ten_jelly_cubes_holds_with_every_method(method):
    assert stack_holds(method, 3.0) < 0.02 * 0.02


# ---- bodies placed overlapping ----------------------------------------------------------


def overlapping_cubes(overlap=0.015):
    """The issue's scene: two 3 x 3 x 3 jelly cubes (20 cm, 1 kg) placed with their
    contact radii (4 cm) overlapping by 1.5 cm face to face; no gravity."""
    size, r = 0.2, 0.04
    kw = {"size": size, "mass": 1.0, "stiffness": 2000.0, "damping_ratio": 0.5}
    a = ss.jelly(3, 3, 3, **kw)
    a.add(ss.jelly(3, 3, 3, origin=(size + 2 * r - overlap, 0, 0), **kw))
    a.radii = r
    a.gravity = 0
    return a


@pytest.mark.parametrize("stiffness", [None, 1e4])
@pytest.mark.parametrize("method", ss.METHODS)
def test_bodies_placed_overlapping_are_pushed_apart_not_reported_diverged(method, stiffness):
    # The divergence watch counts what the overlaps store as available to the motion
    # (with 1e4 N/m: 9 pairs of ½ k δ² = 10.1 J; the issue saw this reported diverged at
    # 6 ms). The jelly is damped (ζ = 0.5) so that explicit Euler is stable on its springs.
    sim = overlapping_cubes()
    sim.contact_stiffness = stiffness
    if stiffness is not None:
        assert sim.energy().contact == pytest.approx(9 * 0.5 * 1e4 * 0.015**2, rel=1e-9)
    dt = 0.5 * sim.critical_dt()
    sim.step(dt, steps=int(0.2 / dt), method=method)  # 64-substep books, and short calls:
    for _ in range(50):
        sim.step(dt, steps=3, method=method)
    half = sim.num_nodes // 2
    assert len(sim.contact_pairs()) == 0  # apart
    assert sim.velocities[half:, 0].mean() > sim.velocities[:half, 0].mean() + 0.5
    assert np.isfinite(sim.positions).all()
