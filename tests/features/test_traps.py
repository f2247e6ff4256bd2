"""No silent traps (issue 16, item 3): what used to do something other than what was
meant, quietly, now raises or says what it did.

- a number assigned to a vector (``sim.gravity = -9.81``) is refused, not copied into
  every component; an unknown attribute (``sim.gravty = ...``) is refused, not created;
- every selection of nodes or springs takes a boolean mask;
- a spring repeating a node pair warns;
- ``run()`` refuses a duration shorter than its step and says when it keeps fewer
  frames than asked;
- ``save()`` keeps the drives it can and names those it cannot; pickling names a drive
  it cannot store;
- the install hints name a package pip can install, and ``demo --png`` without
  matplotlib stops before running;
- warnings point at the line of the user's code, however deep springsim raised them.
"""

import copy
import pathlib
import pickle
import re
import sys
import time
import warnings

import numpy as np
import pytest

import springsim as ss
import springsim.__main__ as demo
from springsim.model.pins import drives
from springsim.model.topology import _warn_duplicates

# ---------------------------------------------------------------- numbers into vectors

VECTORS = ("positions", "velocities", "external_forces", "gravity", "wind", "uvs", "rest_positions")
PER_ITEM = ("masses", "pinned", "rest_lengths", "stiffness", "damping", "break_strains")


def chain(n=4, dim=3):
    sim = ss.string(n, length=1.0, mass=0.4, stiffness=50.0, dim=dim)
    sim.velocities = np.arange(n * dim, dtype=float).reshape(n, dim)
    return sim


@pytest.mark.parametrize("name", VECTORS)
def test_a_number_is_not_copied_into_every_component_of_a_vector(name):
    sim = chain()
    before = np.array(getattr(sim, name))
    with pytest.raises(ValueError, match=f"{name} is a vector of .* components"):
        setattr(sim, name, -9.81)
    with pytest.raises(ValueError, match="all .* components in its last axis"):
        setattr(sim, name, [1.5])  # one component: would broadcast too
    assert np.array_equal(getattr(sim, name), before)  # nothing changed
    setattr(sim, name, 0)  # zero is the zero vector, however it is read
    assert not getattr(sim, name).any()


def test_gravity_takes_its_components():
    sim = ss.System(dim=2)
    with pytest.raises(ValueError, match="gravity is a vector of 2 components"):
        sim.gravity = -9.81
    assert sim.gravity.tolist() == [0.0, -9.81]
    sim.gravity = (0, -1.62)
    sim.wind = np.array([3.0, 0.0])
    assert sim.gravity.tolist() == [0.0, -1.62] and sim.wind.tolist() == [3.0, 0.0]
    sim.add_nodes(np.zeros((3, 2)))
    sim.velocities = (1.0, 2.0)  # one vector for every node: documented
    assert sim.velocities.tolist() == [[1.0, 2.0]] * 3


@pytest.mark.parametrize("name", PER_ITEM)
def test_a_number_for_every_node_or_spring_is_broadcast(name):
    sim = chain()
    setattr(sim, name, 1)
    assert np.all(getattr(sim, name) == 1)


def test_vector_arguments_refuse_a_number():
    sim = chain(dim=2)
    with pytest.raises(ValueError, match="velocities is a vector"):
        sim.add_nodes([[0.0, 1.0]], velocities=2.0)
    with pytest.raises(ValueError, match="velocity is a vector"):
        sim.pin(1, velocity=0.5)
    with pytest.raises(ValueError, match="normal is a vector"):
        sim.add_plane(1.0)
    with pytest.raises(ValueError, match="center is a vector"):
        sim.add_sphere(2.0, radius=0.1)
    floor = sim.add_plane([0.0, 1.0], offset=-5.0)
    with pytest.raises(ValueError, match="is a vector"):
        floor.normal = 1.0
    assert sim.num_nodes == 4 and len(sim.colliders) == 1
    assert floor.normal.tolist() == [0.0, 1.0]
    sim.add_nodes([[0.0, 1.0]], velocities=0)  # zero: at rest
    sim.pin(1, velocity=0)  # dragged at zero velocity: held
    assert not sim.velocities[[1, 4]].any()


# ---------------------------------------------------------------- unknown attributes


