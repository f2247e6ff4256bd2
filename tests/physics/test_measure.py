"""springsim.measure against the textbook: the period of a mass on a spring, the
logarithmic decrement of a damped one, a beaded string's fundamental, the duration of
an elastic contact; crossings of signals whose crossing times are known exactly; and
every refusal of bad input.

The physics tests measure real springsim runs (RK4, frames at every substep) and
compare with closed forms; each tolerance is justified where it is used.
"""

import numpy as np
import pytest

import springsim as ss
from springsim import measure

REST = 1.0  # m, rest length of the single oscillator's spring


def oscillator(m, k, c=0.0, stretch=0.1, duration=3.0, dt=1e-3, frames=None):
    """A mass m on a spring (k, c) from a pin at the origin, along x, no gravity,
    released at rest stretched by ``stretch``: m y'' = −k y − c y' with y = x − REST,
    exactly (a spring along x pulls along x). Returns (times, x) of the mass."""
    sim = ss.System(dim=2)
    sim.gravity = 0
    pin, bob = sim.add_nodes([[0.0, 0.0], [REST + stretch, 0.0]], masses=[1.0, m])
    sim.pin(pin)
    sim.add_springs([[pin, bob]], stiffness=k, damping=c, rest_lengths=REST)
    steps = round(duration / dt)
    history = sim.run(
        duration,
        dt=dt,
        method="rk4",
        frames=steps + 1 if frames is None else frames,
        frame_nodes=[bob],
        progress=False,
    )
    return history.frame_times, history.frames[:, 0, 0]


# ---------------------------------------------------------------- period, frequency


def test_period_and_frequency_of_a_mass_on_a_spring():
    m, k = 0.5, 100.0
    t, x = oscillator(m, k)
    exact = 2 * np.pi * np.sqrt(m / k)  # 0.444 s: about 6.75 periods in 3 s
    # Tolerance 1e-5 relative. RK4's phase error is (ω dt)⁴/120 per unit phase
    # (ω dt = 0.014: 3e-10). The level is the mean of x (the equilibrium is 1 m, not 0:
    # this is the nonzero-equilibrium case); over 6.75 periods it is off the
    # equilibrium by at most A/(2π · 6.75) = 0.024 A, where the straight line between
    # samples h = 1 ms apart misplaces a crossing by at most h² ω² 0.024 A/(8 ω A √(1 −
    # 0.024²)) = 4e-8 s, so a period (the mean of intervals between such crossings)
    # by 2 · 4e-8 s / 6 = 1.3e-8 s, 3e-8 relative. Measured: 5e-9.
    assert measure.period(t, x) == pytest.approx(exact, rel=1e-5)
    assert measure.frequency(t, x) == pytest.approx(1 / exact, rel=1e-5)
    # The level at the equilibrium itself: the same.
    assert measure.period(t, x, level=REST) == pytest.approx(exact, rel=1e-5)


def test_period_from_unevenly_spaced_frames():
    # Samples 2 or 3 substeps apart, alternately (every step recorded, then thinned).
    m, k = 0.5, 100.0
    t, x = oscillator(m, k)
    keep = np.cumsum(np.tile([2, 3], 600))
    keep = np.concatenate([[0], keep[keep < len(t)]])
    t, x = t[keep], x[keep]
    spacing = np.diff(t)
    assert spacing.max() - spacing.min() > 0.5e-3  # really uneven
    exact = 2 * np.pi * np.sqrt(m / k)
    # As above with h = 3 ms: crossings misplaced by at most 9 times more, 4e-7 s, a
    # period by 1.2e-7 s (3e-7 relative). Tolerance 1e-5.
    assert measure.period(t, x) == pytest.approx(exact, rel=1e-5)


