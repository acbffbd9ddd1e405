"""The bundled sample: the file has the documented properties, loads, and is what the seeded
generator produces. The CSV is parsed here with plain pandas, independently of the package."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lmdk_core import LmdkError, detect_stays, sample_path
from lmdk_core.geo import haversine_m

REPO = Path(__file__).resolve().parent.parent
GENERATOR = REPO / "data" / "generate_sample.py"
SAMPLE = REPO / "lmdk_core" / "data" / "sample_trajectories.csv"  # packaged; data/ is its source


def _generator():
    spec = importlib.util.spec_from_file_location("generate_sample", GENERATOR)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


gen = _generator()


@pytest.fixture(scope="module")
def raw() -> pd.DataFrame:
    df = pd.read_csv(
        SAMPLE, dtype={"place": str}, keep_default_na=False
    )
    df["t"] = pd.to_datetime(df["time"], format="%Y-%m-%dT%H:%M:%SZ", utc=True)
    return df


def _per_user_steps(df: pd.DataFrame):
    """(dt seconds, metres) between consecutive fixes of the same user."""
    same = df["uid"].to_numpy()[1:] == df["uid"].to_numpy()[:-1]
    dt = np.diff((df["t"] - pd.Timestamp(0, tz="UTC")).dt.total_seconds().to_numpy())[same]
    lat, lon = df["lat"].to_numpy(), df["lon"].to_numpy()
    d = haversine_m(lat[:-1], lon[:-1], lat[1:], lon[1:])[same]
    return dt, d


def test_sample_path_points_at_the_bundled_csv() -> None:
    p = sample_path()
    assert p == SAMPLE and p.is_file()
    assert p.stat().st_size <= 3_000_000


def test_sample_path_missing_file_raises_lmdk_error(monkeypatch, tmp_path) -> None:
    import lmdk_core.sample as sample

    monkeypatch.setattr(sample, "__file__", str(tmp_path / "lmdk_core" / "sample.py"))
    with pytest.raises(LmdkError, match=r"sample_trajectories\.csv"):
        sample.sample_path()


def test_documented_layout(raw: pd.DataFrame) -> None:
    assert list(raw.columns[:5]) == ["uid", "time", "lat", "lon", "place"]
    assert 40_000 <= len(raw) <= 60_000
    assert raw["time"].str.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ").all()
    users = sorted(raw["uid"].unique())
    assert len(users) >= 4 and users == ["alice", "bob", "carol", "dave"]
    # sorted by uid, time; no duplicate timestamps per user
    assert raw["uid"].is_monotonic_increasing
    ok = raw.groupby("uid")["t"].apply(lambda s: s.is_monotonic_increasing and s.is_unique)
    assert ok.all()
    # 6 decimals at most
    assert (raw["lat"].round(6) == raw["lat"]).all() and (raw["lon"].round(6) == raw["lon"]).all()
    assert set(raw["place"]) <= {"", "home", "work", "clinic", "shop", "restaurant", "park", "gym"}


def test_multi_day_in_beijing(raw: pd.DataFrame) -> None:
    local_days = raw["t"].dt.tz_convert("Asia/Shanghai").dt.date
    assert (raw.assign(d=local_days).groupby("uid")["d"].nunique() == 5).all()
    assert raw["t"].min() >= pd.Timestamp("2024-03-06T16:00:00Z")
    assert raw["t"].max() < pd.Timestamp("2024-03-11T16:00:00Z")
    lat_min, lon_min, lat_max, lon_max = gen.BEIJING_BBOX
    assert raw["lat"].between(lat_min, lat_max).all() and raw["lon"].between(lon_min, lon_max).all()
    assert (lat_min, lon_min, lat_max, lon_max) == pytest.approx((39.80, 116.25, 40.05, 116.55))


def test_sampling_intervals_and_speeds(raw: pd.DataFrame) -> None:
    dt, d = _per_user_steps(raw)
    assert (dt >= 10).all()  # never denser than 10 s
    assert np.mean(dt <= 60) > 0.99  # the rest are gaps (phone off / no signal)
    gaps = dt > 60
    assert gaps.sum() >= 20  # gaps exist: several per user
    speed = d[~gaps] / dt[~gaps]
    assert speed.max() < 40.0
    same = raw["uid"].to_numpy()[1:] == raw["uid"].to_numpy()[:-1]
    moving = raw["place"].to_numpy()[1:][same] == ""
    # while moving, sampling is denser and speeds span walking to driving
    assert np.median(dt[moving & ~gaps]) < np.median(dt[~moving & ~gaps])
    assert np.percentile(d[moving & ~gaps] / dt[moving & ~gaps], 95) > 8.0


def test_ground_truth_stays_are_detected(raw: pd.DataFrame) -> None:
    """Every user's clinic visit is found by stay detection, at the labelled place."""
    for _, g in raw.groupby("uid"):
        clinic = g[g["place"] == "clinic"]
        assert len(clinic) > 20
        stays = detect_stays(g.drop(columns="time").rename(columns={"t": "time"}))
        c_lat, c_lon = clinic["lat"].mean(), clinic["lon"].mean()
        near = stays[haversine_m(stays["lat"], stays["lon"], c_lat, c_lon) < 100.0]
        overlap = (near["start"] <= clinic["t"].max()) & (near["end"] >= clinic["t"].min())
        visit_s = (clinic["t"].max() - clinic["t"].min()).total_seconds()
        assert near[overlap]["duration_s"].sum() > 0.8 * visit_s


def test_committed_file_is_the_generator_output() -> None:
    text = gen.to_csv(gen.generate(gen.SEED))
    assert text.encode("ascii") == sample_path().read_bytes()


def test_generator_is_deterministic_and_seeded() -> None:
    a = gen.to_csv(gen.generate(11, n_days=1, users=("bob", "alice")))
    b = gen.to_csv(gen.generate(11, n_days=1, users=("alice", "bob")))
    c = gen.to_csv(gen.generate(12, n_days=1, users=("alice", "bob")))
    assert a == b and a != c
    assert a.startswith("uid,time,lat,lon,place\nalice,") and "\nbob," in a
    with pytest.raises(ValueError):
        gen.generate(11, n_days=6)


def test_load_sample_with_read_trajectories(raw: pd.DataFrame, sample: pd.DataFrame) -> None:
    df = sample
    assert list(df.columns[:4]) == ["uid", "time", "lat", "lon"]
    assert str(df["time"].dtype) == "datetime64[ns, UTC]"
    assert len(df) == len(raw)
    assert "place" in df.columns
    expected_time = raw["t"].rename("time")  # whatever unit pandas parsed it in
    pd.testing.assert_series_equal(
        df["time"].reset_index(drop=True), expected_time, check_dtype=False
    )
    np.testing.assert_array_equal(df["lat"].to_numpy(), raw["lat"].to_numpy())
    assert (df["place"].fillna("") == raw["place"]).all()
