"""Zero-copy views: what Python writes is what the kernel steps, and views never dangle.

See docs/architecture.md, "Data model": every array property is a fresh NumPy view of
the kernel's memory whose base owns that memory; assignment copies in; topology is
read-only.
"""

import gc
import re

import numpy as np
import pytest
from state import assert_same, snapshot

import springsim as ss
from springsim import reference

# Random (and deliberately repeated) springs: their DuplicateSpringWarning is no news
# here (tests/features/test_traps.py tests it).
pytestmark = pytest.mark.filterwarnings("ignore::springsim.DuplicateSpringWarning")

DT = 1e-3
#: The arrays that change what a step does.
VIEWS = (
    "positions",
    "velocities",
    "masses",
    "pinned",
    "external_forces",
    "springs",
    "rest_lengths",
    "stiffness",
    "damping",
    "gravity",
    "wind",
)
NODE_VIEWS = ("positions", "velocities", "masses", "pinned", "external_forces")
SPRING_VIEWS = ("springs", "rest_lengths", "stiffness", "damping")
WRITABLE = tuple(name for name in VIEWS if name != "springs")

# Reference attribute holding each view's data.
REFERENCE_ATTR = {
    "positions": "x",
    "velocities": "v",
    "masses": "m",
    "pinned": "pinned",
    "external_forces": "ext",
    "rest_lengths": "L",
    "stiffness": "k",
    "damping": "c",
    "gravity": "gravity",
    "wind": "wind",
}

# One write per view, (index, new value), each one large enough to change the motion.
WRITES = {
    "positions": (2, [0.3, 0.7, -0.2]),
    "velocities": (1, [1.0, -2.0, 0.5]),
    "masses": (3, 4.0),
    "pinned": (1, True),
    "external_forces": (2, [3.0, 0.0, -1.0]),
    "stiffness": (1, 250.0),
    "rest_lengths": (0, 1.6),
    "damping": (2, 2.0),
    "gravity": (slice(None), [1.0, -3.0, 2.0]),
    "wind": (0, 2.0),
}


def chain_params():
    """A four-node chain with every parameter set to something non-trivial."""
    return {
        "positions": np.array([[0.0, 0.0, 0.0], [1.0, 0.1, 0.0], [2.0, 0.0, 0.2], [3.1, 0.0, 0.0]]),
        "velocities": np.array(
            [[0.0, 0.1, 0.0], [0.2, 0.0, 0.0], [0.0, 0.0, -0.1], [0.1, 0.1, 0.1]]
        ),
        "masses": np.array([1.0, 2.0, 1.5, 0.5]),
        "pinned": np.array([False, False, False, False]),
        "external_forces": np.zeros((4, 3)),
        "springs": np.array([[0, 1], [1, 2], [2, 3]]),
        "rest_lengths": np.array([1.1, 0.9, 1.0]),
        "stiffness": np.array([50.0, 60.0, 70.0]),
        "damping": np.array([0.1, 0.2, 0.3]),
        "gravity": np.array([0.0, -9.81, 0.0]),
        "wind": np.zeros(3),
        "drag": 0.1,  # so that the wind matters
    }


def build(p):
    """A System holding the parameters ``p`` from the start."""
    sim = ss.System(dim=3)
    sim.add_nodes(
        p["positions"], masses=p["masses"], velocities=p["velocities"], pinned=p["pinned"]
    )
    sim.add_springs(
        p["springs"], stiffness=p["stiffness"], damping=p["damping"], rest_lengths=p["rest_lengths"]
    )
    sim.external_forces = p["external_forces"]
    sim.gravity = p["gravity"]
    sim.wind = p["wind"]
    sim.drag = p["drag"]
    return sim


def ptr(array):
    return array.__array_interface__["data"][0]


# ---- a write through a view is what the next step uses ---------------------------


@pytest.mark.parametrize("name", list(WRITES))
def test_write_through_view_matches_system_built_with_that_value(name):
    index, value = WRITES[name]
    p = chain_params()
    changed = chain_params()
    changed[name][index] = value

    sim = build(p)
    getattr(sim, name)[index] = value
    sim.step(DT, steps=20)
    expected = build(changed)
    expected.step(DT, steps=20)
    # The rest shape stays where the nodes were added, whatever is written later.
    expected.rest_positions = sim.rest_positions
    assert_same(snapshot(expected), snapshot(sim))

    unchanged = build(p)
    unchanged.step(DT, steps=20)
    assert not np.array_equal(unchanged.positions, sim.positions), "the write made no difference"


