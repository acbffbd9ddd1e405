"""lmdk_core.smooth_release: free post-processing that reads only the public output.

The smoother is checked against an independent exact computation (the posterior mean of the
same Gaussian model by dense batch least squares), for never reading the private arrays, for
repeats, NaN rows, clamping, exports, and for reducing the error on simulated walks."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from traces import WALK

import lmdk_core as lc
from lmdk_core import ParameterError, smooth_release
from lmdk_core import smoothing as sm
from lmdk_core.export import release_to_csv
from lmdk_core.geo import haversine_m
from lmdk_core.noise.apply import read_only  # kernel inputs as smooth_release passes them

TRACE = WALK
N = len(TRACE)
HOME = np.zeros(N, dtype=bool)
HOME[[0, 1, 2, 50, 51, 52, 53, 120, 121, 200]] = True  # leading landmarks: Skip starts with NaN


def release(scheme: str = "skip", seed: int = 1, **kw) -> lc.Release:
    return lc.release_locations(TRACE, HOME, epsilon=kw.pop("epsilon", 1.0), scheme=scheme,
                                rng=seed, noise="fast", **kw)


def mean_error(rel: lc.Release) -> float:
    return float(np.nanmean(haversine_m(TRACE.lat, TRACE.lon, rel.lat, rel.lon)))


# ------------------------------------------------------------------ the exact reference


def dense_smoother(y: np.ndarray, obs: np.ndarray, dt: np.ndarray, r: float, q: float,
                   kind: str, gap: float = math.inf, v0: float = 1.0) -> np.ndarray:
    """Posterior mean of the same linear-Gaussian model by dense least squares (1-D).

    Minimises Σ_obs (y_i − p_i)²/r + Σ_i (s_i − F s_{i−1})ᵀ Q_i⁻¹ (s_i − F s_{i−1})
    (+ v_start²/v0 for constant velocity) over the states from the first observation on: a
    flat prior on the first position, exactly what a Kalman filter started at its first
    observation and an RTS smoother compute."""
    start = int(np.argmax(obs))
    n = y.size - start
    d = 2 if kind == "cv" else 1
    rows, rhs, weights = [], [], []

    def add(coefs: dict[int, float], value: float, var: float) -> None:
        row = np.zeros(n * d)
        for j, c in coefs.items():
            row[j] = c
        rows.append(row)
        rhs.append(value)
        weights.append(1.0 / var)

    for i in range(n):
        if obs[start + i]:
            add({i * d: 1.0}, y[start + i], r)
    blocks = []  # (i, F, Q)
    for i in range(1, n):
        h = dt[start + i]
        if kind == "rw":
            f, qm = np.array([[1.0]]), np.array([[q * h if h <= gap else 1e8 * r]])
        elif h > gap:
            f, qm = np.array([[1.0, 0.0], [0.0, 0.0]]), np.diag([1e8 * r, v0])
        else:
            f = np.array([[1.0, h], [0.0, 1.0]])
            qm = q * np.array([[h**3 / 3, h**2 / 2], [h**2 / 2, h]])
        blocks.append((i, f, qm))
    a = np.array(rows) if rows else np.zeros((0, n * d))
    w = np.array(weights)
    hess = a.T @ (a * w[:, None])
    grad = a.T @ (w * np.array(rhs))
    for i, f, qm in blocks:  # (s_i − F s_{i−1})ᵀ Q⁻¹ (·): a d×2d block
        m = np.zeros((d, n * d))
        m[:, i * d:(i + 1) * d] = np.eye(d)
        m[:, (i - 1) * d:i * d] = -f
        hess += m.T @ np.linalg.inv(qm) @ m
    if kind == "cv":
        hess[1, 1] += 1.0 / v0
    sol = np.linalg.solve(hess, grad)
    out = np.full(y.size, np.nan)
    out[start:] = sol[::d]
    return out


@pytest.mark.parametrize("kind", ["rw", "cv"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kernel_is_the_exact_posterior_mean(kind, seed):
    rng = np.random.default_rng(seed)
    n = 40
    y = np.cumsum(rng.normal(0, 3.0, n)) + rng.normal(0, 5.0, n)
    obs = rng.random(n) < 0.7
    obs[:3] = [False, False, True]  # NaN rows before the first observation
    y[~obs] = np.nan
    dt = rng.uniform(5.0, 60.0, n)
    dt[25] = 1000.0  # one gap: a restart
    r, q, gap, v0 = 25.0, 0.4 if kind == "rw" else 0.01, 500.0, 4.0
    code = sm._KINDS[kind]
    y2, obs, dt = (read_only(a) for a in (np.ascontiguousarray(y[:, None]), obs, dt))
    got, *_ = sm._kalman_rts(y2, obs, dt, r, q, code, 0.0, v0, 0.0, True, gap, 1e8 * r)
    want = dense_smoother(y, obs, dt, r, q, kind, gap, v0)
    np.testing.assert_allclose(got[:, 0], want, rtol=1e-6, atol=1e-6)
    assert np.isnan(got[:2, 0]).all()


def test_a_broken_smoother_fails_the_reference():
    """The reference has power: a filter without its backward pass differs from it."""
    rng = np.random.default_rng(3)
    n = 30
    y = np.cumsum(rng.normal(0, 3.0, n)) + rng.normal(0, 5.0, n)
    obs = np.ones(n, dtype=bool)
    dt = np.full(n, 30.0)
    y2, obs, dt = (read_only(a) for a in (y[:, None].copy(), obs, dt))
    filt, *_ = sm._kalman_rts(y2, obs, dt, 25.0, 0.4, 0, 0.0, 1.0, 0.0, False, math.inf, 1e9)
    want = dense_smoother(y, obs, dt, 25.0, 0.4, "rw")
    assert not np.allclose(filt[:, 0], want, rtol=1e-3)


# ------------------------------------------------------------------ only public input


def test_never_reads_the_private_arrays():
    rel = release("skip")
    rng = np.random.default_rng(0)
    scrambled = dataclasses.replace(
        rel, budget=rng.permutation(rel.budget) * 3.0, published=~rel.published,
        landmarks=rng.random(N) < 0.5)
    for kw in ({}, {"motion": "fit"}, {"robust": True}):
        a, b = smooth_release(rel, **kw), smooth_release(scrambled, **kw)
        np.testing.assert_array_equal(a.lat, b.lat)
        np.testing.assert_array_equal(a.lon, b.lon)


def test_a_smoother_reading_published_would_fail_that_check():
    """The check has power: a variant that takes ``published`` as its observation mask gives
    different output once the private arrays are scrambled."""
    rel = release("skip")
    scrambled = dataclasses.replace(rel, published=np.random.default_rng(1).random(N) < 0.5)

    def broken(r: lc.Release) -> np.ndarray:
        y = np.column_stack(lc.geo.degrees_to_metres(40.0, 116.3, r.lat, r.lon))
        obs = np.asarray(r.published) & ~np.isnan(y[:, 0])
        y, obs, dt = (read_only(a) for a in (y, obs, np.full(N, 30.0)))
        out, *_ = sm._kalman_rts(y, obs, dt, 2.4e5, 300.0, 0, 0.0, 1.0, 0.0, True, 600.0, 1e13)
        return out

    assert not np.allclose(broken(rel), broken(scrambled), equal_nan=True)


def test_across_the_antimeridian():
    n = 200
    rng = np.random.default_rng(9)
    lon = 179.95 + np.cumsum(np.full(n, 1e-3)) + rng.normal(0, 1e-4, n)
    trace = pd.DataFrame({"time": pd.date_range("2024-01-01", periods=n, freq="30s"),
                          "lat": np.full(n, -16.8), "lon": (lon + 180.0) % 360.0 - 180.0})
    rel = lc.release_locations(trace, None, epsilon=1.0, scheme="event", rng=2, noise="fast")
    out = smooth_release(rel)
    assert np.all((out.lon >= -180.0) & (out.lon < 180.0))
    raw = np.mean(haversine_m(trace.lat, trace.lon, rel.lat, rel.lon))
    assert np.mean(haversine_m(trace.lat, trace.lon, out.lat, out.lon)) < 0.7 * raw


def test_the_same_public_frame_gives_the_same_output():
    """A Release rebuilt from the public frame and public parameters alone (arbitrary private
    arrays, none of the derived parameters) smooths identically."""
    rel = release("uniform")
    other = lc.Release(scheme=rel.scheme, epsilon=rel.epsilon, budget=np.zeros(N),
                       published=np.zeros(N, bool), landmarks=np.ones(N, bool),
                       params={"radius_m": 200.0}, lat=rel.lat, lon=rel.lon, time=rel.time,
                       seeded=True)
    a = smooth_release(rel)
    b = smooth_release(other)
    np.testing.assert_array_equal(a.lat, b.lat)


def test_repeats_are_not_observations():
    y = np.array([[np.nan, np.nan], [1.0, 2.0], [1.0, 2.0], [1.0, 3.0], [1.0, 3.0], [np.nan, 0.0],
                  [4.0, 4.0], [4.0, 4.0], [1.0, 2.0]])
    np.testing.assert_array_equal(
        sm.observations(y), [False, True, False, True, False, False, True, False, True])
    # one axis equal is not a repeat
    assert sm.observations(np.array([[1.0, 2.0], [1.0, 2.5]])).tolist() == [True, True]


def test_skip_repeats_carry_no_weight():
    """Skip's repeated rows add nothing: smoothing equals smoothing with those rows marked as
    missing in the kernel (the same observations)."""
    rel = release("skip")
    out = smooth_release(rel, noise_sd=400.0)
    y, _ = sm._public_columns(rel)
    obs = sm.observations(y)
    assert obs.sum() == int((~HOME).sum())  # the repeats found are exactly Skip's landmarks
    # the smoother's output at a repeat is not the repeated value
    rep = np.flatnonzero(~obs & ~np.isnan(y[:, 0]))
    assert np.all(out.lat[rep] != rel.lat[rep])


# ------------------------------------------------------------------ accuracy


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 3.0])
def test_smoothing_reduces_the_error_of_a_walk(epsilon):
    for scheme in ("skip", "uniform"):
        raw = release(scheme, seed=11, epsilon=epsilon)
        assert mean_error(smooth_release(raw)) < 0.8 * mean_error(raw), (scheme, epsilon)


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 3.0])
def test_smoothing_reduces_the_error_of_values(epsilon):
    rng = np.random.default_rng(5)
    x = np.cumsum(rng.normal(0, 0.2, 400))
    rel = lc.release_values(x, [10, 11, 12], epsilon=epsilon, scheme="skip", rng=3,
                            noise="fast")
    out = smooth_release(rel)
    assert np.nanmean(np.abs(out.values - x)) < 0.7 * np.nanmean(np.abs(rel.values - x))


def test_values_are_clamped_to_the_domain():
    x = np.clip(np.sin(np.arange(200) / 8.0), 0.0, 1.0)
    rel = lc.release_values(x, None, epsilon=0.5, scheme="uniform", rng=2, noise="fast")
    out = smooth_release(rel, domain=(0.5, 1.0))
    assert out.values.min() >= 0.5 and out.values.max() <= 1.0
    free = smooth_release(rel)
    assert free.values.min() < 0.5  # the clamp did something
    np.testing.assert_array_equal(out.values, np.clip(free.values, 0.5, 1.0))
    assert out.params["smoothing"]["domain"] == [0.5, 1.0]


# ------------------------------------------------------------------ the returned release


def test_returns_an_exportable_release_with_accounting_unchanged():
    rel = release("skip")
    out = smooth_release(rel)
    assert out.scheme == rel.scheme and out.epsilon == rel.epsilon and out.seeded
    np.testing.assert_array_equal(out.time, rel.time)
    for name in ("budget", "published", "landmarks"):
        np.testing.assert_array_equal(getattr(out, name), getattr(rel, name))
    assert out.params["smoothing"]["noise_source"] == "law"
    assert out.params["smoothing"]["motion"] == "auto"
    assert tuple(out.params["smoothing"]["model"]) in sm.CANDIDATES
    frame = out.to_frame(public=True)
    assert list(frame.columns) == ["time", "lat", "lon"]
    csv = release_to_csv(out)
    assert csv.startswith("#") and "simulation" in csv.splitlines()[0]
    vals = smooth_release(lc.release_values(np.arange(20.0), None, epsilon=1.0, scheme="event",
                                            rng=1, noise="fast"))
    assert list(vals.to_frame(public=True).columns) == ["value"]


def test_leading_nan_rows_stay_nan():
    rel = release("skip")
    assert np.isnan(rel.lat[:3]).all()
    out = smooth_release(rel)
    assert np.isnan(out.lat[:3]).all() and np.isfinite(out.lat[3:]).all()


@pytest.mark.parametrize("n", [0, 1, 2])
def test_empty_and_tiny(n):
    rel = lc.release_locations(TRACE.iloc[:n], None, epsilon=1.0, scheme="event", rng=1,
                               noise="fast")
    out = smooth_release(rel)
    assert len(out) == n
    np.testing.assert_array_equal(out.lat, rel.lat) if n == 1 else None
    all_nan = lc.release_locations(TRACE.iloc[:5], np.ones(5, bool), epsilon=1.0, scheme="skip",
                                   rng=1, noise="fast")
    assert np.isnan(smooth_release(all_nan).lat).all()


def test_noise_is_fitted_where_the_budget_is_not_public():
    out = smooth_release(release("uniform"))
    how = out.params["smoothing"]
    assert how["noise_source"] == "fitted on the released points"
    law = math.sqrt(sm.noise_variance("locations", epsilon=1.0 / 11, scale=200.0))
    assert 0.3 * law < how["noise_sd"] < 3.0 * law


def test_noise_variance_of_the_lattice_law():
    """Per-axis variance = g²·Var(discrete Laplace(t)) ≈ 2·(g·t)² ≈ 6·(r/ε)² — checked against
    the empirical variance of the mechanism's own east/north offsets."""
    var = sm.noise_variance("locations", epsilon=1.0, scale=200.0)
    assert var == pytest.approx(6 * 200.0**2, rel=0.01)
    n = 20000
    trace = pd.DataFrame({"lat": np.full(n, 40.0), "lon": np.full(n, 116.0)})
    rel = lc.release_locations(trace, None, epsilon=1.0, scheme="event", rng=4, noise="fast")
    east, north = lc.geo.degrees_to_metres(40.0, 116.0, rel.lat, rel.lon)
    assert np.var(east) == pytest.approx(var, rel=0.05)
    assert np.var(north) == pytest.approx(var, rel=0.05)


