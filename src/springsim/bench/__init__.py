"""``python -m springsim.bench``: how fast springsim steps, against its NumPy reference and peers.

The bench builds fixed scenes (gravity on, every spring damped; strings, cloths, a
jelly and two balls full of gas; a 1000×1000 cloth in the full run only), steps
each with every integrator and prints a short table, per scene and method:

- **ns per spring-step**: the time of one ``sim.step(dt, steps=K)`` call divided by
  ``K × num_springs``; lower is better;
- **steps per second**: ``K`` divided by that time;
- **×numba, ×warp, ×taichi** (symplectic Euler): a peer's time over springsim's on
  the same scene and thread count (see :mod:`springsim.bench.peers`).

``--long`` prints the long table, which adds:

- **bytes per node / per spring**: the whole System's memory (``sim.nbytes``)
  divided by the number of nodes, and by the number of springs;
- **vs reference**: how many times faster than :mod:`springsim.reference`, the
  NumPy oracle, stepping the same scene with the same method and dt.

How it times (see :mod:`springsim.bench.timing`): the machine is assumed shared, so
everything compared is timed in this process, interleaved (shuffled rounds:
springsim, peer A, peer B, ...), on one thread by thread CPU time, on several by
wall time, and each figure is the median of the rounds. Each call runs on a fresh
copy of the scene after a one-step warm-up.

With ``--long``, a *targets* section then checks the project's targets (PASS or MISS, with the
measured value), among them the memory of the 100×100 cloth: ``sim.nbytes`` per
spring, and how much a fresh process grows building and stepping it
(:mod:`~springsim.bench.memory`). ``--busy`` adds springsim on 1 and 2 threads while
a second process keeps one core busy (:func:`busy_threads`).

A run of the default scenes then times the cost of self-collision: a 100×100 cloth
folded on the floor, falling onto itself, stepped with and without it from the
moment its layers touch (:mod:`~springsim.bench.selfcol`; target at most 1.5×). Every
run ends with two costs: the ownership check every call makes
(:mod:`~springsim.bench.ownership`), a pin drag, a 100-node string with its end
dragged against the same string free (:mod:`~springsim.bench.drag`), and the energy
books: a damped cloth, free and on a sphere, with ``track_energy`` on and off
(:mod:`~springsim.bench.track_energy`; the table's scenes step with it off), and
the SIMD path the kernel measured and chose, checked by timing the 100×100 cloth on every
path (:mod:`~springsim.bench.simd`).
Last comes the stiff cloth (issue 26; :mod:`~springsim.bench.stiff_cloth`): a level
cloth of 5,000 N/m springs falling for a second, stepped by each method at several
substeps and iterations and by a Projective Dynamics peer
(:mod:`~springsim.bench.peer_pd`), each row's CPU time per 1/60 s frame, worst
distance from a fine symplectic Euler reference, and largest stretch; 30×30 by
default (none with ``--scenes``), 100×100 too with ``--long`` (``--stiff-cloth``
chooses).

``--quick`` runs everything small and short (no peers unless ``--peers``);
``--json FILE`` (``-`` for standard output) writes every number with a description
of the machine. The modules: :mod:`~springsim.bench.scenes`,
:mod:`~springsim.bench.timing`, :mod:`~springsim.bench.kernel` (springsim and the
reference), :mod:`~springsim.bench.peers` with ``peer_numba``, ``peer_warp`` and
``peer_taichi``, :mod:`~springsim.bench.scaling` (threads, ``--busy``),
:mod:`~springsim.bench.memory`, :mod:`~springsim.bench.selfcol`,
:mod:`~springsim.bench.ownership`, :mod:`~springsim.bench.drag`,
:mod:`~springsim.bench.track_energy`, :mod:`~springsim.bench.simd`,
:mod:`~springsim.bench.stiff_cloth` with ``peer_pd`` and ``stiff_cloth_plot``,
:mod:`~springsim.bench.targets`,
:mod:`~springsim.bench.report` and
:mod:`~springsim.bench.cli`.

Examples
--------
Time one scene from Python (``measure`` returns the same record as a row of
``--json``):

>>> from springsim import bench
>>> row = bench.measure("string_1000", "symplectic_euler", threads=1, seconds=0.01,
...                     repeats=1, with_reference=False)
>>> row["status"], row["springs"], row["ns_per_spring_step"] > 0, row["clock"]
('ok', 999, True, 'thread')
"""

