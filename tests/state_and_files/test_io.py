"""Files: save/load is an exact round trip, OBJ reads as modellers write it, and every
bad file raises ValueError naming the file (and, for an OBJ, the line)."""

import io
import math
import os
import re
import struct
import time
import tracemalloc
import zipfile
import zlib

import numpy as np
import pytest
from state import ARRAYS, assert_same, quad_grid, snapshot

import springsim as ss
from springsim.io import FORMAT_VERSION, load, save

# The entries each format version added.
VERSION_2 = ("colliders", "break_strains", "max_strain", "iterations")
VERSION_3 = (
    "pressure",
    "pressure_counts",
    "pressure_elements",
    "cg_tolerance",
    "cg_max_iterations",
)
VERSION_4 = ("air_density", "drag_coefficient", "divergence_factor")
VERSION_5 = ("drives", "drive_t0", "drive_nodes", "drive_values")
VERSION_6 = ("collider_ends", "mesh_counts", "mesh_vertices", "mesh_faces")
VERSION_6 += ("radii", "groups", "contact_law", "contact_off")
VERSION_6 += ("self_collision",)
VERSION_7 = ("dissipated", "track_energy", "crossings")
VERSION_7 += ("contact_dt",)  # (version 8)


def assert_identical(a, b):
    assert type(a) is type(b)
    assert_same(snapshot(a), snapshot(b))


def rich_system(dim, verlet_history=True):
    """A small cloth with every array and parameter away from its default."""
    rng = np.random.default_rng(dim)
    n = 4
    x, quads = quad_grid(dim, rng, n)
    sim = ss.mesh(x, quads, mass=rng.uniform(0.5, 1.5, len(x)), stiffness=300.0, bend=True)
    m = sim.num_springs
    sim.stiffness = rng.uniform(100.0, 300.0, m)
    sim.damping = rng.uniform(0.0, 0.5, m)
    sim.rest_lengths = sim.rest_lengths * rng.uniform(0.95, 1.05, m)
    sim.pin([n * n - n, n * n - 1])
    sim.velocities = rng.normal(scale=0.1, size=x.shape)
    sim.external_forces = rng.normal(scale=0.5, size=x.shape)
    sim.uvs = rng.uniform(size=(len(x), 2))
    sim.rest_positions = x + rng.normal(scale=1e-2, size=x.shape)
    sim.gravity = rng.normal(size=dim)
    sim.wind = rng.normal(size=dim)
    sim.drag = 0.05
    sim.air_density = 1.1
    if dim == 3:  # the air on faces acts in 3D only
        sim.drag_coefficient = 0.9
    sim.energy_loss = 0.999
    sim.radii = rng.uniform(0.0, 0.05, len(x))
    sim.groups = rng.integers(-3, 3, len(x))
    sim.contact_stiffness, sim.contact_restitution = 2e3, 0.3
    sim.contact_friction, sim.contact_radius = 0.2, 0.01
    sim.set_contact(1, -2, False)
    sim.time = 1.25
    if verlet_history:
        sim.step(1e-3, steps=5, method="verlet")
    sim.method = "rk2"
    return sim


# ---- save / load -------------------------------------------------------------------


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("verlet_history", [False, True])
def test_load_gives_an_identical_system(tmp_path, dim, verlet_history):
    sim = rich_system(dim, verlet_history)
    assert sim._verlet_valid == verlet_history
    path = tmp_path / "state.npz"
    save(sim, path)
    loaded = load(path)
    assert_identical(loaded, sim)
    assert isinstance(loaded, ss.System)


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("verlet_history", [False, True])
@pytest.mark.parametrize("method", ss.METHODS)
def test_loaded_system_steps_bit_for_bit_like_the_original(tmp_path, dim, verlet_history, method):
    sim = rich_system(dim, verlet_history)
    path = tmp_path / "state.npz"
    save(sim, path)
    loaded = load(path)
    sim.step(1e-3, steps=100, method=method)
    loaded.step(1e-3, steps=100, method=method)
    assert_identical(loaded, sim)
    # and with the saved default method
    sim.step(1e-3, steps=10)
    loaded.step(1e-3, steps=10)
    assert_identical(loaded, sim)


