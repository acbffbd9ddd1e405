"""Statistical tests of the noise mechanisms (fixed seeds: deterministic on every machine).

Distribution tests use Kolmogorov–Smirnov / binomial tests on 10⁵ draws against scipy references
and fail below p = 0.001. The empirical privacy checks histogram the outputs for neighbouring
inputs and bound the log-ratio of bin frequencies; each check is shown to detect a mechanism
that uses half the noise it should.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import special, stats

from lmdk_core import ParameterError
from lmdk_core.geo import degrees_to_metres, haversine_m, offset_points
from lmdk_core.mechanisms import (
    Laplace,
    PlanarLaplace,
    RandomizedResponse,
    _lambertw_m1,
    as_rng,
    laplace,
    planar_error_quantile_m,
    planar_laplace,
    planar_laplace_offsets,
    planar_offsets_from_units,
    randomized_response,
    rr_keep_probability,
    unit_laplace,
    unit_planar_draws,
)

N = 100_000
P_MIN = 1e-3  # reject a distributional hypothesis below this p-value
LAT0, LON0 = 39.9, 116.4  # Beijing (GeoLife)


# ----------------------------------------------------------------------------- helpers


def empirical_privacy_loss(a, b, bins, min_count=2000, z=4.0, min_bins=5):
    """Estimated max |log ratio| of bin frequencies, and its z-sigma lower confidence bound.

    Only bins holding ≥ ``min_count`` samples from both inputs count. The standard error of a
    log-ratio of two independent counts is ≈ sqrt(1/n_a + 1/n_b).
    """
    na, _ = np.histogram(a, bins)
    nb, _ = np.histogram(b, bins)
    ok = (na >= min_count) & (nb >= min_count)
    assert ok.sum() >= min(min_bins, len(bins) - 1), "too few bins with enough mass for the check"
    lr = np.abs(np.log(na[ok] / nb[ok]))
    sd = np.sqrt(1.0 / na[ok] + 1.0 / nb[ok])
    return float(lr.max()), float((lr - z * sd).max())


def satisfies_empirically(a, b, bins, eps):
    """True unless some bin's log-ratio exceeds ε beyond sampling error."""
    return empirical_privacy_loss(a, b, bins)[1] <= eps


def planar_north_projection(lat, lon, eps, radius_m, n, seed, noise_factor=1.0):
    """North metres (relative to LAT0, LON0) of n planar-Laplace outputs for one input point."""
    la, lo = planar_laplace(
        np.full(n, lat), np.full(n, lon), eps / noise_factor, radius_m, rng=seed
    )
    return degrees_to_metres(LAT0, LON0, la, lo)[1]


# ----------------------------------------------------------------------------- RNG and draw order


def test_as_rng_accepts_seed_types_and_passes_generators_through():
    gen = np.random.default_rng(5)
    assert as_rng(gen) is gen
    assert isinstance(as_rng(None), np.random.Generator)
    assert as_rng(7).random() == np.random.default_rng(7).random()
    assert as_rng(np.int64(7)).random() == np.random.default_rng(7).random()
    ss = np.random.SeedSequence(3)
    assert as_rng(ss).random() == np.random.default_rng(np.random.SeedSequence(3)).random()


@pytest.mark.parametrize("bad", ["1", 1.5, True, -1, np.random.RandomState(0), [1, 2]])
def test_as_rng_rejects_bad_types(bad):
    with pytest.raises(ParameterError, match="seed must be"):
        as_rng(bad)


def test_unit_planar_draws_order_is_all_radii_then_all_angles():
    radius, angle = unit_planar_draws(50, 11)
    ref = np.random.default_rng(11)
    np.testing.assert_array_equal(radius, ref.standard_exponential((2, 50)).sum(axis=0))
    np.testing.assert_array_equal(angle, ref.uniform(0.0, 2 * np.pi, 50))


