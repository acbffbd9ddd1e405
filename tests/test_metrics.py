"""Utility metrics against hand-checkable closed forms."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from lmdk_core import ParameterError
from lmdk_core.geo import offset_points
from lmdk_core.metrics import abs_error, error_metres, mae, mae_metres, mre


@dataclass
class FakeRelease:
    """Duck-typed stand-in for the Release dataclass (lat/lon/values arrays)."""

    lat: np.ndarray
    lon: np.ndarray
    values: np.ndarray | None = None


LAT = np.array([39.9, 39.95, 40.0, -33.9, 0.0])
LON = np.array([116.4, 116.3, 116.5, 151.2, 179.99])
NORTH = np.array([0.0, 10.0, 100.0, 1000.0, 5000.0])


def test_error_equals_known_north_offsets():
    lat, lon = offset_points(LAT, LON, 0.0, NORTH)
    err = error_metres(pd.DataFrame({"lat": LAT, "lon": LON}), FakeRelease(lat, lon))
    np.testing.assert_allclose(err, NORTH, rtol=1e-3, atol=1e-6)
    assert mae_metres((LAT, LON), (lat, lon)) == pytest.approx(NORTH.mean(), rel=1e-3)


def test_error_equals_known_east_offsets_across_antimeridian():
    east = np.array([1.0, 50.0, 200.0, 800.0, 3000.0])
    lat, lon = offset_points(LAT, LON, east, 0.0)
    assert lon[-1] < 0  # the last point crossed the antimeridian
    np.testing.assert_allclose(error_metres((LAT, LON), (lat, lon)), east, rtol=1e-3)


def test_nan_release_gives_nan_error_and_is_skipped_in_the_mean():
    lat, lon = offset_points(LAT, LON, 0.0, NORTH)
    lat[:2] = np.nan
    lon[:2] = np.nan
    err = error_metres((LAT, LON), (lat, lon))
    assert np.isnan(err[:2]).all() and np.isfinite(err[2:]).all()
    assert mae_metres((LAT, LON), (lat, lon)) == pytest.approx(NORTH[2:].mean(), rel=1e-3)
    nothing = np.full(5, np.nan)
    assert np.isnan(mae_metres((LAT, LON), (nothing, nothing)))


def test_value_metrics_closed_forms():
    x = np.array([0.0, 10.0, -4.0, 0.5])
    o = np.array([1.0, 12.0, -4.0, 0.0])
    np.testing.assert_array_equal(abs_error(x, o), [1.0, 2.0, 0.0, 0.5])
    assert mae(x, o) == pytest.approx(3.5 / 4)
    # relative errors: 1/max(0,1)=1, 2/10=0.2, 0/4=0, 0.5/max(0.5,1)=0.5
    assert mre(x, o) == pytest.approx(1.7 / 4)
    assert mre(x, o, floor=0.25) == pytest.approx((4.0 + 0.2 + 0.0 + 1.0) / 4)
    release = FakeRelease(lat=np.zeros(4), lon=np.zeros(4), values=o)
    assert mae(pd.Series(x), release) == mae(x, o)
    assert mre(x, release) == mre(x, o)


def test_value_metrics_skip_nan():
    x = np.array([1.0, 2.0, 3.0])
    o = np.array([np.nan, 2.5, 1.0])
    np.testing.assert_array_equal(np.isnan(abs_error(x, o)), [True, False, False])
    assert mae(x, o) == pytest.approx(1.25)
    assert mre(x, o) == pytest.approx((0.25 + 2 / 3) / 2)
    assert np.isnan(mae(x, np.full(3, np.nan)))


def test_mismatches_and_bad_inputs():
    with pytest.raises(ParameterError, match="length mismatch"):
        error_metres((LAT, LON), (LAT[:3], LON[:3]))
    with pytest.raises(ParameterError, match="length mismatch"):
        error_metres((LAT, LON[:4]), (LAT, LON))
    with pytest.raises(ParameterError, match="length mismatch"):
        mae([1.0, 2.0], [1.0])
    with pytest.raises(ParameterError, match="length mismatch"):
        mre([1.0, 2.0], FakeRelease(np.zeros(3), np.zeros(3), np.zeros(3)))
    with pytest.raises(ParameterError, match="true lat contains NaN"):
        error_metres((np.array([np.nan]), np.array([0.0])), (np.array([0.0]), np.array([0.0])))
    with pytest.raises(ParameterError, match="must have lat/lon"):
        error_metres((LAT, LON), 3.0)
    with pytest.raises(ParameterError, match="release contains infinite"):
        mae([1.0], [np.inf])
    with pytest.raises(ParameterError, match="floor must be > 0"):
        mre([1.0], [1.0], floor=0.0)
