"""Randomised response of the pattern PPMs: drawn by lmdk_core.noise's exact RR, exact
thresholds, flip rates (binomial and χ² with fixed seeds), refusals."""

from __future__ import annotations

from decimal import Decimal, getcontext

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from lmdk_core.errors import ParameterError
from lmdk_core.noise import as_source
from lmdk_core.noise.apply import noisy_bits
from lmdk_core.patterns import RR_MAX_EPSILON, flip_mask, flip_probability, flip_threshold
from lmdk_core.patterns.rr import realised_epsilon

getcontext().prec = 60
TWO40 = Decimal(2**40)


@settings(max_examples=200)
@given(st.floats(1e-6, RR_MAX_EPSILON))
def test_realised_epsilon_never_exceeds_eps_exactly(eps):
    """ε₀ = k/2^40 ≤ ε in 60-digit decimals (so (1 − q₀)/q₀ = e^{ε₀} ≤ e^ε), and ε − ε₀ < 2^-40."""
    k = int(flip_threshold(eps))
    e0 = Decimal(k) / TWO40
    assert e0 <= Decimal(eps) < e0 + 1 / TWO40
    assert Decimal(realised_epsilon(eps)) == e0
    q0 = 1 / (1 + e0.exp())  # the flip probability the exact sampler realises
    # float64 display value: relative 1e-12 while q₀ is a normal float (ε₀ < ~708), then tiny
    tol = max(q0 * Decimal("1e-12"), Decimal("1e-300"))
    assert abs(Decimal(float(flip_probability(eps))) - q0) <= tol
    assert q0 >= 1 / (1 + Decimal(eps).exp())


@settings(max_examples=50)
@given(st.floats(1e-300, 1e-6))
def test_tiny_budgets_stay_private_in_both_directions(eps):
    """0 ≤ ε₀ ≤ ε, so q₀ ≤ 1/2 and neither ratio (1 − q₀)/q₀ nor q₀/(1 − q₀) exceeds e^ε."""
    k = int(flip_threshold(eps))
    assert 0 <= Decimal(k) / TWO40 <= Decimal(eps)
    assert float(flip_probability(eps)) <= 0.5


@pytest.mark.parametrize("eps", [0.05, 0.5, 2.0, 6.0])
def test_flip_rate_within_binomial_bounds(eps):
    n = 200_000
    flips = flip_mask(np.full(n, flip_threshold(eps)), rng=12345 + int(eps * 100))
    q = 1 / (1 + np.exp(eps))
    p_value = stats.binomtest(int(flips.sum()), n, q).pvalue
    assert p_value > 1e-4, (flips.mean(), q)


def test_broken_rate_is_detected():
    """The same binomial check rejects a flip rate 10 % off (the test can fail)."""
    n = 200_000
    flips = flip_mask(np.full(n, flip_threshold(1.0 * 0.8)), rng=7)
    q = 1 / (1 + np.exp(1.0))
    assert stats.binomtest(int(flips.sum()), n, q).pvalue < 1e-6


def _chi2_mixed(flips: np.ndarray, eps: np.ndarray, classes: np.ndarray) -> float:
    """χ² p-value of (flip, keep) counts per budget class against 1/(1 + e^ε)."""
    q = 1 / (1 + np.exp(eps))
    obs = np.array([[flips[classes == c].sum(), (~flips[classes == c]).sum()]
                    for c in range(q.size)])
    n = obs.sum(axis=1)
    exp = np.column_stack([n * q, n * (1 - q)])
    return float(stats.chisquare(obs.ravel(), exp.ravel(), ddof=q.size).pvalue)


def test_mixed_thresholds_and_pairs_chi_square():
    """Per-element thresholds (4 budgets interleaved): each class flips at its own rate, and
    consecutive decisions of one budget are independent (χ² on the 4 pair outcomes)."""
    eps = np.array([0.1, 0.7, 1.5, 3.0])
    classes = np.random.default_rng(1).integers(0, 4, 120_000)
    flips = flip_mask(flip_threshold(eps[classes]), rng=2)
    assert _chi2_mixed(flips, eps, classes) > 1e-4
    # the check can fail: the same flips read against budgets swapped between two classes
    assert _chi2_mixed(flips, eps[[1, 0, 2, 3]], classes) < 1e-6
    one = flip_mask(flip_threshold(0.7), rng=3, size=100_001)
    pairs = one[:-1:2].astype(int) * 2 + one[1::2]
    q = 1 / (1 + np.exp(0.7))
    want = np.array([(1 - q) ** 2, (1 - q) * q, q * (1 - q), q * q]) * pairs.size
    assert stats.chisquare(np.bincount(pairs, minlength=4), want).pvalue > 1e-4