import importlib
import inspect
import pkgutil

from springsim.bench.cli import main, run
from springsim.bench.kernel import (
    MAX_HALVINGS,
    REFERENCE_IMPLICIT_MAX_NODES,
    REFERENCE_MAX_SPRINGS,
    REFERENCE_XPBD_MAX_SPRINGS,
    REPEATS,
    SECONDS,
    measure,
    reference_models,
    string_in_one_call,
)
from springsim.bench.machine import get_threads, machine, set_threads, threading_available
from springsim.bench.memory import growth_here, process_growth
from springsim.bench.peer_numba import numba_parallel_peer, numba_peer
from springsim.bench.peer_taichi import taichi_peer
from springsim.bench.peer_warp import warp_peer
from springsim.bench.peers import (
    PEER_CONFIGS,
    PEERS,
    VALIDATION_STEPS,
    VALIDATION_TOLERANCE,
    PeerConfig,
    compare,
    validate_peer,
)
from springsim.bench.scaling import busy_core, busy_threads, thread_speedup, two_systems
from springsim.bench.scenes import (
    ALL_SCENES,
    DAMPING,
    DT_FRACTION,
    FULL_SCENES,
    SCENES,
    TARGET_METHOD,
    TARGET_SCENE,
    Problem,
    ball2d_64,
    ball3d_4,
    cloth_100,
    cloth_316,
    cloth_1000,
    jelly_20,
    string_10,
    string_1000,
    system_bytes,
)
from springsim.bench.selfcol import SELF_COLLISION_FACTOR, cloth_fold_100, self_collision_cost
from springsim.bench.timing import Contender, interleave

__all__ = [
    "ALL_SCENES",
    "Contender",
    "DAMPING",
    "DT_FRACTION",
    "FULL_SCENES",
    "MAX_HALVINGS",
    "PEERS",
    "PEER_CONFIGS",
    "PeerConfig",
    "Problem",
    "REFERENCE_IMPLICIT_MAX_NODES",
    "REFERENCE_MAX_SPRINGS",
    "REFERENCE_XPBD_MAX_SPRINGS",
    "REPEATS",
    "SCENES",
    "SECONDS",
    "SELF_COLLISION_FACTOR",
    "TARGET_METHOD",
    "TARGET_SCENE",
    "VALIDATION_STEPS",
    "VALIDATION_TOLERANCE",
    "ball2d_64",
    "ball3d_4",
    "busy_core",
    "busy_threads",
    "cloth_100",
    "cloth_1000",
    "cloth_fold_100",
    "cloth_316",
    "compare",
    "get_threads",
    "growth_here",
    "interleave",
    "jelly_20",
    "machine",
    "main",
    "measure",
    "numba_parallel_peer",
    "numba_peer",
    "process_growth",
    "reference_models",
    "run",
    "self_collision_cost",
    "set_threads",
    "string_10",
    "string_1000",
    "string_in_one_call",
    "system_bytes",
    "taichi_peer",
    "thread_speedup",
    "threading_available",
    "two_systems",
    "validate_peer",
    "warp_peer",
]


def _examples() -> dict[str, str]:
    """Every docstring with an example in the submodules, for ``doctest.testmod(bench)``.

    ``tests/repository/test_docs.py`` runs the examples of each module directly under
    ``springsim``; doctest skips objects defined in other modules, so the
    submodules' examples are handed to it here, by name (``__test__``).
    """
    found = {}
    for info in pkgutil.iter_modules(__path__, __name__ + "."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        objects = [(info.name, module)]
        for name, value in vars(module).items():
            if getattr(value, "__module__", None) == info.name:
                objects.append((f"{info.name}.{name}", value))
                if inspect.isclass(value):
                    members = vars(value).items()
                    objects += [(f"{info.name}.{name}.{k}", v) for k, v in members if callable(v)]
        for name, value in objects:
            doc = value if isinstance(value, str) else getattr(value, "__doc__", None)
            if isinstance(doc, str) and ">>>" in doc and name != __name__:
                found[name] = doc
    return found


__test__ = _examples()
