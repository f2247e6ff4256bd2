"""Bad input gets a clear exception and leaves the System exactly as it was.

Every test here snapshots the whole state (every view array and every scalar),
makes one failing call and requires the state afterwards to be bit-for-bit the
same. ``snapshot`` and ``assert_same`` are also used by the other test files.
"""

import math
import re

import numpy as np
import pytest
from state import assert_same, snapshot

import springsim as ss


def assert_rejected(sim, exception, call, match=None):
    """``call()`` raises ``exception`` and leaves every bit of ``sim`` as it was."""
    before = snapshot(sim)
    with pytest.raises(exception, match=match) as info:
        call()
    assert_same(before, snapshot(sim))
    return info


def make_system(dim=3):
    """Five nodes in a ring of springs, node 0 pinned, every parameter non-default,
    stepped a little so that time and velocities are not trivially zero."""
    rng = np.random.default_rng(2024)
    sim = ss.System(dim=dim)
    sim.add_nodes(
        rng.normal(size=(5, dim)),
        masses=[1.0, 2.0, 0.5, 1.5, 3.0],
        velocities=rng.normal(size=(5, dim)),
        pinned=[True, False, False, False, False],
    )
    sim.add_springs(
        [[0, 1], [1, 2], [2, 3], [3, 4], [4, 0]],
        stiffness=[10.0, 20.0, 30.0, 40.0, 50.0],
        damping=[0.1, 0.2, 0.0, 0.3, 0.1],
    )
    sim.external_forces = rng.normal(size=(5, dim))
    sim.wind = rng.normal(size=dim)
    sim.drag = 0.05
    sim.energy_loss = 0.999
    sim.step(1e-3, steps=3)
    return sim


@pytest.fixture
def sim():
    return make_system()


# ---- constructing a System -------------------------------------------------------


@pytest.mark.parametrize("dim", [0, 1, 4, -3])
def test_dim_out_of_range_is_value_error(dim):
    with pytest.raises(ValueError):
        ss.System(dim=dim)


@pytest.mark.parametrize("dim", [3.0, "3", None, [3]])
def test_dim_of_wrong_type_is_type_error(dim):
    with pytest.raises(TypeError):
        ss.System(dim=dim)


# ---- add_nodes / add_springs -----------------------------------------------------


@pytest.mark.parametrize(
    "pairs",
    [
        [[0, 5]],  # one past the last node
        [[99, 1]],
        [[-1, 2]],  # negative
        [[0, -5]],
        [[2, 2]],  # a spring from a node to itself
        [[0, 1], [1, 5]],  # only the last pair is bad: nothing may be half-added
        [[0, 1], [3, 3]],
    ],
    ids=str,
)
def test_add_springs_bad_index(sim, pairs):
    assert_rejected(sim, ValueError, lambda: sim.add_springs(pairs, stiffness=1.0))