@pytest.mark.parametrize("kw", [
    {"motion": "fly"}, {"motion": ("rw", -1.0)}, {"motion": ("iou", 1.0)}, {"motion": 3},
    {"noise_sd": 0.0}, {"noise_sd": "x"}, {"gap_s": 0}, {"gap_s": float("nan")},
    {"robust": "yes"}, {"domain": (0.0, 1.0)},
])
def test_bad_parameters(kw):
    with pytest.raises(ParameterError):
        smooth_release(release("skip"), **kw)


def test_noise_variance_bad_input():
    for kw in ({"epsilon": 0.0, "scale": 1.0}, {"epsilon": 1.0, "scale": -1.0}):
        with pytest.raises(ParameterError):
            sm.noise_variance("values", **kw)
    with pytest.raises(ParameterError):
        sm.noise_variance("points", epsilon=1.0, scale=1.0)


def test_bad_inputs():
    with pytest.raises(ParameterError):
        smooth_release(TRACE)
    vals = lc.release_values(np.arange(10.0), None, epsilon=1.0, scheme="event", rng=1,
                             noise="fast")
    for dom in [(1.0, 0.0), (0.0,), (0.0, math.inf), "ab"]:
        with pytest.raises(ParameterError):
            smooth_release(vals, domain=dom)
    with pytest.raises(ParameterError):
        smooth_release(vals, motion="town")  # a location model for values


