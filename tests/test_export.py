"""Exports: release CSV reads back to the same numbers, release GeoJSON is valid and complete,
the privacy report is strict JSON with every per-timestamp series at full length."""

from __future__ import annotations

import io
import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from exact_csv import read_csv_exact
from hypothesis import given, settings
from hypothesis import strategies as st

from lmdk_core import Place, landmark_guarantee, release_locations, release_values
from lmdk_core.errors import ParameterError
from lmdk_core.export import (
    export_file_name,
    iso_utc,
    jsonable,
    privacy_report,
    public_frame,
    release_to_csv,
    release_to_geojson,
    released_rows,
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


# ------------------------------------------------------------------ CSV (public)

PRIVATE_COLUMNS = {"eps", "published", "landmark", "landmarks", "guarantee", "place", "name"}


@pytest.mark.parametrize("scheme", ["skip", "adaptive", "uniform"])
def test_location_csv_holds_only_time_and_released_coordinates(scheme):
    """Issue 8 item 2: the public CSV has no landmark/ε_t/published column (main had all 3).
    Issue 27: it holds only the rows that carry a release (Skip released nothing at t = 0, 1)."""
    traj = make_traj()
    rel = release_locations(traj, LANDMARKS, epsilon=1.0, scheme=scheme)
    text = release_to_csv(rel)
    back = read_csv_exact(io.StringIO(text))
    assert list(back.columns) == ["time", "lat", "lon"]
    assert not PRIVATE_COLUMNS & set(back.columns)
    held = np.flatnonzero(~np.isnan(rel.lat))  # what was released, from the release itself
    assert held.tolist() == (list(range(2, T)) if scheme == "skip" else list(range(T)))
    assert len(back) == held.size and not back.isna().any().any()
    for col in ("lat", "lon"):  # exact to the bit
        np.testing.assert_array_equal(back[col].to_numpy(), np.asarray(getattr(rel, col))[held])
    assert (pd.to_datetime(back["time"], utc=True) == traj["time"].iloc[held].to_numpy()).all()
    assert "#" not in text and "simulation" not in text  # a fresh release is not labelled
    pd.testing.assert_frame_equal(
        public_frame(rel), rel.to_frame(public=True).iloc[held].reset_index(drop=True))


def test_values_csv_holds_only_the_released_values():
    x = np.linspace(0, 10, T) ** 1.5
    rel = release_values(x, LANDMARKS, epsilon=0.5, scheme="uniform")
    back = pd.read_csv(io.StringIO(release_to_csv(rel)))
    assert list(back.columns) == ["value"]
    np.testing.assert_array_equal(back["value"].to_numpy(), rel.values)


def test_seeded_release_files_say_simulation_not_private():
    rel = release_locations(make_traj(), LANDMARKS, epsilon=1.0, scheme="uniform", rng=7)
    text = release_to_csv(rel)
    assert text.startswith("# lmdk simulation, not private")
    back = pd.read_csv(io.StringIO(text), comment="#")
    assert list(back.columns) == ["time", "lat", "lon"] and len(back) == T  # uniform: all rows
    gj = release_to_geojson(rel)
    assert gj["lmdk"]["simulation"] is True and "not private" in gj["lmdk"]["label"]
    report = privacy_report(release=rel, epsilon=1.0)
    assert report["lmdk"]["simulation"] is True
    assert "not private" in report["configuration"]["randomness"]
    fresh = release_locations(make_traj(), LANDMARKS, epsilon=1.0, scheme="uniform")
    assert release_to_geojson(fresh)["lmdk"]["simulation"] is False


# ------------------------------------------------------------------ GeoJSON (public)


def test_release_geojson_holds_only_time_and_points():
    traj = make_traj()
    rel = release_locations(traj, LANDMARKS, epsilon=1.0, scheme="skip")
    gj = release_to_geojson(rel)
    text = json.dumps(gj, allow_nan=False)
    strict_loads(text)  # valid strict JSON
    assert gj["type"] == "FeatureCollection"
    assert gj["lmdk"] == {"kind": "public-release", "version": 2, "simulation": False}
    for word in ("eps", "published", "landmark", "skip", "scheme", "epsilon"):
        assert f'"{word}"' not in text, word
    ok = np.flatnonzero(np.isfinite(rel.lat))
    assert ok.tolist() == list(range(2, T))  # t = 0, 1 are landmarks before any regular release
    points = gj["features"]
    assert len(points) == ok.size
    for f, t in zip(points, ok, strict=True):
        assert f["type"] == "Feature" and f["geometry"]["type"] == "Point"
        lon, lat = f["geometry"]["coordinates"]
        assert (lon, lat) == (rel.lon[t], rel.lat[t])
        assert -90 <= lat <= 90 and -180 <= lon <= 180
        assert set(f["properties"]) == {"time"}
        tm = f["properties"]["time"]
        assert pd.Timestamp(tm) == traj["time"][t] and tm.endswith("Z")


@settings(max_examples=40)
@given(st.lists(st.booleans(), min_size=1, max_size=40), st.integers(0, 2**32 - 1))
def test_skip_drops_exactly_the_rows_before_its_first_publication(mask, seed):
    """Which rows the public files leave out is fixed by the landmark mask alone (docs/exports.md):
    Skip publishes first at the first non-landmark timestamp, so the rows before it — and only
    those — carry nothing. Two different traces with the same mask lose the same rows."""
    L = np.array(mask)
    n = L.size
    rng = np.random.default_rng(seed)
    first = int(np.argmin(L)) if not L.all() else n  # first non-landmark timestamp
    for _ in range(2):  # two traces, two draws: the same rows
        rel = release_locations(_random_trace(rng, n), L, epsilon=1.0, scheme="skip",
                                rng=int(rng.integers(9)))
        back = pd.read_csv(io.StringIO(release_to_csv(rel)), comment="#")
        kept = pd.to_datetime(back["time"], utc=True)
        assert kept.tolist() == _random_trace(rng, n)["time"].iloc[first:].tolist()
        assert len(release_to_geojson(rel)["features"]) == n - first


def _random_trace(rng, n):
    return pd.DataFrame({"time": pd.date_range("2024-03-01", periods=n, freq="min", tz="UTC"),
                         "lat": 39.9 + rng.normal(0, 0.01, n),
                         "lon": 116.3 + rng.normal(0, 0.01, n)})


@settings(max_examples=10, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=20), st.integers(0, 2**32 - 1))
def test_every_scheme_drops_rows_that_depend_on_the_mask_alone(mask, seed):
    """For every scheme, the rows a public file holds are the same for two different traces and
    two noise draws under one landmark mask: leaving the others out reveals nothing the
    allocation does not (docs/exports.md)."""
    from lmdk_core import SCHEMES

    L = np.array(mask)
    rng = np.random.default_rng(seed)
    for scheme in SCHEMES:
        rows = {tuple(released_rows(release_locations(
            _random_trace(rng, L.size), L, epsilon=1.0, scheme=scheme,
            rng=int(rng.integers(2**31)))).tolist()) for _ in range(2)}
        assert len(rows) == 1, scheme
        kept = np.array(rows.pop())
        assert np.all(kept[1:] >= kept[:-1]), scheme  # a prefix is left out, nothing after it


