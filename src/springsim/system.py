"""The Python face of the kernel: :class:`System` and its conveniences.

Arrays are converted and broadcast here; the C kernel (``springsim._core``) checks
every value it will rely on, so a bad argument raises before anything changes.
"""

import difflib
import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from springsim import _core
from springsim._checks import _as_numbers, _as_vectors
from springsim._contact import ContactMixin
from springsim._diagnostics import DiagnosticsMixin, Energy, Solve
from springsim._drives import DrivesMixin
from springsim._file_methods import FilesMixin
from springsim._gas_methods import GasMixin
from springsim._self_contact import SelfCollision, SelfContactMixin
from springsim._topology import TopologyMixin
from springsim._touch import TouchMixin

__all__ = ["Energy", "SelfCollision", "Solve", "System"]


def _one_kernel_call(function: Callable[..., Any]) -> Callable[..., Any]:
    """Mark ``function`` as a single call of the kernel, which waits for the System's
    lock by itself (see :func:`_hold_during_calls`): the hot view getters stay cheap."""
    function.__dict__["_one_kernel_call"] = True
    return function


def _view_property(name: str, doc: str, vector: bool = False) -> property:
    """A property returning a fresh zero-copy view; assignment copies into it.

    ``vector``: each row is a vector (a position, a velocity, gravity), so a value must
    give all of its components (a scalar other than 0 is refused, see
    :func:`springsim._checks._as_vectors`); otherwise a scalar is broadcast to every
    node or spring (``sim.masses = 0.1``).
    """
    convert = _as_vectors if vector else _as_numbers

    @_one_kernel_call
    def get(self: _core.System) -> np.ndarray:
        return self._view(name)

    def set(self: _core.System, value: npt.ArrayLike) -> None:
        current = self._view(name)
        dtype = current.dtype if current.dtype != np.bool_ else np.bool_
        self._set_array(name, convert(value, name, dtype, current.shape))

    return property(get, set, doc=doc)


#: Attributes a System keeps in its instance dictionary (set through ``__dict__`` by
#: the mixins; listed so that plain assignment of them is allowed too).
_PRIVATE_STATE = frozenset({"_drives"})


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


class System(
    TopologyMixin,
    DrivesMixin,
    DiagnosticsMixin,
    ContactMixin,
    TouchMixin,
    SelfContactMixin,
    GasMixin,
    FilesMixin,
    _core.System,
):
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
    divergence_factor : float or None
        The divergence watch (> 1, default 100): a step, or a :meth:`run`, raises
        :class:`springsim.UnstableError` (rolled back) when the kinetic energy of the
        free nodes plus the springs' elastic energy exceeds this many times the most
        energy ever available to the motion (what it had when the books opened plus
        the work of gravity, external forces, wind, gas and moving pins since).
        Checked every 64 substeps of a call of 64 substeps or more, of a run (and at
        the end of each of its calls) and of a driven step; not for ``"xpbd"``. None
        turns the watch off.

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

    # No __slots__: driven anchors (:meth:`drive`) keep their paths in the instance. A
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

    positions = _view_property("positions", "Node positions, (N, dim) float64, m.", vector=True)
    velocities = _view_property(
        "velocities", "Node velocities, (N, dim) float64, m/s.", vector=True
    )
    masses = _view_property("masses", "Node masses, (N,) float64, kg > 0.")
    pinned = _view_property("pinned", "Pinned flags, (N,) bool.")
    external_forces = _view_property(
        "external_forces",
        "User forces, (N, dim) float64, N, added at every evaluation.",
        vector=True,
    )
    rest_lengths = _view_property("rest_lengths", "Spring rest lengths, (M,) float64, m.")
    stiffness = _view_property("stiffness", "Spring stiffness, (M,) float64, N/m >= 0.")
    damping = _view_property("damping", "Axial spring damping, (M,) float64, N·s/m >= 0.")
    gravity = _view_property(
        "gravity", "Gravitational acceleration, (dim,) float64, m/s².", vector=True
    )
    wind = _view_property("wind", "Wind velocity, (dim,) float64, m/s.", vector=True)

    break_strains = _view_property(
        "break_strains",
        "Per-spring tearing strain, (M,) float64 >= 0: a spring longer than (1 + b) times "
        "its rest length after a substep is cut (it pulls no more) and removed when the "
        "step call ends; inf (the default) never breaks.",
    )
    uvs = _view_property(
        "uvs", "Texture coordinates, (N, 2) float64 (zero unless set).", vector=True
    )
    rest_positions = _view_property(
        "rest_positions",
        "The rest shape :meth:`rigid_frame` fits against, (N, dim) float64, m; "
        "the positions the nodes were added at unless you set it.",
        vector=True,
    )

    @property
    @_one_kernel_call
    def springs(self) -> np.ndarray:
        """Spring node pairs, (M, 2) int32, read-only (the kernel trusts these indices)."""
        return self._view("springs")

    @property
    @_one_kernel_call
    def faces(self) -> np.ndarray:
        """Triangles, (F, 3) int32, read-only; outward by the right-hand rule."""
        return self._view("faces")

    def copy(self) -> "System":
        """A deep copy (driven anchors included, each with its own progress)."""
        new = super().copy()
        if self.__dict__.get("_drives"):
            new._set_drives([d.copy() for d in self._drives])
        return new

    def __repr__(self) -> str:
        return (
            f"<springsim.System dim={self.dim} nodes={self.num_nodes} springs={self.num_springs}"
            f" method={self.method!r} t={self.time:g}s>"
        )


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
    """One owner at a time: every method and property of ``cls`` written in Python (its
    own and its mixins') holds the System's lock for its whole call, so that a method
    made of several kernel calls (``save``, pickling, ``copy``, ``add``, ``run``, a
    driven step, ...) sees no other thread's call in between. The kernel's own methods
    (``step``, ``momentum``, ...) wait for the lock in C."""
    for klass in cls.__mro__:
        if klass is _core.System or klass is object:
            continue
        for name, attribute in list(vars(klass).items()):
            if name in _UNHELD:
                continue
            if inspect.isfunction(attribute):
                setattr(klass, name, _holding(attribute))
            elif isinstance(attribute, property):
                setattr(
                    klass,
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
