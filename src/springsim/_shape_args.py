"""The builders' argument checks and the System they fill (see :mod:`springsim.shapes`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from springsim.system import System


def _integer(value: object, name: str, minimum: int) -> int:
    """``value`` as an int >= ``minimum``: TypeError for a non-integer, else ValueError."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def _number(value: object, name: str, positive: bool = False) -> float:
    """One finite real number, > 0 if ``positive`` else >= 0."""
    array = np.asarray(value)
    if array.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a real number, not {type(value).__name__}")
    if array.ndim != 0:
        raise ValueError(f"{name} must be a single number, got shape {array.shape}")
    number = float(array)
    if not np.isfinite(number) or number < 0 or (positive and number == 0):
        bound = "> 0" if positive else ">= 0"
        raise ValueError(f"{name} must be finite and {bound}, got {number}")
    return number


def _dimension(dim: object) -> int:
    """2 or 3."""
    dim = _integer(dim, "dim", 2)
    if dim not in (2, 3):
        raise ValueError(f"dim must be 2 or 3, got {dim}")
    return dim


def _vector(
    value: npt.ArrayLike | None,
    name: str,
    dim: int,
    default: npt.ArrayLike | None = None,
    positive: bool = False,
) -> np.ndarray:
    """A finite (dim,) float vector; a scalar is broadcast when ``positive`` (a size)."""
    if value is None:
        return np.zeros(dim) if default is None else np.array(default, dtype=np.float64)
    array = np.asarray(value)
    if array.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be real numbers, not {type(value).__name__}")
    if positive and array.ndim == 0:
        array = np.full(dim, array)
    if array.shape != (dim,):
        raise ValueError(f"{name} must have shape ({dim},), got {array.shape}")
    array = array.astype(np.float64)
    if not np.all(np.isfinite(array)) or (positive and np.any(array <= 0)):
        raise ValueError(f"{name} must be finite{' and > 0' if positive else ''}, got {array}")
    return array


def _node_masses(mass: npt.ArrayLike, count: int) -> np.ndarray:
    """Per-node masses: a scalar total spread equally, or an (count,) array taken as is.

    Raises TypeError for non-numbers and ValueError for a wrong length or a mass
    that is not finite and > 0.
    """
    m = np.asarray(mass)
    if m.dtype.kind not in "iuf":
        raise TypeError(f"mass must be a real number or an array of them, not {m.dtype}")
    m = m.astype(np.float64)
    if m.ndim == 0:
        if not np.isfinite(m) or m <= 0:
            raise ValueError(f"mass (the total, kg) must be finite and > 0, got {float(m)}")
        return np.full(count, float(m) / count)
    if m.shape != (count,):
        raise ValueError(f"per-node masses must have shape ({count},), got {m.shape}")
    if not np.all(np.isfinite(m)) or np.any(m <= 0):
        raise ValueError("per-node masses must be finite and > 0 kg")
    return m


def _pin_nodes(
    pin: str | npt.ArrayLike | None, named: dict[str, np.ndarray], count: int
) -> np.ndarray:
    """The nodes ``pin`` names: a key of ``named``, None/"none" (no node), or indices."""
    valid = ", ".join(repr(name) for name in [*named, "none"])
    if pin is None or (isinstance(pin, str) and pin == "none"):
        return np.zeros(0, dtype=np.int64)
    if isinstance(pin, str):
        if pin not in named:
            raise ValueError(f"unknown pin {pin!r}; valid: {valid}, None or node indices")
        return named[pin]
    indices = np.asarray(pin)
    if indices.size == 0:
        return np.zeros(0, dtype=np.int64)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"pin must be one of {valid}, None or node indices, not {pin!r}")
    indices = indices.reshape(-1).astype(np.int64)
    if indices.min() < 0 or indices.max() >= count:
        raise ValueError(f"pin indices must be in [0, {count}), got {indices.tolist()}")
    return indices


def _choice(value: object, name: str, valid: tuple[str, ...]) -> str:
    """One of the strings ``valid``; the error lists them."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, one of {valid}, not {value!r}")
    if value not in valid:
        raise ValueError(f"unknown {name} {value!r}; valid: {', '.join(map(repr, valid))}")
    return value


def _system(
    positions: np.ndarray,
    masses: npt.ArrayLike,
    pairs: np.ndarray,
    stiffness: npt.ArrayLike,
    damping: npt.ArrayLike,
    faces: np.ndarray | None = None,
    pinned: np.ndarray | Sequence[int] = (),
) -> System:
    """A new System holding these nodes, springs (rest = current length) and faces."""
    sim = System(dim=positions.shape[1])
    sim.add_nodes(positions, masses=masses)
    if len(pairs):
        sim.add_springs(pairs, stiffness=stiffness, damping=damping)
    if faces is not None and len(faces):
        sim.add_faces(faces)
    if len(pinned):
        sim.pin(pinned)
    return sim
