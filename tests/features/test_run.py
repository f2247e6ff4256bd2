"""run() and History: the records, the energy books, stopping early, bad arguments."""

import importlib
import pickle
import sys
import types
import warnings

import numpy as np
import pytest
from state import assert_same, snapshot

import springsim as ss
from springsim.stepping import run as run_module


def hanging_string(damping=0.05, n=20):
    """A string pinned at its top, hanging down (y from 0 to -1), pushed sideways."""
    sim = ss.string(
        n, length=1.0, mass=0.2, stiffness=200.0, damping=damping, dim=2, direction=(0, -1)
    )
    sim.velocities[:, 0] = np.linspace(0.0, 1.0, n)
    return sim


def test_records_and_frames_fall_where_asked():
    sim = hanging_string()
    twin = sim.copy()
    h = sim.run(1.0, 1e-3, record_every=100, frames=6, frame_nodes=[0, 5, 19], progress=False)
    np.testing.assert_allclose(h.times, np.arange(11) * 0.1, atol=1e-12)
    np.testing.assert_allclose(h.frame_times, np.arange(6) * 0.2, atol=1e-12)
    assert h.frames.shape == (6, 3, 2) and h.steps == 1000 and not h.interrupted
    assert h.edges.shape == (0, 2)  # no spring joins two of nodes 0, 5, 19
    # The run is the same steps as one step() call, bit for bit, and frame k is the
    # state after 200 k steps.
    for k in range(1, 6):
        twin.step(1e-3, 200)
        np.testing.assert_array_equal(h.frames[k], twin.positions[[0, 5, 19]])
    assert_same(snapshot(sim, books=False), snapshot(twin, books=False))
    assert h.momentum.shape == (11, 2)
    np.testing.assert_array_equal(h.momentum[-1], sim.momentum())
    e = sim.energy()
    assert (h.kinetic[-1], h.elastic[-1], h.gravity[-1], h.pressure[-1]) == e[:4]


def test_default_records_and_edges_of_all_nodes():
    sim = hanging_string()
    h = sim.run(0.5, 1e-4, frames=2, progress=False)
    assert len(h) == 1001 and h.steps == 5000  # about 1000 records by default, and the start
    np.testing.assert_array_equal(h.edges, sim.springs)
    assert h.frames.shape == (2, 20, 2)
    assert "1001 records" in repr(h)


def test_damped_string_books_balance_with_symplectic_euler():
    # Total + dissipated stays within 1e-3 of the starting total over 10⁴ steps of
    # symplectic Euler (issue 9): the damping power is integrated by the trapezoid rule,
    # and symplectic Euler's own bounded O(dt) energy error is the rest. Measured: 1e-4
    # of the total, and 0.3% of the energy in motion (the kinetic energy at the start),
    # which must stay below 1%.
    sim = hanging_string(damping=0.05)
    moving = sim.energy().kinetic
    h = sim.run(10_000 * 2e-4, 2e-4, method="symplectic_euler", progress=False)
    books = h.total + h.dissipated
    assert h.dissipated[-1] > 0.3 * moving  # damping did take a good share
    assert np.abs(books - books[0]).max() < 1e-3 * abs(h.total[0])
    assert np.abs(books - books[0]).max() < 1e-2 * moving


@pytest.mark.parametrize("method, tolerance", [("rk4", 2e-6), ("velocity_verlet", 2e-5)])
def test_every_loss_is_accounted_for(method, tolerance):
    # Damping, drag against a wind, energy_loss and an inelastic, rough floor at
    # once: with an accurate integrator the books balance to its error (measured 5e-7
    # of the energy scale for rk4, set by the contacts, which no integrator resolves
    # within a step).
    ball = ss.ball(nodes=12, radius=0.3, mass=1.0, stiffness=500.0, damping=0.2, dim=2, nrt=2.0)
    ball.drag, ball.wind, ball.energy_loss = 0.05, (0.3, 0.0), 0.99995
    ball.velocities[:, 0] = 1.0
    ball.add_plane((0, 1), offset=-0.8, restitution=0.4, friction=0.3)
    h = ball.run(2.0, 1e-4, method=method, progress=False)
    books = h.total + h.dissipated
    assert h.dissipated[-1] > 0.2 * abs(h.total[0])
    assert np.abs(books - books[0]).max() < tolerance * np.abs(h.total).max()
    assert not ball.track_energy  # restored


