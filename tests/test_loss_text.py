"""Issue 27, major 2: the loss section leads with what is protected and what is not, one plain
sentence per number, the uncorrelated guarantee first and the correlated bounds as "what
correlation could add in the worst case, under this model"; no bare five-digit number."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from apptest_helpers import FakeMap, add_place_by_click, metric, offline_page, run
from browser_driver import home_of_first_user
from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

import dashboard.map_section as map_section
from lmdk_core.errors import ParameterError
from lmdk_core.loss_text import MEANINGLESS_ABOVE, loss_sentences, odds_factor

BIG = re.compile(r"\d{1,3}(,\d{3})+|\d{5,}")


def _numbers(text: str) -> list[float]:
    return [float(x.replace(",", "")) for x in re.findall(r"\d[\d,]*(?:\.\d+)?", text)]


@given(g=st.floats(0.0, 20.0), eps=st.floats(0.01, 20.0))
def test_the_guarantee_sentence_says_keeps_or_breaks_the_promise(g, eps):
    s = loss_sentences(epsilon=eps, guarantee=g, n_landmarks=3, radius_m=100.0)
    keeps = g <= eps * (1 + 1e-9)
    assert ("does not keep the landmark promise" in s.protected) is (not keeps)
    assert (" ≤ ε = " in s.protected) is keeps
    assert s.lines() == [s.protected, s.not_protected]  # no model: no correlated sentence


@pytest.mark.parametrize("loss, factor", [(0.0, 1.0), (1.0, math.e), (2.0, 7.389), (10.0, 22026)])
def test_odds_factor_is_e_to_the_loss(loss, factor):
    assert _numbers(odds_factor(loss))[-1] == pytest.approx(factor, rel=5e-3)


def test_odds_factor_refuses_nonsense():
    with pytest.raises(ParameterError):
        odds_factor(-1.0)
    with pytest.raises(ParameterError):
        loss_sentences(epsilon=0.0, guarantee=0.0, n_landmarks=0, radius_m=100.0)


def test_large_bounds_are_explained_and_never_bare():
    s = loss_sentences(epsilon=1.0, guarantee=1.0, n_landmarks=2000, radius_m=100.0,
                       separation_m=100.0, pair=7_480.0, worst=222_266.0, joint=84_603.0,
                       cap=301_000.0)
    lines = s.lines()
    assert lines[0].startswith("Protected") and lines[1].startswith("Not protected")
    assert lines[2].startswith("What correlation could add in the worst case, under this model")
    assert "84,603 (84,603 times your ε)" in s.joint
    assert "222,266 for the model's two farthest places (222,266 times your ε)" in s.correlated
    assert s.large is not None and "promises practically nothing" in s.large
    # every five-digit number is in a sentence that says what it is (times ε, bound, odds)
    for line in lines:
        for _ in BIG.finditer(line):
            assert "ε" in line or "odds" in line
    # below the threshold: no "practically nothing" sentence
    small = loss_sentences(epsilon=1.0, guarantee=1.0, n_landmarks=2, radius_m=100.0,
                           separation_m=100.0, pair=1.5, worst=MEANINGLESS_ABOVE, joint=None,
                           cap=40.0)
    assert small.large is None and small.joint is None and "1.5 times your ε" in small.correlated


def _lead(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith("- Protected")]


def test_the_page_leads_with_the_guarantee_then_the_worst_case(monkeypatch):
    fake_map = FakeMap()
    monkeypatch.setattr(map_section.map_element, "show", fake_map)
    home = home_of_first_user()
    at = run(offline_page())
    (lead,) = _lead(at)
    assert "no moment of this trace is in a marked place yet" in lead
    add_place_by_click(at, fake_map, *home)
    (lead,) = _lead(at)
    lines = lead.splitlines()
    assert lines[0].startswith("- Protected") and lines[1].startswith("- Not protected")
    assert lines[2].startswith("- What correlation could add in the worst case")
    n = int(re.search(r"at your ([\d,]+) landmark moments", lines[0]).group(1).replace(",", ""))
    assert n > 1000
    g = float(re.search(r"guarantee G = ([\d.]+)", lines[0]).group(1))
    eps = float(re.search(r"ε = ([\d.]+)\.", lines[0]).group(1))
    assert 0 < g <= eps
    worst = float(metric(at, "Bound, worst pair").value.replace(",", ""))
    assert f"up to {metric(at, 'Bound, worst pair').value} for the model's two farthest" in lead
    assert worst >= g * 0.999  # a correlated bound is never below the uncorrelated guarantee
    joint = metric(at, "Bound, landmarks + t").value
    assert f"in the same worst case: up to {joint}" in lead
    assert np.isfinite(float(joint.replace(",", "")))
