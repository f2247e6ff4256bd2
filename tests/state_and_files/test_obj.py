"""Wavefront OBJ: read_obj reads what modelling programs write (and welds their
coincident vertices), write_obj writes what they read; a bad file raises ValueError
naming the file and the line, ``path:line: problem``."""

import os
import re
import time
import warnings
from itertools import pairwise

import numpy as np
import pytest
from state import quad_grid

import springsim as ss
from springsim.io import read_obj, write_obj


def rich_system(dim):
    """A 4 x 4 cloth of quads, slightly out of plane in 3D, with uvs."""
    rng = np.random.default_rng(dim)
    x, quads = quad_grid(dim, rng)
    sim = ss.mesh(x, quads, mass=1.0, stiffness=300.0, bend=True)
    sim.uvs = rng.uniform(size=(len(x), 2))
    return sim


# ---- read_obj ----------------------------------------------------------------------

MODEL = """\
# Exported by a modeller 4.2
mtllib cloth.mtl
o Cloth
v 0 0 0
v 1 0 0 1.0
v 2 0 0

v 0 1 0
v 1 1 0.5
v 2 1 0
v 1 \\
  2 0.25
vt 0 0
vt 0.5 0
vt 1 0
vt 0 1
vt 0.5 1
vt 1 1
vn 0 0 1
g top
usemtl red
s off
f 1 2 5 4
f 2/2 3/3 6/6 5/5
l 1 2
f -4//1 -3//1 -1//1
s 1
f 5/4/1 6/6/1 7/2/1 # the second corner for 5 keeps its first uv
o Pentagon
v 0 0 1
v 1 0 1
v 1.5 1 1
v 0.5 1.5 1
v -0.5 1 1
cstype bspline
f 8 9 10 11 12
"""
MODEL_VERTICES = [
    [0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 1, 0], [1, 1, 0.5], [2, 1, 0], [1, 2, 0.25],
    [0, 0, 1], [1, 0, 1], [1.5, 1, 1], [0.5, 1.5, 1], [-0.5, 1, 1],
]  # fmt: skip
MODEL_TRIANGLES = [
    [0, 1, 4], [0, 4, 3],  # quad 1 2 5 4
    [1, 2, 5], [1, 5, 4],  # quad 2 3 6 5
    [3, 4, 6],  # -4 -3 -1 with 7 vertices defined
    [4, 5, 6],
    [7, 8, 9], [7, 9, 10], [7, 10, 11],  # the pentagon
]  # fmt: skip
MODEL_UVS = [
    [0, 0], [0.5, 0], [1, 0], [0, 0], [0.5, 1], [1, 1], [0.5, 0],
    [0, 0], [0, 0], [0, 0], [0, 0], [0, 0],
]  # fmt: skip


@pytest.mark.parametrize("bend", [False, True])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_read_obj_builds_the_mesh_of_the_equivalent_triangles(tmp_path, bend, newline):
    path = tmp_path / "model.obj"
    path.write_bytes(MODEL.replace("\n", newline).encode())
    masses = np.linspace(1.0, 2.0, 12)
    sim = read_obj(path, mass=masses, stiffness=50.0, damping=0.5, bend=bend)
    expected = ss.mesh(
        MODEL_VERTICES, MODEL_TRIANGLES, mass=masses, stiffness=50.0, damping=0.5, bend=bend
    )
    assert sim.dim == 3
    for name in ("positions", "springs", "faces", "rest_lengths", "masses", "stiffness", "damping"):
        np.testing.assert_array_equal(getattr(sim, name), getattr(expected, name), err_msg=name)
    np.testing.assert_array_equal(sim.uvs, MODEL_UVS)


def test_read_obj_spreads_a_total_mass_and_accepts_str_paths(tmp_path):
    path = tmp_path / "model.obj"
    path.write_text(MODEL)
    sim = read_obj(str(path), mass=6.0, stiffness=1.0)
    np.testing.assert_array_equal(sim.masses, np.full(12, 0.5))
    assert sim.num_faces == len(MODEL_TRIANGLES)


def test_read_obj_accepts_faces_before_their_vertices(tmp_path):
    path = tmp_path / "forward.obj"
    path.write_text("f 1/1 2/1 3/1\nv 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0.25 0.75\n")
    sim = read_obj(path, mass=1.0, stiffness=1.0)
    assert sim.faces.tolist() == [[0, 1, 2]]
    assert sim.uvs.tolist() == [[0.25, 0.75]] * 3


