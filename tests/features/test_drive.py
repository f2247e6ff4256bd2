"""Driven anchors: nodes that follow a prescribed path."""

import pickle
import threading
import time

import numpy as np
import pytest
from state import assert_same, snapshot

import springsim as ss
from springsim import reference
from springsim.model.pins import drives

K, M, N = 100.0, 0.1, 10  # spring stiffness, node mass, free nodes of the chain


def chain():
    """N free masses in a line between two pinned ends (longitudinal motion only)."""
    sim = ss.System(dim=2)
    sim.gravity = (0.0, 0.0)
    sim.add_nodes(np.column_stack([np.arange(N + 2), np.zeros(N + 2)]), masses=M)
    sim.pin([0, N + 1])
    sim.add_springs(
        np.column_stack([np.arange(N + 1), np.arange(1, N + 2)]), stiffness=K, damping=0.002
    )
    return sim


def fundamental() -> float:
    """The lowest normal mode of the fixed-fixed chain: 2 sqrt(k/m) sin(pi / (2 (N + 1)))."""
    return 2.0 * np.sqrt(K / M) * np.sin(np.pi / (2 * (N + 1)))


def response(omega: float) -> float:
    """Largest displacement of the middle node while the end is shaken at omega."""
    sim = chain()
    amplitude = 1e-3
    sim.drive(0, lambda t: [amplitude * np.sin(omega * t), 0.0])
    dt, middle, largest = 1e-3, N // 2, 0.0
    for _ in range(400):  # 8 s: about 12 periods of the fundamental
        sim.step(dt, steps=20, method="velocity_verlet")
        largest = max(largest, abs(sim.positions[middle, 0] - middle))
    return largest


def test_driving_at_the_fundamental_resonates():
    w1 = fundamental()
    at, below, above = response(w1), response(0.5 * w1), response(1.7 * w1)
    assert at > 4 * below and at > 4 * above, (at, below, above)


@pytest.mark.parametrize("method", ss.METHODS)
def test_driven_node_follows_the_path_exactly(method):
    sim = ss.string(6, length=1.0, mass=0.1, stiffness=50.0, dim=3, pin=None)
    path = lambda t: [0.2 * np.sin(3 * t), 0.1 * t, 0.0]  # noqa: E731
    sim.drive(5, path)
    for _ in range(30):
        sim.step(1e-3, steps=7, method=method)
        np.testing.assert_allclose(sim.positions[5], path(sim.time), rtol=0, atol=1e-15)
    assert sim.pinned[5]
    # The velocity is the one that carried the node along the last substep.
    expected = (np.array(path(sim.time)) - np.array(path(sim.time - 1e-3))) / 1e-3
    np.testing.assert_allclose(sim.velocities[5], expected, rtol=1e-9)


def test_array_path_is_used_one_target_per_substep_then_held():
    sim = ss.string(3, length=1.0, mass=0.1, stiffness=10.0, dim=2)
    targets = np.array([[[0.0, 0.1]], [[0.0, 0.2]], [[0.0, 0.3]]])
    sim.drive([0], targets)
    seen = []
    for _ in range(5):
        sim.step(1e-3)
        seen.append(sim.positions[0, 1])
    assert seen == [0.1, 0.2, 0.3, 0.3, 0.3]
    sim.drive([0], None)  # stop: pinned, at rest
    sim.step(1e-3, steps=3)
    assert sim.positions[0, 1] == 0.3 and np.all(sim.velocities[0] == 0.0)


def test_copy_carries_the_drive_and_its_progress():
    sim = ss.string(3, length=1.0, mass=0.1, stiffness=10.0, dim=2)
    sim.drive(0, np.linspace(0, 1, 10)[:, None, None] * [1.0, 0.0])
    sim.step(1e-3, steps=4)
    twin = sim.copy()
    sim.step(1e-3, steps=3)
    twin.step(1e-3, steps=3)
    assert np.array_equal(sim.positions, twin.positions)


