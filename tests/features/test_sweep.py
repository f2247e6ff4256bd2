"""Parameter sweeps on every executor, and the pickling that ships work to workers."""

import pickle
import threading

import numpy as np
import pytest
from state import ARRAYS, assert_same, snapshot

import springsim as ss
from springsim.stepping.sweep import points_of

GRID = {"stiffness": [50.0, 100.0, 400.0], "dt": [2e-4, 1e-3, 0.05]}


def chain(stiffness, damping=0.01):
    """A string of 12 nodes hanging from its start: explicit limit 0.01..0.028 s."""
    return ss.string(12, length=1.0, mass=0.1, stiffness=stiffness, damping=damping)


def longest_spring(sim, history):
    return {
        "stretch": float(np.max(sim.spring_lengths() / sim.rest_lengths)),
        "records": len(history),
    }


def run_grid(**executor):
    return ss.sweep(
        chain,
        GRID,
        duration=10.0,
        dt=1e-3,
        measure=longest_spring,
        record_every=100,
        progress=False,
        keep_histories=True,
        **executor,
    )


@pytest.fixture(scope="module")
def in_process():
    return run_grid(workers=1)


def check_grid(result):
    assert len(result) == 9
    assert [(r["stiffness"], r["dt"]) for r in result] == [
        (k, dt) for k in GRID["stiffness"] for dt in GRID["dt"]
    ]
    for row in result:
        # dt = 0.05 s is beyond every chain's explicit limit: those points blow up
        if row["dt"] == 0.05:
            assert row["status"] == "unstable", row
            assert "diverged" in row["message"] and "try dt" in row["message"]
            assert np.isnan(row["stretch"]) and np.isnan(row["records"])  # not measured
        else:
            assert row["status"] == "ok" and row["message"] == "", row
            assert row["time"] == pytest.approx(10.0) and row["steps"] == round(10.0 / row["dt"])
            assert 1.0 < row["stretch"] < 1.5 and row["records"] > 10
            assert row["total"] == pytest.approx(
                row["kinetic"] + row["elastic"] + row["gravity"] + row["pressure"]
            )


def test_a_grid_in_process(in_process):
    check_grid(in_process)
    stable = [
        h for h, r in zip(in_process.histories, in_process, strict=True) if r["status"] == "ok"
    ]
    assert all(h.steps == round(10.0 / h.dt) for h in stable)


def test_local_processes_give_bit_identical_rows(in_process):
    local = run_grid(workers=2)
    check_grid(local)
    assert local == in_process  # every value, every history, bit for bit


def test_a_dask_cluster_gives_bit_identical_rows(in_process):
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        on_dask = run_grid(client=client)
    check_grid(on_dask)
    assert on_dask == in_process


def broken(stiffness):
    if stiffness < 0:
        raise ValueError("a negative stiffness is not a spring")
    return chain(stiffness)


def test_failing_points_are_recorded_and_the_others_complete():
    result = ss.sweep(
        broken,
        [
            {"stiffness": 100.0},
            {"stiffness": -1.0},
            {"stiffness": 100.0, "dt": 0.05, "duration": 20},
        ],
        duration=0.5,
        dt=1e-3,
        workers=2,
        progress=False,
    )
    ok, error, unstable = result
    assert ok["status"] == "ok" and ok["steps"] == 500
    assert error["status"] == "error"
    assert error["message"] == "ValueError: a negative stiffness is not a spring"
    assert np.isnan(error["total"]) and error["steps"] == 0
    assert unstable["status"] == "unstable" and "rolled back" in unstable["message"]
    assert "unstable" in repr(result) and "1 error" in repr(result)


class Unloadable:
    """A parameter that pickles but cannot be unpickled (in a worker)."""

    def __init__(self, size):
        self.size = size

    def __reduce__(self):
        return (Unloadable, ())  # __init__ then misses `size`: TypeError


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no message")


def fragile(stiffness, tag=None):
    if stiffness == 2.0:
        raise Unprintable()
    return chain(stiffness)


@pytest.mark.parametrize("workers", [1, 2])
def test_exceptions_that_escaped_a_point_now_stay_in_its_row(workers):
    # An exception whose message cannot be printed used to end the whole sweep.
    result = ss.sweep(
        fragile,
        {"stiffness": [100.0, 2.0, 50.0]},
        duration=0.05,
        dt=1e-3,
        workers=workers,
        progress=False,
    )
    ok, bad, fine = result
    assert ok["status"] == fine["status"] == "ok" and ok["steps"] == fine["steps"] == 50
    assert bad["status"] == "error" and bad["message"].startswith("Unprintable: ")
    assert "__main__" not in bad["message"]


def test_a_point_that_cannot_travel_to_a_worker_is_an_error_row():
    # One point fails to unpickle in its worker, which used to break the whole pool
    # ("call sweep() under if __name__ == '__main__'"); one cannot be pickled at all; a
    # lambda in a point travels by cloudpickle.
    result = ss.sweep(
        fragile,
        [
            {"stiffness": 100.0},
            {"stiffness": 100.0, "tag": Unloadable(3)},
            {"stiffness": 50.0, "tag": lambda t: t},
            {"stiffness": 50.0, "tag": threading.Lock()},
            {"stiffness": 100.0, "tag": 4},
        ],
        duration=0.05,
        dt=1e-3,
        workers=2,
        progress=False,
    )
    statuses = [row["status"] for row in result]
    assert statuses == ["ok", "error", "ok", "error", "ok"], list(result)
    assert "could not be loaded in the worker" in result[1]["message"]
    assert "TypeError" in result[1]["message"] and "could not be sent" in result[3]["message"]
    assert all("__main__" not in row["message"] for row in result)
    assert result[0]["steps"] == result[2]["steps"] == result[4]["steps"] == 50


