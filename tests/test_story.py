"""The offline stakeholder report: self-contained, nothing fetched, private parts only on opt-in."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser

import pandas as pd
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
def traj(_sample_once):  # the sample parsed once per session
    return lm.select_user(_sample_once.copy(), "alice").iloc[:500]


def _sections(traj):
    fig = go.Figure(go.Scatter(x=[1, 2, 3], y=[11.5, 22.25, 33.125], name="released error"))
    return [
        StorySection("Released trace", "What an observer sees.",
                     map=lm.trajectory_map(traj, tiles="none")),
        StorySection("Error per timestamp", "Metres from the truth.", figure=fig, private=True),
    ]


def _without_plotlyjs(doc: str) -> str:
    """The story without the plotly.js library it inlines (exactly get_plotlyjs())."""
    from plotly.offline import get_plotlyjs

    library = get_plotlyjs()
    assert library in doc
    return doc.replace(library, "")


def test_story_is_self_contained_and_public_by_default(traj):
    doc = story_html(title="My release", summary="Protected up to ε = 1.\n\nSecond paragraph.",
                     sections=_sections(traj), settings={"scheme": "skip", "epsilon": 1.0})
    assert doc.startswith("<!DOCTYPE html>")
    external = [r for r in _all_refs(doc) if not r.startswith(("data:", "#", "about:"))]
    assert external == []
    assert "leaflet" in doc.lower()  # the map carries its own Leaflet
    # the private figure is not in the public story (checked outside the inlined library:
    # plotly.js 2.x mentions "Plotly.newPlot" in one of its own error messages)
    assert "Plotly.newPlot" not in _without_plotlyjs(doc)
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


# ------------------------------------------------------------------ the release's story


from lmdk_core.story import illustration_figure, release_story, story_summary  # noqa: E402

PLACE = lm.Place("Quarnby Clinic", 0.0, 0.0, 150)


@pytest.fixture(scope="module")
def released(traj):
    home = traj.iloc[len(traj) // 2]
    place = lm.Place(PLACE.name, float(home.lat), float(home.lon), PLACE.place_radius_m)
    mask = lm.landmark_mask(traj, [place])
    assert 0 < mask.sum() < len(traj)
    rel = lm.release_locations(traj, mask, epsilon=1.0, scheme="uniform", radius_m=200, rng=5)
    return rel, mask, place


def _story(rel, **kw):
    return release_story(rel, epsilon=1.0, allocation="uniform", scheme="uniform",
                         settings={"Total privacy budget": "ε = 1"}, **kw)


_NUM_PAIR = re.compile(r"(-?\d+\.\d+)\s*,\s*(-?\d+\.\d+)")


def _variants(x: float) -> set[str]:
    return {f"{x:.{d}f}" for d in (4, 5, 6)} | {repr(float(x)), repr(round(float(x), 6)),
                                                 repr(round(float(x), 5))}


def _length(v) -> int:
    """Length of a plotted array as the page holds it (plain list or plotly's typed bdata)."""
    if isinstance(v, dict) and "bdata" in v:
        import base64

        import numpy as np

        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"])).size
    return len(v or [])


def _plotted_lengths(doc: str) -> list[int]:
    out = []
    for m in re.finditer(r'Plotly\.newPlot\(\s*"([^"]+)",\s*', doc):
        data, _ = json.JSONDecoder().raw_decode(doc, m.end())
        out += [_length(tr.get(axis)) for tr in data for axis in ("x", "y")]
    return out


def _true_pairs_in(doc: str, lats, lons) -> set[tuple[str, str]]:
    """(lat, lon) number pairs of the document that spell a true point in any usual format.

    Not read: the inlined plotly.js, exactly get_plotlyjs() (4.8 MB, the same in every story,
    so it holds no user data; 0.13 CPU-s per scan), cut out at its ends ('/**' and '}));', no
    number there), so every pair elsewhere is found as in the whole document."""
    from plotly.offline import get_plotlyjs

    wanted = {(a, b) for la, lo in zip(lats, lons, strict=True)
              for a in _variants(la) for b in _variants(lo)}
    wanted |= {(b, a) for a, b in wanted}  # GeoJSON writes [lon, lat]
    pairs = set(_NUM_PAIR.findall(doc.replace(get_plotlyjs(), "\0")))
    for inner in re.findall(r'srcdoc="([^"]*)"', doc):
        pairs |= set(_NUM_PAIR.findall(html.unescape(inner)))
    return pairs & wanted


def test_public_story_holds_nothing_from_the_private_file(traj, released):
    rel, _mask, place = released
    doc = _story(rel)
    assert "<script src=\"http" not in doc and "<script src='http" not in doc
    # plotly.js (inlined once in <head>) carries its map-trace style presets, tile URLs
    # included, as code the story never runs (no map traces); everything else has none
    head, body = doc.split("</head>", 1)
    assert head.count("<script>") == 1
    assert "tile.openstreetmap.org" not in body and "{z}" not in body
    maps_html = [html.unescape(x) for x in re.findall(r'srcdoc="([^"]*)"', doc)]
    assert maps_html and not any("tileLayer" in m for m in maps_html)
    external = [r for r in _all_refs(doc) if not r.startswith(("data:", "#", "about:"))]
    assert external == []
    # http(s) strings may only sit inside the inlined libraries' code and licence comments
    outside = re.sub(r"<script>.*?</script>", "", doc, flags=re.S)
    outside = re.sub(r'srcdoc="[^"]*"', "", outside)
    assert not re.search(r"https?://", outside)
    # no true fix and not the place's centre: one scan of the document for both (their pairs'
    # union is empty exactly when each is)
    assert _true_pairs_in(doc, [*traj.lat.to_numpy(), place.lat],
                          [*traj.lon.to_numpy(), place.lon]) == set()
    assert place.name not in doc and html.escape(place.name) not in doc
    assert html.escape(PRIVATE_BANNER) not in doc and "<title>PRIVATE" not in doc
    # nothing per timestamp is plotted (ε_t would show the landmark times): only the
    # made-up 24-moment illustration
    lengths = _plotted_lengths(doc)
    assert lengths and max(lengths) == 24
    # the released points are there (the story is useful without the private parts)
    released_pairs = {(repr(round(float(b), 6)), repr(round(float(a), 6)))
                      for a, b in zip(rel.lat[:50], rel.lon[:50], strict=True)}  # [lon, lat]
    inner = html.unescape(re.search(r'srcdoc="([^"]*)"', doc).group(1))
    assert released_pairs & set(_NUM_PAIR.findall(inner))
    assert "What is protected" in doc and "2·r/ε = 400 m" in doc
    assert "are not in this report" in doc
    assert "schematic main roads" not in doc and "Ring Road" not in doc  # no context given


def test_private_story_on_opt_in_holds_the_truth_and_says_private(traj, released):
    """The same checks find the true trace and the place once the user opts in."""
    rel, mask, place = released
    doc = _story(rel, include_private=True, traj=traj, landmarks=mask, places=[place])
    assert "<title>PRIVATE — " in doc and html.escape(PRIVATE_BANNER) in doc
    assert "This PRIVATE copy also shows the true trace" in doc
    assert "are not in this report" not in doc
    assert _true_pairs_in(doc, traj.lat.to_numpy(), traj.lon.to_numpy())
    assert html.escape(place.name) in doc
    with pytest.raises(ParameterError, match="traj"):
        _story(rel, include_private=True)


def test_bounded_budget_is_shown_only_when_declared_public(traj, released):
    rel, _mask, _ = released
    doc = _story(rel, budget_is_public=True, alpha=0.5)
    assert len(rel.budget) in _plotted_lengths(doc)
    assert "α = 0.5" in doc


def test_illustration_is_the_schemes_own_allocation():
    """Read back from the figure: uniform gives ε/(7+1) everywhere, skip 0 at the 7 made-up
    landmark moments and ε elsewhere; data-dependent schemes get no illustration."""
    from lmdk_core.story import ILLUSTRATION_LANDMARKS

    uni = illustration_figure("uniform", epsilon=2.0).data[0].y
    assert list(uni) == [0.25] * 24
    skip = illustration_figure("skip", epsilon=2.0).data[0].y
    assert [i for i, v in enumerate(skip) if v == 0] == list(ILLUSTRATION_LANDMARKS)
    assert illustration_figure("adaptive", epsilon=1.0) is None


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@pytest.mark.slow
@settings(max_examples=5, deadline=None)
@given(n=st.integers(30, 200), seed=st.integers(0, 2**32 - 1),
       scheme=st.sampled_from(["event", "user", "uniform", "skip", "adaptive"]))
def test_public_story_never_holds_true_points_or_per_moment_series(n, seed, scheme):
    """Over random traces, landmark sets and schemes: no true (lat, lon) pair in any usual
    format, no place name, and no plotted series with one entry per released moment."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    traj = pd.DataFrame({
        "time": pd.date_range("2024-01-01", periods=n, freq="60s", tz="UTC"),
        "lat": 30 + rng.random() * 10 + np.cumsum(rng.normal(0, 2e-4, n)),
        "lon": 100 + rng.random() * 10 + np.cumsum(rng.normal(0, 2e-4, n)),
    })
    mask = rng.random(n) < 0.3
    rel = lm.release_locations(traj, mask, epsilon=float(rng.uniform(0.2, 3)), scheme=scheme,
                               radius_m=float(rng.uniform(50, 500)), rng=seed)
    doc = release_story(rel, epsilon=rel.epsilon, allocation=scheme, scheme=scheme,
                        settings={"Allocation released": scheme})
    assert _true_pairs_in(doc, traj.lat.to_numpy(), traj.lon.to_numpy()) == set()
    assert n not in _plotted_lengths(doc)
    assert "<title>PRIVATE" not in doc


@given(alloc=st.text(min_size=0, max_size=30),
       kind=st.sampled_from(["public", "analysis", "story", "private_story"]))
def test_export_file_names_are_safe_and_say_private_when_private(alloc, kind):
    from lmdk_core.export import export_file_name

    name = export_file_name(kind, alloc, "html", epsilon=1.0)
    assert re.fullmatch(r"[A-Za-z0-9_]+_eps1(_DO_NOT_SHARE)?\.html", name)
    assert ("PRIVATE" in name and name.endswith("_DO_NOT_SHARE.html")) == (
        kind in ("analysis", "private_story"))


def test_story_map_draws_no_randomness(released, monkeypatch):
    """Issue 24 finding 10: the story and its map add no randomness of their own — the map shows
    the released points (evenly thinned past max_points, deterministically), so the release's
    ChaCha20 draw stays the only source. Any numpy or ChaCha20 draw here fails the test."""
    import numpy as np

    from lmdk_core.noise import RandomSource
    from lmdk_core.story import released_map

    def no_draw(*args, **kwargs):
        raise AssertionError("the story drew randomness")

    monkeypatch.setattr(np.random, "default_rng", no_draw)
    monkeypatch.setattr(RandomSource, "secure", classmethod(no_draw))
    monkeypatch.setattr(RandomSource, "seeded", classmethod(no_draw))
    rel = released[0]
    points = [_NUM_PAIR.findall(released_map(rel, max_points=50).get_root().render())
              for _ in range(2)]
    assert points[0] and points[0] == points[1]
    _story(rel)


# ------------------------------------------------------------------ what a stakeholder reads


def _visible_text(doc: str) -> str:
    """The words a reader sees: scripts, styles and the maps' inner pages removed, tags stripped."""
    out = re.sub(r"<(script|style)\b[^>]*>.*?</\1>", " ", doc, flags=re.S)  # any attributes
    out = re.sub(r'srcdoc="[^"]*"', "", out)
    return html.unescape(re.sub(r"<[^>]+>", " ", out))


def _max_bracket_depth(text: str) -> int:
    depth = best = 0
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        best = max(best, depth)
    return best


BRACKETED = "TPL-bounded allocation (α = 0.5)"


@pytest.fixture(scope="module")
def context_story(released):
    """The public story of ``released`` with the sample's offline context and a label that
    carries brackets of its own."""
    return release_story(released[0], epsilon=1.0, allocation=BRACKETED, scheme="uniform",
                         settings={"Total privacy budget": "ε = 1"},
                         context=lm.load_sample_context())


@pytest.mark.parametrize("private", [False, True])
def test_story_reads_human_times_and_flat_titles(traj, released, context_story, private):
    """Issue 27: no ISO 8601 stamp ('2008-10-23T02:53:04') anywhere a reader looks, the span in
    words (checked against the released times read independently), and no nested brackets in
    the page title or heading even for an allocation label with brackets of its own."""
    rel, mask, place = released
    doc = context_story if not private else release_story(
        rel, epsilon=1.0, allocation=BRACKETED, scheme="uniform", settings={},
        include_private=True, traj=traj, landmarks=mask, places=[place])
    text = _visible_text(doc)
    assert not re.search(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}", text), text
    t0, t1 = (pd.Timestamp(t).tz_localize(None) if pd.Timestamp(t).tzinfo is None
              else pd.Timestamp(t).tz_convert("UTC").tz_localize(None)
              for t in (rel.time[0], rel.time[-1]))
    span = (f"on {t0.day} {t0:%b %Y} from {t0:%H:%M} to {t1:%H:%M} UTC" if t0.date() == t1.date()
            else f"from {t0.day} {t0:%b %Y, %H:%M} to {t1.day} {t1:%b %Y, %H:%M} UTC")
    assert f"What was shared: {len(rel.budget):,} noisy locations {span}," in text
    assert re.search(r"Made with lmdk on \d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC", text)
    title = re.search(r"<title>(.*?)</title>", doc).group(1)
    heading = re.search(r"<h1>(.*?)</h1>", doc).group(1)
    for t in (html.unescape(title), html.unescape(heading)):
        assert _max_bracket_depth(t) == 1 and "α = 0.5" in t and "ε = 1" in t
    assert title.startswith("PRIVATE — ") == private


def test_simulated_story_does_not_claim_os_randomness(released, context_story):
    """A seeded release's story says it is a simulation and never that no seed exists."""
    assert released[0].seeded
    text = _visible_text(context_story)
    assert "SIMULATION" in text and "no seed exists" not in text
    real = story_summary(epsilon=1.0, radius_m=200, allocation="uniform", n_released=3)
    assert "no seed exists" in real and "SIMULATION" not in real


def test_public_story_draws_the_samples_roads_but_none_of_its_places(context_story):
    """Issue 27: offline bearings on the public map — the bundled sample's schematic roads, with
    their names — but none of the context's points (the sample's places: names or coordinates).
    (test_public_story_holds_nothing_from_the_private_file: no roads without a context.)"""
    ctx = lm.load_sample_context()
    roads = [f for f in ctx["features"] if f["geometry"]["type"] == "LineString"]
    points = [f for f in ctx["features"] if f["geometry"]["type"] == "Point"]
    assert roads and points
    doc = context_story
    inner = html.unescape(re.search(r'srcdoc="([^"]*)"', doc).group(1))
    inner = inner.replace("\\u0027", "'")  # names inside JSON
    for f in roads:
        assert f["properties"]["name"].removesuffix(" (schematic)") in inner
    for f in points:
        name = f["properties"]["name"]
        assert name not in doc and html.escape(name) not in doc and name not in inner
    lons, lats = zip(*(f["geometry"]["coordinates"][:2] for f in points), strict=True)
    assert _true_pairs_in(doc, lats, lons) == set()
    assert "schematic main roads" in _visible_text(doc)


@settings(max_examples=25, deadline=None)
@given(kinds=st.lists(st.sampled_from(["Point", "MultiPoint", "LineString", "Polygon"]),
                      max_size=8))
def test_public_context_keeps_lines_and_areas_and_drops_every_point(kinds):
    from lmdk_core.story import public_context

    coords = {"Point": [1.0, 2.0], "MultiPoint": [[1.0, 2.0]], "LineString": [[0, 0], [1, 1]],
              "Polygon": [[[0, 0], [1, 0], [1, 1], [0, 0]]]}
    ctx = {"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {"name": f"f{i}"},
         "geometry": {"type": k, "coordinates": coords[k]}} for i, k in enumerate(kinds)]}
    out = public_context(ctx)
    kept = [f"f{i}" for i, k in enumerate(kinds) if k in ("LineString", "Polygon")]
    if not kept:
        assert out is None
    else:
        assert [f["properties"]["name"] for f in out["features"]] == kept


