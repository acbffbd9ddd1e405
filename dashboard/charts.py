"""Plotly figures that update in place when the page reruns.

``st.plotly_chart`` hashes the whole figure into its element id, even when a ``key`` is given
(Streamlit 1.67, ``elements/plotly_chart.py``), and the browser uses that id as the chart's
identity: every new figure unmounts the chart and draws it from scratch, and the user's zoom is
lost. The charts of the My trace page change on every map click, so every chart of the dashboard
is drawn by :func:`show` instead: a small Streamlit component (components v2, in the page itself)
whose identity is its key, and which hands each new figure to ``Plotly.react`` on the same
element.
That keeps the zoom (the figures' ``uirevision``) and made a map click → every chart updated
about 0.5 s faster on the sample (bench/bench_click.py: 2.50 s → 2.0 s median).

A chart out of view (below the fold, in a closed expander) is not drawn, neither its first figure
nor on a rerun: it keeps its latest figure, marked ``data-lmdk-pending`` (and, before its first
drawing, the figure's height, so that the page does not move when it is drawn), and draws it when
it comes within half a screen of the view, when the page is printed, or on
``window.lmdkDrawCharts()`` (what the browser tests call before reading a chart). A map click at
the top of the page redrew every chart below it, some 0.5 CPU-s of the browser per click on the
sample, whether or not anyone looked at them (bench/bench_load.py); and a first page load drew
the My trace page's three charts, all below the fold at 1280×720, and loaded plotly.js for them:
drawing only what is in view took the browser's CPU for a first load at 1280×720 from a median
of 4.3 to 3.5 CPU-s, and of 5.8 to 4.2 on a busier machine (issue 29; both sides interleaved in
one run, 5 and 6 loads each). An unchanged figure is not handed to Plotly again.

plotly.js is served by this app's own server (declared component directories); nothing is
fetched from the internet. Figures whose traces are all of :data:`LITE_TRACES` (every figure of
the dashboard) load ``assets/plotly-lmdk.min.js``, plotly.js built with only those trace types
(``tools/plotly-bundle``): Chromium runs it in 0.3 s instead of the 1.9 s of the plotly package's
full ``plotly.min.js``, which was a third of a first page load. A figure with any other trace type
loads the full copy inside the installed ``plotly`` package.

Dense marker traces (the error chart's fresh/approximated points, landmark rugs) are drawn with
WebGL (``scattergl``): in SVG every marker is its own transformed element, and the browser
re-layered all of them on every frame of a rerun (about 50 ms a frame in Chromium, some 0.25 s of
each map click on the sample). A browser without WebGL gets the same traces in SVG.

Importing Streamlit makes its own template Plotly's default, with placeholder colours
(``#000001``…) that only ``st.plotly_chart`` fills in; a figure that kept the default template
is given lmdk's template (:data:`lmdk_core.figures.TEMPLATE`) instead, or its lines would be
drawn black.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import plotly
import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st
import streamlit.components.v1 as components_v1

from lmdk_core import figures
from lmdk_core.figures import TEMPLATE

_PLOTLY_DIR = Path(plotly.__file__).parent / "package_data"
_ASSETS = components_v1.declare_component("lmdk_plotly_js", path=str(_PLOTLY_DIR))
"""Serves the plotly package's own ``plotly.min.js`` at ``/component/<name>/plotly.min.js``."""
LITE_DIR = Path(__file__).with_name("assets")
LITE_BUNDLE = "plotly-lmdk.min.js"
LITE_TRACES = frozenset({"scatter", "scattergl", "bar", "heatmap"})
"""The trace types in :data:`LITE_BUNDLE` (``tools/plotly-bundle/entry.js``)."""
_LITE = components_v1.declare_component("lmdk_plotly_lite", path=str(LITE_DIR))

