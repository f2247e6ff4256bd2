"""Make docs/images/stiff_cloth.png: accuracy against cost on issue 26's stiff cloth.

Usage (from the root of a clone, with springsim and matplotlib installed)::

    python tools/stiff_cloth_figure.py [--sizes 100,30] [--json FILE] [--from-json FILE]

Runs :func:`springsim.bench.stiff_cloth.stiff_cloth` on the 100×100 and the 30×30
cloth (every setting of :func:`~springsim.bench.stiff_cloth.stiff_cloth_settings`,
VBD's included when springsim has ``method="vbd"``; one thread; about ten minutes,
most of it implicit Euler and the 100×100 reference), prints each table as the bench
does, and draws :func:`~springsim.bench.stiff_cloth_plot.plot_stiff_cloth`.
``--json FILE`` also writes the measurements; ``--from-json FILE`` draws a file
written so, without measuring again.
"""

from __future__ import annotations

import argparse
import json
import pathlib

import matplotlib

matplotlib.use("Agg")

from springsim.bench.stiff_cloth import SIZES, stiff_cloth, stiff_cloth_lines  # noqa: E402
from springsim.bench.stiff_cloth_plot import plot_stiff_cloth  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
IMAGE = ROOT / "docs" / "images" / "stiff_cloth.png"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="nodes per side")
    parser.add_argument("--json", metavar="FILE", help="also write the measurements here")
    parser.add_argument("--from-json", metavar="FILE", help="draw these measurements instead")
    parser.add_argument("--out", default=str(IMAGE), help=f"the image (default {IMAGE})")
    args = parser.parse_args()
    if args.from_json:
        results = json.loads(pathlib.Path(args.from_json).read_text())
    else:
        results = []
        for n in (int(size) for size in args.sizes.split(",")):
            results.append(stiff_cloth(n))
            print("\n".join(stiff_cloth_lines(results[-1])), flush=True)
            print()
        if args.json:
            pathlib.Path(args.json).write_text(json.dumps(results, indent=1))
    figure = plot_stiff_cloth(results)
    figure.tight_layout()
    figure.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
