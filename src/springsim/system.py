"""The Python face of the kernel: :class:`System` and its conveniences.

Arrays are converted and broadcast here; the C kernel (``springsim._core``) checks
every value it will rely on, so a bad argument raises before anything changes.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt

from springsim import _core
from springsim._files import StrPath
from springsim.divergence import substep_books as _substep_books

if TYPE_CHECKING:
    import scipy.sparse

    from springsim.colliders import Plane, Sphere
    from springsim.gas import Gas
    from springsim.history import History
    from springsim.modes import Modes


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
    total : float
        The sum of the four.
    """

    kinetic: float
    elastic: float
    gravity: float
    pressure: float
    total: float


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


def _as_real_array(value: npt.ArrayLike, name: str) -> np.ndarray:
    """``value`` as an array of real numbers (or bools), else TypeError naming it."""
    if value is None:
        raise TypeError(f"{name} must be numbers, not None")
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be real numbers, got an array of dtype {array.dtype}")
    return array


def _as_numbers(
    value: npt.ArrayLike, name: str, dtype: npt.DTypeLike, shape: tuple[int, ...]
) -> np.ndarray:
    """``value`` as a C-contiguous array of ``dtype`` broadcast to ``shape``.

    Raises TypeError for non-numeric input and ValueError for a shape that does
    not broadcast, naming the argument and the expected shape.
    """
    array = _as_real_array(value, name)
    try:
        array = np.broadcast_to(array, shape)
    except ValueError:
        raise ValueError(
            f"{name} must have shape {shape} (or broadcast to it), got {array.shape}"
        ) from None
    return np.ascontiguousarray(array, dtype=dtype)


