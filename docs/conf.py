"""Sphinx configuration of springsim's documentation site.

Build it with ``pip install ".[docs]"`` and ``sphinx-build -W -b html docs docs/_build/html``
(from the root of a clone). The pages are Markdown (MyST): the front page is the README,
included whole; the user guide is its own pages in docs/guide/; the API reference is
generated from the numpydoc docstrings of the installed package, and the notebooks are
rendered with their outputs (see "Notebooks" below).
"""

import json
import pathlib

import springsim

project = "springsim"
author = "the springsim authors"
copyright = "the springsim authors"
release = version = springsim.__version__

extensions = [
    "myst_nb",  # Markdown pages and notebooks (it loads myst_parser)
    "sphinx.ext.autodoc",
    "numpydoc",
    # MathJax served from the site itself (_static/mathjax), so that the formulas
    # render offline: Sphinx's default loads it from a CDN at view time
    "sphinx-mathjax-offline",
]

# Pages: docs/*.md, docs/guide/*.md and the notebooks (docs/notebooks links to
# ../notebooks). The README is the front page (docs/index.md includes it), never built
# alone.
exclude_patterns = ["_build", "notebooks/.ipynb_checkpoints", "**/.ipynb_checkpoints"]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}

# MyST: anchors for headings down to ###, so that the guide's "page.md#heading" links
# resolve;
# $...$ maths in the notebooks' Markdown.
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]

# Notebooks: one stored with outputs is shown as stored (they all are: tools/
# execute_notebooks.py stores them executed, and tests/repository/test_notebooks.py checks that
# the outputs are current); one stored without any output is executed here, in a
# temporary directory, so that the site shows its plots (all nine take under a minute
# on 2 cores).
NOTEBOOKS = sorted((pathlib.Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


def _has_outputs(path: pathlib.Path) -> bool:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return any(cell.get("outputs") for cell in cells if cell["cell_type"] == "code")


nb_execution_mode = "force"
nb_execution_excludepatterns = [f"notebooks/{p.name}" for p in NOTEBOOKS if _has_outputs(p)]
nb_execution_in_temp = True
nb_execution_timeout = 300  # seconds per cell, as tests/repository/test_notebooks.py allows
nb_execution_raise_on_error = True  # a failing cell fails the build

# API reference: members in source order; types as the numpydoc docstrings give them.
autodoc_member_order = "bysource"
autodoc_typehints = "none"
numpydoc_show_class_members = False  # autodoc's :members: lists them once
numpydoc_class_members_toctree = False
# The viewer's widget class derives from anywidget's (the `view` extra): the reference
# documents it whether or not anywidget is installed where the site is built.
autodoc_mock_imports = ["anywidget"]

html_theme = "furo"
html_title = f"springsim {release}"
html_static_path = []
