"""The arrays of a System: zero-copy NumPy views of the kernel's memory.

Each property returns a fresh view (``sim.positions[0] = (0, 1)`` writes the kernel's
array); assigning one copies into the existing array, converted and broadcast here
and checked by the kernel. A vector quantity (a position, a velocity, gravity) takes
all its components: a scalar other than 0 is refused (see
:func:`springsim._checks._as_vectors`); a per-node or per-spring number is broadcast
(``sim.masses = 0.1``). Topology (``springs``, ``faces``) is read-only: the kernel
indexes with it unchecked, and it changes only through methods.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from springsim import _core
from springsim._checks import _as_numbers, _as_vectors


def one_kernel_call(function: Callable[..., Any]) -> Callable[..., Any]:
    """Mark ``function`` as a single call of the kernel, which waits for the System's
    lock by itself: :mod:`springsim.system` leaves it unwrapped, so that the hot view
    getters stay cheap."""
    function.__dict__["_one_kernel_call"] = True
    return function


def assign(sim: _core.System, name: str, value: npt.ArrayLike, vector: bool = False) -> None:
    """Copy ``value`` into the array ``name`` of ``sim``, converted and broadcast to its
    shape (``vector``: each row is a vector, whose components must all be given)."""
    convert = _as_vectors if vector else _as_numbers
    current = sim._view(name)
    dtype = current.dtype if current.dtype != np.bool_ else np.bool_
    sim._set_array(name, convert(value, name, dtype, current.shape))


def view(name: str, doc: str, vector: bool = False) -> property:
    """A property returning a fresh zero-copy view of the array ``name``; assignment
    copies into it (see :func:`assign`)."""

    @one_kernel_call
    def get(self: _core.System) -> np.ndarray:
        return self._view(name)

    def set(self: _core.System, value: npt.ArrayLike) -> None:
        assign(self, name, value, vector)

    return property(get, set, doc=doc)


positions = view("positions", "Node positions, (N, dim) float64, m.", vector=True)
velocities = view("velocities", "Node velocities, (N, dim) float64, m/s.", vector=True)
masses = view("masses", "Node masses, (N,) float64, kg > 0.")
pinned = view("pinned", "Pinned flags, (N,) bool.")
external_forces = view(
    "external_forces",
    "User forces, (N, dim) float64, N, added at every evaluation.",
    vector=True,
)
rest_lengths = view("rest_lengths", "Spring rest lengths, (M,) float64, m.")
stiffness = view("stiffness", "Spring stiffness, (M,) float64, N/m >= 0.")
damping = view("damping", "Axial spring damping, (M,) float64, N·s/m >= 0.")
gravity = view("gravity", "Gravitational acceleration, (dim,) float64, m/s².", vector=True)
wind = view("wind", "Wind velocity, (dim,) float64, m/s.", vector=True)
break_strains = view(
    "break_strains",
    "Per-spring tearing strain, (M,) float64 >= 0: a spring longer than (1 + b) times "
    "its rest length after a substep is cut (it pulls no more) and removed when the "
    "step call ends; inf (the default) never breaks.",
)
uvs = view("uvs", "Texture coordinates, (N, 2) float64 (zero unless set).", vector=True)
rest_positions = view(
    "rest_positions",
    "The rest shape :meth:`rigid_frame` fits against, (N, dim) float64, m; "
    "the positions the nodes were added at unless you set it.",
    vector=True,
)


@one_kernel_call
def _springs(self: _core.System) -> np.ndarray:
    """Spring node pairs, (M, 2) int32, read-only (the kernel trusts these indices)."""
    return self._view("springs")


@one_kernel_call
def _faces(self: _core.System) -> np.ndarray:
    """Triangles, (F, 3) int32, read-only; outward by the right-hand rule."""
    return self._view("faces")


springs = property(_springs, doc=_springs.__doc__)
faces = property(_faces, doc=_faces.__doc__)
