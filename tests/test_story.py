"""The offline stakeholder report: self-contained, nothing fetched, private parts only on opt-in."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser

import plotly.graph_objects as go
import pytest

import lmdk_core as lm
from lmdk_core.errors import ParameterError
from lmdk_core.story import PRIVATE_BANNER, StorySection, story_html


class _Refs(HTMLParser):
    """Every src/href/data attribute and every nested srcdoc page."""

    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []
        self.srcdocs: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("src", "href", "data") and value:
                self.refs.append(value)
            if name == "srcdoc" and value:
                self.srcdocs.append(value)


def _all_refs(doc: str) -> list[str]:
    p = _Refs()
    p.feed(doc)
    refs = list(p.refs)
    for inner in p.srcdocs:  # HTMLParser already unescaped the attribute
        refs += _all_refs(inner)
    # CSS url(...) outside data: URIs would also load something
    refs += re.findall(r"url\(\s*['\"]?(https?:[^'\")]+)", doc)
    return refs


@pytest.fixture(scope="module")
def traj():
    return lm.select_user(lm.load_sample(), "alice").iloc[:500]


def _sections(traj):
    fig = go.Figure(go.Scatter(x=[1, 2, 3], y=[11.5, 22.25, 33.125], name="released error"))
    return [
        StorySection("Released trace", "What an observer sees.",
                     map=lm.trajectory_map(traj, tiles="none")),
        StorySection("Error per timestamp", "Metres from the truth.", figure=fig, private=True),
    ]


def test_story_is_self_contained_and_public_by_default(traj):
    doc = story_html(title="My release", summary="Protected up to ε = 1.\n\nSecond paragraph.",
                     sections=_sections(traj), settings={"scheme": "skip", "epsilon": 1.0})
    assert doc.startswith("<!DOCTYPE html>")
    external = [r for r in _all_refs(doc) if not r.startswith(("data:", "#", "about:"))]
    assert external == []
    assert "leaflet" in doc.lower()  # the map carries its own Leaflet
    assert "Plotly.newPlot" not in doc  # the private figure is not in the public story
    assert "33.125" not in doc
    assert html.escape(PRIVATE_BANNER) not in doc
    assert "1 section(s) showing your true data" in doc
    assert "<p>Second paragraph.</p>" in doc
    assert "<th>scheme</th><td>skip</td>" in doc


def test_private_sections_only_on_opt_in_with_banner(traj):
    doc = story_html(title="My release", summary="s", sections=_sections(traj),
                     include_private=True)
    assert html.escape(PRIVATE_BANNER) in doc
    assert "<title>PRIVATE — My release</title>" in doc
    m = re.search(r'Plotly\.newPlot\(\s*"lmdk-figure-1",\s*', doc)
    assert m is not None
    data, _ = json.JSONDecoder().raw_decode(doc, m.end())
    assert data[0]["y"] == [11.5, 22.25, 33.125]


def test_story_refuses_a_seed_and_an_empty_title(traj):
    with pytest.raises(ParameterError, match="seed"):
        story_html(title="t", summary="", sections=[], settings={"Seed": 7})
    with pytest.raises(ParameterError, match="title"):
        story_html(title=" ", summary="", sections=[])


def test_text_is_escaped():
    doc = story_html(title="<script>x</script>", summary="<b>bold</b>",
                     sections=[StorySection("<i>", "<img src=x>")])
    assert "<script>x</script>" not in doc.split("</head>", 1)[1]
    assert "&lt;img src=x&gt;" in doc


def test_reference_check_catches_a_cdn_map():
    """The self-containment check can fail: folium's own Map loads Leaflet from CDNs."""
    import folium

    doc = story_html(title="t", summary="", sections=[StorySection("m", map=folium.Map())])
    assert any(r.startswith("https://") for r in _all_refs(doc))
