"""Topology: adding and removing nodes, springs and faces, composing systems (``add``,
``connect``), and the tearing strain of every spring."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from springsim import _core
from springsim._checks import _as_indices, _as_numbers, _as_rows, _as_vectors, _scalar
from springsim._warn import DuplicateSpringWarning, warn
from springsim.model import arrays, pins


def add_nodes(
    self: _core.System,
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
        m/s; zero if omitted. A single number other than 0 is refused (which
        component would it be?).
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
        else _as_vectors(velocities, "velocities", np.float64, (count, dim))
    )
    p = _as_numbers(pinned, "pinned", np.bool_, (count,))
    first = self._add_nodes(x, v, m, p)
    return np.arange(first, first + count, dtype=np.int64)


def add_springs(
    self: _core.System,
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

    Warns
    -----
    springsim.DuplicateSpringWarning
        A new spring joins two nodes that a spring already joins (in either order),
        or that an earlier spring of this call joins. Two springs on one pair act
        as one of their summed stiffness; they are added all the same.

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
    _warn_duplicates(self._view("springs"), pairs, self.num_nodes)
    first = self._add_springs(pairs, k, c, rest)
    return np.arange(first, first + count, dtype=np.int64)


def add_faces(self: _core.System, triangles: npt.ArrayLike) -> np.ndarray:
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


def add(self: _core.System, other: _core.System) -> np.ndarray:
    """Append a copy of another system's nodes, springs and faces.

    Node data (positions, velocities, masses, pins, external forces, uvs, rest
    positions, contact radii and groups), spring data, faces and gas bodies (with
    new ids, in order) come along; global parameters (gravity, ...), colliders and
    the contact law stay this system's. This
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
            "radii",
            "groups",
            "stiffness",
            "damping",
            "rest_lengths",
            "break_strains",
        )
    }
    offset, first_spring = self.num_nodes, self.num_springs
    pairs = other._view("springs").astype(np.int64) + offset
    tri = other._view("faces").astype(np.int64) + offset
    self._add_nodes(arrays["positions"], arrays["velocities"], arrays["masses"], arrays["pinned"])
    for name in ("external_forces", "uvs", "rest_positions", "radii", "groups"):
        self._view(name)[offset:] = arrays[name]
    self._add_springs(pairs, arrays["stiffness"], arrays["damping"], arrays["rest_lengths"])
    self._view("break_strains")[first_spring:] = arrays["break_strains"]
    self._add_faces(tri)
    for body, nrt, ambient, _volume in other._pressure_bodies():
        elements = other._pressure_elements(body).astype(np.int64) + offset
        self._add_pressure(elements, nrt, ambient)
    return np.arange(offset, offset + n, dtype=np.int64)


