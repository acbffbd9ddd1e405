"""release_values / release_locations: Release object, determinism, noise scales, argument errors,
and plain-Python reference implementations of the sequential schemes (adaptive, BD, BA)."""

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from lmdk_core import (
    SCHEME_INFO,
    SCHEME_PARAMS,
    SCHEMES,
    LmdkError,
    ParameterError,
    PlanarLaplace,
    Release,
    haversine_m,
    release_locations,
    release_values,
)
from lmdk_core.schemes.wevent import window_epsilon


def _walk(n, seed=0):
    rng = np.random.default_rng(seed)
    return np.cumsum(rng.normal(0, 3, n))


def _trip(n, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "uid": 1,
        "time": pd.date_range("2024-01-01", periods=n, freq="min"),
        "lat": 39.9 + np.cumsum(rng.normal(0, 2e-4, n)),
        "lon": 116.4 + np.cumsum(rng.normal(0, 2e-4, n)),
    })


# ----------------------------------------------------------------------------- registry


def test_registry_is_consistent():
    assert SCHEMES == ("event", "user", "uniform", "skip", "adaptive", "reserve", "bd", "ba")
    assert set(SCHEME_INFO) == set(SCHEMES) == set(SCHEME_PARAMS)
    assert all(isinstance(v, str) and v for v in SCHEME_INFO.values())
    assert SCHEME_PARAMS["adaptive"] == {
        "s_min": 0.1, "inc": 0.1, "dec": 0.1, "sample_landmarks": True
    }
    assert SCHEME_PARAMS["bd"] == {"w": 10} and SCHEME_PARAMS["ba"] == {"w": 10}


# ----------------------------------------------------------------------------- Release object


def test_release_object_values():
    x = _walk(50)
    r = release_values(x, [3, 10], epsilon=1.0, scheme="skip", sensitivity=2.0, rng=5)
    assert isinstance(r, Release) and r.kind == "values" and len(r) == 50
    assert r.scheme == "skip" and r.epsilon == 1.0
    assert r.params["sensitivity"] == 2.0 and "seed" not in r.params and r.seeded
    assert r.lat is None and r.lon is None and r.time is None
    assert r.budget_spent == pytest.approx(48.0)
    assert r.fresh_share == pytest.approx(48 / 50)
    assert list(r.to_frame().columns) == ["value"]  # public by default
    df = r.to_frame(public=False)
    assert list(df.columns) == ["value", "eps", "published", "landmark"]
    assert df["landmark"].sum() == 2 and df["published"].sum() == 48
    np.testing.assert_array_equal(df["value"].to_numpy(), r.values)


def test_release_object_locations_with_time():
    trip = _trip(30)
    r = release_locations(trip, [0, 5], epsilon=1.0, scheme="bd", radius_m=150.0, rng=1, w=4)
    assert r.kind == "locations" and r.values is None
    assert r.params["radius_m"] == 150.0 and r.params["w"] == 4 and "window_epsilon" in r.params
    assert list(r.to_frame().columns) == ["time", "lat", "lon"]
    df = r.to_frame(public=False)
    assert list(df.columns) == ["time", "lat", "lon", "eps", "published", "landmark"]
    assert str(df["time"].dtype) == "datetime64[ns, UTC]"
    np.testing.assert_array_equal(df["time"].dt.tz_localize(None).to_numpy(),
                                  trip["time"].to_numpy())
    # the (lat, lon) pair form gives the same release, without time
    pair = (trip["lat"], trip["lon"])
    r2 = release_locations(pair, [0, 5], epsilon=1.0, scheme="bd", radius_m=150.0, rng=1, w=4)
    np.testing.assert_array_equal(r2.lat, r.lat)
    assert r2.time is None


def test_release_is_immutable():
    r = release_values(_walk(10), [], epsilon=1.0, scheme="uniform", rng=0)
    for name in ("values", "budget", "published", "landmarks"):
        with pytest.raises(ValueError):
            getattr(r, name)[0] = 1
    with pytest.raises(TypeError):
        r.params["sensitivity"] = 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.epsilon = 2.0


