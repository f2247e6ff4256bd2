"""Every notebook in notebooks/ runs top to bottom without an error and draws at least
one figure (executed with nbclient in a fresh kernel, as a student would run it), and
its stored outputs are those of that run.

The notebooks are stored executed, so that their plots show when they are browsed;
``python tools/execute_notebooks.py`` runs them again and stores the new outputs. The
same run checks them: every code cell's stored outputs must be there, and their text
(printed text, ``text/plain`` results, errors) must equal the fresh run's exactly;
images are compared by their presence and type only, since the bytes of a PNG depend on
the versions of matplotlib and its libraries.
"""

import importlib.util
import pathlib
import time

import pytest

pytestmark = pytest.mark.slow  # each notebook runs in a fresh kernel: about 40 s in all

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
#: Each notebook must run in under a minute on 2 cores (the issue's budget).
BUDGET = 60.0
UPDATE = "python tools/execute_notebooks.py"


def _tool():
    """tools/execute_notebooks.py, the script that stores the outputs, as a module."""
    spec = importlib.util.spec_from_file_location(
        "execute_notebooks", ROOT / "tools" / "execute_notebooks.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _lines(cell, text_of) -> list[str]:
    """What the stale check compares of a code cell, one line per line of text."""
    lines = [f"[execution count {cell.get('execution_count')}]"]
    for output in cell.get("outputs", []):
        kind = output.get("output_type")
        if kind == "stream":
            lines.append(f"[{output.get('name')}]")
            lines += text_of(output.get("text", "")).splitlines()
        elif kind == "error":
            lines.append(f"[error] {output.get('ename')}: {output.get('evalue')}")
        else:
            data = output.get("data", {})
            lines.append(f"[{kind}] {' '.join(sorted(data))}")
            lines += text_of(data.get("text/plain", "")).splitlines()
    return lines


def stale_outputs(stored, executed, name: str, text_of) -> str | None:
    """Why ``stored`` does not hold the outputs of ``executed`` (None if it does)."""
    code = [(k, c) for k, c in enumerate(stored.cells, 1) if c.cell_type == "code"]
    fresh = [c for c in executed.cells if c.cell_type == "code"]
    if len(code) != len(fresh):
        return f"{name}: {len(code)} code cells stored, {len(fresh)} executed"
    for (number, old), new in zip(code, fresh, strict=True):
        before, after = _lines(old, text_of), _lines(new, text_of)
        if before == after:
            continue
        where = next(
            (i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b),
            min(len(before), len(after)),
        )
        stored_line = before[where] if where < len(before) else "(no more output)"
        executed_line = after[where] if where < len(after) else "(no more output)"
        first = old.source.splitlines()[0] if old.source else ""
        return (
            f"{name}, cell {number} ({first!r}): the stored outputs are stale or missing;"
            f" first difference at output line {where + 1}:\n"
            f"  stored:   {stored_line!r}\n  executed: {executed_line!r}\n"
            f"update the stored outputs with `{UPDATE}`"
        )
    return None


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 1


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_draws_and_is_stored_executed(path, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    tool = _tool()
    text = path.read_text(encoding="utf-8")
    stored, notebook = nbformat.reads(text, as_version=4), nbformat.reads(text, as_version=4)
    started = time.perf_counter()
    tool.execute(notebook, str(tmp_path))  # raises CellExecutionError on the first error
    seconds = time.perf_counter() - started
    images = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if "image/png" in output.get("data", {})
    ]
    assert images, f"{path.name} drew no figure"
    errors = [
        o
        for c in notebook.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.get("output_type") == "error"
    ]
    assert not errors
    assert seconds < BUDGET, f"{path.name} took {seconds:.0f} s"
    stale = stale_outputs(stored, tool.normalize(notebook), path.name, tool.text_of)
    if stale is not None:
        pytest.fail(stale, pytrace=False)
