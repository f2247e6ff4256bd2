"""method="vbd" (Vertex Block Descent): against the NumPy oracle, the closed-form Newton
step, backward Euler solved exactly in the test, the energy books and the thread count."""

import numpy as np
import pytest
from scipy.optimize import fsolve

import springsim as ss
from springsim import reference


def random_system(dim: int, seed: int, n: int = 12, damping: bool = True) -> ss.System:
    rng = np.random.default_rng(seed)
    sim = ss.System(dim=dim)
    sim.add_nodes(rng.normal(size=(n, dim)), masses=rng.uniform(0.5, 2.0, n))
    pairs = np.array([(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < 0.3])
    sim.add_springs(
        pairs,
        stiffness=rng.uniform(10.0, 1000.0, len(pairs)),
        damping=rng.uniform(0.0, 2.0, len(pairs)) if damping else 0.0,
    )
    sim.rest_lengths[:] = rng.uniform(0.5, 1.5, len(pairs))
    sim.velocities[:] = rng.normal(size=(n, dim))
    sim.pinned[0] = True
    return sim


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kernel_matches_the_numpy_oracle(dim, seed):
    sim = random_system(dim, seed)
    sim.drag = 0.3
    sim.wind = np.arange(1.0, dim + 1.0)
    sim.external_forces[3] = 2.0
    sim.iterations = 7
    s = reference.State.from_system(sim)
    sim.step(0.01, steps=5, method="vbd")
    reference.step(s, 0.01, steps=5, method="vbd")
    # The same operations in the same order: round-off apart at most (1e-12 of the
    # coordinates, which are of order 1).
    np.testing.assert_allclose(sim.positions, s.x, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sim.velocities, s.v, rtol=0, atol=1e-12)
    assert not np.allclose(s.x, reference.State.from_system(random_system(dim, seed)).x)


def test_contact_is_taken_as_the_oracle_does():
    # Node-node contact is energy in the vertex blocks (vbd.c), and the oracle's _vbd does
    # the same: nodes 0 and 1 start overlapping (pushed apart at most 3 m/s), node 0 moving.
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 0.0], [0.15, 0.0], [0.3, 0.05]], masses=1.0)
    sim.radii = 0.1
    sim.add_springs([[1, 2]], stiffness=300.0)
    sim.velocities[0] = (1.0, 0.0)
    s = reference.State.from_system(sim)
    sim.step(1e-3, steps=20, method="vbd")
    reference.step(s, 1e-3, steps=20, method="vbd")
    np.testing.assert_allclose(sim.positions, s.x, rtol=0, atol=1e-12)


def test_a_single_spring_vertex_step_is_the_closed_form_newton_step():
    # One free node on a spring to a pin, along x, no gravity: one pass is one Newton
    # step from y of G(x) = m/(2h²)(x − y)² + k/2 (x − L)², exact for this quadratic
    # G: x = (m/h² y + k L) / (m/h² + k).
    m, k, rest, h, v0, x0 = 0.5, 800.0, 1.0, 0.01, 3.0, 1.2
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 0.0], [x0, 0.0]], masses=[1.0, m])
    sim.add_springs([[0, 1]], stiffness=k)
    sim.rest_lengths[:] = rest
    sim.pinned[0] = True
    sim.gravity = (0.0, 0.0)
    sim.velocities[1] = (v0, 0.0)
    sim.iterations = 1
    sim.step(h, method="vbd")
    y = x0 + h * v0
    w = m / h**2
    expected = (w * y + k * rest) / (w + k)
    assert sim.positions[1, 0] == pytest.approx(expected, rel=1e-14)
    assert sim.velocities[1, 0] == pytest.approx((expected - x0) / h, rel=1e-12)


def backward_euler(sim: ss.System, h: float) -> tuple[np.ndarray, np.ndarray]:
    """The exact backward-Euler step of sim's springs (and gravity), solved by fsolve:
    m (x − x0 − h v0) / h² = f(x, (x − x0)/h) + m g over the free nodes."""
    s = reference.State.from_system(sim)
    x0, v0, free = s.x.copy(), s.v.copy(), ~s.pinned
    dim = s.dim

    def residual(q):
        x = x0.copy()
        x[free] = q.reshape(-1, dim)
        v = (x - x0) / h
        f = reference.spring_forces(s, x, v) + s.m[:, None] * s.gravity
        r = s.m[:, None] * (x - x0 - h * v0) / h**2 - f
        return r[free].reshape(-1)

    q = fsolve(residual, (x0 + h * v0)[free].reshape(-1), xtol=1e-14)
    x = x0.copy()
    x[free] = q.reshape(-1, dim)
    return x, (x - x0) / h


@pytest.mark.parametrize("dim", [2, 3])
def test_enough_passes_reach_the_exact_backward_euler_step(dim):
    sim = random_system(dim, seed=5, damping=False)
    sim.iterations = 400
    x, v = backward_euler(sim, 0.005)
    sim.step(0.005, method="vbd")
    # 400 Gauss–Seidel passes on these 12 nodes converge far below the 1e-8 asked.
    np.testing.assert_allclose(sim.positions, x, rtol=0, atol=1e-8)
    np.testing.assert_allclose(sim.velocities, v, rtol=0, atol=1e-6)


