"""The viewer's arrows: the scale they are drawn at, frame by frame (what they show,
and their options: :mod:`springsim.analysis.arrows`).

Force arrows cost a NumPy evaluation of every force per frame: slow for large systems.

Drawn length = vector × scale (metres per m/s, or per N). The default scale keeps the
longest arrow seen since the arrows were switched on at most
:data:`~springsim.analysis.arrows.ARROW_FRACTION` of the scene's size (the largest
side of the box around the nodes and colliders): the largest such scale, which only
ever shrinks, so that lengths compare over time.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from springsim.analysis.arrows import ARROW_FRACTION, of_system


def fitted_scale(vectors: np.ndarray, size: float, previous: float) -> float:
    """The default scale after this frame: the largest that draws the longest of
    ``vectors`` at most ``ARROW_FRACTION`` × ``size`` (1 m if ``size`` is 0), and no
    larger than ``previous`` (it only shrinks); ``previous`` while every vector is
    zero (``inf`` before any: then nothing is drawn, see :func:`drawn`).

    Examples
    --------
    >>> fitted_scale(np.array([[3.0, 4.0]]), 2.0, float("inf"))   # 0.15 × 2 m / 5 m/s
    0.06
    >>> fitted_scale(np.array([[0.3, 0.4]]), 2.0, 0.06)            # slower: it stays
    0.06
    """
    lengths = np.linalg.norm(vectors, axis=-1)
    longest = float(lengths.max()) if lengths.size else 0.0
    if not (longest > 0 and np.isfinite(longest)):
        return previous
    return min(previous, ARROW_FRACTION * (size if size > 0 else 1.0) / longest)


def drawn(vectors: np.ndarray, scale: float) -> np.ndarray:
    """The arrows as drawn, metres: ``vectors × scale`` (zero while the scale is
    still ``inf``: no arrow has had a length yet)."""
    if not np.isfinite(scale):
        return np.zeros_like(vectors)
    return vectors * scale


def frame_arrows(
    sim: Any,
    kind: str,
    per: str,
    scale: float | None,
    fitted: float,
    bounds: Any = None,
) -> tuple[tuple[str, str, float, np.ndarray, np.ndarray], float]:
    """A frame's arrows of ``sim`` — (kind, per, scale, origins, vectors as drawn), as
    :func:`springsim.viewer.protocol.frame` takes them — and the default scale after
    it: ``scale`` when given, else :func:`fitted_scale` from ``fitted`` (the default
    so far) over the scene's size, the largest side of the box around the origins and
    ``bounds`` (the colliders' box, ``[lo, hi]``, or None)."""
    origins, vectors_now = of_system(sim, kind, per)
    if scale is None:
        points = np.concatenate([origins] + ([np.asarray(bounds)] if bounds else []))
        size = float(np.ptp(points, axis=0).max()) if len(points) else 0.0
        fitted = fitted_scale(vectors_now, size, fitted)
        scale = fitted
    return (kind, per, scale, origins, drawn(vectors_now, scale)), fitted
