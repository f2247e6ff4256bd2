"""How many threads the kernel steps a large system on.

Results are bit-identical for any number of threads (see ``csrc/kernel/threads/parallel.c``), so
this is only a speed setting. Systems with fewer than 8192 springs always step on
one thread: for them, starting threads costs more than it saves.
"""

from __future__ import annotations

import os
import warnings

from springsim import _core

#: The environment variable that sets the default thread count.
ENVIRONMENT_VARIABLE = "SPRINGSIM_NUM_THREADS"
#: The most threads the kernel takes.
MAX_THREADS = 4096


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def set_num_threads(n: int | None) -> int:
    """Set the number of threads the kernel uses; returns the number in effect.

    Parameters
    ----------
    n : int or None
        1 to 4096; None means the default: the environment variable
        ``SPRINGSIM_NUM_THREADS`` if it is set, else every core this process may use.
        Without OpenMP (see :func:`springsim.threading_available`) it is always 1.
        (At ``import springsim`` a bad ``SPRINGSIM_NUM_THREADS`` only warns, with a
        RuntimeWarning, and every core is used.)

    Raises
    ------
    TypeError
        ``n`` is not an int (or None).
    ValueError
        ``n`` is out of range, or the environment variable is not a whole number
        in range.

    Examples
    --------
    >>> import springsim as ss
    >>> before = ss.get_num_threads()
    >>> ss.set_num_threads(1)
    1
    >>> _ = ss.set_num_threads(before)
    """
    if n is None:
        value = os.environ.get(ENVIRONMENT_VARIABLE, "").strip()
        if not value:
            return _core.set_num_threads(_cores())
        try:
            n = int(value)
        except ValueError:
            raise ValueError(
                f"{ENVIRONMENT_VARIABLE}={value!r}: expected a whole number of threads"
            ) from None
        if not 1 <= n <= MAX_THREADS:
            raise ValueError(
                f"{ENVIRONMENT_VARIABLE}={value!r}: expected 1 to {MAX_THREADS} threads"
            )
    return _core.set_num_threads(n)


def _set_default_at_import() -> int:
    """``set_num_threads(None)``, except that a bad ``SPRINGSIM_NUM_THREADS`` warns
    (RuntimeWarning) and uses every core instead: ``import springsim`` never fails
    for it."""
    try:
        return set_num_threads(None)
    except ValueError as error:
        warnings.warn(
            f"{error}; ignoring it and using the default ({_cores()} threads)",
            RuntimeWarning,
            stacklevel=2,
        )
        return _core.set_num_threads(_cores())
