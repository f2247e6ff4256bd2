"""The viewer's sliders (named parameters of a System) and its reset point.

Sliders, each with a range chosen from the system when the viewer is made:

- ``"gravity"``: g, m/s², along the direction of the system's gravity (−y if it has
  none); 0 to 3 times its magnitude (30 m/s² when it has none).
- ``"wind"``: the wind speed, m/s, along the system's wind (+z in 3D, +x in 2D if it
  has none); 0 to 20 m/s or 3 times its speed.
- ``"drag"``: ``sim.drag``, N·s/m per node, 0 to 1 or 5 times its value.
- ``"damping"``: every spring's damping set to this value, N·s/m (it starts at their
  mean); 0 to 5 times their largest (or 1).
- ``"stiffness"``: a factor on every spring's stiffness as it was when the viewer was
  made (or reset), 0.1 to 10.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np

#: The parameters a slider can set.
SLIDERS: Final = ("gravity", "wind", "drag", "damping", "stiffness")
_UNITS: Final = {"gravity": "m/s²", "wind": "m/s", "drag": "N·s/m", "damping": "N·s/m"}


def _direction(vector: np.ndarray, fallback: int) -> tuple[np.ndarray, float]:
    norm = float(np.linalg.norm(vector))
    if norm > 0:
        return vector / norm, norm
    unit = np.zeros(len(vector))
    unit[fallback] = -1.0 if fallback == 1 else 1.0
    return unit, 0.0


@dataclass
class Slider:
    """One slider: its parameter, range, value and the direction a vector one acts in."""

    name: str
    low: float
    high: float
    value: float
    direction: np.ndarray | None = None

    def message(self) -> dict[str, Any]:
        """The slider as the front end draws it."""
        return {
            "name": self.name,
            "min": self.low,
            "max": self.high,
            "value": self.value,
            "unit": _UNITS.get(self.name, "×"),
        }


def make_slider(sim: Any, name: str) -> Slider:
    """The slider of parameter ``name`` for ``sim``, at the system's current value.

    Examples
    --------
    >>> import springsim as ss
    >>> slider = make_slider(ss.System(dim=2), "gravity")
    >>> slider.low, slider.high, slider.value, slider.direction.tolist()
    (0.0, 29.43, 9.81, [0.0, -1.0])
    """
    if not isinstance(name, str):
        raise TypeError(f"a slider is named by a str, not {type(name).__name__}")
    if name not in SLIDERS:
        raise ValueError(f"no slider {name!r}; the sliders are {', '.join(SLIDERS)}")
    dim = sim.dim
    if name == "gravity":
        unit, g = _direction(np.array(sim.gravity), 1)
        return Slider(name, 0.0, 3 * g if g > 0 else 30.0, g, unit)
    if name == "wind":
        unit, w = _direction(np.array(sim.wind), 2 if dim == 3 else 0)
        return Slider(name, 0.0, max(20.0, 3 * w), w, unit)
    if name == "drag":
        return Slider(name, 0.0, max(1.0, 5 * sim.drag), float(sim.drag))
    if name == "damping":
        c = np.array(sim.damping)
        top = float(c.max()) if c.size else 0.0
        return Slider(name, 0.0, 5 * top if top > 0 else 1.0, float(c.mean()) if c.size else 0.0)
    return Slider(name, 0.1, 10.0, 1.0)


def apply(sim: Any, slider: Slider, value: float) -> None:
    """Set ``slider``'s parameter of ``sim`` to ``value`` (checked against its range).

    Examples
    --------
    >>> import springsim as ss
    >>> sim = ss.System(dim=2)
    >>> apply(sim, make_slider(sim, "wind"), 5.0)
    >>> sim.wind.tolist()
    [5.0, 0.0]
    """
    if not slider.low <= value <= slider.high:
        raise ValueError(
            f"slider {slider.name!r} takes values in [{slider.low:g}, {slider.high:g}], "
            f"not {value:g}"
        )
    if slider.name in ("gravity", "wind"):
        assert slider.direction is not None  # set for every vector slider
        setattr(sim, slider.name, slider.direction * value)
    elif slider.name == "drag":
        sim.drag = value
    elif slider.name == "damping":
        sim.damping = value
    else:  # stiffness: a factor on the stiffness it had when the slider was last at 1
        sim.stiffness = np.array(sim.stiffness) * (value / slider.value)
    slider.value = value


class Snapshot:
    """A System's state to go back to: nodes, springs, clock, and global parameters."""

    _SCALARS: Final = ("time", "dissipated", "drag")
    _VECTORS: Final = ("gravity", "wind")
    _NODES: Final = ("positions", "velocities", "pinned", "external_forces")
    _SPRINGS: Final = ("rest_lengths", "stiffness", "damping")

    def __init__(self, sim: Any) -> None:
        self.values = {
            name: np.array(getattr(sim, name))
            for name in (*self._VECTORS, *self._NODES, *self._SPRINGS, "springs")
        }
        self.scalars = {name: float(getattr(sim, name)) for name in self._SCALARS}

    def restore(self, sim: Any) -> None:
        """Put ``sim`` back in this state. Torn springs are added again; a system whose
        node count changed since cannot be restored (ValueError, nothing changed)."""
        if sim.num_nodes != len(self.values["positions"]):
            raise ValueError(
                f"cannot reset: the system has {sim.num_nodes} nodes, the reset point "
                f"{len(self.values['positions'])}; set a new reset point"
            )
        if not np.array_equal(sim.springs, self.values["springs"]):
            sim.remove_springs(np.arange(sim.num_springs))
            if len(self.values["springs"]):
                sim.add_springs(
                    self.values["springs"],
                    stiffness=self.values["stiffness"],
                    damping=self.values["damping"],
                    rest_lengths=self.values["rest_lengths"],
                )
        for name, value in self.values.items():
            if name != "springs":
                setattr(sim, name, value)
        for name, number in self.scalars.items():
            setattr(sim, name, number)
        sim.broken_springs()  # the torn list starts again from the reset point
