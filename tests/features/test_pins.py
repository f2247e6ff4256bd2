"""Pins hold: a pinned node moves only when its position is written, it is driven, or it
is dragged with ``pin(indices, velocity=...)``; held pins have no kinetic energy or
momentum. (The per-method bits, kernel against the NumPy oracle, are in
test_physics.py; driven paths in test_drive.py.)"""

import numpy as np
import pytest
from state import assert_same, snapshot

import springsim as ss
from springsim.model.pins import drives


def anchored_string():
    """The issue's string: 10 nodes, 1 m, 0.1 kg, 100 N/m, pinned at its start."""
    return ss.string(10, length=1.0, mass=0.1, stiffness=100.0, dim=2)


@pytest.mark.parametrize("method", ss.METHODS)
def test_an_anchor_given_a_velocity_stays_put(method):
    # Before: the anchor kept the 0.5 m/s written to every node and drifted 1 m in 2 s.
    s = anchored_string()
    s.divergence_factor = None  # explicit Euler gains energy here: pins are the point
    s.velocities = (0.5, 0.0)
    s.step(1e-3, steps=2000, method=method)
    assert s.positions[0].tolist() == [0.0, 0.0]
    assert s.velocities[0].tolist() == [0.0, 0.0]
    assert s.positions[-1, 0] > 0.5  # the free nodes did get the push


@pytest.mark.parametrize("method", ss.METHODS)
def test_pinning_a_falling_node_stops_it(method):
    # Before: pinned after 0.3 s of free fall, the node kept falling at g t = 2.943 m/s.
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 0.0], [1.0, 0.0]], masses=[1.0, 2.0])
    sim.step(1e-3, steps=300, method=method)
    assert sim.velocities[0, 1] == pytest.approx(-9.81 * 0.3, rel=1e-9)
    sim.pin(0)
    assert sim.velocities[0].tolist() == [0.0, 0.0]
    where = sim.positions[0].tolist()
    sim.step(1e-3, steps=300, method=method)
    assert sim.positions[0].tolist() == where
    assert sim.velocities[0].tolist() == [0.0, 0.0]
    assert sim.velocities[1, 1] == pytest.approx(-9.81 * 0.6, rel=1e-9)  # node 1 falls on


def test_kinetic_energy_and_momentum_are_those_of_the_moving_nodes():
    sim = ss.System(dim=2)
    sim.gravity = (0.0, 0.0)
    sim.add_nodes([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]], masses=[3.0, 2.0, 5.0])
    sim.velocities = [[4.0, 0.0], [1.0, -1.0], [0.0, 2.0]]
    sim.pin([0, 2])  # held at once: no energy, no momentum
    assert sim.energy().kinetic == 0.5 * 2.0 * 2.0
    assert sim.momentum().tolist() == [2.0, -2.0]
    sim.velocities[0] = (7.0, 7.0)  # written to a held node: stopped by the next step
    sim.step(0.1, steps=10)
    assert sim.energy().kinetic == 2.0 and sim.momentum().tolist() == [2.0, -2.0]
    sim.pin(2, velocity=(0.0, 3.0))  # dragged: it moves, so it counts
    sim.step(0.1, steps=10)
    assert sim.energy().kinetic == pytest.approx(2.0 + 0.5 * 5.0 * 9.0, rel=1e-12)
    np.testing.assert_allclose(sim.momentum(), [2.0, -2.0 + 15.0], rtol=1e-12)


def test_writing_a_pinned_position_moves_the_node_and_holds_it_there():
    s = anchored_string()
    s.step(1e-3, steps=100)
    s.positions[0] = (0.25, 0.5)
    s.step(1e-3, steps=100)
    assert s.positions[0].tolist() == [0.25, 0.5]
    assert s.spring_lengths()[0] < 0.5  # the string follows it


@pytest.mark.parametrize("method", ss.METHODS)
def test_dragging_moves_pins_at_a_constant_velocity(method):
    s = anchored_string()
    s.divergence_factor = None  # explicit Euler gains energy here: pins are the point
    s.pin([0, 9], velocity=[[0.5, 0.0], [0.0, -0.25]])  # one velocity per node
    start = s.positions[[0, 9]].copy()
    for _ in range(4):
        s.step(1e-3, steps=250, method=method)
        expected = start + np.array([[0.5, 0.0], [0.0, -0.25]]) * s.time
        np.testing.assert_allclose(s.positions[[0, 9]], expected, rtol=0, atol=1e-14)
        np.testing.assert_allclose(s.velocities[[0, 9]], [[0.5, 0.0], [0.0, -0.25]], atol=1e-10)
    assert s.pinned[[0, 9]].all()
    s.pin(0)  # stop dragging node 0: held where it is; node 9 goes on
    s.step(1e-3, steps=500, method=method)
    assert s.positions[0].tolist() == pytest.approx([0.5, 0.0], abs=1e-14)
    assert s.velocities[0].tolist() == [0.0, 0.0]
    assert s.positions[9, 1] == pytest.approx(-0.25 * s.time, abs=1e-14)