def test_period_averages_both_directions():
    # A steady sine of period P: every interval between same-direction crossings is P,
    # at any level inside its range (the record's start and end, in mid-cycle, cut no
    # whole period). Sampled finely (h = P/1000) so that interpolation is exact to
    # (ωh)² = 4e-5 of a sample step.
    t = np.linspace(0.0, 3.3, 3301)
    x = 0.2 + np.sin(2 * np.pi * t / 1.0 + 0.4)
    for level in (None, 0.2, 0.9, -0.5):
        assert measure.period(t, x, level) == pytest.approx(1.0, rel=1e-6)
    # One upward crossing and one downward crossing only: no whole cycle.
    half = t < 0.8
    with pytest.raises(ValueError, match="two crossings of the level in the same direction"):
        measure.period(t[half], x[half])
    with pytest.raises(ValueError, match="0 time"):
        measure.period(t, x, level=5.0)  # never reached


# ---------------------------------------------------------------- log decrement


@pytest.mark.parametrize("zeta", [0.02, 0.1])
def test_log_decrement_of_a_damped_oscillator(zeta):
    m, k = 0.5, 100.0
    # springsim's spring damping is a dashpot along the spring, N·s/m: the force
    # −c (v_j − v_i)·u along the unit vector u. Along x, m y'' + c y' + k y = 0, so
    # ζ = c / (2 √(k m)).
    c = 2 * zeta * np.sqrt(k * m)
    t, x = oscillator(m, k, c=c)
    exact = 2 * np.pi * zeta / np.sqrt(1 - zeta**2)  # δ = γ T_d
    # Tolerance 1e-6 relative. The peaks of A e^{−γt} cos(ω_d t + φ) are T_d apart, so
    # their ratio is e^{γ T_d} exactly. RK4's amplitude error per period is of order
    # (ω dt)⁴ (4e-8); the parabola through three samples h = 1 ms apart misplaces a
    # peak by at most (ω h)⁴/24 of the amplitude = 2e-9 (a relative error on each peak:
    # ln A changes by as much, δ by twice that over the record's cycles). Measured: a
    # few 1e-9.
    assert measure.log_decrement(t, x) == pytest.approx(exact, rel=1e-6)
    assert measure.log_decrement(t, x, level=REST) == pytest.approx(exact, rel=1e-6)
    # The damped period too, at the equilibrium (crossings of any other level drift).
    damped = 2 * np.pi / (np.sqrt(k / m) * np.sqrt(1 - zeta**2))
    assert measure.period(t, x, level=REST) == pytest.approx(damped, rel=1e-6)


def test_log_decrement_is_not_biased_by_coarse_sampling():
    # A damped cosine sampled 12.3 times per period, at a phase that moves from cycle
    # to cycle: the highest sample of a cycle sits up to h/2 = 15° from the peak, which
    # alone would put each amplitude off by up to 1 − cos 15° = 3.4 %, at random. The
    # parabola through three samples leaves at most (ω h)⁴/43 of the amplitude (the
    # worst sampling phase of a cosine), under (ω h)⁴/24 = 2.8e-3 here (ω h = 0.51);
    # δ = ln(A_0/A_K)/K with K = 9 cycles is then off by at most 2 · 2.8e-3 / 9 = 7e-4.
    # Measured: 1.5e-4 with the level, 6e-5 peak to trough; 2.3e-3 unrefined.
    gamma, period_ = 0.15, 1.0
    t = np.arange(0.0, 10.2, period_ / 12.3)
    x = -3.0 + np.exp(-gamma * t) * np.cos(2 * np.pi * t / period_ + 0.7)
    exact = gamma * period_
    raw_peaks = [x[(t >= n) & (t < n + 1)].max() for n in range(10)]  # unrefined
    raw = np.mean(-np.diff(np.log(np.array(raw_peaks) + 3.0)))
    assert abs(raw - exact) > 1.5e-3  # what refining the peaks is for
    assert measure.log_decrement(t, x, level=-3.0) == pytest.approx(exact, abs=7e-4)
    assert measure.log_decrement(t, x) == pytest.approx(exact, abs=7e-4)


