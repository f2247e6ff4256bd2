"""Wavefront OBJ files: :func:`read_obj` builds a mesh system from one, :func:`write_obj`
writes a frame that Blender or MeshLab opens. Both are also in :mod:`springsim.io`.

Real meshes repeat vertices: modelling programs write one vertex per position, texture
coordinate and normal, so a sphere's poles and a texture seam come out as several
vertices at one place. :func:`read_obj` welds them (:mod:`springsim.weld`) and says so
with a :class:`MeshWarning`. Every problem with a file's content raises ValueError as
``path:line: problem``; nothing is half-loaded.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

from springsim import _core
from springsim._files import StrPath, path_name, write_atomically
from springsim._files import quote as _quote
from springsim._welded import LARGEST_COORDINATE as _LARGEST_COORDINATE
from springsim._welded import MeshWarning, build_welded, weld_fraction
from springsim.builders.geometry import unique_edges
from springsim.reference import MIN_SPRING_LENGTH
from springsim.system import System

__all__ = ["MeshWarning", "read_obj", "write_obj"]


_INDEX = re.compile(r"[+-]?[0-9]+")
_LINE_BREAK = re.compile(r"\r\n?|\n")


# A face as read: (line, vertex indices, texture indices or None per corner).
_Face = tuple[int, list[int], list[int | None]]


class _ObjError(ValueError):
    """A problem on one line of an OBJ file (turned into ValueError with the name)."""

    def __init__(self, line: int, problem: str):
        super().__init__(problem)
        self.line = line


def _obj_statements(text: str) -> Iterator[tuple[int, list[str]]]:
    """(line number, tokens) of each statement: comments stripped, continuation lines
    (ending in a backslash) joined and numbered by their first line, blanks skipped."""
    lines = _LINE_BREAK.split(text)
    k = 0
    while k < len(lines):
        first = k + 1
        piece = lines[k].split("#", 1)[0].rstrip()
        k += 1
        pieces = []  # joined once at the end: linear time however many lines
        while piece.endswith("\\") and k < len(lines):
            pieces.append(piece[:-1])
            piece = lines[k].split("#", 1)[0].rstrip()
            k += 1
        pieces.append(piece)
        tokens = " ".join(pieces).rstrip("\\").split()
        if tokens:
            yield first, tokens


def _statement(tokens: list[str], limit: int = 80) -> str:
    """A statement, quoted for an error message (at most ``limit`` characters)."""
    # limit // 2 + 1 tokens make more than ``limit`` characters: enough to show, and
    # the rest of a huge line is never copied.
    return _quote(" ".join(tokens[: limit // 2 + 1]), limit)


def _numbers(
    line: int, tokens: list[str], least: int, most: int, form: str, largest: float = math.inf
) -> list[float]:
    """The numbers after a statement's keyword: between ``least`` and ``most``, finite,
    the first three at most ``largest`` in magnitude."""
    values = tokens[1:]
    if not least <= len(values) <= most:
        raise _ObjError(
            line, f"{tokens[0]} needs {form}, got {len(values)} values: {_statement(tokens)}"
        )
    numbers: list[float] = []
    for token in values:
        try:
            if "_" in token:  # float() reads "1_000"; OBJ does not
                raise ValueError(token)
            number = float(token)
        except ValueError:
            raise _ObjError(
                line, f"{_quote(token)} is not a number in {_statement(tokens)}"
            ) from None
        if not math.isfinite(number):
            raise _ObjError(line, f"{_quote(token)} is not a finite number in {_statement(tokens)}")
        if len(numbers) < 3 and abs(number) > largest:
            raise _ObjError(
                line,
                f"{_quote(token)} is too large in {_statement(tokens)}: coordinates must be "
                f"within ±{largest:g} (beyond, squared distances overflow)",
            )
        numbers.append(number)
    return numbers


def _obj_index(line: int, token: str, what: str, defined: int) -> int:
    """A 0-based index from an OBJ index (1-based, or negative: -1 is the last one
    defined so far). Positive indices are checked against the file's total later."""
    if not _INDEX.fullmatch(token):
        raise _ObjError(line, f"{_quote(token)} is not an integer {what} index")
    index = int(token)
    if index == 0:
        raise _ObjError(line, f"{what} index 0: OBJ indices start at 1 (or -1 for the last)")
    if index < 0:
        if -index > defined:
            raise _ObjError(
                line, f"{what} index {index} is out of range: {defined} defined before this line"
            )
        return defined + index
    return index - 1


