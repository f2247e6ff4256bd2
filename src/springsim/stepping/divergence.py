"""How the divergence watch's books span several kernel calls (see
csrc/kernel/step/divergence.c).

A step call keeps energy books: the motion's kinetic + elastic energy may grow only
by what gravity, external forces, wind, gas and moving pins put in (and what the
contacts held when the books opened), and a step whose motion exceeds
:attr:`springsim.System.divergence_factor` times the most energy available raises
:class:`springsim.UnstableError`. A plain call of EVERY substeps or more keeps books of
its own; a loop of shorter plain calls keeps one set over its calls, which starts
afresh whenever something else changed the state between them
(csrc/kernel/step/divergence_calls.c). :meth:`springsim.System.run` and a step with
driven nodes make many kernel calls of one motion, and keep one set of books over all
of them by setting ``sim._books`` (the kernel resets it after every call) to one of
these values, which the kernel defines (``springsim._core.BOOKS_*``).
"""

from __future__ import annotations

from collections.abc import Iterator

from springsim import _core

#: A plain call: books for this call alone when it has EVERY substeps or more, else
#: the books of the loop of short calls it belongs to.
CALL = _core.BOOKS_CALL
#: Open books that the next calls continue.
START = _core.BOOKS_START
#: Continue them; the state may have been edited since the last call (which checked
#: at its end), and the energy an edit added counts as put in.
CONTINUE = _core.BOOKS_CONTINUE
#: Continue them; only driven (pinned) nodes were placed since the last call.
EXACT = _core.BOOKS_EXACT
#: Flag: check at the end of this call.
CHECK_END = _core.BOOKS_CHECK_END
#: Substeps between checks.
EVERY = _core.BOOKS_EVERY


def substep_books(books: int, steps: int) -> Iterator[int]:
    """The books mode of each of ``steps`` one-substep calls that make one call made
    with mode ``books``: the first opens or continues the books as ``books`` says, the
    others continue exactly, and the last checks at its end when the call would have.

    >>> list(substep_books(CALL, 3))  # too short for books of its own, as one call
    [0, 0, 0]
    >>> modes = list(substep_books(CALL, EVERY))
    >>> modes[0], modes[1], modes[-1] == EXACT | CHECK_END
    (1, 3, True)
    >>> list(substep_books(CONTINUE | CHECK_END, 2)) == [CONTINUE, EXACT | CHECK_END]
    True
    """
    mode, check_end = books & 3, books & CHECK_END
    if mode == CALL:
        if steps < EVERY:
            yield from (CALL for _ in range(steps))
            return
        mode, check_end = START, CHECK_END
    for k in range(steps):
        yield (mode if k == 0 else EXACT) | (check_end if k == steps - 1 else 0)
