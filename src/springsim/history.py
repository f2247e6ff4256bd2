"""What a run recorded: :class:`History`, plain NumPy arrays you can plot."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import pandas as pd

#: The energy terms a History records, in the order of :class:`springsim.Energy`.
ENERGY_TERMS = ("kinetic", "elastic", "gravity", "pressure")


class History:
    """The record of one :meth:`springsim.System.run`: times, energies, momentum, frames.

    Every attribute is a NumPy array (or a plain value); a History pickles cheaply
    (its arrays as buffers) and exactly.

    Attributes
    ----------
    times : ndarray, shape (R,)
        Simulation time of each record, s; the first is the run's start.
    kinetic, elastic, gravity, pressure : ndarray, shape (R,)
        The terms of :meth:`springsim.System.energy` at each record, J.
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
        Times of the position frames, s.
    frames : ndarray, shape (F, len(frame_nodes), dim)
        Positions of ``frame_nodes`` at ``frame_times``, m.
    frame_nodes : ndarray of int64
        The nodes the frames show (all by default).
    edges : ndarray of int32, shape (M, 2)
        The springs at the start of the run, in ``frame_nodes`` numbering (for drawing
        frames; springs to nodes outside ``frame_nodes`` are left out).
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
    ) -> None:
        self.times = np.asarray(times, dtype=np.float64)
        self.kinetic = np.asarray(kinetic, dtype=np.float64)
        self.elastic = np.asarray(elastic, dtype=np.float64)
        self.gravity = np.asarray(gravity, dtype=np.float64)
        self.pressure = np.asarray(pressure, dtype=np.float64)
        self.dissipated = np.asarray(dissipated, dtype=np.float64)
        self.momentum = np.asarray(momentum, dtype=np.float64).reshape(len(self.times), dim)
        self.frame_times = np.asarray(frame_times, dtype=np.float64)
        self.frame_nodes = np.asarray(frame_nodes, dtype=np.int64)
        self.frames = np.asarray(frames, dtype=np.float64).reshape(
            len(self.frame_times), len(self.frame_nodes), dim
        )
        self.edges = np.asarray(edges, dtype=np.int32).reshape(-1, 2)
        self.dim = int(dim)
        self.dt = float(dt)
        self.method = str(method)
        self.steps = int(steps)
        self.interrupted = bool(interrupted)

    @property
    def total(self) -> np.ndarray:
        """kinetic + elastic + gravity + pressure at each record, J."""
        return self.kinetic + self.elastic + self.gravity + self.pressure

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
                "frame_nodes",
                "edges",
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


def _same(a: npt.ArrayLike, b: npt.ArrayLike) -> bool:
    """Equal values, NaN equal to NaN (a blown-up record equals its copy)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "f" and b.dtype.kind == "f":
        return np.array_equal(a, b, equal_nan=True)
    return np.array_equal(a, b)


def _rebuild(arrays: dict[str, Any]) -> History:
    return History(**arrays)
