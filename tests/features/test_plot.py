"""springsim.plot: draw, plot_energy and animate, in 2D and 3D; what they draw, read
back from the artists (layout as a viewer sees it: tests/features/test_plot_layout.py)."""

import gc

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from figures import with_gid  # noqa: E402

import springsim as ss  # noqa: E402
from springsim.plot import animate, draw, plot_energy  # noqa: E402

# (animations made to read their artists, never rendered)
pytestmark = pytest.mark.filterwarnings("ignore:Animation was deleted:UserWarning")


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")
    gc.collect()  # the test's animations go now, under its warning filter


def histories():
    flat = ss.string(8, length=1.0, mass=0.1, stiffness=50.0, damping=0.02, dim=2)
    ball = ss.ball(subdivisions=1, radius=0.3, mass=0.5, stiffness=200.0, damping=0.1, nrt=2.0)
    return (
        flat.run(0.3, 1e-3, frames=7, progress=False),
        ball.run(0.3, 1e-3, frames=5, progress=False),
    )


def segments(lines):
    """The segments of a (2D or 3D) line collection."""
    return np.array(lines._segments3d if hasattr(lines, "_segments3d") else lines.get_segments())


def offsets(dots):
    """The points of a (2D or 3D) scatter."""
    if hasattr(dots, "_offsets3d"):
        return np.column_stack([np.asarray(c, dtype=float) for c in dots._offsets3d])
    return np.asarray(dots.get_offsets())


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
    (lines,) = with_gid(ax, "springsim-springs")
    np.testing.assert_allclose(segments(lines), shown[history.edges])


def test_animate_draws_faces_and_the_pins_of_each_frame():
    # A cloth pinned at its two top corners, let go of one of them half-way: every
    # frame shows the faces where the nodes are, and the pins the frame had.
    cloth = ss.cloth(5, 5, width=1.0, height=1.0, mass=0.1, stiffness=50.0)
    corner = int(np.flatnonzero(cloth.pinned)[-1])

    def let_go(sim):
        if sim.time >= 0.1 - 1e-9:
            sim.unpin(corner)

    history = cloth.run(0.2, 1e-3, record_every=100, frames=3, callback=let_go, progress=False)
    assert history.frame_pinned.sum(axis=1).tolist() == [2, 2, 1]
    anim = animate(history)
    ax = anim._fig.axes[0]
    (surface,) = with_gid(ax, "springsim-faces")
    (free,) = with_gid(ax, "springsim-nodes")
    (pins,) = with_gid(ax, "springsim-pins")
    for k in range(3):
        anim._func(k)
        shown = history.frames[k][:, [0, 2, 1]]
        np.testing.assert_allclose(surface._faces, shown[history.faces])
        np.testing.assert_allclose(offsets(pins), shown[history.frame_pinned[k]])
        assert len(offsets(free)) == 25 - history.frame_pinned[k].sum()
    assert len(with_gid(animate(history, faces=False)._fig.axes[0], "springsim-faces")) == 0


def test_animate_needs_frames():
    h = ss.string(4, length=1.0, mass=0.1, stiffness=10.0).run(0.01, 1e-3, progress=False)
    with pytest.raises(ValueError, match="no frames"):
        animate(h)


def test_plot_energy_draws_each_term_and_the_books():
    flat, ball = histories()
    ax = plot_energy(ball)
    labels = [line.get_label() for line in ax.lines]
    assert labels == [
        "kinetic",
        "elastic",
        "gravity",
        "pressure",
        "dissipated",
        "total",
        "total + dissipated",
    ]
    books = dict(zip(labels, ax.lines, strict=True))["total + dissipated"].get_ydata()
    np.testing.assert_array_equal(books, ball.total + ball.dissipated)
    assert "pressure" not in [line.get_label() for line in plot_energy(flat).lines]  # no gas
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("time [s]", "energy [J]")


def test_draw_shows_faces_springs_and_pins():
    cloth = ss.cloth(5, 5, width=1.0, height=1.0, mass=0.1, stiffness=10.0)
    ax = draw(cloth, color_by="tension")
    surface, lines, free, pinned = ax.collections
    assert [c.get_gid() for c in ax.collections] == [
        "springsim-faces",
        "springsim-springs",
        "springsim-nodes",
        "springsim-pins",
    ]
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


