"""ReleaseLedger: sequential composition of the releases a user took away, against brute force."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmdk_core import ParameterError, ReleaseLedger, landmark_guarantee, release_locations

POOL = pd.date_range("2024-05-01", periods=12, freq="min").as_unit("ns").to_numpy()


def fake_release(times, budget, landmarks):
    return SimpleNamespace(time=np.asarray(times), budget=np.asarray(budget, float),
                           landmarks=np.asarray(landmarks, bool))


@st.composite
def releases(draw):
    out = []
    for _ in range(draw(st.integers(1, 4))):
        idx = sorted(draw(st.sets(st.integers(0, POOL.size - 1), min_size=1, max_size=8)))
        budget = draw(st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0]),
                               min_size=len(idx), max_size=len(idx)))
        lm = draw(st.lists(st.booleans(), min_size=len(idx), max_size=len(idx)))
        out.append(fake_release(POOL[idx], budget, lm))
    return out


def brute_force_total(rels) -> float:
    """max over every t in the pool of Σ_r Σ_{i ∈ (L ∪ {t}) ∩ T_r} ε^r_i, by plain loops."""
    landmarks = {t for r in rels for t, m in zip(r.time, r.landmarks, strict=True) if m}
    best = 0.0
    for t in POOL:
        protected = landmarks | {t}
        total = sum(e for r in rels for ti, e in zip(r.time, r.budget, strict=True)
                    if ti in protected)
        best = max(best, total)
    return best


@settings(max_examples=60)
@given(releases())
def test_total_loss_equals_brute_force(rels):
    ledger = ReleaseLedger()
    for r in rels:
        ledger = ledger.add(r)
    assert ledger.total_loss() == pytest.approx(brute_force_total(rels), abs=1e-12)
    assert len(ledger) == len(rels)


@settings(max_examples=30)
@given(releases())
def test_one_release_costs_its_max_landmark_guarantee(rels):
    r = rels[0]
    ledger = ReleaseLedger().add(r)
    assert ledger.total_loss() == pytest.approx(landmark_guarantee(r.budget, r.landmarks).max())


def test_two_downloads_of_independent_releases_add_up():
    traj = pd.DataFrame({"time": POOL, "lat": np.linspace(39.9, 39.91, 12), "lon": 116.3})
    mask = np.zeros(12, bool)
    mask[[2, 3]] = True
    a = release_locations(traj, mask, epsilon=1.0, scheme="uniform")
    b = release_locations(traj, mask, epsilon=1.0, scheme="skip")
    ledger = ReleaseLedger().add(a, key="a", label="uniform")
    assert ledger.total_loss() == pytest.approx(1.0)
    # the same draw again (e.g. its GeoJSON after its CSV) reveals nothing new: counted once
    assert ledger.add(a, key="a") is ledger and ledger.total_if_added(a, key="a") == 1.0
    assert not ledger.would_exceed(a, 1.0, key="a")
    # a second, independent draw adds up: uniform ε/3 everywhere + skip ε off the landmarks
    assert ledger.total_if_added(b, key="b") == pytest.approx(1.0 + 1.0)
    assert ledger.would_exceed(b, 1.0, key="b") and not ledger.would_exceed(b, 2.0, key="b")
    # a release of a disjoint time range still pays for its landmarks at every t
    later = fake_release(POOL + np.timedelta64(1, "h"), np.full(12, 0.25), mask)
    assert ledger.total_if_added(later) == pytest.approx(1.0 + 2 * 0.25)


def test_places_marked_in_any_release_count_as_landmarks_for_all():
    a = fake_release(POOL[:3], [0.5, 0.5, 0.5], [False, False, False])
    b = fake_release(POOL[:3], [0.0, 0.5, 0.5], [True, False, False])
    # L = {t0}: t = t1 → a spends at t0 (landmark) and t1, b at t1 → 0.5 + 0.5 + 0.5
    assert ReleaseLedger().add(a).add(b).total_loss() == pytest.approx(1.5)


def test_empty_ledger_and_mixed_kinds():
    assert ReleaseLedger().total_loss() == 0.0
    with_time = fake_release(POOL[:2], [1.0, 1.0], [False, False])
    no_time = SimpleNamespace(time=None, budget=np.ones(2), landmarks=np.zeros(2, bool))
    ledger = ReleaseLedger().add(with_time)
    with pytest.raises(ParameterError, match="times"):
        ledger.add(no_time)
    with pytest.raises(ParameterError, match="length"):
        ReleaseLedger().add(fake_release(POOL[:2], [1.0], [False, False]))
    with pytest.raises(ParameterError, match="epsilon"):
        ledger.would_exceed(with_time, 0.0)


@given(st.lists(st.integers(-50, 50), max_size=60))
@settings(max_examples=50, deadline=None)
def test_sorted_unique_is_the_sorted_set(values):
    from lmdk_core.ledger import _sorted_unique

    got = _sorted_unique(np.asarray(values, dtype=np.int64))
    assert got.tolist() == sorted(set(values))
