"""landmark_mask against a brute-force haversine loop; landmarks_from_indices; argument errors."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lmdk_core import LmdkError, ParameterError, landmark_mask, landmarks_from_indices
from lmdk_core.landmarks import place_masks

R = 6_371_008.8


def _haversine_scalar(lat1, lon1, lat2, lon2):
    p1, p2 = math.radians(lat1), math.radians(lat2)
    a = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(
        math.radians(lon2 - lon1) / 2
    ) ** 2
    return 2 * R * math.asin(math.sqrt(min(1.0, a)))


def _brute(lat, lon, places):
    """Reference: loop over points and places; returns (mask, min |d − radius| per point)."""
    mask = np.zeros(len(lat), dtype=bool)
    margin = np.full(len(lat), np.inf)
    for i in range(len(lat)):
        for plat, plon, rad, *_ in places:
            d = _haversine_scalar(lat[i], lon[i], plat, plon)
            mask[i] |= d <= rad
            margin[i] = min(margin[i], abs(d - rad))
    return mask, margin


def _random_case(seed, n, k):
    rng = np.random.default_rng(seed)
    lat = 39.9 + rng.normal(0, 0.01, n)
    lon = 116.4 + rng.normal(0, 0.01, n)
    places = [
        (39.9 + rng.normal(0, 0.01), 116.4 + rng.normal(0, 0.01), rng.uniform(0, 1500), f"p{j}")
        for j in range(k)
    ]
    return lat, lon, places


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 300), k=st.integers(0, 8))
def test_mask_matches_brute_force_list_and_frame(seed, n, k):
    lat, lon, places = _random_case(seed, n, k)
    traj = pd.DataFrame({"uid": 1, "time": np.arange(n), "lat": lat, "lon": lon})
    expected, margin = _brute(lat, lon, places)
    clear = margin > 1e-6  # points on a radius to within a micrometre: rounding may go either way
    got_list = landmark_mask(traj, places)
    frame = pd.DataFrame(places, columns=["lat", "lon", "radius_m", "name"])
    got_frame = landmark_mask(traj, frame)
    got_pair = landmark_mask((lat, lon), [p[:3] for p in places])
    for got in (got_list, got_frame, got_pair):
        assert got.dtype == bool and got.shape == (n,)
        np.testing.assert_array_equal(got[clear], expected[clear])
    np.testing.assert_array_equal(got_list, got_frame)
    np.testing.assert_array_equal(got_list, got_pair)


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 200), k=st.integers(1, 5),
       pole=st.booleans(), antimeridian=st.booleans())
def test_band_prefilter_is_exact_anywhere_on_earth(seed, n, k, pole, antimeridian):
    """place_masks measures only a latitude band; against the scalar loop, per place, near the
    poles, across the antimeridian, and with points at the band's edge (R·|Δφ| = radius)."""
    rng = np.random.default_rng(seed)
    clat = 89.5 if pole else rng.uniform(-80, 80)
    clon = 179.9 if antimeridian else rng.uniform(-180, 180)
    places = [(float(np.clip(clat + rng.normal(0, 0.3), -90, 90)),
               float((clon + rng.normal(0, 0.3) + 180) % 360 - 180),
               float(rng.choice([1e-3, rng.uniform(1, 500), rng.uniform(1e3, 2e5)])))
              for _ in range(k)]
    lat = np.clip(clat + rng.normal(0, 0.5, n), -90, 90)
    lon = (clon + rng.normal(0, 0.5, n) + 180) % 360 - 180
    edge = rng.random(n) < 0.3  # on the band's edge of the first place, any longitude
    plat0, _, rad0 = places[0]
    lat[edge] = np.clip(plat0 + np.degrees(rad0 / R) * rng.choice([-1, 1], edge.sum()), -90, 90)
    got = place_masks((lat, lon), places)
    assert got.shape == (k, n)
    for j, place in enumerate(places):
        expected, margin = _brute(lat, lon, [place])
        clear = margin > 1e-6
        np.testing.assert_array_equal(got[j][clear], expected[clear])
    np.testing.assert_array_equal(landmark_mask((lat, lon), places), got.any(axis=0))


def test_radius_is_inclusive_and_a_tiny_radius_hits_the_centre_only():
    lat = np.array([40.0, 40.0, 40.001])
    lon = np.array([116.0, 116.0001, 116.0])
    assert landmark_mask((lat, lon), [(40.0, 116.0, 1e-9)]).tolist() == [True, False, False]
    d = _haversine_scalar(40.0, 116.0, 40.001, 116.0)  # ~111.2 m north
    assert landmark_mask((lat, lon), [(40.0, 116.0, d + 1e-6)]).tolist() == [True, True, True]
    assert landmark_mask((lat, lon), [(40.0, 116.0, d - 1e-3)]).tolist() == [True, True, False]


def test_many_repeated_places_give_the_same_mask():
    lat, lon, places = _random_case(7, 5000, 3)
    many = places * 300
    np.testing.assert_array_equal(
        landmark_mask((lat, lon), many), landmark_mask((lat, lon), places)
    )


def test_empty_places_and_empty_trajectory():
    lat, lon, _ = _random_case(1, 10, 0)
    assert not landmark_mask((lat, lon), []).any()
    assert not landmark_mask((lat, lon), pd.DataFrame(columns=["lat", "lon", "radius_m"])).any()
    assert landmark_mask((np.zeros(0), np.zeros(0)), [(0.0, 0.0, 10.0)]).shape == (0,)


@pytest.mark.parametrize(
    "places, match",
    [
        ([(40.0, 116.0, -1.0)], "row 1: .*place_radius_m"),
        ([(40.0, 116.0, 0.0)], "row 1: .*place_radius_m"),  # a place is a circle, radius > 0
        ([(40.0, 116.0, 5.0), (40.0, 116.0)], "row 2"),
        ([(95.0, 116.0, 10.0)], "latitude"),
        ([(40.0, float("nan"), 10.0)], "longitude"),
        (pd.DataFrame({"lat": [40.0], "radius_m": [10.0]}), "lon"),
        (42, "list"),
    ],
)
def test_bad_places_raise_parameter_error(places, match):
    with pytest.raises(ParameterError, match=match):
        landmark_mask((np.array([40.0]), np.array([116.0])), places)


def test_bad_trajectory_raises_parameter_error():
    with pytest.raises(ParameterError, match="lat"):
        landmark_mask(pd.DataFrame({"lon": [1.0]}), [])
    with pytest.raises(ParameterError, match="length mismatch"):
        landmark_mask((np.zeros(2), np.zeros(3)), [])
    with pytest.raises(LmdkError):
        landmark_mask("trip.csv", [])


def test_landmarks_from_indices():
    np.testing.assert_array_equal(
        landmarks_from_indices(6, [0, 3, 3, 5]), [True, False, False, True, False, True]
    )
    assert not landmarks_from_indices(4, []).any()
    with pytest.raises(ParameterError, match="out of range"):
        landmarks_from_indices(4, [4])
    with pytest.raises(ParameterError, match="bool"):
        landmarks_from_indices(2, [True, False])
