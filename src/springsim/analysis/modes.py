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

import operator
import types
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from springsim import _core
from springsim.analysis.statics import relax

if TYPE_CHECKING:
    import scipy.sparse

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


def stiffness_matrix(self: _core.System) -> scipy.sparse.csr_matrix:
    """The Hessian K of the elastic energy at the current positions (needs SciPy).

    Each spring s = (i, j) with unit vector u, length l and rest length L adds
    ``K_s = k [u uᵀ + (1 − L/l)(I − u uᵀ)]`` at blocks (i, i) and (j, j) and −K_s at
    (i, j) and (j, i): the exact second derivative of ½ k (l − L)², so that
    small displacements δx change the spring forces by −K δx. Row and column
    ``node * dim + axis``; pinned nodes included. Springs shorter than 1e-12 m
    contribute nothing (they exert no force). Gas and gravity are not included.

    Returns
    -------
    scipy.sparse.csr_matrix, shape (dim·N, dim·N)
        Symmetric; positive semi-definite unless a spring is compressed.

    Raises
    ------
    ImportError
        SciPy is not installed (``pip install scipy``).
    ValueError
        A spring is a rigid rod (stiffness inf).

    Examples
    --------
    >>> import springsim as ss
    >>> sim = ss.System(dim=2)
    >>> _ = sim.add_nodes([[0, 0], [2, 0]])
    >>> _ = sim.add_springs([0, 1], stiffness=10.0, rest_lengths=1.0)
    >>> sim.stiffness_matrix().toarray()  # axial k = 10, sideways k (1 − L/l) = 5
    array([[ 10.,   0., -10.,   0.],
           [  0.,   5.,   0.,  -5.],
           [-10.,   0.,  10.,   0.],
           [  0.,  -5.,   0.,   5.]])
    """
    sparse = _scipy_sparse()
    rows, cols, values = self._stiffness_triplets()
    size = self.dim * self.num_nodes
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


def _modes(sim: _core.System, k: int) -> Modes:
    """The ``k`` lowest normal modes about the current state (see :func:`normal_modes`)."""
    k = operator.index(k)
    dim = sim.dim
    free_nodes = np.flatnonzero(~np.asarray(sim._view("pinned")))
    free = (free_nodes[:, None] * dim + np.arange(dim)).reshape(-1)
    if len(free) == 0:
        raise ValueError("every node is pinned: there is nothing to vibrate")
    if not 1 <= k <= len(free):
        raise ValueError(f"k must be between 1 and {len(free)} (the free coordinates), got {k}")
    scale = 1.0 / np.sqrt(np.repeat(np.asarray(sim._view("masses"))[free_nodes], dim))
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


def normal_modes(self: _core.System, k: int, about: str = "current") -> Modes:
    """The ``k`` lowest normal modes of small motions about a state.

    Solves K φ = ω² M φ (K: :meth:`stiffness_matrix`, M: the node masses) over
    the free nodes; pinned nodes stay put. A free body has one zero mode per
    rigid motion (3 in 2D, 6 in 3D), more if it can deform without stretching a
    spring (a ``jelly(..., arrangement="simple")`` can shear). Dense (NumPy)
    up to 2000 free coordinates, sparse shift-invert Lanczos (SciPy) above.

    Small oscillations happen about an equilibrium. About a state that is not one
    (a chain just built at its rest length, before gravity has pulled it down), K
    describes nothing physical and compressed springs give it negative "modes";
    ``about="equilibrium"`` relaxes a copy first (:meth:`relax`) and leaves this
    system as it is.

    Parameters
    ----------
    k : int
        How many modes, 1 to dim × (free nodes).
    about : {"current", "equilibrium"}
        The state to linearise about: the current positions (default), or the
        equilibrium :meth:`relax` finds from them (a copy is relaxed; it warns
        with :class:`springsim.ConvergenceWarning` if it does not converge).

    Returns
    -------
    Modes
        ``frequencies`` (k,) in rad/s, ascending, and mass-normalised ``shapes``
        (k, N, dim); see :class:`springsim.analysis.modes.Modes` for negative frequencies.

    Raises
    ------
    ValueError
        k out of range, every node pinned, a rigid rod, an unknown ``about``; with
        ``about="equilibrium"``, whatever :meth:`relax` refuses.

    Examples
    --------
    Ten masses between two pins: ω_n = 2 √(k/m) sin(nπ/22). Along the chain at
    rest length the sideways motions are free (10 zero modes); the next 10 are
    the stretching ones.

    >>> import numpy as np
    >>> import springsim as ss
    >>> chain = ss.string(12, length=11.0, mass=12.0, stiffness=4.0, dim=2, pin="both")
    >>> omega = chain.normal_modes(20).frequencies
    >>> n = np.arange(1, 11)
    >>> np.allclose(omega[:10], 0), np.allclose(omega[10:], 4 * np.sin(n * np.pi / 22))
    (True, True)

    Under gravity that state is no equilibrium; the one below it is, and has no
    negative mode:

    >>> chain.rest_lengths = 1.2  # slack: compressed springs at the start
    >>> bool(chain.normal_modes(1).frequencies[0] < 0)
    True
    >>> bool(chain.normal_modes(1, about="equilibrium").frequencies[0] > 0)
    True
    """
    if about not in ("current", "equilibrium"):
        raise ValueError(f'about must be "current" or "equilibrium", got {about!r}')
    target = self
    if about == "equilibrium":
        free = int(np.count_nonzero(~self._view("pinned")))
        if not 1 <= operator.index(k) <= self.dim * free:
            return _modes(target, k)  # its own message, before any work
        target = target.copy()
        relax(target)
    return _modes(target, k)
