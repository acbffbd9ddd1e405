"""dashboard.compute: the per-session caches give what the library computes (their bodies,
called through ``__wrapped__``: session caches only run inside a page)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard import compute
from lmdk_core import metrics, trajectory
from lmdk_core.release import release_locations


def _traj(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "uid": "u",
        "time": pd.Timestamp("2024-01-01", tz="UTC") + pd.to_timedelta(np.arange(n) * 30, "s"),
        "lat": 39.9 + np.cumsum(rng.normal(0, 1e-4, n)),
        "lon": 116.3 + np.cumsum(rng.normal(0, 1e-4, n)),
    })


@given(n=st.integers(2, 40), seed=st.integers(0, 10_000), scheme=st.sampled_from(
    ["uniform", "skip", "adaptive"]))
@settings(max_examples=15, deadline=None)
def test_release_error_is_the_library_error_and_mae(n, seed, scheme):
    traj = _traj(n, seed)
    mask = np.zeros(n, bool)
    mask[:: max(1, n // 3)] = True
    rel = release_locations(traj, mask, epsilon=1.0, scheme=scheme, radius_m=100.0,
                            rng=np.random.default_rng(seed))
    err, mae = compute.release_error.__wrapped__(("t", n, seed, scheme), "token", traj, rel)
    np.testing.assert_array_equal(err, metrics.error_metres(traj, rel))
    assert np.isclose(mae, metrics.mae_metres(traj, rel), rtol=1e-12, equal_nan=True)


def test_summary_matches_the_library():
    traj = _traj(50, 3)
    assert compute.summary.__wrapped__(("s", 50), traj) == trajectory.summary(traj)
