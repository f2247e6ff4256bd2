"""Node–node contact in save files (format version 6) and pickles.

The entries (see the table in :mod:`springsim.io`):

``radii`` (N,) float64
    :attr:`springsim.System.radii`.
``groups`` (N,) int32
    :attr:`springsim.System.groups`.
``contact_law`` (4,) float64
    ``contact_radius``, ``contact_stiffness``, ``contact_restitution``,
    ``contact_friction``.
``contact_off`` (K, 2) int32
    The group pairs :meth:`springsim.System.set_contact` switched off, a <= b, sorted.

Files before version 6 load with no radii, every node in group 0, the default law and
every pair of groups touching.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from springsim.system import System

#: The save-format entries of node–node contact (format version 6).
TOUCH_KEYS = ("radii", "groups", "contact_law", "contact_off")


def touch_entries(sim: System) -> dict[str, np.ndarray]:
    """The contact entries of ``sim``: copies of its exact bits."""
    off = sim._contact_filter()
    return {
        "radii": np.array(sim._view("radii")),
        "groups": np.array(sim._view("groups")),
        "contact_law": np.array(sim._contact_law(), dtype=np.float64),
        "contact_off": np.array(off, dtype=np.int32).reshape(len(off), 2),
    }


def check_touch_entries(
    entry: Callable[[str], np.ndarray], rows: int, invalid: Callable[[str], ValueError]
) -> dict[str, np.ndarray]:
    """The contact entries of a version-6 file, checked for dtype and shape."""
    expected = {
        "radii": (np.float64, (rows,)),
        "groups": (np.int32, (rows,)),
        "contact_law": (np.float64, (4,)),
    }
    data = {}
    for key, (dtype, shape) in expected.items():
        value = entry(key)
        if value.dtype != dtype or value.shape != shape:
            raise invalid(
                f"entry {key!r} must be {np.dtype(dtype)} of shape {shape}, got "
                f"{value.dtype} {value.shape}"
            )
        data[key] = value
    off = entry("contact_off")
    if off.dtype != np.int32 or off.ndim != 2 or off.shape[1] != 2:
        raise invalid(f"entry 'contact_off' must be int32 of shape (K, 2), got {off.shape}")
    data["contact_off"] = off
    return data


def apply_touch_entries(sim: System, data: dict[str, np.ndarray]) -> None:
    """Give ``sim`` (built from a file) its contact settings; absent entries: defaults."""
    if "contact_law" not in data:
        return
    radius, stiffness, restitution, friction = data["contact_law"].tolist()
    sim._set_contact_law(radius, stiffness, restitution, friction)
    for key in ("radii", "groups"):  # all zero bits: left cold (no memory), as it was saved
        bits = np.ascontiguousarray(data[key])
        if np.any(bits.view(np.uint8)):  # (bits, not values: a radius of -0.0 is kept)
            sim._set_array(key, bits)
    for a, b in data["contact_off"].tolist():
        sim._set_contact_filter(int(a), int(b), False)