def test_converged_vbd_equals_implicit_euler_where_the_forces_are_linear():
    # A chain along x moving along x: every spring stays along x, its force is linear
    # in the positions and the linearised step of implicit_euler is exact backward
    # Euler, which VBD converges to.
    n = 8
    pos = np.zeros((n, 2))
    pos[:, 0] = np.arange(n) * 1.1
    a, b = ss.System(dim=2), ss.System(dim=2)
    for sim in (a, b):
        sim.add_nodes(pos, masses=np.linspace(0.5, 1.5, n))
        sim.add_springs(np.c_[np.arange(n - 1), np.arange(1, n)], stiffness=500.0, damping=0.2)
        sim.rest_lengths[:] = 1.0
        sim.pinned[0] = True
        sim.gravity = (0.0, 0.0)
        sim.velocities[:, 0] = np.linspace(0.0, 2.0, n)
        sim.velocities[0] = 0.0
    a.iterations = 2000
    b.cg_tolerance = 1e-14
    a.step(0.01, steps=3, method="vbd")
    b.step(0.01, steps=3, method="implicit_euler")
    np.testing.assert_allclose(a.positions, b.positions, rtol=0, atol=1e-8)


def test_no_vertex_step_raises_its_local_energy():
    # A free node between two pins, one spring stretched and one pressed almost flat,
    # at a huge step: the full Newton step of the projected Hessian overshoots (found
    # by a random search); the line search halves it. The local energy G after the
    # pass is checked against the one at the first guess, both computed in the test.
    m, k, rest, h = 1.0, 1e6, 1.0, 1.0
    ends = np.array([[0.692, 0.198], [1.435, -0.241]])
    sim = ss.System(dim=2)
    sim.add_nodes([ends[0], [1.463, -0.254], ends[1]], masses=[1.0, m, 1.0])
    sim.add_springs([[0, 1], [1, 2]], stiffness=k)
    sim.rest_lengths[:] = rest
    sim.pinned[[0, 2]] = True
    sim.gravity = (0.0, 0.0)
    sim.iterations = 1
    y = np.array(sim.positions[1])

    def local(p):
        lengths = np.linalg.norm(p - ends, axis=1)
        return m / (2 * h * h) * np.sum((p - y) ** 2) + 0.5 * k * np.sum((lengths - rest) ** 2)

    # the full Newton step from y with the projected Hessian, computed here
    f, hess = np.zeros(2), m / h**2 * np.eye(2)
    for end in ends:
        d = y - end
        length = np.linalg.norm(d)
        u = d / length
        f -= k * (length - rest) * u
        t = k * max(0.0, 1.0 - rest / length)
        hess += (k - t) * np.outer(u, u) + t * np.eye(2)
    full = y + np.linalg.solve(hess, f)
    before = local(y)
    assert local(full) > before  # the scene makes the plain Newton step overshoot
    with pytest.warns(ss.StiffnessWarning, match="vbd: springs this stiff"):
        sim.step(h, method="vbd")  # ω dt = 1414: backward Euler freezes such springs
    after = np.array(sim.positions[1])
    assert local(after) <= before
    assert not np.allclose(after, full)


def test_the_books_take_what_the_implicit_step_removes():
    sim = random_system(3, seed=3)
    sim.track_energy = True
    sim.external_forces[4] = (0.5, -1.0, 2.0)
    sim.velocities[0] = 0.0  # the pinned node: a step holds it, which books nothing
    e0 = sim.energy().total
    x0 = np.array(sim.positions)
    sim.step(0.002, steps=50, method="vbd")
    work = np.sum(sim.external_forces[~sim.pinned] * (sim.positions - x0)[~sim.pinned])
    # dissipated is the energy each substep lost, E0 + W − E1, summed: the books balance
    # to round-off of the energies (order 1e3 J).
    assert sim.dissipated > 0.0
    assert sim.energy().total + sim.dissipated == pytest.approx(e0 + work, abs=1e-9)


def test_bit_identical_on_one_and_two_threads():
    def run(threads):
        ss.set_num_threads(threads)
        try:
            sim = ss.cloth(60, 60, width=1.0, height=1.0, mass=0.2, stiffness=5000.0)
            sim.iterations = 3
            sim.step(1e-3, steps=10, method="vbd")
            return np.array(sim.positions)
        finally:
            ss.set_num_threads(None)

    a, b = run(1), run(2)
    assert np.array_equal(a, b)


@pytest.mark.parametrize("simd", ["portable", "avx2", "avx512"])
def test_bit_identical_on_every_simd_path(simd):
    if not ss.build_info()["simd_paths"][simd]:
        pytest.skip(f"this CPU cannot run {simd}")
    sim = ss.cloth(20, 20, width=1.0, height=1.0, mass=0.2, stiffness=5000.0)
    ss.set_simd("portable")
    base = sim.copy()
    base.step(1e-3, steps=5, method="vbd")
    ss.set_simd(simd)
    try:
        sim.step(1e-3, steps=5, method="vbd")
    finally:
        ss.set_simd(None)
    assert np.array_equal(base.positions, sim.positions)
