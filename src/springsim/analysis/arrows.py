"""What an arrow shows: the velocity or the net force of each node, or of each body at
its centre of mass; and the arrow options, checked. The plots (:mod:`springsim.plot`)
and the live viewer (:mod:`springsim.viewer`) draw these.

Velocity is ``sim.velocities``; per body (:meth:`springsim.System.bodies`), the body's
momentum over its mass, Σ m v / M, at its centre of mass Σ m x / M. The net force on a
node is m·a with a the acceleration springsim's physics gives it now: springs (with
their damping), gravity, drag and wind, external forces, gas, the air on faces and
node–node contact; evaluated by :mod:`springsim.reference` (the NumPy oracle, which the
kernel matches to 1e-12), since the kernel keeps its forces inside a step. A pinned
node is held: its net force is zero. Colliders and self-collision act inside a step
(they correct positions and velocities) and have no force to draw. Per body, the
forces on its nodes summed.

Drawn length = vector × scale, in metres per m/s or per N (:data:`ARROW_UNITS`); the
default scales make the longest arrow :data:`ARROW_FRACTION` of the scene's size.
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
#: The unit of ``arrow_scale`` for each kind of arrow: metres drawn per m/s or per N.
ARROW_UNITS: Final = {"velocity": "m per m/s", "force": "m per N"}


def check(arrows: Any, arrows_per: Any, arrow_scale: Any) -> float | None:
    """The arrow options checked; ``arrow_scale`` as a float or None.

    Raises
    ------
    ValueError
        ``arrows`` not in :data:`ARROWS`, ``arrows_per`` not in :data:`ARROWS_PER`, or
        a scale not finite and >= 0.
    TypeError
        A scale that is not a number.

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


def net_forces(
    state: reference.State, x: np.ndarray, v: np.ndarray, pinned: np.ndarray
) -> np.ndarray:
    """The net force on each node at positions ``x`` and velocities ``v``, N, (N, dim):
    m·a from :func:`springsim.reference.accelerations` on ``state`` (the oracle's copy
    of a System: :meth:`springsim.reference.State.from_system`), zero on the ``pinned``
    nodes."""
    state.pinned = np.asarray(pinned, dtype=bool)
    return reference.accelerations(state, x, v) * state.m[:, None]


def per_body(
    kind: str, x: np.ndarray, vectors: np.ndarray, masses: np.ndarray, bodies: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(centres of mass, vectors) of each body: Σ m x / M and, for velocity, the
    momentum over the mass Σ m v / M; for force, the total Σ F. ``x`` and ``vectors``
    may hold several frames: (..., N, dim); ``bodies`` labels each node 0 ... B − 1."""
    count = int(bodies.max()) + 1 if len(bodies) else 0
    members = np.zeros((count, len(bodies)))
    members[bodies, np.arange(len(bodies))] = 1.0
    weights = members * masses
    mean = weights / weights.sum(axis=1, keepdims=True)
    centres = mean @ x
    if kind == "velocity":
        return centres, mean @ vectors
    return centres, members @ vectors


def of_system(sim: Any, kind: str, per: str) -> tuple[np.ndarray, np.ndarray]:
    """(origins, vectors) of the arrows of ``sim`` now, (A, dim) each: per node, the
    positions and velocities (m/s) or net forces (N); per body, the centres of mass and
    the bodies' velocities or total forces. Take the System's lock around it.

    Examples
    --------
    >>> import springsim as ss
    >>> sim = ss.System(dim=2)
    >>> _ = sim.add_nodes([[0, 0], [1, 0]], masses=[1.0, 3.0], velocities=[[4, 0], [0, 0]])
    >>> _ = sim.add_springs([[0, 1]], stiffness=1.0)
    >>> origins, v = of_system(sim, "velocity", "body")
    >>> origins.tolist(), v.tolist()                  # Σ m x / M, Σ m v / M
    ([[0.75, 0.0]], [[1.0, 0.0]])
    >>> sim.gravity = 0
    >>> of_system(sim, "force", "node")[1].tolist()   # a spring at rest: no force
    [[0.0, 0.0], [0.0, 0.0]]
    """
    x = np.array(sim.positions, dtype=np.float64)
    if kind == "velocity":
        v = np.array(sim.velocities, dtype=np.float64)
    else:
        v = net_forces(reference.State.from_system(sim), x, sim.velocities, sim.pinned)
    if per == "node" or not len(x):
        return x, v
    return per_body(kind, x, v, np.asarray(sim.masses, dtype=np.float64), sim.bodies())
