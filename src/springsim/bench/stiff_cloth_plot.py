"""Accuracy against cost on the stiff cloth: one panel per cloth, one line per method family.

Draws what :func:`springsim.bench.stiff_cloth.stiff_cloth` measured: each setting a
point at its CPU time per 1/60 s frame (x, ms) and its worst deviation from the
reference (y, m), both on log scales, the settings of one family (symplectic Euler,
implicit Euler, XPBD, VBD, Projective Dynamics) joined in order of cost. The reference
(deviation 0, off a log scale) is a dotted vertical line at its cost; real time (16.7
ms per frame) and issue 26's 20 cm and 5 cm marks are thin grey lines. Needs
matplotlib.
"""

from collections.abc import Sequence
from typing import Any

from springsim.bench.stiff_cloth import FAMILIES, FRAME

#: The marks of issue 26: a live frame (s) and the deviations asked for (m).
REAL_TIME = FRAME
DEVIATIONS = (0.20, 0.05)
_MARKERS = dict(zip(FAMILIES.values(), "ovsD^", strict=True))


def plot_stiff_cloth(results: Sequence[dict], axes: Any = None) -> Any:
    """Draw the accuracy (worst deviation) against the cost (CPU per frame), log–log.

    Parameters
    ----------
    results : sequence of dict
        :func:`~springsim.bench.stiff_cloth.stiff_cloth`'s results, one panel each.
    axes : sequence of matplotlib Axes, optional
        One per result; a new figure with a row of panels by default.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        No results, or not one axes per result.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from springsim.bench.stiff_cloth import REFERENCE, Setting, stiff_cloth
    >>> from springsim.bench.stiff_cloth_plot import plot_stiff_cloth
    >>> result = stiff_cloth(4, frames=3, settings=[REFERENCE, Setting("xpbd", 10, 1),
    ...                                             Setting("xpbd", 40, 1)])
    >>> figure = plot_stiff_cloth([result])
    >>> [line.get_label() for line in figure.axes[0].get_lines()][:2]
    ['XPBD', 'symplectic Euler (reference)']
    """
    import matplotlib.pyplot as plt

    if not results:
        raise ValueError("results must hold at least one stiff_cloth() result")
    if axes is None:
        figure, made = plt.subplots(
            1, len(results), figsize=(6.0 * len(results), 4.6), squeeze=False
        )
        axes = list(made[0])
    if len(axes) != len(results):
        raise ValueError(f"axes must hold one Axes per result ({len(results)}), got {len(axes)}")
    for ax, result in zip(axes, results, strict=True):
        rows = [r for r in result["rows"] if r["status"] == "ok"]
        for family, marker in _MARKERS.items():
            points = sorted(
                (r["cpu_per_frame"] * 1e3, r["worst_deviation"], r["label"])
                for r in rows
                if r["family"] == family and r["worst_deviation"]
            )
            if not points:
                continue
            ax.plot([p[0] for p in points], [p[1] for p in points], marker=marker, label=family)
            for x, y, label in points:
                words = label.split(" ", 1)[1]
                ax.annotate(words, (x, y), textcoords="offset points", xytext=(4, 3), fontsize=7)
        for r in rows:
            if r["worst_deviation"] == 0.0:  # the reference
                ax.axvline(
                    r["cpu_per_frame"] * 1e3,
                    color="k",
                    linestyle=":",
                    label="symplectic Euler (reference)",
                )
        ax.axvline(REAL_TIME * 1e3, color="0.6", linewidth=0.8)
        for mark in DEVIATIONS:
            ax.axhline(mark, color="0.6", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("CPU per 1/60 s frame, ms (one thread)")
        ax.set_ylabel("worst node deviation from the reference over 1 s, m")
        ax.set_title(f"stiff cloth {result['n']}×{result['n']} ({result['springs']:,} springs)")
        ax.legend(fontsize=8)
    return axes[0].figure
