"""Node–node contact: per-node radii and groups, the contact law, the group filter; and
segment contact, the same law between the springs of strings with radii.

The kernel's half is ``csrc/kernel/contact/contact.c`` (the grid search, the energy books),
``contact_law.c`` (the law, the filter) and ``segment_contact.c``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from springsim import _core
from springsim._checks import _as_numbers, _scalar

_INT32 = np.iinfo(np.int32)


def _group(value: object, name: str) -> int:
    """A contact group: an int in int32's range, else TypeError/ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int (a contact group), not {type(value).__name__}")
    if not _INT32.min <= int(value) <= _INT32.max:
        raise ValueError(f"{name} is {value}: a contact group must fit in int32")
    return int(value)


def radii(self: _core.System) -> np.ndarray:
    """Contact radius of each node, (N,) float64, m >= 0 (0: the node touches no node).

    Two nodes closer than the sum of their radii repel (see
    :attr:`contact_stiffness`). A zero-copy view like :attr:`positions`; nodes added
    later get :attr:`contact_radius`.

    Examples
    --------
    >>> import springsim as ss
    >>> sim = ss.System(dim=2)
    >>> _ = sim.add_nodes([[0, 0], [1, 0]])
    >>> sim.radii = 0.1
    >>> sim.radii.tolist()
    [0.1, 0.1]
    """
    return self._view("radii")


def set_radii(self: _core.System, value: npt.ArrayLike) -> None:
    current = self._view("radii")
    self._set_array("radii", _as_numbers(value, "radii", np.float64, current.shape))


def groups(self: _core.System) -> np.ndarray:
    """Contact group of each node, (N,) int32 (default 0).

    Nodes of different groups touch (unless :meth:`set_contact` switched that pair
    of groups off); nodes of one group touch unless a spring joins them, so one
    body's neighbours do not push each other apart while two separate bodies of
    group 0 still collide.

    Examples
    --------
    >>> import springsim as ss
    >>> sim = ss.System(dim=2)
    >>> _ = sim.add_nodes([[0, 0], [1, 0]])
    >>> sim.groups = [1, 2]
    >>> sim.groups.tolist()
    [1, 2]
    """
    return self._view("groups")


def set_groups(self: _core.System, value: npt.ArrayLike) -> None:
    current = self._view("groups")
    wide = _as_numbers(value, "groups", np.float64, current.shape)
    if not np.all(wide == np.round(wide)):
        raise ValueError("groups must be whole numbers (contact group ids)")
    if wide.size and (wide.min() < _INT32.min or wide.max() > _INT32.max):
        raise ValueError("groups must fit in int32")
    self._set_array("groups", np.ascontiguousarray(wide, dtype=np.int32))


#: What the kernel's law holds for "from the step" (contact_stiffness = None).
_FROM_STEP = 0.0


def _law(self: _core.System, **change: float) -> None:
    radius, stiffness, restitution, friction = self._contact_law()
    law = {
        "radius": radius,
        "stiffness": stiffness,
        "restitution": restitution,
        "friction": friction,
    }
    law.update(change)
    self._set_contact_law(law["radius"], law["stiffness"], law["restitution"], law["friction"])


def contact_radius(self: _core.System) -> float:
    """The radius, m >= 0, that nodes added from now on get (default 0: none).

    Examples
    --------
    >>> import springsim as ss
    >>> sim = ss.System(dim=2)
    >>> sim.contact_radius = 0.05
    >>> _ = sim.add_nodes([[0, 0], [1, 0]])
    >>> sim.radii.tolist()
    [0.05, 0.05]
    """
    return self._contact_law()[0]


def set_contact_radius(self: _core.System, value: float) -> None:
    _law(self, radius=_scalar(value, "contact_radius"))