def test_contact_losses_are_counted_exactly():
    # A node dropped on a floor with restitution e: each bounce keeps e² of the kinetic
    # energy; everything else lost is in `dissipated`, to the symplectic step's error.
    drop = ss.System(dim=2)
    drop.add_nodes([0.0, 1.0])
    drop.add_plane((0, 1), restitution=0.5)
    h = drop.run(3.0, 1e-5, method="velocity_verlet", progress=False)
    books = h.total + h.dissipated
    assert h.dissipated[-1] == pytest.approx(
        9.81 * (1.0 - drop.positions[0, 1]) - h.kinetic[-1], rel=1e-3
    )
    assert np.abs(books - books[0]).max() < 1e-3 * 9.81


def test_callback_can_stop_and_sees_every_record():
    sim = hanging_string()
    seen = []

    def stop_at_half_a_second(s):
        seen.append(s.time)
        return s.time >= 0.5 - 1e-12

    h = sim.run(1.0, 1e-3, record_every=100, callback=stop_at_half_a_second, progress=False)
    assert h.interrupted and h.steps == 500 and len(h) == 6
    np.testing.assert_allclose(seen, h.times)
    assert sim.time == pytest.approx(0.5)


def test_keyboard_interrupt_keeps_the_records():
    sim = hanging_string()

    def control_c(s):
        if s.time > 0.25:
            raise KeyboardInterrupt

    h = sim.run(1.0, 1e-3, record_every=100, frames=11, callback=control_c, progress=False)
    assert h.interrupted and len(h) == 4 and h.steps == 300
    assert len(h.frame_times) == 4 and h.frames.shape == (4, 20, 2)
    assert not sim.track_energy


def interrupt_on_call(sim, call, after_stepping):
    """Make run()'s kernel calls (sim._step_in_run) raise KeyboardInterrupt on the
    `call`-th: after the substeps ran (a Ctrl-C that arrives as C returns) or before any
    ran (one that arrives before, or a call that rolls back)."""
    real_step, calls = sim._step_in_run, []

    def step(dt, steps, method, books, *contact_dt):
        calls.append(steps)
        if len(calls) == call and not after_stepping:
            raise KeyboardInterrupt
        real_step(dt, steps, method, books, *contact_dt)
        if len(calls) == call:
            raise KeyboardInterrupt

    sim._step_in_run = step
    return calls


@pytest.mark.parametrize("after_stepping", [True, False])
@pytest.mark.parametrize("call", [1, 3])
def test_ctrl_c_in_a_step_call_counts_the_steps_taken(call, after_stepping):
    sim = hanging_string()
    sim.time = t0 = 0.37
    dt = 1e-3
    calls = interrupt_on_call(sim, call, after_stepping)
    h = sim.run(1.0, dt, record_every=7, progress=False)
    assert h.interrupted and len(calls) == call
    taken = sum(calls) - (0 if after_stepping else calls[-1])
    assert h.steps == taken
    assert h.steps * dt == pytest.approx(sim.time - t0, rel=1e-12, abs=1e-15)
    # The history ends where the system stopped, and its books are those of the end.
    assert h.times[0] == t0 and h.times[-1] == sim.time
    np.testing.assert_array_equal(h.momentum[-1], sim.momentum())
    assert h.kinetic[-1] == sim.energy().kinetic
    assert np.all(np.diff(h.times) > 0)  # no record twice


def test_a_failing_callback_raises_with_the_records_so_far():
    sim = hanging_string()

    def fails_at_a_quarter(s):
        if s.time > 0.25:
            raise ZeroDivisionError("in the callback")

    with pytest.raises(ZeroDivisionError, match="in the callback") as info:
        sim.run(1.0, 1e-3, record_every=100, frames=11, callback=fails_at_a_quarter, progress=False)
    history = info.value.history
    assert len(history) == 4 and history.steps == 300 and history.times[-1] == sim.time
    assert history.frames.shape == (4, 20, 2)
    assert any(".history" in note for note in getattr(info.value, "__notes__", []))
    assert not sim.track_energy


def test_a_blow_up_raises_with_the_records_so_far():
    sim = hanging_string(damping=0.0)
    with pytest.raises(ss.UnstableError) as info:
        sim.run(10.0, 0.05, record_every=1, progress=False)
    history = info.value.history
    assert len(history) >= 1 and history.times[0] == 0.0
    assert sim.time == pytest.approx(
        history.times[-1], abs=0.05 * 64
    )  # rolled back to a chunk's start


