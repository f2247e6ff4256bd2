"""What a failed or interrupted step leaves behind: exactly the state before the call.

A step is all or nothing. It rolls back when the state becomes non-finite, when a gas
body ends a substep inside out (also when contacts or strain limiting, which run after
the last force evaluation, flatten it), and when Ctrl-C interrupts it: the kernel
polls the signal handlers about every 0.05 s of a long call.
"""

import os
import signal
import threading
import time

import numpy as np
import pytest
from state import assert_same, snapshot

import springsim as ss


def flat_triangle_under_a_floor():
    """A 2D gas triangle entirely below the floor y = 0: the floor projects every node
    onto y = 0 after the first substep, which flattens the gas to zero area."""
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, -1.0], [1.0, -1.0], [0.5, -0.5]], masses=1.0)
    sim.add_springs([[0, 1], [1, 2], [2, 0]], stiffness=10.0)
    sim.add_pressure([0, 1, 2], nrt=1e-3)
    sim.add_plane((0.0, 1.0), 0.0)
    return sim


# vbd: colliders as contact energy, not colliders.c's rule (tests/physics/test_vbd_contact.py)
@pytest.mark.parametrize("method", [m for m in ss.METHODS if m != "vbd"])
def test_a_gas_body_flattened_by_a_collider_rolls_the_step_back(method):
    sim = flat_triangle_under_a_floor()
    before = snapshot(sim)
    with pytest.raises(ss.UnstableError, match="pressure body 0 turned inside out"):
        sim.step(1e-4, steps=1, method=method)
    assert_same(before, snapshot(sim))
    assert sim.gas(0).volume > 0  # what is returned can be stepped and saved


@pytest.mark.parametrize("method", ["euler", "symplectic_euler", "rk4"])
def test_energy_books_that_overflow_roll_the_step_back(method):
    # Velocities of 1e160 m/s are finite, but drag's power on them (and so
    # `dissipated`) is not: the step is unstable, not a success whose books read inf
    # (found by the long fuzz run: a later rollback then failed to restore them).
    sim = ss.string(3, length=1.0, mass=0.3, stiffness=0.0, dim=2)
    sim.drag = 1.0
    sim.track_energy = True
    sim.velocities[1:] = (1e160, 0.0)
    before = snapshot(sim)
    with pytest.raises(ss.UnstableError, match="non-finite"):
        sim.step(1e-4, method=method)
    assert_same(before, snapshot(sim))
    assert sim.dissipated == 0.0


def test_a_gas_body_inverted_by_strain_limiting_rolls_the_step_back():
    # A gas triangle 0-1-2 over the pinned edge 0-1; node 2 is tied by a 0.5 m spring
    # to pinned node 3 below the edge. Strain limiting (max_strain 0) pulls node 2 to
    # within 0.5 m of node 3, below the edge: the triangle ends inside out, after the
    # last force evaluation of the substep.
    sim = ss.System(dim=2)
    sim.gravity = (0.0, 0.0)
    sim.add_nodes([[0.0, 0.0], [1.0, 0.0], [0.5, 1.0], [0.5, -1.0]], masses=1.0)
    sim.pin([0, 1, 3])
    sim.add_springs([[0, 1], [1, 2], [2, 0]], stiffness=0.0)
    sim.add_springs([[2, 3]], stiffness=0.0, rest_lengths=0.5)
    sim.add_pressure([0, 1, 2], nrt=1e-6)
    sim.max_strain = 0.0
    before = snapshot(sim)
    with pytest.raises(ss.UnstableError, match="pressure body 0 turned inside out"):
        sim.step(1e-6, steps=1)
    assert_same(before, snapshot(sim))


def interrupt_after(seconds: float) -> list:
    """Send SIGINT to this process after `seconds`; the list receives the send time."""
    sent = []

    def fire():
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    threading.Timer(seconds, fire).start()
    return sent


@pytest.mark.parametrize("threads", [1, 2])
def test_ctrl_c_stops_a_long_step_at_once_and_rolls_it_back(threads):
    # 200 x 200 cloth: above the thread threshold, and 10^5 substeps would take minutes.
    sim = ss.cloth(200, 200, width=1.0, height=1.0, mass=1.0, stiffness=100.0, pin="top_corners")
    sim.step(1e-4, steps=2)
    before = snapshot(sim)
    previous = ss.get_num_threads()
    ss.set_num_threads(threads)
    try:
        sent = interrupt_after(0.3)
        with pytest.raises(KeyboardInterrupt):
            sim.step(1e-4, steps=100_000)
        latency = time.perf_counter() - sent[0]
    finally:
        ss.set_num_threads(previous)
    assert_same(before, snapshot(sim))
    # The kernel polls every 0.05 s of wall time; 0.2 s is the promise, and the
    # margin is for a machine whose other core is busy.
    assert latency < 0.5, f"Ctrl-C took {latency:.3f} s to stop the step"
    sim.step(1e-4, steps=2)  # and the system steps on as if nothing had happened
    assert np.isfinite(sim.positions).all()


def test_ctrl_c_stops_a_long_step_of_a_tiny_system():
    # A tiny system polls the clock only every few thousand substeps: still in time.
    sim = ss.string(5, length=1.0, mass=0.1, stiffness=10.0, damping=0.01, dim=2)
    before = snapshot(sim)
    sent = interrupt_after(0.3)
    with pytest.raises(KeyboardInterrupt):
        sim.step(1e-6, steps=10**10)
    latency = time.perf_counter() - sent[0]
    assert_same(before, snapshot(sim))
    assert latency < 0.5, f"Ctrl-C took {latency:.3f} s to stop the step"


def test_ctrl_c_during_a_tearing_step_undoes_its_cuts():
    sim = ss.cloth(100, 100, width=1.0, height=1.0, mass=0.1, stiffness=200.0, pin="top_corners")
    sim.break_strain = 0.05
    left, right = np.flatnonzero(sim.pinned)
    sim.velocities[left] = (-1.0, 0.0, 0.0)
    sim.velocities[right] = (1.0, 0.0, 0.0)
    before = snapshot(sim)
    sent = interrupt_after(0.3)
    with pytest.raises(KeyboardInterrupt):
        sim.step(1e-4, steps=10**7)
    assert sent
    assert_same(before, snapshot(sim))
    assert sim.broken_springs().shape == (0, 2)
