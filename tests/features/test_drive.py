"""Driven anchors: nodes that follow a prescribed path."""

import numpy as np
import pytest
from state import assert_same, snapshot

import springsim as ss

K, M, N = 100.0, 0.1, 10  # spring stiffness, node mass, free nodes of the chain


def chain():
    """N free masses in a line between two pinned ends (longitudinal motion only)."""
    sim = ss.System(dim=2)
    sim.gravity = (0.0, 0.0)
    sim.add_nodes(np.column_stack([np.arange(N + 2), np.zeros(N + 2)]), masses=M)
    sim.pin([0, N + 1])
    sim.add_springs(
        np.column_stack([np.arange(N + 1), np.arange(1, N + 2)]), stiffness=K, damping=0.002
    )
    return sim


def fundamental() -> float:
    """The lowest normal mode of the fixed-fixed chain: 2 sqrt(k/m) sin(pi / (2 (N + 1)))."""
    return 2.0 * np.sqrt(K / M) * np.sin(np.pi / (2 * (N + 1)))


def response(omega: float) -> float:
    """Largest displacement of the middle node while the end is shaken at omega."""
    sim = chain()
    amplitude = 1e-3
    sim.drive(0, lambda t: [amplitude * np.sin(omega * t), 0.0])
    dt, middle, largest = 1e-3, N // 2, 0.0
    for _ in range(400):  # 8 s: about 12 periods of the fundamental
        sim.step(dt, steps=20, method="velocity_verlet")
        largest = max(largest, abs(sim.positions[middle, 0] - middle))
    return largest


def test_driving_at_the_fundamental_resonates():
    w1 = fundamental()
    at, below, above = response(w1), response(0.5 * w1), response(1.7 * w1)
    assert at > 4 * below and at > 4 * above, (at, below, above)


@pytest.mark.parametrize("method", ss.METHODS)
def test_driven_node_follows_the_path_exactly(method):
    sim = ss.string(6, length=1.0, mass=0.1, stiffness=50.0, dim=3, pin=None)
    path = lambda t: [0.2 * np.sin(3 * t), 0.1 * t, 0.0]  # noqa: E731
    sim.drive(5, path)
    for _ in range(30):
        sim.step(1e-3, steps=7, method=method)
        np.testing.assert_allclose(sim.positions[5], path(sim.time), rtol=0, atol=1e-15)
    assert sim.pinned[5]
    # The velocity is the one that carried the node along the last substep.
    expected = (np.array(path(sim.time)) - np.array(path(sim.time - 1e-3))) / 1e-3
    np.testing.assert_allclose(sim.velocities[5], expected, rtol=1e-9)


def test_array_path_is_used_one_target_per_substep_then_held():
    sim = ss.string(3, length=1.0, mass=0.1, stiffness=10.0, dim=2)
    targets = np.array([[[0.0, 0.1]], [[0.0, 0.2]], [[0.0, 0.3]]])
    sim.drive([0], targets)
    seen = []
    for _ in range(5):
        sim.step(1e-3)
        seen.append(sim.positions[0, 1])
    assert seen == [0.1, 0.2, 0.3, 0.3, 0.3]
    sim.drive([0], None)  # stop: pinned, at rest
    sim.step(1e-3, steps=3)
    assert sim.positions[0, 1] == 0.3 and np.all(sim.velocities[0] == 0.0)


def test_copy_carries_the_drive_and_its_progress():
    sim = ss.string(3, length=1.0, mass=0.1, stiffness=10.0, dim=2)
    sim.drive(0, np.linspace(0, 1, 10)[:, None, None] * [1.0, 0.0])
    sim.step(1e-3, steps=4)
    twin = sim.copy()
    sim.step(1e-3, steps=3)
    twin.step(1e-3, steps=3)
    assert np.array_equal(sim.positions, twin.positions)


def test_bad_paths_raise_and_change_nothing():
    sim = ss.string(4, length=1.0, mass=0.1, stiffness=10.0, dim=2)
    before = snapshot(sim)
    with pytest.raises(ValueError):
        sim.drive(7, lambda t: [0.0, 0.0])
    with pytest.raises(ValueError):
        sim.drive(0, np.zeros((5, 3, 2)))  # 3 targets for 1 node
    with pytest.raises(ValueError):
        sim.drive(0, [[[np.nan, 0.0]]])
    with pytest.raises(TypeError):
        sim.drive(0, "up")
    assert_same(before, snapshot(sim))
    sim.drive(1, lambda t: [0.0, 0.0] if t < 0.0025 else [np.inf, 0.0])
    before = snapshot(sim)
    with pytest.raises(ValueError, match="non-finite"):
        sim.step(1e-3, steps=5)  # fails on the third substep: the first two are undone
    assert_same(before, snapshot(sim))


