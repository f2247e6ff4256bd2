"""What this build of the kernel runs: the SIMD path of its spring loop, threads, OpenMP.

The spring loop is built in a portable path and, on x86-64, in AVX2 and AVX-512 paths.
When springsim is imported it takes AVX2 if the CPU has it (the AVX-512 path measured
no faster; it runs when asked for), else the portable path. Every path computes
the same IEEE operations in the same order, so results are bit-identical whichever
runs. ``SPRINGSIM_SIMD=portable|avx2|avx512`` forces a path (for testing; a path the
CPU cannot run warns and falls back to the best one).
"""

from __future__ import annotations

import os
import warnings
from typing import Any

from springsim import _core

#: The environment variable that forces a SIMD path.
ENVIRONMENT_VARIABLE = "SPRINGSIM_SIMD"


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
    """Make the spring loop take ``path``; returns the path in use.

    Parameters
    ----------
    path : {"portable", "avx2", "avx512"} or None
        None: the default (AVX2 if the CPU has it, else portable).

    Raises
    ------
    TypeError
        ``path`` is not a str or None.
    ValueError
        An unknown path, or one this CPU cannot run.

    Examples
    --------
    >>> import springsim as ss
    >>> ss.set_simd("portable")
    'portable'
    >>> _ = ss.set_simd(None)
    """
    return _core._simd_set(path)


def build_info() -> dict[str, Any]:
    """How the kernel runs here: the SIMD path, the paths available, threads, OpenMP.

    Returns
    -------
    dict
        ``simd`` (the path in use), ``simd_paths`` (every path: available or not),
        ``threads`` (what a large system steps on), ``openmp`` (whether the kernel was
        built with OpenMP), ``simd_variable`` and ``threads_variable`` (the
        environment variables read at import, or None when unset).

    Examples
    --------
    >>> import springsim as ss
    >>> info = ss.build_info()
    >>> info["simd"] in info["simd_paths"], info["threads"] >= 1
    (True, True)
    """
    return {
        "simd": _core._simd_get(),
        "simd_paths": simd_paths(),
        "threads": _core.get_num_threads(),
        "openmp": _core.threading_available(),
        "simd_variable": os.environ.get(ENVIRONMENT_VARIABLE),
        "threads_variable": os.environ.get("SPRINGSIM_NUM_THREADS"),
    }


def _choose_simd_at_import() -> str:
    """The path ``SPRINGSIM_SIMD`` names, else the best; a bad name warns."""
    value = os.environ.get(ENVIRONMENT_VARIABLE, "").strip()
    if not value:
        return set_simd(None)
    try:
        return set_simd(value)
    except ValueError as error:
        warnings.warn(
            f"{ENVIRONMENT_VARIABLE}={value!r} ignored: {error}; using the best path",
            RuntimeWarning,
            stacklevel=3,
        )
        return set_simd(None)
