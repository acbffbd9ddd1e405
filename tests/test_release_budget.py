"""release_with_budget: an arbitrary ε_t vector, checked against the closed-form schemes."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lmdk_core import ParameterError, release_locations, release_values, release_with_budget


def _traj(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame({
        "time": pd.date_range("2024-03-07", periods=n, freq="30s", tz="UTC"),
        "lat": 39.99 + np.cumsum(rng.normal(0, 1e-4, n)),
        "lon": 116.33 + np.cumsum(rng.normal(0, 1e-4, n)),
    })


def test_constant_budget_reproduces_uniform_exactly():
    traj = _traj(300)
    mask = np.zeros(300, bool)
    mask[[5, 40, 41, 200]] = True
    uni = release_locations(traj, mask, epsilon=1.0, scheme="uniform", radius_m=150, rng=9)
    bud = release_with_budget(traj, budget=np.full(300, 1.0 / 5), landmarks=mask, radius_m=150,
                              rng=9)
    np.testing.assert_array_equal(bud.lat, uni.lat)
    np.testing.assert_array_equal(bud.lon, uni.lon)
    assert bud.scheme == "budget" and bud.epsilon == pytest.approx(1.0)
    assert bud.time is not None and len(bud.time) == 300


def test_skip_budget_reproduces_skip_values():
    x = np.linspace(0, 10, 50)
    mask = np.zeros(50, bool)
    mask[[0, 7, 8, 49]] = True
    skip = release_values(x, mask, epsilon=2.0, scheme="skip", sensitivity=0.5, rng=4)
    bud = release_with_budget(x, budget=np.where(mask, 0.0, 2.0), landmarks=mask, sensitivity=0.5,
                              rng=4)
    np.testing.assert_array_equal(bud.values, skip.values)
    np.testing.assert_array_equal(bud.published, skip.published)


@given(st.lists(st.one_of(st.just(0.0), st.floats(1e-6, 3)), min_size=1, max_size=60), st.data())
def test_spent_budget_and_reported_guarantee(budget, data):
    eps = np.array(budget)
    idx = data.draw(st.lists(st.integers(0, len(eps) - 1), max_size=len(eps)))
    rel = release_with_budget(np.zeros(len(eps)), budget=eps, landmarks=idx, sensitivity=1, rng=0)
    np.testing.assert_array_equal(rel.budget, eps)
    np.testing.assert_array_equal(rel.published, eps > 0)
    brute = max(sum(eps[i] for i in set(idx) | {t}) for t in range(len(eps)))
    assert rel.epsilon == pytest.approx(brute)
    # where nothing fresh is released, the previous output repeats (NaN before the first)
    for t in np.flatnonzero(eps == 0):
        prev = rel.values[t - 1] if t else np.nan
        assert (np.isnan(prev) and np.isnan(rel.values[t])) or rel.values[t] == prev


@pytest.mark.parametrize(("eps", "kwargs", "match"), [
    ([0.1, -0.1, 0.2], {"sensitivity": 1}, "budget must be >= 0"),
    ([0.1, np.nan, 0.2], {"sensitivity": 1}, "NaN"),
    ([0.1, 0.2], {"sensitivity": 1}, "length mismatch"),
    ([0.1, 0.2, 0.3], {"sensitivity": 1, "radius_m": 100}, "not both"),
    ([0.1, 0.2, 0.3], {"sensitivity": 0}, "sensitivity"),
])
def test_invalid_budgets_are_refused(eps, kwargs, match):
    with pytest.raises(ParameterError, match=match):
        release_with_budget(np.zeros(3), budget=eps, **kwargs)


def test_users_epsilon_is_recorded_and_eps_is_a_deprecated_alias():
    x = np.zeros(4)
    rel = release_with_budget(x, [0], budget=[0.6] * 4, epsilon=0.5, sensitivity=1)
    assert rel.epsilon == 0.5 and rel.budget_source == "custom"
    assert rel.params["achieved_guarantee"] == pytest.approx(1.2)
    with pytest.warns(DeprecationWarning, match="pass budget="):
        old = release_with_budget(x, eps=[0.1, 0, 0.2, 0], sensitivity=1, rng=1)
    np.testing.assert_array_equal(old.budget, [0.1, 0, 0.2, 0])
    with pytest.raises(ParameterError, match="not both"):
        release_with_budget(x, budget=[0.1] * 4, eps=[0.1] * 4, sensitivity=1)
    with pytest.raises(ParameterError, match="budget="):
        release_with_budget(x, sensitivity=1)
