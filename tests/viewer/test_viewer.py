"""The live viewer's Python side (issue 18): the messages it sends and acts on.

The widget is driven through ``_handle`` (what the browser's messages call) and the
messages it sends are caught by a tap; no browser here (tests/viewer/test_viewer_browser.py
has one). Expected states come from a copy of the system stepped directly, or from
the closed forms of symplectic Euler.
"""

import base64
import json
import math
import re
import sys
import time
from importlib import resources

import numpy as np
import pytest

import springsim as ss
from springsim.viewer import controls, protocol
from springsim.viewer.standalone import STATIC, front_end, static_text


class Tap:
    """The messages a viewer sent: (content, buffers)."""

    def __init__(self, viewer):
        self.sent = []
        viewer._taps.append(lambda content, buffers: self.sent.append((content, buffers)))

    def last(self, kind):
        return next(m for m in reversed(self.sent) if m[0]["type"] == kind)


@pytest.fixture
def rope():
    return ss.string(8, length=1.0, mass=0.08, stiffness=80.0, damping=0.01, dim=2)


@pytest.fixture
def viewer(rope):
    v = ss.view(
        rope, dt=1e-3, substeps=5, sliders=["gravity", "wind", "drag", "damping", "stiffness"]
    )
    yield v
    v.close()


def test_view_without_anywidget_names_the_package(monkeypatch, rope):
    monkeypatch.delitem(sys.modules, "springsim.viewer.widget", raising=False)
    monkeypatch.setitem(sys.modules, "anywidget", None)
    with pytest.raises(ImportError, match=r"pip install anywidget$"):
        ss.view(rope)


def test_the_installed_package_ships_the_front_end():
    folder = resources.files("springsim.viewer").joinpath("static")
    for name in STATIC:
        assert folder.joinpath(name).is_file(), name
    assert "export default { render }" in front_end()
    # nothing is fetched at run time: no URL is loaded, no module imported
    for name in STATIC:
        text = static_text(name)
        assert not re.search(r"\bimport\b[^(]|https?://|fetch\(", text), name


def test_frames_are_the_positions_as_float32(viewer, rope):
    tap = Tap(viewer)
    viewer._handle({"type": "hello"})
    scene, buffers = tap.last("scene")
    assert scene["dim"] == 2 and scene["nodes"] == rope.num_nodes
    assert np.array_equal(np.frombuffer(buffers[0], "<i4").reshape(-1, 2), rope.springs)
    for _ in range(3):
        viewer._handle({"type": "step"})
        content, buffers = tap.last("frame")
        assert all(isinstance(b, bytes) for b in buffers)  # binary, never JSON lists
        sent = protocol.decode_positions(buffers[0], 2)
        assert sent.dtype == np.float32 and np.array_equal(sent, rope.positions.astype(np.float32))
        assert np.array_equal(np.frombuffer(buffers[1], np.uint8), rope.pinned)
        assert content["time"] == rope.time
        e = rope.energy()
        assert (
            content["energy"]["total"] == e.total
            and content["energy"]["dissipated"] == rope.dissipated
        )
    assert len(json.dumps(content)) < 400  # the JSON part carries no per-node data


def test_step_advances_one_frame_of_substeps(viewer, rope):
    twin = rope.copy()
    viewer._handle({"type": "step"})
    twin.step(1e-3, steps=5)
    assert np.array_equal(rope.positions, twin.positions) and rope.time == twin.time


def test_play_steps_in_the_background_and_pause_stops_the_clock(viewer, rope):
    viewer._handle({"type": "play"})
    deadline = time.monotonic() + 10
    while rope.time < 0.05 and time.monotonic() < deadline:
        time.sleep(0.01)
    viewer._handle({"type": "pause"})
    stopped = rope.time
    assert stopped >= 0.05 and not viewer.playing
    time.sleep(0.2)
    assert rope.time == stopped
    # whole frames only: the clock is a multiple of substeps * dt
    frames = stopped / 5e-3
    assert abs(frames - round(frames)) < 1e-9


def test_python_edits_under_the_lock_while_it_plays(viewer, rope):
    viewer.play()
    for _ in range(100):
        with viewer.lock:  # without it the kernel would refuse a write mid-step
            rope.external_forces[-1] = (0.01, 0.0)
            rope.step(1e-4)
    viewer.pause()
    assert rope.time > 0


def test_grab_holds_the_node_where_dragged_and_release_lets_it_go(viewer, rope):
    node = rope.num_nodes - 1
    viewer._handle({"type": "grab", "node": node})
    assert rope.pinned[node]
    viewer._handle({"type": "drag", "node": node, "position": [0.3, -0.4]})
    assert rope.positions[node].tolist() == [0.3, -0.4]
    viewer._handle({"type": "step"})
    assert rope.positions[node].tolist() == [0.3, -0.4]  # held while the button is down
    viewer._handle({"type": "release", "node": node})
    assert not rope.pinned[node]
    twin = rope.copy()
    viewer._handle({"type": "step"})
    twin.step(1e-3, steps=5)  # free again: it moves as an unpinned node does
    assert np.array_equal(rope.positions, twin.positions)
    assert rope.positions[node].tolist() != [0.3, -0.4]
    # the anchor was pinned before it was grabbed: it stays pinned
    viewer._handle({"type": "grab", "node": 0})
    viewer._handle({"type": "drag", "node": 0, "position": [0.1, 0.0]})
    viewer._handle({"type": "release", "node": 0})
    assert rope.pinned[0] and rope.positions[0].tolist() == [0.1, 0.0]


def test_pin_message_toggles_a_pin(viewer, rope):
    viewer._handle({"type": "pin", "node": 3})
    assert rope.pinned[3]
    viewer._handle({"type": "pin", "node": 3})
    assert not rope.pinned[3]


def test_gravity_slider_drops_a_node_as_symplectic_euler_does():
    drop = ss.System(dim=2)
    drop.add_nodes([[0.0, 0.0]])
    v = ss.view(drop, dt=1e-3, substeps=10, sliders=["gravity"])
    assert v.sliders == {"gravity": pytest.approx(9.81)}
    v._handle({"type": "slider", "name": "gravity", "value": 20.0})
    assert drop.gravity.tolist() == [0.0, -20.0]
    v._handle({"type": "step"})
    v.close()
    # symplectic Euler under constant a: v_n = n a dt, x_n = a dt² n (n + 1) / 2
    n, dt = 10, 1e-3
    assert drop.positions[0, 1] == pytest.approx(-20.0 * dt**2 * n * (n + 1) / 2, rel=1e-12)
    assert drop.velocities[0, 1] == pytest.approx(-20.0 * n * dt, rel=1e-12)


def test_sliders_set_their_parameters(viewer, rope):
    stiffness = rope.stiffness.copy()
    viewer._handle({"type": "slider", "name": "wind", "value": 4.0})
    viewer._handle({"type": "slider", "name": "drag", "value": 0.5})
    viewer._handle({"type": "slider", "name": "damping", "value": 0.03})
    viewer._handle({"type": "slider", "name": "stiffness", "value": 2.0})
    viewer._handle({"type": "slider", "name": "stiffness", "value": 3.0})
    assert rope.wind.tolist() == [4.0, 0.0] and rope.drag == 0.5
    assert np.all(rope.damping == 0.03)
    assert np.allclose(rope.stiffness, 3.0 * stiffness, rtol=1e-15)