_WEBGL_JS = """
let webgl = null;
function hasWebGL() {
  if (webgl === null) {
    try {
      const c = document.createElement('canvas');
      webgl = !!(c.getContext('webgl') || c.getContext('experimental-webgl'));
    } catch (e) { webgl = false; }
  }
  return webgl;
}
// Without WebGL, WebGL traces are drawn as SVG ones (same attributes).
function withoutWebGL(data) {
  return data.map(t => t.type === 'scattergl' ? Object.assign({}, t, {type: 'scatter'}) : t);
}
"""
"""Whether the browser has WebGL, and the figure's traces without it (tested in a browser)."""

_JS = _WEBGL_JS + """
// One plotly.js per bundle URL; each script sets window.Plotly as it runs, so its onload
// handler (run right after it) takes that copy.
const bundles = {};
function loadPlotly(url) {
  if (!bundles[url]) bundles[url] = new Promise((resolve, reject) => {
    const s = document.createElement('script');
    s.src = url;
    s.onload = () => resolve(window.Plotly);
    s.onerror = () => { delete bundles[url]; reject(new Error('could not load ' + url)); };
    document.head.appendChild(s);
  });
  return bundles[url];
}
// Charts out of view are not drawn (neither the first figure nor a rerun's): each keeps the
// figure it was last sent and draws it when it comes within half a screen of the view, when
// the page is printed, or on window.lmdkDrawCharts() (which resolves once every chart shows
// its latest figure). A chart is out of view until the observer has first reported it
// (lmdkSeen: it does so for every chart it observes, in view or not).
// One observer per page (on window), shared by every chart; it does not keep a removed chart
// alive, and no list of charts is kept (lmdkDrawCharts finds them in the page).
const lazy = window.lmdkLazyCharts || (window.lmdkLazyCharts = (() => {
  const observer = typeof IntersectionObserver === 'undefined' ? null
    : new IntersectionObserver((entries) => {
      for (const e of entries) {
        e.target.lmdkInView = e.isIntersecting;
        e.target.lmdkSeen = true;
        if (e.isIntersecting) drawLatest(e.target);
      }
    }, { rootMargin: '50% 0px' });
  const drawAll = () => Promise.all(
    Array.from(document.querySelectorAll('.lmdk-chart'), (div) => drawLatest(div)));
  window.lmdkDrawCharts = drawAll;
  window.addEventListener('beforeprint', drawAll);
  return { observer };
})());
function sameFigure(a, b) {
  return !!a && !!b && a.figure === b.figure && a.url === b.url
    && JSON.stringify(a.config) === JSON.stringify(b.config);
}
async function draw(div, data) {
  try {
    const Plotly = await loadPlotly(data.url);
    const fig = JSON.parse(data.figure);
    const traces = hasWebGL() ? fig.data : withoutWebGL(fig.data);
    if (div.lmdkPlotly && div.lmdkPlotly !== Plotly) div.lmdkPlotly.purge(div);
    div.lmdkPlotly = Plotly;  // the copy that drew this chart updates it
    await Plotly.react(div, traces, fig.layout, data.config);
    div.style.minHeight = '';  // the figure holds its height now
  } catch (err) {
    div.textContent = 'The chart could not be drawn: ' + err.message;
  }
}
// Draws the chart's latest figure unless it shows it already; one draw at a time per chart.
function drawLatest(div) {
  if (div.lmdkBusy) return div.lmdkBusy;
  if (!div.lmdkWant || sameFigure(div.lmdkWant, div.lmdkShown)) {
    delete div.dataset.lmdkPending;
    return Promise.resolve();
  }
  const run = async () => {
    while (!sameFigure(div.lmdkWant, div.lmdkShown)) {
      const want = div.lmdkWant;
      await draw(div, want);
      div.lmdkShown = want;
    }
    delete div.dataset.lmdkPending;
  };
  div.lmdkBusy = run().finally(() => { div.lmdkBusy = null; });
  return div.lmdkBusy;
}
export default function ({ parentElement, data }) {
  let div = parentElement.querySelector('.lmdk-chart');
  if (!div) {
    div = document.createElement('div');
    div.className = 'lmdk-chart';
    parentElement.appendChild(div);
    if (lazy.observer) {
      // out of view until the observer says otherwise; the figure's height is kept meanwhile
      div.lmdkInView = false;
      div.style.minHeight = (data.height || 450) + 'px';
      lazy.observer.observe(div);
    }
  }
  div.lmdkWant = data;
  // a figure (the first one too) is drawn only while the chart is in (or near) the view
  if (div.lmdkInView !== false) return drawLatest(div);
  if (!sameFigure(data, div.lmdkShown)) div.dataset.lmdkPending = 'true';
  return null;
}
"""
_CHART = st.components.v2.component("lmdk_chart", js=_JS, isolate_styles=False)
CONFIG = figures.PLOTLY_CONFIG
"""Plotly config of every chart: follows the page width; no Plotly logo link; no button that
sends the chart anywhere (lmdk_core.figures.PLOTLY_CONFIG)."""


