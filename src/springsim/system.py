"""The Python face of the kernel: :class:`System`, one facade.

The class body lists every method and property a System has beyond the kernel's own,
grouped by concern, each bound to the module that implements it: a function assigned as
a class attribute is a method (its signature and docstring are the function's), a
``property`` of module functions a property. Those modules take the kernel's
``_core.System`` and never import this one. Here are only the rules of the class itself:
which attributes may be assigned (a typo is refused), and the lock each call holds.

Arrays are converted and broadcast in the concerns' modules; the C kernel
(``springsim._core``) checks every value it will rely on, so a bad argument raises
before anything changes.
"""

import difflib
import functools
import inspect
from collections.abc import Callable
from typing import Any

from springsim import _core, colliders, contact, gas, self_collision
from springsim.analysis import diagnostics, modes, statics
from springsim.analysis.diagnostics import Energy, Solve
from springsim.files import npz, obj, pickling
from springsim.model import arrays, pins, topology
from springsim.self_collision import SelfCollision
from springsim.stepping import run

__all__ = ["Energy", "SelfCollision", "Solve", "System"]


#: Attributes a System keeps in its instance dictionary (set through ``__dict__`` by
#: the modules of its concerns; listed so that plain assignment of them is allowed too).
_PRIVATE_STATE = frozenset({"_drive_paths"})


def _settable(cls: type) -> tuple[frozenset[str], frozenset[str]]:
    """The attribute names that instances of ``cls`` may be assigned: the data
    descriptors of its classes (properties, the kernel's attributes), the names a
    subclass annotates at class level, and :data:`_PRIVATE_STATE`; and the names of its
    methods, which a callable may replace (a test double, a wrapper)."""
    names, methods = set(_PRIVATE_STATE), set()
    for klass in cls.__mro__:
        for name, attribute in vars(klass).items():
            if hasattr(type(attribute), "__set__"):
                names.add(name)
            elif callable(attribute) and not name.startswith("__"):
                methods.add(name)
        names.update(inspect.get_annotations(klass))
    names.difference_update({"__dict__", "__weakref__"})
    return frozenset(names), frozenset(methods - names)


