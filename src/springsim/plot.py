"""Drawing systems with matplotlib (the ``[plot]`` extra; imported only when used).

Library code never calls ``plt.show()``: it returns the Axes, and a notebook shows
the figure by itself. What is drawn can be found by its ``gid``: ``"springsim-springs"``,
``"springsim-faces"``, ``"springsim-nodes"``, ``"springsim-pins"``,
``"springsim-plane"`` and ``"springsim-sphere"``.
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any

import numpy as np

from springsim.colliders import PLANE, collider_rows, collider_triangles

if TYPE_CHECKING:
    from matplotlib.animation import FuncAnimation
    from matplotlib.axes import Axes
    from matplotlib.collections import Collection, LineCollection
    from matplotlib.figure import Figure

    from springsim.stepping.history import History
    from springsim.system import System

#: The colour bar's label for each ``color_by``.
COLORBAR_LABELS = {"tension": "tension [N]", "strain": "strain l/L − 1"}
# The length unit of the axes by the width of the view: (least width, m; name; metres).
_UNITS = ((1e3, "km", 1e3), (0.1, "m", 1.0), (1e-4, "mm", 1e-3), (0.0, "µm", 1e-6))
# An axis's layout (see _spread): the orders of magnitude beyond which tick labels are
# written with an offset (1e−3) instead of in full; in 3D, space between the axis and
# its tick labels and between those and its label, points, and tick intervals at most.
_POWERS = (-3, 4)
_TICKPAD_3D, _LABELPAD_3D = 8.0, 16.0
_TICKS_3D = 4
# The space between a 3D Axes' labels and its colour bar, points.
_COLORBAR_GAP = 8.0
# The fraction of its Axes' shorter side that a 3D box fills at the default view.
_BOX_3D = 0.55


def _pyplot() -> types.ModuleType:
    try:
        import matplotlib.pyplot as plt
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("springsim.plot needs matplotlib: pip install matplotlib") from err
    return plt


def _axes(dim: int, ax: Axes | None = None, fig: Figure | None = None) -> Axes:
    """A fresh Axes (3D for dim 3) unless one is given: checked."""
    plt = _pyplot()
    if ax is None:
        fig = plt.figure() if fig is None else fig
        ax = fig.add_subplot(projection="3d" if dim == 3 else None)
    is_3d = getattr(ax, "name", "") == "3d"
    if dim == 3 and not is_3d:
        raise ValueError(
            "a 3D system needs 3D Axes: fig.add_subplot(projection='3d'), or leave ax out"
        )
    if dim == 2 and is_3d:
        raise ValueError(
            "a 2D system needs 2D Axes, not 3D ones: fig.add_subplot(), or leave ax out"
        )
    return ax


def _label(ax: Axes, dim: int, side: float) -> None:
    """Label the axes of ``ax`` with springsim's names (y up) and a length unit that
    suits a view ``side`` metres wide (m, or km, mm, µm: short tick labels), unless
    labelled already; and keep the labels apart (:func:`_spread`)."""
    from matplotlib.ticker import ScalarFormatter

    unit, metres = next((name, size) for least, name, size in _UNITS if side >= least)
    names = ("x", "z", "y") if dim == 3 else ("x", "y")
    axes = (ax.xaxis, ax.yaxis, ax.zaxis) if dim == 3 else (ax.xaxis, ax.yaxis)
    for axis, name in zip(axes, names, strict=True):
        if not axis.get_label_text():
            axis.set_label_text(f"{name} [{unit}]")
            if metres != 1.0 and type(axis.get_major_formatter()) is ScalarFormatter:
                axis.set_major_formatter(_in_unit(metres))
        _spread(axis, dim)


def _in_unit(metres: float) -> Any:
    """matplotlib's tick labels, of coordinates in metres written in units of
    ``metres`` (1e-3: millimetres)."""
    from matplotlib.ticker import ScalarFormatter

    class InUnit(ScalarFormatter):  # type: ignore[misc]  # (matplotlib is untyped here)
        def set_locs(self, locs: Any) -> None:
            super().set_locs(np.asarray(locs) / metres)

        def __call__(self, x: float, pos: int | None = None) -> str:
            return str(super().__call__(x / metres, pos))

        def format_data_short(self, value: float) -> str:
            return str(super().format_data_short(value / metres))

    return InUnit()


def _spread(axis: Any, dim: int) -> None:
    """Keep an axis's labels apart: short tick labels (an offset such as 1e−4 rather
    than "0.0005", which matplotlib writes in full down to 1e−5, side by side running
    together; :func:`_label` picks a unit that makes one rare); in 3D, at most 4 tick
    intervals, tick labels further from the axis, the axis label beyond them
    (matplotlib's 3D defaults crowd them: the labels of two axes meet at the box's
    front corner, tick labels run into the axis label). What the user chose (a
    locator, a formatter) is kept."""
    from matplotlib.ticker import AutoLocator, MaxNLocator, ScalarFormatter

    formatter = axis.get_major_formatter()
    if isinstance(formatter, ScalarFormatter):
        formatter.set_powerlimits(_POWERS)
    if dim == 2:
        return
    if type(axis.get_major_locator()) is AutoLocator:
        axis.set_major_locator(MaxNLocator(nbins=_TICKS_3D, steps=[1, 2, 5, 10]))
    pad = max((tick.get_pad() for tick in axis.get_major_ticks()), default=0.0)
    if pad < _TICKPAD_3D:
        axis.set_tick_params(pad=_TICKPAD_3D)
    axis.labelpad = max(axis.labelpad, _LABELPAD_3D)


def _add_collider_triangles(ax: Axes, triangles: np.ndarray, dim: int) -> None:
    """Draw triangles from :func:`collider_triangles` (already in matplotlib's axes
    order) in the colliders' grey, under the rest."""
    if len(triangles) == 0:
        return
    style: dict[str, Any] = {"facecolor": "0.55", "alpha": 0.3, "gid": "springsim-shape"}
    if dim == 3:
        from mpl_toolkits.mplot3d.art3d import Poly3DCollection

        ax.add_collection(Poly3DCollection(triangles, edgecolor="0.45", linewidth=0.2, **style))
    else:
        from matplotlib.collections import PolyCollection

        ax.add_collection(PolyCollection(triangles, edgecolor="none", zorder=0.5, **style))


