"""The ProPer-style ledger: never charges beyond a budget, excluded users pay nothing, totals add
up, and the exclusion display is a noisy (DP) count paid from a reserve."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmdk_core.errors import ParameterError
from lmdk_core.population import Grid, Ledger, bounded_records, generate_population, ledger_counts


def _ledger(budgets, **kw):
    return Ledger(pd.DataFrame({"uid": [f"u{i}" for i in range(len(budgets))],
                                "epsilon": budgets}), **kw)


@settings(max_examples=60)
@given(budgets=st.lists(st.floats(0.06, 5.0), min_size=1, max_size=12),
       queries=st.lists(st.tuples(st.floats(0.001, 2.0), st.integers(0, 5)), max_size=15),
       data=st.data())
def test_ledger_invariants(budgets, queries, data):
    led = _ledger(budgets, display_epsilon=0.01, max_displays=3)
    charged = 0.0
    for eps, _ in queries:
        recs = np.array(data.draw(st.lists(st.integers(0, 5), min_size=len(budgets),
                                           max_size=len(budgets))), dtype=float)
        before = led.spent.copy()
        ch = led.charge(recs, eps)
        # excluded users pay nothing; included users pay exactly ε × records
        assert np.all(led.spent[~ch.included] == before[~ch.included])
        assert np.allclose(led.spent[ch.included] - before[ch.included], eps * recs[ch.included])
        # a user is excluded only when the query would overdraw their query budget
        room = led.budget - led.reserve
        assert np.all(before[~ch.included] + eps * recs[~ch.included] > room[~ch.included])
        charged += float(ch.cost.sum())
        if led.displays < led.max_displays and data.draw(st.booleans()):
            led.noisy_excluded(rng=0)
            charged += led.display_epsilon * len(budgets)
        assert np.all(led.spent <= led.budget)  # never beyond a budget
        assert led.spent.sum() == pytest.approx(charged, rel=1e-9, abs=1e-12)
        led.check()


def test_exclusion_display_is_noisy_and_unbiased():
    led = _ledger([1.0] * 20, display_epsilon=0.5, max_displays=1)
    led.charge(np.array([3.0] * 5 + [0.0] * 15), 0.5)  # 5 users need 1.5 > 0.5: excluded
    assert led.history[-1].n_excluded == 5
    shown = []
    for s in range(400):
        led.displays = 0  # re-display the same state to see the noise's law
        shown.append(led.noisy_excluded(rng=s))
    shown = np.array(shown)
    assert len(set(shown)) > 3  # not the true count every time
    assert abs(shown.mean() - 5) < 0.5  # centred on it (var ≈ 7.6, 400 draws)


def test_display_reserve_is_enforced():
    led = _ledger([1.0], display_epsilon=0.1, max_displays=2)
    led.charge([0.0], 0.1)
    led.noisy_excluded(rng=1)
    led.noisy_excluded(rng=2)
    with pytest.raises(ParameterError, match="reserve"):
        led.noisy_excluded(rng=3)
    with pytest.raises(ParameterError, match="reserve"):
        _ledger([0.05], display_epsilon=0.1, max_displays=1)


def test_ledger_counts_leave_out_users_who_cannot_pay():
    traj, _ = generate_population(30, points_per_user=60, seed=2)
    grid = Grid.covering(start="2008-02-02", end="2008-02-09", cell_m=2000)
    rec = bounded_records(traj, grid=grid)
    budgets = pd.DataFrame({"uid": sorted(rec["uid"].unique()), "epsilon": 0.5})
    budgets.loc[:9, "epsilon"] = 0.06  # ten poor users
    led = Ledger(budgets, display_epsilon=0.01, max_displays=1)
    n_keys = grid.n_bins * grid.n_cells
    noisy, ch = ledger_counts(led, rec, n_keys=n_keys, epsilon=0.002, rng=4)
    per_user = rec.groupby("uid").size().reindex(budgets["uid"]).to_numpy()
    assert np.array_equal(ch.included, 0.002 * per_user <= led.budget - led.reserve)
    assert ch.n_excluded == 10
    assert noisy.shape == (n_keys,) and noisy.dtype == np.int64
    led.check()


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), 1e3])
def test_bad_query_epsilon_refused_before_any_charge(bad):
    led = _ledger([1.0, 1.0])
    rec = pd.DataFrame({"uid": ["u0", "u1"], "key": [0, 1]})
    with pytest.raises(ParameterError):
        ledger_counts(led, rec, n_keys=2, epsilon=bad, rng=0)
    assert np.all(led.spent == 0) and not led.history
