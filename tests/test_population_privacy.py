"""Privacy of the personalised Sample + discrete-Laplace release (docs/personalised-dp.md).

* exact: for datasets differing in one user u, the likelihood ratio of one released cell,
  computed by enumerating every subset of kept records against the exact noise law, stays
  ≤ e^{ε_u} and reaches it (closed form 1 + π(e^τ − 1) = e^{ε_u}); users with ε_u ≥ τ get τ;
  a broken variant (u's record never sampled) is caught by the same check;
* composition: over u's bins, the per-bin losses satisfy the landmark guarantee ≤ ε_u;
* empirical audit: thousands of independent bins of the real release on neighbouring datasets;
  the observed ratios respect e^{ε_u}, and a deliberately broken release exceeds it.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lmdk_core as lm
from lmdk_core.population import Grid, release_population
from lmdk_core.population import core as pcore
from lmdk_core.population.noise import discrete_laplace_pmf, snap_tau

ONE = 2.0**53


def code_keep_prob(eps, tau, mode="sample"):
    """The exact keep probability the release uses: its integer threshold / 2^53."""
    return pcore.keep_thresholds(np.asarray(eps, dtype=float), tau, mode) / ONE


def output_pmf(keep_probs, tau, ks):
    """Pr[released count = k] by enumerating every kept subset (independent of the code)."""
    out = np.zeros(len(ks))
    n = len(keep_probs)
    for kept in itertools.product((0, 1), repeat=n):
        p = math.prod(q if b else 1 - q for q, b in zip(keep_probs, kept, strict=True))
        if p == 0:
            continue
        out += p * discrete_laplace_pmf(np.asarray(ks) - sum(kept), tau)
    return out


def max_log_ratio(others, u_prob, tau, ks=range(-40, 60)):
    ks = list(ks)
    with_u = output_pmf([*others, u_prob], tau, ks)
    without = output_pmf(others, tau, ks)
    return float(np.max(np.abs(np.log(with_u) - np.log(without))))


budgets = st.floats(0.01, 3.0)


@settings(max_examples=60)
@given(eps_u=budgets, tau=st.floats(0.05, 3.0), others=st.lists(budgets, max_size=4))
def test_exact_ratio_is_personal_epsilon_or_tau(eps_u, tau, others):
    tau = snap_tau(tau)
    probs = list(code_keep_prob(others, tau))
    u = float(code_keep_prob([eps_u], tau)[0])
    loss = max_log_ratio(probs, u, tau)
    personal = min(eps_u, tau)
    assert loss <= personal + 1e-9
    # closed form: the worst output (far tail) has ratio exactly 1 + π(e^τ − 1)
    assert loss == pytest.approx(math.log1p(u * math.expm1(tau)), rel=1e-6, abs=1e-9)
    assert loss == pytest.approx(personal, rel=1e-6, abs=1e-9)


def test_users_at_or_above_tau_get_tau():
    tau = snap_tau(0.8)
    probs = code_keep_prob([0.8, 1.5, 5.0], tau)
    assert np.all(probs == 1.0)
    assert max_log_ratio([0.3], 1.0, tau) == pytest.approx(tau, rel=1e-6)


def test_threshold_mode_drops_users_below_tau():
    tau = snap_tau(1.0)
    assert list(code_keep_prob([0.5, 0.999, 1.0, 2.0], tau, "threshold")) == [0, 0, 1, 1]


def test_broken_variant_is_caught():
    """No sampling (u kept at τ although ε_u < τ) exceeds e^{ε_u}: the check can fail."""
    tau, eps_u = snap_tau(2.0), 0.3
    loss = max_log_ratio([0.5], 1.0, tau)
    assert loss > eps_u + 0.5


@settings(max_examples=80)
@given(eps_u=st.floats(0.05, 5.0), tau=st.floats(0.01, 5.0),
       mask=st.lists(st.booleans(), min_size=1, max_size=40),
       scheme=st.sampled_from(["uniform", "skip", "user"]))
def test_per_bin_losses_keep_landmark_guarantee(eps_u, tau, mask, scheme):
    tau = snap_tau(tau)
    L = np.array(mask)
    eps_t = lm.allocate(scheme, L.size, L, epsilon=eps_u)
    p = code_keep_prob(eps_t, tau)
    loss = np.log1p(p * math.expm1(tau))  # exact per-bin loss of Sample + τ-DP counts
    assert np.all(loss <= np.minimum(eps_t, tau) + 1e-12)
    assert lm.landmark_guarantee(loss, L).max() <= eps_u * (1 + 1e-12)


# ----------------------------------------------------------------------------- empirical audit

N_BINS = 20_000


def _audit_data(with_u: bool):
    """One cell, N_BINS one-hour bins; each user has one point per bin (each bin is an
    independent run of the mechanism)."""
    users = ["a", "b", "c"] + (["u"] if with_u else [])
    start = pd.Timestamp("2020-01-01", tz="UTC")
    t = start + pd.to_timedelta(np.arange(N_BINS) * 3600 + 60, unit="s")
    frames = [pd.DataFrame({"uid": uid, "time": t, "lat": 40.0, "lon": 116.0}) for uid in users]
    grid = Grid(bbox=(39.99, 40.01, 115.99, 116.01), cell_m=5000, start=start, bin_s=3600,
                n_bins=N_BINS)
    assert grid.n_cells == 1
    prefs = pd.DataFrame({"uid": ["a", "b", "c", "u"], "epsilon": [1.0, 3.0, 0.4, 0.2]})
    return pd.concat(frames, ignore_index=True), prefs, grid


def _empirical_loss(counts_d, counts_d2):
    """Largest |log ratio| over events {count >= m} with >= 2000 hits in both runs."""
    worst = 0.0
    for m in range(int(min(counts_d.min(), counts_d2.min())), int(max(counts_d.max(),
                                                                     counts_d2.max())) + 1):
        a, b = (counts_d >= m).mean(), (counts_d2 >= m).mean()
        if min(a, b) * N_BINS >= 2000 and max(a, b) * N_BINS <= N_BINS - 2000:
            worst = max(worst, abs(math.log(a / b)), abs(math.log((1 - a) / (1 - b))))
    return worst


@pytest.mark.parametrize("broken", [False, True])
def test_empirical_audit(monkeypatch, broken):
    if broken:  # deliberately broken: every record kept, whatever its budget
        monkeypatch.setattr(pcore, "keep_thresholds",
                            lambda eps, tau, mode: np.full(np.shape(eps), 1 << 53, np.int64))
    d, prefs, grid = _audit_data(True)
    d2, _, _ = _audit_data(False)
    kw = dict(grid=grid, scheme="skip", tau=2.0, rng=11)
    c1 = release_population(d, prefs, **kw).counts.ravel()
    c2 = release_population(d2, prefs, **dict(kw, rng=12)).counts.ravel()
    loss = _empirical_loss(c1, c2)
    eps_u = 0.2
    if broken:
        assert loss > eps_u + 0.3  # the audit detects the broken mechanism
    else:
        assert loss <= eps_u + 0.08  # sampling error of 20k bins is well below 0.08


def test_keep_coins_keep_each_record_with_probability_pi():
    """Binomial test of the Sample coins: u's records (one per bin) are kept at rate π."""
    from scipy import stats

    d, prefs, grid = _audit_data(True)
    rel = release_population(d, prefs, grid=grid, scheme="skip", tau=2.0, rng=21)
    users = rel.private.users.set_index("uid")
    tau = rel.tau
    for uid in ["a", "c", "u"]:
        eps = users.loc[uid, "epsilon"]
        pi = math.expm1(eps) / math.expm1(tau)
        kept, n = int(users.loc[uid, "kept"]), int(users.loc[uid, "records"])
        assert n == N_BINS
        assert stats.binomtest(kept, n, pi).pvalue > 1e-3
    assert users.loc["b", "kept"] == N_BINS  # ε_b = 3 >= τ: always kept