def test_assigning_an_unknown_attribute_raises():
    sim = chain()
    with pytest.raises(AttributeError, match="no attribute 'gravty'.*did you mean 'gravity'"):
        sim.gravty = (0, -1.62, 0)
    assert "gravty" not in sim.__dict__ and not hasattr(sim, "gravty")
    with pytest.raises(AttributeError, match="did you mean 'stiffness'"):
        sim.stifness = 10.0
    with pytest.raises(AttributeError, match="cannot assign System.step: it is a method"):
        sim.step = 0.01
    assert "step" not in sim.__dict__
    with pytest.raises(AttributeError):
        sim.num_nodes = 3  # read-only, as before
    with pytest.raises(AttributeError):
        sim.springs = np.zeros((0, 2))


def test_known_attributes_are_still_assigned():
    sim = chain()
    sim.drag, sim.method, sim.energy_loss, sim.time = 0.1, "rk4", 0.99, 2.0
    sim.break_strain, sim.max_strain, sim.divergence_factor = 0.5, 0.2, None
    sim.track_energy, sim.dissipated, sim.iterations = True, 1.0, 5
    sim.cg_tolerance, sim.cg_max_iterations = 1e-6, 50
    sim.drag_coefficient, sim.air_density = 1.0, 1.0
    assert (sim.drag, sim.method, sim.break_strain, sim.iterations) == (0.1, "rk4", 0.5, 5)
    sim.drive(0, lambda t: [0.0, 0.1, 0.0])  # its function lives in the instance dictionary
    sim.run(0.01, 1e-3, progress=False)  # sets the private attributes of a run
    sim._drive_paths = dict(sim._drive_paths)  # the private state may be assigned too
    assert sim.copy().drag == 0.1


def test_a_callable_may_replace_a_method():
    sim = chain()
    calls = []
    sim.energy = lambda: calls.append("energy")  # a test double, as mock.patch makes
    sim.energy()
    del sim.energy
    assert calls == ["energy"] and sim.energy().total != 0


def test_a_subclass_declares_its_own_attributes():
    class Labelled(ss.System):
        label: str

    sim = Labelled(dim=2)
    sim.label = "pendulum"
    assert sim.label == "pendulum"
    with pytest.raises(AttributeError, match="Labelled has no attribute 'colour'"):
        sim.colour = "red"
    sim.gravity = (0, -1)
    assert isinstance(sim.copy(), Labelled)


@pytest.mark.slow  # a timing check
def test_the_attribute_guard_costs_little():
    # step is C: no Python __setattr__ on its path; an assignment from Python pays one
    # set lookup (about 0.1 µs), well below what the view property itself costs.
    sim = chain()
    start = time.perf_counter()
    for _ in range(20000):
        sim.drag = 0.0
    per_assignment = (time.perf_counter() - start) / 20000
    assert per_assignment < 20e-6


# ---------------------------------------------------------------- boolean masks


def test_pin_unpin_and_drive_take_a_boolean_mask():
    sim = ss.cloth(4, 4, width=1.0, height=1.0, mass=0.2, stiffness=50.0, pin=None)
    top = sim.positions[:, 1] > 0.9
    sim.pin(top)
    assert np.array_equal(sim.pinned, top)
    sim.unpin(top.tolist())  # a list of bools is a mask too
    assert not sim.pinned.any()
    sim.pin(top, velocity=(0.0, 0.1, 0.0))
    sim.step(1e-3, steps=10)
    assert np.allclose(sim.velocities[top], [0.0, 0.1, 0.0])
    sim.drive(top, None)  # stop them: held where they are
    assert not sim.velocities[top].any() and np.array_equal(sim.pinned, top)
    targets = np.array(sim.positions[top])[None] + [0.0, 0.0, 0.01]
    sim.drive(top, targets)
    sim.step(1e-3)
    assert np.array_equal(sim.positions[top], targets[0])


def test_remove_nodes_and_springs_take_a_boolean_mask():
    sim = ss.string(6, length=1.0, mass=0.6, stiffness=10.0, dim=2)
    long = np.zeros(sim.num_springs, dtype=bool)
    long[[1, 3]] = True
    sim.remove_springs(long)
    assert sim.springs.tolist() == [[0, 1], [2, 3], [4, 5]]
    old_to_new = sim.remove_nodes(sim.positions[:, 0] > 0.5)
    assert old_to_new.tolist() == [0, 1, 2, -1, -1, -1]
    assert sim.num_nodes == 3 and sim.springs.tolist() == [[0, 1]]


