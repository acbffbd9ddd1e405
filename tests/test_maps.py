"""lmdk_core.maps: offline Leaflet, deterministic base map, layers."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import folium
import numpy as np
import pandas as pd
import pytest
from xstatic.pkg import leaflet as xleaflet

from lmdk_core import maps
from lmdk_core.errors import ParameterError

URL = re.compile(r"(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}[^\s\"')]*", re.I)


def _traj(n: int = 500, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "lat": 39.9 + np.cumsum(rng.normal(0, 1e-4, n)),
            "lon": 116.3 + np.cumsum(rng.normal(0, 1e-4, n)),
        }
    )


def _decode(uri: str) -> bytes:
    head, _, payload = uri.partition(",")
    assert head.startswith("data:") and head.endswith(";base64")
    return base64.b64decode(payload)


def test_local_leaflet_is_the_installed_leaflet():
    js, css = maps.local_leaflet()
    assert [name for name, _ in js] == ["leaflet"]
    assert [name for name, _ in css] == ["leaflet_css"]
    base = Path(xleaflet.BASE_DIR)
    assert _decode(js[0][1]) == (base / "leaflet.js").read_bytes()
    css_text = _decode(css[0][1]).decode()
    # Leaflet's CSS refers to images/layers.png etc.; all such references are inlined.
    assert "images/" not in css_text
    assert "data:image/png;base64," in css_text
    # the rest of the stylesheet is unchanged
    original = (base / "leaflet.css").read_text()
    assert re.sub(r"url\([^)]*\)", "url()", css_text) == re.sub(r"url\([^)]*\)", "url()", original)


def test_folium_version_matches_the_local_leaflet():
    # folium's CDN Leaflet version is the one its templates are written for.
    cdn = dict(folium.Map.default_js)["leaflet"]
    assert f"leaflet@{xleaflet.VERSION}/" in cdn


@pytest.mark.parametrize("with_layers", [False, True])
def test_tiles_none_makes_no_outside_reference(with_layers):
    traj = _traj()
    kwargs = {}
    if with_layers:
        mask = np.zeros(len(traj), bool)
        mask[100:150] = True
        rel = traj.assign(lat=traj.lat + 1e-3)
        kwargs = {"places": [(39.9, 116.3, 100.0, "Home")], "landmarks": mask, "release": rel}
    html = maps.trajectory_map(traj, tiles="none", **kwargs).get_root().render()
    assert URL.findall(html) == []
    assert "L.map(" in html


def test_maps_get_only_local_assets():
    m = maps.base_map(_traj(), tiles="none")
    links = [src for _, src in m.default_js] + [href for _, href in m.default_css]
    assert links and all(link.startswith("data:") for link in links)
    # the global folium defaults are not modified (other folium users keep working)
    assert dict(folium.Map.default_js)["leaflet"].startswith("https://")


def test_osm_and_custom_tiles():
    html = maps.base_map(_traj(), tiles="osm").get_root().render()
    assert maps.OSM_TILES in html
    url = "http://127.0.0.1:9999/tiles/{z}/{x}/{y}.png"
    assert url in maps.base_map(_traj(), tiles=url).get_root().render()
    for bad in ("ftp://x/{z}/{x}/{y}", "http://example.org/tiles.png", "satellite"):
        with pytest.raises(ParameterError):
            maps.base_map(_traj(), tiles=bad)


def _count(parent, cls) -> int:
    return sum(isinstance(ch, cls) for ch in parent._children.values())


def _markers(parent) -> list[list[float]]:
    """Locations of the circle markers drawn directly on ``parent`` (one CircleMarkers element
    draws many)."""
    return [loc for ch in parent._children.values() if isinstance(ch, maps.CircleMarkers)
            for loc in ch.locations]


def test_circle_markers_render_one_script_with_every_point():
    m = maps.base_map(_traj(50), max_points=1000)
    html = m.get_root().render()
    drawn = re.search(r"(\[\[[-0-9., \[\]]*\]\])\.forEach\(function \(p\)", html)
    assert drawn is not None and "L.circleMarker(p, {" in html
    import json

    assert json.loads(drawn.group(1)) == _markers(m) and len(_markers(m)) == 50
    style = next(ch for ch in m._children.values() if isinstance(ch, maps.CircleMarkers)).options
    assert style["radius"] == 2 and style["color"] == maps.TRUE_COLOUR and style["fill"] is True


def test_base_map_is_one_polyline_plus_downsampled_points():
    traj = _traj(10_000)
    m = maps.base_map(traj, max_points=120, max_line_points=2000)
    assert _count(m, folium.PolyLine) == 1
    assert _count(m, maps.CircleMarkers) == 1 and 0 < len(_markers(m)) <= 120
    line = next(ch for ch in m._children.values() if isinstance(ch, folium.PolyLine))
    assert len(line.locations) <= 2000
    assert line.locations[0] == pytest.approx([traj.lat.iloc[0], traj.lon.iloc[0]], abs=1e-6)
    assert line.locations[-1] == pytest.approx([traj.lat.iloc[-1], traj.lon.iloc[-1]], abs=1e-6)
    short = maps.base_map(traj.iloc[:500], max_line_points=2000)
    line = next(ch for ch in short._children.values() if isinstance(ch, folium.PolyLine))
    assert len(line.locations) == 500  # short trajectories are drawn with every point
    # first and last points are drawn as markers
    markers = _markers(m)
    assert markers[0] == pytest.approx([traj.lat.iloc[0], traj.lon.iloc[0]], abs=1e-6)
    assert markers[-1] == pytest.approx([traj.lat.iloc[-1], traj.lon.iloc[-1]], abs=1e-6)


def test_place_layer_names_and_radii():
    places = [(39.9, 116.3, 100.0, "Home"),
              {"name": "Clinic", "lat": 39.95, "lon": 116.35, "radius_m": 250}]
    fg = maps.place_layer(places, selected="Clinic")
    circles = [ch for ch in fg._children.values() if isinstance(ch, folium.Circle)]
    assert [c.options["radius"] for c in circles] == [100.0, 250.0]
    tips = [next(t for t in c._children.values() if isinstance(t, folium.Tooltip)).text
            for c in circles]
    assert tips == ["Home", "Clinic"]
    assert circles[1].options["color"] == maps.SELECTED_COLOUR != circles[0].options["color"]


def test_place_names_are_text_in_the_rendered_map():
    """A places file can come from anyone: its names must not become HTML (or script) in a
    map, e.g. the stakeholder report's."""
    evil = '<img src=x onerror="alert(1)">'
    m = maps.base_map(_traj(20))
    maps.place_layer([(39.9, 116.3, 100.0, evil)]).add_to(m)
    html = m.get_root().render()
    assert "<img src=x" not in html and "&lt;img src=x" in html