class System(_core.System):
    """A mass-spring system: N nodes and M springs in 2D or 3D.

    Every array attribute is a zero-copy NumPy view of the kernel's memory: write
    ``sim.positions[0] = (0, 1)`` and the next step sees it. Each access returns a
    fresh view; adding nodes or springs may move the arrays, after which views
    taken earlier are stale (still valid memory, no longer the system's). Assigning
    ``sim.positions = x`` copies into the existing array (shapes must broadcast). A
    vector attribute (positions, velocities, external forces, gravity, wind, uvs, rest
    positions) takes all its components: ``sim.gravity = -9.81`` raises ValueError
    (only 0, the zero vector, is accepted as a number); a per-node or per-spring
    number (``sim.masses = 0.1``) is broadcast to all of them.

    Assigning an attribute a System does not have (``sim.gravty = ...``) raises
    AttributeError, so that a typo cannot pass silently; so does assigning a method
    anything but a callable (``sim.step = 0.01``). A subclass may add attributes of
    its own by annotating them at class level.

    Parameters
    ----------
    dim : {2, 3}
        Spatial dimension.

    Attributes
    ----------
    positions, velocities, external_forces : ndarray, shape (N, dim)
        Metres, m/s and newtons (user forces added at every force evaluation).
    masses : ndarray, shape (N,)
        Kilograms, > 0.
    pinned : ndarray of bool, shape (N,)
        Pinned nodes ignore forces and are held still (velocity zero): they move only
        when you write their positions, :meth:`drive` them or drag them with
        :meth:`pin` ``(..., velocity=...)``.
    springs : ndarray of int32, shape (M, 2), read-only
        Node index pairs; edit topology with :meth:`add_springs` / :meth:`remove_springs`.
    rest_lengths, stiffness, damping : ndarray, shape (M,)
        Metres, N/m and N·s/m (damping acts along the spring).
    radii : ndarray, shape (N,)
        Node–node contact radii, m (0: none); see :attr:`contact_stiffness`.
    groups : ndarray of int32, shape (N,)
        Contact groups (default 0); see :meth:`set_contact`.
    gravity, wind : ndarray, shape (dim,)
        m/s² (default (0, −9.81[, 0])) and the air velocity, m/s, that ``drag`` and
        the air on faces act towards.
    drag : float
        Linear air drag, N·s/m: force −drag·(v − wind) on every free node. The
        articles' per-node knob: a mesh with more nodes feels more air.
    drag_coefficient, air_density : float
        The air on faces (3D), the mesh-independent air: each triangle, of area A and
        normal n, moving through the air at u (its nodes' mean velocity − wind), feels
        a flat plate's pressure drag ``−½ ρ C_d A |u·n| (u·n) n``, a third on each of its
        nodes. C_d (``drag_coefficient``, dimensionless, about 1.2 for a plate
        face-on) is 0 by default: off; ρ (``air_density``) is 1.2 kg/m³. Its work
        counts in :attr:`dissipated`. A 2D system refuses C_d > 0.
    energy_loss : float
        Fraction of velocity kept after each step; 1.0 (default) loses nothing.
    method : str
        Default integrator of :meth:`step`, one of :data:`springsim.METHODS`.
    time : float
        Simulation time, s.
    dissipated, track_energy : float, bool
        The energy, J, that spring damping, drag, the air on faces, ``energy_loss``,
        contacts (friction, restitution below 1) and the strain limit took out of the
        motion: ``energy().total + dissipated`` stays constant up to the integrator's
        error and the work put in (gravity is in ``total``). Kept while
        ``track_energy`` is True: :meth:`run` and the viewer turn it on while they
        run; plain :meth:`step` calls keep the books only after
        ``sim.track_energy = True`` (off by default: the books cost a pass over the
        damped springs per substep, about as much as the spring forces). Reading
        ``dissipated`` while the books are off, on a system that can dissipate, warns
        once (:class:`springsim.UntrackedEnergyWarning`): its value counts only
        what was dissipated while they were on.
    divergence_factor : float or None
        The divergence watch (> 1, default 100): a step, or a :meth:`run`, raises
        :class:`springsim.UnstableError` (rolled back) when the kinetic energy of the
        free nodes plus the springs' elastic energy exceeds this many times the most
        energy ever available to the motion (what it had when the books opened plus
        the work of gravity, external forces, wind, gas and moving pins since).
        Checked every 64 substeps of a call of 64 substeps or more, of a run (and at
        the end of each of its calls) and of a loop of shorter calls with no driven
        node (which also checks as soon as a coordinate outgrows the bound of its last
        check, and starts new books after any other change between two calls); not for
        ``"xpbd"``. The energy available includes the contacts' potential when the
        books opened. None turns the watch off.

    Examples
    --------
    >>> import springsim as ss
    >>> sim = ss.System(dim=2)
    >>> a = sim.add_nodes([[0, 0], [0, -1]], masses=[1.0, 0.5])
    >>> sim.pin(a[0])
    >>> sim.add_springs([[a[0], a[1]]], stiffness=100.0, damping=0.1)
    array([0])
    >>> sim.step(1e-3, steps=1000, method="rk4")
    >>> sim.positions.shape, sim.num_springs
    ((2, 2), 1)
    """

    # No __slots__: drives along functions (:meth:`drive`) keep them in the instance. A
    # typo must not create a new attribute instead (``sim.gravty = ...``): __setattr__
    # allows the names in _SETTABLE only.
    _SETTABLE = _METHODS = frozenset[str]()  # set below the class, and for each subclass

    def __init__(self, dim: int = 3) -> None:
        super().__init__(dim)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._SETTABLE, cls._METHODS = _settable(cls)

    def __setattr__(self, name: str, value: Any) -> None:
        cls = type(self)
        if name not in cls._SETTABLE and not (name in cls._METHODS and callable(value)):
            raise AttributeError(_unknown_attribute(cls, name))
        super().__setattr__(name, value)

    def __copy__(self) -> "System":
        return self.copy()

    def __deepcopy__(self, memo: dict[int, Any]) -> "System":
        memo[id(self)] = new = self.copy()
        return new

    def __repr__(self) -> str:
        return (
            f"<springsim.System dim={self.dim} nodes={self.num_nodes} springs={self.num_springs}"
            f" method={self.method!r} t={self.time:g}s>"
        )

    # The kernel's own (springsim._core.System, csrc/): step, momentum, center_of_mass,
    # spring_lengths, spring_tensions, broken_springs, lock; the counts dim, num_nodes,
    # num_springs, num_faces, nbytes; the settings method, time, drag, air_density,
    # drag_coefficient, energy_loss, iterations, max_strain, cg_tolerance,
    # cg_max_iterations, divergence_factor, track_energy.
    #
    # Where a member has its module's name (colliders, self_collision, gas, run), it comes
    # last in its group: from there on, in this body, the name means the member.

    # The arrays: zero-copy views of the kernel's memory (model/arrays.py)
    positions = arrays.positions
    velocities = arrays.velocities
    masses = arrays.masses
    pinned = arrays.pinned
    external_forces = arrays.external_forces
    rest_lengths = arrays.rest_lengths
    stiffness = arrays.stiffness
    damping = arrays.damping
    gravity = arrays.gravity
    wind = arrays.wind
    break_strains = arrays.break_strains
    uvs = arrays.uvs
    rest_positions = arrays.rest_positions
    springs = arrays.springs
    faces = arrays.faces

    # Topology: nodes, springs and faces, composing systems, tearing (model/topology.py)
    add_nodes = topology.add_nodes
    add_springs = topology.add_springs
    add_faces = topology.add_faces
    add = topology.add
    connect = topology.connect
    remove_nodes = topology.remove_nodes
    remove_springs = topology.remove_springs
    bodies = topology.bodies
    break_strain = property(topology.break_strain, topology.set_break_strain)

    # Pins and drives, and the copy that gives each drive its own progress (model/pins.py)
    pin = pins.pin
    unpin = pins.unpin
    drive = pins.drive
    copy = pins.copy

    # Stepping beyond one kernel call (stepping/): runs with records
    run = run.run

    # Colliders (colliders.py)
    add_plane = colliders.add_plane
    add_sphere = colliders.add_sphere
    add_box = colliders.add_box
    add_capsule = colliders.add_capsule
    add_mesh_collider = colliders.add_mesh_collider
    remove_collider = colliders.remove_collider
    colliders = property(colliders.colliders)

    # Node–node contact (contact.py)
    radii = property(contact.radii, contact.set_radii)
    groups = property(contact.groups, contact.set_groups)
    contact_radius = property(contact.contact_radius, contact.set_contact_radius)
    contact_stiffness = property(contact.contact_stiffness, contact.set_contact_stiffness)
    contact_restitution = property(contact.contact_restitution, contact.set_contact_restitution)
    contact_friction = property(contact.contact_friction, contact.set_contact_friction)
    set_contact = contact.set_contact
    contact_enabled = contact.contact_enabled
    contact_pairs = contact.contact_pairs
    segment_contact = property(contact.segment_contact, contact.set_segment_contact)

    # Self-collision of surfaces (self_collision.py)
    enable_self_collision = self_collision.enable_self_collision
    disable_self_collision = self_collision.disable_self_collision
    self_collision_crossings = property(self_collision.self_collision_crossings)
    self_collision = property(self_collision.self_collision)

    # Gas: enclosed bodies under pressure (gas.py)
    add_pressure = gas.add_pressure
    remove_pressure = gas.remove_pressure
    gases = property(gas.gases)
    gas = gas.gas

    # Diagnostics: energy, the stable step, the solver's report, normals, the rigid frame
    # (analysis/diagnostics.py), normal modes (analysis/modes.py), the equilibrium
    # (analysis/statics.py)
    energy = diagnostics.energy
    dissipated = property(diagnostics.dissipated, diagnostics.set_dissipated)
    critical_dt = diagnostics.critical_dt
    last_solve = diagnostics.last_solve
    normals = diagnostics.normals
    rigid_frame = diagnostics.rigid_frame
    stiffness_matrix = modes.stiffness_matrix
    normal_modes = modes.normal_modes
    relax = statics.relax

    # Files: the save format, OBJ export and pickling (files/)
    save = npz.save
    write_obj = obj.write_obj
    __reduce__ = pickling.reduce


