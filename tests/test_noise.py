"""The exact samplers, their grids, and Mironov's replay attack (issue 9).

Fixed seeds: deterministic on every machine. χ² tests reject below p = 0.001; each statistical
check is shown to reject a deliberately broken sampler (wrong scale).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from lmdk_core import ParameterError
from lmdk_core.mechanisms import laplace, planar_laplace
from lmdk_core.noise import RandomSource, as_source
from lmdk_core.noise.apply import noisy_values
from lmdk_core.noise.discrete import (
    BitStream,
    discrete_laplace_array,
    discrete_laplace_pmf,
    uniform_below,
)
from lmdk_core.noise.exact import (
    T_MAX,
    great_circle_m,
    lattice_index,
    lattice_params,
    value_params,
)
from lmdk_core.noise.source import registered

P_MIN = 1e-3


# ----------------------------------------------------------------------------- the sampler


def chi2_pvalue(z, t, s=1):
    """χ² test of integer samples against the closed-form discrete Laplace pmf (tails merged)."""
    n = z.size
    a = s / t
    zmax = int(np.ceil(math.log(n * math.tanh(a / 2) / 5.0) / a))  # expected count ≥ 5 inside
    edges = np.arange(-zmax, zmax + 1)
    p = discrete_laplace_pmf(edges, t, s)
    tail = math.exp(-a * (zmax + 1)) * math.tanh(a / 2) / (1 - math.exp(-a))  # Σ_{z>zmax}
    expected = np.concatenate([[tail], p, [tail]]) * n
    clipped = np.clip(z, -zmax - 1, zmax + 1) + zmax + 1
    observed = np.bincount(clipped, minlength=2 * zmax + 3)
    assert observed.sum() == n and expected.sum() == pytest.approx(n, rel=1e-9)
    return stats.chisquare(observed, expected).pvalue


@pytest.mark.parametrize(("t", "s"), [(1, 1), (3, 1), (7, 3), (2, 5), (40, 1), (1500, 1)])
def test_discrete_laplace_pmf_matches_closed_form(t, s):
    z = discrete_laplace_array(t, s, 200_000, RandomSource.seeded(t * 100 + s))
    assert chi2_pvalue(z, t, s) > P_MIN


@pytest.mark.parametrize(("t", "wrong_t"), [(3, 4), (40, 44), (1500, 1600)])
def test_chi2_rejects_a_sampler_with_the_wrong_scale(t, wrong_t):
    z = discrete_laplace_array(wrong_t, 1, 200_000, RandomSource.seeded(t))
    assert chi2_pvalue(z, t) < P_MIN


def test_sampler_tails_and_huge_scales():
    """Scale 2^53: still exact integers; sd = √2·scale within sampling error."""
    z = discrete_laplace_array(T_MAX, 1, 20_000, RandomSource.seeded(5))
    assert z.dtype == np.int64
    sd = z.astype(float).std() / T_MAX
    assert sd == pytest.approx(math.sqrt(2), rel=0.05)


def test_seeded_sources_are_reproducible_and_secure_ones_fresh():
    a = discrete_laplace_array(10, 1, 1000, RandomSource.seeded(1))
    b = discrete_laplace_array(10, 1, 1000, RandomSource.seeded(1))
    np.testing.assert_array_equal(a, b)
    s1, s2 = RandomSource.secure(), RandomSource.secure()
    assert s1.is_secure and not RandomSource.seeded(1).is_secure
    assert not np.array_equal(s1.words(64), s2.words(64))  # fresh keys
    w = s1.words(1 << 16)  # keystream bits look uniform (a smoke test, not a proof)
    ones = np.unpackbits(w.view(np.uint8)).mean()
    assert abs(ones - 0.5) < 5 * 0.5 / math.sqrt(w.size * 64)
    assert as_source(None).is_secure and as_source(s1) is s1


def test_a_failing_source_releases_nothing():
    class Broken(RandomSource):
        def fill(self, out):
            raise OSError("entropy source gone")

    with pytest.raises(RuntimeError, match="nothing was released"):
        discrete_laplace_array(10, 1, 10, Broken(generator=np.random.default_rng(0)))
    with registered(RandomSource.seeded(0)) as sid:
        assert sid > 0


@settings(max_examples=25, deadline=None)
@given(m=st.integers(2, 2**62), seed=st.integers(0, 2**32))
def test_uniform_below_reads_chunks_of_the_bit_length_of_m_minus_1(m, seed):
    """uniform_below(m): k = bit length of m − 1 bits per try (rejection from 2^k), the value
    the first k-bit chunk of the stream below m — checked against the stream read as one
    Python integer (bit i of word j is stream bit 64·j + i); a k one too small or too large
    reads other chunks and fails."""
    k = (m - 1).bit_length()
    with BitStream(RandomSource.seeded(seed)) as (buf, st_, fn):
        u, used = int(uniform_below(buf, st_, fn, m)), int(st_[0])
        stream = int.from_bytes(buf[:used // 64 + 1].tobytes(), "little")
    chunks = [(stream >> (i * k)) & ((1 << k) - 1) for i in range(used // k)]
    assert used % k == 0 and chunks[-1] == u < m and all(c >= m for c in chunks[:-1])


# ----------------------------------------------------------------------------- grids


@settings(max_examples=200)
@given(st.floats(1e-6, 1e6), st.floats(1e-6, 1e4))
def test_value_grid_bounds_hold_exactly(delta, eps):
    g, d, t = value_params(delta, eps)
    assert math.frexp(g)[0] == 0.5  # a power of two
    assert g <= min(delta, delta / eps) / 1024 < 2 * g
    assert d == math.floor(Fraction(delta) / Fraction(g)) + 1
    assert Fraction(int(d), int(t)) <= Fraction(eps)  # ε' = D/t ≤ ε, exactly
    assert d / t > eps * (1 - 2e-3)  # and barely below


@settings(max_examples=200)
@given(st.floats(-1e6, 1e6), st.floats(0, 1), st.floats(1e-3, 1e3), st.floats(1e-3, 1e2))
def test_neighbours_stay_within_d_grid_units(x, frac, delta, eps):
    """|round(x/g) − round(x'/g)| ≤ D for |x − x'| ≤ Δ (exact rational rounding as reference)."""
    g, d, _ = value_params(delta, eps)
    x2 = x + frac * delta
    if abs(Fraction(x2) - Fraction(x)) > Fraction(delta):
        return  # x + frac·Δ rounded beyond Δ: not neighbours
    k1 = round(Fraction(x) / Fraction(g))
    k2 = round(Fraction(x2) / Fraction(g))
    assert abs(k1 - k2) <= d


@settings(max_examples=150)
@given(st.floats(1e-2, 1e7), st.floats(1e-4, 1e4))
def test_lattice_scale_bounds_hold_exactly(radius, eps):
    g, d, t = lattice_params(radius, eps)
    assert math.frexp(g)[0] == 0.5 and g <= min(radius, radius / eps) / 1024
    assert Fraction(int(d), int(t)) <= Fraction(eps)
    assert d >= math.sqrt(3) * radius / g + 3 - 1  # D bounds the L1 lattice shift (next test)


def _destination(lat, lon, bearing, dist_m):
    """Spherical destination point (float; its true distance is re-measured by the caller)."""
    p1, l1, b, a = np.radians(lat), np.radians(lon), np.radians(bearing), dist_m / 6_371_008.8
    p2 = np.arcsin(np.sin(p1) * np.cos(a) + np.cos(p1) * np.sin(a) * np.cos(b))
    l2 = l1 + np.arctan2(np.sin(b) * np.sin(a) * np.cos(p1), np.cos(a) - np.sin(p1) * np.sin(p2))
    return float(np.degrees(p2)), float((np.degrees(l2) + 180.0) % 360.0 - 180.0)


@settings(max_examples=300)
@given(st.floats(-90, 90), st.floats(-180, 180), st.floats(0, 360), st.floats(0.01, 1),
       st.sampled_from([1.0, 50.0, 200.0, 5_000.0, 100_000.0, 2_000_000.0]),
       st.sampled_from([0.01, 0.5, 1.0, 10.0]))
def test_lattice_l1_shift_is_at_most_d_everywhere(lat, lon, bearing, frac, radius, eps):
    """Poles, antimeridian, any radius: two points within r differ by ≤ D lattice units (L1)."""
    lat2, lon2 = _destination(lat, lon, bearing, frac * radius)
    dist = great_circle_m(lat, lon, lat2, lon2)
    r = dist * (1 + 1e-12) + 1e-7  # the pair is within r (distance error < 2e-8 m)
    g, d, _ = lattice_params(r, eps)
    k1 = np.array(lattice_index(lat, lon, g))
    k2 = np.array(lattice_index(lat2, lon2, g))
    assert np.abs(k1 - k2).sum() <= d


def test_the_sqrt3_in_d_is_needed():
    """Without √3 (D = r/g + 3, a planar-style bound) diagonal pairs exceed it: the test above
    can fail."""
    rng = np.random.default_rng(1)
    worst = -np.inf
    for _ in range(300):
        lat, lon = rng.uniform(-80, 80), rng.uniform(-180, 180)
        lat2, lon2 = _destination(lat, lon, rng.uniform(0, 360), 1000.0)
        g = lattice_params(1000.0, 1.0)[0]
        l1 = np.abs(np.array(lattice_index(lat, lon, g))
                    - np.array(lattice_index(lat2, lon2, g))).sum()
        worst = max(worst, l1 - (math.floor(1000.0 / g) + 3))
    assert worst > 100


def test_domain_limits_refused_clearly():
    with pytest.raises(ParameterError, match="outside the exact noise grid"):
        laplace([0.0], epsilon=1e-15)
    with pytest.raises(ParameterError, match="outside the exact lattice"):
        planar_laplace([0.0], [0.0], epsilon=1e9, radius_m=1e-3)
    from lmdk_core import release_values

    for scheme in ("uniform", "adaptive", "bd", "ba"):  # vectorised and kernel paths
        with pytest.raises(ParameterError, match="too large for the noise grid"):
            release_values([1e300, 0.0], [], epsilon=1.0, scheme=scheme)
    with pytest.raises(ParameterError, match="too large for the noise grid"):
        laplace([1e300], epsilon=1.0)


# ----------------------------------------------------------------------------- Mironov replay


def _numpy_unit_laplace(u):
    """numpy's Generator.laplace(0, 1) given its uniform u (random_laplace in distributions.c)."""
    return -math.log(2.0 - u - u) if u >= 0.5 else math.log(u + u)


def test_numpy_laplace_is_replayed_bit_exactly():
    """Our replay of numpy's float sampler is exact, so the attack below is about numpy."""
    draws = np.random.default_rng(11).laplace(0.0, 1.0, 2000)
    units = np.random.default_rng(11).random(2000)
    replay = np.array([_numpy_unit_laplace(u) for u in units])
    np.testing.assert_array_equal(draws, replay)


def _old_release(x, scale, u):
    """The old release path: x + (Δ/ε)·Laplace(0, 1) in float64."""
    return x + scale * _numpy_unit_laplace(u)


def _producible_by_old(o, x, scale):
    """Is there a uniform u on numpy's 2^-53 grid with _old_release(x, scale, u) == o?

    The release is monotone non-decreasing in u: binary-search the smallest k (u = k·2^-53)
    with release ≥ o and compare.
    """
    lo, hi = 1, 2**53 - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if _old_release(x, scale, mid * 2.0**-53) >= o:
            hi = mid
        else:
            lo = mid + 1
    return _old_release(x, scale, lo * 2.0**-53) == o


@pytest.mark.parametrize("eps", [1.0, 0.1, 0.01])
def test_replay_attack_breaks_numpy_float_laplace(eps):
    """~81 % of releases from x = 0 cannot come from x' = 1: they reveal x with certainty."""
    units = np.random.default_rng(7).random(600)
    outputs = [_old_release(0.0, 1.0 / eps, u) for u in units if u > 0]
    impossible = np.mean([not _producible_by_old(o, 1.0, 1.0 / eps) for o in outputs])
    assert 0.74 < impossible < 0.88


@pytest.mark.parametrize("eps", [1.0, 0.1, 0.01])
def test_replay_attack_finds_nothing_on_the_exact_grid(eps):
    """Safe releases from x = 0 and x' = 1: every output of one is an output of the other, and
    its exact probability ratio is at most e^ε' (closed form over the shared grid)."""
    g, d, t = value_params(1.0, eps)
    out0, _ = noisy_values(np.zeros(5000), budget=np.full(5000, eps), sensitivity=1.0,
                           source=RandomSource.seeded(3))
    out1, _ = noisy_values(np.ones(5000), budget=np.full(5000, eps), sensitivity=1.0,
                           source=RandomSource.seeded(4))
    k0, k1 = round(0.0 / g), round(1.0 / g)
    for out in (out0, out1):
        m = out / g
        assert np.all(m == np.round(m))  # on the shared grid, hence in both supports
        log_ratio = (np.abs(m - k1) - np.abs(m - k0)) / t  # log P_0(o) − log P_1(o), exact
        assert np.abs(log_ratio).max() <= d / t <= eps


@pytest.mark.parametrize(("lat", "lon"), [(70.0, 116.4), (89.98, 30.0), (0.0, 179.9999)])
def test_replay_on_the_lattice_finds_nothing_for_locations_r_apart(lat, lon):
    """Lattice outputs m = k + Z (Z³) of x and of x' r metres away: every m is in both
    supports, and its exact probability ratio is at most e^ε' (closed form, L1 distances)."""
    eps, r = 0.5, 200.0
    lat2, lon2 = _destination(lat, lon, 57.0, r * (1 - 1e-9))
    g, d, t = lattice_params(r, eps)
    k = np.array(lattice_index(lat, lon, g))
    k2 = np.array(lattice_index(lat2, lon2, g))
    for base, seed in ((k, 1), (k2, 2)):
        m = base + discrete_laplace_array(t, 1, 30_000, RandomSource.seeded(seed)).reshape(-1, 3)
        log_ratio = (np.abs(m - k2).sum(axis=1) - np.abs(m - k).sum(axis=1)) / t
        assert np.abs(log_ratio).max() <= d / t <= eps


# ----------------------------------------------------------------------------- empirical ε


def _empirical_loss(a, b, min_count=2000, z=4.0):
    """(max |log ratio| over integers with ≥ min_count hits in both, its z-sigma lower bound)."""
    lo, hi = min(a.min(), b.min()), max(a.max(), b.max())
    na = np.bincount(a - lo, minlength=hi - lo + 1)
    nb = np.bincount(b - lo, minlength=hi - lo + 1)
    ok = (na >= min_count) & (nb >= min_count)
    assert ok.sum() >= 5
    lr = np.abs(np.log(na[ok] / nb[ok]))
    sd = np.sqrt(1.0 / na[ok] + 1.0 / nb[ok])
    return float(lr.max()), float((lr - z * sd).max())


def test_empirical_privacy_of_the_value_mechanism_and_a_broken_one():
    """Lattice outputs for neighbours D grid units apart: loss ≤ ε' = D/t, and a sampler at
    half the scale is caught.

    200,000 draws each: each integer holding ≥ 2,000 of both is a 4-sigma check (fewer such
    integers than at 10^6 draws, so a false failure is no likelier); the estimate is 0.78 and
    the half-scale sampler's lower bound 1.47 (1.49 at 10^6), its value 56 sd above ε'."""
    d, t, n = 3, 4, 200_000  # ε' = 0.75 (a coarse grid makes counts per integer large)
    eps = d / t
    a = discrete_laplace_array(t, 1, n, RandomSource.seeded(21))
    b = discrete_laplace_array(t, 1, n, RandomSource.seeded(22)) + d
    estimate, lower = _empirical_loss(a, b)
    assert lower <= eps and estimate > 0.9 * eps
    a_bad = discrete_laplace_array(t, 2, n, RandomSource.seeded(23))  # scale t/2: 2ε' really
    b_bad = discrete_laplace_array(t, 2, n, RandomSource.seeded(24)) + d
    assert _empirical_loss(a_bad, b_bad)[1] > eps


# ----------------------------------------------------------------------------- releases


@settings(max_examples=15)
@given(st.integers(1, 300), st.floats(0.05, 20.0), st.integers(0, 2**31),
       st.sampled_from(["event", "user", "uniform", "skip", "adaptive", "bd", "ba"]))
def test_every_release_reports_an_achieved_epsilon_within_its_guarantee(n, eps, seed, scheme):
    """achieved_epsilon = max_t Σ_{i∈L∪{t}} ε'_i: at most the budget's guarantee, barely below."""
    from lmdk_core import landmark_guarantee, release_locations, release_values

    rng = np.random.default_rng(seed)
    mask = rng.random(n) < 0.2
    params = {"w": 5} if scheme in ("bd", "ba") else {}
    for rel in (
        release_values(rng.normal(0, 5, n), mask, epsilon=eps, scheme=scheme, rng=seed,
                       **params),
        release_locations((40 + rng.normal(0, 1e-3, n), 116 + rng.normal(0, 1e-3, n)), mask,
                          epsilon=eps, scheme=scheme, radius_m=150.0, rng=seed, **params),
    ):
        g = float(landmark_guarantee(rel.budget, mask).max())
        achieved = rel.params["achieved_epsilon"]
        assert rel.params["noise"] == "safe"
        assert achieved <= g <= eps * (1 + 1e-12) or scheme == "event"
        assert achieved >= g * (1 - 3e-3)


def test_release_refuses_an_unknown_noise_mode():
    from lmdk_core import release_values

    with pytest.raises(ParameterError, match="noise must be 'safe' or 'fast'"):
        release_values([1.0, 2.0], [], epsilon=1.0, scheme="uniform", noise="numpy")


# ----------------------------------------------------------------------------- vetted reference


def _two_sample_chi2(a, b, cap=12):
    """p-value of a χ² homogeneity test of two integer samples (|z| > cap merged)."""
    bins = np.arange(-cap - 1, cap + 2)
    ca = np.bincount(np.clip(a, -cap - 1, cap + 1) - bins[0], minlength=bins.size)
    cb = np.bincount(np.clip(b, -cap - 1, cap + 1) - bins[0], minlength=bins.size)
    return stats.chi2_contingency(np.stack([ca, cb])).pvalue


@pytest.mark.slow
def test_matches_opendp_discrete_laplace():
    """Same law as OpenDP's vetted discrete Laplace sampler (optional test dependency)."""
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib")
    meas = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int),
                             scale=3.0)
    ref = np.array(meas([0] * 30_000), dtype=np.int64)
    ours = discrete_laplace_array(3, 1, 30_000, RandomSource.seeded(8))
    assert _two_sample_chi2(ours, ref) > P_MIN
    wrong = discrete_laplace_array(4, 1, 30_000, RandomSource.seeded(9))  # scale 4, not 3
    assert _two_sample_chi2(wrong, ref) < P_MIN



