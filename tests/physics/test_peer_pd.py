"""The bench's Projective Dynamics peer against the textbook (Liu et al. 2013).

Projective Dynamics minimises backward Euler's incremental potential by alternating
a local step (each spring's vector projected onto its rest length) and a global step
(one prefactored linear solve). Checked here against backward Euler written out in
the test with dense NumPy: exactly (to rounding) on a chain along its axis, where the
forces are linear and every local step gives the same vectors, and in the limit of
many iterations on a swinging 2D chain, where the test solves the nonlinear step by
Newton's method.
"""

import numpy as np
import pytest

from springsim.bench.peer_pd import ProjectiveDynamics, project
from springsim.bench.scenes import Problem


def chain(x, v, rest, k, mass, gravity, pinned=(0,)):
    """A chain of springs (i, i + 1) as a Problem."""
    n = len(x)
    pin = np.zeros(n, np.int32)
    pin[list(pinned)] = 1
    return Problem(
        x=np.array(x, float),
        v=np.array(v, float),
        mass=np.full(n, float(mass)),
        pinned=pin,
        pairs=np.array([[i, i + 1] for i in range(n - 1)], np.int32),
        rest=np.full(n - 1, float(rest)),
        k=np.full(n - 1, float(k)),
        c=np.zeros(n - 1),
        gravity=np.array(gravity, float),
    )


def test_local_step_projects_one_spring_onto_its_rest_length_exactly():
    # e = (3, 4, 12): |e| = 13, L = 6.5, so d = e / 2, every figure exact in binary.
    x = np.array([[1.0, 2.0, 3.0], [4.0, 6.0, 15.0]])
    d = project(x, np.array([[0, 1]]), np.array([6.5]))
    assert d.tolist() == [[1.5, 2.0, 6.0]]
    # A spring in a general direction: length L and parallel to x_j − x_i, to rounding.
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 3))
    d = project(x, np.array([[1, 0]]), np.array([0.37]))[0]
    e = x[0] - x[1]
    assert np.linalg.norm(d) == pytest.approx(0.37, rel=4e-16)
    assert np.linalg.norm(np.cross(d, e)) <= 1e-15 * np.linalg.norm(e)
    assert d @ e > 0


def test_chain_along_its_axis_is_backward_euler():
    # Nodes on the x axis, moving along it, gravity along it: every spring stays along
    # +x (the chain never folds: checked below), its force −k (x_j − x_i − L) is linear,
    # and backward Euler is one linear solve per step:
    #   (M + h² K) x' = M (x + h v) + h² b,   x' − x = h v'.
    n, h, k, m, rest, steps = 6, 0.01, 400.0, 0.05, 0.1, 30
    rng = np.random.default_rng(7)
    x0 = np.arange(n) * rest * 1.05 + rng.uniform(-0.01, 0.01, n)
    x0[0] = 0.0
    v0 = rng.uniform(-0.5, 0.5, n)
    v0[0] = 0.0
    g = -9.81
    pad = np.zeros((n, 2))
    problem = chain(np.column_stack([x0, pad]), np.column_stack([v0, pad]), rest, k, m, (g, 0, 0))
    pd = ProjectiveDynamics(problem, h, iterations=30)
    # The dense textbook step on the free nodes 1..n−1 (node 0 pinned at 0).
    stiff = np.zeros((n, n))
    load = np.full(n, m * g)
    for i in range(n - 1):  # spring (i, i + 1): +k (x_{i+1} − x_i − L) on i, minus on i + 1
        stiff[np.ix_([i, i + 1], [i, i + 1])] += k * np.array([[1, -1], [-1, 1]])
        load[i] -= k * rest
        load[i + 1] += k * rest
    free = np.arange(1, n)
    a = m * np.eye(n - 1) + h * h * stiff[np.ix_(free, free)]
    x, v = x0.copy(), v0.copy()
    for _ in range(steps):
        pd.step()
        rhs = m * (x[free] + h * v[free]) + h * h * (load[free] - stiff[free, 0] * x[0])
        new = np.linalg.solve(a, rhs)
        v[free] = (new - x[free]) / h
        x[free] = new
        assert np.all(np.diff(x) > 0)  # along +x all the way: the linear case holds
    # Rounding only: a well conditioned 5×5 system (h² k / m = 0.8), 30 steps of
    # positions ~0.5 m; 1e-12 m is a few thousand ulps.
    np.testing.assert_allclose(pd.x[:, 0], x, rtol=0, atol=1e-12)
    np.testing.assert_allclose(pd.v[:, 0], v, rtol=0, atol=1e-10)  # (Δx) / h: 100× the above
    assert np.all(pd.x[:, 1:] == 0) and np.all(pd.v[:, 1:] == 0)


