"""Parameter sweeps: build and run one system per point, on every core or on a Dask
cluster. See :func:`sweep`."""

from __future__ import annotations

import itertools
import math
import multiprocessing
import multiprocessing.context
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any

import cloudpickle
import numpy as np

from springsim._core import UnstableError
from springsim.runtime.threads import set_num_threads
from springsim.stepping.history import History
from springsim.system import System

if TYPE_CHECKING:
    import pandas as pd

# A point's parameters, or its row of results; a task for a worker; what comes back
# (``{"row": row, "history": History or None}``).
Row = dict[str, Any]
_Task = dict[str, Any]
_Result = dict[str, Any]

#: Keys of a point that set the run instead of being passed to ``build``.
RUN_KEYS = ("dt", "duration", "method")
#: The columns every row has besides the point's parameters and the measures.
COLUMNS = (
    "kinetic",
    "elastic",
    "gravity",
    "pressure",
    "total",
    "dissipated",
    "time",
    "steps",
    "status",
    "message",
)


def points_of(params: object) -> list[Row]:
    """The points of a sweep: a dict of lists is a grid (their product, the first key
    varying slowest), a list of dicts is taken as it is."""
    if isinstance(params, Mapping):
        if not params:
            raise ValueError("params is empty: give at least one parameter")
        names, values = [], []
        for name, value in params.items():
            if not isinstance(name, str):
                raise TypeError(f"parameter names must be str, not {type(name).__name__}")
            if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
                value = [value]  # one value: a constant of the sweep
            values.append(list(value))
            names.append(name)
            if not values[-1]:
                raise ValueError(f"parameter {name!r} has no values")
        return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*values)]
    if isinstance(params, Sequence) and not isinstance(params, (str, bytes)):
        points = list(params)
        if not points:
            raise ValueError("params is empty: give at least one point")
        for k, point in enumerate(points):
            if not isinstance(point, Mapping):
                raise TypeError(f"point {k} must be a dict, not {type(point).__name__}")
        return [dict(point) for point in points]
    raise TypeError(
        f"params must be a dict of lists or a list of dicts, not {type(params).__name__}"
    )


def _scalar(value: object) -> object:
    """A measure's value as a plain Python scalar (NumPy scalars unwrapped)."""
    if isinstance(value, np.generic):
        return value.item()
    return value


def _describe(error: BaseException) -> str:
    """``"Type: message"`` for a row, even when the exception's str() itself fails."""
    try:
        text = str(error)
    except Exception:
        text = f"<{type(error).__name__}: its message could not be printed>"
    return f"{type(error).__name__}: {text}"


def _error_row(point: Row, message: str) -> Row:
    """The row of a point that failed before it had a system: NaN measures."""
    row = dict(point)
    row.update({name: math.nan for name in COLUMNS})
    row.update(status="error", message=message, steps=0)
    return row


def run_point(task: _Task) -> _Result:
    """Build, run and measure one point. Runs in a worker; never raises for the
    point's own failures (any Exception): they become its status ("unstable" or
    "error") and message."""
    point = task["point"]
    settings = {key: point.get(key, task[key]) for key in RUN_KEYS}
    build_args = {key: value for key, value in point.items() if key not in RUN_KEYS}
    row = _error_row(point, "")
    row.update(status="ok")
    history = None
    sim = None
    try:
        built = cloudpickle.loads(task["build"])(**build_args)
        if not isinstance(built, System):
            raise TypeError(f"build returned {type(built).__name__}, not a springsim.System")
        sim = built
        try:
            history = sim.run(
                settings["duration"],
                settings["dt"],
                method=settings["method"],
                record_every=task["record_every"],
                progress=False,
            )
        except UnstableError as error:
            history = getattr(error, "history", None)
            row.update(status="unstable", message=str(error))
        if row["status"] == "ok" and task["measure"] is not None:
            measured = cloudpickle.loads(task["measure"])(sim, history)
            if not isinstance(measured, Mapping):
                raise TypeError(f"measure returned {type(measured).__name__}, not a dict")
            for name, value in measured.items():
                if name in row:
                    raise ValueError(f"measure returned {name!r}, a parameter or column name")
                row[name] = _scalar(value)
    except Exception as error:  # the point's failure, recorded; the sweep goes on
        row.update(status="error", message=_describe(error))
    if sim is not None:
        energy = sim.energy()
        row.update(energy._asdict())
        row.update(time=sim.time)
    if history is not None:
        row.update(steps=history.steps, dissipated=float(history.dissipated[-1]))
    return {"row": row, "history": history if task["keep_history"] else None}


