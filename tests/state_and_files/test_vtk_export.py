"""History.write_vtk: a run as a ParaView time series (a .pvd collection, a .vtp of
VTK PolyData per frame), read back with VTK's own XML reader, the one ParaView uses.

What the files hold is compared with what the run recorded and with what the test
computes itself from the points read back: a spring's tension k (l − L)."""

import os
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest
import vtk  # in the [test] extra: VTK's Python package
from vtk.util.numpy_support import vtk_to_numpy

import springsim as ss
from springsim.io import write_vtk


def read_vtp(path):
    """A .vtp as VTK reads it: points, point arrays, cell arrays, lines, polygons, time."""
    reader = vtk.vtkXMLPolyDataReader()
    reader.SetFileName(str(path))
    reader.Update()
    assert reader.GetErrorCode() == 0
    data = reader.GetOutput()

    def arrays(attributes):
        return {
            attributes.GetArrayName(k): vtk_to_numpy(attributes.GetArray(k))
            for k in range(attributes.GetNumberOfArrays())
        }

    def cells(cell_array):
        if cell_array.GetNumberOfCells() == 0:
            return np.zeros((0, 0), dtype=np.int64)
        corners = vtk_to_numpy(cell_array.GetConnectivityArray())
        return corners.reshape(cell_array.GetNumberOfCells(), -1)

    return {
        "points": vtk_to_numpy(data.GetPoints().GetData()),
        "point": arrays(data.GetPointData()),
        "cell": arrays(data.GetCellData()),
        "lines": cells(data.GetLines()),
        "polys": cells(data.GetPolys()),
        "time": vtk_to_numpy(data.GetFieldData().GetArray("TimeValue")),
        "cells": data.GetNumberOfCells(),
    }


def read_pvd(path):
    """(time, file) of each data set in a .pvd, as ParaView's reader takes them."""
    root = ElementTree.parse(path).getroot()
    assert root.get("type") == "Collection"
    return [(float(d.get("timestep")), d.get("file")) for d in root.iter("DataSet")]


def test_each_frame_reads_back_with_its_time_points_velocities_and_springs(tmp_path):
    # An undamped string swinging down from the horizontal: its springs' tension is
    # k (l - L) exactly, computed here from the points VTK reads back.
    sim = ss.string(12, length=1.0, mass=0.2, stiffness=300.0, damping=0.0)
    h = sim.run(0.3, 1e-3, frames=4, progress=False)
    written = h.write_vtk(tmp_path / "swing.pvd")
    assert written == [
        *(str(tmp_path / "swing" / f"swing_{k:04d}.vtp") for k in range(4)),
        str(tmp_path / "swing.pvd"),
    ]
    entries = read_pvd(tmp_path / "swing.pvd")
    assert [t for t, _ in entries] == h.frame_times.tolist()  # the real times, exactly
    k_spring, rest = sim.stiffness, sim.rest_lengths
    for k, (_, name) in enumerate(entries):
        frame = read_vtp(tmp_path / name)
        np.testing.assert_array_equal(frame["points"], h.frames[k])
        np.testing.assert_array_equal(frame["point"]["velocity"], h.frame_velocities[k])
        np.testing.assert_array_equal(frame["point"]["pinned"], h.frame_pinned[k])
        np.testing.assert_array_equal(frame["point"]["node"], np.arange(12))
        np.testing.assert_array_equal(frame["lines"], h.edges)
        assert frame["time"].tolist() == [h.frame_times[k]]
        x = frame["points"]
        lengths = np.linalg.norm(x[frame["lines"][:, 1]] - x[frame["lines"][:, 0]], axis=1)
        np.testing.assert_allclose(frame["cell"]["tension"], k_spring * (lengths - rest), atol=1e-9)
        np.testing.assert_allclose(frame["cell"]["strain"], lengths / rest - 1.0, atol=1e-12)
        np.testing.assert_array_equal(frame["cell"]["tension"], h.frame_tensions[k])
    assert abs(h.frame_tensions[-1]).max() > 1.0  # it swings: the comparison means something