def test_log_decrement_needs_two_amplitudes():
    t = np.linspace(0.0, 1.6, 161)
    # Crossings at 0.25, 0.75 and 1.25 s: whole half-cycles hold a trough (0.5 s) and a
    # peak (1 s; the one at 0 is cut), and no trough follows that peak.
    x = np.exp(-0.1 * t) * np.cos(2 * np.pi * t)
    with pytest.raises(ValueError, match="two successive amplitudes: x has 1 peak"):
        measure.log_decrement(t, x, level=0.0)
    with pytest.raises(ValueError, match="two successive amplitudes: x has 0 peak-to-trough"):
        measure.log_decrement(t, x)
    with pytest.raises(ValueError, match="or give level= the equilibrium"):  # the way out
        measure.log_decrement(t, x)
    with pytest.raises(ValueError, match="has 0 peaks"):
        measure.log_decrement(t, np.linspace(0, 1, 161), level=0.5)


# ---------------------------------------------------------------- a beaded string


def test_beaded_string_fundamental():
    # N beads of mass m, a apart, on a string under tension T pinned at both ends: for
    # small transverse motion each bead feels T/a per unit of its neighbours' relative
    # displacement, and the modes are y_i = sin(i n π/(N + 1)) with
    # ω_n = 2 √(T/(m a)) sin(n π/(2(N + 1))).
    n_beads, m, tension, a = 9, 0.01, 10.0, 0.1
    nodes = n_beads + 2
    # Springs k = 1000 N/m pre-tensioned to T (rest length a − T/k); no gravity.
    sim = beaded_string(n_beads, m, tension, a)
    np.testing.assert_allclose(sim.spring_tensions(), tension, rtol=1e-12)
    # Plucked in the shape of mode 1 (an exact mode of the linear chain, so no other
    # mode is excited), amplitude A = 0.1 mm.
    amplitude = 1e-4
    y = amplitude * np.sin(np.pi * np.arange(nodes) / (n_beads + 1))
    sim.positions = np.column_stack([sim.positions[:, 0], y])
    dt = 1e-4
    history = sim.run(
        1.0, dt=dt, method="rk4", frames=round(1.0 / dt) + 1, frame_nodes=[3], progress=False
    )
    omega = 2 * np.sqrt(tension / (m * a)) * np.sin(np.pi / (2 * (n_beads + 1)))
    # Tolerance 1e-6 relative. T/a is the transverse stiffness only for small
    # displacements: the stretch of the string, EA π² A²/(4 L²) in tension (EA = k a =
    # 100 N), stiffens it like a Duffing oscillator, raising the frequency by
    # (3/8)(EA/T)(π A/(2 L))² = 9e-8 at A = 0.1 mm (1e-5 at 1 mm, as measured too).
    # RK4 at ω dt = 3e-3 and the crossings at h = 0.1 ms are below 1e-10. Measured: 8.5e-8.
    f = measure.frequency(history.frame_times, history.frames[:, 0, 1])
    assert f == pytest.approx(omega / (2 * np.pi), rel=1e-6)


def beaded_string(n_beads, m, tension, a, stiffness=1000.0):
    """N beads of mass m, a apart, pinned at both ends of a string under tension T:
    the string builder with tension= (springs of rest length a − T/k), its end nodes
    the pins; no gravity."""
    nodes = n_beads + 2
    sim = ss.string(
        nodes,
        length=(n_beads + 1) * a,
        mass=np.full(nodes, m),
        stiffness=stiffness,
        tension=tension,
        pin="both",
        dim=2,
    )
    sim.gravity = 0
    return sim


