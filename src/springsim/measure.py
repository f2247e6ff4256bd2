"""Measurements on a run's records: when a signal crosses a level, its period and
frequency, the logarithmic decrement of a damped oscillation, when two bodies touch,
the spectrum of a motion that holds several frequencies.

Plain functions of NumPy arrays: ``t``, the sample times (s, strictly increasing, such
as a :class:`springsim.History`'s ``frame_times``), and one value per time (a node's
coordinate from ``history.frames``, a spring's tension from ``history.frame_tensions``,
a gap). They take any sampling, even or not, and interpolate between samples, so the
result does not snap to the grid of records.

>>> import numpy as np
>>> import springsim as ss
>>> sim = ss.System(dim=2)
>>> sim.gravity = 0
>>> pin, bob = sim.add_nodes([[0.0, 0.0], [1.1, 0.0]], masses=[1.0, 0.5])
>>> sim.pin(pin)
>>> _ = sim.add_springs([[pin, bob]], stiffness=100.0, rest_lengths=1.0)
>>> h = sim.run(3.0, dt=1e-3, method="rk4", frames=3001, frame_nodes=[bob], progress=False)
>>> x = h.frames[:, 0, 0]                   # the bob's x, m: 1 m ± 0.1 m
>>> period = ss.measure.period(h.frame_times, x)
>>> print(f"{period:.6f} s, 2π√(m/k) = {2 * np.pi * np.sqrt(0.5 / 100.0):.6f} s")
0.444288 s, 2π√(m/k) = 0.444288 s
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from springsim._checks import _as_real_array, _scalar

#: The directions :func:`crossings` takes.
DIRECTIONS = ("up", "down", "both")

#: How many times the record's length :func:`spectrum` pads it to with zeros.
PAD = 8

__all__ = [
    "contact_times",
    "crossings",
    "dominant_frequency",
    "frequency",
    "log_decrement",
    "period",
    "spectrum",
]


def _series(t: npt.ArrayLike, x: npt.ArrayLike, x_name: str) -> tuple[np.ndarray, np.ndarray]:
    """``t`` and ``x`` as float64 1-D arrays of one length (>= 2), finite, ``t``
    strictly increasing; else TypeError or ValueError naming the argument."""
    arrays = []
    for value, name in ((t, "t"), (x, x_name)):
        array = np.asarray(_as_real_array(value, name), dtype=np.float64)
        if array.ndim != 1:
            raise ValueError(
                f"{name} must be 1-D (one value per sample), got shape {array.shape}: "
                "pick one node and one coordinate, e.g. history.frames[:, node, 0]"
            )
        bad = np.flatnonzero(~np.isfinite(array))
        if len(bad):
            raise ValueError(f"{name} must be finite: {name}[{bad[0]}] = {array[bad[0]]}")
        arrays.append(array)
    times, values = arrays
    if len(times) != len(values):
        raise ValueError(
            f"t and {x_name} must have the same length (one time per sample), got "
            f"{len(times)} and {len(values)}"
        )
    if len(times) < 2:
        raise ValueError(f"t and {x_name} need at least 2 samples, got {len(times)}")
    steps = np.diff(times)
    if np.any(steps <= 0):
        i = int(np.flatnonzero(steps <= 0)[0])
        raise ValueError(
            f"t must be strictly increasing: t[{i + 1}] = {times[i + 1]!r} after "
            f"t[{i}] = {times[i]!r}"
        )
    return times, values


def _level(level: object, x: np.ndarray) -> float:
    """The level: a finite real number, or the mean of ``x`` for None."""
    if level is None:
        return float(np.mean(x))
    value = _scalar(level, "level")
    if not math.isfinite(value):
        raise ValueError(f"level must be a finite number, got {value}")
    return value


def _crossings(t: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where ``s`` changes sign: (times, directions (+1 up, −1 down), last sample before
    and first sample after, shape (n, 2)).

    Between a sample s_i ≠ 0 and the next nonzero sample s_j of the other sign: if
    they are neighbours (j = i + 1), the root of the line through them,
    t = t_i + (t_j − t_i) s_i / (s_i − s_j); if samples lie exactly on the level between
    them, the middle of the first and the last of those, (t_{i+1} + t_{j−1}) / 2.
    """
    nonzero = np.flatnonzero(s != 0)
    before, after = nonzero[:-1], nonzero[1:]
    change = np.sign(s[before]) != np.sign(s[after])
    before, after = before[change], after[change]
    s_i, s_j = s[before], s[after]
    line = t[before] + (t[after] - t[before]) * (s_i / (s_i - s_j))
    on_level = 0.5 * (t[np.minimum(before + 1, len(t) - 1)] + t[np.maximum(after - 1, 0)])
    times = np.where(after == before + 1, line, on_level)
    return times, np.sign(s_j).astype(np.int64), np.column_stack([before, after])


