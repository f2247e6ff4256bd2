"""springsim.read_mesh: the mesh formats meshio reads (STL, PLY, VTK, VTU, ...), with
coincident vertices welded as read_obj welds them. The files are written by the tools
that make them (trimesh, meshio) from meshes whose shape is known."""

import sys
import warnings

import meshio  # in the [test] extra (and the [mesh] one)
import numpy as np
import pytest
import trimesh  # in the [test] extra

import springsim as ss
from springsim.io import read_mesh


def matching(points, vertices, tolerance):
    """For each of ``points``, the index of the vertex it is (within ``tolerance``)."""
    distance = np.linalg.norm(points[:, None, :] - vertices[None, :, :], axis=2)
    assert (distance.min(axis=1) <= tolerance).all()
    return distance.argmin(axis=1)


def same_triangles(faces, other, renumber):
    """Whether two triangle lists are equal up to renumbering and each one's rotation."""

    def canonical(triangle):
        k = int(np.argmin(triangle))
        return tuple(triangle[k:] + triangle[:k])

    return sorted(canonical([int(renumber[i]) for i in t]) for t in faces) == sorted(
        canonical(list(t)) for t in other
    )


def icosphere():
    return trimesh.creation.icosphere(subdivisions=0, radius=1.0)  # 12 vertices, 20 faces


def test_an_icosphere_from_stl_is_its_12_vertices_30_edges_20_faces(tmp_path):
    # STL stores each triangle with its own three corners (60 for 20) as float32.
    ico = icosphere()
    ico.export(tmp_path / "ico.stl")
    assert len(trimesh.load(tmp_path / "ico.stl", process=False).vertices) == 60
    sim = read_mesh(tmp_path / "ico.stl", mass=1.2, stiffness=100.0)
    assert (sim.dim, sim.num_nodes, sim.num_springs, sim.num_faces) == (3, 12, 30, 20)
    renumber = matching(sim.positions, ico.vertices, 1e-7)  # float32 in the file
    assert sorted(renumber) == list(range(12))
    assert same_triangles(sim.faces.tolist(), ico.faces.tolist(), renumber)
    np.testing.assert_allclose(np.linalg.norm(sim.positions, axis=1), 1.0, rtol=1e-7)
    np.testing.assert_allclose(sim.masses, 0.1)
    lengths = np.linalg.norm(np.diff(sim.positions[sim.springs], axis=1)[:, 0], axis=1)
    np.testing.assert_allclose(sim.rest_lengths, lengths)  # at rest as read
    np.testing.assert_allclose(sim.rest_lengths, ico.edges_unique_length.mean(), rtol=1e-6)


@pytest.mark.parametrize("suffix", ["ply", "vtk", "vtu"])
def test_a_mesh_written_one_vertex_per_corner_is_welded(tmp_path, suffix):
    # An exporter's flat-shaded icosphere, every triangle with its own three vertices:
    # welded back into the 12 of the sphere, with a MeshWarning saying so.
    ico = icosphere()
    flat = ico.copy()
    flat.unmerge_vertices()
    path = tmp_path / f"flat.{suffix}"
    if suffix == "ply":
        flat.export(path)  # trimesh's binary PLY
    else:
        meshio.write(path, meshio.Mesh(flat.vertices, [("triangle", flat.faces)]))
    with pytest.warns(ss.MeshWarning, match="welded 48 of 60 vertices") as caught:
        sim = read_mesh(path, mass=np.full(60, 0.5), stiffness=10.0, damping=0.1)
    report = caught[0].message
    assert (report.vertices, report.nodes, report.degenerate) == (60, 12, 0)
    assert (sim.num_nodes, sim.num_springs, sim.num_faces) == (12, 30, 20)
    first = np.unique(report.node_of_vertex, return_index=True)[1]  # each node's first vertex
    rounding = 1e-7 if suffix == "ply" else 0.0  # trimesh writes PLY in float32
    np.testing.assert_allclose(sim.positions, flat.vertices[first], rtol=rounding, atol=rounding)
    renumber = matching(sim.positions, ico.vertices, 1e-7)
    assert same_triangles(sim.faces.tolist(), ico.faces.tolist(), renumber)
    np.testing.assert_array_equal(sim.masses, 2.5)  # five corners meet at each vertex
    np.testing.assert_array_equal(sim.damping, 0.1)


