"""The viewer in a real browser (issue 18): headless Chromium from the system's packages.

The front end (the installed package's viewer.js) runs in a plain page bridged to a
Python Viewer (tests/viewer/viewer_bridge.py). The checks: the nodes are drawn where the
kernel's positions project to, by the projection recomputed here from the camera's
parameters (the formula at the top of viewer.js); a mouse drag on a node moves that
node in ``sim.positions`` to where the mouse is, and the system answers; the pause
button stops the clock; the standalone HTML file plays on its own.

Skipped, with the reason shown, only where no chromium and chromedriver are installed
(.ci/run installs them: ``apt-get install chromium chromium-driver``).
"""

import base64
import io
import math
import time

import numpy as np
import pytest
from viewer_bridge import (
    NODE,
    PIN,
    Bridge,
    blob_center,
    find_chromium,
    pixels,
    projected,
    start_chromium,
)

import springsim as ss

if find_chromium() is None:
    pytest.skip(
        "no chromium + chromedriver to drive (apt-get install chromium chromium-driver)",
        allow_module_level=True,
    )

from PIL import Image  # noqa: E402  (matplotlib's dependency)
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

VIEW = "document.querySelector('.springsim-viewer').springsimView"
FOUND = "!!(document.querySelector('.springsim-viewer') || {}).springsimView"


@pytest.fixture(scope="module")
def browser():
    driver = start_chromium()
    yield driver
    driver.quit()


@pytest.fixture
def page(browser):
    """Open a viewer of ``sim`` in the browser; returns (viewer, bridge)."""
    opened = []

    def open_(sim, **options):
        viewer = ss.view(sim, **options)
        bridge = Bridge(viewer)
        opened.append((viewer, bridge))
        browser.get(bridge.url)
        # the first frame drawn, not only arrived: on a busy machine a frame can arrive
        # between two draws, and the canvas would still show the scene without it
        wait(lambda: browser.execute_script(f"return {VIEW}.state().drawn") >= 1)
        return viewer, bridge

    yield open_
    for viewer, bridge in opened:
        viewer.close()
        bridge.close()
        assert bridge.errors == []  # every message the page sent was accepted