def test_rigid_frame_and_frame_nodes_take_a_boolean_mask():
    sim = ss.string(5, length=1.0, mass=0.5, stiffness=10.0, dim=2)
    mask = np.array([False, True, True, False, True])
    center, _ = sim.rigid_frame(mask)
    assert np.allclose(center, sim.positions[mask].mean(axis=0))
    history = sim.run(0.01, 1e-3, frames=2, frame_nodes=mask, progress=False)
    assert history.frame_nodes.tolist() == [1, 2, 4] and history.frames.shape == (2, 3, 2)


@pytest.mark.parametrize(
    "call",
    [
        lambda sim, m: sim.pin(m),
        lambda sim, m: sim.unpin(m),
        lambda sim, m: sim.pin(m, velocity=(1.0, 0.0)),
        lambda sim, m: sim.drive(m, lambda t: [0.0, 0.0]),
        lambda sim, m: sim.remove_nodes(m),
        lambda sim, m: sim.rigid_frame(m),
        lambda sim, m: sim.run(0.01, 1e-3, frame_nodes=m, progress=False),
    ],
    ids=["pin", "unpin", "pin velocity", "drive", "remove_nodes", "rigid_frame", "run"],
)
def test_a_mask_of_the_wrong_length_raises_index_error(call):
    sim = ss.string(5, length=1.0, mass=0.5, stiffness=10.0, dim=2)
    before = (np.array(sim.positions), np.array(sim.pinned), sim.num_nodes, sim.time)
    with pytest.raises(IndexError, match=r"one entry per node \(5\), got 4"):
        call(sim, np.ones(4, dtype=bool))
    after = (np.array(sim.positions), np.array(sim.pinned), sim.num_nodes, sim.time)
    assert all(np.array_equal(a, b) for a, b in zip(before, after, strict=True))


def test_masks_are_refused_where_they_mean_nothing():
    sim = ss.string(3, length=1.0, mass=0.3, stiffness=10.0, dim=2)
    with pytest.raises(IndexError, match=r"one entry per spring \(2\), got 3"):
        sim.remove_springs([True, False, True])
    with pytest.raises(TypeError, match="pairs must be integers, got dtype bool"):
        sim.add_springs([[True, False]], stiffness=1.0)  # a pair of nodes is no selection
    with pytest.raises(TypeError, match="boolean mask of shape"):
        sim.pin(True)  # a single bool is neither an index nor a mask
    assert sim.num_springs == 2 and sim.pinned.tolist() == [True, False, False]


# ---------------------------------------------------------------- duplicate springs


def test_a_spring_on_a_joined_pair_warns():
    sim = ss.System(dim=2)
    sim.add_nodes([[0, 0], [1, 0], [2, 0]])
    sim.add_springs([[0, 1], [1, 2]], stiffness=10.0)
    joins = r"1 new spring \(of 2\) joins nodes that a spring already joins: \(1, 0\)"
    with pytest.warns(ss.DuplicateSpringWarning, match=joins) as w:
        added = sim.add_springs([[1, 0], [0, 2]], stiffness=10.0)  # either order
    assert added.tolist() == [2, 3] and sim.num_springs == 4  # added all the same
    (report,) = w
    assert report.message.springs.tolist() == [2] and report.message.pairs.tolist() == [[1, 0]]
    assert issubclass(ss.DuplicateSpringWarning, UserWarning)


def test_a_pair_twice_in_one_call_warns_and_connect_warns():
    sim = ss.System(dim=2)
    sim.add_nodes(np.eye(2))
    with pytest.warns(ss.DuplicateSpringWarning, match=r"2 new springs \(of 3\) join") as w:
        sim.add_springs([[0, 1], [1, 0], [0, 1]], stiffness=1.0)
    assert w[0].message.springs.tolist() == [1, 2]  # the first one is the original
    with pytest.warns(ss.DuplicateSpringWarning, match=r"\(0, 1\)"):
        sim.connect(0, 1, stiffness=1.0)
    assert sim.num_springs == 4


