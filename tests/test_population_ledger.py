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
        ch = led.charge(recs, epsilon=eps)
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
    led.charge(np.array([3.0] * 5 + [0.0] * 15), epsilon=0.5)  # 5 users need 1.5 > 0.5: excluded
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
    led.charge([0.0], epsilon=0.1)
    led.noisy_excluded(rng=1)
    led.noisy_excluded(rng=2)
    with pytest.raises(ParameterError, match="reserve"):
        led.noisy_excluded(rng=3)
    with pytest.raises(ParameterError, match="reserve"):
        _ledger([0.05], display_epsilon=0.1, max_displays=1)


def test_ledger_counts_leave_out_users_who_cannot_pay():
    traj, _ = generate_population(30, points_per_user=60, rng=2)
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


# ---- users enrolled after the ledger was created (ProPer's live database) -------------------
def _frame(uids, budgets):
    return pd.DataFrame({"uid": list(uids), "epsilon": list(budgets)})


query_lists = st.lists(st.tuples(st.floats(0.001, 1.0), st.lists(st.integers(0, 4), min_size=8,
                                                                  max_size=8)), max_size=6)


@settings(max_examples=40, deadline=None)
@given(old=st.lists(st.floats(0.06, 3.0), min_size=1, max_size=4),
       new=st.lists(st.floats(0.06, 3.0), min_size=1, max_size=4),
       before=query_lists, after=query_lists, show=st.booleans())
def test_adding_users_then_spending_equals_enrolling_them_at_their_time(old, new, before,
                                                                        after, show):
    uo = [f"o{i}" for i in range(len(old))]
    un = [f"n{i}" for i in range(len(new))]
    kw = {"display_epsilon": 0.01, "max_displays": 2}
    led = Ledger(_frame(uo, old), **kw)
    only_old = Ledger(_frame(uo, old), **kw)      # never enrols anyone
    only_new = Ledger(_frame(un, new), **kw)      # the new users, from their enrolment on
    from_start = Ledger(_frame(uo + un, old + new), **kw)  # everyone from the start

    def records(counts, uids):
        return pd.Series(counts[:len(uids)] + [0] * max(0, len(uids) - len(counts)),
                         index=uids, dtype=float)

    for eps, counts in before:
        led.charge(records(counts, uo), epsilon=eps)
        only_old.charge(records(counts, uo), epsilon=eps)
    if not before:  # enrolled before any query: the same as being there from the start
        assert led.add_users(_frame(un, new)) == len(new)
        for eps, counts in after:
            q = pd.concat([records(counts, uo), records(counts[::-1], un)])
            led.charge(q, epsilon=eps)
            from_start.charge(q, epsilon=eps)
        assert np.array_equal(led.uids, from_start.uids)
        assert np.allclose(led.spent, from_start.spent, rtol=0, atol=1e-12)
        led.check()
        return
    if show:
        led.noisy_excluded(rng=0)
        only_old.noisy_excluded(rng=0)
    spent_old = led.spent.copy()
    led.add_users(_frame(un, new))
    assert np.array_equal(led.spent[:len(uo)], spent_old)  # existing users unaffected
    assert np.all(led.spent[len(uo):] == 0)                 # past consumption 0
    for eps, counts in after:
        q_old, q_new = records(counts, uo), records(counts[::-1], un)
        led.charge(pd.concat([q_old, q_new]), epsilon=eps)
        only_old.charge(q_old, epsilon=eps)
        only_new.charge(q_new, epsilon=eps)
    if show and after:
        for ledger in (led, only_old, only_new):
            ledger.noisy_excluded(rng=1)
    assert np.allclose(led.spent[:len(uo)], only_old.spent, rtol=0, atol=1e-12)
    assert np.allclose(led.spent[len(uo):], only_new.spent, rtol=0, atol=1e-12)
    assert np.all(led.spent <= led.budget)
    led.check()  # Σ spends = Σ charges, displays counted for the users enrolled at the time


def test_adding_users_after_a_display_keeps_the_totals():
    led = _ledger([1.0, 1.0], display_epsilon=0.1, max_displays=2)
    led.charge([1.0, 0.0], epsilon=0.2)
    led.noisy_excluded(rng=0)
    led.add_users(_frame(["late"], [0.5]))
    d = led.display_epsilon  # 0.1 snapped to the noise's grid
    assert led.spent.tolist() == pytest.approx([0.2 + d, d, 0.0])
    # the former total (displays × ε_display × the *current* number of users) would be wrong
    assert led.displays * d * led.budget.size != pytest.approx(led.spent.sum() - 0.2)
    led.check()
    assert led.total_charged == pytest.approx(0.2 + d * 2)
    ch = led.charge(pd.Series({"late": 3.0, "u0": 1.0}), epsilon=0.1)  # late: 0.3 ≤ 0.5 − reserve
    assert ch.included.tolist() == [True, True, True] and led.spent[2] == pytest.approx(0.3)
    assert led.affordable(pd.Series({"late": 1.0})).tolist() == [True, True, False]
    led.check()


def test_duplicate_or_bad_new_users_are_refused_and_change_nothing():
    led = _ledger([1.0, 2.0], display_epsilon=0.1, max_displays=1)
    led.charge([1.0, 1.0], epsilon=0.3)
    state = (led.uids.copy(), led.budget.copy(), led.spent.copy())
    for bad, match in [(_frame(["u1"], [1.0]), "already in the ledger"),
                       (_frame(["x", "x"], [1.0, 1.0]), "twice"),
                       (_frame(["x"], [0.0]), "finite number > 0"),
                       (_frame(["x"], [float("inf")]), "finite number > 0"),
                       (_frame(["x"], [0.05]), "display reserve"),
                       (pd.DataFrame({"uid": ["x"]}), "columns uid and epsilon")]:
        with pytest.raises(ParameterError, match=match):
            led.add_users(bad)
        now = (led.uids, led.budget, led.spent)
        assert all(np.array_equal(a, b) for a, b in zip(state, now, strict=True))
    led.check()