@pytest.mark.parametrize("drop", [False, True])
@pytest.mark.parametrize("name", list(WRITES))
def test_view_taken_before_steps_writes_into_later_steps(name, drop):
    """A view stays the system's memory across steps: writing it mid-run is honoured,
    also when the view is dropped between the write and the next step (which must still
    read, and check, what it wrote)."""
    index, value = WRITES[name]
    p = chain_params()
    sim = build(p)
    view = getattr(sim, name)
    sim.step(DT, steps=10)
    view[index] = value
    if drop:
        del view
    sim.step(DT, steps=10)

    ref = reference.State(**p)
    reference.step(ref, DT, steps=10)
    getattr(ref, REFERENCE_ATTR[name])[index] = value
    reference.step(ref, DT, steps=10)
    np.testing.assert_allclose(sim.positions, ref.x, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sim.velocities, ref.v, rtol=1e-12, atol=1e-12)

    ignored = reference.State(**p)
    reference.step(ignored, DT, steps=20)
    assert np.max(np.abs(ignored.x - ref.x)) > 1e-6, "the write made no difference"


def test_a_bad_value_written_through_a_dropped_view_is_refused():
    sim = build(chain_params())
    view = sim.masses
    sim.step(DT)
    view[1] = -1.0
    del view
    before = sim.positions.copy()
    with pytest.raises(ValueError, match="mass"):
        sim.step(DT)
    np.testing.assert_array_equal(sim.positions, before)


# ---- views share the kernel's memory --------------------------------------------


@pytest.mark.parametrize("name", VIEWS)
def test_two_accesses_share_memory(name):
    sim = build(chain_params())
    first = getattr(sim, name)
    second = getattr(sim, name)
    assert np.shares_memory(first, second)
    assert ptr(first) == ptr(second)
    sim.step(DT, steps=5)  # stepping works in place: same memory, old view sees it
    third = getattr(sim, name)
    assert ptr(third) == ptr(first)
    assert np.array_equal(first, third)


def test_old_view_sees_step_results():
    sim = build(chain_params())
    x, v = sim.positions, sim.velocities
    before = x.copy()
    sim.step(DT, steps=5)
    assert not np.array_equal(x, before)
    assert_same({"x": x.copy(), "v": v.copy()}, {"x": sim.positions, "v": sim.velocities})


# ---- lifetime --------------------------------------------------------------------


def test_views_outlive_the_system():
    sim = build(chain_params())
    sim.step(DT, steps=5)
    views = {name: getattr(sim, name) for name in VIEWS}
    expected = {name: view.copy() for name, view in views.items()}
    del sim
    gc.collect()
    # Churn the allocator so that freed memory would be reused and overwritten.
    for _ in range(20):
        other = build(chain_params())
        other.positions = (1e6, 1e6, 1e6)
        other.step(DT, steps=3)
    del other
    gc.collect()
    assert_same(expected, {name: view.copy() for name, view in views.items()})
    views["positions"][0] = 42.0  # still writable memory
    assert views["positions"][0, 0] == 42.0


@pytest.mark.parametrize("added", [1, 1000])
def test_view_taken_before_add_nodes_keeps_its_values(added):
    sim = build(chain_params())
    old = {name: getattr(sim, name) for name in NODE_VIEWS}
    expected = {name: view.copy() for name, view in old.items()}
    sim.add_nodes(np.full((added, 3), 5.0), masses=1.0)
    sim.step(DT, steps=20)
    assert_same(expected, {name: view.copy() for name, view in old.items()})
    # The stale view is no longer the system's memory ...
    old["positions"][:] = 99.0
    assert not np.any(sim.positions == 99.0)
    # ... and the system kept the values it had at add time, before stepping.
    assert sim.num_nodes == 4 + added
    assert np.array_equal(sim.masses[:4], expected["masses"])


@pytest.mark.parametrize("added", [1, 1000])
def test_view_taken_before_add_springs_keeps_its_values(added):
    sim = build(chain_params())
    old = {name: getattr(sim, name) for name in SPRING_VIEWS}
    expected = {name: view.copy() for name, view in old.items()}
    sim.add_springs(np.tile([[0, 3]], (added, 1)), stiffness=7.0, damping=0.5)
    sim.stiffness = 1.0
    sim.damping = 0.0
    sim.rest_lengths = 2.0
    sim.step(DT, steps=20)
    assert_same(expected, {name: view.copy() for name, view in old.items()})
    assert sim.num_springs == 3 + added


# ---- springs are read-only -------------------------------------------------------


