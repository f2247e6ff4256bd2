"""``python -m springsim.bench``: how fast springsim steps, against its NumPy reference and peers.

The bench builds fixed scenes (gravity on, every spring damped; strings, cloths, a
jelly and two balls full of gas), steps each with every integrator and prints, per
scene and method:

- **ns per spring-step**: the time of one ``sim.step(dt, steps=K)`` call divided by
  ``K × num_springs``; lower is better. Each figure is the best (minimum) of a few
  calls, each on a fresh copy of the scene after a one-step warm-up;
- **steps per second**: ``K`` divided by that time;
- **bytes per node / per spring**: the whole System's memory (``sim.nbytes``: every
  array and the integrator scratch, measured after stepping) divided by the number
  of nodes, and by the number of springs;
- **vs reference**: how many times faster than :mod:`springsim.reference`, the
  NumPy oracle, stepping the same scene with the same method and dt (not timed,
  and the row's note says why, for xpbd on big scenes and for a scene the oracle
  cannot model: see :func:`reference_models`).

A *targets* section then checks the project's speed and memory targets (PASS or
MISS, with the measured value), shows the speed-up of two Python threads each
stepping its own system, and — with ``pip install "springsim[bench]"`` — times the
same scene and integrator written for Taichi's and Warp's CPU backends (see
:func:`taichi_peer` and :func:`warp_peer`), after checking that each computes the
same physics as springsim.

``--quick`` runs everything small and short (no peers unless ``--peers``);
``--json FILE`` (``-`` for standard output) writes every number with a description
of the machine. The tests run ``python -m springsim.bench --quick --json ...``.

Examples
--------
Time one scene from Python (``measure`` returns the same record as a row of
``--json``):

>>> from springsim import bench
>>> row = bench.measure("string_1000", "symplectic_euler", seconds=0.01, repeats=1,
...                     with_reference=False)
>>> row["status"], row["springs"], row["ns_per_spring_step"] > 0
('ok', 999, True)
"""

import argparse
import contextlib
import functools
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

import springsim as ss
from springsim import reference

# ------------------------------------------------------------------------------ scenes

#: Axial damping of every spring in every scene, N·s/m.
DAMPING = 0.01
#: Time step of every scene, as a fraction of ``sim.critical_dt()`` (halved for a
#: method that goes unstable within the timed run, e.g. explicit Euler).
DT_FRACTION = 0.5
#: How many times dt may be halved before a method is reported unstable.
MAX_HALVINGS = 8
#: Default length of one timed call (s) and number of timed calls (the best is kept);
#: ``--quick`` uses 0.02 s and 1.
SECONDS, REPEATS = 0.2, 5


def string_1000() -> ss.System:
    """A 10 m string of 1,000 nodes (999 springs), pinned at one end, falling from level."""
    return ss.string(1000, length=10.0, mass=1.0, stiffness=1e4, damping=DAMPING)


def cloth_100() -> ss.System:
    """A 1 m 100×100 cloth, structural, shear and bend springs (59,002), hung by two corners."""
    return ss.cloth(100, 100, 1.0, 1.0, mass=1.0, stiffness=1000.0, damping=DAMPING)


def cloth_316() -> ss.System:
    """A 1 m 316×316 cloth, structural, shear and bend springs (595,978), hung by two corners."""
    return ss.cloth(316, 316, 1.0, 1.0, mass=1.0, stiffness=1000.0, damping=DAMPING)


def jelly_20() -> ss.System:
    """A 1 m 20³ jelly, stable arrangement (93,556 springs), its bottom face pinned, sagging."""
    return ss.jelly(20, 20, 20, size=1.0, mass=1.0, stiffness=1000.0, damping=DAMPING, pin="bottom")


def ball2d_64() -> ss.System:
    """A 2D soft ball: a 0.5 m ring of 64 nodes (64 springs) full of gas at ~100 N/m, falling."""
    radius, pressure = 0.5, 100.0  # m, N/m: the springs stretch about 5 %
    return ss.ball(
        64,
        radius,
        mass=1.0,
        stiffness=1e4,
        damping=DAMPING,
        dim=2,
        nrt=pressure * math.pi * radius**2,
    )


def ball3d_4() -> ss.System:
    """A 0.5 m icosphere of level 4 (2,562 nodes, 7,680 springs) full of gas at ~300 Pa, falling."""
    radius, pressure = 0.5, 300.0  # m, Pa: the springs stretch about 4 %
    return ss.ball(
        4,
        radius,
        mass=1.0,
        stiffness=1000.0,
        damping=DAMPING,
        dim=3,
        nrt=pressure * 4 / 3 * math.pi * radius**3,
    )


def string_10() -> ss.System:
    """A 1 m string of 10 nodes hanging from one end: the per-call overhead target."""
    return ss.string(10, length=1.0, mass=0.1, stiffness=100.0, damping=DAMPING)


#: The scenes of the table, by name. Add the contact scenes here once that feature
#: exists; new integrators in ``springsim.METHODS`` (implicit, XPBD) are picked up by
#: themselves.
SCENES: dict[str, Callable[[], ss.System]] = {
    "string_1000": string_1000,
    "cloth_100": cloth_100,
    "cloth_316": cloth_316,
    "jelly_20": jelly_20,
    "ball2d_64": ball2d_64,
    "ball3d_4": ball3d_4,
}

#: The scene and method of the speed targets.
TARGET_SCENE, TARGET_METHOD = "cloth_100", "symplectic_euler"

#: The arrays a user's model consists of: the "raw" bytes of the memory target.
RAW_ARRAYS = (
    "positions",
    "velocities",
    "masses",
    "pinned",
    "external_forces",
    "springs",
    "rest_lengths",
    "stiffness",
    "damping",
)

# ----------------------------------------------------------------------- the machine


def _threading_api():
    """springsim's (set_num_threads, get_num_threads, threading_available), None if missing."""
    return (
        getattr(ss, "set_num_threads", None),
        getattr(ss, "get_num_threads", None),
        getattr(ss, "threading_available", None),
    )


def threading_available() -> bool:
    """Whether the kernel can step one system on several OpenMP threads.

    False when springsim has no threading API (``springsim.set_num_threads``) or was
    compiled without OpenMP.
    """
    setter, _, available = _threading_api()
    return bool(setter is not None and available is not None and available())


def get_threads() -> int:
    """The kernel's thread count: ``springsim.get_num_threads()``, or 1 without that API."""
    getter = _threading_api()[1]
    return int(getter()) if getter is not None else 1


def set_threads(n: int) -> int:
    """Ask the kernel for ``n`` threads; returns the count it now uses (1 without the API)."""
    setter = _threading_api()[0]
    if setter is not None:
        setter(int(n))
    return get_threads()


