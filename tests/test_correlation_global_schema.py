"""A population release's temporal loss under the global schema (docs/temporal-loss.md §10).

The population's BPL / FPL / TPL at t are the maxima over people of each person's own (Cao et
al.: under the global schema the adversary targeting u knows everyone else's data). Checked
against (i) an independent computation per person — the loss-increment by brute force over row
pairs and column subsets and the recursions in plain Python, no lmdk_core code — then the max;
(ii) the exact single-event loss of each person by enumeration (tests/correlation_exact.py),
which the population bound must cover; (iii) hypothesis properties: one person gives
temporal_loss, monotone in every budget, invariant to the people's order, adding a person
never lowers it. A deliberately wrong population figure (TPL of the people's mean budgets) is
shown to fall below the exact loss of one of them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from correlation_exact import all_pairs, brute_force_increment, case_exact
from hypothesis import given, settings
from hypothesis import strategies as st

from lmdk_core.correlation import (
    EnvelopeCache,
    envelope,
    personalised_release_temporal_loss,
    population_temporal_loss,
    synthetic_transition_matrix,
    temporal_loss,
)
from lmdk_core.errors import MatrixError, ParameterError

TOL = 1e-9


def reference_tpl(eps: np.ndarray, P_b: np.ndarray, P_f: np.ndarray) -> np.ndarray:
    """One person's TPL_t from the definition of L (brute force) and the recursions, capped by
    composition as the library states (docs/temporal-loss.md §2–3)."""
    T = len(eps)
    bpl, fpl = np.zeros(T), np.zeros(T)
    for t in range(T):
        bpl[t] = eps[t] + (brute_force_increment(P_b, bpl[t - 1]) if t else 0.0)
    for t in reversed(range(T)):
        fpl[t] = eps[t] + (brute_force_increment(P_f, fpl[t + 1]) if t < T - 1 else 0.0)
    c = np.cumsum(eps)
    bpl = np.minimum(bpl, c)
    fpl = np.minimum(fpl, np.cumsum(eps[::-1])[::-1])
    return np.minimum(bpl + fpl - eps, eps.sum())


def random_stochastic(rng: np.random.Generator, n: int) -> np.ndarray:
    W = rng.choice([0.0, 1e-3, 0.1, 0.5, 1.0, 3.0], size=(n, n))
    W[np.arange(n), rng.integers(0, n, n)] += 1.0
    return W / W.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("seed", range(6))
def test_population_loss_is_the_max_of_an_independent_per_person_computation(seed):
    rng = np.random.default_rng(seed)
    n, U, T = int(rng.integers(2, 4)), int(rng.integers(1, 5)), int(rng.integers(1, 6))
    Pb = [random_stochastic(rng, n) for _ in range(U)]
    Pf = [random_stochastic(rng, n) for _ in range(U)]
    eps = rng.choice([0.0, 0.05, 0.3, 1.0, 2.0], size=(U, T))
    pop = population_temporal_loss(eps, Pb, Pf)
    ref = np.array([reference_tpl(eps[u], Pb[u], Pf[u]) for u in range(U)])
    assert np.allclose(pop.tpl, ref.max(axis=0), rtol=1e-9, atol=1e-12)
    assert np.allclose(ref[pop.worst, np.arange(T)], pop.tpl, rtol=1e-9, atol=1e-12)
    assert pop.cap == pytest.approx(eps.sum(axis=1).max())
    # the exact single-event loss of every person (enumeration) is covered by the population's
    for u in range(U):
        for t in range(T):
            exact = case_exact(eps[u], [t], Pb[u], Pf[u], all_pairs(1.0, n))
            assert exact <= pop.tpl[t] + TOL


def test_the_mean_budget_is_not_the_population_loss():
    """Broken variant: one person's TPL at the people's mean budgets falls below the exact
    loss of the person with the larger budgets; the maximum over people does not."""
    P = np.array([[0.9, 0.1], [0.2, 0.8]])
    eps = np.array([[0.1, 0.1, 0.1], [2.0, 2.0, 2.0]])
    exact = max(case_exact(eps[1], [1], P, P, all_pairs(1.0, 2)), 0.0)
    wrong = temporal_loss(eps.mean(axis=0), P).tpl[1]
    assert wrong < exact - 0.1
    assert population_temporal_loss(eps, P).tpl[1] >= exact - TOL


budget_rows = st.lists(st.sampled_from([0.0, 0.01, 0.2, 0.7, 1.5]), min_size=1, max_size=6)


@settings(max_examples=40, deadline=None)
@given(rows=st.lists(budget_rows, min_size=1, max_size=4), s=st.sampled_from([0.0, 0.01, 0.3]),
       data=st.data())
def test_population_loss_properties(rows, s, data):
    T = min(len(r) for r in rows)
    eps = np.array([r[:T] for r in rows])
    P = synthetic_transition_matrix(3, s) if s else np.array(
        [[0.7, 0.2, 0.1], [0.0, 0.5, 0.5], [0.3, 0.3, 0.4]])
    cache = EnvelopeCache()
    pop = population_temporal_loss(eps, P, cache=cache)
    # one person: exactly temporal_loss
    one = population_temporal_loss(eps[0], P, cache=cache)
    single = temporal_loss(eps[0], P, cache=cache)
    for a, b in ((one.bpl, single.bpl), (one.fpl, single.fpl), (one.tpl, single.tpl)):
        assert np.array_equal(a, b)
    assert one.cap == pytest.approx(single.cap)
    # per-person models, all the same: the same figures
    same = population_temporal_loss(eps, [P] * len(eps), [envelope(P)] * len(eps))
    assert np.allclose(same.tpl, pop.tpl, rtol=1e-12, atol=0)
    # the people's order does not matter; adding a person never lowers it
    perm = data.draw(st.permutations(range(len(eps))))
    assert np.allclose(population_temporal_loss(eps[list(perm)], P).tpl, pop.tpl)
    more = population_temporal_loss(np.vstack([eps, eps[:1] * 0.5]), P)
    assert np.all(more.tpl >= pop.tpl - TOL)
    # monotone in every budget
    u, t = data.draw(st.integers(0, len(eps) - 1)), data.draw(st.integers(0, T - 1))
    up = eps.copy()
    up[u, t] += data.draw(st.sampled_from([0.01, 0.5, 2.0]))
    hi = population_temporal_loss(up, P)
    for a, b in ((hi.bpl, pop.bpl), (hi.fpl, pop.fpl), (hi.tpl, pop.tpl)):
        assert np.all(a >= b - TOL)
    # every figure stays within composition
    assert np.all(pop.tpl <= pop.cap + TOL) and np.all(pop.tpl >= eps.max(axis=0) - TOL)


def test_vectorised_over_many_people():
    rng = np.random.default_rng(3)
    P = synthetic_transition_matrix(30, "moderate")
    eps = rng.choice([0.05, 0.1, 0.2], size=(2000, 48))
    pop = population_temporal_loss(eps, P)
    some = rng.choice(2000, 25, replace=False)
    ref = np.max([temporal_loss(eps[u], P).tpl for u in some], axis=0)
    assert np.all(pop.tpl >= ref - TOL)
    assert pop.n_users == 2000 and pop.frame.shape == (48, 4)


def test_bad_input_is_refused():
    P = synthetic_transition_matrix(3, 0.1)
    with pytest.raises(ParameterError, match="finite and >= 0"):
        population_temporal_loss([[0.1, -1.0]], P)
    with pytest.raises(ParameterError, match="at least one person"):
        population_temporal_loss(np.zeros((0, 3)), P)
    with pytest.raises(ParameterError, match="2 models for 3 people"):
        population_temporal_loss(np.ones((3, 2)), [P, P])
    with pytest.raises(MatrixError):
        population_temporal_loss(np.ones((2, 2)), [P, synthetic_transition_matrix(4, 0.1)],
                                 [P, P])
    with pytest.raises(ParameterError, match="numbers"):
        population_temporal_loss([["a"]], P)
    assert math.isfinite(population_temporal_loss(np.zeros((2, 0)), P).cap)


# ---- the personalised population release (the Population page's figure) ----------------------
@settings(max_examples=15, deadline=None)
@given(eps=st.lists(st.floats(0.05, 3.0), min_size=1, max_size=5), tau=st.floats(0.05, 2.0),
       scheme=st.sampled_from(["skip", "uniform", "user", "event"]), data=st.data())
def test_personalised_release_bound_covers_every_schemes_true_budgets(eps, tau, scheme, data):
    """The page's figure (budgets min(ε_u, τ) in every bin) bounds the population loss of the
    release's true per-bin losses min(ε_{u,t}, τ) for any landmarks, under the same chain."""
    from lmdk_core import allocate
    from lmdk_core.correlation.global_schema import PRESET_STATES

    n_bins = 12
    true = np.array([np.minimum(allocate(n_bins, np.array(data.draw(st.lists(
        st.booleans(), min_size=n_bins, max_size=n_bins))), epsilon=e, scheme=scheme), tau)
        for e in eps])
    P = synthetic_transition_matrix(PRESET_STATES, "moderate")
    exact_budgets = population_temporal_loss(true, P)
    bound = personalised_release_temporal_loss(eps, tau=tau, n_bins=n_bins)
    assert np.all(bound.tpl >= exact_budgets.tpl - TOL)
    assert bound.n_users == len(eps)
    u = int(bound.worst[0])  # a person attaining it: the largest min(ε_u, τ)
    assert min(eps[u], tau) == pytest.approx(min(max(eps), tau))
    single = temporal_loss(np.full(n_bins, min(max(eps), tau)), P)
    assert np.allclose(bound.tpl, single.tpl, rtol=1e-12)


def test_personalised_release_bound_refuses_bad_input():
    with pytest.raises(ParameterError, match="every person"):
        personalised_release_temporal_loss([1.0, 0.0], tau=1.0, n_bins=3)
    with pytest.raises(ParameterError, match="tau"):
        personalised_release_temporal_loss([1.0], tau=float("nan"), n_bins=3)
    with pytest.raises(ParameterError, match="n_bins"):
        personalised_release_temporal_loss([1.0], tau=1.0, n_bins=0)
    with pytest.raises(ParameterError, match="strength"):
        personalised_release_temporal_loss([1.0], tau=1.0, n_bins=3, strength="medium")