def test_bad_paths_raise_and_change_nothing():
    sim = ss.string(4, length=1.0, mass=0.1, stiffness=10.0, dim=2)
    before = snapshot(sim)
    with pytest.raises(ValueError):
        sim.drive(7, lambda t: [0.0, 0.0])
    with pytest.raises(ValueError):
        sim.drive(0, np.zeros((5, 3, 2)))  # 3 targets for 1 node
    with pytest.raises(ValueError):
        sim.drive(0, [[[np.nan, 0.0]]])
    with pytest.raises(TypeError):
        sim.drive(0, "up")
    assert_same(before, snapshot(sim))
    sim.drive(1, lambda t: [0.0, 0.0] if t < 0.0025 else [np.inf, 0.0])
    before = snapshot(sim)
    with pytest.raises(ValueError, match="non-finite"):
        sim.step(1e-3, steps=5)  # fails on the third substep: the first two are undone
    assert_same(before, snapshot(sim))


def test_a_target_too_far_for_one_substep_raises_and_changes_nothing():
    # Finite targets whose difference overflows: (1.8e308 - 0) / dt is inf. The step
    # says the path is at fault (found by the fuzzer) and undoes its substeps; a run
    # stops there, keeping its earlier chunks, as for any bad path value.
    sim = ss.string(3, length=1.0, mass=0.1, stiffness=10.0, dim=2)
    sim.drive([0], np.array([[[0.0, 0.0]], [[0.0, 0.0]], [[0.0, np.finfo(float).max]]]))
    before = snapshot(sim)
    with pytest.raises(ValueError, match="drive path's target .* too far"):
        sim.step(1e-4, steps=4)
    assert_same(before, snapshot(sim))


def test_remove_nodes_renumbers_the_drives():
    # Before the fix a drive kept its old indices: the next step moved the wrong node
    # (or raised IndexError once the index was past the end).
    sim = ss.string(6, length=1.0, mass=0.1, stiffness=10.0, dim=2)
    path = np.array([[0.2, 0.0], [1.3, 0.5]])  # rows for nodes 1 and 5
    sim.drive([1, 5], lambda t: path)
    targets = np.zeros((1, 2, 2)) + [[[9.0, 9.0], [8.0, 8.0]]]
    sim.drive([2, 3], targets)
    sim.remove_nodes([0, 3])  # node 1 -> 0, 2 -> 1, 3 removed, 5 -> 3
    sim.step(1e-3, steps=2)
    assert sim.positions[0].tolist() == [0.2, 0.0]
    assert sim.positions[3].tolist() == [1.3, 0.5]
    assert sim.positions[1].tolist() == [9.0, 9.0]  # node 3's target row went with it
    sim.remove_nodes([0, 1, 3])  # every driven node gone: the drives go too
    sim.step(1e-3, steps=2)
    assert not drives(sim) and not sim._drive_paths


@pytest.mark.parametrize(
    "dt, steps, error",
    [
        (-1.0, 0, ValueError),
        (0.0, 1, ValueError),
        (np.nan, 1, ValueError),
        (1e-3, -5, ValueError),
        (1e-3, 2**63, ValueError),
        (1e-3, 1.5, TypeError),
        (1e-3, True, TypeError),
    ],
)
def test_a_driven_step_checks_its_arguments_first(dt, steps, error):
    sim = ss.string(4, length=1.0, mass=0.1, stiffness=10.0, dim=2)
    sim.drive(0, lambda t: [0.1 * t, 0.0])
    sim.step(1e-3, steps=2)
    before = snapshot(sim)
    with pytest.raises(error):
        sim.step(dt, steps)
    with pytest.raises(ValueError, match="unknown method"):
        sim.step(1e-3, 3, method="rk4\x00junk")
    assert_same(before, snapshot(sim))
    assert drives(sim)[0].counter == 2


def test_a_failed_driven_step_undoes_its_tearing_and_energy_books():
    # The drive pulls the string's end away: springs tear on early substeps, then the
    # path fails on a later one. Everything the call did is undone: the cut springs
    # are whole again, nothing is reported broken, dissipated is where it was.
    sim = ss.string(5, length=1.0, mass=0.1, stiffness=10.0, damping=0.1, dim=2)
    sim.gravity = (0.0, 0.0)
    sim.break_strain = 0.5  # the end moves 0.05 m a substep: spring 0-1 (0.25 m) tears on the 3rd
    sim.track_energy = True
    sim.drive(0, lambda t: [-50.0 * t, 0.0] if t < 0.0045 else [np.nan, 0.0])
    sim.step(1e-3, steps=1)
    assert sim.broken_springs().shape == (0, 2)
    before = snapshot(sim)
    dissipated = sim.dissipated
    with pytest.raises(ValueError, match="non-finite"):
        sim.step(1e-3, steps=5)
    assert_same(before, snapshot(sim))
    assert sim.dissipated == dissipated
    assert sim.broken_springs().shape == (0, 2)
    # The same substeps without the failure do tear: the undo above had work to do.
    sim.drive(0, lambda t: [-50.0 * t, 0.0])
    sim.step(1e-3, steps=3)
    assert sim.broken_springs().shape[0] > 0


