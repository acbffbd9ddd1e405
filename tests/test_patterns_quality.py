"""Prec / Rec / Q / MRE against plain Python set arithmetic."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmdk_core.errors import ParameterError
from lmdk_core.patterns import Quality, confusion, quality, quality_mre

pairs = st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=20)


@settings(max_examples=100)
@given(pairs, pairs, st.floats(0, 1))
def test_confusion_and_scores_match_sets(truth, answers, alpha):
    t, a = set(truth), set(answers)
    tp, fp, fn = confusion(np.array(truth).reshape(-1, 2), np.array(answers).reshape(-1, 2))
    assert (tp, fp, fn) == (len(t & a), len(a - t), len(t - a))
    q = quality([np.array(truth).reshape(-1, 2)], [np.array(answers).reshape(-1, 2)], alpha=alpha)
    if a:
        assert q.precision == pytest.approx(len(t & a) / len(a))
    if t:
        assert q.recall == pytest.approx(len(t & a) / len(t))
    assert q.q == pytest.approx(alpha * q.precision + (1 - alpha) * q.recall)
    assert q.mre == pytest.approx(1 - q.q)


def test_empty_conventions():
    assert Quality(0, 0, 0, 0.5).q == 1.0  # nothing to find, nothing claimed
    assert Quality(0, 0, 3, 0.5).precision == 0.0  # everything missed
    assert Quality(0, 2, 0, 0.5).recall == 0.0  # only false alarms


def test_mre_relative_to_reference():
    assert quality_mre(0.6, 0.8) == pytest.approx(0.25)
    with pytest.raises(ParameterError):
        quality_mre(0.5, 0.0)
    with pytest.raises(ParameterError):
        quality([], [np.zeros((0, 2))])
