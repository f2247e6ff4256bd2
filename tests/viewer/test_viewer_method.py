"""The live viewer's ``method`` (issue 26): the viewer steps with the method it was
given, ``sim.method`` stays, the stable methods get a step per half frame by default,
and a bad method is refused. The expected states come from ``springsim.reference``,
the NumPy oracle (its own VBD, XPBD and backward Euler), not from the kernel.
"""

import re
import time

import numpy as np
import pytest

import springsim as ss
from springsim import reference
from springsim.viewer import widget

pytest.importorskip("anywidget")


def stiff_cloth():
    """A small stiff cloth pinned at two corners, swinging: 5 x 5 nodes, 2,000 N/m,
    with spring damping (so that every term of the vertex step is used)."""
    return ss.cloth(5, 5, width=0.4, height=0.4, mass=0.05, stiffness=2000.0, damping=0.2)


@pytest.mark.parametrize("method", ["vbd", "xpbd", "implicit_euler"])
def test_a_frame_is_the_oracles_steps_of_that_method(method):
    sim = stiff_cloth()
    sim.iterations = 6
    expected = reference.State.from_system(sim)
    viewer = ss.view(sim, method=method, dt=1 / 240, substeps=4)
    try:
        viewer.step()
        viewer.step()
    finally:
        viewer.close()
    reference.step(expected, 1 / 240, steps=8, method=method)
    # The kernel's vbd and xpbd are the oracle's operations in the same order (1e-12
    # on random systems, tests/oracle); implicit_euler's conjugate gradients stop at
    # cg_tolerance 1e-8 relative, in both, on different rounding: 1e-9 m on a 0.4 m
    # cloth leaves room for that and still fails for any other method (8 substeps of
    # vbd, xpbd and implicit_euler end 0.06 to 0.3 mm apart here).
    atol = 1e-9 if method == "implicit_euler" else 1e-12
    np.testing.assert_allclose(sim.positions, expected.x, rtol=0, atol=atol)
    np.testing.assert_allclose(sim.velocities, expected.v, rtol=0, atol=atol * 240)
    assert sim.method == "symplectic_euler"  # the viewer's argument, not a flag left on sim
    assert sim.time == pytest.approx(8 / 240, rel=1e-12)


def test_the_other_methods_would_have_moved_it_elsewhere():
    # the check above can fail: 8 substeps of vbd and of xpbd differ by far more than
    # its tolerances (1e-12 m, 1e-9 m for implicit_euler) on this cloth (measured 2e-5 m)
    a, b = reference.State.from_system(stiff_cloth()), reference.State.from_system(stiff_cloth())
    a.iterations = 6
    reference.step(a, 1 / 240, steps=8, method="vbd")
    reference.step(b, 1 / 240, steps=8, method="xpbd")
    assert np.abs(a.x - b.x).max() > 1e-6


def test_saved_frames_step_the_copy_with_the_viewers_method(tmp_path):
    sim = stiff_cloth()
    expected = reference.State.from_system(sim)
    viewer = ss.view(sim, method="vbd", dt=1 / 120)
    try:
        frames = widget._run_frames(sim.copy(), 0.1, viewer.dt, 2, None, None, method=viewer.method)
    finally:
        viewer.close()
    reference.step(expected, 1 / 120, steps=12, method="vbd")
    last = np.frombuffer(frames[-1][1], dtype=np.float32).reshape(-1, 3)
    # frames carry float32 positions: 1e-7 relative of a coordinate below 0.5 m
    np.testing.assert_allclose(last, expected.x, rtol=0, atol=1e-7)
    assert sim.time == 0.0


def test_a_stable_method_defaults_to_two_steps_a_frame():
    cloth = stiff_cloth()
    for method in ("vbd", "xpbd", "implicit_euler"):
        viewer = ss.view(cloth, method=method, fps=30)
        assert (viewer.dt, viewer.substeps, viewer.speed) == (1 / 60, 2, pytest.approx(1.0))
        viewer.close()
    cloth.method = "vbd"  # no argument: sim.method decides the default too
    viewer = ss.view(cloth)
    assert viewer.method is None and viewer.dt == 1 / 120
    viewer.close()
    # an explicit method keeps half of its stability limit (at most 1 ms)
    cloth.method = "symplectic_euler"
    viewer = ss.view(cloth)
    assert viewer.dt == pytest.approx(0.5 * cloth.critical_dt(), rel=1e-15) and viewer.dt < 1e-3
    viewer.close()


def test_a_bad_method_is_refused_and_changes_nothing():
    cloth = stiff_cloth()
    with pytest.raises(ValueError, match=r"method must be one of .*vbd.* not 'fast'"):
        ss.view(cloth, method="fast")
    with pytest.raises(TypeError, match="method must be a str or None, not int"):
        ss.view(cloth, method=3)
    viewer = ss.view(cloth, method="xpbd")
    try:
        with pytest.raises(ValueError, match="method must be one of"):
            viewer.method = "VBD"
        assert viewer.method == "xpbd"
        viewer.method = None
        assert viewer.method is None
    finally:
        viewer.close()