def test_a_slider_out_of_range_changes_nothing(viewer, rope):
    before = rope.gravity.copy()
    with pytest.raises(ValueError, match=r"slider 'gravity' takes values in \[0, 29.43\]"):
        viewer._handle({"type": "slider", "name": "gravity", "value": 100.0})
    with pytest.raises(ValueError, match="no slider 'mass'"):
        viewer._handle({"type": "slider", "name": "mass", "value": 1.0})
    assert rope.gravity.tolist() == before.tolist() and viewer.sliders["gravity"] == 9.81
    with pytest.raises(ValueError, match="the sliders are gravity, wind, drag"):
        ss.view(rope, sliders=["gravty"])


def test_reset_restores_the_state_at_creation_even_after_tearing():
    cloth = ss.cloth(8, 8, width=1.0, height=1.0, mass=0.1, stiffness=300.0, damping=0.01)
    cloth.break_strain = 0.1
    start = cloth.copy()
    v = ss.view(cloth, dt=5e-4, substeps=20, sliders=["stiffness"])
    v._handle({"type": "grab", "node": 0})
    v._handle({"type": "drag", "node": 0, "position": [-1.0, 1.5, 0.0]})  # tears it
    v._handle({"type": "pin", "node": 5})
    v._handle({"type": "slider", "name": "stiffness", "value": 2.0})
    for _ in range(5):
        v._handle({"type": "step"})
    assert cloth.num_springs < start.num_springs
    v._handle({"type": "reset"})
    for name in ("positions", "velocities", "pinned", "springs", "stiffness", "rest_lengths"):
        assert np.array_equal(getattr(cloth, name), getattr(start, name)), name
    assert cloth.time == 0.0 and cloth.dissipated == 0.0 and v.sliders == {"stiffness": 1.0}
    # and it steps exactly as the untouched copy
    v._handle({"type": "step"})
    start.step(5e-4, steps=20)
    v.close()
    assert np.array_equal(cloth.positions, start.positions)


def test_mark_moves_the_reset_point(viewer, rope):
    viewer.step()
    viewer.mark()
    here = rope.positions.copy()
    viewer.step()
    viewer.reset()
    assert np.array_equal(rope.positions, here)


def test_set_changes_speed_and_colour(viewer, rope):
    tap = Tap(viewer)
    viewer._handle({"type": "set", "name": "dt", "value": 2e-3})
    viewer._handle({"type": "set", "name": "substeps", "value": 3.0})
    viewer._handle({"type": "set", "name": "color_by", "value": "tension"})
    state = tap.last("state")[0]
    assert (state["substeps"], state["dt"], state["color_by"]) == (3, 2e-3, "tension")
    # the speed those make at 60 frames per second: 3 steps of 2 ms each 1/60 s
    assert state["speed"] == pytest.approx(3 * 2e-3 * 60, rel=1e-12)
    viewer._handle({"type": "step"})
    assert rope.time == pytest.approx(6e-3, rel=1e-12)
    content, buffers = tap.last("frame")
    tensions = np.frombuffer(buffers[2], np.float32)
    assert np.array_equal(tensions, rope.spring_tensions().astype(np.float32))
    # the largest |tension|, but at least the tension of a 0.1 % strain in a spring
    # (stiffness 80 N/m, rest length 1/7 m)
    top = max(np.abs(rope.spring_tensions()).max(), 1e-3 * 80.0 / 7)
    assert content["range"] == pytest.approx([-top, top], rel=1e-12)
    viewer._handle({"type": "set", "name": "color_by", "value": "strain"})
    strain = np.frombuffer(tap.last("frame")[1][2], np.float32)
    assert np.allclose(strain, rope.spring_lengths() / rope.rest_lengths - 1, atol=1e-7)


@pytest.mark.parametrize(
    ("message", "error", "match"),
    [
        ([1, 2], TypeError, "a viewer message is a dict, not list"),
        ({"type": "jump"}, ValueError, "unknown viewer message type 'jump'; known: hello"),
        ({"type": "drag", "node": 1}, ValueError, "message 'drag' lacks position"),
        ({"type": "grab", "node": 99}, IndexError, "node 99 out of range for 8 nodes"),
        ({"type": "grab", "node": 1.0}, TypeError, "node must be an int"),
        ({"type": "drag", "node": 1, "position": [0, 0]}, ValueError, "node 1 is not grabbed"),
        ({"type": "set", "name": "dt", "value": -1}, ValueError, "dt must be > 0"),
        ({"type": "set", "name": "dt", "value": "1"}, TypeError, "value must be a number"),
        ({"type": "set", "name": "mass", "value": 1}, ValueError, "dt, substeps, speed, color_by"),
        ({"type": "set", "name": "speed", "value": 0}, ValueError, "speed must be > 0"),
        ({"type": "set", "name": "color_by", "value": "speed"}, ValueError, "color_by must be"),
        ({"type": "slider", "name": "drag", "value": float("nan")}, ValueError, "finite"),
        # hostile or broken front ends: every field is checked before any is used
        ({"type": "ack", "frame": 3}, ValueError, "unknown viewer message type 'ack'"),
        ({"type": "hold", "frame": float("inf")}, ValueError, "'hold' has unknown keys frame"),
        ({"type": "resume", "lag": float("nan")}, ValueError, "'resume' has unknown keys lag"),
        ({"type": "alive", "until": 1e300}, ValueError, "'alive' has unknown keys until"),
        ({"type": "grab", "node": -1}, ValueError, "node must be in"),
        ({"type": "grab", "node": 1, "extra": 0}, ValueError, "unknown keys extra"),
        ({"type": 3}, ValueError, "unknown viewer message type 3"),
        ({"type": "slider", "name": "drag", "value": 1e400}, ValueError, "finite"),
        ({"type": "drag", "node": 1, "position": [0, float("nan")]}, ValueError, "finite"),
        ({"type": "drag", "node": 1, "position": "far"}, ValueError, "list of 2 or 3"),
        ({"type": "set", "name": "substeps", "value": float("inf")}, ValueError, "finite"),
        ({"type": "set", "name": "color_by", "value": 1}, TypeError, "str or null"),
        ({"type": "set", "name": ["dt"], "value": 1}, TypeError, "name must be a str"),
    ],
)
def test_bad_messages_raise_and_change_nothing(viewer, rope, message, error, match):
    before = (rope.positions.copy(), rope.pinned.copy(), viewer.dt, viewer.color_by)
    with pytest.raises(error, match=match):
        viewer._handle(message)
    assert np.array_equal(rope.positions, before[0]) and np.array_equal(rope.pinned, before[1])
    assert (viewer.dt, viewer.color_by) == before[2:]


def test_a_hostile_message_is_answered_with_an_error_and_changes_nothing(viewer, rope):
    """Through the comm's handler, as the browser's messages arrive: no exception
    escapes it, and a "hold" or "resume" with junk in it neither holds nor resumes."""
    tap = Tap(viewer)
    viewer._on_msg(viewer, {"type": "hello"}, [])
    for junk in (float("inf"), 1e300, 10**300, "x", None):
        viewer._on_msg(viewer, {"type": "hold", "lag": junk}, [])
        assert "unknown keys lag" in tap.last("error")[0]["message"]
        assert not viewer._held
    viewer._on_msg(viewer, {"type": "hold"}, [])
    viewer._on_msg(viewer, {"type": "resume", "now": True}, [])
    assert viewer._held  # still held: the bad resume was refused
    viewer._on_msg(viewer, {"type": "resume"}, [])
    assert not viewer._held


