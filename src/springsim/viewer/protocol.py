"""The viewer's messages: what Python sends the browser, and what it accepts back.

Python -> browser (each a JSON ``content`` dict and binary ``buffers``, never lists of
numbers in JSON):

- ``{"type": "scene", "dim", "nodes", "springs", "faces", "colliders", "triangles",
  "radii", "bounds"}`` with buffers ``[springs int32 (M, 2), faces int32 (F, 3), triangles
  float32 (T, 3, dim)]`` and, when ``radii`` is true, ``radii float32 (N,)``: the
  topology, the planes and spheres (``colliders``, rows of
  :func:`springsim.colliders.collider_rows`), the boxes, capsules and meshes as
  triangles (:func:`springsim.colliders.collider_triangles`) and the nodes'
  contact radii; ``bounds`` ``[lo, hi]`` (each dim numbers) or None is the box of
  every collider (:func:`collider_bounds`), which the first framing takes in with
  the nodes; sent when the front end says hello and whenever one of them changes
  (springs torn, nodes added, a collider moved, radii set: :func:`scene_key`).
- ``{"type": "frame", "frame", "time", "sent", "energy", "color_by", "range", "contacts",
  "arrows"}`` with buffers ``[positions float32 (N, dim), pinned uint8 (N,)]``, then,
  when colouring by tension, strain or body, ``values float32 (M,)`` (a body's label
  per spring, with ``range`` ``[0, the largest]``), then, when ``contacts`` is a count
  (not None: the viewer's ``contacts`` is on), the node pairs touching
  (:meth:`springsim.System.contact_pairs`) ``int32 (contacts, 2)``, then with arrows
  their origins and vectors as drawn (:func:`frame`): one drawn state. ``range`` ``[lo, hi]`` is the
  colour scale (:func:`color_range`): ``lo`` blue, the middle grey, ``hi`` red.
  ``sent`` is the kernel's ``time.monotonic()`` when the viewer sent it, s (the front
  end's lag, see below; absent in a saved page's frames).
- ``{"type": "state", "playing", "dt", "substeps", "speed", "color_by", "color_range",
  "arrows", "arrows_per", "arrow_scale", "energy_bars", "contacts", "method", "methods",
  "hint", "alive_every", "sliders", "error"}``: the controls, sent when one changes (and
  after a refused "set", so that the page shows what stays); ``method`` is the one
  stepped with (the viewer's, or ``sim.method``), ``methods`` the menu's
  (``springsim.METHODS``), ``hint`` None or the words shown beside the menu when the
  system is too stiff for that explicit method here
  (:func:`springsim.viewer.methods.stiff`); ``alive_every``
  (:data:`ALIVE_EVERY`) is how often a front end that receives frames says it is
  still there. While playing, frames also carry ``achieved_speed`` (simulated s per
  wall s over the last 30 frames).
- ``{"type": "trace", "terms", "samples"}`` with the buffer ``float64 (samples, 1 +
  len(terms))``: the energy trace kept in Python (:class:`Trace`: time, then each of
  :data:`TRACE_TERMS`, the last :data:`TRACE_LENGTH` frames), sent when a front end
  says hello, so that a reloaded page draws the trace it had.
- ``{"type": "error", "message"}``: a step failed (the viewer pauses).

Browser -> Python: ``{"type": t, ...}`` with ``t`` one of :data:`ACTIONS` (see
:func:`parse`). Every message to the kernel makes ipykernel publish busy then idle
(the notebook's kernel indicator blinks), so frames are not acknowledged: the kernel
sends at most ``fps`` a second without waiting, and the front end speaks only when it
falls behind. Its lag is ``(its clock − sent) − min(its clock − sent)``, the minimum
over the frames since it started (the clocks' offset cancels): past
:data:`HOLD_LAG` it sends ``{"type": "hold"}`` (the kernel stops stepping and
sending), and once it has caught up (a frame's lag under :data:`RESUME_LAG`, or no
frame for 0.1 s since the hold: the socket is drained) ``{"type": "resume"}``. While
frames come it sends ``{"type": "alive"}`` when it has sent nothing for
:data:`ALIVE_EVERY` seconds: a viewer that has heard from a front end and then hears
nothing for :data:`ALIVE_TIMEOUT` seconds (the page was closed) stops stepping until
a message comes. Positions are little-endian, C order, as ``np.float32`` writes them.
"""

