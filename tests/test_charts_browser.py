"""The chart element's WebGL fallback in a real headless Chromium without WebGL: the dense
marker traces that dashboard.charts sends as ``scattergl`` are drawn as SVG markers, where
plotly.js alone draws none of them. Skipped only when no Chromium is installed."""

from __future__ import annotations

import json

import numpy as np
import pytest
from browser_driver import CHROMIUM, CHROMIUM_ARGS

from dashboard.charts import _WEBGL_JS, LITE_BUNDLE, LITE_DIR, figure_json, needs_full_plotly
from lmdk_core.figures import error_figure

pytestmark = [
    pytest.mark.browser,
]

DRAW = """async ([figure, fallback]) => {
  const fig = JSON.parse(figure);
  const div = document.createElement('div');
  document.body.appendChild(div);
  const traces = fallback ? (hasWebGL() ? fig.data : withoutWebGL(fig.data)) : fig.data;
  try { await Plotly.react(div, traces, fig.layout); } catch (e) { /* counted below */ }
  return {webgl: hasWebGL(), svgMarkers: div.querySelectorAll('path.point').length};
}"""


def _figure() -> str:
    rng = np.random.default_rng(2)
    n = 2000
    fig = error_figure(rng.exponential(50.0, n), rng.random(n) < 0.5, max_points=400)
    assert not needs_full_plotly(fig)  # the page loads the lite bundle for it, as here
    return figure_json(fig)


def test_without_webgl_the_dense_markers_are_drawn_in_svg(pw):
    """Drawn with the plotly.js the dashboard loads for this figure (its lite bundle: the full
    plotly.min.js cost this test ~1.5 CPU-s more, 2.8 against 1.1–1.4, for the same traces)."""
    figure = _figure()
    markers = sum(len(t["y"]["bdata"]) > 0 for t in json.loads(figure)["data"]
                  if t["type"] == "scattergl")
    assert markers == 2  # fresh and approximated points go to WebGL
    browser = pw.chromium.launch(executable_path=CHROMIUM,
                                 args=[*CHROMIUM_ARGS, "--disable-webgl"])
    try:
        page = browser.new_page()
        page.set_content("<html><body></body></html>")
        page.add_script_tag(path=str(LITE_DIR / LITE_BUNDLE))
        page.add_script_tag(content=_WEBGL_JS)
        with_fallback = page.evaluate(DRAW, [figure, True])
        without = page.evaluate(DRAW, [figure, False])
    finally:
        browser.close()
    assert with_fallback["webgl"] is False
    assert with_fallback["svgMarkers"] >= 300  # the thinned points, each a marker
    assert without["svgMarkers"] == 0  # plotly.js alone: the WebGL traces are simply missing


DRAW_EACH = """async (figures) => {
  const out = {traces: Object.keys(Plotly.PlotSchema.get().traces).sort()};
  for (const [name, fig] of Object.entries(figures)) {
    const div = document.createElement('div');
    document.body.appendChild(div);
    await Plotly.newPlot(div, fig.data, fig.layout);
    out[name] = {bars: div.querySelectorAll('.bars path').length,
                 heatmap: div.querySelectorAll('.hm image').length,
                 gl: div.querySelectorAll('canvas.gl-canvas').length,
                 lines: div.querySelectorAll('.scatterlayer .js-line').length};
  }
  return out;
}"""


def test_the_small_bundle_draws_every_trace_type_the_dashboard_uses(browser):
    """dashboard/assets/plotly-lmdk.min.js has exactly LITE_TRACES and draws each of them."""
    import plotly.graph_objects as go

    from dashboard.charts import LITE_BUNDLE, LITE_DIR, LITE_TRACES

    figs = {
        "scatter": go.Figure(go.Scatter(y=[1, 3, 2], mode="lines")),
        "scattergl": go.Figure(go.Scattergl(y=np.arange(200.0), mode="markers")),
        "bar": go.Figure(go.Bar(x=["a", "b"], y=[1, 2])),
        "heatmap": go.Figure(go.Heatmap(z=[[1, 2], [3, 4]])),
    }
    page = browser.new_page()
    try:
        page.set_content("<html><body></body></html>")
        page.add_script_tag(path=str(LITE_DIR / LITE_BUNDLE))
        out = page.evaluate(DRAW_EACH, {k: json.loads(f.to_json()) for k, f in figs.items()})
    finally:
        page.close()
    assert set(out["traces"]) == LITE_TRACES
    assert out["scatter"]["lines"] == 1
    assert out["scattergl"]["gl"] >= 1
    assert out["bar"]["bars"] == 2
    assert out["heatmap"]["heatmap"] == 1


# One chart element (dashboard.charts._JS, the module Streamlit runs) at the top of a page and
# one below a tall spacer, driven as Streamlit drives it: default({parentElement, data}) on
# every rerun. Plotly.react is counted.
LAZY_PAGE = """<html><body style="margin:0">
<div id="top" style="width:400px;height:300px"></div>
<div style="height:4000px"></div>
<div id="low" style="width:400px;height:300px"></div></body></html>"""