def test_a_2d_run_gets_z_zero_and_a_subset_of_nodes_its_own_numbers(tmp_path):
    sim = ss.string(10, length=1.0, mass=0.1, stiffness=100.0, dim=2)
    h = sim.run(0.1, 1e-3, frames=2, frame_nodes=[2, 3, 4, 7], progress=False)
    (path,) = [p for p in h.write_vtk(tmp_path / "part.pvd") if p.endswith("0001.vtp")]
    frame = read_vtp(path)
    np.testing.assert_array_equal(frame["points"][:, :2], h.frames[1])
    assert not frame["points"][:, 2].any() and not frame["point"]["velocity"][:, 2].any()
    np.testing.assert_array_equal(frame["point"]["node"], [2, 3, 4, 7])
    np.testing.assert_array_equal(frame["lines"], [[0, 1], [1, 2]])  # 2-3 and 3-4


def test_torn_springs_leave_and_faces_come_on_request(tmp_path):
    cloth = ss.cloth(6, 6, width=1.0, height=1.0, mass=0.1, stiffness=50.0, damping=0.01)
    cloth.break_strains = 0.02
    h = cloth.run(0.4, 1e-3, frames=3, progress=False)
    last = read_vtp(h.write_vtk(tmp_path / "cloth.pvd")[-2])
    kept = ~np.isnan(h.frame_tensions[-1])
    assert 0 < kept.sum() < len(h.edges)  # some tore
    np.testing.assert_array_equal(last["lines"], h.edges[kept])
    np.testing.assert_array_equal(last["cell"]["tension"], h.frame_tensions[-1][kept])
    assert len(last["polys"]) == 0
    with_faces = read_vtp(write_vtk(h, tmp_path / "surface.pvd", faces=True)[-2])
    np.testing.assert_array_equal(with_faces["polys"], h.faces)
    assert with_faces["cells"] == kept.sum() + len(h.faces)
    tension = with_faces["cell"]["tension"]  # lines first, then the polygons: NaN
    assert not np.isnan(tension[: kept.sum()]).any() and np.isnan(tension[kept.sum() :]).all()


def test_bad_requests_write_nothing(tmp_path):
    h = ss.string(4, length=1.0, mass=0.1, stiffness=10.0).run(0.01, 1e-3, progress=False)
    with pytest.raises(ValueError, match="no frames"):
        h.write_vtk(tmp_path / "run.pvd")
    framed = ss.string(4, length=1.0, mass=0.1, stiffness=10.0).run(
        0.01, 1e-3, frames=2, progress=False
    )
    with pytest.raises(ValueError, match=r"end in \.pvd"):
        framed.write_vtk(tmp_path / "run.vtp")
    with pytest.raises(TypeError, match="History"):
        write_vtk(ss.string(4, length=1.0, mass=0.1, stiffness=10.0), tmp_path / "run.pvd")
    framed.frames[1, 2, 0] = np.inf
    with pytest.raises(ValueError, match="frames must be finite"):
        framed.write_vtk(tmp_path / "run.pvd")
    assert os.listdir(tmp_path) == []


def test_writing_again_replaces_the_series(tmp_path):
    sim = ss.string(5, length=1.0, mass=0.1, stiffness=10.0)
    sim.run(0.02, 1e-3, frames=3, progress=False).write_vtk(tmp_path / "run.pvd")
    h = sim.run(0.02, 1e-3, frames=2, progress=False)
    h.write_vtk(str(tmp_path / "run.pvd"))
    entries = read_pvd(tmp_path / "run.pvd")
    assert [t for t, _ in entries] == h.frame_times.tolist()
    np.testing.assert_array_equal(read_vtp(tmp_path / entries[1][1])["points"], h.frames[1])
    assert not [name for name in os.listdir(tmp_path / "run") if name.endswith(".tmp")]
