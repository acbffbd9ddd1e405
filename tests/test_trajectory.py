"""lmdk_core.trajectory against brute-force references written with plain Python loops."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lmdk_core import ParameterError, detect_stays
from lmdk_core.trajectory import (
    downsample,
    even_positions,
    lat_lon,
    path_length_m,
    resample,
    select_user,
    summary,
    time_slice,
    users,
)


def make(n_per_user=(5, 3), seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    parts = []
    for k, n in enumerate(n_per_user):
        secs = np.sort(rng.choice(np.arange(0, 3600), size=n, replace=False))
        parts.append(pd.DataFrame({
            "uid": f"u{k}",
            "time": pd.to_datetime(1_600_000_000 + secs, unit="s", utc=True),
            "lat": rng.uniform(39, 40, n), "lon": rng.uniform(116, 117, n), "tag": np.arange(n),
        }))
    return pd.concat(parts, ignore_index=True)


def test_users_and_select_user():
    df = make((2, 4, 1))
    assert users(df) == ["u0", "u1", "u2"]
    one = select_user(df, "u1")
    assert len(one) == 4 and set(one["uid"]) == {"u1"} and list(one.index) == [0, 1, 2, 3]
    assert one["tag"].tolist() == [0, 1, 2, 3]
    with pytest.raises(ParameterError, match="unknown user 'zz'"):
        select_user(df, "zz")
    with pytest.raises(ParameterError, match="missing column"):
        users(df.drop(columns="lat"))


@given(n=st.integers(1, 300), m=st.integers(2, 400))
def test_downsample_keeps_endpoints_and_count(n, m):
    df = pd.DataFrame({"uid": "u", "time": pd.date_range("2020", periods=n, freq="s", tz="UTC"),
                       "lat": np.arange(n, dtype=float) / 10, "lon": 0.0})
    out = downsample(df, m)
    assert len(out) == min(n, m)
    assert out["lat"].iloc[0] == df["lat"].iloc[0] and out["lat"].iloc[-1] == df["lat"].iloc[-1]
    pos = np.rint(out["lat"].to_numpy() * 10).astype(int)
    assert np.all(np.diff(pos) > 0)  # distinct original rows, in order
    if n > m:  # evenly spaced: gaps differ by at most one position
        gaps = np.diff(pos)
        assert gaps.max() - gaps.min() <= 1


def test_downsample_rejects_bad_max_points():
    with pytest.raises(ParameterError):
        downsample(make(), 1)


def brute_resample(df: pd.DataFrame, step_s: float) -> list[tuple]:
    seen, keep = set(), []
    for row in df.sort_values(["uid", "time"], kind="stable").itertuples():
        key = (row.uid, math.floor(row.time.value / 1e9 / step_s))
        if key not in seen:
            seen.add(key)
            keep.append((row.uid, row.time, row.tag))
    return sorted(keep)


@pytest.mark.parametrize("step", [1, 60, 300, 7.5, 10_000])
def test_resample_first_point_per_interval(step):
    df = make((40, 25, 1), seed=3)
    out = resample(df, step)
    got = sorted(zip(out["uid"], out["time"], out["tag"], strict=True))
    assert got == brute_resample(df, step)
    assert out.columns.tolist() == df.columns.tolist()
    with pytest.raises(ParameterError):
        resample(df, 0)


def test_time_slice_inclusive_bounds_and_naive_is_utc():
    df = make((30, 30), seed=1)
    lo, hi = df["time"].iloc[5], df["time"].iloc[20]
    out = time_slice(df, lo.tz_convert(None).isoformat(), hi.tz_convert("Asia/Shanghai"))
    ref = [(u, t) for u, t in zip(df["uid"], df["time"], strict=True) if lo <= t <= hi]
    assert list(zip(out["uid"], out["time"], strict=True)) == ref
    assert len(time_slice(df)) == len(df)
    assert (time_slice(df, start=hi)["time"] >= hi).all()
    with pytest.raises(ParameterError, match="after"):
        time_slice(df, hi, lo)
    with pytest.raises(ParameterError, match="date/time"):
        time_slice(df, "yesterday-ish")


def haversine_ref(lat1, lon1, lat2, lon2, r=6_371_008.8):
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dl = math.radians(lon2 - lon1)
    a = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * r * math.asin(math.sqrt(a))


def test_summary_matches_brute_force():
    df = make((6, 4, 1), seed=7)
    shuffled = df.sample(frac=1, random_state=0)  # order must not matter
    s = summary(shuffled)
    gaps, length = [], 0.0
    for _, g in df.groupby("uid"):
        g = g.sort_values("time")
        ts = [t.value / 1e9 for t in g["time"]]
        gaps += [b - a for a, b in itertools.pairwise(ts)]
        pts = list(zip(g["lat"], g["lon"], strict=True))
        length += sum(haversine_ref(*a, *b) for a, b in itertools.pairwise(pts))
    assert s["n_points"] == 11 and s["n_users"] == 3
    assert s["start"] == df["time"].min() and s["end"] == df["time"].max()
    assert s["duration_s"] == (df["time"].max() - df["time"].min()).total_seconds()
    assert s["median_interval_s"] == pytest.approx(float(np.median(gaps)))
    assert s["length_m"] == pytest.approx(length, rel=1e-9)
    assert path_length_m(df) == pytest.approx(length, rel=1e-9)
    assert s["bbox"] == (df["lat"].min(), df["lon"].min(), df["lat"].max(), df["lon"].max())


def test_summary_of_empty_and_single_point():
    df = make((1,))
    s = summary(df)
    assert s["n_points"] == 1 and s["duration_s"] == 0.0 and math.isnan(s["median_interval_s"])
    e = summary(df.iloc[:0])
    assert e["n_points"] == 0 and e["start"] is None and e["bbox"] is None


# --- time units: pandas 3 gives datetime64 in s/ms/us as often as ns --------------------------

UNITS = ["s", "ms", "us", "ns"]
ZONES = [None, "UTC", "Asia/Shanghai"]


def four_fixes(unit: str, tz: str | None) -> pd.DataFrame:
    """One user at 00:00, 00:10, 00:20, 00:30 UTC (600 s apart), time column in ``unit``/``tz``."""
    t = np.datetime64("2024-03-07T00:00:00", "s") + np.arange(4) * np.timedelta64(600, "s")
    time = pd.DatetimeIndex(t.astype(f"datetime64[{unit}]"))
    time = time.tz_localize("UTC") if tz is not None else time
    time = time.tz_convert(tz) if tz not in (None, "UTC") else time
    df = pd.DataFrame({"uid": "u", "time": time, "lat": 39.9 + np.arange(4) * 1e-3, "lon": 116.3})
    assert np.datetime_data(df["time"].dt.tz_localize(None).to_numpy().dtype)[0] == unit
    return df


@pytest.mark.parametrize("tz", ZONES)
@pytest.mark.parametrize("unit", UNITS)
def test_every_operation_is_unit_and_zone_independent(unit, tz):
    df = four_fixes(unit, tz)
    s = summary(df)
    assert s["duration_s"] == 1800.0 and s["median_interval_s"] == 600.0
    assert s["start"] == pd.Timestamp("2024-03-07T00:00:00Z")
    assert s["end"] == pd.Timestamp("2024-03-07T00:30:00Z")
    assert resample(df, 600)["lat"].tolist() == df["lat"].tolist()
    assert len(resample(df, 1200)) == 2
    got = time_slice(df, "2024-03-07T00:05:00", pd.Timestamp("2024-03-07T08:20:00+08:00"))
    assert got["lat"].tolist() == df["lat"].tolist()[1:3]
    # the same answers as the nanosecond frame, row for row
    ref = four_fixes("ns", "UTC")
    assert summary(ref) == s


@pytest.mark.parametrize("unit", UNITS)
def test_stays_are_unit_independent(unit):
    df = four_fixes(unit, None).assign(lat=39.9)  # not moving: one 30-minute stay
    stays = detect_stays(df, stay_radius_m=50, min_duration_s=600)
    assert stays["duration_s"].tolist() == [1800.0]
    assert stays["start"].tolist() == [pd.Timestamp("2024-03-07T00:00:00Z")]
    assert str(stays["start"].dtype) == "datetime64[ns, UTC]"


def test_times_outside_the_nanosecond_range_are_refused_clearly():
    df = four_fixes("s", None)
    far = np.array(["1500-01-01", "2024-03-07", "2024-03-08", "3000-01-01"], "datetime64[s]")
    with pytest.raises(ParameterError, match="row 0: date outside the supported range"):
        summary(df.assign(time=far))
    with pytest.raises(ParameterError, match="must hold datetimes"):
        summary(df.assign(time=np.arange(4)))
    with pytest.raises(ParameterError, match="NaT"):
        resample(df.assign(time=pd.to_datetime(["2024-03-07", None, None, None])), 60)
    with pytest.raises(ParameterError, match="outside the supported range"):
        time_slice(df, "3000-01-01")
    with pytest.raises(ParameterError, match="date/time"):
        time_slice(df, 1_700_000_000)


# --- the one lat/lon extractor and the one display downsampler ---------------------------------


class _Release:
    def __init__(self, lat, lon):
        self.lat, self.lon = lat, lon


def test_lat_lon_takes_every_documented_form_and_refuses_the_rest():
    lat, lon = [39.9, 40.0, np.nan], [116.3, 116.4, 116.5]
    forms = [
        pd.DataFrame({"lat": lat, "lon": lon, "x": 1}),
        _Release(np.array(lat), np.array(lon)),
        {"lat": lat, "lon": lon},
        np.array([lat, lon]),
        (lat, lon),
        [pd.Series(lat), pd.Series(lon)],
    ]
    for obj in forms:
        got = lat_lon(obj)
        assert all(a.dtype == np.float64 for a in got)
        np.testing.assert_array_equal(got[0], lat)  # NaN passes through: callers decide
        np.testing.assert_array_equal(got[1], lon)
    with pytest.raises(ParameterError, match=r"missing column\(s\) \['lon'\]"):
        lat_lon(pd.DataFrame({"lat": lat}))
    with pytest.raises(ParameterError, match="no locations"):
        lat_lon(_Release(None, None))
    with pytest.raises(ParameterError, match="length mismatch"):
        lat_lon((lat, lon[:2]))
    with pytest.raises(ParameterError, match="must be numeric"):
        lat_lon((["a"], [1.0]))
    with pytest.raises(ParameterError, match="must have lat/lon"):
        lat_lon(3.0)


@given(n=st.integers(0, 500), m=st.integers(2, 300))
def test_even_positions_keep_ends_count_and_even_gaps(n, m):
    pos = even_positions(n, m)
    assert pos.size == min(n, m)
    if n:
        assert pos[0] == 0 and pos[-1] == n - 1
    assert np.all(np.diff(pos) > 0)
    if n > m:
        gaps = np.diff(pos)
        assert gaps.max() - gaps.min() <= 1
    with pytest.raises(ParameterError):
        even_positions(5, 1)