def crossings(
    t: npt.ArrayLike, x: npt.ArrayLike, level: float = 0.0, direction: str = "both"
) -> np.ndarray:
    """The times at which ``x`` crosses ``level``, interpolated between samples.

    Between two samples on either side of the level, the crossing is where the straight
    line through them meets it: t_i + (t_{i+1} − t_i) (x_i − level)/(x_i − x_{i+1}). For
    a smooth signal sampled every h, its error is at most ``h² max|x''| / (8 |x'|)`` at the
    crossing (the straight line's error, divided by the slope).

    Samples exactly on the level: a run of them between a sample below and a sample
    above (or above and below) is one crossing, at the middle of the run (at the time
    of the sample for a single one); between two samples on the same side it is a
    touch, not a crossing; at the start or the end of the record it is not counted
    (where the signal came from, or goes, is not recorded).

    Parameters
    ----------
    t : array_like, shape (n,)
        Sample times, s: finite, strictly increasing, n >= 2 (``history.frame_times``
        or ``history.times``). Evenly spaced or not.
    x : array_like, shape (n,)
        The signal at those times, finite (a coordinate of a node, a tension, ...).
    level : float
        The level, in the units of ``x``; 0 by default.
    direction : {"both", "up", "down"}
        Which crossings: upward (from below the level to above), downward, or both.

    Returns
    -------
    ndarray, shape (k,)
        The crossing times, s, in increasing order (empty if none).

    Raises
    ------
    TypeError
        ``t``, ``x`` or ``level`` is not numbers, ``direction`` not a string.
    ValueError
        ``t`` or ``x`` not 1-D, of different lengths, shorter than 2 or not finite;
        ``t`` not strictly increasing; ``level`` not finite; ``direction`` not one of
        "up", "down", "both".

    Examples
    --------
    A sine of period 1 s sampled every 0.1 s crosses 0.5 at 1/12, 5/12 and 13/12 s
    (0.0833, 0.4167, 1.0833); the straight lines between samples are within
    ``h² max|x''| / (8 |x'|)`` = 0.009 s of it:

    >>> import numpy as np
    >>> import springsim as ss
    >>> t = np.linspace(0.0, 1.2, 13)
    >>> ss.measure.crossings(t, np.sin(2 * np.pi * t), level=0.5).round(4)
    array([0.0851, 0.4149, 1.0851])
    >>> ss.measure.crossings(t, np.sin(2 * np.pi * t), level=0.5, direction="up").round(4)
    array([0.0851, 1.0851])

    Samples on the level: one between sides is the crossing; a run of them, its middle;
    a touch is none.

    >>> ss.measure.crossings([0, 1, 2, 3, 4, 5, 6, 7], [-1, 0, 1, 0, 0, -1, 0, -1])
    array([1. , 3.5])
    """
    times, values = _series(t, x, "x")
    where = _level(level, values)
    if not isinstance(direction, str):
        raise TypeError(f"direction must be a str, not {type(direction).__name__}")
    if direction not in DIRECTIONS:
        raise ValueError(f'direction must be "up", "down" or "both", got {direction!r}')
    found, sign, _ = _crossings(times, values - where)
    if direction == "up":
        return found[sign > 0]
    if direction == "down":
        return found[sign < 0]
    return found


