"""The base of :class:`springsim.System`'s mixins: at run time a plain ``object``; for the
type checker, what the mixins may use of the class they are mixed into.

:class:`springsim.System` defines these (its array views are properties made by one
factory, its drives live in the instance dictionary); declaring them here lets each
mixin be checked on its own without importing ``System``, which imports the mixins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if not TYPE_CHECKING:
    SystemHost = object
else:
    import numpy as np
    import numpy.typing as npt

    from springsim import _core
    from springsim._drives import _Drive

    class SystemHost(_core.System):
        positions: np.ndarray
        velocities: np.ndarray
        masses: np.ndarray
        pinned: np.ndarray
        external_forces: np.ndarray
        rest_lengths: np.ndarray
        stiffness: np.ndarray
        damping: np.ndarray
        gravity: np.ndarray
        wind: np.ndarray
        uvs: np.ndarray
        rest_positions: np.ndarray
        _drives: list[_Drive]

        @property
        def springs(self) -> np.ndarray:
            raise NotImplementedError

        @property
        def faces(self) -> np.ndarray:
            raise NotImplementedError

        @property
        def break_strains(self) -> np.ndarray:
            raise NotImplementedError

        @break_strains.setter
        def break_strains(self, value: npt.ArrayLike) -> None:
            raise NotImplementedError

        def _set_drives(self, drives: list[_Drive]) -> None: ...
