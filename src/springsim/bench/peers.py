"""The peers: validated against springsim, then timed interleaved with it, in this process.

Two comparisons per scene, each a set of contenders timed by
:func:`springsim.bench.timing.interleave`:

- **1 thread** (thread CPU time): springsim on 1 thread, Numba serial (``@njit``
  scatter), Warp on the CPU (one thread by design), Taichi with
  ``cpu_max_num_threads=1`` (process CPU time: Taichi runs its loops on a worker
  thread, so the calling thread's time would miss them);
- **all cores** (wall time): springsim, Numba ``parallel=True`` (``prange`` gather)
  and Taichi, each on every core this process may use.

Before it is timed, each peer is checked against springsim (:func:`validate_peer`);
a peer that computes different physics is reported ("mismatch"), never timed.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata

import numpy as np

import springsim as ss
from springsim.bench.kernel import kernel_contender
from springsim.bench.machine import get_threads, set_threads
from springsim.bench.peer_numba import numba_parallel_peer, numba_peer
from springsim.bench.peer_taichi import taichi_peer
from springsim.bench.peer_warp import warp_peer
from springsim.bench.scenes import TARGET_METHOD, Problem, scene, scene_dt
from springsim.bench.timing import MIN_CPU_SHARE, Contender, calibrate, interleave, summarize

#: Steps of the peer-vs-springsim check, and its tolerance (relative, float64).
#: springsim's threads need a fixed order of addition per node that is not the spring
#: order on a large system (a block's own springs, then those between blocks): on the
#: 316x316 cloth that alone differs from a spring-order peer by 2e-11 after 20 steps,
#: while a missing or wrong force term differs by 1e-4 or more.
VALIDATION_STEPS, VALIDATION_TOLERANCE = 20, 1e-10


@dataclass(frozen=True)
class PeerConfig:
    """One peer configuration of a comparison.

    Attributes
    ----------
    key : str
        Its name in the report and the JSON ("numba", "warp", "taichi", ...).
    package : str
        The pip package it needs.
    build : callable
        ``build(problem, dt, threads) -> stepper`` (see :func:`validate_peer`).
    group : {"1 thread", "all cores"}
        The comparison it belongs to.
    clock : str, optional
        Its clock in the "1 thread" group, if not thread CPU time (see
        :class:`springsim.bench.timing.Contender`).
    config : str
        How it is set up, for the report.
    """

    key: str
    package: str
    build: Callable
    group: str
    config: str
    clock: str | None = None


#: Every peer configuration timed, in report order.
PEER_CONFIGS = (
    PeerConfig("numba", "numba", numba_peer, "1 thread", "@njit, scatter over springs"),
    PeerConfig("warp", "warp-lang", warp_peer, "1 thread", "device='cpu', atomic_add"),
    # Taichi runs its loops on a pool thread even with cpu_max_num_threads=1.
    PeerConfig(
        "taichi", "taichi", taichi_peer, "1 thread", "cpu_max_num_threads=1, gather", "process"
    ),
    PeerConfig(
        "numba_parallel", "numba", numba_parallel_peer, "all cores", "parallel=True, prange gather"
    ),
    PeerConfig("taichi_threads", "taichi", taichi_peer, "all cores", "all threads, gather"),
)
#: The peers' pip packages, by peer.
PEERS = {"numba": "numba", "warp": "warp-lang", "taichi": "taichi"}


def peer_version(package: str) -> str | None:
    """The installed version of ``package``, or None."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


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
    max|Δx_peer − Δx_springsim| / (max|Δx_springsim| + 20 ε max|x|) (Δx: displacement;
    the second term is the round-off of the positions themselves) and the same for
    velocities. Float64 round-off, added up in another order, gives 1e-13 to
    1e-12; leaving out the damping, or any other term, gives 1e-4 or more.

    Parameters
    ----------
    peer : object
        With ``load(x, v)``, ``step(n)`` and ``state() -> (x, v)``.
    pristine : springsim.System
        The scene (not changed).
    dt : float
        The time step both take.
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
    # Positions are only known to round-off of their size, 20 steps of it: on a fine
    # cloth whose nodes move 1e-5 m in 20 steps that alone is 3e-11 of the motion.
    floor = VALIDATION_STEPS * np.finfo(np.float64).eps * np.abs(x0).max()
    dx = np.abs((x - x0) - (start.positions - x0)).max() / (
        np.abs(start.positions - x0).max() + floor
    )
    dv = np.abs(v - start.velocities).max() / np.abs(start.velocities).max()
    error = float(max(dx, dv))
    return error if math.isfinite(error) else math.inf


