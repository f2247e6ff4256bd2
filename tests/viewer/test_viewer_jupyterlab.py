"""The viewer in a real JupyterLab (issue 28), not only in a page of our own.

``jupyter lab`` is started here on 127.0.0.1 (a free port, a token, its own settings and
runtime directories), headless Chromium (Debian's package, as in test_viewer_browser.py)
opens a notebook in it and runs it: the widget goes through JupyterLab's widget manager
and anywidget's extension, and the kernel is a real ipykernel. The checks: the nodes
are drawn where the kernel's positions project to; a mouse drag moves the node in the
kernel's ``sim.positions`` (read back by running a cell); play advances the kernel's
clock; the server is stopped at the end.

Skipped, saying why, only where no chromium and chromedriver are installed.
"""

import json
import math
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pytest
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

VIEW = "document.querySelector('.springsim-viewer').springsimView"
APP = "window.jupyterapp"
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


def notebook(cells):
    return {
        "cells": [
            {
                "cell_type": "code",
                "metadata": {},
                "source": c,
                "outputs": [],
                "execution_count": None,
            }
            for c in cells
        ],
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait(condition, timeout=60.0, what="the page"):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on 127.0.0.1 serving a temporary directory: (url, root)."""
    pytest.importorskip("jupyterlab", reason="the test extra installs jupyterlab")
    root = tmp_path_factory.mktemp("lab")
    home = tmp_path_factory.mktemp("lab-home")
    port, token = free_port(), "springsim-test-token"
    env = dict(os.environ)
    env.update(
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
        PYTHONPATH=os.pathsep.join(p for p in sys.path if p),  # the kernel imports ours
    )
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--allow-root",  # CI runs as root
            "--LabApp.extension_manager=readonly",  # it would look up packages online
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}",
            "--LabApp.expose_app_in_browser=True",  # window.jupyterapp, to run cells
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(home / "server.log", "w"),  # noqa: SIM115 (closed with the process)
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"

    def up():
        try:
            with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2) as r:
                return r.status == 200
        except OSError:
            assert server.poll() is None, (home / "server.log").read_text()[-3000:]
            return False

    try:
        wait(up, timeout=120, what="jupyter lab to start")
        yield url, token, root
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)  # the server and the kernels it started
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()
    assert server.returncode is not None  # stopped


@pytest.fixture(scope="module")
def browser():
    driver = start_chromium(width=1200, height=1000)
    yield driver
    driver.quit()


def run_cell(browser, index):
    """Run cell ``index`` of the open notebook through JupyterLab's own command."""
    browser.execute_script(
        f"const panel = {APP}.shell.currentWidget;"
        f"panel.content.activeCellIndex = {index};"
        f"{APP}.commands.execute('notebook:run-cell');"
    )


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
    (root / "rope.ipynb").write_text(json.dumps(notebook(CELLS)))
    browser.get(f"{url}/lab/tree/rope.ipynb?token={token}")
    # JupyterLab is up, the notebook open and its kernel idle
    wait(
        lambda: browser.execute_script(
            f"const w = {APP} && {APP}.shell.currentWidget;"
            "return !!(w && w.sessionContext && w.sessionContext.session"
            " && w.sessionContext.session.kernel"
            " && w.sessionContext.session.kernel.status === 'idle')"
        ),
        timeout=120,
        what="the notebook and its kernel",
    )
    run_cell(browser, 0)
    wait(
        lambda: browser.execute_script(
            f"const e = document.querySelector('.springsim-viewer');"
            f"return !!(e && e.springsimView && {VIEW}.state().drawn >= 1)"
        ),
        timeout=60,
        what="the widget's first frame",
    )
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
    t0 = kernel_state(browser, root)["time"]
    wait(lambda: kernel_state(browser, root)["time"] > t0 + 0.05, what="the clock to run")
    browser.find_element(By.CSS_SELECTOR, "button[data-action=pause]").click()
    wait(lambda: not kernel_state(browser, root)["playing"], what="pause")
    assert math.isfinite(kernel_state(browser, root)["time"])