def _cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else platform.processor()."""
    with contextlib.suppress(OSError):
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def machine() -> dict:
    """A description of this machine and software, for the JSON output.

    Returns
    -------
    dict
        platform, cpu (model), cores (logical CPUs this process may use),
        python, numpy and springsim versions, and the kernel's threading state.
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return {
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cores": cores,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "springsim": ss.__version__,
        "threading_api": _threading_api()[0] is not None,
        "threading_available": threading_available(),
        "default_threads": get_threads(),
        "SPRINGSIM_NUM_THREADS": os.environ.get("SPRINGSIM_NUM_THREADS"),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
    }


# ------------------------------------------------------------------------ measuring


def raw_bytes(sim: ss.System) -> int:
    """Bytes of the arrays that define the model (:data:`RAW_ARRAYS`): the memory floor."""
    return sum(getattr(sim, name).nbytes for name in RAW_ARRAYS)


def system_bytes(sim: ss.System) -> tuple[int, str]:
    """The bytes ``sim`` holds, and where the figure comes from.

    ``sim.nbytes`` (every array and scratch buffer) when the kernel provides it;
    otherwise the sum of the array views, which misses scratch and spare capacity.
    """
    nbytes = getattr(sim, "nbytes", None)
    if isinstance(nbytes, (int, np.integer)):
        return int(nbytes), "sim.nbytes"
    total = 0
    for name in (*RAW_ARRAYS, "faces", "uvs", "rest_positions", "_prev_accel"):
        with contextlib.suppress(AttributeError, ValueError, KeyError):
            total += sim._view(name).nbytes
    return total, "sum of the array views (sim.nbytes missing: no scratch, no spare capacity)"


