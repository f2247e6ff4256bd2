"""Frames per second of the live viewer for a 100 x 100 cloth (issue 18's target: > 30).

Usage (from the root of a clone, with springsim, anywidget and selenium installed; the
browser part needs the system's chromium and chromedriver)::

    python tools/viewer_fps.py

Prints, for the Python side (no browser: step + encode + send), the time to encode and
send one frame and the frames per second the stepping thread keeps up at 10 substeps
and at the default substeps; then, with headless Chromium hosting the front end through
the browser test's page (tests/viewer/viewer_bridge.py), the frames drawn per second and the
time one drawing takes; then the same in a real JupyterLab (started on 127.0.0.1 by
tests/viewer/lab_server.py, as the JupyterLab test starts it, the kernel a real
ipykernel, the widget through anywidget), with the kernel's busy blinks counted. The
machine is shared by Python, the kernel's threads and the browser: the numbers are
what this machine does with all of them at once.
"""

from __future__ import annotations

import pathlib
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "viewer"))

from lab_server import (  # noqa: E402
    COUNT_STATUS,
    jupyter_lab,
    open_notebook,
    run_cell,
    wait_for_widget,
)
from viewer_bridge import Bridge, find_chromium, start_chromium  # noqa: E402

import springsim as ss  # noqa: E402

VIEW = "document.querySelector('.springsim-viewer').springsimView"


def cloth() -> ss.System:
    return ss.cloth(100, 100, width=1.0, height=1.0, mass=0.2, stiffness=500.0, damping=0.02)


def python_side() -> None:
    sim = cloth()
    viewer = ss.view(sim)
    began = time.perf_counter()
    for _ in range(100):
        viewer._send_frame()
    each = (time.perf_counter() - began) / 100
    print(f"encode + send one frame ({sim.num_nodes} nodes): {each * 1e3:.2f} ms")
    for substeps in (10, viewer.substeps):
        viewer.substeps = substeps
        viewer.play()
        time.sleep(3)
        viewer.pause()
        print(f"Python side, {substeps} substeps of {viewer.dt:.2e} s: {viewer.fps:.0f} fps")
    viewer.close()


def browser_side(substeps: int | None) -> None:
    viewer = ss.view(cloth(), substeps=substeps)
    bridge = Bridge(viewer)
    browser = start_chromium()
    try:
        browser.get(bridge.url)
        time.sleep(1.5)
        viewer.play()
        time.sleep(1.0)
        first, began = browser.execute_script(f"return {VIEW}.state()"), time.perf_counter()
        time.sleep(4.0)
        last, ended = browser.execute_script(f"return {VIEW}.state()"), time.perf_counter()
        viewer.pause()
        seconds = ended - began
        print(
            f"browser, live ({viewer.substeps} substeps): "
            f"{(last['frame'] - first['frame']) / seconds:.0f} frames received/s, "
            f"{(last['rendered'] - first['rendered']) / seconds:.0f} drawn/s, "
            f"{last['drawTime']:.1f} ms to draw one"
        )
    finally:
        browser.quit()
        bridge.close()
        viewer.close()


CLOTH_CELL = (
    "import springsim as ss\n"
    "cloth = ss.cloth(100, 100, width=1.0, height=1.0, mass=0.2, stiffness=500.0,"
    " damping=0.02)\n"
    "viewer = ss.view(cloth{options})\n"
    "viewer"
)


def lab_side(substeps: int | None, seconds: float = 5.0) -> None:
    """Frames received and drawn per second by the widget in a real JupyterLab."""
    options = "" if substeps is None else f", substeps={substeps}"
    root, home = pathlib.Path(tempfile.mkdtemp()), pathlib.Path(tempfile.mkdtemp())
    browser = start_chromium(width=1200, height=1000)
    try:
        with jupyter_lab(root, home) as (url, token, _server):
            open_notebook(
                browser, url, token, root, "cloth.ipynb", [CLOTH_CELL.format(options=options)]
            )
            run_cell(browser, 0)
            wait_for_widget(browser)
            browser.find_element("css selector", "button[data-action=play]").click()
            time.sleep(2.0)
            browser.execute_script(COUNT_STATUS)
            first, began = browser.execute_script(f"return {VIEW}.state()"), time.perf_counter()
            time.sleep(seconds)
            last, ended = browser.execute_script(f"return {VIEW}.state()"), time.perf_counter()
            busy = sum(
                1 for _, s in browser.execute_script("return window.springsimStatus") if s == "busy"
            )
            browser.find_element("css selector", "button[data-action=pause]").click()
            took = ended - began
            print(
                f"JupyterLab, live ({'default' if substeps is None else substeps} substeps): "
                f"{(last['frame'] - first['frame']) / took:.0f} frames received/s, "
                f"{(last['rendered'] - first['rendered']) / took:.0f} drawn/s, "
                f"{last['drawTime']:.1f} ms to draw one, kernel busy {busy / took:.1f} times/s"
            )
    finally:
        browser.quit()


if __name__ == "__main__":
    python_side()
    if find_chromium() is None:
        print("no chromium + chromedriver: browser side not measured")
    else:
        browser_side(None)
        browser_side(10)
        try:
            import jupyterlab  # noqa: F401
        except ImportError:
            print("no jupyterlab: JupyterLab side not measured")
        else:
            lab_side(None)
            lab_side(10)
