"""The energy books in pictures: ``plot_energy`` (each term of a run against time) and
``energy_bars`` (the terms at one moment as bars, as PhET's simulations show them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from springsim.plot.axes import _pyplot
from springsim.stepping.history import History
from springsim.system import System

if TYPE_CHECKING:
    from matplotlib.axes import Axes

#: Each energy term's colour, the same in the curves and the bars.
TERM_COLORS = {
    "kinetic": "tab:blue",
    "elastic": "tab:orange",
    "gravity": "tab:green",
    "pressure": "tab:purple",
    "contact": "tab:brown",
    "dissipated": "tab:red",
    "total": "black",
}
#: The terms drawn only when they are not zero over the whole run: a system without
#: gravity, gas or node–node contact has none of that energy.
_WHEN_PRESENT = ("gravity", "pressure", "contact")
#: The bars of :func:`energy_bars`, in order.
BARS = ("kinetic", "elastic", "gravity", "contact", "pressure", "dissipated", "total")


def plot_energy(history: History, ax: Axes | None = None, dissipated: bool = True) -> Axes:
    """Plot a run's energies against time: each term, the total, what was dissipated
    and total + dissipated.

    Kinetic and elastic energy are always drawn; gravity, pressure (gas) and contact
    (node–node) only when they are not zero over the whole run (gravity off, no gas,
    no contact: no line). Without damping, drag, contacts or ``energy_loss``, *total*
    is flat up to the integrator's error and nothing is dissipated (no dissipated
    lines); with them, *total + dissipated* is flat (the energy books balance).

    Parameters
    ----------
    history : springsim.History
        From :meth:`springsim.System.run`.
    ax : matplotlib Axes, optional
        Where to draw; a new figure if omitted.
    dissipated : bool
        Draw what was dissipated since the run started (``history.dissipated``) and
        total + dissipated, when anything was.

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import springsim as ss
    >>> from springsim.plot import plot_energy
    >>> rope = ss.string(8, length=1.0, mass=0.1, stiffness=50.0, damping=0.02)
    >>> h = rope.run(0.5, 1e-3, progress=False)
    >>> [line.get_label() for line in plot_energy(h).lines]
    ['kinetic', 'elastic', 'gravity', 'dissipated', 'total', 'total + dissipated']
    >>> rope.gravity = (0.0, 0.0, 0.0)
    >>> rope.damping = 0.0
    >>> h = rope.run(0.5, 1e-3, progress=False)
    >>> [line.get_label() for line in plot_energy(h).lines]
    ['kinetic', 'elastic', 'total']
    """
    plt = _pyplot()
    if ax is None:
        ax = plt.figure().add_subplot()
    t = history.times
    for term in ("kinetic", "elastic", "gravity", "pressure", "contact"):
        values = np.asarray(getattr(history, term))
        if term in _WHEN_PRESENT and not np.any(values):
            continue
        ax.plot(t, values, lw=1.0, color=TERM_COLORS[term], label=term)
    lost = np.asarray(history.dissipated)
    if dissipated and np.any(lost):
        ax.plot(t, lost, lw=1.0, color=TERM_COLORS["dissipated"], label="dissipated")
    ax.plot(t, history.total, color="black", lw=1.6, label="total")
    if dissipated and np.any(lost):
        ax.plot(t, history.total + lost, color="black", ls="--", lw=1.2, label="total + dissipated")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("energy [J]")
    ax.legend(loc="best", fontsize="small")
    return ax


def energy_bars(sim_or_history: System | History, ax: Axes | None = None, record: int = -1) -> Axes:
    """The energy at one moment as bars: kinetic, elastic, gravity, contact, pressure
    (gas), dissipated and total, as PhET's simulations show them.

    The total bar is :attr:`springsim.Energy.total` (kinetic + elastic + gravity +
    pressure + contact); what was dissipated is stacked on it, hatched, up to total +
    dissipated, which stays level while the energy books balance. Gravity's energy is
    −Σ m g·x: zero at the origin (y = 0 under the default gravity) and negative below
    it, so bars may go below zero (a line marks zero). Gas energy is likewise relative
    (−nRT ln V + p₀ V), and may be negative.

    Parameters
    ----------
    sim_or_history : springsim.System or springsim.History
        A System (its energy now, :meth:`springsim.System.energy`, and
        :attr:`springsim.System.dissipated`, which counts only while
        ``track_energy`` is on), or a History (one record of it).
    ax : matplotlib Axes, optional
        Where to draw; a new figure if omitted.
    record : int
        With a History, which record (an index into ``history.times``; the last by
        default).

    Returns
    -------
    matplotlib Axes
        The bars are its patches, gid ``"springsim-energy-bars"``, one per term in the
        order above, then the dissipated part stacked on the total (gid
        ``"springsim-energy-dissipated"``).

    Raises
    ------
    TypeError
        ``sim_or_history`` is neither a System nor a History, or ``record`` is not an
        integer.
    IndexError
        ``record`` is outside the History.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import springsim as ss
    >>> from springsim.plot import energy_bars
    >>> sim = ss.System(dim=2)
    >>> _ = sim.add_nodes([[0.0, 2.0]], masses=1.0, velocities=[[3.0, 0.0]])
    >>> ax = energy_bars(sim)
    >>> [(t.get_text(), round(float(p.get_height()), 2)) for t, p in zip(
    ...     ax.get_xticklabels(), ax.patches)][:3]
    [('kinetic', 4.5), ('elastic', 0.0), ('gravity', 19.62)]
    """
    plt = _pyplot()
    terms, when = _terms(sim_or_history, record)
    if ax is None:
        ax = plt.figure().add_subplot()
    heights = [terms[name] for name in BARS]
    colors = [TERM_COLORS[name] for name in BARS]
    where = np.arange(len(BARS))
    bars = ax.bar(where, heights, color=colors, gid="springsim-energy-bars")
    for bar in bars:
        bar.set_gid("springsim-energy-bars")
    on_top = ax.bar(
        where[-1],
        terms["dissipated"],
        bottom=terms["total"],
        color="none",
        edgecolor=TERM_COLORS["dissipated"],
        hatch="//",
        label="total + dissipated",
    )
    on_top[0].set_gid("springsim-energy-dissipated")
    ax.axhline(0.0, color="0.3", lw=0.8)
    ax.set_xticks(where, BARS, fontsize="small")
    ax.set_ylabel("energy [J]")
    if when is not None:
        ax.set_title(f"t = {when:.3f} s")
    return ax


def _terms(source: Any, record: Any) -> tuple[dict[str, float], float | None]:
    """Each bar's value from a System or one record of a History, and the time."""
    if isinstance(source, History):
        if isinstance(record, bool) or not isinstance(record, (int, np.integer)):
            raise TypeError(f"record must be an integer index, got {record!r}")
        if not -len(source) <= record < len(source):
            raise IndexError(f"record {record} is outside this history of {len(source)} records")
        terms = {
            name: float(getattr(source, name)[record])
            for name in ("kinetic", "elastic", "gravity", "contact", "pressure", "dissipated")
        }
        terms["total"] = float(source.total[record])
        return terms, float(source.times[record])
    if isinstance(source, System):
        with source.lock:
            energy, lost, now = source.energy(), float(source.dissipated), float(source.time)
        terms = {name: float(getattr(energy, name)) for name in BARS if name != "dissipated"}
        terms["dissipated"] = lost
        return terms, now
    raise TypeError(
        f"energy_bars takes a springsim.System or a springsim.History, got {type(source).__name__}"
    )
