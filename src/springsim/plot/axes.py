"""The view a drawing is made in: the Axes (made, or checked when given), its limits and
aspect, the axis labels and their unit, and the exaggeration of displacements along one
axis.

The rule for limits and aspect: on Axes that springsim makes, the limits hold
everything with a margin and every axis has the same scale (``aspect="equal"``). On
Axes you pass in, what you set is kept and the rest is done as on springsim's own: an
axis whose limits you set (``set_xlim``, ``set_ylim``, ``set_zlim``: matplotlib turns
its autoscaling off) keeps them, the others are fitted; an aspect you set
(``set_aspect`` in 2D, anything but matplotlib's "auto"; ``set_box_aspect`` in 3D,
anything but its 4:4:3) is kept, and so is matplotlib's default once you have set any
limits (an equal aspect would fight them); otherwise the aspect is made equal.
``aspect="equal"`` or ``"auto"`` decides it whatever was set.
"""

from __future__ import annotations

import types
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# The length unit of the axes by the width of the view: (least width, m; name; metres).
_UNITS = ((1e3, "km", 1e3), (0.1, "m", 1.0), (1e-4, "mm", 1e-3), (0.0, "µm", 1e-6))
# An axis's layout (see _spread): the orders of magnitude beyond which tick labels are
# written with an offset (1e−3) instead of in full; in 3D, space between the axis and
# its tick labels and between those and its label, points, and tick intervals at most.
_POWERS = (-3, 4)
_TICKPAD_3D, _LABELPAD_3D = 8.0, 16.0
_TICKS_3D = 4
#: The aspects ``draw`` and ``animate`` take (None: equal on Axes they make, yours as is).
ASPECTS = (None, "equal", "auto")
#: springsim's axis names, by index (y is up).
AXIS_NAMES = ("x", "y", "z")
# The limits springsim last set on an Axes (as matplotlib draws them), so that a later
# drawing on the same Axes can tell them from limits the user set.
_FITTED: weakref.WeakKeyDictionary[Any, tuple[tuple[float, float], ...]] = (
    weakref.WeakKeyDictionary()
)
# The aspect springsim last set on an Axes (2D: set_aspect's; 3D: the box's ratios).
_ASPECTS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
# matplotlib's default 3D box: 4:4:3.
_DEFAULT_BOX = (1.0, 1.0, 0.75)


def _pyplot() -> types.ModuleType:
    try:
        import matplotlib.pyplot as plt
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("springsim.plot needs matplotlib: pip install matplotlib") from err
    return plt


def _axes(dim: int, ax: Axes | None = None, fig: Figure | None = None) -> tuple[Axes, bool]:
    """A fresh Axes (3D for dim 3) unless one is given: checked; and whether it is fresh."""
    plt = _pyplot()
    if ax is not None:
        is_3d = getattr(ax, "name", "") == "3d"
        if dim == 3 and not is_3d:
            raise ValueError(
                "a 3D system needs 3D Axes: fig.add_subplot(projection='3d'), or leave ax out"
            )
        if dim == 2 and is_3d:
            raise ValueError(
                "a 2D system needs 2D Axes, not 3D ones: fig.add_subplot(), or leave ax out"
            )
        return ax, False
    fig = plt.figure() if fig is None else fig
    return fig.add_subplot(projection="3d" if dim == 3 else None), True


def _check_aspect(aspect: str | None) -> None:
    if aspect not in ASPECTS:
        raise ValueError(f"aspect must be None, 'equal' or 'auto', got {aspect!r}")


def _exaggeration(exaggerate: Any, dim: int) -> tuple[int, float] | None:
    """``exaggerate=(axis, factor)`` checked: (springsim's axis index, factor), or None."""
    if exaggerate is None:
        return None
    names = AXIS_NAMES[:dim]
    usage = f"exaggerate must be (axis, factor) with axis one of {names} and a factor > 0"
    if not isinstance(exaggerate, (tuple, list)) or len(exaggerate) != 2:
        raise TypeError(f"{usage}, got {exaggerate!r}")
    axis, factor = exaggerate
    if axis not in names:
        raise ValueError(f"{usage}, got axis {axis!r}")
    if isinstance(factor, bool) or not isinstance(factor, (int, float, np.integer, np.floating)):
        raise TypeError(f"{usage}, got factor {factor!r}")
    if not (np.isfinite(factor) and factor > 0):
        raise ValueError(f"{usage}, got factor {factor!r}")
    return names.index(axis), float(factor)


