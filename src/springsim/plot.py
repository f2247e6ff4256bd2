"""Drawing systems with matplotlib (the ``[plot]`` extra; imported only when used).

Library code never calls ``plt.show()``: it returns the Axes, and a notebook shows
the figure by itself.
"""

from __future__ import annotations

import numpy as np


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("springsim.plot needs matplotlib: pip install 'springsim[plot]'") from err
    return plt


def draw(sim, ax=None, color_by=None, node_size=6.0):
    """Draw a system's springs as lines, its nodes as dots and pinned nodes as squares.

    Parameters
    ----------
    sim : springsim.System
        A 2D or 3D system.
    ax : matplotlib Axes, optional
        Where to draw (a 3D Axes for a 3D system); a new figure if omitted.
    color_by : {None, "tension", "strain"}
        Colour springs by their signed tension (N) or strain (l/L − 1), on a
        diverging colour map centred on zero; otherwise one colour.
    node_size : float
        Marker size of the nodes, points.

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import springsim as ss
    >>> from springsim.plot import draw
    >>> sim = ss.System(dim=2)
    >>> _ = sim.add_nodes([[0, 0], [1, 0]])
    >>> _ = sim.add_springs([0, 1], stiffness=1.0)
    >>> ax = draw(sim)
    >>> len(ax.collections)
    3
    """
    plt = _pyplot()
    if color_by not in (None, "tension", "strain"):
        raise ValueError(f"color_by must be None, 'tension' or 'strain', got {color_by!r}")
    x, pairs, dim = sim.positions, sim.springs, sim.dim
    if dim == 3:
        x = x[:, [0, 2, 1]]  # springsim's y is up (gravity -y); matplotlib's 3D up is z
    if ax is None:
        fig = plt.figure()
        ax = fig.add_subplot(projection="3d" if dim == 3 else None)
        ax.set_xlabel("x [m]")
        ax.set_ylabel("z [m]" if dim == 3 else "y [m]")
        if dim == 3:
            ax.set_zlabel("y [m]")
    segments = x[pairs]  # (M, 2, dim)
    values = None
    if color_by == "tension":
        values = sim.spring_tensions()
    elif color_by == "strain":
        rest = sim.rest_lengths
        values = np.divide(sim.spring_lengths(), rest, out=np.ones_like(rest), where=rest > 0)
        values = values - 1.0
    if dim == 3:
        from mpl_toolkits.mplot3d.art3d import Line3DCollection

        lines = Line3DCollection(segments, linewidths=0.8)
    else:
        from matplotlib.collections import LineCollection

        lines = LineCollection(segments, linewidths=0.8)
    if values is not None:
        limit = float(np.abs(values).max()) if len(values) else 1.0
        lines.set_array(values)
        lines.set_cmap("coolwarm")
        lines.set_clim(-limit or -1.0, limit or 1.0)
        ax.figure.colorbar(lines, ax=ax, label=color_by)
    else:
        lines.set_color("tab:blue")
    ax.add_collection(lines)
    pinned_mask = sim.pinned
    free, pinned = x[~pinned_mask], x[pinned_mask]
    ax.scatter(*free.T, s=node_size, color="black", zorder=3)
    ax.scatter(*pinned.T, s=3 * node_size, color="tab:red", marker="s", zorder=4)
    _fit_limits(ax, x, dim)
    return ax


def _fit_limits(ax, x, dim):
    """Equal-aspect limits around the nodes, with a margin."""
    if len(x) == 0:
        return
    low, high = x.min(axis=0), x.max(axis=0)
    center, half = (low + high) / 2, max(float((high - low).max()) / 2, 1e-9) * 1.1
    ax.set_xlim(center[0] - half, center[0] + half)
    ax.set_ylim(center[1] - half, center[1] + half)
    if dim == 3:
        ax.set_zlim(center[2] - half, center[2] + half)
        ax.set_box_aspect((1, 1, 1))
    else:
        ax.set_aspect("equal")