SQUARE = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n"  # lines 1-4


@pytest.mark.parametrize(
    ("content", "line", "match"),
    [
        (SQUARE + "v 1 2\n", 5, "v needs 3 numbers"),
        (SQUARE + "f 1 x 3\n", 5, "'x' is not an integer vertex index"),
        (SQUARE + "f 1 2 5\n", 5, "vertex index 5 is out of range"),
        (SQUARE + "f 0 1 2\n", 5, "index 0"),
        (SQUARE + "f 1 2\n", 5, "at least 3 vertices"),
        (SQUARE + "f -5 1 2\n", 5, "vertex index -5 is out of range"),
        (SQUARE + "vt 0 0\nf 1/2 2/1 3/1\n", 6, "texture index 2 is out of range"),
        (SQUARE + "f 1//1 2//1 3//1\n", 5, "normal index 1 is out of range"),
        (SQUARE + "f 1/1/1/1 2 3\n", 5, "not a face corner"),
        (SQUARE + "f 1 2 2\n", 5, "uses a vertex twice"),
        (SQUARE + "v 1 nan 3\n", 5, "not a finite number"),
        (SQUARE + "vt\n", 5, "vt needs"),
        ("v 0 0 0\n# fine\n\ns 1\nv 1 0 zero\n", 5, "'zero' is not a number"),
        (SQUARE + "f 1 2 \\\n 3 x\nf 1 2 3\n", 5, "'x' is not an integer"),
        (SQUARE + "f 1 2 3\nv 0.5 0.", 6, "v needs 3 numbers"),  # truncated mid-line
        (SQUARE + "f 1 2 3\nf 2/", 6, "at least 3 vertices"),  # truncated mid-line
        ("v 0 0 0\r\nv 1 0 0\r\nv 1\r\n", 3, "v needs 3 numbers"),
        (SQUARE + "f 1 2 3\n\0\0\0\0", 6, "binary file"),
    ],
)
def test_malformed_obj_raises_with_file_and_line(tmp_path, content, line, match):
    path = tmp_path / "broken.obj"
    path.write_bytes(content.encode())
    with pytest.raises(ValueError, match=match) as error:
        read_obj(path, mass=1.0, stiffness=1.0)
    assert str(error.value).startswith(f"{path}:{line}: ")


def test_obj_without_vertices_raises(tmp_path):
    path = tmp_path / "nothing.obj"
    path.write_text("# just a comment\no empty\n")
    with pytest.raises(ValueError, match="no vertices") as error:
        read_obj(path, mass=1.0, stiffness=1.0)
    assert str(path) in str(error.value)


TRIANGLE = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"


def fastest_read(path, repeat=3):
    """The shortest of ``repeat`` timings of read_obj(path), s."""
    timings = []
    for _ in range(repeat):
        started = time.perf_counter()
        sim = read_obj(path, mass=1.0, stiffness=1.0)
        timings.append(time.perf_counter() - started)
    assert sim.num_faces == 1
    return min(timings)


def test_continued_lines_are_joined_in_linear_time(tmp_path):
    # One statement continued over many lines: joining must not copy it once per line.
    times = []
    for lines in (18_000, 72_000):  # about 0.125 and 0.5 MB
        path = tmp_path / f"continued_{lines}.obj"
        path.write_text(TRIANGLE + "g name \\\n" + "part \\\n" * lines + "end\n")
        times.append(fastest_read(path))
    # 4 times the size: 4 times the time if linear, 16 if quadratic.
    assert times[1] < 8 * times[0] + 0.05, times


@pytest.mark.parametrize(
    "line",
    [
        "v " + "1 " * 5_000_000,  # 10 MB: too many values
        "v 1 2 " + "x" * 10_000_000,  # a 10 MB token that is not a number
        "f 1 2 " + "3/" * 5_000_000,  # a 10 MB corner
        "vn " + "1 " * 5_000_000,
        "f " + "1 2 3 " * 200_000,  # a vertex twice
    ],
)
def test_an_error_on_a_huge_line_quotes_at_most_80_characters_of_it(tmp_path, line):
    path = tmp_path / "huge.obj"
    path.write_text(TRIANGLE + line + "\n")
    with pytest.raises(ValueError, match=r"\.\.\.") as error:
        read_obj(path, mass=1.0, stiffness=1.0)
    message = str(error.value)
    assert message.startswith(f"{path}:5: ")
    assert len(message) < len(str(path)) + 300, message[:400]


