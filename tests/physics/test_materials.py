"""Builders from materials in physical units (issue 16, item 2), checked independently.

- A cloth from (E, ν): its lattice's elastic constants are measured here from the
  energy of its springs under small affine strains, W = ½ C ε ε per unit area, and
  compared with the plane-stress constants C11 = E/(1 − ν²), C12 = ν E/(1 − ν²).
- A string from (μ, EA, T): its lowest normal modes against the beaded string's
  closed form, ω_j = (2/a) √(T/μ) sin(jπ/2N), which tends to the continuous string's
  f1 = √(T/μ)/(2L).
- A damping ratio: the logarithmic decrement of a two-node oscillator, 2πζ/√(1 − ζ²).
"""

import numpy as np
import pytest

import springsim as ss

# ---- cloth: elastic constants from the springs' energy ---------------------------------

STRAIN = 1e-6  # small enough that the energy's cubic terms are 1e-6 of it


def spring_energies(sim, x):
    d = x[sim.springs[:, 1]] - x[sim.springs[:, 0]]
    stretch = np.linalg.norm(d, axis=1) - sim.rest_lengths
    return 0.5 * sim.stiffness * stretch**2


def elastic_constants(sim, nx, ny, a, b):
    """(C11, C22, C12, C66), N/m, of an unrotated 2D cloth of a × b cells.

    Each spring is counted at its first node; a node with every lattice offset inside
    the cloth (rows 0 to ny − 3, columns 1 to nx − 3) then owns exactly one cell's
    springs, so their mean energy over those nodes is the energy of one cell of the
    infinite lattice.
    """
    x0 = np.array(sim.positions)
    r, c = np.divmod(sim.springs[:, 0], nx)
    inner = (r <= ny - 3) & (c >= 1) & (c <= nx - 3)
    cells = (ny - 2) * (nx - 3)

    def density(strain):
        x = x0 + x0 @ np.asarray(strain).T
        e = spring_energies(sim, x)
        # the kernel's elastic energy is the same sum over every spring
        sim.positions = x
        assert sim.energy().elastic == pytest.approx(e.sum(), rel=1e-9)
        sim.positions = x0
        return e[inner].sum() / cells / (a * b) / STRAIN**2 * 2  # C ε ε / ε²

    c11 = density([[STRAIN, 0], [0, 0]])
    c22 = density([[0, 0], [0, STRAIN]])
    c12 = (density([[STRAIN, 0], [0, STRAIN]]) - c11 - c22) / 2
    c66 = density([[0, STRAIN / 2], [STRAIN / 2, 0]])  # engineering shear γ = STRAIN
    return c11, c22, c12, c66


CASES = [  # nx, ny, width, height, E, ν, bend, bend_stiffness
    (9, 9, 1.0, 1.0, 300.0, None, True, None),  # square cells, isotropic ν = 1/3
    (9, 9, 1.0, 1.0, 300.0, 0.25, True, None),
    (9, 9, 1.0, 1.0, 50.0, 0.45, False, None),
    (9, 9, 1.0, 1.0, 300.0, 0.3, True, 2.0),
    (9, 7, 1.0, 0.9, 120.0, 0.2, True, None),  # cells 0.125 × 0.15 m
]


@pytest.mark.parametrize(("nx", "ny", "w", "h", "e", "nu", "bend", "kb"), CASES)
def test_cloth_lattice_has_the_asked_elastic_constants(nx, ny, w, h, e, nu, bend, kb):
    sim = ss.cloth(
        nx,
        ny,
        width=w,
        height=h,
        areal_density=0.1,
        youngs_modulus=e,
        poisson=nu,
        bend=bend,
        bend_stiffness=kb,
        dim=2,
        pin=None,
    )
    nu = 1 / 3 if nu is None else nu
    c11, c22, c12, c66 = elastic_constants(sim, nx, ny, w / (nx - 1), h / (ny - 1))
    rtol = 1e-5  # the strain's cubic terms (1e-6) and round-off
    assert c11 == pytest.approx(e / (1 - nu**2), rel=rtol)
    assert c22 == pytest.approx(e / (1 - nu**2), rel=rtol)
    assert c12 == pytest.approx(nu * e / (1 - nu**2), rel=rtol)
    assert c66 == pytest.approx(c12, rel=rtol)  # the Cauchy relation of central springs
    # Young's modulus and Poisson ratio along the weave, from the compliance
    assert c11 - c12**2 / c22 == pytest.approx(e, rel=rtol)
    assert c12 / c22 == pytest.approx(nu, rel=rtol)
    if bend and kb is not None:
        assert sim.stiffness[-1] == kb
    if abs(nu - 1 / 3) < 1e-12:  # isotropic: the shear modulus E/(2(1 + ν))
        assert c66 == pytest.approx(e / (2 * (1 + nu)), rel=rtol)