def connect(
    self: _core.System,
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
    return int(add_springs(self, [[i, j]], stiffness, damping, rest)[0])


def remove_nodes(self: _core.System, indices: npt.ArrayLike) -> np.ndarray:
    """Remove nodes, with every spring and face that uses them.

    The remaining nodes keep their order and are renumbered.

    Parameters
    ----------
    indices : int, array_like of int, or array_like of bool, shape (N,)
        The nodes, or a boolean mask with one entry per node (True: remove).

    Returns
    -------
    ndarray of int64, shape (N_old,)
        The new index of each old node, or -1 for a removed one.

    Raises
    ------
    ValueError
        An index out of range, or a node on a gas body's boundary (remove the body
        first with :meth:`remove_pressure`); nothing is removed.
    IndexError
        A boolean mask whose length is not the number of nodes.

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
    old_to_new = self._remove_nodes(_as_indices(indices, "indices", self.num_nodes))
    pins.forget_paths(self)  # (the kernel renumbered the drives; removed nodes stopped)
    return old_to_new


def remove_springs(self: _core.System, indices: npt.ArrayLike) -> None:
    """Remove springs by index; the remaining springs keep their order.

    Parameters
    ----------
    indices : int, array_like of int, or array_like of bool, shape (M,)
        The springs, or a boolean mask with one entry per spring (True: remove),
        such as ``sim.spring_lengths() > 2 * sim.rest_lengths``.

    Raises
    ------
    ValueError
        An index out of range (nothing is removed).
    IndexError
        A boolean mask whose length is not the number of springs.

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
    self._remove_springs(_as_indices(indices, "indices", self.num_springs, "spring"))


def bodies(self: _core.System) -> np.ndarray:
    """The body of each node: the connected pieces that springs and faces join.

    Two nodes belong to one body when a path of springs or face edges joins them;
    a node that nothing joins is a body of its own. Bodies are numbered 0, 1, ...
    in the order of their first node, so ``sim.add(other)`` numbers the added
    body after the system's own. Plots colour by it (``color_by="body"``) and
    records sum over it.

    Returns
    -------
    numpy.ndarray
        (N,) int64, a fresh array (the labels are computed, not stored).

    Examples
    --------
    >>> import springsim as ss
    >>> sim = ss.System(dim=2)
    >>> _ = sim.add_nodes([[0, 0], [1, 0], [5, 0], [6, 0], [9, 0]])
    >>> _ = sim.add_springs([[0, 1], [3, 2]], stiffness=1.0)
    >>> sim.bodies().tolist()
    [0, 0, 1, 1, 2]
    """
    n = self.num_nodes
    faces = np.asarray(self._view("faces"), dtype=np.int64)
    links = [np.asarray(self._view("springs"), dtype=np.int64).reshape(-1, 2)]
    links += [faces[:, [c, (c + 1) % faces.shape[1]]] for c in range(faces.shape[1])]
    a, b = np.concatenate(links).T if links else (np.zeros(0, np.int64),) * 2
    root = np.arange(n, dtype=np.int64)
    while True:  # every node takes the least root on its links, then jumps to its root's
        low = np.minimum(root[a], root[b])
        new = root.copy()
        np.minimum.at(new, a, low)
        np.minimum.at(new, b, low)
        np.minimum.at(new, root, new)  # a root takes what its members found
        new = new[new]
        if np.array_equal(new, root):
            break
        root = new
    return np.unique(root, return_inverse=True)[1].astype(np.int64)


def break_strain(self: _core.System) -> float | None:
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
    b = self._view("break_strains")
    if b.size == 0 or np.all(np.isinf(b)):
        return None
    if np.all(b == b[0]):
        return float(b[0])
    raise ValueError("the springs have different break strains: read break_strains")


def set_break_strain(self: _core.System, value: float | None) -> None:
    arrays.assign(
        self, "break_strains", np.inf if value is None else _scalar(value, "break_strain")
    )


def _warn_duplicates(existing: np.ndarray, pairs: np.ndarray, num_nodes: int) -> None:
    """Warn (:class:`springsim.DuplicateSpringWarning`) if any of the node ``pairs`` about
    to be added repeats the pair, in either order, of an ``existing`` spring or of an
    earlier one among ``pairs``. Pairs the kernel will refuse (an index out of range, a
    node joined to itself) are left to it.

    Each pair of int32 node indices is read as one int64 key: one sort of the new
    pairs' keys (0.1 s for the 6 million springs of a 1000 × 1000 cloth, whose build
    takes 1.2 to 1.6 s), and one pass over the existing springs comparing them with the
    few keys of a ``connect`` (about 10 ms on those 6 million springs, where adding the
    spring takes 5).
    """
    if pairs.shape[0] == 0:
        return
    if pairs.min() < 0 or pairs.max() >= num_nodes or np.any(pairs[:, 0] == pairs[:, 1]):
        return  # the kernel refuses these pairs, with its own message
    new = pairs.astype(np.int32)  # (node indices are int32)
    forward = new.view(np.int64).ravel()
    backward = np.ascontiguousarray(new[:, ::-1]).view(np.int64).ravel()
    keys = np.where(new[:, 0] < new[:, 1], forward, backward)  # the unordered pair
    # A stable sort (timsort) is ten times faster than the default on the keys builders
    # make, which come nearly in order (node by node): 2.6 against 28 ms for a 300 x 300
    # cloth's 538,000 springs on a machine without AVX-512's sort; as fast on random keys.
    ordered = np.sort(keys, kind="stable")
    repeated = bool(np.any(ordered[1:] == ordered[:-1]))
    old = np.ascontiguousarray(existing, dtype=np.int32).view(np.int64).ravel()
    if old.size and not repeated:
        repeated = bool(np.any(np.isin(old, np.concatenate([forward, backward]))))
    if not repeated:
        return
    # Which ones: a key seen earlier in this call (a stable sort keeps the first as the
    # original) or among the existing springs.
    order = np.argsort(keys, kind="stable")
    earlier = np.zeros(len(keys), dtype=bool)
    earlier[order[1:]] = keys[order[1:]] == keys[order[:-1]]
    duplicate = np.flatnonzero(earlier | np.isin(forward, old) | np.isin(backward, old))
    first = existing.shape[0]
    shown = ", ".join(f"({i}, {j})" for i, j in pairs[duplicate[:5]].tolist())
    numbers = ", ".join(map(str, (first + duplicate[:5]).tolist()))
    more = f" and {len(duplicate) - 5} more" if len(duplicate) > 5 else ""
    one = len(duplicate) == 1
    warn(
        DuplicateSpringWarning(
            f"{len(duplicate)} new spring{'' if one else 's'} (of {len(keys)}) "
            f"join{'s' if one else ''} nodes that a spring already joins: {shown}{more}, "
            f"as spring{'' if one else 's'} {numbers}{more}. Two springs on one pair act "
            "as one of their summed stiffness",
            first + duplicate,
            pairs[duplicate],
        )
    )
