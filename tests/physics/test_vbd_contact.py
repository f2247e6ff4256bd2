"""method="vbd" with colliders as contact energy in the vertex block: against the NumPy
oracle for every collider kind, the closed-form resting depth m g / k_c, sliding and
sticking on a slope against Coulomb's law (smoothed as IPC smooths it), friction's
dissipation against the kinetic energy it takes, a stiff cloth on a sphere and on a
mesh ball at 60 Hz, and the bits on threads and SIMD paths."""

import numpy as np
import pytest
from test_vbd import random_system

import springsim as ss
from springsim import reference

KAPPA = reference.VBD_CONTACT_KAPPA
EPS_V = reference.VBD_FRICTION_SPEED


def add(sim: ss.System, kind: str, dim: int) -> None:
    z = np.zeros(dim)
    if kind == "plane":
        n = z.copy()
        n[1] = 1.0
        sim.add_plane(n, offset=-0.3, friction=0.4)
    elif kind == "sphere":
        sim.add_sphere(z, 0.8, restitution=0.6, friction=0.5)
    elif kind == "box":
        sim.add_box(z, np.full(dim, 0.6), restitution=0.9, friction=0.5)
    else:
        a, b = z.copy(), z.copy()
        a[0], b[0] = -0.5, 0.5
        sim.add_capsule(a, b, 0.5, restitution=0.3, friction=0.5)


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("kind", ["plane", "sphere", "box", "capsule"])
@pytest.mark.parametrize("seed", [1, 4])
def test_kernel_matches_the_numpy_oracle(dim, kind, seed):
    sim = random_system(dim, seed)
    add(sim, kind, dim)
    sim.iterations = 5
    free = random_system(dim, seed)
    free.iterations = 5
    s = reference.State.from_system(sim)
    sim.step(0.01, steps=5, method="vbd")
    free.step(0.01, steps=5, method="vbd")
    reference.step(s, 0.01, steps=5, method="vbd")
    # The same operations in the same order: round-off apart at most (1e-12 of
    # coordinates of order 1).
    np.testing.assert_allclose(sim.positions, s.x, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sim.velocities, s.v, rtol=0, atol=1e-12)
    assert np.abs(sim.positions - free.positions).max() > 1e-3  # the collider acted


def one_node(normal, friction=0.0, h=0.01, start=(0.0, 0.0, 0.0)) -> ss.System:
    sim = ss.System(dim=3)
    sim.add_nodes([start], masses=0.7)
    sim.add_plane(normal, offset=0.0, friction=friction)
    sim.iterations = 20
    return sim


def test_a_resting_node_sinks_to_m_g_over_k_c():
    # Resting, x = x0 and y = x0 + h² g: the block's minimum has k_c d = m g, and k_c =
    # κ m / h² for a node without springs, so d = g h² / κ.
    h = 0.01
    sim = one_node((0.0, 1.0, 0.0), h=h)
    sim.step(h, steps=200, method="vbd")
    depth = 9.81 * h * h / KAPPA
    assert sim.positions[0, 1] == pytest.approx(-depth, rel=1e-9)
    assert abs(sim.velocities[0, 1]) < 1e-12


@pytest.mark.parametrize("mu", [0.3, 0.0])
def test_a_node_slides_down_a_slope_at_g_sin_minus_mu_cos(mu):
    # Once it slides faster than ε_v, the smoothed friction is exactly μ λ, and at
    # steady sliding λ = k_c d = m g cos θ: backward Euler's velocity after n steps of a
    # constant force is exact, v = g (sin θ − μ cos θ) n h; the first step (from rest,
    # a slip of a h² > ε_v h) already slides. Passes converge each step to 1e-12.
    theta, h, steps = np.radians(30.0), 0.01, 50
    sim = one_node((-np.sin(theta), np.cos(theta), 0.0), friction=mu, h=h)
    sim.iterations = 60
    sim.step(h, steps=steps, method="vbd")
    down = np.array([-np.cos(theta), -np.sin(theta), 0.0])
    a = 9.81 * (np.sin(theta) - mu * np.cos(theta))
    assert sim.velocities[0] @ down == pytest.approx(a * steps * h, rel=1e-8)