def _exact_rr_flip(eps: float):
    from decimal import Decimal, getcontext

    getcontext().prec = 60
    return 1 / (1 + Decimal(eps).exp())


@given(st.floats(min_value=0.0, max_value=math.log(2.0**53), allow_nan=False))
@settings(max_examples=200)
def test_fast_rr_flip_probability_never_below_the_exact_one(eps):
    """Fast RR's achieved ε' ≤ ε needs q ≥ 1/(1+e^ε) exactly (checked in 60-digit decimals):
    the float 0.5·(1 − tanh(ε/2)) errs by about one 2^-53 unit, which rounding UP to the 2^-53
    grid of a float uniform covers."""
    from decimal import Decimal

    from lmdk_core.noise.apply import rr_flip_probability_fast

    q = Decimal(float(rr_flip_probability_fast(np.array([eps]))[0]))
    exact = _exact_rr_flip(eps)
    assert q >= exact
    assert q <= exact * (1 + Decimal(2) ** -30) + Decimal(2) ** -51  # and barely above


def test_the_exact_flip_check_catches_rounding_to_nearest():
    """The same check fails for a deliberately broken variant that rounds to the nearest grid
    point instead of up (half the ε in [0.01, 37) then exceed their budget)."""
    from decimal import Decimal

    bad = [e / 100 for e in range(1, 3700)
           if Decimal(round(0.5 * (1.0 - math.tanh(e / 200)) * 2.0**53) * 2.0**-53)
           < _exact_rr_flip(e / 100)]
    assert len(bad) > 1000


