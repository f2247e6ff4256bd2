"""rigid_frame() on input the SVD cannot take: refused at once, never a hang."""

import json
import subprocess
import sys

import numpy as np
import pytest

import springsim as ss

# Each case: the system's dimension, then (array, node, axis, value) writes. The call
# runs in a child process, so that a regression (an SVD that never returns) fails the
# test at the timeout instead of hanging the suite.
CASES = {
    "a node at 1e308": (2, [("positions", 3, 0, 1e308), ("positions", 3, 1, 1e308)]),
    "a node at 1e308 in 3D": (3, [("positions", 3, 0, 1e308), ("positions", 3, 2, 1e308)]),
    "nodes at -1e308 and 1e308": (3, [("positions", 2, 0, -1e308), ("positions", 3, 0, 1e308)]),
    "a node at 1e200 (its square overflows)": (2, [("positions", 1, 1, 1e200)]),
    "a rest position at 1e308": (3, [("rest_positions", 0, 0, 1e308)]),
    "a NaN position": (2, [("positions", 2, 0, float("nan"))]),
    "an infinite rest position": (2, [("rest_positions", 2, 1, float("inf"))]),
}

CHILD = """
import json, sys
import numpy as np
import springsim as ss
out = {}
for name, (dim, writes) in json.loads(sys.argv[1]).items():
    sim = ss.System(dim=dim)
    sim.add_nodes(np.eye(4, dim))
    for array, node, axis, value in writes:
        getattr(sim, array)[node, axis] = value
    before = (sim.positions.copy(), sim.rest_positions.copy())
    try:
        sim.rigid_frame()
        out[name] = "returned"
    except Exception as error:
        out[name] = f"{type(error).__name__}: {error}"
    same = all(np.array_equal(a, b, equal_nan=True)
               for a, b in zip(before, (sim.positions, sim.rest_positions)))
    out[name] += "" if same else " (and changed the system)"
print(json.dumps(out))
"""


def test_overflowing_or_non_finite_input_is_refused_without_hanging():
    child = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(CASES)],
        capture_output=True,
        text=True,
        timeout=120,  # each call takes milliseconds; a hang fails here
    )
    assert child.returncode == 0, child.stderr
    outcomes = json.loads(child.stdout)
    for name, outcome in outcomes.items():
        assert outcome.startswith("ValueError: rigid_frame()"), (name, outcome)
        assert "changed the system" not in outcome, (name, outcome)
    assert "node 3" in outcomes["a node at 1e308"]
    assert "rest_positions" in outcomes["a rest position at 1e308"]


def test_large_but_safe_coordinates_still_fit():
    # Offsets up to about 1e150 square without overflow: a rotation is still found.
    sim = ss.System(dim=2)
    sim.add_nodes(np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 2.0]]) * 1e150)
    sim.positions = sim.positions @ np.array([[0.0, 1.0], [-1.0, 0.0]])  # turn 90°
    _, rotation = sim.rigid_frame()
    np.testing.assert_allclose(rotation, [[0.0, -1.0], [1.0, 0.0]], atol=1e-12)


def test_a_bad_node_outside_the_fitted_ones_does_not_matter():
    sim = ss.System(dim=2)
    sim.add_nodes([[1.0, 0.0], [-1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    sim.positions[3] = 1e308
    _, rotation = sim.rigid_frame([0, 1, 2])
    np.testing.assert_allclose(rotation, np.eye(2), atol=1e-12)
    with pytest.raises(ValueError, match="node 3"):
        sim.rigid_frame()
