"""The bench runs end to end and its numbers are consistent (never timed here).

``python -m springsim.bench --quick --busy`` is run as a user would run it; the speed
targets themselves are checked by the bench, not by these tests. The peers are
checked for computing the same physics as springsim, not for their speed.
"""

import importlib.util
import inspect
import json
import re
import statistics
import subprocess
import sys
import time

import numpy as np
import psutil
import pytest

import springsim as ss
from springsim import bench, reference
from springsim.bench import kernel, peer_taichi, scenes, timing

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
        [
            sys.executable,
            "-m",
            "springsim.bench",
            "--quick",
            "--long",
            "--busy",
            "--json",
            "out.json",
        ],
        cwd=cwd,
        **RUN,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, json.loads((cwd / "out.json").read_text())


@pytest.mark.slow
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
        assert row["statistic"] == "median" and row["clock"] == "thread"
        assert row["seconds_min"] <= row["seconds"]
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


@pytest.mark.slow  # the bench's quick run (module fixture): a long test
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


@pytest.mark.slow  # the bench's quick run (module fixture): a long test
def test_quick_run_numbers_are_consistent(quick):
    _, document = quick
    for row in document["results"]:
        springs, steps = row["springs"], row["steps"]
        ns = row["ns_per_spring_step"]
        assert ns == pytest.approx(row["seconds"] / (steps * springs) * 1e9, rel=1e-9)
        assert ns == pytest.approx(1e9 / (row["steps_per_second"] * springs), rel=1e-9)
        assert row["bytes_per_node"] * row["nodes"] == pytest.approx(row["nbytes"])
        assert row["bytes_per_spring"] * springs == pytest.approx(row["nbytes"])
        assert row["nbytes"] > 0 and row["nbytes_source"] == "sim.nbytes"
        if row["reference_ratio"] is not None:
            ratio = row["reference_ns_per_spring_step"] / ns
            assert row["reference_ratio"] == pytest.approx(ratio)
        scene = bench.SCENES[row["scene"]]()
        assert (row["nodes"], springs) == (scene.num_nodes, scene.num_springs)
        assert 0 < row["dt_fraction"] <= bench.DT_FRACTION
        assert row["dt"] == pytest.approx(row["dt_fraction"] * scene.critical_dt())


@pytest.mark.slow  # the bench's quick run (module fixture): a long test
def test_quick_run_describes_machine_and_targets(quick):
    out, document = quick
    machine = document["machine"]
    for field in ("platform", "cpu", "cores", "numpy", "springsim", "threading_available"):
        assert field in machine
    assert machine["springsim"] == ss.__version__ and machine["cores"] >= 1
    settings = document["settings"]
    assert settings["quick"] is True and settings["statistic"] == "median"
    assert "cloth_1000" not in settings["scenes"]  # the full run only
    assert document["peers"] == []  # not in --quick without --peers
    names = " ".join(target["name"] for target in document["targets"])
    for words in ("ns per spring-step", "reference", "numba", "taichi", "warp", "2 threads"):
        assert words in names
    for words in ("string", "memory", "rk4", "xpbd", "--busy", "cloth_1000", "jelly_20"):
        assert words in names
    full_only = [t for t in document["targets"] if "cloth_1000" in t["name"]]
    assert [t["passed"] for t in full_only] == [None]
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
    segments = document["segment_contact"]
    assert segments["contact_energy"] > 0 and segments["substeps"] == 100
    assert segments["ratio"] == pytest.approx(
        segments["segments_seconds"] / segments["nodes_seconds"]
    )
    drag = document["pin_drag"]
    assert drag["plain_seconds"] > 0 and drag["substeps"] == 1000
    assert drag["ratio"] == pytest.approx(drag["drag_seconds"] / drag["plain_seconds"])
    for books in (document["track_energy"]["cloth"], document["track_energy"]["contact"]):
        assert books["off_seconds"] > 0
        assert books["ratio"] == pytest.approx(books["on_seconds"] / books["off_seconds"])
    for words in ("ns/spring-step", "steps/s", "B/node", "B/spring", "vs ref", "Targets"):
        assert words in out
    (stiff,) = document["stiff_cloth"]  # the quick run's tiny cloth: its own tests check it
    assert stiff["n"] == bench.stiff_cloth.QUICK_SIZE and stiff["rows"][0]["worst_deviation"] == 0
    assert f"stiff_cloth_{stiff['n']}:" in out
    # the bench's own SIMD choice (its process measured its own), and each path on the cloth
    simd = f"kernel build: simd {machine['build']['simd']} ({machine['build']['simd_choice']}"
    paths = document["simd"]
    cloth = paths["cloth_ns_per_spring_step"]
    assert set(cloth) == {p for p, ok in ss.simd_paths().items() if ok}
    assert all(ns > 0 for ns in cloth.values()) and paths["fastest"] == min(cloth, key=cloth.get)
    assert paths["chosen"] == machine["build"]["simd"] and paths["chosen"] in cloth
    for words in (
        "shared",
        "median",
        "interleaved",
        "thread CPU time",
        simd,
        "pin drag:",
        "segment contact:",
        "track_energy:",
        f"simd: {paths['chosen']}, {paths['choice']}",
    ):
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
    for option in ("--quick", "--json", "--threads", "--scenes", "--methods", "--peers", "--busy"):
        assert option in usage.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "springsim.bench", "--scenes", "cloth_100,rope"], cwd=tmp_path, **RUN
    )
    assert bad.returncode == 2 and "rope" in bad.stderr and "cloth_316" in bad.stderr