# ---- drives in the kernel: the same bits as the substeps placed from Python ----------


@pytest.mark.parametrize("method", ss.METHODS)
def test_a_dragged_pin_is_on_its_line_exactly_after_every_call(method):
    # pin(velocity=v) at t0 drives the node along start + v (t - t0), t the clock (a sum
    # of dt): after each substep it is on that line to the bit, at the velocity that
    # took it there from the line's last point, whatever the method.
    sim = ss.string(12, length=1.0, mass=0.1, stiffness=100.0, damping=0.01, dim=2)
    sim.step(1e-3, steps=3)  # t0 is not 0
    v = np.array([0.3, -0.2])
    sim.pin(0, velocity=v)
    start, t0 = np.array(sim.positions[0]), sim.time
    dt, t = 0.25 * sim.critical_dt(), sim.time
    for steps in (1, 5, 70):
        sim.step(dt, steps=steps, method=method)
        for _ in range(steps):
            last, t = start + v * (t - t0), t + dt
        expected = start + v * (t - t0)
        assert sim.time == t
        assert sim.positions[0].tobytes() == expected.tobytes()
        assert sim.velocities[0].tobytes() == ((expected - last) / dt).tobytes()


@pytest.mark.parametrize("method", ss.METHODS)
def test_an_array_drive_ends_each_call_on_its_targets_exactly(method):
    sim = ss.string(6, length=1.0, mass=0.1, stiffness=50.0, dim=3, pin="both")
    rng = np.random.default_rng(3)
    targets = np.array(sim.positions[[0, 5]]) + rng.normal(0, 0.01, (9, 2, 3)).cumsum(axis=0)
    sim.drive([0, 5], targets)
    dt, done = 0.3 * sim.critical_dt(), 0
    for steps in (1, 3, 4, 6):  # the last one goes past the end: held at the last row
        sim.step(dt, steps=steps, method=method)
        done += steps
        assert sim.positions[[0, 5]].tobytes() == targets[min(done, 9) - 1].tobytes()
        assert drives(sim)[0].counter == done


def test_a_dragged_string_matches_a_numpy_loop_with_the_same_drive_rule():
    # The kernel's drive against symplectic Euler in plain NumPy with the rule written
    # out: before each substep the driven node gets v = (target - x) / dt, after it x =
    # target, target = start + v_drag (t + dt - t0). The driven node agrees to the bit,
    # the free nodes to rounding (the oracle sums forces in another order).
    sim = ss.string(30, length=1.0, mass=0.1, stiffness=100.0, damping=0.01, dim=2)
    drag = np.array([0.3, -0.2])
    sim.pin(0, velocity=drag)
    start = np.array(sim.positions[0])
    ref = reference.State.from_system(sim)
    dt, t = 0.5 * sim.critical_dt(), 0.0
    for _ in range(400):
        target = start + drag * ((t + dt) - 0.0)
        ref.v[0] = (target - ref.x[0]) / dt
        ref.v = ref.v + reference.accelerations(ref, ref.x, ref.v) * dt  # 0 for the pin
        ref.x = ref.x + ref.v * dt
        ref.x[0] = target
        t += dt
    sim.step(dt, steps=400)
    assert sim.positions[0].tobytes() == ref.x[0].tobytes()
    assert sim.velocities[0].tobytes() == ref.v[0].tobytes()
    assert np.abs(ref.x[1:] - start).max() > 0.1  # the string was dragged along
    np.testing.assert_allclose(sim.positions, ref.x, rtol=0, atol=1e-10)
    np.testing.assert_allclose(sim.velocities, ref.v, rtol=0, atol=1e-8)