def test_cloth_areal_density_lumps_each_node_its_quarter_cells():
    nx, ny, w, h, rho = 5, 4, 1.0, 0.6, 0.3
    sim = ss.cloth(nx, ny, width=w, height=h, areal_density=rho, stiffness=10.0)
    cell = rho * w / (nx - 1) * h / (ny - 1)
    m = sim.masses.reshape(ny, nx)
    assert m[0, 0] == pytest.approx(cell / 4) and m[-1, -1] == pytest.approx(cell / 4)
    assert m[0, 2] == pytest.approx(cell / 2) and m[2, 0] == pytest.approx(cell / 2)
    assert m[1, 1] == pytest.approx(cell)
    assert sim.masses.sum() == pytest.approx(rho * w * h, rel=1e-14)


def test_unrepresentable_cloth_materials_are_refused():
    kw = dict(width=1.0, height=1.0, areal_density=0.1, youngs_modulus=100.0)
    for nu in (0.0, 1.0, -0.2):
        with pytest.raises(ValueError, match="poisson must be"):
            ss.cloth(5, 5, poisson=nu, **kw)
    with pytest.raises(ValueError, match="too elongated"):  # cells 0.25 × 0.05: (b/a)² < ν
        ss.cloth(5, 21, **kw)
    with pytest.raises(ValueError, match="shear"):
        ss.cloth(5, 5, shear=False, **kw)
    with pytest.raises(ValueError, match="bend_stiffness"):
        ss.cloth(5, 5, bend_stiffness=1e3, **kw)
    with pytest.raises(ValueError, match="mass or areal_density"):
        ss.cloth(5, 5, width=1.0, height=1.0, mass=1.0, areal_density=0.1, stiffness=1.0)
    with pytest.raises(ValueError, match="stiffness or youngs_modulus"):
        ss.cloth(5, 5, width=1.0, height=1.0, mass=1.0)
    with pytest.raises(ValueError, match="poisson goes with youngs_modulus"):
        ss.cloth(5, 5, width=1.0, height=1.0, mass=1.0, stiffness=1.0, poisson=0.3)


# ---- string: a beaded string's modes ------------------------------------------------------


def test_taut_string_sideways_modes_are_the_beaded_strings():
    n, length, mu, ea, tension = 60, 0.65, 1.2e-3, 5e4, 80.0
    sim = ss.string(n, length=length, linear_density=mu, ea=ea, tension=tension, pin="both", dim=2)
    segments, a = n - 1, length / (n - 1)
    # built stretched: each spring carries the tension at its built length
    np.testing.assert_allclose(sim.stiffness * (a - sim.rest_lengths), tension, rtol=1e-12)
    np.testing.assert_allclose(sim.masses[1:-1], mu * a, rtol=1e-14)
    omega = sim.normal_modes(3).frequencies
    j = np.arange(1, 4)
    beaded = 2 / a * np.sqrt(tension / mu) * np.sin(j * np.pi / (2 * segments))
    np.testing.assert_allclose(omega, beaded, rtol=1e-9)  # eigen-solver round-off
    f1 = np.sqrt(tension / mu) / (2 * length)
    # the discrete chain's fundamental is below the continuous one by (π/2N)²/6 ≈ 1.2e-4
    assert omega[0] / (2 * np.pi) == pytest.approx(f1, rel=2 * (np.pi / (2 * segments)) ** 2 / 6)


