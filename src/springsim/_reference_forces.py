"""The forces of :mod:`springsim.reference`: springs, gas pressure, the air on faces.

Plain NumPy, one function per force, each the formula the C kernel implements;
:mod:`springsim.reference` re-exports them and integrates with them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # annotations only: reference.py imports this module
    from springsim.reference import State

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


#: m/s: self-contact friction is smoothed below this sliding speed (csrc/self_contact.c).
SELF_CONTACT_SLIP = 1e-3


def _closest_on_triangle(p: np.ndarray, tri: np.ndarray) -> np.ndarray:
    """Barycentric weights (3,) of the point of triangle ``tri`` (3, 3) closest to p: the
    projection on its plane when that is inside, else the closest of its three edges'
    closest points (a different route from the kernel's region tests)."""
    a, b, c = tri
    e1, e2 = b - a, c - a
    normal = np.cross(e1, e2)
    nn = float(normal @ normal)
    if nn > 0.0:
        r = p - a
        u = float(np.cross(r, e2) @ normal) / nn
        v = float(np.cross(e1, r) @ normal) / nn
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


def self_contact_forces(
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
    √(|u_t|² + s²) (u_t: the sliding part of v_p − Σ w_i v_i, s = SELF_CONTACT_SLIP);
    each vertex i gets −w_i F. Energy Σ ½ k (h − d)²; friction power Σ μ k (h − d)
    |u_t|² / √(|u_t|² + s²).
    """
    f = np.zeros_like(x)
    energy = power = 0.0

    # Left out, as in the kernel: the far vertex of a triangle across an edge.
    def edge(a: int, b: int) -> tuple[int, int]:
        return (a, b) if a < b else (b, a)

    by_edge: dict[tuple[int, int], list[int]] = {}
    for t, tri in enumerate(faces.tolist()):
        for k in range(3):
            by_edge.setdefault(edge(tri[k], tri[(k + 1) % 3]), []).append(t)
    for t, tri in enumerate(faces):
        corners = x[tri]
        far: set[int] = set()
        for k in range(3):
            sharing = by_edge[edge(int(tri[k]), int(tri[(k + 1) % 3]))]
            if len(sharing) == 2:  # a third triangle on an edge pairs with none
                other = faces[sharing[0] if sharing[1] == t else sharing[1]]
                far.update(int(v) for v in other if v not in tri)
        for p in range(len(x)):
            if p in tri or p in far:
                continue
            w = _closest_on_triangle(x[p], corners)
            diff = x[p] - w @ corners
            d = float(np.linalg.norm(diff))
            if not d < thickness or d == 0.0:
                continue
            n = diff / d
            fn = stiffness * (thickness - d)
            force = fn * n
            energy += 0.5 * stiffness * (thickness - d) ** 2
            if friction > 0.0:
                u = v[p] - w @ v[tri]
                ut = u - (u @ n) * n
                scale = friction * fn / np.sqrt(ut @ ut + SELF_CONTACT_SLIP**2)
                force = force - scale * ut
                power += float(scale * (ut @ ut))
            f[p] += force
            f[tri] -= w[:, None] * force[None, :]
    return f, energy, power