#: The contact radii: 2D, a translucent disc of the node's radius, in data units (it
#: zooms with the view); 3D, a translucent marker whose size is the radius at the view's
#: scale when drawn (matplotlib's 3D markers are in points: they do not follow a later
#: zoom).
_RADII_STYLE = {"color": "tab:orange", "alpha": 0.3, "zorder": 2}


def _points_per_metre(ax: Axes, half: float) -> float:
    """About how many points one metre spans in a 3D view 2·``half`` wide (the 3D box
    fills about 70 % of the Axes' width at matplotlib's default view)."""
    width = ax.get_window_extent().width * 72.0 / ax.figure.dpi
    return 0.7 * width / (2.0 * half)


def _add_radii(ax: Axes, x: np.ndarray, radii: np.ndarray, dim: int, half: float) -> Any:
    """Draw a disc (2D) or a ball-sized marker (3D) for each node with a radius > 0;
    returns the artist to move (:func:`_move_radii`), or None when no node has one."""
    shown = radii > 0
    if not shown.any():
        return None
    if dim == 2:
        from matplotlib.collections import EllipseCollection

        widths = 2.0 * radii[shown]
        discs = EllipseCollection(
            widths,
            widths,
            np.zeros_like(widths),
            units="xy",
            offsets=x[shown],
            offset_transform=ax.transData,
            gid="springsim-radii",
            **_RADII_STYLE,
        )
        ax.add_collection(discs)
        return discs
    size = (2.0 * radii[shown] * _points_per_metre(ax, half)) ** 2
    return ax.scatter(*x[shown].T, s=size, depthshade=False, gid="springsim-radii", **_RADII_STYLE)


def _move_radii(artist: Any, x: np.ndarray, radii: np.ndarray, dim: int) -> None:
    """Move what :func:`_add_radii` drew to positions ``x``."""
    if artist is None:
        return
    these = x[radii > 0]
    if dim == 3:
        artist._offsets3d = tuple(these.T)
    else:
        artist.set_offsets(these)


def _shown(x: np.ndarray, dim: int) -> np.ndarray:
    """Coordinates as matplotlib draws them: springsim's y is up (gravity −y), and
    matplotlib's 3D up is z, so 3D points are shown as (x, z, y)."""
    return x[..., [0, 2, 1]] if dim == 3 else x


