"""Wavefront OBJ files: :func:`read` reads the mesh of one (:func:`springsim.read_obj`
builds a system from it), :func:`write_obj` writes a frame that Blender or MeshLab
opens (:func:`springsim.io.write_obj`).

Real meshes repeat vertices: modelling programs write one vertex per position, texture
coordinate and normal, so a sphere's poles and a texture seam come out as several
vertices at one place. :func:`springsim.read_obj` welds them
(:mod:`springsim.files.weld`) and says so with a :class:`~springsim.MeshWarning`. Every
problem with a file's content raises ValueError as ``path:line: problem``; nothing is
half-loaded.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

import numpy as np

from springsim import _core
from springsim._version import __version__
from springsim.builders.geometry import unique_edges
from springsim.files.paths import StrPath, path_name, write_atomically
from springsim.files.paths import quote as _quote
from springsim.files.weld import LARGEST_COORDINATE as _LARGEST_COORDINATE
from springsim.files.weld import MeshFile
from springsim.reference import MIN_SPRING_LENGTH

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


def read(path: StrPath) -> tuple[MeshFile, list[_Face], list[tuple[float, float]]]:
    """The mesh an OBJ file holds (for :func:`springsim.read_obj`): its vertices and
    polygons, with the file's faces (each face's line, vertex and texture indices) and
    texture coordinates. ValueError as ``path:line: problem``."""
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

    return MeshFile(name, vertices, [f[1] for f in faces], explain), faces, uv_table


def node_uvs(
    faces: list[_Face], uv_table: list[tuple[float, float]], node_of: np.ndarray, nodes: int
) -> np.ndarray:
    """Each node's uv: that of the first face corner (in file order) on it that has one,
    else (0, 0)."""
    uvs, has_uv = np.zeros((nodes, 2)), np.zeros(nodes, dtype=bool)
    for _line, corners, corner_uvs in faces:
        for vertex, uv in zip(corners, corner_uvs, strict=True):
            if uv is not None and not has_uv[node_of[vertex]]:
                uvs[node_of[vertex]] = uv_table[uv]
                has_uv[node_of[vertex]] = True
    return uvs


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


def write_obj(self: _core.System, path: StrPath) -> None:
    """Write positions, uvs and faces as a Wavefront OBJ (opens in Blender, MeshLab); see
    :func:`springsim.io.write_obj`."""
    name = path_name(path)
    positions, uvs = np.array(self._view("positions")), np.array(self._view("uvs"))
    faces = self._view("faces") + 1
    for array, values in (("positions", positions), ("uvs", uvs)):
        if not np.all(np.isfinite(values)):
            raise ValueError(f"cannot write {name}: {array} must be finite")
    if self.dim == 2:
        positions = np.column_stack([positions, np.zeros(len(positions))])
    springs = np.asarray(self._view("springs"), dtype=np.int64)
    # The springs that are no edge of a face: (i, j) pairs both ways round.
    both = np.concatenate([unique_edges(faces - 1), np.sort(springs, axis=1)])
    _, same = np.unique(both, axis=0, return_inverse=True)
    same = same.reshape(-1)
    on_face = np.zeros(len(both), dtype=bool)
    on_face[same[: len(both) - len(springs)]] = True
    polylines = _polylines(springs[~on_face[same[len(both) - len(springs) :]]].tolist())
    lines = [
        f"# springsim {__version__} Wavefront OBJ: vertices {len(positions)}, "
        f"faces {len(faces)}, lines {len(polylines)}, time {self.time!r} s",
        "o springsim",
    ]
    lines += [f"v {x!r} {y!r} {z!r}" for x, y, z in positions.tolist()]
    lines += [f"vt {u!r} {v!r}" for u, v in uvs.tolist()]
    lines += [f"f {a}/{a} {b}/{b} {c}/{c}" for a, b, c in faces.tolist()]
    lines += ["l " + " ".join(str(node + 1) for node in line) for line in polylines]
    text = "\n".join(lines) + "\n"
    write_atomically(name, lambda file: file.write(text.encode("utf-8")))
