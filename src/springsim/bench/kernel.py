"""Timing springsim on one scene and method, interleaved with its NumPy reference."""

import numpy as np

import springsim as ss
from springsim import reference
from springsim.bench.machine import get_threads, set_threads
from springsim.bench.scenes import (
    TARGET_METHOD,
    scene,
    scene_dt,
    string_10,
    system_bytes,
)
from springsim.bench.timing import Contender, calibrate, clock_for, interleave, summarize

#: Default length of one timed call (s) and number of interleaved rounds (the median
#: is quoted); ``--quick`` uses 0.02 s and 1.
SECONDS, REPEATS = 0.2, 5
#: How many times dt may be halved before a method is reported unstable.
MAX_HALVINGS = 8
#: Largest scene on which the reference's xpbd (a per-spring Python loop) is timed.
REFERENCE_XPBD_MAX_SPRINGS = 2000
#: Largest scene on which the reference's implicit_euler (a dense (dim·N)² solve) is timed.
REFERENCE_IMPLICIT_MAX_NODES = 300
#: Largest scene on which the reference is timed at all (seconds per step above it).
REFERENCE_MAX_SPRINGS = 1_000_000


def kernel_contender(
    name: str, pristine: ss.System, dt: float, method: str, threads: int
) -> Contender:
    """springsim stepping ``pristine`` on ``threads`` threads, as a :class:`Contender`.

    Before every timed call: the thread setting, a fresh copy of the scene and one
    warm-up step (scratch allocated, pages touched).
    """
    state = {}

    def reset():
        set_threads(threads)
        sim = pristine.copy()
        sim.step(dt, steps=1, method=method)
        state["sim"] = sim

    def run(steps):
        state["sim"].step(dt, steps=steps, method=method)

    contender = Contender(name, run, reset, clock_for(threads))
    contender.system = lambda: state["sim"]  # type: ignore[attr-defined]  # the timed system
    return contender


def reference_contender(pristine: ss.System, dt: float, method: str) -> Contender:
    """:func:`springsim.reference.step` on the same scene, as a :class:`Contender`.

    Thread CPU time, except implicit_euler (its dense solve may run on BLAS threads).
    """
    state = {}

    def reset():
        # From a copy: reading the scene's external forces makes them real (a cold array),
        # and the scene's copies would carry them into the memory figures.
        state["s"] = reference.State.from_system(pristine.copy())

    def run(steps):
        with np.errstate(all="ignore"):
            reference.step(state["s"], dt, steps, method=method)

    return Contender("reference", run, reset, "wall" if method == "implicit_euler" else "thread")


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
    return len(getattr(reference.State.from_system(sim.copy()), "pressure", ())) == bodies


def why_no_reference(sim: ss.System, method: str) -> str:
    """Why the reference is not timed on ``sim`` with ``method``; "" if it is."""
    if method not in reference.METHODS:
        return "not in springsim.reference"
    if not reference_models(sim):
        return "reference not timed: springsim.reference has no gas bodies"
    if sim.num_springs > REFERENCE_MAX_SPRINGS:
        return f"reference not timed above {REFERENCE_MAX_SPRINGS:,} springs (seconds per step)"
    if method == "xpbd" and sim.num_springs > REFERENCE_XPBD_MAX_SPRINGS:
        # The reference's Gauss-Seidel is a Python loop over springs: a minute per step.
        return (
            f"reference xpbd (a Python loop) not timed above {REFERENCE_XPBD_MAX_SPRINGS} springs"
        )
    if method == "implicit_euler" and sim.num_nodes > REFERENCE_IMPLICIT_MAX_NODES:
        # The reference assembles and factorises a dense matrix: O((dim N)³) per step.
        return (
            "reference implicit_euler (a dense solve) not timed above "
            f"{REFERENCE_IMPLICIT_MAX_NODES} nodes"
        )
    return ""


def _empty_row(name: str, method: str, pristine: ss.System, repeats: int) -> dict:
    fields = (
        "dt dt_fraction steps seconds seconds_min spread clock cpu_share ns_per_spring_step"
        " steps_per_second nbytes nbytes_source bytes_per_node bytes_per_spring"
        " reference_steps reference_seconds reference_clock reference_ns_per_spring_step"
        " reference_ratio"
    ).split()
    return {
        "scene": name,
        "method": method,
        "threads": get_threads(),
        "nodes": pristine.num_nodes,
        "springs": pristine.num_springs,
        "dim": pristine.dim,
        **dict.fromkeys(fields),
        "repeats": repeats,
        "statistic": "median",
        "status": "ok",
        "note": "",
    }


