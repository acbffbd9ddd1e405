"""Drive the explorer in a real JupyterLab: start `jupyter lab` headless on a free loopback port
(token disabled, no news/update/extension-manager requests, its own config and runtime dirs),
open a notebook in Debian's chromium with Playwright, run it, click the map, read the charts.
Shared by tests/test_jupyter_browser.py and docs/make_explorer_screenshot.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import iri_grammar
from browser_driver import CHROMIUM, CHROMIUM_ARGS, ROOT, free_port, stop_server

OFFLINE_LAB_ARGS = [
    "--no-browser", "--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=",
    "--ServerApp.password=", "--LabApp.news_url=None",
    "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    "--LabApp.extension_manager=readonly", "--LabApp.expose_app_in_browser=True",
    "--ServerApp.terminals_enabled=False",
] + (["--allow-root"] if os.geteuid() == 0 else [])

EXPLORER_NOTEBOOK_CELLS = [
    "import lmdk_core as lk\n"
    "from lmdk_core.jupyter import explore\n"
    "traj = lk.resample(lk.select_user(lk.load_sample(), 'alice'), 600)",
    "ex = explore(traj, loss_model='none', map_height='360px')\nex",
]

HOME = (39.9925, 116.3395)

POLL_MS = 100
"""How often the page waits here re-run their predicate (``wait_for_function(polling=)``).
Playwright's default polls on every animation frame: ~60 JavaScript evaluations a second,
each asking for a frame, for the ~10-30 s JupyterLab takes to load and run a notebook."""


def write_notebook(path: Path, cells: list[str]) -> Path:
    nb = {
        "cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {},
                   "outputs": [], "source": src} for i, src in enumerate(cells)],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                    "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    }
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path


def start_lab(root: Path, home: Path, log: Path, port: int | None = None):
    """`jupyter lab` serving ``root`` on 127.0.0.1; returns (process, base URL) once it answers.

    Config, data-runtime and workspace state live under ``home`` (nothing of the user's is read
    or written); kernels inherit PYTHONPATH so they import this checkout's lmdk_core.
    """
    port = port or free_port()
    env = dict(os.environ)
    env.update(JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_RUNTIME_DIR=str(home / "runtime"),
               IPYTHONDIR=str(home / "ipython"), PYTHONPATH=str(ROOT))
    # `jupyter lab`, without building jsonschema's IRI grammar at import (tests/iri_grammar.py)
    lab = f"{iri_grammar.SKIP}; import sys; from jupyterlab.labapp import main; sys.exit(main())"
    proc = subprocess.Popen(
        [sys.executable, "-c", lab, *OFFLINE_LAB_ARGS, f"--ServerApp.port={port}",
         "--ServerApp.port_retries=0", f"--ServerApp.root_dir={root}",
         f"--LabApp.workspaces_dir={home / 'workspaces'}"],
        cwd=root, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/api/status", timeout=2):
                return proc, url
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited: {log.read_text()[-2000:]}") from None
            time.sleep(0.3)
    stop_lab(proc)
    raise RuntimeError("jupyter lab did not answer within 120 s")


def stop_lab(proc: subprocess.Popen) -> None:
    """Stop the server we started (and its kernels), by its process group."""
    stop_server(proc, grace_s=15)


def launch(playwright, **context):
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    return browser, browser.new_context(**context)


def open_and_run(page, url: str, name: str, timeout_ms: int = 300_000) -> None:
    """Open notebook ``name`` in JupyterLab, wait for its kernel, run all cells."""
    page.goto(f"{url}/lab/tree/{name}", timeout=timeout_ms)
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell",
                           timeout=timeout_ms, polling=POLL_MS)
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=timeout_ms)
    page.wait_for_function(
        "() => { const w = window.jupyterapp.shell.currentWidget;"
        " const k = w && w.sessionContext && w.sessionContext.session"
        " && w.sessionContext.session.kernel; return k && k.status === 'idle'; }",
        timeout=timeout_ms, polling=POLL_MS)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")


def map_pixel(page, lat: float, lon: float) -> dict:
    """Pixel offset of (lat, lon) inside the explorer's map."""
    return page.locator(".lmdk-map").evaluate(
        "(el, ll) => { const p = el.lmdkMap.latLngToContainerPoint(ll);"
        " return {x: p.x, y: p.y}; }", [lat, lon])


TRACE_NAMES_JS = ("() => [...document.querySelectorAll('.js-plotly-plot')]"
                  ".flatMap(gd => (gd.data || []).map(t => t.name))")


def trace_names(page) -> list[str]:
    """Names of every trace drawn by plotly.js on the page (the charts' data as rendered)."""
    return page.evaluate(TRACE_NAMES_JS)
