"""Read the charts an AppTest page drew, whichever way it drew them: ``st.plotly_chart`` or the
in-place charts of :mod:`dashboard.charts` (a components-v2 element carrying Plotly JSON)."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest


def figures(at: AppTest) -> dict[str, dict]:
    """Every chart on the page as Plotly JSON, by element id (the id ends with the chart key)."""
    out = {c.proto.id: json.loads(c.proto.spec) for c in at.get("plotly_chart")}
    for c in at.get("bidi_component"):
        data = json.loads(c.proto.json) if c.proto.WhichOneof("data") == "json" else {}
        if "figure" in data:
            out[c.proto.id] = json.loads(data["figure"])
    return out


def figure(at: AppTest, key: str) -> dict:
    """The chart drawn with ``key`` (fails naming the keys there are)."""
    found = [fig for id_, fig in figures(at).items() if id_.endswith(key)]
    assert found, f"no chart {key} among {list(figures(at))}"
    return found[0]


def bundles(at: AppTest) -> dict[str, str]:
    """The plotly.js URL each in-place chart loads, by element id."""
    out = {}
    for c in at.get("bidi_component"):
        data = json.loads(c.proto.json) if c.proto.WhichOneof("data") == "json" else {}
        if "figure" in data:
            out[c.proto.id] = data["url"]
    return out