def test_one_drag_velocity_for_all_nodes_broadcasts():
    s = ss.string(3, length=1.0, mass=0.1, stiffness=10.0, dim=3, pin="both")
    s.gravity = (0.0, 0.0, 0.0)
    s.pin([0, 2], velocity=(0.0, 0.0, 1.0))
    s.step(1e-3, steps=1000)
    np.testing.assert_allclose(s.positions[[0, 2], 2], [1.0, 1.0], atol=1e-13)


def test_unpinning_a_dragged_node_lets_it_fly_on():
    sim = ss.System(dim=2)
    sim.gravity = (0.0, 0.0)
    sim.add_nodes([[0.0, 0.0]])
    sim.pin(0, velocity=(1.0, 2.0))
    sim.step(1e-3, steps=100)
    sim.unpin(0)
    assert not drives(sim)  # the drive ended with the pin
    sim.step(1e-3, steps=100)
    np.testing.assert_allclose(sim.positions[0], [0.2, 0.4], atol=1e-12)
    np.testing.assert_allclose(sim.velocities[0], [1.0, 2.0], atol=1e-9)


def test_pinning_one_node_of_a_drive_stops_only_that_node():
    s = ss.string(4, length=1.0, mass=0.1, stiffness=10.0, dim=2)
    path = np.array([[0.0, 0.0], [1.0, 0.0]])
    s.drive([0, 3], lambda t: path + [[0.0, t], [0.0, -t]])
    s.step(1e-3, steps=100)
    s.pin(3)  # held where it is now; node 0 keeps following its path
    s.step(1e-3, steps=100)
    np.testing.assert_allclose(s.positions[0], [0.0, 0.2], atol=1e-14)
    np.testing.assert_allclose(s.positions[3], [1.0, -0.1], atol=1e-14)
    assert s.velocities[3].tolist() == [0.0, 0.0]


def test_a_driven_step_holds_the_other_pins():
    # drive()'s substeps let pinned nodes keep their velocities (the drive sets its
    # nodes'): the pins it does not drive must still be held.
    s = ss.string(5, length=1.0, mass=0.1, stiffness=10.0, dim=2, pin="both")
    s.velocities = (0.0, 1.0)
    s.drive(2, lambda t: [0.5, 0.1 * t])
    s.step(1e-3, steps=100)
    assert s.positions[0].tolist() == [0.0, 0.0] and s.positions[4].tolist() == [1.0, 0.0]
    assert s.velocities[[0, 4]].tolist() == [[0.0, 0.0], [0.0, 0.0]]


@pytest.mark.parametrize(
    ("indices", "velocity", "error"),
    [
        (0, (1.0, 2.0, 3.0), ValueError),  # dim 2
        ([0, 1], [[1.0, 0.0]] * 3, ValueError),  # 3 rows for 2 nodes
        (0, (np.nan, 0.0), ValueError),
        (0, (np.inf, 0.0), ValueError),
        (0, "fast", TypeError),
        (10, (1.0, 0.0), ValueError),  # no node 10
        (-1, None, ValueError),
        ([1, 12], None, ValueError),
        (1.5, None, TypeError),
    ],
)
def test_bad_pins_raise_and_change_nothing(indices, velocity, error):
    s = anchored_string()
    s.step(1e-3, steps=10)
    s.velocities[[0, 1]] = (0.5, 0.5)  # a pinned velocity pin() would zero
    before = snapshot(s)
    with pytest.raises(error):
        s.pin(indices, velocity=velocity)
    assert_same(before, snapshot(s))
    assert not drives(s)


@pytest.mark.parametrize("method", ss.EXPLICIT_METHODS)
def test_a_rolled_back_step_gives_pins_their_velocities_back(method):
    # Holding the pins is part of the step call: a call that fails undoes it too.
    s = anchored_string()
    s.step(1e-4, steps=10, method=method)
    s.velocities[0] = (0.5, -0.25)
    before = snapshot(s)
    with pytest.raises(ss.UnstableError):
        s.step(100 * s.critical_dt(), steps=500, method=method)
    assert_same(before, snapshot(s))


def test_a_run_starts_from_the_held_state_and_its_books_balance():
    s = anchored_string()
    s.damping = 0.05
    s.velocities = (0.5, 0.0)
    free_kinetic = 0.5 * s.masses[1:].sum() * 0.25
    history = s.run(0.5, 1e-4, method="rk4", progress=False)
    assert history.kinetic[0] == pytest.approx(free_kinetic, rel=1e-12)  # not the anchor's
    books = history.total + history.dissipated
    assert abs(books - books[0]).max() < 1e-6 * abs(books[0])


