"""For the type checker only (the mixins import it under ``TYPE_CHECKING``): what the
mixins of :class:`springsim.System` may use of the class they are mixed into."""

from __future__ import annotations

from springsim import _core


class SystemHost(_core.System):
    pass