def test_a_failed_step_pauses_and_reports(rope):
    v = ss.view(rope, dt=0.5, substeps=50)  # far above critical_dt: it blows up
    tap = Tap(v)
    start = rope.positions.copy()
    v._handle({"type": "step"})
    v.close()
    assert "UnstableError" in v.error and tap.last("error")[0]["message"] == v.error
    assert np.array_equal(rope.positions, start)  # the step rolled back


def test_save_html_embeds_the_frames_and_the_front_end(viewer, rope, tmp_path):
    with pytest.raises(ValueError, match="no frames recorded yet"):
        viewer.save_html(tmp_path / "none.html")
    sent = []
    for _ in range(4):
        viewer.step()
        sent.append(rope.positions.astype(np.float32))
    path = viewer.save_html(tmp_path / "run.html")
    text = path.read_text()
    data = json.loads(re.search(r'type="application/json">(.*?)</script>', text, re.S)[1])
    frames = np.frombuffer(base64.b64decode(data["frames"]), np.float32).reshape(-1, 8, 2)
    assert np.array_equal(frames, np.array(sent)) and len(data["times"]) == 4
    assert static_text("player.js") in text and "function render(" in text
    assert "src=" not in text and "https://" not in text  # nothing to fetch
    # with a duration: a copy is stepped, the live system stays where it is
    here = rope.positions.copy()
    viewer.save_html(tmp_path / "ahead.html", duration=0.5)
    assert np.array_equal(rope.positions, here)
    text = (tmp_path / "ahead.html").read_text()
    data = json.loads(re.search(r'type="application/json">(.*?)</script>', text, re.S)[1])
    # 30 frames per simulated second, the first now; played in real time
    assert len(data["times"]) == 16 and data["period"] == pytest.approx(0.5 / 15)
    # at whole steps: each within dt / 2 of its place
    ideal = data["times"][0] + np.arange(16) * 0.5 / 15
    assert np.abs(np.array(data["times"]) - ideal).max() <= 0.5e-3 + 1e-12
    twin = rope.copy()
    twin.step(1e-3, steps=500)
    last = np.frombuffer(base64.b64decode(data["frames"]), np.float32)[-16:]
    assert np.array_equal(last, twin.positions.astype(np.float32).ravel())


def test_viewer_arguments_are_checked(rope):
    with pytest.raises(TypeError, match="not ndarray"):
        ss.view(np.zeros(3))
    with pytest.raises(TypeError, match="sliders is a list of names"):
        ss.view(rope, sliders="gravity")
    with pytest.raises(ValueError, match="substeps must be in"):
        ss.view(rope, substeps=0)
    with pytest.raises(ValueError, match="fps must be"):
        ss.view(rope, fps=0)


def test_default_speed_is_stable_and_real_time(rope):
    v = ss.view(rope)
    v.close()
    assert v.dt <= 0.5 * rope.critical_dt() and v.speed == 1.0
    # a frame's steps span a frame's time (1/60 s) to within half a step
    assert abs(v.substeps * v.dt - 1 / 60) <= v.dt / 2


def test_substeps_follow_from_the_speed_the_same_for_every_viewer():
    # no timing decides them: eight viewers made at once agree (timed, they got
    # [42, 144, ..., 113])
    cloth = ss.cloth(30, 30, width=1.0, height=1.0, mass=0.2, stiffness=500.0)
    viewers = [ss.view(cloth, dt=1e-4) for _ in range(8)]
    got = [v.substeps for v in viewers]
    slow = [ss.view(cloth, dt=1e-4, speed=0.1).substeps for _ in range(2)]
    for v in viewers:
        v.close()
    # real time at 60 frames per second: 1 / (60 × 1e-4) = 166.7 steps; at 0.1: 16.7
    assert got == [167] * 8 and slow == [17, 17]
    v = ss.view(cloth, dt=1e-3, speed=0.01)  # less than a step per frame
    assert v.substeps == 1
    v.speed = 3.0
    assert v.substeps == 50 and v.speed == 3.0
    v.dt = 2e-4  # the speed stays, the steps per frame follow it
    assert v.speed == 3.0 and v.substeps == 250
    v.substeps = 100  # setting the steps sets the speed: 100 × 2e-4 × 60
    assert v.speed == pytest.approx(1.2, rel=1e-12)
    for bad, error in ((0, ValueError), (float("inf"), ValueError), ("1", TypeError)):
        with pytest.raises(error, match="speed must be"):
            v.speed = bad
    assert v.speed == pytest.approx(1.2, rel=1e-12)
    v.close()
    with pytest.raises(ValueError, match="speed or substeps, not both"):
        ss.view(cloth, speed=1.0, substeps=10)


def test_play_keeps_to_the_speed_asked_and_reports_it(rope):
    # a small rope steps far faster than real time: the thread waits between frames,
    # each of substeps steps every substeps dt / speed wall seconds
    v = ss.view(rope, dt=1e-3, speed=0.5)  # 8 steps (8 ms) a frame: 60 per second
    assert v.substeps == 8 and v.achieved_speed == 0.0
    v.play()
    deadline = time.monotonic() + 10
    while rope.time < 0.05 and time.monotonic() < deadline:
        time.sleep(0.01)
    wall0, sim0 = time.perf_counter(), rope.time
    time.sleep(0.6)
    wall1, sim1 = time.perf_counter(), rope.time
    reported = v.achieved_speed
    v.pause()
    v.close()
    measured = (sim1 - sim0) / (wall1 - wall0)
    # never faster than asked: at most one frame (8 ms) early over the 0.6 s measured
    assert measured <= 0.5 + 0.008 / 0.6 + 1e-9
    # and the report is the clock's own rate over its last 30 frames (0.5 s): the
    # same as measured here, to within a frame at each end of either window
    assert reported == pytest.approx(measured, abs=4 * 0.008 / 0.5)
    assert reported > 0.1  # it did play (a loose bound: the machine is shared)


def test_a_slow_kernel_cuts_the_steps_of_a_frame_not_the_speed_asked():
    from springsim.viewer.widget import _steps_per_frame

    # 167 steps asked a frame; at 1 ms a step only 16 fit in a 1/60 s frame
    assert _steps_per_frame(167, 1e-3, 1 / 60) == 16
    assert _steps_per_frame(167, 1e-6, 1 / 60) == 167  # a fast kernel: all of them
    assert _steps_per_frame(167, 1.0, 1 / 60) == 1  # at least one
    assert _steps_per_frame(167, 0.0, 1 / 60) == 167  # not measured yet


def test_slider_ranges_follow_the_system():
    s = ss.System(dim=3)
    s.add_nodes([[0, 0, 0]])
    s.gravity = 0
    g = controls.make_slider(s, "gravity")
    w = controls.make_slider(s, "wind")
    assert g.direction.tolist() == [0, -1, 0] and (g.low, g.high, g.value) == (0, 30, 0)
    assert w.direction.tolist() == [0, 0, 1] and w.high == 20


