"""The artists a drawing is made of: springs (one colour, by tension or strain, or by
body), faces, nodes and pins, contact radii, colliders, and colour bars; an animation
moves the same artists."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from springsim.colliders import PLANE
from springsim.plot.axes import _shown

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.collections import Collection, LineCollection

#: The colour bar's label for each ``color_by``.
COLORBAR_LABELS = {"tension": "tension [N]", "strain": "strain l/L − 1"}
#: What ``color_by`` takes.
COLOR_BY = (None, "tension", "strain", "body")
# The space between a 3D Axes' labels and its colour bar, points.
_COLORBAR_GAP = 8.0
# The fraction of its Axes' shorter side that a 3D box fills at the default view.
_BOX_3D = 0.55


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


def _add_faces(
    ax: Axes, x: np.ndarray, faces: np.ndarray, dim: int, colors: np.ndarray | None = None
) -> Collection | None:
    """Triangles as a light surface (3D) or filled patches (2D), under the springs: in
    blue, or each in its colour (``colors``, one RGBA row per face)."""
    if len(faces) == 0:
        return None
    alpha = 0.25 if dim == 3 else 0.2
    if colors is None:
        style: dict[str, Any] = {"facecolor": "tab:blue", "alpha": alpha}
    else:
        style = {"facecolor": _faded(colors, alpha)}
    return _polygons(ax, x[faces], dim, "springsim-faces", edgecolor="none", **style)


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
    ax: Axes,
    x: np.ndarray,
    pinned: np.ndarray,
    size: float,
    pin_size: float,
    colors: np.ndarray | None = None,
) -> tuple[Any, Any]:
    """The free nodes as dots (black, or each in its colour: ``colors``, one RGBA row per
    node), the pinned ones as red squares, over the rest."""
    color = "black" if colors is None else colors[~pinned]
    free = ax.scatter(*x[~pinned].T, s=size, color=color, zorder=3, gid="springsim-nodes")
    pins = ax.scatter(
        *x[pinned].T, s=pin_size, color="tab:red", marker="s", zorder=4, gid="springsim-pins"
    )
    return free, pins


def _move_nodes(
    free: Any, pins: Any, x: np.ndarray, pinned: np.ndarray, colors: np.ndarray | None, dim: int
) -> None:
    """Move what :func:`_add_nodes` drew to positions ``x`` with pins ``pinned`` (which
    nodes are dots may change: their colours follow)."""
    for dots, these in ((free, x[~pinned]), (pins, x[pinned])):
        if dim == 3:
            dots._offsets3d = tuple(these.T)
        else:
            dots.set_offsets(these)
    if colors is not None:
        free.set_color(colors[~pinned])


#: The qualitative colour maps bodies are coloured from: 10 colours, or 20 for more
#: bodies (then cycled).
_BODY_COLORMAPS = ((10, "tab10"), (20, "tab20"))


def _body_colors(bodies: np.ndarray) -> np.ndarray:
    """One RGBA row per node: the colour of its body (``bodies``: labels 0, 1, ...), from
    matplotlib's qualitative map tab10 (tab20 for more than 10 bodies, cycled beyond)."""
    from matplotlib import colormaps

    count = int(bodies.max()) + 1 if len(bodies) else 0
    size, name = next(((n, m) for n, m in _BODY_COLORMAPS if count <= n), _BODY_COLORMAPS[-1])
    table = colormaps[name](np.arange(size))
    return np.asarray(table[np.asarray(bodies) % size], dtype=np.float64)


def _faded(colors: np.ndarray, alpha: float) -> np.ndarray:
    """RGBA rows with their alpha set to ``alpha``."""
    faded = np.array(colors, dtype=np.float64)
    faded[:, 3] = alpha
    return faded


def _sizes(
    ax: Axes, x: np.ndarray, pairs: np.ndarray, half: float, dim: int, given: float | None
) -> tuple[float, float]:
    """(node size, pin size), points²: ``given`` or one that scales with the system."""
    if given is not None:
        return float(given), 3.0 * float(given)
    size = _node_size(ax, x, pairs, half, dim)
    return size, max(3.0 * size, 9.0)
