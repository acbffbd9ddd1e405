"""The dashboard in a real headless Chromium (Playwright), served by `streamlit run`.

Checks what AppTest cannot: Leaflet actually loads offline (no request leaves 127.0.0.1 with
tiles "none"), a real click on the map adds a landmark place and the charts and metrics update,
a bad upload shows the library's message in the page and keeps the places.
Skipped only when /usr/bin/chromium is missing (`make chromium` installs it).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
MAP_FRAME = 'iframe[title*="streamlit_folium"]'

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} missing (run `make chromium`)"
    ),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, log: Path) -> subprocess.Popen:
    """`streamlit run dashboard/app.py` headless on 127.0.0.1:port; returns once healthy."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "dashboard/app.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1"],
        cwd=ROOT, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):
                return proc
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"streamlit exited: {log.read_text()[-2000:]}")
            time.sleep(0.2)
    stop_server(proc)
    raise RuntimeError("streamlit did not become healthy within 60 s")


def stop_server(proc: subprocess.Popen) -> None:
    """Stop the server we started, by its PID (its own process group)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def wait_idle(page, settle_ms: int = 300, timeout_ms: int = 60_000) -> None:
    """Wait until the script has finished running (and stays finished for ``settle_ms``)."""
    page.wait_for_timeout(settle_ms)
    page.wait_for_selector(IDLE, timeout=timeout_ms)
    page.wait_for_timeout(settle_ms)
    page.wait_for_selector(IDLE, timeout=timeout_ms)


def map_point(page, lat: float, lon: float) -> dict:
    """Pixel position of (lat, lon) inside the map's Leaflet container."""
    frame = page.frame_locator(MAP_FRAME)
    frame.locator(".leaflet-container").wait_for(timeout=30_000)
    pt = frame.locator(".leaflet-container").evaluate(
        "(el, ll) => { const p = window.map.latLngToContainerPoint(L.latLng(ll[0], ll[1]));"
        " return {x: p.x, y: p.y}; }",
        [lat, lon],
    )
    return pt


def click_map(page, lat: float, lon: float) -> None:
    frame = page.frame_locator(MAP_FRAME)
    frame.locator(".leaflet-container").click(position=map_point(page, lat, lon))


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


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("streamlit") / "server.log"
    port = free_port()
    proc = start_server(port, log)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_server(proc)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


def test_click_adds_landmark_updates_page_offline_and_bad_upload(server, browser, tmp_path):
    page = browser.new_page(viewport={"width": 1366, "height": 1000})
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(f"{server}/?tiles=none")
    wait_idle(page, settle_ms=800)
    frame = page.frame_locator(MAP_FRAME)
    frame.locator(".leaflet-container").wait_for(timeout=30_000)
    assert frame.locator(".leaflet-overlay-pane path").count() >= 1  # the trajectory is drawn
    before_chart = chart_signature(page, 0)
    before = metrics_text(page)
    assert before_chart and "Mean error" in before

    click_map(page, *home_of_first_user())
    wait_chart_change(page, before_chart)  # ε_t changed: Uniform spends ε/(|L|+1)
    wait_idle(page)
    after = metrics_text(page)
    selected = page.locator("[data-testid='stSelectbox']").filter(has_text="Selected place")
    assert "Home" in selected_value(selected, "Home")
    assert after["Mean error"] != before["Mean error"]
    assert frame.locator("path.leaflet-interactive").count() >= 2  # trajectory + place circle

    # The zoom survives a click (the base map is not rebuilt), and a click made while the page
    # is still rerunning for the previous one is not lost. (Clicks closer than the component's
    # 250 ms debounce are merged by streamlit-folium into the last one.)
    frame.locator(".leaflet-control-zoom-in").click()
    page.wait_for_timeout(600)
    container = frame.locator(".leaflet-container")
    zoom = container.evaluate("() => window.map.getZoom()")
    box = container.bounding_box()
    cx, cy = box["width"] / 2, box["height"] / 2
    container.click(position={"x": cx - 60, "y": cy})
    page.wait_for_timeout(400)  # past the debounce: the first click's rerun is under way
    container.click(position={"x": cx + 60, "y": cy})
    # default names: Home, Clinic, Place 3 (the grid's cells are in the DOM for accessibility)
    page.locator("td", has_text="Place 3").first.wait_for(state="attached", timeout=30_000)
    wait_idle(page, settle_ms=800)
    assert page.locator("td", has_text="Clinic").count() >= 1
    assert container.evaluate("() => window.map.getZoom()") == zoom

    # Nothing left 127.0.0.1: Leaflet is inlined and there are no tiles.
    local = ("http://127.0.0.1", "data:", "blob:", "about:")
    outside = [u for u in requests if not u.startswith(local)]
    assert outside == []

    # A bad upload: the library's message in the page, the place stays.
    page.get_by_text("Upload files", exact=True).click()
    wait_idle(page)
    page.locator("input[type='file']").first.set_input_files(
        {"name": "broken.csv", "mimeType": "text/csv",
         "buffer": b"uid,time,lat,lon\nu1,2024-01-01T00:00:00Z,95.0,116.3\n"}
    )
    alert = page.locator("[data-testid='stAlert']").filter(has_text="broken.csv")
    alert.wait_for(timeout=30_000)
    wait_idle(page)
    page.screenshot(path=str(tmp_path / "dashboard.png"), full_page=True)
    shown = selected_value(selected, "Place 3")
    cells = page.locator("td").all_inner_texts()
    page.screenshot(path=str(tmp_path / "after.png"), full_page=True)
    assert "Place 3" in shown, cells
    # the message did not re-mount the map: the zoom chosen above is still there
    assert container.evaluate("() => window.map.getZoom()") == zoom
    assert page.locator("td", has_text="Home").count() >= 1
    assert "Mean error" in metrics_text(page)
    page.close()
