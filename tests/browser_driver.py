"""Drive the dashboard in a real headless Chromium: start/stop `streamlit run`, click the map,
wait for reruns, read charts and metrics. Shared by tests/test_browser.py, bench/bench_click.py
and docs/make_screenshot.py (Debian's chromium-headless-shell or chromium, see CHROMIUM;
Playwright downloads no browser here).
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADLESS_SHELL = "/usr/bin/chromium-headless-shell"
CHROMIUM = os.environ.get("LMDK_CHROMIUM") or next(
    (exe for exe in (HEADLESS_SHELL, "/usr/bin/chromium") if os.path.exists(exe)),
    "/usr/bin/chromium")
"""The browser the tests, benches and screenshots drive: Debian's chromium-headless-shell when
installed (what Playwright itself runs headless: the same Blink and V8 without the desktop
browser around them; a page load costs ~25 % less CPU and the first one ~60 % less, measured
on 2 cores), else Debian's full chromium; ``LMDK_CHROMIUM`` overrides."""
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
Leaflet and draw after the script has finished, so "not running" alone can come before them.
(A chart out of view is drawn only when it comes into view, or by :data:`DRAW_CHARTS`.)"""
CHARTS_SETTLED = """() => Array.from(
    document.querySelectorAll("[data-testid='stBidiComponentRegular']"))
  .every(c => { if (c.querySelector('.lmdk-map-host'))
                  return c.querySelector('.lmdk-map.leaflet-container') !== null;
                const d = c.querySelector('.lmdk-chart');
                return d !== null && !d.lmdkBusy
                  && (d.lmdkSeen === true || d.lmdkInView === undefined)
                  && (d.dataset.lmdkPending === 'true' || d.classList.contains('js-plotly-plot'));
              })"""
"""The map has been drawn and every chart of dashboard.charts is as the page leaves it: the
observer of the view has reported it (or there is none), no drawing is under way, and it is
drawn or waits, marked pending, out of view (it is drawn when it comes into view, is printed,
or by :data:`DRAW_CHARTS`)."""
DRAW_CHARTS = "() => window.lmdkDrawCharts && window.lmdkDrawCharts()"
"""Draw every chart's latest figure, as scrolling to each would (dashboard/charts.py draws a
chart out of view only when it comes into view); resolves once all are drawn."""


@contextlib.contextmanager
def step(name: str) -> Iterator[None]:
    """One step of a longer browser flow (several checks made on one loaded page, since a page
    load costs far more than a check): a failure inside it says which step it was in."""
    try:
        yield
    except BaseException as e:
        e.add_note(f"in step: {name}")
        raise


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
  window.__lmdkMutated = performance.now();
  const enter = (state) => {
    if (state === window.__lmdkState) return;
    if (state === 'running') window.__lmdkRuns += 1;
    window.__lmdkState = state;
    window.__lmdkChanged = performance.now();
  };
  new MutationObserver((records) => {
    window.__lmdkMutated = performance.now();
    // every value the state took, in order: each record's old value, then the value now (a
    // short run can start and end within one batch of records: the value now would miss it)
    for (const r of records) {
      if (r.type === 'attributes') enter(r.oldValue);
    }
    const app = document.querySelector("[data-testid='stApp']");
    enter(app && app.getAttribute('data-test-script-state'));
  }).observe(document, {subtree: true, attributes: true, childList: true,
                       attributeOldValue: true, attributeFilter: ['data-test-script-state']});
}
"""
"""Counts the page's script runs (``window.__lmdkRuns``: each start of 'running'), when the
script state last changed (``window.__lmdkChanged``) and when any element of the page last
changed (``window.__lmdkMutated``). Added before the page's own scripts by
:func:`track_runs` (to count every run from the first), else by :func:`wait_idle` on first use."""


def track_runs(page) -> None:
    """Count this page's script runs from its first load on (call before ``page.goto``)."""
    page.add_init_script(RUN_TRACKER)


def runs(page) -> int:
    """Script runs counted so far (see :data:`RUN_TRACKER`)."""
    return int(page.evaluate("window.__lmdkRuns"))


