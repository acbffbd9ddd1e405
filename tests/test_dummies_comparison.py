"""The dummy-landmark variant of each scheme in the comparison (comparison.compare_with_dummies)
and the combined release (dummies.release_hidden)."""

from __future__ import annotations

import numpy as np
import pytest

from lmdk_core import dummies as d
from lmdk_core.accounting import landmark_guarantee
from lmdk_core.comparison import DUMMY_COMPARISON_COLUMNS, compare_with_dummies
from lmdk_core.errors import ParameterError
from lmdk_core.release import SCHEMES


def _series(n=300, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n).cumsum()
    return x, rng.random(n) < 0.3


def test_release_hidden_accounts_and_protects():
    x, L = _series()
    out = d.release_hidden(x, L, epsilon=1.0, epsilon_select=0.2, scheme="uniform",
                           sensitivity=1.0, rng=3)
    assert out.release.epsilon == d.split_budget(1.0, epsilon_select=0.2)
    assert out.epsilon_total == out.release.epsilon + 0.2 <= 1.0
    assert np.array_equal(out.release.landmarks, out.hidden.mask)
    g = landmark_guarantee(out.release.budget, out.hidden.mask)
    assert g.max() <= out.release.epsilon + 1e-12
    # uniform spends ε_scheme/(|L'|+1): more landmarks than L, so |L| is no longer what it shows
    assert out.release.budget[0] == pytest.approx(
        out.release.epsilon / (out.hidden.mask.sum() + 1))
    a = d.release_hidden(x, L, epsilon=1.0, epsilon_select=0.2, scheme="skip", sensitivity=1.0,
                         rng=5)
    b = d.release_hidden(x, L, epsilon=1.0, epsilon_select=0.2, scheme="skip", sensitivity=1.0,
                         rng=5)
    assert np.array_equal(a.hidden.mask, b.hidden.mask)
    assert np.array_equal(a.release.values, b.release.values, equal_nan=True)
    with pytest.raises(ParameterError):
        d.release_hidden(x, L, epsilon=1.0, epsilon_select=1.0, scheme="skip", sensitivity=1.0)
    with pytest.raises(ParameterError):
        d.release_hidden(x, L, epsilon=1.0, epsilon_select=0.1, scheme="skip", sensitivity=1.0,
                         radius_m=100)


def test_compare_with_dummies_values_and_locations():
    x, L = _series()
    df = compare_with_dummies(x, L, epsilon=1.0, epsilon_select=0.1, sensitivity=1.0,
                              runs=3, rng=1)
    assert tuple(df.columns) == DUMMY_COMPARISON_COLUMNS
    assert df["scheme"].tolist() == list(SCHEMES)
    priv = df.set_index("scheme")["landmark_private_dummies"]
    assert priv.drop("event").all()
    assert (df["dummies_mean"] >= 1).all()
    # user-level ignores landmarks: only ε - ε_sel instead of ε changes its noise
    user = df.set_index("scheme").loc["user"]
    assert user["mae_ratio"] == pytest.approx(1.0 / 0.9, rel=0.35)
    again = compare_with_dummies(x, L, epsilon=1.0, epsilon_select=0.1, sensitivity=1.0,
                                 runs=3, rng=1)
    assert df.equals(again)
    lat = 39.9 + np.cumsum(np.full(120, 1e-4))
    loc = compare_with_dummies((lat, np.full(120, 116.3)), L[:120], epsilon=2.0, epsilon_select=0.2,
                               schemes=("skip", "adaptive"), runs=2, radius_m=50, rng=4)
    assert loc["mae_dummies"].gt(0).all()
    with pytest.raises(ParameterError):
        compare_with_dummies(x, L, epsilon=1.0, epsilon_select=0.1, sensitivity=1.0,
                             schemes=("nope",))


def test_skip_with_every_moment_a_landmark_reports_no_error_quietly():
    """Skip publishes only at ordinary moments: when the landmarks (real or dummy) cover every
    moment it releases nothing, and the table says so with NaN, not a warning or a number."""
    import warnings

    x, _ = _series(n=60)
    every = np.ones(60, bool)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df = compare_with_dummies(x, every, epsilon=1.0, epsilon_select=0.1, sensitivity=1.0,
                                  schemes=("skip", "uniform"), runs=2, rng=0).set_index("scheme")
    assert np.isnan(df.loc["skip", "mae_real"]) and np.isnan(df.loc["skip", "mae_dummies"])
    assert df.loc["uniform", "mae_dummies"] > 0


def test_readme_dummy_example_runs_as_printed():
    import re
    from pathlib import Path

    import lmdk_core as lm

    text = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Hiding when you were at your places"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    traj = lm.select_user(lm.load_sample(), "alice")
    L = lm.landmark_mask(traj, [(39.9925, 116.3395, 100), (39.9820, 116.3564, 100)])
    ns = {"lm": lm, "traj": traj, "L": L}
    exec(compile(code, "README.md", "exec"), ns)
    assert ns["iv"].n_after == 1259 and ns["iv"].landmarks_after == 825
    out = ns["out"]
    assert out.hidden.n_real == 825 and out.epsilon_total <= 1.0
    assert out.hidden.params["seeded"] is False
    assert out.hidden.params["generator"] == "stays"  # the default: dummy stays
    assert out.hidden.params["stay_moments"] == 13  # 1 % of 1,259 moments, rounded up


def test_dummy_stays_in_the_combined_release_and_the_comparison():
    """The default generator (dummy stays) through release_hidden and compare_with_dummies: L'
    contains L, the scheme ran on L' with ε − ε_sel, and the mean dummy count matches the
    exact expectation."""
    x, L = _series()
    out = d.release_hidden(x, L, epsilon=1.0, epsilon_select=0.2, scheme="skip",
                           sensitivity=1.0, rng=3)
    assert out.hidden.params["generator"] == "stays"
    assert np.all(out.hidden.mask[L]) and np.array_equal(out.release.landmarks, out.hidden.mask)
    assert out.epsilon_total == out.release.epsilon + 0.2 <= 1.0
    assert landmark_guarantee(out.release.budget, out.hidden.mask).max() <= out.release.epsilon
    longer = d.release_hidden(x, L, epsilon=1.0, epsilon_select=0.2, scheme="skip",
                              sensitivity=1.0, rng=3, stay_moments=30)
    assert longer.hidden.params["stay_moments"] == 30
    df = compare_with_dummies(x, L, epsilon=1.0, epsilon_select=0.2, sensitivity=1.0,
                              schemes=("skip", "uniform"), runs=20, rng=2, generator="stays")
    assert df["landmark_private_dummies"].all()
    expected = d.expected_dummies(L, epsilon_select=0.2)
    assert df["dummies_mean"].iloc[0] == pytest.approx(expected, rel=0.1)