def wait(condition, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the page")
        time.sleep(0.02)


def assert_nodes_drawn_where_projected(browser, sim):
    camera = browser.execute_script(f"return {VIEW}.camera()")
    assert camera["dpr"] == 1
    image = pixels(browser)
    where = projected(camera, sim.positions)
    for i, xy in enumerate(where):
        center = blob_center(image, xy, PIN if sim.pinned[i] else NODE)
        assert center is not None, f"node {i}: nothing drawn at {xy}"
        # a node is a 4 px disc (a 9 px square when pinned): its centroid is its centre
        # to within a pixel (the fully coloured pixels of a disc at a sub-pixel offset)
        assert np.abs(center - xy).max() <= 1.0, (i, center, xy)
    # and nowhere else: about a disc's worth of node colour per node (π 4² ≈ 50 px)
    blue = (np.abs(image - np.array(NODE)).sum(axis=2) < 30).sum()
    assert 30 * (~sim.pinned).sum() <= blue <= 70 * (~sim.pinned).sum()
    return camera


def canvas_offset(browser, xy):
    """Selenium's offset from the scene canvas's centre to the point xy (CSS px)."""
    canvas = browser.find_element(By.CSS_SELECTOR, "canvas[data-role=scene]")
    size = canvas.size
    return canvas, xy[0] - size["width"] / 2, xy[1] - size["height"] / 2


def test_nodes_are_drawn_where_the_kernel_says_2d(browser, page):
    rope = ss.string(6, length=1.0, mass=0.06, stiffness=60.0, dim=2, direction=(1, 0))
    page(rope, dt=1e-3, substeps=10)
    assert_nodes_drawn_where_projected(browser, rope)


def test_nodes_are_drawn_where_the_kernel_says_3d_and_after_orbiting(browser, page):
    cloth = ss.cloth(4, 4, width=1.0, height=1.0, mass=0.1, stiffness=100.0)
    page(cloth)
    before = assert_nodes_drawn_where_projected(browser, cloth)
    # the faces (WebGL where the browser has it, Canvas 2D otherwise), seen on screen:
    # each face's centre is lit cloth colour, rgb(60 + 120 s, 110 + 130 s, 40 + 200 s)
    stack = browser.find_element(By.CSS_SELECTOR, "canvas[data-role=faces]").find_element(
        By.XPATH, ".."
    )
    screen = np.asarray(Image.open(io.BytesIO(stack.screenshot_as_png)).convert("RGB")).astype(int)
    corners = projected(before, cloth.positions)
    for face in cloth.faces:
        x, y = corners[face].mean(axis=0).round().astype(int)
        r, g, b = screen[y, x]
        s = (g - 110) / 130  # the brightness it was lit with, in [0.35, 1]
        assert 0.3 < s <= 1.0 and abs(r - (60 + 120 * s)) <= 3 and abs(b - (40 + 200 * s)) <= 3
    # orbit: drag on empty canvas turns the camera; the nodes follow the projection
    canvas, dx, dy = canvas_offset(browser, (20, 400))
    ActionChains(browser).move_to_element_with_offset(
        canvas, dx, dy
    ).click_and_hold().move_by_offset(40, -10).release().perform()
    wait(lambda: browser.execute_script(f"return {VIEW}.camera().yaw") != before["yaw"])
    time.sleep(0.1)  # the next animation frame draws it
    after = assert_nodes_drawn_where_projected(browser, cloth)
    assert after["yaw"] == pytest.approx(before["yaw"] - 0.4)


def test_dragging_a_node_moves_it_in_the_kernel_and_pause_stops_time(browser, page):
    rope = ss.string(
        6, length=1.0, mass=0.06, stiffness=60.0, damping=0.02, dim=2, direction=(1, 0)
    )
    rope.gravity = 0  # nothing moves but what the mouse moves
    viewer, _bridge = page(rope, dt=1e-3, substeps=10)
    camera = browser.execute_script(f"return {VIEW}.camera()")
    node = 5
    start = projected(camera, rope.positions)[node]
    canvas, dx, dy = canvas_offset(browser, start)
    ActionChains(browser).move_to_element_with_offset(canvas, dx, dy).click_and_hold().perform()
    wait(lambda: rope.pinned[node])  # grabbed: held like a pin
    # pressed without moving the mouse, which holds the node
    browser.execute_script("document.querySelector('button[data-action=play]').click()")
    wait(lambda: viewer.playing)
    ActionChains(browser).move_by_offset(0, 20).move_by_offset(0, 20).move_by_offset(
        0, 20
    ).perform()
    # the node is where the mouse is: 60 px down, in metres through the camera's scale
    target = rope.positions[node].copy()
    wait(lambda: abs(rope.positions[node, 1] - (0.0 - 60 / camera["scale"])) < 1e-6)
    assert rope.positions[node, 0] == pytest.approx(1.0, abs=0.5 / camera["scale"])
    neighbour = rope.positions[node - 1, 1]
    wait(lambda: rope.positions[node - 1, 1] < neighbour - 1e-3)  # the system answers
    ActionChains(browser).release().perform()
    wait(lambda: not rope.pinned[node])  # let go: free again
    target = rope.time
    wait(lambda: rope.time > target + 0.05)
    # pause: the clock stops and stays stopped
    browser.find_element(By.CSS_SELECTOR, "button[data-action=pause]").click()
    wait(lambda: not viewer.playing)
    stopped = rope.time
    time.sleep(0.5)
    assert rope.time == stopped
    wait(lambda: browser.execute_script(f"return {VIEW}.state().time") == stopped)
    # shift-click toggles a pin
    where = projected(browser.execute_script(f"return {VIEW}.camera()"), rope.positions)[3]
    canvas, dx, dy = canvas_offset(browser, where)
    ActionChains(browser).move_to_element_with_offset(canvas, dx, dy).key_down(
        "\ue008"
    ).click().key_up("\ue008").perform()
    wait(lambda: rope.pinned[3])


def test_save_html_plays_standalone(browser, tmp_path):
    cloth = ss.cloth(6, 6, width=1.0, height=1.0, mass=0.1, stiffness=100.0, damping=0.01)
    viewer = ss.view(cloth)
    path = viewer.save_html(tmp_path / "cloth.html", duration=1.0)
    viewer.close()
    browser.get(path.as_uri())
    wait(lambda: browser.execute_script(f"return {VIEW}.state().frame") >= 1)
    first = pixels(browser)
    frames = browser.execute_script(f"return {VIEW}.state().frame")
    wait(lambda: browser.execute_script(f"return {VIEW}.state().frame") >= frames + 5)
    time.sleep(0.1)
    assert np.abs(pixels(browser) - first).sum() > 0  # the cloth moved on screen
    # nothing was fetched: the page is the file alone
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    browser.find_element(By.CSS_SELECTOR, "button[data-action=pause]").click()
    frames = browser.execute_script(f"return {VIEW}.state().frame")
    time.sleep(0.3)
    assert browser.execute_script(f"return {VIEW}.state().frame") == frames


def test_dragging_in_3d_moves_the_node_in_the_plane_facing_the_screen(browser, page):
    cloth = ss.cloth(4, 4, width=1.0, height=1.0, mass=0.1, stiffness=100.0)
    cloth.gravity = 0
    page(cloth)
    camera = browser.execute_script(f"return {VIEW}.camera()")
    node = 5  # an interior node, free
    start = projected(camera, cloth.positions)[node]
    depth = camera_depth(camera, cloth.positions[node])
    canvas, dx, dy = canvas_offset(browser, start)
    ActionChains(browser).move_to_element_with_offset(
        canvas, dx, dy
    ).click_and_hold().move_by_offset(30, -20).perform()
    # Selenium moves to whole-pixel offsets from the canvas's centre
    centre = np.array([camera["width"], camera["height"]]) / 2
    mouse = centre + np.trunc(start - centre) + [30, -20]
    wait(lambda: np.abs(projected(camera, cloth.positions[[node]])[0] - mouse).max() < 1e-6)
    # where the mouse is, at the depth it was grabbed at
    # (the front end keeps the grab depth as float32: 6e-8 relative)
    assert camera_depth(camera, cloth.positions[node]) == pytest.approx(depth, rel=2e-7)
    ActionChains(browser).release().perform()
    wait(lambda: not cloth.pinned[node])


def camera_depth(camera, point):
    r = np.asarray(point) - np.array(camera["target"])
    yaw, pitch = camera["yaw"], camera["pitch"]
    z1 = -math.sin(yaw) * r[0] + math.cos(yaw) * r[2]
    return camera["distance"] - (math.sin(pitch) * r[1] + math.cos(pitch) * z1)


def test_colour_menu_and_sliders_reach_the_system(browser, page):
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    rope = ss.string(6, length=1.0, mass=0.06, stiffness=60.0, dim=2, direction=(0, -1))
    rope.relax()  # hanging at rest: each spring carries the weight below it
    viewer, _bridge = page(rope, dt=1e-3, substeps=10, sliders=["gravity"])
    Select(browser.find_element(By.CSS_SELECTOR, "select[data-name=color_by]")).select_by_value(
        "tension"
    )
    wait(lambda: viewer.color_by == "tension")
    wait(lambda: browser.execute_script(f"return {VIEW}.state().frame") >= 2)
    time.sleep(0.1)
    camera = browser.execute_script(f"return {VIEW}.camera()")
    where = projected(camera, rope.positions)
    image = pixels(browser)
    colours = []
    for i in range(rope.num_springs):
        x, y = ((where[i] + where[i + 1]) / 2).round().astype(int)
        colours.append(image[y, x].tolist())
    # stretched, so red (compressed would be blue): grey (150, 150, 150) to red
    # (255, 0, 0) as the tension grows towards the top, where a spring carries the most
    # weight; the top one is the most stretched, drawn in full red; the bottom one
    # carries a fifth of that: 150 (1 - 1/5) = 120 green
    assert all(
        r >= 150 and g == b and r + g * 105 / 150 == pytest.approx(255, abs=2)
        for r, g, b in colours
    ), colours
    greens = [g for _, g, _ in colours]
    assert greens == sorted(greens) and greens[0] < 30 and 100 < greens[-1] < 140, colours
    slider = browser.find_element(By.CSS_SELECTOR, "input[data-slider=gravity]")
    slider.send_keys(Keys.ARROW_RIGHT * 5)  # steps of (max - min) / 200 up
    time.sleep(0.5)
    shown = float(slider.get_attribute("value"))
    assert shown > 9.81
    wait(lambda: viewer.sliders["gravity"] == shown)
    assert rope.gravity.tolist() == [0.0, -shown]


def test_an_unstrained_rope_is_drawn_grey_on_white(browser, page):
    # a rope falling freely, no pin: its strains are round-off, drawn in the scale's
    # middle colour, grey, which shows on the white background (it was white)
    rope = ss.string(6, length=1.0, mass=0.06, stiffness=60.0, dim=2, direction=(1, 0))
    rope.pinned = False
    viewer, _bridge = page(rope, dt=1e-3, substeps=10, color_by="strain")
    viewer.step()
    wait(lambda: browser.execute_script(f"return {VIEW}.state().drawn") >= 2)
    camera = browser.execute_script(f"return {VIEW}.camera()")
    where = projected(camera, rope.positions)
    image = pixels(browser)
    for i in range(rope.num_springs):
        # the pixel row holding the line's centre y: a 2 px line [y - 1, y + 1] covers
        # all of [floor(y), floor(y) + 1], so it has the full colour, not a blend
        x, y = np.floor((where[i] + where[i + 1]) / 2).astype(int)
        assert image[y, x].tolist() == [150, 150, 150], (i, image[y, x])


def test_a_saved_history_plays_standalone(browser, tmp_path):
    rope = ss.string(8, length=1.0, mass=0.08, stiffness=80.0, damping=0.02, dim=2)
    history = rope.run(2.0, 1e-3, frames=61, progress=False)
    browser.get(history.save_html(tmp_path / "rope.html").as_uri())
    wait(lambda: browser.execute_script(f"return {VIEW}.state().frame") >= 1)
    state = browser.execute_script(f"return {VIEW}.state()")
    assert state["nodes"] == 8
    wait(lambda: browser.execute_script(f"return {VIEW}.state().frame") >= state["frame"] + 5)


SHAPE = (150, 150, 150)  # shapes.js's SHAPE_2D
RADIUS = (255, 217, 183)  # rgba(255, 127, 14, 0.3) over white: 255 - 0.3 (255 - c)
WHITE = (255, 255, 255)


def colour_at(image, x, y):
    return image[int(math.floor(y)), int(math.floor(x))]


def test_a_box_and_a_node_radius_are_drawn_where_projected_2d(browser, page):
    rope = ss.string(3, length=1.0, mass=0.03, stiffness=30.0, dim=2, direction=(1, 0))
    rope.add_box([0.5, -0.3], [0.3, 0.08])
    rope.radii = [0.0, 0.1, 0.0]
    page(rope, dt=1e-3, substeps=1)
    time.sleep(0.1)  # the frame is drawn at the next animation frame after it arrives
    camera = browser.execute_script(f"return {VIEW}.camera()")
    image = pixels(browser)
    (left, bottom), (right, top) = projected(camera, np.array([[0.2, -0.38], [0.8, -0.22]]))
    assert 0 < left < right < camera["width"] and 0 < top < bottom < camera["height"]
    # every pixel 2 px or more inside the projected rectangle is the box's grey (an
    # opaque fill: exact but for rounding)...
    xs = np.arange(math.ceil(left + 2), math.floor(right - 2))
    ys = np.arange(math.ceil(top + 2), math.floor(bottom - 2))
    inside = image[np.ix_(ys, xs)]
    assert inside.size and (np.abs(inside - np.array(SHAPE)).max(axis=-1) <= 2).all()
    # ... and a frame 3 to 5 px outside it is the white background (the fill and its
    # half-pixel seam stroke end within 1.5 px of the edge)
    for d in (3, 5):
        edge = [colour_at(image, x, top - d) for x in xs] + [
            colour_at(image, x, bottom + d) for x in xs
        ]
        edge += [colour_at(image, left - d, y) for y in ys] + [
            colour_at(image, right + d, y) for y in ys
        ]
        assert (np.array(edge) == WHITE).all(), d
    # the middle node's radius: a disc of 0.1 m at the view's scale, in the directions
    # clear of the springs (they run along x through it)
    centre, rim = projected(camera, np.array([rope.positions[1], rope.positions[1] + [0.1, 0]]))
    radius = float(np.linalg.norm(rim - centre))
    assert radius > 20  # large enough that 5 % of it is beyond antialiasing
    for angle in np.radians([45, 90, 135, 225, 270, 315]):
        way = np.array([math.cos(angle), -math.sin(angle)])
        near = colour_at(image, *(centre + 0.95 * radius * way))
        assert np.abs(near - np.array(RADIUS)).max() <= 3, (angle, near)
        for beyond in (1.05, 1.5):
            assert (colour_at(image, *(centre + beyond * radius * way)) == WHITE).all()


def test_node_radii_in_3d_shrink_with_depth(browser, page):
    sim = ss.System(dim=3)
    sim.add_nodes([[0.0, 0.0, -1.0], [0.6, 0.2, 1.0]])
    sim.radii = 0.2
    page(sim, dt=1e-3, substeps=1)
    time.sleep(0.1)  # the frame is drawn at the next animation frame after it arrives
    camera = browser.execute_script(f"return {VIEW}.camera()")
    url = browser.execute_script(
        "return document.querySelector('canvas[data-role=scene]').toDataURL('image/png')"
    )
    rgba = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGBA")
    # over white (the WebGL layer's background below this one, or its own white fill)
    white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
    image = np.asarray(Image.alpha_composite(white, rgba).convert("RGB")).astype(int)
    f = camera["height"] / 2 / math.tan(camera["fov"] / 2)
    radii = []
    for centre, point in zip(projected(camera, sim.positions), sim.positions, strict=True):
        # the perspective projection's size of 0.2 m at the node's depth, f r / d
        radius = f * 0.2 / camera_depth(camera, point)
        radii.append(radius)
        for angle in np.radians([0, 60, 120, 180, 240, 300]):
            way = np.array([math.cos(angle), -math.sin(angle)])
            near = colour_at(image, *(centre + 0.93 * radius * way))
            assert np.abs(near - np.array(RADIUS)).max() <= 3, (angle, near)
            for beyond in (1.07, 1.5):
                assert (colour_at(image, *(centre + beyond * radius * way)) == WHITE).all()
    assert abs(radii[0] / radii[1] - 1) > 0.2  # the depths differ: the test tells 1/d


def test_the_first_framing_takes_in_a_box_beside_the_rope(browser, page):
    # a box 1.5 m to the right of a 1 m rope and below it: framing the nodes alone
    # (as it did) puts it off the canvas; now its whole rectangle is on it, in grey
    rope = ss.string(4, length=1.0, mass=0.04, stiffness=40.0, dim=2, direction=(1, 0))
    rope.add_box([2.5, -0.6], [0.3, 0.2])
    page(rope, dt=1e-3, substeps=1)
    time.sleep(0.1)  # the frame is drawn at the next animation frame after it arrives
    camera = browser.execute_script(f"return {VIEW}.camera()")
    (left, bottom), (right, top) = projected(camera, np.array([[2.2, -0.8], [2.8, -0.4]]))
    assert 0 < left < right < camera["width"] and 0 < top < bottom < camera["height"]
    image = pixels(browser)
    xs = np.arange(math.ceil(left + 2), math.floor(right - 2))
    ys = np.arange(math.ceil(top + 2), math.floor(bottom - 2))
    inside = image[np.ix_(ys, xs)]
    assert inside.size > 100 and (np.abs(inside - np.array(SHAPE)).max(axis=-1) <= 2).all()
    # and the rope is on the canvas too
    where = projected(camera, rope.positions)
    assert (where > 0).all() and (where[:, 0] < camera["width"]).all()


def test_the_energy_trace_survives_a_page_reload(browser, page):
    rope = ss.string(6, length=1.0, mass=0.06, stiffness=60.0, damping=0.02, dim=2)
    viewer, _bridge = page(rope, dt=1e-3, substeps=10)
    for _ in range(9):
        viewer.step()
    wait(lambda: browser.execute_script(f"return {VIEW}.state().drawn") >= 10)
    before = browser.execute_script(f"return {VIEW}.trace()")
    assert len(before) == 10  # the first frame and nine steps, one sample each
    browser.refresh()  # a new page: it says hello, Python sends the trace it kept
    wait(lambda: browser.execute_script(f"return {FOUND} && {VIEW}.state().traceLength") == 10)
    after = browser.execute_script(f"return {VIEW}.trace()")
    # the same samples (float64 in the trace message; the frames' JSON before)
    assert after == before


ARROW = (0x2C, 0xA0, 0x2C)  # viewer.js's velocity arrows, matplotlib's tab:green


def test_a_velocity_arrow_is_drawn_from_a_moving_node(browser, page):
    # a node moving left at 1 m/s, 1 m right of a pinned one, arrows at 0.3 m per
    # m/s: a green shaft from the node to 0.3 m left of it, and none at the pinned node
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 0.0], [1.0, 0.0]], velocities=[[0.0, 0.0], [-1.0, 0.0]])
    sim.gravity = 0
    sim.pin(0)
    viewer, _bridge = page(sim, dt=1e-3, substeps=1, arrows="velocity", arrow_scale=0.3)
    time.sleep(0.1)  # the frame is drawn at the next animation frame after it arrives
    camera = browser.execute_script(f"return {VIEW}.camera()")
    image = pixels(browser)
    node, tip = projected(camera, np.array([sim.positions[1], sim.positions[1] - [0.3, 0.0]]))
    assert node[0] - tip[0] > 40  # long enough to look along
    green = np.abs(image - np.array(ARROW)).sum(axis=2) < 30
    # along the shaft, past the node's 4 px disc and short of the 7 px head: green
    # in the pixel rows of the 2 px line (y ± 1)
    y = int(math.floor(node[1]))
    for x in range(int(tip[0]) + 8, int(node[0]) - 6):
        assert green[y - 1 : y + 2, x].any(), x
    # nothing green past the tip (towards the pinned node, whose velocity is 0) nor
    # beyond the node
    assert not green[:, : int(tip[0]) - 3].any()
    assert not green[:, int(node[0]) + 6 :].any()
    # switched off from the menu: no green at all
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element(By.CSS_SELECTOR, "select[data-name=arrows]")).select_by_value("")
    wait(lambda: viewer.arrows is None)
    viewer.step()
    wait(lambda: browser.execute_script(f"return {VIEW}.arrows()") is None)
    time.sleep(0.1)
    assert not (np.abs(pixels(browser) - np.array(ARROW)).sum(axis=2) < 30).any()