def test_string_from_ea_stretches_with_the_sound_speed_of_ea():
    n, length, mu, ea = 20, 2.0, 0.05, 300.0
    sim = ss.string(n, length=length, linear_density=mu, ea=ea, pin="both", dim=2)
    segments, a = n - 1, length / (n - 1)
    np.testing.assert_allclose(sim.rest_lengths, a, rtol=1e-14)  # no tension: at rest
    omega = sim.normal_modes(segments).frequencies  # n − 2 slack sideways modes, then along
    np.testing.assert_allclose(omega[: n - 2], 0, atol=1e-3)  # √ of round-off
    expected = 2 / a * np.sqrt(ea / mu) * np.sin(np.pi / (2 * segments))
    assert omega[n - 2] == pytest.approx(expected, rel=1e-9)


def test_string_tension_from_stiffness_and_its_limits():
    sim = ss.string(5, length=1.0, mass=1.0, stiffness=200.0, tension=10.0, pin="both")
    np.testing.assert_allclose(sim.rest_lengths, 0.25 - 10.0 / 200.0, rtol=1e-14)
    with pytest.raises(ValueError, match="stiffer than 40 N/m"):
        ss.string(5, length=1.0, mass=1.0, stiffness=30.0, tension=10.0)
    with pytest.raises(ValueError, match="stiffness or ea"):
        ss.string(5, length=1.0, mass=1.0, tension=10.0)
    with pytest.raises(ValueError, match="stiffness or ea"):
        ss.string(5, length=1.0, mass=1.0, stiffness=1.0, ea=1.0)
    with pytest.raises(ValueError, match="mass or linear_density"):
        ss.string(5, length=1.0, stiffness=1.0)


# ---- damping ratio -------------------------------------------------------------------------


def log_decrement(sim, dt, seconds):
    """Mean ln(x_i / x_{i+1}) of successive peaks of the spring's stretch."""
    stretch = []
    for _ in range(int(seconds / dt)):
        sim.step(dt, method="rk4")
        d = sim.positions[1] - sim.positions[0]
        stretch.append(np.linalg.norm(d) - sim.rest_lengths[0])
    s = np.array(stretch)
    peaks = np.flatnonzero((s[1:-1] > s[:-2]) & (s[1:-1] >= s[2:]) & (s[1:-1] > 0)) + 1
    return np.mean(np.log(s[peaks[:-1]] / s[peaks[1:]]))


@pytest.mark.parametrize("pinned", [False, True])
def test_damping_ratio_of_a_two_node_oscillator(pinned):
    zeta, k = 0.05, 100.0
    if pinned:  # m_eff: the free node's mass
        sim = ss.string(2, length=1.0, mass=[1.0, 3.0], stiffness=k, damping_ratio=zeta, dim=2)
    else:  # m_eff: the reduced mass 1·3/(1 + 3)
        sim = ss.cluster([[0.0, 0.0], [1.0, 0.0]], mass=[1.0, 3.0], stiffness=k, damping_ratio=zeta)
    sim.gravity = [0.0, 0.0]
    sim.positions[1, 0] += 0.01
    delta = log_decrement(sim, 1e-4, 3.0)
    # rk4 at ω dt ≈ 1e-3 is exact to 1e-12; the peaks, sampled every dt, to (ω dt)²
    assert delta == pytest.approx(2 * np.pi * zeta / np.sqrt(1 - zeta**2), rel=1e-3)


def test_damping_ratio_excludes_damping():
    with pytest.raises(ValueError, match="damping .* or damping_ratio"):
        ss.jelly(2, 2, size=1.0, mass=1.0, stiffness=1.0, damping=0.1, damping_ratio=0.1)
    with pytest.raises(ValueError, match="damping_ratio"):
        ss.ball(nodes=5, dim=2, radius=1.0, mass=1.0, stiffness=1.0, damping_ratio=-0.1)
