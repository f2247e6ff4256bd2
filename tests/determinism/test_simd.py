"""The kernel's SIMD paths: measured on first use, forced by SPRINGSIM_SIMD or set, and
bit-identical to each other, for every method and thread count.

Every path computes each spring with the same IEEE operations in the same order and
adds the forces into the nodes in the same order (csrc/kernel/forces/spring_pass.c), so the state
after N steps must hash the same whichever path ran, on 1 thread or 2.
"""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from determinism.test_threads import big_cloth, big_cluster, state_hash

import springsim as ss
from springsim import reference

# Random (and deliberately repeated) springs: their DuplicateSpringWarning is no news
# here (tests/features/test_traps.py tests it).
pytestmark = pytest.mark.filterwarnings("ignore::springsim.DuplicateSpringWarning")

PATHS = [path for path, available in ss.simd_paths().items() if available]


def big_2d():
    """A 2D jelly of 8,000+ springs with random velocities: threads and SIMD in 2D."""
    rng = np.random.default_rng(7)
    n = 60
    grid = np.stack(np.meshgrid(np.arange(n), np.arange(n), indexing="ij"), -1).reshape(-1, 2)
    sim = ss.System(dim=2)
    sim.add_nodes(grid / n + rng.normal(scale=1e-3, size=grid.shape), masses=1.0)
    idx = np.arange(n * n).reshape(n, n)
    pairs = np.concatenate(
        [
            np.stack([idx[:-1, :].ravel(), idx[1:, :].ravel()], 1),
            np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], 1),
            np.stack([idx[:-1, :-1].ravel(), idx[1:, 1:].ravel()], 1),
            np.stack([idx[1:, :-1].ravel(), idx[:-1, 1:].ravel()], 1),
        ]
    )
    sim.add_springs(pairs, stiffness=300.0, damping=0.02)
    sim.pin([0, n - 1])
    sim.velocities = rng.normal(scale=0.1, size=sim.velocities.shape)
    assert sim.num_springs >= 8192
    return sim


#: The documented rule: the simplest path whose median is within 3 % of the fastest.
MARGIN = 0.03
#: How build_info words each way of choosing.
MEASURED, FORCED, SET = "measured", "forced by SPRINGSIM_SIMD", "set"


def test_the_default_path_is_the_simplest_within_3_percent_of_the_fastest(settings, monkeypatch):
    monkeypatch.delenv("SPRINGSIM_SIMD", raising=False)
    path = ss.set_simd(None)  # the measured path (measured now if no step ran yet)
    info = ss.build_info()
    assert info["simd"] == path and info["simd_choice"] == MEASURED
    measured = info["simd_ns_per_spring"]
    # every available path was timed, and only those; each time is a real duration
    assert set(measured) == set(PATHS)
    assert all(0 < ns < 1e6 for ns in measured.values()), measured
    assert 0 < info["simd_measurement_ms"] < 1e4
    fastest = min(measured.values())
    within = [p for p in ss.simd_paths() if p in measured and measured[p] <= fastest * (1 + MARGIN)]
    assert path == within[0], measured  # simd_paths lists the simplest first
    assert info["simd_paths"] == ss.simd_paths()
    assert ss.simd_paths()["portable"] is True


def test_set_simd_checks_its_argument(settings, monkeypatch):
    for path in PATHS:
        assert ss.set_simd(path) == path == ss.build_info()["simd"]
        assert ss.build_info()["simd_choice"] == SET
    before = ss.build_info()["simd"]
    with pytest.raises(ValueError, match="unknown SIMD path"):
        ss.set_simd("sse9")
    with pytest.raises(TypeError):
        ss.set_simd(3)
    unavailable = [path for path, ok in ss.simd_paths().items() if not ok]
    for path in unavailable:
        with pytest.raises(ValueError, match="cannot run"):
            ss.set_simd(path)
    # None: what SPRINGSIM_SIMD names, if set; a bad value is refused and changes nothing
    monkeypatch.setenv("SPRINGSIM_SIMD", "neon")
    with pytest.raises(ValueError, match="SPRINGSIM_SIMD='neon'"):
        ss.set_simd(None)
    assert ss.build_info()["simd"] == before and ss.build_info()["simd_choice"] == SET
    monkeypatch.setenv("SPRINGSIM_SIMD", "portable")
    assert ss.set_simd(None) == "portable" and ss.build_info()["simd_choice"] == FORCED


@pytest.mark.parametrize("build", [big_cloth, big_cluster, big_2d])
@pytest.mark.parametrize("method", ss.METHODS)
def test_every_path_and_thread_count_hash_identically(settings, build, method):
    hashes = {}
    for path in PATHS:
        for threads in (1, 2):
            ss.set_simd(path)
            ss.set_num_threads(threads)
            sim = build()
            sim.step(0.3 * sim.critical_dt(), steps=40, method=method)
            hashes[path, ss.get_num_threads()] = state_hash(sim)
    assert len(set(hashes.values())) == 1, hashes