def _line_collection(segments: np.ndarray, dim: int, **style: Any) -> LineCollection:
    if dim == 3:
        from mpl_toolkits.mplot3d.art3d import Line3DCollection

        return Line3DCollection(segments, gid="springsim-springs", **style)
    from matplotlib.collections import LineCollection

    return LineCollection(segments, gid="springsim-springs", **style)


def _polygons(ax: Axes, polygons: Any, dim: int, gid: str, **style: Any) -> Collection:
    """Polygons (3D or 2D) added to ``ax``."""
    if dim == 3:
        from mpl_toolkits.mplot3d.art3d import Poly3DCollection

        collection = Poly3DCollection(polygons, gid=gid, **style)
    else:
        from matplotlib.collections import PolyCollection

        collection = PolyCollection(polygons, gid=gid, **style)
    ax.add_collection(collection)
    return collection


def _add_faces(ax: Axes, x: np.ndarray, faces: np.ndarray, dim: int) -> Collection | None:
    """Triangles as a light surface (3D) or filled patches (2D), under the springs."""
    if len(faces) == 0:
        return None
    style = {"facecolor": "tab:blue", "edgecolor": "none", "alpha": 0.25 if dim == 3 else 0.2}
    return _polygons(ax, x[faces], dim, "springsim-faces", **style)


def _in_view(x: np.ndarray, colliders: np.ndarray, dim: int) -> np.ndarray:
    """The points the view must hold: the nodes, each sphere's bounding box, and the
    point of each plane nearest the nodes' centre (so that a floor shows)."""
    x = x.reshape(-1, dim)
    points: list[Any] = [x]
    center = (x.min(axis=0) + x.max(axis=0)) / 2 if len(x) else np.zeros(dim)
    for kind, *vector, scalar in colliders.tolist():
        v = np.array(vector)
        if kind == PLANE:
            points.append([center - (center @ v - scalar) * v])
        else:
            points.append([v - scalar, v + scalar])
    return np.concatenate([np.asarray(p, dtype=np.float64).reshape(-1, dim) for p in points])


def _fit_limits(ax: Axes, x: np.ndarray, dim: int) -> tuple[np.ndarray, float]:
    """Equal-aspect limits around the points, with a margin: their centre and half-width."""
    if len(x) == 0:
        return np.zeros(dim), 1.0
    low, high = x.min(axis=0), x.max(axis=0)
    center, half = (low + high) / 2, max(float((high - low).max()) / 2, 1e-9) * 1.1
    ax.set_xlim(center[0] - half, center[0] + half)
    ax.set_ylim(center[1] - half, center[1] + half)
    if dim == 3:
        ax.set_zlim(center[2] - half, center[2] + half)
        ax.set_box_aspect((1, 1, 1))
    else:
        ax.set_aspect("equal")
    return center, half


def _plane_polygon(
    normal: np.ndarray, offset: float, low: np.ndarray, high: np.ndarray
) -> np.ndarray:
    """The polygon where the plane n·x = offset cuts the box [low, high] (3D), its
    corners in order around it; fewer than 3 if it misses the box."""
    corners = np.array([[(low, high)[(k >> a) & 1][a] for a in range(3)] for k in range(8)])
    side = corners @ normal - offset
    found: list[np.ndarray] = []
    for i in range(8):
        for a in range(3):
            j = i | (1 << a)
            if j != i and (side[i] <= 0 <= side[j] or side[j] <= 0 <= side[i]):
                if side[i] != side[j]:
                    t = side[i] / (side[i] - side[j])
                    found.append(corners[i] + t * (corners[j] - corners[i]))
    if len(found) < 3:
        return np.zeros((0, 3))
    cuts = np.unique(np.round(np.array(found), 12), axis=0)
    u = np.cross(normal, [1.0, 0, 0] if abs(normal[0]) < 0.9 else [0, 1.0, 0])
    u /= np.linalg.norm(u)
    w = np.cross(normal, u)
    middle = cuts.mean(axis=0)
    angle = np.arctan2((cuts - middle) @ w, (cuts - middle) @ u)
    return cuts[np.argsort(angle)]