def test_release_layer_skips_unreleased_and_landmark_layer_only_landmarks():
    traj = _traj(200)
    rel_lat = traj.lat.to_numpy().copy()
    rel_lat[:50] = np.nan  # nothing released yet
    fg = maps.release_layer((rel_lat, traj.lon.to_numpy()), max_points=1000)
    assert len(_markers(fg)) == 150
    mask = np.zeros(200, bool)
    mask[[3, 7, 11]] = True
    lm = maps.landmark_layer(traj, mask)
    locs = _markers(lm)
    # the landmark points, to 6 decimals (~0.1 m: every layer rounds its display coordinates)
    assert locs == [[round(traj.lat[i], 6), round(traj.lon[i], 6)] for i in (3, 7, 11)]


def test_bad_input_raises_parameter_error():
    with pytest.raises(ParameterError):
        maps.base_map("not a trajectory")


def test_sample_context_layer_is_offline_and_reproducible(monkeypatch):
    import importlib
    import json
    import sys

    import lmdk_core
    from lmdk_core.maps import base_map, context_layer
    from lmdk_core.sample import load_sample_context

    ctx = load_sample_context()
    kinds = [f["properties"]["kind"] for f in ctx["features"]]
    assert kinds.count("road") >= 16 and kinds.count("place") >= 20
    html = base_map(pd.DataFrame({"lat": [39.99, 39.98], "lon": [116.33, 116.35]}),
                    context=ctx).get_root().render()
    assert "5th Ring Road (schematic)" in html and "pku third hospital" in html
    assert "tile.openstreetmap" not in html
    # the checked-in file is exactly what the generator writes
    data_dir = Path(lmdk_core.__file__).resolve().parent.parent / "data"  # the generators
    monkeypatch.syspath_prepend(str(data_dir))  # in this process: a subprocess cost 1.3 CPU-s
    try:
        generated = importlib.import_module("generate_context").context()
    finally:  # the generators are scripts, not modules other tests should find imported
        for name in ("generate_context", "generate_sample"):
            sys.modules.pop(name, None)
    assert json.loads(json.dumps(generated)) == ctx  # as the generator writes it: JSON
    with pytest.raises(ParameterError, match="FeatureCollection"):
        context_layer({"type": "Feature"})


# --------------------------------------------------------------------------- legend and clicks