def _exaggerate(
    x: np.ndarray, rest: np.ndarray, exaggeration: tuple[int, float] | None
) -> np.ndarray:
    """Positions ``x`` (..., N, dim) as drawn: along the exaggerated axis,
    rest + factor · (x − rest); unchanged without an exaggeration."""
    if exaggeration is None:
        return x
    axis, factor = exaggeration
    shown = np.array(x, dtype=np.float64)
    shown[..., axis] = rest[..., axis] + factor * (x[..., axis] - rest[..., axis])
    return shown


def _stretch(vectors: np.ndarray, exaggeration: tuple[int, float] | None) -> np.ndarray:
    """Vectors (arrows) as drawn: their component along the exaggerated axis times the
    factor, so that a velocity stays tangent to the motion drawn."""
    if exaggeration is None:
        return vectors
    stretched = np.array(vectors, dtype=np.float64)
    stretched[..., exaggeration[0]] *= exaggeration[1]
    return stretched


def _label(
    ax: Axes,
    dim: int,
    side: float,
    exaggeration: tuple[int, float] | None = None,
    rest: np.ndarray | None = None,
) -> None:
    """Label the axes of ``ax`` with springsim's names (y up) and a length unit that
    suits a view ``side`` metres wide (m, or km, mm, µm: short tick labels), unless
    labelled already; and keep the labels apart (:func:`_spread`).

    An exaggerated axis says so in its label ("y [mm], displacement ×50"); when every
    node rests at one coordinate along it (a straight string), its tick labels are the
    true coordinates (drawn ones mapped back), otherwise they are left out, since no
    one coordinate holds along the axis.
    """
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    unit, metres = next((name, size) for least, name, size in _UNITS if side >= least)
    names = ("x", "z", "y") if dim == 3 else ("x", "y")
    axes = (ax.xaxis, ax.yaxis, ax.zaxis) if dim == 3 else (ax.xaxis, ax.yaxis)
    stretched = None
    if exaggeration is not None:
        stretched = names.index(AXIS_NAMES[exaggeration[0]])
    for k, (axis, name) in enumerate(zip(axes, names, strict=True)):
        if not axis.get_label_text():
            text = f"{name} [{unit}]"
            plain = type(axis.get_major_formatter()) is ScalarFormatter
            if k == stretched and exaggeration is not None and rest is not None:
                factor = exaggeration[1]
                along = rest.reshape(-1, dim)[:, exaggeration[0]]
                text += f", displacement ×{factor:g}"
                if len(along) and np.ptp(along) == 0 and plain:
                    axis.set_major_formatter(_in_unit(metres, float(along[0]), factor))
                elif plain:
                    axis.set_major_formatter(NullFormatter())
            elif metres != 1.0 and plain:
                axis.set_major_formatter(_in_unit(metres))
            axis.set_label_text(text)
        _spread(axis, dim)


def _in_unit(metres: float, origin: float = 0.0, factor: float = 1.0) -> Any:
    """matplotlib's tick labels, of coordinates in metres written in units of
    ``metres`` (1e-3: millimetres); with a ``factor``, of coordinates drawn
    exaggerated about ``origin``: the true one is origin + (drawn − origin) / factor."""
    from matplotlib.ticker import ScalarFormatter

    def true(value: Any) -> Any:
        return (origin + (np.asarray(value) - origin) / factor) / metres

    class InUnit(ScalarFormatter):  # type: ignore[misc]  # (matplotlib is untyped here)
        def set_locs(self, locs: Any) -> None:
            super().set_locs(true(locs))

        def __call__(self, x: float, pos: int | None = None) -> str:
            return str(super().__call__(float(true(x)), pos))

        def format_data_short(self, value: float) -> str:
            return str(super().format_data_short(float(true(value))))

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


