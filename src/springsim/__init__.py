"""springsim: mass-spring physics with a fast C core and zero-copy NumPy views.

>>> import springsim as ss
>>> sim = ss.System(dim=2)
>>> a = sim.add_nodes([[0, 0], [0, -1]], masses=[1.0, 0.5])
>>> sim.pin(a[0])
>>> _ = sim.add_springs([[a[0], a[1]]], stiffness=100.0, damping=0.1)
>>> sim.step(1e-3, steps=1000, method="rk4")
>>> round(sim.time, 9)
1.0
"""

# First: OpenMP's waiting policy is read when the kernel loads libgomp.
from springsim.runtime import openmp_env  # noqa: F401

# isort: split
from springsim import measure, reference
from springsim._core import (
    METHODS,
    ConvergenceWarning,
    StiffnessWarning,
    UnstableError,
    get_num_threads,
    threading_available,
)
from springsim._version import __version__ as __version__
from springsim._warn import DuplicateSpringWarning, UntrackedEnergyWarning
from springsim.analysis.modes import Modes
from springsim.analysis.statics import Relaxed
from springsim.builders.bodies import ball, cluster, mesh
from springsim.builders.lattices import cloth, jelly
from springsim.builders.strings import balloon, string
from springsim.files import legacy
from springsim.files.weld import MeshWarning
from springsim.gas import Gas
from springsim.io import load, read_mesh, read_obj
from springsim.runtime.build import _choose_simd_at_import, build_info, set_simd, simd_paths
from springsim.runtime.threads import _set_default_at_import, set_num_threads
from springsim.stepping.history import History
from springsim.stepping.sweep import SweepResult, sweep
from springsim.system import Energy, SelfCollision, Solve, System
from springsim.viewer.entry import view

#: The force-based integrators (every method but "xpbd", which solves constraints).
FORCE_METHODS = tuple(m for m in METHODS if m != "xpbd")
#: The explicit integrators: stable only below about ``critical_dt()``.
EXPLICIT_METHODS = tuple(m for m in FORCE_METHODS if m not in ("implicit_euler", "vbd"))

__all__ = [
    "FORCE_METHODS",
    "METHODS",
    "Modes",
    "Relaxed",
    "ConvergenceWarning",
    "DuplicateSpringWarning",
    "UntrackedEnergyWarning",
    "StiffnessWarning",
    "MeshWarning",
    "EXPLICIT_METHODS",
    "Energy",
    "Gas",
    "History",
    "SelfCollision",
    "Solve",
    "SweepResult",
    "System",
    "UnstableError",
    "ball",
    "balloon",
    "build_info",
    "cloth",
    "cluster",
    "get_num_threads",
    "jelly",
    "load",
    "measure",
    "mesh",
    "read_mesh",
    "read_obj",
    "reference",
    "set_num_threads",
    "set_simd",
    "simd_paths",
    "string",
    "sweep",
    "threading_available",
    "view",
]

#: What ``dir(springsim)`` (and so tab completion) lists besides ``__all__``.
_DIR_EXTRAS = ("__all__", "__doc__", "__file__", "__name__", "__path__", "__version__")


def __dir__() -> list[str]:
    """The public names: ``__all__`` and a module's essentials, not the submodules and
    helpers the package imports (``np``, ``system``, ``_core``, ...)."""
    return sorted({*__all__, *_DIR_EXTRAS})


legacy.register()  # the module paths that files saved by springsim 0.1.0 name
_set_default_at_import()  # SPRINGSIM_NUM_THREADS (a bad one warns), else every core
_choose_simd_at_import()  # SPRINGSIM_SIMD (a bad one warns); else measured on first use