def test_other_motion_models_run():
    rel = release("skip")
    for motion in ("walk", "drive", "fit", ("cv", 0.05), ("iou", 4.0, 30.0)):
        out = smooth_release(rel, motion=motion)
        assert np.isfinite(out.lat[3:]).all()
        assert mean_error(out) < mean_error(rel)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 60), seed=st.integers(0, 10**6), scheme=st.sampled_from(
    ["event", "skip", "uniform", "adaptive"]), times=st.booleans())
def test_output_length_and_time_equal_input(n, seed, scheme, times):
    rng = np.random.default_rng(seed)
    x = np.cumsum(rng.normal(0, 1.0, n))
    marks = rng.random(n) < 0.3
    if times:
        rel = lc.release_locations(TRACE.iloc[:n], marks, epsilon=1.0, scheme=scheme, rng=seed,
                                   noise="fast")
    else:
        rel = lc.release_values(x, marks, epsilon=1.0, scheme=scheme, rng=seed, noise="fast")
    out = smooth_release(rel)
    assert len(out) == len(rel)
    if times:
        np.testing.assert_array_equal(out.time, rel.time)
        got, raw = out.lat, rel.lat
    else:
        assert out.time is None
        got, raw = out.values, rel.values
    np.testing.assert_array_equal(np.isnan(got), np.isnan(raw))