@pytest.mark.parametrize(("color_by", "label"), [("tension", "tension [N]"), ("strain", "l/L")])
@pytest.mark.parametrize("dim", [2, 3])
def test_colour_bars_are_labelled_with_units(color_by, label, dim):
    sim = ss.cloth(4, 4, width=1.0, height=1.0, mass=0.1, stiffness=10.0, dim=dim)
    ax = draw(sim, color_by=color_by)
    (bar,) = [a for a in ax.figure.axes if a is not ax]
    assert label in bar.get_ylabel()


def axis_labels(ax):
    axes = [ax.xaxis, ax.yaxis] + ([ax.zaxis] if hasattr(ax, "zaxis") else [])
    return [axis.get_label_text() for axis in axes]


@pytest.mark.parametrize("dim", [2, 3])
def test_axes_are_labelled_with_units_on_given_axes_and_in_animations(dim):
    expected = ["x [m]", "y [m]"] if dim == 2 else ["x [m]", "z [m]", "y [m]"]  # y is up
    sim = ss.string(5, length=1.0, mass=0.1, stiffness=10.0, dim=dim)
    fig = plt.figure()
    ax = fig.add_subplot(projection="3d" if dim == 3 else None)
    assert axis_labels(draw(sim, ax=ax)) == expected
    history = sim.run(0.05, 1e-3, frames=2, progress=False)
    assert axis_labels(animate(history)._fig.axes[0]) == expected
    given = plt.figure().add_subplot(projection="3d" if dim == 3 else None)
    assert axis_labels(animate(history, ax=given)._fig.axes[0]) == expected
    mine = plt.figure().add_subplot(projection="3d" if dim == 3 else None)
    mine.set_xlabel("across [cm]")  # a label the user set stays
    assert axis_labels(draw(sim, ax=mine))[0] == "across [cm]"


@pytest.mark.parametrize(
    ("width", "unit", "per_metre"), [(0.01, "mm", 1e3), (5.0, "m", 1.0), (3e4, "km", 1e-3)]
)
@pytest.mark.parametrize("dim", [2, 3])
def test_axes_are_in_a_unit_that_keeps_tick_labels_short(dim, width, unit, per_metre):
    # A 1 cm cloth in mm, a 30 km one in km: tick labels such as "5" rather than "0.005".
    ax = draw(ss.cloth(5, 5, width=width, height=width, mass=0.1, stiffness=1.0, dim=dim))
    assert axis_labels(ax)[0] == f"x [{unit}]"
    ax.figure.canvas.draw()
    ticks = ax.xaxis.get_majorticklocs()
    labels = ax.xaxis.get_major_formatter().format_ticks(ticks)
    shown = [float(text.replace("\N{MINUS SIGN}", "-")) for text in labels]
    np.testing.assert_allclose(shown, ticks * per_metre, atol=1e-9 * width * per_metre)
    assert max(len(text) for text in labels) <= 4 and not ax.xaxis.offsetText.get_text()


def test_a_system_on_axes_of_the_other_dimension_raises_a_clear_error():
    flat = ss.string(4, length=1.0, mass=0.1, stiffness=10.0, dim=2)
    solid = ss.string(4, length=1.0, mass=0.1, stiffness=10.0, dim=3)
    plane_axes = plt.figure().add_subplot()
    space_axes = plt.figure().add_subplot(projection="3d")
    with pytest.raises(ValueError, match=r"3D system needs 3D Axes.*projection='3d'"):
        draw(solid, ax=plane_axes)
    with pytest.raises(ValueError, match="2D system needs 2D Axes"):
        draw(flat, ax=space_axes)
    history = solid.run(0.01, 1e-3, frames=2, progress=False)
    with pytest.raises(ValueError, match="3D system needs 3D Axes"):
        animate(history, ax=plane_axes)
    assert not plane_axes.collections and not space_axes.collections  # nothing drawn


def on_line(points, normal, offset):
    return np.abs(np.asarray(points) @ np.asarray(normal) - offset)