def newton_backward_euler(x, v, problem, h):
    """One backward Euler step by Newton's method on the incremental potential
    E(z) = Σ m/(2h²) |z − y|² + Σ k/2 (|z_j − z_i| − L)², dense, free nodes only."""
    n, dim = x.shape
    free = np.flatnonzero(problem.pinned == 0)
    y = x + h * v + h * h * problem.gravity
    z = y.copy()
    z[problem.pinned == 1] = x[problem.pinned == 1]
    for _ in range(50):
        grad = (problem.mass[:, None] / h**2) * (z - y)
        hess = np.kron(np.diag(problem.mass / h**2), np.eye(dim))
        for (i, j), rest, k in zip(problem.pairs, problem.rest, problem.k, strict=True):
            e = z[j] - z[i]
            length = np.linalg.norm(e)
            u = e / length
            grad[j] += k * (length - rest) * u
            grad[i] -= k * (length - rest) * u
            block = k * (np.outer(u, u) + (1 - rest / length) * (np.eye(dim) - np.outer(u, u)))
            for a, b, sign in ((i, i, 1), (j, j, 1), (i, j, -1), (j, i, -1)):
                hess[a * dim : (a + 1) * dim, b * dim : (b + 1) * dim] += sign * block
        cols = (free[:, None] * dim + np.arange(dim)).ravel()
        delta = np.linalg.solve(hess[np.ix_(cols, cols)], grad[free].ravel())
        z[free] -= delta.reshape(-1, dim)
        if np.max(np.abs(delta)) < 1e-15:
            break
    return z, (z - x) / h


def test_many_iterations_converge_to_backward_euler_on_a_swinging_chain():
    # A chain of 4 springs held at one end, set off sideways in the plane: the springs
    # turn, the forces are nonlinear, and only the converged iteration is backward
    # Euler. Each PD iteration shrinks the error by a fixed factor (here about 0.75),
    # so 200 of them reach rounding (50: 3e-9 m); 1 iteration is 3 mm off (checked, or
    # the check would be void).
    n, h, steps = 5, 0.01, 10
    x0 = np.column_stack([np.arange(n) * 0.1, np.zeros(n), np.zeros(n)])
    v0 = np.zeros((n, 3))
    v0[1:, 1] = np.linspace(0.2, 1.0, n - 1)
    problem = chain(x0, v0, 0.1, 200.0, 0.02, (0, -9.81, 0))
    converged = ProjectiveDynamics(problem, h, iterations=200)
    rough = ProjectiveDynamics(problem, h, iterations=1)
    x, v = x0.copy(), v0.copy()
    worst_converged = worst_rough = 0.0
    for _ in range(steps):
        x, v = newton_backward_euler(x, v, problem, h)
        converged.step()
        rough.step()
        worst_converged = max(worst_converged, np.max(np.abs(converged.x - x)))
        worst_rough = max(worst_rough, np.max(np.abs(rough.x - x)))
    # Positions ~0.4 m; Newton converged to 1e-15 m, PD's geometric tail to rounding:
    # 1e-11 m leaves room for the rounding of 10 steps of 200 solves.
    assert worst_converged < 1e-11
    assert worst_rough > 1e-5
    assert np.max(np.abs(converged.v - v)) < 1e-9  # Δx / h


@pytest.mark.parametrize(
    ("change", "error", "words"),
    [
        (dict(dt=0.0), ValueError, "dt"),
        (dict(dt=float("nan")), ValueError, "dt"),
        (dict(iterations=0), ValueError, "iterations"),
        (dict(iterations=2.0), TypeError, "iterations"),
        (dict(damping=0.1), ValueError, "undamped"),
    ],
)
def test_bad_arguments_are_refused(change, error, words):
    problem = chain(np.eye(3), np.zeros((3, 3)), 1.0, 10.0, 1.0, (0, -9.81, 0))
    if "damping" in change:
        problem.c[:] = change.pop("damping")
    arguments = dict(dt=0.01, iterations=3) | change
    with pytest.raises(error, match=words):
        ProjectiveDynamics(problem, **arguments)