def period(t: npt.ArrayLike, x: npt.ArrayLike, level: float | None = None) -> float:
    """The mean period of an oscillation, s, from its successive crossings of a level.

    The crossings of ``level`` (see :func:`crossings`) are split by direction; the
    intervals between successive upward crossings and those between successive
    downward ones are each one period, and the result is the mean of all of them. A
    cycle cut by the ends of the record does not count. Their spread tells how steady
    the oscillation is: ``np.diff(crossings(t, x, level, "up"))`` lists them.

    The level should lie where the signal passes every cycle: the equilibrium. By
    default it is the mean of ``x``, the equilibrium of a steady oscillation (about a
    nonzero equilibrium too: a mass hanging on a spring). A damped oscillation passes
    its equilibrium at equal intervals, but any other level at intervals that drift as
    it decays: give the equilibrium (and :func:`log_decrement` the same).

    Parameters
    ----------
    t : array_like, shape (n,)
        Sample times, s: finite, strictly increasing, n >= 2.
    x : array_like, shape (n,)
        The signal, finite.
    level : float, optional
        The level, in the units of ``x``; the mean of ``x`` by default.

    Returns
    -------
    float
        The period, s.

    Raises
    ------
    TypeError
        ``t``, ``x`` or ``level`` is not numbers.
    ValueError
        As :func:`crossings`; and when ``x`` does not cross the level twice in the same
        direction (no whole cycle is recorded): the message says how many crossings
        there were.

    Examples
    --------
    >>> import numpy as np
    >>> import springsim as ss
    >>> t = np.linspace(0.0, 2.0, 201)
    >>> x = 0.3 + 0.1 * np.cos(2 * np.pi * t / 0.4)      # 0.4 s about 0.3 m
    >>> round(ss.measure.period(t, x), 6)
    0.4
    """
    times, values = _series(t, x, "x")
    where = _level(level, values)
    found, sign, _ = _crossings(times, values - where)
    up, down = found[sign > 0], found[sign < 0]
    intervals = np.concatenate([np.diff(up), np.diff(down)])
    if len(intervals) == 0:
        raise ValueError(
            f"period needs two crossings of the level in the same direction (one whole "
            f"cycle): x crosses level = {where:g} {len(up)} time(s) upward and "
            f"{len(down)} time(s) downward. Record a longer run, or give a level the "
            "signal passes every cycle (its equilibrium)"
        )
    return float(np.mean(intervals))


def frequency(t: npt.ArrayLike, x: npt.ArrayLike, level: float | None = None) -> float:
    """The frequency of an oscillation, Hz: ``1 / period(t, x, level)``.

    Cycles per second; the angular frequency ω is 2π times it.

    Parameters
    ----------
    t : array_like, shape (n,)
        Sample times, s: finite, strictly increasing, n >= 2.
    x : array_like, shape (n,)
        The signal, finite.
    level : float, optional
        The level, in the units of ``x``; the mean of ``x`` by default.

    Returns
    -------
    float
        The frequency, Hz.

    Raises
    ------
    TypeError, ValueError
        As :func:`period`.

    Examples
    --------
    >>> import numpy as np
    >>> import springsim as ss
    >>> t = np.linspace(0.0, 1.0, 1001)
    >>> round(ss.measure.frequency(t, np.sin(2 * np.pi * 5.0 * t + 0.3)), 6)
    5.0
    """
    return 1.0 / period(t, x, level)


def _vertex(t: np.ndarray, x: np.ndarray, i: np.ndarray) -> np.ndarray:
    """The extreme value of the parabola through the samples i − 1, i, i + 1.

    With h1 = t_i − t_{i−1}, h2 = t_{i+1} − t_i and the slopes d1 = (x_i − x_{i−1})/h1,
    d2 = (x_{i+1} − x_i)/h2, the parabola is x_i + b τ + a τ² (τ = t − t_i) with
    a = (d2 − d1)/(h1 + h2), b = d1 + a h1; its vertex value is x_i − b²/(4a) (x_i if
    a = 0: three equal samples).
    """
    h1, h2 = t[i] - t[i - 1], t[i + 1] - t[i]
    d1, d2 = (x[i] - x[i - 1]) / h1, (x[i + 1] - x[i]) / h2
    a = (d2 - d1) / (h1 + h2)
    b = d1 + a * h1
    flat = a == 0
    return x[i] - np.where(flat, 0.0, b * b / (4 * np.where(flat, 1.0, a)))