def test_input_arrays_are_not_modified_or_aliased():
    x = _walk(20)
    keep = x.copy()
    r = release_values(x, [], epsilon=1.0, scheme="event", rng=0)
    np.testing.assert_array_equal(x, keep)
    x[:] = 0
    assert not np.array_equal(r.values, np.zeros(20) + r.values[0])


# ----------------------------------------------------------------------------- randomness


def _recover(y1: np.ndarray, y2: np.ndarray, e1: float, e2: float) -> np.ndarray:
    """The true series from two releases that share their unit draws u: y_k = x + u·Δ/e_k."""
    return (e1 * y1 - e2 * y2) / (e1 - e2)


def test_default_releases_draw_fresh_noise_so_subtraction_recovers_nothing():
    """Issue 8 item 1: releases at ε = 1 and ε = 2 with the defaults must not share noise.

    With shared unit draws (a fixed seed and the floating-point sampler, as on main before),
    x = (ε1·y1 − ε2·y2)/(ε1 − ε2) exactly; with fresh randomness the estimate is off by about
    the noise scale. The seeded pair shows the attack works, so the fresh pair's failure is
    meaningful.
    """
    x, trip = _walk(400), _trip(400)
    lat, lon = trip["lat"].to_numpy(), trip["lon"].to_numpy()
    seeded = [release_values(x, epsilon=e, scheme="uniform", rng=7, noise="fast")
              for e in (1.0, 2.0)]
    # recovered up to the value grid (fast noise also rounds x to it: 2^-10 here), against a
    # noise scale of 1
    assert np.abs(_recover(seeded[0].values, seeded[1].values, 1.0, 2.0) - x).max() < 1e-2
    fresh = [release_values(x, epsilon=e, scheme="uniform") for e in (1.0, 2.0)]
    assert not any(r.seeded for r in fresh)
    err = np.abs(_recover(fresh[0].values, fresh[1].values, 1.0, 2.0) - x)
    assert np.median(err) > 0.3  # noise scale 1/ε: nothing is recovered
    locs = [release_locations(trip, epsilon=e, scheme="uniform", radius_m=200) for e in (1, 2)]
    est = _recover(locs[0].lat, locs[1].lat, 1.0, 2.0), _recover(locs[0].lon, locs[1].lon, 1, 2)
    assert np.median(haversine_m(est[0], est[1], lat, lon)) > 50.0
    # two default releases with the same settings differ too
    again = release_values(x, epsilon=1.0, scheme="uniform")
    assert not np.array_equal(again.values, fresh[0].values)


def test_seeded_release_is_marked_simulation_and_keeps_no_seed():
    rel = release_values(_walk(20), epsilon=1.0, scheme="uniform", rng=123)
    assert rel.seeded and "not private" in rel.label
    assert "seed" not in rel.params and "123" not in repr(dict(rel.params))
    assert rel.to_frame().attrs["lmdk"]["seeded"] is True
    fresh = release_values(_walk(20), epsilon=1.0, scheme="uniform")
    assert not fresh.seeded and "not private" not in fresh.label


def test_seed_is_a_deprecated_alias_of_rng():
    x = _walk(30)
    with pytest.warns(DeprecationWarning, match="rng"):
        old = release_values(x, epsilon=1.0, scheme="uniform", seed=4)
    np.testing.assert_array_equal(old.values,
                                  release_values(x, epsilon=1.0, scheme="uniform", rng=4).values)
    assert old.seeded
    with pytest.raises(ParameterError, match="not both"):
        release_values(x, epsilon=1.0, scheme="uniform", seed=4, rng=4)


def test_privacy_parameters_are_keyword_only():
    with pytest.raises(TypeError):
        release_values(_walk(5), [], 1.0, "uniform")  # type: ignore[misc]
    with pytest.raises(TypeError):
        release_locations(_trip(5), [], 1.0, "uniform")  # type: ignore[misc]


