"""Write tests/data/legacy_*: files saved by an earlier springsim, which every later one
must load and continue bit for bit (tests/state_and_files/test_legacy_files.py).

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
  of ``DT`` with ``METHOD``, computed by that version;
- ``legacy_v6_records.pickle`` (written at commit 40b5b92, whose modules were still those
  of b1c5c95): the records a notebook pickles, each naming the module it lived in then
  (``springsim.history.History``, ``springsim._diagnostics.Energy``,
  ``springsim.sweep.SweepResult``, ...), from :func:`records`.
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


def records() -> dict:
    """A run's History, an Energy, a Solve, Modes, a Relaxed, a SelfCollision setting, a
    SweepResult and a reference State with node-node contact, of one small system."""
    sim = ss.cloth(4, 4, width=1.0, height=1.0, mass=0.1, stiffness=100.0)
    sim.radii = 0.01
    sim.enable_self_collision(0.05)
    history = sim.run(0.01, 1e-3, frames=3, progress=False)
    sim.step(1e-3, steps=2, method="implicit_euler")
    hanging = ss.string(4, length=1.0, mass=0.1, stiffness=50.0, dim=2)
    return {
        "history": history,
        "energy": sim.energy(),
        "solve": sim.last_solve(),
        "self_collision": sim.self_collision,
        "modes": hanging.normal_modes(2),
        "relaxed": hanging.copy().relax(),
        "sweep": ss.SweepResult([{"k": 1.0}], [{"k": 1.0, "status": "ok"}], [history]),
        "state": ss.reference.State.from_system(sim),
    }


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
    (folder / "legacy_v6_records.pickle").write_bytes(pickle.dumps(records()))


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path("tests/data"))