def test_an_unstable_method_is_reported_not_raised(monkeypatch):
    # Explicit Euler gains energy on undamped springs at any dt.
    monkeypatch.setitem(
        scenes.ALL_SCENES, "undamped", lambda: ss.string(100, length=1.0, mass=1.0, stiffness=1e4)
    )
    monkeypatch.setattr(kernel, "MAX_HALVINGS", 1)

    # K steps per call come from the clock: on a loaded machine the calibration's
    # first call is slow, K falls to a handful of steps and nothing blows up in them.
    # Fix K instead: 20000 steps blow up at both dts tried (measured: by 1200 steps at
    # 0.5 critical_dt, by 3500 at 0.25).
    def calibrate(contender, seconds, max_steps):
        contender.steps = max_steps
        return max_steps

    monkeypatch.setattr(kernel, "calibrate", calibrate)
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
    sim = ss.cloth(12, 12, width=1.0, height=1.0, mass=1.0, stiffness=1000.0, damping=bench.DAMPING)
    dt = bench.DT_FRACTION * sim.critical_dt()
    error = bench.validate_peer(NumpyPeer(sim, dt, damped), sim, dt)
    if damped:
        assert error <= bench.VALIDATION_TOLERANCE
    else:
        assert error > 1e-4


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
    # The table's bytes are the stepped scene's sim.nbytes: measuring does not make the
    # cold arrays (external forces, ...) real, so a row shows what a user's copy holds.
    sim = bench.cloth_100()
    sim.step(scenes.scene_dt(sim))
    row = bench.measure("cloth_100", seconds=0.005, repeats=1)  # the reference reads it too
    assert row["nbytes"] == sim.nbytes and row["nbytes_source"] == "sim.nbytes"
    assert row["bytes_per_spring"] == pytest.approx(sim.nbytes / sim.num_springs)


@pytest.mark.slow  # the bench's quick run (module fixture): a long test
def test_quick_run_reports_the_memory_targets(quick):
    out, document = quick
    memory = document["memory"]
    assert memory["scene"] == bench.TARGET_SCENE
    assert memory["bytes_per_spring"] == pytest.approx(memory["nbytes"] / memory["springs"])
    targets = {t["name"]: t for t in document["targets"] if "memory" in t["name"]}
    assert set(targets) == {
        f"memory per spring (sim.nbytes), {bench.TARGET_SCENE}",
        f"process memory growth / sim.nbytes, {bench.TARGET_SCENE}",
    }
    per_spring, growth = targets.values()
    assert per_spring["measured"] == memory["bytes_per_spring"] and per_spring["target"] == "<= 55"
    assert growth["measured"] == memory["growth_ratio"] and growth["target"] == "<= 1.10×"
    if memory["growth"] is not None:  # Linux: /proc/self/status
        assert memory["growth_ratio"] == pytest.approx(memory["growth"] / memory["nbytes"])
    assert "memory per spring" in out and "raw" not in out


