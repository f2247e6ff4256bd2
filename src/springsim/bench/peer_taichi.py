"""The bench's scene and integrator in Taichi (CPU backend, float64), gathering per node.

The same physics as springsim's ``symplectic_euler`` (see
:mod:`springsim.bench.peer_numba` for the formulas), written as Taichi's own
mass-spring examples write it: every node sums the forces of its own springs, here
from a CSR adjacency list, so no two threads ever add into one node — no
``ti.atomic_add`` and no racing ``+=``. One kernel per step, with two parallel loops
(Taichi finishes one before starting the next): forces, then the update.
``fast_math=False``: with Taichi's default fast math, ``1 / sqrt`` is rewritten and
the result differs from springsim's IEEE arithmetic by up to 6e-11 over the
validation steps, above the tolerance.
"""

from springsim.bench.scenes import Problem
from springsim.reference import MIN_SPRING_LENGTH


def taichi_peer(problem: Problem, dt: float, threads: int | None = None):
    """A Taichi stepper for ``problem``.

    Calls ``ti.init`` (which discards any earlier Taichi state in the process).

    Parameters
    ----------
    problem : Problem
        The arrays of the scene.
    dt : float
        Time step, s.
    threads : int, optional
        ``cpu_max_num_threads``; Taichi's default (every core) if omitted. With 1,
        Taichi runs the loops on the calling thread.

    Returns
    -------
    object
        With ``step(n)`` (n kernel launches, then ``ti.sync()``), ``load(x, v)``,
        ``state() -> (x, v)``, ``close()`` and ``threads``.
    """
    import taichi as ti

    options = dict(
        arch=ti.cpu, default_fp=ti.f64, default_ip=ti.i32, fast_math=False, log_level=ti.WARN
    )
    if threads is not None:
        options["cpu_max_num_threads"] = int(threads)
    ti.init(**options)
    n, m = len(problem.x), len(problem.pairs)
    offsets, other, spring = problem.adjacency()
    min_length = MIN_SPRING_LENGTH

    @ti.data_oriented
    class MassSpring:
        def __init__(self):
            self.threads = threads
            self.x = ti.Vector.field(3, ti.f64, n)
            self.v = ti.Vector.field(3, ti.f64, n)
            self.f = ti.Vector.field(3, ti.f64, n)
            self.mass = ti.field(ti.f64, n)
            self.pinned = ti.field(ti.i32, n)
            self.offsets = ti.field(ti.i32, n + 1)
            self.other = ti.field(ti.i32, 2 * m)
            self.spring = ti.field(ti.i32, 2 * m)
            self.rest = ti.field(ti.f64, m)
            self.k = ti.field(ti.f64, m)
            self.c = ti.field(ti.f64, m)
            self.gravity = ti.Vector.field(3, ti.f64, ())
            for name in ("mass", "pinned", "rest", "k", "c"):
                getattr(self, name).from_numpy(getattr(problem, name))
            for field, values in ((self.offsets, offsets), (self.other, other)):
                field.from_numpy(values)
            self.spring.from_numpy(spring)
            self.gravity.from_numpy(problem.gravity)

        @ti.kernel
        def substep(self, dt: ti.f64):
            for a in self.x:
                total = self.mass[a] * self.gravity[None]
                for e in range(self.offsets[a], self.offsets[a + 1]):
                    b, s = self.other[e], self.spring[e]
                    d = self.x[b] - self.x[a]
                    length2 = d.dot(d)
                    if length2 >= min_length * min_length:
                        inv_length = 1.0 / ti.sqrt(length2)
                        length = length2 * inv_length
                        u = d * inv_length
                        closing_speed = (self.v[b] - self.v[a]).dot(u)
                        total += (
                            self.k[s] * (length - self.rest[s]) + self.c[s] * closing_speed
                        ) * u
                self.f[a] = total
            for a in self.x:
                if self.pinned[a] == 0:
                    self.v[a] += dt * (self.f[a] / self.mass[a])
                self.x[a] += dt * self.v[a]

        def load(self, x, v):
            self.x.from_numpy(x)
            self.v.from_numpy(v)

        def step(self, steps):
            for _ in range(steps):
                self.substep(dt)
            ti.sync()

        def state(self):
            return self.x.to_numpy(), self.v.to_numpy()

        def close(self):
            ti.reset()  # frees the fields and stops Taichi's thread pool

    peer = MassSpring()
    peer.load(problem.x, problem.v)
    return peer
