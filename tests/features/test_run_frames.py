"""run()'s frames on their exact times: the last substep before each frame shortened
to land on it, checked against the closed form of an oscillator and its spectrum."""

import numpy as np
import pytest
from state import assert_same, snapshot

import springsim as ss

# One node on a spring to a pinned node, no gravity, undamped: along the spring the
# node is a harmonic oscillator, x(t) = L + A cos(ω t), v(t) = −A ω sin(ω t).
MASS, FREQUENCY, REST, AMPLITUDE = 0.5, 1.3, 1.0, 0.01
OMEGA = 2 * np.pi * FREQUENCY
STIFFNESS = MASS * OMEGA**2


def oscillator():
    sim = ss.System(dim=2)
    sim.gravity = 0
    sim.add_nodes([[0.0, 0.0], [REST + AMPLITUDE, 0.0]], masses=[1.0, MASS])
    sim.add_springs([[0, 1]], stiffness=STIFFNESS, rest_lengths=REST)
    sim.pin(0)
    return sim


def peak_frequency(signal, spacing):
    """The frequency of a sampled sinusoid: the maximum of the Hann-windowed discrete-
    time Fourier transform, found from the FFT's highest bin by golden-section search
    (the FFT zero-padded without limit)."""
    window = np.hanning(len(signal))
    centred = (signal - signal.mean()) * window
    spectrum = np.abs(np.fft.rfft(centred))
    bin_width = 1.0 / (len(signal) * spacing)
    top = np.argmax(spectrum[1:]) + 1
    n = np.arange(len(signal))

    def power(f):
        return -abs(np.sum(centred * np.exp(-2j * np.pi * f * n * spacing)))

    low, high = (top - 1) * bin_width, (top + 1) * bin_width
    ratio = (np.sqrt(5) - 1) / 2
    for _ in range(80):
        a, b = high - ratio * (high - low), low + ratio * (high - low)
        if power(a) < power(b):
            high = b
        else:
            low = a
    return 0.5 * (low + high)


def test_fft_of_a_known_oscillation_to_1e_5():
    # 20 s (26 periods) in 301 frames, 1/15 s apart = 66.7 steps of 1 ms: every frame
    # interval ends on a shortened substep. The frames must be at exactly
    # linspace(t0, t0 + 20, 301), so a spectrum that assumes those times (as np.fft
    # does) measures the true frequency.
    sim = oscillator()
    sim.time = t0 = 0.25  # the frames are t0 + k duration / (F - 1)
    duration, frames = 20.0, 301
    h = sim.run(duration, dt=1e-3, method="rk4", frames=frames, progress=False)
    times = np.linspace(t0, t0 + duration, frames)
    # The clock lands on each frame time up to its last bit (ulp(20 s) = 3.6e-15 s).
    np.testing.assert_allclose(h.frame_times, times, rtol=0, atol=1e-12)
    # Positions and velocities against the closed form at those times: RK4's phase
    # error over 26 periods at ω dt = 8e-3 is 26·2π·(ω dt)⁴/120 ≈ 6e-9 rad, so 1e-5 of
    # the amplitude leaves a margin of 1000; a frame a whole step (1 ms) off would be
    # 8e-3 of it off.
    phase = OMEGA * (times - t0)
    tip = h.node(1)
    np.testing.assert_allclose(
        tip.positions[:, 0], REST + AMPLITUDE * np.cos(phase), rtol=0, atol=1e-5 * AMPLITUDE
    )
    np.testing.assert_allclose(
        tip.velocities[:, 0],
        -AMPLITUDE * OMEGA * np.sin(phase),
        rtol=0,
        atol=1e-5 * AMPLITUDE * OMEGA,
    )
    np.testing.assert_array_equal(tip.positions[:, 1], 0.0)
    # The frequency from the frames' spectrum. The estimator's own bias (the window's
    # leakage from the image at −f) is measured on the exact cosine at the same
    # samples: 2e-7 relative, so a 1e-5 tolerance tests the frames, not it (and the
    # frames' estimate agrees with the exact cosine's to 1e-8: RK4's phase error).
    spacing = duration / (frames - 1)
    exact = peak_frequency(np.cos(phase), spacing)
    assert abs(exact / FREQUENCY - 1) < 1e-6
    measured = peak_frequency(tip.positions[:, 0], spacing)
    assert abs(measured / FREQUENCY - 1) < 1e-5, measured
    assert abs(measured / exact - 1) < 1e-8


