"""Numbers the README states about the product's behaviour on the bundled sample, checked
against the code that produces them (issue 24 finding 12: prose numbers went stale)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import lmdk_core as lm
from lmdk_core import advice
from lmdk_core import dummies as d

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
PLACES = [lm.Place("Home", 39.9925, 116.3395, 100), lm.Place("Clinic", 39.9820, 116.3564, 100)]


@pytest.fixture(scope="module")
def alice():
    traj = lm.select_user(lm.load_sample(), "alice")
    return traj, lm.landmark_mask(traj, PLACES)


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_share_of_ordinary_moments_that_become_fake_stays(alice):
    """'at ε_sel = 0.1 about 96 % of them become landmarks on the sample'."""
    _, mask = alice
    claimed = float(re.search(r"at ε_sel = 0\.1 about (\d+) % of them become landmarks",
                              _flat(README)).group(1))
    share = d.expected_dummies(mask, epsilon_select=0.1) / int((~mask).sum())
    assert abs(100 * share - claimed) <= 1.0


def test_fake_stays_cost_skip_about_the_stated_factor(alice):
    """'Skip's error is about 4 times that without dummies' (median of eight draws each; a draw
    that made every moment a landmark releases nothing and has no error: left out, as the README
    says separately)."""
    traj, mask = alice
    claimed = float(re.search(r"Skip's error is about (\d+) times", _flat(README)).group(1))
    plain = np.median([lm.mae_metres(traj, lm.release_locations(
        traj, mask, epsilon=1.0, scheme="skip", radius_m=200, rng=i, noise="fast"))
        for i in range(6)])
    hidden = np.nanmedian([lm.mae_metres(traj, lm.release_hidden(
        traj, mask, epsilon=1.0, epsilon_select=0.1, scheme="skip", radius_m=200, rng=i,
        noise="fast").release) for i in range(8)])
    ratio = hidden / plain
    assert 0.7 * claimed <= ratio <= 1.4 * claimed, ratio


def test_the_tour_defaults_stay_within_a_kilometre_and_uniform_is_thousands_of_km_off(alice):
    """'on the sample the released points stay within about a kilometre of the trace before and
    after marking Home and Clinic (Uniform would be thousands of km off there)'."""
    traj, mask = alice
    assert "within about a kilometre" in _flat(README) and "thousands of km off" in _flat(README)
    for m in (np.zeros(len(traj), bool), mask):
        maes = [lm.mae_metres(traj, lm.release_locations(
            traj, m, epsilon=1.0, scheme="skip", radius_m=200, rng=i, noise="fast"))
            for i in range(3)]
        assert np.median(maes) < 1000.0
    uniform_m = advice.mean_error_factor() * 200.0 * (int(mask.sum()) + 1) / 1.0
    assert uniform_m > 2_000_000.0  # 2.86·r·(|L|+1)/ε: about 4,000 km
