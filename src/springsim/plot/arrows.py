"""Arrows: the velocity or the net force of each node, or of each body at its centre of
mass; their scale; drawing them (a quiver in 2D, shafts and heads as lines in 3D) and
moving them in an animation.

The net force on a node is m·a with a the acceleration springsim's physics gives it
now: springs (with their damping), gravity, drag and wind, external forces, gas, the
air on faces and node–node contact; evaluated by :mod:`springsim.reference` (the NumPy
oracle, which the kernel matches to 1e-12), since the kernel keeps its forces inside a
step. A pinned node is held: its net force is zero. Colliders and self-collision act
inside a step (they correct positions and velocities) and have no force to draw.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from springsim import reference

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from springsim.system import System

#: What ``arrows`` takes.
ARROWS = (None, "velocity", "force")
#: What ``arrows_per`` takes.
ARROWS_PER = ("node", "body")
#: The longest arrow's length, as a fraction of the widest side of the view, when
#: ``arrow_scale`` is not given (over every frame of an animation).
ARROW_FRACTION = 0.15
#: The unit of ``arrow_scale`` for each kind of arrow: metres drawn per m/s or per N.
ARROW_UNITS = {"velocity": "m per m/s", "force": "m per N"}
_ARROW_COLORS = {"velocity": "tab:green", "force": "tab:purple"}
# A 3D arrow's head: its length and half-width as fractions of the arrow's length.
_HEAD_LENGTH, _HEAD_WIDTH = 0.25, 0.1


def _check_arrows(arrows: Any, arrows_per: Any, arrow_scale: Any) -> float | None:
    """The arrow arguments checked; ``arrow_scale`` as a float (or None)."""
    if arrows not in ARROWS:
        raise ValueError(f"arrows must be None, 'velocity' or 'force', got {arrows!r}")
    if arrows_per not in ARROWS_PER:
        raise ValueError(f"arrows_per must be 'node' or 'body', got {arrows_per!r}")
    if arrow_scale is None:
        return None
    if isinstance(arrow_scale, bool) or not isinstance(
        arrow_scale, (int, float, np.integer, np.floating)
    ):
        raise TypeError(f"arrow_scale must be a number (m per m/s or m per N), got {arrow_scale!r}")
    if not (np.isfinite(arrow_scale) and arrow_scale >= 0):
        raise ValueError(f"arrow_scale must be finite and >= 0, got {arrow_scale!r}")
    return float(arrow_scale)


def _state(sim: System) -> reference.State:
    """The oracle's copy of ``sim`` (take the System's lock around it)."""
    return reference.State.from_system(sim)


def _net_forces(
    state: reference.State, x: np.ndarray, v: np.ndarray, pinned: np.ndarray
) -> np.ndarray:
    """The net force on each node at positions ``x`` and velocities ``v``, N, (N, dim):
    m·a from :func:`springsim.reference.accelerations`, zero on the ``pinned`` nodes."""
    state.pinned = np.asarray(pinned, dtype=bool)
    return reference.accelerations(state, x, v) * state.m[:, None]


def _per_body(
    kind: str, x: np.ndarray, vectors: np.ndarray, masses: np.ndarray, bodies: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(centres of mass, vectors) of each body: Σ m x / M and, for velocity, the
    momentum over the mass Σ m v / M; for force, the total Σ F. ``x`` and ``vectors``
    may hold several frames: (..., N, dim)."""
    count = int(bodies.max()) + 1 if len(bodies) else 0
    members = np.zeros((count, len(bodies)))
    members[bodies, np.arange(len(bodies))] = 1.0
    weights = members * masses
    mean = weights / weights.sum(axis=1, keepdims=True)
    centres = mean @ x
    if kind == "velocity":
        return centres, mean @ vectors
    return centres, members @ vectors


def _arrows_of(
    per: str,
    kind: str,
    x: np.ndarray,
    vectors: np.ndarray,
    masses: np.ndarray,
    bodies: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """(origins, vectors) of the arrows: each node's, or each body's at its centre of
    mass (``x``, ``vectors``: (..., N, dim), one frame or several)."""
    if per == "body" and bodies is not None:
        return _per_body(kind, x, vectors, masses, bodies)
    return x, vectors


def _auto_scale(vectors: np.ndarray, points: np.ndarray) -> float:
    """The scale that makes the longest of ``vectors`` (any shape (..., dim))
    :data:`ARROW_FRACTION` of the scene's size: the largest side of the box around
    ``points`` (what the view holds: the nodes and colliders as drawn), or 1 m when
    that box is a point; 0 if every vector is zero."""
    lengths = np.linalg.norm(vectors, axis=-1)
    longest = float(lengths.max()) if lengths.size else 0.0
    points = np.asarray(points).reshape(-1, np.shape(vectors)[-1])
    size = float(np.ptp(points, axis=0).max()) if len(points) else 0.0
    return ARROW_FRACTION * (size if size > 0 else 1.0) / longest if longest > 0 else 0.0


def _label(kind: str, scale: float) -> str:
    return f"{kind} arrows, {scale:.3g} {ARROW_UNITS[kind]}"


def _segments_3d(origins: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """3D arrows as line segments: the shafts (origin to tip) first, one per arrow, then
    two head strokes per arrow back from the tip."""
    tips = origins + vectors
    length = np.linalg.norm(vectors, axis=1, keepdims=True)
    # A direction across each arrow: its cross product with the axis it leans on least.
    least = np.eye(3)[np.argmin(np.abs(vectors), axis=1)]
    across = np.cross(vectors, least)
    size = np.linalg.norm(across, axis=1, keepdims=True)
    across = np.divide(across, size, out=np.zeros_like(across), where=size > 0) * length
    back = tips - _HEAD_LENGTH * vectors
    heads = [
        np.stack([tips, back + _HEAD_WIDTH * across], axis=1),
        np.stack([tips, back - _HEAD_WIDTH * across], axis=1),
    ]
    return np.concatenate([np.stack([origins, tips], axis=1), *heads])


def _add_arrows(
    ax: Axes,
    kind: str,
    origins: np.ndarray,
    vectors: np.ndarray,
    scale: float,
    dim: int,
) -> Any:
    """Draw arrows from ``origins`` along ``vectors`` · ``scale`` (both as drawn), over
    the rest, in their kind's colour (velocity green, force purple); gid
    ``"springsim-arrows"``, labelled with their kind and scale."""
    color = _ARROW_COLORS[kind]
    style = {"gid": "springsim-arrows", "label": _label(kind, scale), "zorder": 5}
    if dim == 2:
        return ax.quiver(
            origins[:, 0],
            origins[:, 1],
            scale * vectors[:, 0],
            scale * vectors[:, 1],
            angles="xy",
            scale_units="xy",
            scale=1.0,
            color=color,
            **style,
        )
    from mpl_toolkits.mplot3d.art3d import Line3DCollection

    lines = Line3DCollection(_segments_3d(origins, scale * vectors), colors=color, **style)
    lines.set_linewidth(1.5)
    ax.add_collection(lines)
    return lines


def _move_arrows(
    artist: Any, origins: np.ndarray, vectors: np.ndarray, scale: float, dim: int
) -> None:
    """Move what :func:`_add_arrows` drew."""
    if dim == 2:
        artist.set_offsets(origins)
        artist.set_UVC(scale * vectors[:, 0], scale * vectors[:, 1])
    else:
        artist.set_segments(_segments_3d(origins, scale * vectors))