def _seconds(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def _fresh(pristine: ss.System, dt: float, method: str) -> ss.System:
    """A copy of the scene, stepped once (the warm-up: scratch allocated, pages touched)."""
    sim = pristine.copy()
    sim.step(dt, steps=1, method=method)
    return sim


def _calibrate(step: Callable[[int], object], seconds: float, max_steps: int) -> int:
    """How many steps ``step(n)`` takes to run for about ``seconds`` (at least 1)."""
    steps, elapsed = 1, _seconds(partial(step, 1))
    while elapsed < seconds / 8 and steps < max_steps:
        steps = min(max_steps, steps * 4)
        elapsed = _seconds(partial(step, steps))
    return int(min(max_steps, max(1, round(steps * seconds / max(elapsed, 1e-9)))))


def _time_kernel(pristine, dt, method, seconds, repeats, max_steps):
    """(steps K, the seconds of each step(dt, K) call, the last system) for one dt.

    K is chosen so that one call takes about ``seconds``; raises UnstableError.
    """
    sim = _fresh(pristine, dt, method)
    steps = _calibrate(lambda n: sim.step(dt, steps=n, method=method), seconds, max_steps)
    times = []
    for _ in range(repeats):
        sim = _fresh(pristine, dt, method)
        times.append(_seconds(partial(sim.step, dt, steps=steps, method=method)))
    return steps, times, sim


#: Largest scene on which the reference's xpbd (a per-spring Python loop) is timed.
REFERENCE_XPBD_MAX_SPRINGS = 2000
#: Largest scene on which the reference's implicit_euler (a dense (dim·N)² solve) is timed.
REFERENCE_IMPLICIT_MAX_NODES = 300


def reference_models(sim: ss.System) -> bool:
    """Whether :mod:`springsim.reference` steps everything in ``sim`` that the kernel does.

    So far the one thing it may lack is gas: True when ``sim`` has no pressure body
    or when ``reference.State.from_system`` copies every one of them (into the
    state's ``pressure`` list); False for an oracle without gas bodies, which would
    time different physics.
    """
    bodies = len(sim.gases)
    if not bodies:
        return True
    return len(getattr(reference.State.from_system(sim), "pressure", ())) == bodies


def _time_reference(pristine, dt, method, seconds, repeats):
    """(steps, best seconds) of :func:`springsim.reference.step` on the same scene.

    Timed like the kernel: a warm-up step (NumPy's first step is ~40% slower), then
    the best of ``repeats`` calls of about ``seconds`` each, each from the scene's
    start; just one call when a single step takes longer than ``seconds``.
    """
    with np.errstate(all="ignore"):
        state = reference.State.from_system(pristine)
        first = _seconds(lambda: reference.step(state, dt, steps=1, method=method))
        steps = max(1, round(seconds / first))
        best = math.inf
        for _ in range(repeats if first < seconds else 1):
            state = reference.State.from_system(pristine)
            best = min(best, _seconds(partial(reference.step, state, dt, steps, method=method)))
    return steps, best


def measure(
    scene: str,
    method: str = "symplectic_euler",
    *,
    threads: int | None = None,
    seconds: float = SECONDS,
    repeats: int = REPEATS,
    with_reference: bool = True,
    max_steps: int = 10**7,
) -> dict:
    """Time one scene with one integrator; returns the record of one table row.

    Parameters
    ----------
    scene : str
        A key of :data:`SCENES`.
    method : str
        One of :data:`springsim.METHODS`.
    threads : int, optional
        Kernel threads (``springsim.set_num_threads``); the current setting if omitted.
    seconds : float
        About how long one timed call should take; K steps are chosen for it.
    repeats : int
        Timed calls; the best (minimum) is kept.
    with_reference : bool
        Also time :mod:`springsim.reference` on the same scene, method and dt.
    max_steps : int
        Upper bound on K.

    Returns
    -------
    dict
        ``scene``, ``method``, ``threads``, ``nodes``, ``springs``, ``dt``,
        ``dt_fraction`` (of ``critical_dt()``), ``steps`` (K), ``seconds`` (best),
        ``spread`` (slowest call / fastest − 1: how noisy the machine was),
        ``ns_per_spring_step``, ``steps_per_second``, ``nbytes``, ``bytes_per_node``,
        ``bytes_per_spring``, ``raw_bytes``, ``memory_ratio``, the ``reference_*``
        figures and ``reference_ratio`` (reference time / springsim time), and
        ``status``: "ok", or "unstable" (then the timings are None and ``note`` says why).
    """
    if threads is not None:
        set_threads(threads)
    pristine = SCENES[scene]()
    dt = DT_FRACTION * pristine.critical_dt()
    row = {
        "scene": scene,
        "method": method,
        "threads": get_threads(),
        "nodes": pristine.num_nodes,
        "springs": pristine.num_springs,
        "dim": pristine.dim,
        "dt": None,
        "dt_fraction": None,
        "steps": None,
        "seconds": None,
        "spread": None,
        "repeats": repeats,
        "ns_per_spring_step": None,
        "steps_per_second": None,
        "nbytes": None,
        "nbytes_source": None,
        "raw_bytes": raw_bytes(pristine),
        "memory_ratio": None,
        "bytes_per_node": None,
        "bytes_per_spring": None,
        "reference_steps": None,
        "reference_seconds": None,
        "reference_ns_per_spring_step": None,
        "reference_ratio": None,
        "status": "ok",
        "note": "",
    }
    halvings = 0
    while True:
        try:
            steps, times, sim = _time_kernel(pristine, dt, method, seconds, repeats, max_steps)
            break
        except ss.UnstableError as err:
            if halvings == MAX_HALVINGS:
                row["status"] = "unstable"
                row["note"] = f"unstable down to dt = {dt:.3g} s: {err}"
                return row
            halvings += 1
            dt *= 0.5
    if halvings:
        row["note"] = f"dt halved {halvings}× (unstable at larger dt within K steps)"
    nbytes, source = system_bytes(sim)
    best = min(times)
    row.update(
        dt=dt,
        dt_fraction=dt / pristine.critical_dt(),
        steps=steps,
        seconds=best,
        spread=max(times) / best - 1.0,
        ns_per_spring_step=best / (steps * pristine.num_springs) * 1e9,
        steps_per_second=steps / best,
        nbytes=nbytes,
        nbytes_source=source,
        memory_ratio=nbytes / row["raw_bytes"],
        bytes_per_node=nbytes / pristine.num_nodes,
        bytes_per_spring=nbytes / pristine.num_springs,
    )
    if not with_reference:
        pass
    elif method not in reference.METHODS:
        row["note"] = (row["note"] + "; " if row["note"] else "") + "not in springsim.reference"
    elif not reference_models(pristine):
        row["note"] = (row["note"] + "; " if row["note"] else "") + (
            "reference not timed: springsim.reference has no gas bodies"
        )
    elif method == "xpbd" and pristine.num_springs > REFERENCE_XPBD_MAX_SPRINGS:
        # The reference's Gauss-Seidel is a Python loop over springs: a minute per step
        # on the big cloth. Its speed says nothing useful there.
        row["note"] = (row["note"] + "; " if row["note"] else "") + (
            f"reference xpbd (a Python loop) not timed above {REFERENCE_XPBD_MAX_SPRINGS} springs"
        )
    elif method == "implicit_euler" and pristine.num_nodes > REFERENCE_IMPLICIT_MAX_NODES:
        # The reference assembles and factorises a dense matrix: O((dim N)³) per step.
        row["note"] = (row["note"] + "; " if row["note"] else "") + (
            "reference implicit_euler (a dense solve) not timed above "
            f"{REFERENCE_IMPLICIT_MAX_NODES} nodes"
        )
    else:
        ref_steps, ref_best = _time_reference(pristine, dt, method, seconds, repeats)
        ref_ns = ref_best / (ref_steps * pristine.num_springs) * 1e9
        row.update(
            reference_steps=ref_steps,
            reference_seconds=ref_best,
            reference_ns_per_spring_step=ref_ns,
            reference_ratio=ref_ns / row["ns_per_spring_step"],
        )
    return row


def thread_speedup(
    scene: str = "cloth_316", threads: int = 2, seconds: float = SECONDS, repeats: int = REPEATS
) -> dict:
    """Speed-up of the kernel on ``threads`` threads over one, on one scene (symplectic Euler).

    The two settings are timed alternately (1, n, 1, n, ...) with the same K steps
    per call, each call on a fresh copy, and the best of each is kept, so that a
    machine that changes speed during the bench affects both alike. The kernel's
    thread setting is restored afterwards.

    Returns
    -------
    dict
        ``scene``, ``steps``, ``threads`` (what the kernel took when asked for
        ``threads``), ``seconds_1``, ``seconds_n``, ``ns_1``, ``ns_n`` (per
        spring-step) and ``speedup`` = seconds_1 / seconds_n.
    """
    before = get_threads()
    pristine = SCENES[scene]()
    dt = DT_FRACTION * pristine.critical_dt()
    try:
        set_threads(1)
        sim = _fresh(pristine, dt, TARGET_METHOD)
        steps = _calibrate(lambda n: sim.step(dt, steps=n, method=TARGET_METHOD), seconds, 10**7)
        best = {1: math.inf, threads: math.inf}
        used = 1
        for _ in range(repeats):
            for n in best:
                used = max(used, set_threads(n))
                sim = _fresh(pristine, dt, TARGET_METHOD)
                run = partial(sim.step, dt, steps=steps, method=TARGET_METHOD)
                best[n] = min(best[n], _seconds(run))
    finally:
        set_threads(before)
    per_spring_step = 1e9 / (steps * pristine.num_springs)
    return {
        "scene": scene,
        "steps": steps,
        "threads": used,
        "seconds_1": best[1],
        "seconds_n": best[threads],
        "ns_1": best[1] * per_spring_step,
        "ns_n": best[threads] * per_spring_step,
        "speedup": best[1] / best[threads],
    }


def string_in_one_call(steps: int = 10**6, repeats: int = REPEATS) -> dict:
    """Best time of one ``step(dt, steps)`` call on the 10-node string (:func:`string_10`).

    Symplectic Euler at half the critical dt; measures the per-substep overhead
    that a tiny system exposes.
    """
    pristine = string_10()
    dt = DT_FRACTION * pristine.critical_dt()
    best = math.inf
    for _ in range(repeats):
        sim = _fresh(pristine, dt, "symplectic_euler")
        best = min(best, _seconds(partial(sim.step, dt, steps=steps, method="symplectic_euler")))
    return {"steps": steps, "seconds": best, "nodes": pristine.num_nodes, "dt": dt}


def two_systems(seconds: float = SECONDS, repeats: int = REPEATS) -> dict:
    """Two Python threads each stepping its own 100×100 cloth, against the same two runs in turn.

    The kernel is set to one thread (and restored afterwards), so that any speed-up
    comes from the GIL being released during ``step``. ``speedup`` = sequential
    time / concurrent time (2 is perfect on two free cores).

    Returns
    -------
    dict
        ``steps`` per system, best ``sequential_seconds`` and ``concurrent_seconds``,
        ``speedup``, ``worker_threads`` (``get_num_threads()`` seen inside each Python
        thread) and ``errors`` raised in the threads, if any.
    """
    before = get_threads()
    set_threads(1)
    try:
        return _two_systems(seconds, repeats)
    finally:
        set_threads(before)


def _two_systems(seconds, repeats):
    pristine = cloth_100()
    dt = DT_FRACTION * pristine.critical_dt()
    steps, _, _ = _time_kernel(pristine, dt, TARGET_METHOD, seconds / 2, 1, 10**7)
    errors: list[str] = []
    seen: list[int] = []

    def work(sim, barrier):
        try:
            seen.append(get_threads())
            barrier.wait()
            sim.step(dt, steps=steps, method=TARGET_METHOD)
        except Exception as err:  # reported, never raised from a thread
            errors.append(f"{type(err).__name__}: {err}")

    sequential = concurrent = math.inf
    for _ in range(repeats):
        a, b = (_fresh(pristine, dt, TARGET_METHOD) for _ in range(2))
        start = time.perf_counter()
        a.step(dt, steps=steps, method=TARGET_METHOD)
        b.step(dt, steps=steps, method=TARGET_METHOD)
        sequential = min(sequential, time.perf_counter() - start)
        a, b = (_fresh(pristine, dt, TARGET_METHOD) for _ in range(2))
        barrier = threading.Barrier(3)
        workers = [threading.Thread(target=work, args=(s, barrier)) for s in (a, b)]
        for w in workers:
            w.start()
        barrier.wait()
        start = time.perf_counter()
        for w in workers:
            w.join()
        concurrent = min(concurrent, time.perf_counter() - start)
    return {
        "scene": "cloth_100",
        "method": TARGET_METHOD,
        "steps": steps,
        "sequential_seconds": sequential,
        "concurrent_seconds": concurrent,
        "speedup": sequential / concurrent,
        "worker_threads": sorted(set(seen)),
        "errors": errors,
    }


# ---------------------------------------------------------------------------- peers


@dataclass
class Problem:
    """One scene as plain arrays, the input of a peer implementation.

    Attributes
    ----------
    x, v : ndarray, (N, 3) float64
        Positions (m) and velocities (m/s).
    mass : ndarray, (N,) float64
        kg.
    pinned : ndarray, (N,) int32
        1 for a pinned node.
    pairs : ndarray, (M, 2) int32
        Spring node pairs.
    rest, k, c : ndarray, (M,) float64
        Rest lengths (m), stiffness (N/m), axial damping (N·s/m).
    gravity : ndarray, (3,) float64
        m/s².
    """

    x: np.ndarray
    v: np.ndarray
    mass: np.ndarray
    pinned: np.ndarray
    pairs: np.ndarray
    rest: np.ndarray
    k: np.ndarray
    c: np.ndarray
    gravity: np.ndarray

    @classmethod
    def from_system(cls, sim: ss.System) -> "Problem":
        """Copy the arrays of a 3D System with no drag, wind, external forces or gas."""
        if (
            sim.dim != 3
            or sim.drag != 0
            or np.any(sim.external_forces)
            or sim.energy_loss != 1
            or sim.gases
        ):
            raise ValueError("the peers implement 3D springs and gravity only")
        return cls(
            x=np.array(sim.positions),
            v=np.array(sim.velocities),
            mass=np.array(sim.masses),
            pinned=np.array(sim.pinned, dtype=np.int32),
            pairs=np.array(sim.springs, dtype=np.int32),
            rest=np.array(sim.rest_lengths),
            k=np.array(sim.stiffness),
            c=np.array(sim.damping),
            gravity=np.array(sim.gravity),
        )


def taichi_peer(problem: Problem, dt: float, threads: int | None = None):
    """The scene and integrator in Taichi (CPU backend, float64): a stepper object.

    The same physics as springsim's ``symplectic_euler``, written as in Taichi's own
    mass-spring example: one kernel per step with two parallel loops, over springs
    (``f[i] += F`` is atomic in a parallel loop) and over nodes (update, then
    reset the force to gravity for the next step).

    Parameters
    ----------
    problem : Problem
        The arrays of the scene.
    dt : float
        Time step, s.
    threads : int, optional
        ``cpu_max_num_threads``; Taichi's default (every core) if omitted.

    Returns
    -------
    object
        With ``step(n)`` (n steps, then ``ti.sync()``), ``load(x, v)``,
        ``state() -> (x, v)`` and ``close()``.
    """
    import taichi as ti

    options = dict(arch=ti.cpu, default_fp=ti.f64, default_ip=ti.i32, log_level=ti.WARN)
    if threads is not None:
        options["cpu_max_num_threads"] = int(threads)
    ti.init(**options)
    n, m = len(problem.x), len(problem.pairs)
    min_length = reference.MIN_SPRING_LENGTH

    @ti.data_oriented
    class MassSpring:
        def __init__(self):
            self.x = ti.Vector.field(3, ti.f64, n)
            self.v = ti.Vector.field(3, ti.f64, n)
            self.f = ti.Vector.field(3, ti.f64, n)
            self.mass = ti.field(ti.f64, n)
            self.pinned = ti.field(ti.i32, n)
            self.pairs = ti.Vector.field(2, ti.i32, m)
            self.rest = ti.field(ti.f64, m)
            self.k = ti.field(ti.f64, m)
            self.c = ti.field(ti.f64, m)
            self.gravity = ti.Vector.field(3, ti.f64, ())
            for name in ("mass", "pinned", "pairs", "rest", "k", "c"):
                getattr(self, name).from_numpy(getattr(problem, name))
            self.gravity.from_numpy(problem.gravity)

        @ti.kernel
        def reset_forces(self):
            for i in self.f:
                self.f[i] = self.mass[i] * self.gravity[None]

        @ti.kernel
        def substep(self, dt: ti.f64):
            for s in self.pairs:
                i, j = self.pairs[s][0], self.pairs[s][1]
                d = self.x[j] - self.x[i]
                length = d.norm()
                if length >= min_length:
                    u = d / length
                    closing_speed = (self.v[j] - self.v[i]).dot(u)
                    f = (self.k[s] * (length - self.rest[s]) + self.c[s] * closing_speed) * u
                    self.f[i] += f
                    self.f[j] -= f
            for i in self.x:
                if self.pinned[i] == 0:
                    self.v[i] += dt * (self.f[i] / self.mass[i])
                self.x[i] += dt * self.v[i]
                self.f[i] = self.mass[i] * self.gravity[None]

        def load(self, x, v):
            self.x.from_numpy(x)
            self.v.from_numpy(v)
            self.reset_forces()

        def step(self, steps):
            for _ in range(steps):
                self.substep(dt)
            ti.sync()

        def state(self):
            return self.x.to_numpy(), self.v.to_numpy()

        def close(self):
            ti.reset()  # stops Taichi's thread pool before springsim is timed again

    peer = MassSpring()
    peer.load(problem.x, problem.v)
    return peer


@functools.cache
def _warp_kernels():
    """Warp and its two kernels, compiled once per process."""
    import warp as wp

    if hasattr(wp, "LOG_WARNING"):
        wp.config.log_level = wp.LOG_WARNING
    wp.init()

    @wp.kernel
    def spring_forces(
        x: wp.array(dtype=wp.vec3d),
        v: wp.array(dtype=wp.vec3d),
        pairs: wp.array(dtype=wp.vec2i),
        rest: wp.array(dtype=wp.float64),
        k: wp.array(dtype=wp.float64),
        c: wp.array(dtype=wp.float64),
        f: wp.array(dtype=wp.vec3d),
    ):
        s = wp.tid()
        i = pairs[s][0]
        j = pairs[s][1]
        d = x[j] - x[i]
        length = wp.length(d)
        if length >= wp.float64(1.0e-12):  # reference.MIN_SPRING_LENGTH
            u = d / length
            closing_speed = wp.dot(v[j] - v[i], u)
            force = (k[s] * (length - rest[s]) + c[s] * closing_speed) * u
            wp.atomic_add(f, i, force)
            wp.atomic_sub(f, j, force)

    @wp.kernel
    def integrate(
        x: wp.array(dtype=wp.vec3d),
        v: wp.array(dtype=wp.vec3d),
        f: wp.array(dtype=wp.vec3d),
        mass: wp.array(dtype=wp.float64),
        pinned: wp.array(dtype=wp.int32),
        gravity: wp.vec3d,
        dt: wp.float64,
    ):
        i = wp.tid()
        if pinned[i] == 0:
            v[i] = v[i] + dt * (f[i] / mass[i])
        x[i] = x[i] + dt * v[i]
        f[i] = mass[i] * gravity

    return wp, spring_forces, integrate


def warp_peer(problem: Problem, dt: float, threads: int | None = None):
    """The scene and integrator in NVIDIA Warp on the "cpu" device (float64): a stepper.

    The same physics as springsim's ``symplectic_euler``, as Warp's examples write
    it: a spring kernel with ``wp.atomic_add`` into a force array, then a node
    kernel (update, then reset the force to gravity). The two launches are recorded
    once (``record_cmd=True``) and replayed, the cheapest way Warp offers to launch
    on the CPU. Warp runs a CPU kernel on one thread; ``threads`` is ignored.

    Returns
    -------
    object
        With ``step(n)``, ``load(x, v)``, ``state() -> (x, v)`` and ``close()``.
    """
    wp, spring_forces, integrate = _warp_kernels()
    device = "cpu"

    class MassSpring:
        def __init__(self):
            def array(values, dtype):
                return wp.array(values, dtype=dtype, device=device)

            self.x = array(problem.x, wp.vec3d)
            self.v = array(problem.v, wp.vec3d)
            self.f = array(np.zeros_like(problem.x), wp.vec3d)
            mass, pinned = array(problem.mass, wp.float64), array(problem.pinned, wp.int32)
            pairs = array(problem.pairs, wp.vec2i)
            rest, k, c = (array(a, wp.float64) for a in (problem.rest, problem.k, problem.c))
            self.springs = wp.launch(
                spring_forces,
                dim=len(problem.pairs),
                inputs=[self.x, self.v, pairs, rest, k, c, self.f],
                device=device,
                record_cmd=True,
            )
            self.nodes = wp.launch(
                integrate,
                dim=len(problem.x),
                inputs=[self.x, self.v, self.f, mass, pinned, wp.vec3d(*problem.gravity), dt],
                device=device,
                record_cmd=True,
            )
            self.gravity_forces = problem.mass[:, None] * problem.gravity

        def load(self, x, v):
            self.x.assign(x)
            self.v.assign(v)
            self.f.assign(self.gravity_forces)

        def step(self, steps):
            for _ in range(steps):
                self.springs.launch()
                self.nodes.launch()
            wp.synchronize_device(device)

        def state(self):
            return self.x.numpy(), self.v.numpy()

        def close(self):
            pass

    return MassSpring()


#: Peer name -> (builder, its pip package).
PEERS = {
    "taichi": (taichi_peer, "taichi"),
    "warp": (warp_peer, "warp-lang"),
}

#: Steps of the peer-vs-springsim check, and its tolerance (relative, float64).
VALIDATION_STEPS, VALIDATION_TOLERANCE = 20, 1e-9


def _validation_start(pristine: ss.System) -> ss.System:
    """The scene with random velocities on its free nodes: every spring and its damping act."""
    sim = pristine.copy()
    rng = np.random.default_rng(12345)
    velocities = rng.normal(scale=0.05, size=sim.velocities.shape)
    velocities[sim.pinned] = 0.0
    sim.velocities = velocities
    return sim


def validate_peer(peer, pristine: ss.System, dt: float) -> float:
    """Largest relative difference between a peer and springsim after 20 steps.

    Both start from the scene with random velocities. The result is the larger of
    max|Δx_peer − Δx_springsim| / max|Δx_springsim| (Δx: displacement) and the same
    for velocities. Float64 round-off gives ~1e-11: positions near 1 m carry
    ~1e-16 m of rounding, displacements over 20 steps are ~0.1 mm. Leaving out the
    damping, or any other term, gives 1e-3 or more.
    """
    start = _validation_start(pristine)
    x0, v0 = np.array(start.positions), np.array(start.velocities)
    threads = get_threads()
    set_threads(1)
    try:
        start.step(dt, steps=VALIDATION_STEPS, method=TARGET_METHOD)
    finally:
        set_threads(threads)
    peer.load(x0, v0)
    peer.step(VALIDATION_STEPS)
    x, v = peer.state()
    dx = np.abs((x - x0) - (start.positions - x0)).max() / np.abs(start.positions - x0).max()
    dv = np.abs(v - start.velocities).max() / np.abs(start.velocities).max()
    return float(max(dx, dv))


def _time_peer(peer, pristine, seconds, repeats, max_steps=10**7):
    """(steps, best seconds) of ``peer.step(steps)``, each run from the scene's start."""
    x0, v0 = np.array(pristine.positions), np.array(pristine.velocities)
    peer.load(x0, v0)
    peer.step(1)  # warm-up (and Taichi's first launch compiles)
    steps = _calibrate(peer.step, seconds, max_steps)
    best = math.inf
    for _ in range(repeats):
        peer.load(x0, v0)
        peer.step(1)
        best = min(best, _seconds(partial(peer.step, steps)))
    return steps, best


def _peer_version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(PEERS[name][1])
    except metadata.PackageNotFoundError:
        return None


def _peer_scene(sim: ss.System) -> bool:
    """Whether the peers implement ``sim``'s physics (3D springs and gravity, no gas)."""
    try:
        Problem.from_system(sim)
    except ValueError:
        return False
    return True


#: The peer configurations timed: (peer, threads; None = the peer's default).
PEER_CONFIGS = (("taichi", 1), ("taichi", None), ("warp", None))


def _peer_row(name, scene, threads, cores) -> dict:
    """The record of one peer configuration, before it has run."""
    if name == "taichi":
        config = f"cpu_max_num_threads={threads}" if threads else f"default (all {cores} cores)"
    else:
        config = "device='cpu' (kernels run on one thread)"
    return {
        "peer": name,
        "version": _peer_version(name),
        "scene": scene,
        "method": TARGET_METHOD,
        "threads": 1 if name == "warp" else (threads or cores),
        "config": config,
        "status": "ok",
        "reason": "",
        "validation_error": None,
        "steps": None,
        "seconds": None,
        "ns_per_spring_step": None,
    }


def _measure_peer_here(name, scene, threads, seconds, repeats, cores) -> dict:
    """:func:`measure_peer` in this process (which the peer's runtime then occupies)."""
    row = _peer_row(name, scene, threads, cores)
    try:
        pristine = SCENES[scene]()
        dt = DT_FRACTION * pristine.critical_dt()
        peer = PEERS[name][0](Problem.from_system(pristine), dt, threads)
        error = validate_peer(peer, pristine, dt)
        row["validation_error"] = error
        if not error <= VALIDATION_TOLERANCE:
            row.update(status="mismatch", reason=f"differs from springsim by {error:.3g}")
        steps, best = _time_peer(peer, pristine, seconds, repeats)
        peer.close()
    except Exception as err:  # a peer that cannot run on this machine is reported, not fatal
        row.update(status="failed", reason=f"{type(err).__name__}: {err}".splitlines()[0][:300])
        return row
    row.update(
        steps=steps,
        seconds=best,
        ns_per_spring_step=best / (steps * pristine.num_springs) * 1e9,
    )
    return row


def measure_peer(name, scene, threads, seconds, repeats, cores, timeout=900) -> dict:
    """Validate one peer configuration on one scene, then time it; never raises.

    Each configuration runs in a fresh Python process (``python -m springsim.bench
    --peer-worker``): Taichi's thread pool outlives ``ti.reset()`` and slows down
    whatever runs after it in the same process (springsim by 30% or more on a
    2-core machine), and a peer that crashes cannot take the bench with it.

    Parameters
    ----------
    name : {"taichi", "warp"}
        The peer.
    scene : str
        A key of :data:`SCENES` (3D).
    threads : int or None
        The peer's thread count; None for its default.
    seconds, repeats
        As for :func:`measure`.
    cores : int
        The cores of this machine (what Taichi's default uses).
    timeout : float
        Seconds after which the peer's process is stopped and reported failed.

    Returns
    -------
    dict
        ``peer``, ``version``, ``scene``, ``method``, ``threads`` (used), ``config``
        (how they were set), ``status`` ("ok", "mismatch", "skipped", "failed"),
        ``reason``, ``validation_error``, ``steps``, ``seconds``, ``ns_per_spring_step``.
    """
    row = _peer_row(name, scene, threads, cores)
    if row["version"] is None:
        row.update(status="skipped", reason=f"not installed: pip install {PEERS[name][1]}")
        return row
    spec = dict(name=name, scene=scene, threads=threads, seconds=seconds, repeats=repeats)
    with tempfile.TemporaryDirectory() as folder:
        spec.update(cores=cores, out=os.path.join(folder, "peer.json"))
        command = [sys.executable, "-m", "springsim.bench", "--peer-worker", json.dumps(spec)]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            row.update(status="failed", reason=f"no result within {timeout:g} s")
            return row
        if done.returncode == 0 and os.path.exists(spec["out"]):
            with open(spec["out"]) as file:
                return json.load(file)
    last = (done.stderr.strip().splitlines() or ["no message"])[-1][:300]
    row.update(status="failed", reason=f"its process exited with {done.returncode}: {last}")
    return row


# ------------------------------------------------------------------------ the run


class _Run:
    """One bench run: the settings, the measurements so far (memoised), the printer."""

    def __init__(self, args, out):
        self.args = args
        self.out = out
        self.quick = args.quick
        self.seconds = (
            args.seconds if args.seconds is not None else (0.02 if args.quick else SECONDS)
        )
        self.repeats = args.repeats if args.repeats is not None else (1 if args.quick else REPEATS)
        self.cache: dict[tuple[str, str, int, bool], dict] = {}
        self.extras: dict[str, dict | None] = {"thread_speedup": None, "string_in_one_call": None}
        self.info = machine()

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def measure(self, scene, method, threads, with_reference=True) -> dict:
        """measure(), once per (scene, method, threads); a row with the reference serves all."""
        used = set_threads(threads)
        for key in ((scene, method, used, True), (scene, method, used, with_reference)):
            if key in self.cache:
                return self.cache[key]
        row = measure(
            scene, method, seconds=self.seconds, repeats=self.repeats, with_reference=with_reference
        )
        self.cache[(scene, method, used, with_reference)] = row
        return row

    # -- the table --------------------------------------------------------------

    def table(self, scenes, methods) -> list[dict]:
        wanted = self.args.threads
        used = set_threads(wanted)
        self.say(
            f"Speed per scene and method, {used} kernel thread{'s' * (used != 1)}"
            + ("" if used == wanted else f" ({wanted} asked: {self._thread_note()})")
        )
        self.say(
            f"  each time: one sim.step(dt, steps=K) call, K chosen for ~{self.seconds:g} s;"
            f" best (min) of {self.repeats} call{'s' * (self.repeats != 1)}, each on a fresh"
            " copy after a 1-step warm-up"
        )
        self.say(
            f"  dt = {DT_FRACTION}·critical_dt(), halved while a method blows up in the run;"
            " ns/spring-step = seconds / (K × springs)"
        )
        self.say(
            "  B/node, B/spring = whole System (sim.nbytes, after stepping) / nodes, / springs;"
            " 'vs ref' = springsim.reference time / springsim time;"
            " spread = slowest call / fastest - 1"
        )
        header = (
            f"{'scene':<12}{'method':<17}{'nodes':>7}{'springs':>9}{'dt/crit':>8}{'K':>9}"
            f"{'ns/spring-step':>15}{'spread':>7}{'steps/s':>11}{'B/node':>8}{'B/spring':>9}"
            f"{'ref ns':>9}{'vs ref':>8}"
        )
        self.say(header)
        rows = []
        for scene in scenes:
            for method in methods:
                row = self.measure(scene, method, wanted)
                rows.append(row)
                self.say(self._row_line(row))
        notes = sorted({(r["scene"], r["method"], r["note"]) for r in rows if r["note"]})
        for scene, method, note in notes:
            self.say(f"  note {scene} {method}: {note}")
        if rows and rows[0]["nbytes_source"] not in (None, "sim.nbytes"):
            self.say(f"  memory: {rows[0]['nbytes_source']}")
        return rows

    @staticmethod
    def _row_line(row) -> str:
        head = f"{row['scene']:<12}{row['method']:<17}{row['nodes']:>7}{row['springs']:>9}"
        if row["status"] != "ok":
            return head + f"  {row['status'].upper()}: {row['note']}"
        ref = row["reference_ns_per_spring_step"]
        ratio = row["reference_ratio"]
        return head + (
            f"{row['dt_fraction']:>8.3g}{row['steps']:>9}{row['ns_per_spring_step']:>15.2f}"
            f"{row['spread']:>7.0%}"
            f"{row['steps_per_second']:>11.4g}{row['bytes_per_node']:>8.0f}"
            f"{row['bytes_per_spring']:>9.1f}"
            + (f"{ref:>9.1f}{ratio:>7.1f}×" if ratio is not None else f"{'–':>9}{'–':>8}")
        )

    def _thread_note(self) -> str:
        if _threading_api()[0] is None:
            return "this springsim has no set_num_threads()"
        if not threading_available():
            return "this springsim was compiled without OpenMP"
        return "the kernel chose otherwise"

    # -- peers ------------------------------------------------------------------

    def peers(self, scenes) -> list[dict]:
        cores = self.info["cores"]
        scenes = [s for s in scenes if _peer_scene(SCENES[s]())]
        self.say()
        self.say(
            f"Peers: the same scene and integrator ({TARGET_METHOD}, float64) in Taichi and Warp"
            f" on the CPU; validated against springsim over {VALIDATION_STEPS} steps"
            f" (tolerance {VALIDATION_TOLERANCE:g} relative), then timed like springsim"
        )
        self.say(
            f"{'scene':<12}{'peer':<8}{'threads':>8}  {'config':<42}{'peer ns':>9}"
            f"{'springsim ns':>14}{'springsim ×':>13}  check"
        )
        rows = []
        for scene in scenes:
            for name, option in PEER_CONFIGS:
                row = measure_peer(name, scene, option, self.seconds, self.repeats, cores)
                mine = self.measure(scene, TARGET_METHOD, row["threads"], with_reference=False)
                row["springsim_threads"] = mine["threads"]
                row["springsim_ns_per_spring_step"] = mine["ns_per_spring_step"]
                row["springsim_speedup"] = (
                    row["ns_per_spring_step"] / mine["ns_per_spring_step"]
                    if row["ns_per_spring_step"] and mine["ns_per_spring_step"]
                    else None
                )
                rows.append(row)
                self.say(self._peer_line(row))
        set_threads(self.args.threads)
        self.say(
            "  'springsim ×' = peer time / springsim time at the same thread count"
            " (> 1: springsim is faster)"
        )
        return rows

    @staticmethod
    def _peer_line(row) -> str:
        name = row["peer"] + (f" {row['version']}" if row["version"] else "")
        head = f"{row['scene']:<12}{row['peer']:<8}{row['threads']:>8}  {row['config']:<42}"
        if row["status"] in ("skipped", "failed"):
            return head + f"{row['status'].upper()}: {row['reason']} ({name})"
        mine = row["springsim_ns_per_spring_step"]
        speedup = row["springsim_speedup"]
        check = (
            f"ok ({row['validation_error']:.1g})"
            if row["status"] == "ok"
            else f"MISMATCH {row['reason']}"
        )
        return head + (
            f"{row['ns_per_spring_step']:>9.2f}"
            + (f"{mine:>14.2f}{speedup:>12.2f}×" if speedup else f"{'–':>14}{'–':>13}")
            + f"  {check}"
        )

    # -- targets ----------------------------------------------------------------

    def targets(self, peer_rows) -> tuple[list[dict], dict]:
        self.say()
        self.say(
            "Targets: symplectic Euler, 100×100 cloth with shear and bend springs, gravity and"
            " spring damping, 1 thread unless stated"
        )
        targets = []

        def target(name, goal, measured, unit, passed, note=""):
            targets.append(
                {
                    "name": name,
                    "target": goal,
                    "measured": measured,
                    "unit": unit,
                    "passed": passed,
                    "note": note,
                }
            )
            digits = 3 if unit == " s" else 2
            shown = "n/a" if measured is None else f"{measured:.{digits}f}{unit}"
            verdict = {True: "PASS", False: "MISS", None: "----"}[passed]
            self.say(f"  {verdict}  {name:<44}{goal:<10}{shown:>10}  {note}")

        base = self.measure(TARGET_SCENE, TARGET_METHOD, 1)
        ok = base["status"] == "ok"
        ns = base["ns_per_spring_step"]
        target(
            "ns per spring-step",
            "<= 4",
            ns,
            " ns",
            ns <= 4.0 if ok else None,
            f"{base['springs']} springs" if ok else base["note"],
        )
        ratio = base["reference_ratio"]
        target(
            "speed-up over springsim.reference",
            ">= 20×",
            ratio,
            "×",
            None if ratio is None else ratio >= 20.0,
            "" if ratio is None else f"reference {base['reference_ns_per_spring_step']:.1f} ns",
        )
        for name in PEERS:
            for row in (r for r in peer_rows if r["peer"] == name and r["scene"] == TARGET_SCENE):
                speedup = row["springsim_speedup"]
                usable = row["status"] == "ok" and speedup is not None
                target(
                    f"faster than {name} ({row['threads']} thread{'s' * (row['threads'] != 1)})",
                    "> 1×",
                    speedup if usable else None,
                    "×",
                    speedup > 1.0 if usable else None,
                    f"{name} {row['ns_per_spring_step']:.2f} ns vs springsim"
                    f" {row['springsim_ns_per_spring_step']:.2f} ns"
                    if usable
                    else (row["reason"] or row["status"]),
                )
            if not any(r["peer"] == name for r in peer_rows):
                target(f"faster than {name}", "> 1×", None, "×", None, "peers not run (--peers)")

        scaling = None
        if threading_available() and self.info["cores"] >= 2:
            scaling = thread_speedup("cloth_316", 2, self.seconds, self.repeats)
            target(
                "2 threads vs 1 (316×316 cloth)",
                ">= 1.7×",
                scaling["speedup"],
                "×",
                scaling["speedup"] >= 1.7 and scaling["threads"] == 2,
                f"{scaling['ns_1']:.2f} ns on 1 thread, {scaling['ns_n']:.2f} ns on"
                f" {scaling['threads']}, timed alternately",
            )
        else:
            reason = (
                f"only {self.info['cores']} core" if self.info["cores"] < 2 else self._thread_note()
            )
            target("2 threads vs 1 (316×316 cloth)", ">= 1.7×", None, "×", None, reason)
        self.extras["thread_speedup"] = scaling

        set_threads(1)
        one_call = string_in_one_call(repeats=self.repeats)
        self.extras["string_in_one_call"] = one_call
        target(
            "10-node string, 10⁶ steps in one call",
            "<= 0.3 s",
            one_call["seconds"],
            " s",
            one_call["seconds"] <= 0.3,
            f"{one_call['seconds'] / one_call['steps'] * 1e9:.0f} ns per step",
        )

        memory = base["memory_ratio"]
        target(
            "memory / raw arrays",
            "<= 1.3×",
            memory,
            "×",
            None if memory is None else memory <= 1.3,
            f"{base['nbytes']} B ({base['nbytes_source']}) / {base['raw_bytes']} B raw",
        )
        self.say(f"        raw = the nbytes of {', '.join(RAW_ARRAYS)}")

        pair = two_systems(seconds=self.seconds, repeats=self.repeats)
        set_threads(self.args.threads)
        self.say(
            f"  two Python threads, each stepping its own 100×100 cloth (1 kernel thread each):"
            f" {pair['speedup']:.2f}× the speed of the same two runs in turn"
            f" ({pair['sequential_seconds']:.3f} s → {pair['concurrent_seconds']:.3f} s)"
            + (f"; errors: {pair['errors']}" if pair["errors"] else "")
        )
        if pair["worker_threads"] != [1]:
            self.say(
                f"  note: get_num_threads() inside the Python threads was {pair['worker_threads']},"
                " not 1: the thread setting does not carry over to new threads"
            )
        return targets, pair

    # -- everything -------------------------------------------------------------

    def header(self) -> None:
        info = self.info
        self.say(
            f"springsim {info['springsim']} bench: {info['cpu']}, {info['cores']} cores,"
            f" {info['platform']}, Python {info['python']}, NumPy {info['numpy']}"
        )
        threads = (
            f"default kernel threads {info['default_threads']}"
            if info["threading_api"]
            else "no threading API (springsim.set_num_threads): one kernel thread"
        )
        self.say(
            f"{threads}; OpenMP {'available' if info['threading_available'] else 'not available'}"
            + ("; quick mode" if self.quick else "")
        )
        self.say()


def _names(text: str, valid, what: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in valid]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown {what} {', '.join(unknown) or repr(text)}; valid: {', '.join(valid)}"
        )
    return names


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m springsim.bench",
        description=(
            "Time springsim's kernel on fixed scenes (a 1,000-node string, 100×100 and"
            " 316×316 cloths with shear and bend springs, a 20³ jelly) with every"
            " integrator: ns per spring-step, steps per second, bytes per node and per"
            " spring, and the speed-up over springsim.reference. Then check the speed"
            " targets and, with `pip install springsim[bench]`, compare with Taichi and"
            " Warp on the CPU. Each time is the best of a few runs."
        ),
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="short timings, one run each, no peers unless --peers (for tests; ~10 s)",
    )
    parser.add_argument(
        "--json",
        metavar="FILE",
        help="also write every result as JSON to FILE ('-': standard output, the table"
        " then goes to standard error)",
    )
    parser.add_argument(
        "--threads", type=int, default=1, metavar="N", help="kernel threads for the table (1)"
    )
    parser.add_argument(
        "--scenes",
        type=lambda text: _names(text, list(SCENES), "scene"),
        default=list(SCENES),
        metavar="A,B",
        help=f"comma-separated scenes (default all: {', '.join(SCENES)})",
    )
    parser.add_argument(
        "--methods",
        type=lambda text: _names(text, list(ss.METHODS), "method"),
        default=list(ss.METHODS),
        metavar="A,B",
        help=f"comma-separated methods (default all: {', '.join(ss.METHODS)})",
    )
    peers = parser.add_mutually_exclusive_group()
    peers.add_argument(
        "--peers",
        action="store_true",
        default=None,
        help="time Taichi and Warp (default: not in --quick)",
    )
    peers.add_argument("--no-peers", dest="peers", action="store_false", help="skip the peers")
    parser.add_argument(
        "--no-targets", dest="targets", action="store_false", help="skip the targets section"
    )
    parser.add_argument(
        "--seconds", type=float, metavar="S", help="length of one timed call (0.2; quick 0.02)"
    )
    parser.add_argument(
        "--repeats", type=int, metavar="R", help="timed calls per figure, best kept (5; quick 1)"
    )
    parser.add_argument("--peer-worker", help=argparse.SUPPRESS)  # internal: measure_peer
    return parser