@pytest.mark.parametrize(
    "masses",
    [math.nan, 0.0, -1.0, math.inf, [1.0, -2.0], [1.0, math.nan], [0.0, 1.0]],
    ids=str,
)
def test_add_nodes_bad_mass(sim, masses):
    x = np.ones((2, 3))
    assert_rejected(sim, ValueError, lambda: sim.add_nodes(x, masses=masses))


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("which", ["positions", "velocities"])
def test_add_nodes_non_finite(sim, which, bad):
    x = np.ones((2, 3))
    v = np.zeros((2, 3))
    (x if which == "positions" else v)[1, 2] = bad
    assert_rejected(sim, ValueError, lambda: sim.add_nodes(x, velocities=v))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"stiffness": -1.0},
        {"stiffness": math.nan},
        {"stiffness": -math.inf},
        {"stiffness": [5.0, -5.0]},
        {"stiffness": [math.nan, 5.0]},
        {"stiffness": 1.0, "damping": math.nan},
        {"stiffness": 1.0, "damping": [0.0, -0.5]},  # DESIGN.md: damping >= 0
        {"stiffness": 1.0, "rest_lengths": [1.0, math.nan]},
        {"stiffness": 1.0, "rest_lengths": math.inf},
    ],
    ids=str,
)
def test_add_springs_bad_values(sim, kwargs):
    assert_rejected(sim, ValueError, lambda: sim.add_springs([[0, 2], [1, 3]], **kwargs))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"positions": np.zeros((2, 4))},  # (N, 4) into a 3D system
        {"positions": np.zeros((2, 2))},
        {"positions": np.zeros((2, 3, 1))},
        {"positions": np.zeros((2, 3)), "masses": [1.0, 2.0, 3.0]},
        {"positions": np.zeros((2, 3)), "velocities": np.zeros((3, 3))},
        {"positions": np.zeros((2, 3)), "velocities": np.zeros((2, 2))},
        {"positions": np.zeros((2, 3)), "pinned": [True, False, True]},
    ],
    ids=lambda kw: ", ".join(f"{k}={np.shape(v)}" for k, v in kw.items()),
)
def test_add_nodes_wrong_shape(sim, kwargs):
    assert_rejected(sim, ValueError, lambda: sim.add_nodes(**kwargs))


@pytest.mark.parametrize(
    "pairs, kwargs",
    [
        (np.array([[0, 1, 2]]), {}),  # pairs (M, 3)
        (np.array([[[0, 1]]]), {}),
        ([[0, 1], [1, 2]], {"stiffness": [1.0, 2.0, 3.0]}),
        ([[0, 1], [1, 2]], {"damping": [1.0, 2.0, 3.0]}),
        ([[0, 1], [1, 2]], {"rest_lengths": [1.0, 1.0, 1.0]}),
    ],
    ids=["pairs(1,3)", "pairs(1,1,2)", "stiffness(3)", "damping(3)", "rest_lengths(3)"],
)
def test_add_springs_wrong_shape(sim, pairs, kwargs):
    kwargs = {"stiffness": 1.0, **kwargs}
    assert_rejected(sim, ValueError, lambda: sim.add_springs(pairs, **kwargs))


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.add_nodes("abc"),
        lambda s: s.add_nodes(None),
        lambda s: s.add_nodes([["a", "b", "c"]]),
        lambda s: s.add_nodes(np.zeros((1, 3)), masses="heavy"),
        lambda s: s.add_springs(None, stiffness=1.0),
        lambda s: s.add_springs("01", stiffness=1.0),
        lambda s: s.add_springs([[0, 1]], stiffness="stiff"),
        lambda s: s.add_springs([[0, 1]], stiffness=None),
        lambda s: s.remove_springs(None),
        lambda s: s.remove_springs("0"),
        lambda s: s.pin(None),
        lambda s: s.unpin("1"),
        lambda s: s.step("0.01"),
        lambda s: s.step(None),
        lambda s: s.step(1e-3, steps="3"),
        lambda s: s.step(1e-3, steps=2.5),
        lambda s: s.step(1e-3, method=4),
        lambda s: setattr(s, "positions", None),
        lambda s: setattr(s, "positions", "abc"),
        lambda s: setattr(s, "masses", "heavy"),
        lambda s: setattr(s, "stiffness", None),
        lambda s: setattr(s, "gravity", "down"),
        lambda s: setattr(s, "drag", "x"),
        lambda s: setattr(s, "drag", None),
        lambda s: setattr(s, "energy_loss", None),
        lambda s: setattr(s, "method", 3),
    ],
    ids=[
        "add_nodes-str",
        "add_nodes-None",
        "add_nodes-str-array",
        "add_nodes-masses-str",
        "add_springs-None",
        "add_springs-str",
        "add_springs-stiffness-str",
        "add_springs-stiffness-None",
        "remove_springs-None",
        "remove_springs-str",
        "pin-None",
        "unpin-str",
        "step-dt-str",
        "step-dt-None",
        "step-steps-str",
        "step-steps-float",
        "step-method-int",
        "positions=None",
        "positions=str",
        "masses=str",
        "stiffness=None",
        "gravity=str",
        "drag=str",
        "drag=None",
        "energy_loss=None",
        "method=int",
    ],
)
def test_wrong_type_is_type_error(sim, call):
    assert_rejected(sim, TypeError, lambda: call(sim))


