"""Predicted errors: closed forms against simulated releases; ε and interval inversions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lmdk_core as lm
from lmdk_core.advice import (
    SchemeEstimate,
    epsilon_for_error,
    estimate_errors,
    interval_for_error,
    mean_error_factor,
    predict_errors,
    recommend,
    share_outside_view,
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
    # Skip's landmark moments (a republished older point) are at least as far off: the bound
    assert err[mask & np.isfinite(err)].mean() >= 0.9 * pred["skip"].mean_error


def test_user_level_closed_form_matches_repeated_releases():
    """User-level on a short trace (ε/T per moment), 100 independent releases: k·r·T/ε."""
    n, eps, r = 50, 50.0, 100.0  # ε_t = 1: noise of ~290 m, far below the Earth's radius
    lat, lon = np.full(n, 39.9), np.full(n, 116.4)
    pred = _by_scheme(predict_errors(n=n, n_landmarks=0, epsilon=eps, radius_m=r))["user"]
    gen = np.random.default_rng(21)
    errs = [lm.error_metres((lat, lon), lm.release_locations((lat, lon), None, epsilon=eps,
                                                             scheme="user", radius_m=r, rng=gen))
            for _ in range(100)]
    assert np.mean(errs) == pytest.approx(pred.mean_error, rel=0.05)


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


# --------------------------------------------------------------------------- estimates

_SCHEMES = ("event", "user", "uniform", "skip", "adaptive", "reserve", "bd", "ba")
_KINDS = ("closed form", "lower bound", "simulate")


@st.composite
def _estimates(draw):
    out = []
    for scheme in _SCHEMES:
        kind = draw(st.sampled_from(_KINDS))
        pred = float("nan") if kind == "simulate" else draw(st.floats(1, 1e7))
        sim = draw(st.one_of(st.just(float("nan")), st.floats(1, 1e7)))
        out.append(SchemeEstimate(scheme, pred, kind, sim, draw(st.booleans())))
    return out


@settings(max_examples=80, deadline=None)
@given(est=_estimates(), margin=st.sampled_from([0.0, 0.05, 0.5]), public=st.booleans())
def test_recommendation_is_landmark_private_and_has_the_smallest_estimate(est, margin, public):
    best = recommend(est, margin=margin, public_only=public)

    def number(e):
        return e.predicted if public else e.estimate

    candidates = [e for e in est if e.landmark_private and math.isfinite(number(e))]
    if not candidates:
        assert best is None
        return
    assert best is not None and best.landmark_private and best in candidates

    def weighed(e):  # the contract: a non-exact number counts (1 + margin) times itself
        return number(e) * (1.0 if e.kind == "closed form" else 1.0 + margin)

    assert all(weighed(best) <= weighed(e) for e in candidates)
    if margin == 0.0:
        assert number(best) == min(number(e) for e in candidates)


def test_public_recommendation_ignores_the_simulation():
    """The default ranks by public closed forms and bounds only: a simulated number, however
    small, cannot change it (so following it is not a data-dependent choice)."""
    nan = float("nan")
    est = [SchemeEstimate("uniform", 500.0, "closed form", nan, True),
           SchemeEstimate("skip", 300.0, "lower bound", 5000.0, True),
           SchemeEstimate("adaptive", nan, "simulate", 1.0, True)]
    assert recommend(est).scheme == "skip"
    assert recommend(est, public_only=False).scheme == "adaptive"


def test_recommendation_ties_and_margin():
    nan = float("nan")
    same = [SchemeEstimate(s, 100.0, "closed form", nan, True) for s in ("event", "uniform",
                                                                          "skip")]
    assert recommend(same).scheme == "skip"  # landmark schemes first on a tie
    sim = SchemeEstimate("adaptive", nan, "simulate", 98.0, True)
    # one noisy run 2 % smaller: not enough
    assert recommend([*same, sim], public_only=False).scheme == "skip"
    assert recommend([*same, sim], margin=0.0, public_only=False).scheme == "adaptive"
    assert recommend([SchemeEstimate("event", 1.0, "closed form", nan, False)]) is None


def test_estimate_prefers_the_exact_expectation_then_the_simulation():
    assert SchemeEstimate("uniform", 10.0, "closed form", 99.0, True).estimate == 10.0
    assert SchemeEstimate("skip", 10.0, "lower bound", 30.0, True).estimate == 30.0
    assert SchemeEstimate("skip", 10.0, "lower bound", float("nan"), True).estimate == 10.0
    assert math.isnan(SchemeEstimate("bd", float("nan"), "simulate", float("nan"), True).estimate)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 5000), frac=st.floats(0, 1), eps=st.floats(0.01, 50),
       r=st.floats(1, 5000), target=st.floats(1, 1e7),
       scheme=st.sampled_from(["user", "uniform", "skip"]))
def test_epsilon_for_error_is_monotone_and_reaches_the_target(n, frac, eps, r, target, scheme):
    """A larger ε never predicts more error; the returned ε predicts at most the target, and a
    little less ε predicts more (it is the smallest)."""
    k = int(frac * n)
    errs = [_by_scheme(predict_errors(n=n, n_landmarks=k, epsilon=e, radius_m=r))[scheme]
            .mean_error for e in (eps, 2 * eps)]
    assert errs[1] <= errs[0]
    need = epsilon_for_error(scheme, target_error=target, n=n, n_landmarks=k, radius_m=r)
    at = _by_scheme(predict_errors(n=n, n_landmarks=k, epsilon=need, radius_m=r))[scheme]
    assert at.mean_error <= target * (1 + 1e-12)
    below = _by_scheme(predict_errors(n=n, n_landmarks=k, epsilon=need * 0.99, radius_m=r))
    assert below[scheme].mean_error > target


def test_estimate_errors_simulates_only_what_has_no_closed_form():
    rng = np.random.default_rng(5)
    n = 600
    lat = 39.9 + np.cumsum(rng.normal(0, 1e-4, n))
    lon = 116.4 + np.cumsum(rng.normal(0, 1e-4, n))
    mask = np.zeros(n, bool)
    mask[200:260] = True
    est = {e.scheme: e for e in estimate_errors((lat, lon), mask, epsilon=1.0, radius_m=100.0,
                                                rng=1)}
    assert list(est) == list(_SCHEMES)
    for s in ("event", "user", "uniform"):
        assert math.isnan(est[s].simulated) and est[s].estimate == est[s].predicted
    for s in ("skip", "adaptive", "reserve", "bd", "ba"):
        assert math.isfinite(est[s].simulated)
    # Skip's landmark moments repeat an older release: the whole-trace mean is above the bound
    assert est["skip"].simulated >= 0.9 * est["skip"].predicted
    # the seeded simulation is reproducible (a what-if, not a release)
    again = {e.scheme: e for e in estimate_errors((lat, lon), mask, epsilon=1.0,
                                                  radius_m=100.0, rng=1)}
    assert again["bd"].simulated == est["bd"].simulated
    best = recommend(list(est.values()))
    assert best is not None and best.scheme == "skip"  # the public bound beats Uniform's k·r·|L|/ε
    # no landmarks: nothing needs simulating except the data-dependent schemes
    est0 = {e.scheme: e for e in estimate_errors((lat, lon), None, epsilon=1.0, radius_m=100.0)}
    assert math.isnan(est0["skip"].simulated) and est0["event"].landmark_private


def test_share_outside_view():
    lat = np.array([40.0, 40.1])
    lon = np.array([116.0, 116.1])
    rel_lat = np.array([40.05, 40.05, 89.9, np.nan])
    rel_lon = np.array([116.05, 116.0, 10.0, np.nan])
    assert share_outside_view(lat, lon, rel_lat, rel_lon) == pytest.approx(1 / 3)
    assert share_outside_view(lat, lon, [np.nan], [np.nan]) == 0.0
    # a point just beyond the padded box is outside, one just inside is not
    assert share_outside_view(lat, lon, [40.1 + 0.025 * 1.01], [116.05]) == 1.0
    assert share_outside_view(lat, lon, [40.1 + 0.025 * 0.99], [116.05]) == 0.0
