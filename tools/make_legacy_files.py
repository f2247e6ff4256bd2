"""Write tests/data/legacy_*: files saved by an earlier springsim, which every later one
must load and continue bit for bit (tests/test_legacy_files.py).

Run it with the springsim to preserve on the path (the files in the repository were
written at commit b1c5c95, save format 6, the last before the package was laid out in
folders): ``PYTHONPATH=<that checkout>/src python tools/make_legacy_files.py``. It
builds one system with most features (pins, a constant-velocity drag, a target drive,
colliders of every kind, node radii and groups, a gas body, self-collision, tearing),
steps it a little, and writes

- ``legacy_v6.npz`` (``System.save``) and ``legacy_v6.pickle`` (``pickle.dumps``, which
  names the private modules of that version: ``springsim._file_methods._unpickle``,
  ``springsim._drives._Drive``);
- ``legacy_v6_after.npz``: positions, velocities and time after ``STEPS`` more substeps
  of ``DT`` with ``METHOD``, computed by that version.
"""

import pathlib
import pickle
import sys

import numpy as np

import springsim as ss

DT, STEPS, METHOD = 2e-4, 50, "symplectic_euler"


def legacy_system() -> ss.System:
    sim = ss.cloth(8, 8, width=0.5, height=0.5, mass=0.1, stiffness=300.0, damping=0.02)
    sim.add_plane([0, 1, 0], -0.6, restitution=0.2, friction=0.3)
    sim.add_sphere([0.25, -0.3, 0.25], 0.1)
    sim.add_box([0.0, -0.5, 0.0], [0.2, 0.05, 0.2])
    sim.add_capsule([0.4, -0.4, 0.0], [0.4, -0.4, 0.4], 0.05)
    sim.radii = 0.01
    sim.groups[:10] = 1
    sim.enable_self_collision(0.01)
    sim.break_strains = 0.5
    sim.pin(0, velocity=[0.1, 0.0, 0.0])
    sim.track_energy = True
    sim.step(DT, steps=20, method=METHOD)
    return sim


def main(folder: pathlib.Path) -> None:
    sim = legacy_system()
    sim.save(folder / "legacy_v6.npz")
    (folder / "legacy_v6.pickle").write_bytes(pickle.dumps(sim))
    sim.step(DT, steps=STEPS, method=METHOD)
    np.savez(
        folder / "legacy_v6_after.npz",
        positions=sim.positions,
        velocities=sim.velocities,
        time=np.array(sim.time),
    )


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path("tests/data"))