def measure(
    scene_name: str,
    method: str = "symplectic_euler",
    *,
    threads: int | None = None,
    seconds: float = SECONDS,
    repeats: int = REPEATS,
    with_reference: bool = True,
    max_steps: int = 10**7,
) -> dict:
    """Time one scene with one integrator; returns the record of one table row.

    springsim and (``with_reference``) :mod:`springsim.reference` are timed
    interleaved, ``repeats`` rounds, each call on a fresh copy after a warm-up step;
    on one thread by thread CPU time, else by wall time (see
    :mod:`springsim.bench.timing`); the median is quoted.

    Parameters
    ----------
    scene_name : str
        A key of :data:`springsim.bench.ALL_SCENES`.
    method : str
        One of :data:`springsim.METHODS`.
    threads : int, optional
        Kernel threads (``springsim.set_num_threads``); the current setting if omitted.
    seconds : float
        About how long one timed call should take; K steps are chosen for it.
    repeats : int
        Interleaved rounds; the median is kept.
    with_reference : bool
        Also time :mod:`springsim.reference` on the same scene, method and dt.
    max_steps : int
        Upper bound on K.

    Returns
    -------
    dict
        ``scene``, ``method``, ``threads``, ``nodes``, ``springs``, ``dt``,
        ``dt_fraction`` (of ``critical_dt()``), ``steps`` (K), ``seconds`` (median),
        ``seconds_min``, ``spread`` (slowest call / fastest − 1), ``clock``,
        ``cpu_share``, ``ns_per_spring_step``, ``steps_per_second``, ``nbytes``,
        ``nbytes_source``, ``bytes_per_node``, ``bytes_per_spring``, the ``reference_*``
        figures and ``reference_ratio`` (reference time / springsim
        time), and ``status``: "ok", or "unstable" (then the timings are None and
        ``note`` says why).
    """
    threads = set_threads(threads) if threads is not None else get_threads()
    pristine = scene(scene_name)
    row = _empty_row(scene_name, method, pristine, repeats)
    row["threads"] = threads
    skip = why_no_reference(pristine, method) if with_reference else "not asked"
    dt = scene_dt(pristine)
    for halvings in range(MAX_HALVINGS + 1):
        kernel = kernel_contender("springsim", pristine, dt, method, threads)
        contenders = [kernel] if skip else [kernel, reference_contender(pristine, dt, method)]
        try:
            for contender in contenders:
                calibrate(contender, seconds, max_steps)
            timed = interleave(contenders, repeats)
            break
        except ss.UnstableError as err:
            if halvings == MAX_HALVINGS:
                row.update(status="unstable", note=f"unstable down to dt = {dt:.3g} s: {err}")
                return row
            dt *= 0.5
    notes = [f"dt halved {halvings}× (unstable at larger dt within K steps)"] * (halvings > 0)
    notes += [skip] * (skip not in ("", "not asked"))
    nbytes, source = system_bytes(kernel.system())  # type: ignore[attr-defined]
    row.update(summarize(timed["springsim"], pristine.num_springs))
    row.update(
        dt=dt,
        dt_fraction=dt / pristine.critical_dt(),
        nbytes=nbytes,
        nbytes_source=source,
        bytes_per_node=nbytes / pristine.num_nodes,
        bytes_per_spring=nbytes / pristine.num_springs,
        note="; ".join(notes),
    )
    if "reference" in timed:
        ref = summarize(timed["reference"], pristine.num_springs)
        row.update(
            reference_steps=ref["steps"],
            reference_seconds=ref["seconds"],
            reference_clock=ref["clock"],
            reference_ns_per_spring_step=ref["ns_per_spring_step"],
            reference_ratio=ref["ns_per_spring_step"] / row["ns_per_spring_step"],
        )
    return row


def string_in_one_call(steps: int = 10**6, repeats: int = REPEATS) -> dict:
    """Median thread CPU time of one ``step(dt, steps)`` call on the 10-node string.

    Symplectic Euler at half the critical dt, one kernel thread (restored after);
    measures the per-substep overhead that a tiny system exposes (see
    :func:`springsim.bench.scenes.string_10`).
    """
    pristine = string_10()
    dt = scene_dt(pristine)
    before = get_threads()
    try:
        contender = kernel_contender("string_10", pristine, dt, TARGET_METHOD, 1)
        contender.steps = steps
        record = interleave([contender], repeats)["string_10"]
    finally:
        set_threads(before)
    figures = summarize(record, pristine.num_springs)
    return {
        "steps": steps,
        "seconds": figures["seconds"],
        "seconds_min": figures["seconds_min"],
        "clock": figures["clock"],
        "nodes": pristine.num_nodes,
        "dt": dt,
    }
