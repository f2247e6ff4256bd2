"""The live viewer's ``method`` (issue 26): the viewer steps with the method it was
given, ``sim.method`` stays, the stable methods get a step per half frame by default,
and a bad method is refused. The expected states come from ``springsim.reference``,
the NumPy oracle (its own VBD, XPBD and backward Euler), not from the kernel.
"""

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