def log_decrement(t: npt.ArrayLike, x: npt.ArrayLike, level: float | None = None) -> float:
    """The logarithmic decrement δ of a damped oscillation: the mean of ln(A_n/A_{n+1})
    over successive cycles' amplitudes A_n.

    For x = x_eq + A e^(−γt) cos(ω_d t + φ), δ = γ T_d = 2π ζ/√(1 − ζ²), with T_d the
    damped period and ζ the damping ratio (so ζ = δ/√(4π² + δ²)); for a mass m on a
    spring k with a dashpot c, γ = c/(2m) and ζ = c/(2√(k m)).

    The record is cut into half-cycles at the crossings of a level (see
    :func:`crossings`); in each whole half-cycle the extreme sample and its two
    neighbours give a parabola, whose vertex is the peak (or the trough) — so the
    sampling does not bias it: its error is at most about (ω h)⁴/40 of the amplitude,
    h the sampling step (0.2 % at 12 samples per period). Then:

    - with ``level`` given (the equilibrium), A_n is the n-th peak above it;
    - by default, A_n is the height from the n-th peak to the trough that follows it,
      which needs no equilibrium at all: peaks and troughs alternate every half damped
      period, so these heights shrink by e^(−δ) per cycle exactly, whatever the
      equilibrium. The half-cycles are then found at the mean of ``x``.

    The mean of the n − 1 ratios is ln(A_0/A_{n−1})/(n − 1): only the first and the
    last amplitudes count. Cut the record where the motion is still well above noise.

    Parameters
    ----------
    t : array_like, shape (n,)
        Sample times, s: finite, strictly increasing, n >= 2.
    x : array_like, shape (n,)
        The signal, finite.
    level : float, optional
        The equilibrium, in the units of ``x``: amplitudes are measured from it. By
        default, peak to trough (no equilibrium needed).

    Returns
    -------
    float
        δ (dimensionless; positive while the oscillation decays).

    Raises
    ------
    TypeError
        ``t``, ``x`` or ``level`` is not numbers.
    ValueError
        As :func:`crossings`; and when fewer than two peaks (two peak–trough pairs, by
        default) are recorded between crossings: the message says how many.

    Examples
    --------
    >>> import numpy as np
    >>> import springsim as ss
    >>> t = np.linspace(0.0, 5.0, 501)
    >>> x = 2.0 + np.exp(-0.2 * t) * np.cos(2 * np.pi * t)   # γ = 0.2 /s, T_d = 1 s
    >>> round(ss.measure.log_decrement(t, x), 4), round(ss.measure.log_decrement(t, x, 2.0), 4)
    (0.2, 0.2)
    """
    times, values = _series(t, x, "x")
    where = _level(level, values)
    _, sign, samples = _crossings(times, values - where)
    # Whole half-cycles: the samples after one crossing up to the last before the next.
    first, last = samples[:-1, 1], samples[1:, 0]
    above = sign[:-1] > 0
    signed = np.where(above, 1.0, -1.0)
    # The extreme sample of each half-cycle (its neighbours are no further from the
    # level: they are in it, or across a crossing); a parabola through the three.
    extreme = np.array(
        [
            a + int(np.argmax(s * values[a : b + 1]))
            for a, b, s in zip(first, last, signed, strict=True)
        ],
        dtype=np.int64,
    )
    peaks = _vertex(times, values, extreme) if len(extreme) else np.empty(0)
    if level is not None:
        amplitudes = peaks[above] - where
        what = f"peaks above level = {where:g} between its crossings"
    else:
        # A peak and the trough of the half-cycle right after it.
        pair = np.flatnonzero(above[:-1] & ~above[1:])
        amplitudes = peaks[pair] - peaks[pair + 1]
        what = "peak-to-trough pairs (half-cycles between crossings of the mean)"
    if len(amplitudes) < 2:
        raise ValueError(
            f"log_decrement needs two successive amplitudes: x has {len(amplitudes)} "
            f"{what}. Record a longer run"
            + (
                ", or give level= the equilibrium (a heavily damped record's mean lies "
                "off it, and it may cross the mean only once or twice)"
                if level is None
                else ", or check the level is the equilibrium"
            )
        )
    return float(np.mean(np.log(amplitudes[:-1] / amplitudes[1:])))


