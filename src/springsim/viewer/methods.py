"""The integration method a viewer steps with: its checks, its default step, and the
hint that a system is too stiff for the explicit methods on this machine.

Used by :mod:`springsim.viewer.widget` (the ``method`` property, ``view(method=...)``
and the page's method menu). Nothing here steps a system: the kernel is asked whether
it can step a method with ``sim.step(dt, steps=0, method=...)`` (which only checks),
and the hint reads the step cost the viewer measures on its own frames.
"""

from __future__ import annotations

import sys
from typing import Any

from springsim import _core

#: The methods stable at any step (backward Euler and the constraint solvers): their
#: default step is two per frame, not a fraction of ``critical_dt()``.
STABLE_METHODS = ("xpbd", "implicit_euler", "vbd")
#: What the page shows beside its method menu when the system is stiff (see :func:`stiff`).
STIFF_HINT = "stiff: try vbd or xpbd"


def check(method: Any) -> str | None:
    """``method`` if it is None or one of ``springsim.METHODS``.

    Raises
    ------
    TypeError
        Not a str or None.
    ValueError
        Not one of ``springsim.METHODS`` (the message lists them).

    Examples
    --------
    >>> check("vbd")
    'vbd'
    >>> check("VBD")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: method must be one of euler, symplectic_euler, ..., vbd or None, not 'VBD'
    """
    if method is None:
        return None
    if not isinstance(method, str):
        raise TypeError(f"method must be a str or None, not {type(method).__name__}")
    if method not in _core.METHODS:
        raise ValueError(
            f"method must be one of {', '.join(_core.METHODS)} or None, not {method!r}"
        )
    return method


def refuse_unsteppable(sim: Any, method: str) -> None:
    """Raise what ``sim.step(dt, method=method)`` would raise before stepping — a rigid
    rod (stiffness inf) with any method but ``"xpbd"``, a non-finite state — by asking
    the kernel for zero steps (it checks its arguments and state, and changes nothing).
    The zero steps are of the smallest positive dt, so that no warning about the size
    of a step (``StiffnessWarning``) is given here: the steps give it.

    Raises
    ------
    ValueError
        The kernel's own message (for rods: which springs, and that xpbd holds them).

    Examples
    --------
    >>> import springsim as ss
    >>> rod = ss.string(3, length=1.0, mass=0.1, stiffness=10.0, dim=2)
    >>> rod.stiffness = float("inf")                 # two rigid rods
    >>> refuse_unsteppable(rod, "xpbd")            # xpbd holds rods
    >>> refuse_unsteppable(rod, "vbd")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: springs 0, 1 are rigid rods (stiffness inf), which method 'vbd' cannot step: ...
    """
    sim.step(sys.float_info.min, steps=0, method=method)


def default_dt(sim: Any, method: str, fps: float) -> float:
    """The viewer's default step for ``method``: 1 ms for a system without springs;
    else, for a method stable at any step (:data:`STABLE_METHODS`), two steps per
    frame, ``1 / (2 fps)``; for an explicit one half its stability limit
    ``critical_dt()``, at most 1 ms.

    Examples
    --------
    >>> import springsim as ss
    >>> rope = ss.string(10, length=1.0, mass=0.1, stiffness=5000.0, dim=2)
    >>> default_dt(rope, "vbd", 60.0) == 1 / 120
    True
    >>> default_dt(rope, "rk4", 60.0) == 0.5 * rope.critical_dt()
    True
    """
    if not sim.num_springs:
        return 1e-3
    if method in STABLE_METHODS:
        return float(0.5 / fps)
    return float(min(0.5 * sim.critical_dt(), 1e-3))


def stiff(method: str, step_cost: float, critical_dt: float) -> bool:
    """Whether a system is too stiff for the explicit ``method`` on this machine: a
    step of half of its ``critical_dt`` (s; the largest step the viewer takes by
    default with an explicit method) costs more wall time, ``step_cost`` seconds as
    measured on the viewer's own frames, than the simulated time it covers. Then no
    frame rate plays it in real time with that method: real time needs
    ``1 / (fps dt)`` steps a frame and the machine steps ``1 / (fps step_cost)``.

    False for a method stable at any step, and before a step was measured
    (``step_cost`` 0); a system without springs has an infinite ``critical_dt``. The
    1 ms cap of :func:`default_dt` is left out on purpose: a large, soft system that
    is slow at 1 ms steps is slow with every method, and the stable methods would not
    help it.

    Examples
    --------
    >>> stiff("symplectic_euler", step_cost=430e-6, critical_dt=25.8e-6)  # 100 x 100 cloth
    True
    >>> stiff("symplectic_euler", step_cost=17e-6, critical_dt=129e-6)  # 20 x 20
    False
    >>> stiff("vbd", step_cost=430e-6, critical_dt=25.8e-6)
    False
    """
    if method in STABLE_METHODS or step_cost <= 0:
        return False
    return bool(step_cost > 0.5 * critical_dt)
