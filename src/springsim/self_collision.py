"""Self-collision of surfaces: node–triangle repulsion with a thickness;
:class:`SelfCollision`, the setting.

The kernel's side is ``csrc/kernel/contact/self_collision.c``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from springsim import _core
from springsim._checks import _scalar


class SelfCollision(NamedTuple):
    """The self-collision setting of a system (:attr:`System.self_collision`).

    Attributes
    ----------
    thickness : float
        h, m: a node closer than this to a triangle it is not a vertex of is pushed away.
    stiffness : float
        k, N/m: the push is k (h − d) at distance d.
    friction : float
        Coulomb coefficient μ of the sliding between node and triangle.
    crossings : int
        Nodes seen to go through a triangle since it was turned on (a lower bound).
    """

    thickness: float
    stiffness: float
    friction: float
    crossings: int


def _default_stiffness(sim: _core.System) -> float:
    """The largest finite spring stiffness of the system, N/m (see
    :func:`enable_self_collision`); ValueError when there is none."""
    k = np.asarray(sim._view("stiffness"))
    k = k[np.isfinite(k) & (k > 0)]
    if k.size == 0:
        raise ValueError(
            "stiffness=None takes the largest spring stiffness, and this system has no "
            "spring with a finite stiffness > 0: give stiffness in N/m"
        )
    return float(k.max())


def enable_self_collision(
    self: _core.System,
    thickness: float,
    *,
    stiffness: float | None = None,
    friction: float = 0.0,
) -> None:
    """Keep the system's faces from passing through themselves and each other.

    A node p that is not a vertex of a triangle and comes within ``thickness`` h
    of it, at distance d from its closest point q, is pushed away from q with
    k (h − d), and the triangle's three nodes are pushed back with the same force
    split by q's barycentric weights: momentum is conserved exactly, and the push
    is the gradient of the potential ½ k (h − d)², which :meth:`energy` reports as
    ``contact``. With ``friction`` μ, sliding between node and triangle is resisted
    by μ k (h − d) (smoothed below 1 mm/s); what it takes goes into
    :attr:`dissipated`. Every method feels it: the force methods at every
    evaluation, ``"implicit_euler"`` as an explicit force (like gravity and gas);
    ``"xpbd"`` solves it as a hard constraint d ≥ h in each pass, with friction.

    The guarantee (docs/guide/self-collision.md): a node meeting a triangle at relative
    speed v is stopped before it crosses if v·dt < h and v < h·√(k / m), m the
    larger of the node's mass and the triangle's nodes' masses. Beyond that it can
    go through; such crossings are counted in :attr:`self_collision_crossings`
    (those the contact list sees: a lower bound).

    Parameters
    ----------
    thickness : float
        h, m, finite and > 0, below half the shortest face edge at the current
        positions (otherwise the neighbours of a triangle would touch it at rest).
    stiffness : float, optional
        k, N/m, finite and > 0. Default: the largest spring stiffness of the
        system (so the stable step barely changes: a node has several springs).
    friction : float
        Coulomb coefficient μ >= 0.

    Raises
    ------
    ValueError
        For a 2D system, a system without faces, or a value out of range; nothing
        changes.
    TypeError
        When a value is not a real number.

    Examples
    --------
    >>> import springsim as ss
    >>> cloth = ss.cloth(5, 5, width=1.0, height=1.0, mass=0.01, stiffness=100.0)
    >>> cloth.enable_self_collision(0.05)
    >>> cloth.self_collision
    SelfCollision(thickness=0.05, stiffness=100.0, friction=0.0, crossings=0)
    """
    h = _scalar(thickness, "thickness")
    mu = _scalar(friction, "friction")
    if self.dim != 3:
        raise ValueError("self-collision needs a 3D system (its faces are triangles in space)")
    faces = self._view("faces")
    if len(faces) == 0:
        raise ValueError("self-collision acts on faces, and this system has none: add_faces")
    x = self._view("positions")
    edges = np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]])
    shortest = float(np.linalg.norm(x[edges[:, 1]] - x[edges[:, 0]], axis=1).min())
    if not (math.isfinite(h) and 0.0 < h < 0.5 * shortest):
        raise ValueError(
            f"thickness is {h}: must be > 0 and below half the shortest face edge "
            f"({0.5 * shortest:.6g} m), or the neighbours of a triangle would touch it "
            "at rest"
        )
    k = _default_stiffness(self) if stiffness is None else _scalar(stiffness, "stiffness")
    self._set_self_collision(h, k, mu)


def disable_self_collision(self: _core.System) -> None:
    """Turn self-collision off (nothing when it is off).

    Examples
    --------
    >>> import springsim as ss
    >>> cloth = ss.cloth(5, 5, width=1.0, height=1.0, mass=0.01, stiffness=100.0)
    >>> cloth.enable_self_collision(0.05)
    >>> cloth.disable_self_collision()
    >>> cloth.self_collision is None
    True
    """
    self._set_self_collision(0.0, 0.0, 0.0)


def self_collision(self: _core.System) -> SelfCollision | None:
    """The self-collision setting, or None when it is off (read-only: use
    :meth:`enable_self_collision`).

    Examples
    --------
    >>> import springsim as ss
    >>> ss.cloth(3, 3, width=1.0, height=1.0, mass=0.1, stiffness=10.0).self_collision is None
    True
    """
    setting = self._self_collision()
    return None if setting is None else SelfCollision(*setting)


def self_collision_crossings(self: _core.System) -> int:
    """Nodes seen to go through a triangle since self-collision was turned on.

    Whenever the contact list (the node–triangle pairs closer than about twice the
    thickness) is rebuilt, and at the end of every step call, its pairs are checked:
    a node whose side of the triangle's plane changed since the last check while its
    projection was inside the triangle went through. A node that jumps further than
    the list reaches, or goes through and back between two checks, is not seen, so
    this is a lower bound; 0 when off. A rolled-back step leaves it as it was.

    Examples
    --------
    >>> import springsim as ss
    >>> ss.cloth(3, 3, width=1.0, height=1.0, mass=0.1, stiffness=10.0).self_collision_crossings
    0
    """
    setting = self._self_collision()
    return 0 if setting is None else setting[3]