def test_verlet_history_changes_the_next_steps():
    # What makes the test above able to fail: a system that lost its Verlet history
    # (the hidden _prev_accel) steps differently.
    sim, forgetful = rich_system(3), rich_system(3)
    forgetful._verlet_valid = False
    sim.step(1e-3, steps=100, method="verlet")
    forgetful.step(1e-3, steps=100, method="verlet")
    assert not np.array_equal(sim.positions, forgetful.positions)


@pytest.mark.parametrize("dim", [2, 3])
def test_empty_system_round_trips(tmp_path, dim):
    sim = ss.System(dim=dim)
    sim.gravity = np.arange(dim) + 0.5
    sim.drag, sim.time, sim.method = 0.25, -3.0, "rk4"
    save(sim, tmp_path / "empty.npz")
    loaded = load(tmp_path / "empty.npz")
    assert_identical(loaded, sim)
    for method in ss.METHODS:
        loaded.step(0.01, steps=100, method=method)
        sim.step(0.01, steps=100, method=method)
    assert_identical(loaded, sim)


def test_save_adds_nothing_to_the_name(tmp_path):
    sim = rich_system(2)
    for path in (tmp_path / "state", str(tmp_path / "other.dat")):
        sim.save(path)  # System.save delegates to springsim.io.save
        assert_identical(load(path), sim)
        assert_identical(load(str(path)), sim)
    assert sorted(os.listdir(tmp_path)) == ["other.dat", "state"]


def test_save_replaces_a_file_and_is_plain_npz(tmp_path):
    path = tmp_path / "state.npz"
    save(rich_system(3), path)
    sim = ss.System(dim=2)
    save(sim, path)
    assert_identical(load(path), sim)
    with np.load(path, allow_pickle=False) as entries:
        assert entries["format"] == "springsim.System"
        assert entries["version"] == FORMAT_VERSION == 8
        assert entries["dim"] == 2