def _add_colliders(
    ax: Axes, colliders: np.ndarray, dim: int, center: np.ndarray, half: float
) -> None:
    """Planes as lines (2D, the solid side shaded) or as the patch of the plane inside
    the view (3D); spheres as discs (2D) or spheres (3D); all in grey, under the rest."""
    from matplotlib.patches import Circle, Polygon

    style = {"facecolor": "0.55", "edgecolor": "0.3", "alpha": 0.3}
    for kind, *vector, scalar in colliders.tolist():
        v = _shown(np.array(vector), dim)
        if kind == PLANE and dim == 2:
            along, reach = np.array([-v[1], v[0]]), 3.0 * half  # past the view: clipped
            foot = center - (center @ v - scalar) * v
            ends = np.array([foot - reach * along, foot + reach * along])
            ax.plot(*ends.T, color="0.3", lw=1.5, gid="springsim-plane", zorder=1)
            solid = np.concatenate([ends, ends[::-1] - reach * v])
            ax.add_patch(Polygon(solid, gid="springsim-plane", lw=0, zorder=0.5, **style))
        elif kind == PLANE:
            polygon = _plane_polygon(v, scalar, center - half, center + half)
            if len(polygon) >= 3:
                _polygons(ax, [polygon], dim, "springsim-plane", **style)
        elif dim == 2:
            ax.add_patch(Circle(tuple(v), scalar, gid="springsim-sphere", zorder=0.5, **style))
        else:
            around, down = np.meshgrid(np.linspace(0, 2 * np.pi, 25), np.linspace(0, np.pi, 13))
            unit = np.stack(
                [np.cos(around) * np.sin(down), np.sin(around) * np.sin(down), np.cos(down)], -1
            )
            grid = v + scalar * unit
            quads = np.stack([grid[:-1, :-1], grid[:-1, 1:], grid[1:, 1:], grid[1:, :-1]], 2)
            lines = {"edgecolor": "0.45", "linewidth": 0.3}  # its meridians and parallels
            _polygons(ax, quads.reshape(-1, 4, 3), dim, "springsim-sphere", **(style | lines))


def _colorbar(ax: Axes, mappable: Any, label: str, dim: int) -> None:
    """A colour bar beside ``ax``, in the space matplotlib takes from it; in 3D, shorter,
    and ``ax`` narrowed until its labels clear it (3D tick and axis labels stick out of
    their Axes, the more so the narrower it is)."""
    fig = ax.figure
    bar = fig.colorbar(mappable, ax=ax, label=label, **({"shrink": 0.75} if dim == 3 else {}))
    renderer = getattr(fig.canvas, "get_renderer", lambda: None)()
    if dim == 2 or renderer is None:
        return
    gap = _COLORBAR_GAP / 72.0 * fig.dpi  # pixels
    for _ in range(12):  # narrowing it by the overlap moves its labels by about as much
        boxes = [axis.get_tightbbox(renderer) for axis in (ax.xaxis, ax.yaxis, ax.zaxis)]
        right = max((box.x1 for box in boxes if box is not None), default=0.0)
        overflow = (right + gap - bar.ax.get_window_extent(renderer).x0) / fig.bbox.width
        place = ax.get_position()
        if overflow <= 0 or place.width <= 4 * overflow:
            return
        ax.set_position((place.x0, place.y0, place.width - 1.2 * overflow, place.height))


def _node_size(ax: Axes, x: np.ndarray, pairs: np.ndarray, half: float, dim: int) -> float:
    """A marker size (points²) that scales with the system: a dot's diameter is about
    0.3 of the typical spacing between nodes as drawn (the median spring length, or
    the extent over N^(1/dim) without springs), between 0.8 and 4 points."""
    lengths = np.linalg.norm(x[pairs[:, 1]] - x[pairs[:, 0]], axis=1) if len(pairs) else []
    lengths = np.asarray(lengths)[np.asarray(lengths) > 0]
    spacing = float(np.median(lengths)) if len(lengths) else 2 * half / max(len(x), 1) ** (1 / dim)
    box = ax.get_position()
    width, height = ax.figure.get_size_inches()
    side = 72.0 * min(box.width * width, box.height * height) * (_BOX_3D if dim == 3 else 1.0)
    diameter = 0.3 * spacing / (2 * half) * side
    return float(np.clip(diameter, 0.8, 4.0) ** 2)


def _add_nodes(
    ax: Axes, x: np.ndarray, pinned: np.ndarray, size: float, pin_size: float
) -> tuple[Any, Any]:
    """The free nodes as black dots, the pinned ones as red squares, over the rest."""
    free = ax.scatter(*x[~pinned].T, s=size, color="black", zorder=3, gid="springsim-nodes")
    pins = ax.scatter(
        *x[pinned].T, s=pin_size, color="tab:red", marker="s", zorder=4, gid="springsim-pins"
    )
    return free, pins