def test_csv_and_geojson_hold_the_same_rows():
    traj = make_traj()
    rel = release_locations(traj, LANDMARKS, epsilon=1.0, scheme="skip")
    back = read_csv_exact(io.StringIO(release_to_csv(rel)))
    feats = release_to_geojson(rel)["features"]
    assert back["time"].tolist() == [f["properties"]["time"] for f in feats]
    assert [[x, y] for x, y in zip(back["lon"], back["lat"], strict=True)] == [
        f["geometry"]["coordinates"] for f in feats]


def test_read_csv_exact_round_trips_without_a_warning():
    """The tests' CSV reader (tests/exact_csv.py): every double back to the bit, and no
    float_precision deprecation warning on pandas 3."""
    import warnings

    x = np.random.default_rng(1).uniform(-180, 180, 5000)
    x[:3] = [5e-324, 0.1 + 0.2, 1 / 3]
    text = pd.DataFrame({"x": x}).to_csv(index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = read_csv_exact(io.StringIO(text))["x"].to_numpy()
    assert back.view(np.int64).tolist() == x.view(np.int64).tolist()


def test_release_geojson_without_time_and_values_release_rejected():
    traj = make_traj()
    rel = release_locations((traj["lat"].to_numpy(), traj["lon"].to_numpy()), LANDMARKS,
                            epsilon=1.0, scheme="uniform")
    gj = release_to_geojson(rel)
    assert all(f["properties"]["time"] is None for f in gj["features"])
    with pytest.raises(ParameterError, match="locations"):
        release_to_geojson(release_values(np.ones(T), LANDMARKS, epsilon=1.0, scheme="uniform"))


def test_iso_utc_precision_and_timezone():
    t = pd.DatetimeIndex(["2024-01-01 12:00:00", "2024-01-01 12:00:01.5"], tz="Asia/Shanghai")
    assert iso_utc(t).tolist() == ["2024-01-01T04:00:00.000Z", "2024-01-01T04:00:01.500Z"]
    assert iso_utc(t[:1]).tolist() == ["2024-01-01T04:00:00Z"]
    naive = np.array(["2024-01-01T00:00:00"], dtype="datetime64[ns]")
    assert iso_utc(naive).tolist() == ["2024-01-01T00:00:00Z"]  # midnight keeps its time


# ------------------------------------------------------------------ report


def test_report_is_strict_json_with_full_length_series():
    traj = make_traj()
    rel = release_locations(traj, LANDMARKS, epsilon=1.0, scheme="event", rng=2)
    g = landmark_guarantee(rel.budget, LANDMARKS)
    bpl = np.cumsum(rel.budget)
    fpl = np.cumsum(rel.budget[::-1])[::-1]
    temporal = SimpleNamespace(bpl=bpl, fpl=fpl, tpl=bpl + fpl - rel.budget)
    lloss = g * 1.5
    lloss[3] = np.inf  # unbounded loss → null, never Infinity
    metrics = {"mae_m": np.float64(123.5), "missing": float("nan"), "n": np.int64(T)}
    settings = {"epsilon": 1.0, "scheme": "event", "places": [Place("home", 39.9, 116.3, 150.0)],
                "start": pd.Timestamp("2024-03-01", tz="UTC")}
    report = privacy_report(settings=settings, release=rel, epsilon=1.0, guarantee=g,
                            temporal=temporal, landmark_loss=lloss, metrics=metrics,
                            places=[Place("home", 39.9, 116.3, 150.0)])
    text = report_to_json(report)
    back = strict_loads(text)
    assert back == report  # the dict is already JSON-ready
    s = back["series"]
    for key in ("eps", "published", "landmark", "guarantee", "time"):
        assert len(s[key]) == T, key
    np.testing.assert_array_equal(s["eps"], rel.budget)
    np.testing.assert_array_equal(s["guarantee"], g)
    for key, arr in (("bpl", bpl), ("fpl", fpl), ("tpl", bpl + fpl - rel.budget)):
        np.testing.assert_array_equal(back["temporal"][key], arr)
    assert back["landmark_temporal_loss"][3] is None and len(back["landmark_temporal_loss"]) == T
    assert back["metrics"] == {"mae_m": 123.5, "missing": None, "n": T}
    assert back["settings"]["places"] == back["places"] == [
        {"name": "home", "lat": 39.9, "lon": 116.3, "place_radius_m": 150.0}
    ]
    assert next(iter(back)) == "PRIVATE" and "Do not share" in back["PRIVATE"]
    assert text.splitlines()[1].lstrip().startswith('"PRIVATE"')  # the first line says so
    assert back["settings"]["start"] == "2024-03-01T00:00:00Z"
    summary = back["summary"]
    # independent: event spends ε everywhere, so G_t = (|L| + 1)ε off the landmarks
    assert summary["budget_spent"] == pytest.approx(T * 1.0)
    assert summary["max_guarantee"] == pytest.approx((LANDMARKS.sum() + 1) * 1.0)
    assert summary["landmark_private"] is False
    assert summary["guarantee_exceeds_epsilon"] == T  # landmarks see |L|ε too
    assert summary["n_landmarks"] == 5 and summary["fresh_share"] == 1.0
    conf = back["configuration"]
    assert conf["scheme"] == "event" and conf["n_timestamps"] == T and conf["epsilon"] == 1.0
    assert conf["budget_source"] == "scheme" and conf["params"]["radius_m"] == 200.0
    assert conf["params"]["noise"] == "safe" and 0 < conf["params"]["achieved_epsilon"] <= 6.0
    assert set(conf["params"]) == {"radius_m", "noise", "achieved_epsilon"}
    assert conf["time_range"] == {"start": "2024-03-01T09:00:00.250Z",
                                  "end": "2024-03-01T09:05:43.250Z", "n_timestamps": T}
    assert "NaN" not in text and "Infinity" not in text


def test_report_without_correlation_has_null_temporal_and_private_summary():
    rel = release_locations(make_traj(), LANDMARKS, epsilon=1.0, scheme="uniform", rng=2)
    g = landmark_guarantee(rel.budget, LANDMARKS)
    back = strict_loads(report_to_json(privacy_report(release=rel, epsilon=1.0)))
    assert back["temporal"] is None and back["landmark_temporal_loss"] is None
    assert back["summary"]["landmark_private"] is True
    assert back["summary"]["max_tpl"] is None
    assert back["series"]["guarantee"] == g.tolist()  # computed when not given
    with pytest.raises(ParameterError, match="guarantee"):
        privacy_report(release=rel, epsilon=1.0, guarantee=g[:-1])
    with pytest.raises(ParameterError, match="epsilon"):
        privacy_report(release=rel, epsilon=0.0)
    with pytest.raises(TypeError):
        privacy_report(release=rel)  # the user's ε is required: no silent default


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

    rel = release_locations(make_traj(), LANDMARKS, epsilon=1.0, scheme="uniform", rng=2)
    P = synthetic_transition_matrix(5, "moderate")
    tl = temporal_loss(rel.budget, P, P)
    lt = landmark_temporal_loss(rel.budget, LANDMARKS, P, P)
    g = landmark_guarantee(rel.budget, LANDMARKS)
    back = strict_loads(report_to_json(privacy_report(
        release=rel, epsilon=1.0, guarantee=g, temporal=tl, landmark_loss=lt,
        correlation={"source": "synthetic", "strength": "moderate", "n_states": 5})))
    assert back["correlation"]["strength"] == "moderate"
    np.testing.assert_array_equal(back["temporal"]["tpl"], tl.tpl)
    np.testing.assert_array_equal(back["landmark_temporal_loss"], lt.composed)
    assert back["summary"]["max_tpl"] == pytest.approx(float(np.max(tl.tpl)))
    assert back["summary"]["max_landmark_temporal_loss_bound"] == pytest.approx(
        float(np.max(lt.composed)))
    assert not any("exceeds" in k for k in back["summary"] if "guarantee" not in k)


# ------------------------------------------------------------------ report: the user's ε


def test_report_judges_a_custom_budget_against_the_users_epsilon():
    """Issue 8 item 4: ε = 0.5, every ε_t above it → not private (main said private, 0 over)."""
    from lmdk_core import release_with_budget

    traj = make_traj()
    budget = np.full(T, 0.6)
    rel = release_with_budget(traj, LANDMARKS, budget=budget, radius_m=100)
    report = privacy_report(release=rel, epsilon=0.5)
    brute = max(sum(budget[i] for i in set(np.flatnonzero(LANDMARKS)) | {t}) for t in range(T))
    assert report["summary"]["max_guarantee"] == pytest.approx(brute)
    assert report["summary"]["landmark_private"] is False
    assert report["summary"]["guarantee_exceeds_epsilon"] == T
    assert report["configuration"]["budget_source"] == "custom"
    assert report["configuration"]["epsilon"] == 0.5
    # even without landmarks, ε_t = 0.6 > 0.5 at every single timestamp
    rel0 = release_with_budget(traj, budget=budget, radius_m=100)
    assert privacy_report(release=rel0, epsilon=0.5)["summary"]["guarantee_exceeds_epsilon"] == T
    # a budget that does fit is judged private
    ok = release_with_budget(traj, LANDMARKS, budget=np.full(T, 0.5 / 6), radius_m=100)
    assert privacy_report(release=ok, epsilon=0.5)["summary"]["landmark_private"] is True


def test_report_never_contains_the_seed():
    rel = release_locations(make_traj(), LANDMARKS, epsilon=1.0, scheme="uniform", rng=987654)
    text = report_to_json(privacy_report(
        release=rel, epsilon=1.0, settings={"seed": 987654, "nested": {"rng": 987654, "a": 1}}))
    assert "987654" not in text and '"seed"' not in text and '"rng"' not in text
    assert strict_loads(text)["settings"] == {"nested": {"a": 1}}


# ------------------------------------------------------------------ provenance (issue 13)


def test_report_names_the_allocation_and_records_range_and_interval():
    traj = make_traj()
    budget = np.full(T, 0.02)
    from lmdk_core import release_with_budget

    rel = release_with_budget(traj, LANDMARKS, budget=budget, epsilon=1.0, radius_m=100.0)
    rep = strict_loads(report_to_json(privacy_report(
        release=rel, epsilon=1.0, allocation="tpl_bounded", release_interval_s=300,
        correlation={"source": "public", "alpha": 0.5, "parameters": {"cell_m": 500.0}})))
    conf = rep["configuration"]
    assert conf["allocation"] == rep["summary"]["allocation"] == "tpl_bounded"
    assert conf["scheme"] == "budget" and conf["release_interval_s"] == 300.0
    # the range read independently from the trajectory's own times
    assert conf["time_range"] == {"start": "2024-03-01T09:00:00.250Z",
                                  "end": "2024-03-01T09:05:43.250Z", "n_timestamps": T}
    assert rep["correlation"] == {"source": "public", "alpha": 0.5,
                                  "parameters": {"cell_m": 500.0}}
    # without a caller's name the scheme's is used; a custom budget says so
    assert privacy_report(release=rel, epsilon=1.0)["configuration"]["allocation"] == (
        "custom budget")
    plain = release_locations(traj, LANDMARKS, epsilon=1.0, scheme="skip", rng=1)
    assert privacy_report(release=plain, epsilon=1.0)["summary"]["allocation"] == "skip"


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_report_refuses_a_bad_release_interval(bad):
    rel = release_locations(make_traj(), LANDMARKS, epsilon=1.0, scheme="skip", rng=1)
    with pytest.raises(ParameterError, match="release_interval_s"):
        privacy_report(release=rel, epsilon=1.0, release_interval_s=bad)


def test_export_file_names_carry_the_allocation_the_budget_and_say_private():
    """Issue 27: releases at different ε got the same file name."""
    assert export_file_name("public", "tpl_bounded", "csv", epsilon=1.0) == (
        "lmdk_public_release_tpl_bounded_eps1.csv")
    assert export_file_name("public", "skip", "csv", epsilon=0.5) == (
        "lmdk_public_release_skip_eps0.5.csv")
    assert export_file_name("analysis", "uniform", "json", epsilon=2) == (
        "lmdk_PRIVATE_analysis_uniform_eps2_DO_NOT_SHARE.json")
    assert export_file_name("story", "Skip (landmarks/not released)", "html", epsilon=1e-5) == (
        "lmdk_story_skip_landmarks_not_released_eps1e-05.html")
    assert export_file_name("private_story", "skip", "html", epsilon=1 / 3) == (
        "lmdk_PRIVATE_story_skip_eps0.333333_DO_NOT_SHARE.html")
    with pytest.raises(ParameterError, match="export kind"):
        export_file_name("secret", "skip", "csv", epsilon=1)
    with pytest.raises(ParameterError, match="extension"):
        export_file_name("public", "skip", ".csv", epsilon=1)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ParameterError, match="epsilon"):
            export_file_name("public", "skip", "csv", epsilon=bad)
    with pytest.raises(TypeError):
        export_file_name("public", "skip", "csv", 1.0)  # keyword-only, like every ε


