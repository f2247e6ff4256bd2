"""springsim.plot's options for slides (issue 28, item 3): velocity and force arrows per
node and per body, colours by body, the limits and aspect of Axes passed in, exaggerated
displacements, the energy curves drawn only when present, the energy bars and slow
motion in saved animations. Each is read back from the artists (or, for a GIF, from the
file with Pillow) and compared with the physics written out here in NumPy."""

import gc

import matplotlib

matplotlib.use("Agg")

import matplotlib.animation as manimation  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from figures import with_gid  # noqa: E402
from PIL import Image  # noqa: E402

import springsim as ss  # noqa: E402
from springsim.plot import animate, draw, energy_bars, plot_energy  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Animation was deleted:UserWarning")

#: The documented default: the longest arrow is this fraction of the scene's size.
FRACTION = 0.15
G = 9.81


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")
    gc.collect()


def arrows_of(ax):
    (arrows,) = with_gid(ax, "springsim-arrows")
    return arrows


def quiver_data(q):
    """(tails, vectors) of a 2D quiver, in data units."""
    return np.asarray(q.get_offsets()), np.column_stack([q.U, q.V])


def shafts_3d(lines, count):
    """(tails, vectors) of the first ``count`` segments of 3D arrows (their shafts)."""
    segments = np.asarray(lines._segments3d)[:count]
    return segments[:, 0], segments[:, 1] - segments[:, 0]


def chain(dim=2, drag=0.0):
    """Three nodes on two springs of different stiffness, the first pinned, stretched
    and moving: forces from Hooke's law, gravity and drag are all different."""
    sim = ss.System(dim=dim)
    x = np.array([[0.0, 0.0, 0.0], [0.6, -0.3, 0.1], [1.5, -0.2, -0.2]])[:, :dim]
    sim.add_nodes(x, masses=[1.0, 0.3, 0.7])
    sim.add_springs([[0, 1], [1, 2]], stiffness=[40.0, 90.0], rest_lengths=[0.5, 0.8])
    sim.pin(0)
    sim.velocities = np.array([[0.0, 0.0, 0.0], [0.4, -1.0, 0.3], [-0.8, 0.5, 0.2]])[:, :dim]
    sim.drag = drag
    return sim


def hooke_forces(x, v, masses, springs, k, rest, pinned, drag, g):
    """Net force on each node, written out: k (l − L) along each spring, m g, −drag v;
    a pinned node is held (zero net force)."""
    f = masses[:, None] * g - drag * v
    for (i, j), stiffness, length in zip(springs, k, rest, strict=True):
        d = x[j] - x[i]
        pull = stiffness * (np.linalg.norm(d) - length) * d / np.linalg.norm(d)
        f[i] += pull
        f[j] -= pull
    f[pinned] = 0.0
    return f


def chain_forces(sim):
    return hooke_forces(
        np.array(sim.positions),
        np.array(sim.velocities),
        np.array(sim.masses),
        np.array(sim.springs),
        np.array(sim.stiffness),
        np.array(sim.rest_lengths),
        np.array(sim.pinned),
        sim.drag,
        np.array(sim.gravity),
    )


# ---------------------------------------------------------------- arrows


def test_velocity_arrows_start_at_the_nodes_and_follow_the_documented_scale():
    sim = chain()
    q = arrows_of(draw(sim, arrows="velocity"))
    tails, vectors = quiver_data(q)
    x, v = np.array(sim.positions), np.array(sim.velocities)
    np.testing.assert_array_equal(tails, x)
    # Default: the longest arrow is 15 % of the scene's largest side (no colliders here).
    scale = FRACTION * np.ptp(x, axis=0).max() / np.linalg.norm(v, axis=1).max()
    np.testing.assert_allclose(vectors, scale * v, rtol=1e-12)
    assert q.get_label() == f"velocity arrows, {scale:.3g} m per m/s"
    # A scale given is used as given: 0.2 m of arrow per m/s.
    tails, vectors = quiver_data(arrows_of(draw(sim, arrows="velocity", arrow_scale=0.2)))
    np.testing.assert_allclose(vectors, 0.2 * v, rtol=1e-15)
    # The arrows are kept in view: every tip inside the limits.
    ax = draw(sim, arrows="velocity", arrow_scale=2.0)
    tips = tails + quiver_data(arrows_of(ax))[1]
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    assert (tips[:, 0] >= x0).all() and (tips[:, 0] <= x1).all()
    assert (tips[:, 1] >= y0).all() and (tips[:, 1] <= y1).all()


