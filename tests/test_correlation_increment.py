"""L(α): golden values, independent references (brute force over subsets, HiGHS LP), properties.

References are written from the definition, not from the library:
* brute force: max over ordered row pairs and all 2^n subsets J of log((1+y q_J)/(1+y d_J));
* LP (Charnes–Cooper, per ordered pair): maximise q·y s.t. d·y = 1, m ≤ y_j ≤ e^α m, y, m ≥ 0.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse
from scipy.optimize import linprog

from lmdk_core.correlation import (
    EnvelopeLoss,
    envelope,
    loss_increment,
    loss_increment_fixed_point,
    synthetic_transition_matrix,
)
from lmdk_core.errors import LmdkError, MatrixError

EX = np.array([[0.8, 0.2], [0.0, 1.0]])


def brute_force(P: np.ndarray, alpha: float) -> float:
    n = P.shape[0]
    masks = np.array(list(itertools.product([0.0, 1.0], repeat=n)))  # (2^n, n)
    sums = masks @ P.T  # sums[s, a] = P[a, J_s]
    y = np.expm1(alpha)
    best = 0.0
    for a, b in itertools.permutations(range(n), 2):
        best = max(best, float(np.max(np.log1p(y * sums[:, a]) - np.log1p(y * sums[:, b]))))
    return best


def lp_reference(P: np.ndarray, alpha: float) -> float:
    """The LP of every ordered pair (a, b), solved as one block-diagonal LP: the blocks share no
    variable or constraint, so the sum of their objectives is maximised by each block's own
    optimum, read off its variables (one HiGHS call per matrix instead of n(n − 1): the same
    values to the last bit on 400 random matrices, 5.6× less CPU)."""
    n = P.shape[0]
    ea = np.exp(alpha)
    pairs = list(itertools.permutations(range(n), 2))
    one = np.zeros((2 * n, n + 1))  # variables (y_1..y_n, m) of one pair
    for j in range(n):
        one[2 * j, j], one[2 * j, n] = -1.0, 1.0  # m - y_j <= 0
        one[2 * j + 1, j], one[2 * j + 1, n] = 1.0, -ea  # y_j - e^α m <= 0
    k = len(pairs)
    A_ub = sparse.block_diag([one] * k, format="csr")
    A_eq = sparse.block_diag([np.append(P[b], 0.0)[None, :] for _, b in pairs], format="csr")
    c = -np.concatenate([np.append(P[a], 0.0) for a, _ in pairs])  # maximise q·y per pair
    opts = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(2 * n * k), A_eq=A_eq, b_eq=np.ones(k),
                  bounds=[(0, None)] * (k * (n + 1)), method="highs", options=opts)
    assert res.status == 0, res.message
    per_pair = -(c * res.x).reshape(k, n + 1).sum(axis=1)
    return float(np.log(max(1.0, per_pair.max())))


@st.composite
def stochastic_matrices(draw, max_n: int = 6):
    """Row-stochastic matrices with sparse rows, identical rows and disjoint supports."""
    n = draw(st.integers(2, max_n))
    rows = []
    for _ in range(n):
        kind = draw(st.sampled_from(["dense", "sparse", "onehot", "copy"]))
        if kind == "copy" and rows:
            rows.append(rows[draw(st.integers(0, len(rows) - 1))].copy())
            continue
        if kind == "onehot":
            r = np.zeros(n)
            r[draw(st.integers(0, n - 1))] = 1.0
        else:
            w = draw(st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n))
            r = np.array(w)
            if kind == "sparse":
                keep = draw(st.lists(st.booleans(), min_size=n, max_size=n))
                r = r * np.array(keep)
            if r.sum() < 1e-6:
                r[draw(st.integers(0, n - 1))] = 1.0
        rows.append(r / r.sum())
    return np.array(rows)


alphas = st.floats(0.0, 6.0)


# ---- golden values (algorithms.md §4) -------------------------------------------------------
def test_golden_two_state_increment():
    # BPL_2 − ε = L(0.1) for the 2×2 example
    assert loss_increment(EX, 0.1) == pytest.approx(0.180784 - 0.1, abs=1e-6)
    # optimum is pair (row 0, row 1), J = {0}: log(1 + 0.8 y)
    a = np.array([0.0, 0.5, 2.0, 30.0])
    assert np.allclose(loss_increment(EX, a), np.log1p(0.8 * np.expm1(a)), rtol=0, atol=1e-12)


def test_identity_and_uniform_rows():
    a = np.linspace(0, 20, 41)
    assert np.allclose(loss_increment(np.eye(4), a), a, atol=1e-12)  # disjoint supports: L(α)=α
    assert np.all(loss_increment(np.full((5, 5), 0.2), a) == 0.0)  # identical rows: L = 0


def test_scalar_and_array_shapes():
    assert isinstance(loss_increment(EX, 0.3), float)
    assert loss_increment(EX, np.ones((2, 3))).shape == (2, 3)


# ---- independent references -------------------------------------------------------------------
@given(stochastic_matrices(max_n=8), st.lists(alphas, min_size=1, max_size=4))
def test_matches_brute_force(P, alist):
    env = EnvelopeLoss(P)
    for a in alist:
        assert env(a) == pytest.approx(brute_force(P, a), abs=1e-10)


@settings(max_examples=40)
@given(stochastic_matrices(max_n=5), st.floats(0.0, 4.0))
def test_matches_linear_program(P, a):
    # HiGHS at 1e-10 feasibility tolerances: observed agreement ~1e-11 for α ≤ 4
    assert loss_increment(P, a) == pytest.approx(lp_reference(P, a), abs=1e-8)


@settings(max_examples=50)
@given(stochastic_matrices(max_n=7), st.lists(st.floats(0.0, 40.0), min_size=1, max_size=5))
def test_matches_fixed_point_reference(P, alist):
    a = np.array(alist)
    assert np.allclose(loss_increment(P, a), loss_increment_fixed_point(P, a), rtol=0, atol=1e-10)


def test_larger_random_matrices_match_fixed_point():
    rng = np.random.default_rng(7)
    a = np.array([1e-9, 0.01, 0.3, 1.0, 2.5, 8.0, 50.0])
    for n, conc in [(40, 1.0), (60, 0.05), (128, 0.3)]:  # n >= 128: hull built in threads
        P = rng.dirichlet(np.full(n, conc), size=n)
        P[3] = P[5]  # identical rows
        assert np.allclose(loss_increment(P, a), loss_increment_fixed_point(P, a),
                           rtol=1e-12, atol=1e-14)


# ---- properties -------------------------------------------------------------------------------
@given(stochastic_matrices(), st.lists(st.floats(0.0, 50.0), min_size=2, max_size=8))
def test_bounds_monotone_lipschitz(P, alist):
    a = np.sort(np.array(alist))
    L = loss_increment(P, a)
    assert np.all(L >= 0) and np.all(a + 1e-12 >= L)
    assert np.all(np.diff(L) >= -1e-12)
    assert np.all(np.diff(L) <= np.diff(a) + 1e-12)


def test_synthetic_strength_orders_losses():
    a = 1.0
    vals = [loss_increment(synthetic_transition_matrix(30, s), a)
            for s in ("strong", "moderate", "weak")]
    assert vals[0] == pytest.approx(a) and vals[0] > vals[1] > vals[2] > 0


def test_envelope_is_memoised_only_in_an_explicit_cache_and_reports_candidates():
    from lmdk_core.correlation import EnvelopeCache

    P = synthetic_transition_matrix(10, 0.05)
    assert envelope(P) is not envelope(P)  # no hidden process-wide cache
    cache, other = EnvelopeCache(size=2), EnvelopeCache()
    e1, e2 = envelope(P, cache=cache), envelope(P.copy(), cache=cache)
    assert e1 is e2 and envelope(e1) is e1 and len(cache) == 1
    assert envelope(P, cache=other) is not e1  # caches are per caller
    for s in (0.1, 0.2):
        envelope(synthetic_transition_matrix(10, s), cache=cache)
    assert len(cache) == 2 and envelope(P, cache=cache) is not e1  # LRU evicted
    d, q = e1.candidates
    assert e1.n_candidates == d.size and np.all(q >= d) and np.all(np.diff(d) > 0)


# ---- errors -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "bad",
    [
        np.ones((2, 3)) / 3,  # not square
        np.array([[0.5, 0.6], [0.5, 0.5]]),  # row sum 1.1
        np.array([[1.2, -0.2], [0.5, 0.5]]),  # negative entry
        np.array([[np.nan, 1.0], [0.5, 0.5]]),  # NaN
        np.zeros((0, 0)),  # empty
        [[1.0]] * 2,  # 2×1
    ],
)
def test_invalid_matrices_raise(bad):
    with pytest.raises(MatrixError):
        loss_increment(bad, 0.5)


def test_invalid_alpha_raises():
    with pytest.raises(LmdkError):
        loss_increment(EX, -0.1)
    with pytest.raises(LmdkError):
        loss_increment(EX, np.nan)
