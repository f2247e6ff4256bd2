"""The bench's scene and integrator in Numba: a serial scatter and a parallel gather.

Both are symplectic Euler with gravity, Hooke springs and axial damping, as
springsim's ``symplectic_euler`` (``csrc/kernel/forces/forces.c``,
``csrc/kernel/step/integrate.c``): per spring ``F = (k (l − L) + c (v_j − v_i)·u) u``
on node i and ``−F`` on node j (springs shorter than 1e-12 m exert none),
``a = (ΣF + m g) / m`` (0 on pinned nodes), then ``v += a dt``, ``x += v dt``. The
steps run inside one compiled call, as ``sim.step(dt, steps=n)`` does. Like the
kernel, they take one reciprocal square root per spring for both l and u: written with
``d / l`` instead, the rounding differs by up to 6e-11 over the 20 validation steps (on
the string), above :data:`springsim.bench.peers.VALIDATION_TOLERANCE`.
"""

import functools

import numpy as np

from springsim.bench.scenes import Problem
from springsim.reference import MIN_SPRING_LENGTH


@functools.cache
def _kernels():
    """The two compiled step functions (compiled on first call; cached on disk)."""
    import numba
    from numba import njit, prange

    min_length2 = MIN_SPRING_LENGTH * MIN_SPRING_LENGTH

    @njit(cache=True, inline="always")
    def spring_force(x, v, a, b, s, rest, k, c):
        # The force on node a of spring s joining a to b, or None when too short.
        dx, dy, dz = x[b, 0] - x[a, 0], x[b, 1] - x[a, 1], x[b, 2] - x[a, 2]
        length2 = dx * dx + dy * dy + dz * dz
        if length2 < min_length2:
            return 0.0, 0.0, 0.0, False
        inv_length = 1.0 / np.sqrt(length2)
        length = length2 * inv_length
        ux, uy, uz = dx * inv_length, dy * inv_length, dz * inv_length
        closing = (v[b, 0] - v[a, 0]) * ux + (v[b, 1] - v[a, 1]) * uy
        closing += (v[b, 2] - v[a, 2]) * uz
        force = k[s] * (length - rest[s]) + c[s] * closing
        return force * ux, force * uy, force * uz, True

    @njit(cache=True)
    def serial(x, v, f, mass, pinned, pairs, rest, k, c, gravity, dt, steps):
        # The obvious loop: each spring's force added to f[i], subtracted from f[j].
        n, m = x.shape[0], pairs.shape[0]
        for _ in range(steps):
            for a in range(n):
                for d in range(3):
                    f[a, d] = mass[a] * gravity[d]
            for s in range(m):
                i, j = pairs[s, 0], pairs[s, 1]
                fx, fy, fz, pulls = spring_force(x, v, i, j, s, rest, k, c)
                if not pulls:
                    continue
                f[i, 0] += fx
                f[i, 1] += fy
                f[i, 2] += fz
                f[j, 0] -= fx
                f[j, 1] -= fy
                f[j, 2] -= fz
            for a in range(n):
                for d in range(3):
                    if pinned[a] == 0:
                        v[a, d] += f[a, d] / mass[a] * dt
                    x[a, d] += v[a, d] * dt

    @njit(parallel=True, cache=True)
    def gather(x, v, f, mass, pinned, offsets, other, spring, rest, k, c, gravity, dt, steps):
        # prange over nodes, each summing its own springs (CSR): no two threads write
        # one node. Every spring's force is computed twice, once from each end.
        n = x.shape[0]
        for _ in range(steps):
            for a in prange(n):
                fx, fy, fz = mass[a] * gravity[0], mass[a] * gravity[1], mass[a] * gravity[2]
                for e in range(offsets[a], offsets[a + 1]):
                    gx, gy, gz, pulls = spring_force(x, v, a, other[e], spring[e], rest, k, c)
                    if pulls:
                        fx += gx
                        fy += gy
                        fz += gz
                f[a, 0], f[a, 1], f[a, 2] = fx, fy, fz
            for a in prange(n):
                for d in range(3):
                    if pinned[a] == 0:
                        v[a, d] += f[a, d] / mass[a] * dt
                    x[a, d] += v[a, d] * dt

    return numba, serial, gather


class NumbaPeer:
    """A stepper: ``load(x, v)``, ``step(n)``, ``state() -> (x, v)``, ``close()``."""

    def __init__(self, problem: Problem, dt: float, threads: int | None, parallel: bool):
        self.numba, serial, gather = _kernels()
        self.threads = (threads or self.numba.config.NUMBA_NUM_THREADS) if parallel else 1
        self.x, self.v = np.array(problem.x), np.array(problem.v)
        f = np.zeros_like(self.x)
        common = (problem.rest, problem.k, problem.c, np.array(problem.gravity), float(dt))
        if parallel:
            csr = problem.adjacency()
            self._step = functools.partial(
                gather, self.x, self.v, f, problem.mass, problem.pinned, *csr, *common
            )
        else:
            self._step = functools.partial(
                serial, self.x, self.v, f, problem.mass, problem.pinned, problem.pairs, *common
            )
        self.parallel = parallel
        self.step(1)  # compiles (or loads from the cache) before anything is timed
        self.load(problem.x, problem.v)

    def load(self, x, v):
        """Set the state (and, for the parallel stepper, Numba's thread count)."""
        self.x[:], self.v[:] = x, v
        if self.parallel:
            self.numba.set_num_threads(self.threads)

    def step(self, steps: int):
        """``steps`` steps in one compiled call."""
        self._step(int(steps))

    def state(self):
        """Copies of (positions, velocities)."""
        return self.x.copy(), self.v.copy()

    def close(self):
        """Nothing to release."""


def numba_peer(problem: Problem, dt: float, threads: int | None = None) -> NumbaPeer:
    """Serial ``@njit``: the obvious scatter loop over springs; ``threads`` is ignored."""
    return NumbaPeer(problem, dt, None, parallel=False)


def numba_parallel_peer(problem: Problem, dt: float, threads: int | None = None) -> NumbaPeer:
    """``@njit(parallel=True)``: ``prange`` over nodes, each gathering its springs (CSR).

    ``threads`` is given to ``numba.set_num_threads`` (Numba's default, every core, if
    omitted); Numba's threading layer is the one it picks by itself.
    """
    return NumbaPeer(problem, dt, threads, parallel=True)
