"""dashboard.charts: figures handed to the in-place chart element keep real colours."""

from __future__ import annotations

import json

import plotly.graph_objects as go
import plotly.io as pio
import streamlit.elements.lib.streamlit_plotly_theme  # noqa: F401  (Streamlit's default template)

from dashboard.charts import figure_json
from lmdk_core.figures import allocation_figure


def test_a_figure_on_streamlits_placeholder_template_gets_real_colours():
    """Streamlit makes its template Plotly's default; its colours are placeholders (#000001…)
    that only st.plotly_chart fills in. The population page's lines came out black."""
    assert pio.templates.default == "streamlit"
    fig = go.Figure()
    for k in range(3):
        fig.add_scatter(y=[k, k + 1])
    assert fig.layout.template.layout.colorway[0] == "#000001"  # what the page had
    out = json.loads(figure_json(fig))["layout"]["template"]["layout"]["colorway"]
    assert not any(c.startswith("#0000") for c in out)
    assert len(set(out[:3])) == 3  # three different colours for three lines


def test_a_figure_with_its_own_template_is_left_as_it_is():
    fig = allocation_figure([0.5, 0.0, 0.5], [False, True, False], 1.0)
    assert json.loads(figure_json(fig)) == json.loads(fig.to_json())
