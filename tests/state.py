"""What a System holds, for tests that compare whole states bit for bit."""

import numpy as np

from springsim.analysis.diagnostics import kernel_dissipated

NODE_ARRAYS = (
    "positions",
    "velocities",
    "masses",
    "pinned",
    "external_forces",
    "uvs",
    "rest_positions",
    "radii",
    "groups",
)
SPRING_ARRAYS = ("springs", "rest_lengths", "stiffness", "damping", "break_strains")
#: The arrays that make up a model (what System.add copies).
MODEL_ARRAYS = NODE_ARRAYS + SPRING_ARRAYS + ("faces",)
#: Every array the kernel holds, including the hidden Verlet history.
ARRAYS = MODEL_ARRAYS + ("_prev_accel", "gravity", "wind")
SCALARS = (
    "dim",
    "num_nodes",
    "num_springs",
    "num_faces",
    "drag",
    "air_density",
    "drag_coefficient",
    "energy_loss",
    "method",
    "time",
    "_verlet_valid",
    "iterations",
    "max_strain",
    "divergence_factor",
    "cg_tolerance",
    "cg_max_iterations",
    "contact_radius",
    "contact_stiffness",
    "contact_restitution",
    "contact_friction",
    "segment_contact",
    "self_collision_crossings",
)


def snapshot(sim, books=True):
    """A deep copy of everything ``sim`` holds: every array and every scalar (with the
    energy books unless ``books`` is False: to compare a run() with plain steps)."""
    state = {name: np.array(sim._view(name), copy=True) for name in ARRAYS}
    state.update({name: getattr(sim, name) for name in SCALARS})
    if books:  # the kernel's count, read without the warning of the books off
        state.update(dissipated=kernel_dissipated(sim), track_energy=sim.track_energy)
    state["contact_filter"] = sim._contact_filter()
    return state


def _bits(value):
    """What bit-for-bit equality compares: dtype, shape and raw bytes of an array."""
    if isinstance(value, np.ndarray):
        return value.dtype.str, value.shape, value.tobytes()
    if isinstance(value, float):
        return "float", np.float64(value).tobytes()
    return type(value).__name__, value


def assert_same(a, b):
    """Two snapshots are bit-for-bit equal (so NaN equals NaN with the same bits)."""
    assert a.keys() == b.keys()
    changed = [name for name in a if _bits(a[name]) != _bits(b[name])]
    assert not changed, "state changed: " + "; ".join(
        f"{name}: {a[name]!r} -> {b[name]!r}" for name in changed
    )


def quad_grid(dim, rng, n=4):
    """Nodes of an n x n grid over the unit square, jittered (and, in 3D, slightly out
    of plane), and its (n - 1)^2 quads: the small cloth the file tests round-trip."""
    grid = np.array([[i, j] for j in range(n) for i in range(n)], dtype=float) / (n - 1)
    x = grid + rng.normal(scale=1e-3, size=grid.shape)
    if dim == 3:
        x = np.column_stack([x, rng.normal(scale=1e-2, size=len(x))])
    quads = [[j * n + i, j * n + i + 1, (j + 1) * n + i + 1, (j + 1) * n + i]
             for j in range(n - 1) for i in range(n - 1)]  # fmt: skip
    return x, quads