def test_public_context_refuses_what_is_not_a_feature_collection():
    from lmdk_core.story import public_context

    with pytest.raises(ParameterError, match="FeatureCollection"):
        public_context({"type": "Feature"})


def _arc_m(lat1, lon1, lat2, lon2):
    """Great-circle distance from 3-D unit vectors (atan2 of |cross| and dot), not haversine."""
    import numpy as np

    def vec(la, lo):
        la, lo = np.radians(la), np.radians(lo)
        return np.stack([np.cos(la) * np.cos(lo), np.cos(la) * np.sin(lo), np.sin(la)], -1)

    u, v = np.broadcast_arrays(vec(lat1, lon1), vec(lat2, lon2))
    return 6_371_008.8 * np.arctan2(np.linalg.norm(np.cross(u, v), axis=-1), (u * v).sum(-1))


def _shown_m(text: str) -> tuple[float, float]:
    """A distance as printed and the step it was rounded up by (1 m, or 1 km from 10 km)."""
    number, unit = text.split()
    value = float(number.replace(",", ""))
    return (value, 1.0) if unit == "m" else (value * 1000, 1000.0)


@pytest.mark.parametrize("scheme", ["skip", "uniform"])  # metres and kilometres
def test_extent_caption_matches_an_independent_computation(traj, released, scheme):
    """The caption, from the released points only, against an independent computation: at least
    9 in 10 points within the stated distance of the median point and fewer within one rounding
    step less; the area's sides are the meridian arc R·Δφ and the arc across its middle."""
    import numpy as np

    from lmdk_core.story import released_extent_text

    mask = released[1]
    rel = lm.release_locations(traj, mask, epsilon=1.0, scheme=scheme, radius_m=200, rng=11)
    text = released_extent_text(rel)
    m = re.fullmatch(r"9 in 10 released points lie within ([\d,]+ k?m) of their median point "
                     r"\(the median latitude and longitude, about (\d+\.\d\d)° N, "
                     r"(\d+\.\d\d)° E\); the map opens on them\. All of them lie within an "
                     r"area ([\d,]+ k?m) north–south by ([\d,]+ k?m) east–west\.", text)
    assert m, text
    lat, lon = np.asarray(rel.lat), np.asarray(rel.lon)
    ok = np.isfinite(lat) & np.isfinite(lon)  # nothing released yet: NaN
    lat, lon = lat[ok], lon[ok]
    med = (np.median(lat), np.median(lon))
    assert (float(m.group(2)), float(m.group(3))) == (round(med[0], 2), round(med[1], 2))
    dist = _arc_m(lat, lon, *med)
    r, step = _shown_m(m.group(1))
    assert np.mean(dist <= r + 1e-6) >= 0.9 > np.mean(dist <= r - step)
    mid_lat, mid_lon = (lat.min() + lat.max()) / 2, (lon.min() + lon.max()) / 2
    for shown, exact in ((m.group(4), _arc_m(lat.min(), mid_lon, lat.max(), mid_lon)),
                         (m.group(5), _arc_m(mid_lat, lon.min(), mid_lat, lon.max()))):
        value, step = _shown_m(shown)
        assert value - step < float(exact) <= value + 1e-6
    assert released_extent_text(pd.DataFrame({"lat": [np.nan], "lon": [np.nan]})) == ""
    few = released_extent_text(pd.DataFrame({"lat": lat[:3], "lon": lon[:3]}))
    assert few.startswith("The 3 released point(s) lie within an area")