def test_progress_bar_shows_on_long_runs(monkeypatch, capsys):
    monkeypatch.setattr(run_module, "PROGRESS_AFTER", 0.0)
    hanging_string().run(0.1, 1e-3, progress=True)
    assert "springsim run" in capsys.readouterr().err
    hanging_string().run(0.1, 1e-3, progress=False)
    assert "springsim run" not in capsys.readouterr().err


def test_to_dataframe_has_every_column():
    h = hanging_string().run(0.1, 1e-3, record_every=10, progress=False)
    frame = h.to_dataframe()
    assert list(frame.columns) == [
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
    np.testing.assert_array_equal(frame["total"], h.total)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"duration": 0.0}, ValueError, "duration must be a positive"),
        ({"dt": float("nan")}, ValueError, "dt must be a positive"),
        ({"dt": "1e-3"}, TypeError, "dt must be a number"),
        ({"record_every": 0}, ValueError, "record_every must be >= 1"),
        ({"record_every": 2.5}, TypeError, "record_every must be an int"),
        ({"frames": 0}, ValueError, "frames must be >= 1"),
        ({"frame_nodes": [20]}, ValueError, r"frame_nodes must be in \[0, 20\)"),
        ({"frame_nodes": [0.5]}, TypeError, "frame_nodes must be integers"),
        ({"callback": 3}, TypeError, "callback must be callable"),
        ({"method": "leapfrog"}, ValueError, "unknown method 'leapfrog'"),
    ],
)
def test_bad_arguments_run_nothing(kwargs, error, match):
    sim = hanging_string()
    before = snapshot(sim)
    arguments = {"duration": 0.1, "dt": 1e-3, "progress": False} | kwargs
    with pytest.raises(error, match=match):
        sim.run(**arguments)
    assert_same(before, snapshot(sim))


def test_a_run_of_an_empty_system_records_its_clock():
    # The fuzzer found run() of a system without nodes failing after it had advanced the
    # clock (frames of zero nodes could not be reshaped).
    sim = ss.System(dim=2)
    h = sim.run(1e-3, 1e-4, frames=3, progress=False)
    assert h.frames.shape == (3, 0, 2)
    assert h.steps == 10 and sim.time == pytest.approx(1e-3)


def test_frames_hold_velocities_pins_tensions_and_strains():
    # Frames of nodes 0..9 of a 20-node string (the springs among them: 9): frame k is
    # the state after 200 k steps of one step() call, velocities, pins, the springs'
    # tensions (k (l - L) + c (closing speed), as spring_tensions() gives them) and
    # strains included.
    sim = hanging_string(damping=0.05)
    twin = sim.copy()
    nodes = np.arange(10)
    h = sim.run(1.0, 1e-3, record_every=100, frames=6, frame_nodes=nodes, progress=False)
    np.testing.assert_array_equal(h.edges, [[i, i + 1] for i in range(9)])
    assert h.frame_velocities.shape == (6, 10, 2) and h.frame_tensions.shape == (6, 9)
    for k in range(6):
        if k:
            twin.step(1e-3, 200)
        np.testing.assert_array_equal(h.frame_velocities[k], twin.velocities[nodes])
        np.testing.assert_array_equal(h.frame_pinned[k], twin.pinned[nodes])
        np.testing.assert_array_equal(h.frame_tensions[k], twin.spring_tensions()[:9])
        x, rest = twin.positions, twin.rest_lengths[:9]
        strain = np.linalg.norm(x[1:10] - x[:9], axis=1) / rest - 1.0
        np.testing.assert_allclose(h.frame_strains[k], strain, rtol=0, atol=1e-15)
    assert h.frame_pinned[:, 0].all() and not h.frame_pinned[:, 1:].any()
    assert abs(h.frame_tensions).max() > 0.1  # it swings: the springs work