def test_force_arrows_are_hookes_law_plus_gravity_and_drag():
    # Independent of springsim.reference: the forces written out in this file.
    sim = chain(drag=0.4)
    _, vectors = quiver_data(arrows_of(draw(sim, arrows="force", arrow_scale=1.0)))
    expected = chain_forces(sim)
    assert np.abs(expected[1:]).min() > 0.1  # every term matters
    np.testing.assert_allclose(vectors, expected, rtol=1e-12, atol=1e-12)
    assert (vectors[0] == 0).all()  # the pinned node is held


def test_force_arrows_in_3d_are_drawn_as_matplotlib_shows_springsim_y_up():
    sim = chain(dim=3, drag=0.2)
    lines = arrows_of(draw(sim, arrows="force", arrow_scale=0.01))
    assert len(lines._segments3d) == 3 * sim.num_nodes  # a shaft and two head strokes each
    tails, vectors = shafts_3d(lines, sim.num_nodes)
    show = [0, 2, 1]  # (x, z, y): y is up
    np.testing.assert_allclose(tails, np.array(sim.positions)[:, show], rtol=1e-15)
    np.testing.assert_allclose(vectors, 0.01 * chain_forces(sim)[:, show], rtol=1e-12, atol=1e-14)


def two_strings():
    """A light string and a heavy one, apart, moving differently: two bodies."""
    sim = ss.string(4, length=1.0, mass=0.2, stiffness=30.0, dim=2, pin=None)
    heavy = ss.string(5, length=1.0, mass=1.5, stiffness=60.0, dim=2, pin=None, start=(0, -1))
    sim.add(heavy)
    rng = np.random.default_rng(7)
    sim.positions = sim.positions + rng.normal(0, 0.05, (9, 2))
    sim.velocities = rng.normal(0, 1.0, (9, 2))
    return sim


