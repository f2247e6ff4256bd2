"""``animate``: the frames of a run as a matplotlib animation, drawn as ``draw`` draws
a system, at the speed asked (slow motion included) on screen and in saved files."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from springsim.model import topology
from springsim.plot.arrows import (
    _add_arrows,
    _arrows_of,
    _auto_scale,
    _check_arrows,
    _move_arrows,
    _net_forces,
    _state,
)
from springsim.plot.axes import (
    _axes,
    _check_aspect,
    _exaggerate,
    _exaggeration,
    _fit_limits,
    _label,
    _pyplot,
    _shown,
    _stretch,
)
from springsim.plot.scene import (
    COLOR_BY,
    COLORBAR_LABELS,
    _add_collider_triangles,
    _add_colliders,
    _add_faces,
    _add_nodes,
    _add_radii,
    _body_colors,
    _colorbar,
    _in_view,
    _line_collection,
    _move_nodes,
    _move_radii,
    _sizes,
)

if TYPE_CHECKING:
    from matplotlib.animation import FuncAnimation
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from springsim.stepping.history import History
    from springsim.system import System

#: The shortest time between frames, ms: 50 frames per second, about what browsers
#: and GIF viewers play (GIF stores hundredths of a second; most viewers slow down
#: anything under 20 ms).
MIN_INTERVAL = 20.0


def animate(
    history: History,
    fig: Figure | None = None,
    ax: Axes | None = None,
    interval: float | None = None,
    node_size: float | None = None,
    faces: bool = True,
    colliders: bool = True,
    color_by: str | None = None,
    limit: float | None = None,
    colorbar: bool = True,
    arrows: str | None = None,
    arrows_per: str = "node",
    arrow_scale: float | None = None,
    aspect: str | None = None,
    exaggerate: tuple[str, float] | None = None,
    speed: float | None = None,
    system: System | None = None,
) -> FuncAnimation:
    """Animate the frames of a run (``sim.run(..., frames=F)``) as :func:`draw` draws a
    system.

    Each frame shows the springs between the recorded nodes as lines, their faces as a
    light surface, the free nodes as dots and the pinned ones as squares (as they were
    at that frame), the contact radii as :func:`draw` shows them, over the planes and
    spheres the run started with, in axes labelled with units and the time in the
    title. In a notebook show it with
    ``IPython.display.HTML(anim.to_jshtml())``; save it with
    ``anim.save("run.gif", writer="pillow")`` (or ``.mp4`` with ffmpeg): the file
    plays at the animation's speed, slow motion included, since matplotlib's writers
    take their frame rate from the interval (1000 / interval frames per second).

    Parameters
    ----------
    history : springsim.History
        With at least one frame.
    fig, ax : matplotlib Figure and Axes, optional
        Where to draw (3D Axes for a 3D run, 2D for a 2D one); new ones if omitted.
        Limits and aspect follow :func:`draw`'s rule, fitted to every frame.
    interval : float, optional
        Milliseconds between frames (instead of ``speed``).
    node_size : float, optional
        Marker size of the nodes, points²; by default it scales with the system (as in
        :func:`draw`).
    faces : bool
        Draw the triangles (``history.faces``).
    colliders : bool
        Draw the colliders (``history.colliders`` and ``history.collider_triangles``).
    color_by : {None, "tension", "strain", "body"}
        As in :func:`draw`: the springs by their recorded tension or strain
        (``history.frame_tensions``, ``frame_strains``; one colour scale for the whole
        run, a spring gone is not drawn), or each body (the pieces the recorded springs
        and faces join) in its own colour.
    limit, colorbar :
        As in :func:`draw`, for "tension" and "strain" (``limit``: by default the
        largest magnitude over the run).
    arrows : {None, "velocity", "force"}
        As in :func:`draw`, at each frame. Velocities are the recorded ones
        (``history.frame_velocities``); a History pickled before they were recorded
        gets central differences of the frames instead (one-sided at the ends).
        Forces need ``system``.
    arrows_per : {"node", "body"}
        As in :func:`draw`; per body needs ``system`` (the masses).
    arrow_scale : float, optional
        As in :func:`draw`; by default the longest arrow of the whole run is 15 % of
        the scene's size over the whole run, so that lengths compare from frame to
        frame.
    aspect : {None, "equal", "auto"}
        As in :func:`draw`.
    exaggerate : (axis, factor), optional
        As in :func:`draw`: displacements along ``axis`` times ``factor``, from the
        rest positions of ``system`` when given, else from the first frame.
    speed : float, optional
        Simulated seconds per second of playback: 0.25 is slow motion, four times
        slower than real time; 1 (the default) is real time. The interval between
        frames is 1000 · Δt / speed ms, with Δt the time between frames, but never
        under 20 ms (:data:`MIN_INTERVAL`): record fewer frames to play faster.
    system : springsim.System, optional
        The System the run was made from, for what the History does not hold: the
        masses (arrows per body) and the forces (``arrows="force"``, evaluated at each
        frame's positions, velocities and pins with the system's springs and settings
        as they are now; every node must be in the frames).

    Returns
    -------
    matplotlib.animation.FuncAnimation

    Raises
    ------
    ValueError
        The history holds no frames; 2D Axes for a 3D run, or 3D Axes for a 2D one; both
        ``interval`` and ``speed``, or one not positive; force arrows or arrows per
        body without ``system``, or a ``system`` that does not match the run; the
        argument errors of :func:`draw`.
    TypeError
        ``speed``, ``arrow_scale`` or ``exaggerate`` of the wrong type.

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

    In slow motion, a quarter of real time, with velocity arrows: the frames are
    0.1 s apart, so 400 ms apart on screen and in a GIF.

    >>> import pathlib, tempfile
    >>> from PIL import Image
    >>> slow = animate(h, speed=0.25, arrows="velocity")
    >>> slow.event_source.interval
    400
    >>> gif = pathlib.Path(tempfile.mkdtemp()) / "slow.gif"
    >>> slow.save(gif, writer="pillow", dpi=30)
    >>> Image.open(gif).info["duration"]
    400
    """
    plt = _pyplot()
    from matplotlib.animation import FuncAnimation

    frames = np.asarray(history.frames)
    dim = history.dim
    if color_by not in COLOR_BY:
        raise ValueError(f"color_by must be None, 'tension', 'strain' or 'body', got {color_by!r}")
    scale = _check_arrows(arrows, arrows_per, arrow_scale)
    _check_aspect(aspect)
    exaggeration = _exaggeration(exaggerate, dim)
    interval = _interval(history, interval, speed)
    if len(frames) == 0:
        raise ValueError("this history holds no frames: run with frames=F (F >= 1)")
    masses, rest, state = _from_system(history, system, arrows, arrows_per)
    edges, pinned, times = history.edges, history.frame_pinned, history.frame_times
    bodies = None
    if color_by == "body" or (arrows is not None and arrows_per == "body"):
        bodies = _recorded_bodies(history)
    vectors = None
    if arrows == "velocity":
        vectors = _velocities(history)
    elif arrows == "force" and state is not None:
        v = _velocities(history)
        vectors = np.stack(
            [_net_forces(state, frames[k], v[k], pinned[k]) for k in range(len(frames))]
        )
    if rest is None:
        rest = frames[0]
    drawn = _exaggerate(frames, rest, exaggeration)
    shown = _shown(drawn, dim)
    rows = history.colliders if colliders else np.zeros((0, dim + 2))
    shapes = history.collider_triangles if colliders else np.zeros((0, 3, dim))
    view = np.concatenate([_in_view(drawn, rows, dim), shapes.reshape(-1, dim)])
    origins = None
    if vectors is not None and frames.shape[1]:
        weights = np.ones(frames.shape[1]) if masses is None else masses
        origins, vectors = _arrows_of(arrows_per, str(arrows), drawn, vectors, weights, bodies)
        vectors = _stretch(vectors, exaggeration)
        if scale is None:
            scale = _auto_scale(vectors, view)
        tips = origins + scale * vectors
        view = np.concatenate([view, tips.reshape(-1, dim)])  # the tips in view
    ax, fresh = _axes(dim, ax, fig)
    fig = ax.figure
    center, half = _fit_limits(ax, _shown(view, dim), dim, aspect, fresh)
    _label(ax, dim, 2 * half, exaggeration, rest)
    _add_colliders(ax, rows, dim, center, half)
    _add_collider_triangles(ax, _shown(shapes, dim), dim)
    colors = _body_colors(bodies) if color_by == "body" and bodies is not None else None
    surface = None
    if faces:
        face_colors = None if colors is None else colors[history.faces[:, 0]]
        surface = _add_faces(ax, shown[0], history.faces, dim, face_colors)
    lines = _line_collection(shown[0][edges], dim, linewidths=0.8, color="tab:blue")
    values = _spring_values(history, color_by)
    if values is not None and color_by is not None:
        finite = np.abs(values[np.isfinite(values)])
        if limit is None:
            largest = float(finite.max()) if finite.size else 0.0
            limit = largest if largest > 0 else 1.0
        lines.set_array(values[0])
        lines.set_cmap("coolwarm")
        lines.set_clim(-limit, limit)
        if colorbar:
            _colorbar(ax, lines, COLORBAR_LABELS[color_by], dim)
    elif colors is not None and len(edges):
        lines.set_color(colors[edges[:, 0]])
    ax.add_collection(lines)
    size, pin_size = _sizes(ax, shown[0], edges, half, dim, node_size)
    free, pins = _add_nodes(ax, shown[0], pinned[0], size, pin_size, colors)
    discs = _add_radii(ax, shown[0], history.radii, dim, half)
    quiver = None
    if origins is not None and vectors is not None and arrows is not None:
        origins, vectors = _shown(origins, dim), _shown(vectors, dim)
        quiver = _add_arrows(ax, arrows, origins[0], vectors[0], float(scale or 0.0), dim)
    title = "" if speed is None or speed == 1 else f", {speed:g}× speed"

    def show(k: int) -> tuple[Any, ...]:
        x = shown[k]
        lines.set_segments(x[edges])
        if values is not None:
            lines.set_array(values[k])
        if surface is not None:
            surface.set_verts(x[history.faces])
        _move_nodes(free, pins, x, pinned[k], colors, dim)
        _move_radii(discs, x, history.radii, dim)
        if quiver is not None and origins is not None and vectors is not None:
            _move_arrows(quiver, origins[k], vectors[k], float(scale or 0.0), dim)
        ax.set_title(f"t = {times[k]:.3f} s{title}")
        return lines, free, pins

    show(0)
    animation = FuncAnimation(fig, show, frames=len(frames), interval=interval, blit=False)
    plt.close(fig)  # shown by to_jshtml() or saved, not as a still below the cell
    return animation


def _interval(history: History, interval: Any, speed: Any) -> float:
    """Milliseconds between frames: ``interval`` as given, or 1000 · Δt / ``speed``
    (real time by default), at least :data:`MIN_INTERVAL`."""
    if interval is not None and speed is not None:
        raise ValueError("give interval (ms between frames) or speed, not both")
    for name, value in (("interval", interval), ("speed", speed)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"{name} must be a number, got {value!r}")
        if not (np.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    if interval is not None:
        return float(interval)
    times = np.asarray(history.frame_times)
    step = float(np.mean(np.diff(times))) if len(times) > 1 else 0.05
    # (rounded to a nanosecond: the frame times' round-off would make 80 ms 79.99999,
    # which matplotlib's GIF writer truncates to 70 ms)
    return round(max(1000.0 * step / (1.0 if speed is None else float(speed)), MIN_INTERVAL), 6)


def _from_system(
    history: History, system: System | None, arrows: str | None, per: str
) -> tuple[np.ndarray | None, np.ndarray | None, Any]:
    """What the run's System gives an animation: the frame nodes' masses and rest
    positions, and the oracle's state for forces (None where not given or not needed);
    checked against the run."""
    needs = []
    if arrows == "force":
        needs.append('arrows="force" (the forces)')
    if arrows is not None and per == "body":
        needs.append('arrows_per="body" (the masses)')
    if system is None:
        if needs:
            raise ValueError(
                f"{' and '.join(needs)} in an animation need the System the run was made "
                "from: animate(history, ..., system=sim)"
            )
        return None, None, None
    nodes = np.asarray(history.frame_nodes)
    if system.dim != history.dim or (len(nodes) and nodes.max() >= system.num_nodes):
        raise ValueError(
            f"system does not match the run: a {system.dim}D system of {system.num_nodes} "
            f"nodes, a {history.dim}D run of nodes up to {nodes.max(initial=-1)}"
        )
    if arrows == "force" and not np.array_equal(nodes, np.arange(system.num_nodes)):
        raise ValueError(
            'arrows="force" needs every node in the frames (run without frame_nodes=): '
            "the forces depend on all of them"
        )
    with system.lock:
        masses = np.array(system.masses)[nodes]
        rest = np.array(system.rest_positions)[nodes]
        state = _state(system) if arrows == "force" else None
    return masses, rest, state


def _velocities(history: History) -> np.ndarray:
    """The frames' velocities: recorded, or central differences of the frames (one-sided
    at the ends) for a History pickled before they were recorded."""
    recorded = np.asarray(history.frame_velocities)
    if np.isfinite(recorded).all():
        return recorded
    if len(history.frames) < 2:
        raise ValueError(
            "this history records no velocities and has one frame: velocity arrows need "
            "two frames or more to difference"
        )
    return np.asarray(np.gradient(history.frames, history.frame_times, axis=0))


class _RecordedTopology:
    """The springs and faces a History recorded, as :func:`topology.bodies` reads a
    System's (its node count and its topology views)."""

    def __init__(self, history: History) -> None:
        self.num_nodes = len(history.frame_nodes)
        self._arrays = {"springs": history.edges, "faces": history.faces}

    def _view(self, name: str) -> np.ndarray:
        return self._arrays[name]


def _recorded_bodies(history: History) -> np.ndarray:
    """The body of each frame node: the pieces that the recorded springs and faces join,
    numbered as :meth:`springsim.System.bodies` numbers them (the same function)."""
    return topology.bodies(_RecordedTopology(history))  # type: ignore[arg-type]


def _spring_values(history: History, color_by: str | None) -> np.ndarray | None:
    """The recorded tension or strain of each edge at each frame (F, M), or None."""
    if color_by == "tension":
        return np.asarray(history.frame_tensions)
    if color_by == "strain":
        return np.asarray(history.frame_strains)
    return None