def test_a_time_column_that_is_not_datetimes_is_refused():
    trip = _trip(3)
    trip["time"] = ["08:00", "08:01", "08:02"]
    with pytest.raises(ParameterError, match="time must hold datetimes"):
        release_locations(trip, epsilon=1.0, scheme="uniform")


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_release_time_is_datetime64_ns_utc(unit):
    trip = _trip(5)
    trip["time"] = (pd.DatetimeIndex(trip["time"]).tz_localize("Europe/Athens").as_unit(unit))
    r = release_locations(trip, epsilon=1.0, scheme="uniform", rng=0)
    assert r.time.dtype == np.dtype("datetime64[ns]") and not r.time.flags.writeable
    want = pd.DatetimeIndex(trip["time"]).tz_convert("UTC").tz_localize(None).as_unit("ns")
    np.testing.assert_array_equal(r.time, want.to_numpy())


# ----------------------------------------------------------------------------- determinism


@pytest.mark.parametrize("scheme", SCHEMES)
def test_seed_determinism_and_seed_sensitivity(scheme):
    x, trip, L = _walk(200), _trip(200), [5, 50, 51, 120]
    a = release_values(x, L, epsilon=1.0, scheme=scheme, rng=11)
    b = release_values(x, L, epsilon=1.0, scheme=scheme, rng=11)
    c = release_values(x, L, epsilon=1.0, scheme=scheme, rng=12)
    np.testing.assert_array_equal(a.values, b.values)
    np.testing.assert_array_equal(a.budget, b.budget)
    assert not np.allclose(a.values, c.values, equal_nan=True)
    la = release_locations(trip, L, epsilon=1.0, scheme=scheme, rng=3)
    lb = release_locations(trip, L, epsilon=1.0, scheme=scheme, rng=np.random.default_rng(3))
    lc = release_locations(trip, L, epsilon=1.0, scheme=scheme, rng=4)
    np.testing.assert_array_equal(la.lat, lb.lat)
    np.testing.assert_array_equal(la.lon, lb.lon)
    assert not np.allclose(la.lat, lc.lat, equal_nan=True)


# ----------------------------------------------------------------------------- noise scales


def test_laplace_noise_scale_of_vectorised_schemes():
    n = 200_000
    r = release_values(np.zeros(n), [1, 2, 3], epsilon=1.0, scheme="uniform", sensitivity=2.0,
                       rng=0)
    # ε_t = 1/4, Δ = 2: Laplace scale b = 8, mean |noise| = b
    assert np.mean(np.abs(r.values)) == pytest.approx(8.0, rel=0.01)
    assert np.mean(r.values) == pytest.approx(0.0, abs=0.1)


def test_planar_noise_scale_of_vectorised_schemes():
    n = 200_000
    lat, lon = np.full(n, 39.9), np.full(n, 116.4)
    r = release_locations((lat, lon), [0], epsilon=1.0, scheme="uniform", radius_m=100.0, rng=0)
    d = haversine_m(lat, lon, r.lat, r.lon)
    # lattice mechanism at ε_t = 0.5: mean error ≈ 2.86·r/ε_t (orientation average; at 40°N
    # the tangent plane is within 1 % of the average)
    assert np.mean(d) == pytest.approx(PlanarLaplace(epsilon=0.5, radius_m=100.0).mean_error_m,
                                       rel=0.015)
    north = (r.lat - lat) * np.pi / 180 * 6_371_008.8
    assert abs(np.mean(north)) < 5.0  # isotropic: no drift (sd of the mean ≈ 1 m)


@pytest.mark.parametrize("scheme", ["event", "adaptive", "bd", "ba"])
def test_metric_projection_round_trips(scheme):
    trip = _trip(300)
    r = release_locations(trip, [], epsilon=1e6, scheme=scheme, radius_m=1.0, rng=0, **(
        {"w": 1} if scheme in ("bd", "ba") else {}))
    p = r.published
    assert p.sum() > 0
    d = haversine_m(trip["lat"].to_numpy()[p], trip["lon"].to_numpy()[p], r.lat[p], r.lon[p])
    assert d.max() < 1e-3


# ----------------------------------------------------------------------------- skip


