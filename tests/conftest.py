"""Shared fixtures: the SIMD path and thread count restored after a test (``settings``);
one small adapter so that a physics test runs unchanged on the C
kernel (``springsim.System``) and on the NumPy oracle (``springsim.reference``).

The oracle is tested against the textbook too: if both fail the same physics test,
the definition in ``springsim/reference.py`` is wrong, not just the kernel.
"""

import numpy as np
import pytest

import springsim
from springsim import reference

BACKENDS = ("kernel", "reference")

_FTZ_DAZ = 0x8040  # x86 MXCSR: flush-to-zero and denormals-are-zero


@pytest.fixture
def settings():
    """Restore the default SIMD path and thread count after a test that sets them."""
    yield
    springsim.set_simd(None)
    springsim.set_num_threads(None)


@pytest.fixture(autouse=True)
def _ieee_floating_point():
    """Each test starts in IEEE mode. The bench's JIT peers (Numba, Taichi, Warp) may
    leave flush-to-zero set in the main thread; the kernel steps in IEEE mode whatever
    the caller's, but a test's own NumPy arithmetic would not (a tiny gravity then gave
    -0.0 in NumPy against -2.2e-308 from the kernel, depending on the test order)."""
    mode = springsim._core._fp_mode()  # 0 where there is no MXCSR (not x86)
    if mode & _FTZ_DAZ:
        springsim._core._set_fp_mode(mode & ~_FTZ_DAZ)
    yield


class Model:
    """A mass-spring system built identically on either backend.

    All arrays are given explicitly (gravity defaults to zero here, unlike the
    library, because most textbook checks want it off). ``x`` and ``v`` return
    copies; ``energy()`` returns (kinetic, elastic, gravity, total).
    """

    def __init__(
        self,
        backend,
        positions,
        masses=1.0,
        velocities=None,
        pinned=False,
        springs=None,
        stiffness=0.0,
        damping=0.0,
        rest_lengths=None,
        gravity=None,
        drag=0.0,
        wind=None,
        energy_loss=1.0,
        external_forces=None,
    ):
        x = np.array(positions, dtype=float)
        n, dim = x.shape
        v = np.zeros_like(x) if velocities is None else np.array(velocities, float)
        springs = np.zeros((0, 2), np.int64) if springs is None else np.array(springs)
        springs = springs.reshape(-1, 2)
        m = len(springs)
        if rest_lengths is None:
            rest_lengths = np.linalg.norm(x[springs[:, 1]] - x[springs[:, 0]], axis=1)
        gravity = np.zeros(dim) if gravity is None else np.array(gravity, float)
        wind = np.zeros(dim) if wind is None else np.array(wind, float)
        ext = np.zeros_like(x) if external_forces is None else np.array(external_forces, float)
        self.backend = backend
        if backend == "reference":
            self.sim = reference.State(
                positions=x,
                masses=np.broadcast_to(masses, (n,)),
                springs=springs,
                rest_lengths=np.broadcast_to(rest_lengths, (m,)),
                stiffness=np.broadcast_to(stiffness, (m,)),
                damping=np.broadcast_to(damping, (m,)),
                velocities=v,
                external_forces=ext,
                pinned=np.broadcast_to(pinned, (n,)),
                gravity=gravity,
                wind=wind,
                drag=drag,
                energy_loss=energy_loss,
            )
        else:
            sim = springsim.System(dim=dim)
            sim.add_nodes(x, masses=masses, velocities=v, pinned=pinned)
            if m:
                sim.add_springs(springs, stiffness, damping=damping, rest_lengths=rest_lengths)
            sim.gravity = gravity
            sim.wind = wind
            sim.drag = drag
            sim.energy_loss = energy_loss
            sim.external_forces = ext
            # implicit_euler's CG to rounding level, as the oracle's exact solve: the
            # textbook checks (momentum, free fall) hold for the exact linear solve.
            sim.cg_tolerance = 1e-14
            self.sim = sim

    @property
    def x(self):
        return np.array(self.sim.positions if self.backend == "kernel" else self.sim.x)

    @property
    def v(self):
        return np.array(self.sim.velocities if self.backend == "kernel" else self.sim.v)

    @property
    def time(self):
        return float(self.sim.time)

    def step(self, dt, steps=1, method="symplectic_euler", drag_pins=False):
        """``drag_pins``: pinned nodes move at their velocities instead of being held:
        the kernel's are dragged (``pin(velocity=v)``: put on the line x + v t after
        each substep), the oracle's keep their velocities (x += v dt)."""
        if self.backend == "kernel":
            if drag_pins:
                pinned = np.flatnonzero(self.sim.pinned)
                self.sim.pin(pinned, velocity=np.array(self.sim.velocities[pinned]))
            self.sim.step(dt, steps, method=method)
        else:
            reference.step(self.sim, dt, steps=steps, method=method, drag_pins=drag_pins)

    def energy(self):
        if self.backend == "kernel":
            e = self.sim.energy()
            return float(e.kinetic), float(e.elastic), float(e.gravity), float(e.total)
        kinetic, elastic, gravity, gas = reference.energy(self.sim)
        return kinetic, elastic, gravity, kinetic + elastic + gravity + gas


@pytest.fixture(params=BACKENDS)
def model(request):
    """A factory ``model(positions=..., ...) -> Model``, once per backend.

    ``model.backend`` says which one ("kernel" or "reference").
    """

    def make(**kwargs):
        return Model(request.param, **kwargs)

    make.backend = request.param
    return make
