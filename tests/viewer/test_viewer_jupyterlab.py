"""The viewer in a real JupyterLab (issue 28), not only in a page of our own.

``jupyter lab`` is started here on 127.0.0.1 (a free port, a token, its own settings and
runtime directories), headless Chromium (Debian's package, as in test_viewer_browser.py)
opens a notebook in it and runs it: the widget goes through JupyterLab's widget manager
and anywidget's extension, and the kernel is a real ipykernel. The checks: the nodes
are drawn where the kernel's positions project to; a mouse drag moves the node in the
kernel's ``sim.positions`` (read back by running a cell); play advances the kernel's
clock, and the kernel indicator does not blink while it plays (frames are not
acknowledged: the page speaks only when it falls behind, or after
``protocol.ALIVE_EVERY`` s of silence); the server is stopped at the end.

Skipped, saying why, only where no chromium and chromedriver are installed.
"""

import json
import math
import pathlib
import time

import numpy as np
import pytest
from lab_server import (
    COUNT_STATUS,
    VIEW,
    jupyter_lab,
    open_notebook,
    run_cell,
    wait,
    wait_for_widget,
)
from viewer_bridge import NODE as NODE_COLOUR
from viewer_bridge import PIN as PIN_COLOUR
from viewer_bridge import blob_center, find_chromium, pixels, projected, start_chromium

if find_chromium() is None:
    pytest.skip(
        "no chromium + chromedriver to drive (apt-get install chromium chromium-driver)",
        allow_module_level=True,
    )

from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

from springsim.viewer.protocol import ALIVE_EVERY  # noqa: E402

NODE = 5

#: The notebook: a rope with no gravity (nothing moves but what the mouse moves) in a
#: viewer; then a cell that writes the kernel's view of the system to state.json.
CELLS = [
    "import json\n"
    "import springsim as ss\n"
    "rope = ss.string(6, length=1.0, mass=0.06, stiffness=60.0, damping=0.02, dim=2,\n"
    "                 direction=(1, 0))\n"
    "rope.gravity = 0\n"
    "viewer = ss.view(rope, dt=1e-3, substeps=10)\n"
    "viewer",
    "with open('state.json', 'w') as f:\n"
    "    json.dump({'positions': rope.positions.tolist(), 'pinned': rope.pinned.tolist(),\n"
    "               'time': rope.time, 'playing': viewer.playing}, f)",
]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on 127.0.0.1 serving a temporary directory: (url, token, root)."""
    pytest.importorskip("jupyterlab", reason="the test extra installs jupyterlab")
    root = tmp_path_factory.mktemp("lab")
    with jupyter_lab(root, tmp_path_factory.mktemp("lab-home")) as (url, token, server):
        yield url, token, root
    assert server.returncode is not None  # stopped


@pytest.fixture(scope="module")
def browser():
    driver = start_chromium(width=1200, height=1000)
    yield driver
    driver.quit()


def kernel_state(browser, root):
    """What the kernel holds, through the notebook's second cell (a fresh state.json)."""
    path = pathlib.Path(root) / "state.json"
    path.unlink(missing_ok=True)
    run_cell(browser, 1)
    wait(path.exists, timeout=30, what="the cell that writes state.json")
    return wait(lambda: _read(path), timeout=10, what="state.json written whole")


def _read(path):
    try:
        return json.loads(path.read_text())
    except ValueError:
        return None  # being written