def energy_pixels(browser):
    url = browser.execute_script(
        "return document.querySelector('canvas[data-role=energy]').toDataURL('image/png')"
    )
    png = base64.b64decode(url.split(",", 1)[1])
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)


def test_energy_bars_are_as_tall_as_the_energies(browser, page):
    # a rope falling from rest with drag: kinetic, elastic, gravity (negative) and
    # dissipated all differ from zero; each bar's pixel height is its energy at one
    # scale (px per J), to within a pixel of rounding at each end
    rope = ss.string(6, length=1.0, mass=0.06, stiffness=60.0, dim=2, direction=(1, 0))
    rope.drag = 0.02
    viewer, _bridge = page(rope, dt=1e-3, substeps=20)
    for _ in range(10):
        viewer.step()
    browser.find_element(By.CSS_SELECTOR, "input[data-name=energy_bars]").click()
    wait(lambda: viewer.energy_bars)
    wait(lambda: browser.execute_script(f"return {VIEW}.state().drawn") >= viewer._frame)
    time.sleep(0.1)
    layout = browser.execute_script(f"return {VIEW}.bars()")
    image = energy_pixels(browser)
    e = rope.energy()
    energies = {
        "kinetic": e.kinetic,
        "elastic": e.elastic,
        "gravity": e.gravity,
        "contact": e.contact,
        "pressure": e.pressure,
        "dissipated": rope.dissipated,
        "total": e.total,
    }
    assert energies["gravity"] < 0 < energies["kinetic"] and energies["dissipated"] > 0
    colours = {"kinetic": "#1f77b4", "elastic": "#2ca02c", "gravity": "#9467bd"}
    colours.update(dissipated="#ff7f0e", total="#111111")
    heights = {}
    for term, x in zip(layout["terms"], layout["xs"], strict=True):
        if term not in colours:
            continue  # contact and gas: zero here, no bar
        rgb = np.array([int(colours[term][k : k + 2], 16) for k in (1, 3, 5)])
        # each pixel's cover by the bar, from its blend with the white background
        # (the edges fall between pixels): 0 white .. 1 the bar's colour, in the
        # channel where the two differ most
        channel = int(np.argmax(255 - rgb))
        column = image[layout["top"] - 2 : layout["bottom"] + 2, int(x), channel]
        cover = np.clip((255 - column) / (255 - rgb[channel]), 0, 1)
        heights[term] = cover.sum() * (1 if energies[term] >= 0 else -1)
    scale = layout["px"]
    for term, height in heights.items():
        assert height == pytest.approx(energies[term] * scale, abs=0.1), (term, height)
    # and the scale is the trace's: its tallest value fills the chart
    assert abs(energies["gravity"]) * scale > 50