def test_story_map_uses_the_maps_tile_layer(released):
    """Issue 29 item 5: one tile layer for every folium map — the story's OSM layer renders
    exactly as the trajectory map's, and a bad tile value raises the same ParameterError."""
    from lmdk_core.story import released_map

    rel = released[0]

    def tile_js(m):
        return re.findall(r"L\.tileLayer\([^;]*", m.get_root().render())

    story_osm = tile_js(released_map(rel, tiles="osm", max_points=10))
    app_osm = tile_js(lm.trajectory_map(pd.DataFrame({"lat": [1.0], "lon": [2.0]}), tiles="osm"))
    assert story_osm and [re.sub(r"tile_layer_\w+", "", t) for t in story_osm] == [
        re.sub(r"tile_layer_\w+", "", t) for t in app_osm]
    assert tile_js(released_map(rel, max_points=10)) == []
    with pytest.raises(ParameterError, match="tiles"):
        released_map(rel, tiles="ftp://x/{z}/{x}/{y}")


def test_summary_states_the_interval_as_the_app_does():
    from lmdk_core.formatting import plain_duration

    for seconds in (30.0, 600.0, 5400.0):
        text = story_summary(epsilon=1.0, radius_m=100, allocation="uniform", n_released=3,
                             interval_s=seconds)
        assert f"one location every {plain_duration(seconds)}." in text
    assert "0.5 minutes" not in story_summary(epsilon=1.0, radius_m=100, allocation="uniform",
                                              n_released=3, interval_s=30.0)
