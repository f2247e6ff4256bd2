"""``python -m springsim``: a small simulation that prints a time/energy table.

A 10-node string pinned at one end swings under gravity for one second with the
default integrator. With no damping the total energy stays nearly constant: the
table is a first look at the bookkeeping ``System.energy()`` does.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import springsim as ss


def swinging_string(nodes: int = 10, length: float = 1.0, mass: float = 0.1) -> ss.System:
    """A horizontal string of ``nodes`` equal masses, pinned at its left end."""
    sim = ss.System(dim=2)
    x = np.column_stack([np.linspace(0.0, length, nodes), np.zeros(nodes)])
    idx = sim.add_nodes(x, masses=mass / nodes)
    sim.pin(idx[0])
    sim.add_springs(np.column_stack([idx[:-1], idx[1:]]), stiffness=500.0)
    return sim


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m springsim", description=__doc__)
    parser.add_argument("--method", default="symplectic_euler", choices=ss.METHODS)
    parser.add_argument("--duration", type=float, default=1.0, help="seconds (default 1)")
    parser.add_argument("--rows", type=int, default=10, help="table rows (default 10)")
    args = parser.parse_args(argv)

    sim = swinging_string()
    sim.method = args.method
    dt = 0.25 * sim.critical_dt()
    steps_per_row = max(1, round(args.duration / args.rows / dt))
    print(f"{sim!r}, dt = {dt:.3g} s, method = {args.method}")
    print(f"{'t [s]':>8} {'kinetic':>10} {'elastic':>10} {'gravity':>10} {'total [J]':>10}")
    for row in range(args.rows + 1):
        if row:
            sim.step(dt, steps=steps_per_row)
        e = sim.energy()
        print(f"{sim.time:8.3f}" + "".join(f" {v:10.4g}" for v in e[:3] + (e.total,)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