def test_a_saved_page_draws_the_arrows(browser, tmp_path):
    # the node of test_a_velocity_arrow_is_drawn_from_a_moving_node, saved and paused
    # on its first frame: the same green shaft, drawn by the offline player
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 0.0], [1.0, 0.0]], velocities=[[0.0, 0.0], [-1.0, 0.0]])
    sim.gravity = 0
    sim.pin(0)
    viewer = ss.view(sim, dt=1e-3, substeps=1, arrows="velocity", arrow_scale=0.3)
    path = viewer.save_html(tmp_path / "arrows.html", duration=0.05)
    viewer.close()
    browser.get(path.as_uri())
    wait(lambda: browser.execute_script(f"return {VIEW}.state().drawn") >= 1)
    browser.find_element(By.CSS_SELECTOR, "button[data-action=pause]").click()
    browser.find_element(By.CSS_SELECTOR, "button[data-action=reset]").click()
    wait(lambda: browser.execute_script(f"return {VIEW}.state().time") == 0.0)
    time.sleep(0.1)
    camera = browser.execute_script(f"return {VIEW}.camera()")
    node, tip = projected(camera, np.array([[1.0, 0.0], [0.7, 0.0]]))
    green = np.abs(pixels(browser) - np.array(ARROW)).sum(axis=2) < 30
    y = int(math.floor(node[1]))
    for x in range(int(tip[0]) + 8, int(node[0]) - 6):
        assert green[y - 1 : y + 2, x].any(), x
    assert (
        browser.execute_script("return document.querySelector('select[data-name=arrows]').value")
        == "velocity"
    )