def _colour_family(hex_colour: str) -> str:
    """Name a colour from its hue, saturation and lightness (independent of the legend's words)."""
    import colorsys

    r, g, b = (int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    h, light, sat = colorsys.rgb_to_hls(r, g, b)
    hue = h * 360
    if sat < 0.15:
        return "grey"
    if hue < 15 or hue >= 345:
        return "red"
    if hue < 50:
        return "orange"
    if 80 <= hue < 170:
        return "green"
    if 190 <= hue < 260:
        return "light blue" if light > 0.55 else "blue"
    if 290 <= hue < 345:
        return "pink"
    return "other"


def test_legend_words_name_the_colours_the_layers_draw():
    for entry in maps.LEGEND:
        assert _colour_family(entry.colour) == entry.colour_word, entry
    words = [e.colour_word for e in maps.LEGEND]
    assert len(set(words)) == len(words)  # no two layers share a colour word
    traj = _traj(50)
    rel = maps.release_layer(traj, max_points=10)
    marks = list(rel._children.values())
    entry = maps.legend_entry("released")
    assert all(m.options["color"] == entry.colour and m.options["fill"] is False for m in marks)
    assert "hollow" in entry.mark
    lm = next(iter(maps.landmark_layer(traj, np.ones(50, bool))._children.values()))
    assert lm.options["color"] == maps.legend_entry("landmark timestamps").colour
    assert lm.options["fill"] is True and "filled" in maps.legend_entry("landmark timestamps").mark
    place = maps.place_layer([(39.9, 116.3, 100.0, "A")], selected=None)
    assert next(iter(place._children.values())).options["color"] == maps.legend_entry(
        "landmark place").colour
    text = maps.legend_text()
    assert "red hollow rings = released" in text and "grey" not in text
    assert "grey" in maps.legend_text(context=True)


def test_only_place_circles_take_clicks():
    """Only places are clickable: a click on anything else is a click on the map there."""
    from lmdk_core.sample import load_sample_context

    traj = _traj(50)
    m = maps.base_map(traj, context=load_sample_context())
    drawn = [ch for ch in m._children.values()  # context roads, the line, the dots
             if type(ch).__name__ in ("GeoJson", "PolyLine", "CircleMarkers")]
    assert len(drawn) == 3
    assert all(ch.options.get("interactive") is False for ch in drawn), drawn
    html = m.get_root().render()
    assert "wudaokou home" in html and "interactive: false" in html  # the labels' one script
    assert m.options.get("keyboard") is False
    for layer in (maps.release_layer(traj), maps.landmark_layer(traj, np.ones(50, bool))):
        assert all(ch.options["interactive"] is False for ch in layer._children.values())
    circle = next(iter(maps.place_layer([(39.9, 116.3, 100.0, "A")])._children.values()))
    assert circle.options.get("interactive", True) is True


def _brute_place_at(rows, lat, lon):
    """Independent check: great-circle distance by the Vincenty (atan2) formula in Python floats,
    accurate at every distance (the law of cosines loses centimetres near zero)."""
    best = None
    for la, lo, r, name in rows:
        d = _vincenty_m(la, lo, lat, lon)
        if d <= r and (best is None or d < best[0]):
            best = (d, name)
    return None if best is None else best[1]


def _vincenty_m(la1: float, lo1: float, la2: float, lo2: float) -> float:
    import math

    p1, p2, dl = math.radians(la1), math.radians(la2), math.radians(lo2 - lo1)
    y = math.hypot(math.cos(p2) * math.sin(dl),
                   math.cos(p1) * math.sin(p2) - math.sin(p1) * math.cos(p2) * math.cos(dl))
    x = math.sin(p1) * math.sin(p2) + math.cos(p1) * math.cos(p2) * math.cos(dl)
    return 6_371_008.8 * math.atan2(y, x)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as hs  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(
    hs.lists(hs.tuples(hs.floats(-0.01, 0.01), hs.floats(-0.01, 0.01), hs.floats(20, 800)),
             min_size=0, max_size=5),
    hs.floats(-0.01, 0.01), hs.floats(-0.01, 0.01), hs.floats(-70, 70),
)
def test_place_at_matches_brute_force(offsets, dlat, dlon, lat0):
    rows = [(lat0 + a, 116.3 + b, r, f"P{i}") for i, (a, b, r) in enumerate(offsets)]
    lat, lon = lat0 + dlat, 116.3 + dlon
    got = maps.place_at(rows, lat, lon)
    want = _brute_place_at(rows, lat, lon)
    if got != want:  # only a point on a circle's edge, or a tie, may differ by rounding
        by_name = {name: (_vincenty_m(la, lo, lat, lon), r) for la, lo, r, name in rows}
        if got is not None and want is not None:  # a tie between two centres
            assert abs(by_name[got][0] - by_name[want][0]) <= 1e-6, (got, want, by_name)
        else:  # on the edge of the one circle found
            d, r = by_name[got if got is not None else want]
            assert abs(d - r) <= 1e-6 * r, (got, want, by_name)
    assert maps.place_at(rows, float("nan"), lon) is None


def test_named_place_near_and_lat_lon_words():
    from lmdk_core.sample import load_sample_context

    ctx = load_sample_context()
    assert maps.named_place_near(ctx, 39.99250, 116.33950, 50) == "wudaokou home"
    assert maps.named_place_near(ctx, 39.99250 + 0.001, 116.33950, 50) is None  # 111 m away
    assert maps.named_place_near(None, 39.9, 116.3, 1000) is None
    assert maps.format_lat_lon(39.98, 116.31) == "39.98° N, 116.31° E"
    assert maps.format_lat_lon(-33.8688, -70.6693) == "33.87° S, 70.67° W"
