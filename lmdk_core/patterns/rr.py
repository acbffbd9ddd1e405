"""Binary randomised response that stays exactly ε-DP in floating point.

Textbook randomised response compares a float uniform with e^ε/(1+e^ε); for large ε that
probability rounds to 1 (ε ≳ 37) and the bit is never flipped — an infinite privacy loss — and
for moderate ε the rounding of the comparison already moves the flip probability by up to
2^-53, which is a large *relative* error when the flip probability itself is tiny.

Here the flip decision is exact integer arithmetic: a bit is flipped iff U < k, where U is
uniform on {0, ..., 2^53 − 1} (the top 53 bits of one raw 64-bit draw) and the integer threshold
k = ⌈2^53 · q · (1 + 2^-40)⌉ rounds the flip probability q = 1/(1 + e^ε) *up*. The realised flip
probability q' = k/2^53 therefore satisfies q ≤ q' ≤ 1/2 (k is also capped at 2^52), so the
realised ratio (1 − q')/q' ≤ (1 − q)/q = e^ε: the mechanism is ε-DP exactly, not just up to rounding
(docs/pattern-level-dp.md §4 has the proof; a test checks it with 50-digit decimal arithmetic).

Above :data:`MAX_RR_EPSILON` per bit the threshold k would be a handful of units and q' would no
longer track q (the guarantee would still hold, but the advertised ε would be far from the
realised one); such budgets are refused with a ParameterError.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import ParameterError
from ..mechanisms import as_rng

__all__ = ["MAX_RR_EPSILON", "flip_mask", "flip_probability", "flip_threshold"]

MAX_RR_EPSILON = 25.0
"""Largest per-bit ε accepted: k ≥ 2^53/(1+e^25) ≈ 1.2·10^5, so q' = q·(1 ± 10^-5)."""

_SCALE = 2**53
_UP = 1.0 + 2.0**-40  # covers the few-ulp error of evaluating q in floating point


def _check_bit_epsilon(eps: Any) -> np.ndarray:
    arr = np.asarray(eps, dtype=np.float64)
    if np.any(np.isnan(arr)):
        raise ParameterError("per-event epsilon is NaN")
    if np.any(arr <= 0):
        raise ParameterError(f"per-event epsilon must be > 0, got {arr.min()}")
    if np.any(arr > MAX_RR_EPSILON):
        raise ParameterError(
            f"per-event epsilon {arr.max():.6g} is above the floating-point-safe limit "
            f"{MAX_RR_EPSILON:g} of randomised response (flip probability below 1e-11); "
            "lower epsilon"
        )
    return arr


def flip_threshold(eps: Any) -> np.ndarray:
    """Integer thresholds k (int64): flip iff U < k, U uniform on [0, 2^53). See module docs."""
    e = _check_bit_epsilon(eps)
    q = 1.0 / (1.0 + np.exp(e))  # e ≤ 25: no overflow, q ≥ 1.4e-11
    k = np.minimum(np.ceil(q * _UP * _SCALE), _SCALE // 2)  # q' ≤ 1/2 even for tiny ε
    return k.astype(np.int64)


def flip_probability(eps: Any) -> np.ndarray | float:
    """The realised flip probability q' = k / 2^53 ≥ 1/(1 + e^ε) (float64, exact for k < 2^53)."""
    q = flip_threshold(eps) / _SCALE
    return float(q) if np.ndim(q) == 0 else q


def flip_mask(thresholds: Any, rng: Any = None, *, size: int | None = None) -> np.ndarray:
    """Independent flip decisions ``U < k``, U uniform on [0, 2^53): one per threshold, or
    ``size`` of them for one scalar threshold.

    ``rng``: None (fresh OS entropy — real releases), or a seed / Generator (simulations, tests).
    Draws exactly one raw 64-bit word per decision, whatever the data.
    """
    k = np.asarray(thresholds, dtype=np.int64)
    if k.size and (k.min() < 0 or k.max() > _SCALE):
        raise ParameterError("flip thresholds must lie in [0, 2^53]")
    shape = k.shape if size is None else (int(size),)
    if size is not None and k.ndim != 0:
        raise ParameterError("give size only with one scalar threshold")
    gen = as_rng(rng)
    u = gen.bit_generator.random_raw(int(np.prod(shape))) >> np.uint64(11)
    return (u < k.astype(np.uint64).ravel()).reshape(shape)


def realised_epsilon(eps: float) -> float:
    """log((1 − q')/q'): the exact per-bit privacy loss of the realised threshold (≤ eps)."""
    k = int(flip_threshold(eps))
    return math.log((_SCALE - k) / k)