class Hand:
    """A drive path that counts its calls and the times it was asked for, and raises
    on call number ``fail_at``."""

    def __init__(self, fail_at=None):
        self.times, self.fail_at = [], fail_at

    def __call__(self, t):
        self.times.append(t)
        if len(self.times) == self.fail_at:
            raise RuntimeError("the hand slipped")
        return [0.0, -0.1 * t]


def test_a_function_path_is_called_once_per_substep_with_the_time_at_its_end():
    sim = ss.string(4, length=1.0, mass=0.1, stiffness=10.0, dim=2)
    hand = Hand()
    sim.drive(0, hand)
    dt, t, expected = 1e-3, 0.0, []
    for steps in (7, 1, 0, 64):
        sim.step(dt, steps=steps)
        for _ in range(steps):
            expected.append(t + dt)
            t += dt
    assert hand.times == expected and sim.time == t  # the same floats, in order
    assert sim.positions[0].tolist() == [0.0, -0.1 * t]


def test_a_failed_step_restores_positions_velocities_counters_and_time():
    # A function path raises on its third call: the step raises that error and the
    # state, the clock and every drive's counter are as the call found them.
    sim = ss.string(6, length=1.0, mass=0.1, stiffness=10.0, damping=0.1, dim=2)
    sim.pin(2, velocity=(0.0, 0.3))
    sim.drive(5, np.array(sim.positions[5]) + np.zeros((10, 1, 2)) + [[[0.0, 0.01]]])
    sim.step(1e-3, steps=2)
    hand = Hand(fail_at=3)
    sim.drive(0, hand)
    before, counters = snapshot(sim), [d.counter for d in drives(sim)]
    assert counters == [2, 2, 0]
    with pytest.raises(RuntimeError, match="the hand slipped"):
        sim.step(1e-3, steps=5)
    assert len(hand.times) == 3
    assert_same(before, snapshot(sim))
    assert [d.counter for d in drives(sim)] == counters
    assert not sim.lock.locked()
    sim.step(1e-3, steps=5)  # the path works again: the same call goes through
    assert [d.counter for d in drives(sim)] == [7, 7, 5] and len(hand.times) == 8


@pytest.mark.parametrize(
    "value, message",
    [
        ([[0.0, 0.0, 0.0]], r"returned shape \(1, 3\) at t = 0.001 s; expected \(1, 2\)"),
        (np.zeros((2, 2)), r"returned shape \(2, 2\) at t = 0.001 s; expected \(1, 2\)"),
        (np.zeros((1, 1, 2)), r"returned shape \(1, 1, 2\)"),
        ("up", "returned <U2 values at t = 0.001 s"),
        ([None, 0.0], "returned object values"),
        ([np.inf, 0.0], "returned non-finite targets at t = 0.001 s"),
    ],
)
def test_a_function_that_returns_a_bad_value_raises_from_step_and_changes_nothing(value, message):
    sim = ss.string(4, length=1.0, mass=0.1, stiffness=10.0, dim=2)
    sim.drive(0, lambda t: value)
    before = snapshot(sim)
    with pytest.raises(ValueError, match=message):
        sim.step(1e-3, steps=3)
    assert_same(before, snapshot(sim))
    assert drives(sim)[0].counter == 0


def test_a_function_value_broadcasts_as_numpy_broadcasts_it():
    sim = ss.string(4, length=1.0, mass=0.1, stiffness=10.0, dim=2)
    sim.drive([0, 3], lambda t: 0.5)  # a number: every coordinate of both nodes
    sim.step(1e-3)
    sim.drive([1, 2], lambda t: [[True], [2]])  # a column of bools and ints
    sim.step(1e-3)
    assert sim.positions.tolist() == [[0.5, 0.5], [1.0, 1.0], [2.0, 2.0], [0.5, 0.5]]


