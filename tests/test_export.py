"""Exports: release CSV reads back to the same numbers, release GeoJSON is valid and complete,
the privacy report is strict JSON with every per-timestamp series at full length."""

from __future__ import annotations

import io
import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from lmdk_core import Place, landmark_guarantee, release_locations, release_values
from lmdk_core.errors import ParameterError
from lmdk_core.export import (
    iso_utc,
    jsonable,
    privacy_report,
    release_to_csv,
    release_to_geojson,
    report_to_json,
)

T = 50
LANDMARKS = np.zeros(T, dtype=bool)
LANDMARKS[[0, 1, 10, 11, 30]] = True  # starts with landmarks: skip has NaN output at t = 0, 1


def make_traj(tz="UTC"):
    rng = np.random.default_rng(4)
    return pd.DataFrame({
        "time": pd.date_range("2024-03-01 09:00:00.250", periods=T, freq="7s", tz=tz),
        "lat": 39.9 + np.cumsum(rng.normal(0, 1e-4, T)),
        "lon": 116.3 + np.cumsum(rng.normal(0, 1e-4, T)),
    })


def strict_loads(text):
    def bad(token):
        raise AssertionError(f"non-standard JSON constant {token}")

    return json.loads(text, parse_constant=bad)


# ------------------------------------------------------------------ CSV


@pytest.mark.parametrize("scheme", ["skip", "adaptive", "uniform"])
def test_location_csv_reads_back_to_the_same_numbers(scheme):
    traj = make_traj()
    rel = release_locations(traj, LANDMARKS, 1.0, scheme, seed=7)
    back = pd.read_csv(io.StringIO(release_to_csv(rel)))
    assert list(back.columns) == ["time", "lat", "lon", "eps", "published", "landmark"]
    assert len(back) == T
    for col in ("lat", "lon", "eps"):
        # exact to the bit (NaN where nothing was released yet)
        np.testing.assert_array_equal(back[col].to_numpy(), np.asarray(getattr(rel, col)))
    np.testing.assert_array_equal(back["published"].to_numpy(), rel.published)
    np.testing.assert_array_equal(back["landmark"].to_numpy(), LANDMARKS)
    assert (pd.to_datetime(back["time"], utc=True) == traj["time"]).all()
    if scheme == "skip":
        assert back["lat"].isna().sum() == 2


def test_values_csv_reads_back():
    x = np.linspace(0, 10, T) ** 1.5
    rel = release_values(x, LANDMARKS, 0.5, "uniform", seed=1)
    back = pd.read_csv(io.StringIO(release_to_csv(rel)))
    assert list(back.columns) == ["value", "eps", "published", "landmark"]
    np.testing.assert_array_equal(back["value"].to_numpy(), rel.values)


# ------------------------------------------------------------------ GeoJSON


def test_release_geojson_structure_skips_nan_points():
    traj = make_traj()
    rel = release_locations(traj, LANDMARKS, 1.0, "skip", seed=3)
    gj = release_to_geojson(rel)
    strict_loads(json.dumps(gj, allow_nan=False))  # valid strict JSON
    assert gj["type"] == "FeatureCollection"
    assert gj["lmdk"]["kind"] == "release" and gj["lmdk"]["scheme"] == "skip"
    line, *points = gj["features"]
    ok = np.flatnonzero(np.isfinite(rel.lat))
    assert ok.tolist() == list(range(2, T))  # t = 0, 1 are landmarks before any regular release
    assert line["geometry"]["type"] == "LineString"
    assert line["geometry"]["coordinates"] == [[rel.lon[t], rel.lat[t]] for t in ok]
    assert len(points) == ok.size
    for f, t in zip(points, ok):
        assert f["type"] == "Feature" and f["geometry"]["type"] == "Point"
        lon, lat = f["geometry"]["coordinates"]
        assert (lon, lat) == (rel.lon[t], rel.lat[t])
        assert -90 <= lat <= 90 and -180 <= lon <= 180
        p = f["properties"]
        assert p["t"] == t and p["eps"] == rel.eps[t]
        assert p["published"] is bool(rel.published[t]) and p["landmark"] is bool(LANDMARKS[t])
        assert pd.Timestamp(p["time"]) == traj["time"][t] and p["time"].endswith("Z")


def test_release_geojson_without_time_and_values_release_rejected():
    traj = make_traj()
    rel = release_locations((traj["lat"].to_numpy(), traj["lon"].to_numpy()), LANDMARKS, 1.0,
                            "uniform", seed=3)
    gj = release_to_geojson(rel)
    assert all(f["properties"]["time"] is None for f in gj["features"][1:])
    with pytest.raises(ParameterError, match="locations"):
        release_to_geojson(release_values(np.ones(T), LANDMARKS, 1.0, "uniform", seed=0))


def test_iso_utc_precision_and_timezone():
    t = pd.DatetimeIndex(["2024-01-01 12:00:00", "2024-01-01 12:00:01.5"], tz="Asia/Shanghai")
    assert iso_utc(t).tolist() == ["2024-01-01T04:00:00.000Z", "2024-01-01T04:00:01.500Z"]
    assert iso_utc(t[:1]).tolist() == ["2024-01-01T04:00:00Z"]
    naive = np.array(["2024-01-01T00:00:00"], dtype="datetime64[ns]")
    assert iso_utc(naive).tolist() == ["2024-01-01T00:00:00Z"]  # midnight keeps its time


