"""The bench runs end to end and its numbers are consistent (never timed here).

``python -m springsim.bench --quick`` is run as a user would run it; the speed
targets themselves are checked by the bench, not by these tests.
"""

import json
import math
import subprocess
import sys

import numpy as np
import pytest

import springsim as ss
from springsim import bench, reference

RUN = dict(capture_output=True, text=True, timeout=300)
ROW_FIELDS = (
    "scene",
    "method",
    "threads",
    "nodes",
    "springs",
    "steps",
    "seconds",
    "ns_per_spring_step",
    "steps_per_second",
    "bytes_per_node",
    "bytes_per_spring",
    "reference_ns_per_spring_step",
    "reference_ratio",
    "status",
)


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """The output and JSON document of one `--quick --json out.json` run."""
    cwd = tmp_path_factory.mktemp("bench")
    done = subprocess.run(
        [sys.executable, "-m", "springsim.bench", "--quick", "--json", "out.json"], cwd=cwd, **RUN
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, json.loads((cwd / "out.json").read_text())


def test_quick_run_covers_every_scene_and_method(quick):
    _, document = quick
    rows = document["results"]
    assert {row["scene"] for row in rows} == set(bench.SCENES)
    assert {row["method"] for row in rows} == set(ss.METHODS)
    assert len(rows) == len(bench.SCENES) * len(ss.METHODS)
    for row in rows:
        assert all(field in row for field in ROW_FIELDS), row
        assert row["status"] == "ok", row
        assert row["ns_per_spring_step"] > 0 and row["steps_per_second"] > 0
        assert row["bytes_per_node"] > 0 and row["bytes_per_spring"] > 0
        assert row["spread"] >= 0 and row["repeats"] >= 1
        too_big = (
            row["method"] == "xpbd" and row["springs"] > bench.REFERENCE_XPBD_MAX_SPRINGS
        ) or (
            row["method"] == "implicit_euler" and row["nodes"] > bench.REFERENCE_IMPLICIT_MAX_NODES
        )
        if too_big:
            assert row["reference_ratio"] is None and "not timed" in row["note"]
        else:
            assert row["reference_ratio"] > 0  # every method is in springsim.reference
        assert row["threads"] == 1


#: The scenes with a gas body: a 2D soft ball and a 3D pressurised icosphere.
GAS_SCENES = ("ball2d_64", "ball3d_4")


def test_quick_run_times_the_gas_scenes(quick):
    out, document = quick
    assert {bench.SCENES[name]().dim for name in GAS_SCENES} == {2, 3}
    for name in GAS_SCENES:
        scene = bench.SCENES[name]()
        assert len(scene.gases) == 1 and scene.gases[0].pressure > 0
        assert name in document["settings"]["scenes"] and name in out
        rows = [row for row in document["results"] if row["scene"] == name]
        assert [row["method"] for row in rows] == list(ss.METHODS)
        for row in rows:
            assert row["status"] == "ok", row
            assert (row["nodes"], row["springs"], row["dim"]) == (
                scene.num_nodes,
                scene.num_springs,
                scene.dim,
            )
            assert row["steps"] >= 1 and row["seconds"] > 0
            assert row["ns_per_spring_step"] > 0 and row["steps_per_second"] > 0
            if row["reference_ratio"] is None:  # big xpbd, or an oracle without gas
                assert "not timed" in row["note"], row
            else:
                assert row["reference_seconds"] > 0 and row["reference_ratio"] > 0


def test_gas_scenes_time_the_reference_only_if_it_models_gas(monkeypatch):
    # springsim.reference copies gas bodies: it is timed on the gas scenes.
    assert bench.reference_models(bench.ball2d_64()) and bench.reference_models(bench.ball3d_4())
    row = bench.measure("ball2d_64", "symplectic_euler", seconds=0.005, repeats=1)
    assert row["reference_ratio"] > 0 and "gas" not in row["note"]
    # An oracle whose State has no gas bodies: the kernel alone is timed, and the note says so.
    from_system = reference.State.from_system

    def without_gas(sim):
        state = from_system(sim)
        del state.pressure
        return state

    monkeypatch.setattr(reference.State, "from_system", staticmethod(without_gas))
    assert not bench.reference_models(bench.ball2d_64())
    assert bench.reference_models(bench.string_1000())  # no gas: nothing missing
    row = bench.measure("ball2d_64", "symplectic_euler", seconds=0.005, repeats=1)
    assert row["status"] == "ok" and row["ns_per_spring_step"] > 0
    assert row["reference_ratio"] is None and row["reference_seconds"] is None
    assert "not timed" in row["note"] and "gas" in row["note"]


def test_quick_run_numbers_are_consistent(quick):
    _, document = quick
    for row in document["results"]:
        springs, steps = row["springs"], row["steps"]
        ns = row["ns_per_spring_step"]
        assert ns == pytest.approx(row["seconds"] / (steps * springs) * 1e9, rel=1e-9)
        assert ns == pytest.approx(1e9 / (row["steps_per_second"] * springs), rel=1e-9)
        assert row["bytes_per_node"] * row["nodes"] == pytest.approx(row["nbytes"])
        assert row["bytes_per_spring"] * springs == pytest.approx(row["nbytes"])
        assert row["nbytes"] >= row["raw_bytes"] > 0
        if row["reference_ratio"] is not None:
            ratio = row["reference_ns_per_spring_step"] / ns
            assert row["reference_ratio"] == pytest.approx(ratio)
        scene = bench.SCENES[row["scene"]]()
        assert (row["nodes"], springs) == (scene.num_nodes, scene.num_springs)
        assert 0 < row["dt_fraction"] <= bench.DT_FRACTION
        assert row["dt"] == pytest.approx(row["dt_fraction"] * scene.critical_dt())


def test_quick_run_describes_machine_and_targets(quick):
    out, document = quick
    machine = document["machine"]
    for field in ("platform", "cpu", "cores", "numpy", "springsim", "threading_available"):
        assert field in machine
    assert machine["springsim"] == ss.__version__ and machine["cores"] >= 1
    assert document["settings"]["quick"] is True and document["settings"]["statistic"] == "min"
    assert document["peers"] == []  # not in --quick without --peers
    names = " ".join(target["name"] for target in document["targets"])
    for words in ("ns per spring-step", "reference", "taichi", "warp", "2 threads", "string"):
        assert words in names
    assert "memory" in names
    for target in document["targets"]:
        assert target["passed"] in (True, False, None)
        assert target["measured"] is None or target["measured"] > 0
    one_call = document["string_in_one_call"]
    assert one_call["steps"] == 10**6 and one_call["seconds"] > 0
    scaling = document["thread_speedup"]
    assert (scaling is None) == (not machine["threading_available"] or machine["cores"] < 2)
    if scaling:
        assert scaling["speedup"] == pytest.approx(scaling["seconds_1"] / scaling["seconds_n"])
    pair = document["two_systems"]
    assert pair["speedup"] > 0 and pair["errors"] == []
    assert pair["speedup"] == pytest.approx(pair["sequential_seconds"] / pair["concurrent_seconds"])
    for words in ("ns/spring-step", "steps/s", "B/node", "B/spring", "vs ref", "Targets", "best"):
        assert words in out


def test_json_to_stdout_leaves_the_table_on_stderr(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "springsim.bench",
            "--json",
            "-",
            "--scenes",
            "string_1000",
            "--methods",
            "rk4,verlet",
            "--no-targets",
            "--no-peers",
            "--seconds",
            "0.005",
        ],
        cwd=tmp_path,
        **RUN,
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert [(r["scene"], r["method"]) for r in document["results"]] == [
        ("string_1000", "rk4"),
        ("string_1000", "verlet"),
    ]
    assert document["targets"] == [] and document["two_systems"] is None
    assert "string_1000" in done.stderr and "ns/spring-step" in done.stderr


def test_help_and_bad_arguments(tmp_path):
    usage = subprocess.run([sys.executable, "-m", "springsim.bench", "--help"], cwd=tmp_path, **RUN)
    assert usage.returncode == 0
    for option in ("--quick", "--json", "--threads", "--scenes", "--methods", "--peers"):
        assert option in usage.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "springsim.bench", "--scenes", "cloth_100,rope"], cwd=tmp_path, **RUN
    )
    assert bad.returncode == 2 and "rope" in bad.stderr and "cloth_316" in bad.stderr