@pytest.mark.parametrize("value", ["1e300", "-1e151", "1.0000001e150"])
def test_coordinates_whose_squares_overflow_are_refused(tmp_path, value):
    path = tmp_path / "far.obj"
    path.write_text(f"v 0 0 0\nv 1 0 0\nv 0 {value} 0\nf 1 2 3\n")
    with pytest.raises(ValueError, match=rf"{re.escape(value)}.*1e\+?150") as error:
        read_obj(path, mass=1.0, stiffness=1.0)
    assert str(error.value).startswith(f"{path}:3: ")


def test_coordinates_up_to_1e150_give_finite_rest_lengths(tmp_path):
    path = tmp_path / "far.obj"
    path.write_text("v -1e150 -1e150 -1e150\nv 1e150 1e150 1e150\nv 0 1e150 0\nf 1 2 3\n")
    sim = read_obj(path, mass=1.0, stiffness=1.0)
    assert np.all(np.isfinite(sim.rest_lengths))
    sim._validate()


# ---- write_obj ---------------------------------------------------------------------


@pytest.mark.parametrize("dim", [2, 3])
def test_write_obj_then_read_obj_round_trips(tmp_path, dim):
    sim = rich_system(dim)
    rng = np.random.default_rng(7)
    sim.positions = sim.positions / 3 + rng.normal(scale=1e-7, size=sim.positions.shape)
    sim.uvs = rng.uniform(size=sim.uvs.shape) / 7
    path = tmp_path / "frame.obj"
    sim.write_obj(path)  # System.write_obj delegates to springsim.io.write_obj
    back = read_obj(path, mass=1.0, stiffness=1.0)
    expected = sim.positions if dim == 3 else np.column_stack([sim.positions, np.zeros(16)])
    assert np.abs(back.positions - expected).max() <= 1e-12
    np.testing.assert_array_equal(back.positions, expected)  # repr floats are exact
    np.testing.assert_array_equal(back.faces, sim.faces)
    np.testing.assert_array_equal(back.uvs, sim.uvs)


def test_write_obj_writes_the_documented_lines(tmp_path):
    sim = rich_system(3)  # with bend springs, which are no face's edge
    path = tmp_path / "frame.obj"
    write_obj(sim, str(path))
    lines = path.read_text().splitlines()
    polylines = [line for line in lines if line.startswith("l ")]
    assert lines[0].startswith("# springsim") and f"lines {len(polylines)}," in lines[0]
    kinds = [line.split()[0] for line in lines[1:]]
    faces = ["f"] * sim.num_faces
    assert kinds == ["o"] + ["v"] * 16 + ["vt"] * 16 + faces + ["l"] * len(polylines)
    faces = [line for line in lines if line.startswith("f ")]
    corners = [re.fullmatch(r"f (\d+)/\1 (\d+)/\2 (\d+)/\3", face) for face in faces]
    assert all(corners)
    assert [[int(i) - 1 for i in c.groups()] for c in corners] == sim.faces.tolist()
    # The l lines hold each spring that is no face's edge once (the bend springs).
    pieces = [(a - 1, b - 1) for line in polylines for a, b in pairwise(map(int, line.split()[1:]))]
    face_edges = {tuple(sorted(e)) for f in sim.faces.tolist() for e in pairwise(f + f[:1])}
    others = [tuple(sorted(p)) for p in sim.springs.tolist() if tuple(sorted(p)) not in face_edges]
    assert sorted(tuple(sorted(p)) for p in pieces) == sorted(others) and len(others) > 0


def read_with_vtk(path):
    """An OBJ as VTK's reader (ParaView's) gives it: points, polylines, polygons."""
    import vtk  # in the [test] extra
    from vtk.util.numpy_support import vtk_to_numpy

    reader = vtk.vtkOBJReader()
    reader.SetFileName(str(path))
    reader.Update()
    data = reader.GetOutput()

    def cells(array):
        corners = vtk_to_numpy(array.GetConnectivityArray()).tolist()
        ends = vtk_to_numpy(array.GetOffsetsArray()).tolist()
        return [corners[a:b] for a, b in pairwise(ends)]

    return vtk_to_numpy(data.GetPoints().GetData()), cells(data.GetLines()), cells(data.GetPolys())


