"""The viewer in a saved notebook (issue 28, item 4): a static snapshot beside the widget.

``jupyter nbconvert --to html --execute`` runs a small notebook in a temporary folder
(a kernel of its own, as a user's command line does) and the page must show the scene
offline: an ``<img>`` with a PNG data URI, not the widget view (which needs the network
and a kernel). In a live kernel the output keeps the widget view, with the PNG beside
it for notebooks saved from a live session.
"""

import base64
import io
import os
import pathlib
import re
import subprocess
import sys

import nbformat
import numpy as np
import pytest
from PIL import Image

import springsim as ss
from springsim.viewer import snapshot
from springsim.viewer.widget import WIDGET_VIEW

SOURCE = pathlib.Path(ss.__file__).resolve().parents[1]


def decode(png):
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)


def test_nbconvert_execute_shows_the_scene_as_an_image(tmp_path):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(
            "import springsim as ss\n"
            "rope = ss.string(6, length=1.0, mass=0.06, stiffness=60.0, dim=2)\n"
            "viewer = ss.view(rope)\n"
            "viewer"
        )
    ]
    nbformat.write(notebook, tmp_path / "rope.ipynb")
    env = dict(os.environ, PYTHONPATH=f"{SOURCE}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "html", "--execute", "rope.ipynb"],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    page = (tmp_path / "rope.html").read_text()
    images = re.findall(r'<img[^>]*src="data:image/png;base64,([^"]+)"', page)
    assert len(images) == 1  # the viewer's output, drawn offline
    assert '<script type="application/vnd.jupyter.widget-view+json">' not in page
    image = decode(base64.b64decode(images[0]))
    assert image.shape == (360, 480, 3)  # snapshot.SIZE at snapshot.DPI
    # the rope is drawn: some dark pixels (its springs, nodes and the axes), not a blank
    assert (image.sum(axis=2) < 300).sum() > 200


def test_a_live_kernel_keeps_the_widget_view_and_adds_the_image():
    rope = ss.string(6, length=1.0, mass=0.06, stiffness=60.0, dim=2)
    viewer = ss.view(rope, color_by="strain")
    try:
        data, _ = viewer._repr_mimebundle_()
        assert not snapshot.headless_kernel()  # no IPython here
        assert data[WIDGET_VIEW]["model_id"] == viewer.model_id
        assert data["text/plain"] == repr(viewer)
        png = base64.b64decode(data["image/png"])
        assert png == snapshot.png(rope, "strain", None)  # the system as it is now
    finally:
        viewer.close()


@pytest.mark.parametrize(("hist_file", "headless"), [(":memory:", True), ("h.sqlite", False)])
def test_a_kernel_run_by_nbclient_is_told_by_its_history_in_memory(
    monkeypatch, hist_file, headless
):
    from IPython.core import getipython

    class Shell:
        class history_manager:  # noqa: N801  (IPython's attribute name)
            pass

    Shell.history_manager.hist_file = hist_file
    monkeypatch.setattr(getipython, "get_ipython", lambda: Shell())
    assert snapshot.headless_kernel() is headless