def test_spectrum_of_a_beaded_string_plucked_in_two_modes():
    # Plucked in the shape of modes 1 and 3 together (amplitudes A and 0.6 A), bead 3
    # moves as A sin(3π/10) sin(ω₁t + ·) + 0.6 A sin(9π/10) sin(ω₃t + ·): two lines
    # at ω_n = 2 √(T/(m a)) sin(n π/(2(N + 1))).
    n_beads, m, tension, a = 9, 0.01, 10.0, 0.1
    sim = beaded_string(n_beads, m, tension, a)
    amplitude, bead = 1e-4, 3
    i = np.arange(n_beads + 2)
    shape = np.sin(np.pi * i / (n_beads + 1)) + 0.6 * np.sin(3 * np.pi * i / (n_beads + 1))
    sim.positions = np.column_stack([sim.positions[:, 0], amplitude * shape])
    duration = 10.0  # 50 periods of mode 1
    history = sim.run(
        duration, dt=2e-4, method="rk4", frames=2001, frame_nodes=[bead], progress=False
    )
    t, y = history.frame_times, history.frames[:, 0, 1]
    f1, f3 = (
        np.sqrt(tension / (m * a)) * np.sin(n * np.pi / (2 * (n_beads + 1))) / np.pi for n in (1, 3)
    )
    # The dominant line: the refined peak errs by about 1e-4/duration for one sine
    # (test_dominant_frequency_of_sines); mode 3 is 95/duration away, its leak far
    # below that; the amplitude's stiffening, 1e-7 relative (see the fundamental's
    # test). 1e-5 relative is 5e-5 Hz = 5e-4/duration. Measured: 2e-8 relative.
    assert measure.dominant_frequency(t, y) == pytest.approx(f1, rel=1e-5)
    # Counting crossings is no use here: mode 3's wiggles shift them.
    assert abs(measure.frequency(t, y) / f1 - 1) > 1e-4
    # The spectrum's two peaks: at f1 and f3 within its step 1/(8 n h), and as high as
    # each mode's amplitude at the bead within 0.3 % (the Hann window's scalloping
    # after padding 8 times) plus the two lines' leaks into each other (1e-4).
    f, amp = measure.spectrum(t, y)
    step = f[1] - f[0]
    peaks = np.flatnonzero(
        (amp[1:-1] > amp[:-2]) & (amp[1:-1] > amp[2:]) & (amp[1:-1] > 0.1 * amp.max())
    )
    peaks += 1
    assert len(peaks) == 2
    np.testing.assert_allclose(f[peaks], [f1, f3], atol=step)
    heights = amplitude * np.array([np.sin(np.pi * bead / 10), 0.6 * np.sin(3 * np.pi * bead / 10)])
    np.testing.assert_allclose(amp[peaks], heights, rtol=4e-3)


def test_dominant_frequency_of_sines():
    # One sine at 97 frequencies across a bin, recorded over 10 and over 40 periods:
    # the refined peak is within 1.1e-4 (10 periods) and 3e-5 (40) of 1/duration, as
    # documented. Unrefined, the highest padded bin alone is off by up to 1/16 of it.
    t = np.linspace(0.0, 10.0, 2001)
    for periods, bound in ((10, 1.1e-4), (40, 3e-5)):
        errors = []
        for f0 in np.linspace(1.0, 1.1, 97) * periods / 10:
            x = 0.7 - 2.0 * np.sin(2 * np.pi * f0 * t + 0.3)
            errors.append(measure.dominant_frequency(t, x) - f0)
            f, amp = measure.spectrum(t, x)
            assert amp.max() == pytest.approx(2.0, rel=3e-3)  # its amplitude, 2
        assert np.max(np.abs(errors)) * 10.0 < bound
    # Unevenly sampled (jittered by up to a quarter step): interpolated onto an even
    # grid first. The linear interpolation's error, up to (ω h)²/8 = 2e-4 of the
    # amplitude at 21 samples per period, is a small wobble, not a shift in frequency.
    rng = np.random.default_rng(7)
    jittered = t + rng.uniform(-0.25, 0.25, len(t)) * (t[1] - t[0])
    jittered[[0, -1]] = t[[0, -1]]
    x = np.sin(2 * np.pi * 2.345 * jittered)
    assert measure.dominant_frequency(jittered, x) == pytest.approx(2.345, abs=2e-4 / 10.0)


