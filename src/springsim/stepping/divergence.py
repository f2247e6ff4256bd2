"""How the divergence watch's books span several kernel calls (see
csrc/kernel/step/divergence.c).

A step call keeps energy books: the motion's kinetic + elastic energy may grow only
by what gravity, external forces, wind, gas and moving pins put in (and what the
contacts held when the books opened), and a step whose motion exceeds
:attr:`springsim.System.divergence_factor` times the most energy available raises
:class:`springsim.UnstableError`. A plain call of EVERY substeps or more keeps books of
its own; a loop of shorter plain calls keeps one set over its calls, which starts
afresh whenever something else changed the state between them
(csrc/kernel/step/divergence_calls.c); the work of driven nodes counts in both.
:meth:`springsim.System.run` makes many kernel calls of one motion, and keeps one set
of books over all of them by giving each call one of these values, which the kernel
defines (``springsim._core.BOOKS_*``), as an argument: ``sim._step_in_run(dt, steps,
method, books)``. The step's call modes are arguments, never flags left on the System.
"""

from __future__ import annotations

from springsim import _core

#: A plain call: books for this call alone when it has EVERY substeps or more, else
#: the books of the loop of short calls it belongs to.
CALL = _core.BOOKS_CALL
#: Open books that the next calls continue.
START = _core.BOOKS_START
#: Continue them; the state may have been edited since the last call (which checked
#: at its end), and the energy an edit added counts as put in.
CONTINUE = _core.BOOKS_CONTINUE
#: Flag: check at the end of this call.
CHECK_END = _core.BOOKS_CHECK_END
#: Substeps between checks.
EVERY = _core.BOOKS_EVERY
