"""The exact integer noise of published counts: its law (χ²) at sensitivity 1 and 2 (the
population's counts: parameter τ/2), the exact Bernoulli(e^-γ) coins, τ snapping, and refusal of
bad parameters."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from lmdk_core.errors import ParameterError
from lmdk_core.population.noise import (
    MOVE_SENSITIVITY,
    TAU_DENOMINATOR,
    bernoulli_exp,
    count_noise_tau,
    discrete_laplace,
    discrete_laplace_pmf,
    publish_counts,
    snap_tau,
)


@pytest.mark.parametrize("tau, sensitivity", [(0.1, 1), (0.7, 1), (2.5, 1), (0.7, 2),
                                              (2.5, MOVE_SENSITIVITY)])
def test_discrete_laplace_matches_its_law(tau, sensitivity):
    """Pr[y] ∝ exp(−(τ/Δ)|y|): the law the proofs use, τ/Δ exactly (Δ·2^20 the denominator)."""
    x = discrete_laplace(60_000, tau, rng=np.random.default_rng(5), sensitivity=sensitivity)
    tau = snap_tau(tau) / sensitivity
    if sensitivity == MOVE_SENSITIVITY:
        assert tau == count_noise_tau(tau * sensitivity)
    assert x.dtype == np.int64
    lim = int(np.ceil(4 / tau))
    ks = np.arange(-lim, lim + 1)
    expected = discrete_laplace_pmf(ks, tau) * x.size
    observed = np.array([(x == k).sum() for k in ks], dtype=float)
    # pool both tails into the end bins so every expected count is >= 5
    expected[0] += discrete_laplace_pmf(np.arange(-10 * lim, -lim), tau).sum() * x.size
    expected[-1] += discrete_laplace_pmf(np.arange(lim + 1, 10 * lim), tau).sum() * x.size
    observed[0] += (x < -lim).sum()
    observed[-1] += (x > lim).sum()
    keep = expected >= 5
    assert stats.chisquare(observed[keep], expected[keep] * observed[keep].sum()
                           / expected[keep].sum()).pvalue > 1e-3


def test_bernoulli_exp_frequencies():
    rng = np.random.default_rng(3)
    for num, den in [(0, 5), (1, 1), (3, 7), (7, 7)]:
        draws = bernoulli_exp(np.full(40_000, num), den, rng=rng)
        assert stats.binomtest(int(draws.sum()), draws.size, np.exp(-num / den)).pvalue > 1e-3


def test_same_generator_state_gives_same_noise_and_data_never_changes_draws():
    a = publish_counts(np.zeros(1000, dtype=np.int64), 0.5, rng=np.random.default_rng(9))
    b = publish_counts(np.arange(1000, dtype=np.int64), 0.5, rng=np.random.default_rng(9))
    assert np.array_equal(b - np.arange(1000), a)  # noise is independent of the counts


def test_snap_tau_rounds_down_onto_the_grid():
    t = snap_tau(0.123456789)
    assert t <= 0.123456789 and 0.123456789 - t < 1 / TAU_DENOMINATOR
    assert (t * TAU_DENOMINATOR).is_integer()


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), 1e-9, 51, "x"])
def test_bad_tau_refused(bad):
    with pytest.raises(ParameterError):
        snap_tau(bad)


def test_publish_counts_refuses_float_counts():
    with pytest.raises(ParameterError, match="integers"):
        publish_counts(np.array([1.5]), 1.0, rng=0)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, 65])
def test_bad_sensitivity_refused(bad):
    with pytest.raises(ParameterError, match="sensitivity"):
        publish_counts(np.array([1]), 1.0, rng=0, sensitivity=bad)
