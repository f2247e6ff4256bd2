"""What this build of the kernel runs: the SIMD path of its loops, threads, OpenMP.

The spring loop is built in a portable path and, on x86-64, in AVX2 and AVX-512 paths;
the node pass, RK4's stages and XPBD's solve in a portable and an AVX2 path. One path
is in use for the whole process, and every one of these loops follows it. Unless
``SPRINGSIM_SIMD`` or :func:`set_simd` names one, it is chosen on first use (the first
step, or :func:`build_info`; not at import) by a short measurement, once per process:
the kernel times every available path on a small cloth-like set of springs (2,202
springs, about 1.5 ms in all), interleaved, and takes the fastest median, a near-tie
(within 3 %) going to the simpler path. Every path computes the same IEEE operations
in the same order, so results are bit-identical whichever runs: the choice changes
only the speed. ``SPRINGSIM_SIMD=portable|avx2|avx512`` forces a path (no measurement
then; a path the CPU cannot run warns at import and is ignored).
"""

from __future__ import annotations

import os
import warnings
from typing import Any

from springsim import _core

#: The environment variable that forces a SIMD path.
ENVIRONMENT_VARIABLE = "SPRINGSIM_SIMD"

#: How :func:`build_info` words the kernel's account of the choice.
CHOICES = {
    "measured": "measured",
    "forced": f"forced by {ENVIRONMENT_VARIABLE}",
    "set": "set",
    "only": "the only path",
    "unmeasured": "not measured (no memory for it): the portable path",
}


def simd_paths() -> dict[str, bool]:
    """Every SIMD path of the spring loop, and whether this CPU and build can run it.

    Examples
    --------
    >>> import springsim as ss
    >>> ss.simd_paths()["portable"]
    True
    """
    return _core._simd_paths()


def set_simd(path: str | None) -> str:
    """Make the kernel's loops take the SIMD path ``path``; returns the path in use.

    Every path gives the same bits, so this changes only the speed.

    Parameters
    ----------
    path : {"portable", "avx2", "avx512"} or None
        None: the default, the path ``SPRINGSIM_SIMD`` names if it is set, else the
        measured fastest (measured now, a few milliseconds, if no step has run yet).

    Raises
    ------
    TypeError
        ``path`` is not a str or None.
    ValueError
        An unknown path, or one this CPU cannot run (also for ``None`` when
        ``SPRINGSIM_SIMD`` names one).

    Examples
    --------
    >>> import springsim as ss
    >>> ss.set_simd("portable")
    'portable'
    >>> ss.build_info()["simd_choice"]
    'set'
    >>> _ = ss.set_simd(None)
    """
    if path is not None:
        return _core._simd_set(path)
    value = os.environ.get(ENVIRONMENT_VARIABLE, "").strip()
    if not value:
        return _core._simd_set(None)
    try:
        return _core._simd_set(value, True)
    except ValueError as error:
        raise ValueError(f"{ENVIRONMENT_VARIABLE}={value!r}: {error}") from None


def build_info() -> dict[str, Any]:
    """How the kernel runs here: the SIMD path and how it was chosen, threads, OpenMP.

    If no step has run yet and no path was forced or set, this makes the choice (the
    measurement described in the guide's "Speed and threads", a few milliseconds).

    Returns
    -------
    dict
        ``simd`` (the path in use), ``simd_choice`` (how it was chosen: "measured",
        "forced by SPRINGSIM_SIMD", "set" by :func:`set_simd`, or "the only path"
        this CPU and build have), ``simd_ns_per_spring`` (the measurement: each
        available path's median ns per spring, or None if no measurement ran),
        ``simd_measurement_ms`` (the thread CPU time it took, or None),
        ``simd_paths`` (every path: available or not), ``threads`` (what a large
        system steps on), ``openmp`` (whether the kernel was built with OpenMP),
        ``simd_variable`` and ``threads_variable`` (the environment variables, or
        None when unset).

    Examples
    --------
    >>> import springsim as ss
    >>> info = ss.build_info()
    >>> info["simd"] in info["simd_paths"], info["threads"] >= 1
    (True, True)
    >>> measured = info["simd_ns_per_spring"]
    >>> measured is None or set(measured) == {p for p, ok in ss.simd_paths().items() if ok}
    True
    """
    path = _core._simd_get()  # chooses, if not yet
    choice = _core._simd_choice()
    seconds = choice["seconds"]
    return {
        "simd": path,
        "simd_choice": CHOICES[choice["how"]],
        "simd_ns_per_spring": choice["ns_per_spring"],
        "simd_measurement_ms": None if seconds is None else seconds * 1e3,
        "simd_paths": simd_paths(),
        "threads": _core.get_num_threads(),
        "openmp": _core.threading_available(),
        "simd_variable": os.environ.get(ENVIRONMENT_VARIABLE),
        "threads_variable": os.environ.get("SPRINGSIM_NUM_THREADS"),
    }


def _choose_simd_at_import() -> str | None:
    """Force the path ``SPRINGSIM_SIMD`` names, if set (a bad name warns and is
    ignored); else choose nothing: the first use measures. Returns the forced path."""
    value = os.environ.get(ENVIRONMENT_VARIABLE, "").strip()
    if not value:
        return None
    try:
        return _core._simd_set(value, True)
    except ValueError as error:
        warnings.warn(
            f"{ENVIRONMENT_VARIABLE}={value!r} ignored: {error}; the path will be measured",
            RuntimeWarning,
            stacklevel=3,
        )
        return None
