"""Adaptive landmark scheme (algorithms.md §1, reconstruction; parameters in SCHEME_PARAMS).

Every publication spends ε_r = ε/(|L|+1), every approximation spends 0, so each ε_t ≤ ε/(|L|+1)
and G_t = Σ_{i∈L∪{t}} ε_i ≤ (|L|+1)·ε_r = ε by construction, for any data and any coin flips.

Sampling rate s ∈ [s_min, 1] starts at 1. At each t publish o_t = x_t + noise(ε_r) with
probability s — always at the first t and, with ``sample_landmarks=True``, at every landmark —
else republish the last release and spend 0. After each publication (but the first), the distance
between the new and the previous *released* value is compared with the noise scale of ε_r
(values Δ/ε_r; locations the mean error ≈ 2.86·r/ε_r metres): larger ⇒ the data moves,
s ← min(1, s + inc); otherwise s ← max(s_min, s − dec). Decisions read released values only
(post-processing, free); coin flips are uniforms from the release's random source.

Distances between releases are |a − b| for values and great-circle metres for locations.

Why a numba kernel: the scheme is sequential by nature (each decision depends on the previous
release and the current rate), so it cannot be vectorised; the kernel releases each point
through the exact per-element mechanism (lmdk_core.noise.exact) in a fixed draw order.
"""

from __future__ import annotations

import numba
import numpy as np

from .._deprecation import renamed
from ..noise.apply import check_lattice_domain, check_value_domain, check_value_magnitude
from ..noise.exact import uniform53
from ..noise.source import RandomSource
from ._kernel import distance, release_point
from ._space import Space
from ._stream import kernel_stream
from ._types import SchemeOutput


@numba.njit(cache=True)
def adaptive_kernel(kind, data, landmarks, eps_r, unit, err, s_min, inc, dec, sample_landmarks,
                    exact, units, coins, buf, st, fn):
    """Sequential adaptive sampling over (n, 2) rows; returns (released, eps, achieved, published).

    Draws at every t, in order: the coin (53-bit uniform; fast: ``coins[t]``), then the
    publication variates (fast: ``units[t]``), used or not.
    """
    n = data.shape[0]
    out = np.full((n, 2), np.nan)
    eps = np.zeros(n)
    ach = np.zeros(n)
    published = np.zeros(n, dtype=np.bool_)
    last = np.full(2, np.nan)
    cand = np.empty(2)
    threshold = err * unit / eps_r
    s = 1.0
    for t in range(n):
        coin = uniform53(buf, st, fn) if exact else coins[t]
        a = release_point(kind, data, t, eps_r, unit, exact, units, buf, st, fn, cand)
        if t == 0 or (sample_landmarks and landmarks[t]) or coin < s:
            if t > 0:
                if distance(kind, cand[0], cand[1], last[0], last[1]) > threshold:
                    s = min(1.0, s + inc)
                else:
                    s = max(s_min, s - dec)
            last[0] = cand[0]
            last[1] = cand[1]
            published[t] = True
            eps[t] = eps_r
            ach[t] = a
        out[t, 0] = last[0]
        out[t, 1] = last[1]
    return out, eps, ach, published


@renamed(positional=("epsilon", "source", "noise"))
def run_adaptive(
    space: Space,
    landmarks: np.ndarray,
    *,
    epsilon: float,
    source: RandomSource,
    noise: str,
    s_min: float,
    inc: float,
    dec: float,
    sample_landmarks: bool,
) -> SchemeOutput:
    """Release ``space`` with the adaptive scheme (draw order: see adaptive_kernel)."""
    eps_r = epsilon / (int(landmarks.sum()) + 1)
    if space.kind == "values":
        check_value_domain(space.unit, budget=np.array([eps_r]))
        check_value_magnitude(space.columns[0], space.unit,
                              budget=np.array([eps_r]))
    else:
        check_lattice_domain(space.unit, budget=np.array([eps_r]))
    with kernel_stream(source, noise, space.n, coins=True) as (exact, units, coins, buf, st, fn):
        out, eps, ach, published = adaptive_kernel(
            space.code, space.kernel_data(), landmarks, eps_r, space.unit, space.err,
            s_min, inc, dec, sample_landmarks, exact, units, coins, buf, st, fn,
        )
    return SchemeOutput(space.from_kernel(out), eps, published,
                        {"release_epsilon": eps_r}, ach)
