"""run()'s probes: nodes, springs and bodies recorded at each frame, against closed
forms and against sums written here in NumPy from the frames; the table and its CSV."""

import csv
import pickle

import numpy as np
import pytest
from state import assert_same, snapshot

import springsim as ss


def ring(center, velocity, nodes=8, radius=0.1, mass=0.4):
    sim = ss.ball(radius=radius, mass=mass, stiffness=400.0, dim=2, nodes=nodes, center=center)
    sim.velocities = velocity
    return sim


def test_a_body_thrown_in_gravity_against_the_closed_form():
    # A 3D ball thrown at v0, no spring stretched: every node moves alike, so the body's
    # momentum is M (v0 + g t), its centre of mass c0 + v0 t + ½ g t² (RK4 is exact for
    # constant acceleration: round-off only, 1e-12), its kinetic energy all bulk
    # (internal 0 up to round-off in v_cm) and kinetic + gravity constant.
    ball = ss.ball(radius=0.2, mass=1.5, stiffness=300.0, dim=3, subdivisions=1)
    v0 = np.array([1.0, 4.0, -0.5])
    ball.velocities = v0
    c0, m, g = ball.center_of_mass(), ball.masses.sum(), np.array(ball.gravity)
    h = ball.run(0.6, dt=1e-3, method="rk4", frames=13, bodies=True, progress=False)
    body = h.body(0)
    t = (body.times - body.times[0])[:, None]
    np.testing.assert_array_equal(body.nodes, np.arange(ball.num_nodes))
    np.testing.assert_allclose(body.mass, m, rtol=1e-15)
    np.testing.assert_allclose(body.momentum, m * (v0 + g * t), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(body.center_of_mass, c0 + v0 * t + 0.5 * g * t**2, atol=1e-12)
    speed2 = np.sum((v0 + g * t) ** 2, axis=1)
    np.testing.assert_allclose(body.bulk_kinetic, 0.5 * m * speed2, rtol=1e-12)
    np.testing.assert_allclose(body.kinetic, body.bulk_kinetic, rtol=1e-12)
    assert body.internal_kinetic.max() < 1e-24 * body.kinetic.max()
    assert body.elastic.max() < 1e-20
    np.testing.assert_allclose(body.energy, body.energy[0], rtol=1e-12)
    np.testing.assert_allclose(
        body.gravity, -m * (body.center_of_mass @ g), rtol=1e-12, atol=1e-12 * m * 9.81
    )


def test_a_spinning_wobbling_body_against_sums_over_its_frames():
    # A 2D ring thrown, spun and shaken, beside a string: bodies=True gives the two
    # pieces of sim.bodies(); each figure equals its definition summed here in NumPy
    # over the frames' positions and velocities (1e-12: the same sums in another order).
    sim = ring(center=(0.0, 0.0), velocity=(0.5, 1.0), nodes=10)
    x = sim.positions - sim.center_of_mass()
    sim.velocities += 3.0 * np.column_stack([-x[:, 1], x[:, 0]])  # spin at 3 rad/s
    sim.velocities += np.random.default_rng(1).normal(0.0, 0.2, sim.velocities.shape)
    sim.add(ss.string(5, length=0.5, mass=0.1, stiffness=50.0, dim=2, start=(1.0, 0.0)))
    labels = sim.bodies()
    h = sim.run(0.4, dt=5e-4, method="rk4", frames=9, bodies=True, progress=False)
    m, g = sim.masses, np.array(sim.gravity)
    springs, k, rest = sim.springs, sim.stiffness, sim.rest_lengths
    assert len(h.body_offsets) - 1 == labels.max() + 1 == 2
    for b in range(2):
        body = h.body(b)
        nodes = np.flatnonzero(labels == b)
        np.testing.assert_array_equal(body.nodes, nodes)
        mb, xb, vb = m[nodes], h.frames[:, nodes], h.frame_velocities[:, nodes]
        mass = mb.sum()
        p = np.einsum("i,fij->fj", mb, vb)
        v_cm = p / mass
        kinetic = 0.5 * np.einsum("i,fij,fij->f", mb, vb, vb)
        relative = vb - v_cm[:, None, :]
        internal = 0.5 * np.einsum("i,fij,fij->f", mb, relative, relative)
        inside = np.isin(springs, nodes).all(axis=1)
        a, c = springs[inside].T
        length = np.linalg.norm(h.frames[:, c] - h.frames[:, a], axis=2)
        elastic = 0.5 * np.sum(k[inside] * (length - rest[inside]) ** 2, axis=1)
        np.testing.assert_allclose(body.momentum, p, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(
            body.center_of_mass, np.einsum("i,fij->fj", mb, xb) / mass, rtol=1e-12, atol=1e-15
        )
        np.testing.assert_allclose(body.kinetic, kinetic, rtol=1e-12)
        np.testing.assert_allclose(body.bulk_kinetic, 0.5 * mass * np.sum(v_cm**2, 1), rtol=1e-12)
        np.testing.assert_allclose(body.internal_kinetic, internal, rtol=1e-12)
        np.testing.assert_allclose(
            body.internal_kinetic, kinetic - body.bulk_kinetic, rtol=1e-9, atol=1e-15
        )
        np.testing.assert_allclose(body.elastic, elastic, rtol=1e-10, atol=1e-18)
        np.testing.assert_allclose(
            body.gravity, -np.einsum("i,fij,j->f", mb, xb, g), rtol=1e-12, atol=1e-15
        )
    ring_body = h.body(0)
    spin = 0.5 * 0.4 * 0.1**2 * 3.0**2  # ½ M r² ω² of the ring spinning at 3 rad/s
    assert ring_body.internal_kinetic.min() > 0.5 * spin  # it spins (and shakes)
    assert ring_body.elastic.max() > 0  # and wobbles


def test_a_node_record_is_the_oscillator_and_a_spring_record_its_spring():
    # One node on a spring to a pinned node, no gravity: x = L + A cos ω t and
    # v = −A ω sin ω t (RK4 at ω dt = 6e-3: 1e-7 of A); the spring's recorded length is
    # the distance between the recorded positions and its tension k (l − L) (no
    # damping), to round-off.
    mass, k, rest, amplitude = 0.3, 120.0, 1.0, 0.02
    omega = np.sqrt(k / mass)
    sim = ss.System(dim=2)
    sim.gravity = 0
    sim.add_nodes([[0.0, 0.0], [rest + amplitude, 0.0]], masses=[1.0, mass])
    sim.add_springs([[0, 1]], stiffness=k, rest_lengths=rest)
    sim.pin(0)
    h = sim.run(1.0, dt=3e-4, method="rk4", frames=23, springs=[0], progress=False)
    node, spring = h.node(1), h.spring(0)
    t = node.times
    np.testing.assert_allclose(
        node.positions[:, 0], rest + amplitude * np.cos(omega * t), atol=1e-7 * amplitude
    )
    np.testing.assert_allclose(
        node.velocities[:, 0], -amplitude * omega * np.sin(omega * t), atol=1e-7 * amplitude * omega
    )
    assert not node.pinned.any() and h.node(0).pinned.all()
    distance = np.linalg.norm(h.node(1).positions - h.node(0).positions, axis=1)
    np.testing.assert_allclose(spring.lengths, distance, rtol=1e-15)
    np.testing.assert_allclose(spring.tensions, k * (distance - rest), rtol=1e-9, atol=1e-12)
    assert spring.tensions.min() < 0 < spring.tensions.max()  # pulled and pushed


def test_a_spring_record_follows_its_spring_and_is_nan_once_torn():
    # Spring 2 of a string carrying a falling weight tears; the others are followed by
    # their nodes though the numbering shifts, their tension k (l − L) + c (v_j − v_i)·u
    # from the recorded frames.
    sim = ss.string(6, length=1.0, mass=0.1, stiffness=80.0, damping=0.02, dim=2, direction=(0, -1))
    sim.masses[-1] = 1.0
    sim.break_strains = np.where(np.arange(5) == 2, 0.02, np.inf)
    pairs, k, c = sim.springs.copy(), sim.stiffness.copy(), sim.damping.copy()
    rest = sim.rest_lengths.copy()
    h = sim.run(0.3, dt=1e-4, frames=16, springs=[1, 2, 4], progress=False)
    assert sim.num_springs == 4
    torn = np.isnan(h.spring(2).lengths)
    assert not torn[0] and torn[-1]
    assert np.array_equal(torn, np.isnan(h.spring(2).tensions))
    for j in (1, 4):
        a, b = pairs[j]
        d = h.frames[:, b] - h.frames[:, a]
        length = np.linalg.norm(d, axis=1)
        closing = np.sum((h.frame_velocities[:, b] - h.frame_velocities[:, a]) * d, 1) / length
        record = h.spring(j)
        np.testing.assert_allclose(record.lengths, length, rtol=1e-15)
        expected = k[j] * (length - rest[j]) + c[j] * closing
        np.testing.assert_allclose(record.tensions, expected, rtol=1e-10, atol=1e-12)


def test_colliding_bodies_conserve_momentum_body_by_body():
    # Two rings collide head-on through frictionless node-node contact, no gravity:
    # each body's momentum changes, their sum is the total Σ m v of the frames (round-
    # off) and stays the initial total (contact and spring forces come in equal and
    # opposite pairs: round-off, 1e-12 of the bodies' momenta).
    sim = ring(center=(-0.15, 0.0), velocity=(1.0, 0.0))
    sim.add(ring(center=(0.15, 0.02), velocity=(-0.5, 0.0), mass=0.8))
    sim.gravity = 0
    sim.radii = 0.03
    start = sim.momentum()
    h = sim.run(0.4, dt=2e-4, method="symplectic_euler", frames=21, bodies=True, progress=False)
    assert sim.num_nodes == 16 and len(h.body_offsets) == 3
    p0, p1 = h.body(0).momentum, h.body(1).momentum
    scale = np.abs(p0).max()
    total = np.einsum("i,fij->fj", sim.masses, h.frame_velocities)
    np.testing.assert_allclose(p0 + p1, total, rtol=0, atol=1e-13 * scale)
    np.testing.assert_allclose(
        p0 + p1, np.broadcast_to(start, p0.shape), rtol=0, atol=1e-12 * scale
    )
    assert np.abs(p0[-1] - p0[0]).max() > 0.2 * scale  # they did collide
    assert h.contact.max() > 0


def test_bodies_may_be_any_groups_of_nodes():
    sim = ring(center=(0.0, 0.0), velocity=(1.0, 0.0), nodes=6)
    top = sim.positions[:, 1] > 0
    h = sim.run(0.05, dt=1e-3, frames=3, bodies=[top, [0, 1]], progress=False)
    np.testing.assert_array_equal(h.body(0).nodes, np.flatnonzero(top))
    np.testing.assert_array_equal(h.body(1).nodes, [0, 1])
    m = sim.masses
    np.testing.assert_allclose(h.body(1).mass, m[0] + m[1])


def probed_run():
    sim = ring(center=(0.0, 0.0), velocity=(1.0, 2.0))
    sim.add(ss.string(4, length=0.3, mass=0.1, stiffness=30.0, dim=2, start=(0.5, 0.0)))
    return sim.run(
        0.1, dt=1e-3, record_every=7, frames=5, springs=[0, 9], bodies=True, progress=False
    )


def test_the_table_and_its_csv_hold_the_probes_at_the_frames(tmp_path):
    pd = pytest.importorskip("pandas")
    h = probed_run()
    frame = h.to_dataframe(nodes=[3])
    columns = list(frame.columns)
    assert columns[:10] == [
        "time",
        "kinetic",
        "elastic",
        "gravity",
        "pressure",
        "contact",
        "total",
        "dissipated",
        "momentum_x",
        "momentum_y",
    ]
    assert columns[10:16] == [
        "node3_x",
        "node3_y",
        "node3_vx",
        "node3_vy",
        "spring0_length",
        "spring0_tension",
    ]
    assert "body1_internal_kinetic" in columns and "body0_com_y" in columns
    # Each frame is on the record at its time; the other records have NaN there.
    rows = np.flatnonzero(np.isin(h.times, h.frame_times))
    assert len(rows) == len(h.frame_times) == 5 and len(frame) == len(h)
    np.testing.assert_array_equal(frame["node3_vy"].to_numpy()[rows], h.node(3).velocities[:, 1])
    np.testing.assert_array_equal(frame["spring9_tension"].to_numpy()[rows], h.spring(9).tensions)
    np.testing.assert_array_equal(frame["body1_px"].to_numpy()[rows], h.body(1).momentum[:, 0])
    np.testing.assert_array_equal(frame["body0_energy"].to_numpy()[rows], h.body(0).energy)
    others = np.setdiff1d(np.arange(len(h)), rows)
    assert np.isnan(frame["body0_mass"].to_numpy()[others]).all()
    # The CSV, read back with pandas and with the csv module, is the table exactly.
    path = h.to_csv(tmp_path / "run.csv", nodes=[3])
    assert path == tmp_path / "run.csv"
    pd.testing.assert_frame_equal(pd.read_csv(path), frame, check_exact=True)
    with open(path, newline="") as file:
        header, *lines = list(csv.reader(file))
    assert header == columns
    np.testing.assert_array_equal(np.array(lines, dtype=float), frame.to_numpy())


def test_the_probes_survive_pickling_and_count_in_equality():
    h = probed_run()
    copy = pickle.loads(pickle.dumps(h))
    assert copy == h
    np.testing.assert_array_equal(copy.body(1).internal_kinetic, h.body(1).internal_kinetic)
    np.testing.assert_array_equal(copy.spring(9).lengths, h.spring(9).lengths)
    copy.body_kinetic[2, 0] += 1e-9
    assert copy != h


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"springs": [0]}, ValueError, "springs= and bodies= are recorded at the frames"),
        ({"bodies": True}, ValueError, "springs= and bodies= are recorded at the frames"),
        ({"frames": 3, "springs": [19]}, ValueError, r"springs must be in \[0, 19\)"),
        ({"frames": 3, "springs": [0.5]}, TypeError, "springs must be integers"),
        ({"frames": 3, "bodies": 3}, TypeError, "bodies must be True"),
        ({"frames": 3, "bodies": [[0, 20]]}, ValueError, r"bodies\[0\] must be in \[0, 20\)"),
        ({"frames": 3, "bodies": [[]]}, ValueError, r"bodies\[0\] holds no node"),
        ({"frames": 3, "bodies": [[1, 1]]}, ValueError, r"bodies\[0\] names a node twice"),
        ({"frames": 3, "bodies": [5]}, ValueError, r"bodies\[0\] must be a 1-D array"),
    ],
)
def test_bad_probes_run_nothing(kwargs, error, match):
    sim = ss.string(20, length=1.0, mass=0.2, stiffness=100.0, dim=2)
    before = snapshot(sim)
    with pytest.raises(error, match=match):
        sim.run(0.01, 1e-3, progress=False, **kwargs)
    assert_same(before, snapshot(sim))


def test_asking_for_what_was_not_recorded_says_what_was():
    h = ss.string(5, length=1.0, mass=0.1, stiffness=10.0, dim=2).run(
        0.01, 1e-3, frames=2, frame_nodes=[1, 3], springs=[2], progress=False
    )
    with pytest.raises(ValueError, match=r"node 2 was not recorded: frame_nodes is \[1, 3\]"):
        h.node(2)
    with pytest.raises(ValueError, match=r"spring 0 was not recorded: spring_ids is \[2\]"):
        h.spring(0)
    with pytest.raises(ValueError, match="body 0 was not recorded: this run probed 0 bodies"):
        h.body(0)
    with pytest.raises(TypeError, match="index must be an int"):
        h.node(1.0)
    with pytest.raises(ValueError, match="node 2 was not recorded"):
        h.to_dataframe(nodes=[2])
