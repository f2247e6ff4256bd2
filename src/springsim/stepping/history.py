"""What a run recorded: :class:`History`, plain NumPy arrays you can plot."""

from __future__ import annotations

import csv
import io
import pathlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from springsim.files import vtk
from springsim.files.paths import StrPath, path_name, write_atomically
from springsim.stepping.probes import BODY_FIGURES, BODY_SCALARS, BODY_VECTORS
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
    spring_ids : ndarray of int64, shape (S,)
        The springs ``springs=`` probed (their indices at the start of the run).
    spring_lengths, spring_tensions : ndarray, shape (F, S)
        Their lengths (m) and signed tensions (N, as ``frame_tensions``) at each
        frame; NaN once gone. :meth:`spring` reads one.
    body_members, body_offsets : ndarray of int64
        The bodies ``bodies=`` probed: body b is the nodes
        ``body_members[body_offsets[b]:body_offsets[b + 1]]``.
    body_mass, body_kinetic, body_bulk_kinetic, body_internal_kinetic, body_elastic, \
body_gravity : ndarray, shape (F, B)
        Each body's mass M = Σ m (kg) and energies (J) at each frame: kinetic ½ Σ m |v|²,
        bulk ½ M |v_cm|² (v_cm = p / M), internal ½ Σ m |v − v_cm|² (kinetic − bulk),
        elastic ½ Σ k (l − L)² of the springs with both ends in the body (rigid rods:
        0), gravity −Σ m g·x. Pinned and driven nodes count, as in
        :meth:`springsim.System.energy`; springs to other bodies, contacts and gas do
        not. :meth:`body` reads one.
    body_momentum, body_center_of_mass : ndarray, shape (F, B, dim)
        Each body's momentum p = Σ m v (kg·m/s) and centre of mass Σ m x / M (m).
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
        Substeps done, the shortened ones that end on a frame time included.
    interrupted : bool
        True if the run was stopped early (Ctrl-C, or the callback asked).

    Examples
    --------
    >>> import springsim as ss
    >>> sim = ss.string(10, length=1.0, mass=0.1, stiffness=50.0, damping=0.01)
    >>> h = sim.run(1.0, dt=1e-3, method="rk4", record_every=100, frames=5, progress=False)
    >>> len(h), h.frames.shape, round(float(h.times[-1]), 6)  # every 100 steps, and frames
    (13, (5, 10, 3), 1.0)
    >>> h.frame_velocities.shape, h.frame_tensions.shape  # 9 springs at 5 frames
    ((5, 10, 3), (5, 9))
    >>> books = h.total + h.dissipated - h.total[0]  # what damping took is accounted for
    >>> bool(abs(books).max() < 1e-4 * abs(h.total).max())
    True
    """

    body_mass: np.ndarray
    body_kinetic: np.ndarray
    body_bulk_kinetic: np.ndarray
    body_internal_kinetic: np.ndarray
    body_elastic: np.ndarray
    body_gravity: np.ndarray
    body_momentum: np.ndarray
    body_center_of_mass: np.ndarray

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
        spring_ids: npt.ArrayLike | None = None,
        spring_lengths: npt.ArrayLike | None = None,
        spring_tensions: npt.ArrayLike | None = None,
        body_members: npt.ArrayLike | None = None,
        body_offsets: npt.ArrayLike | None = None,
        **body_figures: npt.ArrayLike,
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
        # The probes (absent from Histories pickled before they were recorded: none).
        frames_count = len(self.frame_times)
        self.spring_ids = np.asarray(
            [] if spring_ids is None else spring_ids, dtype=np.int64
        ).reshape(-1)
        per_spring = (frames_count, len(self.spring_ids))
        self.spring_lengths = _or_nan(spring_lengths, per_spring)
        self.spring_tensions = _or_nan(spring_tensions, per_spring)
        self.body_members = np.asarray(
            [] if body_members is None else body_members, dtype=np.int64
        ).reshape(-1)
        self.body_offsets = np.asarray(
            [0] if body_offsets is None else body_offsets, dtype=np.int64
        ).reshape(-1)
        count = len(self.body_offsets) - 1
        unknown = set(body_figures) - {f"body_{name}" for name in BODY_FIGURES}
        if unknown:
            raise TypeError(f"History got unexpected arguments: {', '.join(sorted(unknown))}")
        for name in BODY_FIGURES:
            figure = (frames_count, count, dim) if name in BODY_VECTORS else (frames_count, count)
            setattr(self, f"body_{name}", _or_nan(body_figures.get(f"body_{name}"), figure))
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

    def node(self, index: int) -> NodeRecord:
        """The frames of one node: its times, positions and velocities.

        Parameters
        ----------
        index : int
            The node's index in the system (one of ``frame_nodes``).

        Returns
        -------
        NodeRecord
            ``times`` (F,), ``positions`` and ``velocities`` (F, dim), ``pinned`` (F,):
            views into this History's frames, no copy.

        Raises
        ------
        ValueError
            The node is not in ``frame_nodes``.

        Examples
        --------
        >>> import springsim as ss
        >>> sim = ss.string(5, length=1.0, mass=0.1, stiffness=50.0, dim=2)
        >>> h = sim.run(0.5, dt=1e-3, frames=6, progress=False)
        >>> tip = h.node(4)
        >>> tip.positions.shape, tip.velocities.shape, round(float(tip.times[-1]), 12)
        ((6, 2), (6, 2), 0.5)
        """
        column = _position(self.frame_nodes, index, "node", "frame_nodes", "frame_nodes=")
        return NodeRecord(
            index=int(self.frame_nodes[column]),
            times=self.frame_times,
            positions=self.frames[:, column],
            velocities=self.frame_velocities[:, column],
            pinned=self.frame_pinned[:, column],
        )

    def spring(self, index: int) -> SpringRecord:
        """The frames of one probed spring (``run(..., springs=[...])``): its length and
        tension at each frame.

        Parameters
        ----------
        index : int
            The spring's index at the start of the run (one of ``spring_ids``).

        Returns
        -------
        SpringRecord
            ``times`` (F,), ``lengths`` (m) and ``tensions`` (N; positive pulls its
            ends together) (F,), NaN once the spring is gone: views, no copy.

        Raises
        ------
        ValueError
            The spring was not probed.

        Examples
        --------
        >>> import springsim as ss
        >>> sim = ss.string(5, length=1.0, mass=0.1, stiffness=50.0, dim=2)
        >>> h = sim.run(0.5, dt=1e-3, frames=6, springs=[0], progress=False)
        >>> top = h.spring(0)
        >>> bool(top.tensions[-1] > 0), top.lengths.shape  # it holds the string up
        (True, (6,))
        """
        column = _position(self.spring_ids, index, "spring", "spring_ids", "springs=")
        return SpringRecord(
            index=int(self.spring_ids[column]),
            times=self.frame_times,
            lengths=self.spring_lengths[:, column],
            tensions=self.spring_tensions[:, column],
        )

    def body(self, index: int) -> BodyRecord:
        """The frames of one probed body (``run(..., bodies=...)``): its mass,
        momentum, centre of mass and energies at each frame.

        Parameters
        ----------
        index : int
            The body's number, 0 to B − 1 (B: the bodies probed).

        Returns
        -------
        BodyRecord
            ``nodes``, ``times``, ``mass``, ``momentum`` (F, dim),
            ``center_of_mass`` (F, dim), ``kinetic``, ``bulk_kinetic``,
            ``internal_kinetic``, ``elastic``, ``gravity`` and their sum ``energy``
            (F,); see the attributes ``body_*`` above for what each counts.

        Raises
        ------
        ValueError
            No such body.

        Examples
        --------
        A ball thrown up: its momentum changes by M g t, its bulk kinetic energy is
        ½ M |v_cm|²:

        >>> import numpy as np
        >>> import springsim as ss
        >>> ball = ss.ball(radius=0.1, mass=0.5, stiffness=500.0, dim=2, nodes=8)
        >>> ball.velocities = [1.0, 3.0]
        >>> h = ball.run(0.2, dt=1e-3, method="rk4", frames=5, bodies=True, progress=False)
        >>> b = h.body(0)
        >>> p = b.mass[:, None] * (np.array([1.0, 3.0]) + np.outer(b.times, ball.gravity))
        >>> bool(np.allclose(b.momentum, p, rtol=1e-9)), bool(b.internal_kinetic.max() < 1e-20)
        (True, True)
        """
        count = len(self.body_offsets) - 1
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise TypeError(f"index must be an int, not {type(index).__name__}")
        if not 0 <= index < count:
            raise ValueError(
                f"body {index} was not recorded: this run probed {count} bodies"
                + ("" if count else " (run(..., frames=F, bodies=True) records them)")
            )
        first, end = self.body_offsets[index], self.body_offsets[index + 1]
        return BodyRecord(
            nodes=self.body_members[first:end],
            times=self.frame_times,
            **{name: getattr(self, f"body_{name}")[:, index] for name in BODY_FIGURES},
        )

    def _table(self, nodes: npt.ArrayLike | None) -> dict[str, np.ndarray]:
        """The columns of :meth:`to_dataframe`, in order, one value per record."""
        axes = "xyz"[: self.dim]
        columns: dict[str, np.ndarray] = {"time": self.times}
        columns.update({term: getattr(self, term) for term in ENERGY_TERMS})
        columns.update(total=self.total, dissipated=self.dissipated)
        for axis, name in enumerate(axes):
            columns[f"momentum_{name}"] = self.momentum[:, axis]
        # Each frame is a record: its row is the record at its time (a History pickled
        # before frames were records may have frames at no record: left out).
        rows = np.searchsorted(self.times, self.frame_times)
        on_row = rows < len(self.times)
        on_row[on_row] = self.times[rows[on_row]] == self.frame_times[on_row]
        rows, frames = rows[on_row], np.flatnonzero(on_row)

        def at_frames(values: np.ndarray) -> np.ndarray:
            column = np.full(len(self.times), np.nan)
            column[rows] = values[frames]
            return column

        chosen = (
            np.zeros(0, dtype=np.int64)
            if nodes is None
            else np.asarray(nodes, dtype=np.int64).reshape(-1)
        )
        for node in chosen.tolist():
            record = self.node(node)
            for axis, name in enumerate(axes):
                columns[f"node{node}_{name}"] = at_frames(record.positions[:, axis])
            for axis, name in enumerate(axes):
                columns[f"node{node}_v{name}"] = at_frames(record.velocities[:, axis])
        for j, spring in enumerate(self.spring_ids.tolist()):
            columns[f"spring{spring}_length"] = at_frames(self.spring_lengths[:, j])
            columns[f"spring{spring}_tension"] = at_frames(self.spring_tensions[:, j])
        for b in range(len(self.body_offsets) - 1):
            body = self.body(b)
            for name in BODY_SCALARS:
                columns[f"body{b}_{name}"] = at_frames(getattr(body, name))
            columns[f"body{b}_energy"] = at_frames(body.energy)
            for axis, name in enumerate(axes):
                columns[f"body{b}_p{name}"] = at_frames(body.momentum[:, axis])
            for axis, name in enumerate(axes):
                columns[f"body{b}_com_{name}"] = at_frames(body.center_of_mass[:, axis])
        return columns

    def to_dataframe(self, nodes: npt.ArrayLike | None = None) -> pd.DataFrame:
        """The records as a pandas DataFrame (needs pandas), one row per record.

        Columns: ``time``, each energy term, ``total``, ``dissipated``,
        ``momentum_x``/``_y``(/``_z``); then, on the rows of the frames (NaN on the
        other records): for each of ``nodes``, ``node{i}_x``, ``_y`` (, ``_z``)
        and ``node{i}_vx``, ``_vy`` (, ``_vz``); for each probed spring j (its
        index at the start), ``spring{j}_length`` and ``spring{j}_tension``; for
        each probed body b, ``body{b}_mass``, ``_kinetic``, ``_bulk_kinetic``,
        ``_internal_kinetic``, ``_elastic``, ``_gravity``, ``_energy`` (their
        sum), ``_px``, ``_py`` (, ``_pz``) and ``_com_x``, ``_com_y`` (, ``_com_z``).
        Units: s, J, kg, kg·m/s, m, m/s, N.

        Parameters
        ----------
        nodes : array_like of int, optional
            Nodes (of ``frame_nodes``) whose position and velocity get columns
            (default: none).

        Raises
        ------
        ImportError
            pandas is not installed (:meth:`to_csv` needs no pandas).
        ValueError
            A node not in ``frame_nodes``.

        Examples
        --------
        >>> import springsim as ss
        >>> sim = ss.string(3, length=1.0, mass=0.1, stiffness=50.0, dim=2)
        >>> h = sim.run(0.1, dt=1e-3, record_every=50, frames=3, springs=[1],
        ...             progress=False)
        >>> list(h.to_dataframe(nodes=[2]).columns)[-6:]
        ['node2_x', 'node2_y', 'node2_vx', 'node2_vy', 'spring1_length', 'spring1_tension']
        """
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - pandas comes with the [test] extra
            raise ImportError("to_dataframe() needs pandas: pip install pandas") from None
        return pd.DataFrame(self._table(nodes))

    def to_csv(self, path: StrPath, nodes: npt.ArrayLike | None = None) -> pathlib.Path:
        """Write :meth:`to_dataframe`'s table as CSV (with the csv module: no pandas
        needed): a header of the column names, then one line per record; each number
        written as Python's ``repr`` (read back exactly), ``nan`` where a column has
        no value.

        Parameters
        ----------
        path : str or os.PathLike
            The file (written whole or not at all).
        nodes : array_like of int, optional
            As in :meth:`to_dataframe`.

        Returns
        -------
        pathlib.Path
            The file written.

        Examples
        --------
        >>> import csv, pathlib, tempfile
        >>> import springsim as ss
        >>> sim = ss.string(3, length=1.0, mass=0.1, stiffness=50.0, dim=2)
        >>> h = sim.run(0.1, dt=1e-3, record_every=50, frames=3, progress=False)
        >>> path = h.to_csv(pathlib.Path(tempfile.mkdtemp()) / "run.csv")
        >>> rows = list(csv.reader(path.open()))
        >>> rows[0][:3], len(rows) == len(h) + 1
        (['time', 'kinetic', 'elastic'], True)
        """
        name = path_name(path)
        table = self._table(nodes)
        text = io.StringIO()
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(list(table))
        for row in zip(*(column.tolist() for column in table.values()), strict=True):
            writer.writerow([repr(float(value)) for value in row])
        data = text.getvalue().encode("utf-8")
        write_atomically(name, lambda file: file.write(data))
        return pathlib.Path(name)

    def write_vtk(self, path: StrPath, faces: bool = False) -> list[str]:
        """Write the frames as a ParaView time series: a ``.pvd`` index and one VTK
        PolyData file per frame; see :func:`springsim.io.write_vtk`."""
        return vtk.write_vtk(self, path, faces=faces)

    def save_html(
        self,
        path: StrPath,
        *,
        speed: float = 1.0,
        color_by: str | None = None,
        color_range: tuple[float, float] | None = None,
    ) -> pathlib.Path:
        """Write a standalone HTML file that plays the frames offline (the live viewer's
        drawing, no network needed); see
        :func:`springsim.viewer.standalone.save_history_html`.

        Parameters
        ----------
        path : str or path-like
            The file to write.
        speed : float
            Simulated seconds per second of playback: 1 real time, 0.1 slow motion.
        color_by : {None, "tension", "strain"}
            Colour the springs by the recorded tensions or strains.
        color_range : (float, float), optional
            A fixed colour scale (by default each frame's, with a floor).

        Examples
        --------
        >>> import pathlib, tempfile
        >>> import springsim as ss
        >>> rope = ss.string(5, length=1.0, mass=0.05, stiffness=50.0, dim=2)
        >>> history = rope.run(1.0, 1e-3, frames=31, progress=False)
        >>> history.save_html(pathlib.Path(tempfile.mkdtemp()) / "run.html").name
        'run.html'
        """
        return save_history_html(
            self, path, speed=speed, color_by=color_by, color_range=color_range
        )

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
                "spring_ids",
                "spring_lengths",
                "spring_tensions",
                "body_members",
                "body_offsets",
                *(f"body_{name}" for name in BODY_FIGURES),
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


def _position(ids: np.ndarray, index: object, what: str, where: str, hint: str) -> int:
    """The column of ``index`` in ``ids``, or a ValueError naming what was recorded."""
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
        raise TypeError(f"index must be an int, not {type(index).__name__}")
    found = np.flatnonzero(ids == index)
    if not found.size:
        shown = ids[:10].tolist()
        raise ValueError(
            f"{what} {index} was not recorded: {where} is {shown}"
            f"{' ...' if len(ids) > 10 else ''} (choose it with run(..., {hint}...))"
        )
    return int(found[0])


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


class NodeRecord:
    """One node's frames (:meth:`History.node`): views into the History, no copy.

    Attributes
    ----------
    index : int
        The node.
    times : ndarray, shape (F,)
        The frames' times, s.
    positions, velocities : ndarray, shape (F, dim)
        m and m/s.
    pinned : ndarray of bool, shape (F,)
    """

    def __init__(
        self,
        index: int,
        times: np.ndarray,
        positions: np.ndarray,
        velocities: np.ndarray,
        pinned: np.ndarray,
    ) -> None:
        self.index, self.times, self.pinned = index, times, pinned
        self.positions, self.velocities = positions, velocities

    def __repr__(self) -> str:
        return f"<springsim.NodeRecord node {self.index}, {len(self.times)} frames>"


class SpringRecord:
    """One probed spring's frames (:meth:`History.spring`): views, no copy.

    Attributes
    ----------
    index : int
        The spring, by its index at the start of the run.
    times : ndarray, shape (F,)
        s.
    lengths, tensions : ndarray, shape (F,)
        m and N (signed: positive pulls its ends together); NaN once gone.
    """

    def __init__(
        self, index: int, times: np.ndarray, lengths: np.ndarray, tensions: np.ndarray
    ) -> None:
        self.index, self.times, self.lengths, self.tensions = index, times, lengths, tensions

    def __repr__(self) -> str:
        return f"<springsim.SpringRecord spring {self.index}, {len(self.times)} frames>"


class BodyRecord:
    """One probed body's frames (:meth:`History.body`): views, no copy.

    Attributes
    ----------
    nodes : ndarray of int64
        Its nodes.
    times : ndarray, shape (F,)
        s.
    mass : ndarray, shape (F,)
        M = Σ m, kg.
    momentum, center_of_mass : ndarray, shape (F, dim)
        Σ m v (kg·m/s) and Σ m x / M (m).
    kinetic, bulk_kinetic, internal_kinetic : ndarray, shape (F,)
        ½ Σ m |v|², ½ M |v_cm|² and ½ Σ m |v − v_cm|² (their difference), J.
    elastic, gravity : ndarray, shape (F,)
        ½ Σ k (l − L)² of the springs with both ends in the body, and −Σ m g·x, J.
    """

    mass: np.ndarray
    momentum: np.ndarray
    center_of_mass: np.ndarray
    kinetic: np.ndarray
    bulk_kinetic: np.ndarray
    internal_kinetic: np.ndarray
    elastic: np.ndarray
    gravity: np.ndarray

    def __init__(self, nodes: np.ndarray, times: np.ndarray, **figures: np.ndarray) -> None:
        self.nodes, self.times = nodes, times
        for name in BODY_FIGURES:
            setattr(self, name, figures[name])

    @property
    def energy(self) -> np.ndarray:
        """kinetic + elastic + gravity at each frame, J (contacts and gas not counted)."""
        return self.kinetic + self.elastic + self.gravity

    def __repr__(self) -> str:
        return f"<springsim.BodyRecord {len(self.nodes)} nodes, {len(self.times)} frames>"
