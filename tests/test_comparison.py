"""Scheme comparison: reproducible seeds, closed-form budgets and guarantees, the expected
utility order (user-level noisiest, event-level most accurate), and who is landmark-private."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lmdk_core import (
    SCHEMES,
    PlanarLaplace,
    landmark_mask,
    load_sample,
    release_locations,
    select_user,
)
from lmdk_core.comparison import COMPARISON_COLUMNS, compare_schemes
from lmdk_core.errors import ParameterError
from lmdk_core.metrics import mae_metres
from lmdk_core.stays import suggest_places

T = 300
EPSILON = 1.0
RADIUS = 200.0


@pytest.fixture(scope="module")
def traj():
    rng = np.random.default_rng(11)
    return pd.DataFrame({
        "lat": 39.95 + np.cumsum(rng.normal(0, 2e-4, T)),
        "lon": 116.35 + np.cumsum(rng.normal(0, 2e-4, T)),
    })


@pytest.fixture(scope="module")
def landmarks():
    mask = np.zeros(T, dtype=bool)
    mask[[0, 1, 2, 50, 51, 120, 121, 122, 123, 200, 201, 250, 251, 252, 253, 254, 280, 281, 290,
          299]] = True
    return mask


@pytest.fixture(scope="module")
def table(traj, landmarks):
    return compare_schemes(traj, landmarks, epsilon=EPSILON, runs=6, rng=3, radius_m=RADIUS)


def row(table, scheme):
    return table.set_index("scheme").loc[scheme]


def test_columns_and_one_row_per_scheme(table):
    assert tuple(table.columns) == COMPARISON_COLUMNS
    assert table["scheme"].tolist() == list(SCHEMES)
    assert (table["runs"] == 6).all()
    assert table["landmark_private"].dtype == bool


def test_reproducible_with_a_seed_and_different_with_another(traj, landmarks):
    a = compare_schemes(traj, landmarks, epsilon=EPSILON, schemes=("uniform", "adaptive"), runs=3,
                        rng=9)
    b = compare_schemes(traj, landmarks, epsilon=EPSILON, schemes=("uniform", "adaptive"), runs=3,
                        rng=9)
    pd.testing.assert_frame_equal(a, b)
    c = compare_schemes(traj, landmarks, epsilon=EPSILON, schemes=("uniform", "adaptive"), runs=3,
                        rng=10)
    assert not np.allclose(a["mae_m_mean"], c["mae_m_mean"])


def test_default_draws_fresh_randomness(traj, landmarks):
    a, b = (compare_schemes(traj, landmarks, epsilon=EPSILON, schemes=("uniform",), runs=2)
            for _ in range(2))
    assert a["mae_m_mean"].iloc[0] != b["mae_m_mean"].iloc[0]


def test_runs_use_spawned_seed_sequence_children(traj, landmarks):
    """Each run k releases with a fresh generator on SeedSequence(seed).spawn(runs)[k] (a
    simulation: noise="fast", the same law as the published noise)."""
    got = compare_schemes(traj, landmarks, epsilon=EPSILON, schemes=("skip",), runs=4, rng=21)
    maes = [
        mae_metres(traj, release_locations(traj, landmarks, epsilon=EPSILON, scheme="skip",
                                           radius_m=RADIUS, noise="fast",
                                           rng=np.random.default_rng(child)))
        for child in np.random.SeedSequence(21).spawn(4)
    ]
    assert got.loc[0, "mae_m_mean"] == pytest.approx(np.mean(maes), rel=1e-12)
    assert got.loc[0, "mae_m_std"] == pytest.approx(np.std(maes, ddof=1), rel=1e-12)
    assert got.loc[0, "mae_m_std"] > 0  # runs are not copies of each other


def test_budgets_and_guarantees_match_closed_forms(table, landmarks):
    n_l = int(landmarks.sum())
    assert row(table, "event")["budget_spent"] == pytest.approx(T * EPSILON)
    assert row(table, "user")["budget_spent"] == pytest.approx(EPSILON)
    assert row(table, "uniform")["budget_spent"] == pytest.approx(T * EPSILON / (n_l + 1))
    assert row(table, "skip")["budget_spent"] == pytest.approx((T - n_l) * EPSILON)
    assert row(table, "event")["max_guarantee"] == pytest.approx((n_l + 1) * EPSILON)
    for scheme in ("uniform", "skip"):
        assert row(table, scheme)["max_guarantee"] == pytest.approx(EPSILON)
    # user level: ε/T everywhere, so G_t = (|L| + 1) ε / T
    assert row(table, "user")["max_guarantee"] == pytest.approx((n_l + 1) * EPSILON / T)
    assert row(table, "event")["fresh_share_mean"] == 1.0
    assert row(table, "skip")["fresh_share_mean"] == pytest.approx((T - n_l) / T)


def test_only_event_level_is_not_landmark_private(table):
    assert table.loc[~table["landmark_private"], "scheme"].tolist() == ["event"]
    assert (table.loc[table["landmark_private"], "max_guarantee"] <= EPSILON + 1e-9).all()


def test_without_landmarks_every_scheme_is_landmark_private(traj):
    t = compare_schemes(traj, np.zeros(T, dtype=bool), epsilon=EPSILON,
                        schemes=("event", "uniform", "skip"), runs=2)
    assert t["landmark_private"].all()
    # L = ∅: uniform is ε/(0+1) = ε, i.e. the same allocation as event
    assert t.loc[1, "budget_spent"] == pytest.approx(t.loc[0, "budget_spent"])


def test_utility_order_user_worse_than_uniform_worse_than_event(table):
    user, uniform, event = (row(table, s)["mae_m_mean"] for s in ("user", "uniform", "event"))
    assert user > uniform > event
    # event level: lattice mechanism, mean error ≈ 2.86·r/ε (6 runs × 300 points)
    assert event == pytest.approx(PlanarLaplace(epsilon=EPSILON, radius_m=RADIUS).mean_error_m,
                                  rel=0.06)


def test_utility_order_on_the_sample_trajectory():
    sample = load_sample()
    user = select_user(sample, sorted(sample["uid"].unique())[0]).iloc[:3000].reset_index(drop=True)
    places = suggest_places(user)
    mask = landmark_mask(user, places.rename(columns={"suggested_radius_m": "radius_m"}))
    assert 0 < mask.sum() < len(user)
    t = compare_schemes(user, mask, epsilon=EPSILON, schemes=("user", "uniform", "event"), runs=3,
                        rng=0)
    user_mae, uniform_mae, event_mae = t["mae_m_mean"]
    assert user_mae > uniform_mae > event_mae
    assert t["landmark_private"].tolist() == [True, True, False]


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"schemes": ("uniform", "magic")}, "magic"),
        ({"schemes": ()}, "none given"),
        ({"runs": 0}, "runs"),
        ({"rng": -1}, "rng"),
        ({"rng": 1.5}, "rng"),
        ({"radius_m": 0}, "radius_m"),
        ({"schemes": ("uniform",), "params": {"bd": {"w": 3}}}, "bd"),
        ({"schemes": ("bd",), "params": {"bd": {"w": 0}}}, "w"),
    ],
)
def test_invalid_arguments_raise_parameter_errors(traj, landmarks, kwargs, fragment):
    with pytest.raises(ParameterError, match=fragment):
        compare_schemes(traj, landmarks, epsilon=EPSILON, **kwargs)


def test_params_reach_the_scheme(traj, landmarks):
    a = compare_schemes(traj, landmarks, epsilon=EPSILON, schemes=("bd",), runs=2,
                        params={"bd": {"w": 2}})
    b = compare_schemes(traj, landmarks, epsilon=EPSILON, schemes=("bd",), runs=2,
                        params={"bd": {"w": 40}})
    assert a.loc[0, "budget_spent"] != b.loc[0, "budget_spent"]
