"""The chart element's WebGL fallback in a real headless Chromium without WebGL: the dense
marker traces that dashboard.charts sends as ``scattergl`` are drawn as SVG markers, where
plotly.js alone draws none of them. Skipped only when no Chromium is installed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import plotly
import pytest
from browser_driver import CHROMIUM, CHROMIUM_ARGS

from dashboard.charts import _WEBGL_JS, figure_json
from lmdk_core.figures import error_figure

pytestmark = [
    pytest.mark.browser,
]

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"

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
    return figure_json(error_figure(rng.exponential(50.0, n), rng.random(n) < 0.5,
                                    max_points=400))


def test_without_webgl_the_dense_markers_are_drawn_in_svg(pw):
    figure = _figure()
    markers = sum(len(t["y"]["bdata"]) > 0 for t in json.loads(figure)["data"]
                  if t["type"] == "scattergl")
    assert markers == 2  # fresh and approximated points go to WebGL
    browser = pw.chromium.launch(executable_path=CHROMIUM,
                                 args=[*CHROMIUM_ARGS, "--disable-webgl"])
    try:
        page = browser.new_page()
        page.set_content("<html><body></body></html>")
        page.add_script_tag(path=str(PLOTLY_JS))
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