@given(st.floats(1e-6, 1e6), st.floats(1e-6, 1e6))
def test_file_names_of_different_budgets_differ_and_are_safe(a, b):
    """A name is portable ([A-Za-z0-9_.-], one dot before the extension's), reads back to ε
    within its 6 significant digits, and two budgets that differ there get two names."""
    import re

    na, nb = (export_file_name("public", "skip", "csv", epsilon=e) for e in (a, b))
    for name, eps in ((na, a), (nb, b)):
        assert re.fullmatch(r"lmdk_public_release_skip_eps[0-9.e-]+\.csv", name), name
        shown = float(name.removeprefix("lmdk_public_release_skip_eps").removesuffix(".csv"))
        assert abs(shown - eps) <= 5e-6 * eps
    if f"{a:.6g}" != f"{b:.6g}":
        assert na != nb


def test_fast_noise_without_a_seed_is_a_simulation_in_every_file():
    """Issue 24 finding 5: noise="fast" with rng=None was labelled a private release and its
    files carried no simulation marker, although 81 % of its value outputs reveal the input.
    Every fast release is a simulation: the label, the CSV, the GeoJSON, the frame, the report."""
    import json

    import numpy as np
    import pandas as pd

    from lmdk_core.export import privacy_report, release_to_csv, release_to_geojson
    from lmdk_core.release import SIMULATION_LABEL, release_locations, release_values

    traj = pd.DataFrame({"time": pd.date_range("2024-01-01", periods=30, freq="min", tz="UTC"),
                         "lat": np.linspace(40.0, 40.01, 30), "lon": np.full(30, 116.0)})
    rel = release_locations(traj, epsilon=1.0, scheme="uniform", noise="fast")
    assert rel.simulation and rel.label == SIMULATION_LABEL
    assert release_to_csv(rel).startswith(f"# lmdk {SIMULATION_LABEL}")
    assert release_to_geojson(rel)["lmdk"]["simulation"] is True
    assert rel.to_frame().attrs["lmdk"]["seeded"] is True
    report = privacy_report(release=rel, epsilon=1.0)
    assert "simulation" in json.dumps(report).lower()
    vals = release_values(np.arange(30.0), epsilon=1.0, scheme="uniform", noise="fast")
    assert vals.simulation and release_to_csv(vals).startswith("# lmdk simulation")
    safe = release_locations(traj, epsilon=1.0, scheme="uniform")  # the exact default
    assert not safe.simulation and not release_to_csv(safe).startswith("#")