def test_flips_are_drawn_by_the_package_noise_implementation():
    """flip_mask is noise.apply.noisy_bits (exact RR) on all-False bits, draw for draw."""
    k = flip_threshold(np.array([0.2, 1.0, 4.0] * 500))
    want, achieved = noisy_bits(np.zeros(k.size, bool), budget=k / 2.0**40, source=as_source(11))
    np.testing.assert_array_equal(flip_mask(k, rng=11), want)
    np.testing.assert_array_equal(achieved, k / 2.0**40)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), RR_MAX_EPSILON * 1.01, 1e308,
                                 float("inf")])
def test_unsafe_or_invalid_budgets_are_refused(bad):
    with pytest.raises(ParameterError):
        flip_threshold(bad)


def test_bad_thresholds_and_sizes_are_refused():
    with pytest.raises(ParameterError, match="thresholds"):
        flip_mask(np.array([-1]), rng=0)
    with pytest.raises(ParameterError, match="size"):
        flip_mask(np.array([1, 2]), rng=0, size=3)


def test_seed_reproducible_and_fresh_entropy_differs():
    k = np.full(1000, flip_threshold(0.3))
    np.testing.assert_array_equal(flip_mask(k, rng=3), flip_mask(k, rng=3))
    assert not np.array_equal(flip_mask(k), flip_mask(k))  # OS entropy: 2^-1000-ish to collide
    assert 0 < flip_probability(0.3) < 0.5


def test_one_randomised_response_limit_everywhere():
    """ONE ε limit for randomised response (issue 24, finding 10): the exact sampler's domain,
    RR_MAX_EPSILON = 2^20 (ε used as the int64 ⌊ε·2^40⌋), named once in lmdk_core.noise.apply
    and used by noisy_bits, randomized_response, RandomizedResponse and the pattern-level PPMs;
    every one of them accepts the limit itself and refuses just above it, naming the limit."""
    from lmdk_core.mechanisms import RandomizedResponse, randomized_response
    from lmdk_core.noise import apply
    from lmdk_core.patterns import EventStream, Pattern, rr, uniform_ppm

    assert apply.RR_MAX_EPSILON == 2.0**20
    assert rr.RR_MAX_EPSILON is apply.RR_MAX_EPSILON and RR_MAX_EPSILON is apply.RR_MAX_EPSILON
    assert not hasattr(rr, "MAX_RR_EPSILON")  # the old second limit (25) is gone
    assert int(flip_threshold(RR_MAX_EPSILON)) == 2**60  # fits int64 with room
    assert 0.0 <= flip_probability(RR_MAX_EPSILON) < 1e-300  # no overflow at the limit
    above = np.nextafter(RR_MAX_EPSILON, np.inf)
    stream = EventStream.from_arrays(tick_uid=np.zeros(3, np.int64),
                                     tick_time=np.arange(3) * 10**9, event_tick=[0],
                                     event_type=[0], types=("A", "B"))
    pat = [Pattern(("A", "B"), 10, private=True)]
    at_limit = [
        lambda e: apply.noisy_bits(np.ones(3, bool), budget=np.full(3, e), source=as_source(1)),
        lambda e: randomized_response([1, 0, 1], epsilon=e, rng=1),
        lambda e: RandomizedResponse(epsilon=e).randomise([1, 0], rng=1),
        lambda e: flip_threshold(e),
        lambda e: uniform_ppm(stream, pat, epsilon=2 * e, rng=1),  # ε/m = e per event
    ]
    for call in at_limit:
        call(RR_MAX_EPSILON)  # accepted
        with pytest.raises(ParameterError, match=r"RR_MAX_EPSILON = 2\^20"):
            call(above)