@pytest.mark.parametrize(
    "change",
    [
        lambda sim: sim.step(1e-3),
        lambda sim: sim.add_nodes([[5.0, 5.0]]),
        lambda sim: sim.drive(1, [[[0.0, 0.0]]]),
        lambda sim: sim.pin(1),
        lambda sim: setattr(sim, "time", 5.0),
        lambda sim: sim.copy(),
    ],
    ids=["step", "add_nodes", "drive", "pin", "time", "copy"],
)
def test_a_path_function_may_look_at_its_system_but_not_change_it(change):
    sim = ss.string(4, length=1.0, mass=0.1, stiffness=10.0, dim=2)
    seen = []

    def look(t):  # reads the system the step is calling it from
        seen.append((sim.time, sim.num_nodes, float(sim.energy().kinetic)))
        return sim.rest_positions[0] + [0.0, t - sim.time]

    sim.drive(0, look)
    sim.step(1e-3, steps=3)
    assert [s[:2] for s in seen] == [(0.0, 4), (1e-3, 4), (2e-3, 4)]
    assert sim.positions[0].tolist() == [0.0, 1e-3]

    def meddle(t):
        change(sim)
        return [0.0, 0.0]

    sim.drive(0, meddle)
    before = snapshot(sim)
    with pytest.raises(RuntimeError, match="may look at the System .* but not change it"):
        sim.step(1e-3, steps=3)
    assert_same(before, snapshot(sim))
    sim.drive(0, lambda t: [0.0, t])  # the System works again
    sim.step(1e-3, steps=3)
    assert sim.positions[0].tolist() == [0.0, sim.time]


def test_a_copy_drives_with_counters_of_its_own():
    sim = ss.string(3, length=1.0, mass=0.1, stiffness=10.0, dim=2)
    sim.drive(0, np.linspace(0, 1, 10)[:, None, None] * [1.0, 0.0])
    sim.drive(2, Hand())
    sim.step(1e-3, steps=3)
    twin = sim.copy()
    twin.step(1e-3, steps=4)
    assert [d.counter for d in drives(sim)] == [3, 3]
    assert [d.counter for d in drives(twin)] == [7, 7]
    sim.step(1e-3, steps=4)  # from where it was: the same targets as the copy's
    assert sim.positions.tobytes() == twin.positions.tobytes()
    assert drives(twin)[1].function is drives(sim)[1].function


def test_removing_nodes_renumbers_every_kind_of_drive():
    sim = ss.string(8, length=1.0, mass=0.1, stiffness=10.0, dim=2)
    sim.pin([1, 2, 3], velocity=[[0.0, 0.1], [0.0, 0.2], [0.0, 0.3]])
    targets = np.arange(12.0).reshape(3, 2, 2)
    sim.drive([4, 5], targets)
    sim.drive([6, 7], lambda t: [[6.0, t], [7.0, t]])
    sim.step(1e-3)
    sim.remove_nodes([2, 5, 6])  # 0, 1, 3, 4, 7 -> 0, 1, 2, 3, 4
    line, array, hand = drives(sim)
    assert line.indices.tolist() == [1, 2]
    assert line.function.velocity.tolist() == [[0.0, 0.1], [0.0, 0.3]]
    assert array.indices.tolist() == [3] and np.array_equal(array.targets, targets[:, [0]])
    assert hand.indices.tolist() == [4] and hand.rows.tolist() == [1] and hand.width == 2
    assert [line.counter, array.counter, hand.counter] == [1, 1, 1]
    sim.step(1e-3)
    assert sim.positions[3].tolist() == targets[1, 0].tolist()
    assert sim.positions[4].tolist() == [7.0, sim.time]


class Sway:
    """A picklable path (a module-level class)."""

    def __call__(self, t):
        return [[0.05 * np.sin(20 * t), 0.0], [1.0, 0.02 * t]]


def test_pickles_copies_and_files_keep_every_kind_of_drive(tmp_path):
    sim = ss.string(6, length=1.0, mass=0.3, stiffness=200.0, dim=2)
    sim.pin(2, velocity=(0.0, 0.2))
    sim.drive(4, np.array(sim.positions[4]) + np.zeros((30, 1, 2)) + [[[0.0, 0.001]]])
    sim.drive([0, 5], Sway())
    sim.step(1e-3, steps=9)
    twins = [pickle.loads(pickle.dumps(sim)), sim.copy()]
    with pytest.warns(UserWarning, match=r"cannot keep 1 drive, the drive of nodes \[0, 5\]"):
        sim.save(tmp_path / "s.npz")
    loaded = ss.load(tmp_path / "s.npz")
    assert [d.counter for d in drives(loaded)] == [9, 9]  # the line and the targets
    for twin in twins:
        assert [d.counter for d in drives(twin)] == [9, 9, 9]
        assert isinstance(drives(twin)[2].function, Sway)
    sim.step(1e-3, steps=40)
    for twin in twins:
        twin.step(1e-3, steps=40)
        assert twin.positions.tobytes() == sim.positions.tobytes()
        assert twin.velocities.tobytes() == sim.velocities.tobytes()