from __future__ import annotations

import math
import time
from collections import deque
from typing import Any, Final

import numpy as np

from springsim.colliders import BOX, CAPSULE, MESH, SPHERE, collider_rows, collider_triangles

#: The messages the front end may send, with the keys each needs.
ACTIONS: Final[dict[str, tuple[str, ...]]] = {
    "hello": (),
    "hold": (),
    "resume": (),
    "alive": (),
    "play": (),
    "pause": (),
    "step": (),
    "reset": (),
    "mark": (),
    "grab": ("node",),
    "drag": ("node", "position"),
    "release": ("node",),
    "pin": ("node",),
    "set": ("name", "value"),
    "slider": ("name", "value"),
}
#: What a "set" message may set (the widget's fields and menu).
SETTABLE: Final = (
    "dt",
    "substeps",
    "speed",
    "color_by",
    "arrows",
    "arrows_per",
    "energy_bars",
    "contacts",
    "method",
)
#: What a frame can be coloured by (None: plain springs; "body": each connected piece
#: in its own colour, the front end's TAB10 palette).
COLOR_BY: Final = (None, "tension", "strain", "body")


def scene(sim: Any) -> tuple[dict[str, Any], list[bytes]]:
    """The scene message of ``sim``: content and buffers (springs, faces, collider
    triangles, and the radii when a node has one).

    Examples
    --------
    >>> import numpy as np
    >>> import springsim as ss
    >>> rope = ss.string(3, length=1.0, mass=0.1, stiffness=1.0, dim=2)
    >>> content, buffers = scene(rope)
    >>> content["nodes"], np.frombuffer(buffers[0], np.int32).tolist(), len(buffers)
    (3, [0, 1, 1, 2], 3)
    >>> _ = rope.add_box([0.5, -1.0], [0.25, 0.5])
    >>> rope.radii = 0.1
    >>> content, buffers = scene(rope)
    >>> content["triangles"], np.frombuffer(buffers[3], np.float32).tolist()
    (2, [0.10000000149011612, 0.10000000149011612, 0.10000000149011612])
    """
    return scene_of(
        int(sim.dim),
        int(sim.num_nodes),
        sim.springs,
        sim.faces,
        collider_rows(sim),
        collider_triangles(sim),
        sim.radii if sim._has_radii() else None,
        sim.positions,
    )


def scene_of(
    dim: int,
    nodes: int,
    springs: Any,
    faces: Any,
    colliders: Any,
    triangles: Any,
    radii: Any | None,
    positions: Any = (),
) -> tuple[dict[str, Any], list[bytes]]:
    """The scene message of these arrays (a live system's or a :class:`History`'s);
    ``radii`` None, or all zero, when no node has a radius (then no radii buffer);
    ``positions`` the nodes' (where the planes are clipped: :func:`collider_bounds`)."""
    springs = np.ascontiguousarray(springs, dtype=np.int32).reshape(-1, 2)
    faces = np.ascontiguousarray(faces, dtype=np.int32).reshape(-1, 3)
    triangles = np.ascontiguousarray(triangles, dtype=np.float32).reshape(-1, 3, dim)
    content = {
        "type": "scene",
        "dim": dim,
        "nodes": nodes,
        "springs": len(springs),
        "faces": len(faces),
        "colliders": np.asarray(colliders, dtype=np.float64).reshape(-1, dim + 2).tolist(),
        "triangles": len(triangles),
        "radii": False,
        "bounds": collider_bounds(dim, colliders, triangles, positions),
    }
    buffers = [springs.tobytes(), faces.tobytes(), triangles.tobytes()]
    if radii is not None and np.any(np.asarray(radii) > 0):
        content["radii"] = True
        buffers.append(np.ascontiguousarray(radii, dtype=np.float32).tobytes())
    return content, buffers