def _parse_obj(
    text: str,
) -> tuple[np.ndarray, list[int], list[_Face], list[tuple[float, float]]]:
    """The file's vertices (N, 3), the line of each, its faces as (line, vertex indices,
    texture indices or None), and its texture coordinates."""
    vertices: list[list[float]] = []
    vertex_lines: list[int] = []
    uv_table: list[tuple[float, float]] = []
    normals = 0
    faces = []  # (line, vertex indices, uv indices or None, largest normal index)
    for line, tokens in _obj_statements(text):
        keyword = tokens[0]
        if keyword == "v":
            form = "3 numbers, x y z [w]"
            vertices.append(_numbers(line, tokens, 3, 7, form, _LARGEST_COORDINATE)[:3])
            vertex_lines.append(line)
        elif keyword == "vt":
            u, v = ([*_numbers(line, tokens, 1, 3, "1 to 3 numbers, u [v [w]]"), 0.0])[:2]
            uv_table.append((u, v))
        elif keyword == "vn":
            _numbers(line, tokens, 3, 3, "3 numbers, x y z")
            normals += 1
        elif keyword == "f":
            if len(tokens) < 4:
                raise _ObjError(
                    line,
                    f"a face needs at least 3 vertices, got {len(tokens) - 1}: "
                    f"{_statement(tokens)}",
                )
            corners, uvs, normal = [], [], -1
            for corner in tokens[1:]:
                parts = corner.split("/")
                if len(parts) > 3 or not parts[0]:
                    raise _ObjError(
                        line, f"{_quote(corner)} is not a face corner v, v/vt, v//vn or v/vt/vn"
                    )
                corners.append(_obj_index(line, parts[0], "vertex", len(vertices)))
                has_uv = len(parts) > 1 and parts[1]
                uvs.append(_obj_index(line, parts[1], "texture", len(uv_table)) if has_uv else None)
                if len(parts) > 2 and parts[2]:
                    normal = max(normal, _obj_index(line, parts[2], "normal", normals))
            faces.append((line, corners, uvs, normal))
        # Anything else (o, g, s, usemtl, mtllib, l, curves, ...) does not make a mesh.
    n = len(vertices)
    for line, corners, uvs, normal in faces:
        if normal >= normals:
            raise _ObjError(
                line, f"normal index {normal + 1} is out of range: the file defines {normals}"
            )
        for vertex, uv in zip(corners, uvs, strict=True):
            if vertex >= n:
                raise _ObjError(
                    line, f"vertex index {vertex + 1} is out of range: the file defines {n}"
                )
            if uv is not None and uv >= len(uv_table):
                raise _ObjError(
                    line,
                    f"texture index {uv + 1} is out of range: the file defines {len(uv_table)}",
                )
        if len(set(corners)) < len(corners):
            shown = _statement([str(c + 1) for c in corners[:41]])  # enough for 80 chars
            raise _ObjError(line, f"the face uses a vertex twice: {shown}")
    positions = np.array(vertices, dtype=np.float64).reshape(n, 3)
    return positions, vertex_lines, [face[:3] for face in faces], uv_table


