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

plotly.js is the copy inside the installed ``plotly`` package, served by this app's own server
(a declared component directory); nothing is fetched from the internet.

Importing Streamlit makes its own template Plotly's default, with placeholder colours
(``#000001``…) that only ``st.plotly_chart`` fills in; a figure that kept the default template
is given lmdk's template (:data:`lmdk_core.figures.TEMPLATE`) instead, or its lines would be
drawn black.
"""

from __future__ import annotations

from pathlib import Path

import plotly
import plotly.graph_objects as go
import streamlit as st
import streamlit.components.v1 as components_v1

from lmdk_core.figures import TEMPLATE

_PLOTLY_DIR = Path(plotly.__file__).parent / "package_data"
_ASSETS = components_v1.declare_component("lmdk_plotly_js", path=str(_PLOTLY_DIR))
"""Serves the plotly package's own ``plotly.min.js`` at ``/component/<name>/plotly.min.js``."""

_JS = """
let loading = null;
function loadPlotly(url) {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!loading) loading = new Promise((resolve, reject) => {
    const s = document.createElement('script');
    s.src = url;
    s.onload = () => resolve(window.Plotly);
    s.onerror = () => { loading = null; reject(new Error('could not load ' + url)); };
    document.head.appendChild(s);
  });
  return loading;
}
export default async function ({ parentElement, data }) {
  let div = parentElement.querySelector('.lmdk-chart');
  if (!div) {
    div = document.createElement('div');
    div.className = 'lmdk-chart';
    parentElement.appendChild(div);
  }
  try {
    const Plotly = await loadPlotly(data.url);
    const fig = JSON.parse(data.figure);
    await Plotly.react(div, fig.data, fig.layout, data.config);
  } catch (err) {
    div.textContent = 'The chart could not be drawn: ' + err.message;
  }
}
"""
_CHART = st.components.v2.component("lmdk_chart", js=_JS, isolate_styles=False)
CONFIG = {"responsive": True, "displaylogo": False}
"""Plotly config of every chart: follows the page width; no Plotly logo link."""


def plotly_url() -> str:
    """Where this server serves plotly.min.js (under ``server.baseUrlPath`` if one is set)."""
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return f"{'/' + base if base else ''}/component/{_ASSETS.name}/plotly.min.js"


_PLACEHOLDER = "#000001"
"""First colour of Streamlit's Plotly template: a stand-in its own chart element replaces."""


def figure_json(fig: go.Figure) -> str:
    """``fig`` as Plotly JSON, with lmdk's template if it had Streamlit's placeholder one."""
    colorway = fig.layout.template.layout.colorway
    if colorway and str(colorway[0]).lower() == _PLACEHOLDER:
        fig = go.Figure(fig).update_layout(template=TEMPLATE)
    return str(fig.to_json())


def show(fig: go.Figure, *, key: str) -> None:
    """Draw ``fig`` at ``key``; on a rerun, the chart already there is updated, not re-created.

    The figure travels as Plotly JSON (:func:`figure_json`); tests read it back from the
    element's data (``tests/page_charts.py``).
    """
    _CHART(key=key, data={"figure": figure_json(fig), "url": plotly_url(), "config": CONFIG})