def test_a_node_on_a_slope_steeper_friction_sticks():
    # tan θ < μ: Coulomb holds it. The smoothed friction holds it with the slip per
    # step s for which μ λ f1(s) = m g sin θ, f1(s) = 2 s/(ε h) − (s/(ε h))²: a creep at
    # ε_v (1 − √(1 − tan θ / μ)), below ε_v = 1 mm/s.
    theta, mu, h = np.radians(30.0), 0.8, 0.01
    sim = one_node((-np.sin(theta), np.cos(theta), 0.0), friction=mu, h=h)
    sim.iterations = 60
    sim.step(h, steps=100, method="vbd")
    down = np.array([-np.cos(theta), -np.sin(theta), 0.0])
    creep = EPS_V * (1.0 - np.sqrt(1.0 - np.tan(theta) / mu))
    assert sim.velocities[0] @ down == pytest.approx(creep, rel=1e-6)
    assert creep < EPS_V


def test_friction_dissipates_the_kinetic_energy_of_a_slide():
    # A node sent along a level plane at v0 with μ: backward Euler brakes it by μ g h a
    # step, so it stops after v0 / (μ g h) steps, having gone h Σ v_{n+1}, within one
    # step's travel v0 h of v0²/(2 μ g). It starts at its resting depth, so the books
    # (track_energy: E0 + W − E1 per step) take exactly its kinetic energy, less the
    # creep's (below ½ m ε_v²) at the end.
    h, mu, v0, m = 0.01, 0.5, 2.0, 0.7
    depth = 9.81 * h * h / KAPPA
    sim = one_node((0.0, 1.0, 0.0), friction=mu, h=h, start=(0.0, -depth, 0.0))
    sim.masses[0] = m
    sim.velocities[0] = (v0, 0.0, 0.0)
    sim.track_energy = True
    sim.iterations = 40
    sim.step(h, steps=100, method="vbd")
    assert abs(sim.velocities[0, 0]) < EPS_V
    assert sim.positions[0, 0] == pytest.approx(v0 * v0 / (2 * mu * 9.81), abs=v0 * h)
    assert sim.dissipated == pytest.approx(0.5 * m * v0 * v0, abs=0.5 * m * EPS_V**2 + 1e-9)


@pytest.mark.parametrize("e", [0.5, 0.8, 1.0])
def test_a_dropped_node_rebounds_to_e_squared_h(e):
    # Backward Euler's stiff contact alone ends an impact with no normal speed; the
    # restitution pass gives it e times the speed it came with. It lands at v =
    # √(2 g h) and goes in by at most v dt / (1 + κ) (the block's normal equation,
    # (m/dt² + k_c) d = m v / dt). The apex, e² h, is off by backward Euler's drift, about
    # g dt per step over the fall and the rise (v dt ≈ 4e-4 m of 1 m each way): 0.2 %.
    h, dt = 1.0, 1e-4
    sim = ss.System(dim=3)
    sim.add_nodes([[0.0, h, 0.0]])
    sim.add_plane((0, 1, 0), 0.0, restitution=e)
    bounced, apex, lowest = False, -np.inf, np.inf
    for _ in range(int(4.0 / dt)):
        sim.step(dt, method="vbd")
        y, vy = sim.positions[0, 1], sim.velocities[0, 1]
        lowest = min(lowest, y)
        bounced = bounced or vy > 0
        if bounced:
            apex = max(apex, y)
            if vy < 0:
                break
    assert apex == pytest.approx(e * e * h, rel=2e-3)
    assert lowest >= -np.sqrt(2 * 9.81 * h) * dt / (1 + KAPPA)


