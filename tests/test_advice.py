"""Predicted errors: closed forms against simulated releases; ε and interval inversions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lmdk_core as lm
from lmdk_core.advice import (
    epsilon_for_error,
    interval_for_error,
    mean_error_factor,
    predict_errors,
)
from lmdk_core.errors import ParameterError


def _by_scheme(preds):
    return {p.scheme: p for p in preds}


def test_closed_forms_match_simulated_releases():
    """Independent check: the mean error of many real releases matches each closed form."""
    rng = np.random.default_rng(3)
    n, k = 4000, 9
    lat = 39.9 + rng.normal(0, 0.01, n)
    lon = 116.4 + rng.normal(0, 0.01, n)
    mask = np.zeros(n, bool)
    mask[rng.choice(n, k, replace=False)] = True
    eps, r = 2.0, 150.0
    pred = _by_scheme(predict_errors(n=n, n_landmarks=k, epsilon=eps, radius_m=r))
    for scheme in ("event", "uniform"):
        rel = lm.release_locations((lat, lon), mask, epsilon=eps, scheme=scheme, radius_m=r,
                                   rng=11)
        err = lm.error_metres((lat, lon), rel)
        assert err.mean() == pytest.approx(pred[scheme].mean_error, rel=0.05), scheme
    rel = lm.release_locations((lat, lon), mask, epsilon=eps, scheme="skip", radius_m=r, rng=12)
    err = lm.error_metres((lat, lon), rel)
    assert err[~mask].mean() == pytest.approx(pred["skip"].mean_error, rel=0.05)
    assert pred["skip"].kind == "lower bound"


def test_values_use_laplace_mean_absolute_noise():
    pred = _by_scheme(predict_errors(n=10, n_landmarks=3, epsilon=0.5, sensitivity=2.0))
    assert pred["event"].mean_error == pytest.approx(4.0)
    assert pred["user"].mean_error == pytest.approx(40.0)
    assert pred["uniform"].mean_error == pytest.approx(16.0)
    assert pred["event"].landmark_private is False
    assert math.isnan(pred["adaptive"].mean_error) and pred["bd"].kind == "simulate"


def test_event_is_private_only_without_landmarks():
    pred = _by_scheme(predict_errors(n=10, n_landmarks=0, epsilon=1, radius_m=100))
    assert pred["event"].landmark_private and pred["skip"].kind == "closed form"


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 10_000), frac=st.floats(0, 1), target=st.floats(1.0, 1e6),
       r=st.floats(1.0, 5000.0), scheme=st.sampled_from(["event", "user", "uniform", "skip"]))
def test_epsilon_for_error_inverts_the_prediction(n, frac, target, r, scheme):
    k = int(frac * n)
    eps = epsilon_for_error(scheme, target_error=target, n=n, n_landmarks=k, radius_m=r)
    got = _by_scheme(predict_errors(n=n, n_landmarks=k, epsilon=eps, radius_m=r))[scheme]
    assert got.mean_error == pytest.approx(target, rel=1e-9)


def test_epsilon_for_error_refuses_data_dependent_schemes():
    with pytest.raises(ParameterError, match="no closed form"):
        epsilon_for_error("adaptive", target_error=100, n=10, n_landmarks=2, radius_m=100)
    with pytest.raises(ParameterError, match="exactly one"):
        predict_errors(n=10, n_landmarks=2, epsilon=1)
    with pytest.raises(ParameterError, match="cannot exceed"):
        predict_errors(n=10, n_landmarks=20, epsilon=1, radius_m=100)


def test_interval_for_error():
    c = mean_error_factor()
    # every fix can go: |L| + 1 noise multiples fit in the target
    assert interval_for_error(target_error_m=c * 100 * 11, epsilon=1, radius_m=100,
                              duration_s=3600, n=3600, n_landmarks=10) == 0.0
    # allowed |L'| = 9 of a 50 % landmark share: T' = 18 releases over an hour -> 200 s
    got = interval_for_error(target_error_m=c * 100 * 10, epsilon=1, radius_m=100,
                             duration_s=3600, n=3600, n_landmarks=1800)
    assert got == pytest.approx(200.0)
    # predicted error at that interval meets the target
    n2 = int(3600 / got)
    pred = _by_scheme(predict_errors(n=n2, n_landmarks=n2 // 2, epsilon=1, radius_m=100))
    assert pred["uniform"].mean_error <= c * 100 * 10 + 1e-9
    assert interval_for_error(target_error_m=c * 100 * 1.5, epsilon=1, radius_m=100,
                              duration_s=3600, n=3600, n_landmarks=1800) is None