def peer_contender(name: str, peer, pristine: ss.System, clock: str) -> Contender:
    """A validated peer as a :class:`Contender`: before each call, the scene's start + 1 step."""
    x0, v0 = np.array(pristine.positions), np.array(pristine.velocities)

    def reset():
        peer.load(x0, v0)
        peer.step(1)

    return Contender(name, peer.step, reset, clock)


def _peer_row(config: PeerConfig, scene_name: str, threads: int) -> dict:
    return {
        "peer": config.key,
        "package": config.package,
        "version": peer_version(config.package),
        "scene": scene_name,
        "method": TARGET_METHOD,
        "group": config.group,
        "threads": threads,
        "config": config.config,
        "status": "ok",
        "reason": "",
        "validation_error": None,
        "steps": None,
        "seconds": None,
        "clock": None,
        "cpu_share": None,
        "spread": None,
        "ns_per_spring_step": None,
        "springsim_ns_per_spring_step": None,
        "ratio": None,
        "off_thread": None,
    }


def _first_line(err: Exception) -> str:
    return (f"{type(err).__name__}: {err}".splitlines() or ["?"])[0][:300]


def compare(
    scene_name: str,
    group: str,
    *,
    threads: int,
    seconds: float,
    repeats: int,
    configs=PEER_CONFIGS,
) -> dict:
    """Validate the peers of ``group`` on one scene, then time them interleaved with springsim.

    Parameters
    ----------
    scene_name : str
        A 3D scene without gas (see :func:`springsim.bench.scenes.peer_scene`).
    group : {"1 thread", "all cores"}
        Which configurations of ``configs`` take part.
    threads : int
        Threads of springsim and of the peers that take a thread count.
    seconds, repeats
        As for :func:`springsim.bench.measure`.
    configs : sequence of PeerConfig
        The candidates (default :data:`PEER_CONFIGS`).

    Returns
    -------
    dict
        ``springsim``: the figures of springsim (see
        :func:`springsim.bench.timing.summarize`); ``peers``: one row per
        configuration with ``status`` ("ok", "mismatch", "skipped", "failed"),
        ``reason``, ``validation_error``, its figures and ``ratio`` (peer ns /
        springsim ns: above 1, springsim is faster).
    """
    pristine = scene(scene_name)
    dt = scene_dt(pristine)
    problem = Problem.from_system(pristine)
    clock = "thread" if threads == 1 else "wall"
    contenders = [kernel_contender("springsim", pristine, dt, TARGET_METHOD, threads)]
    rows, peers = {}, []
    try:
        for config in (c for c in configs if c.group == group):
            row = rows[config.key] = _peer_row(config, scene_name, threads)
            if row["version"] is None:
                row.update(status="skipped", reason=f"not installed: pip install {config.package}")
                continue
            try:
                peer = config.build(problem, dt, threads)
                peers.append(peer)
                error = row["validation_error"] = validate_peer(peer, pristine, dt)
            except Exception as err:  # a peer that cannot run here is reported, not fatal
                row.update(status="failed", reason=_first_line(err))
                continue
            if not error <= VALIDATION_TOLERANCE:
                row.update(status="mismatch", reason=f"differs from springsim by {error:.3g}")
                continue
            own_clock = config.clock if clock == "thread" and config.clock else clock
            contenders.append(peer_contender(config.key, peer, pristine, own_clock))
        before = get_threads()
        try:
            for contender in contenders:
                calibrate(contender, seconds)
            timed = interleave(contenders, repeats)
        finally:
            set_threads(before)
    finally:
        for peer in peers:
            getattr(peer, "close", lambda: None)()  # optional
    mine = summarize(timed["springsim"], pristine.num_springs)
    for name, row in rows.items():
        if name in timed:
            row.update(summarize(timed[name], pristine.num_springs))
            row["springsim_ns_per_spring_step"] = mine["ns_per_spring_step"]
            row["ratio"] = row["ns_per_spring_step"] / mine["ns_per_spring_step"]
            share = row["cpu_share"] / max(mine["cpu_share"], 1e-12)
            row["off_thread"] = row["clock"] == "thread" and share < MIN_CPU_SHARE
    return {"scene": scene_name, "group": group, "springsim": mine, "peers": list(rows.values())}