def _sizes(
    ax: Axes, x: np.ndarray, pairs: np.ndarray, half: float, dim: int, given: float | None
) -> tuple[float, float]:
    """(node size, pin size), points²: ``given`` or one that scales with the system."""
    if given is not None:
        return float(given), 3.0 * float(given)
    size = _node_size(ax, x, pairs, half, dim)
    return size, max(3.0 * size, 9.0)


def draw(
    sim: System,
    ax: Axes | None = None,
    color_by: str | None = None,
    node_size: float | None = None,
    faces: bool = True,
    linewidth: float = 0.8,
    limit: float | None = None,
    colorbar: bool = True,
    colliders: bool = True,
) -> Axes:
    """Draw a system's springs as lines, its nodes as dots, pinned nodes as squares, and
    its planes and spheres in grey; nodes with a contact radius get a translucent
    orange disc (2D) or ball-sized marker (3D) of it.

    The axes are labelled with their unit, unless the Axes given already has labels:
    metres, or km, mm or µm for a view wider than 1 km or narrower than 10 cm or
    0.1 mm, so that tick labels stay short (in 3D, matplotlib's vertical axis is
    springsim's y).

    Parameters
    ----------
    sim : springsim.System
        A 2D or 3D system.
    ax : matplotlib Axes, optional
        Where to draw (3D Axes for a 3D system, 2D for a 2D one); a new figure if
        omitted.
    color_by : {None, "tension", "strain"}
        Colour springs by their signed tension (N) or strain (l/L − 1), on a
        diverging colour map centred on zero; otherwise one colour.
    node_size : float, optional
        Marker size of the nodes, points²; by default it scales with the system, so
        that a fine cloth is not swamped by dots (a dot about 0.3 of the spacing
        between nodes as drawn, 0.8 to 4 points across). Pins are 3 times larger.
    faces : bool
        Draw the triangles (cloth, meshes, balls) as a light surface under the springs.
    linewidth : float
        Width of the spring lines, points (thicker shows ``color_by`` better).
    limit : float, optional
        With ``color_by``: the colour scale runs from −limit to +limit (to share one
        scale between drawings); by default the largest magnitude drawn, or 1 when
        everything is (nearly) zero, so that round-off does not show as colour.
    colorbar : bool
        With ``color_by``: add a colour bar beside the Axes, labelled with the unit
        (turn off for panels that share one).
    colliders : bool
        Draw the planes (lines in 2D, with the solid side shaded; the patch inside the
        view in 3D) and spheres (discs in 2D, spheres in 3D); the view is widened to
        hold the spheres and each plane's point nearest the nodes.

    Returns
    -------
    matplotlib Axes

    Raises
    ------
    ValueError
        An unknown ``color_by``; 2D Axes for a 3D system, or 3D Axes for a 2D one.

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
    >>> len(ax.collections), ax.get_xlabel()
    (3, 'x [m]')
    """
    _pyplot()
    if color_by not in (None, "tension", "strain"):
        raise ValueError(f"color_by must be None, 'tension' or 'strain', got {color_by!r}")
    dim, pairs = sim.dim, np.asarray(sim.springs)
    x = _shown(np.asarray(sim.positions), dim)
    ax = _axes(dim, ax)
    rows = collider_rows(sim) if colliders else np.zeros((0, dim + 2))
    shapes = collider_triangles(sim) if colliders else np.zeros((0, 3, dim))
    view = np.concatenate([_in_view(np.asarray(sim.positions), rows, dim), shapes.reshape(-1, dim)])
    center, half = _fit_limits(ax, _shown(view, dim), dim)
    _label(ax, dim, 2 * half)
    _add_colliders(ax, rows, dim, center, half)
    _add_collider_triangles(ax, _shown(shapes, dim), dim)
    if faces:
        _add_faces(ax, x, np.asarray(sim.faces), dim)
    values = None
    if color_by == "tension":
        values = sim.spring_tensions()
    elif color_by == "strain":
        rest = sim.rest_lengths
        values = np.divide(sim.spring_lengths(), rest, out=np.ones_like(rest), where=rest > 0)
        values = values - 1.0
    lines = _line_collection(x[pairs], dim, linewidths=linewidth)
    if values is not None:
        if limit is None:
            largest = float(np.abs(values).max()) if len(values) else 0.0
            scale = 1.0 if color_by == "strain" else float(np.abs(sim.stiffness).max(initial=1.0))
            limit = largest if largest > 1e-9 * scale else 1.0
        lines.set_array(values)
        lines.set_cmap("coolwarm")
        lines.set_clim(-limit, limit)
        if colorbar and color_by is not None:
            _colorbar(ax, lines, COLORBAR_LABELS[color_by], dim)
    else:
        lines.set_color("tab:blue")
    ax.add_collection(lines)
    size, pin_size = _sizes(ax, x, pairs, half, dim, node_size)
    _add_nodes(ax, x, np.asarray(sim.pinned), size, pin_size)
    if sim._has_radii():  # (asking makes no array)
        _add_radii(ax, x, np.asarray(sim.radii), dim, half)
    return ax


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
    node_size: float | None = None,
    faces: bool = True,
    colliders: bool = True,
) -> FuncAnimation:
    """Animate the frames of a run (``sim.run(..., frames=F)``) as :func:`draw` draws a
    system.

    Each frame shows the springs between the recorded nodes as lines, their faces as a
    light surface, the free nodes as dots and the pinned ones as squares (as they were
    at that frame), the contact radii as :func:`draw` shows them, over the planes and
    spheres the run started with, in axes labelled with units and the time in the
    title. In a notebook show it with
    ``IPython.display.HTML(anim.to_jshtml())``; save it with
    ``anim.save("run.gif", writer="pillow")`` (or ``.mp4`` with ffmpeg).

    Parameters
    ----------
    history : springsim.History
        With at least one frame.
    fig, ax : matplotlib Figure and Axes, optional
        Where to draw (3D Axes for a 3D run, 2D for a 2D one); new ones if omitted.
    interval : float, optional
        Milliseconds between frames; by default the frames play in real time, but no
        faster than 50 per second.
    node_size : float, optional
        Marker size of the nodes, points²; by default it scales with the system (as in
        :func:`draw`).
    faces : bool
        Draw the triangles (``history.faces``).
    colliders : bool
        Draw the colliders (``history.colliders`` and ``history.collider_triangles``).

    Returns
    -------
    matplotlib.animation.FuncAnimation

    Raises
    ------
    ValueError
        The history holds no frames; 2D Axes for a 3D run, or 3D Axes for a 2D one.

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
    dim, edges, pinned = history.dim, history.edges, history.frame_pinned
    shown = _shown(frames, dim)
    ax = _axes(dim, ax, fig)
    fig = ax.figure
    rows = history.colliders if colliders else np.zeros((0, dim + 2))
    shapes = history.collider_triangles if colliders else np.zeros((0, 3, dim))
    view = np.concatenate([_in_view(frames, rows, dim), shapes.reshape(-1, dim)])
    center, half = _fit_limits(ax, _shown(view, dim), dim)
    _label(ax, dim, 2 * half)
    _add_colliders(ax, rows, dim, center, half)
    _add_collider_triangles(ax, _shown(shapes, dim), dim)
    surface = _add_faces(ax, shown[0], history.faces, dim) if faces else None
    lines = _line_collection(shown[0][edges], dim, linewidths=0.8, color="tab:blue")
    ax.add_collection(lines)
    size, pin_size = _sizes(ax, shown[0], edges, half, dim, node_size)
    free, pins = _add_nodes(ax, shown[0], pinned[0], size, pin_size)
    discs = _add_radii(ax, shown[0], history.radii, dim, half)
    if interval is None:
        step = float(np.mean(np.diff(history.frame_times))) if len(frames) > 1 else 0.05
        interval = max(1000.0 * step, 20.0)

    def show(k: int) -> tuple[Any, ...]:
        x = shown[k]
        lines.set_segments(x[edges])
        if surface is not None:
            surface.set_verts(x[history.faces])
        for dots, these in ((free, x[~pinned[k]]), (pins, x[pinned[k]])):
            if dim == 3:
                dots._offsets3d = tuple(these.T)
            else:
                dots.set_offsets(these)
        _move_radii(discs, x, history.radii, dim)
        ax.set_title(f"t = {history.frame_times[k]:.3f} s")
        return lines, free, pins

    show(0)
    animation = FuncAnimation(fig, show, frames=len(frames), interval=interval, blit=False)
    plt.close(fig)  # shown by to_jshtml() or saved, not as a still below the cell
    return animation