@contextlib.contextmanager
def _stdout_is_stderr():
    """Send everything written to standard output (also by C libraries) to standard error.

    Yields the original standard output as a text stream, for the JSON.
    """
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        with os.fdopen(os.dup(saved), "w") as real_stdout:
            yield real_stdout
            real_stdout.flush()
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def run(args: argparse.Namespace, out) -> dict:
    """Run the bench as ``args`` say, printing to ``out``; returns the JSON document."""
    bench = _Run(args, out)
    bench.header()
    started = time.perf_counter()
    results = bench.table(args.scenes, args.methods)
    use_peers = args.peers if args.peers is not None else not args.quick
    peer_rows = bench.peers(args.scenes) if use_peers else []
    targets, pair = bench.targets(peer_rows) if args.targets else ([], None)
    set_threads(args.threads)
    elapsed = time.perf_counter() - started
    bench.say()
    bench.say(f"bench took {elapsed:.1f} s")
    return {
        "benchmark": "springsim.bench",
        "machine": bench.info,
        "settings": {
            "quick": args.quick,
            "threads": args.threads,
            "seconds_per_call": bench.seconds,
            "repeats": bench.repeats,
            "statistic": "min",
            "dt_fraction": DT_FRACTION,
            "spring_damping": DAMPING,
            "scenes": {name: SCENES[name].__doc__ for name in args.scenes},
            "methods": args.methods,
            "raw_arrays": list(RAW_ARRAYS),
        },
        "results": results,
        "peers": peer_rows,
        "targets": targets,
        "two_systems": pair,
        **bench.extras,
        "seconds": elapsed,
    }


def _jsonable(value):
    """``value`` with numpy scalars made Python numbers and non-finite floats made None."""
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(item) for item in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _write_json(document: dict, stream) -> None:
    json.dump(_jsonable(document), stream, indent=1, allow_nan=False)
    stream.write("\n")


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status (0, or 2 for bad arguments)."""
    args = _parser().parse_args(argv)
    if args.peer_worker:  # one peer configuration, in its own process (see measure_peer)
        spec = json.loads(args.peer_worker)
        out = spec.pop("out")
        row = _measure_peer_here(**spec)
        with open(out, "w") as file:
            _write_json(row, file)
        return 0
    if args.threads < 1 or (args.repeats is not None and args.repeats < 1):
        _parser().error("--threads and --repeats must be >= 1")
    if args.seconds is not None and not args.seconds > 0:
        _parser().error("--seconds must be > 0")
    if args.json == "-":
        with _stdout_is_stderr() as stdout:
            _write_json(run(args, sys.stderr), stdout)
        return 0
    if not args.json:
        run(args, sys.stdout)
        return 0
    with open(args.json, "w") as file:  # opened first: a bad path fails before the run
        _write_json(run(args, sys.stdout), file)
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