def wait_idle(page, settle_ms: int = 300, timeout_ms: int = 60_000, *,
              since: int | None = None, draw: bool = False) -> None:
    """Wait until the run an action started (if any) has finished, the page has then been quiet
    (no run starting or ending, no element changing) for ``settle_ms``, and the map is drawn
    and the charts are settled (:data:`CHARTS_SETTLED`: those in view drawn); with ``draw``,
    every chart drawn (:func:`draw_charts`: for a check that reads the charts out of view too;
    drawing them all after every action cost the browser plotly.js's load and every chart's
    drawing on each page load, and a redraw of each changed chart on each rerun, whether or
    not a test read them: see dashboard/charts.py for what a first load saves).

    A run is waited for up to ``settle_ms`` to start and the wait moves on as soon as one is
    seen; then the page must stay quiet for ``settle_ms``, so a run that starts up to
    2 × ``settle_ms`` after the action is still waited for. ``since``: the run count
    (:func:`runs`) read before the action, so that a run which started before this call is
    seen at once. (Runs are counted from the page's script state, which on a loaded machine
    can miss a run altogether: a missed run costs the ``settle_ms`` it is waited for, never a
    hang.)"""
    page.evaluate(RUN_TRACKER)
    page.wait_for_function(
        "([b, t0, s]) => window.__lmdkRuns > b || window.__lmdkState === 'running'"
        " || performance.now() - t0 >= s",
        arg=page.evaluate("([b, s]) => [b ?? window.__lmdkRuns, performance.now(), s]",
                          [since, settle_ms]),
        timeout=timeout_ms, polling=20)
    # Quiet: no run starting or ending and no change to the page's elements for settle_ms, and
    # for settle_ms from now at least (for a chained run to start). The page is still drawing
    # after the script state says "not running": on a busy machine a first load showed none of
    # its 11 metrics then, and all of them ~0.3 s later.
    page.wait_for_function(
        "([t1, s]) => { const app = document.querySelector(\"[data-testid='stApp']\");"
        " return app && app.getAttribute('data-test-script-state') === 'notRunning'"
        " && performance.now() - Math.max(window.__lmdkChanged, window.__lmdkMutated, t1)"
        " >= s; }",
        arg=[page.evaluate("performance.now()"), settle_ms], timeout=timeout_ms, polling=50)
    if draw:
        draw_charts(page, timeout_ms)
    else:
        page.wait_for_function(CHARTS_SETTLED, timeout=timeout_ms, polling=50)


def draw_charts(page, timeout_ms: int = 60_000) -> None:
    """Draw every chart's latest figure (:data:`DRAW_CHARTS`, as if each were scrolled to) and
    wait until every chart and the map are drawn (:data:`CHARTS_DRAWN`)."""
    page.evaluate(DRAW_CHARTS)
    page.wait_for_function(CHARTS_DRAWN, timeout=timeout_ms, polling=50)


FIRST_LOAD_MS = 120_000
"""How long a page load may take to draw (:func:`goto_app`): a worker's first
load also runs the server's first script (its imports and caches); with the load at ~19x the
2 cores (two e2e runs side by side and other work) one took over 60 s."""


def goto_app(page, url: str, timeout_ms: int = FIRST_LOAD_MS, *, draw: bool = False) -> None:
    """Open the dashboard at ``url`` and wait until its first run has finished and drawn the
    map and the charts in view (``draw``: every chart, see :func:`wait_idle`). (Waiting for
    "not running" alone could pass before the first run had started on a slow machine, with
    nothing on the page yet.)"""
    track_runs(page)
    page.goto(url, timeout=timeout_ms)
    wait_loaded(page, timeout_ms, draw=draw)


def wait_loaded(page, timeout_ms: int = FIRST_LOAD_MS, *, draw: bool = False) -> None:
    """Wait until a page navigated to the dashboard (with :func:`track_runs` called before the
    navigation) has finished its first run and drawn the map and the charts in view (``draw``:
    every chart, see :func:`wait_idle`)."""
    # the app's element and at least one chart are there: the first run has drawn
    page.wait_for_function(
        "() => document.querySelector(\"[data-testid='stApp']\")"
        " && document.querySelector(\"[data-testid='stBidiComponentRegular']\")",
        timeout=timeout_ms)
    wait_idle(page, timeout_ms=timeout_ms, since=0, draw=draw)


def elapse(page, since_s: float, seconds: float) -> None:
    """Let ``seconds`` pass since ``time.monotonic()`` was ``since_s``, handling the page's
    events meanwhile: for checks that something did *not* happen within a time, overlapped
    with the checks made since."""
    page.wait_for_timeout(max(0.0, (since_s + seconds - time.monotonic()) * 1000))