def test_near_copies_weld_within_the_tolerance_and_not_beyond(tmp_path):
    # Corners that differ by rounding (1e-12 of the diagonal) weld at the default 1e-9;
    # with weld=0 only exact copies do (none here); weld=None keeps all.
    flat = icosphere()
    flat.unmerge_vertices()
    rng = np.random.default_rng(3)
    noisy = flat.vertices + rng.uniform(-1e-12, 1e-12, flat.vertices.shape)
    path = tmp_path / "noisy.vtu"
    meshio.write(path, meshio.Mesh(noisy, [("triangle", flat.faces)]))
    with pytest.warns(ss.MeshWarning):
        assert read_mesh(path, mass=1.0, stiffness=1.0).num_nodes == 12
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing welded: no warning
        for weld in (0, None):
            assert read_mesh(path, mass=1.0, stiffness=1.0, weld=weld).num_nodes == 60


def test_quads_and_polygons_are_triangulated_as_mesh_does(tmp_path):
    points = [[0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 1, 0], [1, 1, 0], [2, 1, 0], [1.5, 1.6, 0]]
    points.append([3, 0.5, 0.1])
    cells = [("quad", [[0, 1, 4, 3], [1, 2, 5, 4]]), ("triangle", [[4, 5, 6]])]
    cells.append(("polygon", [[2, 7, 5, 1]]))
    path = tmp_path / "patch.vtk"
    meshio.write(path, meshio.Mesh(np.array(points, dtype=float), cells))
    sim = read_mesh(path, mass=1.0, stiffness=5.0, bend=True)
    polygons = [[0, 1, 4, 3], [1, 2, 5, 4], [4, 5, 6], [2, 7, 5, 1]]
    expected = ss.mesh(np.array(points, dtype=float), polygons, mass=1.0, stiffness=5.0, bend=True)
    for name in ("positions", "faces", "springs", "rest_lengths", "masses"):
        np.testing.assert_array_equal(getattr(sim, name), getattr(expected, name), err_msg=name)


def test_points_of_two_coordinates_make_a_2d_system(tmp_path):
    # Gmsh files keep a planar mesh's points in 2D (VTK, PLY and STL are 3D).
    points = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    meshio.write(
        tmp_path / "plane.msh", meshio.Mesh(points, [("triangle", [[0, 1, 2], [1, 3, 2]])])
    )
    sim = read_mesh(tmp_path / "plane.msh", mass=1.0, stiffness=2.0)
    expected = ss.mesh(points, [[0, 1, 2], [1, 3, 2]], mass=1.0, stiffness=2.0)
    assert sim.dim == 2
    for name in ("positions", "faces", "springs", "rest_lengths"):
        np.testing.assert_array_equal(getattr(sim, name), getattr(expected, name), err_msg=name)
    meshio.write(tmp_path / "plane.mesh", meshio.Mesh(points, [("triangle", [[0, 1, 2]])]))
    again = read_mesh(tmp_path / "plane.mesh", mass=1.0, stiffness=2.0, file_format="medit")
    assert again.num_faces == 1


def test_a_volume_mesh_gives_its_surface_and_a_line_mesh_an_error(tmp_path):
    corners = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
    boundary = [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]
    both = meshio.Mesh(corners, [("tetra", [[0, 1, 2, 3]]), ("triangle", boundary)])
    meshio.write(tmp_path / "both.vtu", both)
    sim = read_mesh(tmp_path / "both.vtu", mass=1.0, stiffness=1.0)
    assert sim.faces.tolist() == boundary and sim.num_springs == 6
    meshio.write(tmp_path / "solid.vtu", meshio.Mesh(corners, [("tetra", [[0, 1, 2, 3]])]))
    with pytest.raises(ValueError, match=r"solid\.vtu: no surface cells .* 1 tetra cells"):
        read_mesh(tmp_path / "solid.vtu", mass=1.0, stiffness=1.0)


