"""Builders of one-dimensional bodies: :func:`string`, and :func:`balloon` (a ball on a
string), following the conventions of :mod:`springsim.builders`.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from springsim.builders.arguments import (
    _damping,
    _dimension,
    _integer,
    _node_masses,
    _number,
    _pin_nodes,
    _system,
    _vector,
)
from springsim.builders.bodies import ball
from springsim.builders.materials import (
    _either,
    _placement,
    _rotation,
    _unit,
    edge_weights,
    string_springs,
)
from springsim.system import System


def string(
    n: int,
    *,
    length: float,
    mass: npt.ArrayLike | None = None,
    stiffness: float | None = None,
    damping: float | None = None,
    dim: int = 3,
    start: npt.ArrayLike | None = None,
    direction: npt.ArrayLike | None = None,
    rotation: npt.ArrayLike | None = None,
    pin: str | npt.ArrayLike | None = "start",
    linear_density: float | None = None,
    ea: float | None = None,
    tension: float | None = None,
    damping_ratio: float | None = None,
) -> System:
    """A string (a chain) of ``n`` nodes joined by ``n − 1`` equal springs.

    The Gamasutra article's first model and the forum tutorial's: a straight line of
    nodes, each joined to the next. Node 0 is at ``start``; spring i joins nodes i and
    i + 1. Stretched out horizontally (the default) and pinned at one end, it swings
    down under gravity like a pendulum that bends.

    Per spring (``mass``, ``stiffness``, ``damping``) or as a material:
    ``linear_density`` μ (kg/m of the string as built; each node carries the half
    segments beside it, μ·length/(n − 1) inside, half that at the ends), ``ea`` (EA,
    N: a segment of rest length r has k = EA / r) and ``tension`` T (N: the string is
    built stretched to ``length``, carrying T; its rest length is shorter). Pinned at
    both ends, its fundamental is then f1 = √(T/μ) / (2·length) sideways and
    √((EA + T)/μ) / (2·length) along it, to within (π/(2(n − 1)))²/6 for the
    discrete chain.

    Parameters
    ----------
    n : int
        Number of nodes, >= 2.
    length : float
        Length of the whole string as built, m, > 0; each spring spans
        ``length / (n − 1)`` (its rest length, unless ``tension``).
    mass : float or array_like, shape (n,)
        Total mass, kg, spread equally over the nodes; or per-node masses. Or give
        ``linear_density``.
    stiffness : float
        Of each spring, N/m, >= 0. A chain of n − 1 springs of stiffness k stretches
        like one spring of k / (n − 1). Or give ``ea``.
    damping : float, optional
        Axial damping of each spring, N·s/m, >= 0; 0 by default. Or ``damping_ratio``.
    dim : {3, 2}
        Spatial dimension.
    start : array_like, shape (dim,), optional
        Position of node 0, m; the origin by default.
    direction : array_like, shape (dim,), optional
        Direction from node 0 to node n − 1 (normalised here); +x by default.
    rotation : array_like, shape (dim, dim), float (2D) or scipy Rotation, optional
        Instead of ``direction``: a rotation (about ``start``) of the string along +x;
        in 2D also an angle, rad, counter-clockwise.
    pin : {"start", "end", "both", "middle", "none"}, None or array_like of int
        Which nodes are anchors. "middle" pins node ``(n − 1) // 2``, as the forum
        tutorial does: the middle node for odd n, and for even n the one of the
        two middle nodes nearer the start.
    linear_density : float, optional
        μ, kg/m, > 0: instead of ``mass``.
    ea : float, optional
        EA (Young's modulus × cross-section), N, > 0: instead of ``stiffness``.
    tension : float, optional
        T, N, >= 0: the string is built under this tension (needs ``ea`` or
        ``stiffness``, and k > T / segment length).
    damping_ratio : float, optional
        ζ >= 0, instead of ``damping``: each spring gets c = 2 ζ √(k m_eff), m_eff
        the reduced mass of its two nodes (a pinned node counts as infinitely heavy),
        so that one spring between its two nodes is damped at ratio ζ. A whole
        string's modes are damped at ζ ω / ω_spring (ω_spring = √(k / m_eff)): its
        fastest ones at about ζ, its slow ones much less.

    Returns
    -------
    System

    Raises
    ------
    TypeError
        A non-integer ``n`` or ``dim``, a non-numeric value or pin.
    ValueError
        n < 2, length <= 0, a negative stiffness or damping, a zero direction, a
        wrong shape, an unknown pin name (the message lists the valid ones), both or
        neither of mass and linear_density (stiffness and ea), both damping and
        damping_ratio, direction and rotation, a rotation that is not one, a tension
        the springs cannot carry.

    Examples
    --------
    >>> import springsim as ss
    >>> rope = ss.string(5, length=2.0, mass=0.5, stiffness=200.0, dim=2)
    >>> rope.positions[:, 0].tolist(), rope.num_springs, rope.pinned.tolist()
    ([0.0, 0.5, 1.0, 1.5, 2.0], 4, [True, False, False, False, False])
    >>> rope.step(1e-3, steps=500)  # it swings down
    >>> bool(rope.positions[-1, 1] < -0.5)
    True

    A guitar string, 0.65 m, 1 g/m, 70 N, pinned at both ends: f1 = √(T/μ)/(2L) = 203.5 Hz.

    >>> import numpy as np
    >>> guitar = ss.string(40, length=0.65, linear_density=1e-3, ea=2e4, tension=70.0,
    ...                    pin="both")
    >>> round(float(guitar.normal_modes(1).frequencies[0]) / (2 * np.pi), 1)
    203.5
    """
    n = _integer(n, "n", 2)
    length = _number(length, "length", positive=True)
    _either(mass, linear_density, "mass or linear_density")
    _either(stiffness, ea, "stiffness or ea")
    k = None if stiffness is None else _number(stiffness, "stiffness")
    ea = None if ea is None else _number(ea, "ea", positive=True)
    tension = None if tension is None else _number(tension, "tension")
    c, ratio = _damping(damping, damping_ratio)
    dim = _dimension(dim)
    start = _vector(start, "start", dim)
    turn, _ = _placement(rotation, dim, direction, "direction")
    axis = turn[:, 0] if direction is None else _unit(direction, "direction", dim)
    segment = length / (n - 1)
    if mass is not None:
        masses = _node_masses(mass, n)
    else:  # each node carries the half segments beside it
        masses = edge_weights(n) * _number(linear_density, "linear_density", positive=True)
        masses *= segment
    k, rest = string_springs(segment, k, ea, tension)
    last = n - 1
    named = {
        "start": np.array([0]),
        "end": np.array([last]),
        "both": np.array([0, last]),
        "middle": np.array([last // 2]),
    }
    pinned = _pin_nodes(pin, named, n)
    x = start + np.linspace(0.0, length, n)[:, None] * axis
    pairs = np.stack([np.arange(last), np.arange(1, n)], axis=1)
    # Without tension the rest lengths are the built distances, as for every builder.
    rest_lengths = None if tension is None else rest
    return _system(
        x, masses, pairs, k, c, pinned=pinned, damping_ratio=ratio, rest_lengths=rest_lengths
    )


def balloon(
    *,
    radius: float,
    string_length: float,
    mass: float,
    stiffness: float,
    damping: float = 0.0,
    dim: int = 3,
    subdivisions: int | None = None,
    nodes: int | None = None,
    string_nodes: int = 10,
    string_mass: float | None = None,
    string_stiffness: float | None = None,
    center: npt.ArrayLike | None = None,
    rotation: npt.ArrayLike | None = None,
    pin: str | npt.ArrayLike | None = "end",
    nrt: float | None = None,
    settle: bool = False,
) -> System:
    """A balloon on a string: a :func:`ball` with a :func:`string` tied below it.

    The Gamasutra article's balloon, "a string connected to a spherical jelly". The
    string hangs straight down (−y; R (−y) when turned by ``rotation`` about the
    ball's centre) from the ball's lowest node: its top node is
    ``string_length / string_nodes`` below that node and joined to it by one more
    spring, so the string's springs span ``string_length`` in all. Its bottom node
    is pinned: someone holds the balloon.

    Nodes: the ball's (see :func:`ball`), then the string's, top to bottom. Springs:
    the ball's, the string's (top to bottom), and last the knot joining them.
    Faces: the ball's.

    Without ``nrt`` the ball is a bare skin: limp, it falls onto the hand. With
    ``nrt`` it is full of gas (pressure body 0) and keeps its round shape. Gas
    pressure alone pushes equally on every side and lifts nothing: to make the
    balloon float, give its nodes a lift (buoyancy), e.g.
    ``sim.external_forces[:-string_nodes, 1] = lift / (sim.num_nodes - string_nodes)``.

    Parameters
    ----------
    radius : float
        Of the ball, m, > 0.
    string_length : float
        From the ball's lowest node to the string's end, m, > 0.
    mass : float
        Total mass of the balloon, ball and string, kg, > 0.
    stiffness : float
        Of each spring of the ball, N/m, >= 0.
    damping : float
        Axial damping of every spring, N·s/m, >= 0.
    dim : {3, 2}
        Spatial dimension.
    subdivisions : int, optional
        3D only: the ball's icosphere level (see :func:`ball`), 1 by default.
    nodes : int, optional
        2D only: the ball's ring nodes, 16 by default.
    string_nodes : int
        Nodes of the string, >= 1; it has as many springs (one is the knot).
    string_mass : float, optional
        The part of ``mass`` on the string, spread over its nodes, 0 < string_mass
        < mass; a tenth of ``mass`` by default.
    string_stiffness : float, optional
        Of each spring of the string and of the knot, N/m; ``stiffness`` by default.
    center : array_like, shape (dim,), optional
        The ball's centre, m; the origin by default.
    rotation : array_like, shape (dim, dim), float (2D) or scipy Rotation, optional
        The whole balloon turned about ``center``; in 2D also an angle, rad.
    pin : {"end", "none"}, None or array_like of int
        Anchors: the string's bottom node (the default), nothing, or these nodes.
    nrt : float, optional
        n·R·T of the gas in the ball (see :func:`ball`); None: no gas.
    settle : bool
        Inflate the ball to its equilibrium under the gas before the string is tied
        on (see :func:`ball`; needs SciPy). False (the default): the ball starts at
        its springs' rest shape, out of equilibrium with gas, and wobbles as the gas
        inflates it.

    Returns
    -------
    System

    Raises
    ------
    TypeError
        A non-integer count, a non-numeric value or pin, a ``settle`` that is not a bool.
    ValueError
        A size <= 0, a count out of range, string_mass not in (0, mass), a negative
        stiffness, damping or nrt, an unknown pin name (the message lists the valid ones).

    Examples
    --------
    >>> import springsim as ss
    >>> toy = ss.balloon(radius=0.2, string_length=1.0, mass=0.05, stiffness=50.0)
    >>> toy.num_nodes, toy.num_springs, round(float(toy.masses.sum()), 12)
    (52, 130, 0.05)
    >>> toy.positions[-1].round(12).tolist(), bool(toy.pinned[-1])
    ([0.0, -1.2, 0.0], True)
    """
    dim = _dimension(dim)
    if subdivisions is None and nodes is None:
        subdivisions, nodes = (1, None) if dim == 3 else (None, 16)
    string_length = _number(string_length, "string_length", positive=True)
    string_nodes = _integer(string_nodes, "string_nodes", 1)
    total = _number(mass, "mass", positive=True)
    string_mass = total / 10 if string_mass is None else _number(string_mass, "string_mass")
    if not 0 < string_mass < total:
        raise ValueError(f"string_mass must be in (0, mass = {total}), got {string_mass}")
    k = _number(stiffness, "stiffness")
    k_string = k if string_stiffness is None else _number(string_stiffness, "string_stiffness")
    center = _vector(center, "center", dim)
    turn = _rotation(rotation, dim)
    if not (pin is None or isinstance(pin, str)):
        pin_nodes = pin  # indices into the whole balloon: pinned once it is assembled
        pin = None
    else:
        pin_nodes = None
        _pin_nodes(pin, {"end": np.zeros(1, np.int64)}, 1)  # check the name first

    sim = ball(
        radius=radius,
        mass=total - string_mass,
        stiffness=k,
        damping=damping,
        dim=dim,
        subdivisions=subdivisions,
        nodes=nodes,
        center=center,
        rotation=turn,
        nrt=nrt,
        settle=settle,
    )
    lowest = 11 if dim == 3 else 0  # the node at −y before the rotation (see ball)
    segment = string_length / string_nodes
    down = -turn[:, 1]
    top = sim.positions[lowest] + segment * down
    if string_nodes == 1:
        tail = System(dim=dim)
        tail.add_nodes(top, masses=string_mass, pinned=pin == "end")
    else:
        tail = string(
            string_nodes,
            length=string_length - segment,
            mass=string_mass,
            stiffness=k_string,
            damping=damping,
            dim=dim,
            start=top,
            direction=down,
            pin="end" if pin == "end" else None,
        )
    added = sim.add(tail)
    sim.connect(lowest, added[0], stiffness=k_string, damping=damping)
    if pin_nodes is not None:
        sim.pin(_pin_nodes(pin_nodes, {"end": np.array([-1])}, sim.num_nodes))
    return sim