def test_a_target_too_far_for_one_substep_raises_and_changes_nothing():
    # Finite targets whose difference overflows: (1.8e308 - 0) / dt is inf. The step
    # says the path is at fault (found by the fuzzer) and undoes its substeps; a run
    # stops there, keeping its earlier chunks, as for any bad path value.
    sim = ss.string(3, length=1.0, mass=0.1, stiffness=10.0, dim=2)
    sim.drive([0], np.array([[[0.0, 0.0]], [[0.0, 0.0]], [[0.0, np.finfo(float).max]]]))
    before = snapshot(sim)
    with pytest.raises(ValueError, match="drive path's target .* too far"):
        sim.step(1e-4, steps=4)
    assert_same(before, snapshot(sim))


def test_remove_nodes_renumbers_the_drives():
    # Before the fix a drive kept its old indices: the next step moved the wrong node
    # (or raised IndexError once the index was past the end).
    sim = ss.string(6, length=1.0, mass=0.1, stiffness=10.0, dim=2)
    path = np.array([[0.2, 0.0], [1.3, 0.5]])  # rows for nodes 1 and 5
    sim.drive([1, 5], lambda t: path)
    targets = np.zeros((1, 2, 2)) + [[[9.0, 9.0], [8.0, 8.0]]]
    sim.drive([2, 3], targets)
    sim.remove_nodes([0, 3])  # node 1 -> 0, 2 -> 1, 3 removed, 5 -> 3
    sim.step(1e-3, steps=2)
    assert sim.positions[0].tolist() == [0.2, 0.0]
    assert sim.positions[3].tolist() == [1.3, 0.5]
    assert sim.positions[1].tolist() == [9.0, 9.0]  # node 3's target row went with it
    sim.remove_nodes([0, 1, 3])  # every driven node gone: the drives go too
    sim.step(1e-3, steps=2)
    assert not sim.__dict__["_drives"]


@pytest.mark.parametrize(
    "dt, steps, error",
    [
        (-1.0, 0, ValueError),
        (0.0, 1, ValueError),
        (np.nan, 1, ValueError),
        (1e-3, -5, ValueError),
        (1e-3, 2**63, ValueError),
        (1e-3, 1.5, TypeError),
        (1e-3, True, TypeError),
    ],
)
def test_a_driven_step_checks_its_arguments_first(dt, steps, error):
    sim = ss.string(4, length=1.0, mass=0.1, stiffness=10.0, dim=2)
    sim.drive(0, lambda t: [0.1 * t, 0.0])
    sim.step(1e-3, steps=2)
    before = snapshot(sim)
    with pytest.raises(error):
        sim.step(dt, steps)
    with pytest.raises(ValueError, match="unknown method"):
        sim.step(1e-3, 3, method="rk4\x00junk")
    assert_same(before, snapshot(sim))
    assert sim.__dict__["_drives"][0].counter == 2


def test_a_failed_driven_step_undoes_its_tearing_and_energy_books():
    # The drive pulls the string's end away: springs tear on early substeps, then the
    # path fails on a later one. Everything the call did is undone: the cut springs
    # are whole again, nothing is reported broken, dissipated is where it was.
    sim = ss.string(5, length=1.0, mass=0.1, stiffness=10.0, damping=0.1, dim=2)
    sim.gravity = (0.0, 0.0)
    sim.break_strain = 0.5  # the end moves 0.05 m a substep: spring 0-1 (0.25 m) tears on the 3rd
    sim.track_energy = True
    sim.drive(0, lambda t: [-50.0 * t, 0.0] if t < 0.0045 else [np.nan, 0.0])
    sim.step(1e-3, steps=1)
    assert sim.broken_springs().shape == (0, 2)
    before = snapshot(sim)
    dissipated = sim.dissipated
    with pytest.raises(ValueError, match="non-finite"):
        sim.step(1e-3, steps=5)
    assert_same(before, snapshot(sim))
    assert sim.dissipated == dissipated
    assert sim.broken_springs().shape == (0, 2)
    # The same substeps without the failure do tear: the undo above had work to do.
    sim.drive(0, lambda t: [-50.0 * t, 0.0])
    sim.step(1e-3, steps=3)
    assert sim.broken_springs().shape[0] > 0
