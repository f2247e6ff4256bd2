"""Diagnostics: the energy, the stable step, the implicit solver's report, normals and
the rigid frame; :class:`Energy` and :class:`Solve`."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from springsim import _core
from springsim._checks import _as_indices
from springsim._warn import UntrackedEnergyWarning, warn


class Energy(NamedTuple):
    """Energy terms of a system, in joules.

    Attributes
    ----------
    kinetic : float
        ``½ Σ m |v|²``.
    elastic : float
        ½ Σ k (l − L)² over the springs.
    gravity : float
        −Σ m g·x (zero at the origin).
    pressure : float
        Σ over gas bodies of −nrt·ln V + ambient·V (see :meth:`System.add_pressure`);
        zero without gas. Only its changes are physical: ln V depends on V's unit.
    contact : float
        The contact energy, J: ½ Σ k δ² over the node pairs that overlap by δ (see
        :attr:`System.contact_stiffness`: with the stiffness from the step, the default,
        each pair's k at the dt of the last step call, and zero before the first; zero
        without radii), plus Σ ½ k (h − d)² over
        the node–triangle pairs closer than the self-collision thickness h (see
        :meth:`System.enable_self_collision`; zero when off). These are the force
        laws' potentials for every method: ``"xpbd"`` solves contact as constraints and
        ``"vbd"`` as a far stiffer contact energy, whose own store is not reported; what
        they hold and release goes into ``dissipated`` (E₀ + W − E₁), so the books
        balance.
    total : float
        The sum of the five.
    """

    kinetic: float
    elastic: float
    gravity: float
    pressure: float
    contact: float
    total: float

    def __repr__(self) -> str:
        """The terms in joules to 4 significant digits (the fields hold every digit):
        ``Energy(kinetic=1.5 J, elastic=0 J, gravity=58.86 J, pressure=0 J,
        contact=0 J, total=60.36 J)``."""
        terms = ", ".join(
            f"{name}={_joules(value)}" for name, value in zip(self._fields, self, strict=True)
        )
        return f"Energy({terms})"  # (str() and print() show it too)


def _joules(value: float) -> str:
    """``value`` J to 4 significant digits; -0 shows as 0."""
    return f"{value + 0.0:.4g} J"


class Solve(NamedTuple):
    """How the conjugate-gradient solves of the last ``implicit_euler`` call went.

    Attributes
    ----------
    iterations : int
        CG iterations of its last substep.
    residual : float
        ``|r| / |b|`` at the end of its last substep's solve (NaN before any solve).
    substeps : int
        Substeps (solves) in that call.
    capped : int
        How many of them stopped at ``cg_max_iterations`` before ``cg_tolerance``.
    """

    iterations: int
    residual: float
    substeps: int
    capped: int


def normals(self: _core.System) -> np.ndarray:
    """Per-vertex unit normals of the faces at the current positions, (N, 3).

    Each vertex normal is the sum of its faces' normals weighted by their areas
    (the cross product of two edges is twice the area times the unit normal),
    normalised; nodes on no face get a zero normal. 3D only.

    Examples
    --------
    >>> import springsim as ss
    >>> sim = ss.System(dim=3)
    >>> _ = sim.add_nodes([[0, 0, 0], [1, 0, 0], [0, 1, 0]])
    >>> _ = sim.add_faces([0, 1, 2])
    >>> sim.normals()[0].tolist()
    [0.0, 0.0, 1.0]
    """
    if self.dim != 3:
        raise ValueError("normals() needs a 3D system (faces are triangles in 3D)")
    x, tri = self._view("positions"), self._view("faces")
    face_normals = np.cross(x[tri[:, 1]] - x[tri[:, 0]], x[tri[:, 2]] - x[tri[:, 0]])
    normals = np.zeros_like(x)
    for corner in range(3):
        np.add.at(normals, tri[:, corner], face_normals)
    length = np.linalg.norm(normals, axis=1, keepdims=True)
    return np.divide(normals, length, out=np.zeros_like(normals), where=length > 0)


def rigid_frame(
    self: _core.System, indices: npt.ArrayLike | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Centre of mass and best-fit rotation of the nodes onto their rest shape.

    Finds the rotation R minimising ``Σ m |R (r_i − r̄) − (x_i − x̄)|²`` over the
    nodes (r: :attr:`rest_positions`, x: positions, bars: mass-weighted means):
    the Kabsch / polar-decomposition fit, the rigid body the xbdev article
    recovers from a soft body's vertices.

    Parameters
    ----------
    indices : array_like of int or of bool, optional
        The nodes to fit, or a boolean mask with one entry per node; all by
        default.

    Returns
    -------
    center : ndarray, shape (dim,)
        The current centre of mass x̄, m.
    rotation : ndarray, shape (dim, dim)
        R, a proper rotation (det +1) taking rest-shape offsets to current ones.

    Raises
    ------
    ValueError
        An index out of range, no nodes, or positions or rest positions that are
        not finite or lie farther than about 1e154 from their centre of mass
        (their products would overflow).

    Examples
    --------
    >>> import numpy as np
    >>> import springsim as ss
    >>> sim = ss.System(dim=2)
    >>> _ = sim.add_nodes([[1, 0], [-1, 0], [0, 2]])
    >>> sim.positions = sim.positions @ np.array([[0, 1], [-1, 0]]) + 5  # turn 90°
    >>> center, rotation = sim.rigid_frame()
    >>> np.round(rotation, 12).tolist()
    [[0.0, -1.0], [1.0, 0.0]]
    """
    idx: Any = slice(None) if indices is None else _as_indices(indices, "indices", self.num_nodes)
    if indices is not None and idx.size:
        if idx.min() < 0 or idx.max() >= self.num_nodes:
            raise ValueError(f"indices must be in [0, {self.num_nodes})")
    view = self._view
    x, rest, m = view("positions")[idx], view("rest_positions")[idx], view("masses")[idx]
    if len(m) == 0:
        raise ValueError("rigid_frame() needs at least one node")
    weights = m / m.sum()
    nodes = np.arange(self.num_nodes)[idx]
    with np.errstate(over="ignore", invalid="ignore"):
        center = weights @ x
        p, q = rest - weights @ rest, x - center
    # The SVD of a covariance holding inf or NaN may never return: refuse input
    # whose offsets are not finite, or whose products would overflow.
    limit = np.sqrt(np.finfo(np.float64).max)
    for name, values, offsets in (("positions", x, q), ("rest_positions", rest, p)):
        if not np.all(np.abs(offsets) < limit):  # NaN fails too
            size = np.nan_to_num(np.abs(values).max(axis=1), nan=np.inf)
            k = int(np.argmax(size))  # blame the farthest node
            raise ValueError(
                f"rigid_frame() needs finite {name} within about {limit:.1e} of "
                f"their centre of mass (the fit multiplies them): node {nodes[k]} is "
                f"at {values[k].tolist()}"
            )
    covariance = (q * weights[:, None]).T @ p  # Σ m q pᵀ: R maps p onto q
    u, _, vt = np.linalg.svd(covariance)
    flip = np.ones(self.dim)
    flip[-1] = np.sign(np.linalg.det(u @ vt)) or 1.0  # a rotation, never a reflection
    return center, (u * flip) @ vt


