"""Floating-point-safe randomised response: exact thresholds, flip rates, refusals."""

from __future__ import annotations

from decimal import Decimal, getcontext

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from lmdk_core.errors import ParameterError
from lmdk_core.patterns import MAX_RR_EPSILON, flip_mask, flip_probability, flip_threshold
from lmdk_core.patterns.rr import realised_epsilon

getcontext().prec = 60


@settings(max_examples=200)
@given(st.floats(1e-6, MAX_RR_EPSILON))
def test_realised_ratio_never_exceeds_e_eps_exactly(eps):
    """(2^53 − k)/k ≤ e^ε in 60-digit decimal arithmetic, and k/2^53 is close to 1/(1+e^ε)."""
    k = int(flip_threshold(eps))
    ratio = (Decimal(2**53) - k) / Decimal(k)
    assert ratio <= Decimal(eps).exp()
    q = 1 / (1 + Decimal(eps).exp())
    assert Decimal(k) / Decimal(2**53) - q <= q * Decimal("2e-5") + Decimal(2) ** -53
    assert realised_epsilon(eps) <= eps


@settings(max_examples=50)
@given(st.floats(1e-300, 1e-6))
def test_tiny_budgets_stay_private_in_both_directions(eps):
    """k ≤ 2^52, so q' ≤ 1/2 and neither ratio (1 − q')/q' nor q'/(1 − q') exceeds e^ε."""
    k = int(flip_threshold(eps))
    assert k <= 2**52
    lo, hi = sorted((Decimal(k), Decimal(2**53) - k))
    assert hi / lo <= Decimal(eps).exp()


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


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), MAX_RR_EPSILON * 1.01, 1e308,
                                 float("inf")])
def test_unsafe_or_invalid_budgets_are_refused(bad):
    with pytest.raises(ParameterError):
        flip_threshold(bad)


def test_seed_reproducible_and_fresh_entropy_differs():
    k = np.full(1000, flip_threshold(0.3))
    np.testing.assert_array_equal(flip_mask(k, rng=3), flip_mask(k, rng=3))
    assert not np.array_equal(flip_mask(k), flip_mask(k))  # OS entropy: 2^-1000-ish to collide
    assert 0 < flip_probability(0.3) < 0.5
