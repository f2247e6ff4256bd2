"""Execute the notebooks in notebooks/ in place, so that they are stored with outputs.

Usage (from the root of a clone, with springsim, nbclient, ipykernel and matplotlib
installed)::

    python tools/execute_notebooks.py            # every notebook
    python tools/execute_notebooks.py notebooks/01_first_string.ipynb

Each notebook runs top to bottom in a fresh ``python3`` kernel, in a temporary working
directory (the files it writes go there), with the same settings as
tests/repository/test_notebooks.py. The result is written back deterministically: no execution
timestamps, the notebook's metadata as it was (kernel name and language only, not the
Python version that ran it), and the random element ids of animations replaced by
numbered ones. Running it again when nothing changed rewrites the same bytes.

tests/repository/test_notebooks.py executes every notebook from scratch and fails if a stored
output is missing or its text differs from the fresh run's: run this script then.
"""

from __future__ import annotations

import argparse
import copy
import pathlib
import re
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
#: The kernel every notebook runs in, whatever its metadata names.
KERNEL_NAME = "python3"
#: Seconds allowed per cell.
TIMEOUT = 300
#: The notebook metadata that is kept: what a reader's Jupyter needs to pick a kernel.
METADATA = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": KERNEL_NAME},
    "language_info": {"name": "python"},
}
#: The random id (uuid4().hex) of each animation drawn by matplotlib's to_jshtml().
_ANIMATION_ID = re.compile(r'<img id="_anim_img([0-9a-f]{32})">')
#: The output type of a displayed widget (its model id is random, uuid4().hex).
_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def execute(notebook, workdir: str):
    """Execute ``notebook`` (an nbformat node, changed in place) in a fresh kernel."""
    import nbclient

    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    client = nbclient.NotebookClient(
        notebook,
        timeout=TIMEOUT,
        kernel_name=KERNEL_NAME,
        record_timing=False,  # no execution timestamps in the cells' metadata
        resources={"metadata": {"path": workdir}},  # files it writes go here
    )
    client.execute()  # raises CellExecutionError on the first error
    return notebook


def normalize(notebook):
    """Remove what changes from one run to the next (in place) and return ``notebook``.

    The notebook's metadata is reset to :data:`METADATA`; the cells lose their execution
    timestamps; consecutive outputs to the same stream are merged into one (how printed
    text is split into messages depends on timing); each animation's random id is
    replaced by its number in the notebook, and so is each widget's random model id
    (springsim.view's live viewer: its state is not stored, so a stored notebook shows
    the widget's text, and a live one the widget).
    """
    notebook.metadata = copy.deepcopy(METADATA)
    animations = widgets = 0
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type != "code":
            continue
        cell.outputs = merge_streams(cell.outputs)
        for output in cell.outputs:
            view = output.get("data", {}).get(_WIDGET_VIEW)
            if view is not None:
                widgets += 1
                view["model_id"] = f"{widgets:032x}"
            html = output.get("data", {}).get("text/html")
            if html is None:
                continue
            html = html if isinstance(html, str) else "".join(html)
            for old in dict.fromkeys(_ANIMATION_ID.findall(html)):
                animations += 1
                html = html.replace(old, f"{animations:032x}")
            output["data"]["text/html"] = html
    return notebook


def merge_streams(outputs: list) -> list:
    """``outputs`` with each run of consecutive outputs to the same stream merged."""
    merged: list = []
    for output in outputs:
        previous = merged[-1] if merged else None
        if (
            output.get("output_type") == "stream"
            and previous is not None
            and previous.get("output_type") == "stream"
            and previous.get("name") == output.get("name")
        ):
            previous["text"] = text_of(previous["text"]) + text_of(output["text"])
        else:
            merged.append(output)
    return merged


def text_of(value) -> str:
    """The text of a notebook string field (stored either whole or as a list of lines)."""
    return value if isinstance(value, str) else "".join(value)


def update(path: pathlib.Path) -> bool:
    """Execute the notebook at ``path`` and store it with its outputs; True if it changed."""
    import nbformat

    before = path.read_text(encoding="utf-8")
    notebook = nbformat.reads(before, as_version=4)
    with tempfile.TemporaryDirectory() as workdir:
        execute(notebook, workdir)
    after = nbformat.writes(normalize(notebook)) + "\n"
    if after != before:
        path.write_text(after, encoding="utf-8")
    return after != before


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=pathlib.Path, help="default: notebooks/*.ipynb")
    args = parser.parse_args(argv)
    for path in args.paths or NOTEBOOKS:
        changed = update(path)
        print(f"{path.name}: {'updated' if changed else 'unchanged'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
