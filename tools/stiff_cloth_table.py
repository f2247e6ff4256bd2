"""Measure issue 26's table: accuracy and cost on the stiff cloth, for each stiffness.

Usage (from the root of a clone, with springsim installed)::

    python tools/stiff_cloth_table.py [--size 30] [--stiffnesses 500,5000,50000]
        [--frames 60] [--convergence-size 10] [--convergence-frames 15] [--skip-table]
        [--json FILE] [--png FILE] [--from-json FILE]

Two measurements, printed as the Markdown tables docs/guide/integrators.md shows:

1. **The table.** :func:`springsim.bench.stiff_cloth.stiff_cloth` on the ``--size``
   cloth (30×30) at each stiffness: the reference (symplectic Euler at 0.5
   ``critical_dt()``), implicit Euler, XPBD and VBD at the :data:`SETTINGS`; one
   thread, thread CPU time, every row of one stiffness measured in turn in this one
   process. Each row: CPU ms per 1/60 s frame (median over the frames) and that over
   the reference's, the worst deviation of any node from the reference over the
   second, m, and the largest stretch of any spring, %.
2. **The convergence order.** On the ``--convergence-size`` cloth (10×10: VBD's passes
   converge there in tens, where the 30×30 cloth needs thousands) at 5,000 N/m, for its
   first :data:`CONVERGENCE_FRAMES` frames (``--convergence-frames``), the worst
   deviation of implicit Euler and of VBD with many passes (:func:`vbd_passes`, and
   twice as many to show they are converged) at each of :data:`CONVERGENCE_SUBSTEPS`
   substeps per frame, from RK4 at 8 times the reference's substeps (fourth order: its
   own error is printed and is far below the others'), and the least-squares slope of
   log deviation against log dt (:func:`convergence_order`) over each half of the
   substeps: 1 for a first-order method in its asymptotic range.

The whole run takes about five minutes on one core (four the table, one the study).
``--skip-table`` runs the study alone; ``--json FILE`` also writes the measurements;
``--png FILE`` draws the table as accuracy against cost, a panel per stiffness
(:func:`~springsim.bench.stiff_cloth_plot.plot_stiff_cloth`, with matplotlib);
``--from-json FILE`` prints and draws a file written so, without measuring again.
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
from collections.abc import Sequence

import numpy as np

from springsim.bench.machine import get_threads, machine, set_threads
from springsim.bench.stiff_cloth import (
    FAMILIES,
    FRAME,
    REFERENCE,
    REFERENCE_FRACTION,
    Setting,
    reference_substeps,
    run_setting,
    stiff_cloth,
    stiff_cloth_scene,
)

#: The springs' stiffnesses of the table, N/m.
STIFFNESSES = (500.0, 5000.0, 50000.0)
#: The table's rows: the reference, then (substeps per frame[, passes]) per method.
SETTINGS = (
    REFERENCE,
    Setting("implicit_euler", 1),
    Setting("implicit_euler", 4),
    Setting("implicit_euler", 16),
    Setting("xpbd", 10, 1),
    Setting("xpbd", 40, 1),
    Setting("xpbd", 32, 5),
    Setting("xpbd", 80, 1),
    Setting("vbd", 4, 5),
    Setting("vbd", 16, 3),
    Setting("vbd", 40, 2),
    Setting("vbd", 40, 10),
)
#: The convergence study's substeps per frame: the table's range, then finer (its
#: order is fitted over each half).
CONVERGENCE_SUBSTEPS = (8, 16, 32, 64, 128, 256, 512, 1024)
#: The convergence study's frames: the first quarter second, the cloth's fall. Once it
#: has swung down and back up, small differences in its path grow and the deviation
#: over the whole second no longer shrinks steadily with dt (symplectic Euler's neither).
CONVERGENCE_FRAMES = 15
#: The convergence study's methods.
CONVERGENCE_METHODS = ("implicit_euler", "vbd")
#: VBD's passes per frame in the convergence study (:func:`vbd_passes`; each run is
#: repeated with twice as many, to check they are converged).
PASSES_PER_FRAME = 3200
#: VBD's fewest passes per substep in the convergence study.
MIN_PASSES = 10


def vbd_passes(substeps: int, per_frame: int = PASSES_PER_FRAME) -> int:
    """VBD's passes per substep in the convergence study: ``per_frame`` over the
    substeps, at least :data:`MIN_PASSES`.

    Large substeps need many passes (a pass carries the tension about one node) and
    small ones few (the inertia term m/h² dominates): a fixed count per substep is
    either short at 8 substeps or slow at 1024.

    Examples
    --------
    >>> [vbd_passes(s) for s in (8, 64, 1024)]
    [400, 50, 10]
    """
    return max(MIN_PASSES, math.ceil(per_frame / substeps))


#: The convergence study's stiffness, N/m.
CONVERGENCE_STIFFNESS = 5000.0
#: The convergence study's reference: RK4 at this many times the reference's substeps.
CONVERGENCE_REFINEMENT = 8


def convergence_order(substeps: Sequence[int], deviations: Sequence[float]) -> float:
    """The least-squares slope p of log(deviation) against log(dt), dt = FRAME / substeps.

    A deviation proportional to dt^p gives p: 1 for a first-order method.

    Examples
    --------
    >>> round(convergence_order([8, 16, 32], [0.4, 0.2, 0.1]), 12)
    1.0
    """
    if len(substeps) != len(deviations) or len(substeps) < 2:
        raise ValueError("substeps and deviations must be as long as each other, at least 2")
    dt = np.log(FRAME / np.asarray(substeps, dtype=float))
    error = np.log(np.asarray(deviations, dtype=float))
    dt -= dt.mean()
    return float(np.dot(dt, error - error.mean()) / np.dot(dt, dt))


def _setting(row: dict) -> str:
    """A row's setting: substeps per frame (× passes)."""
    if row["iterations"] is None:
        return f"{row['substeps']}"
    return f"{row['substeps']} × {row['iterations']}"