def test_spectrum_refusals():
    t = np.linspace(0.0, 1.0, 11)
    with pytest.raises(ValueError, match="x is constant: it has no frequency"):
        measure.dominant_frequency(t, np.full(11, 3.0))
    with pytest.raises(ValueError, match="at least 4 samples, got 3"):
        measure.spectrum(t[:3], t[:3])
    with pytest.raises(ValueError, match="at least 4 samples, got 3"):
        measure.dominant_frequency(t[:3], t[:3])


# ---------------------------------------------------------------- contact times


@pytest.mark.parametrize("steps_per_contact", [200, 1000])
def test_contact_lasts_half_a_period_of_the_contact_spring(steps_per_contact):
    # Two balls (1 kg and 3 kg, radius 0.1 m) meet head-on; the contact law with
    # contact_stiffness k_c in N/m and restitution 1 (no dashpot) is a spring k_c on the
    # overlap, so while they touch the overlap is a half sine of the reduced mass
    # μ = m1 m2/(m1 + m2) on k_c: the contact lasts π √(μ/k_c), whatever the speed.
    m1, m2, radius, k_c = 1.0, 3.0, 0.1, 1e4
    mu = m1 * m2 / (m1 + m2)
    duration = np.pi * np.sqrt(mu / k_c)  # 27 ms
    sim = ss.System(dim=2)
    sim.gravity = 0
    sim.add_nodes([[0.0, 0.0], [0.3, 0.0]], masses=[m1, m2], velocities=[[1.0, 0], [-0.5, 0]])
    sim.radii = radius
    sim.contact_stiffness = k_c
    sim.contact_restitution = 1.0
    dt = duration / steps_per_contact
    run_for = 0.3
    history = sim.run(run_for, dt=dt, method="rk4", frames=round(run_for / dt) + 1, progress=False)
    gap = history.frames[:, 1, 0] - history.frames[:, 0, 0] - 2 * radius
    starts, ends = measure.contact_times(history.frame_times, gap)
    assert len(starts) == len(ends) == 1
    # They touch when the 0.1 m gap has closed at 1.5 m/s: t = 1/15 s. The sample after
    # touching lies on the half sine −(v/ω) sin(ω τ) = −v τ (1 − (ω τ)²/6 + ...), so the
    # straight line from the sample before meets 0 within dt (ω dt)²/6 (5.6e-9 s at
    # 200 samples per contact) of it. Measured: 3.4e-10 s.
    omega = np.sqrt(k_c / mu)
    assert starts[0] == pytest.approx(0.1 / 1.5, abs=dt * (omega * dt) ** 2 / 6)
    # Tolerance 1e-5 relative. Near both crossings the gap is straight to second order
    # (no force outside, a force k_c δ → 0 inside), so interpolating it errs by
    # (ω h)³/(6π) of the duration = 2e-7 at 200 samples per contact; RK4 loses order at
    # the kink in the force (its derivative jumps at touching) but its error stays of
    # order (ω dt)³ = 4e-6 at most. Measured: 1e-8 and 2e-10.
    assert ends[0] - starts[0] == pytest.approx(duration, rel=1e-5)


def test_contact_times_at_the_record_ends_and_on_the_level():
    t = np.arange(10.0)
    # Touching at the start and at the end: those contacts run from t[0] and to t[-1].
    gap = np.array([-1, -1, 1, 1, -1, -3, 1, 1, -1, -2], dtype=float)
    starts, ends = measure.contact_times(t, gap)
    np.testing.assert_allclose(starts, [0.0, 3.5, 7.5])
    np.testing.assert_allclose(ends, [1.5, 5.75, 9.0])
    # A gap of exactly 0 is not touching; a run of zeros between sides is one
    # crossing, at its middle; zeros at the start count by the first nonzero sample.
    gap = np.array([0, 0, -1, 0, 0, 1, 0, 2, -2, 2], dtype=float)
    starts, ends = measure.contact_times(t, gap)
    np.testing.assert_allclose(starts, [0.0, 7.5])
    np.testing.assert_allclose(ends, [3.5, 8.5])
    # Never touching; touching throughout.
    for gap, expect in ((np.ones(10), ([], [])), (-np.ones(10), ([0.0], [9.0]))):
        starts, ends = measure.contact_times(t, gap)
        np.testing.assert_allclose(starts, expect[0])
        np.testing.assert_allclose(ends, expect[1])
    starts, ends = measure.contact_times(t, np.zeros(10))
    assert len(starts) == len(ends) == 0