@pytest.mark.parametrize("dim", [2, 3])
def test_a_string_is_written_as_one_polyline(tmp_path, dim):
    # What Blender imports as a polyline (a chain of edges), VTK's OBJ reader as one
    # line cell through every node in order.
    sim = ss.string(7, length=1.2, mass=0.1, stiffness=10.0, dim=dim, direction=(1, -1, 1)[:dim])
    sim.write_obj(tmp_path / "string.obj")
    assert path_lines(tmp_path / "string.obj") == ["l 1 2 3 4 5 6 7"]
    points, polylines, polygons = read_with_vtk(tmp_path / "string.obj")
    np.testing.assert_allclose(points[:, :dim], sim.positions, rtol=1e-7)  # VTK: float32
    assert polylines == [list(range(7))] and polygons == []


def path_lines(path):
    return [line for line in path.read_text().splitlines() if line.startswith("l ")]


def test_springs_off_the_faces_are_lines_next_to_the_faces(tmp_path):
    # A cloth: its shear and bend springs that are no triangle's edge become lines (in
    # chains), its triangles faces; VTK reads both; trimesh reads the same mesh as
    # without the lines (it ignores l), and read_obj rebuilds the face edges only.
    import trimesh  # in the [test] extra

    cloth = ss.cloth(5, 4, width=1.0, height=0.8, mass=0.1, stiffness=10.0)
    cloth.write_obj(tmp_path / "cloth.obj")
    points, polylines, polygons = read_with_vtk(tmp_path / "cloth.obj")
    assert polygons == cloth.faces.tolist()
    face_edges = {tuple(sorted(e)) for f in cloth.faces.tolist() for e in pairwise(f + f[:1])}
    pieces = sorted(tuple(sorted(p)) for line in polylines for p in pairwise(line))
    others = sorted(tuple(sorted(p)) for p in cloth.springs.tolist())
    others = [p for p in others if p not in face_edges]
    assert pieces == others and len(polylines) < len(others)  # chained, each spring once
    mesh = trimesh.load(tmp_path / "cloth.obj", process=False)
    np.testing.assert_array_equal(mesh.faces, cloth.faces)
    back = read_obj(tmp_path / "cloth.obj", mass=0.1, stiffness=1.0)
    assert back.num_springs == len(face_edges)


def test_polylines_use_each_pair_once_and_join_chains():
    from springsim.files.obj import _polylines

    assert _polylines([[0, 1], [1, 2], [2, 3]]) == [[0, 1, 2, 3]]
    assert _polylines([[2, 3], [1, 2], [0, 1]]) == [[0, 1, 2, 3]]  # grown both ways
    assert _polylines([[0, 1], [0, 2], [0, 3]]) == [[2, 0, 1], [0, 3]]  # a star: two lines
    assert _polylines([[0, 1], [1, 2], [2, 0]]) == [[0, 1, 2, 0]]  # a ring closes
    assert _polylines([[0, 1], [0, 1]]) == [[0, 1, 0]]  # twin springs, both kept
    assert _polylines([]) == []


def test_write_obj_refuses_non_finite_positions(tmp_path):
    sim = rich_system(3)
    sim.positions[3, 1] = np.nan  # through a view
    path = tmp_path / "frame.obj"
    with pytest.raises(ValueError, match="positions must be finite"):
        write_obj(sim, path)
    assert not os.listdir(tmp_path)


# ---- welding: real meshes repeat vertices ----------------------------------------------