def _run_shipped(blob: bytes) -> bytes:
    """run_point in a worker, the task and result both as cloudpickle bytes: a point
    that cannot be unpickled here, or a result that cannot be pickled, becomes an
    error (``{"failure": message}``) instead of breaking the worker pool."""
    try:
        task = cloudpickle.loads(blob)
    except Exception as error:
        return cloudpickle.dumps(
            {"failure": f"the point could not be loaded in the worker: {_describe(error)}"}
        )
    result = run_point(task)
    try:
        return cloudpickle.dumps(result)
    except Exception as error:
        return cloudpickle.dumps(
            {"failure": f"the point's result could not be sent back: {_describe(error)}"}
        )


def _unship(blob: bytes, point: Row) -> _Result:
    """A result from _run_shipped, or the error row of its point."""
    try:
        result = cloudpickle.loads(blob)
    except Exception as error:
        result = {"failure": f"the point's result could not be loaded: {_describe(error)}"}
    if "failure" in result:
        return {"row": _error_row(point, result["failure"]), "history": None}
    return result


def _init_worker() -> None:
    # One kernel thread per worker process: the pool already uses every core.
    set_num_threads(1)


def _context() -> multiprocessing.context.BaseContext:
    """forkserver where there is one (no fork of a process holding OpenMP threads),
    else spawn; build functions travel by cloudpickle, so notebooks' work too."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


class _Bar:
    def __init__(self, total: int, wanted: bool):
        self.bar: Any = None  # a tqdm bar
        if wanted and total > 1:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, unit="point", desc="springsim sweep")

    def update(self) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _in_process(tasks: list[_Task], bar: _Bar) -> list[_Result]:
    results = []
    for task in tasks:
        results.append(run_point(task))
        bar.update()
    return results


def _ship(task: _Task) -> tuple[bytes | None, _Result | None]:
    """The task as cloudpickle bytes, or the error row of its point if it cannot be."""
    try:
        return cloudpickle.dumps(task), None
    except Exception as error:
        message = f"the point could not be sent to a worker: {_describe(error)}"
        return None, {"row": _error_row(task["point"], message), "history": None}


def _on_local_processes(tasks: list[_Task], bar: _Bar, workers: int) -> list[_Result]:
    results: list[Any] = [None] * len(tasks)
    died: list[tuple[int, BrokenProcessPool]] = []
    with ProcessPoolExecutor(
        max_workers=min(workers, len(tasks)), mp_context=_context(), initializer=_init_worker
    ) as pool:
        futures: dict[Future[bytes], int] = {}
        for k, task in enumerate(tasks):
            blob, results[k] = _ship(task)
            if blob is not None:
                futures[pool.submit(_run_shipped, blob)] = k
            else:
                bar.update()
        for future in as_completed(futures):
            k = futures[future]
            try:
                results[k] = _unship(future.result(), tasks[k]["point"])
            except BrokenProcessPool as error:
                died.append((k, error))
            except Exception as error:  # a point's own failure: its row says so
                results[k] = {
                    "row": _error_row(tasks[k]["point"], _describe(error)),
                    "history": None,
                }
            bar.update()
    if died and len(died) == len(futures):
        # No point came back: the workers most likely could not start at all.
        raise RuntimeError(
            "the sweep's worker processes died before finishing any point. In a script, "
            'call sweep() under `if __name__ == "__main__":` (new processes import the '
            "main module again, and must not start another sweep); or pass workers=1 to "
            "run the points in this process (which also shows a point that crashes its "
            "process)"
        ) from died[0][1]
    for k, _ in died:
        results[k] = {
            "row": _error_row(
                tasks[k]["point"],
                "BrokenProcessPool: a worker process died (crashed or was killed) while "
                "this point was queued or running",
            ),
            "history": None,
        }
    return results


def _on_dask(tasks: list[_Task], bar: _Bar, client: Any) -> list[_Result]:
    from distributed import as_completed as dask_completed

    results: list[Any]
    futures: dict[Any, int]
    results, futures = [None] * len(tasks), {}
    for k, task in enumerate(tasks):
        blob, results[k] = _ship(task)
        if blob is not None:
            futures[client.submit(_run_shipped, blob, pure=False)] = k
        else:
            bar.update()
    for future in dask_completed(list(futures)):
        k = futures[future]
        try:
            results[k] = _unship(future.result(), tasks[k]["point"])
        except Exception as error:  # the worker running it died, or similar
            results[k] = {"row": _error_row(tasks[k]["point"], _describe(error)), "history": None}
        bar.update()
    return results


def sweep(
    build: Callable[..., System],
    params: Mapping[str, Any] | Sequence[Mapping[str, Any]],
    duration: float,
    dt: float,
    method: str | None = None,
    measure: Callable[[System, History], Mapping[str, Any]] | None = None,
    record_every: int | None = None,
    client: Any = None,
    progress: bool = True,
    workers: int | None = None,
    keep_histories: bool = False,
) -> SweepResult:
    """Build and run one system per point of a parameter grid, in parallel.

    Each point is a dict of parameters. ``build(**point)`` makes its System, which
    runs for ``duration`` seconds with steps of ``dt`` (:meth:`springsim.System.run`);
    ``measure(sim, history)`` may add scalar results. A point that fails (a step that
    blows up, a bad parameter, an exception in ``build`` or ``measure``, a point or
    result that cannot be pickled to or from a worker process, a worker that dies) is
    recorded with its status and message; the other points complete.

    Parameters
    ----------
    build : callable
        ``build(**point) -> System``. Points' ``dt``, ``duration`` and ``method`` keys
        set the run instead (and are not passed): sweep them like any parameter.
        Defined anywhere (a notebook cell included): it travels to the workers by
        cloudpickle.
    params : dict of lists, or list of dicts
        A grid (the product of the lists, the first key varying slowest; a single
        value is a constant), or the points themselves.
    duration, dt : float
        Seconds, the run's length and substep (unless a point sets them).
    method : str, optional
        The integrator (default: each system's own).
    measure : callable, optional
        ``measure(sim, history) -> dict`` of scalars, after a successful run.
    record_every : int, optional
        Substeps between the History's records (see :meth:`springsim.System.run`).
    client : dask.distributed.Client, optional
        Run the points on this Dask cluster (``pip install "dask[distributed]"``).
    progress : bool
        A progress bar over points (``tqdm.auto``).
    workers : int, optional
        Without a client: local worker processes, every core by default (each runs
        the kernel on one thread). ``workers=1`` runs every point in this process.
        New processes import a script's main module again: in a script, call
        ``sweep`` under ``if __name__ == "__main__":`` (not needed in a notebook).
    keep_histories : bool
        Return each point's :class:`springsim.History` (``SweepResult.histories``).

    Returns
    -------
    SweepResult
        One row per point, in the order of the points, whichever executor ran them:
        the parameters, the measures, the final energy terms (kinetic, elastic,
        gravity, pressure, total), ``dissipated``, ``time``, ``steps``, ``status``
        ("ok", "unstable" or "error") and ``message``. The kernel is deterministic, so
        the rows are identical whichever executor ran them.

    Raises
    ------
    TypeError, ValueError
        Bad ``params``, ``build`` or ``measure`` not callable, a bad ``workers``.
        (Problems of single points are recorded instead.)
    RuntimeError
        Local worker processes died before any point came back: most likely they
        could not start (a script without the ``__main__`` guard).

    Examples
    --------
    >>> import springsim as ss
    >>> def chain(stiffness):
    ...     return ss.string(8, length=1.0, mass=0.1, stiffness=stiffness, damping=0.01)
    >>> result = ss.sweep(chain, {"stiffness": [50.0, 100.0], "dt": [1e-3, 0.05]},
    ...                   duration=10.0, dt=1e-3, workers=1, progress=False)
    >>> for row in result:
    ...     print(row["stiffness"], row["dt"], row["status"])
    50.0 0.001 ok
    50.0 0.05 unstable
    100.0 0.001 ok
    100.0 0.05 unstable
    """
    points = points_of(params)
    if not callable(build):
        raise TypeError(f"build must be callable, not {type(build).__name__}")
    if measure is not None and not callable(measure):
        raise TypeError(f"measure must be callable, not {type(measure).__name__}")
    if workers is not None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be an int >= 1, got {workers!r}")
    if client is not None and workers is not None:
        raise ValueError("give either a Dask client or a number of local workers, not both")
    tasks = [
        {
            "build": cloudpickle.dumps(build),
            "measure": None if measure is None else cloudpickle.dumps(measure),
            "point": point,
            "duration": duration,
            "dt": dt,
            "method": method,
            "record_every": record_every,
            "keep_history": bool(keep_histories),
        }
        for point in points
    ]
    bar = _Bar(len(tasks), progress)
    try:
        if client is not None:
            results = _on_dask(tasks, bar, client)
        elif workers == 1 or len(tasks) == 1:
            results = _in_process(tasks, bar)
        else:
            results = _on_local_processes(tasks, bar, workers or os.cpu_count() or 1)
    finally:
        bar.close()
    return SweepResult(
        points,
        [r["row"] for r in results],
        [r["history"] for r in results] if keep_histories else None,
    )


class SweepResult:
    """The rows of a :func:`sweep`, one per point, in the order of the points.

    Iterate over it, index it (``result[3]`` is a row dict), read a column as an array
    (``result.column("total")``), or make a pandas DataFrame (``to_dataframe()``).

    Attributes
    ----------
    points : list of dict
        The parameters of each point.
    rows : list of dict
        Parameters, measures, final energies, status and message of each point.
    histories : list of History or None
        Each point's record when the sweep kept them (``keep_histories=True``).
    """

    def __init__(
        self, points: list[Row], rows: list[Row], histories: list[History | None] | None = None
    ) -> None:
        # Points that failed were not measured: give them the measures' columns, NaN.
        names = list(dict.fromkeys(name for row in rows for name in row))
        self.points = points
        self.rows = [{name: row.get(name, math.nan) for name in names} for row in rows]
        self.histories = histories

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[Row]:
        return iter(self.rows)

    def __getitem__(self, index: int) -> Row:
        return self.rows[index]

    def column(self, name: str) -> np.ndarray:
        """One column over all points, as an array."""
        if not self.rows or name not in self.rows[0]:
            raise KeyError(
                f"no column {name!r}; columns: {', '.join(self.rows[0]) if self.rows else ''}"
            )
        return np.array([row[name] for row in self.rows])

    def history(self, index: int) -> History | None:
        """The History of point ``index`` (None if it failed before running)."""
        if self.histories is None:
            raise ValueError("this sweep kept no histories: run it with keep_histories=True")
        return self.histories[index]

    def to_dataframe(self) -> pd.DataFrame:
        """The rows as a pandas DataFrame (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - pandas comes with the [test] extra
            raise ImportError("to_dataframe() needs pandas: pip install pandas") from None
        return pd.DataFrame(self.rows)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SweepResult):
            return NotImplemented
        return _same_rows(self.rows, other.rows) and (
            (self.histories is None) == (other.histories is None)
            and (self.histories is None or self.histories == other.histories)
        )

    __hash__ = None  # type: ignore[assignment]  # equal by value, and mutable

    def __repr__(self) -> str:
        counts: dict[str, int] = {}
        for row in self.rows:
            counts[row["status"]] = counts.get(row["status"], 0) + 1
        summary = ", ".join(f"{n} {status}" for status, n in counts.items())
        return f"<springsim.SweepResult {len(self)} points: {summary}>"


def _same_rows(a: Sequence[Row], b: Sequence[Row]) -> bool:
    """Rows equal value by value, NaN equal to NaN."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if x.keys() != y.keys():
            return False
        for key in x:
            u, v = x[key], y[key]
            if isinstance(u, float) and isinstance(v, float) and math.isnan(u) and math.isnan(v):
                continue
            if u != v:
                return False
    return True