# ---------------------------------------------------------------- crossings


def test_crossings_of_a_coarsely_sampled_sine():
    # sin(ω t + φ) at 9 samples per period crosses the level 0.4 where
    # ω t + φ = asin(0.4) (up) or π − asin(0.4) (down), + 2π n.
    omega, phi, level = 2 * np.pi / 0.9, 0.3, 0.4
    t = np.arange(0.0, 5.0, 0.1)
    x = np.sin(omega * t + phi)
    n = np.arange(-1, 10)
    up = (np.arcsin(level) - phi + 2 * np.pi * n) / omega
    down = (np.pi - np.arcsin(level) - phi + 2 * np.pi * n) / omega
    up, down = (times[(times > t[0]) & (times < t[-1])] for times in (up, down))
    found_up = measure.crossings(t, x, level, direction="up")
    found_down = measure.crossings(t, x, level, direction="down")
    found = measure.crossings(t, x, level)
    assert len(found_up) == len(up) and len(found_down) == len(down)
    np.testing.assert_array_equal(found, np.sort(np.concatenate([found_up, found_down])))
    # The straight line through the samples t_i, t_i + h around a crossing meets the
    # level within h²/8 max|x''| / min|x'| of the true crossing (the line's error over
    # the interval, divided by the slowest slope there), with x'' and x' bounded over
    # that interval.
    h = 0.1
    for exact, got in ((up, found_up), (down, found_down)):
        for te, tg in zip(exact, got, strict=True):
            i = np.searchsorted(t, te) - 1
            fine = np.linspace(t[i], t[i + 1], 1001)
            curvature = np.max(np.abs(omega**2 * np.sin(omega * fine + phi)))
            slope = np.min(np.abs(omega * np.cos(omega * fine + phi)))
            bound = h**2 / 8 * curvature / slope
            assert abs(tg - te) <= bound
            assert bound < 0.2 * h  # the bound means something: a fifth of a sample
    # Interpolating matters: the nearest samples are much further off.
    nearest = t[np.abs(t[:, None] - up[None, :]).argmin(axis=0)]
    assert np.abs(found_up - up).max() < 0.5 * np.abs(nearest - up).max()


def test_crossings_of_a_straight_line_signal_are_exact():
    # Piecewise linear between the samples (a triangle wave at uneven times): linear
    # interpolation is exact, up to rounding.
    t = np.array([0.0, 0.3, 1.0, 1.1, 2.5, 2.6, 4.0])
    x = np.array([-2.0, 1.0, 3.0, -1.0, -0.5, 2.0, -6.0])
    # level 0.5: segment 0 (−2 → 1) up at 0.3·2.5/3; 2 (3 → −1) down at 1 + 0.1·2.5/4;
    # 4 (−0.5 → 2) up at 2.5 + 0.1·1/2.5; 5 (2 → −6) down at 2.6 + 1.4·1.5/8.
    expect = [0.25, 1.0625, 2.54, 2.6 + 1.4 * 1.5 / 8]
    np.testing.assert_allclose(measure.crossings(t, x, 0.5), expect, rtol=1e-14)
    np.testing.assert_allclose(measure.crossings(t, x, 0.5, "up"), expect[::2], rtol=1e-14)
    np.testing.assert_allclose(measure.crossings(t, x, 0.5, "down"), expect[1::2], rtol=1e-14)


