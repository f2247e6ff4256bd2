"""Make docs/images/contact.png, the README's picture of bodies that touch at the defaults.

Usage (from the root of a clone, with springsim and matplotlib installed)::

    python tools/contact_figure.py

Two scenes of issue 27 with nothing set but the contact radii (the contact stiffness
from the step, restitution 0.5, no friction, the default method), built by the test that
holds them to their targets (tests/features/test_contact_defaults.py, ``poured`` and
``jelly_stack``), so that the picture and the test show the same scenes:

- 100 balls of radius 4 cm poured into a box of three planes, 3 s at dt = 2e-4 s;
- a stack of 10 jelly cubes on a plane, 3 s at half the springs' critical step.

Each is drawn with :func:`springsim.plot.draw` (contact radii as translucent discs,
planes in grey). The script prints the worst overlap of each, as a fraction of a
radius (the deepest of the pairs touching, sampled every 0.1 s for the stack and at the
end for the pile), and puts the same numbers in the panels' titles: the README quotes
what it prints.
"""

from __future__ import annotations

import pathlib
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "features"))

from test_contact_defaults import jelly_stack, poured, worst_overlap  # noqa: E402

import springsim.plot  # noqa: E402


def main() -> None:
    pile, r_pile = poured()
    dt = 2e-4
    pile.step(dt, steps=round(3.0 / dt))
    pile_worst = worst_overlap(pile, r_pile) / r_pile
    print(f"pile: 100 balls, 3 s at dt = {dt:g} s: worst overlap {100 * pile_worst:.2f} % of r")

    stack, r_stack, _ = jelly_stack()
    dt = 0.5 * stack.critical_dt()  # the springs' limit: the contact law has none
    stack_worst = 0.0
    for _ in range(30):
        stack.step(dt, steps=round(0.1 / dt))
        stack_worst = max(stack_worst, worst_overlap(stack, r_stack) / r_stack)
    print(
        f"stack: 10 jelly cubes, 3 s at dt = {dt:.3g} s: worst overlap "
        f"{100 * stack_worst:.2f} % of r"
    )

    fig = plt.figure(figsize=(7.0, 4.0), dpi=90)
    grid = fig.add_gridspec(1, 2, width_ratios=(1.5, 1.0))
    left = fig.add_subplot(grid[0])
    springsim.plot.draw(pile, ax=left)
    left.set_title(f"100 balls\nworst overlap {100 * pile_worst:.2f} % of r", fontsize=9)
    right = fig.add_subplot(grid[1], projection="3d")
    right.set_xlim(-0.3, 0.3)  # the plane's square is drawn within these (x and z)
    right.set_ylim(-0.3, 0.3)
    right.set_zlim(0.0, 1.5)  # matplotlib's vertical axis is springsim's y
    right.set_box_aspect((0.6, 0.6, 1.5), zoom=1.05)  # one scale on every axis
    springsim.plot.draw(stack, ax=right, faces=False, linewidth=0.3)
    right.set_title(f"10 jelly cubes\nworst overlap {100 * stack_worst:.2f} % of r", fontsize=9)
    right.view_init(elev=20, azim=-60)
    right.set_xticks([-0.2, 0.2])
    right.set_yticks([-0.2, 0.2])
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.12, top=0.88, wspace=0.05)
    target = ROOT / "docs" / "images" / "contact.png"
    fig.savefig(target)
    print(f"wrote {target.relative_to(ROOT)} ({target.stat().st_size // 1024} kB)")


if __name__ == "__main__":
    main()