LAZY_SETUP = """async (js) => {
  const mod = await import(URL.createObjectURL(new Blob([js], {type: 'text/javascript'})));
  window.chart = (id, data) => mod.default({parentElement: document.getElementById(id), data});
  window.ys = (id) => { const d = document.querySelector('#' + id + ' .lmdk-chart');
    return d && d.data ? d.data[0].y : null; };
  window.pending = (id) =>
    document.querySelector('#' + id + ' .lmdk-chart').dataset.lmdkPending === 'true';
}"""


def _lazy_payloads() -> list[dict]:
    import plotly.graph_objects as go

    from dashboard.charts import payload

    return [payload(go.Figure(go.Scatter(y=[k, k + 1, k + 3], mode="lines"),
                              layout={"uirevision": "x"})) for k in range(4)]


def _lazy_run(browser, js: str, *, full: bool = True) -> dict:
    """The lazy-drawing story on one page; what each step saw (``full=False``: up to the first
    rerun)."""
    from dashboard.charts import LITE_BUNDLE, LITE_DIR

    p = _lazy_payloads()
    page = browser.new_page(viewport={"width": 800, "height": 600})
    try:
        page.route("http://lmdk.test/**", lambda route: route.fulfill(
            body=(LITE_DIR / LITE_BUNDLE).read_bytes() if route.request.url.endswith(".js")
            else LAZY_PAGE, content_type="text/javascript" if route.request.url.endswith(".js")
            else "text/html"))
        page.goto("http://lmdk.test/")
        page.evaluate(LAZY_SETUP, js)
        data = [{**d, "url": "http://lmdk.test/plotly.js"} for d in p]
        out = {}
        # first figures: drawn in view only; the one below the fold waits, marked pending,
        # until lmdkDrawCharts (or the view) draws it
        page.evaluate("async (d) => { await chart('top', d); await chart('low', d); }", data[0])
        page.wait_for_function("() => ys('top') !== null")
        out["first_low"] = page.evaluate(
            "() => [ys('low'), pending('low'),"
            " document.querySelector('#low .lmdk-chart').offsetHeight]")
        page.evaluate("() => window.lmdkDrawCharts()")
        page.wait_for_function("() => ys('low') !== null && ys('top') !== null")
        page.evaluate("() => { window.reacts = 0; const r = Plotly.react;"
                      " Plotly.react = (...a) => { window.reacts += 1;"
                      " return r.apply(Plotly, a); }; }")
        out["first"] = page.evaluate("() => [ys('top'), ys('low')]")
        # a rerun with new figures: the chart in view is redrawn, the one below is not
        page.evaluate("async (d) => { await chart('top', d); await chart('low', d); }", data[1])
        out["rerun"] = page.evaluate("() => [ys('top'), ys('low'), pending('low'), reacts]")
        if not full:
            return out
        # the same figure again: nothing to draw
        page.evaluate("async (d) => { await chart('top', d); }", data[1])
        out["same"] = page.evaluate("() => reacts")
        # scrolling the chart below into view draws its latest figure
        page.locator("#low").scroll_into_view_if_needed()
        page.wait_for_function("(y) => JSON.stringify(ys('low')) === JSON.stringify(y)",
                               arg=[1, 2, 4], timeout=10_000)
        out["scrolled"] = page.evaluate("() => [ys('low'), pending('low')]")
        # now the top one is out of view: printing draws it (and lmdkDrawCharts resolves
        # when every chart shows its latest figure)
        page.evaluate("async (d) => { await chart('top', d); }", data[2])
        out["hidden"] = page.evaluate("() => [ys('top'), pending('top')]")
        page.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")
        page.wait_for_function("() => !pending('top')", timeout=10_000)
        out["printed"] = page.evaluate("() => ys('top')")
        page.evaluate("async (d) => { await chart('top', d); }", data[3])
        page.evaluate("() => window.lmdkDrawCharts()")
        out["flushed"] = page.evaluate("() => [ys('top'), pending('top')]")
    finally:
        page.close()
    return out


def test_charts_out_of_view_wait_for_the_view_and_always_show_their_latest_figure(browser):
    """A rerun redraws only the charts in (or near) the view; a chart below the fold keeps its
    figure, marked pending, until it is scrolled to (or the page is printed, or
    ``window.lmdkDrawCharts()`` runs): then it shows the figure of the latest run."""
    from dashboard.charts import _JS

    out = _lazy_run(browser, _JS)
    # not drawn below the fold, not even the first figure; its height (Plotly's default, the
    # payload's None) is kept free meanwhile
    assert out["first_low"] == [None, True, 450]
    assert out["first"] == [[0, 1, 3], [0, 1, 3]]
    assert out["rerun"] == [[1, 2, 4], [0, 1, 3], True, 1]  # one Plotly.react: the top chart
    assert out["same"] == 1  # an unchanged figure is not handed to Plotly again
    assert out["scrolled"] == [[1, 2, 4], False]
    assert out["hidden"] == [[1, 2, 4], True]
    assert out["printed"] == [2, 3, 5]
    assert out["flushed"] == [[3, 4, 6], False]
    # the check above can fail: an element that redraws wherever the chart is (the in-view test
    # removed) draws the chart below at once
    eager = _lazy_run(browser, _JS.replace("div.lmdkInView !== false", "true"), full=False)
    assert eager["first_low"][:2] == [[0, 1, 3], False]
    assert eager["rerun"][1:3] == [[1, 2, 4], False]
