"""Adaptive landmark scheme (algorithms.md §1, reconstruction; parameters in SCHEME_PARAMS).

Every publication spends ε_r = ε/(|L|+1), every approximation spends 0, so each ε_t ≤ ε/(|L|+1)
and G_t = Σ_{i∈L∪{t}} ε_i ≤ (|L|+1)·ε_r = ε by construction, for any data and any coin flips.

Sampling rate s ∈ [s_min, 1] starts at 1. At each t publish o_t = x_t + noise(ε_r) with
probability s — always at the first t and, with ``sample_landmarks=True``, at every landmark —
else republish the last release and spend 0. After each publication (but the first), the distance
between the new and the previous *released* value is compared with the noise scale of ε_r
(values Δ/ε_r; locations the mean planar error 2r/ε_r metres): larger ⇒ the data moves,
s ← min(1, s + inc); otherwise s ← max(s_min, s − dec). Decisions read released values only
(post-processing, free); coin flips are pre-drawn uniforms from the release generator.

Why a numba kernel: the scheme is sequential by nature (each decision depends on the previous
release and the current rate), so it cannot be vectorised; the kernel runs over pre-drawn unit
noise (drawn in a fixed order, independent of the data) in O(T) compiled code.
"""

from __future__ import annotations

import numba
import numpy as np

from ._space import Space
from ._types import SchemeOutput


@numba.njit(cache=True)
def adaptive_kernel(
    x, noise, coins, landmarks, eps_r, unit, err, s_min, inc, dec, sample_landmarks
):
    """Sequential adaptive sampling over (n, d) metric points; returns (released, eps, published).

    ``noise`` (n, d) unit noise scaled by unit/ε_r; ``coins`` (n,) uniforms in [0, 1).
    """
    n, d = x.shape
    out = np.empty((n, d))
    eps = np.zeros(n)
    published = np.zeros(n, dtype=np.bool_)
    last = np.empty(d)
    scale = unit / eps_r
    threshold = err * unit / eps_r
    s = 1.0
    for t in range(n):
        if t == 0 or (sample_landmarks and landmarks[t]) or coins[t] < s:
            dist2 = 0.0
            for k in range(d):
                o = x[t, k] + noise[t, k] * scale
                diff = o - last[k]
                dist2 += diff * diff
                last[k] = o
            if t > 0:
                if np.sqrt(dist2) > threshold:
                    s = min(1.0, s + inc)
                else:
                    s = max(s_min, s - dec)
            published[t] = True
            eps[t] = eps_r
        for k in range(d):
            out[t, k] = last[k]
    return out, eps, published


def run_adaptive(
    space: Space,
    landmarks: np.ndarray,
    epsilon: float,
    rng: np.random.Generator,
    *,
    s_min: float,
    inc: float,
    dec: float,
    sample_landmarks: bool,
) -> SchemeOutput:
    """Release ``space`` with the adaptive scheme (draws: unit noise, then n uniforms)."""
    eps_r = epsilon / (int(landmarks.sum()) + 1)
    noise = space.unit_noise(rng)
    coins = rng.random(space.n)
    out, eps, published = adaptive_kernel(
        space.to_metric(), noise, coins, landmarks, eps_r, space.unit, space.err,
        s_min, inc, dec, sample_landmarks,
    )
    return SchemeOutput(space.from_metric(out), eps, published, {"release_epsilon": eps_r})