def test_arrows_per_body_are_momentum_over_mass_and_the_total_force():
    sim = two_strings()
    x, v, m = np.array(sim.positions), np.array(sim.velocities), np.array(sim.masses)
    tails, vectors = quiver_data(
        arrows_of(draw(sim, arrows="velocity", arrows_per="body", arrow_scale=1.0))
    )
    for body, nodes in enumerate([slice(0, 4), slice(4, 9)]):
        mass = m[nodes].sum()
        np.testing.assert_allclose(tails[body], m[nodes] @ x[nodes] / mass, rtol=1e-12)
        np.testing.assert_allclose(vectors[body], m[nodes] @ v[nodes] / mass, rtol=1e-12)
    # A free body's springs pull its nodes in equal and opposite pairs (Newton's third
    # law): the total force on it is its weight, M g, whatever its shape.
    _, forces = quiver_data(arrows_of(draw(sim, arrows="force", arrows_per="body", arrow_scale=1)))
    weights = [[0.0, -G * m[:4].sum()], [0.0, -G * m[4:].sum()]]
    np.testing.assert_allclose(forces, weights, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("dim", [2, 3])
def test_animated_velocity_arrows_follow_each_frame_on_one_scale(dim):
    sim = chain(dim=dim)
    history = sim.run(0.3, 1e-3, frames=4, progress=False)
    anim = animate(history, arrows="velocity")
    arrows = arrows_of(anim._fig.axes[0])
    show = [0, 2, 1] if dim == 3 else [0, 1]  # 3D as matplotlib draws it: y up
    v = history.frame_velocities
    scale = FRACTION * np.ptp(history.frames, axis=(0, 1)).max() / np.linalg.norm(v, axis=2).max()
    for k in range(4):
        anim._func(k)
        tails, vectors = quiver_data(arrows) if dim == 2 else shafts_3d(arrows, 3)
        np.testing.assert_allclose(tails, history.frames[k][:, show], rtol=1e-15)
        np.testing.assert_allclose(vectors, scale * v[k][:, show], rtol=1e-12, atol=1e-15)


def test_animated_force_arrows_need_the_system_and_are_the_forces_at_each_frame():
    sim = chain(drag=0.3)
    history = sim.run(0.2, 1e-3, frames=3, progress=False)
    with pytest.raises(ValueError, match=r"system=sim"):
        animate(history, arrows="force")
    with pytest.raises(ValueError, match=r"system=sim"):
        animate(history, arrows="velocity", arrows_per="body")
    anim = animate(history, arrows="force", system=sim, arrow_scale=1.0)
    q = arrows_of(anim._fig.axes[0])
    args = (np.array(sim.masses), np.array(sim.springs), sim.stiffness, sim.rest_lengths)
    for k in range(3):
        anim._func(k)
        x, v = history.frames[k], history.frame_velocities[k]
        expected = hooke_forces(x, v, *args, history.frame_pinned[k], 0.3, np.array(sim.gravity))
        np.testing.assert_allclose(quiver_data(q)[1], expected, rtol=1e-12, atol=1e-12)


def test_velocity_arrows_of_a_history_without_velocities_difference_the_frames():
    # A free node coasting at constant velocity (no gravity): central differences of
    # its frames give that velocity exactly (up to round-off).
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 0.0], [1.0, 0.0]], velocities=[[0.5, 2.0], [-1.0, 0.25]])
    sim.gravity = (0.0, 0.0)
    old = sim.run(0.4, 1e-3, frames=5, progress=False)._arrays()
    old["frame_velocities"] = None  # as pickled before velocities were recorded
    history = ss.History(**old)
    anim = animate(history, arrows="velocity", arrow_scale=1.0)
    q = arrows_of(anim._fig.axes[0])
    for k in (0, 2, 4):
        anim._func(k)
        np.testing.assert_allclose(quiver_data(q)[1], [[0.5, 2.0], [-1.0, 0.25]], rtol=1e-9)


@pytest.mark.parametrize("color_by", ["tension", "strain"])
def test_animation_colours_springs_by_what_each_frame_recorded(color_by):
    sim = chain()
    history = sim.run(0.3, 1e-3, frames=4, progress=False)
    recorded = history.frame_tensions if color_by == "tension" else history.frame_strains
    anim = animate(history, color_by=color_by)
    (lines,) = with_gid(anim._fig.axes[0], "springsim-springs")
    largest = np.abs(recorded).max()  # one scale for the whole run, centred on zero
    assert lines.get_clim() == (-largest, largest)
    for k in range(4):
        anim._func(k)
        np.testing.assert_array_equal(lines.get_array(), recorded[k])


# ---------------------------------------------------------------- colours by body


def spring_colors(ax):
    (lines,) = with_gid(ax, "springsim-springs")
    return np.asarray(lines.get_colors())


def test_colour_by_body_gives_each_body_one_colour_of_its_own():
    sim = two_strings()
    labels = [0] * 3 + [1] * 4  # the springs: 3 of the light string, 4 of the heavy
    for ax in (
        draw(sim, color_by="body"),
        animate(sim.run(0.05, 1e-3, frames=2, progress=False), color_by="body")._fig.axes[0],
    ):
        colors = spring_colors(ax)
        assert len(colors) == 7
        first, second = colors[np.array(labels) == 0], colors[np.array(labels) == 1]
        assert (first == first[0]).all() and (second == second[0]).all()
        assert not np.array_equal(first[0], second[0])
        (dots,) = with_gid(ax, "springsim-nodes")
        dot_colors = np.asarray(dots.get_facecolors())
        np.testing.assert_array_equal(dot_colors[:4], np.tile(first[0], (4, 1)))
        np.testing.assert_array_equal(dot_colors[4:], np.tile(second[0], (5, 1)))


