"""The physics of springsim in plain NumPy: readable, slow, and the test oracle.

Every formula here is the one the C kernel implements; the tests step the same
system with both and require agreement to 1e-12. Read this file to learn what a
step does; read ``csrc/`` to see how it is made fast.

Examples
--------
>>> import numpy as np
>>> from springsim import reference
>>> s = reference.State(
...     positions=[[0.0, 0.0], [0.0, -1.0]], masses=[1.0, 1.0], pinned=[True, False],
...     springs=[[0, 1]], rest_lengths=[1.0], stiffness=[100.0], damping=[0.0])
>>> reference.step(s, 1e-3, steps=10, method="rk4")
>>> round(float(s.time), 6)
0.01
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:  # the oracle never runs the kernel: it only reads a System's arrays
    from springsim import _core

METHODS = (
    "euler",
    "symplectic_euler",
    "verlet",
    "velocity_verlet",
    "rk2",
    "rk4",
    "xpbd",
    "implicit_euler",
    "vbd",
)


class State:
    """A mass-spring system as plain NumPy arrays (all copies, all float64).

    Parameters
    ----------
    positions : array_like, shape (N, dim)
        Node positions in metres; ``dim`` is 2 or 3.
    masses : array_like, shape (N,)
        Node masses in kg.
    springs : array_like, shape (M, 2)
        Node index pairs.
    rest_lengths, stiffness, damping : array_like, shape (M,)
        Per-spring rest length (m), stiffness (N/m) and axial damping (N·s/m).
    velocities, external_forces : array_like, shape (N, dim), optional
        Zero if omitted.
    pinned : array_like of bool, shape (N,), optional
        Pinned nodes ignore forces and move with their own velocity, which
        :func:`step` sets to zero first (they are held) unless they are dragged.
    gravity, wind : array_like, shape (dim,), optional
        Gravity defaults to (0, -9.81[, 0]); wind to zero.
    drag : float
        Linear air drag coefficient: force ``-drag * (v - wind)`` on every node.
    energy_loss : float
        Fraction of velocity kept after each step (1.0 = no loss).
    time : float
        Simulation time in seconds.
    iterations : int
        Passes per substep of the "xpbd" (constraints) and "vbd" (vertices) methods.
    pressure : sequence of (elements, nrt, ambient)
        Gas bodies: ``elements`` (K, dim) node indices of a closed, outward boundary
        (directed edges in 2D, triangles in 3D), then nrt and the ambient pressure.
    faces : array_like of int, shape (F, 3), optional
        Triangles (3D), on which the air acts (see :func:`aero_forces`).
    air_density, drag_coefficient : float
        ρ (kg/m³, default 1.2) and C_d (default 0: no air on faces).
    contact : Contact, optional
        Node–node contact: radii, groups and law (see :class:`Contact`).
    colliders : sequence of Collider, optional
        Planes, spheres, boxes and capsules, in the kernel's order (see
        :class:`Collider`); the "xpbd" and "vbd" methods model them here (not meshes).
    self_collision : (thickness, stiffness, friction, edges), optional
        Self-collision of the faces, as :meth:`springsim.System.enable_self_collision`
        sets it: the "vbd" method models it here (its 4-node contact energy); the other
        methods' forces are :func:`self_collision_forces` and :func:`edge_contact_forces`.
    """

    def __init__(
        self,
        positions: npt.ArrayLike,
        masses: npt.ArrayLike,
        springs: npt.ArrayLike = (),
        rest_lengths: npt.ArrayLike = (),
        stiffness: npt.ArrayLike = (),
        damping: npt.ArrayLike = (),
        velocities: npt.ArrayLike | None = None,
        external_forces: npt.ArrayLike | None = None,
        pinned: npt.ArrayLike | None = None,
        gravity: npt.ArrayLike | None = None,
        wind: npt.ArrayLike | None = None,
        drag: float = 0.0,
        energy_loss: float = 1.0,
        time: float = 0.0,
        iterations: int = 10,
        pressure: Iterable[tuple[npt.ArrayLike, float, float]] = (),
        faces: npt.ArrayLike | None = None,
        air_density: float = 1.2,
        drag_coefficient: float = 0.0,
        contact: Contact | None = None,
        colliders: Iterable[Collider] = (),
        self_collision: tuple[float, float, float, bool] | None = None,
    ) -> None:
        self.x = np.array(positions, dtype=np.float64)
        n, dim = self.x.shape
        self.dim = dim
        self.v = np.zeros_like(self.x) if velocities is None else np.array(velocities, float)
        self.m = np.array(masses, dtype=np.float64).reshape(n)
        self.pinned = np.zeros(n, bool) if pinned is None else np.array(pinned, bool)
        self.ext = (
            np.zeros_like(self.x) if external_forces is None else np.array(external_forces, float)
        )
        self.springs = np.array(springs, dtype=np.int64).reshape(-1, 2)
        self.L = np.array(rest_lengths, dtype=np.float64).reshape(-1)
        self.k = np.array(stiffness, dtype=np.float64).reshape(-1)
        self.c = np.array(damping, dtype=np.float64).reshape(-1)
        default_g = (0.0, -9.81, 0.0)[:dim]
        self.gravity = np.array(default_g if gravity is None else gravity, dtype=np.float64)
        self.wind = np.zeros(dim) if wind is None else np.array(wind, dtype=np.float64)
        self.drag = float(drag)
        self.energy_loss = float(energy_loss)
        self.time = float(time)
        # Acceleration of the previous Verlet step; None until one has run.
        self.prev_accel: np.ndarray | None = None
        #: Passes per substep of "xpbd" and "vbd".
        self.iterations = int(iterations)
        #: Gas bodies: [(elements (K, dim) int64, nrt, ambient), ...].
        self.pressure = [
            (np.array(e, dtype=np.int64).reshape(-1, dim), float(nrt), float(ambient))
            for e, nrt, ambient in pressure
        ]
        self.faces = np.zeros((0, 3), np.int64) if faces is None else np.array(faces, np.int64)
        self.faces = self.faces.reshape(-1, 3)
        self.air_density = float(air_density)
        self.drag_coefficient = float(drag_coefficient)
        #: Node–node contact (radii, groups, law), or None: none.
        self.contact = contact
        #: Colliders, in the kernel's order (xpbd's constraints, vbd's contact energy).
        self.colliders = list(colliders)
        #: Self-collision (thickness, stiffness, friction, edges), or None: off.
        self.self_collision = self_collision
        #: vbd's colours and adjacency, with the springs and pins they were built for.
        self._vbd_cache: tuple[tuple[bytes, bytes, int], list] | None = None  # type: ignore[type-arg]

    @classmethod
    def from_system(cls, sim: _core.System) -> State:
        """Copy a :class:`springsim.System` into a reference state."""
        view = sim._view
        return cls(
            positions=view("positions"),
            masses=view("masses"),
            springs=view("springs"),
            rest_lengths=view("rest_lengths"),
            stiffness=view("stiffness"),
            damping=view("damping"),
            velocities=view("velocities"),
            external_forces=view("external_forces"),
            pinned=view("pinned"),
            gravity=view("gravity"),
            wind=view("wind"),
            drag=sim.drag,
            energy_loss=sim.energy_loss,
            time=sim.time,
            iterations=sim.iterations,
            pressure=[
                (sim._pressure_elements(body), nrt, ambient)
                for body, nrt, ambient, _volume in sim._pressure_bodies()
            ],
            faces=view("faces"),
            air_density=sim.air_density,
            drag_coefficient=sim.drag_coefficient,
            contact=Contact.from_system(sim) if sim._has_radii() else None,
            colliders=[Collider.from_row(sim, row) for row in sim._colliders()],
            self_collision=_self_collision_of(sim),
        )


def _self_collision_of(sim: _core.System) -> tuple[float, float, float, bool] | None:
    """(thickness, stiffness, friction, edges) of sim's self-collision, or None."""
    setting = sim._self_collision()
    if setting is None:
        return None
    thickness, stiffness, friction, _crossings, edges = setting
    return float(thickness), float(stiffness), float(friction), bool(edges)


# ---------------------------------------------------------------- the forces

#: Springs shorter than this (metres) exert no force: their direction is undefined.
MIN_SPRING_LENGTH = 1e-12


def spring_forces(s: State, x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Force on each node from every spring, (N, dim).

    For spring (i, j) with ``d = x_j - x_i``, ``l = |d|``, ``u = d / l``:
    ``F_i = (k (l - L) + c (v_j - v_i)·u) u`` and ``F_j = -F_i``.
    A spring shorter than ``MIN_SPRING_LENGTH`` exerts no force.
    """
    i, j = s.springs[:, 0], s.springs[:, 1]
    d = x[j] - x[i]
    length = np.sqrt(np.sum(d * d, axis=1))
    live = length >= MIN_SPRING_LENGTH
    u = np.zeros_like(d)
    u[live] = d[live] / length[live, None]
    closing_speed = np.sum((v[j] - v[i]) * u, axis=1)
    magnitude = np.where(live, s.k * (length - s.L) + s.c * closing_speed, 0.0)
    f_i = magnitude[:, None] * u
    f = np.zeros_like(x)
    np.add.at(f, i, f_i)
    np.add.at(f, j, -f_i)
    return f


def enclosed_volume(elements: np.ndarray, x: np.ndarray) -> float:
    """Signed area (2D: directed edges) or volume (3D: triangles) inside a closed
    boundary, positive when it faces outward.

    Measured from the first element's first node r (for accuracy far from the
    origin): ``A = ½ Σ (a − r) × (b − r)``, ``V = ⅙ Σ (a − r)·((b − r) × (c − r))``.
    """
    r = x[elements[0, 0]]
    corners = [x[elements[:, c]] - r for c in range(elements.shape[1])]
    if elements.shape[1] == 2:
        a, b = corners
        return float(0.5 * np.sum(a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]))
    a, b, c = corners
    return float(np.sum(a * np.cross(b, c)) / 6.0)


def volume_gradient(elements: np.ndarray, x: np.ndarray) -> np.ndarray:
    """∂V/∂x of a closed boundary, (N, dim): each element's length (2D) or area (3D)
    times its outward normal, shared equally by its nodes.

    2D edge (a, b), d = b − a: each node gets ½ (d_y, −d_x). 3D triangle (a, b, c):
    each node gets ⅙ (b − a) × (c − a).
    """
    g = np.zeros_like(x)
    if elements.shape[1] == 2:
        d = x[elements[:, 1]] - x[elements[:, 0]]
        share = 0.5 * np.stack([d[:, 1], -d[:, 0]], axis=1)
    else:
        a, b, c = (x[elements[:, k]] for k in range(3))
        share = np.cross(b - a, c - a) / 6.0
    for column in range(elements.shape[1]):
        np.add.at(g, elements[:, column], share)
    return g


def pressure_forces(s: State, x: np.ndarray) -> np.ndarray:
    """Gas force on each node, (N, dim): Σ over bodies of (nrt / V − ambient) ∂V/∂x.

    This is −∂E/∂x of the gas energy E = −nrt ln V + ambient V (isothermal ideal
    gas, P V = nrt). A body with V <= 0 is inside out: its nodes get NaN.
    """
    f = np.zeros_like(x)
    for elements, nrt, ambient in s.pressure:
        volume = enclosed_volume(elements, x)
        if not volume > 0.0:
            f[np.unique(elements)] = np.nan
            continue
        f += (nrt / volume - ambient) * volume_gradient(elements, x)
    return f


def aero_forces(s: State, x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Air on the faces, (N, dim): each triangle's pressure drag as a flat plate.

    Triangle with area A and unit normal n, moving through the air at u (its nodes'
    mean velocity minus the wind): ``F = −½ ρ C_d A |u·n| (u·n) n``, a third on each
    of its nodes. A degenerate triangle (A = 0) feels nothing. 3D only (zero in 2D,
    where the kernel refuses C_d > 0).
    """
    f = np.zeros_like(x)
    if s.dim != 3 or s.air_density * s.drag_coefficient == 0.0 or len(s.faces) == 0:
        return f
    a, b, c = (x[s.faces[:, k]] for k in range(3))
    normal = np.cross(b - a, c - a)
    twice_area = np.linalg.norm(normal, axis=1)
    flat = twice_area == 0.0
    n = normal / np.where(flat, 1.0, twice_area)[:, None]
    u = v[s.faces].mean(axis=1) - s.wind
    un = np.sum(u * n, axis=1)
    area = 0.5 * twice_area
    force = (-0.5 * s.air_density * s.drag_coefficient * area * np.abs(un) * un)[:, None] * n
    force[flat] = 0.0
    for k in range(3):
        np.add.at(f, s.faces[:, k], force / 3.0)
    return f


def aero_power(s: State, x: np.ndarray, v: np.ndarray) -> float:
    """Power the air on faces takes out of the free nodes' motion, W: −Σ f·v over
    free nodes (as ``drag``'s ``drag (v − wind)·v``: negative while a wind pushes)."""
    f = aero_forces(s, x, v)
    free = ~s.pinned
    return float(-np.sum(f[free] * v[free]))