def test_an_unstable_method_is_reported_not_raised(monkeypatch):
    # Explicit Euler gains energy on undamped springs at any dt.
    monkeypatch.setitem(
        bench.SCENES, "undamped", lambda: ss.string(100, length=1.0, mass=1.0, stiffness=1e4)
    )
    monkeypatch.setattr(bench, "MAX_HALVINGS", 1)
    # K steps per call come from the clock: on a loaded machine the calibration's
    # first call is slow, K falls to a handful of steps and nothing blows up in them.
    # Fix K instead: 20000 steps blow up at both dts tried (measured: by 1200 steps at
    # 0.5 critical_dt, by 3500 at 0.25).
    monkeypatch.setattr(bench, "_calibrate", lambda step, seconds, max_steps: max_steps)
    row = bench.measure("undamped", "euler", seconds=0.05, repeats=1, max_steps=20_000)
    assert row["status"] == "unstable" and "unstable" in row["note"]
    assert row["ns_per_spring_step"] is None and row["reference_ratio"] is None


class NumpyPeer:
    """A peer written with springsim.reference: the same physics, or without damping."""

    def __init__(self, sim, dt, damped=True):
        self.s = reference.State.from_system(sim)
        if not damped:
            self.s.c[:] = 0.0
        self.dt = dt

    def load(self, x, v):
        self.s.x, self.s.v = np.array(x), np.array(v)

    def step(self, steps):
        reference.step(self.s, self.dt, steps, method="symplectic_euler")

    def state(self):
        return self.s.x, self.s.v