@pytest.mark.parametrize("method", ss.METHODS)
@pytest.mark.parametrize("path", PATHS)
def test_every_path_equals_the_reference(settings, path, method):
    # Every method on a small random system (one block); symplectic Euler also on a
    # large one (blocks and the springs between them; the oracle's other methods are
    # too slow there), xpbd also on its edge cases in 2D and 3D. Against the NumPy
    # oracle to 1e-12; implicit Euler's CG is run to 1e-15, as in test_oracle.py, so
    # that its own tolerance does not count.
    ss.set_simd(path)
    large = (big_cloth(),) if method == "symplectic_euler" else ()
    cases = (constraint_cases(2), constraint_cases(3)) if method == "xpbd" else ()
    for sim in (*large, reference_sized(), *cases):
        sim.cg_tolerance = 1e-15
        dt = 0.3 * sim.critical_dt() if np.all(np.isfinite(sim.stiffness)) else 1e-3
        ref = reference.State.from_system(sim)
        sim.step(dt, steps=10, method=method)
        reference.step(ref, dt, steps=10, method=method)
        scale = np.abs(ref.x).max()
        np.testing.assert_allclose(sim.positions, ref.x, rtol=1e-12, atol=1e-12 * scale)


def reference_sized():
    rng = np.random.default_rng(3)
    sim = ss.System(dim=3)
    sim.add_nodes(rng.normal(size=(37, 3)), masses=rng.uniform(0.5, 2.0, size=37))
    pairs = rng.choice(37, size=(120, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    sim.add_springs(
        pairs, stiffness=rng.uniform(1, 50, len(pairs)), damping=rng.uniform(0, 0.1, len(pairs))
    )
    sim.velocities = rng.normal(size=(37, 3))
    sim.positions[5] = sim.positions[6]  # a zero-length spring, if one joins them
    return sim


def constraint_cases(dim):
    """What xpbd treats apart, among random springs: pinned nodes, springs of k = 0 (no
    pull) and k = inf (rigid rods), a spring of zero length (skipped: nodes 80 and 81
    coincide and move alike), and a hub of 70 springs, more than the 63 colours, so
    that the overflow colour is solved too; colours of 4 and more springs run the SIMD
    loops, their remainders the portable one."""
    rng = np.random.default_rng(20 + dim)
    sim = ss.System(dim=dim)
    sim.add_nodes(rng.normal(size=(82, dim)), masses=rng.uniform(0.5, 2.0, size=82))
    sim.velocities = rng.normal(size=(82, dim))
    sim.masses[81] = sim.masses[80]
    sim.positions[81], sim.velocities[81] = sim.positions[80], sim.velocities[80]
    hub = np.column_stack([np.zeros(70, int), np.arange(1, 71)])
    pairs = rng.choice(80, size=(160, 2))
    pairs = np.concatenate([hub, pairs[pairs[:, 0] != pairs[:, 1]], [[80, 81]]])
    stiffness = rng.uniform(1, 50, len(pairs))
    stiffness[5::17], stiffness[9::13] = np.inf, 0.0
    sim.add_springs(pairs, stiffness, damping=rng.uniform(0, 0.1, len(pairs)))
    sim.pin([0, 3, 40])
    return sim


def moving_cloth() -> ss.System:
    """A moving 24×24 cloth (3,218 springs)."""
    sim = ss.cloth(24, 24, width=1.0, height=1.0, mass=1.0, stiffness=500.0, damping=0.02)
    sim.velocities = np.random.default_rng(5).normal(scale=0.1, size=sim.velocities.shape)
    return sim


def digest_after_steps(sim: ss.System, method: str = "symplectic_euler") -> str:
    """The bits of ``sim`` after 40 steps (one call long enough to release the GIL)."""
    sim.step(0.3 * sim.critical_dt(), steps=40, method=method)
    return hashlib.sha256(sim.positions.tobytes() + sim.velocities.tobytes()).hexdigest()


def stepped_cloth_digest() -> str:
    """The bits of the moving cloth after 40 steps: the same in a child process,
    whichever path it chose, as here."""
    return digest_after_steps(moving_cloth())


CHILD = """
import json, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import springsim as ss
from springsim import _core
from determinism.test_simd import stepped_cloth_digest
at_import = _core._simd_choice()
digest = stepped_cloth_digest()
info = ss.build_info()
print(json.dumps({"at_import": at_import, "simd": info["simd"], "choice": info["simd_choice"],
                  "ns": info["simd_ns_per_spring"], "digest": digest,
                  "measurements": _core._simd_choice()["measurements"],
                  "warnings": [str(w.message) for w in caught if w.category is RuntimeWarning]}))
"""


def run_child(code: str, **env: str) -> dict:
    """Run ``code`` in a fresh interpreter that imports these tests; its JSON output."""
    tests = str(Path(__file__).parents[1])
    path = os.pathsep.join(p for p in (tests, os.environ.get("PYTHONPATH")) if p)
    environment = {k: v for k, v in os.environ.items() if k != "SPRINGSIM_SIMD"}
    environment.update(env, PYTHONPATH=path)
    child = subprocess.run(
        [sys.executable, "-c", code], env=environment, capture_output=True, text=True
    )
    assert child.returncode == 0, child.stderr
    return json.loads(child.stdout)


@pytest.mark.parametrize("value", ["portable", "avx2", "avx512", "neon", ""])
def test_the_environment_variable_forces_a_path_and_skips_the_measurement(value):
    out = run_child(CHILD, SPRINGSIM_SIMD=value)
    available = ss.simd_paths().get(value, False)
    if available:  # forced at import: no measurement, then or at the first step
        assert out["at_import"]["path"] == out["simd"] == value
        assert out["choice"] == FORCED and out["ns"] is None and out["measurements"] == 0
        assert out["warnings"] == []
    else:  # unset, or a path this CPU cannot run (warns): measured at the first step
        assert out["at_import"]["path"] is None and out["at_import"]["measurements"] == 0
        assert out["choice"] == MEASURED and out["measurements"] == 1
        assert set(out["ns"]) == set(PATHS) and out["simd"] in out["ns"]
        assert bool(out["warnings"]) == bool(value)
        if value:
            assert "SPRINGSIM_SIMD" in out["warnings"][0]
    # the same bits as this process, whichever path either took
    assert out["digest"] == stepped_cloth_digest()


ONCE = """
import json, threading
import springsim as ss
from springsim import _core
from determinism.test_simd import digest_after_steps, moving_cloth
THREADS = 8
start = threading.Barrier(THREADS + 1)
systems = [moving_cloth() for _ in range(THREADS)]
seen, digests = [None] * THREADS, [None] * THREADS

def first_step(k):
    start.wait()
    digests[k] = digest_after_steps(systems[k])  # its first step chooses, without the GIL
    seen[k] = _core._simd_get()

threads = [threading.Thread(target=first_step, args=(k,)) for k in range(THREADS)]
for t in threads:
    t.start()
start.wait()
info = ss.build_info()  # a first use from Python too, at the same moment
for t in threads:
    t.join()
print(json.dumps({"seen": seen, "digests": digests, "info": info["simd"],
                  "choice": _core._simd_choice()}))
"""


def test_threads_that_step_first_at_once_measure_once_and_agree():
    # 8 threads start their first step together (each steps 40 × 3,218 springs without
    # the GIL) while the main thread asks build_info: one measurement runs, and every
    # thread then sees the path it chose; the states agree to the bit.
    out = run_child(ONCE)
    choice = out["choice"]
    assert choice["measurements"] == 1 and choice["how"] == "measured"
    assert set(out["seen"]) == {out["info"]} == {choice["path"]}
    assert choice["path"] in choice["ns_per_spring"]
    assert set(out["digests"]) == {stepped_cloth_digest()}


FTZ_DAZ = 0x8040  # MXCSR flush-to-zero and denormals-are-zero bits
X86 = ss._core._fp_mode() != 0


def tiny_motion_chain():
    """A chain whose velocities pass through values near 1e-300: their products with dt
    and the masses go below 2.2e-308, where flush-to-zero would round differently."""
    sim = big_cloth()
    sim.velocities = sim.velocities * 1e-300
    sim.gravity = (0.0, 0.0, 0.0)
    sim.wind = (0.0, 0.0, 0.0)
    return sim


@pytest.mark.skipif(not X86, reason="the MXCSR control word exists on x86 only")
@pytest.mark.parametrize("threads", [1, 2])
def test_a_callers_flush_to_zero_mode_changes_no_bit(settings, threads):
    # Some JIT runtimes set flush-to-zero in the threads they touch; a kernel that ran in
    # the caller's mode gave other bits on 1 thread (the caller's) than on 2 (fresh
    # OpenMP threads). The kernel steps in the IEEE mode and restores the caller's.
    ss.set_num_threads(threads)
    plain, flushed = tiny_motion_chain(), tiny_motion_chain()
    dt = 0.3 * plain.critical_dt()
    plain.step(dt, steps=30)
    before = ss._core._fp_mode()
    ss._core._set_fp_mode(before | FTZ_DAZ)
    try:
        flushed.step(dt, steps=30)
        assert ss._core._fp_mode() == before | FTZ_DAZ  # the caller's mode is back
    finally:
        ss._core._set_fp_mode(before)
    assert state_hash(plain) == state_hash(flushed)
    assert np.any((np.abs(plain.velocities) < 1e-290) & (plain.velocities != 0))
