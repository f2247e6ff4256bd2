"""The bench's scenes, and a scene as plain arrays for the peers (:class:`Problem`)."""

import contextlib
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import springsim as ss

#: Axial damping of every spring in every scene, N·s/m.
DAMPING = 0.01
#: Time step of every scene, as a fraction of ``sim.critical_dt()`` (halved for a
#: method that goes unstable within the timed run, e.g. explicit Euler).
DT_FRACTION = 0.5
#: The scene and method of the speed targets, and the one integrator the peers implement.
TARGET_SCENE, TARGET_METHOD = "cloth_100", "symplectic_euler"


def string_1000() -> ss.System:
    """A 10 m string of 1,000 nodes (999 springs), pinned at one end, falling from level."""
    return ss.string(1000, length=10.0, mass=1.0, stiffness=1e4, damping=DAMPING)


def _cloth(n: int) -> ss.System:
    return ss.cloth(n, n, width=1.0, height=1.0, mass=1.0, stiffness=1000.0, damping=DAMPING)


def cloth_100() -> ss.System:
    """A 1 m 100×100 cloth, structural, shear and bend springs (59,002), hung by two corners."""
    return _cloth(100)


def cloth_316() -> ss.System:
    """A 1 m 316×316 cloth, structural, shear and bend springs (595,978), hung by two corners."""
    return _cloth(316)


def cloth_1000() -> ss.System:
    """A 1 m 1000×1000 cloth with shear and bend springs (5,990,002), hung by two corners."""
    return _cloth(1000)


def jelly_20() -> ss.System:
    """A 1 m 20³ jelly, stable arrangement (93,556 springs), its bottom face pinned, sagging."""
    return ss.jelly(20, 20, 20, size=1.0, mass=1.0, stiffness=1000.0, damping=DAMPING, pin="bottom")


def ball2d_64() -> ss.System:
    """A 2D soft ball: a 0.5 m ring of 64 nodes (64 springs) full of gas at ~100 N/m, falling."""
    radius, pressure = 0.5, 100.0  # m, N/m: the springs stretch about 5 %
    return ss.ball(
        nodes=64,
        radius=radius,
        mass=1.0,
        stiffness=1e4,
        damping=DAMPING,
        dim=2,
        nrt=pressure * math.pi * radius**2,
    )


def ball3d_4() -> ss.System:
    """A 0.5 m icosphere of level 4 (2,562 nodes, 7,680 springs) full of gas at ~300 Pa, falling."""
    radius, pressure = 0.5, 300.0  # m, Pa: the springs stretch about 4 %
    return ss.ball(
        subdivisions=4,
        radius=radius,
        mass=1.0,
        stiffness=1000.0,
        damping=DAMPING,
        dim=3,
        nrt=pressure * 4 / 3 * math.pi * radius**3,
    )


def string_10() -> ss.System:
    """A 1 m string of 10 nodes hanging from one end: the per-call overhead target."""
    return ss.string(10, length=1.0, mass=0.1, stiffness=100.0, damping=DAMPING)


#: The scenes of the table, by name (``--quick`` and the default ``--scenes``). New
#: integrators in ``springsim.METHODS`` are picked up by themselves.
SCENES: dict[str, Callable[[], ss.System]] = {
    "string_1000": string_1000,
    "cloth_100": cloth_100,
    "cloth_316": cloth_316,
    "jelly_20": jelly_20,
    "ball2d_64": ball2d_64,
    "ball3d_4": ball3d_4,
}
#: Scenes that only the full run (not ``--quick``) adds to :data:`SCENES`.
FULL_SCENES: dict[str, Callable[[], ss.System]] = {"cloth_1000": cloth_1000}
#: Every scene a run may name.
ALL_SCENES = {**SCENES, **FULL_SCENES}


def scene(name: str) -> ss.System:
    """A fresh copy of the scene ``name`` (a key of :data:`ALL_SCENES`), with
    ``track_energy`` off: the peers keep no energy books, and the table times the
    stepping alone (what the books cost is the ``track_energy`` line,
    :mod:`springsim.bench.track_energy`)."""
    sim = ALL_SCENES[name]()
    sim.track_energy = False
    return sim


def scene_dt(sim: ss.System) -> float:
    """The bench's time step for ``sim``: :data:`DT_FRACTION` of its critical dt."""
    return DT_FRACTION * sim.critical_dt()