@pytest.mark.slow  # the bench's quick run (module fixture): a long test
def test_quick_busy_run_reports_and_stops_its_helper(quick):
    out, document = quick
    busy = document["busy"]
    assert [row["scene"] for row in busy["scenes"]] == ["cloth_316", "cloth_100"]
    for row in busy["scenes"]:
        assert row["ns_1"] > 0 and row["ns_n"] > 0 and row["clock"] == "wall"
        assert row["ratio"] == pytest.approx(row["seconds_n"] / row["seconds_1"])
    pid = busy["helper"]["pid"]
    assert busy["helper"]["returncode"] is not None  # it was stopped, not left running
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert "Under load" in out and "--busy" in out


def test_busy_core_always_stops_its_helper():
    me = psutil.Process()
    with pytest.raises(KeyboardInterrupt):
        with bench.busy_core(timeout=60) as helper:
            child = psutil.Process(helper.pid)
            assert child in me.children() and child.is_running()
            assert child.cpu_times().user + child.cpu_times().system > 0.02  # it spins
            raise KeyboardInterrupt  # as Ctrl-C in the middle of the measurement
    assert helper.returncode is not None
    assert helper.pid not in [p.pid for p in me.children(recursive=True)]


def test_busy_threads_measures_under_load_and_cleans_up():
    result = bench.busy_threads(scenes=("cloth_100",), seconds=0.005, repeats=2, timeout=60)
    (row,) = result["scenes"]
    assert row["scene"] == "cloth_100" and row["rounds"] == 2 and row["ns_n"] > 0
    assert result["helper"]["returncode"] is not None
    assert result["helper"]["pid"] not in [p.pid for p in psutil.Process().children(True)]


def test_interleave_returns_medians_per_contender():
    calls = []

    def make(name, work):
        def run(steps):
            calls.append(name)
            work(steps)

        return bench.Contender(name, run, steps=3)

    spin = make("spin", lambda steps: sum(range(20_000 * steps)))
    sleep = make("sleep", lambda steps: time.sleep(0.002 * steps))
    wall = make("wall", lambda steps: time.sleep(0.002 * steps))
    wall.clock = "wall"
    timed = bench.interleave([spin, sleep, wall], rounds=6, seed=1)
    assert sorted(timed) == ["sleep", "spin", "wall"]
    rounds = [tuple(calls[i : i + 3]) for i in range(0, 18, 3)]
    assert all(sorted(r) == ["sleep", "spin", "wall"] for r in rounds)
    assert len(set(rounds)) > 1  # shuffled: not the same order every round
    for record in timed.values():
        assert len(record["seconds"]) == 6 and record["steps"] == 3
    # Thread CPU time leaves out the time asleep; wall time counts it.
    assert timing.median(timed["sleep"]["seconds"]) < 0.003
    assert timing.median(timed["wall"]["seconds"]) >= 0.006
    figures = timing.summarize(timed["spin"], springs=10)
    assert figures["seconds"] == statistics.median(timed["spin"]["seconds"])
    assert figures["ns_per_spring_step"] == pytest.approx(figures["seconds"] / 30 * 1e9)
    assert figures["clock"] == "thread" and figures["rounds"] == 6


def _tiny_cloth():
    return ss.cloth(
        12, 12, width=1.0, height=1.0, mass=1.0, stiffness=1000.0, damping=bench.DAMPING
    )


def _installed(config):
    module = {"warp-lang": "warp"}.get(config.package, config.package)
    return importlib.util.find_spec(module) is not None


@pytest.mark.parametrize("config", bench.PEER_CONFIGS, ids=lambda c: c.key)
def test_each_installed_peer_computes_springsim_physics(config):
    if not _installed(config):
        pytest.skip(f"{config.package} not installed: the bench reports it skipped")
    sim = _tiny_cloth()
    dt = bench.DT_FRACTION * sim.critical_dt()
    peer = config.build(bench.Problem.from_system(sim), dt, 1 if config.group == "1 thread" else 2)
    try:
        assert bench.validate_peer(peer, sim, dt) <= bench.VALIDATION_TOLERANCE
        peer.load(sim.positions, sim.velocities)
        peer.step(3)
        x, v = peer.state()
        assert np.all(np.isfinite(x)) and not np.array_equal(x, sim.positions)
    finally:
        peer.close()


def _numpy_peer(damped):
    def build(problem, dt, threads):
        return NumpyPeer(_tiny_cloth(), dt, damped)

    return build


