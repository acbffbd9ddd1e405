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
parameter handed to :func:`flip_mask`. Per-bit budgets above the package's one randomised-response
limit :data:`~lmdk_core.noise.apply.RR_MAX_EPSILON` (2^20, the exact sampler's domain) are
refused with a ParameterError naming it. Long before that limit the flips become rare (ε = 25:
about one in 10^11): a large per-event ε is a weak guarantee, not an unsafe computation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._deprecation import renamed
from ..errors import ParameterError
from ..noise import as_source
from ..noise.apply import RR_MAX_EPSILON, check_rr_epsilon, noisy_bits, rr_epsilon_numerator

__all__ = ["RR_MAX_EPSILON", "flip_mask", "flip_probability", "flip_threshold"]

_ONE = 2.0**40  # ε₀ = threshold / 2^40 (exact: a threshold ≤ 2^60 is ε·2^40 itself above 2^53)


def _check_bit_epsilon(eps: Any) -> np.ndarray:
    arr = np.asarray(eps, dtype=np.float64)
    if np.any(np.isnan(arr)):
        raise ParameterError("per-event epsilon is NaN")
    if np.any(arr <= 0):
        raise ParameterError(f"per-event epsilon must be > 0, got {arr.min()}")
    check_rr_epsilon(arr)
    return arr


@renamed(eps="epsilon")
def flip_threshold(epsilon: Any) -> np.ndarray:
    """Integer flip thresholds ⌊ε·2^40⌋ (int64): :func:`flip_mask` flips with probability
    exactly 1/(1 + e^{ε₀}), ε₀ = threshold/2^40 ≤ ε. Refuses ε ≤ 0, NaN, ε > 2^20."""
    return rr_epsilon_numerator(_check_bit_epsilon(epsilon))


@renamed(eps="epsilon")
def realised_epsilon(epsilon: float) -> float:
    """ε₀ = ⌊ε·2^40⌋/2^40 ≤ ε: the exact per-bit privacy loss of the flips drawn for
    ``epsilon``."""
    return float(flip_threshold(epsilon)) / _ONE


@renamed(eps="epsilon")
def flip_probability(epsilon: Any) -> np.ndarray | float:
    """The realised flip probability 1/(1 + e^{ε₀}) ≥ 1/(1 + e^ε), in float64 (to display)."""
    e0 = flip_threshold(epsilon) / _ONE
    q = np.exp(-np.logaddexp(0.0, e0))  # 1/(1 + e^{ε₀}) without overflow, up to ε₀ = 2^20
    return float(q) if np.ndim(q) == 0 else q


@renamed(positional=("rng",))
def flip_mask(thresholds: Any, *, rng: Any = None, size: int | None = None) -> np.ndarray:
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
    if k.size and (k.min() < 0 or k.max() > int(RR_MAX_EPSILON * _ONE)):
        raise ParameterError("flip thresholds must lie in [0, 2^60], i.e. ε ≤ RR_MAX_EPSILON = "
                             "2^20 (see flip_threshold)")
    shape = k.shape if size is None else (int(size),)
    eps0 = np.broadcast_to(k / _ONE, shape).ravel()  # exact: k < 2^53
    flips, _ = noisy_bits(np.zeros(eps0.size, dtype=bool), budget=eps0, source=as_source(rng),
                          noise="safe")
    return flips.reshape(shape)

