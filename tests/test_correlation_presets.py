"""The synthetic correlation presets are the ConTPL demo's (Cao et al., PVLDB 2018, the authors'
code github.com/yangcao888/ConTPL): ``genTM(s, n)`` adds s to the identity twice (pseudo-count
2s), TM1/TM2/TM3 = s 0 / 0.01 / 0.1 at n = 30, ε = 0.1 per step over T = 20 steps.

For that symmetric matrix the loss increment has a closed form (docs/temporal-loss.md §9):
L(α) = log[(1 + y·a)/(1 + y·b)], y = e^α − 1, a = (1 + 2s)/(1 + 2ns) the diagonal and
b = 2s/(1 + 2ns) the off-diagonal entry. It is checked here against the definition (a maximum
over row pairs and column subsets, by brute force) and then used, in plain Python, to recompute
the demo's figure: 'moderate' max TPL 0.4709 (the former preset, pseudo-count s, gave 0.7983).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from correlation_exact import brute_force_increment
from hypothesis import given, settings
from hypothesis import strategies as st

from lmdk_core.correlation import (
    STRENGTH_PRESETS,
    loss_increment,
    sup_loss,
    synthetic_transition_matrix,
    temporal_loss,
)

CONTPL_N, CONTPL_EPS, CONTPL_T = 30, 0.1, 20  # the demo's defaults (dim_n, eps, time)


def gen_tm(s: float, n: int) -> np.ndarray:
    """The authors' genTM.m, transcribed: TM = diag(ones) + s; TM = TM + s; rows normalised."""
    tm = np.diag(np.ones(n)) + s
    tm = tm + s
    return tm / tm.sum(axis=1, keepdims=True)


def closed_form_increment(alpha: float, s: float, n: int) -> float:
    """L(α) for genTM(s, n): the best pair/subset is J = {the row's own state} (§9)."""
    a, b = (1 + 2 * s) / (1 + 2 * n * s), 2 * s / (1 + 2 * n * s)
    y = math.expm1(alpha)
    return math.log1p(y * a) - math.log1p(y * b)


def closed_form_tpl(eps: list[float], s: float, n: int) -> list[float]:
    """TPL_t = BPL_t + FPL_t − ε_t with the closed-form increment (no library code)."""
    T = len(eps)
    bpl, fpl = [0.0] * T, [0.0] * T
    for t in range(T):
        bpl[t] = eps[t] + (closed_form_increment(bpl[t - 1], s, n) if t else 0.0)
    for t in reversed(range(T)):
        fpl[t] = eps[t] + (closed_form_increment(fpl[t + 1], s, n) if t < T - 1 else 0.0)
    return [bpl[t] + fpl[t] - eps[t] for t in range(T)]


def test_presets_are_the_contpl_matrices():
    assert STRENGTH_PRESETS == {"strong": 0.0, "moderate": 0.01, "weak": 0.1}
    for name, s in STRENGTH_PRESETS.items():
        assert np.allclose(synthetic_transition_matrix(CONTPL_N, name), gen_tm(s, CONTPL_N),
                           rtol=0, atol=1e-15)
    for s in (0.0, 0.001, 0.05, 1.0):
        assert np.allclose(synthetic_transition_matrix(7, s), gen_tm(s, 7), rtol=0, atol=1e-15)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 5), s=st.floats(0.0, 2.0), alpha=st.floats(0.0, 8.0))
def test_closed_form_increment_is_the_definition(n, s, alpha):
    P = gen_tm(s, n)
    exact = brute_force_increment(P, alpha)
    assert closed_form_increment(alpha, s, n) == pytest.approx(exact, rel=1e-10, abs=1e-12)
    assert float(loss_increment(synthetic_transition_matrix(n, s), alpha)) == pytest.approx(
        exact, rel=1e-9, abs=1e-12)


def test_moderate_preset_gives_the_contpl_figure():
    eps = [CONTPL_EPS] * CONTPL_T
    exact = closed_form_tpl(eps, STRENGTH_PRESETS["moderate"], CONTPL_N)
    assert round(max(exact), 2) == 0.47  # the demo's 'moderate' figure (max TPL 0.4709)
    lib = temporal_loss(eps, synthetic_transition_matrix(CONTPL_N, "moderate"))
    assert np.allclose(lib.tpl, exact, rtol=1e-10, atol=1e-12)
    # the former scale (pseudo-count s, not 2s) is not the authors': it gives 0.80
    former = closed_form_tpl(eps, STRENGTH_PRESETS["moderate"] / 2, CONTPL_N)
    assert round(max(former), 2) == 0.80
    former_lib = temporal_loss(eps, synthetic_transition_matrix(CONTPL_N, 0.005))
    assert not np.isclose(former_lib.tpl.max(), 0.4709, atol=0.01)


def test_strong_and_weak_presets_against_closed_forms():
    eps = [CONTPL_EPS] * CONTPL_T
    strong = temporal_loss(eps, synthetic_transition_matrix(CONTPL_N, "strong"))
    assert strong.tpl.max() == pytest.approx(CONTPL_EPS * CONTPL_T)  # identity: user level
    weak = temporal_loss(eps, synthetic_transition_matrix(CONTPL_N, "weak"))
    assert np.allclose(weak.tpl, closed_form_tpl(eps, 0.1, CONTPL_N), rtol=1e-10)
    # constant ε: the supremum is the fixed point of α = L(α) + ε (bisection on the closed form)
    lo, hi = CONTPL_EPS, 10.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if closed_form_increment(mid, 0.1, CONTPL_N) + CONTPL_EPS > mid \
            else (lo, mid)
    assert sup_loss(synthetic_transition_matrix(CONTPL_N, "weak"), budget=CONTPL_EPS) == \
        pytest.approx(lo, rel=1e-9)
