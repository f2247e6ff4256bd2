"""Statics: the equilibrium of a spring system, by a modified Newton method.

At rest every free node feels zero net force: its springs' k (l − L) along each
spring, its weight m g, its external force and the gas pressure. Those forces are
−∂E/∂x of the potential energy

    E = Σ ½ k (l − L)² − Σ (m g + f_ext)·x + Σ_gas (−nrt ln V + ambient V),

so an equilibrium is a stationary point of E over the free coordinates, and a stable
one a minimum. :func:`relax` minimises E by Newton's method made global:

* **Modified Hessian.** The exact Hessian of a spring, k [u uᵀ + (1 − L/l)(I − u uᵀ)]
  (see :mod:`springsim.analysis.modes`), is indefinite for a compressed spring (l < L), whose
  sideways term is negative: it can buckle, and Newton's step on an indefinite matrix
  can climb to a saddle (a slack chain arched upward). Each iteration therefore uses
  the exact Hessian only where it is positive definite, or becomes so with a shift of
  at most 10⁻³ of the largest ω² (a state that is nearly stable: this keeps Newton's
  quadratic convergence near a wrinkled cloth's rest); otherwise the compressed
  springs' sideways term is clamped at zero, which leaves the springs' part positive
  semi-definite. The gas's part is exact; its rank-one term nrt/V² ∇V ∇Vᵀ is added by
  the Woodbury formula rather than filled in.
* **Levenberg shift.** Where the matrix is singular (a slack chain has no sideways
  stiffness at all) or not positive definite, λ M (M the masses) is added, λ growing
  tenfold until it is, and shrinking tenfold after each full step: far from equilibrium
  this is a damped, implicit-Euler-like move, close to it pure Newton. Definiteness is
  read off a symmetric L D Lᵀ factorisation (SuperLU without pivoting; Sylvester's law
  of inertia).
* **Line search.** The step is cut to move no node farther than the system's size
  (nor than the smallest sphere's diameter, so that no node jumps through one), then
  halved until the energy falls (Armijo's condition, 10⁻⁴ of the linear
  prediction). The energy change is computed from the differences (each spring's
  (l' − l)(l' + l − 2L)/2 with l' − l from the change of d·d), so the test still
  discriminates when the residual is ten orders of magnitude below the forces.
* **Colliders** are frictionless one-sided constraints: a node found inside a plane or
  sphere is put back on its surface, and a node on a surface that the net force presses
  into it moves only along the surface (the surface takes the normal push) until the
  force turns outward.

Damping, drag, the wind, the air on faces and ``energy_loss`` act only on moving nodes
and play no part at rest. Break strains and ``max_strain`` are not applied.
"""

from __future__ import annotations

import math
import operator
import types
import warnings
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import numpy as np

from springsim import _core
from springsim._checks import _scalar
from springsim._warn import warn
from springsim.model import arrays
from springsim.reference import (
    MIN_SPRING_LENGTH,
    State,
    enclosed_volume,
    pressure_forces,
    spring_forces,
    volume_gradient,
)

if TYPE_CHECKING:
    import scipy.sparse

#: Armijo's constant: a step must lower the energy by this fraction of the decrease its
#: slope predicts.
ARMIJO = 1e-4
#: Most halvings of one line search (2⁻⁶⁰: far below any useful step).
MAX_HALVINGS = 60


class Relaxed(NamedTuple):
    """What :meth:`springsim.System.relax` reached.

    Attributes
    ----------
    residual : float
        The largest net force on a free node at the end, N (the Euclidean norm of the
        node's force; at a node resting on a collider, without the part the collider
        takes). Zero for a system with nothing free.
    iterations : int
        Newton iterations taken (0 if the start already was an equilibrium).
    converged : bool
        Whether ``residual <= tolerance × scale``, with scale the largest single force
        on a free node: one spring's tension, one weight, one external force or one
        node's gas force.
    """

    residual: float
    iterations: int
    converged: bool


def _scipy() -> tuple[types.ModuleType, types.ModuleType, types.ModuleType]:
    try:
        import scipy.sparse
        import scipy.sparse.csgraph
        import scipy.sparse.linalg
    except ImportError:  # pragma: no cover - the [test] extra installs SciPy
        raise ImportError("relax() needs SciPy: pip install scipy") from None
    return scipy.sparse, scipy.sparse.linalg, scipy.sparse.csgraph


