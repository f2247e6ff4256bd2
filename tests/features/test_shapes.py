"""The shape builders: topology against closed forms, geometry against exact values.

Every builder is checked for what a model must never have (a duplicate spring, a
spring from a node to itself, a zero-length spring, rest lengths that are not the
initial distances, a total mass that is not the one asked for), for its spring
counts against closed forms at several sizes, and for its faces: outward, so that
the signed volume Σ x0·(x1 × x2)/6 is the polyhedron's volume. One physics check
reproduces the Gamasutra article's point: the jelly without diagonals (Fig. 5)
folds under a sideways push that the one with diagonals (Fig. 8) barely feels.
"""

import itertools
import re

import numpy as np
import pytest
from state import MODEL_ARRAYS as ARRAYS
from state import SPRING_ARRAYS

from springsim import ball, balloon, cloth, cluster, jelly, mesh, string

K, C = 100.0, 0.5  # stiffness N/m and damping N·s/m used where the value does not matter


# ---------------------------------------------------------------------- helpers


def signed_volume(x, faces):
    """Σ x0·(x1 × x2)/6: the enclosed volume if the faces are closed and outward."""
    x0, x1, x2 = (x[faces[:, i]] for i in range(3))
    return np.einsum("ij,ij->i", x0, np.cross(x1, x2)).sum() / 6.0


def face_normals(x, faces):
    """Unnormalised face normals (x1 − x0) × (x2 − x0)."""
    return np.cross(x[faces[:, 1]] - x[faces[:, 0]], x[faces[:, 2]] - x[faces[:, 0]])


def unordered(pairs):
    """Each pair sorted (i < j), as a set of tuples."""
    return {tuple(p) for p in np.sort(np.asarray(pairs), axis=1).tolist()}


def ball_count(dim, n):
    """The keyword of a ball's count: the icosphere level in 3D, the ring's nodes in 2D."""
    return {"subdivisions": n} if dim == 3 else {"nodes": n}