def energy(self: _core.System) -> Energy:
    """Kinetic, elastic, gravitational, gas and contact energy, and their total, in joules.

    Symplectic methods conserve the total of an undamped system (to a bounded
    error); damping, drag, the air on faces, ``energy_loss`` and inelastic contact
    remove energy.

    Examples
    --------
    >>> import springsim as ss
    >>> sim = ss.System(dim=2)
    >>> _ = sim.add_nodes([0, 2], masses=3.0, velocities=[1, 0])
    >>> e = sim.energy()
    >>> e.kinetic, round(e.gravity, 6)
    (1.5, 58.86)
    """
    kinetic, elastic, gravity, pressure, contact = self._energy_terms()
    total = kinetic + elastic + gravity + pressure + contact
    return Energy(kinetic, elastic, gravity, pressure, contact, total)


#: The kernel's own ``dissipated`` (its getter and setter, without the warning).
_KERNEL_DISSIPATED: Any = vars(_core.System)["dissipated"]


def kernel_dissipated(self: _core.System) -> float:
    """The kernel's count of ``dissipated`` as it stands, without the warning (for
    springsim's own reads, such as a run's start)."""
    return float(_KERNEL_DISSIPATED.__get__(self))


def _can_dissipate(self: _core.System) -> bool:
    """Whether anything in the system can take energy out of the motion."""
    return bool(
        np.any(self._view("damping") > 0)
        or self.drag > 0
        or (self.drag_coefficient > 0 and self.air_density > 0 and self.num_faces > 0)
        or self.energy_loss < 1
        or len(self._colliders()) > 0
        or np.any(self._view("radii") > 0)
        or self._self_collision() is not None
        or self.max_strain is not None
    )