@pytest.mark.parametrize("damped", [True, False])
def test_peer_validation_tells_same_physics_from_different(damped):
    sim = ss.cloth(12, 12, 1.0, 1.0, mass=1.0, stiffness=1000.0, damping=bench.DAMPING)
    dt = bench.DT_FRACTION * sim.critical_dt()
    error = bench.validate_peer(NumpyPeer(sim, dt, damped), sim, dt)
    if damped:
        assert error <= bench.VALIDATION_TOLERANCE
    else:
        assert error > 1e-4


def test_a_missing_or_broken_peer_is_reported_not_raised(monkeypatch):
    monkeypatch.setattr(bench, "_peer_version", lambda name: None)
    row = bench.measure_peer("taichi", "cloth_100", None, 0.01, 1, cores=2)
    assert row["status"] == "skipped" and "pip install taichi" in row["reason"]
    assert row["threads"] == 2 and row["ns_per_spring_step"] is None
    # A peer whose process fails (here: one the worker does not know) is "failed".
    monkeypatch.setattr(bench, "_peer_version", lambda name: "0")
    row = bench.measure_peer("nosuch", "cloth_100", 1, 0.01, 1, cores=2)
    assert row["status"] == "failed" and "KeyError" in row["reason"], row


def test_problem_copies_the_scene_for_the_peers():
    sim = bench.cloth_100()
    problem = bench.Problem.from_system(sim)
    assert problem.x.shape == (sim.num_nodes, 3) and problem.pairs.dtype == np.int32
    assert problem.pinned.sum() == 2 and np.all(problem.c == bench.DAMPING)
    np.testing.assert_array_equal(problem.gravity, sim.gravity)
    sim.drag = 0.1
    with pytest.raises(ValueError, match="peers"):
        bench.Problem.from_system(sim)
    with pytest.raises(ValueError, match="peers"):  # the peers have no gas
        bench.Problem.from_system(bench.ball3d_4())


def test_memory_figures_count_what_they_say():
    sim = bench.string_1000()
    raw = bench.raw_bytes(sim)
    n, m = sim.num_nodes, sim.num_springs
    # positions, velocities, external forces (3 float64), masses (float64), pinned (bool);
    # springs (2 int32), rest lengths, stiffness, damping (float64).
    assert raw == n * (3 * 24 + 8 + 1) + m * (8 + 3 * 8)
    nbytes, source = bench.system_bytes(sim)
    assert nbytes >= raw and source
    assert math.isfinite(bench.measure("string_1000", seconds=0.005, repeats=1)["memory_ratio"])