def capsule_obj(segments=8, caps="triangles", radius=0.5, height=1.0):
    """A capsule as modelling programs export it: one pole vertex per segment at each
    pole (the first two vertices of the file coincide), each ring's first vertex
    repeated at its end (the texture seam, u = 0 and u = 1), quads between the rings.
    ``caps``: "triangles" (pole_k, ring_k, ring_k+1), "quads" (with two pole corners)
    or "split" (those quads written as two triangles, one of them on two pole copies).
    Returns the text and the counts a welded read must give."""
    s = segments
    angles = [np.pi / 4, np.pi / 2, np.pi / 2, 3 * np.pi / 4]  # polar angle of each ring
    centres = [height / 2, height / 2, -height / 2, -height / 2]
    top, bottom = height / 2 + radius, -height / 2 - radius
    lines, uvs = [f"# capsule, {s} segments, caps as {caps}", "o Capsule"], []
    lines += [f"v 0 0 {top!r}"] * s  # vertices 1..s
    uvs += [((k + 0.5) / s, 1.0) for k in range(s)]
    for r, (theta, z0) in enumerate(zip(angles, centres, strict=True)):
        for k in range(s + 1):  # k = s repeats k = 0 (same position, u = 1)
            phi = 2 * np.pi * (k % s) / s
            x, y = radius * np.sin(theta) * np.cos(phi), radius * np.sin(theta) * np.sin(phi)
            z = z0 + radius * np.cos(theta)
            lines.append(f"v {float(x)!r} {float(y)!r} {float(z)!r}")
            uvs.append((k / s, 1 - (r + 1) / 5))
    lines += [f"v 0 0 {bottom!r}"] * s
    uvs += [((k + 0.5) / s, 0.0) for k in range(s)]
    lines += [f"vt {float(u)!r} {float(v)!r}" for u, v in uvs]

    def ring(r, k):  # 1-based index of ring r's k-th vertex (k = 0..s)
        return s + r * (s + 1) + k + 1

    def corner(v):
        return f"{v}/{v}"

    def cap(pole, a, b, next_pole):
        if caps == "triangles":
            return [(pole, a, b)]
        if caps == "quads":
            return [(pole, a, b, next_pole)]
        return [(pole, a, b), (pole, b, next_pole)]

    faces = []
    for k in range(s):  # top cap, outward (counter-clockwise seen from above)
        faces += cap(k + 1, ring(0, k), ring(0, k + 1), (k + 1) % s + 1)
    for r in range(3):
        for k in range(s):
            faces.append((ring(r, k), ring(r + 1, k), ring(r + 1, k + 1), ring(r, k + 1)))
    last = s + 4 * (s + 1)
    for k in range(s):  # bottom cap, outward (seen from below)
        faces += cap(last + k + 1, ring(3, k + 1), ring(3, k), last + (k + 1) % s + 1)
    lines += ["f " + " ".join(corner(v) for v in face) for face in faces]
    counts = {
        "vertices": 2 * s + 4 * (s + 1),
        "nodes": 2 + 4 * s,
        "triangles": 2 * s * 4,
        "springs": 3 * s * 4,  # a closed triangle mesh: 3 F / 2 edges
        "degenerate": 0 if caps == "triangles" else 2 * s,
    }
    return "\n".join(lines) + "\n", counts


def read_capsule(tmp_path, caps="triangles", **options):
    text, counts = capsule_obj(caps=caps)
    path = tmp_path / "capsule.obj"
    path.write_text(text)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sim = read_obj(path, mass=1.0, stiffness=100.0, **options)
    return sim, counts, [w.message for w in caught if w.category is ss.MeshWarning], path


@pytest.mark.parametrize("caps", ["triangles", "quads", "split"])
def test_a_capsule_with_repeated_poles_and_seam_loads_welded_and_closed(tmp_path, caps):
    sim, counts, reports, path = read_capsule(tmp_path, caps)
    assert sim.num_nodes == counts["nodes"]
    assert sim.num_faces == counts["triangles"]
    assert sim.num_springs == counts["springs"]
    assert np.all(sim.rest_lengths > 0.05)
    assert len(reports) == 1
    report = reports[0]
    assert (report.vertices, report.nodes, report.degenerate) == (
        counts["vertices"],
        counts["nodes"],
        counts["degenerate"],
    )
    assert report.welded == counts["vertices"] - counts["nodes"]
    assert str(report).startswith(f"{path}: welded {report.welded} of {report.vertices} ")
    # every pole copy became node 0 (the first, kept); the seam copies their ring's first
    assert report.node_of_vertex[:8].tolist() == [0] * 8
    # closed and consistently oriented: a gas body takes it, and the volume is the
    # polyhedron's, a little less than the capsule's pi r^2 (4 r / 3 + h)
    sim.add_pressure(sim.faces, nrt=1.0)
    exact = np.pi * 0.25 * (4 * 0.5 / 3 + 1.0)
    assert 0.6 * exact < sim.gas(0).volume < exact


