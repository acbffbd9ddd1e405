"""Drive the dashboard in a real headless Chromium: start/stop `streamlit run`, click the map,
wait for reruns, read charts and metrics. Shared by tests/test_browser.py, bench/bench_click.py
and docs/make_screenshot.py (Debian's /usr/bin/chromium; Playwright downloads no browser here).
"""

from __future__ import annotations

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


def wait_idle(page, settle_ms: int = 300, timeout_ms: int = 60_000) -> None:
    """Wait until the script has finished running (and stays finished for ``settle_ms``) and every
    chart on the page is drawn."""
    page.wait_for_timeout(settle_ms)
    page.wait_for_selector(IDLE, timeout=timeout_ms)
    page.wait_for_timeout(settle_ms)
    page.wait_for_selector(IDLE, timeout=timeout_ms)
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


def home_of_first_user() -> tuple[float, float]:
    """Median location of the first user's points labelled home in the sample."""
    from lmdk_core.sample import load_sample

    s = load_sample()
    h = s[(s.uid == s.uid.iloc[0]) & (s.place == "home")]
    return float(h.lat.median()), float(h.lon.median())


def launch(p):
    return p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