def test_a_peer_with_other_physics_is_reported_not_timed(monkeypatch):
    monkeypatch.setitem(scenes.ALL_SCENES, "tiny_cloth", _tiny_cloth)
    configs = [
        bench.PeerConfig("same", "numpy", _numpy_peer(True), "1 thread", "reference, damped"),
        bench.PeerConfig("wrong", "numpy", _numpy_peer(False), "1 thread", "no damping"),
        bench.PeerConfig("other", "numpy", _numpy_peer(False), "all cores", "not this group"),
    ]
    result = bench.compare(
        "tiny_cloth", "1 thread", threads=1, seconds=0.002, repeats=2, configs=configs
    )
    same, wrong = result["peers"]
    assert same["status"] == "ok" and same["validation_error"] <= bench.VALIDATION_TOLERANCE
    assert same["ratio"] == pytest.approx(
        same["ns_per_spring_step"] / result["springsim"]["ns_per_spring_step"]
    )
    assert same["rounds"] == 2 and same["clock"] == "thread"
    assert wrong["status"] == "mismatch" and "differs" in wrong["reason"]
    assert wrong["ns_per_spring_step"] is None and wrong["ratio"] is None  # not timed
    assert result["springsim"]["ns_per_spring_step"] > 0


def test_a_missing_or_broken_peer_is_reported_not_raised(monkeypatch):
    monkeypatch.setitem(scenes.ALL_SCENES, "tiny_cloth", _tiny_cloth)

    def broken(problem, dt, threads):
        raise RuntimeError("no CPU backend here")

    configs = [
        bench.PeerConfig("absent", "no-such-package-xyz", broken, "1 thread", ""),
        bench.PeerConfig("broken", "numpy", broken, "1 thread", ""),
    ]
    result = bench.compare(
        "tiny_cloth", "1 thread", threads=1, seconds=0.002, repeats=1, configs=configs
    )
    absent, failed = result["peers"]
    assert absent["status"] == "skipped" and "pip install no-such-package-xyz" in absent["reason"]
    assert failed["status"] == "failed" and "RuntimeError" in failed["reason"]


def test_taichi_peer_gathers_per_node_without_atomics():
    source = inspect.getsource(peer_taichi.taichi_peer)
    assert "atomic" not in source
    assert "self.f[a] = total" in source and "self.f[i] +=" not in source


def test_adjacency_lists_every_spring_at_both_ends():
    problem = bench.Problem.from_system(bench.jelly_20())
    offsets, other, spring = problem.adjacency()
    n, m = len(problem.x), len(problem.pairs)
    assert offsets[0] == 0 and offsets[-1] == 2 * m and np.all(np.diff(offsets) >= 0)
    node = np.repeat(np.arange(n), np.diff(offsets))
    pairs = problem.pairs[spring]
    assert np.all(
        (pairs[:, 0] == node) & (pairs[:, 1] == other)
        | (pairs[:, 1] == node) & (pairs[:, 0] == other)
    )
    assert np.array_equal(np.bincount(spring, minlength=m), np.full(m, 2))


# ---- the report's layout (issue 16, item 7): built from made-up results, never timed ----


def synthetic_rows():
    """A row for every scene and method, with figures from tiny to huge, and one failure."""
    rng = np.random.default_rng(5)
    rows = []
    for name in bench.SCENES:
        for method in ss.METHODS:
            ns = float(10 ** rng.uniform(-1, 5))
            rows.append(
                {
                    "scene": name,
                    "method": method,
                    "nodes": int(10 ** rng.uniform(1, 7)),
                    "springs": int(10 ** rng.uniform(1, 7.5)),
                    "status": "ok",
                    "note": "",
                    "dt_fraction": 0.5 / 2 ** int(rng.integers(0, 8)),
                    "steps": int(10 ** rng.uniform(0, 8)),
                    "ns_per_spring_step": ns,
                    "spread": float(rng.uniform(0, 20)),
                    "steps_per_second": float(10 ** rng.uniform(-2, 10)),
                    "bytes_per_node": float(10 ** rng.uniform(1, 5)),
                    "bytes_per_spring": float(10 ** rng.uniform(1, 4)),
                    "reference_ns_per_spring_step": None if method == "xpbd" else ns * 40,
                    "reference_ratio": None if method == "xpbd" else 40.0,
                }
            )
    rows[1].update(status="unstable", note="unstable down to dt = 1e-05 s")
    return rows


def column_spans(header, names, aligns):
    """(start, end) of each column from the header: left-aligned names start their
    column, right-aligned ones end it."""
    spans, at = [], 0
    for name in names:
        start = header.index(name, at)
        spans.append((start, start + len(name)))
        at = start + len(name)
    return spans