def collider_bounds(
    dim: int, colliders: Any, triangles: Any, positions: Any = ()
) -> list[list[float]] | None:
    """The box ``[lo, hi]`` holding every collider, or None without any: each sphere
    (centre ± radius), every vertex of the boxes', capsules' and meshes' triangles,
    and of each plane, which has no end, its point nearest the nodes' centre (the mean
    of ``positions``; the origin without nodes). The viewer's first framing takes in
    this box and the nodes.

    Parameters
    ----------
    dim : int
        2 or 3.
    colliders : array_like
        Rows of :func:`springsim.colliders.collider_rows` (kind, vector, scalar).
    triangles : array_like
        (T, 3, dim) :func:`springsim.colliders.collider_triangles`.
    positions : array_like
        (N, dim) the nodes' positions.

    Examples
    --------
    >>> import springsim as ss
    >>> rope = ss.string(3, length=1.0, mass=0.1, stiffness=1.0, dim=2)
    >>> _ = rope.add_box([2.0, -1.0], [0.25, 0.5])
    >>> _ = rope.add_plane([0.0, 1.0], -3.0)          # the floor y = -3
    >>> content, _ = scene(rope)
    >>> content["bounds"]                             # the floor below the rope's centre
    [[0.5, -3.0], [2.25, -0.5]]
    """
    rows = np.asarray(colliders, dtype=np.float64).reshape(-1, dim + 2)
    points = [np.asarray(triangles, dtype=np.float64).reshape(-1, dim)]
    nodes = np.asarray(positions, dtype=np.float64).reshape(-1, dim)
    centre = nodes.mean(axis=0) if len(nodes) else np.zeros(dim)
    for row in rows:
        vector, scalar = row[1 : 1 + dim], row[1 + dim]
        if row[0] == SPHERE:
            points.append(np.array([vector - scalar, vector + scalar]))
        else:  # the plane n . x = offset (n a unit normal): the foot of the centre
            points.append((centre - (vector @ centre - scalar) * vector)[None, :])
    every = np.concatenate(points)
    if not len(every):
        return None
    return [every.min(axis=0).tolist(), every.max(axis=0).tolist()]


def scene_key(sim: Any) -> tuple[Any, ...]:
    """What the scene message depends on, cheaply (no triangles built): the counts,
    each collider's row and shape (a mesh's vertices), and the radii. The viewer sends
    the scene again when it changes."""
    shapes = []
    for row in sim._colliders():
        cid, kind = row[0], row[1]
        shape: Any = sim._collider_shape(cid) if kind in (BOX, CAPSULE, MESH) else None
        if kind == MESH:
            shape = np.asarray(shape[0]).tobytes()  # the vertices; the faces never change
        shapes.append((tuple(row), shape))
    radii = sim.radii.tobytes() if sim._has_radii() else b""
    return (sim.num_nodes, sim.num_springs, tuple(shapes), radii)


def spring_values(sim: Any, color_by: str | None) -> np.ndarray | None:
    """Per-spring tension (N), strain (length / rest length − 1) or body (the label
    :meth:`springsim.System.bodies` gives the spring's nodes, as a float), or None.

    Examples
    --------
    >>> import springsim as ss
    >>> sim = ss.System(dim=2)
    >>> _ = sim.add_nodes([[0, 0], [1, 0], [5, 0], [6, 0], [7, 0]])
    >>> _ = sim.add_springs([[3, 4], [0, 1], [2, 3]], stiffness=1.0)
    >>> spring_values(sim, "body").tolist()
    [1.0, 0.0, 1.0]
    """
    if color_by == "body":
        labels = sim.bodies()
        return np.asarray(labels[np.asarray(sim.springs)[:, 0]], dtype=np.float64)
    if color_by == "tension":
        return np.asarray(sim.spring_tensions(), dtype=np.float64)
    if color_by == "strain":
        return np.asarray(sim.spring_lengths() / sim.rest_lengths - 1.0, dtype=np.float64)
    return None


#: The smallest half-width of the automatic strain colour scale: 0.1 % strain, so that
#: round-off (a freely falling cloth's strains are about 1e-16) is drawn neutral grey.
STRAIN_FLOOR: Final = 1e-3


def color_floor(sim: Any, color_by: str | None) -> float:
    """The smallest half-width of the automatic colour scale of ``color_by``.

    Strain: :data:`STRAIN_FLOOR`. Tension: the tension that strain gives the stiffest
    spring, ``STRAIN_FLOOR × max(stiffness × rest length)`` (N), or 1 N with no
    (stiff) springs.

    Examples
    --------
    >>> import springsim as ss
    >>> rope = ss.string(3, length=1.0, mass=0.1, stiffness=200.0, dim=2)
    >>> color_floor(rope, "strain"), round(color_floor(rope, "tension"), 12)
    (0.001, 0.1)
    """
    if color_by != "tension":
        return STRAIN_FLOOR
    if not sim.num_springs:
        return 1.0
    top = float(np.max(np.asarray(sim.stiffness) * np.asarray(sim.rest_lengths)))
    return STRAIN_FLOOR * top if top > 0 and math.isfinite(top) else 1.0


