"""``python -m springsim``: run a demo scene and print a time/energy table.

``python -m springsim demo {string,cloth,jelly,balloon}`` runs a scene for a few
simulated seconds; ``--png FILE`` also saves a picture of the last frame (needs
matplotlib: ``pip install matplotlib``; without it the demo stops before it runs).
With no command, the string demo runs for one second.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import springsim as ss
from springsim.plot import draw


def swinging_string() -> ss.System:
    """A horizontal string of 20 nodes pinned at its left end, falling and swinging."""
    return ss.string(20, length=1.0, mass=0.1, stiffness=2000.0, dim=2, pin="start")


def hanging_cloth() -> ss.System:
    """A 16×16 cloth held by its top corners, billowing in a wind along +z."""
    sim = ss.cloth(
        16,
        16,
        width=1.0,
        height=1.0,
        mass=0.2,
        stiffness=400.0,
        damping=0.02,
        bend_stiffness=40.0,
        pin="top_corners",
    )
    sim.wind = (0.0, 0.0, 3.0)
    sim.drag = 0.002
    return sim


def wobbling_jelly() -> ss.System:
    """A 5³ jelly stuck to its plate by the bottom face, its top pushed sideways."""
    sim = ss.jelly(5, 5, 5, size=0.5, mass=1.0, stiffness=400.0, damping=0.05, pin="bottom")
    top = sim.positions[:, 1] > sim.positions[:, 1].max() - 1e-9
    sim.velocities[top] = (1.0, 0.0, 0.0)
    return sim


def floating_balloon() -> ss.System:
    """A balloon on a held string: gas keeps it round (P about 40 Pa above its rest
    shape's), helium lifts the ball with twice its weight."""
    volume = 4 / 3 * np.pi * 0.25**3
    sim = ss.balloon(
        radius=0.25,
        string_length=1.0,
        mass=0.05,
        stiffness=200.0,
        damping=0.01,
        string_nodes=10,
        nrt=40.0 * volume,
    )
    ball = np.arange(sim.num_faces and sim.faces.max() + 1)  # the ball's nodes come first
    sim.external_forces[ball] = -2.0 * sim.masses[ball, None] * sim.gravity
    return sim


SCENES = {
    "string": (swinging_string, 2.0),
    "cloth": (hanging_cloth, 3.0),
    "jelly": (wobbling_jelly, 2.0),
    "balloon": (floating_balloon, 3.0),
}


def run_table(sim: ss.System, duration: float, rows: int) -> None:
    """Step ``sim`` for ``duration`` s at half its critical dt, printing ``rows`` rows."""
    dt = 0.5 * sim.critical_dt()
    steps_per_row = max(1, round(duration / rows / dt))
    print(f"{sim!r}, dt = {dt:.3g} s")
    print(f"{'t [s]':>8} {'kinetic':>10} {'elastic':>10} {'gravity':>10} {'total [J]':>10}")
    for row in range(rows + 1):
        if row:
            sim.step(dt, steps=steps_per_row)
        e = sim.energy()
        print(f"{sim.time:8.3f}" + "".join(f" {v:10.4g}" for v in e[:3] + (e.total,)))


def save_png(sim: ss.System, path: str, title: str) -> None:
    """Draw ``sim`` and save it as a PNG (matplotlib's Agg backend, no window)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ax = draw(sim, color_by="strain")
    ax.set_title(title)
    ax.figure.savefig(path, dpi=100)
    plt.close(ax.figure)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m springsim",
        description="Mass-spring demos: each prints a time/energy table.",
    )
    commands = parser.add_subparsers(dest="command", metavar="{demo}")
    demo = commands.add_parser("demo", help="run a demo scene", description=__doc__)
    demo.add_argument("scene", choices=sorted(SCENES), help="which scene")
    demo.add_argument(
        "--method", default=None, choices=ss.METHODS, help="integrator (default: symplectic_euler)"
    )
    demo.add_argument("--duration", type=float, default=None, help="simulated seconds")
    demo.add_argument("--rows", type=int, default=10, help="table rows (default 10)")
    demo.add_argument("--png", metavar="FILE", help="save a picture of the last frame")
    args = parser.parse_args(argv)
    if args.command is None:  # plain `python -m springsim`: the string, for a second
        args = demo.parse_args(["string", "--duration", "1"])

    build, default_duration = SCENES[args.scene]
    duration = args.duration if args.duration is not None else default_duration
    if not duration > 0 or args.rows < 1:
        parser.error("--duration and --rows must be positive")
    if args.png:  # before the run, not after it: fail fast, with the fix
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            parser.error("--png needs matplotlib, which is not installed: pip install matplotlib")
    sim = build()
    if args.method:
        sim.method = args.method
    print(f"demo {args.scene}: {build.__doc__}")
    try:
        run_table(sim, duration, args.rows)
    except ss.UnstableError as err:
        print(f"unstable: {err}", file=sys.stderr)
        return 1
    if args.png:
        save_png(sim, args.png, f"springsim demo {args.scene}, t = {sim.time:.2f} s")
        print(f"saved {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