def test_the_energy_trace_keeps_the_books(rope):
    # the viewer turns track_energy on (as run() does) so that total + dissipated is
    # conserved to the integrator's error: symplectic Euler's is first order in dt,
    # here (dt = 1e-4 s, 0.2 s of a falling damped chain) below 1e-3 of the energy moved
    assert not rope.track_energy
    rope.drag = 0.05  # N·s/m per node: the air takes a few percent
    v = ss.view(rope, dt=1e-4, substeps=100)
    tap = Tap(v)
    for _ in range(20):
        v.step()
    v.close()
    assert not rope.track_energy  # as it was
    energies = [c["energy"] for c, _ in tap.sent if c["type"] == "frame"]
    books = np.array([e["total"] + e["dissipated"] for e in energies])
    moved = max(abs(e["gravity"]) for e in energies)
    assert energies[-1]["dissipated"] > 1e-2 * moved  # the air took something
    assert np.abs(books).max() < 1e-3 * moved  # it started at 0 J: a level chain at rest


@pytest.mark.parametrize(
    "name",
    ["entry", "widget", "methods", "protocol", "controls", "standalone", "snapshot", "arrows"],
)
def test_viewer_docstring_examples(name):
    # tests/repository/test_docs.py runs the examples of springsim's top-level modules; these are
    # one level down
    import doctest
    import importlib

    module = importlib.import_module(f"springsim.viewer.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def frames_sent(tap):
    """(frame number, kernel's send time, simulated time) of each frame sent."""
    return [(c["frame"], c["sent"], c["time"]) for c, _ in list(tap.sent) if c["type"] == "frame"]


def wait_until(condition, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_frames_go_on_without_acknowledgements_at_most_fps_at_the_speed_asked(rope):
    # no front end answers: frames are never waited for. dt = 1 ms and speed 0.028 at
    # 20 frames/s round to 1 step a frame, which the speed alone would pace every
    # 1e-3 / 0.028 = 35.7 ms (28 frames/s): the cap keeps them 1/20 s apart
    v = ss.view(rope, dt=1e-3, speed=0.028, fps=20)
    assert v.substeps == 1
    tap = Tap(v)
    v.play()
    time.sleep(1.0)
    v.pause()
    v.close()
    sent = frames_sent(tap)
    (n0, s0, t0), (n1, s1, t1) = sent[0], sent[-1]
    assert n1 - n0 == len(sent) - 1 >= 5  # it played, every frame sent
    # the frames' steps start at least 1/20 s apart (a late frame is not caught up by
    # a burst): n frames are sent over at least (n - 1) / 20 s, less the first one's
    # stepping (1 step of an 8-node rope: microseconds; 2 ms allowed)
    assert (len(sent) - 1) / 20 <= s1 - s0 + 2e-3
    # one step a frame: 1 ms of simulated time each, i.e. 0.02 simulated s per wall s
    assert t1 - t0 == pytest.approx(1e-3 * (len(sent) - 1), rel=1e-9)

    # and a speed the frame rate allows is kept: 8 steps of 1 ms every 1/60 s asked
    # for 0.5 (8 × 1e-3 × 60 = 0.48 played): never faster than asked, at most one
    # frame early over the span; not slower than a fifth of it (a shared machine)
    rope2 = rope.copy()
    v = ss.view(rope2, dt=1e-3, speed=0.5)
    tap = Tap(v)
    v.play()
    time.sleep(1.0)
    v.pause()
    v.close()
    sent = frames_sent(tap)
    (_, s0, t0), (_, s1, t1) = sent[0], sent[-1]
    assert (len(sent) - 1) / 60 <= s1 - s0 + 2e-3  # at most 60 a second (as above)
    assert 0.1 < (t1 - t0) / (s1 - s0) <= 0.5 + 0.008 / (s1 - s0)


def test_hold_stops_the_stepping_and_the_frames_and_resume_restarts_them(rope):
    viewer = ss.view(rope, dt=1e-3, substeps=5, fps=30)
    tap = Tap(viewer)
    viewer._handle({"type": "hello"})
    viewer._handle({"type": "play"})
    wait_until(lambda: len(frames_sent(tap)) >= 5)
    viewer._handle({"type": "hold"})  # under the lock: no frame is being stepped now
    held = (len(frames_sent(tap)), rope.time)
    time.sleep(0.4)  # 12 frames' time
    assert (len(frames_sent(tap)), rope.time) == held and viewer.playing
    viewer._handle({"type": "resume"})
    wait_until(lambda: len(frames_sent(tap)) >= held[0] + 5)
    viewer._handle({"type": "hold"})
    again = (len(frames_sent(tap)), rope.time)
    time.sleep(0.2)
    assert (len(frames_sent(tap)), rope.time) == again
    viewer.play()  # play (from Python or a page) clears a hold: a page still behind
    wait_until(lambda: len(frames_sent(tap)) >= again[0] + 5)  # holds again by itself
    viewer._handle({"type": "pause"})
    viewer.close()
    numbers = [n for n, _, _ in frames_sent(tap)]
    assert numbers == list(range(1, len(numbers) + 1))  # none lost, none skipped
    assert rope.time > again[1] > held[1]


def test_a_hold_cuts_the_frame_rate_and_each_frame_covers_more_steps(rope):
    # a front end that could not keep up: the kernel sends RATE_CUT as many frames a
    # second after it, each of substeps × fps / rate steps (the speed stays), and
    # the rate grows back by fps / RATE_RECOVERY a second
    from springsim.viewer.widget import RATE_CUT, RATE_RECOVERY

    viewer = ss.view(rope, dt=1e-3, substeps=4, fps=30)
    tap = Tap(viewer)
    viewer._handle({"type": "hello"})
    viewer._handle({"type": "play"})
    wait_until(lambda: len(frames_sent(tap)) >= 3)
    viewer._handle({"type": "hold"})
    viewer._handle({"type": "hold"})  # a second hold before a resume cuts nothing more
    assert viewer._rate == RATE_CUT * 30 == 24
    count = len(frames_sent(tap))
    viewer._handle({"type": "resume"})
    wait_until(lambda: len(frames_sent(tap)) >= count + 10)
    viewer._handle({"type": "pause"})
    viewer.close()
    after = frames_sent(tap)[count:]
    # 10 frames (about 0.4 s) after: the rate grew by at most 30 × 0.5 / 60 = 0.25 a
    # second of play, so it stays in [24, 26.7), where round(4 × 30 / rate) = 5 steps
    assert 24 <= viewer._rate < 4 * 30 / 4.5 and RATE_RECOVERY == 60
    steps = np.diff([t for _, _, t in after[:10]]) / 1e-3
    assert np.allclose(steps, 5, atol=1e-6), steps
    # and 5 steps at least 1/24.25 s apart (the rate grew by at most 0.25 a second)
    sends = [s for _, s, _ in after[:10]]
    assert 9 / 24.25 <= sends[-1] - sends[0] + 2e-3


def test_a_front_end_that_goes_silent_stops_the_stepping(rope, monkeypatch):
    # a page that spoke and then says nothing (not even "alive") for ALIVE_TIMEOUT
    # seconds is gone: the thread stops stepping, and any message wakes it
    monkeypatch.setattr(protocol, "ALIVE_TIMEOUT", 0.3)
    viewer = ss.view(rope, dt=1e-3, substeps=5, fps=30)
    tap = Tap(viewer)
    viewer._handle({"type": "hello"})
    viewer._handle({"type": "play"})
    time.sleep(0.6)  # silent past 0.3 s: stopped (by about 0.3 s plus a frame)
    stopped = (len(frames_sent(tap)), rope.time)
    assert stopped[0] >= 3  # it played first
    time.sleep(0.3)
    assert (len(frames_sent(tap)), rope.time) == stopped and viewer.playing
    viewer._handle({"type": "alive"})
    wait_until(lambda: len(frames_sent(tap)) >= stopped[0] + 3)
    time.sleep(0.5)  # silent again: stopped again
    again = rope.time
    time.sleep(0.3)
    assert rope.time == again
    viewer.play()  # from Python: plays again for ALIVE_TIMEOUT
    wait_until(lambda: rope.time > again)
    viewer.close()


def test_a_history_saves_as_html(tmp_path):
    rope = ss.string(6, length=1.0, mass=0.06, stiffness=60.0, damping=0.02, dim=2)
    history = rope.run(1.0, 1e-3, record_every=10, frames=21, progress=False)
    text = history.save_html(tmp_path / "run.html").read_text()
    data = json.loads(re.search(r'type="application/json">(.*?)</script>', text, re.S)[1])
    frames = np.frombuffer(base64.b64decode(data["frames"]), np.float32).reshape(21, 6, 2)
    assert np.array_equal(frames, history.frames.astype(np.float32))
    assert data["times"] == history.frame_times.tolist()
    assert data["period"] == pytest.approx(0.05)  # 1 s in 20 intervals: real time
    # frames fall on records here (every 50 steps, records every 10): no interpolation
    at = np.searchsorted(history.times, history.frame_times)
    assert [e["kinetic"] for e in data["energies"]] == history.kinetic[at].tolist()
    assert [e["dissipated"] for e in data["energies"]] == history.dissipated[at].tolist()
    pinned = np.frombuffer(base64.b64decode(data["pinned"]), np.uint8)
    assert pinned.tolist() == history.frame_pinned[0].tolist()
    short = rope.run(0.01, 1e-3, progress=False)
    with pytest.raises(ValueError, match="run\\(..., frames=F\\) records them"):
        short.save_html(tmp_path / "short.html")


def scenes(tap):
    return [m for m in tap.sent if m[0]["type"] == "scene"]


def test_the_scene_carries_collider_triangles_and_radii_as_float32():
    from springsim.colliders import collider_triangles

    sim = ss.cloth(4, 4, width=1.0, height=1.0, mass=0.1, stiffness=50.0)
    sim.add_box([0.5, -1.0, 0.5], [0.3, 0.2, 0.1])
    sim.add_capsule([0.0, -2.0, 0.0], [1.0, -2.0, 0.0], 0.1)
    mesh = sim.add_mesh_collider([[0, -3, 0], [1, -3, 0], [0, -3, 1]], [[0, 1, 2]])
    viewer = ss.view(sim, dt=1e-3, substeps=1)
    try:
        tap = Tap(viewer)
        viewer._handle({"type": "hello"})
        content, buffers = tap.last("scene")
        expected = collider_triangles(sim).astype(np.float32)
        assert content["triangles"] == len(expected) > 12 + 1  # a box, a capsule, a triangle
        sent = np.frombuffer(buffers[2], "<f4").reshape(-1, 3, 3)
        assert np.array_equal(sent, expected)
        # the box's triangles have its 8 corners, centre ± half extents (independent of
        # collider_triangles: the box is the first collider, its 12 triangles first)
        corners = {tuple(v) for v in sent[:12].reshape(-1, 3).tolist()}
        signs = [(a, b, c) for a in (-1, 1) for b in (-1, 1) for c in (-1, 1)]
        want = {
            tuple(
                np.float32(x).item()
                for x in np.array([0.5, -1.0, 0.5]) + np.array(s) * [0.3, 0.2, 0.1]
            )
            for s in signs
        }
        assert corners == want
        # no radius anywhere: no radii buffer
        assert content["radii"] is False and len(buffers) == 3
        # an unchanged scene is not sent again with each frame
        count = len(scenes(tap))
        viewer.step()
        viewer.step()
        assert len(scenes(tap)) == count
        # a mesh moved between frames is sent again, where it went
        mesh.vertices = mesh.vertices + [0.0, 0.5, 0.0]
        viewer.step()
        assert len(scenes(tap)) == count + 1
        sent = np.frombuffer(scenes(tap)[-1][1][2], "<f4").reshape(-1, 3, 3)
        assert np.array_equal(sent[-1], np.float32([[0, -2.5, 0], [1, -2.5, 0], [0, -2.5, 1]]))
        # radii set: sent too, as float32 per node
        sim.radii = np.linspace(0.0, 0.05, sim.num_nodes)
        viewer.step()
        content, buffers = scenes(tap)[-1]
        assert len(scenes(tap)) == count + 2 and content["radii"] is True
        assert np.array_equal(np.frombuffer(buffers[3], "<f4"), sim.radii.astype(np.float32))
    finally:
        viewer.close()


def embedded(path):
    text = path.read_text()
    return json.loads(re.search(r'type="application/json">(.*?)</script>', text, re.S)[1])


def test_saved_html_carries_the_triangles_and_radii(tmp_path):
    rope = ss.string(5, length=1.0, mass=0.05, stiffness=50.0, dim=2)
    rope.add_box([0.5, -0.5], [0.2, 0.1])
    rope.add_capsule([0.0, -1.0], [1.0, -1.0], 0.05)
    rope.radii = [0.0, 0.05, 0.1, 0.0, 0.02]
    history = rope.run(0.2, 1e-3, frames=5, progress=False)
    viewer = ss.view(rope)
    try:
        live = embedded(viewer.save_html(tmp_path / "live.html", duration=0.1))
    finally:
        viewer.close()
    for data, triangles, radii in (
        (live, history.collider_triangles, rope.radii),
        (
            embedded(history.save_html(tmp_path / "run.html")),
            history.collider_triangles,
            history.radii,
        ),
    ):
        assert data["scene"]["triangles"] == len(triangles) > 2 and data["scene"]["radii"]
        sent = np.frombuffer(base64.b64decode(data["triangles"]), "<f4").reshape(-1, 3, 2)
        assert np.array_equal(sent, triangles.astype(np.float32))
        assert np.frombuffer(base64.b64decode(data["radii"]), "<f4").tolist() == [
            np.float32(r).item() for r in radii
        ]
    # a run without radii and colliders: no radii entry, no triangles
    plain = ss.string(3, length=1.0, mass=0.03, stiffness=30.0, dim=2)
    data = embedded(plain.run(0.1, 1e-3, frames=3, progress=False).save_html(tmp_path / "p.html"))
    assert data["radii"] is None and data["triangles"] == "" and not data["scene"]["radii"]


def falling_cloth():
    """A cloth with no pin, falling freely: each spring keeps its rest length, up to
    round-off (its nodes all move alike)."""
    cloth = ss.cloth(6, 6, width=1.0, height=1.0, mass=0.1, stiffness=300.0)
    cloth.pinned = False
    return cloth


@pytest.mark.parametrize("color_by", ["strain", "tension"])
def test_round_off_is_drawn_neutral_not_red(color_by):
    cloth = falling_cloth()
    v = ss.view(cloth, dt=1e-3, substeps=20, color_by=color_by)
    tap = Tap(v)
    for _ in range(3):
        v.step()
    v.close()
    content, buffers = tap.last("frame")
    values = np.frombuffer(buffers[2], np.float32)
    exact = cloth.spring_lengths() / cloth.rest_lengths - 1  # round-off only
    assert np.abs(exact).max() < 1e-12 and cloth.velocities[:, 1].max() < -0.5
    # the scale's floor: 0.1 % strain, or the tension it gives the stiffest spring
    # (stiffness × rest length × 1e-3), not the round-off's own size
    stiff = (cloth.stiffness * cloth.rest_lengths).max()
    floor = 1e-3 if color_by == "strain" else 1e-3 * stiff
    assert content["range"] == pytest.approx([-floor, floor], rel=1e-12)
    # every spring in the middle (grey) level of 21, as viewer.js computes it:
    # round((v - lo) / (hi - lo) * 20)
    lo, hi = content["range"]
    assert np.rint((values - lo) / (hi - lo) * 20).tolist() == [10] * cloth.num_springs
    assert protocol.color_index(values, content["range"]).tolist() == [10] * cloth.num_springs


def test_a_fixed_colour_range_is_sent_as_given(rope):
    v = ss.view(rope, dt=1e-3, substeps=5, color_by="strain", color_range=(-0.01, 0.03))
    tap = Tap(v)
    v.step()
    assert tap.last("frame")[0]["range"] == [-0.01, 0.03]
    v.color_range = None
    v.step()
    top = max(np.abs(rope.spring_lengths() / rope.rest_lengths - 1).max(), 1e-3)
    assert tap.last("frame")[0]["range"] == pytest.approx([-top, top], rel=1e-6)
    for bad, error in (
        ((1, 0), ValueError),
        ((0, float("nan")), ValueError),
        ("0 1", TypeError),
        ((0, 1, 2), ValueError),
        ((True, 2), ValueError),
    ):
        with pytest.raises(error, match="color_range must be"):
            v.color_range = bad
    assert v.color_range is None
    v.close()


def test_save_html_keeps_the_colouring_and_plays_at_the_speed_asked(tmp_path):
    rope = ss.string(6, length=1.0, mass=0.06, stiffness=60.0, dim=2, direction=(1, 0))
    v = ss.view(rope, dt=1e-3, substeps=10, color_by="tension", color_range=(-0.5, 2.0))
    for _ in range(3):
        v.step()
    recorded = embedded(v.save_html(tmp_path / "live.html", speed=0.5))
    twin = rope.copy()
    ahead = embedded(v.save_html(tmp_path / "ahead.html", duration=0.2, speed=0.25))
    v.close()
    # the recorded frames: their tensions, on the fixed scale, 10 ms apart played
    # at half speed (20 ms each)
    assert recorded["color_by"] == "tension" and recorded["ranges"] == [[-0.5, 2.0]] * 3
    sent = np.frombuffer(base64.b64decode(recorded["values"]), np.float32)[-5:]
    assert np.array_equal(sent, rope.spring_tensions().astype(np.float32))
    assert recorded["period"] == pytest.approx(0.02, rel=1e-9)
    # stepped ahead 0.2 s at a quarter speed: 0.8 s of playback, 30 frames a second
    assert len(ahead["times"]) == 25 and ahead["period"] == pytest.approx(0.2 / 24 / 0.25)
    twin.step(1e-3, steps=200)
    last = np.frombuffer(base64.b64decode(ahead["values"]), np.float32)[-5:]
    assert np.array_equal(last, twin.spring_tensions().astype(np.float32))
    with pytest.raises(ValueError, match="speed must be > 0"):
        ss.view(rope).save_html(tmp_path / "x.html", duration=0.1, speed=0)


def test_a_saved_history_keeps_strain_colours_and_speed(tmp_path):
    from springsim.viewer.standalone import save_history_html

    rope = ss.string(6, length=1.0, mass=0.06, stiffness=60.0, damping=0.02, dim=2)
    history = rope.run(0.5, 1e-3, frames=11, progress=False)
    data = embedded(save_history_html(history, tmp_path / "h.html", color_by="strain", speed=0.5))
    values = np.frombuffer(base64.b64decode(data["values"]), np.float32).reshape(11, -1)
    assert np.array_equal(values, history.frame_strains.astype(np.float32))
    # each frame's scale: ±max(|strain|, 1e-3)
    for row, scale in zip(history.frame_strains, data["ranges"], strict=True):
        top = max(np.abs(row).max(), 1e-3)
        assert scale == pytest.approx([-top, top], rel=1e-12)
    assert data["period"] == pytest.approx(0.05 / 0.5)  # 0.5 s in 10 frames, half speed
    plain = embedded(save_history_html(history, tmp_path / "p.html"))
    assert plain["color_by"] is None and plain["values"] is None
    with pytest.raises(ValueError, match="color_by must be"):
        save_history_html(history, tmp_path / "q.html", color_by="speed")


def test_history_save_html_passes_speed_and_colouring_on(tmp_path):
    # History.save_html is save_history_html with the same options: the same file
    from springsim.viewer.standalone import save_history_html

    rope = ss.string(5, length=1.0, mass=0.05, stiffness=50.0, dim=2)
    history = rope.run(0.5, 1e-3, frames=11, progress=False)
    options = dict(speed=0.25, color_by="strain", color_range=(-0.01, 0.01))
    mine = history.save_html(tmp_path / "a.html", **options).read_bytes()
    direct = save_history_html(history, tmp_path / "b.html", **options).read_bytes()
    plain = history.save_html(tmp_path / "c.html").read_bytes()
    assert mine == direct and mine != plain


def test_the_scene_bounds_hold_every_collider_and_a_plane_near_the_nodes():
    # the box the first framing takes in, against each shape's own extent: a box
    # centre ± half extents, a sphere centre ± radius, a mesh its vertices, a capsule
    # its segment ± radius (tessellated: 24 segments a turn reach cos(π/24) of the
    # radius, 0.9 % short at worst), and the floor y = -2 at the foot of the nodes'
    # centre (the cloth's mean position)
    cloth = ss.cloth(4, 4, width=1.0, height=1.0, mass=0.1, stiffness=50.0)
    cloth.add_box([3.0, 0.0, 0.0], [0.5, 0.25, 0.1])
    cloth.add_sphere([0.0, 0.0, -4.0], 0.5)
    cloth.add_mesh_collider([[0, 1, 0], [1, 6, 0], [0, 1, 1]], [[0, 1, 2]])
    cloth.add_plane([0.0, 1.0, 0.0], -2.0)
    viewer = ss.view(cloth, dt=1e-3, substeps=1)
    try:
        tap = Tap(viewer)
        viewer._handle({"type": "hello"})
        lo, hi = tap.last("scene")[0]["bounds"]
    finally:
        viewer.close()
    centre = cloth.positions.mean(axis=0)
    points = np.array(
        [
            [2.5, -0.25, -0.1],  # the box
            [3.5, 0.25, 0.1],
            [-0.5, -0.5, -4.5],  # the sphere
            [0.5, 0.5, -3.5],
            [0, 1, 0],  # the mesh
            [1, 6, 0],
            [0, 1, 1],
            [centre[0], -2.0, centre[2]],  # the plane's point nearest the centre
        ]
    )
    assert lo == pytest.approx(points.min(axis=0).tolist(), abs=1e-12)
    assert hi == pytest.approx(points.max(axis=0).tolist(), abs=1e-12)
    # a capsule beside a rope, in 2D: from (2, -1) to (3, -1), radius 0.2
    rope = ss.string(4, length=1.0, mass=0.04, stiffness=40.0, dim=2, direction=(1, 0))
    rope.add_capsule([2.0, -1.0], [3.0, -1.0], 0.2)
    lo, hi = protocol.scene(rope)[0]["bounds"]
    assert lo == pytest.approx([1.8, -1.2], abs=0.2 * (1 - math.cos(math.pi / 24)) + 1e-12)
    assert hi == pytest.approx([3.2, -0.8], abs=0.2 * (1 - math.cos(math.pi / 24)) + 1e-12)
    # no collider: no box (the nodes alone are framed)
    assert protocol.scene(ss.string(3, length=1.0, mass=0.1, stiffness=1.0))[0]["bounds"] is None


def test_the_energy_trace_is_kept_in_python_for_a_reloaded_page(rope):
    # a page reloaded says hello again: it gets the trace of the frames before, each
    # sample the energies of that frame, against a twin stepped directly
    rope.drag = 0.05  # something to dissipate
    v = ss.view(rope, dt=1e-3, substeps=5)
    twin = rope.copy()
    twin.track_energy = True
    tap = Tap(v)
    v._handle({"type": "hello"})
    expected = []
    for k in range(6):
        if k:
            v.step()
            twin.step(1e-3, steps=5)
        e = twin.energy()
        expected.append(
            [twin.time, e.kinetic, e.elastic, e.gravity, e.pressure, e.contact, e.total]
            + [twin.dissipated]
        )
    v._handle({"type": "hello"})  # the reload
    content, buffers = tap.last("trace")
    assert content["terms"] == list(protocol.TRACE_TERMS) and content["samples"] == 6
    sent = np.frombuffer(buffers[0], "<f8").reshape(6, 8)
    # the same stepping on the same machine: bit for bit
    assert sent.tolist() == expected
    # the frame that follows the hello is at the last sample's time: it replaces it
    # (one sample per time), and a reset starts the trace again
    v._handle({"type": "hello"})
    assert tap.last("trace")[0]["samples"] == 6
    v.reset()
    v._handle({"type": "hello"})
    assert tap.last("trace")[0]["samples"] == 1
    v.close()


def test_the_trace_is_bounded_as_the_front_end_bounds_it():
    trace = protocol.Trace(length=5)
    for t in range(12):
        trace.add(float(t), dict.fromkeys(protocol.TRACE_TERMS, 1.0))
    content, buffers = trace.message()
    assert np.frombuffer(buffers[0], "<f8").reshape(5, 8)[:, 0].tolist() == [7, 8, 9, 10, 11]
    # viewer.js keeps as many samples as Python sends
    assert f"const HISTORY = {protocol.TRACE_LENGTH};" in static_text("viewer.js")


def arrows_of(content, buffers, dim):
    """The arrows a frame message carries: (origins, vectors as drawn), float32."""
    count = content["arrows"]["count"]
    origins = np.frombuffer(buffers[-2], "<f4").reshape(count, dim)
    return origins, np.frombuffer(buffers[-1], "<f4").reshape(count, dim)


def test_velocity_arrows_are_the_velocities_times_the_scale(rope):
    v = ss.view(rope, dt=1e-3, substeps=5, arrows="velocity", arrow_scale=0.2, color_by="strain")
    tap = Tap(v)
    for _ in range(3):
        v.step()
    content, buffers = tap.last("frame")
    assert content["arrows"] == {"kind": "velocity", "per": "node", "scale": 0.2, "count": 8}
    origins, drawn = arrows_of(content, buffers, 2)
    assert np.array_equal(origins, rope.positions.astype(np.float32))
    assert np.array_equal(drawn, (rope.velocities * 0.2).astype(np.float32))
    assert np.abs(drawn).max() > 0  # the rope is falling: something to compare
    # per body: one arrow at the centre of mass, the momentum over the mass
    v.arrows_per = "body"
    v.step()
    content, buffers = tap.last("frame")
    origins, drawn = arrows_of(content, buffers, 2)
    m = rope.masses[:, None]
    centre = (m * rope.positions).sum(axis=0) / m.sum()
    velocity = (m * rope.velocities).sum(axis=0) / m.sum()
    assert origins[0] == pytest.approx(centre, rel=1e-6)
    assert drawn[0] == pytest.approx(0.2 * velocity, rel=1e-6)
    v.close()


def test_the_default_arrow_scale_keeps_the_longest_arrow_within_15_percent():
    # one free node thrown at 2 m/s beside a pinned one 1 m away, no gravity: the
    # scene is 1 m wide (the two nodes), so 2 m/s is drawn 0.15 m long: 0.075 m per m/s
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 0.0], [1.0, 0.0]], velocities=[[0.0, 0.0], [0.0, 2.0]])
    sim.gravity = 0
    sim.pin(0)
    v = ss.view(sim, dt=1e-3, substeps=10, arrows="velocity")
    tap = Tap(v)
    v.step()  # the node moves up 2 cm: the scene is 1 m wide still
    content, buffers = tap.last("frame")
    assert content["arrows"]["scale"] == pytest.approx(0.15 * 1.0 / 2.0, rel=1e-12)
    _, drawn = arrows_of(content, buffers, 2)
    assert drawn[1].tolist() == pytest.approx([0.0, 0.15], rel=1e-6)
    # slower later: the scale stays (lengths compare over time)
    sim.velocities = [[0.0, 0.0], [0.0, 1.0]]
    v.step()
    assert tap.last("frame")[0]["arrows"]["scale"] == pytest.approx(0.075, rel=1e-12)
    v.close()


