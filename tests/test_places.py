"""Landmark places: validation, DataFrame and GeoJSON round trips, readable errors on bad files."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmdk_core import landmark_mask
from lmdk_core.errors import LmdkError, ParameterError
from lmdk_core.places import (
    DEFAULT_RADIUS_M,
    Place,
    PlacesFormatError,
    as_places,
    places_from_frame,
    places_from_geojson,
    places_to_frame,
    places_to_geojson,
)

# ------------------------------------------------------------------ validation


def test_place_coerces_numbers_to_float_and_keeps_default_radius():
    p = Place("home", 40, np.float32(116.5))
    assert type(p.lat) is float and type(p.lon) is float and type(p.place_radius_m) is float
    assert (p.lat, p.lon, p.place_radius_m) == (40.0, 116.5, DEFAULT_RADIUS_M)


@pytest.mark.parametrize(
    "args, fragment",
    [
        (("x", 90.5, 0.0), "latitude"),
        (("x", -91, 0.0), "latitude"),
        (("x", 0.0, 180.01), "longitude"),
        (("x", 0.0, -181), "longitude"),
        (("x", float("nan"), 0.0), "latitude"),
        (("x", 0.0, float("inf")), "longitude"),
        (("x", 0.0, 0.0, 0.0), "place_radius_m"),
        (("x", 0.0, 0.0, -5.0), "place_radius_m"),
        (("x", 0.0, 0.0, float("nan")), "place_radius_m"),
        (("x", 0.0, 0.0, True), "place_radius_m"),
        (("x", "north", 0.0), "latitude"),
        ((3, 0.0, 0.0), "name"),
    ],
)
def test_invalid_place_raises_parameter_error_naming_the_field(args, fragment):
    with pytest.raises(ParameterError, match=fragment):
        Place(*args)


def test_boundary_coordinates_are_valid():
    for lat, lon in ((90, 180), (-90, -180)):
        p = Place("edge", lat, lon, 1e-9)
        assert (p.lat, p.lon) == (float(lat), float(lon))


def test_place_is_immutable():
    p = Place("home", 1.0, 2.0)
    with pytest.raises(AttributeError):
        p.lat = 3.0  # type: ignore[misc]


def test_place_iterates_and_prints_in_construction_order():
    p = Place("home", 39.9, 116.3, 250.0)
    assert tuple(p) == ("home", 39.9, 116.3, 250.0) and len(p) == 4 and p[3] == 250.0
    assert repr(p) == "Place(name='home', lat=39.9, lon=116.3, place_radius_m=250.0)"
    assert p.as_tuple() == (39.9, 116.3, 250.0, "home")  # landmark_mask's tuple form
    # the place's own circle has its own name; radius_m (the protection radius of a release)
    # still reads and constructs until 0.3, with a warning naming place_radius_m
    with pytest.warns(DeprecationWarning, match="Place.radius_m is deprecated: read "
                                                "place_radius_m"):
        assert p.radius_m == 250.0
    with pytest.warns(DeprecationWarning, match="pass place_radius_m="):
        assert Place("home", 39.9, 116.3, radius_m=250.0) == p
    with pytest.raises(ParameterError, match="not both"):
        Place("home", 39.9, 116.3, 250.0, radius_m=250.0)
    with pytest.raises(ParameterError, match="not both"):
        Place("home", 39.9, 116.3, place_radius_m=250.0, radius_m=250.0)


def test_landmark_mask_accepts_places_and_their_frame_alike():
    # Points every 50 m north of a place with radius 120 m: indices 0..2 inside (0, 50, 100 m).
    lat0, lon0 = 39.9, 116.3
    north_m = np.arange(10) * 50.0
    lat = lat0 + north_m / (math.pi * 6_371_008.8 / 180)
    traj = pd.DataFrame({"lat": lat, "lon": np.full(10, lon0)})
    places = [Place("home", lat0, lon0, 120.0)]
    expected = north_m <= 120.0
    np.testing.assert_array_equal(landmark_mask(traj, places), expected)
    np.testing.assert_array_equal(landmark_mask(traj, places_to_frame(places)), expected)


# ------------------------------------------------------------------ DataFrame

def test_frame_columns_and_dtypes():
    df = places_to_frame([Place("a", 1.5, 2.5, 30.0), Place("b", -3.0, 4.0)])
    assert list(df.columns) == ["name", "lat", "lon", "place_radius_m"]
    assert [str(t) for t in df.dtypes[1:]] == ["float64"] * 3
    assert df["name"].tolist() == ["a", "b"] and df["place_radius_m"].tolist() == [30.0, 100.0]
    # frames written before the rename still read
    old = df.rename(columns={"place_radius_m": "radius_m"})
    assert places_from_frame(old) == places_from_frame(df)


def test_empty_places_give_an_empty_frame_and_collection():
    assert places_to_frame([]).shape == (0, 4)
    assert places_from_frame(places_to_frame([])) == []
    assert places_from_geojson(places_to_geojson([])) == []


def test_frame_defaults_for_missing_name_and_radius():
    got = places_from_frame(pd.DataFrame({"lat": [1.0, 2.0], "lon": [3.0, 4.0]}))
    assert got == [Place("place 1", 1.0, 3.0), Place("place 2", 2.0, 4.0)]


def test_frame_errors_name_the_row():
    with pytest.raises(ParameterError, match="row 2"):
        places_from_frame(pd.DataFrame({"lat": [1.0, 95.0], "lon": [3.0, 4.0]}))
    with pytest.raises(ParameterError, match="lon"):
        places_from_frame(pd.DataFrame({"lat": [1.0]}))
    with pytest.raises(ParameterError, match="row 1: expected"):
        places_to_frame([(1.0, 2.0)])


# ------------------------------------------------------------------ GeoJSON

names = st.text(min_size=0, max_size=20)
lats = st.floats(min_value=-90, max_value=90, allow_nan=False)
lons = st.floats(min_value=-180, max_value=180, allow_nan=False)
radii = st.floats(min_value=0, max_value=1e7, exclude_min=True, allow_nan=False)
place_lists = st.lists(st.builds(Place, names, lats, lons, radii), max_size=8)


@given(place_lists)
def test_geojson_round_trip_is_exact(places):
    text = json.dumps(places_to_geojson(places))
    for obj in (text, text.encode("utf-8"), json.loads(text)):
        back = places_from_geojson(obj)
        assert back == places
        # exact to the bit, not just ==: repr equality also distinguishes -0.0 from 0.0
        assert [tuple(map(repr, (p.lat, p.lon, p.place_radius_m))) for p in back] == [
            tuple(map(repr, (p.lat, p.lon, p.place_radius_m))) for p in places
        ]


@given(place_lists)
def test_frame_round_trip_is_exact(places):
    assert places_from_frame(places_to_frame(places)) == places


def test_geojson_structure_is_lon_lat_points_with_properties():
    g = places_to_geojson([Place("clinic", 39.98, 116.31, 75.0)])
    assert g["type"] == "FeatureCollection" and g["lmdk"]["kind"] == "places"
    (f,) = g["features"]
    assert f == {
        "type": "Feature",
        "geometry": {"type": "Point", "coordinates": [116.31, 39.98]},
        "properties": {"name": "clinic", "place_radius_m": 75.0},
    }


def test_third_party_geojson_with_altitude_and_no_properties_gets_defaults():
    text = (
        '{"type": "FeatureCollection", "features": ['
        '{"type": "Feature", "geometry": {"type": "Point", "coordinates": [116.3, 39.9, 50]},'
        ' "properties": null},'
        '{"type": "Feature", "geometry": {"type": "Point", "coordinates": [116.4, 40.0]},'
        ' "properties": {"name": "gym", "radius_m": 60, "colour": "red"}}]}'
    )
    assert places_from_geojson(text) == [
        Place("place 1", 39.9, 116.3, DEFAULT_RADIUS_M),
        Place("gym", 40.0, 116.4, 60.0),
    ]


def test_single_feature_is_accepted():
    f = places_to_geojson([Place("a", 1.0, 2.0)])["features"][0]
    assert places_from_geojson(f) == [Place("a", 1.0, 2.0)]


def _fc(*features):
    return json.dumps({"type": "FeatureCollection", "features": list(features)})


_GOOD = {"type": "Feature", "geometry": {"type": "Point", "coordinates": [1, 2]}, "properties": {}}


@pytest.mark.parametrize(
    "payload, fragments",
    [
        ("{not json", ["trip.geojson", "not valid JSON", "line 1"]),
        (b"\xff\xfe\x00", ["trip.geojson", "UTF-8"]),
        ("[1, 2]", ["expected a GeoJSON object"]),
        ('{"type": "Point", "coordinates": [1, 2]}', ["FeatureCollection", "'Point'"]),
        ('{"type": "FeatureCollection"}', ['"features" list']),
        (_fc(_GOOD, {"type": "Feature", "geometry": {"type": "LineString", "coordinates": []}}),
         ["feature 2", "Point", "LineString"]),
        (_fc({"type": "Feature", "geometry": {"type": "Point", "coordinates": [1]}}),
         ["feature 1", "[longitude, latitude]"]),
        (_fc(_GOOD, _GOOD,
             {"type": "Feature", "geometry": {"type": "Point", "coordinates": [10, 95]}}),
         ["feature 3", "latitude 95"]),
        (_fc({"type": "Feature", "geometry": {"type": "Point", "coordinates": [10, 5]},
              "properties": {"radius_m": -1}}), ["feature 1", "place_radius_m"]),
        (_fc({"type": "Feature", "geometry": {"type": "Point", "coordinates": [10, 5]},
              "properties": {"radius_m": "big"}}), ["feature 1", "place_radius_m"]),
        (_fc({"type": "Feature", "geometry": {"type": "Point", "coordinates": [10, 5]},
              "properties": {"name": 7}}), ["feature 1", "name"]),
        (_fc({"type": "Feature", "geometry": {"type": "Point", "coordinates": ["a", 5]}}),
         ["feature 1", "longitude"]),
        (_fc({"type": "Feature", "geometry": {"type": "Point", "coordinates": [1, 5]},
              "properties": ["x"]}), ["feature 1", "properties"]),
        (_fc("hello"), ["feature 1", "Feature"]),
        ('{"type": "FeatureCollection", "features": [{"type": "Feature", "geometry": '
         '{"type": "Point", "coordinates": [NaN, 5]}}]}', ["feature 1", "longitude nan"]),
    ],
)
def test_malformed_geojson_errors_name_source_feature_and_reason(payload, fragments):
    with pytest.raises(PlacesFormatError) as info:
        places_from_geojson(payload, source="trip.geojson")
    msg = str(info.value)
    assert isinstance(info.value, LmdkError)
    assert msg.startswith("trip.geojson")
    for fragment in fragments:
        assert fragment in msg, msg


# ------------------------------------------------------------------ one normaliser, every form

_place = st.builds(
    Place,
    st.text(min_size=1, max_size=8),
    st.floats(-90, 90),
    st.floats(-180, 180),
    st.floats(1e-6, 1e6),
)


def _forms(places: list[Place]) -> dict[str, object]:
    """The same places written in every form the package accepts (and mixed)."""
    tuples = [(p.lat, p.lon, p.place_radius_m, p.name) for p in places]
    dicts = [{"name": p.name, "lat": p.lat, "lon": p.lon, "place_radius_m": p.place_radius_m}
             for p in places]
    old_dicts = [{"lat": p.lat, "lon": p.lon, "radius_m": p.place_radius_m, "name": p.name}
                 for p in places]
    frame = pd.DataFrame(dicts, columns=["name", "lat", "lon", "place_radius_m"])
    old_frame = pd.DataFrame(old_dicts, columns=["lat", "lon", "radius_m", "name"]).assign(x=1)
    mixed = [(tuples, dicts, places)[i % 3][i] for i in range(len(places))]
    return {"places": places, "tuples": tuples, "generator": (p for p in places),
            "dicts": dicts, "old_dicts": old_dicts, "frame": frame, "old_frame": old_frame,
            "mixed": mixed, "numpy_rows": [np.array(t[:3]) for t in tuples]}


@settings(max_examples=20)
@given(st.lists(_place, max_size=6))
def test_every_accepted_form_gives_the_same_frame(places):
    """Place objects, tuples, dicts (old key), frames (old column), mixed lists: one frame."""
    want = places_to_frame(places)
    assert list(want.columns) == ["name", "lat", "lon", "place_radius_m"]
    assert want["name"].tolist() == [p.name for p in places]
    for form, value in _forms(places).items():
        got = places_to_frame(value)
        if form == "numpy_rows":  # no names: the defaults "place <row>"
            assert got["name"].tolist() == [f"place {i}" for i in range(1, len(places) + 1)]
            got = got.assign(name=want["name"])
        pd.testing.assert_frame_equal(got, want, check_exact=True, obj=form)
    # landmark_mask reads places through the same normaliser: each centre lies in its circle
    lat, lon = np.array([p.lat for p in places]), np.array([p.lon for p in places])
    forms = _forms(places)
    assert as_places(forms["mixed"]) == as_places(forms["old_frame"]) == places
    for form in ("tuples", "old_dicts", "old_frame"):
        assert landmark_mask((lat, lon), forms[form]).all()


_BAD = [
    ((40.0, 116.0), "expected"),
    ((40.0, 116.0, -1.0), "place_radius_m"),
    ((40.0, 116.0, 0.0), "place_radius_m"),
    ((95.0, 116.0, 1.0), "latitude"),
    ((40.0, 181.0, 1.0), "longitude"),
    ((float("nan"), 116.0, 1.0), "latitude"),
    ((40.0, "east", 1.0), "longitude"),
    ({"lat": 40.0}, "lacks lon"),
    ({"lat": 40.0, "lon": 1.0, "place_radius_m": float("inf")}, "place_radius_m"),
    ("home", "expected"),
    (7, "expected"),
]


@settings(max_examples=30)
@given(st.lists(_place, max_size=5), st.integers(0, 5), st.sampled_from(_BAD))
def test_a_bad_row_raises_naming_its_row(good, at, bad):
    at = min(at, len(good))
    item, fragment = bad
    rows = [(p.lat, p.lon, p.place_radius_m, p.name) for p in good]
    rows.insert(at, item)
    with pytest.raises(ParameterError, match=rf"places row {at + 1}: .*{fragment}"):
        places_to_frame(rows)
    if isinstance(item, tuple) and len(item) == 3:  # the same bad row inside a table
        frame = pd.DataFrame([r[:3] for r in rows], columns=["lat", "lon", "place_radius_m"])
        with pytest.raises(ParameterError, match=rf"places row {at + 1}: .*{fragment}"):
            places_to_frame(frame)


@pytest.mark.parametrize("bad", [Place("a", 1.0, 2.0), {"lat": 1.0, "lon": 2.0}, "places.csv", 3])
def test_a_single_place_or_scalar_is_not_a_collection(bad):
    with pytest.raises(ParameterError, match="places must be"):
        places_to_frame(bad)