def plotly_url(*, lite: bool = True) -> str:
    """Where this server serves plotly.js (under ``server.baseUrlPath`` if one is set): the
    lite bundle of :data:`LITE_TRACES`, or the plotly package's full ``plotly.min.js``."""
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    path = f"{_LITE.name}/{LITE_BUNDLE}" if lite else f"{_ASSETS.name}/plotly.min.js"
    return f"{'/' + base if base else ''}/component/{path}"


def needs_full_plotly(fig: go.Figure) -> bool:
    """Whether ``fig`` has a trace type outside :data:`LITE_TRACES`."""
    return any(t.type not in LITE_TRACES for t in fig.data)


_PLACEHOLDER = "#000001"
"""First colour of Streamlit's Plotly template: a stand-in its own chart element replaces."""


WEBGL_FROM = 50
"""Marker traces with at least this many points are drawn with WebGL on the page."""


def _dense_markers(trace: Any) -> bool:
    mode = str(getattr(trace, "mode", None) or "")
    return (trace.type == "scatter" and "markers" in mode and "text" not in mode
            and trace.x is not None and len(trace.x) >= WEBGL_FROM)


def figure_json(fig: go.Figure) -> str:
    """``fig`` as Plotly JSON, with lmdk's template if it had Streamlit's placeholder one, and
    its dense marker traces as ``scattergl`` (see the module docstring)."""
    colorway = fig.layout.template.layout.colorway
    placeholder = bool(colorway) and str(colorway[0]).lower() == _PLACEHOLDER
    dense = [i for i, t in enumerate(fig.data) if _dense_markers(t)]
    if not placeholder and not dense:
        return str(fig.to_json())
    out = fig.to_dict()  # a copy: the caller's figure is left as it was
    if placeholder:
        out["layout"]["template"] = TEMPLATE
    for i in dense:
        out["data"][i]["type"] = "scattergl"
    return str(pio.to_json(out, validate=False))


def payload(fig: go.Figure) -> dict[str, Any]:
    """What :func:`show` sends for ``fig``: its Plotly JSON (:func:`figure_json`), the plotly.js
    to load, the config and the figure's height in CSS px (what a chart not drawn yet keeps
    free on the page; None: Plotly's default, 450) (dashboard.compute.chart keeps it for a
    figure that did not change)."""
    return {"figure": figure_json(fig), "url": plotly_url(lite=not needs_full_plotly(fig)),
            "config": CONFIG, "height": fig.layout.height}


def show(fig: go.Figure | None, *, key: str, data: dict[str, Any] | None = None) -> None:
    """Draw ``fig`` (or the :func:`payload` ``data`` of one) at ``key``; on a rerun, the chart
    already there is updated, not re-created.

    The figure travels as Plotly JSON (:func:`figure_json`); tests read it back from the
    element's data (``tests/page_charts.py``).
    """
    _CHART(key=key, data=payload(fig) if data is None else data)
