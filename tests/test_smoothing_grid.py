"""The batched likelihood of smooth_release's variance fit (lmdk_core.smoothing._loglik_grid):
the same numbers as one filter pass per candidate variance (and, for motion="auto", per candidate
model: all models share one pass), and the exact Gaussian likelihood of the observations
(prediction-error decomposition checked against the dense covariance)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from lmdk_core import smoothing as sm
from lmdk_core.noise.apply import read_only


def _per_r(y, obs, dt, r_grid, q, code, tau, step, gap):
    """The fit's former loop: one _kalman_rts filter pass per variance."""
    out = []
    y, obs, dt = (read_only(a) for a in (y, obs, dt))  # as smooth_release passes them
    for rr in r_grid:
        _, sl, sn, no = sm._kalman_rts(y, obs, dt, rr, q, code, tau, sm._v0(code, q, rr, step),
                                       0.0, False, gap, sm._RESET * rr)
        out.append(-0.5 * (sl + no * math.log(rr) + sn / rr))
    return np.array(out)


def _dense_rw(y, obs, dt, r, q):
    """log p(y_obs[1:] | y_obs[0]) − constants, random walk, from the dense covariance: given the
    first observation the position starts at N(y0, r) and diffuses by q per second."""
    t = np.cumsum(np.where(np.arange(dt.size) == 0, 0.0, dt))
    idx = np.flatnonzero(obs)
    first, rest = idx[0], idx[1:]
    tau = t[rest] - t[first]
    cov = r + q * np.minimum.outer(tau, tau) + r * np.eye(rest.size)
    sign, logdet = np.linalg.slogdet(cov)
    assert sign > 0
    ll = 0.0
    for a in range(y.shape[1]):
        d = y[rest, a] - y[first, a]
        ll += -0.5 * (logdet + d @ np.linalg.solve(cov, d))
    return ll


CASE = st.tuples(st.integers(3, 25), st.integers(0, 2**31 - 1), st.sampled_from([0, 1, 2]))


@settings(max_examples=15, deadline=None)
@given(CASE)
def test_batched_grid_is_the_per_variance_filter_exactly(case):
    n, seed, code = case
    rng = np.random.default_rng(seed)
    y = np.cumsum(rng.normal(0, 30.0, (n, 2)), axis=0) + rng.normal(0, 50.0, (n, 2))
    obs = rng.random(n) < 0.8
    dt = rng.uniform(1.0, 120.0, n)
    dt[rng.random(n) < 0.1] = 5000.0  # gaps: restarts
    q, tau = [(300.0, 0.0), (0.05, 0.0), (3.0, 120.0)][code]
    grid = sorted(float(f) * 2500.0 for f in sm._R_GRID)
    got = sm._grid_loglik(y, obs, dt, grid, q, code, tau, 30.0, 600.0)
    want = _per_r(y, obs, dt, grid, q, code, tau, 30.0, 600.0)
    np.testing.assert_array_equal(got, want)


@settings(max_examples=15, deadline=None)
@given(st.integers(3, 25), st.integers(0, 2**31 - 1))
def test_all_models_in_one_pass_are_each_models_filter_exactly(n, seed):
    """motion="auto"'s one pass over every candidate (random walks take a velocity-free path)
    gives each model's per-variance filter numbers bit for bit, with a cv model mixed in."""
    rng = np.random.default_rng(seed)
    y = np.cumsum(rng.normal(0, 30.0, (n, 2)), axis=0) + rng.normal(0, 50.0, (n, 2))
    obs = rng.random(n) < 0.8
    dt = rng.uniform(1.0, 120.0, n)
    dt[rng.random(n) < 0.1] = 5000.0  # gaps: restarts
    models = (*sm.CANDIDATES, ("cv", 0.05, 0.0))
    grid = sorted(float(f) * 2500.0 for f in sm._R_GRID)
    got = sm._models_loglik(y, obs, dt, grid, models, 30.0, 600.0)
    want = [_per_r(y, obs, dt, grid, q, sm._KINDS[kind], tau, 30.0, 600.0)
            for kind, q, tau in models]
    np.testing.assert_array_equal(got, np.array(want))


def _what_auto_reads(grid_ll):
    """Per model: its best value and the first R index with it; the weights of motion='auto'."""
    best = grid_ll.max(axis=1)
    first = np.argmax(grid_ll, axis=1)
    w = np.exp(best - best.max())
    w[w < sm._W_MIN] = 0.0
    return best, first, w / w.sum()


@settings(max_examples=20, deadline=None)
@given(st.integers(40, 400), st.integers(0, 2**31 - 1), st.floats(0.2, 5.0),
       st.sampled_from([4, 16, 64]))
