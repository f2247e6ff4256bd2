"""The live viewer: an anywidget whose stepping runs on a background thread.

Imported by :func:`springsim.view` only (it needs anywidget). The thread calls
``sim.step(dt, steps=substeps)`` (the kernel releases the GIL while it steps, so the
notebook stays responsive) and sends each frame as binary buffers
(:mod:`springsim.viewer.protocol`). Every change to the system — a step, a message
from the browser, a call from Python — happens under :attr:`Viewer.lock`.
"""

from __future__ import annotations

import base64
import pathlib
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import anywidget
import numpy as np

from springsim import _core
from springsim.analysis import arrows as arrow_options
from springsim.files.paths import path_name
from springsim.viewer import arrows as arrows_mod
from springsim.viewer import controls, methods, protocol, snapshot
from springsim.viewer.standalone import Frame, check_speed, front_end, write_html

#: The mime type of a widget's view in a notebook output.
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: A front end's "hold" cuts the frame rate by this factor (it could not take them)...
RATE_CUT = 0.8
#: ...and the rate grows back by fps / RATE_RECOVERY per second of play, up to fps: a
#: link that takes fewer frames than fps is held once in many seconds, not each second.
RATE_RECOVERY = 60.0


class Viewer(anywidget.AnyWidget):  # type: ignore[misc]  # anywidget is untyped (Any)
    """A live, draggable view of a System in a notebook; made by :func:`springsim.view`
    (its parameters are documented there).

    Attributes
    ----------
    error : str or None
        Why the last step failed (the viewer paused; the step was rolled back), shown
        in the widget too; None after a successful play.

    Examples
    --------
    >>> import springsim as ss
    >>> viewer = ss.view(ss.string(5, length=1.0, mass=0.05, stiffness=50.0, dim=2))
    >>> viewer  # doctest: +ELLIPSIS
    <springsim viewer of <springsim.System dim=2 nodes=5 springs=4 ... t=0s>, paused>
    >>> viewer.close()
    """

    _esm = front_end()

    def __init__(
        self,
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
    ) -> None:
        if not isinstance(sim, _core.System):
            raise TypeError(f"view() shows a springsim.System, not {type(sim).__name__}")
        if isinstance(sliders, str):
            raise TypeError('sliders is a list of names, such as ["gravity"], not a str')
        if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not 1 <= fps <= 240:
            raise ValueError(f"fps must be a number in [1, 240], not {fps!r}")
        if isinstance(record, bool) or not isinstance(record, int) or record < 2:
            raise ValueError(f"record must be an int >= 2 (frames kept), not {record!r}")
        if speed is not None and substeps is not None:
            raise ValueError("give speed or substeps, not both (substeps follow from speed)")
        arrow_scale = arrow_options.check(arrows, arrows_per, arrow_scale)
        method = methods.check(method)
        if method is not None or dt is None:  # a rigid rod needs xpbd: said now, not as dt 0
            methods.refuse_unsteppable(sim, method or sim.method)
        super().__init__()
        self._sim: Any = sim  # a springsim.System (checked above)
        self._lock = sim.lock  # one lock: the viewer's state and the system's turn
        self._sliders = {name: controls.make_slider(sim, name) for name in sliders}
        self._dt = 0.0
        self._substeps = 1
        self._speed = 0.0  # 0 until set: then dt's setter leaves substeps alone
        self._fps = float(fps)
        self._method = method
        self._color_by: str | None = None
        self._color_range: tuple[float, float] | None = None
        self.dt = dt if dt is not None else methods.default_dt(sim, method or sim.method, fps)
        if substeps is not None:
            self.substeps = substeps
        else:
            self.speed = speed if speed is not None else 1.0
        self.color_by = color_by
        self.color_range = color_range
        self._arrows: str | None = None
        self._arrows_per = "node"
        self._arrow_scale = arrow_scale
        self._fitted_scale = float("inf")  # the default scale so far (it only shrinks)
        self._collider_box: Any = None  # the scene's bounds, for the arrows' scale
        self.arrows = arrows
        self.arrows_per = arrows_per
        self.energy_bars = energy_bars
        self.contacts = contacts
        self._period = 1.0 / fps
        # the energy trace's total + dissipated needs the books kept (as run() keeps them)
        self._was_tracking = bool(sim.track_energy)
        sim.track_energy = True
        self._reset_point = controls.Snapshot(sim)
        self._playing = False
        self._closed = False
        self._frame = 0
        # frames are not acknowledged (each message flashes the kernel busy): a front
        # end that falls behind says "hold", then "resume" (protocol.HOLD_LAG); one
        # that has spoken and then is silent for protocol.ALIVE_TIMEOUT s is gone
        self._held = False
        self._rate = self._fps  # frames a second sent now: fps, less after a hold
        self._browser = False  # whether a front end has spoken
        self._heard = time.monotonic()  # when it last did (or play() was called)
        self._scene_key: tuple[Any, ...] = ()
        self._wake = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None
        self._grabbed: dict[int, bool] = {}  # node -> whether it was pinned before
        self._recording: deque[Frame] = deque(maxlen=record)
        self._trace = protocol.Trace()  # kept here: a reloaded page gets it back
        self._taps: list[Callable[[dict[str, Any], list[bytes]], None]] = []
        self._rates: deque[float] = deque(maxlen=30)
        self._played: deque[tuple[float, float]] = deque(maxlen=30)  # (wall s, sim s)
        self._step_cost = 0.0  # wall seconds per step of the method, measured on frames
        self._hint_shown: str | None = None  # the stiff hint the page was last sent
        # sim.critical_dt() and when it was taken: it costs 1.5 ms on a 100 x 100 cloth,
        # so the hint takes it again at most once a second (edits show within a second)
        self._critical = (0.0, -float("inf"))
        self.error: str | None = None
        self.on_msg(self._on_msg)

    def __repr__(self) -> str:
        # what a notebook shows where widgets are not drawn (a stored notebook, a console)
        state = "playing" if self._playing else "paused"
        return f"<springsim viewer of {self._sim!r}, {state}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """What a notebook output holds: the widget view, its text and a PNG of the
        system now (:mod:`springsim.viewer.snapshot`), which a saved notebook shows
        where the widget cannot run; no widget view in a kernel run by nbclient."""
        data, metadata = super()._repr_mimebundle_(**kwargs)
        with self._lock:
            image = snapshot.png(self._sim, self._color_by, self._color_range)
        if image is not None:
            data["image/png"] = base64.b64encode(image).decode("ascii")
        if snapshot.headless_kernel():
            data.pop(WIDGET_VIEW, None)
        return data, metadata

    # ------------------------------------------------------------ Python API

    @property
    def sim(self) -> Any:
        """The System shown."""
        return self._sim

    @property
    def lock(self) -> Any:
        """The system's own lock (:attr:`springsim.System.lock`), which the viewer holds
        while it steps and draws. Each call on the system waits for it by itself; hold
        it to make several calls one, with no frame stepped in between."""
        return self._lock

    @property
    def playing(self) -> bool:
        """Whether the background thread is stepping."""
        return self._playing

    @property
    def dt(self) -> float:
        """The time step, s (> 0)."""
        return self._dt

    @dt.setter
    def dt(self, value: float) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"dt must be a number, not {type(value).__name__}")
        if not 0 < value < float("inf"):
            raise ValueError(f"dt must be > 0 and finite, not {value}")
        self._dt = float(value)
        if self._speed > 0:  # the speed stays: the steps per frame follow
            self._substeps = _substeps_for(self._speed, self._dt, self._fps)

    @property
    def method(self) -> str | None:
        """The integration method each step uses (one of ``springsim.METHODS``), or
        None: ``sim.method``. The viewer passes it to ``sim.step(dt, steps, method=...)``
        and leaves ``sim.method`` as it was; the widget's method menu sets it too. For a
        stiff system, ``"vbd"`` or ``"xpbd"`` with a few substeps per frame keep the page
        live where the explicit methods' ``dt`` below ``critical_dt()`` takes too many
        steps per frame (see the guide; the page then says so beside its menu).

        Setting another method sets ``dt`` to that method's default, as ``view(method=)``
        does (two steps a frame for ``"xpbd"``, ``"implicit_euler"`` and ``"vbd"``, half
        of ``critical_dt()`` for the explicit ones), and keeps ``speed``: the steps per
        frame follow. Set ``dt`` after it to keep another step.

        Raises
        ------
        TypeError, ValueError
            Not None nor one of ``springsim.METHODS``; a method the system cannot step
            (a rigid rod, stiffness inf, needs ``"xpbd"``). Nothing changes.

        Examples
        --------
        >>> import springsim as ss
        >>> rope = ss.string(10, length=1.0, mass=0.1, stiffness=100.0, dim=2)
        >>> viewer = ss.view(rope, method="vbd", dt=1 / 120)
        >>> viewer.step()                   # two steps of vbd
        >>> viewer.method, rope.method, viewer.substeps
        ('vbd', 'symplectic_euler', 2)
        >>> viewer.method = "rk4"           # half of critical_dt() (at most 1 ms), real time
        >>> viewer.dt, viewer.substeps
        (0.001, 17)
        >>> viewer.close()
        """
        return self._method

    @method.setter
    def method(self, value: str | None) -> None:
        checked = methods.check(value)
        with self._lock:
            sim = self._sim
            before, after = self._method or sim.method, checked or sim.method
            methods.refuse_unsteppable(sim, after)
            self._method = checked
            if after != before:
                self.dt = methods.default_dt(sim, after, self._fps)  # the speed stays
                self._step_cost = 0.0  # another method costs another time a step
                self._played.clear()

    @property
    def substeps(self) -> int:
        """Steps of ``dt`` per frame at ``fps`` frames a second (1 to 100000):
        ``speed / (fps dt)``, rounded (frames sent more slowly cover more steps each).
        Setting it sets ``speed`` to ``substeps × dt × fps``."""
        return self._substeps

    @substeps.setter
    def substeps(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"substeps must be an int, not {type(value).__name__}")
        if not 1 <= value <= 100000:
            raise ValueError(f"substeps must be in [1, 100000], not {value}")
        self._substeps = int(value)
        self._speed = self._substeps * self._dt * self._fps

    @property
    def speed(self) -> float:
        """Playback speed asked for: simulated seconds per wall-clock second (1 real
        time, 0.1 ten times slower). It sets ``substeps`` to ``speed / (fps dt)``
        rounded (at least 1; frames then come every ``substeps dt / speed`` s), and
        stays as set: a kernel too slow for it is reported in
        :attr:`achieved_speed`, not changed silently.

        Examples
        --------
        >>> import springsim as ss
        >>> rope = ss.string(5, length=1.0, mass=0.05, stiffness=50.0, dim=2)
        >>> viewer = ss.view(rope, dt=1e-4, speed=0.5)   # 60 frames per second
        >>> viewer.substeps                              # 0.5 / (60 × 1e-4)
        83
        >>> viewer.speed = 2.0
        >>> viewer.substeps
        333
        >>> viewer.close()
        """
        return self._speed

    @speed.setter
    def speed(self, value: float) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)):
            raise TypeError(f"speed must be a number, not {type(value).__name__}")
        if not 0 < value < float("inf"):
            raise ValueError(f"speed must be > 0 and finite (simulated s per s), not {value}")
        self._speed = float(value)
        self._substeps = _substeps_for(self._speed, self._dt, self._fps)

    @property
    def achieved_speed(self) -> float:
        """Simulated seconds per wall-clock second over the last 30 frames played (0
        before two were): :attr:`speed`, or less when this machine cannot step
        ``substeps`` steps per frame in time (shown in the widget's status line)."""
        with self._lock:
            return self._achieved()

    def _achieved(self) -> float:
        if len(self._played) < 2:
            return 0.0
        (w0, t0), (w1, t1) = self._played[0], self._played[-1]
        return (t1 - t0) / (w1 - w0) if w1 > w0 else 0.0

    @property
    def color_by(self) -> str | None:
        """None, ``"tension"``, ``"strain"`` or ``"body"``: what the springs are
        coloured by (``"body"``: each body of :meth:`springsim.System.bodies` in its
        own colour of matplotlib's tab10, springs and nodes; ``color_range`` is then
        unused)."""
        return self._color_by

    @color_by.setter
    def color_by(self, value: str | None) -> None:
        if value not in protocol.COLOR_BY:
            raise ValueError(f"color_by must be None, 'tension', 'strain' or 'body', not {value!r}")
        self._color_by = value

    @property
    def color_range(self) -> tuple[float, float] | None:
        """The colour scale ``(lo, hi)`` of ``color_by`` (blue at ``lo``, grey in the
        middle, red at ``hi``), or None for the automatic one: symmetric about zero,
        ``±max(|value|)`` but never narrower than a strain of 0.1 % (tension: that
        strain in the stiffest spring, see :func:`springsim.viewer.protocol.color_floor`),
        so that round-off is drawn grey, not red."""
        return self._color_range

    @color_range.setter
    def color_range(self, value: tuple[float, float] | None) -> None:
        if value is not None:
            if isinstance(value, str) or not isinstance(value, (tuple, list, np.ndarray)):
                raise TypeError(f"color_range must be None or (lo, hi), not {type(value).__name__}")
            if len(value) != 2 or not all(
                not isinstance(v, bool) and isinstance(v, (int, float, np.floating, np.integer))
                for v in value
            ):
                raise ValueError(f"color_range must be two numbers (lo, hi), not {value!r}")
            lo, hi = float(value[0]), float(value[1])
            if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
                raise ValueError(f"color_range must be finite with lo < hi, not {value!r}")
            value = (lo, hi)
        self._color_range = value

    @property
    def arrows(self) -> str | None:
        """None, ``"velocity"`` or ``"force"``: the arrows drawn at each node (or body,
        :attr:`arrows_per`), green for velocity, purple for force
        (:mod:`springsim.viewer.arrows`).

        Examples
        --------
        >>> import springsim as ss
        >>> rope = ss.string(5, length=1.0, mass=0.05, stiffness=50.0, dim=2)
        >>> viewer = ss.view(rope, arrows="velocity", arrow_scale=0.1)
        >>> viewer.arrows, viewer.arrows_per, viewer.arrow_scale
        ('velocity', 'node', 0.1)
        >>> viewer.arrows_per = "body"      # one arrow, at the rope's centre of mass
        >>> viewer.close()
        """
        return self._arrows

    @arrows.setter
    def arrows(self, value: str | None) -> None:
        arrow_options.check(value, self._arrows_per, None)
        if value != self._arrows:
            self._fitted_scale = float("inf")
        self._arrows = value

    @property
    def arrows_per(self) -> str:
        """``"node"`` (an arrow at each node) or ``"body"`` (one at each body's centre
        of mass: its velocity Σ m v / M, or the total force on it)."""
        return self._arrows_per

    @arrows_per.setter
    def arrows_per(self, value: str) -> None:
        arrow_options.check(self._arrows, value, None)
        if value != self._arrows_per:
            self._fitted_scale = float("inf")
        self._arrows_per = value

    @property
    def arrow_scale(self) -> float | None:
        """Metres drawn per m/s (velocity) or per N (force); None (the default): the
        largest scale that keeps the longest arrow so far within 15 % of the scene's
        size, shrinking as arrows grow (see :mod:`springsim.viewer.arrows`)."""
        return self._arrow_scale

    @arrow_scale.setter
    def arrow_scale(self, value: float | None) -> None:
        self._arrow_scale = arrow_options.check(self._arrows, self._arrows_per, value)
        self._fitted_scale = float("inf")

    @property
    def energy_bars(self) -> bool:
        """Whether the energy panel shows bars (kinetic, elastic, gravity, contact, gas,
        dissipated, total: the energy now, as PhET's simulations show it) instead of
        the trace over time."""
        return self._energy_bars

    @energy_bars.setter
    def energy_bars(self, value: bool) -> None:
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"energy_bars must be True or False, not {value!r}")
        self._energy_bars = bool(value)

    @property
    def contacts(self) -> bool:
        """Whether each frame draws the node pairs touching now
        (:meth:`springsim.System.contact_pairs`): a short pink line between the two
        nodes of each pair (the colour of the energy trace's ``contact``); the widget's
        "contacts" box.

        Examples
        --------
        >>> import springsim as ss
        >>> balls = ss.System(dim=2)
        >>> _ = balls.add_nodes([[0.0, 0.0], [0.15, 0.0]])
        >>> balls.radii = 0.1
        >>> viewer = ss.view(balls, contacts=True)
        >>> viewer.contacts, balls.contact_pairs().tolist()
        (True, [[0, 1]])
        >>> viewer.contacts = "yes"
        Traceback (most recent call last):
        ...
        TypeError: contacts must be True or False, not 'yes'
        >>> viewer.close()
        """
        return self._contacts

    @contacts.setter
    def contacts(self, value: bool) -> None:
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"contacts must be True or False, not {value!r}")
        self._contacts = bool(value)

    @property
    def sliders(self) -> dict[str, float]:
        """The sliders' values by name."""
        return {name: s.value for name, s in self._sliders.items()}

    @property
    def fps(self) -> float:
        """Frames per second the thread has sent lately (stepping, encoding, sending):
        at most the ``fps`` asked, fewer while a front end cannot take them (each
        "hold" it sends cuts the rate by :data:`RATE_CUT`; it grows back to ``fps`` by
        ``fps / RATE_RECOVERY`` a second, each frame then covering more steps)."""
        if len(self._rates) < 2:
            return 0.0
        return (len(self._rates) - 1) / (self._rates[-1] - self._rates[0])

    def play(self) -> None:
        """Start stepping on the background thread (a frame every ``substeps`` steps).

        Examples
        --------
        >>> import time
        >>> import springsim as ss
        >>> rope = ss.string(5, length=1.0, mass=0.05, stiffness=50.0, dim=2)
        >>> viewer = ss.view(rope)
        >>> viewer.play()
        >>> while rope.time == 0:
        ...     time.sleep(0.01)
        >>> viewer.pause()
        >>> stopped = rope.time
        >>> time.sleep(0.05)
        >>> rope.time == stopped, viewer.playing
        (True, False)
        >>> viewer.close()
        """
        self._act({"type": "play"})

    def pause(self) -> None:
        """Stop stepping; when it returns, no step is running or will start (see
        :meth:`play`)."""
        self._act({"type": "pause"})

    def step(self) -> None:
        """Advance one frame (``substeps`` steps of ``dt``) and send it.

        Examples
        --------
        >>> import springsim as ss
        >>> rope = ss.string(5, length=1.0, mass=0.05, stiffness=50.0, dim=2)
        >>> viewer = ss.view(rope, dt=1e-3, substeps=10)
        >>> viewer.step()
        >>> round(rope.time, 12)
        0.01
        >>> viewer.close()
        """
        self._act({"type": "step"})

    def reset(self) -> None:
        """Go back to the reset point: the state at creation or at :meth:`mark`
        (positions, velocities, pins, springs torn since, clock, energy books, gravity,
        wind, drag, spring parameters), and the sliders with it.

        Raises
        ------
        ValueError
            Nodes were added or removed since the reset point (nothing changes).

        Examples
        --------
        >>> import springsim as ss
        >>> rope = ss.string(5, length=1.0, mass=0.05, stiffness=50.0, dim=2)
        >>> viewer = ss.view(rope)
        >>> viewer.step()
        >>> viewer.reset()
        >>> rope.time, rope.positions[-1].tolist()
        (0.0, [1.0, 0.0])
        >>> viewer.close()
        """
        self._act({"type": "reset"})

    def mark(self) -> None:
        """Make the current state the one :meth:`reset` goes back to.

        Examples
        --------
        >>> import springsim as ss
        >>> rope = ss.string(5, length=1.0, mass=0.05, stiffness=50.0, dim=2)
        >>> viewer = ss.view(rope, dt=1e-3, substeps=10)
        >>> viewer.step()
        >>> viewer.mark()
        >>> viewer.step()
        >>> viewer.reset()
        >>> round(rope.time, 12)
        0.01
        >>> viewer.close()
        """
        self._act({"type": "mark"})

    def close(self) -> None:
        """Stop the thread, give back ``sim.track_energy`` as it was, close the widget."""
        if "_wake" not in self.__dict__ or self._closed:  # refused by __init__, or closed
            super().close()
            return
        with self._lock:
            self._closed = True
            self._playing = False
            self._wake.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        with self._lock:
            self._sim.track_energy = self._was_tracking
        super().close()

    def save_html(
        self, path: str | pathlib.Path, duration: float | None = None, speed: float = 1.0
    ) -> pathlib.Path:
        """Write a standalone HTML file that plays frames offline (nothing is fetched),
        coloured as the viewer colours them (``color_by``, ``color_range``), with its
        arrows (``arrows``, ``arrows_per``, ``arrow_scale``).

        Parameters
        ----------
        path : str or os.PathLike
            The file to write (replaced atomically).
        duration : float, optional
            Without it, the frames this viewer sent lately (up to ``record``). With
            it, a copy of the system stepped at the viewer's ``dt`` from now for
            ``duration`` seconds (the live system does not move), recorded as 30
            frames per second of playback (at most ``record``).
        speed : float
            Simulated seconds per second of playback: 1 (real time), 0.1 ten times
            slower.

        Returns
        -------
        pathlib.Path
            ``path``. The file holds the positions as base64 float32 (about 5.3 bytes
            per coordinate per frame) and the front end's code.

        Raises
        ------
        ValueError
            No duration and fewer than two frames sent yet; a duration below ``dt``; a
            speed not > 0.

        Examples
        --------
        >>> import pathlib, tempfile
        >>> import springsim as ss
        >>> rope = ss.string(5, length=1.0, mass=0.05, stiffness=50.0, dim=2)
        >>> viewer = ss.view(rope)
        >>> page = viewer.save_html(pathlib.Path(tempfile.mkdtemp()) / "rope.html", duration=1.0)
        >>> page.read_text().count("<script"), rope.time
        (2, 0.0)
        >>> viewer.close()
        """
        target = pathlib.Path(path_name(path))
        speed = check_speed(speed)
        if duration is not None:
            if isinstance(duration, bool) or not isinstance(duration, (int, float)):
                raise TypeError(f"duration must be a number, not {type(duration).__name__}")
            if not self._dt <= duration < float("inf"):
                raise ValueError(f"duration must be at least dt ({self._dt:g} s), not {duration}")
        with self._lock:  # the live system is read between steps
            dt, kept, method = self._dt, self._recording.maxlen or 2, self._method
            color_by, fixed = self._color_by, self._color_range
            arrows = (self._arrows, self._arrows_per, self._arrow_scale, self._fitted_scale)
            if duration is None:
                sim = self._sim
                size = sim.num_nodes * sim.dim * 4
                frames = [f for f in self._recording if len(f[1]) == size]
                span = frames[-1][0] - frames[0][0] if len(frames) > 1 else 0.0
                period = span / (len(frames) - 1) / speed if span > 0 else self._period
                scene = protocol.scene(sim)
                pinned = np.ascontiguousarray(sim.pinned, dtype=np.uint8).tobytes()
            else:
                sim = self._sim.copy()
        if duration is not None:
            count = min(kept, max(2, round(30 * duration / speed) + 1))
            frames = _run_frames(sim, float(duration), dt, count, color_by, fixed, arrows, method)
            period = duration / (count - 1) / speed
            scene = protocol.scene(sim)
            pinned = np.ascontiguousarray(sim.pinned, dtype=np.uint8).tobytes()
        if len(frames) < 2:
            raise ValueError("no frames recorded yet: play the viewer first, or pass duration=")
        write_html(target, scene, frames, period, pinned, color_by)
        return target

    # ------------------------------------------------------------ messages

    def _on_msg(self, _widget: Any, content: Any, buffers: Sequence[bytes]) -> None:
        # a bad message from the browser is shown there, not raised into the comm
        try:
            self._handle(content, buffers)
        except (TypeError, ValueError, IndexError, OverflowError, RuntimeError) as err:
            self._emit({"type": "error", "message": f"{type(err).__name__}: {err}"}, [])

    def _handle(self, message: Any, buffers: Sequence[bytes] | None = None) -> None:
        """Act on a message from the front end (``buffers``: none is expected)."""
        message = protocol.parse(message)
        with self._lock:
            self._browser = True
            self._heard = time.monotonic()
            self._wake.notify_all()  # a silent front end spoke again
            self._act(message)

    def _act(self, message: dict[str, Any]) -> None:
        """Do what a (checked) message asks: the front end's and the Python methods'."""
        kind = message["type"]
        with self._lock:
            if kind in ("hold", "resume", "alive"):  # the stream's pace: no reply
                if kind == "hold" and not self._held:
                    self._rate = max(1.0, RATE_CUT * self._rate)
                if kind != "alive":
                    self._held = kind == "hold"
                self._wake.notify_all()
                return
            if self._closed:
                raise RuntimeError("this viewer is closed")
            if kind == "hello":
                self._held = False  # a new page: whatever an old one asked is void
                self._rate = self._fps
                self._scene_key = ()
                self._send_state()
                self._emit(*self._trace.message())
                self._send_frame()
            elif kind in ("play", "pause"):
                self._playing = kind == "play"
                if self._playing:
                    self._heard = time.monotonic()  # from Python too: play for a while
                    self._held = False  # a page still behind holds again at its next frame
                    self.error = None
                    self._played.clear()
                    self._start_thread()
                self._wake.notify_all()
                self._send_state()
            elif kind == "step":
                self._advance()
                self._send_frame()
            elif kind == "reset":
                self._reset_point.restore(self._sim)
                self._fitted_scale = float("inf")
                self._played.clear()
                for slider in self._sliders.values():
                    slider.value = controls.make_slider(self._sim, slider.name).value
                self._grabbed.clear()
                self._send_state()
                self._send_frame()
            elif kind == "mark":
                self._reset_point = controls.Snapshot(self._sim)
            else:
                self._edit(kind, message)

    def _edit(self, kind: str, message: dict[str, Any]) -> None:
        sim = self._sim
        if kind in ("grab", "drag", "release", "pin"):
            node = protocol.node_index(message, sim.num_nodes)
            if kind == "grab":
                # held like a pin while the button is down; release restores its pin
                self._grabbed.setdefault(node, bool(sim.pinned[node]))
                sim.pin(node)
            elif kind == "drag":
                where = protocol.position(message, sim.dim)
                if node not in self._grabbed:
                    raise ValueError(f"message 'drag': node {node} is not grabbed")
                sim.positions[node] = where
            elif kind == "release":
                if not self._grabbed.pop(node, True):
                    sim.unpin(node)
            elif sim.pinned[node]:
                sim.unpin(node)
            else:
                sim.pin(node)
        elif kind == "slider":
            name = message["name"]
            if name not in self._sliders:
                raise ValueError(f"no slider {name!r}; this viewer has {list(self._sliders)}")
            controls.apply(sim, self._sliders[name], float(message["value"]))
            self._send_state()
        else:
            name = message["name"]
            if name not in protocol.SETTABLE:
                raise ValueError(
                    f"message 'set': name must be one of {', '.join(protocol.SETTABLE)}, "
                    f"not {name!r}"
                )
            value = message["value"]
            if name == "substeps" and isinstance(value, float) and value.is_integer():
                value = int(value)  # JSON numbers from the browser
            try:
                setattr(self, name, value)
            except (TypeError, ValueError):
                self._send_state()  # the page's field or menu shows what stays
                raise
            self._send_state()
        self._send_frame()

    # ------------------------------------------------------------ stepping

    def _advance(self, steps: int | None = None) -> None:
        """Step a frame (``substeps`` steps, or ``steps``), and measure its cost per
        step: the playing thread cuts its frames to it, and it tells whether the
        system is too stiff for an explicit method here (:func:`methods.stiff`; the
        page is sent the new state when that changes)."""
        steps = self._substeps if steps is None else steps
        began = time.perf_counter()
        try:
            self._sim.step(self._dt, steps=steps, method=self._method)
        except Exception as err:  # shown in the widget; the system was rolled back
            self._playing = False
            self.error = f"{type(err).__name__}: {err}"
            self._emit({"type": "error", "message": self.error}, [])
            self._send_state()
            return
        cost = (time.perf_counter() - began) / steps
        self._step_cost = cost if not self._step_cost else 0.8 * self._step_cost + 0.2 * cost
        if self._hint() != self._hint_shown:
            self._send_state()

    def _hint(self) -> str | None:
        """What the page shows beside its method menu: :data:`methods.STIFF_HINT` when
        the system is too stiff for the explicit method it is stepped with on this
        machine (:func:`methods.stiff`), else None."""
        method = self._method or self._sim.method
        if method in methods.STABLE_METHODS or self._step_cost <= 0:
            return None
        now = time.monotonic()
        if now - self._critical[1] >= 1.0:
            self._critical = (float(self._sim.critical_dt()), now)
        stiff = methods.stiff(method, self._step_cost, self._critical[0])
        return methods.STIFF_HINT if stiff else None

    def _start_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._loop, name="springsim-viewer", daemon=True)
            self._thread.start()

    def _waits(self) -> bool:
        """Whether the thread waits (until woken) instead of stepping a frame: while
        paused, while the front end holds the frames, and once a front end that spoke
        has been silent for :data:`protocol.ALIVE_TIMEOUT` seconds (its page is gone;
        any message, or :meth:`play`, wakes it). Without any front end (no message
        ever) frames go on."""
        if self._closed:
            return False
        if not self._playing or self._held:
            return True
        return self._browser and time.monotonic() - self._heard >= protocol.ALIVE_TIMEOUT

    def _loop(self) -> None:
        next_frame = time.perf_counter()
        while True:
            with self._lock:
                waited = False
                while self._waits():
                    self._wake.wait()
                    waited = True
                if waited:  # paced again from now, not from before the wait
                    next_frame = time.perf_counter()
                if self._closed:
                    return
                # the steps of a frame (more when frames are fewer than fps a second, so
                # that the speed stays), cut to what the kernel takes in a frame's time
                wanted = round(self._substeps * self._fps / self._rate)
                steps = _steps_per_frame(wanted, self._step_cost, 1.0 / self._rate)
                began = time.perf_counter()
                self._advance(steps)  # measures self._step_cost
                # paced in simulated time, a frame of `steps` steps every steps dt / speed
                # s, and never more than fps frames a second, nor more than the rate a
                # hold cut it to (the front end does not acknowledge: protocol.HOLD_LAG)
                period = max(steps * self._dt / self._speed, 1.0 / self._rate)
                gap = 1.0 / self._rate  # the least time to the next frame
                self._rate = min(self._fps, self._rate + self._fps * period / RATE_RECOVERY)
                self._played.append((time.perf_counter(), float(self._sim.time)))
                self._send_frame()
            sent = time.perf_counter()
            self._rates.append(sent)
            # a late frame is caught up (by at most one period), but the frames' steps
            # never start closer than 1 / rate: at most rate frames a second
            next_frame = max(next_frame + period, sent - period)
            time.sleep(max(0.0, max(next_frame, began + gap) - time.perf_counter()))

    # ------------------------------------------------------------ sending

    def _arrows_now(self) -> protocol.Arrows | None:
        """The frame's arrows (:mod:`springsim.viewer.arrows`), or None."""
        if self._arrows is None:
            return None
        arrows, self._fitted_scale = arrows_mod.frame_arrows(
            self._sim,
            self._arrows,
            self._arrows_per,
            self._arrow_scale,
            self._fitted_scale,
            self._collider_box,
        )
        return arrows

    def _emit(self, content: dict[str, Any], buffers: list[bytes]) -> None:
        self.send(content, buffers=buffers)
        for tap in list(self._taps):
            tap(content, buffers)

    def _send_state(self) -> None:
        self._hint_shown = self._hint()
        self._emit(
            {
                "type": "state",
                "playing": self._playing,
                "dt": self._dt,
                "substeps": self._substeps,
                "speed": self._speed,
                "color_by": self._color_by,
                "color_range": self._color_range,
                "arrows": self._arrows,
                "arrows_per": self._arrows_per,
                "arrow_scale": self._arrow_scale,
                "energy_bars": self._energy_bars,
                "contacts": self._contacts,
                "method": self._method or self._sim.method,
                "methods": list(_core.METHODS),
                "hint": self._hint_shown,
                "alive_every": protocol.ALIVE_EVERY,
                "sliders": [s.message() for s in self._sliders.values()],
                "error": self.error,
            },
            [],
        )

    def _send_frame(self) -> None:
        sim = self._sim
        # compared every frame: a collider moved or radii set between frames show
        key = protocol.scene_key(sim)
        if key != self._scene_key:
            self._scene_key = key
            scene = protocol.scene(sim)
            self._collider_box = scene[0]["bounds"]
            self._emit(*scene)
        self._frame += 1
        content, buffers = protocol.frame(
            sim,
            self._frame,
            self._color_by,
            self._color_range,
            self._arrows_now(),
            contacts=self._contacts,
        )
        if self._playing:  # what the status line shows beside the speed asked for
            content["achieved_speed"] = self._achieved()
        self._trace.add(content["time"], content["energy"])
        self._recording.append(recorded(content, buffers))
        self._emit(content, buffers)