def test_the_viewer_runs_and_drags_in_a_real_jupyterlab(lab, browser):
    url, token, root = lab
    # JupyterLab is up, the notebook open and its kernel idle
    open_notebook(browser, url, token, root, "rope.ipynb", CELLS)
    run_cell(browser, 0)
    wait_for_widget(browser)
    before = kernel_state(browser, root)
    positions = np.array(before["positions"])
    # drawn where the kernel's positions project to: a node-coloured disc centred on
    # each projected node, to within a pixel (as test_viewer_browser.py checks)
    camera = browser.execute_script(f"return {VIEW}.camera()")
    assert camera["dim"] == 2 and camera["dpr"] == 1
    image = pixels(browser)
    where = projected(camera, positions)
    for i, xy in enumerate(where):
        colour = PIN_COLOUR if before["pinned"][i] else NODE_COLOUR
        centre = blob_center(image, xy, colour)
        assert centre is not None and np.abs(centre - xy).max() <= 1.0, (i, centre, xy)
    canvas = browser.find_element(By.CSS_SELECTOR, "canvas[data-role=scene]")
    size = canvas.size
    # grab node 5 and move the mouse 60 px down: the kernel's node follows, to where
    # the mouse is, through the camera's scale (metres per CSS pixel)
    start = where[NODE]
    ActionChains(browser).move_to_element_with_offset(
        canvas, start[0] - size["width"] / 2, start[1] - size["height"] / 2
    ).click_and_hold().perform()
    ActionChains(browser).move_by_offset(0, 20).move_by_offset(0, 20).move_by_offset(
        0, 20
    ).perform()
    target = positions[NODE, 1] - 60 / camera["scale"]

    def moved():
        state = kernel_state(browser, root)
        # to within a pixel: Selenium presses at whole-pixel offsets from the canvas's
        # centre, which JupyterLab's layout may put at a fraction of a pixel
        return state if abs(state["positions"][NODE][1] - target) < 1 / camera["scale"] else None

    held = wait(moved, timeout=30, what="the dragged node in the kernel")
    assert held["pinned"][NODE]  # held like a pin while the button is down
    assert held["positions"][NODE][0] == pytest.approx(positions[NODE, 0], abs=1 / camera["scale"])
    ActionChains(browser).release().perform()
    wait(lambda: not kernel_state(browser, root)["pinned"][NODE], what="the node let go")
    # play: the kernel's clock advances while the notebook is open
    browser.find_element(By.CSS_SELECTOR, "button[data-action=play]").click()
    # while it plays, the kernel indicator does not blink: every message to the kernel
    # is published busy, then idle, and the page sends none while it keeps up. Its
    # last message is the play click; it says "alive" only ALIVE_EVERY = 10 s after
    # it, and the window counted here ends 0.5 + 2 = 2.5 s after the click: so no
    # message, no status change (acknowledging every 15th frame blinked it 8 times in
    # these 2 s, every frame 46 times). Counted through JupyterLab's own kernel object.
    clicked = time.monotonic()
    wait(lambda: browser.execute_script(f"return {VIEW}.state().playing"), what="playing")
    time.sleep(0.5)
    browser.execute_script(COUNT_STATUS)
    first = browser.execute_script(f"return {VIEW}.state()")
    time.sleep(2.0)
    statuses = browser.execute_script("return window.springsimStatus")
    last = browser.execute_script(f"return {VIEW}.state()")
    assert time.monotonic() - clicked < ALIVE_EVERY  # no "alive" was due
    drawn = last["drawn"] - first["drawn"]
    sent = {k: n - first["sent"].get(k, 0) for k, n in last["sent"].items()}
    sent = {k: n for k, n in sent.items() if n}
    # A page that keeps up sends nothing (the usual case: no status change at all). One
    # whose main thread stalls past 0.25 s, as on a loaded machine, rightly sends a
    # hold and then a resume: each such message is one busy/idle pair, and nothing else
    # is (no acknowledgements).
    assert set(sent) <= {"hold", "resume"}, sent
    assert sum(sent.values()) <= 4, sent
    assert len(statuses) == 2 * sum(sent.values()), (statuses, sent)
    assert drawn > 30  # it played (60 frames a second sent: at least half drawn)
    t0 = kernel_state(browser, root)["time"]
    wait(lambda: kernel_state(browser, root)["time"] > t0 + 0.05, what="the clock to run")
    browser.find_element(By.CSS_SELECTOR, "button[data-action=pause]").click()
    wait(lambda: not kernel_state(browser, root)["playing"], what="pause")
    assert math.isfinite(kernel_state(browser, root)["time"])