def random_rotation(rng, dim):
    """A proper rotation matrix (det +1) from the QR decomposition of a random matrix."""
    q, r = np.linalg.qr(rng.normal(size=(dim, dim)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q


def every_build():
    """(label, system, mass asked for) for every builder at several sizes and options."""
    builds = []
    for n in (2, 3, 10, 57):
        for dim in (2, 3):
            builds.append(
                (
                    f"string-{n}-{dim}d",
                    string(n, length=2.0, mass=0.3, stiffness=K, damping=C, dim=dim),
                    0.3,
                )
            )
    for nx, ny in ((2, 2), (3, 2), (2, 5), (4, 7), (10, 10)):
        for dim in (2, 3):
            builds.append(
                (
                    f"cloth-{nx}x{ny}-{dim}d",
                    cloth(nx, ny, width=1.5, height=0.7, mass=0.2, stiffness=K, dim=dim),
                    0.2,
                )
            )
    for counts in ((2, 2, 2), (3, 2, 4), (4, 5, 3), (2, 2), (3, 5), (6, 4)):
        for arrangement in ("simple", "stable"):
            sim = jelly(
                *counts,
                size=(0.3, 0.5, 0.7)[: len(counts)],
                mass=2.0,
                stiffness=K,
                arrangement=arrangement,
            )
            builds.append((f"jelly-{counts}-{arrangement}", sim, 2.0))
    for level in range(4):
        builds.append(
            (
                f"ball-level{level}",
                ball(subdivisions=level, radius=0.4, mass=1.5, stiffness=K, damping=C),
                1.5,
            )
        )
    for n in (3, 4, 17):
        builds.append(
            (f"ring-{n}", ball(nodes=n, radius=0.4, mass=1.5, stiffness=K, damping=C, dim=2), 1.5)
        )
    rng = np.random.default_rng(1)
    for n in (2, 3, 8, 20):
        builds.append(
            (f"cluster-{n}", cluster(rng.normal(size=(n, 3)), mass=0.8, stiffness=K), 0.8)
        )
    builds.append(("cluster-2d", cluster(rng.normal(size=(6, 2)), mass=0.8, stiffness=K), 0.8))
    for dim, n, nodes in ((3, 0, 1), (3, 1, 10), (3, 2, 4), (2, 12, 1), (2, 16, 10)):
        sim = balloon(
            radius=0.3,
            string_length=1.2,
            mass=0.05,
            stiffness=K,
            damping=C,
            dim=dim,
            **ball_count(dim, n),
            string_nodes=nodes,
        )
        builds.append((f"balloon-{dim}d-{n}-{nodes}", sim, 0.05))
    return builds


BUILDS = every_build()


# ---------------------------------------------------------------------- every builder


@pytest.mark.parametrize(("label", "sim", "mass"), BUILDS, ids=[b[0] for b in BUILDS])
def test_every_builder_makes_sound_springs(label, sim, mass):
    pairs = sim.springs
    assert len(pairs) > 0
    assert np.all(pairs[:, 0] != pairs[:, 1]), "a spring from a node to itself"
    assert len(unordered(pairs)) == len(pairs), "a duplicate spring"
    assert pairs.min() >= 0 and pairs.max() < sim.num_nodes
    assert sim.rest_lengths.min() > 1e-6, "a zero-length spring"
    # Rest lengths are the initial distances (computed twice in floating point).
    np.testing.assert_allclose(sim.rest_lengths, sim.spring_lengths(), rtol=1e-14, atol=0)
    x = sim.positions
    np.testing.assert_allclose(
        sim.rest_lengths, np.linalg.norm(x[pairs[:, 1]] - x[pairs[:, 0]], axis=1), rtol=1e-14
    )
    np.testing.assert_allclose(sim.rest_positions, x, rtol=0, atol=0)
    if sim.num_faces:
        assert sim.faces.max() < sim.num_nodes
        assert len({tuple(sorted(f)) for f in sim.faces.tolist()}) == sim.num_faces


@pytest.mark.parametrize(("label", "sim", "mass"), BUILDS, ids=[b[0] for b in BUILDS])
def test_total_mass_is_the_mass_asked_for(label, sim, mass):
    assert abs(sim.masses.sum() - mass) <= 1e-14 * mass
    assert np.all(sim.masses > 0)


def test_per_node_masses_are_taken_as_given():
    rng = np.random.default_rng(7)
    cases = [
        (lambda m: string(6, length=1.0, mass=m, stiffness=K), 6),
        (lambda m: cloth(4, 3, width=1.0, height=1.0, mass=m, stiffness=K), 12),
        (lambda m: jelly(3, 2, 2, size=1.0, mass=m, stiffness=K), 12),
        (lambda m: jelly(3, 2, size=1.0, mass=m, stiffness=K), 6),
        (lambda m: ball(subdivisions=1, radius=1.0, mass=m, stiffness=K), 42),
        (lambda m: ball(nodes=5, radius=1.0, mass=m, stiffness=K, dim=2), 5),
        (lambda m: cluster(np.eye(3), mass=m, stiffness=K), 3),
        (lambda m: mesh(np.eye(3), [[0, 1, 2]], mass=m, stiffness=K), 3),
    ]
    for build, count in cases:
        m = rng.uniform(0.1, 2.0, size=count)
        np.testing.assert_array_equal(build(m).masses, m)
        with pytest.raises(ValueError, match="shape"):
            build(m[:-1])


# ---------------------------------------------------------------------- closed forms


@pytest.mark.parametrize("n", [2, 3, 10, 57])
def test_string_counts_and_layout(n):
    sim = string(n, length=3.0, mass=1.0, stiffness=K, dim=3, start=(1, 2, 3), direction=(0, 0, -2))
    assert sim.num_nodes == n and sim.num_springs == n - 1
    assert sim.springs.tolist() == [[i, i + 1] for i in range(n - 1)]
    np.testing.assert_allclose(sim.rest_lengths, 3.0 / (n - 1), rtol=1e-14)
    np.testing.assert_allclose(sim.positions[0], [1, 2, 3])
    np.testing.assert_allclose(sim.positions[-1], [1, 2, 0], atol=1e-15)
    assert sim.pinned.tolist() == [True] + [False] * (n - 1)


@pytest.mark.parametrize(
    ("pin", "n", "expected"),
    [
        ("start", 5, [0]),
        ("end", 5, [4]),
        ("both", 5, [0, 4]),
        ("middle", 5, [2]),  # odd n: the middle node
        ("middle", 6, [2]),  # even n: (n - 1) // 2, the middle node nearer the start
        ("middle", 2, [0]),
        (None, 5, []),
        ("none", 5, []),
        ([1, 3], 5, [1, 3]),
        (np.array([4], dtype=np.uint8), 5, [4]),
    ],
)
def test_string_pins(pin, n, expected):
    sim = string(n, length=1.0, mass=1.0, stiffness=K, dim=2, pin=pin)
    assert np.flatnonzero(sim.pinned).tolist() == expected


@pytest.mark.parametrize(("nx", "ny"), [(2, 2), (3, 2), (2, 5), (4, 7), (10, 10), (17, 3)])
def test_cloth_spring_families_match_closed_forms(nx, ny):
    structural = nx * (ny - 1) + ny * (nx - 1)
    shear = 2 * (nx - 1) * (ny - 1)
    bend = nx * (ny - 2) + ny * (nx - 2)
    w, h = 1.2, 0.9
    dx, dy = w / (nx - 1), h / (ny - 1)
    sim = cloth(
        nx,
        ny,
        width=w,
        height=h,
        mass=1.0,
        stiffness=K,
        shear_stiffness=20.0,
        bend_stiffness=3.0,
        pin=None,
    )
    assert sim.num_springs == structural + shear + bend
    assert sim.num_faces == 2 * (nx - 1) * (ny - 1)
    # Each family is where the documented order puts it, with its own stiffness,
    # and its springs have that family's length.
    families = [
        (slice(0, structural), K, None),
        (slice(structural, structural + shear), 20.0, np.hypot(dx, dy)),
        (slice(structural + shear, None), 3.0, None),
    ]
    for part, k, length in families:
        np.testing.assert_array_equal(sim.stiffness[part], k)
        if length is not None:
            np.testing.assert_allclose(sim.rest_lengths[part], length, rtol=1e-13)
    rows = ny * (nx - 1)
    np.testing.assert_allclose(sim.rest_lengths[:rows], dx, rtol=1e-13)
    np.testing.assert_allclose(sim.rest_lengths[rows:structural], dy, rtol=1e-13)
    bend_rows = ny * (nx - 2)
    np.testing.assert_allclose(sim.rest_lengths[structural + shear :][:bend_rows], 2 * dx)
    np.testing.assert_allclose(sim.rest_lengths[structural + shear + bend_rows :], 2 * dy)
    # The options take families away.
    assert (
        cloth(nx, ny, width=w, height=h, mass=1.0, stiffness=K, shear=False).num_springs
        == structural + bend
    )
    assert (
        cloth(nx, ny, width=w, height=h, mass=1.0, stiffness=K, bend=False).num_springs
        == structural + shear
    )
    assert (
        cloth(nx, ny, width=w, height=h, mass=1.0, stiffness=K, shear=False, bend=False).num_springs
        == structural
    )


def test_cloth_layout_pins_and_uvs():
    nx, ny = 5, 4
    sim = cloth(
        nx, ny, width=2.0, height=1.5, mass=1.0, stiffness=K, origin=(1.0, 3.0, -1.0), pin="top"
    )
    x = sim.positions
    np.testing.assert_allclose(x[0], [1.0, 3.0, -1.0])  # top-left
    np.testing.assert_allclose(x[nx - 1], [3.0, 3.0, -1.0])  # top-right
    np.testing.assert_allclose(x[-1], [3.0, 1.5, -1.0])  # bottom-right: hangs along -y
    np.testing.assert_array_equal(x[:, 2], -1.0)
    assert np.flatnonzero(sim.pinned).tolist() == list(range(nx))
    uv = sim.uvs
    assert uv.min() == 0.0 and uv.max() == 1.0
    np.testing.assert_allclose(uv[:, 0], (x[:, 0] - 1.0) / 2.0, atol=1e-15)
    np.testing.assert_allclose(uv[:, 1], (x[:, 1] - 1.5) / 1.5, atol=1e-15)  # v = 1 on top
    pins = {
        "top_corners": [0, nx - 1],
        "left": list(range(0, nx * ny, nx)),
        None: [],
        "none": [],
        (3, 7): [3, 7],
    }
    for pin, expected in pins.items():
        pin = list(pin) if isinstance(pin, tuple) else pin
        assert (
            np.flatnonzero(
                cloth(nx, ny, width=1, height=1, mass=1, stiffness=K, pin=pin).pinned
            ).tolist()
            == expected
        )
    flat = cloth(nx, ny, width=2.0, height=1.5, mass=1.0, stiffness=K, dim=2)
    np.testing.assert_allclose(flat.positions, x[:, :2] - [1.0, 3.0], atol=1e-15)
    assert flat.num_springs == sim.num_springs


def jelly_counts(counts, arrangement):
    """Closed form of the jelly's spring count."""
    if len(counts) == 2:
        nx, ny = counts
        a, b = nx - 1, ny - 1
        edges = a * ny + nx * b
        return edges + (2 * a * b if arrangement == "stable" else 0)
    nx, ny, nz = counts
    a, b, c = nx - 1, ny - 1, nz - 1
    edges = a * ny * nz + nx * b * nz + nx * ny * c
    faces = 2 * (a * b * nz + nx * b * c + a * ny * c)
    body = 4 * a * b * c
    return edges + (faces + body if arrangement == "stable" else 0)


@pytest.mark.parametrize("counts", [(2, 2, 2), (3, 2, 4), (4, 5, 3), (6, 6, 6), (2, 2), (3, 5)])
@pytest.mark.parametrize("arrangement", ["simple", "stable"])
def test_jelly_counts_match_closed_forms(counts, arrangement):
    size = np.array([0.3, 0.5, 0.7])[: len(counts)]
    sim = jelly(*counts, size=size, mass=1.0, stiffness=K, arrangement=arrangement)
    assert sim.num_nodes == np.prod(counts)
    assert sim.num_springs == jelly_counts(counts, arrangement)
    # Every spring has one of the lattice's lengths: an edge (one axis), a face
    # diagonal (two axes) or a body diagonal (three), and "simple" has edges only.
    cell = size / (np.array(counts) - 1)
    axes = range(len(counts))
    subsets = [list(c) for r in axes for c in itertools.combinations(axes, r + 1)]
    if arrangement == "simple":
        subsets = [s for s in subsets if len(s) == 1]
    allowed = np.array([np.linalg.norm(cell[s]) for s in subsets])
    nearest = np.abs(sim.rest_lengths[:, None] - allowed[None, :]).min(axis=1)
    assert nearest.max() < 1e-12
    a = np.array(counts) - 1
    if len(counts) == 3:
        assert sim.num_faces == 4 * (a[0] * a[1] + a[1] * a[2] + a[0] * a[2])
    else:
        assert sim.num_faces == 2 * a[0] * a[1]


def test_jelly_layout_and_bottom_pin():
    sim = jelly(
        3, 4, 2, size=(1.0, 3.0, 0.5), mass=1.0, stiffness=K, origin=(1, 2, 3), pin="bottom"
    )
    x = sim.positions
    np.testing.assert_allclose(x.min(axis=0), [1, 2, 3])
    np.testing.assert_allclose(x.max(axis=0), [2, 5, 3.5])
    np.testing.assert_allclose(x[1] - x[0], [0.5, 0, 0])  # x runs fastest
    np.testing.assert_allclose(x[3] - x[0], [0, 1, 0])
    np.testing.assert_allclose(x[12] - x[0], [0, 0, 0.5])
    np.testing.assert_array_equal(sim.pinned, x[:, 1] == 2.0)
    flat = jelly(3, 4, size=2.0, mass=1.0, stiffness=K, pin="bottom")
    np.testing.assert_array_equal(flat.pinned, flat.positions[:, 1] == 0.0)


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_icosphere_counts(level):
    sim = ball(subdivisions=level, radius=1.0, mass=1.0, stiffness=K)
    assert sim.num_nodes == 10 * 4**level + 2
    assert sim.num_springs == 30 * 4**level
    assert sim.num_faces == 20 * 4**level
    # Springs are exactly the unique edges of the faces.
    f = sim.faces
    assert unordered(sim.springs) == unordered(
        np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    )
    np.testing.assert_allclose(np.linalg.norm(sim.positions, axis=1), 1.0, rtol=1e-15)


@pytest.mark.parametrize("n", [3, 4, 7, 64])
def test_ring_counts_and_layout(n):
    sim = ball(nodes=n, radius=0.5, mass=1.0, stiffness=K, dim=2, center=(1.0, 2.0))
    assert sim.num_nodes == n and sim.num_springs == n and sim.num_faces == 0
    assert unordered(sim.springs) == unordered([(i, (i + 1) % n) for i in range(n)])
    r = sim.positions - [1.0, 2.0]
    np.testing.assert_allclose(np.linalg.norm(r, axis=1), 0.5, rtol=1e-15)
    np.testing.assert_allclose(r[0], [0.0, -0.5], atol=1e-15)  # node 0 at the bottom
    angles = np.unwrap(np.arctan2(r[:, 1], r[:, 0]))
    assert np.all(np.diff(angles) > 0)  # counter-clockwise


@pytest.mark.parametrize("n", [2, 3, 8, 20])
def test_cluster_counts(n):
    points = np.random.default_rng(n).normal(size=(n, 3))
    sim = cluster(points, mass=1.0, stiffness=K)
    assert sim.num_springs == n * (n - 1) // 2
    assert unordered(sim.springs) == set(itertools.combinations(range(n), 2))
    np.testing.assert_array_equal(sim.positions, points)


def test_cluster_cube_is_the_xbdev_squishy_cube():
    # 8 corners, every pair once: 8·7/2 = 28 springs (the article's 8 × 7 = 56 halved):
    # 12 edges, 12 face diagonals, 4 body diagonals.
    cube = cluster(list(itertools.product([0.0, 1.0], repeat=3)), mass=1.0, stiffness=K)
    assert cube.num_springs == 28
    lengths = np.round(cube.rest_lengths**2).astype(int)
    assert np.bincount(lengths).tolist() == [0, 12, 12, 4]


@pytest.mark.parametrize(
    ("dim", "n", "nodes"), [(3, 0, 1), (3, 1, 10), (3, 2, 3), (2, 12, 1), (2, 16, 10)]
)
def test_balloon_counts_and_layout(dim, n, nodes):
    sim = balloon(
        radius=0.3,
        string_length=1.2,
        mass=0.05,
        stiffness=K,
        damping=C,
        dim=dim,
        **ball_count(dim, n),
        string_nodes=nodes,
        string_mass=0.01,
        string_stiffness=7.0,
        center=(0.5,) * dim,
    )
    skin = ball(
        **ball_count(dim, n), radius=0.3, mass=1.0, stiffness=K, dim=dim, center=(0.5,) * dim
    )
    nb = skin.num_nodes
    assert sim.num_nodes == nb + nodes
    assert sim.num_springs == skin.num_springs + nodes  # string springs + the knot
    assert sim.num_faces == skin.num_faces
    np.testing.assert_array_equal(sim.springs[: skin.num_springs], skin.springs)
    np.testing.assert_array_equal(sim.faces, skin.faces)
    np.testing.assert_allclose(sim.positions[:nb], skin.positions)
    # The string hangs straight down from the ball's lowest node to its pinned end.
    lowest = int(np.argmin(skin.positions[:, 1]))
    np.testing.assert_allclose(skin.positions[lowest], np.eye(dim)[1] * -0.3 + 0.5, atol=1e-15)
    tail = sim.positions[nb:]
    np.testing.assert_allclose(tail[:, [0] + list(range(2, dim))], 0.5, atol=1e-14)
    np.testing.assert_allclose(tail[:, 1], 0.5 - 0.3 - 1.2 * np.arange(1, nodes + 1) / nodes)
    assert sim.springs[-1].tolist() == [lowest, nb]  # the knot, last
    np.testing.assert_array_equal(sim.stiffness[skin.num_springs :], 7.0)
    np.testing.assert_allclose(sim.rest_lengths[skin.num_springs :], 1.2 / nodes)
    assert np.flatnonzero(sim.pinned).tolist() == [nb + nodes - 1]
    np.testing.assert_allclose(sim.masses[nb:].sum(), 0.01, rtol=1e-14)
    np.testing.assert_allclose(sim.masses.sum(), 0.05, rtol=1e-14)
    free = balloon(
        radius=0.3,
        string_length=1.2,
        mass=0.05,
        stiffness=K,
        dim=dim,
        **ball_count(dim, n),
        string_nodes=nodes,
        pin=None,
    )
    assert not free.pinned.any()
    assert free.masses[nb:].sum() == pytest.approx(0.005)  # a tenth of the mass by default


# ---------------------------------------------------------------------- mesh()


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_mesh_of_an_icosphere_is_a_closed_surface(level):
    sphere = ball(subdivisions=level, radius=1.0, mass=1.0, stiffness=K)
    sim = mesh(sphere.positions, sphere.faces, mass=1.0, stiffness=K)
    v, e, f = sim.num_nodes, sim.num_springs, sim.num_faces
    assert 2 * e == 3 * f  # every edge is shared by exactly two triangles
    assert v - e + f == 2  # Euler characteristic of a sphere
    assert unordered(sim.springs) == unordered(sphere.springs)
    # bend=True adds one spring per edge of a closed surface (each edge is interior).
    assert (
        mesh(sphere.positions, sphere.faces, mass=1.0, stiffness=K, bend=True).num_springs == 2 * e
    )


def test_mesh_of_quads_and_ngons():
    corners = np.array(list(itertools.product([0.0, 1.0], repeat=3)))
    quads = [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]]
    box = mesh(corners, quads, mass=1.0, stiffness=K)
    # 6 quads -> 12 triangles; 12 cube edges + one diagonal per quad = 18 springs.
    assert (box.num_faces, box.num_springs) == (12, 18)
    assert box.num_nodes - box.num_springs + box.num_faces == 2
    assert signed_volume(box.positions, box.faces) == pytest.approx(1.0, abs=1e-14)
    # A hexagon (one n-gon): a fan of 4 triangles, 6 sides + 3 diagonals; its 3
    # interior edges give 3 bend springs.
    angle = np.arange(6) * np.pi / 3
    hexagon = np.stack([np.cos(angle), np.sin(angle)], axis=1)
    flat = mesh(hexagon, [range(6)], mass=1.0, stiffness=K)
    assert (flat.num_faces, flat.num_springs) == (4, 9)
    assert mesh(hexagon, [range(6)], mass=1.0, stiffness=K, bend=True).num_springs == 12
    # A quad and a triangle sharing the edge (1, 2): 3 triangles, 4 + 1 + 2 = 7 springs.
    vertices = [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [2, 0.5, 0]]
    mixed = mesh(vertices, [[0, 1, 2, 3], [1, 4, 2]], mass=1.0, stiffness=K)
    assert (mixed.num_faces, mixed.num_springs) == (3, 7)
    assert mixed.normals()[:, 2].min() == 1.0


# ---------------------------------------------------------------------- faces and normals


def test_normals_of_a_flat_cloth_are_plus_z():
    for nx, ny in ((2, 2), (5, 3), (8, 11)):
        sim = cloth(nx, ny, width=1.7, height=0.4, mass=1.0, stiffness=K, origin=(3.0, -2.0, 5.0))
        normals = sim.normals()
        np.testing.assert_allclose(
            normals, np.tile([0.0, 0.0, 1.0], (sim.num_nodes, 1)), atol=1e-12
        )
        assert np.all(face_normals(sim.positions, sim.faces)[:, 2] > 0)


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_normals_of_an_icosphere_point_outward(level):
    center = np.array([0.3, -1.0, 2.0])
    sim = ball(subdivisions=level, radius=2.0, mass=1.0, stiffness=K, center=center)
    radial = (sim.positions - center) / 2.0
    cosines = np.einsum("ij,ij->i", sim.normals(), radial)
    assert cosines.min() > 0.9
    if level == 0:  # the icosahedron is symmetric about each vertex: exactly radial
        np.testing.assert_allclose(sim.normals(), radial, atol=1e-12)


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_ball_faces_are_outward(level):
    center = np.array([1.0, 2.0, -3.0])
    r = 0.7
    sim = ball(subdivisions=level, radius=r, mass=1.0, stiffness=K, center=center)
    x, f = sim.positions, sim.faces
    # Each face faces away from the centre ...
    outward = np.einsum("ij,ij->i", face_normals(x, f), x[f].mean(axis=1) - center)
    assert outward.min() > 0
    # ... so the signed volume equals the volume of the polyhedron, the sum of the
    # (unsigned) tetrahedra from the centre to each face.
    tetrahedra = np.abs(np.linalg.det(x[f] - center)).sum() / 6.0
    volume = signed_volume(x, f)
    assert volume == pytest.approx(tetrahedra, rel=1e-12)
    assert volume < 4 / 3 * np.pi * r**3
    if level == 0:  # the regular icosahedron: edge a = 4r / sqrt(10 + 2 sqrt 5)
        a = 4 * r / np.sqrt(10 + 2 * np.sqrt(5))
        assert volume == pytest.approx(5 / 12 * (3 + np.sqrt(5)) * a**3, rel=1e-12)
        np.testing.assert_allclose(sim.rest_lengths, a, rtol=1e-12)


@pytest.mark.parametrize("counts", [(2, 2, 2), (3, 2, 4), (5, 4, 3)])
def test_jelly_faces_are_the_outward_box_surface(counts):
    size = np.array([0.4, 1.3, 0.9])
    origin = np.array([-2.0, 1.0, 0.5])
    sim = jelly(*counts, size=size, mass=1.0, stiffness=K, origin=origin)
    x, f = sim.positions, sim.faces
    assert abs(signed_volume(x, f) - size.prod()) < 1e-12
    # Each face lies on the box's surface and faces away from its centre.
    on_surface = np.isclose(x[f], origin).all(axis=1) | np.isclose(x[f], origin + size).all(axis=1)
    assert on_surface.any(axis=1).all()
    outward = np.einsum("ij,ij->i", face_normals(x, f), x[f].mean(axis=1) - (origin + size / 2))
    assert outward.min() > 0
    # Closed: every edge of the surface is shared by exactly two faces.
    edges = np.sort(np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]]), axis=1)
    assert set(np.unique(edges, axis=0, return_counts=True)[1].tolist()) == {2}
    # 2D: the cells' triangles are counter-clockwise and tile the rectangle.
    flat = jelly(*counts[:2], size=size[:2], mass=1.0, stiffness=K)
    x2 = flat.positions[flat.faces]
    (ux, uy), (vx, vy) = (x2[:, 1] - x2[:, 0]).T, (x2[:, 2] - x2[:, 0]).T
    areas = (ux * vy - uy * vx) / 2
    assert areas.min() > 0 and areas.sum() == pytest.approx(size[0] * size[1], rel=1e-13)


