"""What keeping ``dissipated`` costs: damped cloths stepped with ``track_energy`` on and off.

``sim.track_energy`` (off by default in plain steps; ``run()`` and the viewer turn it
on) makes every substep add what damping, drag,
contacts, the strain limit and ``energy_loss`` took out of the motion to
``sim.dissipated``. The bench times two scenes with it on and off: the bench's damped
100×100 cloth (:func:`~springsim.bench.scenes.cloth_100`) and the same cloth, level
and free, falling onto a sphere with friction (:func:`draped_100`), so that its
contacts count what they take too (the books then cost a second pass per substep, after
the contacts). Each pair is stepped with symplectic Euler from the same state (after
:data:`WARM_UP` substeps), :data:`STEPS` substeps per call,
interleaved, one thread, by thread CPU time; the line reports the medians per substep
and their ratio (on / off).
"""

import springsim as ss
from springsim.bench.kernel import kernel_contender
from springsim.bench.scenes import DAMPING, DT_FRACTION, TARGET_METHOD, cloth_100
from springsim.bench.timing import interleave, median

#: Substeps per timed call.
STEPS = 20
#: Substeps before the timing: the draped cloth's middle is then on the sphere.
WARM_UP = 400


def draped_100() -> ss.System:
    """cloth_100's cloth level and free, falling onto a 0.3 m sphere with friction 0.5
    from 2 mm above it."""
    sim = ss.cloth(
        100,
        100,
        width=1.0,
        height=1.0,
        mass=1.0,
        stiffness=1000.0,
        damping=DAMPING,
        pin=None,
        normal=(0, 1, 0),
        origin=(-0.5, 0.0, -0.5),
    )
    sim.add_sphere((0.0, -0.302, 0.0), 0.3, friction=0.5)
    return sim


def track_energy_cost(repeats: int = 5) -> dict:
    """Median seconds per substep with ``track_energy`` on and off, and their ratio.

    Returns
    -------
    dict
        ``substeps`` per timed call; for each scene (``"cloth"``: the damped 100×100
        cloth, ``"contact"``: the same cloth on a sphere with friction) a dict of
        ``on_seconds``, ``off_seconds`` (medians per substep) and ``ratio`` (on / off).

    Examples
    --------
    >>> from springsim.bench.track_energy import track_energy_cost
    >>> row = track_energy_cost(repeats=1)
    >>> row["cloth"]["on_seconds"] > 0, row["contact"]["off_seconds"] > 0, row["substeps"]
    (True, True, 20)
    """
    row: dict = {"substeps": STEPS}
    for name, build in (("cloth", cloth_100), ("contact", draped_100)):
        on = build()
        on.track_energy = True
        dt = DT_FRACTION * on.critical_dt()
        on.step(dt, steps=WARM_UP, method=TARGET_METHOD)  # the contacts under way
        off = on.copy()
        off.track_energy = False
        contenders = [
            kernel_contender(label, sim, dt, TARGET_METHOD, 1)
            for label, sim in (("on", on), ("off", off))
        ]
        for contender in contenders:
            contender.steps = STEPS
        timed = interleave(contenders, rounds=repeats)
        seconds = {label: median(timed[label]["seconds"]) / STEPS for label in ("on", "off")}
        row[name] = {
            "on_seconds": seconds["on"],
            "off_seconds": seconds["off"],
            "ratio": seconds["on"] / seconds["off"],
        }
    return row


def track_energy_line(row: dict) -> str:
    """The report's line for :func:`track_energy_cost`'s figures."""
    cloth, contact = row["cloth"], row["contact"]
    return (
        f"track_energy: a damped 100×100 cloth {cloth['on_seconds'] * 1e6:.0f} µs per substep"
        f" with, {cloth['off_seconds'] * 1e6:.0f} µs without ({cloth['ratio']:.2f}×); on a"
        f" sphere with friction {contact['on_seconds'] * 1e6:.0f} vs"
        f" {contact['off_seconds'] * 1e6:.0f} µs ({contact['ratio']:.2f}×) (1 thread)"
    )
