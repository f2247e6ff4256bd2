"""Files saved by an earlier springsim load and continue bit for bit.

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

DATA = pathlib.Path(__file__).resolve().parent / "data"
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
