"""Drawing systems with matplotlib (the ``[plot]`` extra; imported only when used).

Library code never calls ``plt.show()``: it returns the Axes, and a notebook shows
the figure by itself.
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.animation import FuncAnimation
    from matplotlib.axes import Axes
    from matplotlib.collections import LineCollection
    from matplotlib.figure import Figure

    from springsim.history import History
    from springsim.system import System


def _pyplot() -> types.ModuleType:
    try:
        import matplotlib.pyplot as plt
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("springsim.plot needs matplotlib: pip install 'springsim[plot]'") from err
    return plt


def _new_axes(dim: int, ax: Axes | None = None) -> Axes:
    """A fresh Axes (3D for dim 3, labelled with springsim's y up) unless one is given."""
    plt = _pyplot()
    if ax is not None:
        return ax
    fig = plt.figure()
    ax = fig.add_subplot(projection="3d" if dim == 3 else None)
    ax.set_xlabel("x [m]")
    ax.set_ylabel("z [m]" if dim == 3 else "y [m]")
    if dim == 3:
        ax.set_zlabel("y [m]")
    return ax


def _shown(x: np.ndarray, dim: int) -> np.ndarray:
    """Coordinates as matplotlib draws them: springsim's y is up (gravity −y), and
    matplotlib's 3D up is z, so 3D points are shown as (x, z, y)."""
    return x[..., [0, 2, 1]] if dim == 3 else x


def _line_collection(segments: np.ndarray, dim: int, **style: Any) -> LineCollection:
    if dim == 3:
        from mpl_toolkits.mplot3d.art3d import Line3DCollection

        return Line3DCollection(segments, **style)
    from matplotlib.collections import LineCollection

    return LineCollection(segments, **style)


def _add_faces(ax: Axes, x: np.ndarray, faces: np.ndarray, dim: int) -> None:
    """Triangles as a light surface (3D) or filled patches (2D), under the springs."""
    if len(faces) == 0:
        return
    triangles = x[faces]
    if dim == 3:
        from mpl_toolkits.mplot3d.art3d import Poly3DCollection

        surface = Poly3DCollection(triangles, facecolor="tab:blue", edgecolor="none", alpha=0.25)
    else:
        from matplotlib.collections import PolyCollection

        surface = PolyCollection(triangles, facecolor="tab:blue", edgecolor="none", alpha=0.2)
    ax.add_collection(surface)


def draw(
    sim: System,
    ax: Axes | None = None,
    color_by: str | None = None,
    node_size: float = 6.0,
    faces: bool = True,
    linewidth: float = 0.8,
    limit: float | None = None,
    colorbar: bool = True,
) -> Axes:
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
    faces : bool
        Draw the triangles (cloth, meshes, balls) as a light surface under the springs.
    linewidth : float
        Width of the spring lines, points (thicker shows ``color_by`` better).
    limit : float, optional
        With ``color_by``: the colour scale runs from −limit to +limit (to share one
        scale between drawings); by default the largest magnitude drawn, or 1 when
        everything is (nearly) zero, so that round-off does not show as colour.
    colorbar : bool
        With ``color_by``: add a colour bar beside the Axes (turn off for panels that
        share one).

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
    _pyplot()
    if color_by not in (None, "tension", "strain"):
        raise ValueError(f"color_by must be None, 'tension' or 'strain', got {color_by!r}")
    dim, pairs = sim.dim, sim.springs
    x = _shown(np.asarray(sim.positions), dim)
    ax = _new_axes(dim, ax)
    if faces:
        _add_faces(ax, x, np.asarray(sim.faces), dim)
    segments = x[pairs]  # (M, 2, dim)
    values = None
    if color_by == "tension":
        values = sim.spring_tensions()
    elif color_by == "strain":
        rest = sim.rest_lengths
        values = np.divide(sim.spring_lengths(), rest, out=np.ones_like(rest), where=rest > 0)
        values = values - 1.0
    lines = _line_collection(segments, dim, linewidths=linewidth)
    if values is not None:
        if limit is None:
            largest = float(np.abs(values).max()) if len(values) else 0.0
            scale = 1.0 if color_by == "strain" else float(np.abs(sim.stiffness).max(initial=1.0))
            limit = largest if largest > 1e-9 * scale else 1.0
        lines.set_array(values)
        lines.set_cmap("coolwarm")
        lines.set_clim(-limit, limit)
        if colorbar:
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


def _fit_limits(ax: Axes, x: np.ndarray, dim: int) -> None:
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


def plot_energy(history: History, ax: Axes | None = None, dissipated: bool = True) -> Axes:
    """Plot a run's energies against time: each term, the total, and total + dissipated.

    Pressure is drawn only when the system has gas. Without damping, drag, contacts or
    ``energy_loss``, *total* is flat up to the integrator's error; with them, *total +
    dissipated* is (the energy books balance).

    Parameters
    ----------
    history : springsim.History
        From :meth:`springsim.System.run`.
    ax : matplotlib Axes, optional
        Where to draw; a new figure if omitted.
    dissipated : bool
        Draw total + dissipated as well.

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import springsim as ss
    >>> from springsim.plot import plot_energy
    >>> rope = ss.string(8, length=1.0, mass=0.1, stiffness=50.0, damping=0.02)
    >>> h = rope.run(0.5, 1e-3, progress=False)
    >>> [line.get_label() for line in plot_energy(h).lines]
    ['kinetic', 'elastic', 'gravity', 'total', 'total + dissipated']
    """
    plt = _pyplot()
    if ax is None:
        ax = plt.figure().add_subplot()
    t = history.times
    for term in ("kinetic", "elastic", "gravity", "pressure"):
        values = getattr(history, term)
        if term == "pressure" and not np.any(values):
            continue
        ax.plot(t, values, lw=1.0, label=term)
    ax.plot(t, history.total, color="black", lw=1.6, label="total")
    if dissipated:
        ax.plot(
            t,
            history.total + history.dissipated,
            color="black",
            ls="--",
            lw=1.2,
            label="total + dissipated",
        )
    ax.set_xlabel("time [s]")
    ax.set_ylabel("energy [J]")
    ax.legend(loc="best", fontsize="small")
    return ax


def animate(
    history: History,
    fig: Figure | None = None,
    ax: Axes | None = None,
    interval: float | None = None,
    node_size: float = 6.0,
) -> FuncAnimation:
    """Animate the position frames of a run (``sim.run(..., frames=F)``).

    Springs between the recorded nodes are drawn as lines, the nodes as dots, with the
    time in the title. In a notebook show it with ``IPython.display.HTML(anim.to_jshtml())``;
    save it with ``anim.save("run.gif", writer="pillow")`` (or ``.mp4`` with ffmpeg).

    Parameters
    ----------
    history : springsim.History
        With at least one frame.
    fig, ax : matplotlib Figure and Axes, optional
        Where to draw (a 3D Axes for a 3D run); new ones if omitted.
    interval : float, optional
        Milliseconds between frames; by default the frames play in real time, but no
        faster than 50 per second.
    node_size : float
        Marker size of the nodes, points.

    Returns
    -------
    matplotlib.animation.FuncAnimation

    Raises
    ------
    ValueError
        The history holds no frames.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import springsim as ss
    >>> from springsim.plot import animate
    >>> rope = ss.string(8, length=1.0, mass=0.1, stiffness=50.0, dim=2)
    >>> h = rope.run(0.5, 1e-3, frames=6, progress=False)
    >>> anim = animate(h)
    >>> "<script" in anim.to_jshtml()
    True
    """
    plt = _pyplot()
    from matplotlib.animation import FuncAnimation

    frames = np.asarray(history.frames)
    if len(frames) == 0:
        raise ValueError("this history holds no frames: run with frames=F (F >= 1)")
    dim = history.dim
    shown = _shown(frames, dim)
    if ax is None:
        if fig is None:
            fig = plt.figure()
        ax = fig.add_subplot(projection="3d" if dim == 3 else None)
    fig = ax.figure
    lines = _line_collection(shown[0][history.edges], dim, linewidths=0.8, color="tab:blue")
    ax.add_collection(lines)
    dots = ax.scatter(*shown[0].T, s=node_size, color="black")
    every = shown.reshape(-1, dim)
    _fit_limits(ax, every, dim)
    if interval is None:
        step = float(np.mean(np.diff(history.frame_times))) if len(frames) > 1 else 0.05
        interval = max(1000.0 * step, 20.0)

    def show(k: int) -> tuple[Any, Any]:
        lines.set_segments(shown[k][history.edges])
        if dim == 3:
            dots._offsets3d = tuple(shown[k].T)
        else:
            dots.set_offsets(shown[k])
        ax.set_title(f"t = {history.frame_times[k]:.3f} s")
        return lines, dots

    show(0)
    animation = FuncAnimation(fig, show, frames=len(frames), interval=interval, blit=False)
    plt.close(fig)  # shown by to_jshtml() or saved, not as a still below the cell
    return animation
