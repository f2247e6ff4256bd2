"""The bench's scene and integrator in NVIDIA Warp on the "cpu" device (float64).

The same physics as springsim's ``symplectic_euler`` (see
:mod:`springsim.bench.peer_numba` for the formulas), as Warp's examples write it: a
spring kernel with ``wp.atomic_add`` into a force array, then a node kernel (update,
then reset the force to gravity). Warp runs a CPU kernel on the calling thread, one
element after the other, so the atomics never race; they cost what they cost.
"""

import functools

import numpy as np

from springsim.bench.scenes import Problem


@functools.cache
def _warp_kernels():
    """Warp and its two kernels, compiled once per process."""
    import warp as wp

    if hasattr(wp, "LOG_WARNING"):
        wp.config.log_level = wp.LOG_WARNING
    wp.init()

    @wp.kernel
    def spring_forces(
        x: wp.array(dtype=wp.vec3d),
        v: wp.array(dtype=wp.vec3d),
        pairs: wp.array(dtype=wp.vec2i),
        rest: wp.array(dtype=wp.float64),
        k: wp.array(dtype=wp.float64),
        c: wp.array(dtype=wp.float64),
        f: wp.array(dtype=wp.vec3d),
    ):
        s = wp.tid()
        i = pairs[s][0]
        j = pairs[s][1]
        d = x[j] - x[i]
        length2 = wp.dot(d, d)
        if length2 >= wp.float64(1.0e-24):  # reference.MIN_SPRING_LENGTH squared
            inv_length = wp.float64(1.0) / wp.sqrt(length2)
            length = length2 * inv_length
            u = d * inv_length
            closing_speed = wp.dot(v[j] - v[i], u)
            force = (k[s] * (length - rest[s]) + c[s] * closing_speed) * u
            wp.atomic_add(f, i, force)
            wp.atomic_sub(f, j, force)

    @wp.kernel
    def integrate(
        x: wp.array(dtype=wp.vec3d),
        v: wp.array(dtype=wp.vec3d),
        f: wp.array(dtype=wp.vec3d),
        mass: wp.array(dtype=wp.float64),
        pinned: wp.array(dtype=wp.int32),
        gravity: wp.vec3d,
        dt: wp.float64,
    ):
        i = wp.tid()
        if pinned[i] == 0:
            v[i] = v[i] + dt * (f[i] / mass[i])
        x[i] = x[i] + dt * v[i]
        f[i] = mass[i] * gravity

    return wp, spring_forces, integrate


def warp_peer(problem: Problem, dt: float, threads: int | None = None):
    """The scene and integrator in NVIDIA Warp on the "cpu" device (float64): a stepper.

    The same physics as springsim's ``symplectic_euler``, as Warp's examples write
    it: a spring kernel with ``wp.atomic_add`` into a force array, then a node
    kernel (update, then reset the force to gravity). The two launches are recorded
    once (``record_cmd=True``) and replayed, the cheapest way Warp offers to launch
    on the CPU. Warp runs a CPU kernel on one thread; ``threads`` is ignored.

    Returns
    -------
    object
        With ``step(n)``, ``load(x, v)``, ``state() -> (x, v)`` and ``close()``.
    """
    wp, spring_forces, integrate = _warp_kernels()
    device = "cpu"

    class MassSpring:
        def __init__(self):
            self.threads = 1

            def array(values, dtype):
                return wp.array(values, dtype=dtype, device=device)

            self.x = array(problem.x, wp.vec3d)
            self.v = array(problem.v, wp.vec3d)
            self.f = array(np.zeros_like(problem.x), wp.vec3d)
            mass, pinned = array(problem.mass, wp.float64), array(problem.pinned, wp.int32)
            pairs = array(problem.pairs, wp.vec2i)
            rest, k, c = (array(a, wp.float64) for a in (problem.rest, problem.k, problem.c))
            self.springs = wp.launch(
                spring_forces,
                dim=len(problem.pairs),
                inputs=[self.x, self.v, pairs, rest, k, c, self.f],
                device=device,
                record_cmd=True,
            )
            self.nodes = wp.launch(
                integrate,
                dim=len(problem.x),
                inputs=[self.x, self.v, self.f, mass, pinned, wp.vec3d(*problem.gravity), dt],
                device=device,
                record_cmd=True,
            )
            self.gravity_forces = problem.mass[:, None] * problem.gravity

        def load(self, x, v):
            self.x.assign(x)
            self.v.assign(v)
            self.f.assign(self.gravity_forces)

        def step(self, steps):
            for _ in range(steps):
                self.springs.launch()
                self.nodes.launch()
            wp.synchronize_device(device)

        def state(self):
            return self.x.numpy(), self.v.numpy()

        def close(self):
            pass

    return MassSpring()