def contact_stiffness(self: _core.System) -> float | None:
    """k_c of overlapping nodes: None (the default) picks it from the step; or N/m > 0.

    The law is a linear spring–dashpot (Cundall & Strack): for overlap
    δ = r_i + r_j − d the normal force is k δ − c v_n, with the dashpot
    c = 2ζ√(k m_eff), m_eff = m_i m_j / (m_i + m_j) (a pinned node is infinitely
    heavy) and ζ set by :attr:`contact_restitution`. Its potential ½ k δ² is
    ``energy().contact``.

    **None: stiffness from the step.** Each pair gets k = m_eff ω_c² with a contact
    frequency tied to the substep dt of the call, ω_c = a / dt,
    a = min(0.1, 0.3 / (2ζ + 2·[μ > 0])) (μ: :attr:`contact_friction`), as Box2D v3
    ties its contacts' softness to the substep. A resting overlap (the load over k)
    then shrinks with dt² and an impact at relative speed v overlaps by at most about
    v dt / a, whatever the masses: nothing to tune. At a fixed ω_c dt it is stable at
    any dt, so :meth:`critical_dt` leaves it out; near ``critical_dt()`` the springs'
    own modes use the explicit limit up and the contacts tip them over: step at half
    of it or less. ``energy().contact`` counts it at the dt of the last step call
    (none before the first; a copy keeps it, a loaded file or pickle has none until
    it steps). A contact lasts about π/a ≈ 31 substeps whatever dt is, so a shorter
    dt would not shrink the bounce's error; instead the dashpot's force is capped at
    twice the spring's (the force starts and ends at 0, no step within a substep) and
    its damping ratio is calibrated for the call's method so that a head-on bounce
    leaves at e times its approach speed on average over the impact's phase within
    a substep: measured within 0.6 % at any phase, e from 0.1 to 1, every force
    method and ``implicit_euler`` (which leaves this law out of its Jacobian). Give
    a number for a physical law.

    **A number: a physical penalty law.** Every pair has that k_c in N/m whatever
    the masses and dt. :meth:`critical_dt` includes it; a node at relative speed v
    overlaps about v √(m_eff / k_c), and a load F rests at F / k_c. Saved files
    from before the law from the step hold a number, and load with it.

    Examples
    --------
    >>> import springsim as ss
    >>> sim = ss.System(dim=2)
    >>> sim.contact_stiffness is None  # from the step
    True
    >>> sim.contact_stiffness = 2e4
    >>> sim.contact_stiffness
    20000.0
    """
    stiffness = self._contact_law()[1]
    return None if stiffness == _FROM_STEP else stiffness


def set_contact_stiffness(self: _core.System, value: float | None) -> None:
    if value is None:
        _law(self, stiffness=_FROM_STEP)
        return
    stiffness = _scalar(value, "contact_stiffness")
    if not stiffness > 0.0:  # (0 is the kernel's "from the step": refused as a number)
        raise ValueError(
            f"contact_stiffness is {stiffness}: must be finite and > 0 N/m, or None (from the step)"
        )
    _law(self, stiffness=stiffness)


def contact_restitution(self: _core.System) -> float:
    """e in [0, 1] (default 0.5): the speed ratio after a head-on two-node collision.

    The dashpot's damping ratio is ζ = −ln e / √(π² + ln² e) (ζ = 1 at e = 0),
    for which the linear spring–dashpot returns exactly e times the approach
    speed. What the dashpot takes goes into :attr:`dissipated`.

    Examples
    --------
    >>> import springsim as ss
    >>> sim = ss.System(dim=2)
    >>> sim.contact_restitution = 1.0
    >>> sim.contact_restitution
    1.0
    """
    return self._contact_law()[2]


def set_contact_restitution(self: _core.System, value: float) -> None:
    _law(self, restitution=_scalar(value, "contact_restitution"))