def _number(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant digits, without an exponent when it fits."""
    text = f"{value:.{digits}g}"
    return text if "e" not in text else f"{value:.{digits - 1}e}"


def markdown_table(results: Sequence[dict]) -> str:
    """One Markdown table of :func:`stiff_cloth` results, a block of rows per stiffness.

    Columns: stiffness (N/m), method, setting (substeps per frame × passes), CPU ms per
    frame, that over the same stiffness's reference, worst deviation (m), largest
    stretch (%). A row that did not finish says so; notes (ConvergenceWarnings, the
    frame it failed at) follow the table.
    """
    lines = [
        "| k, N/m | method | substeps × passes | CPU ms/frame | × reference"
        " | worst deviation, m | largest stretch, % |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    notes = []
    for result in results:
        rows = result["rows"]
        reference = rows[0]["cpu_per_frame"]
        for row in rows:
            method = FAMILIES.get(row["method"], row["method"])
            setting = _setting(row)
            if row["method"] == REFERENCE.method and row["label"].endswith("(reference)"):
                method += f" (reference, {REFERENCE_FRACTION} critical_dt)"
            stiffness = f"{result['stiffness']:,.0f}"
            if row["status"] != "ok":
                cells = [stiffness, method, setting, row["status"], "", "", ""]
            else:
                cpu = row["cpu_per_frame"]
                cells = [
                    stiffness,
                    method,
                    setting,
                    _number(cpu * 1e3),
                    _number(cpu / reference, 2),
                    _number(row["worst_deviation"]),
                    _number(row["largest_stretch"] * 100, 2),
                ]
            if row.get("note"):
                notes.append(f"{stiffness} N/m, {method} {setting}: {row['note']}")
                cells[2] += " *"
            lines.append("| " + " | ".join(cells) + " |")
    if notes:
        lines += ["", "\\* " + "; ".join(notes) + "."]
    return "\n".join(lines)


def convergence(
    n: int = 10,
    stiffness: float = CONVERGENCE_STIFFNESS,
    substeps: Sequence[int] = CONVERGENCE_SUBSTEPS,
    frames: int = CONVERGENCE_FRAMES,
    passes_per_frame: int = PASSES_PER_FRAME,
) -> dict:
    """The worst deviation of each :data:`CONVERGENCE_METHODS` method at each ``substeps``.

    Parameters
    ----------
    n : int
        Nodes per side of the stiff cloth.
    stiffness : float
        Of every spring, N/m.
    substeps : sequence of int
        Substeps per frame, at least four (the order is fitted over each half too).
    frames : int
        Frames of 1/60 s.
    passes_per_frame : int
        VBD's passes per frame (:func:`vbd_passes`); each VBD run is repeated with
        twice as many passes per substep.

    Returns
    -------
    dict
        ``n``, ``stiffness``, ``frames``, ``substeps``, ``passes`` (VBD's per
        substep, at each substeps), ``reference``
        (its label), ``reference_error`` (its worst deviation from RK4 at half its
        substeps, m: an estimate of its own error), ``symplectic_euler`` (the
        table's reference's worst deviation from it, m), and per method ``{method:
        {"deviations": [...], "order": p, "orders": [p of the first half, p of the
        second]}}`` (:func:`convergence_order`); VBD's also ``"passes_change"``: per
        substeps, the worst distance between its runs at ``passes`` and twice as many.
    """
    sim = stiff_cloth_scene(n, stiffness)
    fine = CONVERGENCE_REFINEMENT * reference_substeps(sim)
    before = get_threads()
    set_threads(1)
    try:
        _, reference = run_setting(sim, Setting("rk4", fine), None, frames)
        coarse = run_setting(sim, Setting("rk4", fine // 2), reference, frames)[0]
        explicit = run_setting(sim, REFERENCE, reference, frames)[0]
        study: dict = {
            "n": n,
            "stiffness": float(stiffness),
            "frames": frames,
            "substeps": list(substeps),
            "passes": [vbd_passes(count, passes_per_frame) for count in substeps],
            "reference": Setting("rk4", fine).label,
            "reference_error": coarse["worst_deviation"],
            "symplectic_euler": explicit["worst_deviation"],
        }
        for method in CONVERGENCE_METHODS:
            deviations, changes = [], []
            for count, passes in zip(substeps, study["passes"], strict=True):
                iterations = passes if method == "vbd" else None
                row, x = run_setting(sim, Setting(method, count, iterations), reference, frames)
                if row["status"] != "ok":
                    raise RuntimeError(f"{row['label']} failed: {row['note']}")
                deviations.append(row["worst_deviation"])
                if method == "vbd":
                    again = run_setting(sim, Setting(method, count, 2 * passes), x, frames)[0]
                    changes.append(again["worst_deviation"])
            half = len(substeps) // 2
            study[method] = {
                "deviations": deviations,
                "order": convergence_order(substeps, deviations),
                "orders": [
                    convergence_order(substeps[:half], deviations[:half]),
                    convergence_order(substeps[half:], deviations[half:]),
                ],
            }
            if changes:
                study[method]["passes_change"] = changes
    finally:
        set_threads(before)
    return study


def convergence_markdown(study: dict) -> str:
    """The convergence study as a Markdown table: a row per method, a column per substeps.

    The last two columns: the order fitted over the first half of the substeps, and
    over the second.
    """
    substeps = study["substeps"]
    half = len(substeps) // 2
    head = " | ".join(f"{count}" for count in substeps)
    lines = [
        f"| substeps per frame | {head} | order {substeps[0]}–{substeps[half - 1]}"
        f" | order {substeps[half]}–{substeps[-1]} |",
        "|---|" + "---:|" * (len(substeps) + 2),
    ]
    for method in CONVERGENCE_METHODS:
        name = FAMILIES.get(method, method)
        cells = [_number(d) for d in study[method]["deviations"]]
        cells += [f"{order:.2f}" for order in study[method]["orders"]]
        lines.append(f"| {name}, worst deviation, m | {' | '.join(cells)} |")
    if "passes_change" in study.get("vbd", {}):
        cells = [f"{passes}" for passes in study["passes"]]
        lines.append(f"| VBD, passes per substep | {' | '.join(cells)} | | |")
        cells = [_number(d, 2) for d in study["vbd"]["passes_change"]]
        lines.append(f"| VBD, moved by twice the passes, m | {' | '.join(cells)} | | |")
    return "\n".join(lines)


def draw(results: Sequence[dict], path: str) -> None:
    """Draw :func:`stiff_cloth` results as accuracy against cost, a panel per stiffness."""
    import matplotlib

    matplotlib.use("Agg")
    from springsim.bench.stiff_cloth_plot import plot_stiff_cloth

    figure = plot_stiff_cloth(results)
    for ax, result in zip(figure.axes, results, strict=True):
        ax.set_title(
            f"{result['n']}×{result['n']} cloth, springs of {result['stiffness']:,.0f} N/m"
        )
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    print(f"wrote {path}")


def _numbers(text: str, kind: type) -> list:
    try:
        values = [kind(item) for item in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"a comma-separated list of numbers, got {text!r}"
        ) from None
    if not values or any(not math.isfinite(v) or v <= 0 for v in values):
        raise argparse.ArgumentTypeError(f"numbers > 0 only, got {text!r}")
    return values


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=30, help="the table's cloth, nodes per side")
    parser.add_argument(
        "--stiffnesses",
        type=lambda text: _numbers(text, float),
        default=list(STIFFNESSES),
        help="N/m, comma-separated (default 500,5000,50000)",
    )
    parser.add_argument("--frames", type=int, default=60, help="frames of 1/60 s (default 60)")
    parser.add_argument(
        "--convergence-size", type=int, default=10, help="the convergence study's cloth"
    )
    parser.add_argument(
        "--convergence-substeps",
        type=lambda text: _numbers(text, int),
        default=list(CONVERGENCE_SUBSTEPS),
        help="substeps per frame, comma-separated (default 8,16,32,64)",
    )
    parser.add_argument(
        "--convergence-frames",
        type=int,
        default=CONVERGENCE_FRAMES,
        help=f"the convergence study's frames (default {CONVERGENCE_FRAMES})",
    )
    parser.add_argument(
        "--passes-per-frame",
        type=int,
        default=PASSES_PER_FRAME,
        help=f"VBD's, in the study (default {PASSES_PER_FRAME})",
    )
    parser.add_argument("--skip-table", action="store_true", help="the convergence study only")
    parser.add_argument("--json", metavar="FILE", help="also write the measurements here")
    parser.add_argument("--png", metavar="FILE", help="draw the table here (needs matplotlib)")
    parser.add_argument("--from-json", metavar="FILE", help="use these measurements instead")
    args = parser.parse_args(argv)
    if args.from_json:
        document = json.loads(pathlib.Path(args.from_json).read_text())
        print(markdown_table(document["table"]))
        if document.get("convergence"):
            print()
            print(convergence_markdown(document["convergence"]))
        if args.png:
            draw(document["table"], args.png)
        return
    if len(args.convergence_substeps) < 4:
        parser.error("--convergence-substeps: at least four")
    here = machine()
    print(
        f"{here['cpu']}, {here['cores']} logical CPUs, load {here['load_1min'] or 0:.1f};"
        " one kernel thread, thread CPU time"
    )
    results = []
    if not args.skip_table:
        for stiffness in args.stiffnesses:
            results.append(
                stiff_cloth(args.size, frames=args.frames, settings=SETTINGS, stiffness=stiffness)
            )
        print(f"\n{args.size}×{args.size} cloth, {args.frames} frames of 1/60 s\n")
        print(markdown_table(results), flush=True)
    study = convergence(
        args.convergence_size,
        substeps=args.convergence_substeps,
        frames=args.convergence_frames,
        passes_per_frame=args.passes_per_frame,
    )
    print(
        f"\nconvergence: {study['n']}×{study['n']} cloth, {study['stiffness']:,.0f} N/m,"
        f" {study['frames']} frames,"
        f" reference {study['reference']} (its own error about"
        f" {study['reference_error']:.1e} m; symplectic Euler at {REFERENCE_FRACTION}"
        f" critical_dt is {study['symplectic_euler']:.3g} m from it)\n"
    )
    print(convergence_markdown(study))
    if args.json:
        document = {"machine": here, "table": results, "convergence": study}
        pathlib.Path(args.json).write_text(json.dumps(document, indent=1))
    if args.png and results:
        draw(results, args.png)


if __name__ == "__main__":
    main()
