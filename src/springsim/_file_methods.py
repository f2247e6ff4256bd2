"""Files: save, OBJ export and pickling.

:class:`springsim.System` inherits these methods; this module never imports it.
"""

from __future__ import annotations


class FilesMixin:
    """Files: save, OBJ export and pickling."""

    def __reduce__(self):
        # Pickle as the save format's arrays (pickle protocol 5 ships them as buffers)
        # plus what the file does not hold: the energy bookkeeping and driven nodes.
        from springsim import io

        io._check_savable(self, "this System")
        extras = {
            "dissipated": self.dissipated,
            "track_energy": self.track_energy,
            "drives": self.__dict__.get("_drives"),
        }
        return (_unpickle, (type(self), io.state_arrays(self), extras))

    def save(self, path) -> None:
        """Save every array and parameter to a ``.npz`` file; see :func:`springsim.load`."""
        from springsim import io

        io.save(self, path)

    def write_obj(self, path) -> None:
        """Write positions, uvs and faces as a Wavefront OBJ (opens in Blender, MeshLab)."""
        from springsim import io

        io.write_obj(self, path)


def _unpickle(cls, arrays: dict, extras: dict) -> FilesMixin:
    """Rebuild a pickled System (see System.__reduce__)."""
    from springsim import io

    sim = io.system_from_arrays(arrays, "pickled System", cls)
    sim.dissipated = extras["dissipated"]
    sim.track_energy = extras["track_energy"]
    if extras["drives"]:
        sim._set_drives(extras["drives"])
    return sim