def test_pruned_grid_gives_auto_the_same_fits(n, seed, noise, every):
    """The pruned grid leaves exactly what motion='auto' reads: each model with weight its best
    value and first best R, every weight, and which model is best; pruned values are -inf."""
    rng = np.random.default_rng(seed)
    y = np.cumsum(rng.normal(0, 30.0, (n, 2)), axis=0) + rng.normal(0, 50.0 * noise, (n, 2))
    obs = rng.random(n) < 0.8
    dt = rng.uniform(1.0, 120.0, n)
    dt[rng.random(n) < 0.02] = 5000.0
    grid = sorted(float(f) * 2500.0 * noise**2 for f in sm._R_GRID)
    full = sm._models_loglik(y, obs, dt, grid, sm.CANDIDATES, 30.0, 600.0)
    old = sm._PRUNE_EVERY
    sm._PRUNE_EVERY = every
    try:
        pruned = sm._models_loglik(y, obs, dt, grid, sm.CANDIDATES, 30.0, 600.0, prune=True)
    finally:
        sm._PRUNE_EVERY = old
    assert np.all((pruned == full) | (pruned == -np.inf))
    fb, ff, fw = _what_auto_reads(full)
    pb, pf, pw = _what_auto_reads(pruned)
    np.testing.assert_array_equal(pw, fw)
    kept = fw > 0
    np.testing.assert_array_equal(pb[kept], fb[kept])
    np.testing.assert_array_equal(pf[kept], ff[kept])
    assert np.argmax(pb) == np.argmax(fb)


def test_pruning_drops_work_and_a_wrong_bound_changes_the_fit(monkeypatch):
    """On a long series most cells stop early (the test above is not vacuous); a bound that is
    not one (limits raised by a little) drops a model's best R and changes what auto reads."""
    rng = np.random.default_rng(3)
    n = 3000
    y = np.cumsum(rng.normal(0, 30.0, (n, 2)), axis=0) + rng.normal(0, 50.0, (n, 2))
    obs, dt = np.ones(n, dtype=bool), np.full(n, 30.0)
    grid = sorted(float(f) * 2500.0 for f in sm._R_GRID)
    full = sm._models_loglik(y, obs, dt, grid, sm.CANDIDATES, 30.0, 600.0)
    pruned = sm._models_loglik(y, obs, dt, grid, sm.CANDIDATES, 30.0, 600.0, prune=True)
    assert np.isinf(pruned).mean() > 0.5
    assert _what_auto_reads(pruned)[0].max() == _what_auto_reads(full)[0].max()
    kernel = sm._loglik_grid

    def too_high(*args):
        args = list(args)
        args[9] = args[9] + 50.0  # limits: "every model reaches 50 more than it does"
        return kernel(*args)

    monkeypatch.setattr(sm, "_loglik_grid", too_high)
    wrong = sm._models_loglik(y, obs, dt, grid, sm.CANDIDATES, 30.0, 600.0, prune=True)
    assert not np.isfinite(_what_auto_reads(wrong)[0]).all() or not np.array_equal(
        _what_auto_reads(wrong)[1], _what_auto_reads(full)[1])


@settings(max_examples=20, deadline=None)
@given(st.integers(3, 20), st.integers(0, 2**31 - 1))
def test_batched_grid_is_the_gaussian_likelihood(n, seed):
    rng = np.random.default_rng(seed)
    y = np.cumsum(rng.normal(0, 30.0, (n, 2)), axis=0) + rng.normal(0, 50.0, (n, 2))
    obs = rng.random(n) < 0.8
    obs[:2] = True
    dt = rng.uniform(1.0, 120.0, n)
    grid = [400.0, 2500.0, 9000.0]
    got = sm._grid_loglik(y, obs, dt, grid, 300.0, 0, 0.0, 30.0, math.inf)
    want = [_dense_rw(y, obs, dt, r, 300.0) for r in grid]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-6)


def test_the_dense_reference_has_power():
    """A wrong diffusion (q off by 2x) gives a different likelihood than the kernel's."""
    rng = np.random.default_rng(7)
    y = np.cumsum(rng.normal(0, 30.0, (15, 2)), axis=0) + rng.normal(0, 50.0, (15, 2))
    obs = np.ones(15, dtype=bool)
    dt = np.full(15, 30.0)
    got = sm._grid_loglik(y, obs, dt, [2500.0], 300.0, 0, 0.0, 30.0, math.inf)[0]
    assert abs(got - _dense_rw(y, obs, dt, 2500.0, 600.0)) > 1e-3
