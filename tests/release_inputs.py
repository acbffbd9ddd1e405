"""Random release inputs for the property tests of the schemes' guarantees (hypothesis): one
strategy, shared by test_guarantees, test_fill and test_scheme_reserve."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st


@st.composite
def inputs(draw, max_n=500):
    """Random length, landmark set (empty / all / sparse / dense / clustered), ε, data, w."""
    n = draw(st.integers(1, max_n))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["empty", "all", "sparse", "dense", "clustered"]))
    if kind == "empty":
        mask = np.zeros(n, dtype=bool)
    elif kind == "all":
        mask = np.ones(n, dtype=bool)
    elif kind == "clustered":
        start = int(rng.integers(0, n))
        mask = np.zeros(n, dtype=bool)
        mask[start:start + int(rng.integers(1, 30))] = True
    else:
        mask = rng.random(n) < (0.03 if kind == "sparse" else 0.4)
    data = draw(st.sampled_from(["walk", "jumps", "constant"]))
    if data == "walk":
        x = np.cumsum(rng.normal(0, 1, n))
    elif data == "jumps":  # forces publications wherever a scheme tests
        x = np.where(np.arange(n) % 2, 1e6, -1e6) * rng.uniform(0.5, 1, n)
    else:
        x = np.full(n, rng.normal())
    epsilon = draw(st.floats(0.01, 10.0))
    w = draw(st.integers(1, 40))
    seed = draw(st.integers(0, 2**31))
    return x, mask, epsilon, w, seed