def test_springs_view_is_read_only():
    sim = build(chain_params())
    springs = sim.springs
    before = springs.copy()
    assert not springs.flags.writeable
    with pytest.raises(ValueError):
        springs[0, 1] = 3
    with pytest.raises(ValueError):
        springs += 1
    with pytest.raises((AttributeError, TypeError)):
        sim.springs = [[0, 2], [1, 3], [2, 0]]
    assert np.array_equal(sim.springs, before)


def test_springs_view_cannot_be_made_writable():
    """The kernel trusts its indices: the read-only flag must not be removable."""
    springs = build(chain_params()).springs
    with pytest.raises(ValueError):
        springs.setflags(write=True)


# ---- assignment copies in --------------------------------------------------------


@pytest.mark.parametrize("name", WRITABLE)
def test_assignment_copies_into_the_same_memory(name):
    sim = build(chain_params())
    old_view = getattr(sim, name)
    address = ptr(old_view)
    rng = np.random.default_rng(5)
    new = rng.random(old_view.shape) + 0.5
    if name == "pinned":
        new = np.array([True, False, True, True])
    setattr(sim, name, new)
    view = getattr(sim, name)
    assert ptr(view) == address
    assert not np.shares_memory(view, new)
    assert np.array_equal(view, new.astype(view.dtype))
    assert np.array_equal(old_view, view)  # a view taken before sees the new values
    new[...] = 0  # mutating the source afterwards changes nothing
    assert np.array_equal(getattr(sim, name), old_view)
    assert not np.array_equal(view, new)


def test_assignment_broadcasts():
    sim = build(chain_params())
    sim.velocities = 0
    assert np.array_equal(sim.velocities, np.zeros((4, 3)))
    sim.velocities = [1.0, 2.0, 3.0]
    assert np.array_equal(sim.velocities, np.tile([1.0, 2.0, 3.0], (4, 1)))
    sim.masses = 2.5
    assert np.array_equal(sim.masses, np.full(4, 2.5))
    sim.pinned = True
    assert sim.pinned.all()
    sim.stiffness = 7
    assert sim.stiffness.dtype == np.float64 and np.array_equal(sim.stiffness, np.full(3, 7.0))
    sim.gravity = 0  # the zero vector: the one number a vector takes
    assert np.array_equal(sim.gravity, np.zeros(3))
    with pytest.raises(ValueError, match="gravity is a vector of 3 components"):
        sim.gravity = -9.81  # not (-9.81, -9.81, -9.81)
    sim.positions = np.arange(12).reshape(4, 3)  # integers are converted
    assert np.array_equal(sim.positions, np.arange(12.0).reshape(4, 3))


def test_assignment_from_an_overlapping_view():
    sim = build(chain_params())
    before = sim.positions.copy()
    sim.positions = sim.positions[::-1]
    assert np.array_equal(sim.positions, before[::-1])


# ---- dtypes, shapes and layout ---------------------------------------------------


def expected_layout(dim, n, m):
    vector = ((n, dim), np.float64)
    return {
        "positions": vector,
        "velocities": vector,
        "external_forces": vector,
        "masses": ((n,), np.float64),
        "pinned": ((n,), np.bool_),
        "springs": ((m, 2), np.int32),
        "rest_lengths": ((m,), np.float64),
        "stiffness": ((m,), np.float64),
        "damping": ((m,), np.float64),
        "gravity": ((dim,), np.float64),
        "wind": ((dim,), np.float64),
    }


@pytest.mark.parametrize("dim", [2, 3])
def test_view_dtypes_shapes_and_layout(dim):
    sim = ss.System(dim=dim)
    sim.add_nodes(np.random.default_rng(1).random((6, dim)))
    sim.add_springs([[0, 1], [1, 2], [2, 3], [3, 4], [4, 5]], stiffness=1.0)
    assert (sim.dim, sim.num_nodes, sim.num_springs) == (dim, 6, 5)
    for name, (shape, dtype) in expected_layout(dim, 6, 5).items():
        view = getattr(sim, name)
        assert isinstance(view, np.ndarray), name
        assert view.shape == shape, name
        assert view.dtype == dtype, name
        assert view.flags.c_contiguous and view.flags.aligned, name
        assert view.flags.writeable == (name != "springs"), name
        assert view.base is not None, name  # the base owns the kernel's memory