def test_colour_by_body_colours_the_faces_of_two_cloths_apart():
    sim = ss.cloth(3, 3, width=1.0, height=1.0, mass=0.1, stiffness=10.0)
    sim.add(ss.cloth(3, 3, width=1.0, height=1.0, mass=0.1, stiffness=10.0, origin=(2, 0, 0)))
    (faces,) = with_gid(draw(sim, color_by="body"), "springsim-faces")
    colors = np.asarray(faces.get_facecolor())[:, :3]
    half = sim.num_faces // 2
    assert len(np.unique(colors[:half], axis=0)) == 1 and len(np.unique(colors[half:], axis=0)) == 1
    assert not np.array_equal(colors[0], colors[-1])
    np.testing.assert_array_equal(colors[0], spring_colors(draw(sim, color_by="body"))[0][:3])


# ---------------------------------------------------------------- axes


@pytest.mark.parametrize("dim", [2, 3])
def test_limits_and_aspect_of_axes_passed_in_are_kept(dim):
    sim = chain(dim=dim)
    ax = plt.figure().add_subplot(projection="3d" if dim == 3 else None)
    ax.set_xlim(-5.0, 5.0)
    ax.set_ylim(-1.0, 2.0)
    if dim == 3:
        ax.set_zlim(-3.0, 3.0)
        box = ax.get_box_aspect().copy()
    aspect = ax.get_aspect()
    draw(sim, ax=ax, arrows="velocity")
    assert ax.get_xlim() == (-5.0, 5.0) and ax.get_ylim() == (-1.0, 2.0)
    if dim == 3:
        assert ax.get_zlim() == (-3.0, 3.0)
        np.testing.assert_array_equal(ax.get_box_aspect(), box)
    assert ax.get_aspect() == aspect == "auto"


def test_axes_passed_in_get_the_unset_limits_fitted_and_equal_aspect_only_if_asked():
    sim = chain()
    ax = plt.figure().add_subplot()
    ax.set_xlim(-5.0, 5.0)
    draw(sim, ax=ax)
    assert ax.get_xlim() == (-5.0, 5.0)
    y = np.array(sim.positions)[:, 1]
    low, high = ax.get_ylim()
    assert low < y.min() and high > y.max() and high - low < 2.0  # fitted, not kept
    assert ax.get_aspect() == "auto"
    draw(sim, ax=ax, aspect="equal")
    assert ax.get_aspect() == 1.0
    # Axes passed in with nothing set are drawn as springsim's own: equal; an aspect
    # the user set stays.
    assert draw(sim, ax=plt.figure().add_subplot()).get_aspect() == 1.0
    stretched = plt.figure().add_subplot()
    stretched.set_aspect(2.0)
    assert draw(sim, ax=stretched).get_aspect() == 2.0
    boxed = plt.figure().add_subplot(projection="3d")
    boxed.set_box_aspect((1.0, 2.0, 3.0))
    box = boxed.get_box_aspect().copy()
    draw(chain(dim=3), ax=boxed)
    np.testing.assert_array_equal(boxed.get_box_aspect(), box)
    cube = draw(chain(dim=3), ax=plt.figure().add_subplot(projection="3d"))
    sides = np.ptp([cube.get_xlim(), cube.get_ylim(), cube.get_zlim()], axis=1)
    ratios = cube.get_box_aspect() / sides
    np.testing.assert_allclose(ratios, ratios[0], rtol=1e-12)  # equal scale on all three
    # Axes draw makes have the equal aspect; drawing again on them refits.
    mine = draw(sim)
    assert mine.get_aspect() == 1.0
    sim.positions = sim.positions * 3.0
    draw(sim, ax=mine)
    assert mine.get_xlim()[1] > 3 * 1.5 - 1e-9
    with pytest.raises(ValueError, match="aspect must be"):
        draw(sim, aspect="square")


