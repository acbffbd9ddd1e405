"""Drive the dashboard in a real headless Chromium: start/stop `streamlit run`, click the map,
wait for reruns, read charts and metrics. Shared by tests/test_browser.py, bench/bench_click.py
and docs/make_screenshot.py (Debian's /usr/bin/chromium; Playwright downloads no browser here).
"""

from __future__ import annotations

import functools
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
VIEWPORTS = [(1280, 720), (1440, 900), (1920, 1080)]
"""The laptop and desktop sizes every UI change is looked at and tested in (width, height px)."""
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
MAP = ".lmdk-map"
"""The dashboard's map (dashboard/map_element.py: Leaflet in the page itself; its element has
``lmdkMap``, the Leaflet map object)."""
CHARTS_DRAWN = """() => Array.from(
    document.querySelectorAll("[data-testid='stBidiComponentRegular']"))
  .every(c => c.querySelector('.lmdk-map-host')
              ? c.querySelector('.lmdk-map.leaflet-container') !== null
              : c.querySelector('.js-plotly-plot') !== null)"""
"""Every chart of dashboard.charts and the map have been drawn: their elements load plotly.js or
Leaflet and draw after the script has finished, so "not running" alone can come before them."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, log: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    """`streamlit run dashboard/app.py` headless on 127.0.0.1:port; returns once healthy.
    ``env``: extra environment variables for the server (e.g. LMDK_TIMING for benches)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "dashboard/app.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1"],
        cwd=ROOT, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True,
        env={**os.environ, **(env or {})},
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):
                return proc
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"streamlit exited: {log.read_text()[-2000:]}") from None
            time.sleep(0.2)
    stop_server(proc)
    raise RuntimeError("streamlit did not become healthy within 60 s")


def stop_server(proc: subprocess.Popen, grace_s: float = 10) -> None:
    """Stop a server we started (and its children), by its process group: SIGTERM, then SIGKILL
    after ``grace_s`` seconds."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


RUN_TRACKER = """
if (window.__lmdkRuns === undefined) {
  window.__lmdkRuns = 0;
  window.__lmdkChanged = performance.now();
  new MutationObserver(() => {
    const app = document.querySelector("[data-testid='stApp']");
    const state = app && app.getAttribute('data-test-script-state');
    if (state === window.__lmdkState) return;
    if (state === 'running') window.__lmdkRuns += 1;
    window.__lmdkState = state;
    window.__lmdkChanged = performance.now();
  }).observe(document, {subtree: true, attributes: true, childList: true,
                       attributeFilter: ['data-test-script-state']});
}
"""
"""Counts the page's script runs (``window.__lmdkRuns``: each start of 'running') and when the
script state last changed (``window.__lmdkChanged``). Added before the page's own scripts by
:func:`track_runs` (to count every run from the first), else by :func:`wait_idle` on first use."""


def track_runs(page) -> None:
    """Count this page's script runs from its first load on (call before ``page.goto``)."""
    page.add_init_script(RUN_TRACKER)


def runs(page) -> int:
    """Script runs counted so far (see :data:`RUN_TRACKER`)."""
    return int(page.evaluate("window.__lmdkRuns"))


def wait_idle(page, settle_ms: int = 300, timeout_ms: int = 60_000) -> None:
    """Wait until the run an action started (if any) has finished, the script has then stayed
    finished for ``settle_ms``, and every chart and the map are drawn.

    A run is waited for up to ``settle_ms`` to start and the wait moves on as soon as it does;
    then the page must stay quiet (no run starting or ending) for ``settle_ms``, so a run that
    starts up to 2 × ``settle_ms`` after the action is still waited for, as with two fixed
    sleeps, but a click costs its run plus ``settle_ms`` instead of the sleeps."""
    page.evaluate(RUN_TRACKER)
    page.wait_for_function(
        "([b, t0, s]) => window.__lmdkRuns > b || performance.now() - t0 >= s",
        arg=page.evaluate("s => [window.__lmdkRuns, performance.now(), s]", settle_ms),
        timeout=timeout_ms, polling=20)
    page.wait_for_function(
        "([t1, s]) => { const app = document.querySelector(\"[data-testid='stApp']\");"
        " return app && app.getAttribute('data-test-script-state') === 'notRunning'"
        " && performance.now() - Math.max(window.__lmdkChanged, t1) >= s; }",
        arg=[page.evaluate("performance.now()"), settle_ms], timeout=timeout_ms, polling=50)
    page.wait_for_function(CHARTS_DRAWN, timeout=timeout_ms)


def map_point(page, lat: float, lon: float) -> dict:
    """Pixel position of (lat, lon) inside the map's element."""
    target = page.locator(MAP)
    target.wait_for(timeout=30_000)
    return target.evaluate(
        "(el, ll) => { const p = el.lmdkMap.latLngToContainerPoint(ll); return {x: p.x, y: p.y}; }",
        [lat, lon],
    )


def click_map(page, lat: float, lon: float) -> None:
    """Click the map at (lat, lon). The whole map is scrolled into view first: Playwright's own
    scroll-before-click moved a partly hidden map under the computed position."""
    page.locator(MAP).scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    page.locator(MAP).click(position=map_point(page, lat, lon))


def chart_signature(page, index: int = 0) -> str:
    """The data of the index-th Plotly chart on the page, as JSON (changes when the chart does)."""
    return page.evaluate(
        "(i) => { const d = document.querySelectorAll('.js-plotly-plot')[i];"
        " return d && d.data ? JSON.stringify(d.data.map(t => t.y)) : null; }",
        index,
    )


def wait_chart_change(page, before: str, index: int = 0, timeout_ms: int = 30_000) -> None:
    """Wait until the index-th Plotly chart's data differs from ``before``."""
    page.wait_for_function(
        "([i, b]) => { const d = document.querySelectorAll('.js-plotly-plot')[i];"
        " return d && d.data && JSON.stringify(d.data.map(t => t.y)) !== b; }",
        arg=[index, before],
        timeout=timeout_ms,
    )


def selected_value(selectbox, expect: str | None = None, timeout_s: float = 10.0) -> str:
    """Text shown by a selectbox; with ``expect``, poll until it appears (the widget is briefly
    re-rendered after a rerun) and return the last text read."""
    deadline = time.monotonic() + timeout_s
    while True:
        inputs = selectbox.locator("input")
        value = inputs.first.input_value() if inputs.count() else ""
        text = value + " " + selectbox.inner_text()
        if expect is None or expect in text or time.monotonic() > deadline:
            return text
        time.sleep(0.1)


def metrics_text(page) -> dict[str, str]:
    out = {}
    for m in page.locator("[data-testid='stMetric']").all():
        label = m.locator("[data-testid='stMetricLabel']").inner_text().strip()
        out[label] = m.locator("[data-testid='stMetricValue']").inner_text().strip()
    return out


@functools.cache
def home_of_first_user() -> tuple[float, float]:
    """Median location of the first user's points labelled home in the sample."""
    from lmdk_core.sample import load_sample

    s = load_sample()
    h = s[(s.uid == s.uid.iloc[0]) & (s.place == "home")]
    return float(h.lat.median()), float(h.lon.median())


def launch(p):
    return p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
