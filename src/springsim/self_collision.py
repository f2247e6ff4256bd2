"""Self-collision of surfaces: node–triangle repulsion with a thickness, and edge–edge
contact if asked; :class:`SelfCollision`, the setting.

The kernel's side is ``csrc/kernel/contact/self_collision.c`` (and ``edge_contact.c``).
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
        Nodes seen to go through a triangle, and edges through an edge, since it was
        turned on (a lower bound).
    edges : bool
        Whether edges are kept from passing each other too (edge–edge contact).
    """

    thickness: float
    stiffness: float
    friction: float
    crossings: int
    edges: bool = False


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
    edges: bool = False,
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

    With ``edges=True``, two edges of the faces (that share no node and are not
    neighbours across a face edge) closer than h, at distance d between their
    closest points, are pushed apart by the same law, k (h − d), shared between the
    four nodes by where the closest points lie: so two cloths, or two folds of one,
    that meet edge across edge cannot slip through each other between their nodes.
    It costs about 4× the node–triangle contact on the bench's folded cloth
    (docs/guide/self-collision.md), so it is off by default: turn it on for coarse
    meshes, narrow strips and crossing folds.

    The guarantee (docs/guide/self-collision.md): a node meeting a triangle at relative
    speed v is stopped before it crosses if v·dt < h and v < h·√(k / m), m the
    larger of the node's mass and the triangle's nodes' masses; with ``edges``, so is
    an edge meeting an edge, m the heaviest of their four nodes. Beyond that it can
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
    edges : bool
        Edge–edge contact too (default False).

    Raises
    ------
    ValueError
        For a 2D system, a system without faces, or a value out of range; nothing
        changes.
    TypeError
        When a value is not a real number, or ``edges`` not a bool.

    Examples
    --------
    >>> import springsim as ss
    >>> cloth = ss.cloth(5, 5, width=1.0, height=1.0, mass=0.01, stiffness=100.0)
    >>> cloth.enable_self_collision(0.05)
    >>> cloth.self_collision
    SelfCollision(thickness=0.05, stiffness=100.0, friction=0.0, crossings=0, edges=False)
    >>> cloth.enable_self_collision(0.05, edges=True)
    >>> cloth.self_collision.edges
    True
    """
    h = _scalar(thickness, "thickness")
    mu = _scalar(friction, "friction")
    if not isinstance(edges, (bool, np.bool_)):
        raise TypeError(f"edges must be True or False, not {type(edges).__name__}")
    if self.dim != 3:
        raise ValueError("self-collision needs a 3D system (its faces are triangles in space)")
    faces = self._view("faces")
    if len(faces) == 0:
        raise ValueError("self-collision acts on faces, and this system has none: add_faces")
    x = self._view("positions")
    sides = np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]])
    shortest = float(np.linalg.norm(x[sides[:, 1]] - x[sides[:, 0]], axis=1).min())
    if not (math.isfinite(h) and 0.0 < h < 0.5 * shortest):
        raise ValueError(
            f"thickness is {h}: must be > 0 and below half the shortest face edge "
            f"({0.5 * shortest:.6g} m), or the neighbours of a triangle would touch it "
            "at rest"
        )
    k = _default_stiffness(self) if stiffness is None else _scalar(stiffness, "stiffness")
    self._set_self_collision(h, k, mu, 1.0 if edges else 0.0)


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
    """Nodes seen to go through a triangle, and edges through an edge, since
    self-collision was turned on; and, with :attr:`segment_contact`, strings' segments
    seen to go through each other (checked after every substep: see the user guide,
    "Strings with radii").

    Whenever the contact list (the node–triangle pairs, and with ``edges`` the edge
    pairs, closer than about twice the thickness) is rebuilt, and at the end of every
    step call, its pairs are checked: a node whose side of the triangle's plane changed
    since the last check while its projection was inside the triangle went through;
    so did two edges whose twist about each other, ((b − a) × (d − c))·(c − a),
    changed sign while their closest points were inside both at both checks. A node
    that jumps further than the list reaches, or goes through and back between two
    checks, is not seen, so this is a lower bound; 0 when both are off. A rolled-back step
    leaves it as it was.

    Examples
    --------
    >>> import springsim as ss
    >>> ss.cloth(3, 3, width=1.0, height=1.0, mass=0.1, stiffness=10.0).self_collision_crossings
    0
    """
    return self._crossings()
