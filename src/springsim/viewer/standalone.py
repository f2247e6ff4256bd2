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
from typing import Any, TypeAlias

import numpy as np

from springsim.files.paths import path_name, write_atomically
from springsim.viewer import protocol

#: One recorded frame: time (s), positions (float32 bytes), energy terms (J), the
#: spring values (float32 bytes) with their colour scale [lo, hi], or None, None; and
#: the arrows: the frame message's ``arrows`` content with its origins and vectors
#: (float32 bytes), or None.
Frame: TypeAlias = tuple[
    float,
    bytes,
    dict[str, float],
    bytes | None,
    list[float] | None,
    tuple[dict[str, Any], bytes, bytes] | None,
]

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
    frames: list[Frame],
    period: float,
    pinned: bytes,
    title: str = "springsim",
    color_by: str | None = None,
) -> str:
    """A standalone page playing ``frames`` (:data:`Frame`) of ``scene`` (the scene
    message), one every ``period`` seconds, with the nodes ``pinned`` (uint8 per node)
    marked, the springs coloured by ``color_by`` when every frame has a value per
    spring of the scene."""
    content, buffers = scene
    size = 4 * int(content["springs"])
    colored = color_by is not None and all(f[3] is not None and len(f[3]) == size for f in frames)
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
        "color_by": color_by if colored else None,
        "values": _b64(b"".join(f[3] or b"" for f in frames)) if colored else None,
        "ranges": [f[4] for f in frames] if colored else None,
        # each frame's arrows (count, kind, scale), their float32 data one frame after
        # the other
        "arrows": [f[5][0] if f[5] else None for f in frames],
        "arrow_origins": _b64(b"".join(f[5][1] for f in frames if f[5])),
        "arrow_vectors": _b64(b"".join(f[5][2] for f in frames if f[5])),
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
    frames: list[Frame],
    period: float,
    pinned: bytes,
    color_by: str | None = None,
) -> None:
    """Write :func:`html_document` to ``path`` (atomically)."""
    text = html_document(scene, frames, period, pinned, color_by=color_by).encode("utf-8")
    write_atomically(str(path), lambda file: file.write(text))


def save_history_html(
    history: Any,
    path: Any,
    *,
    speed: float = 1.0,
    color_by: str | None = None,
    color_range: tuple[float, float] | None = None,
) -> pathlib.Path:
    """Write a standalone HTML file playing the frames of a :class:`springsim.History`.

    The frames (``history.frames``: positions of ``frame_nodes``) are drawn with the
    run's starting ``edges``, ``faces``, ``colliders``, ``collider_triangles`` and
    ``radii`` and the pins of its first
    frame, played at ``speed``; the energy trace shows the recorded energies at the
    frame times (interpolated linearly between records). :meth:`History.save_html`
    calls it.

    Parameters
    ----------
    speed : float
        Simulated seconds per second of playback: 1 real time, 0.1 slow motion.
    color_by : {None, "tension", "strain"}
        Colour the springs by ``history.frame_tensions`` or ``frame_strains``, as
        the live viewer does.
    color_range : (float, float), optional
        A fixed colour scale; by default each frame's, symmetric about zero and never
        narrower than a strain of 0.1 % (a tension of 0.1 % strain, from the
        recorded tension per strain; 1 N if no spring was strained by 1e-6).

    Raises
    ------
    ValueError
        The history has fewer than two frames (``run(..., frames=F)`` records them);
        a speed not > 0, an unknown ``color_by``.

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
    check_speed(speed)
    if color_by not in (None, "tension", "strain"):  # a history records no bodies
        raise ValueError(f"color_by must be None, 'tension' or 'strain', not {color_by!r}")
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
    values: Any = [None] * count
    ranges: Any = [None] * count
    if color_by is not None:
        table = np.asarray(
            history.frame_tensions if color_by == "tension" else history.frame_strains
        )
        floor = protocol.STRAIN_FLOOR
        if color_by == "tension":
            strains = np.asarray(history.frame_strains)
            moved = np.abs(strains) > 1e-6
            floor *= float(np.max(np.abs(table[moved] / strains[moved]))) if moved.any() else 1e3
        values = [np.ascontiguousarray(row, dtype=np.float32).tobytes() for row in table]
        ranges = [protocol.color_range(row, floor, color_range) for row in table]
    frames: list[Frame] = [
        (float(times[k]), positions[k].tobytes(), energies[k], values[k], ranges[k], None)
        for k in range(count)
    ]
    scene = protocol.scene_of(
        int(history.dim),
        positions.shape[1],
        history.edges,
        history.faces,
        history.colliders,
        history.collider_triangles,
        history.radii,
        positions[0],
    )
    pinned = np.ascontiguousarray(history.frame_pinned[0], dtype=np.uint8).tobytes()
    period = float(times[-1] - times[0]) / (count - 1) / speed
    write_html(target, scene, frames, period if period > 0 else 1 / 30, pinned, color_by)
    return target


def check_speed(speed: Any) -> float:
    """``speed`` (simulated seconds per second of playback) checked: a number > 0."""
    if isinstance(speed, bool) or not isinstance(speed, (int, float, np.floating)):
        raise TypeError(f"speed must be a number, not {type(speed).__name__}")
    if not 0 < speed < float("inf"):
        raise ValueError(f"speed must be > 0 and finite (simulated s per s), not {speed}")
    return float(speed)
