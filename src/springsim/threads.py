"""How many threads the kernel steps a large system on.

Results are bit-identical for any number of threads (see ``csrc/parallel.c``), so
this is only a speed setting. Systems with fewer than 8192 springs always step on
one thread: for them, starting threads costs more than it saves.
"""

from __future__ import annotations

import os

from springsim import _core

#: The environment variable that sets the default thread count.
ENVIRONMENT_VARIABLE = "SPRINGSIM_NUM_THREADS"


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
    return _core.set_num_threads(n)
