"""Builders you can place (issue 16, item 2): an anchor and a rotation for every shape.

A placed shape must be the unplaced one moved rigidly: its positions the unplaced
ones turned by a rotation computed here (by QR or SciPy, not by the builder's code)
and shifted to the anchor; its springs, rest lengths, stiffness, masses and faces
unchanged. A cloth given a normal faces that way; ``normal=(0, 1, 0)`` lays it flat.
"""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import springsim as ss

K = 100.0


def random_rotation(rng, dim):
    """A proper rotation matrix (det +1) from the QR decomposition of a random matrix."""
    q, r = np.linalg.qr(rng.normal(size=(dim, dim)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q


def count(dim, n):
    return {"subdivisions": n} if dim == 3 else {"nodes": n}


# Each builder, unplaced, given its anchor's keyword and the node the anchor is at
# when unplaced (None: the anchor is the ball's centre, not a node).
BUILDERS = {
    "string": (
        lambda dim, **p: ss.string(7, length=1.3, mass=0.5, stiffness=K, dim=dim, **p),
        "start",
    ),
    "cloth": (
        lambda dim, **p: ss.cloth(5, 4, width=1.0, height=0.6, mass=0.3, stiffness=K, dim=dim, **p),
        "origin",
    ),
    "jelly": (
        lambda dim, **p: ss.jelly(
            3, 4, *([2] if dim == 3 else []), size=0.5, mass=1.0, stiffness=K, **p
        ),
        "origin",
    ),
    "ball": (
        lambda dim, **p: ss.ball(
            radius=0.4, mass=1.0, stiffness=K, dim=dim, **count(dim, 1 if dim == 3 else 9), **p
        ),
        "center",
    ),
    "balloon": (
        lambda dim, **p: ss.balloon(
            radius=0.3, string_length=0.8, mass=0.1, stiffness=K, dim=dim, **p
        ),
        "center",
    ),
}


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_a_placed_shape_is_the_unplaced_one_moved_rigidly(name, dim):
    build, anchor = BUILDERS[name]
    rng = np.random.default_rng(7)
    turn = random_rotation(rng, dim)
    where = rng.normal(size=dim)
    plain = build(dim)
    placed = build(dim, rotation=turn, **{anchor: where})
    # Unplaced, every anchor is the origin: the placed positions are where + R x.
    np.testing.assert_allclose(placed.positions, where + plain.positions @ turn.T, atol=1e-14)
    np.testing.assert_array_equal(placed.springs, plain.springs)
    np.testing.assert_allclose(placed.rest_lengths, plain.rest_lengths, rtol=1e-13)
    np.testing.assert_array_equal(placed.stiffness, plain.stiffness)
    np.testing.assert_array_equal(placed.masses, plain.masses)
    np.testing.assert_array_equal(placed.pinned, plain.pinned)
    np.testing.assert_array_equal(placed.faces, plain.faces)
    if dim == 3 and placed.num_faces:  # faces still outward: normals turn with the shape
        np.testing.assert_allclose(placed.normals(), plain.normals() @ turn.T, atol=1e-12)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_a_2d_rotation_may_be_an_angle(name):
    build, _ = BUILDERS[name]
    angle = 0.7
    c, s = np.cos(angle), np.sin(angle)
    by_matrix = build(2, rotation=[[c, -s], [s, c]])
    np.testing.assert_allclose(build(2, rotation=angle).positions, by_matrix.positions, atol=1e-15)
    # counter-clockwise: +x turns towards +y
    np.testing.assert_allclose(
        build(2, rotation=np.pi / 2).positions, build(2).positions @ [[0, 1], [-1, 0]], atol=1e-14
    )


def test_scipy_rotations_are_accepted():
    turn = Rotation.from_euler("xyz", [0.3, -1.1, 2.0])
    cloth = ss.cloth(3, 3, width=1.0, height=1.0, mass=1.0, stiffness=K, rotation=turn)
    plain = ss.cloth(3, 3, width=1.0, height=1.0, mass=1.0, stiffness=K)
    np.testing.assert_allclose(cloth.positions, turn.apply(plain.positions), atol=1e-14)


def test_a_string_direction_is_the_first_column_of_its_rotation():
    rng = np.random.default_rng(3)
    turn = random_rotation(rng, 3)
    by_rotation = ss.string(5, length=2.0, mass=1.0, stiffness=K, rotation=turn)
    by_direction = ss.string(5, length=2.0, mass=1.0, stiffness=K, direction=3.0 * turn[:, 0])
    np.testing.assert_allclose(by_direction.positions, by_rotation.positions, atol=1e-14)


def test_a_table_cloth_lies_flat_facing_up():
    nx, ny, w, h = 6, 5, 1.2, 0.8
    table = ss.cloth(
        nx,
        ny,
        width=w,
        height=h,
        mass=0.2,
        stiffness=K,
        origin=(0.1, 0.75, -0.3),
        normal=(0, 1, 0),
        pin=None,
    )
    np.testing.assert_array_equal(table.positions[:, 1], 0.75)  # one height: horizontal
    np.testing.assert_allclose(table.normals(), np.tile([0.0, 1.0, 0.0], (nx * ny, 1)), atol=1e-12)
    # Rows run across x as before; "down the cloth" (−y) is now +z, the shortest turn.
    np.testing.assert_allclose(table.positions[nx - 1], [0.1 + w, 0.75, -0.3], atol=1e-15)
    np.testing.assert_allclose(table.positions[(ny - 1) * nx], [0.1, 0.75, -0.3 + h], atol=1e-15)
    # Left alone in gravity, it falls flat: every node the same height.
    table.step(1e-3, steps=100)
    assert np.ptp(table.positions[:, 1]) < 1e-12 and table.positions[0, 1] < 0.75


@pytest.mark.parametrize(
    "normal", [(1.0, 2.0, -0.5), (0.0, 0.0, 1.0), (0.0, 0.0, -2.0), (0.3, -1.0, 0.0)]
)
def test_a_cloth_normal_is_the_shortest_turn_from_z(normal):
    plain = ss.cloth(4, 3, width=1.0, height=0.5, mass=1.0, stiffness=K)
    placed = ss.cloth(4, 3, width=1.0, height=0.5, mass=1.0, stiffness=K, normal=normal)
    n = np.asarray(normal) / np.linalg.norm(normal)
    z = np.array([0.0, 0.0, 1.0])
    axis = np.cross(z, n)
    if np.linalg.norm(axis) < 1e-12:  # ±z: no turn, or the documented half turn about x
        axis = np.array([1.0, 0.0, 0.0])
    turn = Rotation.from_rotvec(axis / np.linalg.norm(axis) * np.arccos(np.clip(z @ n, -1, 1)))
    np.testing.assert_allclose(placed.positions, turn.apply(plain.positions), atol=1e-14)
    np.testing.assert_allclose(placed.normals(), np.tile(n, (12, 1)), atol=1e-12)


def test_placement_errors_are_clear():
    kw = dict(width=1.0, height=1.0, mass=1.0, stiffness=K)
    with pytest.raises(ValueError, match="reflection"):
        ss.cloth(3, 3, rotation=np.diag([1.0, 1.0, -1.0]), **kw)
    with pytest.raises(ValueError, match="orthonormal"):
        ss.cloth(3, 3, rotation=2 * np.eye(3), **kw)
    with pytest.raises(ValueError, match=r"shape \(3, 3\)"):
        ss.cloth(3, 3, rotation=np.eye(2), **kw)
    with pytest.raises(ValueError, match="angle is for 2D"):
        ss.cloth(3, 3, rotation=0.5, **kw)
    with pytest.raises(ValueError, match="normal or rotation"):
        ss.cloth(3, 3, rotation=np.eye(3), normal=(0, 1, 0), **kw)
    with pytest.raises(ValueError, match="normal is for a 3D cloth"):
        ss.cloth(3, 3, normal=(0, 1), dim=2, **kw)
    with pytest.raises(ValueError, match="zero vector"):
        ss.cloth(3, 3, normal=(0, 0, 0), **kw)
    with pytest.raises(ValueError, match="direction or rotation"):
        ss.string(3, length=1.0, mass=1.0, stiffness=K, direction=(1, 0, 0), rotation=np.eye(3))
    with pytest.raises(TypeError, match="rotation"):
        ss.jelly(2, 2, 2, size=1.0, mass=1.0, stiffness=K, rotation="up")


def test_physical_parameters_are_keywords():
    with pytest.raises(TypeError):
        ss.string(5, 1.0, 1.0, K)  # the old positional form
    with pytest.raises(TypeError):
        ss.cloth(3, 3, 1.0, 1.0, mass=1.0, stiffness=K)
    with pytest.raises(TypeError):
        ss.mesh(np.eye(3), [[0, 1, 2]], 1.0, K)
    with pytest.raises(TypeError):
        ss.cluster(np.eye(3), 1.0, K)
    with pytest.raises(TypeError):
        ss.balloon(0.3, 1.0, mass=1.0, stiffness=K)


def test_a_ball_count_is_named_for_its_dimension():
    kw = dict(radius=1.0, mass=1.0, stiffness=K)
    assert ss.ball(subdivisions=2, **kw).num_nodes == 10 * 4**2 + 2
    assert ss.ball(nodes=7, dim=2, **kw).num_nodes == 7
    with pytest.raises(TypeError, match=r"subdivisions= .*nodes="):  # the old ball(n, ...)
        ss.ball(1, **kw)
    with pytest.raises(ValueError, match="nodes= is the node count of a 2D ring"):
        ss.ball(nodes=12, **kw)
    with pytest.raises(ValueError, match="subdivisions= is the level of a 3D icosphere"):
        ss.ball(subdivisions=1, dim=2, **kw)
    with pytest.raises(ValueError, match="needs subdivisions="):
        ss.ball(**kw)
    with pytest.raises(ValueError, match="needs nodes="):
        ss.ball(dim=2, **kw)
    with pytest.raises(ValueError, match="0 to 8"):
        ss.ball(subdivisions=9, **kw)
    with pytest.raises(ValueError, match="nodes= is the node count"):
        ss.balloon(string_length=1.0, nodes=12, **kw)
    assert ss.balloon(string_length=1.0, subdivisions=0, **kw).num_nodes == 12 + 10