def test_distinct_springs_and_every_builder_add_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ss.DuplicateSpringWarning)
        sim = ss.System(dim=3)
        sim.add_nodes(np.eye(3))
        sim.add_springs([[0, 1], [1, 2], [2, 0]], stiffness=1.0)
        ss.string(10, length=1.0, mass=0.1, stiffness=1.0)
        ss.cloth(6, 5, width=1.0, height=1.0, mass=0.1, stiffness=1.0)
        ss.jelly(3, 3, 3, size=1.0, mass=1.0, stiffness=1.0)
        ss.jelly(3, 3, size=1.0, mass=1.0, stiffness=1.0)
        ss.ball(subdivisions=1, radius=1.0, mass=1.0, stiffness=1.0, nrt=1.0)
        ss.ball(nodes=8, radius=1.0, mass=1.0, stiffness=1.0, dim=2)
        ss.cluster(np.eye(3), mass=1.0, stiffness=1.0)
        ss.balloon(radius=0.2, string_length=0.5, mass=0.1, stiffness=10.0)


def test_a_duplicate_under_an_error_filter_adds_nothing():
    sim = ss.System(dim=2)
    sim.add_nodes(np.eye(2))
    sim.add_springs([0, 1], stiffness=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ss.DuplicateSpringWarning)
        with pytest.raises(ss.DuplicateSpringWarning):
            sim.add_springs([1, 0], stiffness=1.0)
    assert sim.num_springs == 1


@pytest.mark.slow  # a timing check
def test_the_duplicate_check_is_a_few_percent_of_a_large_build():
    sim = ss.cloth(300, 300, width=1.0, height=1.0, mass=1.0, stiffness=1.0)
    pairs = sim.springs.astype(np.int64)
    start = time.perf_counter()
    _warn_duplicates(np.zeros((0, 2), np.int32), pairs, sim.num_nodes)  # a fresh build
    fresh = time.perf_counter() - start
    start = time.perf_counter()
    _warn_duplicates(sim.springs, np.array([[0, 605]]), sim.num_nodes)  # one more spring
    one_more = time.perf_counter() - start
    start = time.perf_counter()
    ss.cloth(300, 300, width=1.0, height=1.0, mass=1.0, stiffness=1.0)
    build = time.perf_counter() - start
    assert fresh < 0.25 * build and one_more < 0.25 * build, (fresh, one_more, build)


# ---------------------------------------------------------------- run()


def test_run_refuses_a_duration_shorter_than_its_step():
    sim = chain()
    with pytest.raises(ValueError, match=r"duration = 0.0001 s is shorter than one step"):
        sim.run(1e-4, dt=1e-3, progress=False)  # it used to run 1e-3 s: 10 times longer
    assert sim.time == 0.0
    assert sim.run(1e-3, dt=1e-3, progress=False).steps == 1
    assert sim.run(0.003, dt=1e-3, progress=False).steps == 3  # 0.003 / 1e-3 = 2.99...96


def test_run_keeps_every_frame_asked_even_closer_than_dt():
    # run() used to keep one frame per step (and warn) when asked for more frames than
    # steps; frames now fall on their exact times, a frame interval shorter than dt
    # being one shortened substep: all 3000 frames, evenly spaced, and no warning.
    sim = chain()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        history = sim.run(1.0, dt=1e-3, frames=3000, progress=False)
    assert history.frames.shape[0] == 3000 and history.steps == 2999
    np.testing.assert_allclose(history.frame_times, np.linspace(0.0, 1.0, 3000), atol=1e-13)


# ---------------------------------------------------------------- save and pickle drives


class Shake:
    """A picklable drive path (a module-level class)."""

    def __call__(self, t):
        return [0.05 * np.sin(20 * t), 0.0]


def driven_string():
    sim = ss.string(6, length=1.0, mass=0.3, stiffness=200.0, dim=2, pin="both")
    rng = np.random.default_rng(4)
    sim.drive(5, np.array(sim.positions[5]) + rng.normal(0, 0.01, size=(40, 1, 2)))
    sim.pin([0, 1], velocity=[[0.0, 0.2], [0.0, 0.3]])
    sim.step(1e-3, steps=7)  # part-way along both
    sim.remove_nodes([1, 2])  # renumbered drives are kept too (one node of the line left)
    return sim


def test_save_keeps_target_arrays_and_dragged_pins(tmp_path):
    sim = driven_string()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing is dropped: no warning
        sim.save(tmp_path / "driven.npz")
    again = ss.load(tmp_path / "driven.npz")
    assert [d.counter for d in drives(again)] == [d.counter for d in drives(sim)] == [7, 7]
    sim.step(1e-3, steps=50)  # beyond the targets' end: held at the last
    again.step(1e-3, steps=50)
    assert np.array_equal(sim.positions, again.positions)
    assert np.array_equal(sim.velocities, again.velocities)
    assert again.positions[0, 1] == pytest.approx(0.2 * 0.057)


