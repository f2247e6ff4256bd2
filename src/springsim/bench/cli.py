"""``python -m springsim.bench``: the command line and the order of a run."""

import argparse
import contextlib
import os
import sys
import time
from typing import Any

import springsim as ss
from springsim.bench.drag import drag_cost, drag_line
from springsim.bench.kernel import REPEATS, SECONDS, measure
from springsim.bench.machine import machine, set_threads, thread_note, threading_available
from springsim.bench.ownership import ownership_cost, ownership_line
from springsim.bench.peers import VALIDATION_STEPS, VALIDATION_TOLERANCE, compare, peer_version
from springsim.bench.report import (
    busy_lines,
    header,
    long_table,
    peer_line,
    peers_header,
    row_line,
    short_header,
    short_legend,
    short_row,
    short_table,
    table_header,
    write_json,
)
from springsim.bench.scaling import BUSY_SCENES, busy_threads
from springsim.bench.scenes import (
    ALL_SCENES,
    DAMPING,
    DT_FRACTION,
    FULL_SCENES,
    SCENES,
    TARGET_METHOD,
    peer_scene,
    scene,
)
from springsim.bench.segments import segment_contact_cost, segment_contact_line
from springsim.bench.selfcol import self_collision_cost, self_collision_line
from springsim.bench.simd import simd_cost, simd_line
from springsim.bench.stiff_cloth import (
    FRAMES,
    QUICK_FRAMES,
    QUICK_SIZE,
    SIZES,
    stiff_cloth,
    stiff_cloth_lines,
)
from springsim.bench.targets import check_targets
from springsim.bench.track_energy import track_energy_cost, track_energy_line


class Run:
    """One bench run: the settings, the measurements so far (memoised), the printer."""

    def __init__(self, args, out):
        self.args = args
        self.out = out
        self.quick = args.quick
        self.long = args.long
        self.seconds = args.seconds or (0.02 if args.quick else SECONDS)
        self.repeats = args.repeats or (1 if args.quick else REPEATS)
        self.cache: dict[tuple[str, str, int, bool], dict] = {}
        self.info = machine()
        self.comparisons: list[dict] = []
        self.peer_rows: list[dict] = []
        self.busy: dict | None = None
        self.self_collision: dict | None = None

    def say(self, text: str = "") -> None:
        """Print a line of the report."""
        print(text, file=self.out, flush=True)

    def measure(self, scene_name, method, threads, with_reference=True) -> dict:
        """measure(), once per (scene, method, threads); a row with the reference serves all."""
        used = set_threads(threads)
        for key in ((scene_name, method, used, True), (scene_name, method, used, with_reference)):
            if key in self.cache:
                return self.cache[key]
        row = measure(
            scene_name,
            method,
            threads=used,
            seconds=self.seconds,
            repeats=self.repeats,
            with_reference=with_reference,
        )
        self.cache[(scene_name, method, used, with_reference)] = row
        return row

    def peers(self, scenes) -> None:
        """Validate and time the peers on every 3D scene without gas, both groups; the
        details with ``--long``, else only the peers that could not be timed."""
        say = self.say if self.long else lambda text="": None
        for line in peers_header(VALIDATION_STEPS, VALIDATION_TOLERANCE):
            say(line)
        cores = self.info["cores"]
        groups = [("1 thread", 1)]
        if threading_available() and cores >= 2:
            groups.append(("all cores", cores))
        for name in (s for s in scenes if peer_scene(scene(s))):
            for group, threads in groups:
                result = compare(
                    name, group, threads=threads, seconds=self.seconds, repeats=self.repeats
                )
                self.comparisons.append(result)
                for row in result["peers"]:
                    self.peer_rows.append(row)
                    say(peer_line(row))
                    if not self.long and row["status"] in ("mismatch", "failed"):
                        self.say(f"{row['peer']} on {name}: {row['status']}, {row['reason']}")
        if len(groups) == 1:
            say(f"  no 'all cores' group: {thread_note() if cores >= 2 else 'one core'}")
        say()

    def table(self, scenes, methods) -> list[dict]:
        """The scene × method table, with the ratio to each timed peer."""
        wanted = self.args.threads
        used = set_threads(wanted)
        group = "1 thread" if used == 1 else "all cores"
        keys = []
        for row in self.peer_rows:
            if row["group"] == group and row["version"] and row["peer"] not in keys:
                keys.append(row["peer"])
        note = "" if used == wanted else f" ({wanted} asked: {thread_note()})"
        if self.long:
            table = long_table(scenes, methods, keys)
            for line in table_header(used, note, table, keys):
                self.say(line)
        else:
            table = short_table(scenes, methods, keys)
            if note:
                self.say(f"kernel threads{note}")
            self.say(table.header())
        rows = []
        for name in scenes:
            ratios = {
                r["peer"]: r["ratio"]
                for r in self.peer_rows
                if r["scene"] == name and r["group"] == group
            }
            for method in methods:
                row = self.measure(name, method, wanted)
                rows.append(row)
                shown = ratios if method == TARGET_METHOD else {}
                self.say((row_line if self.long else short_row)(table, row, shown, keys))
        if not self.long:
            docs = {name: ALL_SCENES[name].__doc__ or "" for name in scenes}
            for line in short_legend(keys, docs):
                self.say(line)
        notes = sorted({(r["scene"], r["method"], r["note"]) for r in rows if r["note"]})
        for name, method, text in notes:
            self.say(f"  note {name} {method}: {text}")
        if self.long and rows and rows[0]["nbytes_source"] not in (None, "sim.nbytes"):
            self.say(f"  memory: {rows[0]['nbytes_source']}")
        return rows


