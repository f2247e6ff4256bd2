"""The project's speed and memory targets ("Kernel v2"), checked against this run's figures."""

from springsim.bench.kernel import string_in_one_call
from springsim.bench.machine import set_threads, thread_note, threading_available
from springsim.bench.memory import STEPS, process_growth
from springsim.bench.report import target_line
from springsim.bench.scaling import thread_speedup, two_systems
from springsim.bench.scenes import FULL_SCENES, TARGET_METHOD, TARGET_SCENE
from springsim.bench.selfcol import SELF_COLLISION_FACTOR

#: ns per spring-step on 1 thread, symplectic Euler, per scene.
NS_TARGETS = {
    "cloth_100": 4.5,
    "cloth_316": 6.5,
    "cloth_1000": 10.0,
    "jelly_20": 5.5,
    "string_1000": 6.0,
}
#: springsim at least this many times faster than each 1-thread peer, on every scene.
PEER_FACTOR = 1.8
#: The most a method may cost, in units of symplectic Euler's time (cloth_100, 1 thread).
METHOD_FACTORS = {"rk4": 4.5, "xpbd": 10.0}
#: The 10-node string, 10⁶ steps in one call: at most this many seconds.
ONE_CALL_SECONDS = 0.12
#: Under ``--busy``: 2 threads at most this many times the 1-thread time.
BUSY_RATIO = 1.1
#: Idle: 2 threads at least this many times faster than 1 on cloth_316.
IDLE_SPEEDUP = 1.7
#: Kept from the first targets: speed-up over springsim.reference.
REFERENCE_SPEEDUP = 20.0
#: The whole System (sim.nbytes, after stepping) per spring, on TARGET_SCENE: at most this.
BYTES_PER_SPRING = 55.0
#: The growth of a fresh process that builds and steps TARGET_SCENE, over its sim.nbytes.
GROWTH_RATIO = 1.10
#: The 1-thread peers of the "faster than" targets.
TARGET_PEERS = ("numba", "warp", "taichi")


def _target(name, goal, measured, unit, passed, note="") -> dict:
    return {
        "name": name,
        "target": goal,
        "measured": measured,
        "unit": unit,
        "passed": passed,
        "note": note,
    }


def _speed_targets(bench) -> list[dict]:
    targets = []
    for scene_name, limit in NS_TARGETS.items():
        name = f"ns per spring-step, {scene_name}"
        if scene_name in FULL_SCENES and bench.quick:
            targets.append(_target(name, f"<= {limit:g}", None, " ns", None, "full run only"))
            continue
        row = bench.measure(scene_name, TARGET_METHOD, 1, with_reference=scene_name == TARGET_SCENE)
        ok = row["status"] == "ok"
        ns = row["ns_per_spring_step"]
        note = f"{row['springs']:,} springs" if ok else row["note"]
        targets.append(_target(name, f"<= {limit:g}", ns, " ns", ns <= limit if ok else None, note))
    base = bench.measure(TARGET_SCENE, TARGET_METHOD, 1)
    ratio = base["reference_ratio"]
    targets.append(
        _target(
            f"speed-up over springsim.reference ({TARGET_SCENE})",
            f">= {REFERENCE_SPEEDUP:g}×",
            ratio,
            "×",
            None if ratio is None else ratio >= REFERENCE_SPEEDUP,
            "" if ratio is None else f"reference {base['reference_ns_per_spring_step']:.1f} ns",
        )
    )
    for method, factor in METHOD_FACTORS.items():
        row = bench.measure(TARGET_SCENE, method, 1, with_reference=False)
        usable = row["status"] == "ok" and base["status"] == "ok"
        value = row["ns_per_spring_step"] / base["ns_per_spring_step"] if usable else None
        targets.append(
            _target(
                f"{method} / symplectic Euler ({TARGET_SCENE})",
                f"<= {factor:g}×",
                value,
                "×",
                value <= factor if usable else None,  # type: ignore[operator]
                f"{row['ns_per_spring_step']:.2f} ns" if usable else row["note"],
            )
        )
    return targets


def _peer_targets(peer_rows) -> list[dict]:
    targets = []
    for peer in TARGET_PEERS:
        rows = [r for r in peer_rows if r["peer"] == peer]
        if not rows:
            note = "peers not run (--peers)"
            targets.append(
                _target(f"faster than {peer}", f">= {PEER_FACTOR}×", None, "×", None, note)
            )
        for row in rows:
            usable = row["status"] == "ok" and row["ratio"] is not None
            note = (
                f"{peer} {row['ns_per_spring_step']:.2f} ns vs springsim"
                f" {row['springsim_ns_per_spring_step']:.2f} ns"
                if usable
                else row["reason"] or row["status"]
            )
            targets.append(
                _target(
                    f"faster than {peer} (1 thread), {row['scene']}",
                    f">= {PEER_FACTOR}×",
                    row["ratio"] if usable else None,
                    "×",
                    row["ratio"] >= PEER_FACTOR if usable else None,
                    note,
                )
            )
    return targets


