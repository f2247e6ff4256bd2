"""What a run measures at its frames beyond the positions: chosen springs (length and
tension) and bodies (mass, momentum, centre of mass, kinetic energy in bulk and
internal, elastic and gravitational energy): :meth:`springsim.System.run`'s
``springs=`` and ``bodies=``.

Each function reads the system's arrays as they are (no copy of the state is kept)
and returns fresh arrays for one frame.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from springsim import _core
from springsim._checks import _as_indices
from springsim.model import topology


def _occurrences(pairs: np.ndarray) -> np.ndarray:
    """(lower node, higher node, k) for each node pair: k equal pairs come before it."""
    ends = np.sort(pairs, axis=1)
    _, group = np.unique(ends, axis=0, return_inverse=True)
    group = group.reshape(-1)
    order = np.argsort(group, kind="stable")  # equal pairs together, in spring order
    grouped, count = group[order], np.arange(len(group))
    first = np.r_[True, grouped[1:] != grouped[:-1]][: len(group)]
    rank = np.empty(len(group), dtype=np.int64)
    rank[order] = count - np.maximum.accumulate(np.where(first, count, 0))
    return np.column_stack([ends, rank])


def spring_rows(start: np.ndarray, rows: np.ndarray, current: np.ndarray) -> np.ndarray:
    """Where the springs ``start[rows]`` (node pairs) are in ``current``, or -1 if gone.

    Removing springs (tearing, remove_springs) keeps the others in order, so the k-th
    spring joining two nodes stays the k-th: a spring is followed by its nodes and k.
    """
    if np.array_equal(start, current):
        return rows
    both = np.concatenate([_occurrences(start)[rows], _occurrences(current)])
    _, ids = np.unique(both, axis=0, return_inverse=True)
    ids = ids.reshape(-1)
    where = np.full(len(both), -1, dtype=np.int64)
    where[ids[len(rows) :]] = np.arange(len(current))
    return where[ids[: len(rows)]]


def spring_selection(sim: _core.System, springs: Any) -> np.ndarray:
    """``springs=`` of run() as spring indices (int64), checked: indices or a mask."""
    if springs is None:
        return np.zeros(0, dtype=np.int64)
    chosen = _as_indices(springs, "springs", sim.num_springs, of="spring").astype(np.int64)
    if chosen.size and (chosen.min() < 0 or chosen.max() >= sim.num_springs):
        raise ValueError(
            f"springs must be in [0, {sim.num_springs}), got {chosen.min()}..{chosen.max()}"
        )
    return chosen


def spring_values(
    sim: _core.System, start: np.ndarray, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Length (m), signed tension (N, as :meth:`springsim.System.spring_tensions`) and
    strain (l/L − 1; 0 where L = 0) of the springs ``start[rows]`` now; NaN for those
    gone."""
    found = spring_rows(start, rows, np.asarray(sim._view("springs"), dtype=np.int64))
    here, now = found >= 0, found[found >= 0]
    length, tension, strain = (np.full(len(rows), np.nan) for _ in range(3))
    length[here] = sim.spring_lengths()[now]
    tension[here] = sim.spring_tensions()[now]
    rest = np.asarray(sim._view("rest_lengths"))[now]
    strain[here] = np.divide(length[here], rest, out=np.ones(len(now)), where=rest > 0) - 1.0
    return length, tension, strain