def _holding(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function``, holding the System's lock (:attr:`System.lock`) for the call."""
    if function.__dict__.get("_one_kernel_call"):
        return function

    @functools.wraps(function)
    def held(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            return function(self, *args, **kwargs)

    return held


#: Methods that run before the system exists or touch no kernel state.
_UNHELD = frozenset({"__init__", "__init_subclass__", "__setattr__"})


def _hold_during_calls(cls: type) -> None:
    """One owner at a time: every method and property of ``cls`` written in Python holds
    the System's lock for its whole call, so that a method made of several kernel calls
    (``save``, pickling, ``copy``, ``add``, ``run``, ...) sees no other
    thread's call in between. The kernel's own methods (``step``, ``momentum``, ...)
    wait for the lock in C, and so do the view getters (:func:`arrays.one_kernel_call`),
    left unwrapped."""
    for name, attribute in list(vars(cls).items()):
        if name in _UNHELD:
            continue
        if inspect.isfunction(attribute):
            setattr(cls, name, _holding(attribute))
        elif isinstance(attribute, property):
            setattr(
                cls,
                name,
                property(
                    _holding(attribute.fget) if attribute.fget else None,
                    _holding(attribute.fset) if attribute.fset else None,
                    attribute.fdel,
                    attribute.__doc__,
                ),
            )


_hold_during_calls(System)
System._SETTABLE, System._METHODS = _settable(System)


def _unknown_attribute(cls: type, name: str) -> str:
    """The AttributeError message for assigning ``name``, which ``cls`` does not have."""
    known = sorted(n for n in dir(cls) if not n.startswith("_"))
    close = difflib.get_close_matches(name, known, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    if name in getattr(cls, "_METHODS", ()):  # only a callable may replace a method
        return (
            f"cannot assign {cls.__name__}.{name}: it is a method (only a callable may "
            "replace it, as a test double does)"
        )
    if hasattr(cls, name):  # a class-level constant, not instance state
        return f"cannot assign {cls.__name__}.{name} on an instance: it belongs to the class"
    return (
        f"{cls.__name__} has no attribute {name!r}{hint}: assigning an unknown attribute "
        "is refused, so that a misspelt one cannot pass silently (a subclass may add "
        "its own by annotating them at class level)"
    )
