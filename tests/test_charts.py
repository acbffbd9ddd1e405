"""dashboard.charts: figures handed to the in-place chart element keep real colours, and
dense marker traces are drawn with WebGL."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import streamlit.elements.lib.streamlit_plotly_theme  # noqa: F401  (Streamlit's default template)

from dashboard.charts import (
    LITE_BUNDLE,
    LITE_DIR,
    LITE_TRACES,
    figure_json,
    needs_full_plotly,
    plotly_url,
)
from lmdk_core.figures import allocation_figure, error_figure


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
    fig = allocation_figure([0.5, 0.0, 0.5], [False, True, False], epsilon=1.0)
    assert json.loads(figure_json(fig)) == json.loads(fig.to_json())


def _error_figure(n: int = 3000) -> go.Figure:
    rng = np.random.default_rng(1)
    mask = np.zeros(n, dtype=bool)
    mask[100:900] = True
    return error_figure(rng.exponential(100.0, n), rng.random(n) < 0.5, landmarks=mask,
                        max_points=400)


def test_dense_marker_traces_go_to_webgl_and_nothing_else_changes():
    """Hundreds of SVG markers made every frame of a rerun re-layer them (~50 ms a frame)."""
    fig = _error_figure()
    before = fig.to_json()
    plain, page = json.loads(before), json.loads(figure_json(fig))
    assert fig.to_json() == before  # the caller's figure is left alone
    kinds = [(t["type"], t["mode"]) for t in page["data"]]
    assert kinds == [("scatter", "lines")] + [("scattergl", "markers")] * 3
    for a, b in zip(plain["data"], page["data"], strict=True):
        assert {k: v for k, v in a.items() if k != "type"} == {
            k: v for k, v in b.items() if k != "type"}
    assert plain["layout"] == page["layout"]
    sparse = error_figure([1.0, 2.0, 3.0], [True, False, True], landmarks=[False, True, False])
    assert {t["type"] for t in json.loads(figure_json(sparse))["data"]} == {"scatter"}


def test_the_small_bundle_is_chosen_unless_a_trace_needs_the_full_plotly_js():
    lines = go.Figure([go.Scatter(y=[1, 2]), go.Bar(y=[1]), go.Heatmap(z=[[1]]),
                       go.Scattergl(y=[1])])
    assert not needs_full_plotly(lines)
    assert needs_full_plotly(go.Figure([go.Scatter(y=[1]), go.Pie(values=[1, 2])]))
    assert plotly_url().endswith(f"/{LITE_BUNDLE}")
    assert plotly_url(lite=False).endswith("/plotly.min.js")


ROOT = Path(__file__).resolve().parent.parent
RECIPE = ROOT / "tools" / "plotly-bundle"


def test_the_small_bundle_is_the_recipe_s_build_of_the_types_the_page_draws_with():
    """LITE_TRACES, the build recipe and the checked-in file agree: the recipe registers those
    trace types (scatter is in plotly.js's core), pins plotly.js, and its README records the
    SHA-256 of the file it builds (tools/plotly-bundle/README.md says how to rebuild)."""
    entry = (RECIPE / "entry.js").read_text()
    registered = set(re.findall(r"require\('plotly\.js/lib/(\w+)'\)", entry))
    assert registered - {"core"} | {"scatter"} == LITE_TRACES
    version = json.loads((RECIPE / "package.json").read_text())["devDependencies"]["plotly.js"]
    bundle = (LITE_DIR / LITE_BUNDLE).read_bytes()
    assert bundle.startswith(f"/* plotly.js v{version} (MIT licence".encode())
    # the one build-path-dependent name (an inline stylesheet's id), as the README says
    normalised = re.sub(rb"\b[0-9a-f]{64}\b", b"0" * 64, bundle)
    assert hashlib.sha256(normalised).hexdigest() in (RECIPE / "README.md").read_text()