def test_skip_republishes_last_regular_release_and_nan_before_first():
    x = _walk(8)
    r = release_values(x, [0, 1, 4, 5, 7], epsilon=1.0, scheme="skip", rng=0)
    v = r.values
    assert np.isnan(v[0]) and np.isnan(v[1])
    assert v[4] == v[3] and v[5] == v[3] and v[7] == v[6]
    assert r.published.tolist() == [False, False, True, True, False, False, True, False]
    loc = release_locations((np.full(3, 40.0), np.full(3, 116.0)), [0], epsilon=1.0,
                            scheme="skip", rng=0)
    assert np.isnan(loc.lat[0]) and np.isnan(loc.lon[0]) and not np.isnan(loc.lat[1])


# ----------------------------------------------------------------------------- references


def _scale(delta, eps):
    """Noise scale g·t of the value grid (docs/fp-safe-noise.md §2), recomputed in plain Python."""
    g = 2.0 ** (math.frexp(min(delta, delta / eps) / 1024)[1] - 1)
    d = math.floor(delta / g) + 1
    return g * math.ceil(d / eps * (1 + 2**-40))


def _fast_units(seed, n, coins=False):
    """noise="fast" draws: an n×4 unit Laplace block (col 0 publication, 3 test), then coins."""
    rng = np.random.default_rng(seed)
    units = rng.laplace(0.0, 1.0, (n, 4))
    return units, (rng.random(n) if coins else None)


def _ref_adaptive(x, L, epsilon, delta, seed, s_min, inc, dec, sample_landmarks):
    """Plain transcription of algorithms.md §1 Adaptive for values (noise="fast" draws)."""
    n = len(x)
    units, coins = _fast_units(seed, n, coins=True)
    noise = units[:, 0]
    eps_r = epsilon / (len(set(L)) + 1)
    s, prev, out, eps, pub = 1.0, None, [], [], []
    for t in range(n):
        if t == 0 or (sample_landmarks and t in L) or coins[t] < s:
            o = x[t] + noise[t] * _scale(delta, eps_r)
            if prev is not None:
                s = min(1.0, s + inc) if abs(o - prev) > delta / eps_r else max(s_min, s - dec)
            prev = o
            eps.append(eps_r)
            pub.append(True)
        else:
            eps.append(0.0)
            pub.append(False)
        out.append(prev)
    return np.array(out), np.array(eps), np.array(pub)


def _ref_bd(x, epsilon_w, w, delta, seed):
    """Plain transcription of Kellaris et al. BD (window sums recomputed from scratch)."""
    n = len(x)
    units, _ = _fast_units(seed, n)
    noise, test = units[:, 0], units[:, 3]
    eps1 = epsilon_w / (2 * w)
    pub_budget = [0.0] * n
    out, eps, pub, last = [], [], [], None
    for t in range(n):
        e_pub = (epsilon_w / 2 - sum(pub_budget[max(0, t - w + 1):t])) / 2
        if t == 0:
            spent, go = 0.0, True
        else:
            spent = eps1
            go = abs(x[t] - last) + test[t] * _scale(delta, eps1) > delta / e_pub
        if go:
            last = x[t] + noise[t] * _scale(delta, e_pub)
            pub_budget[t] = e_pub
            spent += e_pub
        out.append(last)
        eps.append(spent)
        pub.append(go)
    return np.array(out), np.array(eps), np.array(pub)


