"""What a figure shows, for tests that check plots as a viewer sees them: the text
drawn (tick labels, axis labels, offsets, titles) with its box on the canvas, and the
places where two boxes meet, a text meets a colour bar or leaves the figure."""

import itertools

from matplotlib.backends.backend_agg import FigureCanvasAgg


def render(fig):
    """Draw ``fig`` on an Agg canvas (also once pyplot has closed it); its renderer."""
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def drawn_texts(fig):
    """(axes, text, box in pixels) of every text drawn: each axis's label, offset and
    the labels of the ticks inside its limits (3D axes place their tick labels while
    drawing, so they are read from the ticks drawn, not from get_ticklabels, which
    would move them back), and the titles."""
    renderer = render(fig)
    texts = []
    for ax in fig.axes:
        axes = [ax.xaxis, ax.yaxis] + ([ax.zaxis] if hasattr(ax, "zaxis") else [])
        for axis in axes:
            texts += [(ax, t) for t in (axis.label, axis.offsetText)]
            low, high = sorted(axis.get_view_interval())
            margin = 1e-9 * max(1.0, high - low)
            for tick, where in zip(axis.majorTicks, axis.get_majorticklocs(), strict=False):
                if low - margin <= where <= high + margin:
                    texts += [(ax, tick.label1), (ax, tick.label2)]
        texts.append((ax, ax.title))
    return [
        (ax, t.get_text(), t.get_window_extent(renderer))
        for ax, t in texts
        if t.get_visible() and t.get_text()
    ]


def _meet(a, b, slack=1.0):
    """Whether boxes a and b overlap by more than ``slack`` pixels both ways."""
    across = a.x0 < b.x1 - slack and b.x0 < a.x1 - slack
    return across and a.y0 < b.y1 - slack and b.y0 < a.y1 - slack


def collisions(fig):
    """Every pair of texts whose boxes overlap (by more than a pixel), every text that
    runs into another Axes' colour bar, and every text not wholly inside the figure."""
    texts = drawn_texts(fig)
    found = [
        (a, b)
        for ((_, a, box_a), (_, b, box_b)) in itertools.combinations(texts, 2)
        if _meet(box_a, box_b)
    ]
    renderer = render(fig)
    for bar in fig.axes:
        if hasattr(bar, "_colorbar"):
            box = bar.get_window_extent(renderer)
            found += [(t, "colour bar") for ax, t, b in texts if ax is not bar and _meet(b, box)]
    page = fig.bbox
    found += [
        (t, "edge of the figure")
        for _, t, b in texts
        if b.x0 < page.x0 or b.y0 < page.y0 or b.x1 > page.x1 or b.y1 > page.y1
    ]
    return found


def with_gid(ax, gid):
    """The artists of ``ax`` (collections, patches, lines) with this gid."""
    return [a for a in (*ax.collections, *ax.patches, *ax.lines) if a.get_gid() == gid]