def color_range(
    values: np.ndarray, floor: float, fixed: tuple[float, float] | None = None
) -> list[float]:
    """The colour scale ``[lo, hi]`` of these spring values: ``fixed`` when given, else
    symmetric about zero, ``±max(|values|, floor)`` (zero then drawn grey).

    Examples
    --------
    >>> color_range(np.array([1e-16, -3e-16]), 1e-3)
    [-0.001, 0.001]
    >>> color_range(np.array([0.02, -0.01]), 1e-3), color_range(np.array([5.0]), 1e-3, (0, 1))
    ([-0.02, 0.02], [0.0, 1.0])
    """
    if fixed is not None:
        return [float(fixed[0]), float(fixed[1])]
    finite = values[np.isfinite(values)]
    top = max(float(np.abs(finite).max()) if finite.size else 0.0, floor)
    return [-top, top]


def color_index(values: np.ndarray, scale: list[float], levels: int = 21) -> np.ndarray:
    """The colour level (0 blue .. levels - 1 red, the middle grey) the front end draws
    each value in: ``round((v - lo) / (hi - lo) (levels - 1))``, clipped (viewer.js's
    ``drawSprings`` computes the same)."""
    lo, hi = scale
    where = np.clip((values - lo) / (hi - lo), 0.0, 1.0)
    return np.rint(where * (levels - 1)).astype(int)


def energy(sim: Any) -> dict[str, float]:
    """Each energy term, the total and the dissipated energy, J."""
    e = sim.energy()
    return {
        "kinetic": e.kinetic,
        "elastic": e.elastic,
        "gravity": e.gravity,
        "pressure": e.pressure,
        "contact": e.contact,
        "total": e.total,
        "dissipated": float(sim.dissipated),
    }


#: Lag (s) past which the front end asks the kernel to hold its frames (viewer.js).
HOLD_LAG: Final = 0.25
#: Lag (s) under which a front end that asked to hold asks to resume (viewer.js).
RESUME_LAG: Final = 0.1
#: Seconds of silence after which a front end receiving frames says "alive".
ALIVE_EVERY: Final = 10.0
#: Seconds without any message after which a viewer that has heard from a front end
#: stops stepping (three "alive" missed: the page is gone), until a message comes.
ALIVE_TIMEOUT: Final = 3 * ALIVE_EVERY


#: The energy terms of the trace, J, in the order of the trace message's columns.
TRACE_TERMS: Final = ("kinetic", "elastic", "gravity", "pressure", "contact", "total", "dissipated")
#: Samples the trace keeps (the front end's HISTORY in viewer.js is the same).
TRACE_LENGTH: Final = 2000


class Trace:
    """The energy trace: the last :data:`TRACE_LENGTH` frames' time and energies.

    One sample per time, as the front end keeps them: a frame at the time of the last
    sample replaces it (a drag while paused), an earlier one (a reset) starts the
    trace again.

    Examples
    --------
    >>> trace = Trace()
    >>> for t in (0.0, 0.1, 0.1, 0.2, 0.05):
    ...     trace.add(t, dict.fromkeys(TRACE_TERMS, t))
    >>> trace.message()[0]
    {'type': 'trace', 'terms': ['kinetic', 'elastic', 'gravity', 'pressure', 'contact', \
'total', 'dissipated'], 'samples': 1}
    """

    def __init__(self, length: int = TRACE_LENGTH) -> None:
        self.samples: deque[list[float]] = deque(maxlen=length)

    def add(self, time: float, energy: dict[str, float]) -> None:
        """Add a frame's sample (``energy`` as :func:`energy` gives it)."""
        row = [float(time), *(float(energy[k]) for k in TRACE_TERMS)]
        if self.samples and time <= self.samples[-1][0]:
            if time < self.samples[-1][0]:
                self.samples.clear()
            else:
                self.samples.pop()
        self.samples.append(row)

    def message(self) -> tuple[dict[str, Any], list[bytes]]:
        """The trace message: content and its float64 buffer (samples, 1 + terms)."""
        table = np.array(self.samples, dtype="<f8").reshape(-1, 1 + len(TRACE_TERMS))
        content = {"type": "trace", "terms": list(TRACE_TERMS), "samples": len(table)}
        return content, [table.tobytes()]