def _ref_ba(x, epsilon_w, w, delta, seed):
    """Plain transcription of Kellaris et al. BA: absorb skipped allotments, nullify after."""
    n = len(x)
    units, _ = _fast_units(seed, n)
    noise, test = units[:, 0], units[:, 3]
    allot = epsilon_w / (2 * w)
    out, eps, pub, last = [], [], [], None
    nullified_until, skipped = -1, 0  # skipped: unused allotments since the last publication
    for t in range(n):
        if t <= nullified_until:
            out.append(last)
            eps.append(0.0)
            pub.append(False)
            continue
        k = min(skipped + 1, w)
        e_pub = k * allot
        if t == 0:
            spent, go = 0.0, True
        else:
            spent = allot
            go = abs(x[t] - last) + test[t] * _scale(delta, allot) > delta / e_pub
        if go:
            last = x[t] + noise[t] * _scale(delta, e_pub)
            spent += e_pub
            nullified_until = t + k - 1
            skipped = 0
        else:
            skipped += 1
        out.append(last)
        eps.append(spent)
        pub.append(go)
    return np.array(out), np.array(eps), np.array(pub)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("params", [
    {}, {"s_min": 0.0, "inc": 0.05, "dec": 0.3}, {"sample_landmarks": False, "s_min": 0.2},
])
def test_adaptive_matches_reference(seed, params):
    x = np.concatenate([np.zeros(150), _walk(150, seed) * 10, np.full(100, 5.0)])
    L = [3, 40, 200, 399]
    r = release_values(x, L, epsilon=2.0, scheme="adaptive", sensitivity=1.5, rng=seed,
                       noise="fast", **params)
    full = {**SCHEME_PARAMS["adaptive"], **params}
    out, eps, pub = _ref_adaptive(x, L, 2.0, 1.5, seed, **full)
    np.testing.assert_array_equal(r.published, pub)
    np.testing.assert_allclose(r.budget, eps, rtol=1e-12)
    np.testing.assert_allclose(r.values, out, rtol=1e-12)
    assert 0 < r.fresh_share < 1  # the data includes stretches that let the rate fall


