"""Node–node contact for :mod:`springsim.reference`: every pair tried, no grid.

The kernel (``csrc/contact.c``) finds touching pairs with a hashed grid; this module
tries all N (N − 1) / 2 pairs, so that a pair the grid missed (or found twice) shows as
a disagreement in the tests. The law is the same linear spring–dashpot with
regularised Coulomb friction (see :attr:`springsim.System.contact_stiffness`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # annotations only: reference.py imports this module
    from springsim.reference import State
    from springsim.system import System

#: Nodes closer than this (metres) exert no contact force: no direction.
MIN_DISTANCE = 1e-12


@dataclass
class Contact:
    """Node–node contact of a reference state: radii, groups and the law.

    ``off`` holds the group pairs (a <= b) that do not touch.
    """

    radii: np.ndarray
    groups: np.ndarray
    stiffness: float = 1e4
    restitution: float = 0.5
    friction: float = 0.0
    off: set[tuple[int, int]] = field(default_factory=set)

    @classmethod
    def from_system(cls, sim: System) -> Contact:
        """The contact settings of a :class:`springsim.System`."""
        return cls(
            radii=np.array(sim.radii, dtype=np.float64),
            groups=np.array(sim.groups, dtype=np.int64),
            stiffness=sim.contact_stiffness,
            restitution=sim.contact_restitution,
            friction=sim.contact_friction,
            off={(int(a), int(b)) for a, b in sim._contact_filter()},
        )

    def zeta(self) -> float:
        """The dashpot's damping ratio: −ln e / √(π² + ln² e), 1 at e = 0."""
        if self.restitution == 0.0:
            return 1.0
        log_e = np.log(self.restitution)
        return float(-log_e / np.sqrt(np.pi**2 + log_e**2))


def pairs(s: State, x: np.ndarray) -> np.ndarray:
    """Every touching pair (i < j), (P, 2), by i then j: overlapping, allowed by the
    groups' filter and, within a group, not joined by a spring. Every pair of nodes
    with radii is tried (one row of distances at a time: O(K²) work, O(K) memory)."""
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
        for b in np.flatnonzero(d2 < reach * reach) + a + 1:
            i, j = int(idx[a]), int(idx[b])
            g, h = int(c.groups[i]), int(c.groups[j])
            if g == h and (i, j) in joined:
                continue
            if (min(g, h), max(g, h)) in c.off:
                continue
            found.append((i, j))
    return np.array(found, dtype=np.int64).reshape(-1, 2)


def _law(s: State, x: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per pair: the pairs, the force on j (−force on i), the overlap, the power lost."""
    c = s.contact
    p = pairs(s, x)
    if c is None or len(p) == 0:
        return p, np.zeros((0, s.dim)), np.zeros(0), np.zeros(0)
    i, j = p[:, 0], p[:, 1]
    d = x[j] - x[i]
    dist = np.sqrt(np.sum(d * d, axis=1))
    delta = c.radii[i] + c.radii[j] - dist
    live = (dist >= MIN_DISTANCE) & ~(s.pinned[i] & s.pinned[j])
    n = d / np.where(live, dist, 1.0)[:, None]
    mi, mj = s.m[i], s.m[j]
    m_eff = np.where(s.pinned[i], mj, np.where(s.pinned[j], mi, mi * mj / (mi + mj)))
    root = np.sqrt(c.stiffness * m_eff)
    damping = 2.0 * c.zeta() * root
    vrel = v[j] - v[i]
    vn = np.sum(vrel * n, axis=1)
    fn = c.stiffness * delta - damping * vn
    force = fn[:, None] * n
    power = damping * vn**2
    if c.friction > 0:
        vt = vrel - vn[:, None] * n
        speed = np.sqrt(np.sum(vt * vt, axis=1))
        ft = np.minimum(2.0 * root * speed, c.friction * np.abs(fn))
        moving = speed > 0
        force[moving] -= (ft[moving] / speed[moving])[:, None] * vt[moving]
        power = power + np.where(moving, ft * speed, 0.0)
    force[~live] = 0.0
    return p, force, np.where(live, delta, 0.0), np.where(live, power, 0.0)


def contact_forces(s: State, x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Contact force on each node, (N, dim)."""
    p, force, _delta, _power = _law(s, x, v)
    f = np.zeros_like(x)
    np.add.at(f, p[:, 1], force)
    np.add.at(f, p[:, 0], -force)
    return f


def contact_energy(s: State, x: np.ndarray) -> float:
    """½ k_c Σ δ² over the touching pairs, J."""
    if s.contact is None:
        return 0.0
    _p, _force, delta, _power = _law(s, x, np.zeros_like(x))
    return float(0.5 * s.contact.stiffness * np.sum(delta**2))


def contact_power(s: State, x: np.ndarray, v: np.ndarray) -> float:
    """Power, W, the dashpots and friction take out of the motion."""
    return float(np.sum(_law(s, x, v)[3]))


def contact_matrices(s: State, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Implicit Euler's contact terms at ``x``, dense (dim·N)²: the stiffness Σ k_c u uᵀ
    and the damping Σ c u uᵀ of the touching pairs (each a compressed spring along its
    normal u, whose projected sideways term is 0), assembled ±block as springs are."""
    n, dim = x.shape
    stiffness, damping = np.zeros((n * dim, n * dim)), np.zeros((n * dim, n * dim))
    c = s.contact
    if c is None:
        return stiffness, damping
    for i, j in pairs(s, x).tolist():
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
        uu = np.outer(u, u)
        for matrix, coefficient in (
            (stiffness, c.stiffness),
            (damping, 2.0 * c.zeta() * np.sqrt(c.stiffness * m_eff)),
        ):
            for a, b, sign in ((i, i, 1), (j, j, 1), (i, j, -1), (j, i, -1)):
                matrix[a * dim : (a + 1) * dim, b * dim : (b + 1) * dim] += sign * coefficient * uu
    return stiffness, damping
