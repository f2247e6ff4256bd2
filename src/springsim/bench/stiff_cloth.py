"""Stiff cloth at frame rate: cost against accuracy, per method and setting (issue 26).

The scene: a horizontal cloth 1 m square, ``n × n`` nodes (100×100: 59,002
structural, shear and bend springs, all of :data:`STIFFNESS`, or of the ``stiffness``
given; no damping, no air), :data:`MASS` in all, pinned at two corners, falling and
swinging for :data:`FRAMES` frames of :data:`FRAME` seconds (one second). The reference is
symplectic Euler at :data:`REFERENCE_FRACTION` × ``critical_dt()`` (the whole number
of substeps per frame that gets there or below).

Every setting (:class:`Setting`: a method, its substeps per frame and, for XPBD and
VBD, ``sim.iterations``; or :mod:`~springsim.bench.peer_pd`'s Projective Dynamics)
steps the same cloth from the same start, one thread, frame by frame, and is
measured by:

- **CPU per frame**: the median over the frames of the thread CPU time
  (``time.thread_time``) of one frame's ``sim.step(dt, steps=substeps)``;
- **worst deviation**: the largest distance of any node from where the reference
  has it at the end of the same frame, over all frames, m;
- **largest stretch**: the largest ``l / L − 1`` of any spring at the end of any
  frame (0.005 = 0.5 %).

Rows of ``method="vbd"`` run only when ``"vbd"`` is in :data:`springsim.METHODS`;
otherwise they are listed as skipped. :func:`plot_stiff_cloth` in
:mod:`~springsim.bench.stiff_cloth_plot` draws accuracy against cost per family.

Examples
--------
A tiny cloth for a few frames, two settings:

>>> from springsim.bench.stiff_cloth import REFERENCE, Setting, stiff_cloth
>>> result = stiff_cloth(4, frames=3, settings=[REFERENCE, Setting("xpbd", 10, 1)])
>>> [(row["label"], row["status"]) for row in result["rows"]]
[('symplectic_euler (reference)', 'ok'), ('xpbd 10×1', 'ok')]
>>> result["springs"], result["rows"][0]["worst_deviation"]
(58, 0.0)
"""

import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

import springsim as ss
from springsim.bench.machine import get_threads, set_threads
from springsim.bench.peer_pd import ProjectiveDynamics
from springsim.bench.report import Table, fit
from springsim.bench.scenes import Problem
from springsim.bench.timing import median

#: One frame, s.
FRAME = 1.0 / 60.0
#: Frames in a run: one second.
FRAMES = 60
#: Of every spring, N/m.
STIFFNESS = 5000.0
#: Of the whole cloth, kg.
MASS = 0.2
#: The cloth's side, m.
WIDTH = 1.0
#: The reference's step over ``critical_dt()``.
REFERENCE_FRACTION = 0.5
#: The sizes of a full run (nodes per side); the default run measures the last.
SIZES = (100, 30)
#: The quick run's cloth (nodes per side) and frames.
QUICK_SIZE = 6
QUICK_FRAMES = 6
#: ``method`` of the Projective Dynamics peer's rows (not a springsim method).
PD = "pd"
#: The method whose rows run only when springsim has it.
VBD = "vbd"


def stiff_cloth_scene(n: int, stiffness: float = STIFFNESS) -> ss.System:
    """The scene: a level ``n × n`` cloth, 1 m, 0.2 kg, two corners pinned.

    Parameters
    ----------
    n : int
        Nodes per side, >= 2.
    stiffness : float
        Of every spring, N/m (> 0); :data:`STIFFNESS`, issue 26's 5,000, by default.

    Examples
    --------
    >>> from springsim.bench.stiff_cloth import stiff_cloth_scene
    >>> stiff_cloth_scene(100).num_springs
    59002
    >>> float(stiff_cloth_scene(3, stiffness=500.0).stiffness.max())
    500.0
    """
    return ss.cloth(
        n,
        n,
        width=WIDTH,
        height=WIDTH,
        mass=MASS,
        stiffness=stiffness,
        normal=(0, 1, 0),  # level, facing up
        pin="top_corners",
    )


