"""Files: save, OBJ export and pickling.

:class:`springsim.System` inherits these methods; this module never imports it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from springsim._files import StrPath
from springsim._system_host import SystemHost

if TYPE_CHECKING:
    from springsim.system import System


class FilesMixin(SystemHost):
    """Files: save, OBJ export and pickling."""

    def __reduce__(
        self,
    ) -> tuple[Callable[..., System], tuple[type[System], dict[str, np.ndarray], dict[str, Any]]]:
        # Pickle as the save format's arrays (pickle protocol 5 ships them as buffers,
        # the energy books and crossing count among them) plus what the file does not
        # hold: drives that follow a function.
        from springsim import io
        from springsim._drive_files import check_picklable

        sim = cast("System", self)  # (a mixin: self is always a System)
        io._check_savable(sim, "this System")
        drives = self.__dict__.get("_drives")
        check_picklable(drives or [])
        extras = {"drives": drives}
        return (_unpickle, (type(sim), io.state_arrays(sim, drives=False), extras))

    def save(self, path: StrPath) -> None:
        """Save every array and parameter to a ``.npz`` file; see :func:`springsim.load`.

        Drives (:meth:`drive`) whose paths are arrays of targets, and the drags of
        :meth:`pin` ``(velocity=...)``, are kept; a drive that follows a function
        cannot be, and ``save`` warns (UserWarning) naming it: the loaded system holds
        those nodes still.
        """
        from springsim import io

        io.save(cast("System", self), path)

    def write_obj(self, path: StrPath) -> None:
        """Write positions, uvs and faces as a Wavefront OBJ (opens in Blender, MeshLab)."""
        from springsim import io

        io.write_obj(self, path)


def _unpickle(cls: type[System], arrays: dict[str, np.ndarray], extras: dict[str, Any]) -> System:
    """Rebuild a pickled System (see System.__reduce__)."""
    from springsim import io

    sim = io.system_from_arrays(arrays, "pickled System", cls)
    if "dissipated" in extras:  # pickles of format 6 kept the books here
        sim.dissipated = extras["dissipated"]
        sim.track_energy = extras["track_energy"]
    if extras["drives"]:
        sim._set_drives(extras["drives"])
    return sim