def test_force_arrows_are_the_net_forces_of_the_textbook():
    # a spring stretched from 1 m to 1.5 m, k = 40 N/m: 20 N on each end, towards the
    # other; gravity m g down on each (m = 0.5 kg); the pinned end: none
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 0.0], [1.5, 0.0]], masses=0.5)
    sim.add_springs([[0, 1]], stiffness=40.0, rest_lengths=1.0)
    sim.pin(0)
    v = ss.view(sim, dt=1e-4, substeps=1, arrows="force", arrow_scale=0.01)
    tap = Tap(v)
    v._handle({"type": "hello"})
    content, buffers = tap.last("frame")
    _, drawn = arrows_of(content, buffers, 2)
    assert content["arrows"]["kind"] == "force"
    assert drawn[0].tolist() == [0.0, 0.0]
    assert drawn[1].tolist() == pytest.approx([-20.0 * 0.01, -0.5 * 9.81 * 0.01], rel=1e-6)
    v.close()


def test_arrow_and_bar_options_are_checked_and_settable(viewer):
    tap = Tap(viewer)
    viewer._handle({"type": "set", "name": "arrows", "value": "velocity"})
    viewer._handle({"type": "set", "name": "arrows_per", "value": "body"})
    viewer._handle({"type": "set", "name": "energy_bars", "value": True})
    state = tap.last("state")[0]
    assert (state["arrows"], state["arrows_per"], state["energy_bars"]) == (
        "velocity",
        "body",
        True,
    )
    for message, error, match in (
        ({"type": "set", "name": "arrows", "value": "speed"}, ValueError, "arrows must be"),
        ({"type": "set", "name": "arrows_per", "value": "all"}, ValueError, "arrows_per must"),
        ({"type": "set", "name": "energy_bars", "value": 1}, TypeError, "true or false"),
    ):
        with pytest.raises(error, match=match):
            viewer._handle(message)
    assert (viewer.arrows, viewer.arrows_per, viewer.energy_bars) == ("velocity", "body", True)
    with pytest.raises(ValueError, match="arrow_scale must be finite"):
        ss.view(ss.string(3, length=1.0, mass=0.1, stiffness=1.0), arrow_scale=-1)


