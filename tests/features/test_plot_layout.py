"""springsim.plot's layout as a viewer sees it: the figure is drawn, and no two texts
(tick labels, axis labels, offsets, titles, the colour bar's) overlap, none runs into a
colour bar or off the figure. matplotlib's 3D defaults fail this (checked below)."""

import gc

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from figures import collisions  # noqa: E402

import springsim as ss  # noqa: E402
from springsim.plot import animate, draw, energy_bars, plot_energy  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Animation was deleted:UserWarning")


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")
    gc.collect()  # the test's animations go now, under its warning filter


def systems(dim, size):
    """A cloth, a string at a slant and (3D) a ball, ``size`` metres across."""
    yield ss.cloth(10, 10, width=size, height=size, mass=0.1, stiffness=10.0, dim=dim)
    slant = (1.0, -1.0, 0.5)[:dim]
    yield ss.string(6, length=size, mass=0.1, stiffness=10.0, dim=dim, direction=slant)
    if dim == 3:
        yield ss.ball(subdivisions=1, radius=size / 2, mass=0.5, stiffness=100.0)


@pytest.mark.parametrize("color_by", [None, "tension", "strain"])
@pytest.mark.parametrize("size", [1e-3, 1.0, 30.0, 1e4])
@pytest.mark.parametrize("dim", [2, 3])
def test_no_text_collides_in_a_drawing(dim, size, color_by):
    for sim in systems(dim, size):
        ax = draw(sim, color_by=color_by)
        assert collisions(ax.figure) == [], sim


def test_no_text_collides_in_panels_side_by_side():
    # Narrow 3D panels: their labels stick out of their Axes, the colour bars move aside.
    cloth = ss.cloth(12, 12, width=1.0, height=1.0, mass=0.1, stiffness=10.0)
    cloth.add_sphere((0.5, -1.3, 0.0), 0.25)
    fig, (left, right) = plt.subplots(1, 2, subplot_kw={"projection": "3d"}, figsize=(10, 4.5))
    draw(cloth, ax=left, color_by="tension")
    draw(cloth, ax=right, color_by="strain")
    assert collisions(fig) == []


@pytest.mark.parametrize("dim", [2, 3])
def test_no_text_collides_in_an_animation(dim):
    sim = ss.cloth(8, 8, width=1.0, height=1.0, mass=0.1, stiffness=50.0, dim=dim)
    sim.add_plane((0.0, 1.0, 0.0)[:dim], -1.5)
    anim = animate(sim.run(0.2, 1e-3, frames=3, progress=False))
    for k in range(3):
        anim._func(k)
        assert collisions(anim._fig) == [], k


def test_the_check_finds_what_matplotlib_defaults_do():
    # The same cloth drawn with matplotlib's 3D defaults, a colour bar beside it: axis
    # labels run into tick labels, tick labels into the colour bar.
    cloth = ss.cloth(20, 20, width=1.0, height=1.0, mass=0.1, stiffness=10.0)
    ax = plt.figure().add_subplot(projection="3d")
    x = cloth.positions[:, [0, 2, 1]]
    dots = ax.scatter(*x.T, c=x[:, 2])
    ax.set(xlabel="x [m]", ylabel="z [m]", zlabel="y [m]", xlim=(-0.05, 1.05))
    ax.set(ylim=(-0.55, 0.55), zlim=(-1.05, 0.05))
    ax.figure.colorbar(dots, ax=ax, label="tension [N]", pad=0.02)
    found = collisions(ax.figure)
    labels = {"x [m]", "y [m]", "z [m]"}
    assert any(a in labels and b not in labels for a, b in found), found
    assert any(b == "colour bar" for _, b in found), found


@pytest.mark.parametrize("dim", [2, 3])
def test_no_text_collides_with_arrows_bodies_and_exaggeration(dim):
    # A plucked string 50 times taller (its long axis label), arrows, slow motion.
    sim = ss.string(21, length=2.0, mass=0.1, stiffness=500.0, pin="both", dim=dim)
    sim.gravity = (0.0,) * dim
    sim.positions[10, 1] = 0.005
    ax = draw(sim, arrows="force", exaggerate=("y", 50), color_by="body")
    assert collisions(ax.figure) == []
    history = sim.run(0.02, 1e-4, frames=3, progress=False)
    anim = animate(history, arrows="velocity", exaggerate=("y", 50), speed=0.25)
    for k in range(3):
        anim._func(k)
        assert collisions(anim._fig) == [], k


def test_no_text_collides_in_energy_bars_and_curves():
    ball = ss.ball(subdivisions=1, radius=0.3, mass=0.5, stiffness=200.0, damping=0.1, nrt=2.0)
    history = ball.run(0.2, 1e-3, progress=False)
    assert collisions(energy_bars(history).figure) == []
    assert collisions(plot_energy(history).figure) == []
