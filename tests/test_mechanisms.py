"""Statistical tests of the noise mechanisms (fixed seeds: deterministic on every machine).

The default ``noise="safe"`` mechanisms are tested here through their public functions; the
exact samplers themselves (mass functions, replay attack, lattice DP level) in test_noise.py.

Distribution tests use Kolmogorov–Smirnov / binomial tests on 10⁵ draws against scipy references
and fail below p = 0.001. The empirical privacy checks histogram the outputs for neighbouring
inputs and bound the log-ratio of bin frequencies; each check is shown to detect a mechanism
that uses half the noise it should.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import stats

from lmdk_core import ParameterError
from lmdk_core.geo import EARTH_RADIUS_M, degrees_to_metres, haversine_m, offset_points
from lmdk_core.mechanisms import (
    Laplace,
    PlanarLaplace,
    RandomizedResponse,
    as_rng,
    laplace,
    planar_laplace,
    randomized_response,
    rr_keep_probability,
    unit_laplace,
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
    """North metres (relative to LAT0, LON0) of n lattice-mechanism outputs for one input."""
    la, lo = planar_laplace(
        np.full(n, lat), np.full(n, lon), epsilon=eps / noise_factor, radius_m=radius_m, rng=seed
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
    assert as_rng(rng=7).random() == np.random.default_rng(7).random()  # the project's name
    with pytest.warns(DeprecationWarning, match="seed_or_rng= is deprecated: pass rng="):
        assert as_rng(seed_or_rng=7).random() == np.random.default_rng(7).random()
    with pytest.raises(ParameterError, match="not both"):
        as_rng(rng=7, seed_or_rng=7)


@pytest.mark.parametrize("bad", ["1", 1.5, True, -1, np.random.RandomState(0), [1, 2]])
def test_as_rng_rejects_bad_types(bad):
    with pytest.raises(ParameterError, match="seed must be"):
        as_rng(bad)


def test_fast_and_safe_draw_the_same_law():
    """noise="fast" (float) and "safe" (exact grid) releases agree in distribution."""
    safe = laplace(np.zeros(N), epsilon=0.7, sensitivity=2.0, rng=31)
    fast = laplace(np.zeros(N), epsilon=0.7, sensitivity=2.0, rng=32, noise="fast")
    assert stats.ks_2samp(safe, fast).pvalue > P_MIN
    lat, lon = np.full(N // 2, LAT0), np.full(N // 2, LON0)
    d_safe = haversine_m(LAT0, LON0, *planar_laplace(lat, lon, epsilon=0.5, radius_m=100.0, rng=33))
    d_fast = haversine_m(LAT0, LON0, *planar_laplace(lat, lon, epsilon=0.5, radius_m=100.0, rng=34,
                                                     noise="fast"))
    assert stats.ks_2samp(d_safe, d_fast).pvalue > P_MIN


def test_same_seed_same_output_different_seed_different_output():
    x = np.zeros(1000)
    np.testing.assert_array_equal(laplace(x, epsilon=1.0, rng=1), laplace(x, epsilon=1.0, rng=1))
    assert not np.array_equal(laplace(x, epsilon=1.0, rng=1), laplace(x, epsilon=1.0, rng=2))
    lat, lon = np.full(100, LAT0), np.full(100, LON0)
    a, b, c = (planar_laplace(lat, lon, epsilon=1.0, radius_m=100.0, rng=s) for s in (3, 3, 4))
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])
    bits = np.zeros(1000, dtype=bool)
    np.testing.assert_array_equal(
        randomized_response(bits, epsilon=0.5, rng=5), randomized_response(bits, epsilon=0.5, rng=5)
    )
    assert not np.array_equal(randomized_response(bits, epsilon=0.5, rng=5),
                              randomized_response(bits, epsilon=0.5, rng=6))
    gen = np.random.default_rng(0)  # a shared generator advances between calls
    assert not np.array_equal(laplace(x, epsilon=1.0, rng=gen), laplace(x, epsilon=1.0, rng=gen))


# ----------------------------------------------------------------------------- Laplace


@pytest.mark.parametrize("noise", ["safe", "fast"])
@pytest.mark.parametrize(("eps", "sens"), [(0.1, 1.0), (1.0, 1.0), (2.0, 5.0)])
def test_laplace_noise_matches_scipy_laplace(eps, sens, noise):
    """The grid (≤ 1/1024 of the scale) is invisible to a KS test at 10⁵ draws."""
    out = laplace(np.zeros(N), epsilon=eps, sensitivity=sens, rng=42, noise=noise)
    assert stats.kstest(out, stats.laplace(scale=sens / eps).cdf).pvalue > P_MIN
    g = Laplace(epsilon=eps, sensitivity=sens).grid
    if noise == "safe":  # every output lies on the data-independent grid
        np.testing.assert_array_equal(out / g, np.round(out / g))


def test_laplace_per_element_epsilon():
    eps = np.tile([0.5, 4.0], N // 2)
    noise = laplace(np.full(N, 10.0), epsilon=eps, sensitivity=2.0, rng=8) - 10.0
    assert stats.kstest(noise[0::2], stats.laplace(scale=4.0).cdf).pvalue > P_MIN
    assert stats.kstest(noise[1::2], stats.laplace(scale=0.5).cdf).pvalue > P_MIN


def test_laplace_class_parameters():
    mech = Laplace(epsilon=0.5, sensitivity=2.0)
    assert mech.grid == 2.0**-9 and mech.achieved_epsilon <= 0.5
    assert mech.achieved_epsilon == pytest.approx(0.5, rel=2e-3)
    assert mech.scale == pytest.approx(4.0, rel=2e-3)
    assert mech.variance == pytest.approx(32.0, rel=4e-3)
    out = mech.randomise(np.zeros(N), rng=1)
    assert out.var() == pytest.approx(mech.variance, rel=0.03)
    np.testing.assert_array_equal(out, laplace(np.zeros(N), epsilon=0.5, sensitivity=2.0, rng=1))
    with pytest.raises(dataclasses.FrozenInstanceError):
        mech.epsilon = 2.0  # type: ignore[misc]


def test_laplace_empirical_privacy_loss_is_bounded_and_detected():
    """200,000 draws each, as the planar test below: 16 bins hold ≥ 2,000 of both (the normal
    approximation's floor), each a 4-sigma check, so a false failure stays below 16·P(Z > 4) =
    5e-4; the 2ε mechanism's lower bound is 1.95 here (per-bin sd ≈ 0.03), ≈ 30 sd above ε."""
    eps, sens, n = 1.0, 1.0, 200_000
    bins = np.arange(-10.0, 11.0, 0.25)
    a = laplace(np.zeros(n), epsilon=eps, sensitivity=sens, rng=101)
    b = laplace(np.full(n, sens), epsilon=eps, sensitivity=sens, rng=102)
    estimate, lower = empirical_privacy_loss(a, b, bins)
    assert lower <= eps, "privacy loss exceeds epsilon beyond sampling error"
    assert estimate > 0.5 * eps, "the check does not see the privacy loss at all"
    # A broken mechanism with half the noise scale (really 2ε-DP) must fail the same check.
    a_bad = laplace(np.zeros(n), epsilon=2 * eps, sensitivity=sens, rng=103)
    b_bad = laplace(np.full(n, sens), epsilon=2 * eps, sensitivity=sens, rng=104)
    assert not satisfies_empirically(a_bad, b_bad, bins, eps)


# ----------------------------------------------------------------------------- planar Laplace


@pytest.mark.parametrize("noise", ["safe", "fast"])
@pytest.mark.parametrize(("eps", "radius"), [(1.0, 100.0), (0.2, 50.0), (3.0, 500.0)])
def test_planar_axes_are_laplace_where_the_tangent_plane_is_axis_aligned(eps, radius, noise):
    """At (0°, 0°) east is the ECEF y axis and north the z axis: each offset is Laplace(b)."""
    mech = PlanarLaplace(epsilon=eps, radius_m=radius)
    b = mech.axis_scale_m
    assert b == pytest.approx(np.sqrt(3) * radius / eps, rel=3e-3)
    lat, lon = planar_laplace(np.zeros(N), np.zeros(N), epsilon=eps, radius_m=radius, rng=7,
                              noise=noise)
    north = np.sin(np.radians(lat)) * EARTH_RADIUS_M  # z / R·R: exact for the z coordinate
    east = np.tan(np.radians(lon)) * EARTH_RADIUS_M  # y/x·R, x ≈ R ± noise (tiny bias)
    assert stats.kstest(north, stats.laplace(scale=b).cdf).pvalue > P_MIN
    assert stats.kstest(east, stats.laplace(scale=b).cdf).pvalue > P_MIN


def test_planar_mean_error_and_isotropy():
    mech = PlanarLaplace(epsilon=0.5, radius_m=100.0)
    assert mech.epsilon_per_metre == 0.005
    assert mech.achieved_epsilon <= 0.5
    assert mech.mean_error_m == pytest.approx(2.8637 * 200.0, rel=3e-3)
    # random locations over the sphere: the orientation average is what mean_error_m states
    rng = np.random.default_rng(0)
    lat0 = np.degrees(np.arcsin(rng.uniform(-1, 1, N)))
    lon0 = rng.uniform(-180, 180, N)
    lat, lon = mech.randomise(lat0, lon0, rng=3)
    dist = haversine_m(lat0, lon0, lat, lon)
    assert dist.mean() == pytest.approx(mech.mean_error_m, rel=0.01)
    east, north = degrees_to_metres(LAT0, LON0, *mech.randomise(
        np.full(N, LAT0), np.full(N, LON0), rng=4))
    se = mech.axis_scale_m * np.sqrt(2 / N)
    assert abs(east.mean()) < 5 * se and abs(north.mean()) < 5 * se  # no drift


def test_planar_empirical_privacy_loss_is_bounded_and_detected():
    """Two locations exactly r apart (north); outputs projected on the joining axis."""
    eps, radius, n = 1.0, 100.0, 200_000
    lat_b, lon_b = offset_points(LAT0, LON0, 0.0, radius)
    assert haversine_m(LAT0, LON0, lat_b, lon_b) == pytest.approx(radius, rel=1e-9)
    bins = np.arange(-2000.0, 2100.0, 100.0)
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


def test_outputs_valid_at_the_poles_and_across_the_antimeridian():
    n = 20_000
    lat, lon = planar_laplace(np.full(n, 89.999), np.full(n, 0.0), epsilon=0.1, radius_m=100.0,
                              rng=5)
    assert np.all((lat >= -90) & (lat <= 90)) and np.all((lon >= -180) & (lon < 180))
    # over the pole the error is the same law as anywhere: no clamping pile-up at 90°
    dist = haversine_m(89.999, 0.0, lat, lon)
    assert dist.mean() == pytest.approx(PlanarLaplace(epsilon=0.1, radius_m=100.0).mean_error_m,
                                        rel=0.03)
    lat, lon = planar_laplace(np.full(n, 0.0), np.full(n, 179.9999), epsilon=1.0, radius_m=100.0,
                              rng=6)
    assert np.all((lon >= -180) & (lon < 180))
    crossed = lon < 0
    assert 0.3 < crossed.mean() < 0.7  # about half the points cross the antimeridian
    dist = haversine_m(0.0, 179.9999, lat, lon)  # crossing does not inflate the error
    assert dist.mean() == pytest.approx(PlanarLaplace(epsilon=1.0, radius_m=100.0).mean_error_m,
                                        rel=0.03)
    lat, lon = planar_laplace(np.full(n, -89.9999), np.full(n, -179.9999), epsilon=0.5,
                              radius_m=1000.0, rng=7)
    assert np.all((lat >= -90) & (lat <= 90)) and np.all((lon >= -180) & (lon < 180))


def test_planar_per_element_epsilon_and_scalar_inputs():
    eps = np.tile([0.25, 2.0], N // 2)
    lat, _ = planar_laplace(np.zeros(N), np.zeros(N), epsilon=eps, radius_m=10.0, rng=14)
    north = np.sin(np.radians(lat)) * EARTH_RADIUS_M
    for sl, e in ((slice(0, None, 2), 0.25), (slice(1, None, 2), 2.0)):
        b = PlanarLaplace(epsilon=e, radius_m=10.0).axis_scale_m
        assert stats.kstest(north[sl], stats.laplace(scale=b).cdf).pvalue > P_MIN
    la, lo = planar_laplace(LAT0, LON0, epsilon=1.0, radius_m=10.0, rng=1)
    assert np.shape(la) == () and np.shape(lo) == ()


# ----------------------------------------------------------------------------- randomised response


@pytest.mark.parametrize("noise", ["safe", "fast"])
@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_rr_keep_rate_matches_binomial(eps, noise):
    p_keep = np.exp(eps) / (1 + np.exp(eps))
    assert rr_keep_probability(eps) == pytest.approx(p_keep, rel=1e-15)
    bits = np.arange(N) % 2 == 0
    kept = int((randomized_response(bits, epsilon=eps, rng=21, noise=noise) == bits).sum())
    assert stats.binomtest(kept, N, p_keep).pvalue > P_MIN


def test_rr_class_and_extreme_epsilon():
    rr = RandomizedResponse(epsilon=2.0)
    assert rr.keep_probability == pytest.approx(np.exp(2) / (1 + np.exp(2)))
    out = rr.randomise([0, 1, 1, 0], rng=1)
    assert out.dtype == bool and out.shape == (4,)
    assert RandomizedResponse(epsilon=1000.0).keep_probability == 1.0  # no overflow
    assert RandomizedResponse(epsilon=2.0).achieved_epsilon == 2.0  # dyadic: exact
    assert 0 < 0.1 - RandomizedResponse(epsilon=0.1).achieved_epsilon < 2**-40
    bits = np.ones(1000, dtype=bool)
    # exact RR has no floating-point limit: a flip stays possible, just rare (e^-1000)
    np.testing.assert_array_equal(randomized_response(bits, epsilon=1000.0, rng=2), bits)
    with pytest.raises(ParameterError, match=r"largest safe epsilon is 36\.7368"):
        randomized_response(bits, epsilon=37.0, rng=2, noise="fast")
    with pytest.raises(ParameterError, match=r"RR_MAX_EPSILON = 2\^20 = 1048576"):
        randomized_response(bits, epsilon=2.0**21, rng=2)
    with pytest.raises(ParameterError, match=r"RR_MAX_EPSILON = 2\^20 = 1048576"):
        RandomizedResponse(epsilon=2.0**21)


def test_rr_empirical_privacy_loss_equals_epsilon_and_broken_fails():
    eps, n = 1.0, 200_000
    bins = np.array([-0.5, 0.5, 1.5])
    a = randomized_response(np.zeros(n, dtype=bool), epsilon=eps, rng=301).astype(float)
    b = randomized_response(np.ones(n, dtype=bool), epsilon=eps, rng=302).astype(float)
    estimate, lower = empirical_privacy_loss(a, b, bins, min_count=1000)
    assert lower <= eps
    assert estimate == pytest.approx(eps, abs=0.05)  # the loss of RR is exactly ε
    a_bad = randomized_response(np.zeros(n, dtype=bool), epsilon=2 * eps, rng=303).astype(float)
    b_bad = randomized_response(np.ones(n, dtype=bool), epsilon=2 * eps, rng=304).astype(float)
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
        lambda: laplace([1.0, 2.0], epsilon=eps),
        lambda: planar_laplace([LAT0], [LON0], epsilon=eps, radius_m=100.0),
        lambda: randomized_response([0, 1], epsilon=eps),
        lambda: Laplace(epsilon=eps),
        lambda: PlanarLaplace(epsilon=eps, radius_m=100.0),
        lambda: RandomizedResponse(epsilon=eps),
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
        laplace([1.0, 2.0], epsilon=eps)
    with pytest.raises(ParameterError, match=message):
        planar_laplace([LAT0, LAT0], [LON0, LON0], epsilon=eps, radius_m=10.0)


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
        PlanarLaplace(epsilon=1.0, radius_m=radius)
    with pytest.raises(ParameterError, match=message):
        planar_laplace([LAT0], [LON0], epsilon=1.0, radius_m=radius)


def test_other_invalid_inputs():
    with pytest.raises(ParameterError, match="sensitivity must be > 0"):
        Laplace(epsilon=1.0, sensitivity=0.0)
    with pytest.raises(ParameterError, match="values contains NaN"):
        laplace([1.0, np.nan], epsilon=1.0)
    with pytest.raises(ParameterError, match="values must be numeric"):
        laplace(["a", "b"], epsilon=1.0)
    with pytest.raises(ParameterError, match="shape mismatch"):
        laplace(np.zeros(3), epsilon=np.ones(4))
    with pytest.raises(ParameterError, match="length mismatch"):
        planar_laplace([LAT0, LAT0], [LON0], epsilon=1.0, radius_m=10.0)
    with pytest.raises(ParameterError, match=r"lat must lie in \[-90, 90\]"):
        planar_laplace([91.0], [LON0], epsilon=1.0, radius_m=10.0)
    with pytest.raises(ParameterError, match="lon contains NaN"):
        planar_laplace([LAT0], [np.nan], epsilon=1.0, radius_m=10.0)
    with pytest.raises(ParameterError, match="shape mismatch"):
        planar_laplace([LAT0, LAT0], [LON0, LON0], epsilon=[1.0, 1.0, 1.0], radius_m=10.0)
    with pytest.raises(ParameterError, match="bits must be 0/1"):
        randomized_response([0, 2], epsilon=1.0)
    with pytest.raises(ParameterError, match="bits must be 0/1"):
        randomized_response(["x"], epsilon=1.0)
    with pytest.raises(ParameterError, match="size must"):
        unit_laplace(-1, rng=0)
    with pytest.raises(ParameterError, match="noise must be 'safe' or 'fast'"):
        laplace([1.0], epsilon=1.0, noise="exact")