# ---------------------------------------------------------------------- rigid frame


@pytest.mark.parametrize("counts", [(3, 4, 2), (4, 3)])
def test_rigid_frame_recovers_a_rotation_of_a_jelly(counts):
    rng = np.random.default_rng(11)
    dim = len(counts)
    n = int(np.prod(counts))
    sim = jelly(*counts, size=1.5, mass=rng.uniform(0.5, 2.0, n), stiffness=K, origin=[0.2] * dim)
    rotation = random_rotation(rng, dim)
    shift = rng.normal(size=dim) * 10
    rest = sim.positions.copy()
    sim.positions = rest @ rotation.T + shift
    center, found = sim.rigid_frame()
    np.testing.assert_allclose(found, rotation, atol=1e-10)
    np.testing.assert_allclose(
        center, (sim.masses @ rest / sim.masses.sum()) @ rotation.T + shift, atol=1e-10
    )
    # Of a subset of nodes, too.
    _, found = sim.rigid_frame(np.arange(0, n, 2))
    np.testing.assert_allclose(found, rotation, atol=1e-10)


# ---------------------------------------------------------------------- physics: Fig. 5 vs Fig. 8


@pytest.mark.parametrize("dim", [3, 2])
def test_simple_jelly_folds_where_the_stable_one_holds(dim):
    # The Gamasutra article: a jelly of lattice edges only (Fig. 5) is unstable;
    # the diagonals of Fig. 8 make it keep its shape. A 1 m block of 3 nodes per
    # side (k = 100 N/m, 1 kg) stands with its bottom face pinned; 1 N pushes its
    # top face sideways (+x). Gravity is off so that only the push loads the block
    # (under gravity the simple lattice would also buckle under its own weight, and
    # the stable one sag, mixing a second effect into the comparison). Drag damps
    # the motion so both come to rest within 10 s: the stable block at its elastic
    # shear (~4 mm in 3D, ~2 cm in 2D), the simple one folded over (~1 m, its
    # height: the cells shear freely until the columns lie down along the push).
    moved = {}
    for arrangement in ("simple", "stable"):
        counts = (3,) * dim
        sim = jelly(
            *counts,
            size=1.0,
            mass=1.0,
            stiffness=100.0,
            damping=0.5,
            arrangement=arrangement,
            pin="bottom",
        )
        sim.gravity = 0.0
        sim.drag = 0.1
        top = np.flatnonzero(sim.positions[:, 1] == 1.0)
        sim.external_forces[top, 0] = 1.0 / len(top)
        dt = 0.2 * sim.critical_dt()
        sim.step(dt, steps=int(10.0 / dt))
        moved[arrangement] = (sim.positions[top, 0] - sim.rest_positions[top, 0]).mean()
    assert moved["stable"] > 0
    assert moved["simple"] > 0.5  # folded over
    assert moved["simple"] >= 10 * moved["stable"], moved