def _volume_hessian(elements: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, ...]:
    """Triplets (row, col, value) of ∂²V/∂x² over node coordinates (node · dim + axis).

    2D: V = ½ Σ a × b over directed edges (a, b), so ∂²V/∂a_x∂b_y = ½ and
    ∂²V/∂a_y∂b_x = −½. 3D: V = ⅙ Σ a·(b × c) over triangles; for each cyclic order
    (p, q, r) of (a, b, c), ∂²V/∂p_α∂q_β = ⅙ ε_αβγ r_γ. Both symmetric.
    """
    dim = x.shape[1]
    rows, cols, values = [], [], []
    if dim == 2:
        a, b = elements[:, 0], elements[:, 1]
        for p, q, alpha, beta, value in ((a, b, 0, 1, 0.5), (a, b, 1, 0, -0.5)):
            v = np.full(len(p), value)
            rows += [p * 2 + alpha, q * 2 + beta]
            cols += [q * 2 + beta, p * 2 + alpha]
            values += [v, v]
    else:
        levi = np.zeros((3, 3, 3))
        for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
            levi[i, j, k], levi[j, i, k] = 1.0, -1.0
        for first, second, third in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
            block = np.einsum("abg,ng->nab", levi, x[elements[:, third]]) / 6.0
            for alpha in range(3):
                for beta in range(3):
                    if alpha == beta:
                        continue
                    v = block[:, alpha, beta]
                    p, q = elements[:, first] * 3 + alpha, elements[:, second] * 3 + beta
                    rows += [p, q]
                    cols += [q, p]
                    values += [v, v]
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(values)