def unsendable(sim, history):
    return {"handle": threading.Lock()}


def test_a_result_that_cannot_travel_back_is_an_error_row():
    result = ss.sweep(
        chain,
        {"stiffness": [50.0, 100.0]},
        duration=0.05,
        dt=1e-3,
        measure=unsendable,
        workers=2,
        progress=False,
    )
    assert [row["status"] for row in result] == ["error", "error"]
    assert all("could not be sent back" in row["message"] for row in result)


def test_measure_and_build_mistakes_become_errors():
    def bad_measure(sim, history):
        return {"stiffness": 1.0}  # clashes with a parameter

    result = ss.sweep(chain, {"stiffness": [100.0]}, 0.1, 1e-3, measure=bad_measure, progress=False)
    assert result[0]["status"] == "error" and "'stiffness', a parameter" in result[0]["message"]
    result = ss.sweep(lambda stiffness: 3, {"stiffness": [1.0]}, 0.1, 1e-3, progress=False)
    assert result[0]["message"] == "TypeError: build returned int, not a springsim.System"


def test_points_of_a_grid_and_a_list():
    assert points_of({"a": [1, 2], "b": ["x", "y"], "c": 5}) == [
        {"a": 1, "b": "x", "c": 5},
        {"a": 1, "b": "y", "c": 5},
        {"a": 2, "b": "x", "c": 5},
        {"a": 2, "b": "y", "c": 5},
    ]
    assert points_of([{"a": 1}, {"b": 2}]) == [{"a": 1}, {"b": 2}]
    for bad, error in (
        ({}, ValueError),
        ([], ValueError),
        ({"a": []}, ValueError),
        ("ab", TypeError),
        ([1, 2], TypeError),
        ({1: [2]}, TypeError),
    ):
        with pytest.raises(error):
            points_of(bad)


def test_bad_sweep_arguments_raise():
    with pytest.raises(TypeError, match="build must be callable"):
        ss.sweep(3, {"a": [1]}, 1.0, 1e-3)
    with pytest.raises(TypeError, match="measure must be callable"):
        ss.sweep(chain, {"stiffness": [1.0]}, 1.0, 1e-3, measure=5)
    with pytest.raises(ValueError, match="workers must be an int >= 1"):
        ss.sweep(chain, {"stiffness": [1.0]}, 1.0, 1e-3, workers=0)


def test_result_columns_dataframe_and_history_access(in_process):
    frame = in_process.to_dataframe()
    assert list(frame["status"]) == list(in_process.column("status"))
    assert frame.shape[0] == 9 and {"stiffness", "dt", "stretch", "total"} <= set(frame.columns)
    assert in_process.history(0).steps == 50_000
    with pytest.raises(KeyError, match="no column 'nope'"):
        in_process.column("nope")
    quiet = ss.sweep(chain, {"stiffness": [100.0]}, 0.1, 1e-3, progress=False)
    with pytest.raises(ValueError, match="keep_histories=True"):
        quiet.history(0)


def test_progress_bar_counts_points(capsys):
    ss.sweep(chain, {"stiffness": [50.0, 100.0]}, 0.05, 1e-3, workers=1, progress=True)
    assert "springsim sweep" in capsys.readouterr().err


# ---- Pickling ---------------------------------------------------------------------------


def rich_system():
    """Gas, a collider, tearing settings, Verlet history: everything a pickle must keep."""
    sim = ss.ball(nodes=16, radius=0.5, mass=1.0, stiffness=2e3, damping=0.5, dim=2, nrt=20.0)
    sim.add_plane((0, 1), offset=-1.0, restitution=0.5, friction=0.2)
    sim.break_strains = 5.0
    sim.max_strain = 1.0
    sim.iterations = 7
    sim.cg_tolerance = 1e-10
    sim.drag = 0.1
    return sim


@pytest.mark.parametrize("method", ss.METHODS)
def test_a_system_pickled_mid_run_steps_bit_identically(method):
    sim = rich_system()
    sim.step(1e-3, 150, method=method)
    sim.track_energy = True
    sim.step(1e-3, 10, method=method)
    data = pickle.dumps(sim, protocol=pickle.HIGHEST_PROTOCOL)
    twin = pickle.loads(data)
    assert type(twin) is ss.System and twin.dissipated == sim.dissipated
    assert_same(snapshot(sim), snapshot(twin))
    sim.step(1e-3, 100, method=method)
    twin.step(1e-3, 100, method=method)
    assert_same(snapshot(sim), snapshot(twin))
    assert twin.dissipated == sim.dissipated and twin.gas(0).volume == sim.gas(0).volume


def test_pickles_are_cheap():
    # The arrays travel as raw buffers: a cloth of 2500 nodes costs its state's bytes
    # plus little more (pickle protocol 5; no per-element objects).
    cloth = ss.cloth(50, 50, width=1.0, height=1.0, mass=0.5, stiffness=100.0)
    raw = sum(np.asarray(cloth._view(name)).nbytes for name in ARRAYS)
    size = len(pickle.dumps(cloth, protocol=5))
    assert raw < size < 1.05 * raw + 10_000


def test_history_pickles_exactly():
    sim = rich_system()
    history = sim.run(0.2, 1e-3, frames=4, progress=False)
    copy = pickle.loads(pickle.dumps(history, protocol=5))
    assert copy == history and copy is not history
    assert copy.frames.shape == (4, 16, 2) and copy.method == history.method


def test_an_invalid_system_does_not_pickle():
    sim = chain(100.0)
    sim.positions[3, 0] = np.nan
    with pytest.raises(ValueError, match="invalid: position"):
        pickle.dumps(sim)