#: m/s: self-collision friction is smoothed below this sliding speed
#: (csrc/kernel/contact/self_collision.c).
SELF_COLLISION_SLIP = 1e-3


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a × b of two 3-vectors (np.cross's formula, without its general machinery)."""
    return np.array(
        [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    )


def _closest_on_triangle(p: np.ndarray, tri: np.ndarray) -> np.ndarray:
    """Barycentric weights (3,) of the point of triangle ``tri`` (3, 3) closest to p: the
    projection on its plane when that is inside, else the closest of its three edges'
    closest points (a different route from the kernel's region tests)."""
    a, b, c = tri
    e1, e2 = b - a, c - a
    normal = _cross(e1, e2)
    nn = float(normal @ normal)
    if nn > 0.0:
        r = p - a
        u = float(_cross(r, e2) @ normal) / nn
        v = float(_cross(e1, r) @ normal) / nn
        if u >= 0.0 and v >= 0.0 and u + v <= 1.0:
            return np.array([1.0 - u - v, u, v])
    best, weights = np.inf, np.zeros(3)
    for i, j in ((0, 1), (1, 2), (2, 0)):
        d = tri[j] - tri[i]
        dd = float(d @ d)
        t = 0.0 if dd == 0.0 else min(max(float((p - tri[i]) @ d) / dd, 0.0), 1.0)
        q = tri[i] + t * d
        if float((p - q) @ (p - q)) < best:
            best = float((p - q) @ (p - q))
            weights = np.zeros(3)
            weights[i], weights[j] = 1.0 - t, t
    return weights


def self_collision_forces(
    x: np.ndarray,
    v: np.ndarray,
    faces: np.ndarray,
    thickness: float,
    stiffness: float,
    friction: float = 0.0,
) -> tuple[np.ndarray, float, float]:
    """Self-collision forces (N, 3), their energy (J) and friction power (W), by brute
    force over every (node, triangle) pair with the node not a vertex of the triangle,
    nor the far vertex of a triangle sharing one of its edges.

    A node p at distance d < h from its closest point q = Σ w_i x_i of the triangle is
    pushed along n = (p − q)/d with F = k (h − d) n plus friction −μ k (h − d) u_t /
    √(u_t·u_t + s²) (u_t: the sliding part of v_p − Σ w_i v_i, s = SELF_COLLISION_SLIP);
    each vertex i gets −w_i F. Energy Σ ½ k (h − d)²; friction power Σ μ k (h − d)
    (u_t·u_t) / √(u_t·u_t + s²).
    """
    f = np.zeros_like(x)
    energy = power = 0.0
    for p, t in node_triangle_pairs(faces, len(x)):
        tri = faces[t]
        corners = x[tri]
        w = _closest_on_triangle(x[p], corners)
        law = _self_contact_law(
            x[p] - w @ corners, v[p] - w @ v[tri], thickness, stiffness, friction
        )
        if law is None:
            continue
        force, pair_energy, pair_power = law
        energy += pair_energy
        power += pair_power
        f[p] += force
        f[tri] -= w[:, None] * force[None, :]
    return f, energy, power


def node_triangle_pairs(faces: np.ndarray, num_nodes: int) -> list[tuple[int, int]]:
    """The (node, triangle) pairs self-collision may act on, triangle by triangle, node by
    node: every node but the triangle's vertices and the far vertex of a triangle sharing
    one of its edges (a third triangle on an edge pairs with none)."""

    def edge(a: int, b: int) -> tuple[int, int]:
        return (a, b) if a < b else (b, a)

    by_edge: dict[tuple[int, int], list[int]] = {}
    for t, tri in enumerate(faces.tolist()):
        for k in range(3):
            by_edge.setdefault(edge(tri[k], tri[(k + 1) % 3]), []).append(t)
    out = []
    for t, tri in enumerate(faces.tolist()):
        far: set[int] = set()
        for k in range(3):
            sharing = by_edge[edge(tri[k], tri[(k + 1) % 3])]
            if len(sharing) == 2:
                other = faces[sharing[0] if sharing[1] == t else sharing[1]]
                far.update(int(v) for v in other if v not in tri)
        out += [(p, t) for p in range(num_nodes) if p not in tri and p not in far]
    return out


def _self_contact_law(
    diff: np.ndarray, u: np.ndarray, thickness: float, stiffness: float, friction: float
) -> tuple[np.ndarray, float, float] | None:
    """Self-collision's law for one pair, node–triangle and edge–edge alike: ``diff`` the
    offset between the closest points (first side minus second), ``u`` their relative
    velocity. None when apart (or at distance 0: no direction); else the force on the
    first side k (h − d) n minus the smoothed Coulomb friction, the energy ½ k (h − d)²
    and the friction's power."""
    d = float(np.linalg.norm(diff))
    if not d < thickness or d == 0.0:
        return None
    n = diff / d
    fn = stiffness * (thickness - d)
    force = fn * n
    power = 0.0
    if friction > 0.0:
        ut = u - (u @ n) * n
        scale = friction * fn / np.sqrt(ut @ ut + SELF_COLLISION_SLIP**2)
        force = force - scale * ut
        power = float(scale * (ut @ ut))
    return force, 0.5 * stiffness * (thickness - d) ** 2, power


def _closest_on_segments(
    a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray
) -> tuple[float, float]:
    """Parameters (s, t) of the closest points a + s (b − a) and c + t (d − c) of two
    segments: the stationary point of the squared distance when it lies inside both,
    else the best of the four end-against-segment projections (a different route from
    the kernel's clamping, Ericson 5.1.9)."""
    e1, e2, r = b - a, d - c, a - c
    A, B, E = float(e1 @ e1), float(e1 @ e2), float(e2 @ e2)
    C, F = float(e1 @ r), float(e2 @ r)
    candidates: list[tuple[float, float]] = []
    det = A * E - B * B
    if det > 0.0:
        s = (B * F - C * E) / det
        t = (A * F - B * C) / det
        if 0.0 <= s <= 1.0 and 0.0 <= t <= 1.0:
            candidates.append((s, t))

    def onto(p: np.ndarray, q0: np.ndarray, dq: np.ndarray, qq: float) -> float:
        return 0.0 if qq == 0.0 else min(max(float((p - q0) @ dq) / qq, 0.0), 1.0)

    candidates += [(0.0, onto(a, c, e2, E)), (1.0, onto(b, c, e2, E))]
    candidates += [(onto(c, a, e1, A), 0.0), (onto(d, a, e1, A), 1.0)]

    def gap(st: tuple[float, float]) -> float:
        g = (a + st[0] * e1) - (c + st[1] * e2)
        return float(g @ g)

    return min(candidates, key=gap)


def edge_pairs(faces: np.ndarray) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The edge pairs edge–edge contact may act on: the faces' edges, each once as
    (lo, hi), every two of them with no node in common and no node of one joined by a
    face edge to a node of the other (csrc/kernel/contact/edge_contact.c)."""
    edges = sorted(
        {
            (min(u, v), max(u, v))
            for tri in faces.tolist()
            for u, v in zip(tri, tri[1:] + tri[:1], strict=True)
        }
    )
    joined = set(edges)
    out = []
    for k, e in enumerate(edges):
        for f in edges[k + 1 :]:
            if any(u == v or (min(u, v), max(u, v)) in joined for u in e for v in f):
                continue
            out.append((e, f))
    return out


def edge_contact_forces(
    x: np.ndarray,
    v: np.ndarray,
    faces: np.ndarray,
    thickness: float,
    stiffness: float,
    friction: float = 0.0,
) -> tuple[np.ndarray, float, float]:
    """Edge–edge contact forces (N, 3), their energy (J) and friction power (W), by brute
    force over :func:`edge_pairs`: the part of self-collision that keeps edges from
    passing each other (with the node–triangle part, :func:`self_collision_forces`).

    For edges (a, b) and (c, d) whose closest points p = a + s (b − a), q = c + t (d − c)
    are d < h apart, n = (p − q)/d: F = k (h − d) n plus friction −μ k (h − d) u_t /
    √(u_t·u_t + s²) (u_t: the sliding part of v_p − v_q), shared as (1 − s) F on a, s F
    on b, −(1 − t) F on c, −t F on d. Energy Σ ½ k (h − d)²; friction power as for
    :func:`self_collision_forces`.
    """
    f = np.zeros_like(x)
    energy = power = 0.0
    for (a, b), (c, d) in edge_pairs(faces):
        s, t = _closest_on_segments(x[a], x[b], x[c], x[d])
        weights = np.array([1.0 - s, s, -(1.0 - t), -t])
        nodes = [a, b, c, d]
        law = _self_contact_law(
            weights @ x[nodes], weights @ v[nodes], thickness, stiffness, friction
        )
        if law is None:
            continue
        force, pair_energy, pair_power = law
        energy += pair_energy
        power += pair_power
        f[nodes] += weights[:, None] * force[None, :]
    return f, energy, power


# ---------------------------------------------------------------- node–node contact
# Every pair tried, no grid: the kernel (csrc/kernel/contact/contact.c) finds the
# touching pairs with a hashed grid, so a pair the grid missed (or found twice) shows as
# a disagreement in the tests. The law is the same linear spring–dashpot with
# regularised Coulomb friction (see :attr:`springsim.System.contact_stiffness`), its
# stiffness the user's k_c or, by default, each pair's from the step; the law from the
# step's dashpot is capped at twice its spring and its damping ratio calibrated for the
# step's method (:func:`calibrated_zeta`, on the reference's own 1D model of a contact).

#: Nodes closer than this (metres) exert no contact force: no direction.
MIN_DISTANCE = 1e-12
#: The law from the step: ω_c dt at most, and the most its dashpot and friction take
#: per substep, (c + γ) dt / m_eff (the kernel's SS_CONTACT_OMEGA_DT and _DAMPING_DT).
CONTACT_OMEGA_DT = 0.1
CONTACT_DAMPING_DT = 0.3
#: The law from the step's dashpot force is at most this many times its spring's.
CONTACT_DAMPER_CAP = 2.0


@dataclass
class Contact:
    """Node–node contact of a reference state: radii, groups and the law.

    ``off`` holds the group pairs (a <= b) that do not touch. ``stiffness`` None is
    the law from the step (:meth:`pair_stiffness`), at ``dt``: the substep of the last
    :func:`step` (0: none yet, no stiffness), which :func:`step` sets.
    """

    radii: np.ndarray
    groups: np.ndarray
    stiffness: float | None = None
    restitution: float = 0.5
    friction: float = 0.0
    off: set[tuple[int, int]] = field(default_factory=set)
    dt: float = 0.0
    method: str = "symplectic_euler"
    segments: bool = False

    @classmethod
    def from_system(cls, sim: _core.System) -> Contact:
        """The contact settings of a :class:`springsim.System`."""
        _radius, stiffness, restitution, friction = sim._contact_law()
        return cls(
            radii=np.array(sim._view("radii"), dtype=np.float64),
            groups=np.array(sim._view("groups"), dtype=np.int64),
            stiffness=None if stiffness == 0.0 else stiffness,  # the kernel's "from the step"
            restitution=restitution,
            friction=friction,
            off={(int(a), int(b)) for a, b in sim._contact_filter()},
            dt=sim._contact_dt(),
            segments=sim._segment_contact(),
        )

    def omega_dt(self) -> float:
        """ω_c dt of the law from the step: min(0.25, 0.3 / (2ζ + 2·[μ > 0]))."""
        damping = 2.0 * self.zeta() + (2.0 if self.friction > 0.0 else 0.0)
        limit = CONTACT_DAMPING_DT / damping if damping > 0.0 else np.inf
        return min(CONTACT_OMEGA_DT, limit)

    def pair_stiffness(self, m_eff: np.ndarray) -> np.ndarray:
        """Each pair's k, N/m: ``stiffness``, or from the step m_eff (ω_c dt / dt)²."""
        if self.stiffness is not None:
            return np.full_like(m_eff, self.stiffness)
        if not self.dt > 0.0:
            return np.zeros_like(m_eff)
        w = self.omega_dt() / self.dt
        return m_eff * w * w

    def step_zeta(self) -> float:
        """The damping ratio of the law from the step's dashpot for :attr:`method` (the
        last :func:`step`'s): :func:`calibrated_zeta`."""
        return calibrated_zeta(self.restitution, self.friction > 0.0, self.method)

    def zeta(self) -> float:
        """The dashpot's damping ratio: −ln e / √(π² + ln² e), 1 at e = 0."""
        if self.restitution == 0.0:
            return 1.0
        log_e = np.log(self.restitution)
        return float(-log_e / np.sqrt(np.pi**2 + log_e**2))


def _law_1d(u: float, w: float, a: float, zeta: float) -> float:
    """The law from the step on a gap u < 0 closing at w, with dt = m_eff = 1:
    a² δ + clip(−2ζ a w, −a² δ, a² δ)."""
    if not u < 0.0:
        return 0.0
    spring = -a * a * u
    cap = CONTACT_DAMPER_CAP * spring
    return spring + min(cap, max(-cap, -2.0 * zeta * a * w))


def _bounce_1d(method: str, a: float, zeta: float, phase: float) -> float:
    """Exit speed of one head-on contact entered at gap ``phase`` closing at 1, stepped
    by ``method`` in the units of :func:`_law_1d` (implicit Euler, whose Jacobian leaves
    the law from the step out, steps its contact as symplectic Euler does)."""
    u, w, prev = phase, -1.0, 0.0
    f = _law_1d
    for n in range(2000):
        a1 = f(u, w, a, zeta)
        if method == "euler":
            u, w = u + w, w + a1
        elif method == "verlet":
            before = a1 if n == 0 else prev
            u0, u_prev = u, u - w + 0.5 * before
            u = 2.0 * u0 - u_prev + a1
            w, prev = (u - u0) + 0.5 * a1, a1
        elif method == "velocity_verlet":
            half = w + 0.5 * a1
            u = u + half
            w = half + 0.5 * f(u, w + a1, a, zeta)
        elif method == "rk2":
            u1, w1 = u + w, w + a1
            a2 = f(u1, w1, a, zeta)
            u, w = u + 0.5 * (w + w1), w + 0.5 * (a1 + a2)
        elif method == "rk4":
            u2, w2 = u + 0.5 * w, w + 0.5 * a1
            a2 = f(u2, w2, a, zeta)
            u3, w3 = u + 0.5 * w2, w + 0.5 * a2
            a3 = f(u3, w3, a, zeta)
            u4, w4 = u + w3, w + a3
            a4 = f(u4, w4, a, zeta)
            u = u + (w + 2.0 * w2 + 2.0 * w3 + w4) / 6.0
            w = w + (a1 + 2.0 * a2 + 2.0 * a3 + a4) / 6.0
        else:  # symplectic Euler, and implicit Euler's contact
            w = w + a1
            u = u + w
        if u > 0.0 and w > 0.0:
            return w
    return 0.0  # still held after 2000 substeps: it leaves at 0


@functools.lru_cache(maxsize=64)
def calibrated_zeta(restitution: float, rough: bool, method: str) -> float:
    """The law from the step's damping ratio for ``method``: the ζ in [0, 10] whose
    head-on bounce, averaged over eight impact phases within a substep, leaves at
    ``restitution`` times the approach speed (found by 40 bisections; 0 when even ζ = 0
    bounces slower, 10 when even ζ = 10 bounces faster, as at e = 0). ``rough``
    (friction) lowers ω_c dt, :meth:`Contact.omega_dt`."""
    a = Contact(np.zeros(0), np.zeros(0), None, restitution, 1.0 if rough else 0.0).omega_dt()

    def mean(zeta: float) -> float:
        return sum(_bounce_1d(method, a, zeta, (i + 0.5) / 8) for i in range(8)) / 8

    lo, hi = 0.0, 10.0
    if mean(lo) <= restitution:
        return lo
    if mean(hi) >= restitution:
        return hi
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if mean(mid) > restitution:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def contact_pairs(s: State, x: np.ndarray, margin: float = 0.0) -> np.ndarray:
    """Every touching pair (i < j), (P, 2), by i then j: overlapping (closer than
    r_i + r_j + ``margin``), allowed by the groups' filter and, within a group, not
    joined by a spring. Every pair of nodes with radii is tried (one row of distances at
    a time: O(K²) work, O(K) memory)."""
    c = s.contact
    empty = np.zeros((0, 2), np.int64)
    if c is None:
        return empty
    idx = np.flatnonzero(c.radii > 0)
    if len(idx) < 2:
        return empty
    joined = {(min(i, j), max(i, j)) for i, j in s.springs.tolist()}
    xs, rs = x[idx], c.radii[idx]
    found = []
    for a in range(len(idx) - 1):
        d2 = np.sum((xs[a + 1 :] - xs[a]) ** 2, axis=1)
        reach = rs[a] + rs[a + 1 :]
        if margin > 0.0:
            reach = reach + margin
        for b in np.flatnonzero(d2 < reach * reach) + a + 1:
            i, j = int(idx[a]), int(idx[b])
            g, h = int(c.groups[i]), int(c.groups[j])
            if g == h and (i, j) in joined:
                continue
            if (min(g, h), max(g, h)) in c.off:
                continue
            found.append((i, j))
    return np.array(found, dtype=np.int64).reshape(-1, 2)


def _contact_law(s: State, x: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per pair: the pairs, the force on j (−force on i), the overlap, the power lost,
    the stiffness."""
    c = s.contact
    p = contact_pairs(s, x)
    if c is None or len(p) == 0:
        return p, np.zeros((0, s.dim)), np.zeros(0), np.zeros(0), np.zeros(0)
    i, j = p[:, 0], p[:, 1]
    d = x[j] - x[i]
    dist = np.sqrt(np.sum(d * d, axis=1))
    delta = c.radii[i] + c.radii[j] - dist
    live = (dist >= MIN_DISTANCE) & ~(s.pinned[i] & s.pinned[j])
    n = d / np.where(live, dist, 1.0)[:, None]
    mi, mj = s.m[i], s.m[j]
    m_eff = np.where(s.pinned[i], mj, np.where(s.pinned[j], mi, mi * mj / (mi + mj)))
    k = c.pair_stiffness(m_eff)
    force, power = _law(c, delta, n, v[j] - v[i], k, m_eff)
    force[~live] = 0.0
    return p, force, np.where(live, delta, 0.0), np.where(live, power, 0.0), k


def _law(
    c: Contact, delta: np.ndarray, n: np.ndarray, vrel: np.ndarray, k: np.ndarray, m_eff: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Node–node contact's law on contacts of overlap δ along unit normals n (rows), with
    relative velocities vrel, stiffnesses k and effective masses m_eff: the force on the
    side n points to, and the power the dashpot and friction take."""
    root = np.sqrt(k * m_eff)
    damping = 2.0 * c.zeta() * root
    vn = np.sum(vrel * n, axis=1)
    fn = k * delta - damping * vn
    power = damping * vn**2
    if c.stiffness is None:  # the calibrated dashpot, never beyond the spring
        spring = k * delta
        cap = CONTACT_DAMPER_CAP * spring
        damper = np.clip(-2.0 * c.step_zeta() * root * vn, -cap, cap)
        fn, power = spring + damper, -damper * vn
    force = fn[:, None] * n
    if c.friction > 0:
        vt = vrel - vn[:, None] * n
        speed = np.sqrt(np.sum(vt * vt, axis=1))
        ft = np.minimum(2.0 * root * speed, c.friction * np.abs(fn))
        moving = speed > 0
        force[moving] -= (ft[moving] / speed[moving])[:, None] * vt[moving]
        power = power + np.where(moving, ft * speed, 0.0)
    return force, power


def segment_pairs(s: State) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The segment pairs segment contact may act on (csrc/kernel/contact/segment_contact.c):
    the springs whose nodes both have radii, each once as (lo, hi); every two with no node
    in common, no node of one joined by a spring to a node of the other, and every node of
    one allowed by the groups' filter to touch every node of the other."""
    c = s.contact
    if c is None or not c.segments or s.dim != 3:
        return []
    joined = {(min(i, j), max(i, j)) for i, j in s.springs.tolist()}
    segs = sorted((i, j) for i, j in joined if i != j and c.radii[i] > 0 and c.radii[j] > 0)
    out = []
    for k, e in enumerate(segs):
        for f in segs[k + 1 :]:
            if any(u == w or (min(u, w), max(u, w)) in joined for u in e for w in f):
                continue
            groups = [(int(c.groups[u]), int(c.groups[w])) for u in e for w in f]
            if any((min(g, h), max(g, h)) in c.off for g, h in groups):
                continue
            out.append((e, f))
    return out


def segment_contact(s: State, x: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Segment contact's forces (N, 3), energy (J) and power lost (W), by brute force
    over :func:`segment_pairs`. Segments (a, b), (c, d) of radii R = (r_a + r_b)/2 whose
    closest points p = a + s (b − a), q = c + t (d − c) overlap, δ = R_ab + R_cd − ‖p − q‖
    > 0, get node–node contact's law along n = (p − q)/‖p − q‖ with the relative velocity
    Σ w_k v_k (w = (1 − s, s, −(1 − t), −t)), the stiffness at m_k = 1/(max(w_a, w_b) +
    max(w_c, w_d)) (w = 1/m, 0 pinned) and the dashpot's mass 1/Σ w_k²/m_k; the force F on
    p is shared as w_k F."""
    c = s.contact
    f = np.zeros_like(x)
    energy = power = 0.0
    for (a, b), (cc, d) in segment_pairs(s):
        assert c is not None
        st, tt = _closest_on_segments(x[a], x[b], x[cc], x[d])
        nodes = [a, b, cc, d]
        w = np.array([1.0 - st, st, -(1.0 - tt), -tt])
        gap = w @ x[nodes]
        dist = float(np.sqrt(gap @ gap))
        delta = 0.5 * (c.radii[a] + c.radii[b]) + 0.5 * (c.radii[cc] + c.radii[d]) - dist
        inv = np.where(s.pinned[nodes], 0.0, 1.0 / s.m[nodes])
        w_max = max(inv[0], inv[1]) + max(inv[2], inv[3])
        if not (delta > 0.0 and dist > 0.0 and w_max > 0.0):
            continue
        W = float(np.sum(w * w * inv))
        k = c.pair_stiffness(np.array([1.0 / w_max]))
        force, lost = _law(
            c,
            np.array([delta]),
            (gap / dist)[None, :],
            (w @ v[nodes])[None, :],
            k,
            np.array([1.0 / W if W > 0.0 else 0.0]),
        )
        f[nodes] += w[:, None] * force
        energy += float(0.5 * k[0] * delta**2)
        power += float(lost[0])
    return f, energy, power


def contact_forces(s: State, x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Contact force on each node, (N, dim)."""
    p, force, _delta, _power, _k = _contact_law(s, x, v)
    f = np.zeros_like(x)
    np.add.at(f, p[:, 1], force)
    np.add.at(f, p[:, 0], -force)
    return f + segment_contact(s, x, v)[0]


def contact_energy(s: State, x: np.ndarray) -> float:
    """½ Σ k δ² over the touching pairs, J (the law from the step at the last step's dt)."""
    if s.contact is None:
        return 0.0
    _p, _force, delta, _power, k = _contact_law(s, x, np.zeros_like(x))
    return float(0.5 * np.sum(k * delta**2)) + segment_contact(s, x, np.zeros_like(x))[1]


def contact_power(s: State, x: np.ndarray, v: np.ndarray) -> float:
    """Power, W, the dashpots and friction take out of the motion."""
    return float(np.sum(_contact_law(s, x, v)[3])) + segment_contact(s, x, v)[2]


def contact_matrices(s: State, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Implicit Euler's contact terms at ``x``, dense (dim·N)²: the stiffness Σ k_c u uᵀ
    and the damping Σ c u uᵀ of the touching pairs (each a compressed spring along its
    normal u, whose projected sideways term is 0), assembled ±block as springs are."""
    n, dim = x.shape
    stiffness, damping = np.zeros((n * dim, n * dim)), np.zeros((n * dim, n * dim))
    c = s.contact
    if c is None or c.stiffness is None:  # the law from the step stays explicit
        return stiffness, damping
    for i, j in contact_pairs(s, x).tolist():
        d = x[j] - x[i]
        dist = float(np.sqrt(d @ d))
        if (
            dist < MIN_DISTANCE
            or c.radii[i] + c.radii[j] - dist <= 0
            or (s.pinned[i] and s.pinned[j])
        ):
            continue
        u = d / dist
        mi, mj = s.m[i], s.m[j]
        m_eff = mj if s.pinned[i] else mi if s.pinned[j] else mi * mj / (mi + mj)
        k = float(c.pair_stiffness(np.array([m_eff]))[0])
        uu = np.outer(u, u)
        for matrix, coefficient in (
            (stiffness, k),
            (damping, 2.0 * c.zeta() * np.sqrt(k * m_eff)),
        ):
            for a, b, sign in ((i, i, 1), (j, j, 1), (i, j, -1), (j, i, -1)):
                matrix[a * dim : (a + 1) * dim, b * dim : (b + 1) * dim] += sign * coefficient * uu
    return stiffness, damping


# ---------------------------------------------------------------- the integrators


def accelerations(s: State, x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Acceleration of every node at positions ``x`` and velocities ``v``.

    a = (springs + m g - drag (v - wind) + external + gas + air on faces + node–node
    contact) / m, and zero for pinned nodes.
    """
    f = spring_forces(s, x, v)
    f += s.m[:, None] * s.gravity - s.drag * (v - s.wind) + s.ext
    f += pressure_forces(s, x) + aero_forces(s, x, v) + contact_forces(s, x, v)
    a = f / s.m[:, None]
    a[s.pinned] = 0.0
    return a


def _move_pinned(s: State, x0: np.ndarray, v0: np.ndarray, dt: float) -> None:
    """Pinned nodes move with their own velocity, exactly x += v dt, whatever the method
    (zero, so they stay put, unless they are dragged)."""
    p = s.pinned
    s.x[p] = x0[p] + v0[p] * dt
    s.v[p] = v0[p]


def _euler(s: State, dt: float) -> None:
    # Explicit Euler: both updates use the old state. Unstable for undamped springs.
    x0, v0 = s.x.copy(), s.v.copy()
    a = accelerations(s, x0, v0)
    s.x = x0 + v0 * dt
    s.v = v0 + a * dt
    _move_pinned(s, x0, v0, dt)


def _symplectic_euler(s: State, dt: float) -> None:
    # Semi-implicit Euler: the new velocity moves the node.
    x0, v0 = s.x.copy(), s.v.copy()
    a = accelerations(s, x0, v0)
    s.v = v0 + a * dt
    s.x = x0 + s.v * dt
    _move_pinned(s, x0, v0, dt)


def _verlet(s: State, dt: float) -> None:
    # Position Verlet, x' = 2x - x_prev + a dt².  The previous position is the one
    # implied by the current state, x_prev = x - v dt + ½ a_prev dt², so writing x or
    # v between steps is always honoured.  The velocity reported afterwards,
    # v' = (x' - x)/dt + ½ a dt, is second-order accurate (exact for constant a).
    x0, v0 = s.x.copy(), s.v.copy()
    a = accelerations(s, x0, v0)
    a_prev = a if s.prev_accel is None else s.prev_accel
    x_prev = x0 - v0 * dt + 0.5 * a_prev * dt * dt
    s.x = 2.0 * x0 - x_prev + a * dt * dt
    s.v = (s.x - x0) / dt + 0.5 * a * dt
    s.prev_accel = a
    _move_pinned(s, x0, v0, dt)


def _velocity_verlet(s: State, dt: float) -> None:
    # Kick-drift-kick: half kick, drift, force at the new positions, half kick.
    # Velocity-dependent forces (damping, drag) at the new positions are evaluated
    # with the Euler-predicted end velocity v + a dt, which is O(dt²) accurate; the
    # half-step velocity would be only O(dt) and make the method first order.
    # Without such forces this is the classical (symplectic) velocity Verlet.
    x0, v0 = s.x.copy(), s.v.copy()
    a = accelerations(s, x0, v0)
    v_half = v0 + 0.5 * dt * a
    s.x = x0 + v_half * dt
    v_predicted = v0 + dt * a
    a_new = accelerations(s, s.x, v_predicted)
    s.v = v_half + 0.5 * dt * a_new
    _move_pinned(s, x0, v0, dt)


def _rk2(s: State, dt: float) -> None:
    # Heun: evaluate the whole state at the start and at an Euler-predicted end,
    # then apply the average (the OSU slides' second-order method).
    x0, v0 = s.x.copy(), s.v.copy()
    a1 = accelerations(s, x0, v0)
    x1 = x0 + dt * v0
    v1 = v0 + dt * a1
    a2 = accelerations(s, x1, v1)
    s.x = x0 + 0.5 * dt * (v0 + v1)
    s.v = v0 + 0.5 * dt * (a1 + a2)
    _move_pinned(s, x0, v0, dt)


def _rk4(s: State, dt: float) -> None:
    # Classical fourth-order Runge-Kutta on (x, v).
    x0, v0 = s.x.copy(), s.v.copy()
    a1 = accelerations(s, x0, v0)
    x2, v2 = x0 + 0.5 * dt * v0, v0 + 0.5 * dt * a1
    a2 = accelerations(s, x2, v2)
    x3, v3 = x0 + 0.5 * dt * v2, v0 + 0.5 * dt * a2
    a3 = accelerations(s, x3, v3)
    x4, v4 = x0 + dt * v3, v0 + dt * a3
    a4 = accelerations(s, x4, v4)
    s.x = x0 + dt / 6.0 * (v0 + 2.0 * v2 + 2.0 * v3 + v4)
    s.v = v0 + dt / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
    _move_pinned(s, x0, v0, dt)


#: Colours of the XPBD solve order; the last one (63) is the overflow colour.
SERIAL_COLOUR = 63


def colour_order(springs: np.ndarray, num_nodes: int) -> list[int]:
    """The order in which ``xpbd`` solves the springs: colour by colour.

    The springs are coloured greedily in index order: each spring takes the lowest
    colour c in 0..62 that no earlier spring at either of its nodes took; a spring that
    finds all 63 taken goes to the overflow colour 63, which marks nothing. The order is
    colour 0's springs in increasing index, then colour 1's, ..., the overflow colour's
    last. No two springs of a colour (but the overflow) share a node.

    Examples
    --------
    >>> colour_order(np.array([[0, 1], [1, 2], [2, 3]]), 4)
    [0, 2, 1]
    """
    taken: list[set[int]] = [set() for _ in range(num_nodes)]
    colours = []
    for i, j in springs:
        c = 0
        while c < SERIAL_COLOUR and (c in taken[i] or c in taken[j]):
            c += 1
        if c < SERIAL_COLOUR:
            taken[i].add(c)
            taken[j].add(c)
        colours.append(c)
    return sorted(range(len(colours)), key=lambda s: (colours[s], s))


def _xpbd(s: State, dt: float) -> None:
    # XPBD (Macklin et al. 2016): predict with the non-spring forces (gravity, drag,
    # external, gas), then solve each spring as a distance constraint C = l - L with
    # compliance alpha = 1/k (0: rigid rod) and damping gamma = alpha c / dt,
    # Gauss-Seidel in colour order (colour_order), `iterations` times;
    # v = (x - x_start) / dt. Springs with no free end or k = 0 pull nothing.
    # Node–node contact, then the colliders, are solved as constraints after the
    # springs in each pass (_contact_constraints, _collider_constraints), and
    # restitution in a velocity pass (_restitute, _collider_restitute).
    x0, v0 = s.x.copy(), s.v.copy()
    m = s.m[:, None]
    a = (m * s.gravity - s.drag * (v0 - s.wind) + s.ext + pressure_forces(s, x0)) / m
    a += aero_forces(s, x0, v0) / m  # air on faces
    a[s.pinned] = 0.0
    s.v = v0 + a * dt
    s.x = x0 + s.v * dt
    w = np.where(s.pinned, 0.0, 1.0 / s.m)
    d = s.x - x0
    moved = float(np.sqrt(np.max(np.sum(d * d, axis=1)))) if len(d) else 0.0
    held = None
    if s.colliders:  # first: a node that started inside one is moved onto it
        r_max = float(s.contact.radii.max(initial=0.0)) if s.contact is not None else 0.0
        held = _collider_begin(s, x0, w, 2.0 * moved + 2.0 * r_max)
    contacts = _contact_begin(s, moved, dt) if s.contact is not None else None
    segments = _segment_begin(s, moved)
    # Once per substep: the springs that pull, in solve order, and their constants.
    solved = []
    for k in colour_order(s.springs, len(s.x)):
        i, j = s.springs[k]
        if w[i] + w[j] == 0.0 or s.k[k] == 0.0:  # k = 0: infinitely compliant, no pull
            continue
        alpha = 1.0 / s.k[k]
        alpha_dt2, gamma = alpha / (dt * dt), alpha * s.c[k] / dt
        reciprocal = 1.0 / ((1.0 + gamma) * (w[i] + w[j]) + alpha_dt2)
        solved.append((k, i, j, alpha_dt2, gamma, reciprocal))
    lam = np.zeros(len(s.springs))
    for _ in range(s.iterations):
        for k, i, j, alpha_dt2, gamma, reciprocal in solved:
            d = s.x[j] - s.x[i]
            l2 = d @ d
            if l2 < MIN_SPRING_LENGTH**2:
                continue
            length = np.sqrt(l2)
            u = d * (1.0 / length)
            moved = (d - (x0[j] - x0[i])) @ u  # the ends' motion apart, this substep
            dlam = ((s.L[k] - length) - alpha_dt2 * lam[k] - gamma * moved) * reciprocal
            lam[k] += dlam
            delta = dlam * u
            s.x[i] -= w[i] * delta
            s.x[j] += w[j] * delta
        if contacts is not None:
            _contact_constraints(s, contacts, x0, w)
        if segments:
            _segment_constraints(s, segments, x0, w, dt)
        if held is not None:
            _collider_constraints(s, held, x0, w)
    free = ~s.pinned
    s.v[free] = (s.x[free] - x0[free]) / dt
    _move_pinned(s, x0, v0, dt)
    threshold = 2.0 * float(np.sqrt(s.gravity @ s.gravity)) * dt
    if contacts is not None:
        _restitute(s, contacts, w, threshold)
    if held is not None:
        _collider_restitute(s, held, threshold)


def _contact_begin(s: State, moved: float, dt: float) -> list[list[float]]:
    """XPBD's contact constraints of a substep: the pairs within r_i + r_j + margin at
    the predicted positions (margin: twice the farthest predicted move, ``moved``, at
    most the largest radius), by (i, j), each as [i, j, λ, u0, λ_t, α̃]: λ = λ_t = 0,
    u0 the normal velocity before the solve, α̃ = 1/(k_c dt²) (0 for the stiffness from
    the step: a hard constraint)."""
    c = s.contact
    assert c is not None
    margin = min(2.0 * moved, float(c.radii.max(initial=0.0)))
    compliance = 0.0 if c.stiffness is None else 1.0 / (c.stiffness * dt * dt)
    out = []
    for i, j in contact_pairs(s, s.x, margin).tolist():
        e = s.x[j] - s.x[i]
        dist = float(np.sqrt(e @ e))
        u0 = float((s.v[j] - s.v[i]) @ e) / dist if dist >= MIN_DISTANCE else 0.0
        out.append([i, j, 0.0, u0, 0.0, compliance])
    return out


def _contact_constraints(
    s: State, contacts: list[list[float]], x0: np.ndarray, w: np.ndarray
) -> None:
    """One pass over the contacts (csrc/kernel/contact/contact.c, "Contact as
    constraints"): C = |x_j − x_i| − (r_i + r_j) ≥ 0, Δλ = (−C − α̃λ)/(w_i + w_j + α̃)
    with λ ≥ 0; then friction, the slip across n taken back up to μλ in all."""
    c = s.contact
    assert c is not None
    mu = c.friction
    for row in contacts:
        i, j = int(row[0]), int(row[1])
        wsum = w[i] + w[j]
        if wsum == 0.0:
            continue
        d = s.x[j] - s.x[i]
        l2 = d @ d
        if l2 < MIN_SPRING_LENGTH**2:
            continue
        length = np.sqrt(l2)
        n = d * (1.0 / length)
        gap, lam = length - (c.radii[i] + c.radii[j]), row[2]
        if gap >= 0.0 and lam == 0.0:
            continue
        dlam = (-gap - row[5] * lam) / (wsum + row[5])
        if lam + dlam < 0.0:
            dlam = -lam
        row[2] = lam + dlam
        s.x[i] -= w[i] * (dlam * n)
        s.x[j] += w[j] * (dlam * n)
        room = mu * row[2] - row[4]
        if not (mu > 0.0 and room > 0.0):
            continue
        slip = (s.x[j] - x0[j]) - (s.x[i] - x0[i])
        slip = slip - (slip @ n) * n
        s2 = slip @ slip
        if not s2 > 0.0:
            continue
        length = np.sqrt(s2)
        dmu = min(length / wsum, room)
        row[4] += dmu
        g = dmu * (slip / length)
        s.x[i] += w[i] * g
        s.x[j] -= w[j] * g


def _segment_begin(s: State, moved: float) -> list[list[float]]:
    """XPBD's segment constraints of a substep, as [a, b, c, d, λ, λ_t] (λ = λ_t = 0): the
    pairs of :func:`segment_pairs` whose closest points are within 2 R_max (1 + 1e-6) +
    margin at the predicted positions (R_max the largest segment radius, with the kernel's
    slack; margin as node–node contact's, twice the farthest predicted move at most the
    largest node radius)."""
    pairs = segment_pairs(s)
    if not pairs:
        return []
    c = s.contact
    assert c is not None
    ends = c.radii[s.springs]  # (M, 2): every segment's, listed or not
    r_max = float(np.max(0.5 * (ends[:, 0] + ends[:, 1]), where=(ends > 0).all(1), initial=0.0))
    reach = (1.0 + 1e-6) * 2.0 * r_max + min(2.0 * moved, float(c.radii.max(initial=0.0)))
    out = []
    for (a, b), (cc, d) in pairs:
        st, tt = _closest_on_segments(s.x[a], s.x[b], s.x[cc], s.x[d])
        gap = (s.x[a] + st * (s.x[b] - s.x[a])) - (s.x[cc] + tt * (s.x[d] - s.x[cc]))
        if gap @ gap < reach * reach:
            out.append([a, b, cc, d, 0.0, 0.0])
    return out


def _segment_constraints(
    s: State, segments: list[list[float]], x0: np.ndarray, w: np.ndarray, dt: float
) -> None:
    """One pass over the segment pairs (csrc/kernel/contact/segment_contact.c), in the
    order of :func:`segment_pairs`: C = ‖p − q‖ − (R_ab + R_cd) ≥ 0 at the closest points,
    W = Σ w_k² / m_k, Δλ = (−C − α̃λ)/(W + α̃) with λ ≥ 0 (α̃ = 1/(k_c dt²), 0 from the
    step), node k moved by w_k (1/m_k) Δλ n; then friction on the contact points' slip
    Σ w_k (x_k − x0_k) across n, taken back up to μλ in all. No restitution."""
    c = s.contact
    assert c is not None
    compliance = 0.0 if c.stiffness is None else 1.0 / (c.stiffness * dt * dt)
    for row in segments:
        nodes = [int(q) for q in row[:4]]
        a, b, cc, d = nodes
        h = 0.5 * (c.radii[a] + c.radii[b]) + 0.5 * (c.radii[cc] + c.radii[d])
        st, tt = _closest_on_segments(s.x[a], s.x[b], s.x[cc], s.x[d])
        weights = np.array([1.0 - st, st, -(1.0 - tt), -tt])
        gap = weights @ s.x[nodes]
        dist = float(np.sqrt(gap @ gap))
        if row[4] == 0.0 and not dist < h:
            continue
        if dist == 0.0:
            continue  # (the kernel takes (b − a) × (d − c); the tests never meet it)
        n = gap / dist
        inv = w[nodes]
        W = float(np.sum(weights * weights * inv))
        if not W > 0.0:
            continue
        dlam = (-(dist - h) - compliance * row[4]) / (W + compliance)
        dlam = max(dlam, -row[4])
        row[4] += dlam
        s.x[nodes] += (weights * inv)[:, None] * (dlam * n)[None, :]
        room = c.friction * row[4] - row[5]
        if not (c.friction > 0.0 and room > 0.0):
            continue
        slip = weights @ (s.x[nodes] - x0[nodes])
        slip = slip - (slip @ n) * n
        length = float(np.sqrt(slip @ slip))
        if not length > 0.0:
            continue
        dmu = min(length / W, room)
        row[5] += dmu
        s.x[nodes] -= (weights * inv)[:, None] * (dmu * slip / length)[None, :]


def _restitute(s: State, contacts: list[list[float]], w: np.ndarray, threshold: float) -> None:
    """Restitution after the solve: each pair that pushed and was coming in (u0 < 0)
    leaves with the separating
    speed e·(−u0) if it came in faster than ``threshold`` (2|g|dt), else 0, by equal and
    opposite changes of velocity weighted by w."""
    c = s.contact
    assert c is not None
    for row in contacts:
        if not (row[2] > 0.0 and row[3] < 0.0):  # pushed, and was coming in
            continue
        i, j = int(row[0]), int(row[1])
        d = s.x[j] - s.x[i]
        if d @ d < MIN_SPRING_LENGTH**2:
            continue
        n = d / np.sqrt(d @ d)
        un = float((s.v[j] - s.v[i]) @ n)
        target = c.restitution * -row[3] if -row[3] > threshold else 0.0
        du, wsum = target - un, w[i] + w[j]
        s.v[i] -= (w[i] / wsum) * (du * n)
        s.v[j] += (w[j] / wsum) * (du * n)


@dataclass
class Collider:
    """A collider as the kernel holds it (see ``springsim.colliders``).

    ``kind`` is "plane" (``vector`` its unit normal, ``scalar`` its offset: n·x >= offset
    is free), "sphere" (centre, radius), "box" (centre; ``end`` the half-extents),
    "capsule" (one end, radius; ``end`` the other end) or "mesh" (not modelled here).
    """

    kind: str
    vector: np.ndarray
    scalar: float
    end: np.ndarray
    restitution: float = 0.0
    friction: float = 0.0

    KINDS = ("plane", "sphere", "box", "capsule", "mesh")

    @classmethod
    def from_row(cls, sim: _core.System, row: tuple) -> Collider:  # type: ignore[type-arg]
        """One row of ``System._colliders()``: (id, kind, vector, scalar, e, μ)."""
        cid, kind, vector, scalar, restitution, friction = row
        end = sim._collider_shape(cid) if kind in (2, 3) else (0.0,) * len(vector)
        return cls(
            kind=cls.KINDS[kind],
            vector=np.array(vector, dtype=np.float64),
            scalar=float(scalar),
            end=np.array(end, dtype=np.float64),
            restitution=float(restitution),
            friction=float(friction),
        )


def _dot(a: npt.ArrayLike, b: npt.ArrayLike, dim: int) -> float:
    """Σ a_k b_k summed in k order, as the kernel sums."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    total = 0.0
    for k in range(dim):
        total += float(a[k]) * float(b[k])
    return total


def _collider_locate(c: Collider, p: np.ndarray) -> tuple[bool, float, np.ndarray, np.ndarray]:
    """Where point p is against collider c (colliders.c, ss_collider_locate): whether
    it is inside, the depth (m, negative outside), the nearest surface point and the unit
    normal there, into free space."""
    dim = len(p)
    pt = [float(q) for q in p]
    normal, surface = np.zeros(dim), np.zeros(dim)
    if c.kind == "plane":
        d = c.scalar
        for k in range(dim):
            d -= float(c.vector[k]) * pt[k]
        for k in range(dim):
            surface[k] = pt[k] + d * float(c.vector[k])
            normal[k] = c.vector[k]
        return d > 0.0, d, surface, normal
    if c.kind == "box":
        inside, axis, least, out2 = True, 0, np.inf, 0.0
        for k in range(dim):
            h = float(c.end[k])
            r = pt[k] - float(c.vector[k])
            gap = h - abs(r)
            clamped = min(max(r, -h), h)
            surface[k] = float(c.vector[k]) + clamped
            normal[k] = r - clamped
            out2 += normal[k] * normal[k]
            if not gap > 0.0:
                inside = False
            if gap < least:
                least, axis = gap, k
        sign = 1.0 if pt[axis] >= c.vector[axis] else -1.0
        if inside or not out2 > 0.0:
            surface[:] = pt
            normal[:] = 0.0
            surface[axis] = float(c.vector[axis]) + sign * float(c.end[axis])
            normal[axis] = sign
            return inside, least, surface, normal
        out = np.sqrt(out2)
        return False, -out, surface, normal / out
    if c.kind == "capsule":
        a, b = c.vector, c.end
        ab2 = t = 0.0
        for k in range(dim):
            ab2 += (float(b[k]) - float(a[k])) * (float(b[k]) - float(a[k]))
            t += (pt[k] - float(a[k])) * (float(b[k]) - float(a[k]))
        t = min(max(t / ab2, 0.0), 1.0) if ab2 > 0.0 else 0.0
        axis_point = [float(a[k]) + t * (float(b[k]) - float(a[k])) for k in range(dim)]
    else:
        axis_point = [float(q) for q in c.vector]
    r2 = 0.0
    for k in range(dim):
        normal[k] = pt[k] - axis_point[k]
        r2 += normal[k] * normal[k]
    r = float(np.sqrt(r2))
    if r > 0.0:
        normal = normal / r
    elif c.kind == "capsule":
        raise ValueError("a node exactly on a capsule's axis is not modelled here")
    else:
        normal[:] = 0.0
        normal[1] = 1.0
    for k in range(dim):
        surface[k] = axis_point[k] + c.scalar * normal[k]
    return r2 < c.scalar * c.scalar, c.scalar - r, surface, normal


def _collider_begin(s: State, x0: np.ndarray, w: np.ndarray, margin: float) -> list[list[float]]:
    """XPBD's collider constraints of a substep (collider_constraints.c): for each
    collider in order, each free node in index order within ``margin`` of it at the
    prediction, as [collider, node, λ, u0, λ_t]; a node that started inside is first
    moved onto the surface, start (x0) and prediction alike."""
    out = []
    dim = s.dim
    for q, c in enumerate(s.colliders):
        for i in range(len(s.x)):
            if not w[i] > 0.0:
                continue
            inside, _depth, surface, _normal = _collider_locate(c, x0[i])
            if inside:
                for k in range(dim):
                    shift = surface[k] - x0[i, k]
                    x0[i, k] = surface[k]
                    s.x[i, k] = s.x[i, k] + shift
            _inside, depth, _surface, normal = _collider_locate(c, s.x[i])
            if not depth > -margin:
                continue
            out.append([q, i, 0.0, _dot(s.v[i], normal, dim), 0.0])
    return out


def _collider_constraints(s: State, held: list[list[float]], x0: np.ndarray, w: np.ndarray) -> None:
    """One pass over the collider contacts: depth d ≤ 0 kept by Δλ = d / w with λ ≥ 0
    (a collider of infinite mass, a hard constraint); then friction, the slip across n
    taken back up to μλ in all."""
    dim = s.dim
    for row in held:
        c, i = s.colliders[int(row[0])], int(row[1])
        _inside, depth, _surface, n = _collider_locate(c, s.x[i])
        lam = row[2]
        if not depth > 0.0 and lam == 0.0:
            continue
        dlam = depth / w[i]
        if lam + dlam < 0.0:
            dlam = -lam
        row[2] = lam + dlam
        for k in range(dim):
            s.x[i, k] = s.x[i, k] + w[i] * (dlam * n[k])
        room = c.friction * row[2] - row[4]
        if not (c.friction > 0.0 and room > 0.0):
            continue
        slip = [float(s.x[i, k] - x0[i, k]) for k in range(dim)]
        along = _dot(slip, n, dim)
        slip = [slip[k] - along * n[k] for k in range(dim)]
        s2 = _dot(slip, slip, dim)
        if not s2 > 0.0:
            continue
        length = float(np.sqrt(s2))
        dmu = min(length / w[i], room)
        row[4] += dmu
        for k in range(dim):
            s.x[i, k] = s.x[i, k] - w[i] * (dmu * (slip[k] / length))


def _collider_restitute(s: State, held: list[list[float]], threshold: float) -> None:
    """Restitution after the solve: each contact that pushed and was coming in (u0 < 0)
    leaves with the normal velocity e·(−u0) if it came in faster than ``threshold``,
    else 0; and that impulse du brakes |v_t| by μ du, to 0 at most."""
    dim = s.dim
    for row in held:
        if not (row[2] > 0.0 and row[3] < 0.0):
            continue
        c, i = s.colliders[int(row[0])], int(row[1])
        _inside, _depth, _surface, n = _collider_locate(c, s.x[i])
        un = _dot(s.v[i], n, dim)
        target = c.restitution * -row[3] if -row[3] > threshold else 0.0
        du = target - un
        for k in range(dim):
            s.v[i, k] = s.v[i, k] + du * n[k]
        if not (c.friction > 0.0 and du > 0.0):
            continue
        vn = _dot(s.v[i], n, dim)
        vt = [float(s.v[i, k]) - vn * n[k] for k in range(dim)]
        speed = float(np.sqrt(_dot(vt, vt, dim)))
        cap = c.friction * du
        keep = 1.0 - cap / speed if speed > cap else 0.0
        for k in range(dim):
            s.v[i, k] = vn * n[k] + keep * vt[k]


def spring_blocks(
    s: State, x: np.ndarray, projected: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Per-spring unit vectors u (M, dim) and the 3×3 (2×2) blocks
    ``K_s = k [u uᵀ + (1 − L/l)(I − u uᵀ)]`` (M, dim, dim); ``projected`` clamps
    1 − L/l at 0. A spring shorter than MIN_SPRING_LENGTH has u = 0 and K_s = 0."""
    d = x[s.springs[:, 1]] - x[s.springs[:, 0]]
    length = np.sqrt(np.sum(d * d, axis=1))
    live = length >= MIN_SPRING_LENGTH
    u = np.zeros_like(d)
    u[live] = d[live] / length[live, None]
    transverse = np.zeros_like(length)
    transverse[live] = 1.0 - s.L[live] / length[live]
    if projected:
        transverse = np.maximum(transverse, 0.0)
    uu = u[:, :, None] * u[:, None, :]
    eye = np.eye(s.dim) * live[:, None, None]
    blocks = s.k[:, None, None] * (uu + transverse[:, None, None] * (eye - uu))
    return u, blocks


def assemble(s: State, blocks: np.ndarray) -> np.ndarray:
    """The dense (dim·N)² matrix with +block at (i, i), (j, j) and −block at (i, j), (j, i)."""
    n, dim = s.x.shape
    matrix = np.zeros((n * dim, n * dim))
    for (i, j), block in zip(s.springs, blocks, strict=True):
        for a, b, sign in ((i, i, 1), (j, j, 1), (i, j, -1), (j, i, -1)):
            matrix[a * dim : (a + 1) * dim, b * dim : (b + 1) * dim] += sign * block
    return matrix


def hessian(s: State, x: np.ndarray, projected: bool = False) -> np.ndarray:
    """Hessian of the elastic energy ½ Σ k (l − L)² at ``x``, dense (dim·N)²."""
    return assemble(s, spring_blocks(s, x, projected)[1])


def _implicit_euler(s: State, dt: float) -> None:
    # Linearised backward Euler (Baraff & Witkin 1998), solved exactly here (the kernel
    # uses conjugate gradients):
    #   (M − dt ∂f/∂v − dt² ∂f/∂x) Δv = dt (f + dt ∂f/∂x v),  v += Δv, x += dt v,
    # over the free nodes; ∂f/∂x = −K with compressed springs' sideways term dropped,
    # ∂f/∂v = −(Σ c u uᵀ blocks + drag I); touching node pairs add k_c u uᵀ and their
    # dashpot's c u uᵀ. Gas, air on faces, gravity, external forces, friction: explicit.
    x0, v0 = s.x.copy(), s.v.copy()
    n, dim = x0.shape
    u, blocks = spring_blocks(s, x0, projected=True)
    stiffness = assemble(s, blocks)
    damping = assemble(s, s.c[:, None, None] * u[:, :, None] * u[:, None, :])
    contact_stiffness, contact_damping = contact_matrices(s, x0)
    stiffness, damping = stiffness + contact_stiffness, damping + contact_damping
    masses = np.repeat(s.m, dim)
    force = accelerations(s, x0, v0).reshape(-1) * masses
    free = np.repeat(~s.pinned, dim)
    matrix = np.diag(masses + dt * s.drag) + dt * damping + dt * dt * stiffness
    rhs = dt * (force - dt * stiffness @ v0.reshape(-1))
    dv = np.zeros(n * dim)
    if free.any():
        dv[free] = np.linalg.solve(matrix[np.ix_(free, free)], rhs[free])
    s.v = v0 + dv.reshape(n, dim)
    s.x = x0 + dt * s.v
    _move_pinned(s, x0, v0, dt)


# ---- Vertex Block Descent (csrc/kernel/step/vbd.c) ------------------------------

#: Halvings of a vertex's Newton step that raised its local energy before it is skipped.
VBD_BACKTRACKS = 3
#: A step raises the local energy G when it adds more than this times G's rounding
#: scale, the sum of its terms' sizes before cancellation (less is rounding, and such a
#: step is taken): 64 ulps.
VBD_ROUNDING = 64.0 * np.finfo(np.float64).eps
#: The colliders' contact stiffness in a vertex block, k_c = κ (m_i/h² + Σ its springs' k).
VBD_CONTACT_KAPPA = 100.0
#: Friction's smoothing speed ε_v, m/s: a slip below ε_v h meets a smoothed force.
VBD_FRICTION_SPEED = 1e-3
#: At most this many frozen frictions per vertex step.
VBD_MAX_FRICTIONS = 8
#: At most this many contact pairs' frictions frozen per vertex step (vbd.c).
VBD_MAX_PAIR_FRICTIONS = 16
#: The fastest a pair that starts a substep overlapping is pushed apart, m/s (vbd.c).
VBD_PUSH_OUT = 3.0


def vertex_colour_order(
    springs: np.ndarray, num_nodes: int, elements: Iterable[np.ndarray] = ()
) -> list[list[int]]:
    """The vertex colours of ``vbd``, each a list of nodes in increasing index.

    The nodes are coloured greedily in index order: each takes the lowest colour that
    no lower-numbered node sharing a spring (or one of ``elements``' rows: the gas
    bodies' boundary elements) with it took. No two nodes of a colour share a spring
    or an element.

    Examples
    --------
    >>> vertex_colour_order(np.array([[0, 1], [1, 2], [2, 3]]), 4)
    [[0, 2], [1, 3]]
    """
    neighbours: list[set[int]] = [set() for _ in range(num_nodes)]
    for i, j in springs:
        neighbours[int(i)].add(int(j))
        neighbours[int(j)].add(int(i))
    for rows in elements:
        for row in np.asarray(rows):
            for i in row:
                neighbours[int(i)].update(int(j) for j in row if j != i)
    colour = [0] * num_nodes
    for i in range(num_nodes):
        taken = {colour[j] for j in neighbours[i] if j < i}
        c = 0
        while c in taken:
            c += 1
        colour[i] = c
    count = max(colour, default=-1) + 1
    return [[i for i in range(num_nodes) if colour[i] == c] for c in range(count)]


def _vbd_adjacency(s: State) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each node's spring ends in spring order: (owner, other, spring), grouped by owner."""
    m = len(s.springs)
    owner = s.springs.T.reshape(-1)  # ends 0 of every spring, then ends 1
    other = s.springs[:, ::-1].T.reshape(-1)
    spring = np.tile(np.arange(m), 2)
    order = np.lexsort((spring, owner))
    return owner[order], other[order], spring[order]


def _vbd_local(
    s: State,
    p: np.ndarray,
    nodes: np.ndarray,
    x: np.ndarray,
    x0: np.ndarray,
    y: np.ndarray,
    adjacency: tuple[np.ndarray, np.ndarray, np.ndarray],
    h: float,
    hessian: bool,
) -> tuple[np.ndarray, ...]:
    """The local incremental potential G of each of ``nodes`` at positions ``p`` (the
    others at x), and with ``hessian`` its force −∇G, projected Hessian and rounding
    scale (vbd.c)."""
    dim = s.dim
    w = s.m[nodes] * (1.0 / (h * h))
    e = np.zeros((len(nodes), 3))
    e[:, :dim] = p - y[nodes]
    f = -w[:, None] * e
    energy = 0.5 * w * ((e[:, 0] * e[:, 0] + e[:, 1] * e[:, 1]) + e[:, 2] * e[:, 2])
    size_i = np.abs(x[nodes]).max(axis=1) + np.abs(x0[nodes]).max(axis=1)
    scale = w * np.abs(e).sum(axis=1) * (size_i + np.abs(y[nodes]).max(axis=1))
    hh = np.zeros((len(nodes), 3, 3))
    for q in range(3):
        hh[:, q, q] = w
    rows, other, spring = adjacency  # by node, each node's springs in index order
    d, now = np.zeros((len(rows), 3)), np.zeros((len(rows), 3))
    d[:, :dim] = p[rows] - x[other]
    now[:, :dim] = x[nodes[rows]] - x[other]  # before the step: u is frozen there
    now2 = (now[:, 0] * now[:, 0] + now[:, 1] * now[:, 1]) + now[:, 2] * now[:, 2]
    live = now2 >= MIN_SPRING_LENGTH**2
    rows, other, spring = rows[live], other[live], spring[live]
    d, now, now2 = d[live], now[live], now2[live]
    l2 = (d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) + d[:, 2] * d[:, 2]
    length = np.sqrt(l2)
    k, rest, c = s.k[spring], s.L[spring], s.c[spring]
    stretch = length - rest
    inv = 1.0 / np.sqrt(now2)
    u = now * inv[:, None]
    damped = c > 0.0
    ch = c * (1.0 / h)
    moved = np.zeros((len(rows), 3))
    moved[:, :dim] = x0[nodes[rows]] - x0[other]
    r = np.zeros(len(rows))
    for q in range(dim):
        r = r + (d[:, q] - moved[:, q]) * u[:, q]
    # Each node adds its springs' terms one after another, elastic then dashpot (an
    # undamped spring's dashpot adds +0.0, which changes no bit): np.add.at adds in
    # index order, as the kernel's loop does.
    twice = np.repeat(rows, 2)
    terms = np.empty(2 * len(rows))
    terms[0::2] = 0.5 * k * (stretch * stretch)
    terms[1::2] = np.where(damped, 0.5 * ch * (r * r), 0.0)
    np.add.at(energy, twice, terms)
    if not hessian:
        return (energy,)
    size = (
        size_i[rows] + np.abs(x[other]).max(axis=1) + np.abs(x0[other]).max(axis=1) + length + rest
    )
    np.add.at(
        scale, rows, k * np.abs(stretch) * size + np.where(damped, ch * np.abs(r) * size, 0.0)
    )
    pull = k * stretch
    transverse = 1.0 - rest * inv
    t = np.where(transverse > 0.0, k * transverse, 0.0)
    axial = np.where(damped, (k - t) + ch, k - t)
    push = np.where(damped, ch * r, 0.0)
    for q in range(dim):
        terms[0::2] = pull * u[:, q]
        terms[1::2] = push * u[:, q]
        np.subtract.at(f[:, q], twice, terms)
    for a in range(dim):
        for b in range(a, dim):
            np.add.at(hh[:, a, b], rows, axial * u[:, a] * u[:, b] + (t if a == b else 0.0))
    return energy, f, hh, scale


def _vbd_newton(f: np.ndarray, hh: np.ndarray, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """H⁻¹ f by the adjugate over the determinant (vbd.c's operations), and whether the
    determinant was positive and finite (else the vertex stays)."""
    dx = np.zeros((len(f), 3))
    if dim == 3:
        h00, h01, h02 = hh[:, 0, 0], hh[:, 0, 1], hh[:, 0, 2]
        h11, h12, h22 = hh[:, 1, 1], hh[:, 1, 2], hh[:, 2, 2]
        c00, c01 = h11 * h22 - h12 * h12, h02 * h12 - h01 * h22
        c02, c11 = h01 * h12 - h02 * h11, h00 * h22 - h02 * h02
        c12, c22 = h01 * h02 - h00 * h12, h00 * h11 - h01 * h01
        det = (h00 * c00 + h01 * c01) + h02 * c02
        ok = (det > 0.0) & np.isfinite(det)
        inv = 1.0 / np.where(ok, det, 1.0)
        dx[:, 0] = ((c00 * f[:, 0] + c01 * f[:, 1]) + c02 * f[:, 2]) * inv
        dx[:, 1] = ((c01 * f[:, 0] + c11 * f[:, 1]) + c12 * f[:, 2]) * inv
        dx[:, 2] = ((c02 * f[:, 0] + c12 * f[:, 1]) + c22 * f[:, 2]) * inv
    else:
        h00, h01, h11 = hh[:, 0, 0], hh[:, 0, 1], hh[:, 1, 1]
        det = h00 * h11 - h01 * h01
        ok = (det > 0.0) & np.isfinite(det)
        inv = 1.0 / np.where(ok, det, 1.0)
        dx[:, 0] = (h11 * f[:, 0] - h01 * f[:, 1]) * inv
        dx[:, 1] = (h00 * f[:, 1] - h01 * f[:, 0]) * inv
    return dx[:, :dim], ok


def _vbd_colours(
    s: State,
) -> list[tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """The free nodes of each vertex colour and their springs (row in the colour, other
    end, spring), node by node in spring order; kept on ``s`` until its springs or pins
    change."""
    key = (
        s.springs.tobytes() + b"".join(e.tobytes() for e, _nrt, _ambient in s.pressure),
        s.pinned.tobytes(),
        len(s.x),
    )
    cached = s._vbd_cache
    if cached is not None and cached[0] == key:
        return cached[1]
    colours = _vbd_colours_with(s, np.zeros((0, 2), np.int64))
    s._vbd_cache = (key, colours)
    return colours


def _vbd_colours_with(
    s: State, pairs: np.ndarray
) -> list[tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """As :func:`_vbd_colours`, the contact ``pairs`` also kept apart (not cached)."""
    owner, other, spring = _vbd_adjacency(s)
    colours = []
    gas = [e for e, _nrt, _ambient in s.pressure]
    if len(pairs):
        gas = gas + [pairs]
    for nodes_list in vertex_colour_order(s.springs, len(s.x), gas):
        nodes = np.array([i for i in nodes_list if not s.pinned[i]], dtype=np.int64)
        if not len(nodes):
            continue
        row = -np.ones(len(s.x), dtype=np.int64)
        row[nodes] = np.arange(len(nodes))
        mine = row[owner] >= 0  # owner, then spring order: each node's springs in order
        adjacency = (row[owner[mine]], other[mine], spring[mine])
        colours.append((nodes, adjacency))
    return colours


def _vbd_depth(c: Collider, p: np.ndarray) -> tuple[bool, float, np.ndarray, np.ndarray]:
    """Whether p is inside collider c (depth > 0), the depth, surface point and normal
    (vbd.c's collider_depth; meshes are not modelled here)."""
    inside, depth, surface, normal = _collider_locate(c, p)
    return bool(inside and depth > 0.0), depth, surface, normal


def _friction_f0(slip: float, eps: float) -> float:
    """IPC's smoothed friction energy per unit force (vbd.c, friction_f0), m."""
    if slip < eps:
        return (-(slip * slip * slip) / (3.0 * eps * eps) + (slip * slip) / eps) + eps / 3.0
    return slip


def _friction_f1_over_s(slip: float, eps: float) -> float:
    """f0'(s) / s (vbd.c, friction_f1_over_s), 1/m."""
    return 2.0 / eps - slip / (eps * eps) if slip < eps else 1.0 / slip


def _slip(p: np.ndarray, x0: np.ndarray, n: np.ndarray, dim: int) -> tuple[np.ndarray, float]:
    """The slip across n since x0, u − (u·n) n, u = p − x0, and its length."""
    u = np.zeros(3)
    nn = np.zeros(3)
    u[:dim] = p - x0
    nn[:dim] = n
    un = (u[0] * nn[0] + u[1] * nn[1]) + u[2] * nn[2]
    ut = u - un * nn
    return ut, float(np.sqrt((ut[0] * ut[0] + ut[1] * ut[1]) + ut[2] * ut[2]))


def _vbd_contact_stiffness(
    s: State, nodes: np.ndarray, adjacency: tuple[np.ndarray, np.ndarray, np.ndarray], h: float
) -> np.ndarray:
    """k_c = κ (m_i / h² + Σ its springs' k) per node (vbd.c, contact_stiffness)."""
    block = s.m[nodes] * (1.0 / (h * h))
    rows, _other, spring = adjacency
    np.add.at(block, rows, s.k[spring])
    return VBD_CONTACT_KAPPA * block


def _add_outer(hh: np.ndarray, a: float, v: np.ndarray, dim: int) -> None:
    """hh += a v vᵀ on the upper triangle (vbd.c, add_outer)."""
    for r in range(dim):
        for q in range(r, dim):
            hh[r, q] += a * v[r] * v[q]


def _vbd_contacts(
    s: State,
    nodes: np.ndarray,
    p: np.ndarray,
    x0: np.ndarray,
    kc: np.ndarray,
    h: float,
    energy: np.ndarray,
    force: np.ndarray,
    hh: np.ndarray,
    scale: np.ndarray,
    frozen: list[list[tuple[np.ndarray, float, np.ndarray]]],
    touch: _Touch | None = None,
) -> None:
    """The colliders at each node's iterate into its block (vbd.c): ½ k_c d², and
    friction μλ f0(|u_T|) with n and λ = k_c d frozen (kept in ``frozen``); then the
    contact pairs of ``touch`` (_vbd_pair_terms)."""
    dim, eps = s.dim, VBD_FRICTION_SPEED * h
    for row, i in enumerate(nodes):
        size_i = np.abs(p[row]).max() + np.abs(x0[i]).max()
        hc = np.zeros((3, 3))
        for c in s.colliders:
            inside, depth, surface, n = _vbd_depth(c, p[row])
            if not inside:
                continue
            push = kc[row] * depth
            energy[row] += 0.5 * push * depth
            scale[row] += push * (size_i + np.abs(surface).max())
            force[row, :dim] += push * n
            _add_outer(hc, kc[row], n, dim)
            if not c.friction > 0.0 or len(frozen[row]) == VBD_MAX_FRICTIONS:
                continue
            mu_lambda = c.friction * push
            frozen[row].append((n, mu_lambda, x0[i]))
            ut, slip = _slip(p[row], x0[i], n, dim)
            grip = mu_lambda * _friction_f1_over_s(slip, eps)
            energy[row] += mu_lambda * _friction_f0(slip, eps)
            scale[row] += mu_lambda * size_i
            force[row] -= grip * ut
            for q in range(dim):
                hc[q, q] += grip
            _add_outer(hc, -grip, n, dim)
        if touch is not None:
            _vbd_pair_terms(s, touch, i, row, p, x0, h, energy, force, hc, scale, frozen)
        hh[row] += hc


def _vbd_entering(
    s: State,
    nodes: np.ndarray,
    p: np.ndarray,
    x0: np.ndarray,
    kc: np.ndarray,
    dx: np.ndarray,
    ok: np.ndarray,
    force: np.ndarray,
    hh: np.ndarray,
    touch: _Touch | None = None,
    quads: _Quads | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """A collider the Newton step enters, apart at the iterate: its contact linearised at
    the trial point joins the block and the step is taken again (vbd.c); likewise a
    contact pair and a 4-node contact."""
    dim = s.dim
    dx, ok = dx.copy(), ok.copy()
    for row in range(len(nodes)):
        if not ok[row]:
            continue
        trial = p[row] + dx[row]
        entered = False
        for c in s.colliders:
            if _vbd_depth(c, p[row])[0]:
                continue
            inside, depth, _surface, n = _vbd_depth(c, trial)
            if not inside:
                continue
            nn = np.zeros(3)
            nn[:dim] = n
            step = np.zeros(3)
            step[:dim] = dx[row]
            reach = depth + ((nn[0] * step[0] + nn[1] * step[1]) + nn[2] * step[2])
            force[row, :dim] += kc[row] * reach * n
            _add_outer(hh[row], kc[row], n, dim)
            entered = True
        if touch is None:
            pairs_of: list[tuple[int, float]] = []
        else:
            i = int(nodes[row])
            pairs_of = list(zip(touch.others[i], touch.rest[i], strict=True))
        for j, rest in pairs_of:
            assert touch is not None
            if _pair_overlap(touch, i, j, p[row])[0] - rest > 0.0:
                continue
            delta, n = _pair_overlap(touch, i, j, trial)
            delta = delta - rest
            if not delta > 0.0:
                continue
            kp = _pair_stiffness(s, touch, i, j)
            step = np.zeros(3)
            step[:dim] = dx[row]
            reach = delta + ((n[0] * step[0] + n[1] * step[1]) + n[2] * step[2])
            force[row, :dim] += kp * reach * n[:dim]
            _add_outer(hh[row], kp, n, dim)
            entered = True
        if quads is not None:
            entered |= _vbd_quads_entering(
                quads, int(nodes[row]), p[row], dx[row], force[row], hh[row]
            )
        if entered:
            again, good = _vbd_newton(force[row : row + 1], hh[row : row + 1], dim)
            dx[row], ok[row] = again[0], good[0]
    return dx, ok


def _vbd_contact_energy(
    s: State,
    nodes: np.ndarray,
    trial: np.ndarray,
    x0: np.ndarray,
    kc: np.ndarray,
    h: float,
    frozen: list[list[tuple[np.ndarray, float, np.ndarray]]],
) -> np.ndarray:
    """The colliders' and the frozen frictions' share of G at the trial points."""
    dim, eps = s.dim, VBD_FRICTION_SPEED * h
    energy = np.zeros(len(nodes))
    for row in range(len(nodes)):
        for c in s.colliders:
            inside, depth, _surface, _n = _vbd_depth(c, trial[row])
            if inside:
                energy[row] += 0.5 * kc[row] * (depth * depth)
        for n, mu_lambda, base in frozen[row]:
            energy[row] += mu_lambda * _friction_f0(_slip(trial[row], base, n, dim)[1], eps)
    return energy


class _Touch:
    """A vbd substep's contact pairs (vbd.c): the pairs (i, j) sorted, each node's other
    ends in pair order, the radii, the user's stiffness (0: κ m_eff / h²), the friction,
    the positions the vertex solves read (x, updated in place) and the substep h."""

    def __init__(
        self, s: State, pairs: np.ndarray, x0: np.ndarray, x: np.ndarray, h: float
    ) -> None:
        assert s.contact is not None
        r = s.contact.radii
        self.pairs = pairs
        self.others: list[list[int]] = [[] for _ in range(len(s.x))]
        # the overlap each pair may keep in the substep: max(0, δ(x0) − v_out h)
        self.rest: list[list[float]] = [[] for _ in range(len(s.x))]
        for i, j in pairs.tolist():
            d2 = 0.0
            for q in range(s.dim):
                d = x0[j, q] - x0[i, q]
                d2 += d * d
            rest = ((r[i] + r[j]) - float(np.sqrt(d2))) - VBD_PUSH_OUT * h
            rest = rest if rest > 0.0 else 0.0
            self.others[i].append(j)
            self.rest[i].append(rest)
            self.others[j].append(i)
            self.rest[j].append(rest)
        self.radii = r
        self.k = s.contact.stiffness if s.contact.stiffness is not None else 0.0
        self.mu = s.contact.friction
        self.x = x
        self.inv_h2 = 1.0 / (h * h)


def _pair_overlap(touch: _Touch, i: int, j: int, p: np.ndarray) -> tuple[float, np.ndarray]:
    """Overlap of node i at p with node j, and the unit normal from j to i (3 wide); 0
    when the centres are closer than MIN_SPRING_LENGTH (vbd.c, pair_overlap)."""
    d = np.zeros(3)
    dim = len(p)
    d[:dim] = p - touch.x[j]
    d2 = (d[0] * d[0] + d[1] * d[1]) + d[2] * d[2]
    n = np.zeros(3)
    if not d2 >= MIN_SPRING_LENGTH**2:
        return 0.0, n
    dist = float(np.sqrt(d2))
    inv = 1.0 / dist
    n = d * inv
    return float((touch.radii[i] + touch.radii[j]) - dist), n


def _pair_stiffness(s: State, touch: _Touch, i: int, j: int) -> float:
    """k of pair (i, j): the user's, or κ m_eff / h² (vbd.c, pair_stiffness)."""
    if touch.k > 0.0:
        return touch.k
    mi, mj = float(s.m[i]), float(s.m[j])
    if s.pinned[j]:
        return VBD_CONTACT_KAPPA * (mi * touch.inv_h2)
    lo, hi = min(mi, mj), max(mi, mj)
    return VBD_CONTACT_KAPPA * ((lo * hi / (lo + hi)) * touch.inv_h2)


def _vbd_pair_terms(
    s: State,
    touch: _Touch,
    i: int,
    row: int,
    p: np.ndarray,
    x0: np.ndarray,
    h: float,
    energy: np.ndarray,
    force: np.ndarray,
    hc: np.ndarray,
    scale: np.ndarray,
    frozen: list[list[tuple[np.ndarray, float, np.ndarray]]],
) -> None:
    """Node i's contact pairs, j held, into its block (vbd.c): ½ k δ², f += k δ n, H +=
    k n nᵀ, and friction μ k δ f0 on the pair's slip since the substep began, lagged."""
    dim, eps = s.dim, VBD_FRICTION_SPEED * h
    size_i = np.abs(p[row]).max() + np.abs(x0[i]).max()
    own = len(frozen[row])
    for j, rest in zip(touch.others[i], touch.rest[i], strict=True):
        delta, n = _pair_overlap(touch, i, j, p[row])
        delta = delta - rest
        if not delta > 0.0:
            continue
        kp = _pair_stiffness(s, touch, i, j)
        push = kp * delta
        xj = touch.x[j]
        energy[row] += 0.5 * push * delta
        scale[row] += push * (((size_i + np.abs(xj).max()) + touch.radii[i]) + touch.radii[j])
        force[row, :dim] += push * n[:dim]
        _add_outer(hc, kp, n, dim)
        if not touch.mu > 0.0 or len(frozen[row]) - own == VBD_MAX_PAIR_FRICTIONS:
            continue
        base = x0[i] + (xj - x0[j])
        mu_lambda = touch.mu * push
        frozen[row].append((n[:dim], mu_lambda, base))
        ut, slip = _slip(p[row], base, n[:dim], dim)
        grip = mu_lambda * _friction_f1_over_s(slip, eps)
        energy[row] += mu_lambda * _friction_f0(slip, eps)
        scale[row] += mu_lambda * ((size_i + np.abs(xj).max()) + np.abs(x0[j]).max())
        force[row] -= grip * ut
        for q in range(dim):
            hc[q, q] += grip
        _add_outer(hc, -grip, n, dim)


def _vbd_pairs_energy(s: State, touch: _Touch, nodes: np.ndarray, trial: np.ndarray) -> np.ndarray:
    """The contact pairs' share of G at the trial points: ½ k δ² per touching pair."""
    energy = np.zeros(len(nodes))
    for row, i in enumerate(nodes):
        for j, rest in zip(touch.others[int(i)], touch.rest[int(i)], strict=True):
            delta = _pair_overlap(touch, int(i), j, trial[row])[0] - rest
            if delta > 0.0:
                energy[row] += 0.5 * _pair_stiffness(s, touch, int(i), j) * (delta * delta)
    return energy


def _pair_touching(
    s: State, i: int, j: int, x: np.ndarray
) -> tuple[float, float, np.ndarray] | None:
    """w_i, w_j (1/m, 0 pinned) and the unit normal from i to j at x, when some node of
    the pair is free and they touch there, else None (vbd.c, pair_touching)."""
    assert s.contact is not None
    wi = 0.0 if s.pinned[i] else 1.0 / float(s.m[i])
    wj = 0.0 if s.pinned[j] else 1.0 / float(s.m[j])
    if wi + wj == 0.0:
        return None
    r = s.contact.radii
    n = np.zeros(3)
    d2 = 0.0
    for q in range(s.dim):
        n[q] = x[j, q] - x[i, q]
        d2 += n[q] * n[q]
    if not d2 >= MIN_SPRING_LENGTH**2:
        return None
    dist = float(np.sqrt(d2))
    if not (r[i] + r[j]) - dist > 0.0:
        return None
    return wi, wj, n / dist


def _vbd_guess_apart(
    s: State,
    pairs: np.ndarray,
    x0: np.ndarray,
    v0: np.ndarray,
    threshold: float,
    h: float,
    x: np.ndarray,
) -> None:
    """The first guess apart, equal and opposite, by the pair-alone backward-Euler share
    of the overlap gained in the substep (all of it when separating faster than
    ``threshold``) (vbd.c, guess_apart): x in place."""
    assert s.contact is not None
    r, dim = s.contact.radii, s.dim
    for i, j in pairs.tolist():
        touching = _pair_touching(s, i, j, x)
        if touching is None:
            continue
        wi, wj, n = touching
        wsum = wi + wj
        d2 = e2 = un = 0.0
        for q in range(dim):
            d2 += (x[j, q] - x[i, q]) * (x[j, q] - x[i, q])
            e2 += (x0[j, q] - x0[i, q]) * (x0[j, q] - x0[i, q])
            un += (v0[j, q] - v0[i, q]) * n[q]
        delta = (r[i] + r[j]) - float(np.sqrt(d2))
        before = (r[i] + r[j]) - float(np.sqrt(e2))
        gained = delta if un > threshold or not before > 0.0 else delta - before
        if not gained > 0.0:
            continue
        inertia = 1.0 / (wsum * (h * h))  # m_eff / h²
        user = s.contact.stiffness
        k = user if user is not None else VBD_CONTACT_KAPPA * inertia
        apart = gained * (k / (k + inertia))
        for q in range(dim):
            x[i, q] = x[i, q] - (wi / wsum) * (apart * n[q])
            x[j, q] = x[j, q] + (wj / wsum) * (apart * n[q])


def _vbd_restitute_pairs(
    s: State, pairs: np.ndarray, x: np.ndarray, coming: np.ndarray, v: np.ndarray, threshold: float
) -> None:
    """The contact pairs' restitution in pair order (vbd.c, restitute_pairs): v in place."""
    assert s.contact is not None
    e, dim = s.contact.restitution, s.dim
    for i, j in pairs.tolist():
        touching = _pair_touching(s, i, j, x)
        if touching is None:
            continue
        wi, wj, n = touching
        wsum = wi + wj
        u0 = un = 0.0
        for q in range(dim):
            u0 += (coming[j, q] - coming[i, q]) * n[q]
            un += (v[j, q] - v[i, q]) * n[q]
        if not -u0 > threshold:
            continue
        du = e * -u0 - un
        if not du > 0.0:
            continue
        for q in range(dim):
            v[i, q] = v[i, q] - (wi / wsum) * (du * n[q])
            v[j, q] = v[j, q] + (wj / wsum) * (du * n[q])


#: At most this many 4-node contacts' frictions frozen per vertex step (vbd.c).
VBD_MAX_QUAD_FRICTIONS = 16
#: A node of 4-node contacts moves at most this fraction of its least contact distance
#: at the substep's start (vbd.c): the contacts then never close, nor cross.
VBD_CONTACT_BOUND = 0.4


def _hold_within(x0i: np.ndarray, bound: float, p: np.ndarray) -> np.ndarray:
    """p moved back towards x0i to within ``bound`` of it (vbd.c, hold_within)."""
    e = p - x0i
    d2 = (e[0] * e[0] + e[1] * e[1]) + e[2] * e[2]
    if not d2 > bound * bound:
        return p
    return x0i + (bound / float(np.sqrt(d2))) * e


def _quad_at(
    triangle: bool, pts: np.ndarray, thickness: float
) -> tuple[np.ndarray, np.ndarray, float] | None:
    """A 4-node contact at points ``pts`` (4, 3): node 0 against triangle (1, 2, 3), or
    segment (0, 1) against segment (2, 3). None when its closest points p, q are
    ``thickness`` or more apart; else the signed weights w (p − q = Σ w_k pts_k), the
    unit normal n = (p − q)/|p − q| and the depth thickness − |p − q| (at |p − q| = 0:
    the normal of the two sides' cross product, depth the thickness; vbd.c, quad_depth)."""
    if triangle:
        wt = _closest_on_triangle(pts[0], pts[1:])
        w = np.array([1.0, -wt[0], -wt[1], -wt[2]])
        a, b, c, d = pts[1], pts[2], pts[1], pts[3]
    else:
        st, tt = _closest_on_segments(pts[0], pts[1], pts[2], pts[3])
        w = np.array([1.0 - st, st, -(1.0 - tt), -tt])
        a, b, c, d = pts
    diff = w @ pts
    dist = float(np.sqrt(diff @ diff))
    if not dist < thickness:
        return None
    if dist == 0.0:
        normal = _cross(b - a, d - c)
        length = float(np.sqrt(normal @ normal))
        if not length > 0.0:
            return None
        return w, normal / length, thickness
    return w, diff / dist, thickness - dist


class _Quads:
    """A vbd substep's 4-node contacts (vbd.c, find_quads): self-collision's node–triangle
    pairs (:func:`node_triangle_pairs`) and edge pairs (:func:`edge_pairs`, with edges on),
    and segment contact's pairs (:func:`segment_pairs`), those within their thickness T +
    2 R at the midpoints (x0 + y)/2 of the moves to the inertial target y (R: the farthest
    a node's move is from the first node's); each (nodes, triangle?, T, k, μ) with k =
    κ m_eff/h² + k_s (self-collision, k_s its stiffness) or the user's contact_stiffness
    else κ m_eff/h² (segments), 1/m_eff = w_a + max(w_b, w_c, w_d) (node–triangle) or
    max(w_a, w_b) + max(w_c, w_d) (two segments), w = 1/m, 0 pinned; each node's
    (contact, slot) in contact order, x, the positions the vertex solves read (updated in
    place), and each node's bound: VBD_CONTACT_BOUND times its least contact distance at
    x0."""

    def __init__(self, s: State, x0: np.ndarray, y: np.ndarray, x: np.ndarray, h: float) -> None:
        self.items: list[tuple[list[int], bool, float, float, float]] = []
        self.x = x
        mid = 0.5 * (x0 + y)  # found there: every contact met on the straight moves
        inv = np.where(s.pinned, 0.0, 1.0 / s.m)
        inv_h2 = 1.0 / (h * h)
        #: How far each node may move from x0 in the substep (inf: any).
        self.bound = np.full(len(s.x), np.inf)

        def add(
            nodes: list[int], triangle: bool, thickness: float, k_s: float | None, mu: float
        ) -> None:
            w = inv[nodes]
            w_max = w[0] + max(w[1], w[2], w[3]) if triangle else max(w[0], w[1]) + max(w[2], w[3])
            if not w_max > 0.0:
                return
            # R: the farthest a node's move is from the first's; kept when within T + 2 R
            # at the midpoints (the distance changes by at most R along the moves)
            moves = y[nodes] - x0[nodes]
            rel = moves - moves[0]
            far2 = float(
                np.max((rel[:, 0] * rel[:, 0] + rel[:, 1] * rel[:, 1]) + rel[:, 2] * rel[:, 2])
            )
            reach = thickness + 2.0 * float(np.sqrt(far2))
            at = mid[nodes]
            first, second = (at[:1], at[1:]) if triangle else (at[:2], at[2:])
            if np.any(first.min(0) - second.max(0) > reach) or np.any(
                second.min(0) - first.max(0) > reach
            ):
                return  # farther than reach along an axis
            if _quad_at(triangle, at, reach) is None:
                return
            inertia = (1.0 / w_max) * inv_h2
            # deeper than VBD_PUSH_OUT h at x0: pushed to a thickness less by the rest
            start = _quad_at(triangle, x0[nodes], thickness)
            rest = start[2] - VBD_PUSH_OUT * h if start is not None else 0.0
            # each node moves at most VBD_CONTACT_BOUND of the distance at x0
            pts = x0[nodes]
            if triangle:
                wt = _closest_on_triangle(pts[0], pts[1:])
                weights = np.array([1.0, -wt[0], -wt[1], -wt[2]])
            else:
                st, tt = _closest_on_segments(pts[0], pts[1], pts[2], pts[3])
                weights = np.array([1.0 - st, st, -(1.0 - tt), -tt])
            diff = weights @ pts
            gap = float(np.sqrt(diff @ diff))
            for i in nodes:  # (a pinned node moves with its velocity)
                mine = VBD_CONTACT_BOUND * gap
                if gap > 0.0 and mine < self.bound[i] and not s.pinned[i]:
                    self.bound[i] = mine
            if rest > 0.0:
                thickness = thickness - rest
            if k_s is None:  # segments
                assert s.contact is not None
                user = s.contact.stiffness
                k = user if user is not None else VBD_CONTACT_KAPPA * inertia
            else:
                k = VBD_CONTACT_KAPPA * inertia + k_s
            self.items.append((nodes, triangle, thickness, k, mu))

        if s.self_collision is not None and s.dim == 3 and len(s.faces):
            thickness, k_s, mu, edges = s.self_collision
            for p, t in node_triangle_pairs(s.faces, len(s.x)):
                add([p, *(int(v) for v in s.faces[t])], True, thickness, k_s, mu)
            if edges:
                for (a, b), (c, d) in edge_pairs(s.faces):
                    add([a, b, c, d], False, thickness, k_s, mu)
        if s.contact is not None and s.contact.segments and s.dim == 3:
            r = s.contact.radii
            for (a, b), (c, d) in segment_pairs(s):
                thickness = 0.5 * (r[a] + r[b]) + 0.5 * (r[c] + r[d])
                add([a, b, c, d], False, thickness, None, s.contact.friction)
        self.of: list[list[tuple[int, int]]] = [[] for _ in range(len(s.x))]
        for c, (nodes, *_rest) in enumerate(self.items):
            for slot, i in enumerate(nodes):
                self.of[i].append((c, slot))

    def links(self, pinned: np.ndarray) -> np.ndarray:
        """The node pairs the colouring keeps apart: every two free nodes of a contact."""
        out = [
            (nodes[a], nodes[b])
            for nodes, *_rest in self.items
            for a in range(4)
            for b in range(a + 1, 4)
            if not pinned[nodes[a]] and not pinned[nodes[b]]
        ]
        return np.array(out, dtype=np.int64).reshape(-1, 2)

    def at(self, c: int, slot: int, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, float] | None:
        """Contact c with its node of ``slot`` at p, the others at x (:func:`_quad_at`)."""
        nodes, triangle, thickness, _k, _mu = self.items[c]
        pts = self.x[nodes].copy()
        pts[slot] = p
        return _quad_at(triangle, pts, thickness)


def _vbd_guess_quads_apart(
    s: State,
    quads: _Quads,
    x0: np.ndarray,
    v0: np.ndarray,
    threshold: float,
    h: float,
    x: np.ndarray,
) -> None:
    """The 4-node contacts' first guess apart, equal and opposite (vbd.c,
    guess_quads_apart): each touching at x (weights w, normal n, depth d), in order, moved
    apart by the contact-alone backward-Euler share k / (k + 1/(W h²)) of the depth gained
    since x0 (all of it when separating faster than ``threshold``), node k by
    (w_k/m_k)/W of it along n, W = Σ w_k²/m_k (1/m = 0 pinned): x in place."""
    inv = np.where(s.pinned, 0.0, 1.0 / s.m)
    for nodes, triangle, thickness, k, _mu in quads.items:
        hit = _quad_at(triangle, x[nodes], thickness)
        if hit is None:
            continue
        w, n, depth = hit
        start = _quad_at(triangle, x0[nodes], thickness)
        before = start[2] if start is not None else 0.0
        big_w = float(np.sum(w * w * inv[nodes]))
        if not big_w > 0.0:
            continue
        un = float(np.sum(w * (v0[nodes] @ n)))
        gained = depth if un > threshold or not before > 0.0 else depth - before
        if not gained > 0.0:
            continue
        inertia = 1.0 / (big_w * (h * h))
        apart = gained * (k / (k + inertia))
        for slot, i in enumerate(nodes):
            x[i] = x[i] + ((w[slot] * inv[i]) / big_w) * (apart * n)


def _vbd_quad_terms(
    quads: _Quads,
    i: int,
    p: np.ndarray,
    x0: np.ndarray,
    h: float,
    frozen: list[tuple[np.ndarray, float, float, np.ndarray]],
) -> tuple[float, np.ndarray, np.ndarray, float]:
    """Node i's 4-node contacts at p into its block (vbd.c, quad_terms): per touching
    contact, the node's weight w_a, ½ k (T − d)², force k (T − d) w_a n, Hessian k w_a² n nᵀ,
    and friction μ k (T − d) f0(|u_T|) lagged on the contact's slip u = w_a (p − x0_i) +
    Σ_{k≠a} w_k (x_k − x0_k) (kept in ``frozen``). Returns the energy, force, Hessian and
    rounding scale they add."""
    eps = VBD_FRICTION_SPEED * h
    energy, scale = 0.0, 0.0
    force, hc = np.zeros(3), np.zeros((3, 3))
    x = quads.x
    for c, slot in quads.of[i]:
        hit = quads.at(c, slot, p)
        if hit is None:
            continue
        w, n, depth = hit
        nodes, _triangle, thickness, k, mu = quads.items[c]
        wa, push = float(w[slot]), k * depth
        energy += 0.5 * push * depth
        size = float(np.abs(x[nodes]).max(axis=1).sum())
        scale += push * (size + thickness)
        force += (push * wa) * n
        _add_outer(hc, k * (wa * wa), n, 3)
        if not mu > 0.0 or len(frozen) == VBD_MAX_QUAD_FRICTIONS:
            continue
        rest = np.zeros(3)
        for other in range(4):
            if other != slot:
                rest += w[other] * (x[nodes[other]] - x0[nodes[other]])
        mu_lambda = mu * push
        frozen.append((n, mu_lambda, wa, rest))
        ut, sl = _quad_slip(n, wa, rest, p, x0[i])
        grip = mu_lambda * _friction_f1_over_s(sl, eps)
        energy += mu_lambda * _friction_f0(sl, eps)
        scale += mu_lambda * (size + float(np.abs(x0[nodes]).max(axis=1).sum()))
        force -= (grip * wa) * ut
        g2 = grip * (wa * wa)
        for q in range(3):
            hc[q, q] += g2
        _add_outer(hc, -g2, n, 3)
    return energy, force, hc, scale


def _quad_slip(
    n: np.ndarray, wa: float, rest: np.ndarray, p: np.ndarray, x0i: np.ndarray
) -> tuple[np.ndarray, float]:
    """A frozen 4-node friction's slip across n with its node at p, u = w_a (p − x0_i) +
    rest, and its length."""
    u = wa * (p - x0i) + rest
    ut = u - float(u @ n) * n
    return ut, float(np.sqrt(ut @ ut))


def _vbd_quads_energy(
    quads: _Quads,
    i: int,
    p: np.ndarray,
    x0: np.ndarray,
    h: float,
    frozen: list[tuple[np.ndarray, float, float, np.ndarray]],
) -> float:
    """The 4-node contacts' share of node i's G at p (vbd.c, quads_energy)."""
    energy = 0.0
    for c, slot in quads.of[i]:
        hit = quads.at(c, slot, p)
        if hit is not None:
            energy += 0.5 * quads.items[c][3] * (hit[2] * hit[2])
    eps = VBD_FRICTION_SPEED * h
    for n, mu_lambda, wa, rest in frozen:
        energy += mu_lambda * _friction_f0(_quad_slip(n, wa, rest, p, x0[i])[1], eps)
    return energy


def _vbd_quads_entering(
    quads: _Quads, i: int, p: np.ndarray, dx: np.ndarray, force: np.ndarray, hh: np.ndarray
) -> bool:
    """A 4-node contact apart at p that the step dx enters joins the block linearised at
    p + dx, ½ k (d_p + w_a n·dx)² (vbd.c, quads_entering): force and hh in place."""
    entered = False
    for c, slot in quads.of[i]:
        if quads.at(c, slot, p) is not None:
            continue
        hit = quads.at(c, slot, p + dx)
        if hit is None:
            continue
        w, n, depth = hit
        k, wa = quads.items[c][3], float(w[slot])
        reach = depth + wa * float(n @ dx)
        force += (k * wa * reach) * n
        _add_outer(hh, k * (wa * wa), n, 3)
        entered = True
    return entered


def _vbd_gas_gradients(s: State, i: int, x: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """(body, dV/dx_i) for each gas body node i is on, body by body, its elements'
    shares summed in element order (vbd.c, gas_gradient)."""
    out = []
    for b, (elements, _nrt, _ambient) in enumerate(s.pressure):
        rows = np.flatnonzero((elements == i).any(axis=1))
        if not len(rows):
            continue
        grad = np.zeros(3)
        for row in rows:
            e = elements[row]
            if s.dim == 2:
                grad[0] += 0.5 * (x[e[1], 1] - x[e[0], 1])
                grad[1] += -0.5 * (x[e[1], 0] - x[e[0], 0])
            else:
                u, v = x[e[1]] - x[e[0]], x[e[2]] - x[e[0]]
                grad += (1.0 / 6.0) * np.array(
                    [
                        u[1] * v[2] - u[2] * v[1],
                        u[2] * v[0] - u[0] * v[2],
                        u[0] * v[1] - u[1] * v[0],
                    ]
                )
        out.append((b, grad))
    return out


def _vbd_gas_energy(s: State, i: int, x: np.ndarray, p: np.ndarray, volumes: list[float]) -> float:
    """The gas bodies' share of node i's G at p: −nrt ln V(p) + ambient V(p), V(p) = V +
    ∇V·(p − x_i); inf if some V(p) <= 0 (vbd.c, gas_energy)."""
    energy = 0.0
    for b, grad in _vbd_gas_gradients(s, i, x):
        _elements, nrt, ambient = s.pressure[b]
        volume = volumes[b] + float(np.dot(grad[: s.dim], p - x[i]))
        if not volume > 0.0:
            return np.inf
        energy += -nrt * np.log(volume) + ambient * volume
    return energy


def _vbd_gas(
    s: State,
    nodes: np.ndarray,
    x: np.ndarray,
    volumes: list[float],
    energy: np.ndarray,
    force: np.ndarray,
    hh: np.ndarray,
    scale: np.ndarray,
) -> None:
    """The gas bodies in each node's block (vbd.c): −nrt ln V + ambient V, its force
    (nrt/V − ambient) ∇V and Hessian nrt/V² ∇V ∇Vᵀ, V as the colour began."""
    dim = s.dim
    for row, i in enumerate(nodes):
        gradients = _vbd_gas_gradients(s, i, x)
        if not gradients:
            continue
        energy[row] += _vbd_gas_energy(s, i, x, x[i], volumes)
        size_i = np.abs(x[i]).max() + np.abs(s.x[i]).max()
        for b, grad in gradients:
            _elements, nrt, ambient = s.pressure[b]
            volume = volumes[b]
            force[row] += (nrt / volume - ambient) * grad
            _add_outer(hh[row], nrt / (volume * volume), grad, dim)
            scale[row] += (nrt / volume + ambient) * np.abs(grad).sum() * size_i + (
                nrt * abs(np.log(volume)) + ambient * volume
            )


def _vbd_translate(s: State, x0: np.ndarray, y: np.ndarray, x: np.ndarray) -> None:
    """The whole system's translation after the passes (vbd.c, translate): with no node
    pinned, x += t, t = −Σ m_i (x_i − y_i) / Σ m_i (the minimiser of G(x + t): every
    other energy is the same for any t, so the momentum becomes Σ m v0 + dt Σ m a
    exactly), unless a collider touches a node at x or at x + t."""
    if s.pinned.any() or not s.m.sum() > 0.0:
        return
    t = np.zeros(s.dim)
    for i in range(len(x)):
        t += s.m[i] * (x[i] - y[i])
    t = -t / s.m.sum()
    for i in range(len(x)):
        for c in s.colliders:
            if _vbd_depth(c, x[i])[0] or _vbd_depth(c, x[i] + t)[0]:
                return
    x += t


def _vbd(s: State, dt: float) -> None:
    # Vertex Block Descent (Chen, Macklin et al. 2024) on backward Euler's incremental
    # potential: the forces beside the springs at the start, explicitly (as
    # `accelerations` less the springs); y = x0 + dt (v0 + dt a); x = x0 + dt v0; then
    # `iterations` passes over the vertex colours, each free node taking a Newton step
    # on its own block with a line search (see vbd.c); v = (x − x0) / dt.
    x0, v0 = s.x.copy(), s.v.copy()
    m = s.m[:, None]
    f = m * s.gravity - s.drag * (v0 - s.wind) + s.ext + pressure_forces(s, x0)
    # node-node contact (_vbd_pair_terms), self-collision and segment contact
    # (_vbd_quad_terms) are in the blocks
    f += aero_forces(s, x0, v0)
    a = f / m
    if s.pressure:  # the gas is in the blocks (_vbd_gas)
        a -= pressure_forces(s, x0) / m
    a[s.pinned] = 0.0
    y = np.where(s.pinned[:, None], x0 + dt * v0, x0 + dt * (v0 + dt * a))
    x = x0 + dt * v0  # the first guess: the motion as it is, without this substep's push
    colours = _vbd_colours(s)
    touch = None
    pairs = np.zeros((0, 2), np.int64)
    if s.contact is not None:
        # the pairs within reach at y (margin: twice the farthest move, at most r_max)
        moved2 = 0.0
        for node in range(len(x0)):
            d2 = 0.0
            for q in range(s.dim):
                d2 += (y[node, q] - x0[node, q]) * (y[node, q] - x0[node, q])
            moved2 = max(moved2, d2)
        r_max = float(max(s.contact.radii.max(initial=0.0), 0.0))
        margin = min(2.0 * float(np.sqrt(moved2)), r_max)
        pairs = contact_pairs(s, y, margin)
    quads: _Quads | None = _Quads(s, x0, y, x, dt)
    assert quads is not None
    links = quads.links(s.pinned)
    if not quads.items:
        quads = None
    if len(pairs) or quads is not None:
        colours = _vbd_colours_with(s, np.concatenate([pairs, links]))
    if len(pairs):
        touch = _Touch(s, pairs, x0, x, dt)
        g = float(np.sqrt(_dot(s.gravity, s.gravity, s.dim)))
        _vbd_guess_apart(s, pairs, x0, v0, 2.0 * g * dt, dt, x)
    if quads is not None:
        g = float(np.sqrt(_dot(s.gravity, s.gravity, s.dim)))
        _vbd_guess_quads_apart(s, quads, x0, v0, 2.0 * g * dt, dt, x)
        for node in range(len(x)):
            x[node] = _hold_within(x0[node], quads.bound[node], x[node])
    for _ in range(s.iterations):
        for nodes, adjacency in colours:
            p = x[nodes].copy()
            energy, force, hh, scale = _vbd_local(s, p, nodes, x, x0, y, adjacency, dt, True)
            volumes = [enclosed_volume(e, x) for e, _nrt, _ambient in s.pressure]
            if s.pressure:
                _vbd_gas(s, nodes, x, volumes, energy, force, hh, scale)
            frozen: list[list[tuple[np.ndarray, float, np.ndarray]]] = [[] for _ in nodes]
            kc = np.zeros(len(nodes))
            if s.colliders:
                kc = _vbd_contact_stiffness(s, nodes, adjacency, dt)
            if s.colliders or touch is not None:
                _vbd_contacts(s, nodes, p, x0, kc, dt, energy, force, hh, scale, frozen, touch)
            frozen_quads: list[list[tuple[np.ndarray, float, float, np.ndarray]]] = [
                [] for _ in nodes
            ]
            if quads is not None:
                for row, i in enumerate(nodes):
                    terms = _vbd_quad_terms(quads, int(i), p[row], x0, dt, frozen_quads[row])
                    energy[row] += terms[0]
                    force[row] += terms[1]
                    hh[row] += terms[2]
                    scale[row] += terms[3]
            dx, ok = _vbd_newton(force, hh, s.dim)
            if s.colliders or touch is not None or quads is not None:
                dx, ok = _vbd_entering(s, nodes, p, x0, kc, dx, ok, force, hh, touch, quads)
            pending = ok.copy()
            for _try in range(VBD_BACKTRACKS + 1):
                if not pending.any():
                    break
                trial = p + dx
                if quads is not None:
                    for row, i in enumerate(nodes):
                        trial[row] = _hold_within(x0[i], quads.bound[i], trial[row])
                (trial_energy,) = _vbd_local(s, trial, nodes, x, x0, y, adjacency, dt, False)
                if s.pressure:
                    trial_energy = trial_energy + np.array(
                        [
                            _vbd_gas_energy(s, i, x, trial[row], volumes)
                            for row, i in enumerate(nodes)
                        ]
                    )
                if s.colliders or any(frozen):
                    trial_energy = trial_energy + _vbd_contact_energy(
                        s, nodes, trial, x0, kc, dt, frozen
                    )
                if touch is not None:
                    trial_energy = trial_energy + _vbd_pairs_energy(s, touch, nodes, trial)
                if quads is not None:
                    trial_energy = trial_energy + np.array(
                        [
                            _vbd_quads_energy(quads, int(i), trial[row], x0, dt, frozen_quads[row])
                            for row, i in enumerate(nodes)
                        ]
                    )
                take = pending & (trial_energy <= energy + VBD_ROUNDING * scale)
                x[nodes[take]] = trial[take]
                pending &= ~take
                dx = 0.5 * dx
    _vbd_translate(s, x0, y, x)
    s.x = x
    free = ~s.pinned
    s.v = v0.copy()
    s.v[free] = (x[free] - x0[free]) / dt
    coming = v0 + dt * a  # a pinned node's a is 0: it comes with v0
    g = float(np.sqrt(_dot(s.gravity, s.gravity, s.dim)))
    if s.colliders:
        for i in np.flatnonzero(free):
            for c in s.colliders:
                _vbd_restitute(c, x[i], coming[i], s.v[i], 2.0 * g * dt)
    if touch is not None:
        _vbd_restitute_pairs(s, touch.pairs, x, coming, s.v, 2.0 * g * dt)


def _vbd_restitute(
    c: Collider, x: np.ndarray, coming: np.ndarray, v: np.ndarray, threshold: float
) -> None:
    """Restitution of collider c on a node at x that came with ``coming``: v in place
    (vbd.c, restitute)."""
    if not c.restitution > 0.0:
        return
    inside, _depth, _surface, n = _vbd_depth(c, x)
    if not inside:
        return
    dim = len(x)
    u0 = _dot(coming, n, dim)
    if not -u0 > threshold:
        return
    du = c.restitution * -u0 - _dot(v, n, dim)
    if not du > 0.0:
        return
    v += du * n
    if not c.friction > 0.0:
        return
    vn = _dot(v, n, dim)
    vt = v - vn * n
    speed = float(np.sqrt(_dot(vt, vt, dim)))
    cap = c.friction * du
    keep = 1.0 - cap / speed if speed > cap else 0.0
    v[:] = vn * n + keep * vt


_STEPPERS = {
    "euler": _euler,
    "symplectic_euler": _symplectic_euler,
    "verlet": _verlet,
    "velocity_verlet": _velocity_verlet,
    "rk2": _rk2,
    "rk4": _rk4,
    "xpbd": _xpbd,
    "implicit_euler": _implicit_euler,
    "vbd": _vbd,
}


def hold_pins(s: State) -> None:
    """Hold the pinned nodes: zero the velocity of each that has a nonzero component
    (a node whose components are all ±0 keeps them: the kernel writes only those
    it must)."""
    moving = s.pinned & np.any(s.v != 0.0, axis=1)
    s.v[moving] = 0.0


def step(
    s: State,
    dt: float,
    steps: int = 1,
    method: str = "symplectic_euler",
    drag_pins: bool = False,
    divergence_factor: float | None = None,
) -> None:
    """Advance ``s`` in place by ``steps`` substeps of ``dt`` seconds.

    First the pinned nodes are held (:func:`hold_pins`), unless ``drag_pins``: then
    they keep their velocities and move with them (what ``System.drive`` does in
    each substep). After each substep the free nodes' velocities are scaled by
    ``energy_loss``. Rigid rods (stiffness inf) are refused (ValueError) by every
    method but xpbd. With ``divergence_factor``, the call keeps the kernel's energy
    books (see :class:`Books`): a check that fails restores ``s`` and raises
    :class:`Diverged`.
    """
    if method not in _STEPPERS:
        raise ValueError(f"unknown method {method!r}; valid: {', '.join(METHODS)}")
    if method != "xpbd" and np.isinf(s.k).any():
        rods = np.flatnonzero(np.isinf(s.k)).tolist()
        raise ValueError(f"springs {rods} are rigid rods: use method='xpbd'")
    if method not in ("xpbd", "vbd") and s.colliders:
        raise ValueError("the reference models colliders in method='xpbd' and 'vbd' only")
    if any(c.kind == "mesh" for c in s.colliders):
        raise ValueError("the reference models planes, spheres, boxes and capsules, not meshes")
    if steps > 0 and s.contact is not None:
        s.contact.dt = dt  # the law from the step takes this call's substep
        s.contact.method = method  # and its dashpot this method's calibration
    if steps > 0 and not drag_pins:
        hold_pins(s)
    books = None
    if divergence_factor is not None and method != "xpbd" and steps >= Books.EVERY:
        books = Books(s, dt, divergence_factor)
    if method != "verlet":
        s.prev_accel = None
    stepper = _STEPPERS[method]
    for done in range(1, steps + 1):
        stepper(s, dt)
        if s.energy_loss != 1.0:
            s.v[~s.pinned] *= s.energy_loss
        s.time += dt
        if books is not None:
            books.substep(s, dt)
            if done % Books.EVERY == 0 or done == steps:
                books.check(s)


def energy(s: State) -> tuple[float, float, float, float]:
    """Kinetic ½Σm|v|², elastic ½Σk(l-L)², gravitational -Σm g·x and gas
    Σ(−nrt ln V + ambient V) energies (J)."""
    kinetic = 0.5 * np.sum(s.m * np.sum(s.v * s.v, axis=1))
    d = s.x[s.springs[:, 1]] - s.x[s.springs[:, 0]]
    length = np.sqrt(np.sum(d * d, axis=1))
    rods = np.isinf(s.k)  # rigid rods store no energy
    elastic = 0.5 * np.sum(np.where(rods, 0.0, s.k * (length - s.L) ** 2))
    gravity = -np.sum(s.m * (s.x @ s.gravity))
    gas = 0.0
    for elements, nrt, ambient in s.pressure:
        volume = enclosed_volume(elements, s.x)
        gas += (-nrt * np.log(volume) if nrt else 0.0) + ambient * volume
    return float(kinetic), float(elastic), float(gravity), float(gas)


# ---- The divergence watch ------------------------------------------------------


class Diverged(FloatingPointError):
    """A step's motion outgrew its energy books (the kernel raises UnstableError).

    ``time`` is when the failing check ran (s); ``motion`` the kinetic + elastic
    energy then and ``bound`` the energy it was compared with, times the factor (J).
    """

    def __init__(self, time: float, motion: float, bound: float):
        super().__init__(f"diverged by t = {time:g} s: motion {motion:.3g} J > {bound:.3g} J")
        self.time, self.motion, self.bound = time, motion, bound


def motion_energy(s: State, x: np.ndarray, v: np.ndarray) -> float:
    """The motion's energy Q, J: ``½ Σ m |v|²`` over the free nodes plus
    ``½ Σ k (l − L)²`` over the springs of finite stiffness."""
    free = ~s.pinned
    kinetic = 0.5 * np.sum(s.m[free] * np.sum(v[free] * v[free], axis=1))
    d = x[s.springs[:, 1]] - x[s.springs[:, 0]]
    length = np.sqrt(np.sum(d * d, axis=1))
    springy = np.isfinite(s.k)
    elastic = 0.5 * np.sum(s.k[springy] * (length[springy] - s.L[springy]) ** 2)
    return float(kinetic + elastic)


def gas_energy(s: State, x: np.ndarray) -> float:
    """Σ over gas bodies of −nrt ln V + ambient V, J."""
    total = 0.0
    for elements, nrt, ambient in s.pressure:
        volume = enclosed_volume(elements, x)
        total += (-nrt * np.log(volume) if nrt else 0.0) + ambient * volume
    return total


class Books:
    """The energy books of one step call (csrc/kernel/step/divergence.c, in NumPy).

    The motion's energy Q (:func:`motion_energy`) may grow only by what it had (with
    the node–node contacts' potential at the start) and what is put in:
    the work of the constant node forces P = m g + F + drag·wind on the free nodes,
    P·(x − x₀), the drop of the gas energy, and the power −F_p·v_p of the springs on
    moving pinned nodes p (trapezoid rule per substep). A check (every EVERY substeps
    and at the end) fails when Q > factor · max(A_max, floor), A_max the largest
    energy available at any check and the floor ``½ Σ |P|² dt² / m`` over the free nodes
    plus 1e-20 · ½ Σ k L².
    """

    EVERY = 64

    def __init__(self, s: State, dt: float, factor: float):
        self.factor, self.dt = factor, dt
        self.x0, self.v0, self.time0 = s.x.copy(), s.v.copy(), s.time
        self.prev_accel0 = None if s.prev_accel is None else s.prev_accel.copy()
        # what the motion may take: Q and the contacts' potential (an overlap releases it)
        self.available = self.most = motion_energy(s, s.x, s.v) + contact_energy(s, s.x)
        self.gas0 = gas_energy(s, s.x)
        self.pin_work, self.pin_power = 0.0, self._pin_power(s)
        #: Q / max(A_max, floor) at each check so far (what the factor is compared with).
        self.ratios: list[float] = []

    @staticmethod
    def _push(s: State) -> np.ndarray:
        return s.m[:, None] * s.gravity + s.ext + s.drag * s.wind

    @staticmethod
    def _pin_power(s: State) -> float:
        # Moving pins, and the air on faces where it puts energy in.
        f = spring_forces(s, s.x, s.v)
        air = aero_power(s, s.x, s.v)
        return float(-np.sum(f[s.pinned] * s.v[s.pinned])) + max(-air, 0.0)

    def substep(self, s: State, dt: float) -> None:
        power = self._pin_power(s)
        self.pin_work += 0.5 * dt * (self.pin_power + power)
        self.pin_power = power

    def check(self, s: State) -> None:
        free = ~s.pinned
        push = self._push(s)[free]
        work = np.sum(push * (s.x[free] - self.x0[free]))
        available = self.available + work + (self.gas0 - gas_energy(s, s.x)) + self.pin_work
        self.most = max(self.most, available)
        springy = np.isfinite(s.k)
        floor = 0.5 * np.sum(np.sum(push * push, axis=1) / s.m[free]) * self.dt**2
        floor += 1e-20 * 0.5 * np.sum(s.k[springy] * s.L[springy] ** 2)
        bound = self.factor * max(self.most, floor)
        motion = motion_energy(s, s.x, s.v)
        self.ratios.append(motion / max(self.most, floor))
        if motion > bound:
            failed = s.time
            s.x, s.v, s.time = self.x0.copy(), self.v0.copy(), self.time0
            s.prev_accel = self.prev_accel0
            raise Diverged(failed, motion, bound)
