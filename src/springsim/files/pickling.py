"""Pickling a System: the save format's arrays (:mod:`springsim.files.npz`; pickle
protocol 5 ships them as buffers, the energy books and crossing count among them) plus
what the file does not hold, the drives themselves: a drive that follows a function
pickles if pickle can store the function (a module-level function, an instance of a
module-level class; any under cloudpickle or dill), and one it cannot (a lambda, a local
function) fails with an error naming the drive.

A pickle names :func:`_unpickle` and the System's class; pickles of springsim 0.1.0 name
the paths :mod:`springsim.files.legacy` keeps.
"""

from __future__ import annotations

import pickle
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from springsim import _core
from springsim.files import npz
from springsim.model import pins
from springsim.model.pins import _Drive, _Line

#: The class of the system pickled: springsim.System, or a subclass.
System = TypeVar("System", bound=_core.System)


def reduce(
    self: System,
) -> tuple[Callable[..., System], tuple[type[System], dict[str, np.ndarray], dict[str, Any]]]:
    """``System.__reduce__``: rebuild with :func:`_unpickle` from the save format's
    arrays (the drive entries empty) and the drives themselves."""
    npz.check_savable(self, "this System")
    drives = pins.drives(self)  # copies of the kernel's, with the functions they follow
    check_picklable(drives)
    extras = {"drives": drives or None}
    return (_unpickle, (type(self), npz.state_arrays(self, drives=False), extras))


def _unpickle(cls: type[System], arrays: dict[str, np.ndarray], extras: dict[str, Any]) -> System:
    """Rebuild a pickled System (see :func:`reduce`)."""
    sim = npz.system_from_arrays(arrays, "pickled System", cls)
    if "dissipated" in extras:  # pickles of format 6 kept the books here
        sim.dissipated = extras["dissipated"]
        sim.track_energy = extras["track_energy"]
    if extras["drives"]:
        npz.restore_drives(sim, extras["drives"], np.ascontiguousarray(arrays["pinned"]))
    return sim


def _by_value_pickler() -> bool:
    """Whether the pickler at work stores functions by value (cloudpickle, dill: their
    ``dump`` is a Python frame on the stack), so that a lambda path pickles."""
    frame = sys._getframe(1)
    while frame is not None:
        if str(frame.f_globals.get("__name__", "")).startswith(("cloudpickle", "dill")):
            return True
        frame = frame.f_back  # type: ignore[assignment]  # None ends the loop
    return False


def check_picklable(drives: list[_Drive]) -> None:
    """PicklingError naming the drive whose path pickle cannot store (a lambda, a local
    function), instead of pickle's own error about a function (which does not say what
    held it). Under cloudpickle or dill every path goes through."""
    paths = [d for d in drives if d.function is not None and not isinstance(d.function, _Line)]
    if not paths or _by_value_pickler():
        return
    for d in paths:
        try:
            pickle.dumps(d.function, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as error:
            raise pickle.PicklingError(
                f"cannot pickle this System: {npz.describe(d)} cannot be pickled ({error}). "
                "Make the path a module-level function or an instance of a module-level "
                "class, give per-substep targets as an array, stop the drive "
                "(sim.drive(nodes, None)) first, or pickle with cloudpickle"
            ) from error