def test_exaggerated_displacements_are_rest_plus_factor_times_displacement():
    # A 5 mm pluck of a 2 m string, 50 times taller.
    sim = ss.string(21, length=2.0, mass=0.1, stiffness=500.0, pin="both", dim=2)
    sim.gravity = (0.0, 0.0)
    sim.positions[10, 1] = 0.005
    sim.step(1e-4, steps=30)
    ax = draw(sim, exaggerate=("y", 50))
    (free,) = with_gid(ax, "springsim-nodes")
    x, rest = np.array(sim.positions), np.array(sim.rest_positions)
    drawn = np.asarray(free.get_offsets())
    np.testing.assert_allclose(drawn[:, 1], rest[1:-1, 1] + 50 * (x[1:-1, 1] - rest[1:-1, 1]))
    np.testing.assert_array_equal(drawn[:, 0], x[1:-1, 0])  # x is not exaggerated
    assert ax.get_ylabel() == "y [m], displacement ×50"
    assert ax.get_ylim()[1] > 0.2  # the pluck fills the view: 5 mm × 50 = 25 cm
    # Every node rests at y = 0: the tick labels are the true heights.
    ax.figure.canvas.draw()
    ticks = ax.yaxis.get_majorticklocs()
    shown = ax.yaxis.get_major_formatter().format_ticks(ticks)
    true = [float(t.replace("\N{MINUS SIGN}", "-")) for t in shown]
    np.testing.assert_allclose(true, ticks / 50, atol=1e-12)
    # Velocity arrows are stretched the same way (tangent to the motion drawn).
    _, vectors = quiver_data(
        arrows_of(draw(sim, arrows="velocity", arrow_scale=1.0, exaggerate=("y", 50)))
    )
    v = np.array(sim.velocities)
    np.testing.assert_allclose(vectors, v * [1.0, 50.0], rtol=1e-15)


def test_exaggeration_about_an_uneven_rest_shape_leaves_out_tick_labels():
    cloth = ss.cloth(4, 4, width=1.0, height=1.0, mass=0.1, stiffness=10.0, dim=2)
    ax = draw(cloth, exaggerate=("y", 10))
    ax.figure.canvas.draw()
    assert all(t.get_text() == "" for t in ax.get_yticklabels())
    assert "×10" in ax.get_ylabel()


def test_exaggeration_in_an_animation_is_about_the_systems_rest_positions():
    sim = ss.string(11, length=2.0, mass=0.1, stiffness=500.0, pin="both", dim=2)
    sim.gravity = (0.0, 0.0)
    sim.positions[5, 1] = 0.005
    history = sim.run(0.02, 1e-4, frames=3, progress=False)
    anim = animate(history, exaggerate=("y", 40), system=sim)
    (free,) = with_gid(anim._fig.axes[0], "springsim-nodes")
    anim._func(2)
    rest = np.array(sim.rest_positions)[1:-1, 1]
    np.testing.assert_allclose(
        np.asarray(free.get_offsets())[:, 1], rest + 40 * (history.frames[2][1:-1, 1] - rest)
    )


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"arrows": "speed"}, ValueError, "arrows must be"),
        ({"arrows": "velocity", "arrows_per": "spring"}, ValueError, "arrows_per must be"),
        ({"arrows": "velocity", "arrow_scale": -1.0}, ValueError, "arrow_scale must be"),
        ({"arrows": "velocity", "arrow_scale": "big"}, TypeError, "arrow_scale must be"),
        ({"exaggerate": ("w", 5)}, ValueError, "exaggerate must be"),
        ({"exaggerate": ("y", 0)}, ValueError, "exaggerate must be"),
        ({"exaggerate": 50}, TypeError, "exaggerate must be"),
        ({"color_by": "mass"}, ValueError, "'body'"),
    ],
)
def test_bad_options_raise_and_draw_nothing(kwargs, error, match):
    sim = chain()
    ax = plt.figure().add_subplot()
    history = sim.run(0.01, 1e-3, frames=2, progress=False)
    with pytest.raises(error, match=match):
        draw(sim, ax=ax, **kwargs)
    with pytest.raises(error, match=match):
        animate(history, ax=ax, **kwargs)
    assert not ax.collections and not ax.lines and ax.get_xlim() == (0.0, 1.0)