def recorded(content: dict[str, Any], buffers: list[bytes]) -> Frame:
    """What a saved page keeps of a frame message: time, positions, energy, the spring
    values and their scale, and the arrows (their content and two buffers)."""
    values = buffers[2] if content["range"] is not None else None
    arrows = content["arrows"]
    return (
        content["time"],
        buffers[0],
        content["energy"],
        values,
        content["range"],
        (arrows, buffers[-2], buffers[-1]) if arrows is not None else None,
    )


def _run_frames(
    sim: Any,
    duration: float,
    dt: float,
    count: int,
    color_by: str | None,
    fixed: tuple[float, float] | None,
    arrows: tuple[str | None, str, float | None, float] = (None, "node", None, float("inf")),
    method: str | None = None,
) -> list[Frame]:
    """``count`` frames evenly spaced over ``duration`` seconds of stepping ``sim`` by
    ``method`` (None: ``sim.method``), with ``arrows`` (kind, per, scale, default scale
    so far) as the viewer draws them."""
    total = max(1, round(duration / dt))
    kind, per, scale, fitted = arrows
    bounds = protocol.scene(sim)[0]["bounds"] if kind is not None else None
    frames, done = [], 0
    for k in range(count):
        target = round(k * total / (count - 1))
        if target > done:
            sim.step(dt, steps=target - done, method=method)
            done = target
        shown = None
        if kind is not None:
            shown, fitted = arrows_mod.frame_arrows(sim, kind, per, scale, fitted, bounds)
        frames.append(recorded(*protocol.frame(sim, 0, color_by, fixed, shown)))
    return frames


def _substeps_for(speed: float, dt: float, fps: float) -> int:
    """The steps per frame that play ``speed`` simulated seconds per second at ``fps``
    frames per second: ``speed / (fps dt)`` rounded, in [1, 100000]."""
    return int(min(100000, max(1, round(speed / (fps * dt)))))


def _steps_per_frame(substeps: int, step_cost: float, budget: float) -> int:
    """The steps the playing thread takes in one frame: ``substeps``, cut to the steps
    that fit in ``budget`` wall seconds at ``step_cost`` seconds each (measured while
    playing; 0 before the first frame), at least one. The kernel's speed caps the
    frame's steps, never the speed asked for: frames keep coming at about the frame
    rate, each covering less simulated time (see :attr:`Viewer.achieved_speed`)."""
    if step_cost <= 0:
        return substeps
    return int(max(1, min(substeps, budget // step_cost)))
