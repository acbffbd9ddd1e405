"""Small synthetic traces shared by the tests (one definition, imported where needed)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def random_walk(n: int, *, freq: str, seed: int) -> pd.DataFrame:
    """A ``n``-fix random walk near Beijing (steps ~2·10⁻⁴° per axis), one fix per ``freq``,
    from 2024-05-01 08:00 UTC; the same frame for the same arguments."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "time": pd.date_range("2024-05-01 08:00", periods=n, freq=freq),
        "lat": 39.99 + np.cumsum(rng.normal(0, 2e-4, n)),
        "lon": 116.34 + np.cumsum(rng.normal(0, 2e-4, n)),
    })


WALK = random_walk(300, freq="30s", seed=7)
"""The 300-fix walk, one fix every 30 s, that the smoothing tests (library, advice, session) share.
Read-only: a test that changes it changes the others' input."""
