"""The linear algebra of a spring system: its stiffness matrix and normal modes.

About a state x, small motions δx obey M δẍ = −K δx, with K the Hessian of the elastic
energy ½ Σ k (l − L)². Each spring s = (i, j), unit vector u, length l, adds the block

    K_s = k [u uᵀ + (1 − L/l) (I − u uᵀ)]

at (i, i) and (j, j), and −K_s at (i, j) and (j, i). The first term resists stretching;
the second is the tension's sideways stiffness (a taut string's), negative for a
compressed spring, which can buckle. The normal modes solve K φ = ω² M φ over the free
nodes (pinned ones do not move).
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from springsim import _core

if TYPE_CHECKING:
    import scipy.sparse

    from springsim.system import System

#: Above this many free coordinates normal_modes uses SciPy's sparse eigensolver
#: (shift-invert Lanczos) instead of NumPy's dense one.
DENSE_LIMIT = 2000


class Modes(NamedTuple):
    """Normal modes of a system about its current state.

    Attributes
    ----------
    frequencies : ndarray, shape (k,)
        Angular frequencies ω, rad/s, ascending. Zero for a rigid-body motion or an
        unresisted one; a direction in which the energy decreases (λ = ω² < 0, e.g. a
        compressed spring that can buckle) is reported as −√(−λ).
    shapes : ndarray, shape (k, N, dim)
        The mode shapes φ, mass-normalised (``Σ m |φ|² = 1``), zero at pinned nodes.
    """

    frequencies: np.ndarray
    shapes: np.ndarray


def _scipy_sparse() -> types.ModuleType:
    try:
        import scipy.sparse
    except ImportError:  # pragma: no cover - the [test] extra installs SciPy
        raise ImportError("stiffness_matrix() needs SciPy: pip install scipy") from None
    return scipy.sparse


def stiffness_matrix(sim: _core.System) -> scipy.sparse.csr_matrix:
    """The Hessian of the elastic energy at the current positions, sparse (dim·N)².

    See :meth:`springsim.System.stiffness_matrix`.
    """
    sparse = _scipy_sparse()
    rows, cols, values = sim._stiffness_triplets()
    size = sim.dim * sim.num_nodes
    return sparse.coo_matrix((values, (rows, cols)), shape=(size, size)).tocsr()


def _dense_hessian(sim: _core.System, free: np.ndarray) -> np.ndarray:
    """K restricted to the free coordinates, dense, without SciPy."""
    rows, cols, values = sim._stiffness_triplets()
    size = sim.dim * sim.num_nodes
    position = np.full(size, -1)
    position[free] = np.arange(len(free))
    keep = (position[rows] >= 0) & (position[cols] >= 0)
    k = np.zeros((len(free), len(free)))
    np.add.at(k, (position[rows[keep]], position[cols[keep]]), values[keep])
    return k


def normal_modes(sim: System, k: int) -> Modes:
    """The ``k`` lowest normal modes about the current state.

    See :meth:`springsim.System.normal_modes`.
    """
    import operator

    k = operator.index(k)
    dim = sim.dim
    free_nodes = np.flatnonzero(~np.asarray(sim.pinned))
    free = (free_nodes[:, None] * dim + np.arange(dim)).reshape(-1)
    if len(free) == 0:
        raise ValueError("every node is pinned: there is nothing to vibrate")
    if not 1 <= k <= len(free):
        raise ValueError(f"k must be between 1 and {len(free)} (the free coordinates), got {k}")
    scale = 1.0 / np.sqrt(np.repeat(np.asarray(sim.masses)[free_nodes], dim))
    if len(free) <= DENSE_LIMIT or k == len(free):
        weighted = scale[:, None] * _dense_hessian(sim, free) * scale[None, :]
        eigenvalues, vectors = np.linalg.eigh(weighted)
        eigenvalues, vectors = eigenvalues[:k], vectors[:, :k]
    else:
        from scipy.sparse.linalg import eigsh

        matrix = stiffness_matrix(sim)[free][:, free]
        weighted = matrix.multiply(scale[:, None]).multiply(scale[None, :]).tocsc()
        # Shift-invert about σ just below Gershgorin's lower bound of the spectrum:
        # the matrix minus σI is positive definite, and the eigenvalues nearest σ are
        # the lowest ones, negative (a state that can buckle) or not.
        diagonal = weighted.diagonal()
        off = np.asarray(abs(weighted).sum(axis=1)).reshape(-1) - np.abs(diagonal)
        size = max(float(np.abs(diagonal).max()), 1e-300)
        sigma = min(float((diagonal - off).min()), 0.0) - 1e-6 * size
        eigenvalues, vectors = eigsh(weighted, k=k, sigma=sigma, which="LM")
        order = np.argsort(eigenvalues)
        eigenvalues, vectors = eigenvalues[order], vectors[:, order]
    frequencies = np.sign(eigenvalues) * np.sqrt(np.abs(eigenvalues))
    shapes = np.zeros((k, sim.num_nodes * dim))
    shapes[:, free] = (scale[:, None] * vectors).T
    return Modes(frequencies, shapes.reshape(k, sim.num_nodes, dim))