@pytest.mark.parametrize("dim", [2, 3])
def test_empty_system_views(dim):
    sim = ss.System(dim=dim)
    assert (sim.num_nodes, sim.num_springs, sim.dim) == (0, 0, dim)
    for name, (shape, dtype) in expected_layout(dim, 0, 0).items():
        view = getattr(sim, name)
        assert view.shape == shape and view.dtype == dtype, name
    assert np.array_equal(sim.gravity, [0.0, -9.81, 0.0][:dim])
    assert np.array_equal(sim.wind, np.zeros(dim))


# ---- copy, repr, add_nodes / add_springs -----------------------------------------


def test_copy_is_deep():
    sim = build(chain_params())
    sim.method = "rk4"
    sim.step(DT, steps=5)
    original = snapshot(sim)
    dup = sim.copy()
    assert type(dup) is type(sim)
    assert_same(original, snapshot(dup))
    for name in VIEWS:
        assert not np.shares_memory(getattr(sim, name), getattr(dup, name)), name

    for name in WRITABLE:
        view = getattr(dup, name)
        view[...] = np.logical_not(view) if name == "pinned" else view * 2.0 + 1.0
    dup.drag = 0.7
    dup.energy_loss = 0.5
    dup.method = "euler"
    dup.step(DT, steps=3)
    dup.add_nodes(np.ones((2, 3)))
    dup.add_springs([[0, 5]], stiffness=3.0)
    dup.remove_springs([0])
    dup.pin([1])
    assert_same(original, snapshot(sim))

    # And the other way round: the original changing leaves the copy alone.
    dup_state = snapshot(dup)
    sim.positions = 0.0
    sim.step(DT)
    assert_same(dup_state, snapshot(dup))


@pytest.mark.parametrize("dim, nodes, springs", [(2, 7, 4), (3, 11, 13)])
def test_repr_mentions_dim_and_counts(dim, nodes, springs):
    sim = ss.System(dim=dim)
    sim.add_nodes(np.random.default_rng(0).random((nodes, dim)))
    sim.add_springs([[i % nodes, (i + 1) % nodes] for i in range(springs)], stiffness=1.0)
    text = repr(sim)
    numbers = {int(n) for n in re.findall(r"\d+", text)}
    assert {dim, nodes, springs} <= numbers, text
    assert "node" in text.lower() and "spring" in text.lower(), text


def test_add_nodes_returns_indices_and_broadcasts_scalars():
    sim = ss.System(dim=3)
    first = sim.add_nodes(np.zeros((3, 3)), masses=2.0, pinned=True)
    assert first.dtype == np.int64
    assert np.array_equal(first, [0, 1, 2])
    second = sim.add_nodes(np.ones((2, 3)), masses=[0.5, 0.25])
    assert second.dtype == np.int64
    assert np.array_equal(second, [3, 4])
    assert np.array_equal(sim.masses, [2.0, 2.0, 2.0, 0.5, 0.25])
    assert np.array_equal(sim.pinned, [True, True, True, False, False])
    assert np.array_equal(sim.velocities, np.zeros((5, 3)))
    assert np.array_equal(sim.external_forces, np.zeros((5, 3)))
    assert np.array_equal(sim.positions, np.vstack([np.zeros((3, 3)), np.ones((2, 3))]))


def test_add_springs_returns_indices_and_defaults_rest_length_to_distance():
    sim = ss.System(dim=3)
    x = np.array([[0.0, 0.0, 0.0], [3.0, 4.0, 0.0], [1.0, 2.0, 2.0], [-1.0, 0.5, 7.0]])
    sim.add_nodes(x)
    first = sim.add_springs([[0, 1], [1, 2]], stiffness=30.0)
    assert first.dtype == np.int64
    assert np.array_equal(first, [0, 1])
    second = sim.add_springs([[2, 3], [3, 0]], stiffness=[1.0, 2.0], damping=0.5, rest_lengths=0.25)
    assert second.dtype == np.int64
    assert np.array_equal(second, [2, 3])

    pairs = np.array([[0, 1], [1, 2], [2, 3], [3, 0]])
    assert np.array_equal(sim.springs, pairs)
    assert np.array_equal(sim.stiffness, [30.0, 30.0, 1.0, 2.0])
    assert np.array_equal(sim.damping, [0.0, 0.0, 0.5, 0.5])
    d = x[pairs[:2, 1]] - x[pairs[:2, 0]]
    np.testing.assert_allclose(sim.rest_lengths[:2], np.sqrt(np.sum(d * d, axis=1)), rtol=1e-15)
    assert sim.rest_lengths[0] == 5.0
    assert np.array_equal(sim.rest_lengths[2:], [0.25, 0.25])
