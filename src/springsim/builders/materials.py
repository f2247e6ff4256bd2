"""The builders' physical units: placement (rotations), material constants turned into
springs and masses, and damping from a damping ratio (see :mod:`springsim.builders`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from springsim.builders.arguments import _vector

#: How far from orthonormal a rotation matrix may be (round-off of a user's matrix).
ROTATION_TOLERANCE = 1e-9


def _rotation(rotation: object, dim: int) -> np.ndarray:
    """A proper rotation matrix (dim, dim): None (identity), an angle in radians (2D),
    a matrix, or an object with ``as_matrix()`` (SciPy's ``Rotation``)."""
    if rotation is None:
        return np.eye(dim)
    as_matrix = getattr(rotation, "as_matrix", None)
    value = np.asarray(as_matrix() if callable(as_matrix) else rotation)
    if value.dtype.kind not in "iuf":
        raise TypeError(f"rotation must be a {dim}×{dim} matrix of real numbers, not {rotation!r}")
    if value.ndim == 0:
        if dim != 2:
            raise ValueError("rotation as one angle is for 2D; in 3D give a 3×3 matrix")
        angle = float(value)
        if not np.isfinite(angle):
            raise ValueError(f"rotation angle must be finite, got {angle}")
        c, s = np.cos(angle), np.sin(angle)
        return np.array([[c, -s], [s, c]])
    if value.shape != (dim, dim):
        raise ValueError(f"rotation must have shape ({dim}, {dim}), got {value.shape}")
    matrix = value.astype(np.float64)
    if not np.all(np.isfinite(matrix)) or not np.allclose(
        matrix.T @ matrix, np.eye(dim), rtol=0, atol=ROTATION_TOLERANCE
    ):
        raise ValueError("rotation must be orthonormal (Rᵀ R = I), got\n" + str(matrix))
    if np.linalg.det(matrix) < 0:
        raise ValueError(
            "rotation must not be a reflection (det R = −1 would turn faces inside out)"
        )
    return matrix


def _unit(value: npt.ArrayLike, name: str, dim: int) -> np.ndarray:
    """A direction given by a non-zero vector, normalised."""
    vector = _vector(value, name, dim)
    norm = np.linalg.norm(vector)
    if norm == 0:
        raise ValueError(f"{name} must not be the zero vector")
    return vector / norm


def _from_normal(normal: npt.ArrayLike) -> np.ndarray:
    """The rotation turning +z onto ``normal`` about the axis z × n (the shortest turn);
    for n = −z, half a turn about x."""
    n = _unit(normal, "normal", 3)
    z = np.array([0.0, 0.0, 1.0])
    cos = float(z @ n)
    if cos < -1 + 1e-12:
        return np.diag([1.0, -1.0, -1.0])
    v = np.cross(z, n)
    cross = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    return np.eye(3) + cross + cross @ cross / (1 + cos)


def _placement(
    rotation: object, dim: int, alternative: npt.ArrayLike | None, name: str
) -> tuple[np.ndarray, bool]:
    """The rotation, and whether ``alternative`` (a builder's own direction) was given."""
    if alternative is not None and rotation is not None:
        raise ValueError(f"give {name} or rotation, not both")
    return _rotation(rotation, dim), alternative is not None


def _either(a: object, b: object, names: str) -> None:
    """Exactly one of two alternative arguments (``names``: "a or b")."""
    if (a is None) == (b is None):
        first, second = names.split(" or ")
        what = "not both" if a is not None else "one of them"
        raise ValueError(f"give {first} or {second}, {what}")


def edge_weights(count: int) -> np.ndarray:
    """Each node's share of the segments of a row of ``count`` nodes: ½ at the ends."""
    w = np.ones(count)
    w[[0, -1]] = 0.5
    return w


def string_springs(
    segment: float,
    stiffness: float | None,
    ea: float | None,
    tension: float | None,
) -> tuple[float, float]:
    """(k N/m, rest length m) of each spring of a string whose segments are ``segment``
    long as built, from ``stiffness`` or ``ea`` (EA, N), pulled to ``tension`` (N).

    A segment of rest length r has k = EA / r; with a tension T it is built stretched
    to its length: k (segment − r) = T, so r = segment · EA / (EA + T) (from EA) or
    r = segment − T / k (from k).
    """
    if ea is not None:
        if tension is None:
            return ea / segment, segment
        rest = segment * ea / (ea + tension)
        return ea / rest, rest
    if stiffness is None:
        raise ValueError("give stiffness (N/m) or ea (N)")
    if tension is None:
        return stiffness, segment
    rest = segment - tension / stiffness if stiffness > 0 else 0.0
    if not rest > 0:
        raise ValueError(
            f"tension {tension} N needs springs stiffer than {tension / segment:.6g} N/m "
            f"(tension / segment length); stiffness is {stiffness}"
        )
    return stiffness, rest


def cloth_springs(
    a: float,
    b: float,
    youngs_modulus: float,
    poisson: float,
    bend: bool,
    bend_stiffness: float | None,
) -> tuple[float, float, float, float, float]:
    """(k_x, k_y, k_diagonal, k_bend_x, k_bend_y), N/m, of a cloth of a × b cells whose
    lattice has the 2D elastic constants of (E, ν): C11 = C22 = E / (1 − ν²) and
    C12 = ν E / (1 − ν²), N/m.

    A spring of stiffness k along (dx, dy), length L, stores ½ k (dx·ε·dx / L)² under a
    small strain ε; per cell area ab, summed over the cell's springs (one along x,
    one along y, two diagonals, one bend spring 2a along x and one 2b along y):
    C11 = (k_x + 4 k_bx) a/b + 2 k_d a³/(b s²), C22 likewise, C12 = C66 = 2 k_d ab/s²,
    s² = a² + b². Solved: k_d = C12 s² / (2ab), k_x + 4 k_bx = C11 b/a − C12 a/b. On
    square cells: C11 = k + k_d + 4 k_b, C12 = C66 = k_d.
    """
    if not 0 < poisson < 1:
        raise ValueError(
            f"poisson must be in (0, 1) for a cloth of springs, got {poisson}: at 0 the "
            "diagonals vanish (nothing resists shear), at 1 and above E / (1 − ν²) is not finite"
        )
    c11 = youngs_modulus / (1 - poisson**2)
    c12 = poisson * c11
    k_d = c12 * (a * a + b * b) / (2 * a * b)
    pairs = (c11 * b / a - c12 * a / b, c11 * a / b - c12 * b / a)  # k + 4 k_bend, x and y
    if min(pairs) <= 0:
        raise ValueError(
            f"cells of {a:.6g} × {b:.6g} m are too elongated for poisson = {poisson}: the "
            "lattice needs (b/a)² > ν and (a/b)² > ν; use squarer cells"
        )
    if not bend:
        return pairs[0], pairs[1], k_d, 0.0, 0.0
    if bend_stiffness is None:  # bend springs as stiff as the structural ones
        return pairs[0] / 5, pairs[1] / 5, k_d, pairs[0] / 5, pairs[1] / 5
    k_x, k_y = (p - 4 * bend_stiffness for p in pairs)
    if min(k_x, k_y) < 0:
        raise ValueError(
            f"bend_stiffness {bend_stiffness} N/m alone makes the cloth stiffer than "
            f"youngs_modulus: at most {min(pairs) / 4:.6g} N/m"
        )
    return k_x, k_y, k_d, bend_stiffness, bend_stiffness