def system_bytes(sim: ss.System) -> tuple[int, str]:
    """The bytes ``sim`` holds, and where the figure comes from.

    ``sim.nbytes`` (every array and scratch buffer) when the kernel provides it;
    otherwise the sum of the array views, which misses scratch and spare capacity.
    """
    nbytes = getattr(sim, "nbytes", None)
    if isinstance(nbytes, (int, np.integer)):
        return int(nbytes), "sim.nbytes"
    total = 0
    names = ("positions", "velocities", "masses", "pinned", "springs", "rest_lengths")
    for name in (*names, "stiffness", "damping", "faces", "uvs", "rest_positions"):
        with contextlib.suppress(AttributeError, ValueError, KeyError):
            total += sim._view(name).nbytes
    return total, "sum of the array views (sim.nbytes missing: no scratch, no spare capacity)"


@dataclass
class Problem:
    """One scene as plain arrays, the input of a peer implementation.

    Attributes
    ----------
    x, v : ndarray, (N, 3) float64
        Positions (m) and velocities (m/s).
    mass : ndarray, (N,) float64
        kg.
    pinned : ndarray, (N,) int32
        1 for a pinned node.
    pairs : ndarray, (M, 2) int32
        Spring node pairs.
    rest, k, c : ndarray, (M,) float64
        Rest lengths (m), stiffness (N/m), axial damping (N·s/m).
    gravity : ndarray, (3,) float64
        m/s².

    Examples
    --------
    >>> import springsim as ss
    >>> from springsim.bench.scenes import Problem
    >>> p = Problem.from_system(ss.string(4, length=3.0, mass=1.0, stiffness=10.0))
    >>> offsets, other, spring = p.adjacency()
    >>> offsets.tolist(), other.tolist(), spring.tolist()
    ([0, 1, 3, 5, 6], [1, 0, 2, 1, 3, 2], [0, 0, 1, 1, 2, 2])
    """

    x: np.ndarray
    v: np.ndarray
    mass: np.ndarray
    pinned: np.ndarray
    pairs: np.ndarray
    rest: np.ndarray
    k: np.ndarray
    c: np.ndarray
    gravity: np.ndarray

    @classmethod
    def from_system(cls, sim: ss.System) -> "Problem":
        """Copy the arrays of a 3D System with no drag, wind, external forces or gas."""
        if (
            sim.dim != 3
            or sim.drag != 0
            or np.any(sim.external_forces)
            or sim.energy_loss != 1
            or sim.gases
        ):
            raise ValueError("the peers implement 3D springs and gravity only")
        return cls(
            x=np.array(sim.positions),
            v=np.array(sim.velocities),
            mass=np.array(sim.masses),
            pinned=np.array(sim.pinned, dtype=np.int32),
            pairs=np.array(sim.springs, dtype=np.int32),
            rest=np.array(sim.rest_lengths),
            k=np.array(sim.stiffness),
            c=np.array(sim.damping),
            gravity=np.array(sim.gravity),
        )

    def adjacency(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every node's springs as CSR, for the peers that gather forces per node.

        Returns
        -------
        offsets : ndarray, (N + 1,) int32
            Node ``a``'s springs are entries ``offsets[a]`` to ``offsets[a + 1]``.
        other : ndarray, (2 M,) int32
            The node at the spring's other end.
        spring : ndarray, (2 M,) int32
            The spring's index (into ``rest``, ``k``, ``c``), ascending per node.
        """
        n, m = len(self.x), len(self.pairs)
        ends = self.pairs.T.reshape(-1)  # node i of every spring, then node j of every spring
        both = np.concatenate([np.arange(m), np.arange(m)])
        order = np.lexsort((both, ends))  # by node, then by spring
        springs = both[order]
        other = np.concatenate([self.pairs[:, 1], self.pairs[:, 0]])[order]
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(ends, minlength=n), out=offsets[1:])
        return offsets.astype(np.int32), other.astype(np.int32), springs.astype(np.int32)


def peer_scene(sim: ss.System) -> bool:
    """Whether the peers implement ``sim``'s physics (3D springs and gravity, no gas)."""
    try:
        Problem.from_system(sim)
    except ValueError:
        return False
    return True
