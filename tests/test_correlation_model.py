"""Model provenance, the DP transition counts and the model-based TPL-bounded allocation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from correlation_exact import case_exact
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from lmdk_core.correlation import (
    CorrelationModel,
    allocate_bounded_tpl,
    allocate_for_model,
    discrete_laplace,
    dp_grid_model,
    model_loss,
    public_grid_model,
    trajectory_model,
    value_steps,
)
from lmdk_core.errors import ParameterError


@settings(max_examples=25)
@given(st.integers(2, 3), st.integers(2, 5), st.integers(0, 2**31 - 1),
       st.sampled_from([0.3, 1.0, 2.0]))
def test_allocation_keeps_the_exact_loss_below_alpha(n, T, seed, alpha):
    rng = np.random.default_rng(seed)
    W = rng.random((n, n)) ** 3 + np.eye(n) * rng.random()
    P = W / W.sum(1, keepdims=True)
    v = np.sort(rng.choice([0.0, 0.5, 1.0, 2.0, 3.0], size=n, replace=False))
    steps = value_steps(v, sensitivity=1.0)
    model = CorrelationModel.from_matrices(P, P, steps, source="public")
    alloc = allocate_for_model(alpha, model, T=T)
    assert alloc.eps.shape == (T,) and np.all(alloc.eps >= 0) and alloc.source == "public"
    for t in range(T):
        for lv in (v, None):  # the real Laplace mechanism and the worst kernel
            exact = case_exact(alloc.eps, [t], P, P, steps.delta, laplace_values=lv)
            assert exact <= alpha * (1 + 1e-9) + 1e-12
    tl = model_loss(alloc.eps, [], model).loss
    np.testing.assert_allclose(tl.tpl, alpha, rtol=1e-6)
    # the unscaled allocation (each step assumed ε_t-DP between any two states) is broken here
    naive = np.asarray(allocate_bounded_tpl(alpha, P, P, T=T))
    worst = max(case_exact(naive, [t], P, P, steps.delta) for t in range(T))
    if steps.worst > 1.5:
        assert worst > alpha


def test_models_state_their_source_and_refuse_private_fits():
    m = public_grid_model("weak", radius_m=200.0, cell_m=500.0)
    assert m.source == "public" and m.epsilon_model == 0 and m.n_states == 30
    assert "public" in m.source_text
    walk = pd.DataFrame({"lat": 39.9 + np.cumsum(np.full(300, 1e-4)), "lon": np.full(300, 116.3)})
    for src in ("released", "unreleased"):
        assert trajectory_model(walk, source=src, radius_m=200.0).source == src
    with pytest.raises(ParameterError, match="dp_grid_model"):
        trajectory_model(walk, source="true", radius_m=200.0)
    with pytest.raises(ParameterError):
        allocate_for_model(1.0, m.P_forward, T=10)  # a bare matrix: origin unknown
    with pytest.raises(ParameterError):
        CorrelationModel.from_matrices(m.P_backward, m.P_forward, m.steps, source="public",
                                       epsilon_model=0.5)


def _walk(n=400, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"lat": 39.95 + np.cumsum(rng.normal(0, 5e-4, n)),
                         "lon": 116.30 + np.cumsum(rng.normal(0, 5e-4, n))})


def test_dp_model_reports_its_budget_and_uses_a_public_grid():
    kw = dict(epsilon_model=0.5, protected_events=3, centre=(39.95, 116.30), extent_m=4000.0,
              cell_m=1000.0, radius_m=200.0)
    a = dp_grid_model(_walk(), rng=1, **kw)
    assert a.source == "dp" and a.epsilon_model == 0.5 and a.n_states == 16
    assert "ε_model = 0.5" in a.description
    b = dp_grid_model(_walk(seed=5), rng=1, **kw)  # other data, same public grid
    np.testing.assert_array_equal(a.steps.delta, b.steps.delta)
    # fresh OS randomness by default: two draws differ
    c1, c2 = (dp_grid_model(_walk(), **kw).P_forward for _ in range(2))
    assert not np.array_equal(c1, c2)
    alloc = allocate_for_model(1.0, a, T=20)
    assert alloc.epsilon_model == 0.5 and alloc.source == "dp"
    with pytest.raises(ParameterError):
        dp_grid_model(_walk(), **{**kw, "extent_m": 50_000.0})
    with pytest.raises(ParameterError):
        dp_grid_model(_walk(), **{**kw, "epsilon_model": 0.0})


@pytest.mark.parametrize("eps, sens", [(0.5, 4.0), (1.0, 1.0)])
def test_discrete_laplace_matches_its_distribution(eps, sens):
    x = discrete_laplace((200_000,), eps, sens, rng=7)
    assert x.dtype == np.int64
    ks = np.arange(-12, 13)
    pmf = np.exp(-eps * np.abs(ks) / sens)
    pmf /= np.exp(-eps * np.abs(np.arange(-400, 401)) / sens).sum()
    obs = np.array([(x == k).sum() for k in ks])
    rest = x.size - obs.sum()
    f_obs = np.append(obs, rest)
    f_exp = np.append(pmf, 1 - pmf.sum()) * x.size
    assert stats.chisquare(f_obs, f_exp).pvalue > 1e-3
    # a mechanism with the sensitivity forgotten (scale Δ = 1 instead of 4) fails the same test
    if sens > 1:
        wrong = discrete_laplace((200_000,), eps, 1.0, rng=7)
        f_wrong = np.append([(wrong == k).sum() for k in ks], 0)
        f_wrong[-1] = wrong.size - f_wrong[:-1].sum()
        assert stats.chisquare(f_wrong, f_exp).pvalue < 1e-6


def test_neighbour_relations_and_bad_input():
    from lmdk_core.correlation import any_pair_steps, location_steps, temporal_loss
    from lmdk_core.errors import MatrixError

    v = value_steps([0.0, 1.0, 50.0], sensitivity=1.0)  # plus one grid step g_max = 2^-10
    g = 2.0**-10
    assert v.worst == 50.0 + g and v.pair_scale(1.0) == 1.0 + g and v.pair_scale(1e9) == v.worst
    assert v.offset == g and value_steps([0.0], sensitivity=3000.0).offset == 2.0
    c = location_steps([[39.9, 116.3], [39.9, 116.31]], radius_m=200.0, cell_m=100.0)
    d = c.delta[0, 1] * 200.0 - np.sqrt(2) * 100.0  # centre distance back from δ
    assert d == pytest.approx(853.5, rel=0.01) and c.delta[0, 0] == 0.0
    assert c.pair_scale(200.0) == pytest.approx((200.0 + np.sqrt(2) * 100.0) / 200.0)
    assert any_pair_steps(3).worst == 1.0 and not c.delta.flags.writeable
    P = np.full((2, 2), 0.5)
    for bad in (lambda: value_steps([0.0, 1.0], sensitivity=0.0),
                lambda: value_steps([0.0, np.nan], sensitivity=1.0),
                lambda: location_steps([[39.9, 116.3, 1.0]], radius_m=200.0, cell_m=100.0),
                lambda: location_steps([[39.9, 116.3]], radius_m=-1.0, cell_m=100.0),
                lambda: temporal_loss([0.1], P, separation=100.0),
                lambda: temporal_loss([0.1], P, steps=any_pair_steps(2), separation=-1.0),
                lambda: model_loss([0.1], [], P)):
        with pytest.raises(ParameterError):
            bad()
    with pytest.raises(MatrixError):
        temporal_loss([0.1], P, steps=any_pair_steps(3))