def _shown(x: np.ndarray, dim: int) -> np.ndarray:
    """Coordinates as matplotlib draws them: springsim's y is up (gravity −y), and
    matplotlib's 3D up is z, so 3D points are shown as (x, z, y)."""
    return x[..., [0, 2, 1]] if dim == 3 else x


def _limits(ax: Axes, dim: int) -> tuple[tuple[float, float], ...]:
    getters = (ax.get_xlim, ax.get_ylim, ax.get_zlim) if dim == 3 else (ax.get_xlim, ax.get_ylim)
    return tuple((float(low), float(high)) for low, high in (get() for get in getters))


def _users_limits(ax: Axes, dim: int, fresh: bool) -> list[bool]:
    """For each axis as drawn, whether its limits are the user's: set by them (its
    autoscaling off) and not the ones springsim last set on these Axes."""
    if fresh:
        return [False] * dim
    autoscale = [ax.get_autoscalex_on(), ax.get_autoscaley_on()]
    if dim == 3:
        autoscale.append(ax.get_autoscalez_on())
    ours = _FITTED.get(ax)
    now = _limits(ax, dim)
    return [not on and (ours is None or ours[k] != now[k]) for k, on in enumerate(autoscale)]


def _aspect_now(ax: Axes, dim: int) -> Any:
    """The aspect of ``ax``: 2D, what ``get_aspect`` gives; 3D, the box's ratios to its
    first side."""
    if dim == 2:
        return ax.get_aspect()
    box = np.asarray(ax.get_box_aspect(), dtype=np.float64)
    return tuple(np.round(box / box[0], 12))


def _users_aspect(ax: Axes, dim: int, fresh: bool) -> bool:
    """Whether the aspect of ``ax`` is one its user set: not matplotlib's default and
    not the one springsim last set."""
    if fresh:
        return False
    now = _aspect_now(ax, dim)
    default = "auto" if dim == 2 else _DEFAULT_BOX
    return bool(now != default and now != _ASPECTS.get(ax, default))


def _fit_limits(
    ax: Axes, x: np.ndarray, dim: int, aspect: str | None = None, fresh: bool = True
) -> tuple[np.ndarray, float]:
    """Limits around the points ``x`` (as drawn) with a margin, on every axis whose
    limits are not the user's, and the aspect by the rule of this module; the view's
    centre and half-width (half its widest side), which colliders and markers use."""
    kept = _users_limits(ax, dim, fresh)
    users = any(kept) or _users_aspect(ax, dim, fresh)
    equal = aspect == "equal" or (aspect is None and not users)
    if len(x):
        low, high = x.min(axis=0), x.max(axis=0)
    else:
        low, high = -np.ones(dim), np.ones(dim)
    center = (low + high) / 2
    half = max(float((high - low).max()) / 2, 1e-9) * 1.1
    if equal:
        halves = np.full(dim, half)
    else:  # each axis its own range, none thinner than a fiftieth of the widest
        halves = np.maximum((high - low) / 2 * 1.1, half / 50)
    setters = (ax.set_xlim, ax.set_ylim, ax.set_zlim) if dim == 3 else (ax.set_xlim, ax.set_ylim)
    for k, set_limits in enumerate(setters):
        if not kept[k]:
            set_limits(center[k] - halves[k], center[k] + halves[k])
    limits = np.array(_limits(ax, dim))
    if dim == 3 and equal:
        ax.set_box_aspect(tuple(np.abs(limits[:, 1] - limits[:, 0])))
    elif dim == 3 and aspect == "auto":
        ax.set_box_aspect(None)
    elif equal:
        ax.set_aspect("equal")
    elif aspect == "auto":
        ax.set_aspect("auto")
    _FITTED[ax] = _limits(ax, dim)
    _ASPECTS[ax] = _aspect_now(ax, dim)
    return limits.mean(axis=1), float(np.abs(limits[:, 1] - limits[:, 0]).max()) / 2
