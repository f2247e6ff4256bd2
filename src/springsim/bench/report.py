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
        "library once, springsim and each peer, in a shuffled order, each call ~"
        f"{seconds:g} s on a fresh copy after a 1-step warm-up); 1-thread figures are"
        f" {CLOCK_NAMES['thread']},",
        f"figures on several threads are {CLOCK_NAMES['wall']}.",
        "",
    ]


class Table:
    """Columns of fixed widths, two spaces apart: every cell fits its column.

    ``columns``: (header, width, align) with align "<" or ">"; a column is at least as
    wide as its header. Cells are strings; numbers go through :func:`fit` first.
    """

    def __init__(self, columns: list[tuple[str, int, str]]):
        self.columns = [(head, max(width, len(head)), align) for head, width, align in columns]

    def width(self, index: int) -> int:
        """The width of column ``index``."""
        return self.columns[index][1]

    def header(self) -> str:
        """The column names."""
        return self.line([head for head, _, _ in self.columns])

    def line(self, cells: list[str]) -> str:
        """One row; a cell wider than its column is an error, not a shifted table."""
        for cell, (head, width, _) in zip(cells, self.columns, strict=True):
            if len(cell) > width:
                raise ValueError(f"{cell!r} does not fit column {head!r} ({width} wide)")
        return "  ".join(
            f"{cell:{align}{width}}"
            for cell, (_, width, align) in zip(cells, self.columns, strict=True)
        ).rstrip()


def fit(value: float | None, width: int, suffix: str = "", specs=(".2f", ".1f", ".0f")) -> str:
    """``value`` in at most ``width`` characters: the first of ``specs`` that fits, then
    fewer digits in scientific notation; "–" for None."""
    if value is None:
        return "–"
    text = ""
    for spec in (*specs, ".2g", ".1g", ".0e"):
        text = f"{value:{spec}}{suffix}"
        if len(text) <= width:
            return text
    return text


def short_header(info: dict, used: int, seconds: float, repeats: int) -> list[str]:
    """The two lines above the short table: where it ran, and how it was timed."""
    return [
        f"springsim {info['springsim']} on {info['cpu']} ({info['cores']} cores,"
        f" {info['platform']}), {used} kernel thread{'s' * (used != 1)},"
        f" Python {info['python']}, NumPy {info['numpy']}",
        f"Each figure is the median of {repeats} round{'s' * (repeats != 1)} of ~{seconds:g} s;"
        " springsim and the other libraries take turns within each round, so that other"
        " work on the machine slows them alike.",
        "",
    ]


def short_table(scenes: list[str], methods: list[str], peer_keys: list[str]) -> Table:
    """The default table: scene × method, speed, and the ratio to each installed peer."""
    columns = [
        ("scene", max(map(len, scenes)), "<"),
        ("method", max(map(len, methods)), "<"),
        ("ns/spring-step", 8, ">"),
        ("steps/s", 11, ">"),
    ]
    return Table(columns + [(f"×{key}", 8, ">") for key in peer_keys])


def short_row(table: Table, row: dict, ratios: dict[str, float | None], keys: list[str]) -> str:
    """One scene and method of the short table."""
    head = [row["scene"], row["method"]]
    if row["status"] != "ok":
        return table.line(head + [row["status"].upper()] + ["–"] * (1 + len(keys)))
    return table.line(
        head
        + [
            fit(row["ns_per_spring_step"], table.width(2)),
            fit(row["steps_per_second"], table.width(3), specs=(",.0f",)),
        ]
        + [fit(ratios.get(key), table.width(4 + i), "×") for i, key in enumerate(keys)]
    )


def short_legend(peer_keys: list[str], scene_docs: dict[str, str]) -> list[str]:
    """What the short table's columns and scenes are, below it."""
    lines = [
        "",
        "ns/spring-step: the time of one step divided by the number of springs (lower is"
        " faster); steps/s: steps of the whole scene per second.",
    ]
    if peer_keys:
        names = ", ".join(f"×{key}" for key in peer_keys)
        lines.append(
            f"{names}: how many times longer the same scene takes in that library on the CPU"
            " (above 1: springsim is faster); each implements symplectic Euler only, and"
            " is checked to compute the same motion first."
        )
    lines += [f"{name}: {doc}" for name, doc in scene_docs.items()]
    lines.append(
        "--long adds time steps, memory, the NumPy reference, the peers' checks and the"
        " project's targets; --json FILE writes every figure."
    )
    return lines


def long_table(scenes: list[str], methods: list[str], peer_keys: list[str]) -> Table:
    """The ``--long`` table's columns."""
    columns = [
        ("scene", max(map(len, scenes)), "<"),
        ("method", max(map(len, methods)), "<"),
        ("nodes", 8, ">"),
        ("springs", 9, ">"),
        ("dt/crit", 6, ">"),
        ("K", 9, ">"),
        ("ns/spring-step", 8, ">"),
        ("spread", 5, ">"),
        ("steps/s", 9, ">"),
        ("B/node", 6, ">"),
        ("B/spring", 7, ">"),
        ("ref ns", 7, ">"),
        ("vs ref", 6, ">"),
    ]
    return Table(columns + [(f"×{key}", 8, ">") for key in peer_keys])


def table_header(used: int, note: str, table: Table, peer_keys: list[str]) -> list[str]:
    """The title, legend and column names of the ``--long`` table."""
    return [
        f"Speed per scene and method, {used} kernel thread{'s' * (used != 1)}{note}",
        f"  dt/crit: the time step over critical_dt() ({DT_FRACTION}, halved while a method"
        " blows up in the run); K: steps per timed call; ns/spring-step = seconds /"
        " (K × springs); spread = slowest call / fastest - 1",
        "  B/node, B/spring = whole System (sim.nbytes, after stepping) / nodes, / springs;"
        " ref ns: the NumPy reference (springsim.reference) on the same scene; vs ref ="
        " its time / springsim's"
        + (
            "; ×peer = that library's time / springsim's, same scene, same threads, timed"
            " in turns (> 1: springsim is faster)"
            if peer_keys
            else ""
        ),
        table.header(),
    ]


def row_line(table: Table, row: dict, ratios: dict[str, float | None], keys: list[str]) -> str:
    """One line of the ``--long`` table; ``ratios``: peer key -> peer ns / springsim ns."""
    head = [row["scene"], row["method"]]
    head += [
        fit(row[key], table.width(2 + i), specs=("d",))
        for i, key in enumerate(("nodes", "springs"))
    ]
    if row["status"] != "ok":
        return table.line(head + [""] * (len(table.columns) - 4)) + (
            f"  {row['status'].upper()}: {row['note']}"
        )
    width = table.width
    return table.line(
        head
        + [
            fit(row["dt_fraction"], width(4), specs=(".3g",)),
            fit(row["steps"], width(5), specs=("d",)),
            fit(row["ns_per_spring_step"], width(6)),
            fit(row["spread"] * 100, width(7), "%", specs=(".0f",)),
            fit(row["steps_per_second"], width(8), specs=(".4g",)),
            fit(row["bytes_per_node"], width(9), specs=(".0f",)),
            fit(row["bytes_per_spring"], width(10), specs=(".1f",)),
            fit(row["reference_ns_per_spring_step"], width(11), specs=(".1f",)),
            fit(row["reference_ratio"], width(12), "×", specs=(".1f",)),
        ]
        + [fit(ratios.get(key), width(13 + i), "×") for i, key in enumerate(keys)]
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