def test_a_welded_capsule_round_trips_through_write_obj(tmp_path):
    sim, counts, _, _ = read_capsule(tmp_path, "split")
    sim.step(1e-3, steps=20)
    path = tmp_path / "frame.obj"
    sim.write_obj(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing left to weld: no MeshWarning
        again = read_obj(path, mass=1.0, stiffness=100.0)
    np.testing.assert_array_equal(again.positions, sim.positions)
    np.testing.assert_array_equal(again.faces, sim.faces)
    np.testing.assert_array_equal(again.springs, sim.springs)
    np.testing.assert_array_equal(again.uvs, sim.uvs)
    text = path.read_text().splitlines()
    assert sum(line.startswith("v ") for line in text) == counts["nodes"]
    assert sum(line.startswith("f ") for line in text) == counts["triangles"]


def test_weld_none_refuses_coincident_vertices_naming_file_and_lines(tmp_path):
    # The mesh: vertices 1 and 2 of the file (0 and 1 of the system) coincide,
    # and the first cap quad joins them.
    with pytest.raises(ValueError) as error:
        read_capsule(tmp_path, "quads", weld=None)
    path = tmp_path / "capsule.obj"
    text = path.read_text().splitlines()
    face_line = next(k for k, line in enumerate(text, 1) if line.startswith("f "))
    message = str(error.value)
    assert message.startswith(f"{path}:{face_line}: this face joins vertices 1 and 2 ")
    assert "(lines 3 and 4)" in message and "weld" in message
    assert text[2] == text[3] and text[2].startswith("v ")


def test_without_welding_every_vertex_is_a_node(tmp_path):
    # Triangle caps never join two pole copies: with weld=None they load, unwelded.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim, counts, _, _ = read_capsule(tmp_path, "triangles", weld=False)
    assert sim.num_nodes == counts["vertices"]
    assert sim.num_faces == counts["triangles"]
    with pytest.raises(ValueError, match="not closed"):
        sim.add_pressure(sim.faces, nrt=1.0)  # the poles and the seam are open


def two_triangles(offset):
    """Two triangles meeting at a vertex written twice, the copy ``offset`` away (the
    bounding box's diagonal is 2 sqrt(2))."""
    return (
        f"v 0 0 0\nv 1 0 0\nv 0 1 0\nv {float(offset)!r} 0 0\nv 2 0 0\nv 0 -1 0\nf 1 2 3\nf 4 6 5\n"
    )


@pytest.mark.parametrize(
    ("offset", "weld", "nodes"),
    [
        (0.0, 0, 5),  # exactly coincident: welded even at weld=0
        (1e-300, 0, 6),
        (0.5e-9 * 2 * np.sqrt(2), 1e-9, 5),  # half the tolerance: welded
        (2e-9 * 2 * np.sqrt(2), 1e-9, 6),  # twice it: kept apart
        (0.099 * 2 * np.sqrt(2), 0.1, 5),
        (0.101 * 2 * np.sqrt(2), 0.1, 6),
    ],
)
def test_weld_is_a_fraction_of_the_bounding_box_diagonal(tmp_path, offset, weld, nodes):
    path = tmp_path / "pair.obj"
    path.write_text(two_triangles(offset))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ss.MeshWarning)
        sim = read_obj(path, mass=1.0, stiffness=1.0, weld=weld)
    assert sim.num_nodes == nodes
    assert sim.positions[0].tolist() == [0.0, 0.0, 0.0]  # the first one is kept, as it is
    assert sim.faces.tolist()[0] == [0, 1, 2]


def test_per_vertex_masses_add_up_and_uvs_come_from_the_first_corner(tmp_path):
    path = tmp_path / "pair.obj"
    path.write_text(
        "vt 0.25 0.5\nvt 0.75 0.5\n" + two_triangles(0.0).replace("f 4 6 5", "f 4/2 6 5")
    )
    with pytest.warns(ss.MeshWarning):
        sim = read_obj(path, mass=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], stiffness=1.0)
    assert sim.masses.tolist() == [5.0, 2.0, 3.0, 5.0, 6.0]
    assert sim.uvs[0].tolist() == [0.75, 0.5]  # the first corner on node 0 with a uv
    with pytest.raises(ValueError, match=r"shape \(6,\)"):
        read_obj(path, mass=[1.0] * 5, stiffness=1.0)  # one per vertex of the file


@pytest.mark.parametrize(
    ("weld", "error"),
    [(True, TypeError), ("1e-9", TypeError), (-1e-9, ValueError), (1.5, ValueError),
     (float("nan"), ValueError)],
)  # fmt: skip
def test_a_bad_weld_is_refused_before_the_file_is_read(tmp_path, weld, error):
    with pytest.raises(error, match="weld"):
        read_obj(tmp_path / "missing.obj", mass=1.0, stiffness=1.0, weld=weld)


