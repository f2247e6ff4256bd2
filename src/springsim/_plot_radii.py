"""The contact radii in :func:`springsim.plot.draw` and :func:`springsim.plot.animate`.

2D: a translucent disc of the node's radius, in data units (it zooms with the view).
3D: a translucent marker whose size is the radius at the view's scale when drawn
(matplotlib's 3D markers are in points: they do not follow a later zoom).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes

_STYLE = {"color": "tab:orange", "alpha": 0.3, "zorder": 2}


def _points_per_metre(ax: Axes, half: float) -> float:
    """About how many points one metre spans in a 3D view 2·``half`` wide (the 3D box
    fills about 70 % of the Axes' width at matplotlib's default view)."""
    width = ax.get_window_extent().width * 72.0 / ax.figure.dpi
    return 0.7 * width / (2.0 * half)


def add_radii(ax: Axes, x: np.ndarray, radii: np.ndarray, dim: int, half: float) -> Any:
    """Draw a disc (2D) or a ball-sized marker (3D) for each node with a radius > 0;
    returns the artist to move (``move_radii``), or None when no node has one."""
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
            **_STYLE,
        )
        ax.add_collection(discs)
        return discs
    size = (2.0 * radii[shown] * _points_per_metre(ax, half)) ** 2
    return ax.scatter(*x[shown].T, s=size, depthshade=False, gid="springsim-radii", **_STYLE)


def move_radii(artist: Any, x: np.ndarray, radii: np.ndarray, dim: int) -> None:
    """Move what :func:`add_radii` drew to positions ``x``."""
    if artist is None:
        return
    these = x[radii > 0]
    if dim == 3:
        artist._offsets3d = tuple(these.T)
    else:
        artist.set_offsets(these)