#: A frame's arrows: kind, per, scale, origins (A, dim) and vectors as drawn (A, dim), m.
Arrows = tuple[str, str, float, np.ndarray, np.ndarray]


def frame(
    sim: Any,
    number: int,
    color_by: str | None,
    fixed_range: tuple[float, float] | None = None,
    arrows: Arrows | None = None,
    contacts: bool = False,
) -> tuple[dict[str, Any], list[bytes]]:
    """The frame message of ``sim`` now: content and buffers (positions float32, pins
    uint8, and the spring values when colouring, on the scale ``fixed_range`` or the
    automatic one of :func:`color_range`); with ``contacts``, ``content["contacts"]``
    the number of node pairs touching now and their buffer, int32 (count, 2)
    (:meth:`springsim.System.contact_pairs`, i < j), after the values (None and no
    buffer without); with ``arrows``, ``content["arrows"]``
    ``{"kind", "per", "scale", "count"}`` (the scale None while infinite: nothing
    drawn yet) and two more buffers, last: the arrows' origins and their vectors as
    drawn (vector × scale, metres), float32 (count, dim) each
    (:mod:`springsim.viewer.arrows`).

    Examples
    --------
    >>> import springsim as ss
    >>> rope = ss.string(3, length=1.0, mass=0.1, stiffness=1.0, dim=2)
    >>> content, buffers = frame(rope, 7, None)
    >>> content["frame"], decode_positions(buffers[0], 2).tolist(), list(buffers[1])
    (7, [[0.0, 0.0], [0.5, 0.0], [1.0, 0.0]], [1, 0, 0])
    >>> balls = ss.System(dim=2)
    >>> _ = balls.add_nodes([[0, 0], [0.15, 0], [1, 0]])
    >>> balls.radii = 0.1
    >>> balls.track_energy = True                     # as the viewer keeps the books
    >>> content, buffers = frame(balls, 1, None, contacts=True)
    >>> content["contacts"], np.frombuffer(buffers[2], np.int32).reshape(-1, 2).tolist()
    (1, [[0, 1]])
    """
    positions = np.ascontiguousarray(sim.positions, dtype=np.float32)
    pinned = np.ascontiguousarray(sim.pinned, dtype=np.uint8)
    content: dict[str, Any] = {
        "type": "frame",
        "frame": number,
        "time": float(sim.time),
        "sent": time.monotonic(),
        "energy": energy(sim),
        "color_by": color_by,
        "range": None,
        "contacts": None,
        "arrows": None,
    }
    buffers = [positions.tobytes(), pinned.tobytes()]
    values = spring_values(sim, color_by)
    if values is not None:
        if color_by == "body":  # labels: the range is theirs
            content["range"] = [0.0, float(values.max()) if len(values) else 0.0]
        else:
            content["range"] = color_range(values, color_floor(sim, color_by), fixed_range)
        buffers.append(np.ascontiguousarray(values, dtype=np.float32).tobytes())
    if contacts:
        pairs = np.ascontiguousarray(sim.contact_pairs(), dtype="<i4").reshape(-1, 2)
        content["contacts"] = len(pairs)
        buffers.append(pairs.tobytes())
    if arrows is not None:
        kind, per, scale, origins, drawn = arrows
        content["arrows"] = {
            "kind": kind,
            "per": per,
            "scale": scale if math.isfinite(scale) else None,
            "count": len(origins),
        }
        for array in (origins, drawn):
            buffers.append(np.ascontiguousarray(array, dtype=np.float32).tobytes())
    return content, buffers


def decode_positions(buffer: bytes | memoryview, dim: int) -> np.ndarray:
    """The positions of a frame buffer, shape (N, dim) float32."""
    return np.frombuffer(buffer, dtype="<f4").reshape(-1, dim)


#: The largest node number a message may carry: exact in a JavaScript number.
MAX_NODE: Final = 2**53