class _Problem:
    """The potential energy of one system over its free coordinates."""

    def __init__(self, sim: _core.System) -> None:
        s = State.from_system(sim)
        self.s = s
        self.n, self.dim = s.x.shape
        self.free_nodes = np.flatnonzero(~s.pinned)
        self.free = (self.free_nodes[:, None] * self.dim + np.arange(self.dim)).reshape(-1)
        self.load = s.m[:, None] * s.gravity + s.ext  # the forces that do not depend on x
        self.load[s.pinned] = 0.0
        self.zero_v = np.zeros_like(s.x)
        self.touches_free = ~(s.pinned[s.springs[:, 0]] & s.pinned[s.springs[:, 1]])
        # Colliders: planes (normal, offset) and spheres (centre, radius).
        self.planes = [(np.array(v), o) for _, kind, v, o, *_ in sim._colliders() if kind == 0]
        self.spheres = [(np.array(v), r) for _, kind, v, r, *_ in sim._colliders() if kind == 1]

    # -- forces and energy -------------------------------------------------------------

    def forces(self, x: np.ndarray) -> np.ndarray:
        """Net force on every node, (N, dim), zero on pinned ones: the kernel's formulas
        as the NumPy oracle writes them (velocities zero)."""
        s = self.s
        f = spring_forces(s, x, self.zero_v) + self.load
        if s.pressure:
            f += pressure_forces(s, x)
        f[s.pinned] = 0.0
        return f

    def scale(self, x: np.ndarray) -> float:
        """The largest single force on a free node, N: what the residual is measured by."""
        s = self.s
        free = ~s.pinned
        terms = [0.0]
        weight = np.linalg.norm(s.m[:, None] * s.gravity, axis=1)[free]
        terms += [weight.max(initial=0.0), np.linalg.norm(s.ext[free], axis=1).max(initial=0.0)]
        if len(s.springs):
            d = x[s.springs[:, 1]] - x[s.springs[:, 0]]
            tension = np.abs(s.k * (np.linalg.norm(d, axis=1) - s.L))[self.touches_free]
            terms.append(tension.max(initial=0.0))
        for elements, nrt, ambient in s.pressure:
            volume = enclosed_volume(elements, x)
            push = abs(nrt / volume - ambient) * volume_gradient(elements, x)
            terms.append(np.linalg.norm(push[free], axis=1).max(initial=0.0))
        return float(max(terms))

    def energy_change(self, x: np.ndarray, dx: np.ndarray) -> float:
        """E(x + dx) − E(x), J, from differences (inf if a gas body turns inside out)."""
        s = self.s
        change = -float(np.sum(self.load * dx))
        if len(s.springs):
            i, j = s.springs[:, 0], s.springs[:, 1]
            d, dd = x[j] - x[i], dx[j] - dx[i]
            length = np.linalg.norm(d, axis=1)
            new = np.linalg.norm(d + dd, axis=1)
            total = length + new
            grow = np.divide(
                np.sum(dd * (2.0 * d + dd), axis=1),
                total,
                out=np.zeros_like(total),
                where=total > 0,
            )
            change += float(np.sum(0.5 * s.k * grow * (total - 2.0 * s.L)))
        for elements, nrt, ambient in s.pressure:
            before = enclosed_volume(elements, x)
            after = enclosed_volume(elements, x + dx)
            if not after > 0.0:
                return math.inf
            change += -nrt * math.log1p((after - before) / before) + ambient * (after - before)
        return change

    # -- the modified Hessian ----------------------------------------------------------

    def hessian(
        self, x: np.ndarray, sparse: types.ModuleType, exact: bool
    ) -> tuple[scipy.sparse.csc_matrix, np.ndarray]:
        """The Hessian over the free coordinates, exact or with compressed springs'
        sideways term clamped at zero: sparse part H and the columns U of its low-rank
        part (the full matrix is H + U Uᵀ)."""
        s, dim = self.s, self.dim
        rows, cols, values = [], [], []
        if len(s.springs):
            i, j = s.springs[:, 0], s.springs[:, 1]
            d = x[j] - x[i]
            length = np.linalg.norm(d, axis=1)
            live = (length >= MIN_SPRING_LENGTH) & (s.k > 0) & self.touches_free
            i, j, d, length, k, rest = i[live], j[live], d[live], length[live], s.k[live], s.L[live]
            u = d / length[:, None]
            uu = u[:, :, None] * u[:, None, :]
            sideways = 1.0 - rest / length
            if not exact:
                sideways = np.maximum(sideways, 0.0)  # compressed springs: no sideways pull
            block = k[:, None, None] * (uu + sideways[:, None, None] * (np.eye(dim) - uu))
            a, b = np.meshgrid(np.arange(dim), np.arange(dim), indexing="ij")
            for p, q, sign in ((i, i, 1.0), (j, j, 1.0), (i, j, -1.0), (j, i, -1.0)):
                rows.append((p[:, None, None] * dim + a).reshape(-1))
                cols.append((q[:, None, None] * dim + b).reshape(-1))
                values.append((sign * block).reshape(-1))
        low_rank = []
        for elements, nrt, ambient in s.pressure:
            volume = enclosed_volume(elements, x)
            r, c, v = _volume_hessian(elements, x)
            rows.append(r)
            cols.append(c)
            values.append((ambient - nrt / volume) * v)
            gradient = volume_gradient(elements, x).reshape(-1)
            low_rank.append(math.sqrt(nrt) / volume * gradient[self.free])
        size = self.n * dim
        position = np.full(size, -1)
        position[self.free] = np.arange(len(self.free))
        if rows:
            r, c, v = np.concatenate(rows), np.concatenate(cols), np.concatenate(values)
        else:
            r = c = np.zeros(0, np.int64)
            v = np.zeros(0)
        keep = (position[r] >= 0) & (position[c] >= 0)
        nfree = len(self.free)
        matrix = sparse.coo_matrix(
            (v[keep], (position[r[keep]], position[c[keep]])), shape=(nfree, nfree)
        ).tocsc()
        columns = np.stack(low_rank, axis=1) if low_rank else np.zeros((nfree, 0))
        return matrix, columns

    def compressed(self, x: np.ndarray) -> bool:
        """Whether some spring that pulls on a free node is shorter than its rest length."""
        s = self.s
        if not len(s.springs):
            return False
        length = np.linalg.norm(x[s.springs[:, 1]] - x[s.springs[:, 0]], axis=1)
        return bool(np.any((length < s.L) & (s.k > 0) & self.touches_free))

    # -- colliders ---------------------------------------------------------------------

    def project(self, x: np.ndarray, holding: np.ndarray | None = None) -> np.ndarray:
        """x (a copy) with every free node inside a collider moved onto its surface, and
        each node of ``holding`` (a collider index per node, −1 for none: planes first,
        then spheres) put back on the surface of its collider, which it slides along."""
        x = x.copy()
        free = ~self.s.pinned
        held = np.full(len(x), -1) if holding is None else holding
        for c, (normal, offset) in enumerate(self.planes):
            depth = offset - x @ normal
            move = free & ((depth > 0) | (held == c))
            x[move] += depth[move, None] * normal
        for c, (center, radius) in enumerate(self.spheres, start=len(self.planes)):
            offset = x - center
            distance = np.linalg.norm(offset, axis=1)
            move = free & ((distance < radius) | (held == c)) & (distance > 0)
            x[move] = center + offset[move] * (radius / distance[move])[:, None]
        return x

    def contacts(self, x: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The free nodes that rest on a collider and that the force f presses into it:
        their outward unit normals (N, dim), zero rows elsewhere, and the collider of
        each (N,), −1 elsewhere."""
        normals = np.zeros_like(x)
        holding = np.full(len(x), -1)
        touch = 1e-12 * (1.0 + float(np.abs(x).max(initial=0.0)))
        free = ~self.s.pinned
        for c, (normal, offset) in enumerate(self.planes):
            on = free & (np.abs(x @ normal - offset) <= touch) & (f @ normal < 0)
            normals[on], holding[on] = normal, c
        for c, (center, radius) in enumerate(self.spheres, start=len(self.planes)):
            offset = x - center
            distance = np.linalg.norm(offset, axis=1)
            n = offset / np.where(distance > 0, distance, 1.0)[:, None]
            on = free & (np.abs(distance - radius) <= touch) & (np.sum(f * n, axis=1) < 0)
            normals[on], holding[on] = n[on], c
        return normals, holding

    def supported(self, f: np.ndarray, normals: np.ndarray) -> np.ndarray:
        """f less the push into the colliders that they take."""
        push = np.minimum(np.sum(f * normals, axis=1), 0.0)
        return f - push[:, None] * normals


def _check(sim: _core.System, tolerance: object, max_iterations: object) -> tuple[float, int]:
    tol = _scalar(tolerance, "tolerance")
    if not 0.0 < tol < 1.0:
        raise ValueError(f"tolerance must be in (0, 1) (relative to the forces), got {tol!r}")
    if isinstance(max_iterations, bool):
        raise TypeError("max_iterations must be an int, not bool")
    iterations = operator.index(cast(Any, max_iterations))
    if iterations < 1:
        raise ValueError(f"max_iterations must be at least 1, got {iterations}")
    if np.any(np.isinf(sim._view("stiffness"))):
        raise ValueError("relax() cannot handle rigid rods (stiffness inf): use xpbd steps")
    if any(kind > 1 for _, kind, *_ in sim._colliders()):
        raise ValueError(
            "relax() handles planes and spheres; this system has a box, capsule or mesh "
            "collider: find its rest by stepping with damping"
        )
    sim._validate()
    return tol, iterations


def _free_bodies(problem: _Problem, csgraph: types.ModuleType, sparse: types.ModuleType) -> None:
    """Refuse a group of connected free nodes that nothing holds while a net force
    pulls it (gravity on an unpinned body): it has no equilibrium to find."""
    s = problem.s
    if problem.planes or problem.spheres:
        return  # a collider may hold it
    links = [s.springs[s.k > 0]]
    for elements, _, _ in s.pressure:  # a gas body's forces are internal to its nodes
        links.append(np.stack([elements[:, 0], elements[:, -1]], axis=1))
        links += [elements[:, c : c + 2] for c in range(elements.shape[1] - 1)]
    pairs = np.concatenate(links) if links else np.zeros((0, 2), np.int64)
    graph = sparse.coo_matrix(
        (np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), (s.x.shape[0],) * 2
    )
    count, label = csgraph.connected_components(graph, directed=False)
    held = np.zeros(count, bool)
    held[label[s.pinned]] = True
    force = np.zeros((count, problem.dim))
    size = np.zeros(count)
    np.add.at(force, label, problem.load)
    np.add.at(size, label, np.linalg.norm(problem.load, axis=1))
    for body in np.flatnonzero(~held & (np.linalg.norm(force, axis=1) > 1e-9 * size)):
        nodes = np.flatnonzero(label == body)
        shown = ", ".join(map(str, nodes[:5])) + (", ..." if len(nodes) > 5 else "")
        raise ValueError(
            f"relax(): {len(nodes)} connected free node(s) ({shown}) feel a net force "
            f"{force[body].tolist()} N and nothing holds them (no pin, no collider): "
            "there is no equilibrium. Pin a node, add a collider or balance the force."
        )


def relax(self: _core.System, tolerance: float = 1e-10, max_iterations: int = 500) -> Relaxed:
    """Move the free nodes to equilibrium: zero net force, in one call (needs SciPy).

    Minimises the potential energy (the springs' ½ k (l − L)², gravity, external
    forces, the gas's −nrt ln V + ambient V) over the free nodes' positions by a
    modified Newton method with a line search, which converges from slack,
    compressed or crumpled starts as from taut ones (:mod:`springsim.analysis.statics`
    says how). Pinned nodes stay where they are. Planes and spheres are
    frictionless supports: a node inside one is put on its surface, and one
    pressed onto it slides along it; friction plays no part, so a body on a slope
    slides off. Damping, drag, the wind and the air on faces vanish at rest.
    Springs are not torn and ``max_strain`` is not applied. The clock and
    :attr:`dissipated` do not change.

    At the end the free nodes' velocities are zero (pinned nodes keep theirs).
    A state where the energy is stationary but not least (a perfectly straight
    compressed column) is an equilibrium too, unstable: a start symmetric about
    it may end there. ``normal_modes(k, about="equilibrium")`` shows it (a
    negative frequency).

    Parameters
    ----------
    tolerance : float
        In (0, 1): stop when the largest net force on a free node is at most this
        fraction of the largest single force on one (one spring's tension, one
        weight, one external or gas force). The default, 1e-10, leaves positions
        accurate to about that fraction of the springs' stretch.
    max_iterations : int
        Newton iterations allowed, >= 1. A hanging chain takes 5 to 40, a
        cloth that falls far and wrinkles 30 to 150, a stiff chain sliding over
        a sphere to its place a few hundred.

    Returns
    -------
    Relaxed
        ``residual`` (the largest net force left on a free node, N),
        ``iterations`` and ``converged``.

    Raises
    ------
    ValueError
        A bad tolerance or max_iterations, a rigid rod (stiffness inf), a value
        the kernel refuses (a NaN written into a view), or a free body that a net
        force pulls and nothing holds (no pin, no collider): it has no
        equilibrium. Nothing changes.
    ImportError
        SciPy is not installed (``pip install scipy``).

    Warns
    -----
    springsim.ConvergenceWarning
        Not converged within max_iterations; the state reached (lower in energy
        than the start) is kept.

    Examples
    --------
    A 2 kg mass on a 500 N/m spring hangs m g / k below its rest length:

    >>> import springsim as ss
    >>> sim = ss.System(dim=2)
    >>> _ = sim.add_nodes([[0, 0], [0, -1]], masses=[1.0, 2.0])
    >>> sim.pin(0)
    >>> _ = sim.add_springs([0, 1], stiffness=500.0)
    >>> result = sim.relax()
    >>> result.converged, round(float(-sim.positions[1, 1] - 1), 12)  # 2 · 9.81 / 500
    (True, 0.03924)
    """
    tol, max_iterations = _check(self, tolerance, max_iterations)
    sparse, linalg, csgraph = _scipy()
    problem = _Problem(self)
    free = problem.free
    if len(free) == 0:
        return Relaxed(0.0, 0, True)
    _free_bodies(problem, csgraph, sparse)
    mass = np.repeat(problem.s.m[problem.free_nodes], problem.dim)
    x = problem.project(problem.s.x)
    rest = problem.s.L[problem.s.k > 0]
    extent = np.ptp(x, axis=0) if len(x) > 1 else np.zeros(problem.dim)
    reach = max(float(np.linalg.norm(extent)), float(rest.max(initial=0.0)), 1e-9)
    for _, radius in problem.spheres:  # no step long enough to jump clean through one
        reach = min(reach, 2.0 * radius)

    shift = 0.0
    iterations = 0
    while True:
        f = problem.forces(x)
        normals, holding = problem.contacts(x, f)
        # A node held on a sphere of radius r by a reaction μ = −F·n sees the surface
        # curve away: the constrained Hessian gains −(μ / r)(I − n nᵀ) (the Lagrangian's
        # −μ ∇²|x − c|); without it Newton's steps along a sphere converge only linearly.
        bend = np.zeros(len(x))
        for c, (_, radius) in enumerate(problem.spheres, start=len(problem.planes)):
            on = holding == c
            bend[on] = -np.sum(f[on] * normals[on], axis=1) / radius
        f = problem.supported(f, normals)
        residual = float(np.linalg.norm(f, axis=1).max(initial=0.0))
        scale = problem.scale(x)
        if residual <= tol * scale or iterations == max_iterations:
            break
        iterations += 1
        g = -f.reshape(-1)[free]
        step = _newton_step(problem, x, normals, bend, g, mass, shift, sparse, linalg)
        if step is None:
            break  # no downhill direction at any shift: round-off
        p, shift = step
        dx = np.zeros_like(x)
        dx.reshape(-1)[free] = p
        longest = float(np.linalg.norm(dx, axis=1).max())
        if longest > reach:
            dx *= reach / longest
        slope = float(g @ dx.reshape(-1)[free])
        accepted = _line_search(problem, x, dx, slope, residual, holding)
        if accepted is None:
            break  # no step lowers the energy or the force: converged as far as it goes
        x, alpha = accepted
        if alpha == 1.0:  # the model was good: towards pure Newton
            shift = shift / 10.0 if shift > 0.0 else 0.0

    converged = residual <= tol * scale
    if not np.all(np.isfinite(x)):
        raise FloatingPointError("relax() reached a non-finite state; the system is unchanged")
    velocities = problem.s.v
    velocities[problem.free_nodes] = 0.0
    # (pinned rows as they were: project() and the steps leave them)
    arrays.assign(self, "positions", x, vector=True)
    arrays.assign(self, "velocities", velocities, vector=True)
    self._verlet_valid = False  # the last acceleration belongs to the old state
    if not converged:
        warn(
            f"relax() stopped after {iterations} iterations with a net force of "
            f"{residual:.3g} N on a free node ({residual / scale if scale else 0:.2g} of the "
            f"largest force, tolerance {tol:g}); the state it reached is kept",
            _core.ConvergenceWarning,
        )
    return Relaxed(residual, iterations, bool(converged))


def _newton_step(
    problem: _Problem,
    x: np.ndarray,
    normals: np.ndarray,
    bend: np.ndarray,
    g: np.ndarray,
    mass: np.ndarray,
    shift: float,
    sparse: types.ModuleType,
    linalg: types.ModuleType,
) -> tuple[np.ndarray, float] | None:
    """The Newton step and the Levenberg shift it took.

    With compressed springs, the exact Hessian's step is tried first (unshifted): near a
    stable equilibrium, it restores Newton's quadratic convergence, which the clamped
    matrix loses. It is taken only where that Hessian, shifted by at most 10⁻³ of the
    largest ω² (a state that could buckle only slightly), is positive definite;
    otherwise the clamped matrix, shifted as needed, gives the step.
    """
    for exact in (True, False) if problem.compressed(x) else (False,):
        matrix, columns = problem.hessian(x, sparse, exact)
        # Nodes pressed onto a collider move only along its surface:
        # P (H − bend (I − n nᵀ)) P + n nᵀ, P = I − n nᵀ at those nodes.
        touching = np.flatnonzero(np.any(normals[problem.free_nodes] != 0, axis=1))
        if len(touching):
            size, dim = len(problem.free), problem.dim
            n = normals[problem.free_nodes[touching]]
            idx = touching[:, None] * dim + np.arange(dim)
            r = np.repeat(idx, dim, axis=1).reshape(-1)
            c = np.tile(idx, dim).reshape(-1)
            outer = n[:, :, None] * n[:, None, :]
            nn = sparse.csc_matrix((outer.reshape(-1), (r, c)), (size,) * 2)
            curve = bend[problem.free_nodes[touching], None, None] * (np.eye(dim) - outer)
            matrix = matrix - sparse.csc_matrix((curve.reshape(-1), (r, c)), (size,) * 2)
            projector = sparse.identity(size, format="csc") - nn
            diagonal = float(np.abs(matrix.diagonal()).max(initial=1.0)) or 1.0
            matrix = (projector @ matrix @ projector).tocsc() + diagonal * nn
            columns = projector @ columns
        unit = float(np.abs(matrix.diagonal() / mass).max(initial=0.0))
        if columns.size:
            unit = max(unit, float((np.sum(columns**2, axis=1) / mass).max()))
        smallest = 1e-8 * (unit or 1.0)
        if exact:  # unshifted, then shifts from 10⁻⁸ to 10⁻³ of the stiffest node's ω²
            step = _descent(matrix, columns, mass, g, 0.0, smallest, sparse, linalg, tries=7)
            if step is not None:
                return step
            continue
        return _descent(matrix, columns, mass, g, shift, smallest, sparse, linalg)
    return None  # pragma: no cover - the loop always ends with the clamped matrix


def _descent(
    matrix: scipy.sparse.csc_matrix,
    columns: np.ndarray,
    mass: np.ndarray,
    g: np.ndarray,
    shift: float,
    smallest: float,
    sparse: types.ModuleType,
    linalg: types.ModuleType,
    tries: int = 40,
    factor: float = 10.0,
) -> tuple[np.ndarray, float] | None:
    """The step −(H + U Uᵀ + λ M)⁻¹ g with the least λ >= ``shift`` (0 or from
    ``smallest`` up, ``factor``-fold) for which H + λ M is positive definite, and λ.

    Definiteness is read off the factorisation: SuperLU in symmetric mode without
    pivoting factors a symmetric matrix as L D Lᵀ (U = D Lᵀ), and by Sylvester's law
    the signs of D are those of the eigenvalues. A downhill direction alone is not
    enough: an indefinite matrix's step can lead to a saddle (a chain arched upward).
    """
    for _ in range(tries):
        shifted = (matrix + sparse.diags(shift * mass)).tocsc()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lu = linalg.splu(
                    shifted,
                    permc_spec="MMD_AT_PLUS_A",
                    diag_pivot_thresh=0.0,
                    options={"SymmetricMode": True},
                )
            definite = bool(np.all(lu.perm_r == lu.perm_c) and np.all(lu.U.diagonal() > 0))
            p = -lu.solve(g) if definite else None
            if p is not None and columns.size:
                # Woodbury: (A + U Uᵀ)⁻¹ = A⁻¹ − A⁻¹U (I + UᵀA⁻¹U)⁻¹ UᵀA⁻¹ (still definite)
                z = lu.solve(columns)
                small = np.eye(columns.shape[1]) + columns.T @ z
                p -= z @ np.linalg.solve(small, columns.T @ p)
        except (RuntimeError, np.linalg.LinAlgError):
            p = None
        if p is not None and np.all(np.isfinite(p)) and g @ p < 0:
            return p, shift
        shift = max(factor * shift, smallest)
    return None


def _line_search(
    problem: _Problem,
    x: np.ndarray,
    dx: np.ndarray,
    slope: float,
    residual: float,
    holding: np.ndarray,
) -> tuple[np.ndarray, float] | None:
    """The new positions and step fraction α: the largest α = 2⁻ᵏ whose move lowers the
    energy by Armijo's margin; failing that, the one that lowers the largest force most
    (when round-off hides the energy's change); None if neither exists."""
    alpha = 1.0
    best: tuple[float, np.ndarray, float] | None = None
    for _ in range(MAX_HALVINGS):
        moved = problem.project(x + alpha * dx, holding)
        change = problem.energy_change(x, moved - x)
        if change <= ARMIJO * alpha * slope:
            return moved, alpha
        if alpha >= 2.0**-8 and math.isfinite(change):
            f = problem.forces(moved)
            f = problem.supported(f, problem.contacts(moved, f)[0])
            left = float(np.linalg.norm(f, axis=1).max(initial=0.0))
            if left < residual and (best is None or left < best[0]):
                best = (left, moved, alpha)
        alpha /= 2.0
    return None if best is None else (best[1], best[2])