def test_predrawn_units_reproduce_the_vectorised_mechanisms_exactly():
    """Sequential schemes scale pre-drawn unit variates; results equal the vectorised call."""
    x = np.linspace(-5, 5, 40)
    eps = np.linspace(0.1, 2.0, 40)
    np.testing.assert_array_equal(laplace(x, eps, 3.0, rng=4), x + 3.0 / eps * unit_laplace(40, 4))
    east, north = planar_laplace_offsets(eps, 50.0, 40, rng=9)
    e2, n2 = planar_offsets_from_units(*unit_planar_draws(40, 9), eps, 50.0)
    np.testing.assert_array_equal(east, e2)
    np.testing.assert_array_equal(north, n2)
    lat, lon = planar_laplace(np.full(40, LAT0), np.full(40, LON0), eps, 50.0, rng=9)
    lat2, lon2 = offset_points(LAT0, LON0, e2, n2)
    np.testing.assert_array_equal(lat, lat2)
    np.testing.assert_array_equal(lon, lon2)


def test_same_seed_same_output_different_seed_different_output():
    x = np.zeros(1000)
    np.testing.assert_array_equal(laplace(x, 1.0, rng=1), laplace(x, 1.0, rng=1))
    assert not np.array_equal(laplace(x, 1.0, rng=1), laplace(x, 1.0, rng=2))
    lat, lon = np.full(100, LAT0), np.full(100, LON0)
    a, b, c = (planar_laplace(lat, lon, 1.0, 100.0, rng=s) for s in (3, 3, 4))
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])
    bits = np.zeros(1000, dtype=bool)
    np.testing.assert_array_equal(
        randomized_response(bits, 0.5, 5), randomized_response(bits, 0.5, 5)
    )
    assert not np.array_equal(randomized_response(bits, 0.5, 5), randomized_response(bits, 0.5, 6))
    gen = np.random.default_rng(0)  # a shared generator advances between calls
    assert not np.array_equal(laplace(x, 1.0, rng=gen), laplace(x, 1.0, rng=gen))


# ----------------------------------------------------------------------------- Laplace


@pytest.mark.parametrize(("eps", "sens"), [(0.1, 1.0), (1.0, 1.0), (2.0, 5.0)])
def test_laplace_noise_matches_scipy_laplace(eps, sens):
    noise = laplace(np.zeros(N), eps, sens, rng=42)
    assert stats.kstest(noise, stats.laplace(scale=sens / eps).cdf).pvalue > P_MIN


