"""Warnings that point at the user's line, and the warning classes made in Python.

A warning raised inside springsim is reported (file and line, and the "once per
location" of the default filter) at the first frame outside the package: the line of
the user's code that called into it, however deep the call went (``sim.run`` ->
``stepping/run.py`` -> ``sim.step``). The kernel's warnings (csrc/python/py_errors.c,
``ss_py_warn``) find the same frame the same way.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np


def _in_springsim(module: object) -> bool:
    return isinstance(module, str) and (module == "springsim" or module.startswith("springsim."))


def warn(message: str | Warning, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn`` at the user's line (the first frame outside springsim)."""
    level = 1
    frame = sys._getframe(1)
    while frame is not None and _in_springsim(frame.f_globals.get("__name__")):
        level += 1
        frame = frame.f_back  # type: ignore[assignment]  # None ends the loop
    # +1: this function's own frame, which is in springsim but not yet counted.
    warnings.warn(message, category, stacklevel=level + 1)


class DuplicateSpringWarning(UserWarning):
    """Springs were added between nodes that a spring already joins.

    :meth:`springsim.System.add_springs` (and :meth:`~springsim.System.connect`) warn
    when a new spring repeats the node pair, in either order, of an existing spring or
    of an earlier spring of the same call: two springs on one pair act as one spring of
    their summed stiffness, which is rarely what a model meant. The springs are added
    all the same. The numbers are attributes, for a program to check: ``springs``
    (ndarray of int64, the indices of the new springs that repeat a pair) and ``pairs``
    (ndarray of int64, shape (k, 2), their node pairs as given). Silence it, when the
    doubling is intended, with
    ``warnings.filterwarnings("ignore", category=springsim.DuplicateSpringWarning)``.
    """

    def __init__(self, message: str, springs: np.ndarray, pairs: np.ndarray) -> None:
        super().__init__(message)
        self.springs = springs
        self.pairs = pairs


class UntrackedEnergyWarning(UserWarning):
    """:attr:`springsim.System.dissipated` was read while the books were off.

    Plain :meth:`~springsim.System.step` calls keep ``dissipated`` only while
    ``sim.track_energy`` is True (off by default, for speed; :meth:`~springsim.System.run`
    and the viewer turn it on while they run). Reading it on a system that can
    dissipate (spring damping, drag, the air on faces, ``energy_loss`` below 1,
    colliders, node radii, self-collision or a strain limit) while the books are off
    warns once per system: the value counts only what was dissipated while they were
    on. Set ``sim.track_energy = True`` before stepping to keep them.
    """