def test_a_page_that_falls_behind_holds_the_frames_then_resumes(browser, page):
    # Block the page's main thread for 1 s: the frames the kernel sends meanwhile
    # (60 a second, never acknowledged) wait in the socket, and the first processed
    # after has a lag of about 1 s > HOLD_LAG = 0.25 s: the page says "hold" (the kernel
    # stops stepping and sending), then "resume" once caught up.
    rope = ss.string(8, length=1.0, mass=0.08, stiffness=80.0, damping=0.05, dim=2)
    viewer, _ = page(rope, dt=1e-3, substeps=5)
    received = []  # (type, kernel's frames sent, simulated time) as each message is acted on
    handle = viewer._handle

    def recording(message, buffers=None):
        handle(message, buffers)
        with viewer.lock:
            received.append((message.get("type"), viewer._frame, rope.time))

    viewer._handle = recording
    viewer.play()
    wait(lambda: browser.execute_script(f"return {VIEW}.state().frame") > 10)
    time.sleep(0.5)
    before = browser.execute_script(f"return {VIEW}.state().sent")
    assert "hold" not in before  # a page that keeps up never holds
    browser.execute_script("const end = performance.now() + 1000; while (performance.now() < end);")
    wait(lambda: browser.execute_script(f"return {VIEW}.state().sent.resume || 0") >= 1)
    # the page sent its resume; the kernel acts on it when the message arrives (under
    # AddressSanitizer the test once read `received` before it had)
    wait(lambda: any(kind == "resume" for kind, _, _ in list(received)))
    viewer.pause()
    kinds = [kind for kind, _, _ in received]
    assert kinds.count("hold") >= 1 and kinds.count("resume") >= 1, kinds
    held = kinds.index("hold")
    resumed = kinds.index("resume", held)
    # nothing was stepped or sent between the hold and the resume
    assert received[held][1:] == received[resumed][1:], received
    state = browser.execute_script(f"return {VIEW}.state()")
    assert state["lag"] < 0.25 and not state["held"]