def test_laplace_per_element_epsilon():
    eps = np.tile([0.5, 4.0], N // 2)
    noise = laplace(np.full(N, 10.0), eps, 2.0, rng=8) - 10.0
    assert stats.kstest(noise[0::2], stats.laplace(scale=4.0).cdf).pvalue > P_MIN
    assert stats.kstest(noise[1::2], stats.laplace(scale=0.5).cdf).pvalue > P_MIN


def test_laplace_class_parameters():
    mech = Laplace(0.5, sensitivity=2.0)
    assert mech.scale == 4.0
    assert mech.variance == 32.0
    out = mech.randomise(np.zeros(N), rng=1)
    assert out.var() == pytest.approx(32.0, rel=0.03)
    np.testing.assert_array_equal(out, laplace(np.zeros(N), 0.5, 2.0, rng=1))
    with pytest.raises(dataclasses.FrozenInstanceError):
        mech.epsilon = 2.0  # type: ignore[misc]


def test_laplace_empirical_privacy_loss_is_bounded_and_detected():
    eps, sens, n = 1.0, 1.0, 1_000_000
    bins = np.arange(-10.0, 11.0, 0.25)
    a = laplace(np.zeros(n), eps, sens, rng=101)
    b = laplace(np.full(n, sens), eps, sens, rng=102)
    estimate, lower = empirical_privacy_loss(a, b, bins)
    assert lower <= eps, "privacy loss exceeds epsilon beyond sampling error"
    assert estimate > 0.5 * eps, "the check does not see the privacy loss at all"
    # A broken mechanism with half the noise scale (really 2ε-DP) must fail the same check.
    a_bad = laplace(np.zeros(n), 2 * eps, sens, rng=103)
    b_bad = laplace(np.full(n, sens), 2 * eps, sens, rng=104)
    assert not satisfies_empirically(a_bad, b_bad, bins, eps)


# ----------------------------------------------------------------------------- planar Laplace


@pytest.mark.parametrize(("eps", "radius"), [(1.0, 100.0), (0.2, 50.0), (3.0, 500.0)])
def test_planar_distance_is_gamma_and_angle_uniform(eps, radius):
    lat, lon = planar_laplace(np.full(N, LAT0), np.full(N, LON0), eps, radius, rng=7)
    dist = haversine_m(LAT0, LON0, lat, lon)
    assert stats.kstest(dist, stats.gamma(a=2, scale=radius / eps).cdf).pvalue > P_MIN
    east, north = degrees_to_metres(LAT0, LON0, lat, lon)
    angle = np.mod(np.arctan2(north, east), 2 * np.pi)
    assert stats.kstest(angle, stats.uniform(0, 2 * np.pi).cdf).pvalue > P_MIN
    mean_err = PlanarLaplace(eps, radius).mean_error_m
    assert mean_err == 2 * radius / eps
    se = np.sqrt(2.0) * radius / eps / np.sqrt(N)  # sd of Gamma(2, s) is √2·s
    assert abs(dist.mean() - mean_err) < 5 * se


def test_planar_offsets_are_gamma_distance_and_uniform_angle():
    east, north = planar_laplace_offsets(0.5, 20.0, N, rng=12)
    dist = np.hypot(east, north)
    assert stats.kstest(dist, stats.gamma(a=2, scale=40.0).cdf).pvalue > P_MIN
    angle = np.mod(np.arctan2(north, east), 2 * np.pi)
    assert stats.kstest(angle, stats.uniform(0, 2 * np.pi).cdf).pvalue > P_MIN


def test_planar_class_parameters_and_quantiles():
    mech = PlanarLaplace(0.5, 100.0)
    assert mech.epsilon_per_metre == 0.005
    assert mech.mean_error_m == 400.0
    ref = stats.gamma(a=2, scale=200.0)
    p = np.concatenate([np.linspace(1e-4, 0.9999, 999), [0.5, 0.9, 0.95, 0.99]])
    np.testing.assert_allclose(mech.error_quantile_m(p), ref.ppf(p), rtol=1e-9)
    assert mech.error_quantile_m(0.95) == pytest.approx(ref.ppf(0.95), rel=1e-12)
    assert isinstance(mech.error_quantile_m(0.5), float)
    assert mech.error_quantile_m(0.0) == 0.0
    assert mech.error_quantile_m(1.0) == np.inf
    # tiny p: ρ ≈ sqrt(2p)/ε_geo, still accurate relative to the answer
    tiny = [1e-8, 1e-6]
    np.testing.assert_allclose(mech.error_quantile_m(tiny), ref.ppf(tiny), rtol=1e-6)
    with pytest.raises(ParameterError, match="p must lie in"):
        mech.error_quantile_m(1.5)
    lat, lon = mech.randomise(np.full(N, LAT0), np.full(N, LON0), rng=3)
    dist = haversine_m(LAT0, LON0, lat, lon)
    for q in (0.5, 0.9):  # empirical quantiles agree
        assert np.quantile(dist, q) == pytest.approx(mech.error_quantile_m(q), rel=0.02)


def test_lambert_w_lower_branch_matches_scipy():
    z = -np.concatenate([np.logspace(-300, -0.01, 500) / np.e, 1 / np.e - np.logspace(-7, -1, 50)])
    ref = special.lambertw(z, -1).real
    np.testing.assert_allclose(_lambertw_m1(z), ref, rtol=1e-10)
    # next to the branch point scipy itself loses accuracy: check the defining identity w·e^w = z
    z = -1 / np.e + np.logspace(-15, -7, 30)
    w = _lambertw_m1(z)
    assert np.all(w < -1)
    np.testing.assert_allclose(w * np.exp(w), z, rtol=1e-14)
    assert _lambertw_m1(-1 / np.e) == pytest.approx(-1.0)
    assert _lambertw_m1(0.0) == -np.inf


def test_planar_empirical_privacy_loss_is_bounded_and_detected():
    """Two locations exactly r apart (north); outputs projected on the joining axis."""
    eps, radius, n = 1.0, 100.0, 1_000_000
    lat_b, lon_b = offset_points(LAT0, LON0, 0.0, radius)
    assert haversine_m(LAT0, LON0, lat_b, lon_b) == pytest.approx(radius, rel=1e-9)
    bins = np.arange(-2000.0, 2100.0, 25.0)
    a = planar_north_projection(LAT0, LON0, eps, radius, n, 201)
    b = planar_north_projection(float(lat_b), float(lon_b), eps, radius, n, 202)
    estimate, lower = empirical_privacy_loss(a, b, bins)
    assert lower <= eps
    assert estimate > 0.5 * eps
    a_bad = planar_north_projection(LAT0, LON0, eps, radius, n, 203, noise_factor=0.5)
    b_bad = planar_north_projection(
        float(lat_b), float(lon_b), eps, radius, n, 204, noise_factor=0.5
    )
    assert not satisfies_empirically(a_bad, b_bad, bins, eps)


def test_latitude_clamped_and_longitude_wrapped():
    n = 20_000
    lat, lon = planar_laplace(np.full(n, 89.999), np.full(n, 0.0), 0.1, 100.0, rng=5)
    assert np.all((lat >= -90) & (lat <= 90))
    assert np.any(lat == 90.0)  # some offsets overshoot the pole and are clamped
    assert np.all((lon >= -180) & (lon < 180))
    lat, lon = planar_laplace(np.full(n, 0.0), np.full(n, 179.9999), 1.0, 100.0, rng=6)
    assert np.all((lon >= -180) & (lon < 180))
    crossed = lon < 0
    assert 0.3 < crossed.mean() < 0.7  # about half the points cross the antimeridian
    # crossing does not inflate the error: great-circle distance still Gamma(2, r/ε)
    dist = haversine_m(0.0, 179.9999, lat, lon)
    assert stats.kstest(dist, stats.gamma(a=2, scale=100.0).cdf).pvalue > P_MIN
    lat, lon = planar_laplace(np.full(n, -89.9999), np.full(n, -179.9999), 0.5, 1000.0, rng=7)
    assert np.all((lat >= -90) & (lat <= 90)) and np.all((lon >= -180) & (lon < 180))


def test_planar_per_element_epsilon_and_scalar_inputs():
    eps = np.tile([0.25, 2.0], N // 2)
    lat, lon = planar_laplace(np.full(N, LAT0), np.full(N, LON0), eps, 10.0, rng=14)
    dist = haversine_m(LAT0, LON0, lat, lon)
    assert stats.kstest(dist[0::2], stats.gamma(a=2, scale=40.0).cdf).pvalue > P_MIN
    assert stats.kstest(dist[1::2], stats.gamma(a=2, scale=5.0).cdf).pvalue > P_MIN
    la, lo = planar_laplace(LAT0, LON0, 1.0, 10.0, rng=1)
    assert np.shape(la) == () and np.shape(lo) == ()


# ----------------------------------------------------------------------------- randomised response


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_rr_keep_rate_matches_binomial(eps):
    p_keep = np.exp(eps) / (1 + np.exp(eps))
    assert rr_keep_probability(eps) == pytest.approx(p_keep, rel=1e-15)
    bits = np.arange(N) % 2 == 0
    kept = int((randomized_response(bits, eps, rng=21) == bits).sum())
    assert stats.binomtest(kept, N, p_keep).pvalue > P_MIN


def test_rr_class_and_extreme_epsilon():
    rr = RandomizedResponse(2.0)
    assert rr.keep_probability == pytest.approx(np.exp(2) / (1 + np.exp(2)))
    out = rr.randomise([0, 1, 1, 0], rng=1)
    assert out.dtype == bool and out.shape == (4,)
    assert RandomizedResponse(1000.0).keep_probability == 1.0  # no overflow
    bits = np.ones(1000, dtype=bool)
    np.testing.assert_array_equal(randomized_response(bits, 1000.0, rng=2), bits)


def test_rr_empirical_privacy_loss_equals_epsilon_and_broken_fails():
    eps, n = 1.0, 200_000
    bins = np.array([-0.5, 0.5, 1.5])
    a = randomized_response(np.zeros(n, dtype=bool), eps, rng=301).astype(float)
    b = randomized_response(np.ones(n, dtype=bool), eps, rng=302).astype(float)
    estimate, lower = empirical_privacy_loss(a, b, bins, min_count=1000)
    assert lower <= eps
    assert estimate == pytest.approx(eps, abs=0.05)  # the loss of RR is exactly ε
    a_bad = randomized_response(np.zeros(n, dtype=bool), 2 * eps, rng=303).astype(float)
    b_bad = randomized_response(np.ones(n, dtype=bool), 2 * eps, rng=304).astype(float)
    assert not satisfies_empirically(a_bad, b_bad, bins, eps)


# ----------------------------------------------------------------------------- validation


BAD_EPS = [
    (0.0, "must be > 0"),
    (-1.0, "must be > 0"),
    (float("nan"), "must be finite"),
    (float("inf"), "must be finite"),
    ("abc", "must be a number"),
    (None, "must be a number"),
]


@pytest.mark.parametrize(("eps", "message"), BAD_EPS)
def test_bad_epsilon_rejected_everywhere(eps, message):
    for call in (
        lambda: laplace([1.0, 2.0], eps),
        lambda: planar_laplace([LAT0], [LON0], eps, 100.0),
        lambda: planar_laplace_offsets(eps, 100.0, 3),
        lambda: randomized_response([0, 1], eps),
        lambda: Laplace(eps),
        lambda: PlanarLaplace(eps, 100.0),
        lambda: RandomizedResponse(eps),
    ):
        with pytest.raises(ParameterError, match=message):
            call()


@pytest.mark.parametrize(
    ("eps", "message"),
    [
        ([1.0, 0.0], "must be > 0"),
        ([1.0, np.nan], "must be finite"),
        ([1.0, -np.inf], "must be finite"),
    ],
)
def test_bad_epsilon_arrays_rejected(eps, message):
    with pytest.raises(ParameterError, match=message):
        laplace([1.0, 2.0], eps)
    with pytest.raises(ParameterError, match=message):
        planar_laplace([LAT0, LAT0], [LON0, LON0], eps, 10.0)


@pytest.mark.parametrize(
    ("radius", "message"),
    [
        (0.0, "radius_m must be > 0"),
        (-5.0, "radius_m must be > 0"),
        (np.nan, "radius_m must be finite"),
        (np.inf, "radius_m must be finite"),
        ("far", "radius_m must be a number"),
    ],
)
def test_bad_radius_rejected(radius, message):
    with pytest.raises(ParameterError, match=message):
        PlanarLaplace(1.0, radius)
    with pytest.raises(ParameterError, match=message):
        planar_laplace([LAT0], [LON0], 1.0, radius)
    with pytest.raises(ParameterError, match=message):
        planar_error_quantile_m(0.5, 1.0, radius)


def test_other_invalid_inputs():
    with pytest.raises(ParameterError, match="sensitivity must be > 0"):
        Laplace(1.0, sensitivity=0.0)
    with pytest.raises(ParameterError, match="values contains NaN"):
        laplace([1.0, np.nan], 1.0)
    with pytest.raises(ParameterError, match="values must be numeric"):
        laplace(["a", "b"], 1.0)
    with pytest.raises(ParameterError, match="shape mismatch"):
        laplace(np.zeros(3), np.ones(4))
    with pytest.raises(ParameterError, match="length mismatch"):
        planar_laplace([LAT0, LAT0], [LON0], 1.0, 10.0)
    with pytest.raises(ParameterError, match=r"lat must lie in \[-90, 90\]"):
        planar_laplace([91.0], [LON0], 1.0, 10.0)
    with pytest.raises(ParameterError, match="lon contains NaN"):
        planar_laplace([LAT0], [np.nan], 1.0, 10.0)
    with pytest.raises(ParameterError, match="shape mismatch"):
        planar_laplace([LAT0, LAT0], [LON0, LON0], [1.0, 1.0, 1.0], 10.0)
    with pytest.raises(ParameterError, match="bits must be 0/1"):
        randomized_response([0, 2], 1.0)
    with pytest.raises(ParameterError, match="bits must be 0/1"):
        randomized_response(["x"], 1.0)
    with pytest.raises(ParameterError, match="size must"):
        unit_laplace(-1, 0)
    with pytest.raises(ParameterError, match="size must"):
        unit_planar_draws(2.5, 0)