def contact_friction(self: _core.System) -> float:
    """Coulomb μ >= 0 between touching nodes (default 0).

    Regularised: a tangential dashpot 2√(k m_eff) on the sliding speed, capped
    at μ times the normal force. Its work goes into :attr:`dissipated`. With the
    stiffness from the step, friction lowers the contact frequency (see
    :attr:`contact_stiffness`).

    Examples
    --------
    >>> import springsim as ss
    >>> sim = ss.System(dim=2)
    >>> sim.contact_friction = 0.3
    >>> sim.contact_friction
    0.3
    """
    return self._contact_law()[3]


def set_contact_friction(self: _core.System, value: float) -> None:
    _law(self, friction=_scalar(value, "contact_friction"))


def set_contact(self: _core.System, group_a: int, group_b: int, enabled: bool) -> None:
    """Let the nodes of two groups touch (``enabled=True``, the default) or not.

    ``group_a == group_b`` switches contact within that group (between nodes no
    spring joins). Like a collision filter in pymunk or Box2D.

    Parameters
    ----------
    group_a, group_b : int
        Contact groups (see :attr:`groups`), in int32's range; order does not matter.
    enabled : bool
        Whether their nodes touch.

    Raises
    ------
    TypeError
        A group that is not an int, or ``enabled`` not a bool.
    ValueError
        A group outside int32's range.

    Examples
    --------
    >>> import springsim as ss
    >>> sim = ss.System(dim=2)
    >>> sim.set_contact(1, 2, False)
    >>> sim.contact_enabled(2, 1), sim.contact_enabled(1, 1)
    (False, True)
    """
    a, b = _group(group_a, "group_a"), _group(group_b, "group_b")
    if not isinstance(enabled, (bool, np.bool_)):
        raise TypeError(f"enabled must be a bool, not {type(enabled).__name__}")
    self._set_contact_filter(a, b, bool(enabled))


def contact_enabled(self: _core.System, group_a: int, group_b: int) -> bool:
    """Whether nodes of these two groups may touch (see :meth:`set_contact`).

    Examples
    --------
    >>> import springsim as ss
    >>> ss.System(dim=2).contact_enabled(0, 3)
    True
    """
    a, b = _group(group_a, "group_a"), _group(group_b, "group_b")
    return (min(a, b), max(a, b)) not in self._contact_filter()


def contact_pairs(self: _core.System) -> np.ndarray:
    """The node pairs touching now, (P, 2) int32 with i < j, in the kernel's order.

    Examples
    --------
    >>> import springsim as ss
    >>> sim = ss.System(dim=2)
    >>> _ = sim.add_nodes([[0, 0], [0.15, 0], [1, 0]])
    >>> sim.radii = 0.1
    >>> sim.contact_pairs().tolist()
    [[0, 1]]
    """
    return self._contact_pairs()


def segment_contact(self: _core.System) -> bool:
    """Whether strings with radii touch along their springs, not only at their nodes.

    Off by default. On (3D only), each spring whose two nodes have radii is a
    segment of radius (r_a + r_b) / 2, and two segments that share no node, are
    not joined by a spring and whose groups may touch (:meth:`set_contact`) repel
    at their closest points with node–node contact's law (:attr:`contact_stiffness`,
    :attr:`contact_restitution`, :attr:`contact_friction`), the force shared by
    the four nodes so that momentum is kept. Its potential is in
    ``energy().contact``; segments that still went through each other are counted
    in :attr:`self_collision_crossings`. Kept by :meth:`save`, :meth:`copy` and
    pickling. Off by default because it costs a search of the springs at every
    force evaluation (see the user guide, "Strings with radii").

    Raises
    ------
    TypeError
        A value that is not a bool.
    ValueError
        True on a 2D system (strings in a plane meet at their nodes).

    Examples
    --------
    >>> import springsim as ss
    >>> sim = ss.System(dim=3)
    >>> sim.segment_contact
    False
    >>> sim.segment_contact = True
    >>> sim.segment_contact
    True
    """
    return self._segment_contact()


def set_segment_contact(self: _core.System, value: bool) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"segment_contact must be a bool, not {type(value).__name__}")
    self._set_segment_contact(bool(value))
