"""The viewer's front end (JavaScript shipped in the package) and standalone HTML files.

The front end is ``shapes.js``, ``gl.js`` and ``viewer.js`` joined into one ES module
of our own (Canvas 2D and WebGL 2 drawing, no library, nothing fetched at run time). A
standalone file inlines it with the recorded frames (base64 float32), the scene's
buffers (springs, faces, collider triangles, radii) and a small player standing in for
the widget's model, so the same drawing code plays them offline.
"""

from __future__ import annotations

import base64
import json
import pathlib
from importlib import resources
from typing import Any

import numpy as np

from springsim.files.paths import path_name, write_atomically
from springsim.viewer import protocol

#: The front end's files, in the package (``springsim/viewer/static``).
STATIC = ("shapes.js", "gl.js", "viewer.js", "player.js")


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
    """The widget's ES module (anywidget's ``_esm``): ``shapes.js``, ``gl.js`` then
    ``viewer.js``, joined (they share one module's scope: no imports to resolve).

    Examples
    --------
    >>> code = front_end()
    >>> all(f"function {name}(" in code for name in ("render", "drawGL", "drawRadii"))
    True
    """
    return "\n".join(static_text(name) for name in ("shapes.js", "gl.js", "viewer.js"))


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
        "triangles": _b64(buffers[2]),
        "radii": _b64(buffers[3]) if len(buffers) > 3 else None,
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


def save_history_html(history: Any, path: Any) -> pathlib.Path:
    """Write a standalone HTML file playing the frames of a :class:`springsim.History`.

    The frames (``history.frames``: positions of ``frame_nodes``) are drawn with the
    run's starting ``edges``, ``faces``, ``colliders``, ``collider_triangles`` and
    ``radii`` and the pins of its first
    frame, played in real time; the energy trace shows the recorded energies at the
    frame times (interpolated linearly between records). :meth:`History.save_html`
    calls it.

    Raises
    ------
    ValueError
        The history has fewer than two frames (``run(..., frames=F)`` records them).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import springsim as ss
    >>> rope = ss.string(5, length=1.0, mass=0.05, stiffness=50.0, dim=2)
    >>> history = rope.run(1.0, 1e-3, frames=31, progress=False)
    >>> page = save_history_html(history, pathlib.Path(tempfile.mkdtemp()) / "run.html")
    >>> page.suffix
    '.html'
    """
    target = pathlib.Path(path_name(path))
    count = len(history.frame_times)
    if count < 2:
        raise ValueError(
            f"the history has {count} frame(s); save_html needs 2 or more: "
            "run(..., frames=F) records them"
        )
    times = np.asarray(history.frame_times, dtype=np.float64)
    terms = ("kinetic", "elastic", "gravity", "pressure", "contact", "dissipated")
    at = {
        name: np.interp(times, history.times, getattr(history, name))
        if len(history.times)
        else np.zeros(count)
        for name in terms
    }
    energies = []
    for k in range(count):
        energy = {name: float(at[name][k]) for name in terms}
        energy["total"] = sum(energy[name] for name in terms[:5])
        energies.append(energy)
    positions = np.ascontiguousarray(history.frames, dtype=np.float32)
    frames = [(float(times[k]), positions[k].tobytes(), energies[k]) for k in range(count)]
    scene = protocol.scene_of(
        int(history.dim),
        positions.shape[1],
        history.edges,
        history.faces,
        history.colliders,
        history.collider_triangles,
        history.radii,
    )
    pinned = np.ascontiguousarray(history.frame_pinned[0], dtype=np.uint8).tobytes()
    period = float(times[-1] - times[0]) / (count - 1)
    write_html(target, scene, frames, period if period > 0 else 1 / 30, pinned)
    return target