@pytest.mark.parametrize("method", ["symplectic_euler", "rk4", "implicit_euler"])
def test_a_driven_cloth_steps_alike_on_one_and_two_threads(method):
    results = []
    try:
        for threads in (1, 2):
            ss.set_num_threads(threads)
            cloth = ss.cloth(60, 60, width=1.0, height=1.0, mass=1.0, stiffness=500.0)
            assert cloth.num_springs >= 8192  # large enough to run on threads
            left, right = np.flatnonzero(cloth.pinned)
            cloth.pin(left, velocity=(-0.2, 0.0, 0.1))
            start = np.array(cloth.positions[right])
            cloth.drive(right, lambda t, start=start: start + [0.1 * np.sin(9 * t), 0, 0])
            middle = np.array(cloth.positions[1830])
            cloth.drive(1830, middle + np.linspace(0, 0.05, 50)[:, None, None] * [0, 0, 1])
            cloth.step(0.3 * cloth.critical_dt(), steps=100, method=method)
            results.append((cloth.positions.tobytes(), cloth.velocities.tobytes()))
    finally:
        ss.set_num_threads(None)
    assert results[0] == results[1]


def test_a_drag_steps_without_the_gil_and_a_function_path_with_it():
    # A long step along a line or targets lets other threads run; one along a Python
    # function keeps the GIL, owns the System, and another thread's call on it waits.
    string = ss.string(2000, length=1.0, mass=0.1, stiffness=100.0, dim=2)
    string.pin(0, velocity=(0.1, 0.0))
    dt = 0.5 * string.critical_dt()
    ticks, stop = [0], threading.Event()

    def count():
        while not stop.is_set():
            ticks[0] += 1

    counter = threading.Thread(target=count)
    counter.start()
    try:
        started = time.thread_time()
        at_start = ticks[0]
        while time.thread_time() - started < 0.2:
            string.step(dt, steps=50)
        ran = ticks[0] - at_start
    finally:
        stop.set()
        counter.join()
    assert ran > 1000  # the counting thread ran while the kernel stepped

    sim = ss.string(4, length=1.0, mass=0.1, stiffness=10.0, dim=2)

    def slow(t):
        time.sleep(0.002)  # lets other threads run, which must wait for the step
        return [0.0, t]

    sim.drive(0, slow)
    done = []
    runner = threading.Thread(target=lambda: done.append(sim.step(1e-3, steps=100)))
    runner.start()
    deadline = time.monotonic() + 5.0
    while not sim.lock.locked() and runner.is_alive() and time.monotonic() < deadline:
        time.sleep(0.001)
    seen = sim.time  # waits for the step's end
    runner.join()
    assert done == [None] and seen == sim.time == pytest.approx(0.1)


@pytest.mark.parametrize("keep", ["pickle", "save"])
def test_a_driven_node_unpinned_through_the_view_stays_unpinned_in_a_twin(keep, tmp_path):
    # Found by the fuzzer: adding a drive pins its nodes, so a twin rebuilt from a file
    # or a pickle pinned a node the original had unpinned through the `pinned` view.
    sim = ss.System(dim=2)
    sim.gravity = (0.0, -9.81)
    sim.add_nodes([[1.0, 0.0], [0.0, 1.0]], masses=1.0)
    sim.add_springs([[0, 1]], stiffness=10.0)
    sim.drive(0, [[[0.0, 0.0]]])
    sim.pinned[0] = False
    if keep == "pickle":
        twin = pickle.loads(pickle.dumps(sim))
    else:
        sim.save(tmp_path / "s.npz")
        twin = ss.load(tmp_path / "s.npz")
    assert twin.pinned.tolist() == sim.pinned.tolist() == [False, False]
    for each in (sim, twin):
        each.step(1e-4, steps=2, method="euler")
    assert_same(snapshot(twin), snapshot(sim))
