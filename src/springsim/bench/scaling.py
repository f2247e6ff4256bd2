"""Threads: the kernel on 1 thread against 2, idle and with one core kept busy (``--busy``).

Everything here is wall time (a speed-up on several threads is about elapsed time),
the two settings timed interleaved with the same K steps per call, medians quoted.
"""

import contextlib
import math
import subprocess
import sys
import threading
import time

from springsim.bench.kernel import SECONDS, kernel_contender
from springsim.bench.machine import get_threads, set_threads
from springsim.bench.scenes import TARGET_METHOD, cloth_100, scene, scene_dt
from springsim.bench.timing import calibrate, interleave, median

#: The scenes of the ``--busy`` comparison.
BUSY_SCENES = ("cloth_316", "cloth_100")
#: The helper of :func:`busy_core`: a pure-Python spin that ends by itself.
BUSY_CODE = (
    "import time\nend = time.monotonic() + {timeout}\nwhile time.monotonic() < end:\n    pass\n"
)


def thread_speedup(
    scene_name: str = "cloth_316", threads: int = 2, seconds: float = SECONDS, repeats: int = 5
) -> dict:
    """Speed-up of the kernel on ``threads`` threads over one, on one scene (symplectic Euler).

    The two settings are timed interleaved (shuffled rounds) by wall time with the
    same K steps per call, each call on a fresh copy; the medians are compared. The
    kernel's thread setting is restored afterwards.

    Returns
    -------
    dict
        ``scene``, ``steps``, ``threads`` (what the kernel took when asked for
        ``threads``), ``seconds_1``, ``seconds_n`` (medians), ``ns_1``, ``ns_n`` (per
        spring-step), ``speedup`` = seconds_1 / seconds_n, ``ratio`` = seconds_n /
        seconds_1, ``clock`` ("wall").
    """
    before = get_threads()
    pristine = scene(scene_name)
    dt = scene_dt(pristine)
    try:
        used = set_threads(threads)
        one, many = (
            kernel_contender(f"{n} threads", pristine, dt, TARGET_METHOD, n) for n in (1, threads)
        )
        one.clock = many.clock = "wall"
        many.steps = calibrate(one, seconds)
        timed = interleave([one, many], repeats)
    finally:
        set_threads(before)
    seconds_1, seconds_n = (median(timed[c.name]["seconds"]) for c in (one, many))
    per_spring_step = 1e9 / (one.steps * pristine.num_springs)
    return {
        "scene": scene_name,
        "steps": one.steps,
        "threads": used,
        "seconds_1": seconds_1,
        "seconds_n": seconds_n,
        "ns_1": seconds_1 * per_spring_step,
        "ns_n": seconds_n * per_spring_step,
        "speedup": seconds_1 / seconds_n,
        "ratio": seconds_n / seconds_1,
        "clock": "wall",
        "rounds": repeats,
    }


@contextlib.contextmanager
def busy_core(timeout: float = 600.0):
    """Keep one core busy while the block runs: a second Python process spinning.

    The helper ends by itself after ``timeout`` seconds; leaving the block (also by
    an exception or Ctrl-C) terminates it, and kills it if it does not stop within 5 s.

    Yields
    ------
    subprocess.Popen
        The helper process.
    """
    helper = subprocess.Popen(
        [sys.executable, "-c", BUSY_CODE.format(timeout=float(timeout))],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.2)  # let it start spinning
        yield helper
    finally:
        helper.terminate()
        try:
            helper.wait(5)
        except subprocess.TimeoutExpired:
            helper.kill()
            helper.wait()


def busy_threads(
    scenes=BUSY_SCENES,
    threads: int = 2,
    seconds: float = SECONDS,
    repeats: int = 5,
    timeout: float = 600.0,
) -> dict:
    """The kernel on 1 thread and on ``threads`` while another process keeps one core busy.

    Returns
    -------
    dict
        ``helper``: the busy process's pid and exit code (it is always stopped), and
        ``scenes``: for each scene the record of :func:`thread_speedup` measured under
        that load (``ratio`` = time on ``threads`` threads / time on 1: above 1, the
        extra threads made it slower).
    """
    rows = []
    with busy_core(timeout) as helper:
        for name in scenes:
            if helper.poll() is not None:
                raise RuntimeError(f"the busy helper ended early (exit code {helper.returncode})")
            rows.append(thread_speedup(name, threads, seconds, repeats))
    return {"helper": {"pid": helper.pid, "returncode": helper.returncode}, "scenes": rows}


def two_systems(seconds: float = SECONDS, repeats: int = 5) -> dict:
    """Two Python threads each stepping its own 100×100 cloth, against the same two runs in turn.

    The kernel is set to one thread (and restored afterwards), so that any speed-up
    comes from the GIL being released during ``step``. Wall time, the two ways
    alternated, medians; ``speedup`` = sequential time / concurrent time (2 is
    perfect on two free cores).

    Returns
    -------
    dict
        ``steps`` per system, median ``sequential_seconds`` and ``concurrent_seconds``,
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
    dt = scene_dt(pristine)
    probe = kernel_contender("probe", pristine, dt, TARGET_METHOD, 1)
    steps = calibrate(probe, seconds / 2)
    errors: list[str] = []
    seen: list[int] = []

    def fresh():
        sim = pristine.copy()
        sim.step(dt, steps=1, method=TARGET_METHOD)
        return sim

    def work(sim, barrier):
        try:
            seen.append(get_threads())
            barrier.wait()
            sim.step(dt, steps=steps, method=TARGET_METHOD)
        except Exception as err:  # reported, never raised from a thread
            errors.append(f"{type(err).__name__}: {err}")

    sequential, concurrent = [], []
    for _ in range(repeats):
        a, b = fresh(), fresh()
        start = time.perf_counter()
        a.step(dt, steps=steps, method=TARGET_METHOD)
        b.step(dt, steps=steps, method=TARGET_METHOD)
        sequential.append(time.perf_counter() - start)
        a, b = fresh(), fresh()
        barrier = threading.Barrier(3)
        workers = [threading.Thread(target=work, args=(s, barrier)) for s in (a, b)]
        for w in workers:
            w.start()
        barrier.wait()
        start = time.perf_counter()
        for w in workers:
            w.join()
        concurrent.append(time.perf_counter() - start)
    sequential_seconds, concurrent_seconds = median(sequential), median(concurrent)
    return {
        "scene": "cloth_100",
        "method": TARGET_METHOD,
        "steps": steps,
        "sequential_seconds": sequential_seconds,
        "concurrent_seconds": concurrent_seconds,
        "speedup": sequential_seconds / concurrent_seconds if concurrent_seconds > 0 else math.inf,
        "worker_threads": sorted(set(seen)),
        "errors": errors,
    }
