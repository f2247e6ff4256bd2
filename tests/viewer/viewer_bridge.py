"""A plain page hosting the viewer's front end, bridged to a Python Viewer, and Chromium.

Used by tests/viewer/test_viewer_browser.py and tools/viewer_screenshot.py. The page loads the
installed package's ``viewer.js`` and gives it a small stand-in for anywidget's model
(get/set/on/off/send/save_changes): ``send`` POSTs each message, in order, to the
server, which hands it to ``viewer._handle``; the page polls the server for what the
viewer sends, as a binary batch (per message: u32 JSON length, JSON, u32 buffer count,
then u32 length and bytes per buffer, little-endian), and calls the front end's
``msg:custom`` listeners with DataViews, as anywidget does.

The browser is the system's Chromium with its chromedriver (Debian: ``apt-get install
chromium chromium-driver``), given to Selenium by path so that it downloads nothing.
"""

from __future__ import annotations

import base64
import io
import json
import math
import os
import queue
import shutil
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

from springsim.viewer.standalone import front_end

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>springsim viewer</title></head>
<body style="margin: 8px; background: #fff">
<div id="app"></div>
<script type="module">
import widget from "/viewer.js";
const listeners = [], state = {};
let outbox = Promise.resolve();
const model = {
  get: (key) => state[key],
  set: (key, value) => { state[key] = value; },
  save_changes: () => {},
  on: (name, cb) => { if (name === "msg:custom") listeners.push(cb); },
  off: () => {},
  // in order: a drag must not overtake its grab
  send: (content) => { outbox = outbox.then(() => fetch("/msg", {
    method: "POST", body: JSON.stringify(content) })); },
};
async function poll() {
  for (;;) {
    const data = await (await fetch("/poll")).arrayBuffer();
    const view = new DataView(data);
    let at = 0;
    const u32 = () => { const v = view.getUint32(at, true); at += 4; return v; };
    while (at < data.byteLength) {
      const size = u32();
      const content = JSON.parse(new TextDecoder().decode(new Uint8Array(data, at, size)));
      at += size;
      const buffers = [];
      for (let n = u32(); n > 0; n--) {
        const length = u32();
        buffers.push(new DataView(data, at, length));
        at += length;
      }
      listeners.forEach((cb) => cb(content, buffers));
    }
  }
}
poll();
widget.render({ model, el: document.getElementById("app") });
</script>
</body></html>
"""


class Bridge:
    """Serves the page for ``viewer`` on 127.0.0.1 (a free port) until :meth:`close`."""

    def __init__(self, viewer):
        self.viewer = viewer
        self.outbox = queue.Queue()
        self.errors = []
        # each page load gets a fresh outbox: a reloaded page's last poll, still
        # waiting, takes nothing meant for the new page
        viewer._taps.append(lambda content, buffers: self.outbox.put((content, buffers)))
        bridge = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def reply(self, body, kind):
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the page was closed while it polled

            def do_GET(self):
                if self.path == "/":
                    bridge.outbox = queue.Queue()
                    self.reply(PAGE.encode(), "text/html; charset=utf-8")
                elif self.path == "/viewer.js":
                    self.reply(front_end().encode(), "text/javascript")
                elif self.path == "/poll":
                    self.reply(bridge.batch(), "application/octet-stream")
                else:
                    self.send_error(404)

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                try:
                    bridge.viewer._handle(json.loads(body), [])
                except Exception as err:  # the test fails on any: a message was refused
                    bridge.errors.append(f"{type(err).__name__}: {err}")
                self.reply(b"", "text/plain")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def batch(self) -> bytes:
        """What the viewer sent since the last poll (waits up to 0.5 s for something)."""
        parts, box = [], self.outbox
        try:
            messages = [box.get(timeout=0.5)]
        except queue.Empty:
            return b""
        while not box.empty() and len(messages) < 64:
            messages.append(box.get_nowait())
        for content, buffers in messages:
            text = json.dumps(content).encode()
            parts += [struct.pack("<I", len(text)), text, struct.pack("<I", len(buffers))]
            for buffer in buffers:
                parts += [struct.pack("<I", len(buffer)), bytes(buffer)]
        return b"".join(parts)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def find_chromium() -> tuple[str, str] | None:
    """(chromium, chromedriver) paths of the system's packages, or None."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


def start_chromium(width: int = 1000, height: int = 900):
    """Headless Chromium driven by Selenium, from the system's packages (no download)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    found = find_chromium()
    if found is None:
        raise FileNotFoundError("no chromium and chromedriver on PATH")
    browser, driver = found
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for argument in (
        "--headless=new",
        "--no-sandbox",  # CI runs as root
        "--disable-dev-shm-usage",
        "--force-device-scale-factor=1",
        f"--window-size={width},{height}",
        "--allow-file-access-from-files",
    ):
        options.add_argument(argument)
    # the browser runs without the sanitizer runtime that .ci/run preloads into Python
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS")}
    service = Service(executable_path=driver, env=env)
    return webdriver.Chrome(service=service, options=options)


# ---- reading what the page drew (the browser tests) ---------------------------------

NODE = (0x1F, 0x4E, 0x9C)  # viewer.js's colours of a free node and of a pinned one
PIN = (0xD6, 0x27, 0x28)


def projected(camera, points):
    """Screen position (CSS px) of each point: the projection viewer.js documents."""
    w, h = camera["width"], camera["height"]
    if camera["dim"] == 2:
        c, s = camera["center"], camera["scale"]
        return np.column_stack(
            [w / 2 + s * (points[:, 0] - c[0]), h / 2 - s * (points[:, 1] - c[1])]
        )
    r = points - np.array(camera["target"])
    yaw, pitch = camera["yaw"], camera["pitch"]
    x1 = math.cos(yaw) * r[:, 0] + math.sin(yaw) * r[:, 2]
    z1 = -math.sin(yaw) * r[:, 0] + math.cos(yaw) * r[:, 2]
    y2 = math.cos(pitch) * r[:, 1] - math.sin(pitch) * z1
    z2 = math.sin(pitch) * r[:, 1] + math.cos(pitch) * z1
    d = camera["distance"] - z2
    f = h / 2 / math.tan(camera["fov"] / 2)
    return np.column_stack([w / 2 + f * x1 / d, h / 2 - f * y2 / d])


def pixels(browser):
    """The scene canvas as an (H, W, 3) array, read with toDataURL."""
    from PIL import Image  # matplotlib's dependency

    url = browser.execute_script(
        "return document.querySelector('canvas[data-role=scene]').toDataURL('image/png')"
    )
    png = base64.b64decode(url.split(",", 1)[1])
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)


def blob_center(image, xy, color, radius=7):
    """Centroid of the pixels of ``color`` within ``radius`` px of ``xy`` (None: none)."""
    x0, y0 = int(round(xy[0])), int(round(xy[1]))
    window = image[y0 - radius : y0 + radius + 1, x0 - radius : x0 + radius + 1]
    ys, xs = np.nonzero(np.abs(window - np.array(color)).sum(axis=2) < 30)
    if len(xs) < 5:
        return None
    return np.array([xs.mean() + x0 - radius + 0.5, ys.mean() + y0 - radius + 0.5])