@dataclass(frozen=True)
class Setting:
    """How one row steps the cloth.

    Attributes
    ----------
    method : str
        A method of :data:`springsim.METHODS` (``"vbd"`` included, when springsim
        has it), or ``"pd"``: the Projective Dynamics peer.
    substeps : int or None
        Substeps per frame; None: the reference's (from ``critical_dt()``).
    iterations : int or None
        ``sim.iterations`` (XPBD, VBD) or Projective Dynamics' local/global pairs per
        step; None for the methods without.
    """

    method: str
    substeps: int | None = None
    iterations: int | None = None

    def __post_init__(self):
        if self.method not in (*ss.METHODS, VBD, PD):
            raise ValueError(
                f"method must be one of {', '.join((*ss.METHODS, VBD, PD))}; got {self.method!r}"
            )
        for name in ("substeps", "iterations"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                raise ValueError(f"{name} must be None or an int >= 1, got {value!r}")
        if self.method == PD and (self.substeps is None or self.iterations is None):
            raise ValueError("a Projective Dynamics setting needs substeps and iterations")

    @property
    def family(self) -> str:
        """The method's name in the plot's legend."""
        return FAMILIES.get(self.method, self.method)

    @property
    def label(self) -> str:
        """The row's name: method, substeps (× iterations)."""
        if self.substeps is None:
            return f"{self.method} (reference)"
        if self.iterations is None:
            return f"{self.method} {self.substeps}"
        return f"{self.method} {self.substeps}×{self.iterations}"


#: Each method's family name.
FAMILIES = {
    "symplectic_euler": "symplectic Euler",
    "implicit_euler": "implicit Euler",
    "xpbd": "XPBD",
    VBD: "VBD",
    PD: "Projective Dynamics",
}
#: The reference: symplectic Euler at REFERENCE_FRACTION × critical_dt().
REFERENCE = Setting("symplectic_euler")


def stiff_cloth_settings(n: int) -> list[Setting]:
    """The rows of the ``n × n`` table: issue 26's, then VBD's and Projective Dynamics'.

    The reference; implicit Euler at 1 and 4 substeps per frame; XPBD at 10 × 1,
    40 × 1 and 1 × 20 (substeps × iterations), and below 100×100 also 32 × 5 and
    80 × 1; VBD and Projective Dynamics at 4 × 5, 8 × 4, 16 × 3 and 40 × 2, and
    Projective Dynamics also at 1 × 10 and 40 × 5 (nearer convergence).
    """
    rows = [
        REFERENCE,
        Setting("implicit_euler", 1),
        Setting("implicit_euler", 4),
        Setting("xpbd", 10, 1),
        Setting("xpbd", 40, 1),
        Setting("xpbd", 1, 20),
    ]
    if n < 100:
        rows += [Setting("xpbd", 32, 5), Setting("xpbd", 80, 1)]
    pairs = ((4, 5), (8, 4), (16, 3), (40, 2))
    rows += [Setting(VBD, s, i) for s, i in pairs]
    rows += [Setting(PD, 1, 10)] + [Setting(PD, s, i) for s, i in (*pairs, (40, 5))]
    return rows


def reference_substeps(sim: ss.System) -> int:
    """Substeps per frame of the reference: the fewest with dt <= 0.5 critical_dt()."""
    return math.ceil(FRAME / (REFERENCE_FRACTION * sim.critical_dt()) - 1e-9)


def largest_stretch(x: np.ndarray, pairs: np.ndarray, rest: np.ndarray) -> float:
    """max over the springs of l / L − 1 (l = |x_j − x_i|); negative if all are short.

    Examples
    --------
    >>> import numpy as np
    >>> from springsim.bench.stiff_cloth import largest_stretch
    >>> x = np.array([[0.0, 0.0], [1.1, 0.0], [1.1, 0.5]])
    >>> round(largest_stretch(x, np.array([[0, 1], [1, 2]]), np.array([1.0, 1.0])), 12)
    0.1
    """
    e = x[pairs[:, 1]] - x[pairs[:, 0]]
    return float(np.max(np.sqrt(np.einsum("ij,ij->i", e, e)) / rest) - 1.0)


def worst_deviation(x: np.ndarray, reference: np.ndarray) -> float:
    """max over the nodes of |x − x_ref|, m."""
    d = x - reference
    return float(np.sqrt(np.max(np.einsum("ij,ij->i", d, d))))


def _stepper(
    sim: ss.System, setting: Setting, dt: float
) -> tuple[Callable[[], None], Callable[[], np.ndarray]]:
    """(step one frame, the positions now) for ``setting`` on ``sim`` (stepped in place)."""
    substeps = setting.substeps or reference_substeps(sim)
    if setting.method == PD:
        peer = ProjectiveDynamics(Problem.from_system(sim), dt, int(setting.iterations or 1))
        return lambda: peer.step(substeps), lambda: peer.x
    if setting.iterations is not None:
        sim.iterations = setting.iterations
    method = setting.method
    return lambda: sim.step(dt, steps=substeps, method=method), lambda: sim.positions


def run_setting(
    sim: ss.System,
    setting: Setting,
    reference: np.ndarray | None = None,
    frames: int = FRAMES,
) -> tuple[dict, np.ndarray]:
    """Step a copy of ``sim`` for ``frames`` frames as ``setting`` says, and measure it.

    Parameters
    ----------
    sim : springsim.System
        The scene at its start (not changed).
    setting : Setting
        How to step it.
    reference : ndarray, (frames, N, dim), optional
        The reference's positions at the end of each frame; without it the row's
        ``worst_deviation`` is None.
    frames : int
        Frames of :data:`FRAME` seconds.

    Returns
    -------
    row : dict
        ``label``, ``family``, ``method``, ``substeps``, ``iterations``, ``dt`` (s),
        ``frames``, ``cpu_per_frame`` (s, median), ``setup_seconds`` (CPU, before
        the first frame: Projective Dynamics' factorisation), ``worst_deviation``
        (m), ``largest_stretch`` (l / L − 1), ``status`` ("ok", or "unstable" with
        the frame in ``note``), ``note`` (also: how many frames warned with
        :class:`springsim.ConvergenceWarning`, which the row records instead of showing).
    trajectory : ndarray, (frames, N, dim)
        The positions at the end of each frame (NaN after an unstable frame).
    """
    sim = sim.copy()
    substeps = setting.substeps or reference_substeps(sim)
    dt = FRAME / substeps
    pairs, rest = np.asarray(sim.springs), np.array(sim.rest_lengths)
    started = time.thread_time()
    step, positions = _stepper(sim, setting, dt)
    setup = time.thread_time() - started
    trajectory = np.full((frames, sim.num_nodes, sim.dim), np.nan)
    seconds: list[float] = []
    stretch, worst = -math.inf, 0.0
    status, note = "ok", ""
    warned = 0
    for frame in range(frames):
        started = time.thread_time()
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ss.ConvergenceWarning)
                step()
        except ss.UnstableError as error:
            status, note = "unstable", f"frame {frame + 1}: {error}"
            break
        warned += sum(issubclass(w.category, ss.ConvergenceWarning) for w in caught)
        seconds.append(time.thread_time() - started)
        x = positions()
        if not np.all(np.isfinite(x)):
            status, note = "unstable", f"frame {frame + 1}: positions not finite"
            break
        trajectory[frame] = x
        stretch = max(stretch, largest_stretch(x, pairs, rest))
        if reference is not None:
            worst = max(worst, worst_deviation(x, reference[frame]))
    ok = status == "ok"
    if warned:  # implicit Euler's conjugate gradients at cg_max_iterations (the default)
        note = f"{warned} of {frames} frames warned: ConvergenceWarning"
    row = {
        "label": setting.label,
        "family": setting.family,
        "method": setting.method,
        "substeps": substeps,
        "iterations": setting.iterations,
        "dt": dt,
        "frames": frames,
        "cpu_per_frame": median(seconds) if seconds else None,
        "setup_seconds": setup,
        "worst_deviation": worst if ok and reference is not None else None,
        "largest_stretch": stretch if ok else None,
        "status": status,
        "note": note,
    }
    return row, trajectory