@pytest.mark.parametrize("method", ["symplectic_euler", "rk4", "implicit_euler", "xpbd"])
def test_dt_that_does_not_divide_the_frame_interval_still_gives_exact_times(method):
    # 7 frames over 1 s with dt = 1 ms: each interval of 1/6 s is 166 whole steps and
    # one of 2/3 ms. The run is that sequence of plain step() calls, bit for bit.
    sim = ss.string(6, length=1.0, mass=0.1, stiffness=40.0, damping=0.02, dim=2)
    twin = sim.copy()
    h = sim.run(1.0, dt=1e-3, method=method, frames=7, progress=False)
    times = np.linspace(0.0, 1.0, 7)
    np.testing.assert_allclose(h.frame_times, times, rtol=0, atol=1e-15)
    assert h.steps == 6 * 167 and sim.time == pytest.approx(1.0, abs=1e-15)
    for k in range(1, 7):
        twin.step(1e-3, 166, method=method)
        twin.step(times[k] - twin.time, method=method)
        np.testing.assert_array_equal(h.frames[k], twin.positions)
        np.testing.assert_array_equal(h.frame_velocities[k], twin.velocities)
        assert h.frame_times[k] == twin.time
    assert_same(snapshot(sim, books=False), snapshot(twin, books=False))


def test_a_frame_on_a_whole_step_gets_no_tiny_substep():
    # 0.3 / 0.1 = 2.9999999999999996 steps, and 1.0 / 1e-3 / 10 = 100.00000000000001:
    # whole steps within round-off take no extra substep of 1e-16 s.
    sim = ss.string(4, length=1.0, mass=0.1, stiffness=10.0, dim=2)
    assert sim.run(0.3, dt=0.1, frames=2, progress=False).steps == 3
    assert sim.run(1.0, dt=1e-3, frames=11, progress=False).steps == 1000
    # and a frame 1e-6 dt past a whole step is that whole step and a 1e-6 dt one
    h = sim.run(0.1 * (1 + 1e-7), dt=1e-3, frames=2, progress=False)
    assert h.steps == 101


def test_frames_are_records_and_the_books_hold_across_short_substeps():
    # Records every 100 substeps (a shortened one counts) plus one at each frame. The
    # energy books of a damped string (total + dissipated, the damping's work by the
    # trapezoid rule: an O(dt²) error) balance through the shortened substeps as well
    # as through whole ones: within 1.2 times the error of the same run in whole
    # steps (measured: 1.06 times).
    def string():
        return ss.string(10, length=1.0, mass=0.2, stiffness=100.0, damping=0.05, dim=2)

    h = string().run(1.0, dt=1e-3, method="rk4", record_every=100, frames=4, progress=False)
    assert h.steps == 3 * 334
    assert set(np.round(h.frame_times, 12)) <= set(np.round(h.times, 12))
    assert len(h) == len(set(range(0, 1002, 100)) | {1002} | {334, 668})
    whole = string().run(1.0, dt=1e-3, method="rk4", record_every=100, progress=False)
    assert whole.steps == 1000

    def error(run):
        return abs(run.total + run.dissipated - run.total[0]).max() / abs(run.total).max()

    assert 0 < error(h) < 1.2 * error(whole)


def test_ctrl_c_in_a_shortened_substep_counts_it():
    sim = ss.string(5, length=1.0, mass=0.1, stiffness=40.0, dim=2)
    real_step, calls = sim._step_in_run, []

    def step(dt, steps, method, books, *contact_dt):
        calls.append((dt, steps))
        real_step(dt, steps, method, books, *contact_dt)
        if dt < 1e-3:  # the first shortened substep ran; Ctrl-C as C returns
            raise KeyboardInterrupt

    sim._step_in_run = step
    h = sim.run(1.0, dt=1e-3, frames=7, progress=False)
    assert h.interrupted and h.steps == sum(n for _, n in calls) == 167
    assert calls[-1] == (pytest.approx(2 / 3 * 1e-3, rel=1e-9), 1)
    assert h.times[-1] == sim.time == pytest.approx(1 / 6, abs=1e-15)


def test_node_contact_keeps_the_runs_law_on_a_shortened_substep():
    # A node resting on a pinned node under gravity, at the equilibrium overlap of the
    # law from the step at dt: δ = m g / k, k = m (a / dt)², a = CONTACT_OMEGA_DT
    # (restitution 0.5, no friction). A shortened substep that took the law at its own dt (2/3 dt)
    # would push with 2.25 m g for it and kick the node up; the run keeps the law of
    # dt, so the node stays at rest.
    dt, g, r = 1e-3, 9.81, 0.05
    sim = ss.System(dim=2)
    sim.gravity = (0.0, -g)
    overlap = g * dt**2 / ss._core.CONTACT_OMEGA_DT**2
    sim.add_nodes([[0.0, 0.0], [0.0, 2 * r - overlap]], masses=[1.0, 0.2])
    sim.pin(0)
    sim.radii = r
    twin = sim.copy()
    h = sim.run(0.1, dt=dt, method="rk4", frames=7, progress=False)
    assert np.abs(h.frame_velocities[:, 1]).max() < 1e-9
    assert sim._contact_dt() == dt
    # The same substeps as plain calls take the law at 2/3 ms there: a kick.
    for k in range(1, 7):
        twin.step(dt, 16, method="rk4")
        twin.step(k / 60 - twin.time, method="rk4")
    assert abs(twin.velocities[1, 1]) > 1e-3
