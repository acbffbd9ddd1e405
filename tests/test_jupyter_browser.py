"""Real browser: JupyterLab headless, the explorer notebook, a click on the map changes a chart.

Starts `jupyter lab` on a free loopback port (token off, no news or update checks, without the
parts of JupyterLab that neither show nor drive the notebook: LAB_CONFIG), opens a
notebook that displays the explorer in Debian's chromium (Playwright), clicks the map at a known
place and waits for the allocation chart's legend to count the new landmark timestamps. Every
request the page makes must go to the local server (offline: no CDN, no tiles).
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import time
from urllib.parse import urlparse

import pytest

# found, not imported: importing jupyterlab took 2.9 s of every test process's collection
if missing := [m for m in ("playwright", "anywidget", "jupyterlab")
               if importlib.util.find_spec(m) is None]:
    pytest.skip(f"needs {', '.join(missing)}", allow_module_level=True)

from browser_driver import CHROMIUM
from jupyter_driver import (
    EXPLORER_NOTEBOOK_CELLS,
    HOME,
    POLL_MS,
    TRACE_NAMES_JS,
    map_pixel,
    open_and_run,
    start_lab,
    stop_lab,
    trace_names,
    write_notebook,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LAB_CONFIG = {
    # JupyterLab's parts that neither show nor drive the notebook's outputs, most of them a request
    # to the server or the kernel at start or a poll: the build check (`yarn config` in node), the
    # LSP servers (the server extension looks for 19 of them, the front end asks their status),
    # the export menu (asks the server for nbconvert's exporters: imports nbconvert), the
    # extension manager, announcements, debugger (asks the kernel), table of contents, help,
    # running-sessions and workspace sidebars, terminals, consoles, settings editors, status bar,
    # completer, tooltips, inspector, search, cell toolbar and tags, mermaid. The notebook, its
    # output areas, the widget manager, anywidget and Plotly's renderer are JupyterLab's as
    # installed; the test asserts no plugin failed to activate for want of a disabled one.
    "labconfig/page_config.json": {
        "buildCheck": False, "buildAvailable": False,
        "disabledExtensions": {name: True for name in (
            "@jupyterlab/extensionmanager-extension", "@jupyterlab/lsp-extension",
            "@jupyterlab/notebook-extension:language-server",
            "@jupyterlab/fileeditor-extension:language-server",
            "@jupyterlab/apputils-extension:announcements",
            "@jupyterlab/notebook-extension:export", "@jupyterlab/debugger-extension",
            "@jupyterlab/toc-extension", "@jupyterlab/notebook-extension:toc",
            "@jupyterlab/help-extension", "@jupyterlab/running-extension",
            "@jupyterlab/terminal-extension", "@jupyterlab/workspaces-extension",
            "@jupyterlab/settingeditor-extension", "@jupyterlab/pluginmanager-extension",
            "@jupyterlab/statusbar-extension", "@jupyterlab/apputils-extension:kernel-status",
            "@jupyterlab/apputils-extension:running-sessions-status",
            "@jupyterlab/notebook-extension:kernel-status", "@jupyterlab/hub-extension",
            "@jupyterlab/mermaid-extension", "@jupyterlab/completer-extension",
            "@jupyterlab/tooltip-extension", "@jupyterlab/inspector-extension",
            "@jupyterlab/console-extension", "@jupyterlab/notebook-extension:code-console",
            "@jupyterlab/celltags-extension", "@jupyterlab/cell-toolbar-extension",
            "@jupyterlab/documentsearch-extension", "@jupyterlab/notebook-extension:search",
            "@jupyterlab/fileeditor-extension:search")},
    },
    "jupyter_server_config.json": {"ServerApp": {"jpserver_extensions": {
        "jupyter_lsp": False, "jupyter_server_terminals": False, "notebook_shim": False}}},
}
"""Written to the lab's own config dir (``home/config``, jupyter_driver.start_lab)."""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    if not shutil.which(CHROMIUM):
        pytest.skip(f"needs {CHROMIUM}")
    root = tmp_path_factory.mktemp("lab-root")
    home = tmp_path_factory.mktemp("lab-home")
    write_notebook(root / "explorer.ipynb", EXPLORER_NOTEBOOK_CELLS)
    for name, config in LAB_CONFIG.items():
        (home / "config" / name).parent.mkdir(parents=True, exist_ok=True)
        (home / "config" / name).write_text(json.dumps(config), encoding="utf-8")
    started = time.perf_counter()
    proc, url = start_lab(root, home, home / "lab.log")
    print(f"\njupyter lab answered after {time.perf_counter() - started:.1f} s")
    try:
        yield url
    finally:
        stop_lab(proc)


def test_map_click_in_jupyterlab_changes_the_allocation_chart(lab, browser):
    requests: list[str] = []
    failed: list[str] = []
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.on("request", lambda r: requests.append(r.url))
        page.on("console", lambda m: failed.append(m.text) if "activat" in m.text else None)
        t0 = time.perf_counter()
        open_and_run(page, lab, "explorer.ipynb")
        page.wait_for_selector(".lmdk-map.leaflet-container", timeout=300_000)
        page.wait_for_function(f"() => ({TRACE_NAMES_JS})().includes('landmark (0)')",
                               timeout=300_000, polling=POLL_MS)
        t1 = time.perf_counter()
        page.locator(".lmdk-map").scroll_into_view_if_needed()
        assert page.locator(".lmdk-map").get_attribute("data-places") == "0"

        pt = map_pixel(page, *HOME)
        page.locator(".lmdk-map").click(position=pt)
        # both charts updated (they redraw one after the other): the allocation chart's
        # "landmark (k)" and the error chart's "landmark timestamp (k)" with one k > 0
        page.wait_for_function(
            f"""() => {{ const names = ({TRACE_NAMES_JS})();
              return names.some(n => /^landmark \\([1-9][0-9]*\\)$/.test(n)
                && names.includes(n.replace('landmark', 'landmark timestamp'))); }}""",
            timeout=120_000, polling=POLL_MS)
        t2 = time.perf_counter()
        names = trace_names(page)
        counts = [int(m.group(1)) for t in names
                  if (m := re.fullmatch(r"landmark \((\d+)\)", t or ""))]
        assert counts and all(c > 0 for c in counts), names
        # the error chart counts the same landmark timestamps
        assert f"landmark timestamp ({counts[0]})" in names, names
        assert page.locator(".lmdk-map").get_attribute("data-places") == "1"
        assert page.locator(".lmdk-map path.lmdk-place").count() == 1
        print(f"notebook open + run to first chart {t1 - t0:.1f} s, "
              f"map click to updated chart {t2 - t1:.2f} s")
    finally:
        context.close()
    outside = sorted({urlparse(u).netloc for u in requests
                      if urlparse(u).scheme in ("http", "https", "ws", "wss")
                      and urlparse(u).hostname != "127.0.0.1"})
    assert not outside, f"requests left the machine: {outside}"
    assert any("/api/kernels" in u for u in requests)
    assert not failed, failed  # a plugin needed one LAB_CONFIG disables
