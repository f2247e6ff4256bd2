"""The builders' argument checks and the System they fill (see :mod:`springsim.builders`)."""

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


def _damping(damping: object, damping_ratio: object) -> tuple[float, float | None]:
    """(damping N·s/m, damping ratio or None): at most one of the two is given."""
    if damping is not None and damping_ratio is not None:
        raise ValueError("give damping (N·s/m) or damping_ratio, not both")
    if damping_ratio is not None:
        return 0.0, _number(damping_ratio, "damping_ratio")
    return (0.0 if damping is None else _number(damping, "damping")), None


def spring_damping(
    pairs: np.ndarray,
    stiffness: npt.ArrayLike,
    masses: np.ndarray,
    pinned: np.ndarray,
    ratio: float,
) -> np.ndarray:
    """Axial damping c = 2 ζ √(k m_eff) of each spring, N·s/m.

    m_eff is the reduced mass m_i m_j / (m_i + m_j) of the spring's two nodes, a
    pinned node counting as infinitely heavy (m_eff is then the free node's mass):
    the spring and its two nodes alone, in their relative motion, are an oscillator
    with damping ratio ζ.
    """
    m = np.asarray(masses, dtype=np.float64)
    heavy = np.zeros(len(m), dtype=bool)
    heavy[np.asarray(pinned, dtype=np.int64)] = True
    mi, mj = m[pairs[:, 0]], m[pairs[:, 1]]
    hi, hj = heavy[pairs[:, 0]], heavy[pairs[:, 1]]
    m_eff = np.where(hi & ~hj, mj, np.where(hj & ~hi, mi, mi * mj / (mi + mj)))
    k = np.broadcast_to(np.asarray(stiffness, dtype=np.float64), (len(pairs),))
    return 2.0 * ratio * np.sqrt(k * m_eff)


def _system(
    positions: np.ndarray,
    masses: npt.ArrayLike,
    pairs: np.ndarray,
    stiffness: npt.ArrayLike,
    damping: npt.ArrayLike,
    faces: np.ndarray | None = None,
    pinned: np.ndarray | Sequence[int] = (),
    damping_ratio: float | None = None,
    rest_lengths: npt.ArrayLike | None = None,
) -> System:
    """A new System holding these nodes, springs (rest = current length unless given)
    and faces; with ``damping_ratio``, each spring's damping comes from it."""
    sim = System(dim=positions.shape[1])
    sim.add_nodes(positions, masses=masses)
    if damping_ratio is not None:
        damping = spring_damping(pairs, stiffness, sim.masses, np.asarray(pinned), damping_ratio)
    if len(pairs):
        sim.add_springs(pairs, stiffness=stiffness, damping=damping, rest_lengths=rest_lengths)
    if faces is not None and len(faces):
        sim.add_faces(faces)
    if len(pinned):
        sim.pin(pinned)
    return sim
