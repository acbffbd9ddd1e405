"""The guide's Skip target search (lmdk_core.advice.epsilon_for_mean_error) decides most
bisection steps from the convexity of its curve instead of evaluating it (issue 27's load
target): every decision, and so the advised ε, is the one plain bisection takes, checked against
an independent plain bisection and numpy's formula for the curve."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from traces import random_walk

from lmdk_core import advice

TRACE = random_walk(600, freq="30s", seed=11)
MASK = np.zeros(len(TRACE), dtype=bool)
for start in range(20, 600, 90):  # stays of 30 moments: Skip repeats while the walk goes on
    MASK[start:start + 30] = True
R = 100.0


def _numpy_curve(curve, epsilon: float) -> float:
    """The curve as numpy computes it (the formula before the kernel): an independent route."""
    scale = curve.radius_m / epsilon
    se, sn = scale * curve.ue, scale * curve.un
    rep = (np.hypot(curve.de - se, curve.dn - sn).sum()
           + np.hypot(curve.de + se, curve.dn + sn).sum()) / (2 * advice._PAIRS)
    return float((curve.n_fresh * curve.k * scale + rep) / curve.n)


def _plain_bisection(target: float) -> float:
    """epsilon_for_mean_error's search with every step evaluated by numpy (no bounds)."""
    curve = advice._SkipCurve(TRACE, MASK, R, 0)
    f = lambda e: _numpy_curve(curve, e)  # noqa: E731
    if not curve.floor_m < target or not f(advice.EPSILON_SEARCH_MAX) <= target:
        return math.inf
    hi = advice.epsilon_for_error("skip", target_error=target, n=MASK.size,
                                  n_landmarks=int(MASK.sum()), radius_m=R)
    while f(hi) > target:
        hi = min(hi * 4.0, advice.EPSILON_SEARCH_MAX)
    lo = hi / 2.0
    while f(lo) <= target:
        lo /= 2.0
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        if f(mid) <= target:
            hi = mid
        else:
            lo = mid
        if hi / lo < 1 + 1e-5:
            break
    return hi


@functools.cache
def _floor() -> float:
    """The curve's floor (metres), computed by the first test that asks: building the curve
    draws a planar Laplace sample, which collection must not do (tests/test_layers.py)."""
    return advice._SkipCurve(TRACE, MASK, R, 0).floor_m


@settings(max_examples=25, deadline=None)
@given(st.floats(0.3, 30.0))
def test_advised_epsilon_is_plain_bisections_exactly(factor):
    target = factor * _floor()
    got = advice.epsilon_for_mean_error(TRACE, MASK, scheme="skip", target_error_m=target,
                                        radius_m=R)
    assert got.epsilon == _plain_bisection(target)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(0.01, 1e4), min_size=1, max_size=6), st.floats(0.01, 1e4),
       st.floats(0.5, 20.0))
def test_a_bound_decides_as_the_evaluation_would(seen, epsilon, factor):
    """After any evaluated points, at_most(ε, target) is curve(ε) <= target computed by numpy."""
    curve = advice._SkipCurve(TRACE, MASK, R, 0)
    for e in seen:
        assert curve(e) == _numpy_curve(curve, e)  # the kernel is numpy's formula bit for bit
    target = factor * _floor()
    assert curve.at_most(epsilon, target) == (_numpy_curve(curve, epsilon) <= target)


def test_the_bounds_save_evaluations_and_a_wrong_margin_breaks_them(monkeypatch):
    """The search evaluates far fewer points than it takes steps; bounds applied without their
    margin's sign (a bound may decide against the target in the wrong direction) give another
    answer: the agreement test has power."""
    calls = []
    real = advice._SkipCurve.__call__

    def counting(self, epsilon):
        calls.append(epsilon)
        return real(self, epsilon)

    monkeypatch.setattr(advice._SkipCurve, "__call__", counting)
    target = 1.5 * _floor()
    adv = advice.epsilon_for_mean_error(TRACE, MASK, scheme="skip", target_error_m=target,
                                        radius_m=R)
    assert adv.epsilon == _plain_bisection(target)
    assert len(set(calls)) < 14  # plain bisection: ~22 distinct points
    monkeypatch.setattr(advice, "_DECIDE_MARGIN", -0.2)  # bounds "decide" 20 % past the target
    wrong = advice.epsilon_for_mean_error(TRACE, MASK, scheme="skip", target_error_m=target,
                                          radius_m=R)
    assert wrong.epsilon != pytest.approx(adv.epsilon, rel=1e-3)
