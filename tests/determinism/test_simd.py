"""The spring loop's SIMD paths: chosen from the CPU, forced by SPRINGSIM_SIMD, and
bit-identical to each other, for every method and thread count.

Every path computes each spring with the same IEEE operations in the same order and
adds the forces into the nodes in the same order (csrc/kernel/forces/spring_pass.c), so the state
after N steps must hash the same whichever path ran, on 1 thread or 2.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from determinism.test_threads import big_cloth, big_cluster, state_hash

import springsim as ss
from springsim import reference

# Random (and deliberately repeated) springs: their DuplicateSpringWarning is no news
# here (tests/features/test_traps.py tests it).
pytestmark = pytest.mark.filterwarnings("ignore::springsim.DuplicateSpringWarning")

PATHS = [path for path, available in ss.simd_paths().items() if available]


@pytest.fixture
def settings():
    """Restore the default SIMD path and thread count after a test."""
    yield
    ss.set_simd(None)
    ss.set_num_threads(None)


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


#: The path chosen by default: AVX2 when the CPU has it (measured the fastest here),
#: else the portable one; AVX-512 only when asked for.
DEFAULT = "avx2" if "avx2" in PATHS else "portable"


def test_the_default_path_is_the_measured_fastest_available():
    if not os.environ.get("SPRINGSIM_SIMD"):
        assert ss.build_info()["simd"] == DEFAULT
    assert ss.build_info()["simd_paths"] == ss.simd_paths()
    assert ss.simd_paths()["portable"] is True


def test_set_simd_checks_its_argument(settings):
    for path in PATHS:
        assert ss.set_simd(path) == path == ss.build_info()["simd"]
    with pytest.raises(ValueError, match="unknown SIMD path"):
        ss.set_simd("sse9")
    with pytest.raises(TypeError):
        ss.set_simd(3)
    unavailable = [path for path, ok in ss.simd_paths().items() if not ok]
    for path in unavailable:
        with pytest.raises(ValueError, match="cannot run"):
            ss.set_simd(path)


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


CHILD = """
import json, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import springsim as ss
print(json.dumps({"simd": ss.build_info()["simd"],
                  "warnings": [str(w.message) for w in caught if w.category is RuntimeWarning]}))
"""


@pytest.mark.parametrize("value", ["portable", "avx2", "avx512", "neon", ""])
def test_the_environment_variable_forces_a_path(value):
    env = dict(os.environ, SPRINGSIM_SIMD=value)
    child = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True)
    assert child.returncode == 0, child.stderr
    out = json.loads(child.stdout)
    available = ss.simd_paths().get(value, False)
    if available:
        assert out == {"simd": value, "warnings": []}
    else:
        assert out["simd"] == DEFAULT
        assert bool(out["warnings"]) == bool(value)
        if value:
            assert "SPRINGSIM_SIMD" in out["warnings"][0]


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