def test_save_warns_about_a_drive_it_cannot_keep(tmp_path):
    sim = ss.string(4, length=1.0, mass=0.3, stiffness=100.0, dim=2)
    sim.drive([0, 3], lambda t: [[0.0, 0.1 * t], [1.0, 0.0]])
    sim.drive(1, [[[0.3, 0.0]]])
    with pytest.warns(UserWarning, match=r"cannot keep 1 drive, the drive of nodes \[0, 3\]") as w:
        sim.save(tmp_path / "s.npz")
    assert w[0].filename == __file__
    again = ss.load(tmp_path / "s.npz")
    assert [d.indices.tolist() for d in drives(again)] == [[1]]
    assert again.pinned[[0, 3]].all()  # held still where they were
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning):
            sim.save(tmp_path / "t.npz")
    assert not (tmp_path / "t.npz").exists()


def test_a_file_with_bad_drive_entries_is_refused(tmp_path):
    sim = driven_string()
    sim.save(tmp_path / "good.npz")
    with np.load(tmp_path / "good.npz") as npz:
        entries = dict(npz)
    for key, value, problem in [
        ("drive_nodes", entries["drive_nodes"] + 100, "out of range"),
        ("drive_values", entries["drive_values"] * np.nan, "not finite"),
        ("drives", entries["drives"] * [1, 1, 1, -1], "is not a drive"),
        ("drives", entries["drives"] + [0, 1, 0, 0], "the drives need"),
        ("drive_t0", entries["drive_t0"][:1], "'drive_t0' must be float64"),
    ]:
        np.savez(tmp_path / "bad.npz", **{**entries, key: value})
        with pytest.raises(ValueError, match=f"bad.npz: .*{problem}"):
            ss.load(tmp_path / "bad.npz")


def test_pickling_a_lambda_drive_names_the_drive():
    sim = ss.string(4, length=1.0, mass=0.3, stiffness=100.0, dim=2)
    sim.drive(3, lambda t: [1.0, 0.1 * t])
    with pytest.raises(pickle.PicklingError, match=r"the drive of nodes \[3\] \(path <function"):
        pickle.dumps(sim)
    cloudpickle = pytest.importorskip("cloudpickle")
    twin = cloudpickle.loads(cloudpickle.dumps(sim))  # stores functions by value
    assert drives(twin)[0].function(1.0) == [1.0, 0.1]
    deep = copy.deepcopy(sim)  # a copy shares the path: no pickling
    assert drives(deep)[0].function is drives(sim)[0].function
    sim.drive(3, Shake())  # a module-level class pickles
    again = pickle.loads(pickle.dumps(sim))
    sim.step(1e-3, steps=20)
    again.step(1e-3, steps=20)
    assert np.array_equal(sim.positions, again.positions)


# ---------------------------------------------------------------- install hints, demo


def test_install_hints_name_a_package_pip_can_install(monkeypatch):
    sim = ss.string(3, length=1.0, mass=0.3, stiffness=10.0, dim=2)
    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.sparse", None)
    with pytest.raises(ImportError, match=r"pip install scipy$"):
        sim.stiffness_matrix()
    monkeypatch.setitem(sys.modules, "pandas", None)
    history = sim.run(0.01, 1e-3, progress=False)
    with pytest.raises(ImportError, match=r"pip install pandas$"):
        history.to_dataframe()


def test_relax_plot_and_read_mesh_name_their_packages(monkeypatch, tmp_path):
    sim = ss.string(3, length=1.0, mass=0.3, stiffness=10.0, dim=2)
    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.sparse", None)
    monkeypatch.setitem(sys.modules, "scipy.sparse.linalg", None)
    with pytest.raises(ImportError, match=r"pip install scipy$"):
        sim.relax()
    monkeypatch.setitem(sys.modules, "meshio", None)
    (tmp_path / "m.stl").write_text("solid m\nendsolid m\n")
    with pytest.raises(ImportError, match=r"pip install meshio$"):
        ss.read_mesh(tmp_path / "m.stl", mass=1.0, stiffness=1.0)
    from springsim import plot

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"pip install matplotlib$"):
        plot.draw(sim)