def _names(text: str, valid, what: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in valid]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown {what} {', '.join(unknown) or repr(text)}; valid: {', '.join(valid)}"
        )
    return names


def _sizes(text: str) -> list[int]:
    if text.strip() == "none":
        return []
    try:
        sizes = [int(size) for size in text.split(",")]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 2:
        raise argparse.ArgumentTypeError(
            f"stiff cloth sizes must be integers >= 2 separated by commas, or 'none'; got {text!r}"
        )
    return sizes


def parser() -> argparse.ArgumentParser:
    """The command line's parser."""
    parser = argparse.ArgumentParser(
        prog="python -m springsim.bench",
        description=(
            "Time springsim on fixed scenes (a 1,000-node string, 100×100, 316×316 and, in"
            " the full run, 1000×1000 cloths with shear and bend springs, a 20³ jelly, two"
            " balls full of gas) with every integrator, and print a table: ns per"
            " spring-step, steps per second and, for each installed peer (Numba, Warp,"
            " Taichi on the CPU: `pip install numba warp-lang taichi`), how many times longer it"
            " takes. Each peer is first checked to compute the same motion, then timed in"
            " turns with springsim in this process. Figures are medians of several rounds,"
            " one thread timed by its CPU time, so other work on the machine barely counts."
            " --long adds memory, time steps, the NumPy reference and the project's targets."
        ),
    )
    add = parser.add_argument
    add("--quick", action="store_true", help="short timings, one round, no peers unless --peers")
    add(
        "--long",
        action="store_true",
        help="the long report: the machine and the timing method in full, the peers' checks,"
        " a table with time steps, memory and the NumPy reference, and the targets",
    )
    add(
        "--json",
        metavar="FILE",
        help="also write every result as JSON to FILE ('-': standard output, the table"
        " then goes to standard error)",
    )
    add("--threads", type=int, default=1, metavar="N", help="kernel threads for the table (1)")
    add(
        "--scenes",
        type=lambda text: _names(text, list(ALL_SCENES), "scene"),
        metavar="A,B",
        help=f"comma-separated scenes (default: {', '.join(SCENES)}; the full run adds"
        f" {', '.join(FULL_SCENES)})",
    )
    add(
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
        help="time Numba, Warp and Taichi (default: yes, but not in --quick)",
    )
    peers.add_argument("--no-peers", dest="peers", action="store_false", help="skip the peers")
    add(
        "--no-targets",
        dest="targets",
        action="store_false",
        help="skip the targets section of --long",
    )
    add(
        "--busy",
        action="store_true",
        help=f"also time 1 vs 2 kernel threads on {' and '.join(BUSY_SCENES)} while a second"
        " process keeps one core busy",
    )
    add(
        "--stiff-cloth",
        type=_sizes,
        metavar="N,M",
        help="the stiff_cloth line's cloths, nodes per side, or 'none' (default"
        f" {SIZES[-1]}; --long: {','.join(map(str, SIZES))}; --quick: {QUICK_SIZE}, for"
        f" {QUICK_FRAMES} frames instead of 60; none with --scenes)",
    )
    add("--seconds", type=float, metavar="S", help="length of one timed call (0.2; quick 0.02)")
    add("--repeats", type=int, metavar="R", help="interleaved rounds, median kept (5; quick 1)")
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
    bench = Run(args, out)
    scenes = args.scenes or list(SCENES if args.quick else ALL_SCENES)
    if args.long:
        lines = header(bench.info, bench.quick, bench.seconds, bench.repeats)
    else:
        lines = short_header(bench.info, set_threads(args.threads), bench.seconds, bench.repeats)
    for line in lines:
        bench.say(line)
    started = time.perf_counter()
    if args.peers if args.peers is not None else not args.quick:
        bench.peers(scenes)
    results = bench.table(scenes, args.methods)
    if args.scenes is None:  # the default scenes: and the cost of self-collision
        bench.self_collision = self_collision_cost(bench.seconds, bench.repeats)
        bench.say()
        bench.say(self_collision_line(bench.self_collision))
    ownership = ownership_cost(bench.repeats)
    bench.say(ownership_line(ownership))
    pin_drag = drag_cost(bench.repeats)
    bench.say(drag_line(pin_drag))
    segments = segment_contact_cost(bench.repeats)
    bench.say(segment_contact_line(segments))
    books = track_energy_cost(bench.repeats)
    bench.say(track_energy_line(books))
    simd = simd_cost(bench.repeats)
    bench.say(simd_line(simd))
    stiff = []
    sizes = args.stiff_cloth
    if sizes is None and args.scenes is None:  # the default scenes: and the stiff cloth
        sizes = [QUICK_SIZE] if args.quick else list(SIZES if args.long else SIZES[-1:])
    for n in sizes or []:
        stiff.append(stiff_cloth(n, frames=QUICK_FRAMES if args.quick else FRAMES))
        bench.say()
        for line in stiff_cloth_lines(stiff[-1]):
            bench.say(line)
    if args.busy:
        bench.busy = busy_threads(seconds=bench.seconds, repeats=bench.repeats)
        for line in busy_lines(bench.busy):
            bench.say(line)
    extras: dict[str, Any] = {
        "targets": [],
        "thread_speedup": None,
        "string_in_one_call": None,
        "two_systems": None,
        "memory": None,
    }
    if args.targets and args.long:
        extras.update(check_targets(bench))
    set_threads(args.threads)
    elapsed = time.perf_counter() - started
    bench.say()
    bench.say(f"bench took {elapsed:.1f} s")
    return {
        "benchmark": "springsim.bench",
        "machine": bench.info,
        "settings": {
            "quick": args.quick,
            "long": args.long,
            "threads": args.threads,
            "seconds_per_call": bench.seconds,
            "repeats": bench.repeats,
            "statistic": "median",
            "timing": "interleaved shuffled rounds in one process; 1 thread: thread CPU time"
            " (time.thread_time); several threads: wall time",
            "shared_machine": True,
            "dt_fraction": DT_FRACTION,
            "spring_damping": DAMPING,
            "scenes": {name: ALL_SCENES[name].__doc__ for name in scenes},
            "methods": args.methods,
            "peer_versions": {
                name: peer_version(name) for name in ("numba", "warp-lang", "taichi")
            },
        },
        "results": results,
        "peers": bench.peer_rows,
        "comparisons": bench.comparisons,
        "busy": bench.busy,
        "self_collision": bench.self_collision,
        "ownership": ownership,
        "pin_drag": pin_drag,
        "segment_contact": segments,
        "track_energy": books,
        "stiff_cloth": stiff,
        "simd": simd,
        **extras,
        "seconds": elapsed,
    }


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status (0, or 2 for bad arguments)."""
    args = parser().parse_args(argv)
    if args.threads < 1 or (args.repeats is not None and args.repeats < 1):
        parser().error("--threads and --repeats must be >= 1")
    if args.seconds is not None and not args.seconds > 0:
        parser().error("--seconds must be > 0")
    if args.json == "-":
        with _stdout_is_stderr() as stdout:
            write_json(run(args, sys.stderr), stdout)
        return 0
    if not args.json:
        run(args, sys.stdout)
        return 0
    with open(args.json, "w") as file:  # opened first: a bad path fails before the run
        write_json(run(args, sys.stdout), file)
    print(f"wrote {args.json}")
    return 0
