"""BPL/FPL/TPL, suprema, bounded-TPL allocations, landmark view, matrices (algorithms.md §4)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lmdk_core.correlation import (
    EnvelopeLoss,
    allocate_bounded_tpl,
    constant_bounded_tpl,
    landmark_temporal_loss,
    reverse_chain,
    sup_bpl,
    sup_fpl,
    synthetic_transition_matrix,
    temporal_loss,
    transition_matrix,
)
from lmdk_core.errors import DataWarning, LmdkError, MatrixError, ParameterError

EX = np.array([[0.8, 0.2], [0.0, 1.0]])
GOLD_BPL = [0.100000, 0.180784, 0.247148, 0.302365, 0.348768, 0.388074, 0.421584, 0.450304,
            0.475028, 0.496389]


def naive_bpl(P, eps):
    """Direct recursion from the definition with a subset brute force (n ≤ 6)."""
    n = P.shape[0]
    masks = np.array([[(s >> j) & 1 for j in range(n)] for s in range(2 ** n)], dtype=float)
    sums = masks @ P.T
    out = [eps[0]]
    for e in eps[1:]:
        y = np.expm1(out[-1])
        vals = np.log1p(y * sums[:, :, None]) - np.log1p(y * sums[:, None, :])
        out.append(vals.max() + e)
    return np.array(out)


@st.composite
def matrices(draw):
    n = draw(st.integers(2, 5))
    w = np.array(draw(st.lists(st.floats(0, 1), min_size=n * n, max_size=n * n))).reshape(n, n)
    w[np.arange(n), draw(st.lists(st.integers(0, n - 1), min_size=n, max_size=n))] += 0.05
    return w / w.sum(1, keepdims=True)


budgets = st.lists(st.sampled_from([0.0, 0.05, 0.1, 0.3, 1.0]), min_size=1, max_size=12)


# ---- golden -----------------------------------------------------------------------------------
def test_golden_bpl_tpl():
    r = temporal_loss(np.full(10, 0.1), EX)
    assert np.allclose(r.bpl, GOLD_BPL, atol=1e-6)
    assert np.allclose(r.fpl, GOLD_BPL[::-1], atol=1e-6)
    assert r.tpl[[0, 9]] == pytest.approx([0.496389] * 2, abs=1e-6)
    assert r.tpl[[4, 5]] == pytest.approx([0.636841] * 2, abs=1e-6)
    f = r.frame
    assert list(f.columns) == ["t", "eps", "bpl", "fpl", "tpl"] and len(f) == 10


def test_identity_and_uniform():
    assert np.allclose(temporal_loss(np.full(7, 0.1), np.eye(3)).bpl, 0.1 * np.arange(1, 8))
    assert np.allclose(temporal_loss(np.full(7, 0.1), np.eye(3)).tpl, 0.7)
    assert np.allclose(temporal_loss(np.full(7, 0.1), np.full((4, 4), 0.25)).bpl, 0.1)


def test_golden_suprema_and_allocations():
    assert sup_bpl(EX, budget=0.1) == pytest.approx(0.645907, abs=1e-6)
    assert sup_fpl(EX, budget=0.1) == pytest.approx(0.645907, abs=1e-6)
    assert np.isfinite(sup_bpl(EX, budget=np.log(1.25) - 1e-6))
    assert sup_bpl(EX, budget=np.log(1.25) + 1e-6) == np.inf
    assert sup_bpl(np.eye(3), budget=0.1) == np.inf and sup_bpl(np.eye(3), budget=0.0) == 0.0
    assert constant_bounded_tpl(1.0, EX, EX) == pytest.approx(0.087623, abs=1e-6)
    with pytest.raises(ParameterError, match="constant_bounded_tpl"):
        allocate_bounded_tpl(1.0, EX, EX)  # one return type: an array needs T
    e = allocate_bounded_tpl(1.0, EX, EX, T=10)
    assert e[0] == pytest.approx(0.543811, abs=1e-6) and e[-1] == pytest.approx(0.543811, abs=1e-6)
    assert np.allclose(temporal_loss(e, EX).tpl, 1.0, atol=1e-9)


# ---- recursion vs definition, properties -----------------------------------------------------
@given(matrices(), budgets)
def test_bpl_matches_direct_definition(P, eps):
    eps = np.array(eps)
    assert np.allclose(temporal_loss(eps, P).bpl, naive_bpl(P, eps), rtol=0, atol=1e-10)


@given(matrices(), matrices(), budgets)
def test_tpl_properties(Pb, Pf, eps):
    if Pb.shape != Pf.shape:
        return
    eps = np.array(eps)
    r = temporal_loss(eps, Pb, Pf)
    assert np.all(r.tpl >= eps - 1e-12)
    assert np.all(r.tpl >= np.maximum(r.bpl, r.fpl) - 1e-12)
    assert np.all(r.tpl <= eps.sum() + 1e-9)


@given(st.lists(st.floats(0, 2), min_size=1, max_size=30))
def test_identity_gives_user_level(eps):
    assert np.allclose(temporal_loss(eps, np.eye(4)).tpl, np.sum(eps), atol=1e-9)


def test_sup_is_limit_of_recursion():
    P = synthetic_transition_matrix(6, 0.2)
    r = temporal_loss(np.full(3000, 0.2), P)
    assert r.bpl[-1] == pytest.approx(sup_bpl(P, budget=0.2), rel=1e-9)
    assert np.all(r.bpl <= sup_bpl(P, budget=0.2) + 1e-12)


@given(matrices(), matrices(), st.floats(0.05, 3.0), st.one_of(st.none(), st.integers(1, 40)))
def test_bounded_allocation_bounds_tpl(Pb, Pf, alpha, T):
    if Pb.shape != Pf.shape:
        return
    if T is None:
        c = constant_bounded_tpl(alpha, Pb, Pf)
        assert isinstance(c, float) and c >= 0
        e = np.full(200, c)
    else:
        e = allocate_bounded_tpl(alpha, Pb, Pf, T=T)
        assert e.shape == (T,) and np.all(e >= 0)
    tpl = temporal_loss(e, Pb, Pf).tpl
    assert tpl.max() <= alpha + 1e-9
    if T is not None:
        assert np.allclose(tpl, alpha, atol=1e-6)


# ---- P_forward defaults, landmark view --------------------------------------------------------
def test_forward_defaults():
    rng = np.random.default_rng(1)
    Pb = rng.dirichlet(np.ones(5), size=5)
    pi = rng.dirichlet(np.ones(5))
    eps = np.full(12, 0.2)
    same = temporal_loss(eps, Pb)
    assert np.allclose(same.fpl, temporal_loss(eps, Pb, Pb).fpl)
    derived = temporal_loss(eps, Pb, marginal=pi)
    Pf = reverse_chain(Pb, pi)
    assert np.allclose(Pf.sum(1), 1) and np.allclose(derived.fpl, temporal_loss(eps, Pb, Pf).fpl)
    pi_prev = (pi[:, None] * Pb).sum(0)  # marginal of x_{t-1}
    assert np.allclose(reverse_chain(Pf, pi_prev), Pb)  # reversing twice is the identity


def test_landmark_view():
    eps = np.array([0.1, 0.0, 0.2, 0.1, 0.3])
    P = synthetic_transition_matrix(5, 0.1)
    lm = landmark_temporal_loss(eps, [1, 3], P)
    same = landmark_temporal_loss(eps, np.array([False, True, False, True, False]), EnvelopeLoss(P))
    tpl = temporal_loss(eps, P).tpl
    assert np.allclose(lm.composed, same.composed)
    tl = temporal_loss(eps, P)
    # S = {0, 1, 3}: BPL_0 − ε_0 = 0, ε_0..ε_3, FPL_3 − ε_3 (Theorem 3, docs/temporal-loss.md)
    assert lm.composed[0] == pytest.approx(eps[:4].sum() + tl.fpl[3] - eps[3])
    assert lm.composed[1] == pytest.approx(tl.bpl[1] - eps[1] + eps[1:4].sum() + tl.fpl[3] - eps[3])
    assert lm.composed[4] == pytest.approx(tl.bpl[1] - eps[1] + eps[1:].sum())
    assert np.all(lm.composed <= eps.sum() + 1e-12)  # capped by composition
    assert np.all(tpl <= lm.composed + 1e-12)  # never below the single-event bound
    assert np.allclose(lm.guarantee, [0.2, 0.1, 0.3, 0.1, 0.4])
    assert np.all(lm.composed >= lm.guarantee - 1e-12)
    assert {"composed", "guarantee", "landmark"} <= set(lm.frame.columns)


# ---- errors -----------------------------------------------------------------------------------
def test_errors():
    with pytest.raises(MatrixError):
        temporal_loss([0.1, 0.1], EX, np.eye(3))
    with pytest.raises(MatrixError):
        temporal_loss([0.1], [[0.5, 0.4], [0.5, 0.5]])
    with pytest.raises(ParameterError):
        temporal_loss([0.1, -0.1], EX)
    with pytest.raises(ParameterError):
        temporal_loss([0.1, np.nan], EX)
    with pytest.raises(MatrixError):
        temporal_loss([0.1], EX, marginal=[0.5, 0.3, 0.2])
    with pytest.raises(LmdkError):
        landmark_temporal_loss([0.1, 0.1], [5], EX)
    with pytest.raises(ParameterError):
        constant_bounded_tpl(0.0, EX)
    with pytest.raises(ParameterError):
        synthetic_transition_matrix(5, "medium")
    with pytest.raises(ParameterError):
        sup_bpl(EX, budget=-1.0)


# ---- matrices ---------------------------------------------------------------------------------
def test_synthetic_presets():
    P = synthetic_transition_matrix(30, "moderate")
    # ConTPL genTM(0.01, 30): pseudo-count 2s = 0.02 on every entry (test_correlation_presets.py)
    assert np.allclose(P.sum(1), 1) and P[0, 0] == pytest.approx(1.02 / 1.6)
    assert np.array_equal(synthetic_transition_matrix(4, "strong"), np.eye(4))
    assert np.allclose(synthetic_transition_matrix(30, "weak"),
                       synthetic_transition_matrix(30, 0.1))


def _walk(n_points=2000, step_m=60.0, seed=0):
    rng = np.random.default_rng(seed)
    ang = np.cumsum(rng.normal(0, 0.3, n_points))
    east = np.cumsum(step_m * np.cos(ang))
    north = np.cumsum(step_m * np.sin(ang))
    return pd.DataFrame({"lat": 45.0 + north / 111_195.0,
                         "lon": 7.0 + east / (111_195.0 * np.cos(np.radians(45)))})


def test_transition_matrix_estimation():
    traj = _walk()
    m = transition_matrix(traj, cell_m=500, smoothing=0.0, max_states=None)
    n = m.n_states
    assert m.P_forward.shape == (n, n) and np.allclose(m.P_forward.sum(1), 1)
    assert np.allclose(m.P_backward.sum(1), 1) and m.states.shape == (len(traj),)
    # counts are the consecutive transitions, rows of P^F are normalised counts
    assert m.counts.sum() == len(traj) - 1
    c = np.zeros((n, n))
    for a, b in zip(m.states[:-1], m.states[1:], strict=True):
        c[a, b] += 1
    assert np.array_equal(c, m.counts)
    rows = c.sum(1) > 0
    assert np.allclose(m.P_forward[rows], c[rows] / c[rows].sum(1, keepdims=True))
    # Bayes: π_a P^B[a, k] ∝ π_k P^F[k, a]
    pi = np.bincount(m.states, minlength=n) / len(traj)
    assert np.allclose(m.marginal, pi)
    joint = pi[:, None] * m.P_forward
    assert np.allclose(m.P_backward, (joint / joint.sum(0)).T)
    # every point lies within its cell's half-diagonal of the centre
    from lmdk_core.geo import haversine_m

    d = haversine_m(traj.lat, traj.lon, m.centres[m.states, 0], m.centres[m.states, 1])
    assert d.max() <= 500 * np.sqrt(0.5) + 1.0


def test_transition_matrix_cap_and_smoothing():
    traj = _walk(4000, 80.0, seed=3)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m = transition_matrix(traj, cell_m=100, smoothing=0.5, max_states=50)
    assert m.n_states <= 50 and m.cell_m > 100
    assert any(issubclass(x.category, DataWarning) for x in w)
    assert np.all(m.P_forward > 0)
    r = temporal_loss(np.full(len(traj), 0.1), m.P_backward, m.P_forward)
    assert np.all(np.isfinite(r.tpl)) and np.all(r.tpl >= 0.1 - 1e-12)
    with pytest.raises(ParameterError):
        transition_matrix(traj[["lat"]])
    with pytest.raises(ParameterError):
        transition_matrix(traj.iloc[:1])