def dissipated(self: _core.System) -> float:
    """Energy, J, taken out of the motion while :attr:`track_energy` is on.

    Spring damping, drag and the air on faces (the trapezoid rule on their power),
    ``energy_loss``, contacts (friction, restitution below 1) and the strain limit:
    ``energy().total + dissipated`` stays constant up to the integrator's error and the
    work put in. :meth:`run` and the viewer keep the books while they run; plain
    :meth:`step` calls keep them only after ``sim.track_energy = True`` (off by
    default: they cost a pass over the damped springs per substep). Assign 0 to
    restart the count.

    Warns
    -----
    UntrackedEnergyWarning
        Read while ``track_energy`` is off on a system that can dissipate (once per
        system): the value counts only what was dissipated while the books were on.

    Examples
    --------
    >>> import springsim as ss
    >>> sim = ss.System(dim=2)
    >>> _ = sim.add_nodes([[0, 0], [0, -1.2]])
    >>> _ = sim.add_springs([[0, 1]], stiffness=100.0, damping=0.5, rest_lengths=1.0)
    >>> sim.pin(0)
    >>> sim.track_energy = True          # keep the books in plain step() calls
    >>> start = sim.energy().total
    >>> sim.step(1e-3, steps=2000)
    >>> lost = start - sim.energy().total  # J, over 2 s
    >>> f"dissipated {sim.dissipated:.2f} J of {lost:.2f} J lost"
    'dissipated 0.32 J of 0.33 J lost'
    """
    value = kernel_dissipated(self)
    if not self.track_energy and "_told_untracked" not in self.__dict__ and _can_dissipate(self):
        self.__dict__["_told_untracked"] = True  # once per system
        warn(
            UntrackedEnergyWarning(
                f"dissipated = {value:g} J counts only what was dissipated while "
                "track_energy was on, and it is off: plain step() calls keep no books "
                "by default (run() and the viewer do). Set sim.track_energy = True "
                "before stepping to count what damping, drag, contacts and the strain "
                "limit take out of the motion."
            )
        )
    return value


def set_dissipated(self: _core.System, value: float) -> None:
    _KERNEL_DISSIPATED.__set__(self, value)


def critical_dt(self: _core.System) -> float:
    """Estimated largest stable time step of symplectic Euler, s.

    For one mass m on a spring of stiffness k and damping c (ω² = k/m, γ = c/m),
    symplectic Euler is stable while h²ω² + 2hγ < 4, so ``critical_dt =
    4 / (γ + √(γ² + 4ω²))``: 2/ω without damping, less with it (damping makes the
    top mode overshoot). For a system, ω² and γ are bounded node by node
    (Gershgorin): over free nodes i, Σ k_s (1/m_i + 1/√(m_i m_j)) over the springs
    s = (i, j) at i, a pinned j counting as infinitely heavy, and the same sum of the
    dampings c_s plus ``drag``/m_i; the limit is the smallest over the nodes. Exact
    for one mass on a pinned spring, two free masses and the top mode of a long
    uniform chain; never too optimistic when every spring has the same c/k, and
    cautious for lattices (a 2D jelly's true top mode is 2.4× below the bound in
    ω²). Infinite when nothing acts on a free node.

    Other explicit methods: without damping "verlet" and "velocity_verlet" share
    this limit and RK4 tolerates about 1.4× it; with damping their limits differ
    (one mass, k = 100 N/m, c = 5 N·s/m: "verlet" 0.79×, "velocity_verlet" 1.11×,
    RK4 1.85× this). Explicit Euler has no stable undamped dt at all. The air on
    faces is not included.

    Node–node contact with a :attr:`contact_stiffness` in N/m counts as springs (its
    current contacts, or one with a node of equal mass); the stiffness from the step
    (``contact_stiffness = None``, the default) is left out: its frequency is
    ω_c = a/dt with a fixed a (at most 0.25), so it is stable at any dt by
    construction, and counting it would make this limit depend on the dt it is used
    to pick. A system of balls and nothing else then has no limit (``inf``): choose
    dt so that no node moves more than a fraction of a radius per step. Near this
    limit the springs' own modes use the explicit bound up and the contacts, a² each
    in (ω dt)² < 4, tip them over: with contacts, step at half of it or less.

    For steps far beyond this limit (stiff springs, long runs) use
    ``method="implicit_euler"`` or ``"vbd"`` (backward Euler, stable at any dt; vbd
    without a global solve), or ``"xpbd"``. Gas pressure is
    not included either, nor the sideways stiffness k (L/l − 1) of a spring
    squeezed below half its rest length, which buckles it faster than its
    stretching stiffness k. A rigid rod (stiffness inf) makes it 0: only
    ``"xpbd"`` steps rods. A step that outgrows this limit is stopped by the
    divergence watch (:attr:`divergence_factor`).

    Examples
    --------
    >>> import springsim as ss
    >>> sim = ss.System(dim=2)
    >>> _ = sim.add_nodes([[0, 0], [0, -1]], masses=[1.0, 4.0])
    >>> sim.pin(0)
    >>> _ = sim.add_springs([0, 1], stiffness=100.0)
    >>> sim.critical_dt()  # 2 / sqrt(k / m)
    0.4
    """
    return _core.System.critical_dt(self)


def last_solve(self: _core.System) -> Solve:
    """Iterations and residual of the last ``implicit_euler`` step's CG solves.

    Examples
    --------
    >>> import springsim as ss
    >>> cloth = ss.cloth(10, 10, width=1.0, height=1.0, mass=0.1, stiffness=1e4)
    >>> cloth.step(10 * cloth.critical_dt(), steps=5, method="implicit_euler")
    >>> solve = cloth.last_solve()
    >>> solve.substeps, solve.capped, solve.residual <= cloth.cg_tolerance
    (5, 0, True)
    """
    return Solve(*self._last_solve())