def assert_aligned(lines, names, aligns):
    header, rows = lines[0], lines[1:]
    spans = column_spans(header, names, aligns)
    for line in rows:
        cells = list(re.finditer(r"\S+", line))
        assert len(cells) == len(names), (line, header)
        for cell, (start, end), align, name in zip(cells, spans, aligns, names, strict=True):
            if align == "<":
                assert cell.start() == start, f"{name!r} shifted in\n{header}\n{line}"
            else:
                assert cell.end() == end, f"{name!r} shifted or overflowing in\n{header}\n{line}"
            assert cell.start() >= (0 if start == 0 else 2), line


PEER_KEYS = ["numba", "warp", "taichi", "numba_parallel", "taichi_threads"]


def test_the_short_table_fits_its_columns():
    from springsim.bench import report

    scenes_, methods = list(bench.SCENES), list(ss.METHODS)
    table = report.short_table(scenes_, methods, PEER_KEYS)
    ratios = {
        "numba": 1.64,
        "warp": 1234.5,
        "taichi": None,
        "numba_parallel": 0.004,
        "taichi_threads": 99999.0,
    }
    rows = synthetic_rows()
    lines = [table.header()] + [report.short_row(table, row, ratios, PEER_KEYS) for row in rows]
    names = ["scene", "method", "ns/spring-step", "steps/s"] + [f"×{k}" for k in PEER_KEYS]
    aligns = ["<", "<"] + [">"] * (len(names) - 2)
    ok = [lines[0]] + [
        line for line, row in zip(lines[1:], rows, strict=True) if row["status"] == "ok"
    ]
    assert_aligned(ok, names, aligns)
    assert "UNSTABLE" in lines[2]
    assert len({len(line) for line in ok}) == 1  # every cell filled: one width
    # the figures are rounded, not garbled: 1.64 reads as itself
    assert "1.64×" in lines[1] and "–" in lines[1]


def test_the_long_table_fits_its_columns():
    from springsim.bench import report

    table = report.long_table(list(bench.SCENES), list(ss.METHODS), PEER_KEYS)
    rows = [row for row in synthetic_rows() if row["status"] == "ok"]
    ratios = dict.fromkeys(PEER_KEYS, 12.5)
    lines = [table.header()] + [report.row_line(table, row, ratios, PEER_KEYS) for row in rows]
    names = [
        "scene",
        "method",
        "nodes",
        "springs",
        "dt/crit",
        "K",
        "ns/spring-step",
        "spread",
        "steps/s",
        "B/node",
        "B/spring",
        "ref ns",
        "vs ref",
    ] + [f"×{k}" for k in PEER_KEYS]
    assert_aligned(lines, names, ["<", "<"] + [">"] * (len(names) - 2))


def test_a_number_that_cannot_fit_is_shortened_and_text_that_cannot_raises():
    from springsim.bench import report

    assert report.fit(6.2, 8) == "6.20" and report.fit(3, 5, "×") == "3.00×"
    assert [report.fit(123456.789, w) for w in (8, 6, 5)] == ["123456.8", "123457", "1e+05"]
    assert report.fit(None, 3) == "–"
    with pytest.raises(ValueError, match="does not fit"):
        report.Table([("scene", 5, "<")]).line(["cloth_1000"])


def test_default_output_is_the_short_table(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "springsim.bench",
            "--scenes",
            "string_1000,jelly_20",
            "--methods",
            "rk4,symplectic_euler",
            "--no-peers",
            "--seconds",
            "0.005",
            "--repeats",
            "1",
        ],
        cwd=tmp_path,
        **RUN,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("scene"))
    table = lines[at : at + 5]
    assert_aligned(table, ["scene", "method", "ns/spring-step", "steps/s"], ["<", "<", ">", ">"])
    assert [line.split()[:2] for line in table[1:]] == [
        ["string_1000", "rk4"],
        ["string_1000", "symplectic_euler"],
        ["jelly_20", "rk4"],
        ["jelly_20", "symplectic_euler"],
    ]
    # no maintainers' sections or words: those are --long's
    for words in ("Targets", "B/node", "vs ref", "dt/crit", "contender", "oracle", "PASS"):
        assert words not in done.stdout
    assert "string_1000: A 10 m string" in done.stdout and "--long" in done.stdout