# ---------------------------------------------------------------- the page's method menu


class Tap:
    """The messages a viewer sent: (content, buffers)."""

    def __init__(self, viewer):
        self.sent = []
        viewer._taps.append(lambda content, buffers: self.sent.append((content, buffers)))

    def of(self, kind):
        return [content for content, _ in self.sent if content["type"] == kind]


def choose(viewer, method):
    """What the page's method menu sends when ``method`` is chosen."""
    viewer._handle({"type": "set", "name": "method", "value": method})


def test_the_menu_sets_the_method_and_the_steps_a_frame_as_method_does():
    cloth = stiff_cloth()
    viewer = ss.view(cloth)  # symplectic Euler, half of critical_dt, real time
    tap = Tap(viewer)
    try:
        choose(viewer, "vbd")
        # as view(method="vbd") makes it: two steps a frame of 1 / (2 × 60) s, real time
        assert (viewer.method, viewer.dt, viewer.substeps) == ("vbd", 1 / 120, 2)
        assert viewer.speed == pytest.approx(1.0, rel=1e-12)
        state = tap.of("state")[-1]
        assert (state["method"], state["dt"], state["substeps"]) == ("vbd", 1 / 120, 2)
        assert state["methods"] == list(ss.METHODS)
        choose(viewer, "rk4")  # explicit: half of its stability limit, 1 / (60 dt) a frame
        half = 0.5 * cloth.critical_dt()
        assert viewer.dt == pytest.approx(half, rel=1e-15)
        assert viewer.substeps == round(1 / (60 * half)) and viewer.substeps > 2
        assert tap.of("state")[-1]["method"] == "rk4"
        viewer.dt = 1e-4  # choosing the method it has already leaves its step alone
        choose(viewer, "rk4")
        assert viewer.dt == 1e-4
        assert cloth.method == "symplectic_euler"  # never a flag left on the system
    finally:
        viewer.close()


@pytest.mark.parametrize(
    ("first", "chosen"),
    [
        ("symplectic_euler", "vbd"),
        ("symplectic_euler", "xpbd"),
        ("verlet", "implicit_euler"),
        ("vbd", "rk4"),
    ],
)
def test_a_frame_after_a_menu_change_is_the_oracles_steps_of_the_new_method(first, chosen):
    sim = stiff_cloth()
    sim.iterations = 6
    expected = reference.State.from_system(sim)
    viewer = ss.view(sim, method=first)
    try:
        dt1, steps1 = viewer.dt, viewer.substeps
        viewer.step()
        choose(viewer, chosen)
        dt2, steps2 = viewer.dt, viewer.substeps
        viewer.step()
    finally:
        viewer.close()
    reference.step(expected, dt1, steps=steps1, method=first)
    reference.step(expected, dt2, steps=steps2, method=chosen)
    # the kernel's methods are the oracle's operations in the same order (1e-12 on
    # random systems, tests/oracle); implicit_euler's conjugate gradients stop at
    # cg_tolerance 1e-8 relative on different rounding: 1e-9 m on a 0.4 m cloth (a
    # frame of another method ends 0.06 to 0.3 mm away, as above)
    atol = 1e-9 if chosen == "implicit_euler" else 1e-12
    np.testing.assert_allclose(sim.positions, expected.x, rtol=0, atol=atol)
    np.testing.assert_allclose(sim.velocities, expected.v, rtol=0, atol=atol * 240)
    assert sim.time == pytest.approx(dt1 * steps1 + dt2 * steps2, rel=1e-12)


def rods():
    """A rope of rigid rods (stiffness inf): only xpbd can step it."""
    rope = ss.string(4, length=1.0, mass=0.1, stiffness=10.0, dim=2)
    rope.stiffness = np.inf
    return rope


@pytest.mark.parametrize(
    ("value", "extra", "error", "match"),
    [
        ("fast", {}, ValueError, r"method must be one of euler, .*vbd or None, not 'fast'"),
        ("VBD", {}, ValueError, "method must be one of .* not 'VBD'"),
        (3, {}, TypeError, "value must be a str or null, not 3"),
        (["vbd"], {}, TypeError, r"value must be a str or null, not \['vbd'\]"),
        ("vbd", {"now": True}, ValueError, "'set' has unknown keys now"),
        (None, {"value": None, "name": "methods"}, ValueError, "name must be one of .*method"),
        # the system cannot be stepped so: the kernel's own words, nothing changes
        ("vbd", {"sim": "rods"}, ValueError, "rigid rods .* method 'vbd' cannot step"),
        ("euler", {"sim": "rods"}, ValueError, "rigid rods .* method 'euler' cannot step"),
    ],
)
def test_a_bad_menu_message_is_answered_and_changes_nothing(value, extra, error, match):
    extra = dict(extra)
    sim = rods() if extra.pop("sim", None) else stiff_cloth()
    viewer = ss.view(sim, method="xpbd", dt=1e-3, substeps=7)
    tap = Tap(viewer)
    message = {"type": "set", "name": "method", "value": value, **extra}
    before = (viewer.method, viewer.dt, viewer.substeps, viewer.speed, sim.method)
    positions = sim.positions.copy()
    try:
        with pytest.raises(error, match=match):
            viewer._handle(message)
        # through the comm, as the page's messages come: the page is told, not raised at
        viewer._on_msg(viewer, message, [])
        assert re.search(match, tap.of("error")[-1]["message"])
        assert (viewer.method, viewer.dt, viewer.substeps, viewer.speed, sim.method) == before
        assert np.array_equal(sim.positions, positions) and sim.time == 0.0
        # a refused choice the checks let through to the viewer re-sends the state, so
        # that the page's menu shows the method that stays
        for state in tap.of("state"):
            assert state["method"] == "xpbd"
    finally:
        viewer.close()