def test_degenerate_triangles_are_dropped_and_pinched_polygons_split(tmp_path):
    # A pentagon whose 1st and 4th corners coincide (pinched): only the triangle that
    # keeps three distinct corners stays; a triangle on two copies goes.
    path = tmp_path / "pinched.obj"
    path.write_text(
        "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 0 0\nv -1 1 0\nv 0 0 0\nf 1 2 3 4 5\nf 1 6 2\nf 2 3 5\n"
    )
    with pytest.warns(ss.MeshWarning, match="dropped 3 triangles") as caught:
        sim = read_obj(path, mass=1.0, stiffness=1.0)
    assert sim.faces.tolist() == [[0, 1, 2], [1, 2, 3]]
    assert caught[0].message.degenerate == 3 and caught[0].message.welded == 2


# ---- weld_vertices against the definition ------------------------------------------


def weld_by_definition(x, distance):
    """Vertices in order; each welds to the first kept vertex within distance, or is
    kept (O(N^2))."""
    kept, welded = [], []
    for i, p in enumerate(x):
        near = np.flatnonzero(np.sum((x[kept] - p) ** 2, axis=1) <= distance**2)
        welded.append(kept[near[0]] if near.size else i)
        if not near.size:
            kept.append(i)
    return welded


@pytest.mark.parametrize("seed", range(6))
def test_weld_vertices_follows_its_definition(seed):
    from springsim.files.weld import weld_vertices

    rng = np.random.default_rng(seed)
    base = rng.uniform(-1.0, 1.0, (300, 3)) * [1.0, 1.0, 1e-3 if seed % 2 else 1.0]
    copies = base[rng.integers(0, 300, 300)] + rng.normal(scale=0.02, size=(300, 3))
    x = rng.permutation(np.concatenate([base, copies, base[:50]]))  # exact copies too
    for distance in (0.0, 0.01, 0.03, 0.1):
        got = weld_vertices(x, distance)
        assert got.tolist() == weld_by_definition(x, distance), distance
    assert len(set(weld_vertices(x, 0.03).tolist())) < len(x) - 50


@pytest.mark.slow
def test_welding_takes_linear_time_on_a_mesh_of_copies(tmp_path):
    # Every vertex written four times (the worst case: all are candidates): 4 times
    # the vertices, about 4 times the time (16 if it compared all pairs).
    from springsim.files.weld import weld_vertices

    times = []
    for n in (5_000, 20_000):
        grid = np.random.default_rng(0).uniform(size=(n, 3))
        x = np.repeat(grid, 4, axis=0) + np.random.default_rng(1).normal(
            scale=1e-12, size=(4 * n, 3)
        )
        best = min(_timed(weld_vertices, x, 1e-9 * np.sqrt(3)) for _ in range(2))
        times.append(best)
    assert times[1] < 8 * times[0] + 0.05, times


def _timed(function, *args):
    started = time.perf_counter()
    function(*args)
    return time.perf_counter() - started


def test_a_mesh_trimesh_writes_unwelded_loads_welded_and_trimesh_reads_ours(tmp_path):
    # An exporter's flat-shaded capsule: every triangle has its own three vertices
    # (384 for 128 triangles). read_obj welds them back into trimesh's own 66-vertex
    # capsule, and trimesh reads what write_obj writes as the same closed surface.
    import trimesh  # in the [test] extra

    capsule = trimesh.creation.capsule(height=1.0, radius=0.3, count=[8, 8])
    flat = capsule.copy()
    flat.unmerge_vertices()
    assert (len(flat.vertices), len(flat.faces)) == (384, 128)
    flat.export(tmp_path / "flat.obj")
    with pytest.warns(ss.MeshWarning, match="welded 318 of 384 vertices"):
        sim = read_obj(tmp_path / "flat.obj", mass=1.0, stiffness=100.0)
    assert (sim.num_nodes, sim.num_faces) == (len(capsule.vertices), len(capsule.faces))
    assert sim.num_springs == 3 * len(capsule.faces) // 2  # a closed surface's edges
    write_obj(sim, tmp_path / "ours.obj")
    back = trimesh.load(tmp_path / "ours.obj", process=False)
    np.testing.assert_array_equal(back.vertices, sim.positions)
    np.testing.assert_array_equal(back.faces, sim.faces)
    assert back.is_watertight  # the OBJ text rounds to 8 digits: the volume to ~1e-8
    assert back.volume == pytest.approx(capsule.volume, rel=1e-6)