def test_colliders_are_drawn_in_2d():
    # A string above a floor (y = -0.8, tilted) and a disc: the floor is a line along
    # the plane with its solid side shaded, the disc a circle of its centre and radius;
    # the view holds both.
    sim = ss.string(8, length=1.0, mass=0.1, stiffness=50.0, dim=2)
    n = np.array([0.1, 1.0]) / np.hypot(0.1, 1.0)
    sim.add_plane(n, -0.8)
    sim.add_sphere((0.5, -0.5), 0.2)
    ax = draw(sim)
    (line,) = [a for a in with_gid(ax, "springsim-plane") if a in ax.lines]
    (shade,) = [a for a in with_gid(ax, "springsim-plane") if a in ax.patches]
    assert on_line(line.get_xydata(), n, -0.8).max() < 1e-12
    assert np.ptp(line.get_xdata()) > 1.0  # across the view
    below = shade.get_xy()[:-1] @ n - (-0.8)  # the shaded side is the solid one
    assert below.max() < 1e-12 and below.min() < -0.5
    (disc,) = with_gid(ax, "springsim-sphere")
    assert disc.get_center() == (0.5, -0.5) and disc.get_radius() == 0.2
    (low, high), (bottom, top) = ax.get_xlim(), ax.get_ylim()
    assert low < 0.3 and high > 0.7 and bottom < -0.85 and top > 0.0
    assert not with_gid(draw(sim, colliders=False), "springsim-sphere")


def test_colliders_are_drawn_in_3d_and_in_animations():
    # A cloth above a sphere and a floor: the sphere is a closed surface at its radius
    # around its centre, the floor the patch of the plane inside the view; shown as
    # matplotlib draws springsim's coordinates, (x, z, y).
    cloth = ss.cloth(6, 6, width=1.0, height=1.0, mass=0.1, stiffness=50.0)
    cloth.add_sphere((0.5, -1.4, 0.1), 0.3)
    cloth.add_plane((0.0, 1.0, 0.0), -2.0)
    history = cloth.run(0.05, 1e-3, frames=2, progress=False)
    for ax in (draw(cloth), animate(history)._fig.axes[0]):
        (sphere,) = with_gid(ax, "springsim-sphere")
        corners = sphere._faces.reshape(-1, 3)
        radii = np.linalg.norm(corners - [0.5, 0.1, -1.4], axis=1)
        np.testing.assert_allclose(radii, 0.3, rtol=1e-12)
        assert np.ptp(corners, axis=0) == pytest.approx([0.6, 0.6, 0.6], rel=0.02)
        (floor,) = with_gid(ax, "springsim-plane")
        patch = floor._faces.reshape(-1, 3)
        assert len(patch) == 4 and np.abs(patch[:, 2] + 2.0).max() < 1e-12  # y = -2
        # the whole floor of the view: its corners at the x and z limits
        np.testing.assert_allclose(sorted(set(patch[:, 0].round(9))), ax.get_xlim())
        np.testing.assert_allclose(sorted(set(patch[:, 1].round(9))), ax.get_ylim())
        assert ax.get_zlim()[0] <= -2.0 and ax.get_zlim()[1] >= 0.0
    assert not with_gid(animate(history, colliders=False)._fig.axes[0], "springsim-plane")


def node_size(ax):
    (free,) = with_gid(ax, "springsim-nodes")
    (pins,) = with_gid(ax, "springsim-pins")
    return float(free.get_sizes()[0]), float(pins.get_sizes()[0])


def cloth(n, dim, width=1.0):
    return ss.cloth(n, n, width=width, height=width, mass=0.1, stiffness=10.0, dim=dim)


@pytest.mark.parametrize(("dim", "n"), [(2, 32), (3, 16)])
def test_node_markers_scale_with_the_system(dim, n):
    # The same square cloth at n x n and 2n x 2n nodes: the fine one's dots are half as
    # wide (their spacing is), a quarter the size (points²), so they do not swamp it.
    (coarse, _), (fine, fine_pins) = (node_size(draw(cloth(k, dim))) for k in (n, 2 * n))
    assert coarse / fine == pytest.approx(((2 * n - 1) / (n - 1)) ** 2, rel=1e-3)
    assert fine_pins >= 3 * fine  # the pins stand out
    # Dots are 0.8 to 4 points across, however coarse or fine.
    assert node_size(draw(cloth(4, dim)))[0] == 16.0
    assert node_size(draw(cloth(200, dim)))[0] == pytest.approx(0.64)
    # The scale of the whole does not matter, only how finely it is divided.
    assert node_size(draw(cloth(n, dim, width=1e3)))[0] == pytest.approx(coarse, rel=1e-9)
    # A size given is used as given; an animation scales as a drawing does.
    sim = cloth(n, dim)
    assert node_size(draw(sim, node_size=7.0)) == (7.0, 21.0)
    history = sim.run(0.01, 1e-3, frames=2, progress=False)
    assert node_size(animate(history)._fig.axes[0])[0] == pytest.approx(coarse, rel=0.05)