@pytest.mark.parametrize(
    ("name", "content", "match"),
    [
        ("mesh.xyz", b"1 2 3\n", "meshio cannot read it.*deduce file format"),
        ("broken.stl", b"solid x\nfacet normal 0 0 1\n", r"meshio cannot read it.*broken\.stl"),
        ("short.ply", b"ply\nformat binary_little_endian 1.0\nelement vertex 3\n"
         b"property float x\nproperty float y\nproperty float z\nend_header\n\0\0",
         "meshio cannot read it"),
    ],
)  # fmt: skip
def test_a_file_meshio_cannot_read_raises_valueerror_naming_it(tmp_path, name, content, match):
    # (meshio itself ends the process, sys.exit(1), on some of these.)
    (tmp_path / name).write_bytes(content)
    with pytest.raises(ValueError, match=match) as caught:
        read_mesh(tmp_path / name, mass=1.0, stiffness=1.0)
    assert str(caught.value).startswith(str(tmp_path / name))


def test_bad_content_is_refused_naming_the_file(tmp_path):
    def write(name, points, cells):
        meshio.write(tmp_path / name, meshio.Mesh(np.array(points, dtype=float), cells))
        return tmp_path / name

    triangle = [[0, 0, 0], [1, 0, 0], [0, 1, 0]]
    cases = [
        (write("far.vtk", triangle, [("triangle", [[0, 1, 5]])]), "out of range"),
        (write("twice.vtk", triangle, [("triangle", [[0, 1, 1]])]), "uses a point twice"),
        (write("nan.vtk", [[0, 0, 0], [1, 0, np.nan], [0, 1, 0]], [("triangle", [[0, 1, 2]])]),
         "point 1 .* must be finite"),
        (write("huge.vtk", [[0, 0, 0], [1e160, 0, 0], [0, 1, 0]], [("triangle", [[0, 1, 2]])]),
         r"within ±1e\+150"),
    ]  # fmt: skip
    for path, match in cases:
        with pytest.raises(ValueError, match=match):
            read_mesh(path, mass=1.0, stiffness=1.0)
    corners = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 0]]  # points 0 and 3 coincide
    pinched = write("pinched.vtk", corners, [("triangle", [[0, 1, 2], [2, 1, 3]])])
    assert read_mesh(pinched, mass=1.0, stiffness=1.0, weld=None).num_nodes == 4  # no 0-3 edge
    with pytest.raises(ValueError, match="cell 0 .* is next to a face that holds points 0 and 3"):
        read_mesh(pinched, mass=1.0, stiffness=1.0, weld=None, bend=True)  # 0-3 across 1-2
    joined = write("joined.vtk", corners, [("triangle", [[0, 1, 2], [1, 3, 0]])])
    with pytest.raises(ValueError, match="surface cell 1 .* joins points 0 and 3, which coincide"):
        read_mesh(joined, mass=1.0, stiffness=1.0, weld=None)
    with pytest.raises(FileNotFoundError):
        read_mesh(tmp_path / "missing.stl", mass=1.0, stiffness=1.0)
    with pytest.raises(TypeError, match="weld"):
        read_mesh(pinched, mass=1.0, stiffness=1.0, weld="yes")


def test_without_meshio_the_error_says_what_to_install(tmp_path, monkeypatch):
    path = tmp_path / "ico.stl"
    icosphere().export(path)
    monkeypatch.setitem(sys.modules, "meshio", None)
    with pytest.raises(ImportError, match="pip install meshio"):
        read_mesh(path, mass=1.0, stiffness=1.0)
