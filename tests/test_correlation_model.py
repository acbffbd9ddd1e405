"""Model provenance, the DP transition counts and the model-based TPL-bounded allocation."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from correlation_exact import case_exact
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from lmdk_core.correlation import (
    MODEL_SOURCES,
    CorrelationModel,
    allocate_bounded_tpl,
    allocate_for_model,
    declare_public_model,
    dp_grid_model,
    integer_laplace,
    location_steps,
    model_loss,
    public_grid_model,
    trajectory_model,
    transition_matrix,
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
    model = declare_public_model(P, P, steps, provenance="a random matrix (no data)")
    alloc = allocate_for_model(alpha, model, T=T)
    assert alloc.budget.shape == (T,) and np.all(alloc.budget >= 0)
    assert alloc.source == "declared_public" and "a random matrix" in alloc.description
    for t in range(T):
        for lv in (v, None):  # the real Laplace mechanism and the worst kernel
            exact = case_exact(alloc.budget, [t], P, P, steps.delta, laplace_values=lv)
            assert exact <= alpha * (1 + 1e-9) + 1e-12
    tl = model_loss(alloc.budget, [], model).loss
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


# ---- provenance comes from the constructor (issue 24, finding 9) ---------------------------
def _fitted():
    """Matrices fitted to a (private) trajectory, and a neighbour relation for them."""
    tm = transition_matrix(_walk(), cell_m=500.0)
    return tm.P_backward, tm.P_forward, location_steps(tm.centres, radius_m=200.0,
                                                       cell_m=tm.cell_m)


@pytest.mark.parametrize("claim", ["public", "released", "unreleased", "dp", "declared_public",
                                   "true data"])
def test_from_matrices_cannot_claim_a_source(claim):
    P_b, P_f, steps = _fitted()
    with pytest.raises(ParameterError, match="caller"):
        CorrelationModel.from_matrices(P_b, P_f, steps, source=claim)


def test_a_caller_model_is_labelled_and_cannot_choose_released_budgets():
    P_b, P_f, steps = _fitted()
    m = CorrelationModel.from_matrices(P_b, P_f, steps)
    assert m.source == "caller" and m.epsilon_model == 0 and m.protects is None
    assert "unverified" in m.source_text and m.description == MODEL_SOURCES["caller"]
    assert len(m.key) == 16
    with pytest.raises(ParameterError, match="declare_public_model"):
        allocate_for_model(1.0, m, T=20)
    lm = model_loss(np.full(20, 0.1), [3], m)  # a loss under the stated model is still fine
    assert lm.composed[3] <= lm.cap + 1e-12
    with pytest.raises(TypeError):  # a caller model spends no budget of its own
        CorrelationModel.from_matrices(P_b, P_f, steps, epsilon_model=0.5)  # type: ignore


def test_a_model_cannot_be_relabelled_after_the_fact():
    P_b, P_f, steps = _fitted()
    caller = CorrelationModel.from_matrices(P_b, P_f, steps)
    pub = public_grid_model("weak", radius_m=200.0)
    dp = dp_grid_model(_walk(), epsilon_model=0.5, protected_events=3, centre=(39.95, 116.30),
                       extent_m=4000.0, cell_m=1000.0, radius_m=200.0, rng=1)
    with pytest.raises(ParameterError, match="constructor"):  # the dataclass constructor
        CorrelationModel(caller.P_backward, caller.P_forward, steps, "public", "mine",
                         env_backward=caller.env_backward, env_forward=caller.env_forward)
    for model, changes in ((caller, {"source": "public"}), (caller, {"source": "released"}),
                           (dp, {"source": "public", "epsilon_model": 0.0}),
                           (dp, {"epsilon_model": 0.0}), (pub, {"P_forward": P_f})):
        with pytest.raises(ParameterError, match="constructor"):
            dataclasses.replace(model, **changes)
    assert caller.source == "caller" and dp.source == "dp" and pub.source == "public"


def test_each_constructor_states_its_source():
    walk = _walk()
    made = {
        "public": public_grid_model("moderate", radius_m=200.0),
        "unreleased": trajectory_model(walk, source="unreleased", radius_m=200.0),
        "released": trajectory_model(walk, source="released", radius_m=200.0),
        "dp": dp_grid_model(walk, epsilon_model=0.5, protected_events=3,
                            centre=(39.95, 116.30), extent_m=4000.0, cell_m=1000.0,
                            radius_m=200.0, rng=1),
        "declared_public": declare_public_model(*_fitted(), provenance="a published survey"),
        "caller": CorrelationModel.from_matrices(*_fitted()),
    }
    assert set(made) == set(MODEL_SOURCES)
    for source, m in made.items():
        assert m.source == source and m.source_text == MODEL_SOURCES[source]
        assert m.epsilon_model == (0.5 if source == "dp" else 0.0)
        assert m.protects == (3 if source == "dp" else None)
        if source != "caller":  # every stated origin may choose budgets; the page refuses
            alloc = allocate_for_model(1.0, m, T=10)  # a "released" one for its own release
            assert alloc.source == source and alloc.model_key == m.key
            assert alloc.epsilon_model == m.epsilon_model
    assert len({m.key for m in made.values()}) == len(made)
    declared = made["declared_public"].description
    assert declared == "declared public by the caller: a published survey"


@pytest.mark.parametrize("provenance", ["", "   ", None, 3])
def test_declaring_a_model_public_needs_its_provenance(provenance):
    with pytest.raises(ParameterError, match="provenance"):
        declare_public_model(*_fitted(), provenance=provenance)


def test_the_hosts_models_still_work():
    """The dashboard and Jupyter build their models through lmdk_core.loss_models and
    Session.dp_model: each keeps its source, key and cost."""
    from lmdk_core import loss_models
    from lmdk_core.release import release_locations
    from lmdk_core.session import Session

    walk = _walk(200).assign(time=pd.date_range("2024-01-01", periods=200, freq="min"))
    mask = np.zeros(len(walk), dtype=bool)
    mask[[10, 11, 50]] = True
    pre = loss_models.preset_model("strong", radius_m=200.0, extent_m=5_000.0)
    assert pre.source == "public"
    assert allocate_for_model(1.0, pre, T=len(walk)).source == "public"
    rel = release_locations(walk, mask, epsilon=1.0, scheme="skip", radius_m=200.0, rng=3)
    got, _notes = loss_models.released_model(rel, cell_m=500.0)
    assert got.source == "released" and got.epsilon_model == 0
    lm = loss_models.release_loss(rel, mask, got, separation=200.0)
    assert lm.composed.shape == (len(walk),) and np.all(lm.composed <= lm.cap + 1e-12)
    s = Session(total_budget=5.0)
    dp = s.dp_model("p", walk, key="m", protected_events=4, epsilon_model=0.3,
                    centre=(39.95, 116.30), extent_m=4000.0, cell_m=1000.0, radius_m=200.0)
    assert dp.source == "dp" and dp.protects == 4 and s.spent("p") == pytest.approx(0.3)
    alloc = allocate_for_model(1.0, dp, T=len(walk))
    assert alloc.source == "dp" and alloc.model_key == dp.key and alloc.epsilon_model == 0.3


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
    x = integer_laplace((200_000,), epsilon=eps, sensitivity=sens, rng=7)
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
        wrong = integer_laplace((200_000,), epsilon=eps, sensitivity=1.0, rng=7)
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


@pytest.mark.parametrize("extent_m", [2_000.0, 20_000.0, 100_000.0])
@pytest.mark.parametrize("radius_m", [37.0, 200.0])
def test_public_preset_covers_the_extent_chosen(extent_m, radius_m):
    m = public_grid_model("moderate", radius_m=radius_m, extent_m=extent_m)
    assert m.n_states == 30  # the states the strength presets are calibrated on
    # the worst pair bounds any two places up to extent_m apart, and not much more
    covered = m.steps.worst * radius_m
    assert extent_m <= covered <= extent_m * (1 + 1e-6)
    assert m.steps.pair_scale(extent_m) == pytest.approx(m.steps.worst)
    assert f"up to {extent_m / 1000:g} km apart" in m.description
    with pytest.raises(ParameterError, match="not both"):
        public_grid_model("moderate", radius_m=radius_m, extent_m=extent_m, cell_m=500.0)