def refuse(sim):
    raise RuntimeError("stop at the first record")


@pytest.mark.parametrize(
    ("dt", "callback", "error"),
    [(1e8, None, ss.UnstableError), (1e-3, refuse, RuntimeError)],
    ids=["blows_up_in_its_first_call", "callback_fails_at_the_first_record"],
)
def test_a_run_that_fails_before_its_first_substep_changes_nothing(dt, callback, error):
    # run() holds the pins before its first record; failing before any substep
    # stands, it gives them their velocities back.
    s = anchored_string()
    s.velocities[0] = (0.5, 0.0)
    before = snapshot(s)
    with pytest.raises(error):
        s.run(16 * dt, dt, record_every=16, progress=False, callback=callback)
    assert_same(before, snapshot(s))


def test_copies_and_pickles_keep_dragging():
    import pickle

    s = anchored_string()
    s.pin(0, velocity=(0.0, 1.0))
    s.step(1e-3, steps=10)
    for twin in (s.copy(), pickle.loads(pickle.dumps(s))):
        twin.step(1e-3, steps=10)
        np.testing.assert_allclose(twin.positions[0], [0.0, 0.02], atol=1e-14)


# Each way of moving a pinned node, applied to the anchored string after a first step
# (which left nothing to hold). Returns the system and its pinned nodes' positions,
# taken without making a view of the system after the move (a view would mark its
# arrays as written, which is one of the ways).


def through_a_dropped_view(s, _):
    s.velocities[0] = (0.5, 0.0)
    return s, {0: [0.0, 0.0]}


def by_assignment(s, _):
    s.velocities = (0.5, 0.0)  # copies in
    return s, {0: [0.0, 0.0]}


def through_a_kept_view(s, _):
    v = s.velocities  # held across a step: its writes come after the kernel looked
    s.step(1e-3)
    v[0] = (0.5, 0.0)
    return s, {0: [0.0, 0.0]}


def by_pinning_a_moving_node_through_the_view(s, _):
    s.unpin(0)
    s.velocities[0] = (0.5, 0.0)
    s.step(1e-3)
    where = s.positions[0].tolist()
    flags = s.pinned  # kept: set after the kernel looked
    s.step(1e-3)
    flags[0] = True
    where = s.copy().positions[0].tolist()
    return s, {0: where}


def as_new_pinned_nodes(s, _):
    s.add_nodes([[2.0, 0.0]], velocities=[[0.5, 0.0]], pinned=True)
    return s, {0: [0.0, 0.0], 10: [2.0, 0.0]}


def by_adding_a_system(s, _):
    other = ss.string(3, length=1.0, mass=0.1, stiffness=100.0, dim=2, start=(0.0, 1.0))
    other.step(1e-3)
    other.velocities[0] = (0.5, 0.0)
    other.step(1e-3)  # held in other; moving again below
    other.velocities[0] = (0.5, 0.0)
    s.add(other)
    return s, {0: [0.0, 0.0], 10: [0.0, 1.0]}


def in_a_copy(s, _):
    s.velocities[0] = (0.5, 0.0)
    return s.copy(), {0: [0.0, 0.0]}


def in_a_pickle(s, _):
    import pickle

    s.velocities[0] = (0.5, 0.0)
    return pickle.loads(pickle.dumps(s)), {0: [0.0, 0.0]}


def in_a_save_file(s, tmp_path):
    s.velocities[0] = (0.5, 0.0)
    s.save(tmp_path / "moving_pin.npz")
    return ss.load(tmp_path / "moving_pin.npz"), {0: [0.0, 0.0]}


ROUTES = [
    through_a_dropped_view,
    by_assignment,
    through_a_kept_view,
    by_pinning_a_moving_node_through_the_view,
    as_new_pinned_nodes,
    by_adding_a_system,
    in_a_copy,
    in_a_pickle,
    in_a_save_file,
]


@pytest.mark.parametrize("route", ROUTES, ids=[r.__name__ for r in ROUTES])
def test_every_way_of_moving_a_pin_is_held_by_the_next_step(route, tmp_path):
    # The kernel looks at the pinned velocities only when something may have written
    # them (a flag, so that a step call costs nothing more): each way must raise it.
    s = anchored_string()
    s.step(1e-3)  # holds the anchor: the flag is clear
    s, pins = route(s, tmp_path)
    nodes = list(pins)
    twin = s.copy()  # looked at in a copy: a view of s would raise the flag itself
    assert twin.pinned[nodes].all() and np.any(twin.velocities[nodes] != 0.0)
    s.step(1e-3, steps=10)
    np.testing.assert_array_equal(s.positions[nodes], list(pins.values()))
    np.testing.assert_array_equal(s.velocities[nodes], 0.0)


def test_dragging_no_nodes_adds_no_drive():
    s = anchored_string()
    s.pin([], velocity=(1.0, 0.0))
    assert not drives(s)