def test_saving_an_invalid_system_raises_and_keeps_the_old_file(tmp_path):
    path = tmp_path / "state.npz"
    save(rich_system(2), path)
    before = path.read_bytes()
    sim = rich_system(2)
    sim.masses[0] = -1.0  # through a view: the kernel cannot refuse it
    with pytest.raises(ValueError, match=re.escape(str(path))):
        save(sim, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["state.npz"]


# Every array a user can write through a view, with the values the kernel refuses
# (and, for the arrays whose limits are not just "finite", the edge values it takes).
HOSTILE = {
    "positions": [np.nan, np.inf, -np.inf],
    "velocities": [np.nan, np.inf],
    "masses": [np.nan, np.inf, 0.0, -1.0],
    "external_forces": [np.nan, -np.inf],
    "rest_lengths": [np.nan, np.inf, -1e-300],
    "stiffness": [np.nan, -np.inf, -1.0],
    "damping": [np.nan, np.inf, -1.0],
    "break_strains": [np.nan, -np.inf, -0.5],
    "uvs": [np.nan, np.inf],
    "rest_positions": [np.nan, -np.inf],
    "radii": [np.nan, np.inf, -0.1],
    "_prev_accel": [np.nan, np.inf],
    "gravity": [np.nan, np.inf],
    "wind": [np.nan, -np.inf],
}
VALID_EDGES = {
    "rest_lengths": [0.0],
    "stiffness": [0.0, np.inf],
    "damping": [0.0],
    "break_strains": [0.0, np.inf],
}
HOSTILE_CASES = [(name, value) for name, values in HOSTILE.items() for value in values]
HOSTILE_CASES.append(("pinned", 7))  # a byte that is no bool, through a uint8 view


def write_through_view(sim, name, value):
    """Write ``value`` into one element of the view ``name``, as a user can."""
    view = sim._view(name)
    if name == "pinned":
        view = view.view(np.uint8)
    view.reshape(-1)[1] = value


def test_writable_views_are_exactly_the_checked_arrays():
    sim = rich_system(3)
    writable = {name for name in ARRAYS if sim._view(name).flags.writeable}
    assert writable == set(HOSTILE) | {"pinned", "groups"}  # every int32 names a group


@pytest.mark.parametrize(("name", "value"), HOSTILE_CASES)
def test_a_value_written_through_a_view_is_refused_by_step_save_and_load(tmp_path, name, value):
    sim = rich_system(3)
    path = tmp_path / "state.npz"
    save(sim, path)  # valid, for the load check below
    write_through_view(sim, name, value)
    before = snapshot(sim)
    with pytest.raises(ValueError):
        sim.step(1e-3)
    assert_same(snapshot(sim), before)
    with pytest.raises(ValueError, match=re.escape(str(tmp_path / "bad.npz"))):
        save(sim, tmp_path / "bad.npz")
    assert_same(snapshot(sim), before)
    assert sorted(os.listdir(tmp_path)) == ["state.npz"]
    # load() refuses the same value in a file
    with np.load(path, allow_pickle=False) as npz:
        entry = npz[name].copy()
    if name == "pinned":
        entry.view(np.uint8).reshape(-1)[1] = value
        rewrite(path, pinned=entry)
        assert load(path).pinned.view(np.uint8).max() <= 1  # read as a bool
        return
    entry.reshape(-1)[1] = value
    rewrite(path, **{name: entry})
    assert_bad_file(path, "invalid content")


def test_break_strain_error_names_the_spring():
    sim = rich_system(2)
    sim.break_strains[5] = np.nan
    with pytest.raises(ValueError, match="break strain of spring 5 is nan"):
        sim.step(1e-3)
    sim.break_strains[5] = -0.25
    with pytest.raises(ValueError, match="break strain of spring 5 is -0.25"):
        sim._validate()
    assert sim.num_springs == rich_system(2).num_springs  # nothing torn


@pytest.mark.parametrize(
    ("name", "value"), [(name, v) for name, values in VALID_EDGES.items() for v in values]
)
def test_edge_values_written_through_a_view_save_and_load(tmp_path, name, value):
    sim = rich_system(3)
    write_through_view(sim, name, value)
    sim._validate()
    save(sim, tmp_path / "state.npz")
    assert_identical(load(tmp_path / "state.npz"), sim)


def test_save_refuses_wrong_types(tmp_path):
    with pytest.raises(TypeError):
        save("not a system", tmp_path / "x.npz")
    with pytest.raises(TypeError):
        save(ss.System(), 42)


def rewrite(path, **changes):
    """Rewrite a save file with entries changed (None deletes one)."""
    with np.load(path, allow_pickle=False) as npz:
        entries = dict(npz)
    for key, value in changes.items():
        if value is None:
            del entries[key]
        else:
            entries[key] = value
    with open(path, "wb") as file:
        np.savez(file, **entries)


def assert_bad_file(path, match):
    with pytest.raises(ValueError, match=match) as error:
        load(path)
    assert str(path) in str(error.value)


@pytest.fixture
def saved(tmp_path):
    """The path of a saved 3D system (16 nodes)."""
    path = tmp_path / "saved.npz"
    save(rich_system(3), path)
    return path


def test_a_truncated_file_raises(saved):
    data = saved.read_bytes()
    saved.write_bytes(data[: len(data) // 2])
    assert_bad_file(saved, "not a readable .npz")


def test_every_truncation_raises(saved):
    data = saved.read_bytes()
    for cut in range(0, len(data), 97):
        saved.write_bytes(data[:cut])
        assert_bad_file(saved, "not a springsim save file")


def test_a_corrupt_file_raises(saved):
    data = bytearray(saved.read_bytes())
    start = data.index(b"\x93NUMPY", data.index(b"positions.npy"))  # that array's header
    data[start + 200] ^= 0xFF  # a byte of the positions' data: the CRC no longer matches
    saved.write_bytes(bytes(data))
    assert_bad_file(saved, "corrupt")


def test_a_text_file_raises(tmp_path):
    path = tmp_path / "notes.npz"
    path.write_text("positions: 0 0 0\n")
    assert_bad_file(path, "not a springsim save file")


def test_an_empty_file_raises(tmp_path):
    path = tmp_path / "empty.npz"
    path.write_bytes(b"")
    assert_bad_file(path, "not a springsim save file")


def test_a_foreign_npz_raises(tmp_path):
    path = tmp_path / "foreign.npz"
    np.savez(path, positions=np.zeros((3, 3)), masses=np.ones(3))
    assert_bad_file(path, "not a springsim save file")
    rewrite(path, format=np.array("other.Thing"), version=np.array(1))
    assert_bad_file(path, "not a springsim save file")


def test_a_npy_file_raises(tmp_path):
    path = tmp_path / "array.npy"
    np.save(path, np.zeros(3))
    assert_bad_file(path, "not a springsim save file")


def test_a_newer_version_raises(saved):
    rewrite(saved, version=np.array(FORMAT_VERSION + 1))
    assert_bad_file(saved, "newer springsim")


@pytest.mark.parametrize("version", [0, -1])
def test_an_unknown_version_raises(saved, version):
    rewrite(saved, version=np.array(version))
    assert_bad_file(saved, "unknown format version")


def test_a_missing_or_extra_entry_raises(saved):
    rewrite(saved, masses=None)
    assert_bad_file(saved, "missing masses")
    rewrite(saved, masses=np.ones(16), notes=np.array("hello"))
    assert_bad_file(saved, "unexpected notes")


@pytest.mark.parametrize(
    ("key", "value", "match"),
    [
        ("velocities", np.zeros((15, 3)), "velocities"),
        ("uvs", np.zeros((16, 3)), "uvs"),
        ("positions", np.zeros((16, 3), np.float32), "positions"),
        ("pinned", np.zeros(16, np.int64), "pinned"),
        ("rest_lengths", np.ones(3), "rest_lengths"),
        ("faces", np.zeros((2, 4), np.int32), "faces"),
        ("gravity", np.zeros(2), "gravity"),
        ("drag", np.zeros(2), "drag"),
        ("dim", np.array(4), "dim must be 2 or 3"),
        ("method", np.array(3), "method"),
    ],
)
def test_wrong_shapes_and_dtypes_raise(saved, key, value, match):
    rewrite(saved, **{key: value})
    assert_bad_file(saved, match)


def test_out_of_range_values_raise(saved):
    with np.load(saved) as npz:
        springs, faces, masses = npz["springs"].copy(), npz["faces"].copy(), npz["masses"].copy()
    original = saved.read_bytes()
    springs[3, 1] = 16
    rewrite(saved, springs=springs)
    assert_bad_file(saved, "refers to node 16")
    saved.write_bytes(original)
    faces[0] = (0, 0, 1)
    rewrite(saved, faces=faces)
    assert_bad_file(saved, "repeats a node")
    saved.write_bytes(original)
    masses[2] = 0.0
    rewrite(saved, masses=masses)
    assert_bad_file(saved, "mass")
    saved.write_bytes(original)
    rewrite(saved, method=np.array("leapfrog"))
    assert_bad_file(saved, "unknown method")
    saved.write_bytes(original)
    rewrite(saved, energy_loss=np.array(1.5))
    assert_bad_file(saved, "energy_loss")


def test_a_missing_file_is_an_oserror(tmp_path):
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "nothing.npz")


# ---- files that declare more than they hold: refused before anything is allocated ----


def npy_header(shape, dtype) -> bytes:
    """The header of a .npy file holding an array of ``shape`` and ``dtype``."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer,
        {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False,
         "shape": shape},
    )  # fmt: skip
    return buffer.getvalue()


def deflated_zeros(shape, dtype):
    """A .npy of zeros, deflated without ever holding it: (method, crc, size, data)."""
    dtype = np.dtype(dtype)
    header = npy_header(shape, dtype)
    row = dtype.itemsize * math.prod(shape[1:])
    chunk = bytes(row * 2**16)
    assert shape[0] % 2**16 == 0
    count = shape[0] // 2**16
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    parts = [compressor.compress(header) + compressor.flush(zlib.Z_FULL_FLUSH)]
    # After a full flush the compressor starts afresh: equal chunks compress equally.
    first = compressor.compress(chunk) + compressor.flush(zlib.Z_FULL_FLUSH)
    again = compressor.compress(chunk) + compressor.flush(zlib.Z_FULL_FLUSH)
    assert first == again
    parts += [first] * count + [compressor.flush()]
    crc = zlib.crc32(header)
    for _ in range(count):
        crc = zlib.crc32(chunk, crc)
    return 8, crc, len(header) + row * shape[0], b"".join(parts)


def write_zip(path, members):
    """Write a zip of ``members``: name -> raw bytes (stored) or (method, crc, size, data)."""
    central = []
    with open(path, "wb") as out:
        for name, member in members.items():
            if isinstance(member, bytes):
                member = (0, zlib.crc32(member), len(member), member)
            method, crc, size, data = member
            encoded, offset = name.encode(), out.tell()
            out.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0x21, crc,
                                  len(data), size, len(encoded), 0) + encoded + data)  # fmt: skip
            central.append(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0,
                                       0x21, crc, len(data), size, len(encoded), 0, 0, 0, 0, 0,
                                       offset) + encoded)  # fmt: skip
        directory = b"".join(central)
        out.write(directory + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(central),
                                          len(central), len(directory), out.tell(), 0))  # fmt: skip


def members_of(path):
    """The raw .npy bytes of every entry of a save file."""
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def assert_refused_quickly(path, match):
    """load() raises ValueError naming the file, allocating next to nothing."""
    tracemalloc.start()
    try:
        started = time.perf_counter()
        assert_bad_file(path, match)
        elapsed = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20, f"load() allocated {peak} bytes"
    assert elapsed < 1.0, f"load() took {elapsed:.2f} s"


def test_members_of_and_write_zip_rebuild_a_loadable_file(saved, tmp_path):
    copy = tmp_path / "copy.npz"
    write_zip(copy, members_of(saved))
    assert_identical(load(copy), load(saved))


def test_a_tiny_file_declaring_a_huge_array_is_refused_before_allocating(saved):
    members = members_of(saved)
    members["positions.npy"] = npy_header((10**12, 3), np.float64) + bytes(48)
    write_zip(saved, members)
    assert os.path.getsize(saved) < 2**16
    assert_refused_quickly(saved, r"'positions' declares float64 \(1000000000000, 3\)")


@pytest.mark.parametrize("key", ["positions", "uvs", "stiffness"])
def test_a_header_inconsistent_with_the_other_arrays_is_refused_before_reading(saved, key):
    members = members_of(saved)
    name = f"{key}.npy"
    shape = np.lib.format.read_array(io.BytesIO(members[name])).shape
    members[name] = deflated_zeros((32 * 2**16, *shape[1:]), np.float64)
    write_zip(saved, members)
    assert_refused_quickly(saved, key)


def test_a_zip_bomb_is_refused_quickly_in_little_memory(saved):
    # 0.5 GB of zeros in a 0.5 MB file, as the velocities of a 16-node system.
    members = members_of(saved)
    members["velocities.npy"] = deflated_zeros((333 * 2**16, 3), np.float64)
    write_zip(saved, members)
    assert os.path.getsize(saved) < 2**20
    assert_refused_quickly(saved, "velocities")


def test_a_consistent_zip_bomb_is_refused_by_its_compression_ratio(saved):
    # Every node array of 2**19 nodes, all zeros: 76 MB in a 0.1 MB file.
    members = members_of(saved)
    nodes = 2**19
    for key in ("positions", "velocities", "external_forces", "rest_positions", "_prev_accel"):
        members[f"{key}.npy"] = deflated_zeros((nodes, 3), np.float64)
    members["masses.npy"] = deflated_zeros((nodes,), np.float64)
    members["pinned.npy"] = deflated_zeros((nodes,), np.bool_)
    members["uvs.npy"] = deflated_zeros((nodes, 2), np.float64)
    for key in ("springs", "rest_lengths", "stiffness", "damping", "break_strains", "faces"):
        empty = np.lib.format.read_array(io.BytesIO(members[f"{key}.npy"]))[:0]
        members[f"{key}.npy"] = npy_header(empty.shape, empty.dtype)
    write_zip(saved, members)
    assert_refused_quickly(saved, "zip bomb")


def test_a_member_that_is_no_npy_is_refused_before_reading(saved):
    members = members_of(saved)
    del members["positions.npy"]
    members["positions"] = deflated_zeros((32 * 2**16, 3), np.float64)  # no .npy suffix
    write_zip(saved, members)
    assert_refused_quickly(saved, "'positions' is not a NumPy array")


def test_colliders_round_trip_and_version_1_files_load_without_them(tmp_path):
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 0.5], [0.3, 2.0]])
    sim.add_plane([0.0, 2.0], offset=-0.1, restitution=0.5, friction=0.25)
    sim.add_sphere([0.3, 1.0], radius=0.4, restitution=1.0)
    path = tmp_path / "with_colliders.npz"
    sim.save(path)
    again = load(path)
    assert [repr(c) for c in again.colliders] == [repr(c) for c in sim.colliders]
    sim.step(1e-3, steps=500)
    again.step(1e-3, steps=500)
    assert np.array_equal(sim.positions, again.positions)

    with np.load(path) as npz:
        entries = {
            key: npz[key]
            for key in npz.files
            if key not in VERSION_2 + VERSION_3 + VERSION_4 + VERSION_5 + VERSION_6 + VERSION_7
        }
    entries["version"] = np.array(1, dtype=np.int64)
    old = tmp_path / "version1.npz"
    np.savez(old, **entries)
    old_system = load(old)
    assert old_system.colliders == [] and old_system.max_strain is None
    assert np.all(np.isinf(old_system.break_strains))
    entries["colliders"] = np.zeros((0, 7))
    np.savez(old, **entries)  # version 1 with a version-2 entry is refused
    with pytest.raises(ValueError, match="unexpected colliders"):
        load(old)


def test_strain_limit_and_tearing_settings_round_trip(tmp_path):
    sim = ss.string(5, length=1.0, mass=1.0, stiffness=10.0)
    sim.max_strain = 0.05
    sim.iterations = 37
    sim.break_strains = [0.5, np.inf, 0.25, 1.0]
    sim.save(tmp_path / "s.npz")
    again = load(tmp_path / "s.npz")
    assert again.max_strain == 0.05 and again.iterations == 37
    assert again.break_strains.tolist() == [0.5, np.inf, 0.25, 1.0]


# ---- gas bodies --------------------------------------------------------------------


def gas_bodies(sim):
    """Every gas body of ``sim`` as (nrt, ambient, volume, boundary), in order."""
    return [
        (nrt, ambient, volume, sim._pressure_elements(body))
        for body, nrt, ambient, volume in sim._pressure_bodies()
    ]


def assert_same_gas(a, b):
    """The same gas bodies in the same order: values and boundaries exactly equal."""
    bodies_a, bodies_b = gas_bodies(a), gas_bodies(b)
    assert len(bodies_a) == len(bodies_b)
    for (*values_a, elements_a), (*values_b, elements_b) in zip(bodies_a, bodies_b, strict=True):
        assert values_a == values_b  # nrt, ambient, volume: finite, so == is bit-exact
        assert elements_a.dtype == elements_b.dtype and elements_a.shape == elements_b.shape
        np.testing.assert_array_equal(elements_a, elements_b)


def gas_ball_2d():
    return ss.ball(nodes=16, radius=0.5, mass=1.0, stiffness=1e3, dim=2, nrt=2.0)


def gas_ball_3d():
    sim = ss.ball(subdivisions=1, radius=0.5, mass=1.0, stiffness=1e3, nrt=2.0)
    sim.gas(0).ambient = 0.5
    return sim


def two_gas_bodies_after_a_removed_one():
    """A 2D system that had bodies 0, 1 and 2 (16, 12 and 10 edges); 0 was removed."""
    sim = gas_ball_2d()
    for k, (n, nrt, ambient) in enumerate([(12, 1.0, 0.25), (10, 3.0, 0.0)]):
        other = ss.ball(nodes=n, radius=0.3, mass=0.5, stiffness=500.0, dim=2, nrt=nrt)
        other.positions += (1.5 * (k + 1), 0.0)
        other.gas(0).ambient = ambient
        sim.add(other)
    sim.remove_pressure(0)
    assert [body for body, *_ in sim._pressure_bodies()] == [1, 2]
    return sim


GAS_SYSTEMS = {
    "ball_2d": gas_ball_2d,
    "ball_3d": gas_ball_3d,
    "first_removed": two_gas_bodies_after_a_removed_one,
}


@pytest.mark.parametrize("method", ss.METHODS)
@pytest.mark.parametrize("make", GAS_SYSTEMS.values(), ids=GAS_SYSTEMS.keys())
def test_gas_bodies_round_trip_and_step_bit_for_bit(tmp_path, make, method):
    sim = make()
    sim.step(1e-3, steps=50, method="verlet")  # moving, with a Verlet history
    path = tmp_path / "gas.npz"
    save(sim, path)
    loaded = load(path)
    assert_identical(loaded, sim)
    assert_same_gas(loaded, sim)
    # renumbered in order: the same ids unless a body was removed
    bodies = len(sim.gases)
    assert [gas.body for gas in loaded.gases] == list(range(bodies))
    sim.step(1e-3, steps=200, method=method)
    loaded.step(1e-3, steps=200, method=method)
    assert np.array_equal(loaded.positions, sim.positions)
    assert np.array_equal(loaded.velocities, sim.velocities)
    assert_identical(loaded, sim)
    assert_same_gas(loaded, sim)


@pytest.mark.parametrize("make", GAS_SYSTEMS.values(), ids=GAS_SYSTEMS.keys())
def test_gas_changes_the_next_steps(make):
    # What makes the test above able to fail: a copy without the gas, or with one
    # body's gas one ulp different, steps differently.
    sim, without, nudged = make(), make(), make()
    for gas in without.gases:
        without.remove_pressure(gas.body)
    gas = nudged.gases[-1]
    gas.nrt = np.nextafter(gas.nrt, np.inf)
    for system in (sim, without, nudged):
        system.step(1e-3, steps=200)
    assert not np.array_equal(sim.positions, without.positions)
    assert not np.array_equal(sim.positions, nudged.positions)


@pytest.mark.parametrize("version", [1, 2])
def test_version_1_and_2_files_load_without_gas_bodies(tmp_path, version):
    sim = two_gas_bodies_after_a_removed_one()
    path = tmp_path / "gas.npz"
    save(sim, path)
    dropped = VERSION_3 + VERSION_4 + VERSION_5 + VERSION_6 + VERSION_7
    if version == 1:
        dropped += VERSION_2
    with np.load(path) as npz:
        entries = {key: npz[key] for key in npz.files if key not in dropped}
    entries["version"] = np.array(version, dtype=np.int64)
    old = tmp_path / f"version{version}.npz"
    np.savez(old, **entries)
    old_system = load(old)
    assert old_system.gases == [] and old_system._pressure_bodies() == []
    # Saved when the energy books were off by default: they load untracked.
    assert sim.track_energy and not old_system.track_energy
    old_system.track_energy = True
    assert_identical(old_system, sim)  # everything else as saved
    # an old version with a version-3 entry is refused
    with np.load(path) as npz:
        entries["pressure"] = npz["pressure"]
    np.savez(old, **entries)
    assert_bad_file(old, "unexpected pressure")


@pytest.fixture
def saved_gas(tmp_path):
    """The path of a saved 2D system of 38 nodes with two gas bodies (12 + 10 edges)."""
    path = tmp_path / "gas.npz"
    sim = two_gas_bodies_after_a_removed_one()
    assert sim.num_nodes == 38
    save(sim, path)
    return path


def gas_entries(path):
    with np.load(path) as npz:
        return {key: npz[key].copy() for key in VERSION_3}


def with_row(array, row, value):
    array = array.copy()
    array[row] = value
    return array


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda e: {"pressure_elements": e["pressure_elements"].astype(float)}, "pressure_elem"),
        (lambda e: {"pressure_elements": e["pressure_elements"][:, :1]}, "pressure_elements"),
        (lambda e: {"pressure_elements": e["pressure_elements"][0]}, "pressure_elements"),
        (lambda e: {"pressure_counts": np.array([12, 9])}, "sums to 21"),
        (lambda e: {"pressure_counts": np.array([12, 11])}, "sums to 23"),
        (lambda e: {"pressure_counts": np.array([23, -1])}, "negative count"),
        (lambda e: {"pressure_counts": np.array([22])}, "pressure_counts"),
        (lambda e: {"pressure_counts": np.array([12.0, 10.0])}, "pressure_counts"),
        (lambda e: {"pressure": e["pressure"][:, :1]}, "'pressure'"),
        (lambda e: {"pressure": e["pressure"].astype(np.float32)}, "'pressure'"),
        (lambda e: {"pressure": e["pressure"][0]}, "'pressure'"),
        # what the kernel refuses
        (lambda e: {"pressure_elements": with_row(e["pressure_elements"], 3, (17, 38))}, "38"),
        (lambda e: {"pressure_elements": with_row(e["pressure_elements"], 3, (17, -1))}, "-1"),
        (
            lambda e: {"pressure_elements": e["pressure_elements"].astype(np.uint64) + 2**63},
            "beyond any system's size",
        ),
        (
            lambda e: {
                "pressure_elements": e["pressure_elements"][1:],
                "pressure_counts": np.array([11, 10]),
            },
            "not closed",
        ),
        (lambda e: {"pressure_counts": np.array([0, 22])}, "empty"),
        (lambda e: {"pressure": with_row(e["pressure"], 1, (-1.0, 0.0))}, "nrt"),
        (lambda e: {"pressure": with_row(e["pressure"], 0, (1.0, np.nan))}, "ambient"),
    ],
    ids=[
        "float_elements",
        "one_column_elements",
        "one_dimensional_elements",
        "counts_sum_short",
        "counts_sum_over",
        "negative_count",
        "one_count_for_two_bodies",
        "float_counts",
        "one_column_pressure",
        "float32_pressure",
        "one_dimensional_pressure",
        "index_out_of_range",
        "negative_index",
        "index_beyond_int64",
        "open_boundary",
        "empty_body",
        "negative_nrt",
        "nan_ambient",
    ],
)
def test_corrupt_gas_entries_raise(saved_gas, change, match):
    rewrite(saved_gas, **change(gas_entries(saved_gas)))
    assert_bad_file(saved_gas, match)


def test_an_open_or_out_of_range_3d_gas_surface_raises(tmp_path):
    path = tmp_path / "ball.npz"
    save(gas_ball_3d(), path)
    original = path.read_bytes()
    entries = gas_entries(path)
    triangles = entries["pressure_elements"]
    rewrite(path, pressure_elements=triangles[1:], pressure_counts=np.array([79]))
    assert_bad_file(path, "not closed")
    path.write_bytes(original)
    rewrite(path, pressure_elements=with_row(triangles, 5, (0, 1, 42)))
    assert_bad_file(path, "refers to node 42")
    path.write_bytes(original)
    assert_same_gas(load(path), gas_ball_3d())  # the untouched file still loads


def test_saving_an_inside_out_gas_body_raises_and_writes_nothing(tmp_path):
    # load would re-add such a body reversed (outward), so it would not step like the
    # original: save refuses it, as the kernel's step would.
    sim = gas_ball_2d()
    sim.positions[:, 0] *= -1  # mirrored through a view: the loop now runs clockwise
    path = tmp_path / "inside_out.npz"
    with pytest.raises(ValueError, match="inside out") as error:
        save(sim, path)
    assert str(path) in str(error.value)
    assert not os.listdir(tmp_path)


def test_version_3_files_load_with_the_default_divergence_factor(tmp_path):
    sim = ss.string(5, length=1.0, mass=1.0, stiffness=10.0)
    sim.divergence_factor = None
    path = tmp_path / "s.npz"
    save(sim, path)
    with np.load(path) as npz:
        entries = {
            key: npz[key]
            for key in npz.files
            if key not in VERSION_4 + VERSION_5 + VERSION_6 + VERSION_7
        }
    entries["version"] = np.array(3, dtype=np.int64)
    np.savez(tmp_path / "v3.npz", **entries)
    old = load(tmp_path / "v3.npz")
    assert old.divergence_factor == 100.0
    assert sim.track_energy and not old.track_energy  # files before version 7: untracked
    old.divergence_factor, old.track_energy = None, True
    assert_identical(old, sim)