def test_frames_follow_each_spring_through_tearing():
    # A cloth whose springs tear as it falls onto a sphere: each recorded tension is the
    # one of the spring joining the same two nodes, NaN once that spring is gone.
    cloth = ss.cloth(6, 6, width=1.0, height=1.0, mass=0.1, stiffness=50.0, damping=0.01)
    cloth.break_strains = 0.02
    cloth.add_sphere((0.5, -2.0, 0.2), 0.3)
    cloth.add_plane((0.0, 1.0, 0.0), -3.0)
    start = np.array(cloth.springs)
    tensions = []

    def watch(sim):  # the tension of each start spring, by its nodes, now
        pairs = [tuple(pair) for pair in sim.springs.tolist()]
        now = dict(zip(pairs, sim.spring_tensions(), strict=True))
        tensions.append([now.get(tuple(pair), np.nan) for pair in start.tolist()])

    h = cloth.run(0.5, 1e-3, record_every=100, frames=6, callback=watch, progress=False)
    np.testing.assert_array_equal(h.frame_tensions, tensions)  # frames fall on records
    gone = np.isnan(h.frame_tensions).sum(axis=1)
    assert gone[0] == 0 and gone[-1] == len(start) - cloth.num_springs > 0
    assert np.all(np.diff(gone) >= 0)
    assert np.array_equal(np.isnan(h.frame_strains), np.isnan(h.frame_tensions))
    np.testing.assert_array_equal(h.faces, cloth.faces)
    np.testing.assert_array_equal(h.colliders, [[1, 0.5, -2.0, 0.2, 0.3], [0, 0, 1, 0, -3.0]])


def test_a_history_from_before_these_records_still_loads():
    # A History pickled before frames held velocities, pins, tensions and strains:
    # they are unknown (NaN, not pinned), the rest as it was.
    h = hanging_string().run(0.1, 1e-3, frames=3, progress=False)
    old = {
        k: v
        for k, v in h._arrays().items()
        if k
        not in (
            "frame_velocities",
            "frame_pinned",
            "frame_tensions",
            "frame_strains",
            "faces",
            "colliders",
            "contact",
            "radii",
        )
    }
    back = ss.History(**old)
    assert not back.contact.any() and not back.radii.any()  # before node-node contact
    np.testing.assert_array_equal(back.frames, h.frames)
    assert np.isnan(back.frame_velocities).all() and back.frame_velocities.shape == (3, 20, 2)
    assert np.isnan(back.frame_tensions).all() and back.frame_tensions.shape == (3, 19)
    assert not back.frame_pinned.any() and back.faces.shape == (0, 3)
    assert back.colliders.shape == (0, 4)
    assert pickle.loads(pickle.dumps(h)) == h  # the new records pickle too


@pytest.fixture
def notebook_without_ipywidgets(monkeypatch):
    """This process as a Jupyter kernel sees it (tqdm.autonotebook's test: ipykernel's
    shell loaded, IPython's shell not a console) with ipywidgets not installed."""
    shell = types.ModuleType("IPython")
    shell.get_ipython = lambda: type("ZMQInteractiveShell", (), {})()
    monkeypatch.setitem(sys.modules, "IPython", shell)
    monkeypatch.setitem(sys.modules, "ipykernel.zmqshell", types.ModuleType("zmqshell"))
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # import ipywidgets: ImportError
    for name in ("tqdm.auto", "tqdm.autonotebook", "tqdm.notebook"):
        monkeypatch.delitem(sys.modules, name, raising=False)  # imported afresh


def test_a_notebook_without_ipywidgets_gets_a_text_bar_and_no_warning(
    notebook_without_ipywidgets, monkeypatch, capsys
):
    from tqdm import TqdmWarning

    monkeypatch.setattr(run_module, "PROGRESS_AFTER", 0.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hanging_string().run(0.1, 1e-3, progress=True)
    assert not [w for w in caught if issubclass(w.category, TqdmWarning)]
    bar = capsys.readouterr().err
    assert "springsim run" in bar and "100/100" in bar and "step" in bar  # a text bar
    # (tqdm.auto itself, in this notebook, warns: what run() used to show.)
    with pytest.warns(TqdmWarning, match="IProgress not found"):
        importlib.import_module("tqdm.auto")


def test_the_widget_bar_is_used_where_ipywidgets_is(monkeypatch):
    monkeypatch.setitem(sys.modules, "ipywidgets", types.ModuleType("ipywidgets"))
    import tqdm.auto
    import tqdm.std

    assert run_module._bar_class() is tqdm.auto.tqdm
    monkeypatch.setitem(sys.modules, "ipywidgets", None)
    assert run_module._bar_class() is tqdm.std.tqdm
