"""``draw``: one System as it is now, with matplotlib."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from springsim.colliders import collider_rows, collider_triangles
from springsim.plot.arrows import (
    _add_arrows,
    _arrows_of,
    _auto_scale,
    _check_arrows,
    _net_forces,
    _state,
)
from springsim.plot.axes import (
    _axes,
    _check_aspect,
    _exaggerate,
    _exaggeration,
    _fit_limits,
    _label,
    _pyplot,
    _shown,
    _stretch,
)
from springsim.plot.scene import (
    COLOR_BY,
    COLORBAR_LABELS,
    _add_collider_triangles,
    _add_colliders,
    _add_faces,
    _add_nodes,
    _add_radii,
    _body_colors,
    _colorbar,
    _in_view,
    _line_collection,
    _sizes,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from springsim.system import System


def draw(
    sim: System,
    ax: Axes | None = None,
    color_by: str | None = None,
    node_size: float | None = None,
    faces: bool = True,
    linewidth: float = 0.8,
    limit: float | None = None,
    colorbar: bool = True,
    colliders: bool = True,
    arrows: str | None = None,
    arrows_per: str = "node",
    arrow_scale: float | None = None,
    aspect: str | None = None,
    exaggerate: tuple[str, float] | None = None,
) -> Axes:
    """Draw a system's springs as lines, its nodes as dots, pinned nodes as squares, and
    its planes and spheres in grey; nodes with a contact radius get a translucent
    orange disc (2D) or ball-sized marker (3D) of it; optionally arrows for the
    velocities or the forces.

    The axes are labelled with their unit, unless the Axes given already has labels:
    metres, or km, mm or µm for a view wider than 1 km or narrower than 10 cm or
    0.1 mm, so that tick labels stay short (in 3D, matplotlib's vertical axis is
    springsim's y).

    Limits and aspect: on the Axes ``draw`` makes, the limits hold everything with a
    margin and every axis has the same scale. On Axes you pass in, what you set is
    kept and the rest is done the same way: an axis whose limits you set
    (``ax.set_ylim(...)``) keeps them, the others are fitted; an aspect you set
    (``ax.set_aspect(...)``, ``ax.set_box_aspect(...)``) stays, and so does
    matplotlib's default once you have set limits; otherwise the aspect is made equal.

    Parameters
    ----------
    sim : springsim.System
        A 2D or 3D system.
    ax : matplotlib Axes, optional
        Where to draw (3D Axes for a 3D system, 2D for a 2D one); a new figure if
        omitted.
    color_by : {None, "tension", "strain", "body"}
        Colour springs by their signed tension (N) or strain (l/L − 1), on a
        diverging colour map centred on zero; or colour each body (the connected
        pieces, :meth:`springsim.System.bodies`) its own colour from a qualitative
        colour map (tab10; tab20 beyond 10 bodies), its springs, faces, nodes and
        arrows alike (pins stay red); otherwise one colour.
    node_size : float, optional
        Marker size of the nodes, points²; by default it scales with the system, so
        that a fine cloth is not swamped by dots (a dot about 0.3 of the spacing
        between nodes as drawn, 0.8 to 4 points across). Pins are 3 times larger.
    faces : bool
        Draw the triangles (cloth, meshes, balls) as a light surface under the springs.
    linewidth : float
        Width of the spring lines, points (thicker shows ``color_by`` better).
    limit : float, optional
        With ``color_by`` "tension" or "strain": the colour scale runs from −limit to
        +limit (to share one scale between drawings); by default the largest magnitude
        drawn, or 1 when everything is (nearly) zero, so that round-off does not show
        as colour.
    colorbar : bool
        With ``color_by`` "tension" or "strain": add a colour bar beside the Axes,
        labelled with the unit (turn off for panels that share one).
    colliders : bool
        Draw the planes (lines in 2D, with the solid side shaded; the patch inside the
        view in 3D) and spheres (discs in 2D, spheres in 3D); the view is widened to
        hold the spheres and each plane's point nearest the nodes. Colliders are drawn
        where they are, never exaggerated.
    arrows : {None, "velocity", "force"}
        Draw an arrow from each node (or body) along its velocity, or along the net
        force on it now: m·a, springs, gravity, drag, external forces, gas, the air on
        faces and node–node contact, as :func:`springsim.reference.accelerations`
        gives it (pinned nodes are held: no force; colliders act inside a step and
        are not drawn).
    arrows_per : {"node", "body"}
        One arrow per node, or one per body at its centre of mass: the body's
        momentum over its mass (Σ m v / M) or the total force on it (Σ F).
    arrow_scale : float, optional
        Metres of arrow per m/s (velocity) or per N (force). By default the longest
        arrow is 15 % (:data:`springsim.plot.arrows.ARROW_FRACTION`) of the scene's
        size: the largest side of the box around the nodes and colliders as drawn
        (1 m for a single node); the view widens to hold the tips. The arrows' label
        (``get_label()``) gives the scale used.
    aspect : {None, "equal", "auto"}
        "equal": the same scale on every axis; "auto": each axis fills the box; None:
        by the rule above (equal, unless you set an aspect or limits on the Axes you
        pass in).
    exaggerate : (axis, factor), optional
        Multiply the displacements along springsim's ``axis`` ("x", "y" or "z") from
        the rest positions (:attr:`springsim.System.rest_positions`: where the nodes
        were added, unless set) by ``factor``: a node is drawn at rest + factor · (x −
        rest) along it, so that a 5 mm pluck of a 2 m string shows
        (``exaggerate=("y", 50)``). The axis label says so ("y [m], displacement
        ×50"); its tick labels give true coordinates when every node rests at one
        coordinate along it, and are left out otherwise. Arrows are stretched the same
        way.

    Returns
    -------
    matplotlib Axes

    Raises
    ------
    ValueError
        An unknown ``color_by``, ``arrows``, ``arrows_per`` or ``aspect``; a negative
        ``arrow_scale``; an ``exaggerate`` axis that the system lacks or a factor that
        is not positive; 2D Axes for a 3D system, or 3D Axes for a 2D one.
    TypeError
        ``arrow_scale`` or ``exaggerate`` of the wrong type.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import springsim as ss
    >>> from springsim.plot import draw
    >>> sim = ss.System(dim=2)
    >>> _ = sim.add_nodes([[0, 0], [1, 0]])
    >>> _ = sim.add_springs([0, 1], stiffness=1.0)
    >>> ax = draw(sim)
    >>> len(ax.collections), ax.get_xlabel()
    (3, 'x [m]')

    A 5 mm pluck of a 2 m string, 50 times taller, with its velocity arrows:

    >>> string = ss.string(21, length=2.0, mass=0.1, stiffness=500.0, pin="both", dim=2)
    >>> string.positions[10, 1] = 0.005
    >>> string.step(1e-4, steps=20)
    >>> ax = draw(string, arrows="velocity", exaggerate=("y", 50))
    >>> ax.get_ylabel()
    'y [m], displacement ×50'
    """
    _pyplot()
    if color_by not in COLOR_BY:
        raise ValueError(f"color_by must be None, 'tension', 'strain' or 'body', got {color_by!r}")
    scale = _check_arrows(arrows, arrows_per, arrow_scale)
    _check_aspect(aspect)
    exaggeration = _exaggeration(exaggerate, sim.dim)
    dim = sim.dim
    with sim.lock:  # one state, whatever another thread steps
        positions = np.array(sim.positions)
        pairs, pinned = np.array(sim.springs), np.array(sim.pinned)
        rest = np.array(sim.rest_positions)
        per_body = arrows is not None and arrows_per == "body"
        bodies = sim.bodies() if color_by == "body" or per_body else None
        values = None
        if color_by == "tension":
            values = sim.spring_tensions()
        elif color_by == "strain":
            lengths, rest_lengths = sim.spring_lengths(), np.array(sim.rest_lengths)
            ratio = np.divide(
                lengths, rest_lengths, out=np.ones_like(lengths), where=rest_lengths > 0
            )
            values = ratio - 1.0
        largest_k = float(np.abs(sim.stiffness).max(initial=1.0))
        vectors = None
        if arrows == "velocity":
            vectors = np.array(sim.velocities)
        elif arrows == "force":
            vectors = _net_forces(_state(sim), positions, np.array(sim.velocities), pinned)
        masses = np.array(sim.masses)
        rows = collider_rows(sim) if colliders else np.zeros((0, dim + 2))
        shapes = collider_triangles(sim) if colliders else np.zeros((0, 3, dim))
        radii = np.array(sim.radii) if sim._has_radii() else None  # (asking makes no array)
        triangles = np.array(sim.faces)
    drawn = _exaggerate(positions, rest, exaggeration)
    view = np.concatenate([_in_view(drawn, rows, dim), shapes.reshape(-1, dim)])
    if arrows is not None and vectors is not None and len(positions):
        origins, vectors = _arrows_of(arrows_per, arrows, drawn, vectors, masses, bodies)
        vectors = _stretch(vectors, exaggeration)
        if scale is None:
            scale = _auto_scale(vectors, view)
        view = np.concatenate([view, origins + scale * vectors])  # the tips in view
    x = _shown(drawn, dim)
    ax, fresh = _axes(dim, ax)
    center, half = _fit_limits(ax, _shown(view, dim), dim, aspect, fresh)
    _label(ax, dim, 2 * half, exaggeration, rest)
    _add_colliders(ax, rows, dim, center, half)
    _add_collider_triangles(ax, _shown(shapes, dim), dim)
    colors = _body_colors(bodies) if color_by == "body" and bodies is not None else None
    if faces:
        face_colors = None if colors is None else colors[triangles[:, 0]]
        _add_faces(ax, x, triangles, dim, face_colors)
    lines = _line_collection(x[pairs], dim, linewidths=linewidth)
    if values is not None and color_by is not None:
        if limit is None:
            largest = float(np.abs(values).max()) if len(values) else 0.0
            scale_of = 1.0 if color_by == "strain" else largest_k
            limit = largest if largest > 1e-9 * scale_of else 1.0
        lines.set_array(values)
        lines.set_cmap("coolwarm")
        lines.set_clim(-limit, limit)
        if colorbar:
            _colorbar(ax, lines, COLORBAR_LABELS[color_by], dim)
    elif colors is not None and len(pairs):
        lines.set_color(colors[pairs[:, 0]])
    else:
        lines.set_color("tab:blue")
    ax.add_collection(lines)
    size, pin_size = _sizes(ax, x, pairs, half, dim, node_size)
    _add_nodes(ax, x, pinned, size, pin_size, colors)
    if radii is not None:
        _add_radii(ax, x, radii, dim, half)
    if arrows is not None and vectors is not None and len(positions):
        _add_arrows(ax, arrows, _shown(origins, dim), _shown(vectors, dim), float(scale or 0), dim)
    return ax
