"""``view()``: the live notebook viewer's entry point (anywidget imported when called,
with the install hint)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from springsim.viewer.widget import Viewer


def view(
    sim: Any,
    *,
    dt: float | None = None,
    substeps: int | None = None,
    speed: float | None = None,
    method: str | None = None,
    sliders: Sequence[str] = (),
    color_by: str | None = None,
    color_range: tuple[float, float] | None = None,
    arrows: str | None = None,
    arrows_per: str = "node",
    arrow_scale: float | None = None,
    energy_bars: bool = False,
    contacts: bool = False,
    fps: float = 60.0,
    record: int = 600,
) -> Viewer:
    """A live, draggable notebook view of ``sim`` (display it: last line of a cell).

    The widget draws springs, nodes, faces (lit, in 3D), pins and colliders, in 2D or
    3D (drag to orbit, right-drag or Ctrl-drag to pan, wheel to zoom), with an energy
    trace: each term, the total and total + dissipated. Its buttons play, pause, step
    one frame and reset; its fields set the ``speed``, ``substeps`` per frame and ``dt``. Play steps
    ``sim`` on a background thread (the kernel releases the GIL), sending positions to
    the browser as float32 buffers.

    Dragging a node holds it like a pin while the button is down and moves it with the
    mouse (in the plane through it facing the screen, in 3D); releasing it lets it go
    (unless it was pinned before). Shift-click toggles a node's pin.

    Parameters
    ----------
    sim : springsim.System
        The system; the viewer steps it in place (hold ``viewer.lock`` to change it
        from Python while it plays).
    dt : float, optional
        Time step, s. Default: half of ``sim.critical_dt()``, at most 1 ms; for a
        method stable at any step (``"vbd"``, ``"xpbd"``, ``"implicit_euler"``), two
        steps per frame, ``1 / (2 fps)``.
    substeps : int, optional
        Steps per frame drawn (then ``speed`` is ``substeps × dt × fps``). Default:
        what ``speed`` asks for, ``speed / (fps × dt)`` rounded (at least 1).
    speed : float, optional
        Playback speed, simulated seconds per wall-clock second: 1 (the default) is
        real time, 0.1 slow motion. The same on every machine: no timing decides it.
        A kernel too slow for it plays as fast as it can, with frames still at about
        ``fps`` (each with fewer steps), and says so: ``viewer.achieved_speed`` and
        the widget's status line. Give ``speed`` or ``substeps``, not both.
    method : str, optional
        The integration method of every step (one of ``springsim.METHODS``); default
        ``sim.method``. ``sim.method`` is left as it is. For a stiff system,
        ``"vbd"`` or ``"xpbd"`` (``sim.iterations`` passes per step) keep the page
        live where an explicit method would need hundreds of steps per frame. The
        widget's method menu changes it (``viewer.method``); beside it, "stiff: try vbd
        or xpbd" when a stable explicit step costs more time here than it simulates
        (:func:`springsim.viewer.methods.stiff`).
    sliders : sequence of str
        Parameters to put on sliders: ``"gravity"``, ``"wind"``, ``"drag"``,
        ``"damping"``, ``"stiffness"`` (see :mod:`springsim.viewer.controls`).
    color_by : {None, "tension", "strain", "body"}
        Colour the springs by their tension or strain, with a colour bar: blue
        compressed, grey unstrained, red stretched; or each body
        (:meth:`springsim.System.bodies`: the pieces springs join) in its own colour,
        its springs and nodes (matplotlib's tab10, cycled past 10 bodies).
    color_range : (float, float), optional
        The colour scale ``(lo, hi)`` (N or strain): blue at ``lo``, grey in the
        middle, red at ``hi``. Default: symmetric about zero, as wide as the largest
        value but never narrower than a strain of 0.1 % (a tension of 0.1 % of the
        stiffest spring's stiffness × rest length), so round-off shows grey.
    arrows : {None, "velocity", "force"}
        Arrows at each node (or body): its velocity (green) or the net force on it
        (purple; computed in NumPy by :mod:`springsim.reference` each frame, which
        slows large systems); the widget's menu too.
    arrows_per : {"node", "body"}
        An arrow per node, or one per body at its centre of mass (its velocity
        Σ m v / M, or the total force on it).
    arrow_scale : float, optional
        Metres drawn per m/s or per N. Default: the largest scale that keeps the
        longest arrow so far within 15 % of the scene (it only shrinks).
    energy_bars : bool
        Show the energy now as bars (kinetic, elastic, gravity, contact, gas,
        dissipated, total) in place of the trace over time; the widget's "bars" box.
    contacts : bool
        Draw a short pink line between the two nodes of each pair touching now
        (:meth:`springsim.System.contact_pairs`: node–node contact, nodes with
        ``radii``), sent with each frame; the widget's "contacts" box.
    fps : float
        Frames per second the stepping thread aims at (1 to 240); the most it sends.
    record : int
        Frames kept for :meth:`Viewer.save_html`.

    Returns
    -------
    springsim.viewer.widget.Viewer
        The widget; ``play()``, ``pause()``, ``step()``, ``reset()``, ``mark()``,
        ``save_html(path)`` do from Python what its buttons do.

    Raises
    ------
    ImportError
        anywidget is not installed.
    ValueError
        Both ``speed`` and ``substeps``; a value out of its range; an unknown
        ``method``, ``arrows`` or ``arrows_per``; a ``method`` the system cannot step
        (rigid rods, ``stiffness=inf``, need ``"xpbd"``), or ``sim.method`` when no
        ``dt`` is given.
    TypeError
        ``sim`` not a System; ``method`` not a str or None; ``energy_bars`` or
        ``contacts`` not True or False.

    Examples
    --------
    >>> import springsim as ss
    >>> rope = ss.string(10, length=1.0, mass=0.1, stiffness=100.0, dim=2)
    >>> v = ss.view(rope, sliders=["gravity"])
    >>> v.step()                        # one frame: substeps steps of dt
    >>> round(rope.time / (v.dt * v.substeps), 9)
    1.0
    >>> v.close()
    """
    try:
        from springsim.viewer.widget import Viewer
    except ModuleNotFoundError as err:
        if err.name != "anywidget":
            raise
        raise ImportError("springsim.view needs anywidget: pip install anywidget") from None
    return Viewer(
        sim,
        dt=dt,
        substeps=substeps,
        speed=speed,
        method=method,
        sliders=sliders,
        color_by=color_by,
        color_range=color_range,
        arrows=arrows,
        arrows_per=arrows_per,
        arrow_scale=arrow_scale,
        energy_bars=energy_bars,
        contacts=contacts,
        fps=fps,
        record=record,
    )


__all__ = ["view"]