# ---------------------------------------------------------------------- System editing


def test_add_and_connect_builder_output():
    whole = cloth(4, 3, width=1.0, height=0.5, mass=0.3, stiffness=K, damping=C, pin="top")
    whole.velocities = np.random.default_rng(3).normal(size=(whole.num_nodes, 3))
    part = jelly(
        2, 3, 2, size=0.4, mass=0.7, stiffness=2 * K, damping=0.1, pin="bottom", origin=(3, 0, 0)
    )
    part.external_forces = (1.5, 1.5, 1.5)
    before_whole = {name: np.array(getattr(whole, name)) for name in ARRAYS}
    before_part = {name: np.array(getattr(part, name)) for name in ARRAYS}
    n, m, f = whole.num_nodes, whole.num_springs, whole.num_faces
    idx = whole.add(part)
    np.testing.assert_array_equal(idx, np.arange(n, n + part.num_nodes))
    for name in ARRAYS:  # everything of both is there, the added part's indices shifted
        after = getattr(whole, name)
        old = f if name == "faces" else m if name in SPRING_ARRAYS else n
        np.testing.assert_array_equal(after[:old], before_whole[name])
        shift = n if name in ("springs", "faces") else 0
        np.testing.assert_array_equal(after[old:], before_part[name] + shift)
    # `part` is unchanged.
    for name in ARRAYS:
        np.testing.assert_array_equal(getattr(part, name), before_part[name])
    spring = whole.connect(n - 1, idx[0], stiffness=5.0, damping=0.2)
    assert spring == m + part.num_springs == whole.num_springs - 1
    assert whole.springs[spring].tolist() == [n - 1, idx[0]]
    assert whole.rest_lengths[spring] == pytest.approx(
        np.linalg.norm(whole.positions[idx[0]] - whole.positions[n - 1])
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_remove_nodes_matches_a_numpy_recomputation(seed):
    rng = np.random.default_rng(seed)
    sim = jelly(
        3, 4, 3, size=1.0, mass=rng.uniform(0.1, 1, 36), stiffness=K, damping=C, pin="bottom"
    )
    sim.stiffness = rng.uniform(1, 2, sim.num_springs)
    sim.velocities = rng.normal(size=(36, 3))
    sim.uvs = rng.uniform(size=(36, 2))
    before = {name: np.array(getattr(sim, name)) for name in ARRAYS}
    removed = rng.choice(36, size=7, replace=False)
    keep = np.ones(36, bool)
    keep[removed] = False
    expected_map = np.where(keep, np.cumsum(keep) - 1, -1)
    mapping = sim.remove_nodes(removed)
    np.testing.assert_array_equal(mapping, expected_map)
    kept_springs = keep[before["springs"]].all(axis=1)
    kept_faces = keep[before["faces"]].all(axis=1)
    assert sim.num_nodes == keep.sum()
    assert sim.num_springs == kept_springs.sum() and sim.num_faces == kept_faces.sum()
    for name in ARRAYS:
        if name in ("springs", "faces"):
            rows = kept_springs if name == "springs" else kept_faces
            expected = expected_map[before[name][rows]]
        elif name in SPRING_ARRAYS:
            expected = before[name][kept_springs]
        else:
            expected = before[name][keep]
        np.testing.assert_array_equal(getattr(sim, name), expected, err_msg=name)


# ---------------------------------------------------------------------- bad arguments


BAD = [
    # counts
    (lambda: string(1, length=1.0, mass=1.0, stiffness=K), ValueError, "n must be >= 2"),
    (lambda: string(2.0, length=1.0, mass=1.0, stiffness=K), TypeError, "n must be an integer"),
    (lambda: string(True, length=1.0, mass=1.0, stiffness=K), TypeError, "integer"),
    (
        lambda: cloth(1, 5, width=1.0, height=1.0, mass=1.0, stiffness=K),
        ValueError,
        "nx must be >= 2",
    ),
    (
        lambda: cloth(5, 0, width=1.0, height=1.0, mass=1.0, stiffness=K),
        ValueError,
        "ny must be >= 2",
    ),
    (lambda: jelly(3, 3, 1, size=1.0, mass=1.0, stiffness=K), ValueError, "nz must be >= 2"),
    (lambda: jelly(3, "3", size=1.0, mass=1.0, stiffness=K), TypeError, "ny"),
    (lambda: ball(nodes=2, radius=1.0, mass=1.0, stiffness=K, dim=2), ValueError, ">= 3"),
    (lambda: ball(subdivisions=-1, radius=1.0, mass=1.0, stiffness=K), ValueError, ">= 0"),
    (lambda: ball(subdivisions=9, radius=1.0, mass=1.0, stiffness=K), ValueError, "level"),
    (lambda: ball(subdivisions=1.5, radius=1.0, mass=1.0, stiffness=K), TypeError, "integer"),
    (lambda: cluster([[0.0, 0.0, 0.0]], mass=1.0, stiffness=K), ValueError, "at least 2"),
    (
        lambda: balloon(radius=1.0, string_length=1.0, mass=1.0, stiffness=K, string_nodes=0),
        ValueError,
        "string_nodes",
    ),
    # sizes
    (lambda: string(3, length=-1.0, mass=1.0, stiffness=K), ValueError, "length"),
    (lambda: string(3, length=0.0, mass=1.0, stiffness=K), ValueError, "length"),
    (lambda: cloth(3, 3, width=-1.0, height=1.0, mass=1.0, stiffness=K), ValueError, "width"),
    (lambda: cloth(3, 3, width=1.0, height=np.nan, mass=1.0, stiffness=K), ValueError, "height"),
    (lambda: jelly(3, 3, 3, size=-1.0, mass=1.0, stiffness=K), ValueError, "size"),
    (lambda: jelly(3, 3, 3, size=(1.0, 0.0, 1.0), mass=1.0, stiffness=K), ValueError, "size"),
    (lambda: jelly(3, 3, 3, size=(1.0, 1.0), mass=1.0, stiffness=K), ValueError, "shape"),
    (lambda: ball(subdivisions=1, radius=-0.5, mass=1.0, stiffness=K), ValueError, "radius"),
    (
        lambda: balloon(radius=1.0, string_length=-1.0, mass=1.0, stiffness=K),
        ValueError,
        "string_length",
    ),
    # masses, stiffness, damping
    (lambda: string(3, length=1.0, mass=-1.0, stiffness=K), ValueError, "mass"),
    (lambda: string(3, length=1.0, mass=0.0, stiffness=K), ValueError, "mass"),
    (lambda: string(3, length=1.0, mass=[1.0, 2.0], stiffness=K), ValueError, "shape"),
    (lambda: string(3, length=1.0, mass=[1.0, -2.0, 1.0], stiffness=K), ValueError, "mass"),
    (lambda: string(3, length=1.0, mass="heavy", stiffness=K), TypeError, "mass"),
    (lambda: cloth(3, 3, width=1.0, height=1.0, mass=1.0, stiffness=-K), ValueError, "stiffness"),
    (
        lambda: cloth(3, 3, width=1.0, height=1.0, mass=1.0, stiffness=K, bend_stiffness=-1.0),
        ValueError,
        "bend_stiffness",
    ),
    (
        lambda: jelly(2, 2, 2, size=1.0, mass=1.0, stiffness=K, damping=np.inf),
        ValueError,
        "damping",
    ),
    (lambda: ball(subdivisions=1, radius=1.0, mass=1.0, stiffness=None), TypeError, "stiffness"),
    (lambda: cluster(np.eye(3), mass=1.0, stiffness=[K, K]), ValueError, "single number"),
    (
        lambda: balloon(radius=1.0, string_length=1.0, mass=1.0, stiffness=K, string_mass=1.0),
        ValueError,
        "string_mass",
    ),
    # choices
    (
        lambda: string(3, length=1.0, mass=1.0, stiffness=K, pin="top"),
        ValueError,
        "'start', 'end', 'both', 'middle', 'none'",
    ),
    (
        lambda: cloth(3, 3, width=1.0, height=1.0, mass=1.0, stiffness=K, pin="bottom"),
        ValueError,
        "'top_corners', 'top', 'left'",
    ),
    (lambda: jelly(2, 2, size=1, mass=1, stiffness=K, pin="top"), ValueError, "'bottom'"),
    (
        lambda: balloon(radius=1.0, string_length=1.0, mass=1.0, stiffness=K, pin="start"),
        ValueError,
        "'end'",
    ),
    (
        lambda: jelly(2, 2, size=1, mass=1, stiffness=K, arrangement="fig8"),
        ValueError,
        "'stable', 'simple'",
    ),
    (lambda: jelly(2, 2, size=1, mass=1, stiffness=K, arrangement=8), TypeError, "arrangement"),
    (lambda: string(3, length=1.0, mass=1.0, stiffness=K, pin=True), TypeError, "pin"),
    (lambda: string(3, length=1.0, mass=1.0, stiffness=K, pin=[3]), ValueError, "pin"),
    (lambda: string(3, length=1.0, mass=1.0, stiffness=K, pin=[-1]), ValueError, "pin"),
    (lambda: string(3, length=1.0, mass=1.0, stiffness=K, dim=4), ValueError, "dim must be 2 or 3"),
    (lambda: cloth(3, 3, width=1.0, height=1.0, mass=1.0, stiffness=K, dim=3.0), TypeError, "dim"),
    # geometry
    (
        lambda: string(3, length=1.0, mass=1.0, stiffness=K, direction=(0, 0, 0)),
        ValueError,
        "direction",
    ),
    (lambda: string(3, length=1.0, mass=1.0, stiffness=K, start=(0, 0)), ValueError, "start"),
    (
        lambda: cloth(3, 3, width=1.0, height=1.0, mass=1.0, stiffness=K, origin="here"),
        TypeError,
        "origin",
    ),
    (
        lambda: ball(subdivisions=1, radius=1.0, mass=1.0, stiffness=K, center=(0, np.nan, 0)),
        ValueError,
        "center",
    ),
    (lambda: cluster([[0, 0], [1, 1], [0, 0]], mass=1.0, stiffness=K), ValueError, "same place"),
    (lambda: cluster([[0, 0, 0, 0], [1, 1, 1, 1]], mass=1.0, stiffness=K), ValueError, "shape"),
    (lambda: cluster([["a", "b"], ["c", "d"]], mass=1.0, stiffness=K), TypeError, "points"),
]


@pytest.mark.parametrize(("call", "exception", "match"), BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_arguments_raise_clear_errors(call, exception, match):
    with pytest.raises(exception, match=re.escape(match)):
        call()


def test_mesh_rejects_no_vertices_and_coincident_vertices():
    with pytest.raises(ValueError, match="N > 0"):
        mesh(np.zeros((0, 3)), [], mass=1.0, stiffness=1.0)
    with pytest.raises(ValueError, match="vertices 0 and 1 coincide"):
        mesh([[0, 0, 0], [0, 0, 0], [0, 1, 0]], [[0, 1, 2]], mass=1.0, stiffness=1.0)


def test_empty_index_lists_are_no_ops():
    sim = jelly(2, 2, 2, size=1.0, mass=1.0, stiffness=1.0)
    before = (sim.num_nodes, sim.num_springs, sim.num_faces, sim.pinned.copy())
    assert sim.remove_nodes([]).tolist() == list(range(8))
    sim.pin([])
    sim.unpin([])
    sim.remove_springs([])
    assert sim.add_springs([], 1.0).size == 0 and sim.add_faces([]).size == 0
    assert (sim.num_nodes, sim.num_springs, sim.num_faces) == before[:3]
    assert np.array_equal(sim.pinned, before[3])
    with pytest.raises(ValueError, match="at least one node"):
        sim.rigid_frame([])
