"""A real JupyterLab on 127.0.0.1, driven by headless Chromium: the server, a notebook
opened in it, and its cells run through JupyterLab's own commands.

Used by tests/viewer/test_viewer_jupyterlab.py and tools/viewer_fps.py. The server
gets a free port, a token, its own settings and runtime directories, and the kernel
imports the springsim on this process's ``sys.path``; it is stopped (with the kernels
it started) when the context ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

APP = "window.jupyterapp"
VIEW = "document.querySelector('.springsim-viewer').springsimView"
TOKEN = "springsim-test-token"


def notebook(cells: list[str]) -> dict:
    """A notebook (nbformat 4 JSON) of these code cells, for the python3 kernel."""
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait(condition, timeout=60.0, what="the page"):
    """The first true value of ``condition()``, polled every 50 ms."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@contextlib.contextmanager
def jupyter_lab(
    root: pathlib.Path, home: pathlib.Path
) -> Iterator[tuple[str, str, subprocess.Popen]]:
    """A JupyterLab server serving ``root`` (settings under ``home``): (url, token, process)."""
    port = free_port()
    env = dict(os.environ)
    env.update(
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
        PYTHONPATH=os.pathsep.join(p for p in sys.path if p),  # the kernel imports ours
    )
    log = open(home / "server.log", "w")  # noqa: SIM115 (closed with the process)
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
            f"--IdentityProvider.token={TOKEN}",
            f"--ServerApp.root_dir={root}",
            "--LabApp.expose_app_in_browser=True",  # window.jupyterapp, to run cells
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"

    def up():
        try:
            with urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2) as r:
                return r.status == 200
        except OSError:
            assert server.poll() is None, (home / "server.log").read_text()[-3000:]
            return False

    try:
        wait(up, timeout=120, what="jupyter lab to start")
        yield url, TOKEN, server
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)  # the server and the kernels it started
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()
        log.close()


def open_notebook(browser, url: str, token: str, root: pathlib.Path, name: str, cells: list[str]):
    """Write the notebook ``name`` of ``cells`` into ``root`` and open it in the
    browser, waiting for JupyterLab and an idle kernel."""
    (pathlib.Path(root) / name).write_text(json.dumps(notebook(cells)))
    browser.get(f"{url}/lab/tree/{name}?token={token}")
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


def run_cell(browser, index: int) -> None:
    """Run cell ``index`` of the open notebook through JupyterLab's own command."""
    browser.execute_script(
        f"const panel = {APP}.shell.currentWidget;"
        f"panel.content.activeCellIndex = {index};"
        f"{APP}.commands.execute('notebook:run-cell');"
    )


def wait_for_widget(browser) -> None:
    """Until the viewer's widget has drawn its first frame."""
    wait(
        lambda: browser.execute_script(
            f"const e = document.querySelector('.springsim-viewer');"
            f"return !!(e && e.springsimView && {VIEW}.state().drawn >= 1)"
        ),
        timeout=60,
        what="the widget's first frame",
    )


#: JavaScript counting the open notebook's kernel status changes (busy, idle, ...)
#: from now: ``window.springsimStatus`` is the list of (ms, status) seen.
COUNT_STATUS = (
    "window.springsimStatus = [];"
    f"const kernel = {APP}.shell.currentWidget.sessionContext.session.kernel;"
    "if (!window.springsimCounting) {"
    "  window.springsimCounting = true;"
    "  kernel.statusChanged.connect((_, s) => window.springsimStatus.push([performance.now(), s]));"
    "}"
)
