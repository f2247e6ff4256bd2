"""critical_dt(): symplectic Euler's stability limit, damping and drag included.

The textbook case: one mass on a pinned spring, x'' = -ω² x - γ x'. Symplectic Euler's
amplification matrix has trace 2 - h²ω² - hγ and determinant 1 - hγ, so it is stable
while h²ω² + 2hγ < 4, i.e. h < 4 / (γ + √(γ² + 4ω²)). Before, critical_dt() was 2/ω
whatever the damping: a 2D jelly (2000 N/m, 20 N·s/m) diverged at half of it.
"""

import math

import numpy as np
import pytest

import springsim as ss
from springsim.analysis.modes import stiffness_matrix


def textbook_limit(w2, gamma):
    return 4.0 / (gamma + math.sqrt(gamma * gamma + 4.0 * w2))


def pendulum(k, c, m, drag=0.0, stretch=1e-3):
    """A mass m on a spring (k, c) hanging from a pinned node, along y, no gravity,
    stretched by `stretch` (m): it moves along the spring only, a linear oscillator."""
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 0.0], [0.0, -1.0 - stretch]], masses=[1.0, m])
    sim.pin(0)
    sim.add_springs([0, 1], stiffness=k, damping=c, rest_lengths=1.0)
    sim.gravity = (0.0, 0.0)
    sim.drag = drag
    return sim


@pytest.mark.parametrize(
    ("k", "c", "m", "drag"),
    [
        (100.0, 0.0, 1.0, 0.0),
        (100.0, 5.0, 1.0, 0.0),
        (100.0, 5.0, 2.0, 3.0),
        (1e4, 300.0, 0.5, 0.0),
    ],
)
def test_one_mass_on_a_spring_is_the_textbook_limit(k, c, m, drag):
    expected = textbook_limit(k / m, (c + drag) / m)
    assert pendulum(k, c, m, drag).critical_dt() == pytest.approx(expected, rel=1e-14)


@pytest.mark.parametrize(("k", "c", "m"), [(100.0, 5.0, 1.0), (1e4, 300.0, 0.5), (100.0, 0.0, 1.0)])
def test_symplectic_euler_is_stable_just_below_the_limit_and_not_just_above(k, c, m):
    # The spectral radius crosses 1 at the limit: 2 % below it the oscillation stays
    # bounded (undamped, symplectic Euler's ellipse reaches 2.1x the start so close to
    # the limit; damped, it dies away), 2 % above it grows past 100x the start (measured:
    # 570x to overflow).
    limit = pendulum(k, c, m).critical_dt()
    amplitudes = []
    for factor in (0.98, 1.02):
        sim = pendulum(k, c, m)
        sim.divergence_factor = None
        try:
            sim.step(factor * limit, steps=2000, method="symplectic_euler")
            amplitudes.append(abs(-sim.positions[1, 1] - 1.0))
        except ss.UnstableError:
            amplitudes.append(math.inf)
    assert amplitudes[0] < 3e-3 and amplitudes[1] > 0.1


def test_two_free_masses_vibrate_at_twice_the_pinned_rate():
    # Relative motion of two equal masses: ω² = 2k/m, γ = 2c/m.
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 0.0], [1.0, 0.0]], masses=[0.5, 0.5])
    sim.add_springs([0, 1], stiffness=400.0, damping=7.0)
    assert sim.critical_dt() == pytest.approx(textbook_limit(1600.0, 28.0), rel=1e-14)


def test_drag_alone_limits_the_step_and_pinned_nodes_do_not():
    # v' = v - h (drag/m) v is stable while h < 2 m / drag.
    sim = ss.System(dim=3)
    sim.add_nodes([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]], masses=[2.0, 0.1])
    sim.drag = 0.5
    sim.pin(1)
    assert sim.critical_dt() == pytest.approx(2.0 * 2.0 / 0.5, rel=1e-15)
    sim.pin(0)
    assert sim.critical_dt() == math.inf


def damped_jelly():
    sim = ss.jelly(6, 3, size=(0.5, 0.2), mass=1.0, stiffness=2000.0, damping=20.0)
    sim.gravity = (0.0, 0.0)
    sim.positions += 1e-3 * np.random.default_rng(3).standard_normal(sim.positions.shape)
    return sim


def test_a_damped_jelly_is_stable_at_its_critical_dt():
    # Proportional damping (c/k the same on every spring): each mode j has γ_j = (c/k) ω_j²,
    # so the true limit is the textbook one of the top mode, from the eigenvalues of
    # M^-1/2 K M^-1/2. critical_dt() is below it (Gershgorin; measured 0.42x) ...
    sim = damped_jelly()
    masses = np.repeat(sim.masses, 2)
    w2 = np.linalg.eigvalsh(stiffness_matrix(sim).toarray() / np.sqrt(np.outer(masses, masses)))
    true_limit = textbook_limit(w2.max(), 0.01 * w2.max())
    assert 0.3 * true_limit < sim.critical_dt() <= true_limit
    # ... and stepping at it the vibration dies away (before: diverged at half of it).
    energy = sim.energy().total
    sim.step(sim.critical_dt(), steps=round(1.0 / sim.critical_dt()), method="symplectic_euler")
    assert sim.energy().total < 1e-3 * energy
