"""springsim.plot: draw, plot_energy and animate, in 2D and 3D."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import springsim as ss  # noqa: E402
from springsim.plot import animate, draw, plot_energy  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def histories():
    flat = ss.string(8, length=1.0, mass=0.1, stiffness=50.0, damping=0.02, dim=2)
    ball = ss.ball(subdivisions=1, radius=0.3, mass=0.5, stiffness=200.0, damping=0.1, nrt=2.0)
    return (
        flat.run(0.3, 1e-3, frames=7, progress=False),
        ball.run(0.3, 1e-3, frames=5, progress=False),
    )


@pytest.mark.parametrize("which", [0, 1], ids=["2D", "3D"])
def test_animate_renders_every_frame(which, tmp_path):
    history = histories()[which]
    anim = animate(history)
    html = anim.to_jshtml()
    assert html.count("data:image/png;base64") == len(history.frames)  # every frame drawn
    anim.save(tmp_path / "run.gif", writer="pillow")
    assert (tmp_path / "run.gif").stat().st_size > 1000
    # The last frame shows the last recorded positions (3D as (x, z, y): y is up).
    ax = anim._fig.axes[0]
    assert ax.get_title() == f"t = {history.frame_times[-1]:.3f} s"
    shown = history.frames[-1][:, [0, 2, 1]] if history.dim == 3 else history.frames[-1]
    segments = np.array(
        ax.collections[0].get_segments()
        if history.dim == 2
        else [s for s in ax.collections[0]._segments3d]
    )
    np.testing.assert_allclose(segments, shown[history.edges])


def test_animate_needs_frames():
    h = ss.string(4, length=1.0, mass=0.1, stiffness=10.0).run(0.01, 1e-3, progress=False)
    with pytest.raises(ValueError, match="no frames"):
        animate(h)


def test_plot_energy_draws_each_term_and_the_books():
    flat, ball = histories()
    ax = plot_energy(ball)
    labels = [line.get_label() for line in ax.lines]
    assert labels == ["kinetic", "elastic", "gravity", "pressure", "total", "total + dissipated"]
    books = dict(zip(labels, ax.lines, strict=True))["total + dissipated"].get_ydata()
    np.testing.assert_array_equal(books, ball.total + ball.dissipated)
    assert "pressure" not in [line.get_label() for line in plot_energy(flat).lines]  # no gas


def test_draw_shows_faces_springs_and_pins():
    cloth = ss.cloth(5, 5, width=1.0, height=1.0, mass=0.1, stiffness=10.0)
    ax = draw(cloth, color_by="tension")
    surface, lines, free, pinned = ax.collections
    assert len(surface._faces) == cloth.num_faces  # one polygon per triangle
    assert len(lines._segments3d) == cloth.num_springs
    assert len(pinned._offsets3d[0]) == 2
    assert len(draw(cloth, faces=False).collections) == 3
    assert draw(cloth, linewidth=3.0).collections[1].get_linewidth()[0] == 3.0
    with pytest.raises(ValueError, match="color_by"):
        draw(cloth, color_by="speed")


def test_color_scale_ignores_round_off_and_can_be_shared():
    cloth = ss.cloth(4, 4, width=1.0, height=1.0, mass=0.1, stiffness=10.0)  # at rest length
    assert draw(cloth, color_by="strain").collections[1].get_clim() == (-1.0, 1.0)
    assert draw(cloth, color_by="strain", limit=0.3).collections[1].get_clim() == (-0.3, 0.3)
    assert len(draw(cloth, color_by="strain").figure.axes) == 2  # the Axes and its colour bar
    assert len(draw(cloth, color_by="strain", colorbar=False).figure.axes) == 1
    cloth.positions = cloth.positions * 1.1
    lines = draw(cloth, color_by="strain").collections[1]
    assert lines.get_clim()[1] == pytest.approx(0.1)
