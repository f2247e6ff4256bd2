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