def body_groups(sim: _core.System, bodies: Any) -> list[np.ndarray]:
    """``bodies=`` of run() as a list of node index arrays (int64), checked: True for
    :meth:`springsim.System.bodies`' pieces, or a sequence of index arrays or masks."""
    if bodies is None or bodies is False:
        return []
    if bodies is True:
        labels = topology.bodies(sim)
        return [np.flatnonzero(labels == b) for b in range(int(labels.max(initial=-1)) + 1)]
    if isinstance(bodies, (str, bytes)) or not hasattr(bodies, "__len__"):
        raise TypeError(
            "bodies must be True (the connected pieces, System.bodies()) or a sequence of "
            f"node index arrays or boolean masks, not {type(bodies).__name__}"
        )
    groups = []
    for b, group in enumerate(bodies):
        if np.ndim(group) != 1:
            raise ValueError(
                f"bodies[{b}] must be a 1-D array of node indices or a boolean mask, "
                f"got shape {np.shape(group)}"
            )
        nodes = _as_indices(group, f"bodies[{b}]", sim.num_nodes).astype(np.int64)
        if nodes.size == 0:
            raise ValueError(f"bodies[{b}] holds no node")
        if nodes.min() < 0 or nodes.max() >= sim.num_nodes:
            raise ValueError(
                f"bodies[{b}] must be in [0, {sim.num_nodes}), got {nodes.min()}..{nodes.max()}"
            )
        if len(np.unique(nodes)) != len(nodes):
            raise ValueError(f"bodies[{b}] names a node twice")
        groups.append(nodes)
    return groups


#: What body_values returns per body, in this order (the History's attribute names
#: without their "body_" prefix).
BODY_SCALARS = ("mass", "kinetic", "bulk_kinetic", "internal_kinetic", "elastic", "gravity")
BODY_VECTORS = ("momentum", "center_of_mass")
BODY_FIGURES = BODY_SCALARS + BODY_VECTORS


def body_values(sim: _core.System, groups: list[np.ndarray]) -> dict[str, np.ndarray]:
    """Each body's figures now: a dict of BODY_SCALARS (B,) and BODY_VECTORS (B, dim).

    For a body of nodes i with masses m_i, positions x_i and velocities v_i (pinned
    and driven nodes included, as in :meth:`springsim.System.energy`):
    mass M = Σ m_i (kg); momentum p = Σ m_i v_i (kg·m/s); centre of mass Σ m_i x_i / M
    (m); kinetic ½ Σ m_i |v_i|²; bulk_kinetic ½ M |v_cm|² with v_cm = p / M;
    internal_kinetic ½ Σ m_i |v_i − v_cm|² (their difference, summed without
    cancellation); elastic ½ Σ k (l − L)² over the springs with both ends in the body
    (rigid rods store none); gravity −Σ m_i g·x_i (J).
    """
    x = np.asarray(sim._view("positions"))
    v = np.asarray(sim._view("velocities"))
    m = np.asarray(sim._view("masses"))
    g = np.asarray(sim._view("gravity"))
    pairs = np.asarray(sim._view("springs"), dtype=np.int64).reshape(-1, 2)
    k = np.asarray(sim._view("stiffness"))
    rest = np.asarray(sim._view("rest_lengths"))
    stored = np.zeros(len(pairs))
    finite = np.isfinite(k)
    if len(pairs):
        stretch = sim.spring_lengths() - rest
        stored[finite] = 0.5 * k[finite] * stretch[finite] ** 2
    dim, count = sim.dim, len(groups)
    out = {name: np.zeros(count) for name in BODY_SCALARS}
    out.update({name: np.zeros((count, dim)) for name in BODY_VECTORS})
    member = np.zeros(len(m), dtype=bool)
    for b, nodes in enumerate(groups):
        mb, xb, vb = m[nodes], x[nodes], v[nodes]
        mass = mb.sum()
        momentum = mb @ vb
        v_cm = momentum / mass
        out["mass"][b] = mass
        out["momentum"][b] = momentum
        out["center_of_mass"][b] = (mb @ xb) / mass
        out["kinetic"][b] = 0.5 * float(mb @ np.einsum("ij,ij->i", vb, vb))
        out["bulk_kinetic"][b] = 0.5 * mass * float(v_cm @ v_cm)
        relative = vb - v_cm
        out["internal_kinetic"][b] = 0.5 * float(mb @ np.einsum("ij,ij->i", relative, relative))
        member[:] = False
        member[nodes] = True
        inside = member[pairs[:, 0]] & member[pairs[:, 1]] if len(pairs) else member[:0]
        out["elastic"][b] = float(stored[inside].sum())
        out["gravity"][b] = -float(mb @ (xb @ g))
    return out
