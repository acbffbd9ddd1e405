"""Binary randomised response for pattern-level releases, drawn by :mod:`lmdk_core.noise`.

Textbook randomised response compares a float uniform with e^ε/(1+e^ε); for large ε that
probability rounds to 1 (ε ≳ 37) and the bit is never flipped — an infinite privacy loss — and
for moderate ε the rounding already moves a tiny flip probability by a large *relative* amount.

This module therefore has no sampler of its own: every flip is drawn by the package's one exact
randomised response, :func:`lmdk_core.noise.apply.noisy_bits` with ``noise="safe"``
(docs/fp-safe-noise.md). It runs at ε₀ = ⌊ε·2^40⌋/2^40 ≤ ε and flips with probability exactly
1/(1 + e^{ε₀}) using integer arithmetic only (a fair bit, then an exact Bernoulli(e^{−ε₀})), so
the released bit is ε₀-DP, hence ε-DP, with no floating-point rounding in the decision
(docs/pattern-level-dp.md §5).

The integer ⌊ε·2^40⌋ is the *flip threshold* of this module (:func:`flip_threshold`), the
parameter handed to :func:`flip_mask`. Per-bit budgets above :data:`MAX_RR_EPSILON` are refused:
the flip probability would be below 1.4·10^-11, i.e. the true bits published as they are.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ParameterError
from ..noise import as_source
from ..noise.apply import noisy_bits, rr_epsilon_numerator

__all__ = ["MAX_RR_EPSILON", "flip_mask", "flip_probability", "flip_threshold"]

MAX_RR_EPSILON = 25.0
"""Largest per-bit ε accepted: the flip probability 1/(1 + e^25) ≈ 1.4·10^-11 is already nil."""

_ONE = 2.0**40  # ε₀ = threshold / 2^40 (exact in float64: thresholds stay below 2^45)


def _check_bit_epsilon(eps: Any) -> np.ndarray:
    arr = np.asarray(eps, dtype=np.float64)
    if np.any(np.isnan(arr)):
        raise ParameterError("per-event epsilon is NaN")
    if np.any(arr <= 0):
        raise ParameterError(f"per-event epsilon must be > 0, got {arr.min()}")
    if np.any(arr > MAX_RR_EPSILON):
        raise ParameterError(
            f"per-event epsilon {arr.max():.6g} is above the limit {MAX_RR_EPSILON:g} of "
            "randomised response (flip probability below 1e-11: the true bits would be "
            "published); lower epsilon"
        )
    return arr


def flip_threshold(eps: Any) -> np.ndarray:
    """Integer flip thresholds ⌊ε·2^40⌋ (int64): :func:`flip_mask` flips with probability
    exactly 1/(1 + e^{ε₀}), ε₀ = threshold/2^40 ≤ ε. Refuses ε ≤ 0, NaN, ε > 25."""
    return rr_epsilon_numerator(_check_bit_epsilon(eps))


def realised_epsilon(eps: float) -> float:
    """ε₀ = ⌊ε·2^40⌋/2^40 ≤ ε: the exact per-bit privacy loss of the flips drawn for ``eps``."""
    return float(flip_threshold(eps)) / _ONE


def flip_probability(eps: Any) -> np.ndarray | float:
    """The realised flip probability 1/(1 + e^{ε₀}) ≥ 1/(1 + e^ε), in float64 (to display)."""
    e0 = flip_threshold(eps) / _ONE
    q = 1.0 / (1.0 + np.exp(e0))  # ε₀ ≤ 25: no overflow, a few ulp relative error
    return float(q) if np.ndim(q) == 0 else q


def flip_mask(thresholds: Any, rng: Any = None, *, size: int | None = None) -> np.ndarray:
    """Independent flip decisions, True with probability exactly 1/(1 + e^{threshold/2^40}):
    one per threshold, or ``size`` of them for one scalar threshold.

    Drawn by :func:`lmdk_core.noise.apply.noisy_bits` (exact randomised response on all-False
    bits: a released True is a flip). ``rng``: None (fresh OS entropy through a ChaCha20 source
    — real releases), a :class:`~lmdk_core.noise.RandomSource`, or a seed / numpy Generator
    (simulations, tests).
    """
    k = np.asarray(thresholds, dtype=np.int64)
    if size is not None and k.ndim != 0:
        raise ParameterError("give size only with one scalar threshold")
    if k.size and (k.min() < 0 or k.max() > int(MAX_RR_EPSILON * _ONE)):
        raise ParameterError("flip thresholds must lie in [0, 25·2^40] (see flip_threshold)")
    shape = k.shape if size is None else (int(size),)
    eps0 = np.broadcast_to(k / _ONE, shape).ravel()  # exact: k < 2^53
    flips, _ = noisy_bits(np.zeros(eps0.size, dtype=bool), eps0, source=as_source(rng),
                          noise="safe")
    return flips.reshape(shape)

