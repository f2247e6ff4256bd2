"""Make docs/images/viewer.png, the README's picture of the live viewer.

Usage (from the root of a clone, with springsim, anywidget and selenium installed, and
the system's chromium and chromedriver: ``apt-get install chromium chromium-driver``)::

    python tools/viewer_screenshot.py

A table cloth falls on a ball in the viewer's front end, hosted in headless Chromium
by the browser test's page (tests/viewer/viewer_bridge.py); the picture is taken after about
a second and a half of simulated time.
"""

from __future__ import annotations

import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "viewer"))

from viewer_bridge import Bridge, start_chromium  # noqa: E402

import springsim as ss  # noqa: E402

VIEW = "document.querySelector('.springsim-viewer').springsimView"


def main() -> None:
    cloth = ss.cloth(
        30,
        30,
        width=1.2,
        height=1.2,
        mass=0.3,
        stiffness=600.0,
        damping=0.05,
        origin=(-0.6, 0.5, -0.6),
        normal=(0, 1, 0),
        pin=None,
    )
    cloth.add_sphere((0.0, 0.0, 0.0), 0.35, friction=0.3)
    cloth.add_plane((0, 1, 0), -0.4)
    viewer = ss.view(cloth, sliders=["gravity", "wind", "stiffness"], color_by=None)
    bridge = Bridge(viewer)
    browser = start_chromium(980, 760)
    try:
        browser.get(bridge.url)
        deadline = time.monotonic() + 10
        while browser.execute_script(f"return {VIEW}.state().frame") < 1:
            if time.monotonic() > deadline:
                raise RuntimeError("the page did not draw")
            time.sleep(0.05)
        viewer.play()
        while cloth.time < 1.5:
            time.sleep(0.05)
        viewer.pause()
        time.sleep(0.5)
        element = browser.find_element("css selector", ".springsim-viewer")
        target = ROOT / "docs" / "images" / "viewer.png"
        target.write_bytes(element.screenshot_as_png)
        print(f"wrote {target.relative_to(ROOT)} (t = {cloth.time:.2f} s)")
    finally:
        browser.quit()
        bridge.close()
        viewer.close()


if __name__ == "__main__":
    main()