def _number(message: dict[str, Any], key: str) -> float:
    value = message[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"message {message['type']!r}: {key} must be a number, not {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"message {message['type']!r}: {key} must be finite, not {value}")
    return float(value)


def _count(message: dict[str, Any], key: str, high: int) -> int:
    """``message[key]`` as an int in [0, high] (JSON integers arrive as ints)."""
    value = message[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"message {message['type']!r}: {key} must be an int, not {value!r}")
    if not 0 <= value <= high:
        raise ValueError(f"message {message['type']!r}: {key} must be in [0, {high}], not {value}")
    return value


def node_index(message: dict[str, Any], num_nodes: int) -> int:
    """The node a message names, checked against the system's node count."""
    node = message["node"]
    if isinstance(node, bool) or not isinstance(node, int):
        raise TypeError(f"message {message['type']!r}: node must be an int, not {node!r}")
    if not 0 <= node < num_nodes:
        raise IndexError(
            f"message {message['type']!r}: node {node} out of range for {num_nodes} nodes"
        )
    return node


def position(message: dict[str, Any], dim: int) -> np.ndarray:
    """The position a drag message carries, as dim floats."""
    value = message["position"]
    if not isinstance(value, (list, tuple)) or len(value) != dim:
        raise ValueError(f"message 'drag': position must be a list of {dim} numbers, not {value!r}")
    return np.array([_number({"type": "drag", "x": v}, "x") for v in value])


def parse(message: Any) -> dict[str, Any]:
    """Check a message from the front end: a dict with a known ``type`` and its keys.

    Examples
    --------
    >>> parse({"type": "grab", "node": 3})
    {'type': 'grab', 'node': 3}
    >>> parse({"type": "grab"})
    Traceback (most recent call last):
    ...
    ValueError: message 'grab' lacks node

    Every field is checked before any is used: a node number is a whole number in
    range, a position and a slider's (or dt's, substeps') value finite
    numbers, a name a str. What the values must also satisfy that depends on the
    system (a node below its count, a slider's range) the viewer
    checks when it acts.

    Returns
    -------
    dict
        A checked copy: numbers as Python ints and floats.

    Raises
    ------
    TypeError
        Not a dict, or a value of the wrong type.
    ValueError
        An unknown type (the message lists the known ones), a missing or unknown key,
        or a value out of range (not finite, a negative or too large node number).
    """
    if not isinstance(message, dict):
        raise TypeError(f"a viewer message is a dict, not {type(message).__name__}")
    kind = message.get("type")
    if not isinstance(kind, str) or kind not in ACTIONS:
        raise ValueError(f"unknown viewer message type {kind!r}; known: {', '.join(ACTIONS)}")
    missing = [key for key in ACTIONS[kind] if key not in message]
    if missing:
        raise ValueError(f"message {kind!r} lacks {', '.join(missing)}")
    extra = sorted(str(key) for key in message if key != "type" and key not in ACTIONS[kind])
    if extra:
        raise ValueError(f"message {kind!r} has unknown keys {', '.join(extra)}")
    checked = dict(message)
    if "node" in checked:
        checked["node"] = _count(message, "node", MAX_NODE)
    if "position" in checked:
        value = message["position"]
        if not isinstance(value, (list, tuple)) or not 2 <= len(value) <= 3:
            raise ValueError(
                f"message {kind!r}: position must be a list of 2 or 3 numbers, not {value!r}"
            )
        checked["position"] = [_number({"type": kind, "position": v}, "position") for v in value]
    if "name" in checked and not isinstance(message["name"], str):
        raise TypeError(f"message {kind!r}: name must be a str, not {message['name']!r}")
    if kind == "set" and message["name"] not in SETTABLE:
        raise ValueError(
            f"message 'set': name must be one of {', '.join(SETTABLE)}, not {message['name']!r}"
        )
    if kind == "slider" or (kind == "set" and message["name"] in ("dt", "substeps", "speed")):
        checked["value"] = _number(message, "value")
    elif kind == "set" and message["name"] in ("energy_bars", "contacts"):
        if not isinstance(message["value"], bool):
            raise TypeError(f"message 'set': value must be true or false, not {message['value']!r}")
    elif kind == "set" and message["value"] is not None and not isinstance(message["value"], str):
        raise TypeError(f"message 'set': value must be a str or null, not {message['value']!r}")
    return checked