def test_no_install_hint_names_an_extra_of_springsim():
    # springsim is installed from a clone, not from PyPI: "pip install springsim[x]"
    # cannot work for a user, so every hint in the package names what pip can install.
    root = pathlib.Path(ss.__file__).parent
    hints = [
        f"{path.name}: {line.strip()}"
        for path in root.rglob("*.py")
        for line in path.read_text().splitlines()
        if "pip install" in line and "springsim[" in line
    ]
    assert hints == []


def test_demo_png_without_matplotlib_fails_before_running(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    ran = []
    monkeypatch.setattr(demo, "run_table", lambda *args: ran.append(args))
    with pytest.raises(SystemExit) as stopped:
        demo.main(["demo", "string", "--png", "out.png"])
    assert stopped.value.code == 2 and not ran
    assert "--png needs matplotlib, which is not installed: pip install matplotlib" in (
        capsys.readouterr().err
    )


def test_the_demo_docs_give_the_same_command():
    assert "pip install matplotlib" in " ".join(demo.__doc__.split())


# ---------------------------------------------------------------- warnings at the user's line


def held_apart():
    """A free node between two pins 4 m apart on springs of rest length 1, limited to
    10 % strain: strain limiting cannot meet it, and every step warns
    (ConvergenceWarning). Node 3, on its own, is there to be driven."""
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 0.0], [4.0, 0.0], [2.0, -0.5], [5.0, 0.0]], pinned=[1, 1, 0, 1])
    sim.add_springs([[0, 2], [2, 1]], stiffness=10.0, rest_lengths=[1.0, 1.0])
    sim.max_strain = 0.1
    return sim


def stiff_pendulum():
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 0.0], [1.0, 0.0]], pinned=[True, False])
    sim.add_springs([0, 1], stiffness=1e13)
    return sim


def caught(call):
    with warnings.catch_warnings(record=True) as found:
        warnings.simplefilter("always")
        call()
    return found


@pytest.mark.parametrize(
    "make, call, category",
    [
        (held_apart, lambda sim: sim.step(1e-3, steps=3), ss.ConvergenceWarning),
        (held_apart, lambda sim: sim.run(0.01, 1e-3, progress=False), ss.ConvergenceWarning),
        (
            held_apart,
            lambda sim: (sim.drive(3, [[[5.0, 0.1]]]), sim.step(1e-3, steps=2)),
            ss.ConvergenceWarning,
        ),
        (
            held_apart,
            lambda sim: (sim.drive(3, [[[5.0, 0.1]]]), sim.run(0.003, 1e-3, progress=False)),
            ss.ConvergenceWarning,
        ),
        (
            stiff_pendulum,
            lambda sim: sim.step(1e-3, steps=2, method="implicit_euler"),
            ss.StiffnessWarning,
        ),
        (
            stiff_pendulum,
            lambda sim: sim.run(0.005, 1e-3, method="implicit_euler", progress=False),
            ss.StiffnessWarning,
        ),
    ],
    ids=["step", "run", "driven step", "driven run", "stiff step", "stiff run"],
)
def test_the_kernels_warnings_point_at_the_users_line(make, call, category):
    sim = make()
    found = [w for w in caught(lambda: call(sim)) if issubclass(w.category, category)]
    assert found, f"no {category.__name__}"
    assert {w.filename for w in found} == {__file__}, [(w.filename, w.lineno) for w in found]


def test_a_capped_solve_warns_at_the_users_line():
    cloth = ss.cloth(8, 8, width=1.0, height=1.0, mass=0.1, stiffness=1e4)
    cloth.cg_max_iterations = 1
    found = caught(lambda: cloth.run(0.01, 5e-3, method="implicit_euler", progress=False))
    capped = [w for w in found if "conjugate gradients" in str(w.message)]
    assert capped and {w.filename for w in capped} == {__file__}


def test_pythons_warnings_point_at_the_users_line(tmp_path):
    sim = ss.System(dim=2)
    sim.add_nodes(np.eye(2))
    sim.add_springs([0, 1], stiffness=1.0)
    (w,) = caught(lambda: sim.connect(1, 0, stiffness=1.0))  # connect -> add_springs
    line = sys._getframe().f_lineno - 1
    assert (w.filename, w.lineno) == (__file__, line)
    assert issubclass(w.category, ss.DuplicateSpringWarning)
    assert re.search(r"\(1, 0\), as spring 1\.", str(w.message))
