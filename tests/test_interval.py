"""Release interval (lmdk_core.interval): one fix per N seconds, landmarks carried along."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmdk_core.errors import ParameterError
from lmdk_core.interval import release_interval


def _traj(seconds, uids=None):
    n = len(seconds)
    return pd.DataFrame({
        "uid": uids if uids is not None else ["a"] * n,
        "time": pd.to_datetime(np.asarray(seconds, dtype=np.int64), unit="s", utc=True),
        "lat": np.linspace(39.9, 40.0, n), "lon": np.linspace(116.3, 116.4, n),
    })


@settings(max_examples=25)
@given(st.lists(st.integers(0, 20_000), min_size=1, max_size=80, unique=True),
       st.sampled_from([1, 7, 60, 300, 3600]), st.integers(0, 2**31))
def test_keeps_first_fix_per_interval_and_its_landmark_flag(secs, step, seed):
    secs = sorted(secs)
    traj = _traj(secs)
    L = np.random.default_rng(seed).random(len(secs)) < 0.4
    out = release_interval(traj, L, interval_s=step)
    # independent reference: first row of each floor(t / step) group
    ref = pd.Series(np.arange(len(secs))).groupby(np.array(secs) // step).first().to_numpy()
    assert out.kept.tolist() == ref.tolist()
    assert out.landmarks.tolist() == L[ref].tolist()
    assert out.counts() == {"timestamps_before": len(secs), "timestamps_after": ref.size,
                            "landmarks_before": int(L.sum()), "landmarks_after": int(L[ref].sum())}
    assert out.trajectory["lat"].tolist() == traj["lat"].to_numpy()[ref].tolist()
    assert list(out.trajectory.columns) == list(traj.columns)
    assert out.trajectory["time"].dtype == traj["time"].dtype


def test_sample_counts_drop_and_errors():
    import lmdk_core as lm

    traj = lm.select_user(lm.load_sample(), "alice")
    L = lm.landmark_mask(traj, [(39.9925, 116.3395, 100), (39.9820, 116.3564, 100)])
    out = release_interval(traj, L, interval_s=300)
    assert out.n_before == 11_373 and out.landmarks_before == 7_046
    assert out.n_after < out.n_before / 5 and out.landmarks_after < out.landmarks_before / 5
    for bad in (0, -5, float("nan")):
        with pytest.raises(ParameterError):
            release_interval(traj, L, interval_s=bad)
    with pytest.raises(ParameterError, match="length mismatch"):
        release_interval(traj, L[:-1], interval_s=60)
    with pytest.raises(ParameterError):
        release_interval(traj["lat"], L, interval_s=60)
    with pytest.raises(ParameterError, match="missing column"):
        release_interval(traj.drop(columns="time"), L, interval_s=60)