def stiff_cloth(
    collider: str, n: int = 20, friction: float = 0.3
) -> tuple[ss.System, np.ndarray, float, float]:
    """A level 1 m cloth of 5,000 N/m springs just above a ball of radius 0.3 m (a
    sphere, or a mesh of it, with ``friction``), and how far its nodes may be from the
    centre at least."""
    sim = ss.cloth(
        n,
        n,
        width=1.0,
        height=1.0,
        mass=0.2,
        stiffness=5000.0,
        pin=None,
        normal=(0, 1, 0),
        origin=(-0.5, 0.0, -0.5),
    )
    centre, radius = np.array([0.0, -0.31, 0.0]), 0.3
    floor = radius
    if collider == "sphere":
        sim.add_sphere(centre, radius, friction=friction)
    else:
        ball = ss.ball(radius=radius, mass=1.0, stiffness=1.0, center=centre, subdivisions=3)
        sim.add_mesh_collider(np.array(ball.positions), np.array(ball.faces), friction=friction)
        # a mesh ball's facets lie inside its sphere, by at most the inradius gap of its
        # coarsest facet (measured here from the mesh itself)
        tri = np.array(ball.positions)[np.array(ball.faces)]
        normal = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
        normal /= np.linalg.norm(normal, axis=1)[:, None]
        floor = np.abs(np.sum((tri[:, 0] - centre) * normal, axis=1)).min()
    return sim, centre, radius, floor


@pytest.mark.parametrize(("substeps", "passes", "friction"), [(1, 10, 0.3), (4, 4, 0.0)])
@pytest.mark.parametrize("collider", ["sphere", "mesh"])
def test_a_stiff_cloth_at_60_hz_stays_out_of_the_ball(collider, substeps, passes, friction):
    sim, centre, radius, floor = stiff_cloth(collider, friction=friction)
    sim.iterations = passes
    lowest = np.inf
    for _ in range(60):
        sim.step(1 / 60 / substeps, steps=substeps, method="vbd")
        lowest = min(lowest, np.linalg.norm(sim.positions - centre, axis=1).min())
    # The bound: a node is pushed out with k_c ≥ κ Σ k ≥ 100 × 2 × 5,000 N/m = 1e6 N/m
    # (a corner has 2 springs); the cloth's whole weight, 2 N, on one node would press
    # it 2 µm in. 10 µm leaves room for the landing's inertia (measured: 3 µm). A mesh
    # is also projected out after each substep (the safety net, vbd.c): exactly.
    assert lowest >= floor - (1e-5 if collider == "sphere" else 1e-9)
    assert lowest < radius + 0.02  # it fell onto the ball: the test saw the contact


def test_the_books_balance_with_colliders():
    sim, _centre, _radius, _floor = stiff_cloth("sphere", n=12)
    sim.track_energy = True
    sim.iterations = 5
    e0 = sim.energy().total
    sim.step(1 / 240, steps=60, method="vbd")
    # dissipated gains E0 + W − E1 every substep (no external force: W = 0), so the
    # books balance to the energies' round-off; friction and the implicit step took
    # a share of the fall's energy.
    assert sim.energy().total + sim.dissipated == pytest.approx(e0, abs=1e-9)
    assert sim.dissipated > 1e-3


def test_bit_identical_on_one_and_two_threads():
    def run(threads):
        ss.set_num_threads(threads)
        try:
            sim, _c, _r, _f = stiff_cloth("sphere", n=60)
            sim.add_plane((0.0, 1.0, 0.0), offset=-0.05, friction=0.2)
            sim.iterations = 3
            sim.step(1 / 60, steps=6, method="vbd")
            return np.array(sim.positions)
        finally:
            ss.set_num_threads(None)

    assert np.array_equal(run(1), run(2))


@pytest.mark.parametrize("simd", ["portable", "avx2", "avx512"])
def test_bit_identical_on_every_simd_path(simd):
    if not ss.build_info()["simd_paths"][simd]:
        pytest.skip(f"this CPU cannot run {simd}")
    sim, _c, _r, _f = stiff_cloth("mesh", n=16)
    ss.set_simd("portable")
    base = sim.copy()
    base.step(1 / 60, steps=20, method="vbd")
    ss.set_simd(simd)
    try:
        sim.step(1 / 60, steps=20, method="vbd")
    finally:
        ss.set_simd(None)
    assert np.array_equal(base.positions, sim.positions)