def read_obj(
    path: StrPath,
    mass: npt.ArrayLike,
    stiffness: npt.ArrayLike,
    damping: npt.ArrayLike = 0.0,
    bend: bool = False,
    weld: float | None = 1e-9,
) -> System:
    """A 3D mesh system from a Wavefront OBJ file: one node per vertex, one spring per edge.

    Reads OBJ as modelling programs write it: ``v x y z [w]`` (w and any vertex
    colours after it are ignored), ``vt u [v [w]]``, ``vn``, and faces ``f`` whose
    corners are ``v``, ``v/vt``, ``v//vn`` or ``v/vt/vn``, with 1-based or negative
    (relative: -1 is the last defined so far) indices. Quads and n-gons are
    fan-triangulated (:func:`springsim.builders.geometry.triangulate`). Comments, blank lines,
    lines continued with a trailing backslash (joined in linear time, however many),
    and every other statement (``o``, ``g``, ``s``, ``usemtl``, ``mtllib``, ``l``,
    ...) are accepted and ignored.

    Coincident vertices are welded into one node (:func:`springsim.weld.weld_vertices`):
    each vertex within ``weld`` times the bounding-box diagonal of an earlier kept
    vertex becomes that vertex's node, so the first vertex in the file is the one kept,
    and nodes keep the file's order. Faces are rewritten on the nodes: an edge whose
    ends were welded disappears (a quad at a pole becomes a triangle), and the
    triangles left with two equal corners are dropped
    (:func:`springsim.weld.weld_polygons`). If anything was welded or dropped, a
    :class:`MeshWarning` says how many, and carries the numbers and the node of each
    of the file's vertices. Vertices that no face uses stay, as nodes without springs.
    The system is then built exactly as :func:`springsim.mesh` builds it from the nodes
    and triangles; each node's uv is that of the first face corner (in file order) on
    it that has one, else (0, 0).

    Parameters
    ----------
    path : str or os.PathLike
        The ``.obj`` file (UTF-8 or ASCII text).
    mass : float or array_like, shape (V,)
        Total mass, kg, spread equally over the nodes; or one mass per vertex of the
        file (V of them), welded vertices' masses adding up.
    stiffness, damping : float or array_like
        Spring stiffness (N/m) and axial damping (N·s/m).
    bend : bool
        Also add a spring across each interior edge (see :func:`springsim.mesh`).
    weld : float or None
        Weld vertices closer than this fraction of the mesh's bounding-box diagonal
        (scale-free: OBJ has no units). The default, 1e-9, welds the copies exporters
        write (equal, or equal to rounding) and nothing a mesh means; 0 welds exactly
        equal ones only (and so, in effect, does anything below about 1e-12). None (or
        False) keeps every vertex: then two coincident vertices joined by a face are an
        error.

    Returns
    -------
    System
        A 3D system whose ``faces`` are the file's triangles, ``uvs`` its texture
        coordinates, rest lengths the edges' lengths.

    Raises
    ------
    TypeError
        ``path`` is not a path, ``weld`` not a number or None.
    ValueError
        ``weld`` outside [0, 1]. A malformed or truncated line (``v 1 2``, ``f 1 x 3``,
        ``f 1 2``, an index 0 or out of range, a face using a vertex twice, a
        non-finite number, a vertex coordinate beyond ±1e150, whose squared distances
        would overflow), a face joining two coincident vertices that were not welded, a
        binary file, or a file without vertices: the message names the file and the
        line (``model.obj:12: ...``) and quotes at most 80 characters of it. No
        system is returned.
    OSError
        The file cannot be read.

    Warns
    -----
    MeshWarning
        Vertices were welded or degenerate triangles dropped.

    Examples
    --------
    >>> import os, tempfile, warnings
    >>> from springsim.io import read_obj
    >>> square = '''# a unit square, one quad
    ... o square
    ... v 0 0 0
    ... v 1 0 0
    ... v 1 1 0
    ... v 0 1 0
    ... vt 0 0
    ... vt 1 0
    ... vt 1 1
    ... vt 0 1
    ... f 1/1 2/2 3/3 4/4
    ... '''
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "square.obj")
    ...     with open(path, "w") as file:
    ...         _ = file.write(square)
    ...     sim = read_obj(path, mass=1.0, stiffness=100.0)
    >>> sim.num_nodes, sim.num_springs, sim.faces.tolist()
    (4, 5, [[0, 1, 2], [0, 2, 3]])
    >>> sim.uvs[2].tolist()
    [1.0, 1.0]

    A fan around a pole written as a modeller does, one pole vertex per triangle:

    >>> cone = '''v 0 0 1
    ... v 0 0 1
    ... v 0 0 1
    ... v 1 0 0
    ... v -0.5 0.866 0
    ... v -0.5 -0.866 0
    ... f 1 4 5
    ... f 2 5 6
    ... f 3 6 4
    ... '''
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "cone.obj")
    ...     with open(path, "w") as file:
    ...         _ = file.write(cone)
    ...     with warnings.catch_warnings(record=True) as caught:
    ...         warnings.simplefilter("always")
    ...         sim = read_obj(path, mass=1.0, stiffness=100.0)
    >>> sim.num_nodes, sim.faces.tolist()
    (4, [[0, 1, 2], [0, 2, 3], [0, 3, 1]])
    >>> report = caught[0].message  # a MeshWarning
    >>> report.welded, report.nodes, report.degenerate, report.node_of_vertex.tolist()
    (2, 4, 0, [0, 0, 0, 1, 2, 3])
    >>> print(str(report).split(": ", 1)[1])  # doctest: +NORMALIZE_WHITESPACE
    welded 2 of 6 vertices into coincident ones (4 nodes)
    (weld=1e-09 of the bounding-box diagonal, 2.49996 m)
    """
    fraction = weld_fraction(weld)
    name = path_name(path)
    with open(name, "rb") as file:
        data = file.read()
    if b"\0" in data:
        line = data.count(b"\n", 0, data.index(b"\0")) + 1
        raise ValueError(f"{name}:{line}: a NUL byte: this is a binary file, not an OBJ")
    text = data.decode("utf-8-sig", errors="replace")
    try:
        vertices, vertex_lines, faces, uv_table = _parse_obj(text)
    except _ObjError as error:
        raise ValueError(f"{name}:{error.line}: {error}") from None
    if len(vertices) == 0:
        raise ValueError(f"{name}: no vertices ('v' lines): not an OBJ mesh")

    def explain(face: int, joins: bool, a: int, b: int, hint: str) -> ValueError:
        what = "joins" if joins else "is next to a face that holds"
        return ValueError(
            f"{name}:{faces[face][0]}: this face {what} vertices {a + 1} and {b + 1} (lines "
            f"{vertex_lines[a]} and {vertex_lines[b]}), which coincide (closer than "
            f"{MIN_SPRING_LENGTH:g} m): a spring between them would have no length; {hint}"
        )

    polygons = [f[1] for f in faces]
    sim, node_of, report = build_welded(
        name, vertices, polygons, mass, stiffness, damping, bend, fraction, explain
    )
    uvs, has_uv = np.zeros((sim.num_nodes, 2)), np.zeros(sim.num_nodes, dtype=bool)
    for _line, corners, corner_uvs in faces:
        for vertex, uv in zip(corners, corner_uvs, strict=True):
            if uv is not None and not has_uv[node_of[vertex]]:
                uvs[node_of[vertex]] = uv_table[uv]
                has_uv[node_of[vertex]] = True
    sim.uvs = uvs
    if report is not None:
        warnings.warn(report, stacklevel=2)
    return sim


