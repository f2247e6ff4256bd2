"""Projective Dynamics, the bench's peer for stiff springs (NumPy and SciPy).

Liu, Bargteil, O'Brien and Kavan, "Fast simulation of mass-spring systems" (SIGGRAPH
Asia 2013): backward Euler written as a minimisation. A step of h seconds from
positions x and velocities v minimises, over the new positions z,

    E(z) = 1/(2 h²) (z − y)ᵀ M (z − y) + Σ_s k_s/2 |z_j − z_i − d_s|²,

    y = x + h v + h² g,

over z and, for each spring s = (i, j), over a vector d_s of length L_s (its rest
length): for fixed z the best d_s is the *local step*, the projection

    d_s = L_s (z_j − z_i) / |z_j − z_i|,

and for fixed d the best z is the *global step*, one linear solve

    (M / h² + Σ_s k_s A_sᵀ A_s) z = M y / h² + Σ_s k_s A_sᵀ d_s,

with A_s z = z_j − z_i. The matrix depends on neither z nor d: it is factorised once
(:func:`scipy.sparse.linalg.splu`), and each of the step's ``iterations`` local/global
pairs costs one pass over the springs and one pair of triangular solves per
coordinate. Pinned nodes are not unknowns: their columns of A go to the right-hand
side. At the minimum of E over both, z is the backward Euler step (the springs'
energy k/2 (l − L)² is the minimum over d of k/2 |z_j − z_i − d|²); a fixed number of
iterations stops before it. Then v = (z − x) / h, x = z.

Like the scene it is timed on, it has springs and gravity only: no damping (a scene
with damped springs is refused). It is a peer of the bench
(:mod:`springsim.bench.stiff_cloth`), not a method of springsim.
"""

import numpy as np

from springsim.bench.scenes import Problem


def project(x: np.ndarray, pairs: np.ndarray, rest: np.ndarray) -> np.ndarray:
    """The local step: each spring's vector d_s = L_s (x_j − x_i) / |x_j − x_i|.

    A spring of zero length keeps its direction undefined: d_s is then 0 (its
    nodes coincide; the global step pulls them apart along no preferred axis).

    Parameters
    ----------
    x : ndarray, (N, dim)
        Positions, m.
    pairs : ndarray, (M, 2) int
        The springs' nodes i, j.
    rest : ndarray, (M,)
        Rest lengths L, m.

    Returns
    -------
    ndarray, (M, dim)
        d_s, of length L_s along the spring.

    Examples
    --------
    >>> import numpy as np
    >>> from springsim.bench.peer_pd import project
    >>> project(np.array([[0.0, 0.0, 0.0], [3.0, 4.0, 0.0]]), np.array([[0, 1]]), np.array([2.0]))
    array([[1.2, 1.6, 0. ]])
    """
    e = x[pairs[:, 1]] - x[pairs[:, 0]]
    length = np.sqrt(np.einsum("ij,ij->i", e, e))
    scale = np.divide(rest, length, out=np.zeros_like(length), where=length > 0)
    return e * scale[:, None]


