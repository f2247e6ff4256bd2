"""Safe from every thread: the findings of the threaded fuzzing campaign, each as a test.

A notebook cell runs while a viewer (or any other thread) steps the same System. Every
call holds the System's lock (``sim.lock``) for its duration, so a query never shares
the step's scratch while it runs, a save or pickle is a consistent snapshot, and a
resize cannot tear a file. The crashes are reproduced in a child process, so that a
regression fails this test instead of killing the suite.
"""

import pickle
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
from state import assert_same, snapshot

import springsim as ss


def run_child(code: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter; a crash shows as a negative return code."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# A cloth falling onto a plane with node radii set: every step searches contact pairs.
SCENE = """
import threading, time
import numpy as np
import springsim as ss

cloth = ss.cloth(40, 40, width=1.0, height=1.0, mass=0.2, stiffness=200.0, pin=None,
                 normal=(0, 1, 0))
cloth.radii = 0.01
cloth.add_plane([0, 1, 0], -0.05)
dt = 0.5 * cloth.critical_dt()
"""


def test_queries_during_another_threads_steps_do_not_crash():
    """Finding 1: energy() and critical_dt() while another thread steps a system with
    radii freed the step's contact buffers (a segfault; ASan: use after free)."""
    result = run_child(
        SCENE
        + """
stop = time.monotonic() + 1.5
errors = []
def stepper():
    while time.monotonic() < stop:
        try:
            cloth.step(dt, steps=20)
        except Exception as error:
            errors.append(error)
            return
thread = threading.Thread(target=stepper)
thread.start()
reads = 0
while thread.is_alive():
    e = cloth.energy()
    c = cloth.critical_dt()
    p = cloth.contact_pairs()
    assert np.isfinite(e.total) and c > 0 and p.shape[1] == 2
    reads += 1
thread.join()
assert not errors, errors
print("reads", reads)
"""
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert int(result.stdout.split()[-1]) > 10


def test_a_thread_that_steps_in_a_loop_lets_a_waiting_reader_in():
    """The lock is first come, first served: a thread stepping in a tight loop hands
    the system to a waiting reader at the end of each step instead of taking it back
    at once (before, a loaded machine let the reader in 4 times in 1.5 s). With strict
    turns each read waits for at most one step, so reads and steps come out nearly
    equal; a third is a margin for the reader's own time between reads."""
    result = run_child(
        SCENE
        + """
stop = time.monotonic() + 1.5
steps = 0
def stepper():
    global steps
    while time.monotonic() < stop:
        cloth.step(dt, steps=20)
        steps += 1
thread = threading.Thread(target=stepper)
thread.start()
reads = 0
while thread.is_alive():
    cloth.energy()
    reads += 1
thread.join()
print("turns", steps, reads)
"""
    )
    assert result.returncode == 0, result.stderr[-3000:]
    steps, reads = map(int, result.stdout.split()[-2:])
    assert steps > 5, result.stdout
    assert reads > steps / 3, result.stdout


def test_a_playing_viewer_and_a_notebook_cell():
    """Finding 1, as a notebook meets it: ``v = ss.view(cloth); v.play()`` then, in the
    next cell, energies, plots' data, a save and a parameter change, with no lock."""
    pytest.importorskip("anywidget")
    result = run_child(
        SCENE
        + """
import os, tempfile
viewer = ss.view(cloth, substeps=20)
viewer.play()
folder = tempfile.mkdtemp()
stop, deadline = time.monotonic() + 1.5, time.monotonic() + 30.0
rounds = 0
while (time.monotonic() < stop or rounds < 5) and time.monotonic() < deadline:
    assert np.isfinite(cloth.energy().total)
    cloth.critical_dt(); cloth.momentum(); cloth.spring_tensions()
    x = cloth.positions.copy()
    cloth.save(os.path.join(folder, "c.npz"))
    again = ss.load(os.path.join(folder, "c.npz"))
    assert again.num_nodes == cloth.num_nodes
    cloth.drag = 0.001 * (rounds % 2)
    rounds += 1
t = cloth.time
viewer.pause()
viewer.close()
assert viewer.error is None, viewer.error
assert t > 0, "the viewer never stepped"
print("rounds", rounds)
"""
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert int(result.stdout.split()[-1]) > 3


def test_saves_and_pickles_during_resizes_always_load(tmp_path):
    """Finding 3: save() and pickle while another thread adds and removes nodes wrote
    torn states (velocities of one size, positions of another) that load refused."""
    sim = ss.cloth(30, 30, width=1.0, height=1.0, mass=0.2, stiffness=200.0)
    real_view = sim._view

    def slow_view(name):
        time.sleep(0.001)  # a save's reads spread out, so a resize would land between
        return real_view(name)  # them (without the lock every save tears: measured)

    sim._view = slow_view
    stop = threading.Event()
    failures = []

    def resizer():
        rng = np.random.default_rng(1)
        try:
            while not stop.is_set():
                added = sim.add_nodes(rng.normal(size=(20, 3)), masses=0.01)
                cut = rng.integers(1, 20)  # in two removals: three sizes, none growing
                sim.remove_nodes(added[:cut])
                sim.remove_nodes(np.arange(sim.num_nodes - (20 - cut), sim.num_nodes))
        except Exception as error:  # reported by the main thread
            failures.append(error)

    thread = threading.Thread(target=resizer)
    thread.start()
    saved = 0
    try:
        # a number of saves, not a time: a loaded machine makes fewer in a second
        deadline = time.monotonic() + 60.0
        while saved < 6 and time.monotonic() < deadline:
            path = tmp_path / f"s{saved % 4}.npz"
            sim.save(path)
            loaded = ss.load(path)
            unpickled = pickle.loads(pickle.dumps(sim))
            for other in (loaded, unpickled):
                assert other.velocities.shape == other.positions.shape
            saved += 1
    finally:
        stop.set()
        thread.join()
    assert not failures, failures
    assert saved == 6


def self_colliding_cloth():
    from features.test_self_collision import folded_cloth

    sim = folded_cloth(8)
    sim.enable_self_collision(0.02, stiffness=300.0, friction=0.1)
    return sim


def test_files_pickles_and_copies_keep_the_books_and_the_crossing_count(tmp_path):
    """Finding 4: save()/load() dropped ``dissipated`` and ``track_energy``; both files
    and pickles dropped ``self_collision_crossings`` (copy() kept all three)."""
    sim = self_colliding_cloth()
    sim.track_energy = True
    sim.damping = 0.05
    sim.step(1e-4, steps=200)
    sim._set_state({**sim._state(), "crossings": 7})  # as a fast fold would have counted
    assert sim.dissipated > 0 and sim.self_collision_crossings == 7
    sim.save(tmp_path / "s.npz")
    for other in (ss.load(tmp_path / "s.npz"), pickle.loads(pickle.dumps(sim)), sim.copy()):
        assert other.dissipated == sim.dissipated
        assert other.track_energy is True
        assert other.self_collision_crossings == 7
        assert_same(snapshot(other), snapshot(sim))
        other.step(1e-4, steps=50)
        assert other.dissipated > sim.dissipated  # the books go on from where they were
    untracked = ss.cloth(3, 3, width=1.0, height=1.0, mass=0.1, stiffness=10.0)
    untracked.track_energy = False  # the opt-out is kept too
    untracked.save(tmp_path / "u.npz")
    assert ss.load(tmp_path / "u.npz").track_energy is False


def test_a_file_with_a_bad_crossing_count_is_refused(tmp_path):
    sim = self_colliding_cloth()
    sim.save(tmp_path / "s.npz")
    with np.load(tmp_path / "s.npz") as npz:
        entries = dict(npz)
    entries["crossings"] = np.array(-1, dtype=np.int64)
    np.savez(tmp_path / "bad.npz", **entries)
    with pytest.raises(ValueError, match="bad.npz.*crossings must be >= 0"):
        ss.load(tmp_path / "bad.npz")
    plain = ss.cloth(3, 3, width=1.0, height=1.0, mass=0.1, stiffness=10.0)
    with pytest.raises(ValueError, match="self-collision is off"):
        plain._set_state({**plain._state(), "crossings": 3})
    assert plain.self_collision_crossings == 0
