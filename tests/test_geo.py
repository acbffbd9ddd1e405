"""Spherical geometry against closed forms: arc lengths, projection round trips, wrap and clamp."""

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from lmdk_core.geo import EARTH_RADIUS_M, degrees_to_metres, haversine_m, offset_points


def test_one_degree_of_latitude_is_the_arc_length():
    assert math.isclose(haversine_m(10.0, 20.0, 11.0, 20.0), EARTH_RADIUS_M * math.pi / 180,
                        rel_tol=1e-12)


def test_quarter_of_the_equator_and_antipodes():
    assert math.isclose(haversine_m(0, 0, 0, 90), EARTH_RADIUS_M * math.pi / 2, rel_tol=1e-12)
    assert math.isclose(haversine_m(0, 0, 0, 180), EARTH_RADIUS_M * math.pi, rel_tol=1e-12)
    assert haversine_m(39.9, 116.4, 39.9, 116.4) == 0.0


def test_distance_across_the_antimeridian_is_short():
    assert math.isclose(haversine_m(0, 179.999, 0, -179.999),
                        0.002 * EARTH_RADIUS_M * math.pi / 180, rel_tol=1e-6)


@given(st.floats(-80, 80), st.floats(-180, 179.99), st.floats(-3000, 3000), st.floats(-3000, 3000))
def test_offset_then_project_back_recovers_the_metres(lat, lon, east, north):
    new_lat, new_lon = offset_points(lat, lon, east, north)
    assert -180.0 <= float(new_lon) < 180.0
    e, n = degrees_to_metres(lat, lon, new_lat, new_lon)
    assert abs(float(e) - east) < 1e-6 and abs(float(n) - north) < 1e-6
    # the local projection agrees with the great circle to well under 0.5 % at city scale
    dist = math.hypot(east, north)
    if dist > 1:
        assert abs(float(haversine_m(lat, lon, new_lat, new_lon)) - dist) / dist < 5e-3


def test_longitude_wraps_and_latitude_clamps():
    lat, lon = offset_points(np.array([0.0, 89.9999, 10.0]), np.array([179.9999, 0.0, -179.9999]),
                             np.array([1000.0, 0.0, -1000.0]), np.array([0.0, 5000.0, 0.0]))
    assert lat[1] == 90.0
    assert -180.0 <= lon[0] < -179.99 and 179.99 < lon[2] < 180.0
    np.testing.assert_allclose(lat[[0, 2]], [0.0, 10.0])


def test_vectorised_equals_elementwise():
    rng = np.random.default_rng(1)
    a = rng.uniform(-60, 60, (4, 50))
    b = rng.uniform(-170, 170, (4, 50))
    vec = haversine_m(a[0], b[0], a[1], b[1])
    one = [haversine_m(a[0, i], b[0, i], a[1, i], b[1, i]) for i in range(50)]
    np.testing.assert_allclose(vec, one, rtol=0, atol=0)