# ------------------------------------------------------------------ report


def test_report_is_strict_json_with_full_length_series():
    traj = make_traj()
    rel = release_locations(traj, LANDMARKS, 1.0, "event", seed=2)
    g = landmark_guarantee(rel.eps, LANDMARKS)
    bpl = np.cumsum(rel.eps)
    fpl = np.cumsum(rel.eps[::-1])[::-1]
    temporal = SimpleNamespace(bpl=bpl, fpl=fpl, tpl=bpl + fpl - rel.eps)
    lloss = g * 1.5
    lloss[3] = np.inf  # unbounded loss → null, never Infinity
    metrics = {"mae_m": np.float64(123.5), "missing": float("nan"), "n": np.int64(T)}
    settings = {"epsilon": 1.0, "scheme": "event", "places": [Place("home", 39.9, 116.3, 150.0)],
                "start": pd.Timestamp("2024-03-01", tz="UTC")}
    report = privacy_report(settings=settings, release=rel, guarantee=g, temporal=temporal,
                            landmark_loss=lloss, metrics=metrics)
    text = report_to_json(report)
    back = strict_loads(text)
    assert back == report  # the dict is already JSON-ready
    s = back["series"]
    for key in ("eps", "published", "landmark", "guarantee", "time"):
        assert len(s[key]) == T, key
    np.testing.assert_array_equal(s["eps"], rel.eps)
    np.testing.assert_array_equal(s["guarantee"], g)
    for key, arr in (("bpl", bpl), ("fpl", fpl), ("tpl", bpl + fpl - rel.eps)):
        np.testing.assert_array_equal(back["temporal"][key], arr)
    assert back["landmark_temporal_loss"][3] is None and len(back["landmark_temporal_loss"]) == T
    assert back["metrics"] == {"mae_m": 123.5, "missing": None, "n": T}
    assert back["settings"]["places"] == [
        {"name": "home", "lat": 39.9, "lon": 116.3, "radius_m": 150.0}
    ]
    assert back["settings"]["start"] == "2024-03-01T00:00:00Z"
    summary = back["summary"]
    # independent: event spends ε everywhere, so G_t = (|L| + 1)ε off the landmarks
    assert summary["budget_spent"] == pytest.approx(T * 1.0)
    assert summary["max_guarantee"] == pytest.approx((LANDMARKS.sum() + 1) * 1.0)
    assert summary["landmark_private"] is False
    assert summary["guarantee_exceeds_epsilon"] == T  # landmarks see |L|ε too
    assert summary["n_landmarks"] == 5 and summary["fresh_share"] == 1.0
    assert back["release"]["scheme"] == "event" and back["release"]["n_timestamps"] == T
    assert "NaN" not in text and "Infinity" not in text


def test_report_without_correlation_has_null_temporal_and_private_summary():
    rel = release_locations(make_traj(), LANDMARKS, 1.0, "uniform", seed=2)
    g = landmark_guarantee(rel.eps, LANDMARKS)
    back = strict_loads(report_to_json(privacy_report(
        settings={}, release=rel, guarantee=g, metrics={})))
    assert back["temporal"] is None and back["landmark_temporal_loss"] is None
    assert back["summary"]["landmark_private"] is True
    assert back["summary"]["max_tpl"] is None
    with pytest.raises(ParameterError, match="guarantee"):
        privacy_report(settings={}, release=rel, guarantee=g[:-1], metrics={})


def test_jsonable_rejects_unknown_objects_with_the_path():
    with pytest.raises(ParameterError, match=r"report\.settings\.thing"):
        jsonable({"settings": {"thing": object()}})
    assert jsonable({"a": np.array([1.0, np.nan]), "b": (np.bool_(True),)}) == {"a": [1.0, None],
                                                                               "b": [True]}


def test_report_with_the_correlation_module_objects():
    from lmdk_core.correlation import (
        landmark_temporal_loss,
        synthetic_transition_matrix,
        temporal_loss,
    )

    rel = release_locations(make_traj(), LANDMARKS, 1.0, "uniform", seed=2)
    P = synthetic_transition_matrix(5, "moderate")
    tl = temporal_loss(rel.eps, P, P)
    lt = landmark_temporal_loss(rel.eps, LANDMARKS, P, P)
    g = landmark_guarantee(rel.eps, LANDMARKS)
    back = strict_loads(report_to_json(privacy_report(
        settings={}, release=rel, guarantee=g, temporal=tl, landmark_loss=lt, metrics={})))
    np.testing.assert_array_equal(back["temporal"]["tpl"], tl.tpl)
    np.testing.assert_array_equal(back["landmark_temporal_loss"], lt.composed)
    assert back["summary"]["max_tpl"] == pytest.approx(float(np.max(tl.tpl)))
    exceeds = int(np.sum(lt.composed > 1.0 + 1e-9))
    assert back["summary"]["landmark_temporal_exceeds_epsilon"] == exceeds
