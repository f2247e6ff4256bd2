"""The state's one definition (``_core.STATE_FIELDS``, the kernel's table in state.c):
every field of it survives each way a state is kept — ``copy()``, pickling, the save
format — and each way one is undone — a step that fails and rolls back, a driven step
that fails part way. Each field is set to a value no step or build would give it, so a
path that forgot the field (or kept it only for some kinds) fails here."""

import pickle

import numpy as np
import pytest
from features.test_self_collision import thrown_at_a_triangle

import springsim as ss
from springsim import _core


def thrown_through_a_triangle():
    """A free 1 kg node thrown at a pinned triangle (h = 0.1 m, k = 1e4 N/m) at 30 m/s,
    faster than the layer can stop it (kinetic 450 J against k h^2 / 2 = 50 J): it goes
    through within the first 10 substeps of 1 ms, and self-collision counts the crossing
    (test_self_collision.py shows the same scene counted once)."""
    return thrown_at_a_triangle(30.0)


def unusual_state(sim, rng):
    """A value for every field of the state that no step gives: random arrays, odd
    numbers, flags set, counts other than 0."""
    values = {}
    for k, (name, kind) in enumerate(_core.STATE_FIELDS):
        if kind == "array":
            values[name] = rng.normal(size=(sim.num_nodes, sim.dim))
        elif kind == "real":
            values[name] = 0.123456789 * (k + 1)
        elif kind == "flag":
            values[name] = True
        else:
            assert kind == "count", kind
            values[name] = 7 + k
    return values


def assert_state_equal(a, b):
    assert set(a) == set(b) == {name for name, _ in _core.STATE_FIELDS}
    for name in a:
        np.testing.assert_array_equal(np.asarray(a[name]), np.asarray(b[name]), err_msg=name)


def test_the_table_names_every_part_of_what_a_step_changes():
    names = [name for name, _ in _core.STATE_FIELDS]
    assert names == [
        "positions",
        "velocities",
        "_prev_accel",
        "_verlet_valid",
        "time",
        "dissipated",
        "crossings",
        "contact_dt",
    ]
    sim = thrown_through_a_triangle()
    before = sim._state()
    sim.track_energy = True
    sim.drag = 0.1  # so that energy is dissipated
    sim.gravity = (0.0, -1.0, 0.0)  # so that Verlet's last acceleration is not 0
    sim.step(1e-3, steps=20, method="verlet")
    after = sim._state()
    for name in names:  # each of them does change in a step (this one)
        assert not np.array_equal(np.asarray(before[name]), np.asarray(after[name])), name


def drive_progress(sim):
    """The substeps each drive has run: state that each drive keeps with itself (a file
    keeps the drives it can store, each with its progress), not a field of the table."""
    return [row[3] for row in sim._drive_table()]


@pytest.mark.parametrize("keep", ["copy", "pickle", "save"])
def test_every_field_survives_each_way_of_keeping_a_state(keep, tmp_path):
    sim = thrown_through_a_triangle()
    sim.drive(1, np.linspace([1.0, 0.0, 0.0], [1.0, 0.1, 0.0], 50)[:, None, :])
    sim.pin(2, velocity=(0.0, 0.0, 0.1))
    sim.step(1e-3, steps=7)
    assert drive_progress(sim) == [7, 7]
    state = unusual_state(sim, np.random.default_rng(1))
    sim._set_state(state)
    assert_state_equal(sim._state(), state)
    if keep == "copy":
        other = sim.copy()
    elif keep == "pickle":
        other = pickle.loads(pickle.dumps(sim))
    else:
        sim.save(tmp_path / "s.npz")
        other = ss.load(tmp_path / "s.npz")
    assert_state_equal(other._state(), state)
    assert other.self_collision_crossings == state["crossings"]
    assert drive_progress(other) == [7, 7]


def with_a_slow_blow_up(sim):
    """Two more free nodes far from the triangle, joined by a spring with omega dt = 2.1
    at dt = 1 ms (k = 2.2e6 N/m, reduced mass 0.5 kg), stretched by 1 um: symplectic
    Euler grows it 1.9x a substep, from 2e-6 J to past 100 times the 450 J the scene
    has in about 20 substeps, so the step fails well after the thrown node went through
    (by its 10th substep)."""
    sim.add_nodes([[5.0, 5.0, 5.0], [5.0, 5.0, 5.100001]], masses=1.0)
    sim.add_springs([[4, 5]], stiffness=0.5 * 2100.0**2, rest_lengths=0.1)
    return sim


def test_a_step_that_diverges_after_a_crossing_rolls_every_field_back():
    sim = with_a_slow_blow_up(thrown_through_a_triangle())
    sim.drive(1, np.linspace([1.0, 0.0, 0.0], [1.0, 0.1, 0.0], 50)[:, None, :])
    sim.track_energy = True
    state = unusual_state(sim, np.random.default_rng(3))
    state["positions"] = sim.positions.copy()
    state["velocities"] = sim.velocities.copy()
    state["time"] = 0.0
    sim._set_state(state)
    probe = sim.copy()
    probe.divergence_factor = None
    probe.step(1e-3, steps=10)  # the same start, left to run: the crossing is counted
    assert probe.self_collision_crossings == state["crossings"] + 1
    with pytest.raises(ss.UnstableError):
        sim.step(1e-3, steps=200)  # (a driven call of under 64 substeps keeps no books)
    assert_state_equal(sim._state(), state)
    assert drive_progress(sim) == [0]


class Corner:
    """A drive path that holds a node at the origin and refuses its ``fail_at``-th call."""

    def __init__(self, fail_at):
        self.calls, self.fail_at = 0, fail_at

    def __call__(self, t):
        self.calls += 1
        if self.calls == self.fail_at:
            raise ValueError(f"call {self.calls} of the path is refused")
        return [[0.0, 0.0, 0.0]]


def test_a_driven_step_that_fails_part_way_restores_every_field():
    """The issue's case: a driven step's rollback restores self_collision_crossings (the
    Python rollback of a driven step did not)."""
    sim = thrown_through_a_triangle()
    sim.track_energy = True
    sim.damping = 0.1
    check = sim.copy()
    check.step(1e-3, steps=15)  # the node is through after a few substeps: counted
    assert check.self_collision_crossings == 1
    path = Corner(fail_at=20)
    sim.drive(0, path)
    before = sim._state()
    with pytest.raises(ValueError, match="call 20 of the path"):
        sim.step(1e-3, steps=30)
    assert path.calls == 20  # once a substep
    assert_state_equal(sim._state(), before)
    assert sim.self_collision_crossings == 0


def test_set_state_checks_everything_first_and_changes_nothing_on_error():
    sim = thrown_through_a_triangle()
    before = sim._state()
    bad = unusual_state(sim, np.random.default_rng(4))
    for name, value in [
        ("positions", np.full((4, 3), np.inf)),
        ("velocities", np.zeros((3, 3))),
        ("time", float("nan")),
        ("crossings", -1),
    ]:
        with pytest.raises(ValueError):
            sim._set_state({**bad, name: value})
        assert_state_equal(sim._state(), before)
    with pytest.raises(KeyError, match="crossings"):
        sim._set_state({**{k: v for k, v in bad.items() if k != "crossings"}, "extra": 0})
    with pytest.raises(ValueError, match="8 state fields"):
        sim._set_state({**bad, "extra": 0})
    plain = ss.string(3, length=1.0, mass=0.1, stiffness=10.0)
    with pytest.raises(ValueError, match="self-collision is off"):
        plain._set_state({**plain._state(), "crossings": 1})
    assert_state_equal(sim._state(), before)
