"""lmdk_core.advice.epsilon_for_mean_error (issue 27): the ε the guide advises for a target is
the one at which the headline *Mean error* (mae_metres over every released moment, Skip's
repeats included) meets it, checked against independent simulated releases; where no ε can
(Skip's floor), it says so with the floor, which equals a noise-free release's error."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from traces import random_walk

from lmdk_core import advice
from lmdk_core.errors import ParameterError
from lmdk_core.metrics import mae_metres
from lmdk_core.release import release_locations

TRACE = random_walk(2000, freq="30s", seed=4)
MASK = np.zeros(len(TRACE), dtype=bool)
for start in range(50, 2000, 200):  # ten stays of 40 moments: Skip repeats, the walk goes on
    MASK[start:start + 40] = True
R = 100.0

RUNS = 60
# Tolerance of a simulated mean against the expectation: 4 standard errors of the RUNS runs
# (their spread, measured), plus 3 % for the lattice mechanism's mean error, which is within
# −1.8 %/+1.1 % of k·r/ε at a given place (PlanarLaplace.mean_error_m), and the fixed noise sample
# of the advisor's curve.
SLACK = 0.03


def _simulated(scheme: str, epsilon: float) -> tuple[float, float]:
    """Mean and standard error of the headline mean error over RUNS seeded releases."""
    errs = np.array([mae_metres(TRACE, release_locations(TRACE, MASK, epsilon=epsilon,
                                                         scheme=scheme, radius_m=R, rng=1000 + i,
                                                         noise="fast"))
                     for i in range(RUNS)])
    return float(errs.mean()), float(errs.std(ddof=1) / math.sqrt(RUNS))


def test_floor_is_the_error_of_a_noise_free_skip_release():
    adv = advice.epsilon_for_mean_error(TRACE, MASK, scheme="skip", target_error_m=1.0,
                                        radius_m=R)
    noiseless = mae_metres(TRACE, release_locations(TRACE, MASK, epsilon=1e9, scheme="skip",
                                                    radius_m=R, rng=0, noise="fast"))
    assert adv.floor_m == pytest.approx(noiseless, rel=1e-6)
    assert adv.floor_m > 10  # the walk moves on during the stays: a real floor
    assert not adv.reachable and adv.reads_trace


@pytest.mark.parametrize("factor", [1.3, 3.0])
def test_advised_epsilon_gives_the_headline_target_for_skip(factor):
    floor = advice.epsilon_for_mean_error(TRACE, MASK, scheme="skip", target_error_m=1.0,
                                          radius_m=R).floor_m
    target = factor * floor
    adv = advice.epsilon_for_mean_error(TRACE, MASK, scheme="skip", target_error_m=target,
                                        radius_m=R)
    assert adv.reachable and adv.epsilon > adv.fresh_epsilon
    mean, se = _simulated("skip", adv.epsilon)
    assert abs(mean - target) <= 4 * se + SLACK * target, (mean, se, target)


def test_the_fresh_only_formula_misses_the_headline():
    """The test has power: the old advice (ε for the fresh points only) gives a headline mean
    error far above the target."""
    floor = advice.epsilon_for_mean_error(TRACE, MASK, scheme="skip", target_error_m=1.0,
                                          radius_m=R).floor_m
    target = 1.3 * floor
    fresh_only = advice.epsilon_for_error("skip", target_error=target, n=MASK.size,
                                          n_landmarks=int(MASK.sum()), radius_m=R)
    mean, se = _simulated("skip", fresh_only)
    assert mean - target > 4 * se + SLACK * target


@pytest.mark.parametrize("scheme", ["event", "uniform"])
def test_fresh_schemes_use_the_public_formula_and_meet_the_headline(scheme):
    target = 300.0 if scheme == "event" else 3000.0
    adv = advice.epsilon_for_mean_error(TRACE, MASK, scheme=scheme, target_error_m=target,
                                        radius_m=R)
    assert not adv.reads_trace and adv.floor_m == 0 and adv.epsilon == adv.fresh_epsilon
    mean, se = _simulated(scheme, adv.epsilon)
    assert abs(mean - target) <= 4 * se + SLACK * target, (mean, se, target)


@settings(max_examples=15, deadline=None)
@given(st.floats(0.05, 50.0), st.floats(1.01, 4.0), st.integers(0, 40))
def test_skip_curve_never_rises_with_epsilon_and_stays_above_its_floor(eps, step, seed):
    lo = advice.skip_mean_error(TRACE, MASK, epsilon=eps, radius_m=R, rng=seed)
    hi = advice.skip_mean_error(TRACE, MASK, epsilon=eps * step, radius_m=R, rng=seed)
    floor = advice.epsilon_for_mean_error(TRACE, MASK, scheme="skip", target_error_m=1.0,
                                          radius_m=R).floor_m
    assert hi <= lo + 1e-9
    assert hi >= floor * (1 - 1e-3)  # a repeat is never closer on average than the lag


@settings(max_examples=12, deadline=None)
@given(st.floats(0.2, 20.0).filter(lambda f: abs(f - 1.0) > 1e-3))
def test_advised_epsilon_is_the_least_that_meets_the_target(factor):
    floor = advice.epsilon_for_mean_error(TRACE, MASK, scheme="skip", target_error_m=1.0,
                                          radius_m=R).floor_m
    adv = advice.epsilon_for_mean_error(TRACE, MASK, scheme="skip", target_error_m=factor * floor,
                                        radius_m=R)
    assert adv.reachable == (factor > 1.0)
    if adv.reachable:
        at = advice.skip_mean_error(TRACE, MASK, epsilon=adv.epsilon, radius_m=R)
        below = advice.skip_mean_error(TRACE, MASK, epsilon=adv.epsilon / 1.001, radius_m=R)
        assert at <= adv.target_m < below


def test_without_landmarks_skip_is_the_public_formula():
    none = np.zeros(len(TRACE), dtype=bool)
    adv = advice.epsilon_for_mean_error(TRACE, none, scheme="skip", target_error_m=300.0,
                                        radius_m=R)
    assert not adv.reads_trace and adv.epsilon == adv.fresh_epsilon and adv.floor_m == 0


def test_bad_input_is_refused():
    with pytest.raises(ParameterError, match="no closed form"):
        advice.epsilon_for_mean_error(TRACE, MASK, scheme="adaptive", target_error_m=100.0,
                                      radius_m=R)
    with pytest.raises(ParameterError, match="integer seed"):
        advice.epsilon_for_mean_error(TRACE, MASK, scheme="skip", target_error_m=100.0,
                                      radius_m=R, rng=None)
    with pytest.raises(ParameterError):
        advice.skip_mean_error(TRACE, MASK, epsilon=-1.0, radius_m=R)