@pytest.mark.parametrize("scheme, ref", [("bd", _ref_bd), ("ba", _ref_ba)])
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("w", [1, 3, 10])
def test_wevent_matches_reference(scheme, ref, seed, w):
    x = np.concatenate([np.zeros(100), _walk(200, seed) * 5, np.full(100, -3.0)])
    L = [7, 150] if seed % 2 else []
    r = release_values(x, L, epsilon=3.0, scheme=scheme, sensitivity=0.5, rng=seed, w=w,
                       noise="fast")
    eps_w = r.params["window_epsilon"]
    out, eps, pub = ref(x, eps_w, w, 0.5, seed)
    np.testing.assert_array_equal(r.published, pub)
    np.testing.assert_allclose(r.budget, eps, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(r.values, out, rtol=1e-9)
    assert 0 < r.fresh_share < 1


def _ref_cover_bound(L, n, w, c):
    """Greedy cover of sorted landmarks by w-windows, each group costing min(1, k·c)."""
    L = sorted(set(L))
    total, i = 0.0, 0
    while i < len(L):
        group = [ell for ell in L[i:] if ell < L[i] + w]
        total += min(1.0, len(group) * c)
        i += len(group)
    return total + (c if len(L) < n else 0.0)


@pytest.mark.parametrize("scheme, c_extra", [("bd", 0.25), ("ba", 0.5)])
@pytest.mark.parametrize("L, n, w", [
    ([], 50, 10), ([5], 50, 10), ([5, 40], 50, 10), ([1, 2, 3, 4, 5], 50, 10),
    (list(range(0, 50, 3)), 50, 2), (list(range(50)), 50, 10), ([0, 9, 10, 30], 50, 10),
])
def test_window_epsilon_rule(scheme, c_extra, L, n, w):
    c = 1 / (2 * w) + c_extra
    mask = np.zeros(n, dtype=bool)
    mask[L] = True
    g = _ref_cover_bound(L, n, w, c)
    expected = 1.7 * min(1.0, 1.0 / g)
    assert window_epsilon(scheme, mask, epsilon=1.7, w=w) == pytest.approx(expected, rel=1e-12)
    if not L:
        assert window_epsilon(scheme, mask, epsilon=1.7, w=w) == 1.7  # plain Kellaris et al.


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize("kwargs, match", [
    ({"epsilon": 0.0}, "epsilon must be > 0"),
    ({"epsilon": -2.0}, "epsilon must be > 0"),
    ({"epsilon": float("nan")}, "finite"),
    ({"epsilon": float("inf")}, "finite"),
    ({"scheme": "laplace"}, "valid schemes: event, user, uniform, skip, adaptive, reserve, bd, ba"),
    ({"scheme": "bd", "w": 0}, "w must be an integer >= 1"),
    ({"scheme": "bd", "w": 2.5}, "w must be an integer"),
    ({"scheme": "bd", "window": 3}, "valid parameters: w"),
    ({"scheme": "uniform", "w": 3}, "valid parameters: none"),
    ({"scheme": "adaptive", "s_min": 1.5}, r"s_min must lie in \[0, 1\]"),
    ({"scheme": "adaptive", "inc": -0.1}, "inc must be"),
    ({"scheme": "adaptive", "sample_landmarks": "yes"}, "sample_landmarks must be True or False"),
    ({"landmarks": [True, False]}, "length mismatch"),
    ({"landmarks": [12]}, "out of range"),
    ({"sensitivity": 0.0}, "sensitivity must be > 0"),
    ({"values": [1.0, np.nan, 2.0, 3.0, 4.0]}, "NaN"),
    ({"rng": "abc"}, "rng must be"),
])
def test_release_values_errors(kwargs, match):
    args = {"values": np.arange(5.0), "landmarks": [1], "epsilon": 1.0, "scheme": "uniform"}
    args.update(kwargs)
    with pytest.raises(ParameterError, match=match):
        release_values(args.pop("values"), args.pop("landmarks"), epsilon=args.pop("epsilon"),
                       scheme=args.pop("scheme"), **args)


@pytest.mark.parametrize("kwargs, match", [
    ({"radius_m": -5.0}, "radius_m must be > 0"),
    ({"radius_m": 0.0}, "radius_m must be > 0"),
    ({"traj": pd.DataFrame({"lat": [1.0, 2.0]})}, "lon"),
    ({"traj": (np.array([91.0, 0.0]), np.array([0.0, 0.0]))}, "lat must lie"),
    ({"traj": (np.zeros(2), np.zeros(3))}, "length mismatch"),
    ({"landmarks": np.ones(3, dtype=bool)}, "length mismatch"),
])
def test_release_locations_errors(kwargs, match):
    args = {"traj": (np.zeros(2), np.zeros(2)), "landmarks": [], "epsilon": 1.0,
            "scheme": "adaptive", **kwargs}
    with pytest.raises(LmdkError, match=match):
        release_locations(args.pop("traj"), args.pop("landmarks"), epsilon=args.pop("epsilon"),
                          scheme=args.pop("scheme"), **args)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_empty_and_single_point_inputs(scheme):
    r = release_values(np.zeros(0), [], epsilon=1.0, scheme=scheme, rng=0)
    assert len(r) == 0 and r.fresh_share == 0.0 and r.budget_spent == 0.0
    r = release_locations((np.array([40.0]), np.array([116.0])), [0], epsilon=1.0, scheme=scheme,
                          rng=0)
    assert len(r) == 1


@pytest.mark.parametrize("scheme", ["event", "user", "uniform"])
def test_vectorised_schemes_equal_the_mechanisms_given_the_seed(scheme):
    """Same generator stream as lmdk_core.mechanisms.laplace / planar_laplace at budget ε_t."""
    from lmdk_core.mechanisms import laplace, planar_laplace

    x, trip, L = _walk(500), _trip(500), [4, 99, 300]
    r = release_values(x, L, epsilon=0.8, scheme=scheme, sensitivity=3.0, rng=21)
    np.testing.assert_array_equal(r.values, laplace(x, epsilon=r.budget, sensitivity=3.0,
                                                    rng=np.random.default_rng(21)))
    lat, lon = trip["lat"].to_numpy(), trip["lon"].to_numpy()
    rl = release_locations(trip, L, epsilon=0.8, scheme=scheme, radius_m=50.0, rng=21)
    elat, elon = planar_laplace(lat, lon, epsilon=rl.budget, radius_m=50.0,
                                rng=np.random.default_rng(21))
    np.testing.assert_allclose(rl.lat, elat, rtol=0, atol=1e-12)
    np.testing.assert_allclose(rl.lon, elon, rtol=0, atol=1e-12)