def test_save_html_keeps_the_arrows(tmp_path):
    rope = ss.string(6, length=1.0, mass=0.06, stiffness=60.0, dim=2, direction=(1, 0))
    v = ss.view(rope, dt=1e-3, substeps=10, arrows="velocity", arrow_scale=0.5)
    tap = Tap(v)
    for _ in range(3):
        v.step()
    recorded = embedded(v.save_html(tmp_path / "live.html"))
    twin = rope.copy()
    ahead = embedded(v.save_html(tmp_path / "ahead.html", duration=0.1))
    v.close()
    # the frames sent, with their arrows: each frame's velocities × 0.5
    sent = [c["arrows"] for c, _ in tap.sent if c["type"] == "frame"]
    assert recorded["arrows"] == sent and sent[0]["count"] == 6
    vectors = np.frombuffer(base64.b64decode(recorded["arrow_vectors"]), "<f4").reshape(3, 6, 2)
    assert np.array_equal(vectors[-1], (rope.velocities * 0.5).astype(np.float32))
    origins = np.frombuffer(base64.b64decode(recorded["arrow_origins"]), "<f4").reshape(3, 6, 2)
    assert np.array_equal(origins[-1], rope.positions.astype(np.float32))
    # stepped ahead: the last frame's arrows are the copy's velocities 0.1 s on
    twin.track_energy = True
    twin.step(1e-3, steps=100)
    last = np.frombuffer(base64.b64decode(ahead["arrow_vectors"]), "<f4").reshape(-1, 6, 2)[-1]
    assert np.array_equal(last, (twin.velocities * 0.5).astype(np.float32))
    # colour and arrows together: the spring values stay the spring values
    v = ss.view(rope, dt=1e-3, substeps=10, arrows="velocity", color_by="strain")
    v.step()
    v.step()
    both = embedded(v.save_html(tmp_path / "both.html"))
    v.close()
    strains = np.frombuffer(base64.b64decode(both["values"]), "<f4").reshape(2, 5)
    assert np.allclose(strains[-1], rope.spring_lengths() / rope.rest_lengths - 1, atol=1e-7)


