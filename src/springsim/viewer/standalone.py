"""The viewer's front end (JavaScript shipped in the package) and standalone HTML files.

The front end is ``viewer.js``, an ES module of our own (Canvas 2D drawing, no library,
nothing fetched at run time). A standalone file inlines it with the recorded frames
(base64 float32) and a small player standing in for the widget's model, so the same
drawing code plays them offline.
"""

from __future__ import annotations

import base64
import json
import pathlib
from importlib import resources
from typing import Any

from springsim._files import write_atomically

#: The front end's files, in the package (``springsim/viewer/static``).
STATIC = ("gl.js", "viewer.js", "player.js")


def static_text(name: str) -> str:
    """The text of one of the package's front-end files (see :data:`STATIC`).

    Examples
    --------
    >>> static_text("viewer.js").splitlines()[-1]
    'export default { render };'
    """
    if name not in STATIC:
        raise ValueError(f"no front-end file {name!r}; there are {', '.join(STATIC)}")
    return resources.files("springsim.viewer").joinpath("static", name).read_text("utf-8")


def front_end() -> str:
    """The widget's ES module (anywidget's ``_esm``): ``gl.js`` then ``viewer.js``.

    Examples
    --------
    >>> "function render(" in front_end() and "function drawGL(" in front_end()
    True
    """
    return static_text("gl.js") + "\n" + static_text("viewer.js")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def html_document(
    scene: tuple[dict[str, Any], list[bytes]],
    frames: list[tuple[float, bytes, dict[str, float]]],
    period: float,
    pinned: bytes,
    title: str = "springsim",
) -> str:
    """A standalone page playing ``frames`` (time, float32 positions, energy) of
    ``scene`` (the scene message), one every ``period`` seconds, with the nodes
    ``pinned`` (uint8 per node) marked."""
    content, buffers = scene
    data = {
        "scene": content,
        "springs": _b64(buffers[0]),
        "faces": _b64(buffers[1]),
        "pinned": _b64(pinned),
        "period": period,
        "times": [f[0] for f in frames],
        "energies": [f[2] for f in frames],
        "frames": _b64(b"".join(f[1] for f in frames)),
    }
    # "</" never appears inside the script element: JSON escapes it
    payload = json.dumps(data).replace("</", "<\\/")
    viewer = front_end().replace("export default", "const springsimViewer =", 1)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>body {{ font-family: sans-serif; margin: 12px; }}</style>
</head>
<body>
<div id="springsim"></div>
<script id="springsim-data" type="application/json">{payload}</script>
<script>
{viewer}
{static_text("player.js")}
springsimPlay(springsimViewer, document.getElementById("springsim"),
    JSON.parse(document.getElementById("springsim-data").textContent));
</script>
</body>
</html>
"""


def write_html(
    path: pathlib.Path,
    scene: tuple[dict[str, Any], list[bytes]],
    frames: list[tuple[float, bytes, dict[str, float]]],
    period: float,
    pinned: bytes,
) -> None:
    """Write :func:`html_document` to ``path`` (atomically)."""
    text = html_document(scene, frames, period, pinned).encode("utf-8")
    write_atomically(str(path), lambda file: file.write(text))