def _polylines(pairs: list[list[int]]) -> list[list[int]]:
    """Node pairs joined into polylines, each pair used once: from each pair not yet
    used, the line follows unused pairs (the first in order) from its second end, then
    from its first (a string's springs make one polyline, a ring one closed line)."""
    at: dict[int, list[int]] = {}
    for k, (a, b) in enumerate(pairs):
        at.setdefault(a, []).append(k)
        at.setdefault(b, []).append(k)
    seen = dict.fromkeys(at, 0)  # how many of each node's pairs are known to be used
    used = [False] * len(pairs)

    def walk(node: int) -> list[int]:
        path: list[int] = []
        while True:
            mine = at[node]
            while seen[node] < len(mine) and used[mine[seen[node]]]:
                seen[node] += 1
            if seen[node] == len(mine):
                return path
            k = mine[seen[node]]
            used[k] = True
            a, b = pairs[k]
            node = b if a == node else a
            path.append(node)

    lines = []
    for k, (a, b) in enumerate(pairs):
        if not used[k]:
            used[k] = True
            ahead = walk(b)  # first: a ring closes back at a
            lines.append(walk(a)[::-1] + [a, b] + ahead)
    return lines


def write_obj(sim: _core.System, path: StrPath) -> None:
    """Write a system's current shape as a Wavefront OBJ file (opens in Blender, MeshLab).

    Writes a header comment naming springsim, then one ``v x y z`` per node
    (z = 0 for a 2D system), one ``vt u v`` per node (its :attr:`~springsim.System.uvs`),
    one ``f i/i j/j k/k`` per face (1-based), and the springs that are not an edge of
    a face as ``l`` polylines (``l 1 2 3 ...``: springs end to end make one line, so
    a string opens in Blender as a single polyline; a cloth's shear and bend springs
    as loose edges). Numbers are written with ``repr``, the shortest text that reads
    back as the same float, so :func:`read_obj` recovers positions and uvs exactly;
    ``read_obj`` rebuilds the springs from the faces' edges (it ignores ``l``).
    The file is written to exactly ``path``, through a temporary file renamed into
    place when complete.

    Parameters
    ----------
    sim : System
        The system to write (it is not changed).
    path : str or os.PathLike
        The file to write; replaced if it exists. Call once per frame, with names
        like ``frame_0001.obj``, for an animation.

    Raises
    ------
    TypeError
        ``sim`` is not a System, or ``path`` not a path.
    ValueError
        A position or uv is not finite (no viewer could read it); nothing is written.
    OSError
        The file cannot be written.

    Examples
    --------
    >>> import os, tempfile
    >>> import springsim as ss
    >>> from springsim.io import write_obj
    >>> sim = ss.mesh([[0, 0], [1, 0], [0, 1]], [[0, 1, 2]], mass=1.0, stiffness=100.0)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "frame.obj")
    ...     write_obj(sim, path)
    ...     with open(path) as file:
    ...         print(file.read())  # doctest: +ELLIPSIS
    # springsim ... Wavefront OBJ: vertices 3, faces 1, lines 0, time 0.0 s
    o springsim
    v 0.0 0.0 0.0
    v 1.0 0.0 0.0
    v 0.0 1.0 0.0
    vt 0.0 0.0
    vt 0.0 0.0
    vt 0.0 0.0
    f 1/1 2/2 3/3
    <BLANKLINE>

    A string has no faces: its springs are one polyline.

    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "string.obj")
    ...     write_obj(ss.string(4, length=1.0, mass=0.1, stiffness=10.0), path)
    ...     with open(path) as file:
    ...         print(file.read().splitlines()[-1])
    l 1 2 3 4
    """
    from springsim import __version__

    if not isinstance(sim, _core.System):
        raise TypeError(f"sim must be a springsim.System, not {type(sim).__name__}")
    name = path_name(path)
    positions, uvs = np.array(sim._view("positions")), np.array(sim._view("uvs"))
    faces = sim._view("faces") + 1
    for array, values in (("positions", positions), ("uvs", uvs)):
        if not np.all(np.isfinite(values)):
            raise ValueError(f"cannot write {name}: {array} must be finite")
    if sim.dim == 2:
        positions = np.column_stack([positions, np.zeros(len(positions))])
    springs = np.asarray(sim._view("springs"), dtype=np.int64)
    # The springs that are no edge of a face: (i, j) pairs both ways round.
    both = np.concatenate([unique_edges(faces - 1), np.sort(springs, axis=1)])
    _, same = np.unique(both, axis=0, return_inverse=True)
    same = same.reshape(-1)
    on_face = np.zeros(len(both), dtype=bool)
    on_face[same[: len(both) - len(springs)]] = True
    polylines = _polylines(springs[~on_face[same[len(both) - len(springs) :]]].tolist())
    lines = [
        f"# springsim {__version__} Wavefront OBJ: vertices {len(positions)}, "
        f"faces {len(faces)}, lines {len(polylines)}, time {sim.time!r} s",
        "o springsim",
    ]
    lines += [f"v {x!r} {y!r} {z!r}" for x, y, z in positions.tolist()]
    lines += [f"vt {u!r} {v!r}" for u, v in uvs.tolist()]
    lines += [f"f {a}/{a} {b}/{b} {c}/{c}" for a, b, c in faces.tolist()]
    lines += ["l " + " ".join(str(node + 1) for node in line) for line in polylines]
    text = "\n".join(lines) + "\n"
    write_atomically(name, lambda file: file.write(text.encode("utf-8")))