def stiff_cloth(
    n: int = 100,
    *,
    frames: int = FRAMES,
    settings: Sequence[Setting] | None = None,
    stiffness: float = STIFFNESS,
) -> dict:
    """Measure every setting on the ``n × n`` stiff cloth, one kernel thread.

    The reference runs first (the first setting must be :data:`REFERENCE`); its
    row's deviation is its distance from itself, 0.

    Parameters
    ----------
    n : int
        Nodes per side, >= 2.
    frames : int
        Frames of 1/60 s, >= 1 (60: one second).
    settings : sequence of Setting, optional
        The rows, the reference first; :func:`stiff_cloth_settings` ``(n)`` by default.
    stiffness : float
        Of every spring, N/m, > 0 (:data:`STIFFNESS` by default).

    Returns
    -------
    dict
        ``scene`` ("stiff_cloth_<n>"), ``n``, ``stiffness``, ``nodes``, ``springs``, ``frames``,
        ``critical_dt``, ``threads`` (1), ``clock`` ("thread"), ``rows`` (a dict per
        setting, see :func:`run_setting`; the VBD rows without ``"vbd"`` in
        :data:`springsim.METHODS` have status "skipped") and ``skipped`` (their
        labels).

    Raises
    ------
    ValueError
        ``n``, ``frames`` or ``stiffness`` out of range, or the first setting not the
        reference.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ValueError(f"n must be an int >= 2, got {n!r}")
    if isinstance(frames, bool) or not isinstance(frames, int) or frames < 1:
        raise ValueError(f"frames must be an int >= 1, got {frames!r}")
    if (
        isinstance(stiffness, bool)
        or not isinstance(stiffness, (int, float))
        or not math.isfinite(stiffness)
        or stiffness <= 0
    ):
        raise ValueError(f"stiffness must be a finite number > 0 (N/m), got {stiffness!r}")
    chosen = list(stiff_cloth_settings(n) if settings is None else settings)
    if not chosen or chosen[0] != REFERENCE:
        raise ValueError("settings must start with REFERENCE (symplectic Euler, no substeps)")
    sim = stiff_cloth_scene(n, float(stiffness))
    before = get_threads()
    set_threads(1)
    try:
        reference_row, reference = run_setting(sim, REFERENCE, None, frames)
        if reference_row["status"] != "ok":
            raise RuntimeError(f"the reference is unstable: {reference_row['note']}")
        reference_row["worst_deviation"] = 0.0  # its distance from itself
        rows, skipped = [reference_row], []
        for setting in chosen[1:]:
            if setting.method not in (*ss.METHODS, PD):
                skipped.append(setting.label)
                rows.append(
                    {
                        "label": setting.label,
                        "family": setting.family,
                        "method": setting.method,
                        "substeps": setting.substeps,
                        "iterations": setting.iterations,
                        "status": "skipped",
                        "note": f"{setting.method!r} is not in springsim.METHODS",
                    }
                )
                continue
            rows.append(run_setting(sim, setting, reference, frames)[0])
        threads = get_threads()
    finally:
        set_threads(before)
    return {
        "scene": f"stiff_cloth_{n}",
        "n": n,
        "stiffness": float(stiffness),
        "nodes": sim.num_nodes,
        "springs": sim.num_springs,
        "frames": frames,
        "critical_dt": sim.critical_dt(),
        "threads": threads,
        "clock": "thread",
        "rows": rows,
        "skipped": skipped,
    }


def stiff_cloth_lines(result: dict) -> list[str]:
    """The report's lines for one :func:`stiff_cloth` result: a title, a table, notes."""
    n = result["n"]
    rows = result["rows"]
    table = Table(
        [
            ("setting", max(len(row["label"]) for row in rows), "<"),
            ("dt s", 9, ">"),
            ("CPU ms/frame", 8, ">"),
            ("worst dev m", 7, ">"),
            ("stretch %", 7, ">"),
        ]
    )
    lines = [
        f"stiff_cloth_{n}: a level {n}×{n} cloth, {result['springs']:,} springs of"
        f" {result['stiffness']:,.0f} N/m, {MASS} kg, two corners pinned,"
        f" {result['frames']} frames of 1/60 s; reference symplectic Euler at"
        f" {REFERENCE_FRACTION} critical_dt();"
        f" {result['threads']} thread, thread CPU time, median over the frames",
        table.header(),
    ]
    for row in rows:
        cells = [row["label"]]
        if row["status"] != "ok":
            lines.append(table.line(cells + [row["status"].upper(), "", "", ""]))
            continue
        stretch = row["largest_stretch"]
        lines.append(
            table.line(
                cells
                + [
                    fit(row["dt"], table.width(1), specs=(".2g",)),
                    fit(row["cpu_per_frame"] * 1e3, table.width(2), specs=(".3g",)),
                    fit(row["worst_deviation"], table.width(3), specs=(".3g",)),
                    fit(stretch * 100, table.width(4), specs=(".2f", ".1f", ".0f")),
                ]
            )
        )
    if result["skipped"]:
        lines.append(
            f"  skipped ({', '.join(result['skipped'])}): 'vbd' is not in springsim.METHODS"
        )
    for row in rows:
        if row["status"] == "unstable" or (row["status"] == "ok" and row["note"]):
            lines.append(f"  {row['label']}: {row['note']}")
    return lines