def test_a_rigid_rod_is_refused_from_python_too_and_names_xpbd():
    sim = rods()
    # without method=, the default step of sim.method (symplectic Euler) is refused
    # for the rods, not as "dt must be > 0" (critical_dt() of a rod is 0)
    with pytest.raises(ValueError, match=r"rigid rods .* Use method='xpbd'"):
        ss.view(sim)
    with pytest.raises(ValueError, match="rigid rods .* method 'vbd' cannot step"):
        ss.view(sim, method="vbd")
    viewer = ss.view(sim, method="xpbd")
    try:
        dt = viewer.dt
        with pytest.raises(ValueError, match="method 'implicit_euler' cannot step"):
            viewer.method = "implicit_euler"
        assert (viewer.method, viewer.dt) == ("xpbd", dt)
        viewer.step()  # still steps with xpbd: each rod at its rest length
        lengths = np.linalg.norm(np.diff(sim.positions, axis=0), axis=1)
        np.testing.assert_allclose(lengths, 1 / 3, rtol=1e-6)
    finally:
        viewer.close()


# ---------------------------------------------------------------- the stiff hint


def test_the_hint_names_the_stable_methods_for_a_stiff_system_only():
    # 20 x 20 nodes of 0.5 mg joined by 1e9 N/m: half of critical_dt() is 0.14 µs, and a
    # step of 2,000 springs takes about 30 µs here; the rope's is 5.5 ms, its step about
    # 20 µs. Both margins are two orders of magnitude: the test does not hang on timing.
    stiff = ss.cloth(20, 20, width=1.0, height=1.0, mass=0.2, stiffness=1e9)
    viewer = ss.view(stiff, substeps=20)
    tap = Tap(viewer)
    try:
        assert tap.of("state") == []
        viewer._handle({"type": "step"})  # the first measured step tells
        assert viewer._step_cost > 0.5 * stiff.critical_dt()
        assert tap.of("state")[-1]["hint"] == widget.methods.STIFF_HINT == "stiff: try vbd or xpbd"
        assert viewer.method is None  # named, not switched to
        choose(viewer, "vbd")
        assert tap.of("state")[-1]["hint"] is None  # a stable method: nothing to hint
    finally:
        viewer.close()
    soft = ss.string(8, length=1.0, mass=0.08, stiffness=80.0, damping=0.01, dim=2)
    viewer = ss.view(soft)
    tap = Tap(viewer)
    try:
        viewer._handle({"type": "step"})
        viewer._handle({"type": "hello"})
        assert viewer._step_cost < 0.5 * soft.critical_dt()
        assert [state["hint"] for state in tap.of("state")] == [None]
    finally:
        viewer.close()


def test_a_menu_change_while_playing_takes_effect_between_two_frames():
    cloth = stiff_cloth()
    viewer = ss.view(cloth)  # symplectic Euler, then xpbd from the menu
    tap = Tap(viewer)
    old = viewer.dt * viewer.substeps  # simulated time a frame covers (1/60 s, rounded)
    try:
        viewer.play()
        while len(tap.of("frame")) < 5:
            time.sleep(0.005)
        choose(viewer, "xpbd")  # from the comm's thread, while the stepping thread runs
        changed = len(tap.of("frame"))
        while len(tap.of("frame")) < changed + 5:
            time.sleep(0.005)
        viewer.pause()
    finally:
        viewer.close()
    assert viewer.error is None and viewer.method == "xpbd"
    times = [frame["time"] for frame in tap.of("frame")]
    spans = np.diff(times)
    # every frame is all of one method's steps: the old frame's span, or two steps of
    # 1/120 s (round-off of the clock's sum: 1e-12 s), the old before the new; and the
    # frame the menu's message sends at once, with no step (span 0)
    new = 2 / 120
    kinds = [
        "old"
        if abs(s - old) < 1e-12
        else "new"
        if abs(s - new) < 1e-12
        else "none"
        if s == 0
        else s
        for s in spans
    ]
    first_new = kinds.index("new")
    assert kinds.count("none") == 1 and set(kinds[:first_new]) == {"old", "none"}, spans
    assert set(kinds[first_new:]) == {"new"}, spans
