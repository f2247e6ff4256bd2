"""The viewer's arrows: each node's (or each body's) velocity or net force, and the
scale they are drawn at.

Velocity is ``sim.velocities``; per body, the body's momentum over its mass, Σ m v / M,
at its centre of mass Σ m x / M (bodies: :meth:`springsim.System.bodies`). The net
force on a node is m a, with a from :func:`springsim.reference.accelerations` (the
NumPy oracle, which the kernel matches to 1e-12: the kernel keeps its forces inside a
step): springs and their damping, gravity, drag and wind, external forces, gas, air on
faces and node–node contact; zero on a pinned node. Colliders act inside a step and
have no force to draw. Per body, the forces on its nodes summed. Force arrows cost a
NumPy evaluation of every force per frame: slow for large systems.

Drawn length = vector × scale (metres per m/s, or per N). The default scale keeps the
longest arrow seen since the arrows were switched on at most :data:`ARROW_FRACTION` of
the scene's size (the largest side of the box around the nodes and colliders): the
largest such scale, which only ever shrinks, so that lengths compare over time.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from springsim import reference

#: What ``arrows`` takes.
ARROWS: Final = (None, "velocity", "force")
#: What ``arrows_per`` takes.
ARROWS_PER: Final = ("node", "body")
#: The longest arrow, as a fraction of the scene's size, at the default scale.
ARROW_FRACTION: Final = 0.15


def check(arrows: Any, arrows_per: Any, arrow_scale: Any) -> float | None:
    """The arrow options checked; ``arrow_scale`` as a float or None.

    Examples
    --------
    >>> check("velocity", "body", 0.5)
    0.5
    >>> check("speed", "node", None)
    Traceback (most recent call last):
    ...
    ValueError: arrows must be None, 'velocity' or 'force', not 'speed'
    """
    if arrows not in ARROWS:
        raise ValueError(f"arrows must be None, 'velocity' or 'force', not {arrows!r}")
    if arrows_per not in ARROWS_PER:
        raise ValueError(f"arrows_per must be 'node' or 'body', not {arrows_per!r}")
    if arrow_scale is None:
        return None
    if isinstance(arrow_scale, bool) or not isinstance(
        arrow_scale, (int, float, np.integer, np.floating)
    ):
        raise TypeError(f"arrow_scale must be a number (m per m/s or per N), not {arrow_scale!r}")
    if not (np.isfinite(arrow_scale) and arrow_scale >= 0):
        raise ValueError(f"arrow_scale must be finite and >= 0, not {arrow_scale!r}")
    return float(arrow_scale)


def vectors(sim: Any, kind: str, per: str) -> tuple[np.ndarray, np.ndarray]:
    """(origins, vectors) of the arrows of ``sim`` now, (A, dim) each: per node, the
    positions and velocities (m/s) or net forces (N); per body, the centres of mass and
    the bodies' velocities or total forces.

    Examples
    --------
    >>> import springsim as ss
    >>> sim = ss.System(dim=2)
    >>> _ = sim.add_nodes([[0, 0], [1, 0]], masses=[1.0, 3.0], velocities=[[4, 0], [0, 0]])
    >>> _ = sim.add_springs([[0, 1]], stiffness=1.0)
    >>> origins, v = vectors(sim, "velocity", "body")
    >>> origins.tolist(), v.tolist()                  # Σ m x / M, Σ m v / M
    ([[0.75, 0.0]], [[1.0, 0.0]])
    >>> sim.gravity = 0
    >>> vectors(sim, "force", "node")[1].tolist()     # a spring at rest: no force
    [[0.0, 0.0], [0.0, 0.0]]
    """
    x = np.array(sim.positions, dtype=np.float64)
    if kind == "velocity":
        v = np.array(sim.velocities, dtype=np.float64)
    else:
        state = reference.State.from_system(sim)
        v = reference.accelerations(state, state.x, state.v) * state.m[:, None]
        v[np.asarray(sim.pinned, dtype=bool)] = 0.0
    if per == "node" or not len(x):
        return x, v
    bodies = np.asarray(sim.bodies())
    masses = np.asarray(sim.masses, dtype=np.float64)
    count = int(bodies.max()) + 1
    total = np.bincount(bodies, weights=masses, minlength=count)[:, None]
    centres = np.stack(
        [np.bincount(bodies, weights=masses * x[:, k], minlength=count) for k in range(x.shape[1])],
        axis=1,
    )
    if kind == "velocity":
        summed = np.stack(
            [
                np.bincount(bodies, weights=masses * v[:, k], minlength=count)
                for k in range(x.shape[1])
            ],
            axis=1,
        )
        return centres / total, summed / total
    forces = np.stack(
        [np.bincount(bodies, weights=v[:, k], minlength=count) for k in range(x.shape[1])], axis=1
    )
    return centres / total, forces


def fitted_scale(vectors: np.ndarray, size: float, previous: float) -> float:
    """The default scale after this frame: the largest that draws the longest of
    ``vectors`` at most :data:`ARROW_FRACTION` × ``size`` (1 m if ``size`` is 0), and
    no larger than ``previous`` (it only shrinks); ``previous`` while every vector is
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
    origins, vectors_now = vectors(sim, kind, per)
    if scale is None:
        points = np.concatenate([origins] + ([np.asarray(bounds)] if bounds else []))
        size = float(np.ptp(points, axis=0).max()) if len(points) else 0.0
        fitted = fitted_scale(vectors_now, size, fitted)
        scale = fitted
    return (kind, per, scale, origins, drawn(vectors_now, scale)), fitted