# ---- step ------------------------------------------------------------------------


@pytest.mark.parametrize("dt", [0.0, -0.0, -1e-3, math.nan, math.inf, -math.inf])
def test_step_bad_dt(sim, dt):
    assert_rejected(sim, ValueError, lambda: sim.step(dt))


@pytest.mark.parametrize("steps", [-1, -1000])
def test_step_negative_steps(sim, steps):
    assert_rejected(sim, ValueError, lambda: sim.step(1e-3, steps=steps))


@pytest.mark.parametrize("name", ["rk5", "", "Euler ", "implicit"])
def test_unknown_method_lists_valid_ones(sim, name):
    for call in (lambda: sim.step(1e-3, method=name), lambda: setattr(sim, "method", name)):
        info = assert_rejected(sim, ValueError, call)
        message = str(info.value)
        missing = [valid for valid in ss.METHODS if valid not in message]
        assert not missing, f"message {message!r} does not list {missing}"


# ---- assigning whole arrays and scalars ------------------------------------------


@pytest.mark.parametrize(
    "name, value",
    [
        ("masses", -1.0),
        ("masses", 0.0),
        ("masses", math.nan),
        ("masses", [1.0, 1.0, 1.0, 1.0, -1.0]),  # checked before anything is written
        ("stiffness", -1.0),
        ("stiffness", [1.0, 1.0, math.nan, 1.0, 1.0]),
        ("damping", [0.0, 0.0, 0.0, 0.0, -1.0]),
        ("rest_lengths", math.inf),
        ("positions", math.nan),
        ("positions", [[0.0, 0.0, 0.0]] * 4 + [[0.0, math.inf, 0.0]]),
        ("velocities", math.inf),
        ("external_forces", [math.nan, 0.0, 0.0]),
        ("gravity", [0.0, math.nan, 0.0]),
        ("wind", [math.inf, 0.0, 0.0]),
    ],
    ids=lambda v: v if isinstance(v, str) else str(np.asarray(v).tolist())[:30],
)
def test_assigning_invalid_values(sim, name, value):
    assert_rejected(sim, ValueError, lambda: setattr(sim, name, value))


@pytest.mark.parametrize(
    "name, value",
    [
        ("positions", np.zeros((5, 4))),  # (N, 4) into a 3D system
        ("positions", np.zeros((6, 3))),
        ("positions", np.zeros((4, 3))),
        ("velocities", np.zeros((5, 2))),
        ("masses", np.ones(4)),
        ("masses", np.ones((5, 2))),
        ("pinned", np.ones(6, dtype=bool)),
        ("stiffness", np.ones(6)),
        ("rest_lengths", np.ones(3)),
        ("gravity", np.zeros(2)),
        ("wind", np.zeros(4)),
    ],
    ids=lambda v: v if isinstance(v, str) else str(v.shape),
)
def test_assigning_wrong_shape(sim, name, value):
    assert_rejected(sim, ValueError, lambda: setattr(sim, name, value))


@pytest.mark.parametrize(
    "name, value",
    [
        ("drag", -0.1),
        ("drag", math.nan),
        ("drag", math.inf),
        ("energy_loss", -0.1),
        ("energy_loss", 1.1),
        ("energy_loss", math.nan),
    ],
    ids=str,
)
def test_assigning_invalid_scalars(sim, name, value):
    assert_rejected(sim, ValueError, lambda: setattr(sim, name, value))


# ---- topology edits with bad indices ---------------------------------------------


