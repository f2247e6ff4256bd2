"""The module paths that files saved by springsim 0.1.0 name, kept as aliases.

A pickle names the module and the name of every class and function it holds: a pickled
System names ``springsim._file_methods._unpickle`` and, for its drives,
``springsim._drives._Drive`` and ``._Line``; a pickled :class:`~springsim.History`,
:class:`~springsim.Energy` or other record names the module it lived in. Those modules
moved when the package was laid out in folders; each old path is registered here (in
``sys.modules``, when springsim is imported) as a module holding just those names, the
objects of their new modules, so that such a pickle still loads. New pickles name the
new paths.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from springsim import reference, self_collision
from springsim.analysis import diagnostics, modes, statics
from springsim.files import pickling, weld
from springsim.model import pins
from springsim.stepping import history, sweep

#: Old module -> {name: object}: every class and function of 0.1.0 that a pickle could
#: name, in a module that moved.
OLD_PATHS: dict[str, dict[str, Any]] = {
    "springsim._file_methods": {"_unpickle": pickling._unpickle},
    "springsim._drives": {"_Drive": pins._Drive, "_Line": pins._Line},
    "springsim._diagnostics": {"Energy": diagnostics.Energy, "Solve": diagnostics.Solve},
    "springsim._self_contact": {"SelfCollision": self_collision.SelfCollision},
    "springsim._reference_contact": {"Contact": reference.Contact},
    "springsim._welded": {"MeshWarning": weld.MeshWarning},
    "springsim.history": {"History": history.History, "_rebuild": history._rebuild},
    "springsim.modes": {"Modes": modes.Modes},
    "springsim.statics": {"Relaxed": statics.Relaxed},
    "springsim.sweep": {"SweepResult": sweep.SweepResult},
}


def register() -> None:
    """Put the old paths in ``sys.modules`` (a path a module of this springsim holds is
    left alone)."""
    for name, objects in OLD_PATHS.items():
        if name in sys.modules:
            continue
        module = types.ModuleType(
            name, f"Moved: the names files saved by springsim 0.1.0 use ({__name__})."
        )
        module.__dict__.update(objects)
        sys.modules[name] = module
