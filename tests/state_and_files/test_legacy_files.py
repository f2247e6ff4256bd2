"""Files saved by an earlier springsim load and continue bit for bit, and the records it
pickled load too.

``tests/data/legacy_v6.*`` were written by ``tools/make_legacy_files.py`` at commit
b1c5c95 (save format 6; its pickles name that version's private modules, such as
``springsim._file_methods._unpickle`` and ``springsim._drives._Drive``). Loaded by
this springsim and stepped as that version stepped them, they must reach exactly the
state that version reached (``legacy_v6_after.npz``): same bits, whatever moved in the
package since.
"""

import pathlib
import pickle
import sys

import numpy as np
import pytest

import springsim as ss

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
sys.path.insert(0, str(DATA.parent.parent / "tools"))
from make_legacy_files import DT, METHOD, STEPS  # noqa: E402


def loaded(kind: str) -> ss.System:
    if kind == "file":
        return ss.load(DATA / "legacy_v6.npz")
    return pickle.loads((DATA / "legacy_v6.pickle").read_bytes())


@pytest.mark.parametrize("kind", ["file", "pickle"])
def test_a_file_of_the_previous_format_continues_bit_for_bit(kind):
    sim = loaded(kind)
    assert sim.self_collision is not None and len(sim.colliders) == 4
    assert sim._has_radii() and sim.groups[:10].tolist() == [1] * 10
    sim.step(DT, steps=STEPS, method=METHOD)
    with np.load(DATA / "legacy_v6_after.npz") as after:
        assert sim.positions.tobytes() == after["positions"].tobytes()
        assert sim.velocities.tobytes() == after["velocities"].tobytes()
        assert sim.time == float(after["time"])


def test_the_pickle_keeps_its_books_and_its_drag():
    sim = loaded("pickle")
    assert sim.track_energy is True and sim.dissipated > 0
    start = sim.positions[0].copy()
    sim.step(DT, steps=10, method=METHOD)  # node 0 is dragged at 0.1 m/s along x
    assert sim.positions[0] == pytest.approx(start + [0.1 * 10 * DT, 0, 0], abs=1e-15)


def test_records_pickled_before_the_folders_load():
    # Each names the module it lived in then (springsim.history.History,
    # springsim._diagnostics.Energy, springsim.sweep.SweepResult, ...): the old paths
    # that springsim.files.legacy keeps.
    records = pickle.loads((DATA / "legacy_v6_records.pickle").read_bytes())
    history = records["history"]
    assert type(history) is ss.History and history.frames.shape == (3, 16, 3)
    assert type(records["energy"]) is ss.Energy and records["energy"].total == pytest.approx(
        sum(records["energy"][:5])
    )
    assert type(records["solve"]) is ss.Solve and records["solve"].substeps == 2
    assert type(records["self_collision"]) is ss.SelfCollision
    assert type(records["modes"]) is ss.Modes and records["modes"].shapes.shape == (2, 4, 2)
    assert type(records["relaxed"]) is ss.Relaxed and records["relaxed"].converged
    sweep = records["sweep"]
    assert type(sweep) is ss.SweepResult and type(sweep.histories[0]) is ss.History
    state = records["state"]
    assert type(state.contact) is ss.reference.Contact and state.contact.radii[0] == 0.01


def test_new_pickles_name_the_new_modules():
    sim = loaded("pickle")
    data = pickle.dumps(sim)
    assert b"springsim.files.pickling" in data and b"springsim.model.pins" in data
    assert b"_file_methods" not in data and b"springsim._drives" not in data
    assert pickle.loads(data).positions.tobytes() == sim.positions.tobytes()