def two_balls():
    """Two 2D balls about to collide: bodies 0 (left) and 1 (right)."""
    ball = dict(radius=0.2, nodes=12, mass=0.1, stiffness=200.0, dim=2)
    left = ss.ball(center=(-0.25, 0.0), **ball)
    right = ss.ball(center=(0.25, 0.0), **ball)
    left.add(right)
    return left


def test_colour_by_body_sends_each_springs_body(tmp_path):
    sim = two_balls()
    # the labels computed here from the springs alone (union-find over the edges),
    # not from sim.bodies(): the left ball's nodes come first, so it is body 0
    parent = list(range(sim.num_nodes))

    def root(i):
        while parent[i] != i:
            i = parent[i]
        return i

    for a, b in sim.springs:
        parent[root(a)] = root(b)
    roots = sorted(
        {root(i) for i in range(sim.num_nodes)},
        key=lambda r: min(i for i in range(sim.num_nodes) if root(i) == r),
    )
    expected = np.array([roots.index(root(a)) for a, _ in sim.springs], dtype=np.float32)
    assert set(expected.tolist()) == {0.0, 1.0}

    viewer = ss.view(sim, dt=1e-4, substeps=10)
    tap = Tap(viewer)
    viewer._handle({"type": "set", "name": "color_by", "value": "body"})
    assert tap.last("state")[0]["color_by"] == "body"
    viewer.step()
    content, buffers = tap.last("frame")
    assert content["color_by"] == "body" and content["range"] == [0.0, 1.0]
    assert np.array_equal(np.frombuffer(buffers[2], np.float32), expected)
    # kept by save_html: each recorded frame carries the same labels
    data = embedded(viewer.save_html(tmp_path / "balls.html"))
    viewer.close()
    assert data["color_by"] == "body"
    saved = np.frombuffer(base64.b64decode(data["values"]), np.float32).reshape(-1, len(expected))
    assert (saved == expected).all()
    with pytest.raises(ValueError, match="'tension', 'strain' or 'body'"):
        ss.view(sim, color_by="bodies")


