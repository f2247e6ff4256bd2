"""Drawing systems with matplotlib (the ``[plot]`` extra; imported only when used).

Library code never calls ``plt.show()``: it returns the Axes (or the animation), and
a notebook shows the figure by itself. :func:`draw` draws a System now,
:func:`animate` the frames of a run, :func:`plot_energy` a run's energies against
time and :func:`energy_bars` the energy at one moment as bars. What is drawn can be
found by its ``gid``: ``"springsim-springs"``, ``"springsim-faces"``,
``"springsim-nodes"``, ``"springsim-pins"``, ``"springsim-radii"``,
``"springsim-arrows"``, ``"springsim-plane"``, ``"springsim-sphere"``,
``"springsim-shape"``, ``"springsim-energy-bars"`` and
``"springsim-energy-dissipated"``.

The modules: ``drawing`` (:func:`draw`), ``animation`` (:func:`animate`, its speed),
``energy`` (the energy plots), ``scene`` (the artists: springs, faces, nodes,
colliders, colours by body, colour bars), ``arrows`` (velocity and force arrows, per
node or per body) and ``axes`` (the Axes, limits and aspect, units, exaggeration).
"""

from springsim.plot.animation import animate
from springsim.plot.drawing import draw
from springsim.plot.energy import energy_bars, plot_energy
from springsim.plot.scene import COLORBAR_LABELS

__all__ = ["COLORBAR_LABELS", "animate", "draw", "energy_bars", "plot_energy"]
