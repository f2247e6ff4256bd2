"""Argument checks shared by the System methods: arrays converted and broadcast."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


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


def _as_vectors(
    value: npt.ArrayLike, name: str, dtype: npt.DTypeLike, shape: tuple[int, ...]
) -> np.ndarray:
    """:func:`_as_numbers` for vector quantities (``shape`` ends with the vector's
    components: a position, a velocity, gravity): the value's last axis must hold them
    all, so that a scalar is not silently copied into every component. ``gravity =
    -9.81`` would otherwise become (-9.81, -9.81, -9.81); a scalar 0 is accepted (zero
    is the zero vector whichever way it is read).
    """
    array = _as_real_array(value, name)
    width = shape[-1]
    if array.ndim == 0:
        if array == 0:
            return np.zeros(shape, dtype=dtype)
        raise ValueError(
            f"{name} is a vector of {width} components: give all of them (as a sequence "
            f"of {width}), not the single number {array.item()!r} (only 0 is accepted as "
            "a scalar: the zero vector)"
        )
    if array.shape[-1] != width:
        raise ValueError(
            f"{name} must have shape {shape} (or broadcast to it with all {width} "
            f"components in its last axis), got {array.shape}"
        )
    return _as_numbers(array, name, dtype, shape)


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


def _as_indices(
    value: npt.ArrayLike, name: str = "indices", length: int | None = None, of: str = "node"
) -> np.ndarray:
    """``value`` (an int, a sequence of ints or, when ``length`` is given, a boolean mask
    of that length: one entry per ``of``) as a flat int64 array.

    A mask selects the positions of its True entries, as in NumPy; a mask of another
    length raises IndexError. Without ``length`` (node pairs, faces: structures, not
    selections) booleans are refused with TypeError.
    """
    array = np.asarray(value)
    if array.dtype == np.bool_:
        if length is None:
            raise TypeError(f"{name} must be integers, got dtype bool")
        if array.ndim != 1:
            raise TypeError(
                f"{name} must be integers or a boolean mask of shape ({length},), "
                f"got a boolean array of shape {array.shape}"
            )
        if array.shape[0] != length:
            raise IndexError(
                f"{name}: a boolean mask needs one entry per {of} ({length}), got {array.shape[0]}"
            )
        return np.flatnonzero(array).astype(np.int64)
    if array.size == 0:
        array = array.astype(np.int64)  # [] has dtype float64 but means no indices
    if array.dtype.kind not in "iu":
        raise TypeError(f"{name} must be integers, got dtype {array.dtype}")
    if array.dtype.kind == "u" and array.size and array.max() > np.iinfo(np.int64).max:
        raise ValueError(f"{name} has an index beyond any system's size: {array.max()}")
    return np.ascontiguousarray(array.reshape(-1), dtype=np.int64)
