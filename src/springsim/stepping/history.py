"""What a run recorded: :class:`History`, plain NumPy arrays you can plot."""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from springsim.files import vtk
from springsim.files.paths import StrPath
from springsim.viewer.standalone import save_history_html

if TYPE_CHECKING:
    import pandas as pd

#: The energy terms a History records, in the order of :class:`springsim.Energy`.
ENERGY_TERMS = ("kinetic", "elastic", "gravity", "pressure", "contact")


class History:
    """The record of one :meth:`springsim.System.run`: times, energies, momentum, frames.

    Every attribute is a NumPy array (or a plain value); a History pickles cheaply
    (its arrays as buffers) and exactly.

    Attributes
    ----------
    times : ndarray, shape (R,)
        Simulation time of each record, s; the first is the run's start.
    kinetic, elastic, gravity, pressure, contact : ndarray, shape (R,)
        The terms of :meth:`springsim.System.energy` at each record, J (``contact``: 0
        in a History pickled before it was recorded).
    dissipated : ndarray, shape (R,)
        Energy taken out of the motion since the run started, J: by spring damping,
        drag and the air on faces (trapezoid rule on their power), ``energy_loss`` and
        contacts. For a system
        without external forces, ``total + dissipated`` stays constant up to the
        integrator's error (the strain limit's corrections are not counted, nor the
        work of colliders moved between steps).
    momentum : ndarray, shape (R, dim)
        Σ m v at each record, kg·m/s.
    frame_times : ndarray, shape (F,)
        Times of the frames, s.
    frames : ndarray, shape (F, len(frame_nodes), dim)
        Positions of ``frame_nodes`` at ``frame_times``, m.
    frame_velocities : ndarray, shape (F, len(frame_nodes), dim)
        Their velocities, m/s.
    frame_pinned : ndarray of bool, shape (F, len(frame_nodes))
        Which of them were pinned.
    frame_nodes : ndarray of int64
        The nodes the frames show (all by default).
    edges : ndarray of int32, shape (M, 2)
        The springs at the start of the run, in ``frame_nodes`` numbering (for drawing
        frames; springs to nodes outside ``frame_nodes`` are left out).
    frame_tensions : ndarray, shape (F, M)
        The signed tension of each of ``edges`` at each frame, N, as
        :meth:`springsim.System.spring_tensions` gives it (k (l − L) plus the axial
        damping force; positive pulls its ends together); NaN once the spring is gone
        (torn, or removed by the callback).
    frame_strains : ndarray, shape (F, M)
        Their strains l/L − 1 (0 for a spring of rest length 0), NaN once gone.
    faces : ndarray of int32, shape (G, 3)
        The triangles at the start of the run whose corners are all in
        ``frame_nodes``, in ``frame_nodes`` numbering.
    colliders : ndarray, shape (K, dim + 2)
        The planes and spheres at the start of the run, one row each: the kind (0 a
        plane, 1 a sphere), the normal or the centre (dim numbers), then the offset or
        the radius, m.
    collider_triangles : ndarray, shape (T, 3, dim)
        The boxes, capsules and mesh colliders at the start of the run, as triangles
        (for drawing: a mesh's own faces, a box's sides, a tessellated capsule), m.
    radii : ndarray, shape (len(frame_nodes),)
        The contact radii of ``frame_nodes`` at the start of the run, m (0: none).
    dim : int
        2 or 3.
    dt : float
        The substep, s.
    method : str
        The integrator.
    steps : int
        Substeps done.
    interrupted : bool
        True if the run was stopped early (Ctrl-C, or the callback asked).

    Examples
    --------
    >>> import springsim as ss
    >>> sim = ss.string(10, length=1.0, mass=0.1, stiffness=50.0, damping=0.01)
    >>> h = sim.run(1.0, dt=1e-3, method="rk4", record_every=100, frames=5, progress=False)
    >>> len(h), h.frames.shape, round(float(h.times[-1]), 6)
    (11, (5, 10, 3), 1.0)
    >>> h.frame_velocities.shape, h.frame_tensions.shape  # 9 springs at 5 frames
    ((5, 10, 3), (5, 9))
    >>> books = h.total + h.dissipated - h.total[0]  # what damping took is accounted for
    >>> bool(abs(books).max() < 1e-4 * abs(h.total).max())
    True
    """

    def __init__(
        self,
        *,
        times: npt.ArrayLike,
        kinetic: npt.ArrayLike,
        elastic: npt.ArrayLike,
        gravity: npt.ArrayLike,
        pressure: npt.ArrayLike,
        dissipated: npt.ArrayLike,
        momentum: npt.ArrayLike,
        frame_times: npt.ArrayLike,
        frames: npt.ArrayLike,
        frame_nodes: npt.ArrayLike,
        edges: npt.ArrayLike,
        dim: int,
        dt: float,
        method: str,
        steps: int,
        interrupted: bool,
        frame_velocities: npt.ArrayLike | None = None,
        frame_pinned: npt.ArrayLike | None = None,
        frame_tensions: npt.ArrayLike | None = None,
        frame_strains: npt.ArrayLike | None = None,
        faces: npt.ArrayLike | None = None,
        colliders: npt.ArrayLike | None = None,
        collider_triangles: npt.ArrayLike | None = None,
        contact: npt.ArrayLike | None = None,
        radii: npt.ArrayLike | None = None,
    ) -> None:
        # (The last seven are optional so that a History pickled before they were
        # recorded still loads: its velocities, tensions and strains unknown (NaN).)
        self.times = np.asarray(times, dtype=np.float64)
        self.kinetic = np.asarray(kinetic, dtype=np.float64)
        self.elastic = np.asarray(elastic, dtype=np.float64)
        self.gravity = np.asarray(gravity, dtype=np.float64)
        self.pressure = np.asarray(pressure, dtype=np.float64)
        # (contact and radii: absent from Histories pickled before node-node contact)
        self.contact = np.asarray(
            np.zeros(len(self.times)) if contact is None else contact, dtype=np.float64
        )
        self.dissipated = np.asarray(dissipated, dtype=np.float64)
        self.momentum = np.asarray(momentum, dtype=np.float64).reshape(len(self.times), dim)
        self.frame_times = np.asarray(frame_times, dtype=np.float64)
        self.frame_nodes = np.asarray(frame_nodes, dtype=np.int64)
        self.frames = np.asarray(frames, dtype=np.float64).reshape(
            len(self.frame_times), len(self.frame_nodes), dim
        )
        self.edges = np.asarray(edges, dtype=np.int32).reshape(-1, 2)
        shape, per_edge = self.frames.shape, (len(self.frame_times), len(self.edges))
        self.frame_velocities = _or_nan(frame_velocities, shape)
        self.frame_pinned = (
            np.zeros(shape[:2], dtype=bool)
            if frame_pinned is None
            else np.asarray(frame_pinned, dtype=bool).reshape(shape[:2])
        )
        self.frame_tensions = _or_nan(frame_tensions, per_edge)
        self.frame_strains = _or_nan(frame_strains, per_edge)
        self.faces = np.asarray([] if faces is None else faces, dtype=np.int32).reshape(-1, 3)
        self.colliders = np.asarray(
            [] if colliders is None else colliders, dtype=np.float64
        ).reshape(-1, dim + 2)
        self.collider_triangles = np.asarray(
            [] if collider_triangles is None else collider_triangles, dtype=np.float64
        ).reshape(-1, 3, dim)
        self.radii = np.asarray(
            np.zeros(len(self.frame_nodes)) if radii is None else radii, dtype=np.float64
        ).reshape(len(self.frame_nodes))
        self.dim = int(dim)
        self.dt = float(dt)
        self.method = str(method)
        self.steps = int(steps)
        self.interrupted = bool(interrupted)

    @property
    def total(self) -> np.ndarray:
        """kinetic + elastic + gravity + pressure + contact at each record, J."""
        return self.kinetic + self.elastic + self.gravity + self.pressure + self.contact

    def __len__(self) -> int:
        return len(self.times)

    def to_dataframe(self) -> pd.DataFrame:
        """The records as a pandas DataFrame (needs pandas): one row per record, columns
        time, each energy term, total, dissipated and momentum_x/y(/z)."""
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - pandas comes with the [test] extra
            raise ImportError("to_dataframe() needs pandas: pip install pandas") from None
        columns = {"time": self.times}
        columns.update({term: getattr(self, term) for term in ENERGY_TERMS})
        columns.update(total=self.total, dissipated=self.dissipated)
        for axis, name in enumerate("xyz"[: self.dim]):
            columns[f"momentum_{name}"] = self.momentum[:, axis]
        return pd.DataFrame(columns)

    def write_vtk(self, path: StrPath, faces: bool = False) -> list[str]:
        """Write the frames as a ParaView time series: a ``.pvd`` index and one VTK
        PolyData file per frame; see :func:`springsim.io.write_vtk`."""
        return vtk.write_vtk(self, path, faces=faces)

    def save_html(self, path: StrPath) -> pathlib.Path:
        """Write a standalone HTML file that plays the frames offline (the live viewer's
        drawing, no network needed); see
        :func:`springsim.viewer.standalone.save_history_html`.

        Examples
        --------
        >>> import pathlib, tempfile
        >>> import springsim as ss
        >>> rope = ss.string(5, length=1.0, mass=0.05, stiffness=50.0, dim=2)
        >>> history = rope.run(1.0, 1e-3, frames=31, progress=False)
        >>> history.save_html(pathlib.Path(tempfile.mkdtemp()) / "run.html").name
        'run.html'
        """
        return save_history_html(self, path)

    def _arrays(self) -> dict[str, Any]:
        return {
            name: getattr(self, name)
            for name in (
                "times",
                *ENERGY_TERMS,
                "dissipated",
                "momentum",
                "frame_times",
                "frames",
                "frame_velocities",
                "frame_pinned",
                "frame_nodes",
                "edges",
                "frame_tensions",
                "frame_strains",
                "faces",
                "colliders",
                "collider_triangles",
                "radii",
                "dim",
                "dt",
                "method",
                "steps",
                "interrupted",
            )
        }

    def __reduce__(self) -> tuple[Callable[[dict[str, Any]], History], tuple[dict[str, Any]]]:
        return (_rebuild, (self._arrays(),))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, History):
            return NotImplemented
        mine, theirs = self._arrays(), other._arrays()
        return all(_same(mine[k], theirs[k]) for k in mine)

    __hash__ = None  # type: ignore[assignment]  # equal by value, and mutable

    def __repr__(self) -> str:
        end = self.times[-1] if len(self.times) else float("nan")
        return (
            f"<springsim.History {len(self)} records to t={end:g}s, {len(self.frame_times)} "
            f"frames, method={self.method!r}, dt={self.dt:g}s"
            f"{', interrupted' if self.interrupted else ''}>"
        )


def _or_nan(values: npt.ArrayLike | None, shape: tuple[int, ...]) -> np.ndarray:
    """``values`` as float64 of ``shape``, or NaN (not recorded) if None."""
    if values is None:
        return np.full(shape, np.nan)
    return np.asarray(values, dtype=np.float64).reshape(shape)


def _same(a: npt.ArrayLike, b: npt.ArrayLike) -> bool:
    """Equal values, NaN equal to NaN (a blown-up record equals its copy)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "f" and b.dtype.kind == "f":
        return np.array_equal(a, b, equal_nan=True)
    return np.array_equal(a, b)


def _rebuild(arrays: dict[str, Any]) -> History:
    return History(**arrays)