# ---------------------------------------------------------------- energy


def labels(ax):
    return [line.get_label() for line in ax.lines]


def test_plot_energy_leaves_out_terms_that_are_zero_over_the_run():
    # No gravity, no gas, no contact, no damping: kinetic, elastic and total only.
    sim = chain()
    sim.gravity = (0.0, 0.0)
    assert labels(plot_energy(sim.run(0.2, 1e-3, progress=False))) == [
        "kinetic",
        "elastic",
        "total",
    ]


def test_plot_energy_draws_what_damping_dissipated_and_the_balanced_books():
    sim = chain()
    sim.damping = 0.5
    history = sim.run(0.5, 1e-3, method="rk4", progress=False)
    ax = plot_energy(history)
    lines = dict(zip(labels(ax), ax.lines, strict=True))
    assert list(lines) == [
        "kinetic",
        "elastic",
        "gravity",
        "dissipated",
        "total",
        "total + dissipated",
    ]
    np.testing.assert_array_equal(lines["dissipated"].get_ydata(), history.dissipated)
    assert history.dissipated[-1] > 0.01 * abs(history.total[0])  # damping took a share
    books = lines["total + dissipated"].get_ydata()
    np.testing.assert_array_equal(books, history.total + history.dissipated)
    # The books balance: total + dissipated stays at its start, up to the trapezoid
    # rule that sums the damping's power (O(dt²): about 1e-5 of the energy here).
    assert np.ptp(books) < 1e-4 * np.ptp(history.total)
    assert "dissipated" not in labels(plot_energy(history, dissipated=False))


def test_plot_energy_draws_contact_when_bodies_touch():
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 0.0], [0.25, 0.0]], velocities=[[1.0, 0.0], [-1.0, 0.0]])
    sim.gravity = (0.0, 0.0)
    sim.radii = 0.1  # they touch 0.2 m apart
    history = sim.run(0.2, 1e-4, record_every=10, progress=False)
    assert history.contact.max() > 0  # they met
    drawn = labels(plot_energy(history))
    assert "contact" in drawn and "gravity" not in drawn and "pressure" not in drawn


def bars(ax):
    """Each bar's (label, bottom, height), and the dissipated part on the total."""
    named = dict(
        zip(
            [t.get_text() for t in ax.get_xticklabels()],
            with_gid(ax, "springsim-energy-bars"),
            strict=True,
        )
    )
    (on_top,) = with_gid(ax, "springsim-energy-dissipated")
    return {k: p.get_height() for k, p in named.items()}, on_top


def test_energy_bars_of_a_system_are_its_energies_by_the_textbook():
    # One spring (k = 40 N/m, L = 0.5 m) stretched to 0.8 m, 1 kg and 2 kg masses at
    # heights 1 m and −0.5 m, moving at 3 m/s and 1 m/s: K = ½Σmv², E = ½k(l − L)²,
    # U = Σ m g y (zero at y = 0, negative below).
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 1.0], [0.8, 1.0]], masses=[1.0, 2.0], velocities=[[3, 0], [0, 1]])
    sim.positions[1, 1] = 1.0
    sim.add_springs([0, 1], stiffness=40.0, rest_lengths=0.5)
    sim.positions = [[0.0, 1.0], [0.8, 1.0]]
    kinetic, elastic = 0.5 * 1 * 9 + 0.5 * 2 * 1, 0.5 * 40 * 0.3**2
    gravity = G * (1 * 1.0 + 2 * 1.0)
    heights, on_top = bars(energy_bars(sim))
    expected = {
        "kinetic": kinetic,
        "elastic": elastic,
        "gravity": gravity,
        "contact": 0.0,
        "pressure": 0.0,
        "dissipated": 0.0,
        "total": kinetic + elastic + gravity,
    }
    assert list(heights) == list(expected)
    for name, value in expected.items():
        assert heights[name] == pytest.approx(value, rel=1e-12, abs=1e-12), name
    sim.positions = [[0.0, -1.0], [0.8, -1.0]]  # below zero: a negative bar
    assert bars(energy_bars(sim))[0]["gravity"] == pytest.approx(-3 * G, rel=1e-12)