TAB10 = [(0x1F, 0x77, 0xB4), (0xFF, 0x7F, 0x0E)]  # matplotlib's tab10: C0, C1


def test_colour_by_body_from_the_menu_draws_each_body_in_its_colour(browser, page):
    # two ropes in one system, no gravity: bodies 0 (above) and 1 (below). Chosen in
    # the colour menu, each rope's springs and nodes are drawn in its tab10 colour
    from selenium.webdriver.support.ui import Select

    above = ss.string(4, length=1.0, mass=0.04, stiffness=40.0, dim=2, direction=(1, 0))
    below = ss.string(4, length=1.0, mass=0.04, stiffness=40.0, dim=2, direction=(1, 0))
    below.positions = below.positions + [0.0, -0.5]
    above.add(below)
    above.pinned = False
    above.gravity = 0
    viewer, _bridge = page(above, dt=1e-3, substeps=1)
    menu = browser.find_element(By.CSS_SELECTOR, "select[data-name=color_by]")
    Select(menu).select_by_value("body")
    wait(lambda: viewer.color_by == "body")
    wait(lambda: browser.execute_script(f"return {VIEW}.state().drawn") >= 2)
    time.sleep(0.2)  # the frame coloured by body drawn
    camera = browser.execute_script(f"return {VIEW}.camera()")
    where = projected(camera, above.positions)
    image = pixels(browser)
    for a, b in above.springs:
        body = 0 if a < 4 else 1  # the first rope's nodes are 0-3
        # the pixel row of the line's centre (a 2 px line covers it fully: no blend)
        x, y = np.floor((where[a] + where[b]) / 2).astype(int)
        assert tuple(image[y, x]) == TAB10[body], (a, b, image[y, x])
    for i in range(above.num_nodes):
        body = 0 if i < 4 else 1
        x, y = np.floor(where[i]).astype(int)  # a node's disc of radius 4 px
        assert tuple(image[y, x]) == TAB10[body], (i, image[y, x])