def contact_times(t: npt.ArrayLike, gap: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """When a contact begins and ends, from a gap that is negative while touching.

    A gap such as the distance between two nodes minus the sum of their radii
    (``np.linalg.norm(frames[:, i] - frames[:, j], axis=1) - (r_i + r_j)``), or a
    node's height above a floor minus its radius. A contact begins where the gap
    crosses 0 downward and ends where it crosses 0 upward, interpolated between
    samples as in :func:`crossings` (so is a run of samples exactly at 0); a gap of
    exactly 0 is not touching. A contact already on at the first sample begins at
    ``t[0]``, one still on at the last sample ends at ``t[-1]``: their durations are
    only what the record saw.

    Parameters
    ----------
    t : array_like, shape (n,)
        Sample times, s: finite, strictly increasing, n >= 2.
    gap : array_like, shape (n,)
        The gap, m (any unit): < 0 while touching; finite.

    Returns
    -------
    starts, ends : ndarray, shape (k,)
        The times each of the k contacts began and ended, s (``ends - starts``: their
        durations).

    Raises
    ------
    TypeError
        ``t`` or ``gap`` is not numbers.
    ValueError
        ``t`` or ``gap`` not 1-D, of different lengths, shorter than 2 or not finite;
        ``t`` not strictly increasing.

    Examples
    --------
    A ball bouncing on a floor: height minus radius, negative in the floor.

    >>> import numpy as np
    >>> import springsim as ss
    >>> t = np.linspace(0.0, 3.0, 31)
    >>> gap = np.abs(np.sin(np.pi * (t - 0.05))) - 0.5     # touching for 1/3 s per second
    >>> starts, ends = ss.measure.contact_times(t, gap)
    >>> starts.round(2), ends.round(2)      # exactly 0.05 ± 1/6 s each second
    (array([0.  , 0.88, 1.88, 2.88]), array([0.22, 1.22, 2.22, 3.  ]))
    """
    times, values = _series(t, gap, "gap")
    found, sign, _ = _crossings(times, values)
    starts, ends = found[sign < 0], found[sign > 0]
    nonzero = values[values != 0]
    if len(nonzero) and nonzero[0] < 0:  # touching when the record begins
        starts = np.concatenate([[times[0]], starts])
    if len(nonzero) and nonzero[-1] < 0:  # still touching when it ends
        ends = np.concatenate([ends, [times[-1]]])
    return starts, ends


def spectrum(t: npt.ArrayLike, x: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """The amplitude spectrum of a signal: which frequencies it holds, and how much.

    The mean of ``x`` is taken off, the rest multiplied by a Hann window (so that a
    frequency between the DFT's bins does not leak far), padded with zeros to
    ``PAD`` (8) times its length (which interpolates the spectrum between the bins; it
    does not sharpen the peaks, about 4/duration wide at their base) and transformed.
    The amplitudes are scaled so that a sine of amplitude A shows a peak of height A
    (within 15 % before padding, by where its frequency falls between bins; 0.3 % after).
    Samples unevenly spaced (records thinned by hand, or merged from several runs; the
    frames of ``run()`` are evenly spaced) are first interpolated linearly onto an even
    grid of as many.

    Use it when a signal holds several frequencies (a string plucked in no one mode's
    shape), where :func:`frequency`, counting crossings, measures none of them. Its
    resolution is about 1/duration: record many periods.

    Parameters
    ----------
    t : array_like, shape (n,)
        Sample times, s: finite, strictly increasing, n >= 4.
    x : array_like, shape (n,)
        The signal, finite.

    Returns
    -------
    frequencies : ndarray
        0 to the Nyquist frequency 1/(2 h), Hz, in steps of 1/(PAD n h), h the
        (mean) sampling step.
    amplitudes : ndarray
        The amplitude at each, in the units of ``x``.

    Raises
    ------
    TypeError, ValueError
        As :func:`crossings`; and fewer than 4 samples.

    Examples
    --------
    >>> import numpy as np
    >>> import springsim as ss
    >>> t = np.linspace(0.0, 10.0, 1001)
    >>> x = 2.0 + 0.3 * np.sin(2 * np.pi * 3.0 * t) + 0.1 * np.sin(2 * np.pi * 7.0 * t)
    >>> f, a = ss.measure.spectrum(t, x)
    >>> peaks = (a[1:-1] > a[:-2]) & (a[1:-1] > a[2:]) & (a[1:-1] > 0.05)
    >>> f[1:-1][peaks].round(1), a[1:-1][peaks].round(3)   # in steps of 0.0125 Hz
    (array([3., 7.]), array([0.3, 0.1]))
    """
    times, values = _series(t, x, "x")
    if len(times) < 4:
        raise ValueError(f"spectrum needs at least 4 samples, got {len(times)}")
    count = len(times)
    even = np.linspace(times[0], times[-1], count)
    step = even[1] - even[0]
    if np.max(np.abs(times - even)) > 1e-9 * step:  # uneven: onto an even grid
        values = np.interp(even, times, values)
    window = np.hanning(count)
    transform = np.fft.rfft((values - np.mean(values)) * window, n=PAD * count)
    # A sine A sin(2π f t) sums to A/2 times the window's sum at f: scaled to A.
    amplitudes = 2.0 * np.abs(transform) / np.sum(window)
    return np.fft.rfftfreq(PAD * count, d=step), amplitudes


def dominant_frequency(t: npt.ArrayLike, x: npt.ArrayLike) -> float:
    """The frequency of the highest peak of :func:`spectrum`, Hz.

    The peak is refined by a parabola through the logarithms of the three amplitudes
    around it (a Hann window's peak is close to a Gaussian, whose logarithm is a
    parabola): for one sine, the error is about 1e-4 of 1/duration over 10 periods,
    3e-5 over 30 or more. Another frequency in the signal leaks into the peak, the
    more the nearer it is: keep them several 1/duration apart (a longer record).

    Parameters
    ----------
    t : array_like, shape (n,)
        Sample times, s: finite, strictly increasing, n >= 4.
    x : array_like, shape (n,)
        The signal, finite.

    Returns
    -------
    float
        The frequency, Hz.

    Raises
    ------
    TypeError, ValueError
        As :func:`spectrum`; and a constant ``x`` (no frequency at all).

    Examples
    --------
    >>> import numpy as np
    >>> import springsim as ss
    >>> t = np.linspace(0.0, 10.0, 1001)
    >>> x = 0.3 * np.sin(2 * np.pi * 3.21 * t) + 0.1 * np.sin(2 * np.pi * 7.0 * t)
    >>> round(ss.measure.dominant_frequency(t, x), 4)
    3.21
    """
    frequencies, amplitudes = spectrum(t, x)
    peak = int(np.argmax(amplitudes[1:])) + 1  # not the mean's bin
    if amplitudes[peak] == 0:
        raise ValueError("x is constant: it has no frequency")
    if peak == len(amplitudes) - 1:  # at the Nyquist frequency: no bin above
        return float(frequencies[peak])
    below, top, above = amplitudes[peak - 1 : peak + 2]
    if below <= 0 or above <= 0:
        return float(frequencies[peak])
    a, b, c = np.log([below, top, above])
    # The vertex of the parabola through (−1, a), (0, b), (1, c), in bins.
    offset = 0.5 * (a - c) / (a - 2 * b + c)
    return float(frequencies[peak] + offset * (frequencies[1] - frequencies[0]))
