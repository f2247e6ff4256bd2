"""What the bench prints and writes: the table's lines, the peer and busy sections, JSON."""

import json
import math

import numpy as np

from springsim.bench.machine import describe_build
from springsim.bench.scenes import DT_FRACTION
from springsim.bench.timing import CLOCK_NAMES


def header(info: dict, quick: bool, seconds: float, repeats: int) -> list[str]:
    """The lines above everything: machine, build, and how the bench times."""
    threads = (
        f"default kernel threads {info['default_threads']}"
        if info["threading_api"]
        else "no threading API (springsim.set_num_threads): one kernel thread"
    )
    load = "" if info["load_1min"] is None else f", load {info['load_1min']:.2f} (1 min)"
    return [
        f"springsim {info['springsim']} bench: {info['cpu']}, {info['cores']} cores{load},"
        f" {info['platform']}, Python {info['python']}, NumPy {info['numpy']}",
        f"{threads}; OpenMP {'available' if info['threading_available'] else 'not available'}"
        + ("; quick mode" if quick else ""),
        describe_build(info["build"]),
        "This machine is shared: other processes come and go, so every figure is the median"
        f" of {repeats} interleaved round{'s' * (repeats != 1)} (each round times every",
        "contender once, in a shuffled order, each call ~"
        f"{seconds:g} s on a fresh copy after a 1-step warm-up); 1-thread figures are"
        f" {CLOCK_NAMES['thread']},",
        f"figures on several threads are {CLOCK_NAMES['wall']}.",
        "",
    ]


def table_header(used: int, note: str, peer_keys: list[str]) -> list[str]:
    """The title, legend and column names of the scene × method table."""
    ratios = "".join(f"{'×' + key:>10}" for key in peer_keys)
    return [
        f"Speed per scene and method, {used} kernel thread{'s' * (used != 1)}{note}",
        f"  dt = {DT_FRACTION}·critical_dt(), halved while a method blows up in the run;"
        " ns/spring-step = seconds / (K × springs); spread = slowest call / fastest - 1",
        "  B/node, B/spring = whole System (sim.nbytes, after stepping) / nodes, / springs;"
        " 'vs ref' = springsim.reference time / springsim time"
        + (
            "; '×peer' = peer time / springsim time, same scene, same threads, timed"
            " interleaved (> 1: springsim is faster)"
            if peer_keys
            else ""
        ),
        f"{'scene':<12}{'method':<17}{'nodes':>8}{'springs':>9}{'dt/crit':>8}{'K':>9}"
        f"{'ns/spring-step':>15}{'spread':>7}{'steps/s':>11}{'B/node':>8}{'B/spring':>9}"
        f"{'ref ns':>9}{'vs ref':>8}" + ratios,
    ]


def row_line(row: dict, ratios: dict[str, float | None], peer_keys: list[str]) -> str:
    """One line of the table; ``ratios``: peer key -> peer ns / springsim ns (or None)."""
    head = f"{row['scene']:<12}{row['method']:<17}{row['nodes']:>8}{row['springs']:>9}"
    if row["status"] != "ok":
        return head + f"  {row['status'].upper()}: {row['note']}"
    ref, ratio = row["reference_ns_per_spring_step"], row["reference_ratio"]
    peers = "".join(
        f"{ratios[key]:>9.2f}×" if ratios.get(key) is not None else f"{'–':>10}"
        for key in peer_keys
    )
    return head + (
        f"{row['dt_fraction']:>8.3g}{row['steps']:>9}{row['ns_per_spring_step']:>15.2f}"
        f"{row['spread']:>7.0%}"
        f"{row['steps_per_second']:>11.4g}{row['bytes_per_node']:>8.0f}"
        f"{row['bytes_per_spring']:>9.1f}"
        + (f"{ref:>9.1f}{ratio:>7.1f}×" if ratio is not None else f"{'–':>9}{'–':>8}")
        + peers
    )


def peers_header(steps: int, tolerance: float) -> list[str]:
    """The title and column names of the peer section."""
    return [
        "Peers: the same scene and integrator (symplectic Euler, float64) in Numba, Warp and"
        f" Taichi on the CPU, validated against springsim over {steps} steps",
        f"  (tolerance {tolerance:g} relative; a peer that differs is reported, not timed),"
        " then timed in this process, interleaved with springsim",
        f"{'scene':<12}{'group':<11}{'peer':<16}{'config':<31}{'peer ns':>9}{'springsim ns':>14}"
        f"{'peer/ss':>9}  check",
    ]


def peer_line(row: dict) -> str:
    """One peer configuration's line."""
    name = row["package"] + (f" {row['version']}" if row["version"] else "")
    head = f"{row['scene']:<12}{row['group']:<11}{row['peer']:<16}{row['config']:<31}"
    if row["status"] in ("skipped", "failed"):
        return head + f"{row['status'].upper()}: {row['reason']} ({name})"
    if row["status"] == "mismatch":
        return head + f"{'–':>9}{'–':>14}{'–':>9}  MISMATCH, not timed: {row['reason']}"
    flag = " (ran off the calling thread: figure too low)" if row["off_thread"] else ""
    flag += "" if row["clock"] != "process" else " (process CPU time)"
    return head + (
        f"{row['ns_per_spring_step']:>9.2f}{row['springsim_ns_per_spring_step']:>14.2f}"
        f"{row['ratio']:>8.2f}×  ok ({row['validation_error']:.1g}){flag}"
    )


def busy_lines(busy: dict) -> list[str]:
    """The ``--busy`` section."""
    lines = [
        "",
        "Under load: another process keeps one core busy (pid"
        f" {busy['helper']['pid']}, stopped afterwards); springsim on 1 and 2 threads, wall"
        " time, interleaved, medians",
        f"{'scene':<12}{'1 thread ns':>12}{'2 threads ns':>14}{'2 thr / 1 thr':>15}",
    ]
    for row in busy["scenes"]:
        lines.append(
            f"{row['scene']:<12}{row['ns_1']:>12.2f}{row['ns_n']:>14.2f}{row['ratio']:>14.2f}×"
        )
    return lines


def target_line(target: dict) -> str:
    """One target: PASS, MISS or ---- (not measured), the goal, the value and a note."""
    measured, unit = target["measured"], target["unit"]
    digits = 3 if unit == " s" else 2
    shown = "n/a" if measured is None else f"{measured:.{digits}f}{unit}"
    verdict = {True: "PASS", False: "MISS", None: "----"}[target["passed"]]
    return f"  {verdict}  {target['name']:<46}{target['target']:<10}{shown:>10}  {target['note']}"


def jsonable(value):
    """``value`` with numpy scalars made Python numbers and non-finite floats made None."""
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_json(document: dict, stream) -> None:
    """``document`` as indented, strict JSON (no NaN), then a newline."""
    json.dump(jsonable(document), stream, indent=1, allow_nan=False)
    stream.write("\n")
