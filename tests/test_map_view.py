"""lmdk_core.map_view: what the interactive map draws (dashboard and Jupyter explorer alike)."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as hs

from lmdk_core import map_view
from lmdk_core.errors import ParameterError
from lmdk_core.palette import RELEASE_COLOUR
from lmdk_core.places import Place


def _traj(n: int = 500, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"lat": 39.9 + np.cumsum(rng.normal(0, 1e-4, n)),
                         "lon": 116.3 + np.cumsum(rng.normal(0, 1e-4, n))})


def test_the_view_has_exactly_the_keys_the_front_end_reads():
    """Every key map_view builds is read by landmark_map.js, and every key it reads is built."""
    js = map_view.FRONT_END.read_text(encoding="utf-8")
    read = set(re.findall(r'model\.get\("([a-z_]+)"\)', js))
    read |= set(re.findall(r'dots\([a-z]+, model\.get\("([a-z_]+)"\)', js))
    view = map_view.map_view(_traj())
    assert set(view) == read


def test_view_is_plain_json_with_the_palette_and_thinned_layers():
    traj = _traj(5000)
    mask = np.zeros(5000, bool)
    mask[100:900] = True
    rel = pd.DataFrame({"lat": traj.lat + 0.001, "lon": traj.lon})
    rel.loc[::2, "lat"] = np.nan  # not released (yet)
    view = map_view.map_view(traj, landmarks=mask, release=rel, places=[Place("Home", 39.9,
                             116.3, 150.0)], selected="Home", max_markers=100,
                             max_line_points=300, track_points=50)
    json.dumps(view, allow_nan=False)  # no NaN reaches the page
    assert len(view["track"]) == 300 and view["track"][0] == [round(traj.lat[0], 6),
                                                               round(traj.lon[0], 6)]
    assert view["track"][-1] == [round(traj.lat.iloc[-1], 6), round(traj.lon.iloc[-1], 6)]
    assert len(view["track_points"]) == 50 and len(view["landmark_points"]) == 100
    assert len(view["released"]) == 100 and view["dummy_points"] == []
    lm = np.array(view["landmark_points"])
    assert np.all(np.isin(lm[:, 0], traj.lat[mask].round(6)))
    assert view["places"] == [{"name": "Home", "lat": 39.9, "lon": 116.3, "radius_m": 150.0}]
    assert view["colours"]["released"] == RELEASE_COLOUR and view["tiles"] == ""


@given(hs.lists(hs.one_of(hs.floats(-80, 80), hs.just(float("nan"))), max_size=60),
       hs.integers(0, 30))
def test_thinned_points_keep_finite_ends_and_at_most_k(lats, k):
    lat = np.array(lats, dtype=float)
    lon = np.where(np.isnan(lat), 0.0, lat / 2)
    got = map_view.thinned_points(lat, lon, k)
    finite = [[round(a, 6), round(a / 2, 6)] for a in lat if np.isfinite(a)]
    if k == 0 or not finite:
        assert got == []
        return
    assert len(got) == min(len(finite), max(k, 2))
    assert got[0] == finite[0] and got[-1] == finite[-1]
    it = iter(finite)  # a subsequence, in order
    assert all(any(p == q for q in it) for p in got)


def test_tiles_and_bad_input():
    assert map_view.tile_source("none") == ("", "") == map_view.tile_source(None)
    assert map_view.tile_source("osm")[0] == map_view.OSM_TILES
    url = "http://127.0.0.1:9999/tiles/{z}/{x}/{y}.png"
    assert map_view.map_view(_traj(), tiles=url)["tiles"] == url
    for bad in ("ftp://x/{z}/{x}/{y}", "http://example.org/tiles.png", "satellite", 3):
        with pytest.raises(ParameterError):
            map_view.tile_source(bad)
    with pytest.raises(ParameterError, match="landmarks has 3 values for 500 points"):
        map_view.map_view(_traj(), landmarks=np.ones(3, bool))
    with pytest.raises(ParameterError, match="FeatureCollection"):
        map_view.map_view(_traj(), context={"type": "Feature"})
    with pytest.raises(ParameterError):
        map_view.map_view(_traj(), places=[("x", 95.0, 1.0)])


@given(hs.floats(-90, 90), hs.floats(-1e4, 1e4))
def test_a_map_click_anywhere_on_earth_comes_back_with_its_longitude_wrapped(lat, lon):
    click = map_view.parse_click({"event": "map_click", "lat": lat, "lon": lon})
    assert click is not None and click.place is None and click.lat == lat
    assert -180.0 <= click.lon <= 180.0
    assert np.isclose(np.cos(np.radians(click.lon)), np.cos(np.radians(lon)), atol=1e-9)
    assert np.isclose(np.sin(np.radians(click.lon)), np.sin(np.radians(lon)), atol=1e-9)


def test_place_clicks_and_malformed_messages():
    home = map_view.parse_click({"event": "place_click", "name": "Home", "lat": 1, "lon": 2})
    assert home == map_view.MapClick(1.0, 2.0, "Home")
    assert map_view.parse_click({"event": "place_click", "name": "Home"}) == map_view.MapClick(
        None, None, "Home")  # the Jupyter front end of old sent no position
    for bad in (None, "click", [], {"event": "map_click"}, {"event": "map_click", "lat": "x",
                "lon": 1}, {"event": "map_click", "lat": float("nan"), "lon": 1},
                {"event": "map_click", "lat": 90.5, "lon": 1}, {"event": "drag", "lat": 1,
                "lon": 1}, {"event": "place_click", "name": ["Home"], "lat": 1, "lon": 1},
                {"event": "place_click", "name": ["Home"]}, {"event": "map_click", "lat": 91.0,
                "lon": 116.3}, {"event": "map_click", "lat": float("nan"), "lon": 116.3}):
        assert map_view.parse_click(bad) is None, bad