def _thread_targets(bench) -> tuple[list[dict], dict | None]:
    targets, scaling = [], None
    name = "2 threads vs 1, cloth_316 idle (speed-up)"
    if threading_available() and bench.info["cores"] >= 2:
        scaling = thread_speedup("cloth_316", 2, bench.seconds, bench.repeats)
        targets.append(
            _target(
                name,
                f">= {IDLE_SPEEDUP}×",
                scaling["speedup"],
                "×",
                scaling["speedup"] >= IDLE_SPEEDUP and scaling["threads"] == 2,
                f"{scaling['ns_1']:.2f} ns on 1 thread, {scaling['ns_n']:.2f} ns on"
                f" {scaling['threads']}, wall time, interleaved",
            )
        )
    else:
        reason = f"only {bench.info['cores']} core" if bench.info["cores"] < 2 else thread_note()
        targets.append(_target(name, f">= {IDLE_SPEEDUP}×", None, "×", None, reason))
    for row in (
        bench.busy["scenes"]
        if bench.busy
        else [{"scene": scene} for scene in ("cloth_316", "cloth_100")]
    ):
        name = f"2 threads / 1 thread under --busy, {row['scene']}"
        if "ratio" not in row:
            targets.append(_target(name, f"<= {BUSY_RATIO}×", None, "×", None, "run with --busy"))
            continue
        targets.append(
            _target(
                name,
                f"<= {BUSY_RATIO}×",
                row["ratio"],
                "×",
                row["ratio"] <= BUSY_RATIO,  # type: ignore[operator]
                f"{row['ns_1']:.2f} ns on 1 thread, {row['ns_n']:.2f} ns on {row['threads']}",
            )
        )
    return targets, scaling


def _memory_targets() -> tuple[list[dict], dict]:
    """B per spring and process growth / nbytes on TARGET_SCENE (from a fresh process),
    and the figures (:func:`springsim.bench.memory.process_growth`)."""
    mem = process_growth(TARGET_SCENE)
    per_spring, ratio = mem["bytes_per_spring"], mem["growth_ratio"]
    grown = (
        "growth not measured (no /proc/self/status)"
        if ratio is None
        else f"the process grew {mem['growth_per_spring']:.1f} B per spring"
    )
    targets = [
        _target(
            f"memory per spring (sim.nbytes), {TARGET_SCENE}",
            f"<= {BYTES_PER_SPRING:g}",
            per_spring,
            " B",
            per_spring <= BYTES_PER_SPRING,
            f"{mem['nbytes']:,} B for {mem['springs']:,} springs, after {STEPS} steps",
        ),
        _target(
            f"process memory growth / sim.nbytes, {TARGET_SCENE}",
            f"<= {GROWTH_RATIO:.2f}×",
            ratio,
            "×",
            None if ratio is None else ratio <= GROWTH_RATIO,
            f"{grown} (anonymous RSS, fresh process; whole RSS"
            + ("" if mem["rss_ratio"] is None else f" {mem['rss_ratio']:.2f}×")
            + ")",
        ),
    ]
    return targets, mem


def check_targets(bench) -> dict:
    """Measure what the targets need (reusing the run's figures) and print the verdicts.

    ``bench`` is the run (:class:`springsim.bench.cli.Run`): its ``measure``,
    ``peer_rows``, ``busy``, ``self_collision``, ``quick``, ``seconds``, ``repeats``,
    ``info`` and ``say``.

    Returns
    -------
    dict
        ``targets`` (name, target, measured, unit, passed: True, False or None for not
        measured, note), ``thread_speedup``, ``string_in_one_call``, ``two_systems`` and
        ``memory`` (:func:`springsim.bench.memory.process_growth` of the target scene).
    """
    bench.say()
    bench.say(
        "Targets: symplectic Euler with shear and bend springs, gravity and spring damping,"
        " 1 thread unless stated"
    )
    targets = _speed_targets(bench) + _peer_targets(bench.peer_rows)
    set_threads(1)
    one_call = string_in_one_call(repeats=bench.repeats)
    targets.append(
        _target(
            "10-node string, 10⁶ steps in one call",
            f"<= {ONE_CALL_SECONDS:g} s",
            one_call["seconds"],
            " s",
            one_call["seconds"] <= ONE_CALL_SECONDS,
            f"{one_call['seconds'] / one_call['steps'] * 1e9:.0f} ns per step",
        )
    )
    thread_targets, scaling = _thread_targets(bench)
    targets += thread_targets
    cost = bench.self_collision
    targets.append(
        _target(
            "self-collision / none, 100×100 cloth falling onto itself",
            f"<= {SELF_COLLISION_FACTOR:g}×",
            None if cost is None else cost["ratio"],
            "×",
            None if cost is None else cost["ratio"] <= SELF_COLLISION_FACTOR,
            "default scenes only"
            if cost is None
            else f"{cost['ns_with']:.2f} vs {cost['ns_without']:.2f} ns per spring-step",
        )
    )
    memory_targets, memory = _memory_targets()
    targets += memory_targets
    for target in targets:
        bench.say(target_line(target))
    pair = two_systems(seconds=bench.seconds, repeats=bench.repeats)
    bench.say(
        f"  two Python threads, each stepping its own 100×100 cloth (1 kernel thread each):"
        f" {pair['speedup']:.2f}× the speed of the same two runs in turn"
        f" ({pair['sequential_seconds']:.3f} s → {pair['concurrent_seconds']:.3f} s, medians)"
        + (f"; errors: {pair['errors']}" if pair["errors"] else "")
    )
    if pair["worker_threads"] != [1]:
        bench.say(
            f"  note: get_num_threads() inside the Python threads was {pair['worker_threads']},"
            " not 1: the thread setting does not carry over to new threads"
        )
    return {
        "targets": targets,
        "thread_speedup": scaling,
        "string_in_one_call": one_call,
        "two_systems": pair,
        "memory": memory,
    }