# ------------------------------------------------------------------ short traces (issue 25)


def _drive_and_stop(n: int = 150, seed: int = 0) -> pd.DataFrame:
    """A short trace shaped like GeoLife tracker 0 (152 fixes over 4 h): 25 fixes driving at
    9 m/s, 25 crawling at 0.3 m/s, alternately, turning, 30 s apart with gaps of 20 min and 1 h."""
    rng = np.random.default_rng(seed)
    steps = np.full(n, 30.0)
    steps[0], steps[60], steps[110] = 0.0, 1200.0, 3600.0
    t = pd.Timestamp("2008-10-23", tz="UTC") + pd.to_timedelta(np.cumsum(steps), unit="s")
    head = np.cumsum(rng.normal(0, 0.3, n))
    v = 30.0 * np.where((np.arange(n) // 25) % 2 == 0, 9.0, 0.3)
    east, north = np.cumsum(v * np.cos(head)), np.cumsum(v * np.sin(head))
    return pd.DataFrame({"time": t, "lat": 39.9 + north / 111_320.0,
                         "lon": 116.4 + east / (111_320.0 * np.cos(np.radians(39.9)))})


def _moving_median(y: np.ndarray, w: int = 9) -> np.ndarray:
    pad = np.pad(y, (w // 2, w // 2), constant_values=np.nan)
    return np.nanmedian(np.lib.stride_tricks.sliding_window_view(pad, w), axis=-1)


@pytest.mark.parametrize("scheme", ["skip", "reserve"])
def test_short_fast_trace_beats_raw_and_the_moving_median(scheme):
    """On a 150-point drive-and-stop trace the smoothed error is below the raw error and below
    0.9 × a centred 9-point moving median's (mean of 6 seeded draws). The old default — the
    fixed "town" random walk, and for reserve a noise variance fitted without a floor — gave
    363 m (skip) and 445 m (reserve) against the median's 292 m; now ≈ 235 m and 231 m.
    The reserve release is passed as an evaluation passes it: without its figures (so the
    noise variance is fitted, bounded below by the law at ε)."""
    trip = _drive_and_stop()
    mask = np.zeros(len(trip), dtype=bool)
    mask[[20, 21, 22, 23, 90, 91, 92, 93, 94, 95, 96]] = True
    raw, med, smo = [], [], []
    for seed in range(6):
        rel = lc.release_locations(trip, mask, epsilon=1.0, radius_m=200.0, scheme=scheme,
                                   rng=seed, noise="fast")
        if scheme == "reserve":
            rel = dataclasses.replace(rel, params={"radius_m": 200.0, "noise": "fast"})
        lat, lon = np.asarray(rel.lat), np.asarray(rel.lon)
        out = smooth_release(rel)
        for acc, (a, b) in ((raw, (lat, lon)), (med, (_moving_median(lat), _moving_median(lon))),
                            (smo, (out.lat, out.lon))):
            acc.append(float(np.nanmean(haversine_m(trip.lat, trip.lon, a, b))))
    assert np.mean(smo) < np.mean(raw)
    assert np.mean(smo) < 0.9 * np.mean(med), (np.mean(smo), np.mean(med))


def test_reserve_noise_law_only_when_its_share_is_public():
    """A reserve release whose share the user gave: regular_epsilon = ε(1 − s) is public, the
    noise variance is the law at it. With share "auto" the share is a function of the
    landmarks (not public): the variance is fitted, never below the law at ε."""
    given = release("reserve", landmark_share=0.3)
    out = smooth_release(given).params["smoothing"]
    assert given.params["share_source"] == "given" and out["noise_source"] == "law"
    law = sm.noise_variance("locations", epsilon=0.7 * 1.0, scale=200.0)
    assert out["noise_sd"] == pytest.approx(math.sqrt(law))
    auto = release("reserve")
    assert auto.params["share_source"] == "auto"
    fitted = smooth_release(auto).params["smoothing"]
    assert fitted["noise_source"] == "fitted on the released points"
    floor = math.sqrt(sm.noise_variance("locations", epsilon=1.0, scale=200.0))
    assert fitted["noise_sd"] >= floor * (1 - 1e-12)
    # a release with much less noise than its ε allows (here: the true trace itself) keeps
    # the floor instead of trusting a near-zero fit
    exact = dataclasses.replace(auto, lat=TRACE.lat.to_numpy(), lon=TRACE.lon.to_numpy())
    assert smooth_release(exact).params["smoothing"]["noise_sd"] == pytest.approx(floor)
