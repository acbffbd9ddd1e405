"""Landmark guarantee and w-event window sums against brute-force definitions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lmdk_core import ParameterError
from lmdk_core.accounting import (
    as_landmark_mask,
    landmark_guarantee,
    landmark_violations,
    satisfies_landmark_privacy,
    satisfies_w_event,
    window_sums,
)


def brute_guarantee(eps, mask):
    """G_t = Σ_{i ∈ L ∪ {t}} ε_i by a double loop over t and i."""
    landmarks = {i for i, m in enumerate(mask) if m}
    return np.array([math.fsum(eps[i] for i in landmarks | {t}) for t in range(len(eps))])


def brute_windows(eps, w):
    if len(eps) < w:
        return np.array([math.fsum(eps)])
    return np.array([math.fsum(eps[s : s + w]) for s in range(len(eps) - w + 1)])


@st.composite
def budgets_and_masks(draw):
    n = draw(st.integers(1, 300))
    eps = draw(
        st.lists(
            st.one_of(st.just(0.0), st.floats(0.0, 10.0, allow_nan=False)), min_size=n, max_size=n
        )
    )
    kind = draw(st.sampled_from(["random", "empty", "full"]))
    if kind == "empty":
        mask = [False] * n
    elif kind == "full":
        mask = [True] * n
    else:
        mask = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return np.array(eps), np.array(mask, dtype=bool)


@given(budgets_and_masks())
def test_landmark_guarantee_matches_brute_force(case):
    eps, mask = case
    expected = brute_guarantee(eps, mask)
    np.testing.assert_allclose(landmark_guarantee(eps, mask), expected, rtol=1e-12, atol=1e-12)
    # integer indices give the same answer as the bool mask
    np.testing.assert_array_equal(
        landmark_guarantee(eps, np.flatnonzero(mask)), landmark_guarantee(eps, mask)
    )
    epsilon = float(expected.max()) if expected.max() > 0 else 1.0
    bound = 0.9 * epsilon
    violations = landmark_violations(eps, mask, epsilon=bound)
    np.testing.assert_array_equal(violations, np.flatnonzero(expected > bound + 1e-9))
    assert satisfies_landmark_privacy(eps, mask, epsilon=bound) == (violations.size == 0)
    assert satisfies_landmark_privacy(eps, mask, epsilon=epsilon)


@given(
    st.lists(st.floats(0.0, 10.0, allow_nan=False), min_size=1, max_size=300),
    st.integers(1, 60),
)
def test_window_sums_match_brute_force(eps, w):
    eps = np.array(eps)
    got = window_sums(eps, w)
    expected = brute_windows(eps, w)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
    top = float(expected.max())
    assert satisfies_w_event(eps, w, epsilon=max(top, 1e-3))
    if top > 0.01:
        assert not satisfies_w_event(eps, w, epsilon=0.9 * top)


def test_edge_cases_event_and_user_level():
    eps = np.array([0.1, 0.2, 0.3, 0.4])
    np.testing.assert_array_equal(landmark_guarantee(eps, []), eps)  # L = ∅: event level
    np.testing.assert_array_equal(landmark_guarantee(eps, None), eps)
    # L = all: user level
    np.testing.assert_allclose(landmark_guarantee(eps, np.ones(4, bool)), np.full(4, 1.0))
    np.testing.assert_allclose(landmark_guarantee(eps, [1, 3]), [0.7, 0.6, 0.9, 0.6])
    # duplicate indices count once
    np.testing.assert_allclose(landmark_guarantee(eps, [3, 1, 1]), [0.7, 0.6, 0.9, 0.6])
    assert landmark_guarantee([], []).shape == (0,)


def test_schemes_budgets_satisfy_or_violate_as_expected():
    T, epsilon = 50, 1.0
    landmarks = [3, 10, 11, 40]
    uniform = np.full(T, epsilon / (len(landmarks) + 1))
    assert satisfies_landmark_privacy(uniform, landmarks, epsilon=epsilon)
    skip = np.full(T, epsilon)
    skip[landmarks] = 0.0
    assert satisfies_landmark_privacy(skip, landmarks, epsilon=epsilon)
    event = np.full(T, epsilon)  # event-level does not protect landmarks
    assert not satisfies_landmark_privacy(event, landmarks, epsilon=epsilon)
    assert landmark_violations(event, landmarks, epsilon=epsilon).size == T
    assert satisfies_landmark_privacy(event, [], epsilon=epsilon)
    user = np.full(T, epsilon / T)
    assert satisfies_landmark_privacy(user, np.arange(T), epsilon=epsilon)


def test_w_event_windows():
    eps = np.array([0.5, 0.5, 0.0, 0.5, 0.5])
    np.testing.assert_allclose(window_sums(eps, 2), [1.0, 0.5, 0.5, 1.0])
    np.testing.assert_allclose(window_sums(eps, 10), [2.0])  # T < w: one window with the total
    assert satisfies_w_event(eps, 2, epsilon=1.0)
    assert satisfies_w_event(eps, 3, epsilon=1.0)  # windows of 3 each hold one zero: sums 1.0
    assert not satisfies_w_event(eps, 4, epsilon=1.0)  # sums 1.5
    np.testing.assert_allclose(window_sums(eps, 1), eps)


def test_w_event_tolerance_absorbs_rounding():
    eps = np.full(10, 0.1)  # 10 × 0.1 sums to 0.9999999999999999
    assert satisfies_w_event(eps, 10, epsilon=1.0)
    assert satisfies_landmark_privacy(eps, np.arange(10), epsilon=1.0)
    assert not satisfies_w_event(eps, 10, epsilon=1.0 - 1e-6)


@pytest.mark.parametrize(
    ("landmarks", "message"),
    [
        (np.ones(3, dtype=bool), "length mismatch"),
        ([0, 5], r"landmark index 5 out of range \[0, 5\)"),
        ([-1], "landmark index -1 out of range"),
        ([1.5, 2.0], "landmark indices must be integers"),
        ([[0, 1]], "must be 1-dimensional"),
        (3, "must be a 1-D bool mask"),
        ("0,1", "must be a bool mask or integer indices"),
    ],
)
def test_mask_validation_errors(landmarks, message):
    with pytest.raises(ParameterError, match=message):
        as_landmark_mask(landmarks, 5)
    with pytest.raises(ParameterError, match=message):
        landmark_guarantee(np.ones(5), landmarks)


def test_mask_normalisation():
    np.testing.assert_array_equal(as_landmark_mask([4, 0], 5), [True, False, False, False, True])
    np.testing.assert_array_equal(as_landmark_mask(np.array([], dtype=float), 3), [False] * 3)
    mask = np.array([True, False])
    out = as_landmark_mask(mask, 2)
    out[1] = True
    assert not mask[1]  # a copy, the caller's mask is untouched
    assert as_landmark_mask([], 0).shape == (0,)


def test_budget_and_parameter_validation():
    with pytest.raises(ParameterError, match="eps must be >= 0"):
        landmark_guarantee([0.1, -0.1], [])
    with pytest.raises(ParameterError, match="eps contains NaN"):
        window_sums([0.1, np.nan], 2)
    with pytest.raises(ParameterError, match="w must be an integer >= 1"):
        window_sums([0.1], 0)
    with pytest.raises(ParameterError, match="epsilon must be > 0"):
        satisfies_landmark_privacy([0.1], [], epsilon=0.0)
    with pytest.raises(ParameterError, match="epsilon must be finite"):
        satisfies_w_event([0.1], 1, epsilon=np.inf)
    with pytest.raises(ParameterError, match="tol must be a finite number >= 0"):
        satisfies_w_event([0.1], 1, epsilon=1.0, tol=-1)