# ---- contacts (issue 27, item 6) ------------------------------------------------------


def falling_balls():
    """Twelve balls of radius 5 cm dropped in a loose column onto a floor, 2D: the pairs
    touching change from frame to frame."""
    sim = ss.System(dim=2)
    rng = np.random.default_rng(3)
    x = np.column_stack([rng.uniform(-0.04, 0.04, 12), 0.05 + 0.11 * np.arange(12)])
    sim.add_nodes(x, masses=0.1)
    sim.radii = 0.05
    sim.add_plane([0, 1], 0.05)
    return sim


def test_contacts_send_the_pairs_touching_at_each_frame():
    # The pairs of each frame are the node pairs closer than the sum of their radii,
    # found here by springsim.reference's all-pairs search (a plain NumPy loop, not the
    # kernel's grid; sorted by i then j, the kernel's are in its own order), and exactly
    # what sim.contact_pairs() says at that frame; the buffer comes after the spring
    # values and before the arrows, as protocol.frame documents.
    from springsim import reference

    sim = falling_balls()
    sim.add_springs([[0, 1]], stiffness=10.0)  # a spring: its values buffer is sent too
    viewer = ss.view(sim, dt=1e-3, substeps=20, contacts=True, color_by="tension")
    viewer.arrows = "velocity"
    tap = Tap(viewer)
    counts = set()
    try:
        for _ in range(40):
            viewer.step()
            content, buffers = tap.last("frame")
            sent = np.frombuffer(buffers[3], np.int32).reshape(-1, 2)
            ref = reference.State.from_system(sim)
            expected = reference.contact_pairs(ref, ref.x)
            assert content["contacts"] == len(expected) == len(sent)
            np.testing.assert_array_equal(sent[np.lexsort(sent.T[::-1])], expected)
            np.testing.assert_array_equal(sent, sim.contact_pairs())
            assert len(buffers) == 6  # positions, pins, values, pairs, arrows (2)
            counts.add(len(sent))
        assert len(counts) > 3 and max(counts) >= 4  # a pile forming: pairs come and go
        viewer._handle({"type": "hello"})  # a page: the state, with the box on
        assert tap.last("state")[0]["contacts"] is True
        # off from the widget's box: no count, no buffer
        viewer._handle({"type": "set", "name": "contacts", "value": False})
        assert viewer.contacts is False and tap.last("state")[0]["contacts"] is False
        content, buffers = tap.last("frame")
        assert content["contacts"] is None and len(buffers) == 5
    finally:
        viewer.close()


def test_contacts_off_by_default_and_bad_values_refused(rope):
    rope.radii = 0.2  # neighbours overlap, but a spring joins them: no pair
    with pytest.raises(TypeError, match="contacts must be True or False, not 'yes'"):
        ss.view(rope, contacts="yes")
    viewer = ss.view(rope, dt=1e-3, substeps=1)
    tap = Tap(viewer)
    try:
        assert viewer.contacts is False
        viewer.step()
        content, buffers = tap.last("frame")
        assert content["contacts"] is None and len(buffers) == 2
        for bad in (1, None, "on", np.array([True])):
            with pytest.raises(TypeError, match="contacts must be True or False"):
                viewer.contacts = bad
            assert viewer.contacts is False
        for value in (1, "true", None):
            with pytest.raises(TypeError, match="value must be true or false"):
                viewer._handle({"type": "set", "name": "contacts", "value": value})
            assert viewer.contacts is False
        viewer.contacts = np.bool_(True)
        assert viewer.contacts is True
    finally:
        viewer.close()