def _scalar(value: object, name: str) -> float:
    """A real number as a float, else TypeError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, not {type(value).__name__}")
    return float(value)


def _as_rows(value: npt.ArrayLike, name: str, dtype: npt.DTypeLike, width: int) -> np.ndarray:
    """``value`` as an (n, width) array; a single row of length ``width`` is allowed."""
    array = _as_real_array(value, name)
    if array.ndim == 1 and array.shape[0] == width:
        array = array[None, :]
    if array.ndim == 1 and array.shape[0] == 0:
        array = array.reshape(0, width)
    if array.ndim != 2 or array.shape[1] != width:
        raise ValueError(f"{name} must have shape (n, {width}), got {array.shape}")
    return _as_numbers(array, name, dtype, array.shape)


def _as_indices(value: npt.ArrayLike, name: str = "indices") -> np.ndarray:
    """``value`` (an int or a sequence of ints) as a flat int64 array."""
    array = np.asarray(value)
    if array.size == 0:
        array = array.astype(np.int64)  # [] has dtype float64 but means no indices
    if array.dtype.kind not in "iu":
        raise TypeError(f"{name} must be integers, got dtype {array.dtype}")
    if array.dtype.kind == "u" and array.size and array.max() > np.iinfo(np.int64).max:
        raise ValueError(f"{name} has an index beyond any system's size: {array.max()}")
    return np.ascontiguousarray(array.reshape(-1), dtype=np.int64)


class _Drive:
    """Nodes that follow a path: a function of time, or per-substep targets.

    ``rows`` picks which rows of the function's value drive ``indices``, after some of
    the nodes were removed (None: all of them); ``width`` is how many rows the function
    was written for.
    """

    __slots__ = ("indices", "function", "targets", "counter", "rows", "width")
    function: Any  # the path (a callable) when targets is None

    def __init__(
        self,
        indices: np.ndarray,
        function: Callable[[float], npt.ArrayLike] | None,
        targets: np.ndarray | None,
        counter: int = 0,
        rows: np.ndarray | None = None,
        width: int | None = None,
    ) -> None:
        self.indices, self.function, self.targets, self.counter = (
            indices,
            function,
            targets,
            counter,
        )
        self.rows = rows
        self.width = indices.size if width is None else width

    def copy(self) -> _Drive:
        """The same drive with its own progress (the counter)."""
        return _Drive(
            self.indices, self.function, self.targets, self.counter, self.rows, self.width
        )

    def renumbered(self, old_to_new: np.ndarray) -> _Drive | None:
        """This drive after nodes were removed (``old_to_new`` from the kernel), or None
        if none of its nodes is left."""
        new = old_to_new[self.indices]
        keep = new >= 0
        if not keep.any():
            return None
        if self.targets is not None:
            return _Drive(new[keep], None, self.targets[:, keep], self.counter)
        rows = (np.arange(self.width) if self.rows is None else self.rows)[keep]
        return _Drive(new[keep], self.function, None, self.counter, rows, self.width)

    def target(self, t: float, dim: int) -> np.ndarray:
        """Where the nodes must be at time t (the end of the coming substep)."""
        if self.targets is not None:
            return self.targets[min(self.counter, len(self.targets) - 1)]
        value = np.asarray(self.function(t))
        if value.dtype.kind not in "biuf":
            raise ValueError(f"the drive path returned {value.dtype} values at t = {t:g} s")
        try:
            value = np.broadcast_to(value, (self.width, dim)).astype(np.float64)
        except ValueError:
            raise ValueError(
                f"the drive path returned shape {value.shape} at t = {t:g} s; "
                f"expected ({self.width}, {dim})"
            ) from None
        if not np.all(np.isfinite(value)):
            raise ValueError(f"the drive path returned non-finite targets at t = {t:g} s")
        return value if self.rows is None else value[self.rows]


class _Line:
    """A picklable drive path: ``start + velocity (t − t0)``, what ``pin(velocity=...)``
    drags nodes along."""

    __slots__ = ("start", "velocity", "t0")

    def __init__(self, start: np.ndarray, velocity: np.ndarray, t0: float):
        self.start, self.velocity, self.t0 = start, velocity, t0

    def __call__(self, t: float) -> np.ndarray:
        return self.start + self.velocity * (t - self.t0)


def _view_property(name: str, doc: str) -> property:
    """A property returning a fresh zero-copy view; assignment copies into it."""

    def get(self: _core.System) -> np.ndarray:
        return self._view(name)

    def set(self: _core.System, value: npt.ArrayLike) -> None:
        current = self._view(name)
        dtype = current.dtype if current.dtype != np.bool_ else np.bool_
        self._set_array(name, _as_numbers(value, name, dtype, current.shape))

    return property(get, set, doc=doc)


class System(_core.System):
    """A mass-spring system: N nodes and M springs in 2D or 3D.

    Every array attribute is a zero-copy NumPy view of the kernel's memory: write
    ``sim.positions[0] = (0, 1)`` and the next step sees it. Each access returns a
    fresh view; adding nodes or springs may move the arrays, after which views
    taken earlier are stale (still valid memory, no longer the system's). Assigning
    ``sim.positions = x`` copies into the existing array (shapes must broadcast).

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

    # No __slots__: driven anchors (:meth:`drive`) keep their paths in the instance.

    positions = _view_property("positions", "Node positions, (N, dim) float64, m.")
    velocities = _view_property("velocities", "Node velocities, (N, dim) float64, m/s.")
    masses = _view_property("masses", "Node masses, (N,) float64, kg > 0.")
    pinned = _view_property("pinned", "Pinned flags, (N,) bool.")
    external_forces = _view_property(
        "external_forces", "User forces, (N, dim) float64, N, added at every evaluation."
    )
    rest_lengths = _view_property("rest_lengths", "Spring rest lengths, (M,) float64, m.")
    stiffness = _view_property("stiffness", "Spring stiffness, (M,) float64, N/m >= 0.")
    damping = _view_property("damping", "Axial spring damping, (M,) float64, N·s/m >= 0.")
    gravity = _view_property("gravity", "Gravitational acceleration, (dim,) float64, m/s².")
    wind = _view_property("wind", "Wind velocity, (dim,) float64, m/s.")

    break_strains = _view_property(
        "break_strains",
        "Per-spring tearing strain, (M,) float64 >= 0: a spring longer than (1 + b) times "
        "its rest length after a substep is cut (it pulls no more) and removed when the "
        "step call ends; inf (the default) never breaks.",
    )
    uvs = _view_property("uvs", "Texture coordinates, (N, 2) float64 (zero unless set).")
    rest_positions = _view_property(
        "rest_positions",
        "The rest shape :meth:`rigid_frame` fits against, (N, dim) float64, m; "
        "the positions the nodes were added at unless you set it.",
    )
    _drives: list[_Drive]  # in __dict__ while nodes are driven (see _set_drives)

    @property
    def springs(self) -> np.ndarray:
        """Spring node pairs, (M, 2) int32, read-only (the kernel trusts these indices)."""
        return self._view("springs")

    @property
    def faces(self) -> np.ndarray:
        """Triangles, (F, 3) int32, read-only; outward by the right-hand rule."""
        return self._view("faces")

    def add_nodes(
        self,
        positions: npt.ArrayLike,
        masses: npt.ArrayLike = 1.0,
        velocities: npt.ArrayLike | None = None,
        pinned: npt.ArrayLike = False,
    ) -> np.ndarray:
        """Append nodes.

        Parameters
        ----------
        positions : array_like, shape (n, dim) or (dim,)
            Where the new nodes are, m.
        masses : float or array_like, shape (n,)
            kg, > 0 and finite; a scalar applies to every new node.
        velocities : array_like, shape (n, dim) or (dim,), optional
            m/s; zero if omitted.
        pinned : bool or array_like of bool, shape (n,)
            Whether each new node is pinned.

        Returns
        -------
        ndarray of int64
            The indices of the new nodes.

        Raises
        ------
        TypeError
            A non-numeric argument.
        ValueError
            A wrong shape, a non-finite value or a mass <= 0. Nothing is added.

        Examples
        --------
        >>> import springsim as ss
        >>> sim = ss.System(dim=3)
        >>> sim.add_nodes([[0, 0, 0], [1, 0, 0]], masses=0.5)
        array([0, 1])
        """
        dim = self.dim
        x = _as_rows(positions, "positions", np.float64, dim)
        count = x.shape[0]
        m = _as_numbers(masses, "masses", np.float64, (count,))
        v = (
            None
            if velocities is None
            else _as_numbers(velocities, "velocities", np.float64, (count, dim))
        )
        p = _as_numbers(pinned, "pinned", np.bool_, (count,))
        first = self._add_nodes(x, v, m, p)
        return np.arange(first, first + count, dtype=np.int64)

    def add_springs(
        self,
        pairs: npt.ArrayLike,
        stiffness: npt.ArrayLike,
        damping: npt.ArrayLike = 0.0,
        rest_lengths: npt.ArrayLike | None = None,
    ) -> np.ndarray:
        """Append springs between existing nodes.

        Parameters
        ----------
        pairs : array_like of int, shape (m, 2) or (2,)
            Node index pairs (i, j), i != j.
        stiffness : float or array_like, shape (m,)
            N/m, finite and >= 0.
        damping : float or array_like, shape (m,)
            N·s/m along the spring, finite and >= 0.
        rest_lengths : float or array_like, shape (m,), optional
            m; by default each spring's current length.

        Returns
        -------
        ndarray of int64
            The indices of the new springs.

        Raises
        ------
        TypeError
            Non-integer pairs or non-numeric values.
        ValueError
            An index out of range, a spring from a node to itself, a negative or
            non-finite value, a wrong shape. Nothing is added.

        Examples
        --------
        >>> import springsim as ss
        >>> sim = ss.System(dim=2)
        >>> _ = sim.add_nodes([[0, 0], [3, 4]])
        >>> sim.add_springs([0, 1], stiffness=10.0)
        array([0])
        >>> float(sim.rest_lengths[0])
        5.0
        """
        pairs = np.asarray(pairs)
        pairs = _as_rows(_as_indices(pairs, "pairs").reshape(pairs.shape), "pairs", np.int64, 2)
        count = pairs.shape[0]
        k = _as_numbers(stiffness, "stiffness", np.float64, (count,))
        c = _as_numbers(damping, "damping", np.float64, (count,))
        rest = (
            None
            if rest_lengths is None
            else _as_numbers(rest_lengths, "rest_lengths", np.float64, (count,))
        )
        first = self._add_springs(pairs, k, c, rest)
        return np.arange(first, first + count, dtype=np.int64)

    def add_faces(self, triangles: npt.ArrayLike) -> np.ndarray:
        """Append triangles (for drawing, normals, OBJ export and pressure).

        Parameters
        ----------
        triangles : array_like of int, shape (f, 3) or (3,)
            Node index triples, counter-clockwise seen from outside.

        Returns
        -------
        ndarray of int64
            The indices of the new faces.

        Raises
        ------
        ValueError
            An index out of range or a repeated node. Nothing is added.

        Examples
        --------
        >>> import springsim as ss
        >>> sim = ss.System(dim=3)
        >>> _ = sim.add_nodes([[0, 0, 0], [1, 0, 0], [0, 1, 0]])
        >>> sim.add_faces([0, 1, 2])
        array([0])
        """
        tri = np.asarray(triangles)
        tri = _as_rows(_as_indices(tri, "faces").reshape(tri.shape), "faces", np.int64, 3)
        first = self._add_faces(tri)
        return np.arange(first, first + tri.shape[0], dtype=np.int64)

    def add(self, other: System) -> np.ndarray:
        """Append a copy of another system's nodes, springs and faces.

        Node data (positions, velocities, masses, pins, external forces, uvs, rest
        positions), spring data, faces and gas bodies (with new ids, in order) come
        along; global parameters (gravity, ...) and colliders stay this system's. This
        is how composite models are built: a balloon is a ball ``add``-ed to a string
        and ``connect``-ed to it.

        Parameters
        ----------
        other : System
            A system of the same dimension (it is not changed).

        Returns
        -------
        ndarray of int64
            The indices, in this system, of ``other``'s nodes.

        Examples
        --------
        >>> import springsim as ss
        >>> a, b = ss.System(dim=2), ss.System(dim=2)
        >>> _ = a.add_nodes([[0, 0], [1, 0]])
        >>> _ = b.add_nodes([[5, 0], [6, 0]])
        >>> _ = b.add_springs([0, 1], stiffness=3.0)
        >>> a.add(b)
        array([2, 3])
        >>> a.springs.tolist()
        [[2, 3]]
        """
        if not isinstance(other, _core.System):
            raise TypeError(f"other must be a springsim.System, not {type(other).__name__}")
        if other.dim != self.dim:
            raise ValueError(f"cannot add a {other.dim}D system to a {self.dim}D one")
        # Check everything first, so that a bad value in `other` changes nothing here.
        other._validate()
        for name in ("uvs", "rest_positions"):
            if not np.all(np.isfinite(other._view(name))):
                raise ValueError(f"other.{name} must be finite")
        n = other.num_nodes
        arrays = {
            name: np.array(other._view(name))  # copies: `other` may be `self`
            for name in (
                "positions",
                "velocities",
                "masses",
                "pinned",
                "external_forces",
                "uvs",
                "rest_positions",
                "stiffness",
                "damping",
                "rest_lengths",
                "break_strains",
            )
        }
        offset, first_spring = self.num_nodes, self.num_springs
        pairs = other.springs.astype(np.int64) + offset
        tri = other.faces.astype(np.int64) + offset
        self._add_nodes(
            arrays["positions"], arrays["velocities"], arrays["masses"], arrays["pinned"]
        )
        for name in ("external_forces", "uvs", "rest_positions"):
            self._view(name)[offset:] = arrays[name]
        self._add_springs(pairs, arrays["stiffness"], arrays["damping"], arrays["rest_lengths"])
        self._view("break_strains")[first_spring:] = arrays["break_strains"]
        self._add_faces(tri)
        for body, nrt, ambient, _volume in other._pressure_bodies():
            elements = other._pressure_elements(body).astype(np.int64) + offset
            self._add_pressure(elements, nrt, ambient)
        return np.arange(offset, offset + n, dtype=np.int64)

    def connect(
        self,
        i: int,
        j: int,
        stiffness: float,
        damping: float = 0.0,
        rest_length: float | None = None,
    ) -> int:
        """Add one spring between nodes ``i`` and ``j``; returns its index.

        Parameters
        ----------
        i, j : int
            Two different existing nodes.
        stiffness : float
            N/m, finite and >= 0.
        damping : float
            N·s/m along the spring, finite and >= 0.
        rest_length : float, optional
            m; the current distance by default.

        Returns
        -------
        int
            The new spring's index.

        Raises
        ------
        ValueError
            A node out of range, i == j, or a value out of its domain (nothing added).

        Examples
        --------
        >>> import springsim as ss
        >>> sim = ss.System(dim=2)
        >>> _ = sim.add_nodes([[0, 0], [2, 0]])
        >>> sim.connect(0, 1, stiffness=50.0)
        0
        """
        rest = None if rest_length is None else [rest_length]
        return int(self.add_springs([[i, j]], stiffness, damping, rest)[0])

    def remove_nodes(self, indices: npt.ArrayLike) -> np.ndarray:
        """Remove nodes, with every spring and face that uses them.

        The remaining nodes keep their order and are renumbered.

        Returns
        -------
        ndarray of int64, shape (N_old,)
            The new index of each old node, or -1 for a removed one.

        Raises
        ------
        ValueError
            An index out of range, or a node on a gas body's boundary (remove the body
            first with :meth:`remove_pressure`); nothing is removed.

        Examples
        --------
        >>> import springsim as ss
        >>> sim = ss.System(dim=2)
        >>> _ = sim.add_nodes([[0, 0], [1, 0], [2, 0]])
        >>> _ = sim.add_springs([[0, 1], [1, 2]], stiffness=1.0)
        >>> sim.remove_nodes([0])
        array([-1,  0,  1])
        >>> sim.springs.tolist()
        [[0, 1]]
        """
        old_to_new = self._remove_nodes(_as_indices(indices))
        drives = self.__dict__.get("_drives")
        if drives:  # driven nodes follow their new numbers; removed ones stop
            renumbered = (d.renumbered(old_to_new) for d in drives)
            self._set_drives([d for d in renumbered if d is not None])
        return old_to_new

    def normals(self) -> np.ndarray:
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
        x, tri = self.positions, self.faces
        face_normals = np.cross(x[tri[:, 1]] - x[tri[:, 0]], x[tri[:, 2]] - x[tri[:, 0]])
        normals = np.zeros_like(x)
        for corner in range(3):
            np.add.at(normals, tri[:, corner], face_normals)
        length = np.linalg.norm(normals, axis=1, keepdims=True)
        return np.divide(normals, length, out=np.zeros_like(normals), where=length > 0)

    def rigid_frame(self, indices: npt.ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Centre of mass and best-fit rotation of the nodes onto their rest shape.

        Finds the rotation R minimising ``Σ m |R (r_i − r̄) − (x_i − x̄)|²`` over the
        nodes (r: :attr:`rest_positions`, x: positions, bars: mass-weighted means):
        the Kabsch / polar-decomposition fit, the rigid body the xbdev article
        recovers from a soft body's vertices.

        Parameters
        ----------
        indices : array_like of int, optional
            The nodes to fit; all by default.

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
        idx: Any = slice(None) if indices is None else _as_indices(indices)
        if indices is not None and idx.size:
            if idx.min() < 0 or idx.max() >= self.num_nodes:
                raise ValueError(f"indices must be in [0, {self.num_nodes})")
        x, rest, m = self.positions[idx], self.rest_positions[idx], self.masses[idx]
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

    def remove_springs(self, indices: npt.ArrayLike) -> None:
        """Remove springs by index; the remaining springs keep their order.

        Raises
        ------
        ValueError
            An index out of range (nothing is removed).

        Examples
        --------
        >>> import springsim as ss
        >>> sim = ss.System(dim=2)
        >>> _ = sim.add_nodes([[0, 0], [1, 0], [2, 0]])
        >>> _ = sim.add_springs([[0, 1], [1, 2]], stiffness=1.0)
        >>> sim.remove_springs([0])
        >>> sim.springs.tolist()
        [[1, 2]]
        """
        self._remove_springs(_as_indices(indices))

    def pin(self, indices: npt.ArrayLike, velocity: npt.ArrayLike | None = None) -> None:
        """Pin nodes: hold them where they are, or drag them at a constant velocity.

        A pinned node ignores every force (springs, gravity, drag, contacts) and
        ``energy_loss``. Held (``velocity=None``), its velocity is zero and it stays
        where it is until you move it: write its position (``sim.positions[i] = ...``:
        it is then held there) or :meth:`drive` it. A velocity written to a held node
        does not move it: every :meth:`step` call (and :meth:`run`) starts by setting
        the velocity of each held node to zero. Held nodes therefore add nothing to
        the kinetic energy or the momentum.

        With ``velocity``, the nodes are dragged: from where they are now they move
        in a straight line at that velocity, x(t) = x(t0) + v (t − t0), which is
        :meth:`drive` along that line; their velocity is v, so spring damping,
        energies and momentum see it. Pin them again without a velocity to stop them.

        Pinning nodes that are driven ends their drive (other nodes of the same
        drive carry on).

        Parameters
        ----------
        indices : int or array_like of int, shape (k,)
            The nodes.
        velocity : array_like, shape (dim,) or (k, dim), optional
            Drag velocity, m/s, finite: one for all the nodes or one per node.

        Raises
        ------
        TypeError
            Non-integer indices, a non-numeric velocity.
        ValueError
            An index out of range, a velocity of the wrong shape or not finite.
            Nothing changes.

        Examples
        --------
        An anchor stays put, whatever velocity the string is given, until it is
        dragged:

        >>> import springsim as ss
        >>> s = ss.string(10, length=1.0, mass=0.1, stiffness=100.0, dim=2)
        >>> s.velocities = (0.5, 0.0)  # every node, the anchor too
        >>> s.step(1e-3, steps=2000)
        >>> s.positions[0].tolist(), s.velocities[0].tolist()
        ([0.0, 0.0], [0.0, 0.0])
        >>> s.pin(0, velocity=(0.5, 0.0))  # drag it: 0.5 m/s along x
        >>> s.step(1e-3, steps=2000)
        >>> round(float(s.positions[0, 0]), 9), round(float(s.velocities[0, 0]), 6)
        (1.0, 0.5)
        >>> s.pin(0)  # held again, where it is
        >>> s.step(1e-3, steps=100)
        >>> round(float(s.positions[0, 0]), 9)
        1.0
        """
        idx = _as_indices(indices)
        if velocity is None:
            self._set_pinned(idx, True)  # checks the indices first: no change if one is bad
            self._undrive(idx)
            self.velocities[idx] = 0.0
            return
        v = _as_numbers(velocity, "velocity", np.float64, (idx.size, self.dim))
        if not np.all(np.isfinite(v)):
            raise ValueError("velocity must be finite")
        self._set_pinned(idx, True)
        if idx.size:  # no nodes, no drive (a drive makes every step return to Python)
            self.drive(idx, _Line(np.array(self.positions[idx]), v.copy(), self.time))
            self.velocities[idx] = v

    def unpin(self, indices: npt.ArrayLike) -> None:
        """Release pinned nodes: forces act on them again.

        They keep the velocity they have (zero if they were held; a dragged or
        driven node flies on at its last velocity), and a drive on them ends.

        Raises
        ------
        TypeError, ValueError
            Non-integer indices, an index out of range; nothing changes.
        """
        idx = _as_indices(indices)
        self._set_pinned(idx, False)
        self._undrive(idx)

    def _undrive(self, idx: np.ndarray) -> None:
        """Stop driving nodes ``idx`` (valid indices); the rest of their drives go on."""
        drives = self.__dict__.get("_drives")
        if not drives or idx.size == 0:
            return
        remaining = np.arange(self.num_nodes)
        remaining[idx] = -1
        kept = (d.renumbered(remaining) for d in drives)
        self._set_drives([d for d in kept if d is not None])

    def _held(self) -> np.ndarray:
        """Which nodes a step call holds (velocity set to zero): the pinned ones that
        are not driven."""
        held = np.array(self.pinned)
        for d in self.__dict__.get("_drives", []):
            held[d.indices] = False
        return held

    def energy(self) -> Energy:
        """Kinetic, elastic, gravitational and gas energy, and their total, in joules.

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
        kinetic, elastic, gravity, pressure = self._energy_terms()
        return Energy(kinetic, elastic, gravity, pressure, kinetic + elastic + gravity + pressure)

    def critical_dt(self) -> float:
        """Estimated largest stable time step of symplectic Euler and Verlet, s.

        These methods are stable while ω_max·dt < 2, so ``critical_dt = 2 / ω_max``,
        with ω_max the highest angular frequency of the springs. ω_max² is bounded
        (Gershgorin) by the largest, over free nodes i, of Σ_s k_s (1/m_i + 1/√(m_i m_j))
        over the springs s = (i, j) at i, a pinned j counting as infinitely heavy:
        exact for one mass on a pinned spring, two free masses, and the top mode of a
        long uniform chain, and never too optimistic for a node held by many springs.
        Damping, drag and the air on faces are not included; RK4 tolerates about 1.4× this, explicit
        Euler no undamped dt at all. Infinite when no spring acts on a free node.

        For steps far beyond this limit (stiff springs, long runs) use
        ``method="implicit_euler"``, stable at any dt, or ``"xpbd"``. Gas pressure is
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
        return super().critical_dt()

    def last_solve(self) -> Solve:
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

    def stiffness_matrix(self) -> scipy.sparse.csr_matrix:
        """The Hessian K of the elastic energy at the current positions (needs SciPy).

        Each spring s = (i, j) with unit vector u, length l and rest length L adds
        ``K_s = k [u uᵀ + (1 − L/l)(I − u uᵀ)]`` at blocks (i, i) and (j, j) and −K_s at
        (i, j) and (j, i): the exact second derivative of ½ k (l − L)², so that
        small displacements δx change the spring forces by −K δx. Row and column
        ``node * dim + axis``; pinned nodes included. Springs shorter than 1e-12 m
        contribute nothing (they exert no force). Gas and gravity are not included.

        Returns
        -------
        scipy.sparse.csr_matrix, shape (dim·N, dim·N)
            Symmetric; positive semi-definite unless a spring is compressed.

        Raises
        ------
        ImportError
            SciPy is not installed (``pip install 'springsim[scipy]'``).
        ValueError
            A spring is a rigid rod (stiffness inf).

        Examples
        --------
        >>> import springsim as ss
        >>> sim = ss.System(dim=2)
        >>> _ = sim.add_nodes([[0, 0], [2, 0]])
        >>> _ = sim.add_springs([0, 1], stiffness=10.0, rest_lengths=1.0)
        >>> sim.stiffness_matrix().toarray()  # axial k = 10, sideways k (1 − L/l) = 5
        array([[ 10.,   0., -10.,   0.],
               [  0.,   5.,   0.,  -5.],
               [-10.,   0.,  10.,   0.],
               [  0.,  -5.,   0.,   5.]])
        """
        from springsim.modes import stiffness_matrix

        return stiffness_matrix(self)

    def normal_modes(self, k: int) -> Modes:
        """The ``k`` lowest normal modes of small motions about the current state.

        Solves K φ = ω² M φ (K: :meth:`stiffness_matrix`, M: the node masses) over
        the free nodes; pinned nodes stay put. A free body has one zero mode per
        rigid motion (3 in 2D, 6 in 3D), more if it can deform without stretching a
        spring (a ``jelly(..., arrangement="simple")`` can shear). Dense (NumPy)
        up to 2000 free coordinates, sparse shift-invert Lanczos (SciPy) above.

        Parameters
        ----------
        k : int
            How many modes, 1 to dim × (free nodes).

        Returns
        -------
        Modes
            ``frequencies`` (k,) in rad/s, ascending, and mass-normalised ``shapes``
            (k, N, dim); see :class:`springsim.modes.Modes` for negative frequencies.

        Raises
        ------
        ValueError
            k out of range, every node pinned, a rigid rod.

        Examples
        --------
        Ten masses between two pins: ω_n = 2 √(k/m) sin(nπ/22). Along the chain at
        rest length the sideways motions are free (10 zero modes); the next 10 are
        the stretching ones.

        >>> import numpy as np
        >>> import springsim as ss
        >>> chain = ss.string(12, length=11.0, mass=12.0, stiffness=4.0, dim=2, pin="both")
        >>> omega = chain.normal_modes(20).frequencies
        >>> n = np.arange(1, 11)
        >>> np.allclose(omega[:10], 0), np.allclose(omega[10:], 4 * np.sin(n * np.pi / 22))
        (True, True)
        """
        from springsim.modes import normal_modes

        return normal_modes(self, k)

    @property
    def break_strain(self) -> float | None:
        """Tearing strain of every spring, or None (the default) when none can tear.

        Setting it sets :attr:`break_strains` for every spring; a spring stretched
        beyond (1 + break_strain) times its rest length after any substep is cut at
        once (stiffness and damping 0, its stretch energy to :attr:`dissipated`) and
        removed when the :meth:`step` call ends (:meth:`run`: at its records), and
        :meth:`broken_springs` reports it. Which springs tear does not depend on how
        the substeps are grouped into calls.
        Reading it raises ValueError when the springs have different values.

        Examples
        --------
        >>> import springsim as ss
        >>> sim = ss.string(3, length=1.0, mass=1.0, stiffness=10.0, pin="both")
        >>> sim.break_strain = 0.2
        >>> sim.positions[2, 0] += 1.0  # pull one end far away
        >>> sim.step(1e-4)
        >>> sim.broken_springs().tolist(), sim.num_springs
        ([[1, 2]], 1)
        """
        b = self.break_strains
        if b.size == 0 or np.all(np.isinf(b)):
            return None
        if np.all(b == b[0]):
            return float(b[0])
        raise ValueError("the springs have different break strains: read break_strains")

    @break_strain.setter
    def break_strain(self, value: float | None) -> None:
        self.break_strains = np.inf if value is None else _scalar(value, "break_strain")

    def drive(
        self, indices: npt.ArrayLike, path: Callable[[float], npt.ArrayLike] | npt.ArrayLike | None
    ) -> None:
        """Make nodes follow a prescribed path: a shaken string end, a moving hand.

        The nodes are pinned. Before every substep their velocity is set to
        (target − x)/dt, so the step moves them onto the target at the end of the
        substep, and forces and energies see the velocity they really have (the
        other pinned nodes are held still, as in any step). For a constant velocity,
        :meth:`pin` ``(indices, velocity=v)`` is the shorthand.

        Parameters
        ----------
        indices : int or array_like of int, shape (k,)
            The driven nodes.
        path : callable, array_like or None
            ``path(t) -> positions`` of shape (k, dim) (or broadcastable to it), the
            targets at time t (s); or an array of per-substep targets, shape
            (steps, k, dim) (or broadcastable), used one per substep and then held
            at the last; or None to stop driving these nodes (they stay pinned, at
            rest). Nodes of earlier drives that are not in ``indices`` keep theirs.

        Raises
        ------
        TypeError
            ``path`` is neither callable, an array nor None.
        ValueError
            An index out of range, a path array of the wrong shape or not finite.
            A callable that returns a bad value raises ValueError from ``step``,
            which then changes nothing.

        Examples
        --------
        >>> import numpy as np
        >>> import springsim as ss
        >>> sim = ss.string(5, length=1.0, mass=0.1, stiffness=50.0, dim=2)
        >>> sim.drive(0, lambda t: [0.0, 0.1 * np.sin(2 * np.pi * t)])
        >>> sim.step(1e-3, steps=250)
        >>> round(float(sim.positions[0, 1]), 9)  # at t = 0.25 s: the top of the sine
        0.1
        """
        idx = _as_indices(indices)
        if idx.size and (idx.min() < 0 or idx.max() >= self.num_nodes):
            raise ValueError(f"indices must be in [0, {self.num_nodes})")
        shape = (idx.size, self.dim)
        if path is None:
            new = None
        elif callable(path):
            new = _Drive(idx, path, None)
        else:
            targets = np.asarray(path)
            if targets.dtype.kind not in "biuf":
                raise TypeError("path must be a callable, an array of targets or None")
            if targets.ndim < 1:
                raise ValueError("a path array needs one row of targets per substep")
            try:
                targets = np.broadcast_to(targets, (len(targets), *shape)).astype(np.float64)
            except ValueError:
                raise ValueError(
                    f"path must have shape (steps, {idx.size}, {self.dim}), got {np.shape(path)}"
                ) from None
            if not np.all(np.isfinite(targets)):
                raise ValueError("path targets must be finite")
            new = _Drive(idx, None, targets)
        self._set_pinned(idx, True)
        self._undrive(idx)
        if new is None:
            self.velocities[idx] = 0.0
        else:
            self._set_drives([*self.__dict__.get("_drives", []), new])

    def _set_drives(self, drives: list[_Drive]) -> None:
        # The kernel's step hands over to _driven_step while any node is driven.
        self.__dict__["_drives"] = drives
        self._driven = bool(drives)

    def _driven_step(self, dt: float, steps: int = 1, method: str | None = None) -> None:
        """:meth:`step` for a system with driven nodes (the kernel's step calls this
        when ``_driven`` is set): one kernel call per substep, undone whole on failure,
        and watched for divergence as one call (one set of books over its substeps)."""
        books = self._books  # how the caller (run()) keeps the books; reset by any step
        drives = self.__dict__["_drives"]
        if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
            raise TypeError(f"steps must be an int, not {type(steps).__name__}")
        if not 0 <= steps < 2**63 - 1:
            raise ValueError(f"steps must be >= 0 and < 2**63 - 1, got {steps}")
        self._step(dt, 0, method)  # checks dt, method and the state; steps nothing
        if steps == 0:
            return None
        # One kernel call per substep, undone together if any part fails: the state,
        # the clock, the energy books and the springs cut so far (held, not removed,
        # until the last substep: then torn as one call would).
        saved = {
            name: self._view(name).copy() for name in ("positions", "velocities", "_prev_accel")
        }
        saved_state = (self.time, self._verlet_valid, self.dissipated)
        counters = [d.counter for d in drives]
        defer = self._defer_tearing
        self._defer_tearing = self._hold_cuts = True
        # The kernel holds no pins in these calls (the drives set their nodes'
        # velocities): the other pinned nodes are held here, once.
        self.velocities[self._held()] = 0.0
        self._drag_pins = True
        done = False
        try:
            for books_mode in _substep_books(books, steps):
                targets = [d.target(self.time + dt, self.dim) for d in drives]
                for d, target in zip(drives, targets, strict=True):
                    self.velocities[d.indices] = (target - self.positions[d.indices]) / dt
                self._books = books_mode
                self._step(dt, 1, method)
                for d, target in zip(drives, targets, strict=True):
                    self.positions[d.indices] = target
                    d.counter += 1
            done = True
        finally:
            self._drag_pins = self._hold_cuts = False
            self._settle_cuts(done)
            self._defer_tearing = defer
            if not done:
                for name, array in saved.items():
                    self._view(name)[...] = array
                self.time, self._verlet_valid, self.dissipated = saved_state
                for d, counter in zip(drives, counters, strict=True):
                    d.counter = counter
        if not defer:
            self._tear()
        return None

    def run(
        self,
        duration: float,
        dt: float,
        method: str | None = None,
        record_every: int | None = None,
        frames: int | None = None,
        frame_nodes: npt.ArrayLike | None = None,
        progress: bool = True,
        callback: Callable[[System], object] | None = None,
    ) -> History:
        """Step for ``duration`` seconds, recording energies, momentum and frames.

        ``round(duration / dt)`` substeps of ``dt`` run in C between records (in calls
        of about 0.1 s, so that the progress bar moves and Ctrl-C is answered).
        While it runs, :attr:`track_energy` is on, so the record holds the energy
        dissipated so far as well as every energy term.

        Parameters
        ----------
        duration, dt : float
            Seconds, > 0.
        method : str, optional
            The integrator (default: :attr:`method`).
        record_every : int, optional
            Substeps between records (default: about 1000 records in all). The start
            and the end are always recorded.
        frames : int, optional
            Position frames to keep, at evenly spaced times from start to end
            (``frames=1``: the start only). None (default): none.
        frame_nodes : array_like of int, optional
            The nodes the frames hold (default: all).
        progress : bool
            Show a progress bar (``tqdm.auto``: a widget in a notebook, a line in a
            terminal) when the run will take longer than about a second.
        callback : callable, optional
            ``callback(sim)`` after each record; return True to stop the run there.
            An exception it raises ends the run and propagates, with the records so
            far (that record included) on its ``history`` attribute.

        Returns
        -------
        History
            The records; ``interrupted`` is True if the run stopped early: Ctrl-C
            (KeyboardInterrupt) or the callback. The system stays where it stopped.
            After a Ctrl-C the last record is where it stopped, and ``steps`` counts
            every substep taken (``steps * dt`` is the time advanced).

        Raises
        ------
        TypeError, ValueError
            A bad argument or a bad value in the system; nothing has run. A drive path
            that returns a bad target part-way raises ValueError too, from the step call
            it spoils: that call is undone, the earlier ones stand, and the records so
            far are on the error's ``history``.
        springsim.UnstableError
            A step blew up: the system is rolled back to the start of that call (see
            :meth:`step`), and the error's ``history`` attribute holds the records so far.
        Exception
            Whatever ``callback`` raised, with the records so far on its ``history``
            attribute (and a note saying so); the system stays where it stopped.

        Examples
        --------
        A string falls from the horizontal; damping takes some of its energy, and
        ``total + dissipated`` stays where it started:

        >>> import springsim as ss
        >>> sim = ss.string(20, length=1.0, mass=0.2, stiffness=200.0, damping=0.05, dim=2)
        >>> h = sim.run(2.0, dt=5e-4, method="rk4", record_every=200, frames=11,
        ...             progress=False)
        >>> len(h.times), h.frames.shape, h.steps
        (21, (11, 20, 2), 4000)
        >>> books = h.total + h.dissipated - h.total[0]
        >>> bool(h.dissipated[-1] > 0), bool(abs(books).max() < 1e-4 * abs(h.total).max())
        (True, True)
        """
        from springsim.run import run

        return run(
            self,
            duration,
            dt,
            method=method,
            record_every=record_every,
            frames=frames,
            frame_nodes=frame_nodes,
            progress=progress,
            callback=callback,
        )

    def __reduce__(
        self,
    ) -> tuple[Callable[..., System], tuple[type[System], dict[str, np.ndarray], dict[str, Any]]]:
        # Pickle as the save format's arrays (pickle protocol 5 ships them as buffers)
        # plus what the file does not hold: the energy bookkeeping and driven nodes.
        from springsim import io

        io._check_savable(self, "this System")
        extras = {
            "dissipated": self.dissipated,
            "track_energy": self.track_energy,
            "drives": self.__dict__.get("_drives"),
        }
        return (_unpickle, (type(self), io.state_arrays(self), extras))

    def copy(self) -> System:
        """A deep copy (driven anchors included, each with its own progress)."""
        new = super().copy()
        if self.__dict__.get("_drives"):
            new._set_drives([d.copy() for d in self._drives])
        return new

    def add_plane(
        self,
        normal: npt.ArrayLike,
        offset: float = 0.0,
        restitution: float = 0.0,
        friction: float = 0.0,
    ) -> Plane:
        """Add a plane that nodes cannot pass: the half-space n·x >= offset is free.

        After every substep, of every method, a free node found behind the plane is
        moved onto it; if it was moving inwards, it leaves with ``restitution`` e
        times the speed it met the plane with (its normal speed, less what climbing
        back out costs in potential energy), and Coulomb friction reduces its
        tangential velocity by μ times the normal velocity change (about
        (1 + e)|v·n|), at most to zero. A node that friction stops stays where it
        touched the plane: static friction holds without creeping. What contacts
        take goes into :attr:`dissipated` (the README's "How contact energy is
        counted"). Pinned nodes are left alone.

        Parameters
        ----------
        normal : array_like, shape (dim,)
            Points into free space; normalised here. Nonzero and finite.
        offset : float
            m: the plane is n·x = offset (with the normalised n).
        restitution : float
            In [0, 1]: 0 stops the node, 1 bounces it back at full speed.
        friction : float
            Coulomb coefficient μ >= 0.

        Returns
        -------
        Plane
            A handle: change its ``normal``, ``offset``, ``restitution`` or
            ``friction`` between steps to move the plane.

        Raises
        ------
        ValueError
            A zero or non-finite normal, restitution outside [0, 1], negative friction.

        Examples
        --------
        >>> import springsim as ss
        >>> sim = ss.System(dim=2)
        >>> _ = sim.add_nodes([0.0, 1.0])
        >>> floor = sim.add_plane([0, 1], restitution=0.5)
        >>> sim.step(1e-3, steps=2000)
        >>> bool(sim.positions[0, 1] >= 0.0)
        True
        """
        from springsim.colliders import PLANE, handle

        vector = _as_numbers(normal, "normal", np.float64, (self.dim,))
        cid = self._add_collider(
            PLANE,
            vector,
            _scalar(offset, "offset"),
            _scalar(restitution, "restitution"),
            _scalar(friction, "friction"),
        )
        return handle(self, cid, PLANE)

    def add_sphere(
        self,
        center: npt.ArrayLike,
        radius: float,
        restitution: float = 0.0,
        friction: float = 0.0,
    ) -> Sphere:
        """Add a solid sphere (a disc in 2D) that nodes cannot enter.

        Contact works as for :meth:`add_plane`, with the normal pointing out of the
        sphere from its centre through the node.

        Parameters
        ----------
        center : array_like, shape (dim,)
            m.
        radius : float
            m, > 0.
        restitution, friction : float
            As for :meth:`add_plane`.

        Returns
        -------
        Sphere
            A handle: change ``center``, ``radius``, ``restitution`` or ``friction``
            between steps.

        Raises
        ------
        ValueError
            radius <= 0, restitution outside [0, 1], negative friction, a non-finite center.

        Examples
        --------
        >>> import springsim as ss
        >>> sim = ss.System(dim=2)
        >>> _ = sim.add_nodes([0.1, 0.0])
        >>> ball = sim.add_sphere([0, 0], radius=1.0)
        >>> sim.step(1e-3)
        >>> round(float(np.hypot(*sim.positions[0])), 12)
        1.0
        """
        from springsim.colliders import SPHERE, handle

        vector = _as_numbers(center, "center", np.float64, (self.dim,))
        cid = self._add_collider(
            SPHERE,
            vector,
            _scalar(radius, "radius"),
            _scalar(restitution, "restitution"),
            _scalar(friction, "friction"),
        )
        return handle(self, cid, SPHERE)

    @property
    def colliders(self) -> list[Plane | Sphere]:
        """The planes and spheres of this system, as handles, in the order added."""
        from springsim.colliders import handle

        return [handle(self, cid, kind) for cid, kind, *_ in self._colliders()]

    def remove_collider(self, collider: Plane | Sphere) -> None:
        """Remove a plane or sphere (a handle from this system).

        Raises
        ------
        ValueError
            The collider is not (or no longer) in this system.
        """
        from springsim.colliders import _Collider

        if not isinstance(collider, _Collider):
            raise TypeError(f"expected a Plane or Sphere, not {type(collider).__name__}")
        if collider._system is not self:
            raise ValueError("this collider belongs to another system")
        self._remove_collider(collider._id)

    def add_pressure(self, boundary: npt.ArrayLike, nrt: float, ambient: float = 0.0) -> int:
        """Fill a closed boundary with an isothermal ideal gas; returns the body id.

        At every force evaluation the kernel computes the enclosed volume V (area in
        2D), the gas pressure P = nrt / V, and pushes every boundary element outward
        with (P − ambient) times its area (length in 2D), shared equally by the
        element's nodes. That force is exactly −∂E/∂x of the gas energy
        E = −nrt·ln V + ambient·V, which :meth:`energy` reports as ``pressure``, so
        symplectic methods conserve the total. This is Matyka's pressure soft body:
        a ring or a sphere of springs that a gas keeps round.

        Units: 3D, V in m³, P and ambient in Pa, nrt in J. 2D, a body of unit depth:
        V in m², P and ambient in N/m, nrt in J/m.

        Parameters
        ----------
        boundary : array_like of int
            2D: a loop of node indices (a closed polygon; the last node joins the
            first), or (K, 2) directed edges forming closed loops. 3D: (K, 3)
            triangles forming a closed surface, all ordered the same way round.
            Either orientation is accepted: a boundary enclosing a negative volume
            (clockwise, or triangles facing inward) is stored reversed, outward.
        nrt : float
            n·R·T of the gas, >= 0: the product P·V it keeps. To hold pressure P at
            volume V, pass P·V.
        ambient : float
            Pressure outside, >= 0.

        Returns
        -------
        int
            The body id (0 for the first body; ids are never reused). Pass it to
            :meth:`gas` to read the pressure and change ``nrt``.

        Raises
        ------
        TypeError
            A boundary that is not integers, a non-numeric nrt or ambient.
        ValueError
            A node index out of range, an element repeating a node, a boundary that
            is not closed or not consistently oriented (the message names the node or
            edge), one enclosing zero volume, nrt or ambient negative or not finite.
            Nothing is added.

        Notes
        -----
        During a step, a body whose volume reaches zero or below (turned inside out)
        makes the step fail with :class:`springsim.UnstableError` and the usual
        rollback. :meth:`remove_nodes` refuses to remove a node of a body's boundary.

        Examples
        --------
        A ring of 12 springs inflated in 2D: at rest, the tension of its springs
        balances the gas (Laplace's law, T = P·r, with r the distance from the centre
        to the springs).

        >>> import numpy as np
        >>> import springsim as ss
        >>> ring = ss.ball(12, radius=1.0, mass=1.0, stiffness=100.0, damping=1.0, dim=2)
        >>> ring.gravity = (0, 0)
        >>> body = ring.add_pressure(range(12), nrt=20.0)
        >>> ring.step(1e-3, steps=20000)
        >>> gas = ring.gas(body)
        >>> middles = (ring.positions + np.roll(ring.positions, -1, axis=0)) / 2
        >>> r = np.linalg.norm(middles - ring.center_of_mass(), axis=1).mean()
        >>> round(float(ring.spring_tensions().mean() / (gas.pressure * r)), 6)
        1.0
        """
        from springsim.gas import boundary_elements

        elements = boundary_elements(boundary, self.dim)
        return self._add_pressure(elements, _scalar(nrt, "nrt"), _scalar(ambient, "ambient"))

    def gas(self, body: int) -> Gas:
        """The gas of pressure body ``body`` (an id from :meth:`add_pressure`).

        Returns
        -------
        Gas
            A live handle: ``pressure``, ``volume`` and ``energy`` are read now, at
            every access; ``nrt`` and ``ambient`` can be assigned between steps.

        Raises
        ------
        ValueError
            No body has this id.
        """
        from springsim.gas import Gas

        body = operator.index(body)
        if not any(b == body for b, *_ in self._pressure_bodies()):
            raise ValueError(f"there is no pressure body {body} in this system")
        return Gas(self, body)

    @property
    def gases(self) -> list[Gas]:
        """The gas of every pressure body, as :class:`springsim.gas.Gas` handles, in order."""
        from springsim.gas import Gas

        return [Gas(self, body) for body, *_ in self._pressure_bodies()]

    def remove_pressure(self, body: int) -> None:
        """Remove pressure body ``body`` (its nodes and springs stay).

        Raises
        ------
        ValueError
            No body has this id.
        """
        self._remove_pressure(operator.index(body))

    def save(self, path: StrPath) -> None:
        """Save every array and parameter to a ``.npz`` file; see :func:`springsim.load`."""
        from springsim import io

        io.save(self, path)

    def write_obj(self, path: StrPath) -> None:
        """Write positions, uvs and faces as a Wavefront OBJ (opens in Blender, MeshLab)."""
        from springsim import io

        io.write_obj(self, path)

    def __repr__(self) -> str:
        return (
            f"<springsim.System dim={self.dim} nodes={self.num_nodes} springs={self.num_springs}"
            f" method={self.method!r} t={self.time:g}s>"
        )


def _unpickle(cls: type[System], arrays: dict[str, np.ndarray], extras: dict[str, Any]) -> System:
    """Rebuild a pickled System (see System.__reduce__)."""
    from springsim import io

    sim = io.system_from_arrays(arrays, "pickled System", cls)
    sim.dissipated = extras["dissipated"]
    sim.track_energy = extras["track_energy"]
    if extras["drives"]:
        sim._set_drives(extras["drives"])
    return sim