def wait_zoomed(page, zoom_before: float, timeout_ms: int = 10_000) -> None:
    """Wait until the map's zoom differs from ``zoom_before`` and its zoom animation is over."""
    page.wait_for_function(
        f"z => {{ const m = document.querySelector('{MAP}').lmdkMap;"
        " return m.getZoom() !== z && !m._animatingZoom; }", arg=zoom_before, timeout=timeout_ms)


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
    wait_still(page, MAP)
    page.locator(MAP).click(position=map_point(page, lat, lon))


def add_place(page, lat: float, lon: float, timeout_ms: int = 60_000) -> None:
    """Click the map at (lat, lon), where there is no place yet, and wait until the map draws one
    place more and the click's run has finished. (Waiting for the run alone raced with it on a
    loaded machine: a run that starts later than :func:`wait_idle`'s ``settle_ms`` after the
    click, or one the page's script state never shows, was not waited for, and the test read
    the page before the place existed.)"""
    count = f"() => Number(document.querySelector('{MAP}').dataset.places || 0)"
    before = page.evaluate(count)
    n = runs(page)
    click_map(page, lat, lon)
    page.wait_for_function(f"b => ({count})() > b", arg=before, timeout=timeout_ms)
    wait_idle(page, since=n, timeout_ms=timeout_ms)


STILL_JS = """(el, [frames, most]) => new Promise((done) => {
  let last = null, same = 0, seen = 0;
  const step = () => {
    const r = el.isConnected ? JSON.stringify(el.getBoundingClientRect()) : null;
    same = r !== null && r === last ? same + 1 : 0;
    last = r;
    seen += 1;
    if (same >= frames || seen >= most) done(same >= frames); else requestAnimationFrame(step);
  };
  requestAnimationFrame(step);
})"""
"""Resolves once the element's box has stayed the same for ``frames`` animation frames (true),
or after ``most`` frames (false)."""


def wait_still(page, target, frames: int = 3, most: int = 120) -> bool:
    """Wait until ``target``'s box (a selector or a Playwright locator; its first element) has
    stopped moving (a scroll or a layout after a resize has finished): the same for ``frames``
    consecutive animation frames, at most ``most`` frames (~2 s at 60 Hz; then the caller goes
    on as it would have after a fixed sleep). Returns whether it came to rest."""
    loc = page.locator(target) if isinstance(target, str) else target
    return bool(loc.first.evaluate(STILL_JS, [frames, most]))


def resize(page, width: int, height: int, target) -> None:
    """Set the viewport to ``width`` × ``height`` and wait until the window has that size and
    ``target`` (see :func:`wait_still`) has been laid out again and stopped moving."""
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_function("([w, h]) => window.innerWidth === w && window.innerHeight === h",
                           arg=[width, height], timeout=10_000)
    wait_still(page, target)


def chart_signature(page, index: int = 0, *, draw: bool = True) -> str:
    """The data of the index-th Plotly chart on the page, as JSON (changes when the chart does).
    ``draw``: every chart drawn first (:data:`DRAW_CHARTS`); else the index-th of the charts the
    page has drawn (those that have been in view)."""
    if draw:
        page.evaluate(DRAW_CHARTS)
    return page.evaluate(
        "(i) => { const d = document.querySelectorAll('.js-plotly-plot')[i];"
        " return d && d.data ? JSON.stringify(d.data.map(t => t.y)) : null; }",
        index,
    )


def wait_chart_change(page, before: str, index: int = 0, timeout_ms: int = 60_000, *,
                      draw: bool = True) -> None:
    """Wait until the index-th Plotly chart's data differs from ``before``, at most as long as
    :func:`wait_idle` waits for a run (30 s was within reach of one click's run with the load
    at ~9x the cores). ``draw``: as :func:`chart_signature` (False: a chart in view, which the
    page redraws itself; the other charts are not drawn)."""
    page.wait_for_function(
        "([i, b, draw]) => { if (draw && window.lmdkDrawCharts) window.lmdkDrawCharts();"
        " const d = document.querySelectorAll('.js-plotly-plot')[i];"
        " return d && d.data && JSON.stringify(d.data.map(t => t.y)) !== b; }",
        arg=[index, before, draw],
        timeout=timeout_ms,
    )


def selected_value(selectbox, expect: str | None = None, timeout_s: float = 30.0) -> str:
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