@pytest.mark.parametrize("indices", [[5], [100], [-6], [0, 5]], ids=str)
def test_remove_springs_out_of_range(sim, indices):
    assert sim.num_springs == 5
    assert_rejected(sim, ValueError, lambda: sim.remove_springs(indices))


@pytest.mark.parametrize("indices", [[5], [100], [-6], [1, 5]], ids=str)
@pytest.mark.parametrize("method", ["pin", "unpin"])
def test_pin_out_of_range(sim, method, indices):
    assert sim.num_nodes == 5
    assert_rejected(sim, ValueError, lambda: getattr(sim, method)(indices))


# ---- invalid values written element-wise through a view --------------------------


@pytest.mark.parametrize(
    "name, index, value",
    [
        ("masses", 0, -1.0),
        ("masses", 3, 0.0),
        ("masses", 2, math.nan),
        ("masses", 4, math.inf),
        ("positions", (1, 0), math.nan),
        ("positions", (3, 2), -math.inf),
        ("velocities", (2, 1), math.nan),
        ("external_forces", (4, 0), math.inf),
        ("stiffness", 1, -1.0),
        ("stiffness", 3, math.nan),
        ("damping", 0, math.nan),
        ("damping", 2, -1.0),  # DESIGN.md: damping >= 0
        ("rest_lengths", 4, math.nan),
        ("gravity", 1, math.nan),
        ("wind", 0, math.inf),
    ],
    ids=lambda v: str(v),
)
def test_invalid_value_written_through_view_fails_next_step(sim, name, index, value):
    view = getattr(sim, name)
    good = view[index]
    view[index] = value
    assert_rejected(sim, ValueError, lambda: sim.step(1e-3, steps=2))
    # The system is still usable once the value is repaired.
    view[index] = good
    time = sim.time
    sim.step(1e-3, steps=2)
    assert sim.time > time
    assert np.all(np.isfinite(sim.positions))


# ---- UnstableError ---------------------------------------------------------------


def make_unstable_chain():
    """A stiff chain of four light nodes hanging from a pinned one."""
    sim = ss.System(dim=3)
    x = np.zeros((5, 3))
    x[:, 1] = -np.arange(5) * 0.1
    sim.add_nodes(x, masses=0.01, pinned=[True, False, False, False, False])
    sim.add_springs([[0, 1], [1, 2], [2, 3], [3, 4]], stiffness=1e3, damping=0.0)
    return sim


def test_unstable_error_is_floating_point_and_runtime_error():
    assert issubclass(ss.UnstableError, FloatingPointError)
    assert issubclass(ss.UnstableError, RuntimeError)


@pytest.mark.parametrize("method", ss.EXPLICIT_METHODS)  # xpbd, implicit_euler: always stable
def test_blow_up_raises_unstable_error_and_rolls_back(method):
    sim = make_unstable_chain()
    critical = sim.critical_dt()
    assert 0.0 < critical < math.inf
    # A few stable steps first, so that there is a non-trivial state to roll back to.
    sim.step(0.05 * critical, steps=20, method=method)
    assert sim.time > 0.0 and np.any(sim.velocities != 0.0)
    dt = 100.0 * critical

    info = assert_rejected(sim, ss.UnstableError, lambda: sim.step(dt, steps=2000, method=method))

    error = info.value
    assert isinstance(error, FloatingPointError) and isinstance(error, RuntimeError)
    message = str(error)
    assert "dt" in message
    numbers = [float(n) for n in re.findall(r"\d+(?:\.\d*)?(?:[eE][-+]?\d+)?", message)]
    assert any(0.0 < n < dt for n in numbers), f"no smaller dt suggested in {message!r}"
    # dt is 100x the explicit limit: the message points to the stable methods.
    stable = "a stable method" if method == "euler" else "method='implicit_euler'"
    assert stable in message
    # Still usable at a stable dt after the rollback.
    sim.step(0.05 * critical, steps=10, method=method)
    assert np.all(np.isfinite(sim.positions)) and np.all(np.isfinite(sim.velocities))