CONTACT = (0xE3, 0x77, 0xC2)  # viewer.js's contact lines, the trace's "contact" pink


def test_contacts_are_drawn_between_the_touching_nodes_and_the_box_turns_them_off(browser, page):
    # Two balls of radius 0.1 m, 0.15 m apart: one pair touching. With contacts on, a
    # pink line joins the two nodes as projected, and nothing else is pink; the
    # widget's "contacts" box turns it off: no pink at all.
    sim = ss.System(dim=2)
    sim.add_nodes([[0.0, 0.0], [0.15, 0.0]])
    sim.gravity = 0
    sim.radii = 0.1
    viewer, _bridge = page(sim, dt=1e-4, substeps=1, contacts=True)
    assert sim.contact_pairs().tolist() == [[0, 1]]
    wait(lambda: browser.execute_script(f"return {VIEW}.contacts()") == [0, 1])
    time.sleep(0.1)  # the frame is drawn at the next animation frame after it arrives
    camera = browser.execute_script(f"return {VIEW}.camera()")
    image = pixels(browser)
    a, b = projected(camera, sim.positions)
    assert b[0] - a[0] > 40 and abs(b[1] - a[1]) < 1e-6  # long, level
    pink = np.abs(image - np.array(CONTACT)).sum(axis=2) < 30
    # along the line, clear of the nodes' 4 px discs: pink in the pixel rows the 3 px
    # line [y - 1.5, y + 1.5] covers whole (at least two; the edge rows are blends)
    y = int(math.floor(a[1]))
    rows = [r for r in range(y - 2, y + 3) if a[1] - 1.5 <= r and r + 1 <= a[1] + 1.5]
    assert len(rows) >= 2
    for x in range(int(a[0]) + 6, int(b[0]) - 5):
        assert pink[rows, x].all(), x
    # nowhere else: not beyond its ends, nor more than 3 px above or below it
    assert not pink[:, : int(a[0]) - 3].any() and not pink[:, int(b[0]) + 4 :].any()
    assert not pink[: y - 3].any() and not pink[y + 4 :].any()
    # the box off: the kernel stops sending the pairs, and none is drawn
    box = browser.find_element(By.CSS_SELECTOR, "input[data-name=contacts]")
    assert box.is_selected()
    drawn = browser.execute_script(f"return {VIEW}.state().drawn")
    box.click()
    wait(lambda: viewer.contacts is False)
    wait(lambda: browser.execute_script(f"return {VIEW}.state().drawn") > drawn)
    assert browser.execute_script(f"return {VIEW}.contacts()") is None
    time.sleep(0.1)
    assert not (np.abs(pixels(browser) - np.array(CONTACT)).sum(axis=2) < 30).any()