# Issue 24 finding 4: for ε ≲ 3e-16 the integer noise scale t overflowed to a negative int64,
# passed "t <= 2^53", and the samplers returned 19 % of points within 1 m of the truth
# (planar_laplace) or 59 % of values exactly (laplace); release paths failed later with
# "eps must be >= 0". Every entry point now refuses ε outside the exact domain, naming it.
TINY = (3e-16, 1e-16, 1e-18, 5e-324)


@pytest.mark.parametrize("eps", TINY)
def test_tiny_epsilon_is_refused_by_every_sampler(eps):
    import lmdk_core as lm

    lat, lon = np.full(50, 40.0), np.full(50, 116.0)
    calls = {
        "planar_laplace": lambda: lm.planar_laplace(lat, lon, epsilon=eps, radius_m=200.0),
        "laplace": lambda: lm.laplace(np.zeros(50), epsilon=eps),
        "release_locations": lambda: lm.release_locations(
            pd.DataFrame({"lat": lat, "lon": lon}), epsilon=eps, scheme="uniform"),
        "release_values": lambda: lm.release_values(np.zeros(50), epsilon=eps, scheme="uniform"),
    }
    for name, call in calls.items():
        with pytest.raises(ParameterError, match="outside the exact") as info:
            call()
        assert "epsilon" in str(info.value), name


def test_the_domain_limit_is_where_the_scale_stops_being_exact():
    """Just inside the stated limit the samplers work and are noisy; the check is not a blanket
    refusal of small ε."""
    from lmdk_core.noise.apply import check_lattice_domain, check_value_domain

    check_value_domain(1.0, budget=np.array([1e-12]))
    check_lattice_domain(200.0, budget=np.array([1e-12]))
    out = laplace(np.zeros(1000), epsilon=1e-12)
    assert np.mean(out == 0.0) < 0.01