def test_energy_bars_of_a_history_record_stack_the_dissipated_on_the_total():
    sim = chain()
    sim.damping = 0.5
    history = sim.run(0.5, 1e-3, progress=False)
    for record in (-1, 3):
        ax = energy_bars(history, record=record)
        heights, on_top = bars(ax)
        for name in ("kinetic", "elastic", "gravity", "contact", "pressure", "dissipated"):
            assert heights[name] == getattr(history, name)[record]
        assert heights["total"] == history.total[record]
        assert on_top.get_y() == history.total[record]
        # (a Rectangle keeps its top, not its height: one rounding)
        assert on_top.get_height() == pytest.approx(history.dissipated[record], rel=1e-14)
        assert ax.get_title() == f"t = {history.times[record]:.3f} s"
    with pytest.raises(IndexError, match="record"):
        energy_bars(history, record=len(history))
    with pytest.raises(TypeError, match="System or a springsim.History"):
        energy_bars([1.0, 2.0])


# ---------------------------------------------------------------- speed


def gif_durations(path):
    with Image.open(path) as gif:
        durations = []
        for k in range(gif.n_frames):
            gif.seek(k)
            durations.append(gif.info["duration"])
    return durations


@pytest.mark.parametrize("speed", [0.25, 1.0])
def test_a_gif_plays_at_the_speed_asked(speed, tmp_path):
    # Frames 0.05 s apart: at a quarter speed each shows for 1000 · 0.05 / 0.25 = 200 ms.
    sim = chain()
    history = sim.run(0.2, 1e-3, frames=5, progress=False)
    step = float(np.diff(history.frame_times).mean())
    anim = animate(history, speed=speed)
    anim.save(tmp_path / "slow.gif", writer="pillow", dpi=30)
    durations = gif_durations(tmp_path / "slow.gif")
    assert len(durations) == 5
    # GIF stores hundredths of a second: within 10 ms.
    np.testing.assert_allclose(durations, 1000 * step / speed, atol=10)
    if speed != 1.0:
        assert anim._fig.axes[0].get_title().endswith(f"{speed:g}× speed")


class Recorder(manimation.AbstractMovieWriter):
    """A movie writer that keeps the frame rate matplotlib gives it, as FFMpegWriter
    would get it for an .mp4 (ffmpeg need not be installed)."""

    seen = []

    def setup(self, fig, outfile, dpi=None):
        super().setup(fig, outfile, dpi=dpi)
        Recorder.seen.append(self.fps)

    def grab_frame(self, **savefig_kwargs):
        pass

    def finish(self):
        pass

    @classmethod
    def isAvailable(cls):
        return True


def test_a_movie_writer_gets_the_frame_rate_of_the_speed_asked(tmp_path):
    manimation.writers.register("springsim-recorder")(Recorder)
    sim = chain()
    history = sim.run(0.2, 1e-3, frames=11, progress=False)
    Recorder.seen.clear()
    animate(history, speed=0.25).save(tmp_path / "slow.mp4", writer="springsim-recorder")
    assert Recorder.seen == [pytest.approx(0.25 / 0.02)]  # 12.5 frames per second


def test_speed_and_interval_are_checked():
    history = chain().run(0.2, 1e-3, frames=11, progress=False)
    with pytest.raises(ValueError, match="not both"):
        animate(history, speed=0.5, interval=100)
    with pytest.raises(ValueError, match="speed must be"):
        animate(history, speed=0.0)
    with pytest.raises(TypeError, match="speed must be"):
        animate(history, speed="slow")
    # Faster than 50 frames per second is held at 20 ms (what GIF viewers play).
    assert animate(history, speed=10.0)._interval == 20.0