def menu_value(browser):
    return browser.execute_script("return document.querySelector('select[data-name=method]').value")


def test_the_method_menu_sets_the_kernels_method_and_shows_its_answer(browser, page):
    from selenium.webdriver.support.ui import Select

    rope = ss.string(6, length=1.0, mass=0.06, stiffness=600.0, dim=2)
    viewer, _bridge = page(rope)
    menu = Select(browser.find_element(By.CSS_SELECTOR, "select[data-name=method]"))
    assert [o.get_attribute("value") for o in menu.options] == list(ss.METHODS)
    assert menu_value(browser) == "symplectic_euler"  # sim.method: the viewer has none
    menu.select_by_value("vbd")
    wait(lambda: viewer.method == "vbd")
    assert rope.method == "symplectic_euler"
    # the kernel's answer shown: two steps a frame of 1 / 120 s, as view(method="vbd")
    field = "return document.querySelector('input[data-name={}]').value"
    wait(lambda: browser.execute_script(field.format("substeps")) == "2")
    assert float(browser.execute_script(field.format("dt"))) == pytest.approx(1 / 120)
    assert menu_value(browser) == "vbd"
    # chosen from Python, shown by the page at the next state (a click on pause sends it)
    viewer.method = "xpbd"
    browser.find_element(By.CSS_SELECTOR, "button[data-action=pause]").click()
    wait(lambda: menu_value(browser) == "xpbd")


def test_a_method_the_system_cannot_step_is_refused_and_the_menu_shows_what_stays(browser, page):
    from selenium.webdriver.support.ui import Select

    rods = ss.string(5, length=1.0, mass=0.05, stiffness=10.0, dim=2)
    rods.stiffness = np.inf  # rigid rods: only xpbd steps them
    viewer, bridge = page(rods, method="xpbd")
    assert menu_value(browser) == "xpbd"
    Select(browser.find_element(By.CSS_SELECTOR, "select[data-name=method]")).select_by_value(
        "implicit_euler"
    )
    wait(lambda: bridge.errors != [])
    assert "method 'implicit_euler' cannot step" in bridge.errors[0]
    wait(lambda: menu_value(browser) == "xpbd")  # the menu goes back to what stays
    assert viewer.method == "xpbd"
    bridge.errors.clear()  # refused on purpose: the fixture checks no other was


def hint_text(browser):
    return browser.execute_script("return document.querySelector('[data-role=hint]').textContent")


def test_a_stiff_system_gets_the_hint_beside_the_menu_and_a_soft_one_none(browser, page):
    from selenium.webdriver.support.ui import Select

    # as in test_viewer_method.py: half of critical_dt() is 0.14 µs for this cloth, two
    # orders of magnitude below the cost of its step; the rope's step is as far below
    # its 5.5 ms
    stiff = ss.cloth(20, 20, width=1.0, height=1.0, mass=0.2, stiffness=1e9)
    viewer, _bridge = page(stiff, substeps=20)
    assert hint_text(browser) == ""  # nothing measured yet
    browser.find_element(By.CSS_SELECTOR, "button[data-action=step]").click()
    wait(lambda: hint_text(browser) == "stiff: try vbd or xpbd")
    assert viewer.method is None  # named in the hint, not switched to
    Select(browser.find_element(By.CSS_SELECTOR, "select[data-name=method]")).select_by_value(
        "xpbd"
    )
    wait(lambda: hint_text(browser) == "")
    rope = ss.string(8, length=1.0, mass=0.08, stiffness=80.0, damping=0.01, dim=2)
    viewer, _bridge = page(rope)
    browser.find_element(By.CSS_SELECTOR, "button[data-action=step]").click()
    wait(lambda: browser.execute_script(f"return {VIEW}.state().frame") >= 2)
    browser.find_element(By.CSS_SELECTOR, "button[data-action=pause]").click()  # a state
    wait(lambda: browser.execute_script(f"return {VIEW}.state().sent.pause") == 1)
    time.sleep(0.2)
    assert viewer._step_cost > 0 and hint_text(browser) == ""