def test_crossings_with_samples_on_the_level():
    t = np.arange(12.0)
    x = np.array([0, 1, 0, -1, 0, 0, 0, 1, 0, 2, -1, 0], dtype=float)
    # 0 at the start: not counted; 1 → 0 → −1: down at 2; −1 → 0,0,0 → 1: up at 5 (the
    # middle of 4..6); 1 → 0 → 2: a touch; 2 → −1: down at 9 + 2/3; the last 0: not.
    np.testing.assert_allclose(measure.crossings(t, x), [2.0, 5.0, 9 + 2 / 3])
    np.testing.assert_allclose(measure.crossings(t, x, direction="up"), [5.0])
    assert len(measure.crossings(t, np.zeros(12))) == 0
    assert len(measure.crossings(t, np.ones(12), level=1)) == 0


# ---------------------------------------------------------------- bad input


FUNCTIONS = [measure.crossings, measure.period, measure.frequency, measure.log_decrement]
ALL = FUNCTIONS + [measure.contact_times, measure.spectrum, measure.dominant_frequency]


@pytest.mark.parametrize("function", ALL, ids=lambda f: f.__name__)
@pytest.mark.parametrize(
    "t, x, error, message",
    [
        ([0.0, 1.0, 2.0], [1.0, 2.0], ValueError, "same length"),
        ([[0.0, 1.0]], [[1.0, 2.0]], ValueError, "1-D"),
        ([0.0, 1.0], [[1.0, 2.0]], ValueError, "1-D"),
        ([0.0], [1.0], ValueError, "at least 2 samples"),
        ([], [], ValueError, "at least 2 samples"),
        ([0.0, 1.0, 1.0], [1.0, 2.0, 3.0], ValueError, r"strictly increasing: t\[2\]"),
        ([0.0, 2.0, 1.0], [1.0, 2.0, 3.0], ValueError, "strictly increasing"),
        ([0.0, np.nan, 1.0], [1.0, 2.0, 3.0], ValueError, r"t must be finite: t\[1\] = nan"),
        ([0.0, 1.0, 2.0], [1.0, np.inf, 3.0], ValueError, "must be finite"),
        (["a", "b"], [1.0, 2.0], TypeError, "t must be real numbers"),
        ([0.0, 1.0], None, TypeError, "must be numbers, not None"),
        ([0.0, 1.0], [1j, 2j], TypeError, "must be real numbers"),
    ],
)
def test_bad_series_are_refused(function, t, x, error, message):
    with pytest.raises(error, match=message):
        function(t, x)


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.__name__)
def test_bad_levels_are_refused(function):
    t = np.linspace(0, 3, 31)
    x = np.sin(2 * np.pi * t)
    with pytest.raises(ValueError, match="level must be a finite number, got nan"):
        function(t, x, np.nan)
    with pytest.raises(TypeError, match="level must be a real number, not str"):
        function(t, x, "0")
    with pytest.raises(TypeError, match="level must be a real number, not ndarray"):
        function(t, x, np.zeros(3))


def test_bad_directions_are_refused():
    t = np.linspace(0, 3, 31)
    x = np.sin(2 * np.pi * t)
    with pytest.raises(ValueError, match='direction must be "up", "down" or "both", got \'Up\''):
        measure.crossings(t, x, direction="Up")
    with pytest.raises(TypeError, match="direction must be a str, not int"):
        measure.crossings(t, x, direction=1)


def test_inputs_are_not_changed():
    t = np.linspace(0, 3, 31)
    x = np.sin(2 * np.pi * t)
    t0, x0 = t.copy(), x.copy()
    for function in ALL:
        function(t, x)
    np.testing.assert_array_equal(t, t0)
    np.testing.assert_array_equal(x, x0)


def test_measure_is_reachable_from_the_package():
    assert ss.measure is measure and "measure" in ss.__all__
    assert measure.crossings.__module__ == "springsim.measure"
