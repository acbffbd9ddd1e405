"""lmdk_core.session: free previews, real draws counted when drawn, a plan that never undercounts,
a total budget set once — and the exact computation showing why every viewed draw counts
(docs/composition.md, "The interaction")."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from traces import random_walk

from lmdk_core import ParameterError
from lmdk_core import session as session_module
from lmdk_core.session import BudgetExceededError, Drawn, Preview, ReleaseSettings, Session

N = 40
TRACE = random_walk(N, freq="min", seed=0)
SCHEMES = ("event", "user", "uniform", "skip", "adaptive", "bd", "ba")
EXACT = ("event", "user", "uniform", "skip")
"""Budgets known before the noise: without dummies the plan is the recorded total exactly."""
TOL = 1e-9


def mask_of(n: int, idx) -> np.ndarray:
    m = np.zeros(n, dtype=bool)
    m[list(idx)] = True
    return m


HOME = mask_of(N, [5, 6, 7, 20, 21, 33])


@st.composite
def draws(draw):
    """A draw: a time window of TRACE, its (changing) places, and random settings."""
    start = draw(st.integers(0, N - 10))
    stop = draw(st.integers(start + 10, N))
    n = stop - start
    scheme = draw(st.sampled_from(SCHEMES))
    hide = draw(st.booleans())
    idx = draw(st.sets(st.integers(0, n - 1), min_size=0, max_size=n // 2))
    epsilon = draw(st.floats(0.05, 3.0))
    opts = {}
    if hide:
        opts = {"epsilon_select": epsilon * draw(st.floats(0.05, 0.5)),
                "generator": draw(st.sampled_from(["bernoulli", "greedy"]))}
    if scheme in ("bd", "ba"):
        opts["params"] = {"w": draw(st.integers(1, 6))}
    settings_ = ReleaseSettings(epsilon=epsilon, scheme=scheme, hide=hide,
                                radius_m=draw(st.sampled_from([50.0, 200.0, 1000.0])), **opts)
    return TRACE.iloc[start:stop].reset_index(drop=True), mask_of(n, idx), settings_


@settings(max_examples=80)
@given(st.lists(draws(), min_size=1, max_size=4), st.sampled_from([None, 100.0, 2000.0]))
def test_plan_never_undercounts_the_draw_that_follows(steps, reference_m):
    """For every scheme, with and without dummies, with places and time ranges changing between
    draws and different radii: plan(...).after ≥ the total the draw actually records, and equal
    to it when the budgets are known before the noise."""
    s = Session(total_budget=1e9, reference_m=reference_m)
    for i, (traj, mask, rs) in enumerate(steps):
        before = s.spent("p")
        plan = s.plan("p", traj, mask, rs, key=i)
        assert plan.spent == pytest.approx(before) and not plan.existing
        drawn = s.draw("p", traj, mask, rs, key=i)
        after = s.spent("p")
        assert plan.after >= after - TOL, (i, rs, plan.after, after)
        if rs.scheme in EXACT and not rs.hide:
            assert plan.after == pytest.approx(after, abs=TOL)
        assert after >= before - TOL  # recording never lowers the total
        assert np.array_equal(drawn.landmarks, mask) and drawn.token in s.ledger("p")
        # dummies are composed over the real landmarks and their ε_sel is on the ledger (with
        # no real landmark there is nothing to hide: no dummy is drawn and nothing spent)
        if rs.hide and mask.any():
            assert any(c.epsilon == rs.epsilon_select for c in drawn.costs)
        else:
            assert drawn.hidden is None and not drawn.costs
            assert drawn.release.landmarks[mask].all()
    assert len(s.ledger("p")) == len(steps)


def test_plan_is_computed_before_any_noise(monkeypatch):
    calls = []
    real = session_module._draw
    monkeypatch.setattr(session_module, "_draw", lambda *a, **k: calls.append(1) or real(*a, **k))
    s = Session(total_budget=10)
    for scheme in SCHEMES:
        s.plan("p", TRACE, HOME, ReleaseSettings(scheme=scheme, hide=scheme != "event"))
    assert calls == [] and s.spent("p") == 0.0 and len(s.ledger("p")) == 0


def test_previews_are_free_and_cannot_be_downloaded():
    s = Session(total_budget=3)
    drawn = s.draw("p", TRACE, HOME, ReleaseSettings(epsilon=1.0, scheme="skip"), key="real")
    spent, ledger = s.spent("p"), s.ledger("p")
    assert spent == pytest.approx(1.0)
    for scheme in SCHEMES:
        for hide in (False, True):
            for eps in (0.5, 50.0):  # even a preview at ε far beyond the budget
                p = s.preview(TRACE, HOME, ReleaseSettings(epsilon=eps, scheme=scheme, hide=hide),
                              key=(scheme, hide, eps))
                assert isinstance(p, Preview) and not p.is_real and p.release.seeded
                with pytest.raises(ParameterError, match="preview"):
                    s.record_download(p)
    assert s.preview(TRACE, HOME, ReleaseSettings(scheme="skip"), key=("skip", False, 0.5)) is (
        s.preview(TRACE, HOME, ReleaseSettings(scheme="skip"), key=("skip", False, 0.5)))
    assert s.spent("p") == spent and s.ledger("p") is ledger and s.draws("p") == (drawn,)
    assert s.downloaded("p") == ()
    with pytest.raises(ParameterError):
        s.record_download(None)
    s.record_download(drawn)
    s.record_download(drawn)  # the same draw twice: one download, nothing more spent
    assert s.downloaded("p") == (drawn.token,) and s.spent("p") == spent


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_k_real_draws_cost_k_times_their_guarantee(k):
    """Drawing K releases (to compare them, say) costs K·ε whether or not any is downloaded."""
    s = Session(total_budget=100)
    for i in range(k):
        s.draw("p", TRACE, HOME, ReleaseSettings(epsilon=0.7, scheme="skip"), key=("skip", i))
    assert s.spent("p") == pytest.approx(k * 0.7)
    assert s.downloaded("p") == ()
    t = Session(total_budget=100)
    for i in range(k):  # Uniform: G_t = ε at every t, so K draws lose K·ε too
        t.draw("p", TRACE, HOME, ReleaseSettings(epsilon=0.7, scheme="uniform"), key=i)
    assert t.spent("p") == pytest.approx(k * 0.7)


def test_same_key_is_the_same_draw_and_counted_once():
    s = Session(total_budget=5)
    rs = ReleaseSettings(epsilon=1.0, scheme="adaptive", hide=True, epsilon_select=0.2)
    a = s.draw("p", TRACE, HOME, rs, key="k")
    spent, n = s.spent("p"), len(s.ledger("p"))
    assert isinstance(a, Drawn) and a.is_real and not a.release.seeded
    plan = s.plan("p", TRACE, HOME, rs, key="k")
    assert plan.existing and plan.cost == 0.0 and plan.fits
    assert s.draw("p", TRACE, HOME, rs, key="k") is a
    assert s.drawn("k") is a and s.draws("p") == (a,)
    assert s.spent("p") == spent and len(s.ledger("p")) == n
    b = s.draw("p", TRACE, HOME, rs, key="k2")  # another key: a new draw, paid again
    assert b is not a and b.token != a.token and s.spent("p") > spent


def test_a_draw_past_the_budget_is_refused_before_any_noise(monkeypatch):
    s = Session(total_budget=1.5)
    s.draw("p", TRACE, HOME, ReleaseSettings(epsilon=1.0, scheme="skip"), key=1)
    ledger, spent = s.ledger("p"), s.spent("p")
    calls = []
    real = session_module._draw
    monkeypatch.setattr(session_module, "_draw", lambda *a, **k: calls.append(1) or real(*a, **k))
    rs = ReleaseSettings(epsilon=1.0, scheme="skip")
    plan = s.plan("p", TRACE, HOME, rs, key=2)
    assert not plan.fits and plan.after == pytest.approx(2.0) and plan.cost == pytest.approx(1.0)
    with pytest.raises(BudgetExceededError, match="nothing was drawn"):
        s.draw("p", TRACE, HOME, rs, key=2)
    assert calls == [] and s.drawn(2) is None and s.ledger("p") is ledger
    assert s.spent("p") == spent and s.total_budget("p") == 1.5
    # what fits is still drawn
    s.draw("p", TRACE, HOME, ReleaseSettings(epsilon=0.5, scheme="skip"), key=3)
    assert calls == [1] and s.spent("p") == pytest.approx(1.5)


def test_only_set_total_budget_changes_the_budget():
    s = Session(total_budget=1.0)
    assert s.total_budget("p") == 1.0 and s.total_budget("q") == 1.0
    big = ReleaseSettings(epsilon=4.0, scheme="skip")  # the ε of a release is not the budget
    assert not s.plan("p", TRACE, HOME, big).fits
    with pytest.raises(BudgetExceededError):
        s.draw("p", TRACE, HOME, big, key="big")
    s.preview(TRACE, HOME, big, key="big")
    assert s.total_budget("p") == 1.0 and s.spent("p") == 0.0
    s.set_total_budget("p", total_budget=5.0)
    assert s.total_budget("p") == 5.0 and s.total_budget("q") == 1.0  # per person
    s.draw("p", TRACE, HOME, big, key="big")
    assert s.spent("p") == pytest.approx(4.0) and s.total_budget("p") == 5.0
    s.set_total_budget("p", total_budget=2.0)  # lowered below what is spent: refuses everything
    with pytest.raises(BudgetExceededError):
        s.draw("p", TRACE, HOME, ReleaseSettings(epsilon=0.01, scheme="skip"), key="tiny")
    with pytest.raises(ParameterError):
        s.set_total_budget("p", total_budget=0.0)
    assert s.total_budget("p") == 2.0


def test_different_radii_are_composed_at_the_reference_distance():
    s = Session(total_budget=100)  # reference: the first release's radius (200 m)
    s.draw("p", TRACE, HOME, ReleaseSettings(epsilon=1.0, scheme="skip", radius_m=200.0), key=1)
    plan = s.plan("p", TRACE, HOME, ReleaseSettings(epsilon=1.0, scheme="skip", radius_m=2000.0))
    s.draw("p", TRACE, HOME, ReleaseSettings(epsilon=1.0, scheme="skip", radius_m=2000.0), key=2)
    assert s.reference_m("p") == 200.0
    assert plan.after == pytest.approx(s.spent("p")) and 1.10 <= s.spent("p") <= 1.11
    assert s.loss_at("p", [200.0, 2000.0]) == pytest.approx([s.spent("p"), 11.0])


DP_MODEL = {"epsilon_model": 0.2, "centre": (39.99, 116.34), "extent_m": 4000.0,
            "cell_m": 1000.0, "radius_m": 200.0}


def test_dp_model_is_charged_once_per_key_and_refused_past_the_budget():
    from lmdk_core.correlation import allocate_for_model

    s = Session(total_budget=0.75)
    m = s.dp_model("p", TRACE, key="m", protected_events=10, **DP_MODEL)
    assert s.spent("p") == pytest.approx(0.2)
    assert s.dp_model("p", TRACE, key="m", protected_events=10, **DP_MODEL) is m
    assert s.spent("p") == pytest.approx(0.2)
    # two releases on one model: ε_model is paid once, and the plan knows it is paid
    alloc = allocate_for_model(0.1, m, T=N)
    rs = ReleaseSettings(epsilon=1.0, scheme="skip")
    total = 0.2
    for key in ("a", "b"):
        plan = s.plan("p", TRACE, HOME, rs, key=key, allocation=alloc)
        d = s.draw("p", TRACE, HOME, rs, key=key, allocation=alloc)
        assert d.allocation == "tpl_bounded"
        assert plan.after == pytest.approx(s.spent("p"))
        total += float(alloc.budget[HOME].sum()) + float(alloc.budget[~HOME].max())
        assert s.spent("p") == pytest.approx(total, rel=1e-6)
    assert [c.epsilon for c in s.ledger("p").costs()] == [0.2]
    # another model (another key) costs again; past the budget it is refused, nothing drawn
    s.set_total_budget("p", total_budget=s.spent("p") + 0.3)
    s.dp_model("p", TRACE, key="m2", protected_events=10, **DP_MODEL)
    assert s.spent("p") == pytest.approx(total + 0.2, rel=1e-6)
    spent = s.spent("p")
    with pytest.raises(BudgetExceededError, match="nothing was drawn"):
        s.dp_model("p", TRACE, key="m3", protected_events=10, **DP_MODEL)
    assert s.spent("p") == spent and len(s.ledger("p").costs()) == 2


def test_dp_model_covering_fewer_points_pays_group_privacy():
    s = Session(total_budget=10)
    s.draw("p", TRACE, HOME, ReleaseSettings(epsilon=1.0, scheme="skip"), key="r")
    s.dp_model("p", TRACE, key="m", protected_events=2, **DP_MODEL)
    # |L| + 1 = 7 changed points, the model covers 2: ⌈7/2⌉ = 4 times ε_model
    assert s.spent("p") == pytest.approx(1.0 + 4 * 0.2)


# ------------------------------------------------------------------ undercounts found and fixed


def test_plan_covers_event_with_dummies():
    """Event spends ε_scheme at every landmark: the plan treated it as landmark-private."""
    s = Session(total_budget=1e9)
    rs = ReleaseSettings(epsilon=1.0, scheme="event", hide=True, epsilon_select=0.1)
    plan = s.plan("p", TRACE, HOME, rs, key=1)  # 0.1 + 0.9 = 1.0
    s.draw("p", TRACE, HOME, rs, key=1)  # records 0.1 + 0.9·(|L| + 1) = 6.4
    assert plan.after >= s.spent("p") - TOL


def test_plan_covers_dummies_without_landmarks():
    """With nothing to hide no dummy is drawn and no ε_sel spent: plan and draw agree."""
    s = Session(total_budget=1e9)
    rs = ReleaseSettings(epsilon=1.0, scheme="skip", hide=True, epsilon_select=0.1)
    none = np.zeros(N, dtype=bool)
    plan = s.plan("p", TRACE, none, rs, key=1)  # 1.0
    s.draw("p", TRACE, none, rs, key=1)  # the full ε, no ε_sel
    assert plan.after >= s.spent("p") - TOL
    assert s.spent("p") == pytest.approx(1.0)


# ------------------------------------------------------------------ best of K, exactly


def _best_of_k(prob: np.ndarray, symbols: np.ndarray, truth: float, k: int) -> np.ndarray:
    """P[output = symbol j] when K independent draws (each symbol j with prob[j]) are made
    and the first draw closest to ``truth`` is output: by enumerating all len(prob)^K tuples."""
    tuples = np.array(list(itertools.product(range(prob.size), repeat=k)))
    p = prob[tuples].prod(axis=1)
    chosen = tuples[np.arange(len(tuples)), np.abs(symbols[tuples] - truth).argmin(axis=1)]
    out = np.zeros(prob.size)
    np.add.at(out, chosen, p)
    return out


def _discrete_laplace(x: int, eps: float, w: int) -> tuple[np.ndarray, np.ndarray]:
    """x + Z, P(Z = z) ∝ e^(−ε|z|) on all integers (ε-DP for |x − x'| ≤ 1): the outputs
    −w…w+1 exactly, and the two tails lumped into one symbol each at ∓(w + 10^6) (farther from
    x ∈ {0, 1} than any window symbol, so they are chosen only when every draw is in a tail)."""
    a = math.exp(-eps)
    ys = np.arange(-w, w + 2)
    p = (1 - a) / (1 + a) * a ** np.abs(ys - x)
    left = a ** (x + w + 1) / (1 + a)  # P(x + Z < −w) = P(Z ≤ −(x + w + 1))
    right = a ** (w + 2 - x) / (1 + a)  # P(x + Z > w + 1) = P(Z ≥ w + 2 − x)
    return np.concatenate([p, [left, right]]), np.concatenate([ys, [-w - 1e6, w + 1 + 1e6]])


def _loss(p0: np.ndarray, p1: np.ndarray) -> float:
    return float(np.max(np.abs(np.log(p0) - np.log(p1))))


@pytest.mark.parametrize("k", [1, 2, 4])
def test_best_of_k_laplace_draws_costs_k_epsilon(k):
    """Draw K releases of one value (discrete Laplace on the integer grid, Δ = 1, ε = 1), look
    at each one's error against the true value, output the closest: exact enumeration over the
    two neighbours x = 0 and x' = 1 gives a loss of K·ε (on every output at least 2 away from
    both: P_0/P_1 = e^(Kε) exactly). One ε would be wrong by a factor K; K·ε is attained."""
    eps, w = 1.0, 4
    p0, symbols = _discrete_laplace(0, eps, w)
    p1, _ = _discrete_laplace(1, eps, w)
    assert p0.sum() == pytest.approx(1.0) and p1.sum() == pytest.approx(1.0)
    b0, b1 = _best_of_k(p0, symbols, 0, k), _best_of_k(p1, symbols, 1, k)
    inner = np.abs(symbols) <= w - 1  # outputs whose probability the lumped tails cannot touch
    loss = _loss(b0[inner], b1[inner])
    assert loss > (k - 1) * eps * 0.9 and loss <= k * eps + 1e-9
    assert loss == pytest.approx(k * eps, rel=1e-9)
    # the output farthest from both is where it is attained
    assert math.log(b0[symbols == -w + 1][0] / b1[symbols == -w + 1][0]) == pytest.approx(k * eps)


def _binary_rr(x: int, eps: float) -> np.ndarray:
    keep = math.exp(eps) / (1 + math.exp(eps))
    return np.array([keep, 1 - keep]) if x == 0 else np.array([1 - keep, keep])


@pytest.mark.parametrize("k", [2, 4])
def test_best_of_k_by_the_true_value_is_not_post_processing(k):
    """K·ε is what the K draws cost as a joint release, so any choice made from the draws
    alone costs at most K·ε (post-processing). Choosing by the error against the TRUE value
    reads the data again and is not covered in general: binary randomised response (ε-DP),
    best of K by the true value, loses K·ln(1 + e^ε) + ln(1 − (1 + e^ε)^−K) > K·ε."""
    eps = 1.0
    symbols = np.array([0.0, 1.0])
    b0 = _best_of_k(_binary_rr(0, eps), symbols, 0, k)
    b1 = _best_of_k(_binary_rr(1, eps), symbols, 1, k)
    q = 1 / (1 + math.exp(eps))
    assert _loss(b0, b1) == pytest.approx(math.log((1 - q**k) / q**k))
    assert _loss(b0, b1) > k * eps
    # chosen from the draws alone (closest to a public value, here 0): within K·ε
    c0 = _best_of_k(_binary_rr(0, eps), symbols, 0, k)
    c1 = _best_of_k(_binary_rr(1, eps), symbols, 0, k)
    assert _loss(c0, c1) <= k * eps + 1e-12
