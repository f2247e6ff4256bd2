"""The viewer's static snapshot: what a notebook shows where the live widget cannot run.

A displayed :class:`~springsim.viewer.widget.Viewer` puts three things in its output:
the widget view (what JupyterLab, Notebook, VS Code and Colab draw live), its text,
and a PNG of the system drawn now by :func:`springsim.plot.draw` (when matplotlib is
installed). A notebook saved from a live session keeps the PNG, so nbconvert, GitHub
and nbviewer, which cannot run the widget without its kernel, show the scene.

A notebook *executed without a front end* (``jupyter nbconvert --execute``, papermill,
myst-nb: all run by nbclient) is a case apart: nbclient stores the widget's state, so
nbconvert picks the widget view, whose page then needs the widget manager from the
network and a kernel to draw anything — an empty output, offline. There the viewer
leaves the widget view out (text and PNG only). nbclient is told apart by its kernel's
history, kept in memory (``--HistoryManager.hist_file=:memory:``, which nbclient
passes to every kernel it starts; interactive front ends keep the default history
file): :func:`headless_kernel`.
"""

from __future__ import annotations

import io
from typing import Any

from springsim import plot
from springsim.viewer import protocol

#: Size of the snapshot, inches, and its resolution (about 480 × 360 pixels).
SIZE = (6.0, 4.5)
DPI = 80


def png(sim: Any, color_by: str | None, color_range: tuple[float, float] | None) -> bytes | None:
    """A PNG of ``sim`` drawn by :func:`springsim.plot.draw` (coloured as the viewer
    colours it), or None without matplotlib.

    Examples
    --------
    >>> import springsim as ss
    >>> rope = ss.string(5, length=1.0, mass=0.05, stiffness=50.0, dim=2)
    >>> png(rope, "strain", None)[:8]
    b'\\x89PNG\\r\\n\\x1a\\n'
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        return None
    figure = Figure(figsize=SIZE, dpi=DPI)
    FigureCanvasAgg(figure)
    ax = figure.add_subplot(projection="3d" if sim.dim == 3 else None)
    limit = None
    values = protocol.spring_values(sim, color_by)
    if values is not None and color_by != "body":
        # draw()'s scale is symmetric: the viewer's range, or its floor at least
        scale = protocol.color_range(values, protocol.color_floor(sim, color_by), color_range)
        limit = max(abs(scale[0]), abs(scale[1]))
    plot.draw(sim, ax=ax, color_by=color_by, limit=limit)
    ax.set_title(f"t = {float(sim.time):.3f} s", fontsize=10)
    out = io.BytesIO()
    figure.savefig(out, format="png")
    return out.getvalue()


def headless_kernel() -> bool:
    """Whether this kernel was started by nbclient (``nbconvert --execute``, papermill,
    myst-nb), where no front end will ever draw the widget: IPython keeps its history
    in memory there (see the module's docstring). False outside IPython."""
    try:
        from IPython.core.getipython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    history = getattr(shell, "history_manager", None)
    return str(getattr(history, "hist_file", "")) == ":memory:"