class ProjectiveDynamics:
    """A scene stepped by Projective Dynamics with a fixed step and iteration count.

    Parameters
    ----------
    problem : springsim.bench.scenes.Problem
        The scene as arrays (copied): undamped springs, masses, pins, gravity.
    dt : float
        h, the step, s, > 0.
    iterations : int
        Local/global pairs per step, >= 1.

    Raises
    ------
    ValueError
        A step or iteration count out of range, a damped spring, or a free node
        without mass.

    Examples
    --------
    A pinned mass on a vertical spring settles to where the spring carries its
    weight, k (l − L) = m g:

    >>> import numpy as np
    >>> from springsim.bench.scenes import Problem
    >>> from springsim.bench.peer_pd import ProjectiveDynamics
    >>> p = Problem(x=np.array([[0.0, 0, 0], [0, -1, 0]]), v=np.zeros((2, 3)),
    ...             mass=np.array([1.0, 1.0]), pinned=np.array([1, 0], np.int32),
    ...             pairs=np.array([[0, 1]], np.int32), rest=np.array([1.0]),
    ...             k=np.array([100.0]), c=np.array([0.0]),
    ...             gravity=np.array([0.0, -9.81, 0.0]))
    >>> pd = ProjectiveDynamics(p, dt=0.1, iterations=20)
    >>> pd.step(500)
    >>> round(float(-pd.x[1, 1] - 1.0), 6)  # m g / k
    0.0981
    """

    def __init__(self, problem: Problem, dt: float, iterations: int):
        import scipy.sparse
        import scipy.sparse.linalg

        if not (isinstance(dt, int | float) and np.isfinite(dt) and dt > 0):
            raise ValueError(f"dt must be a finite number > 0, got {dt!r}")
        if isinstance(iterations, bool) or not isinstance(iterations, int | np.integer):
            raise TypeError(f"iterations must be an int >= 1, got {iterations!r}")
        if iterations < 1:
            raise ValueError(f"iterations must be >= 1, got {iterations}")
        if np.any(np.asarray(problem.c) != 0):
            raise ValueError("ProjectiveDynamics implements undamped springs only (c = 0)")
        self.x = np.array(problem.x, dtype=float)
        self.v = np.array(problem.v, dtype=float)
        self.dt = float(dt)
        self.iterations = int(iterations)
        self.pairs = np.array(problem.pairs, dtype=np.int64)
        self.rest = np.array(problem.rest, dtype=float)
        pinned = np.asarray(problem.pinned).astype(bool)
        self.free = np.flatnonzero(~pinned)
        mass = np.asarray(problem.mass, dtype=float)[self.free]
        if np.any(mass <= 0):
            raise ValueError("every free node needs a mass > 0")
        self.gravity = np.asarray(problem.gravity, dtype=float)
        n, m = len(self.x), len(self.pairs)
        # A: row s is −1 at node i, +1 at node j, so that (A x)_s = x_j − x_i.
        a = scipy.sparse.csr_matrix(
            (
                np.tile([-1.0, 1.0], m),
                self.pairs.reshape(-1),
                np.arange(0, 2 * m + 1, 2),
            ),
            shape=(m, n),
        )
        a_free = a[:, self.free]
        k = scipy.sparse.diags(np.asarray(problem.k, dtype=float))
        self._mass_h2 = (mass / self.dt**2)[:, None]  # M / h², kg/s²
        # Σ k A_sᵀ (·): the springs' vectors d onto the free nodes, N/m.
        self._spread = (a_free.T @ k).tocsr()
        # A_pinned x_pinned: the pinned ends' part of every spring (pins do not move).
        self._pinned_part = a[:, np.flatnonzero(pinned)] @ self.x[pinned]
        matrix = scipy.sparse.diags(self._mass_h2[:, 0]) + a_free.T @ k @ a_free
        self._lu = scipy.sparse.linalg.splu(matrix.tocsc(), permc_spec="MMD_AT_PLUS_A")

    def step(self, steps: int = 1) -> None:
        """Advance by ``steps`` steps of ``dt``, each of ``iterations`` local/global pairs."""
        h, free, x = self.dt, self.free, self.x
        for _ in range(steps):
            start = x[free]
            y = start + h * self.v[free] + h * h * self.gravity
            # The step's fixed part of the right-hand side: inertia, and the pinned ends
            # moved across (A_f z + A_p x_p − d, so −Σ k A_fᵀ A_p x_p).
            fixed = self._mass_h2 * y - self._spread @ self._pinned_part
            x[free] = y  # the first guess
            for _ in range(self.iterations):
                d = project(x, self.pairs, self.rest)
                x[free] = self._lu.solve(fixed + self._spread @ d)
            self.v[free] = (x[free] - start) / h
