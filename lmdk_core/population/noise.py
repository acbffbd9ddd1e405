"""Integer noise for published counts, sampled exactly (no floating point anywhere).

Textbook Laplace noise ``x + b·log(U)`` leaks the input through floating-point gaps (Mironov,
CCS 2012). Counts are integers, so they are published with *discrete* Laplace noise,
Pr[Y = y] ∝ exp(−τ·|y|), drawn with the Canonne–Kamath–Steinke algorithm (NeurIPS 2020, Alg. 1
and 2) in integer arithmetic: the only randomness consumed is ``Generator.integers``, which is
exactly uniform. Adding it to an integer count is (τ, sensitivity 1)-DP with the exact ratio
e^{τ} (no approximation term), because τ is first snapped to the dyadic grid
τ = s / 2^20 (:func:`snap_tau`), a rational the sampler represents exactly.

The sampler is a numba kernel (sequential rejection loops); the number of draws depends only on
the random values, never on the counts.

:func:`publish_counts` is the one place where noise meets published counts: when the shared exact
sampler of ``lmdk_core.noise`` lands, only that function changes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from ..errors import ParameterError
from ..mechanisms import as_rng
from ..validation import check_epsilon

__all__ = [
    "TAU_DENOMINATOR",
    "bernoulli_exp",
    "discrete_laplace",
    "discrete_laplace_pmf",
    "publish_counts",
    "snap_tau",
]

TAU_DENOMINATOR = 2**20
"""τ is used as s / 2^20 with an integer s ≥ 1 (so τ ≥ 2^-20 ≈ 9.5e-7)."""

TAU_MAX = 50.0
"""Largest τ accepted: e^τ must stay far inside floating point for the keep probabilities."""


def snap_tau(tau: Any, name: str = "tau") -> float:
    """τ rounded *down* to the grid s/2^20 (so the snapped mechanism is at most τ-DP).

    Raises ParameterError when τ is not a finite number in [2^-20, 50].
    """
    t = check_epsilon(tau, name)
    if t > TAU_MAX:
        raise ParameterError(f"{name} must be <= {TAU_MAX} (e^{name} overflows), got {t}")
    s = math.floor(t * TAU_DENOMINATOR)
    if s < 1:
        raise ParameterError(f"{name} must be >= 2^-20 ≈ 9.5e-7, got {t}")
    return s / TAU_DENOMINATOR


_BLOCK = 1 << 16
_WORD = 1 << 62


@njit(cache=True)
def _uniform_below(n: int, buf: np.ndarray, st: np.ndarray, rng: np.random.Generator) -> int:
    """Exactly uniform integer in [0, n): draw ⌈log2 n⌉ fresh random bits, reject values >= n.

    Bits come from 62-bit words in ``buf`` (refilled with ``rng.integers(0, 2^62, _BLOCK)``);
    ``st`` = [next word index, current word, bits left in it]. Leftover bits too few for a draw
    are discarded (they are independent of everything, so no bias)."""
    if n <= 1:
        return 0
    k = 0
    while (1 << k) < n:
        k += 1
    while True:
        if st[2] < k:
            if st[0] == buf.size:
                buf[:] = rng.integers(0, _WORD, _BLOCK)
                st[0] = 0
            st[1] = buf[st[0]]
            st[0] += 1
            st[2] = 62
        w = st[1] & ((1 << k) - 1)
        st[1] >>= k
        st[2] -= k
        if w < n:
            return w


@njit(cache=True)
def _bern_exp_frac(num: int, den: int, buf: np.ndarray, st: np.ndarray,
                   rng: np.random.Generator) -> bool:
    """Bernoulli(exp(−num/den)) for 0 <= num <= den (CKS Alg. 1): K-th trial Bernoulli(γ/K)."""
    k = 1
    while _uniform_below(den * k, buf, st, rng) < num:
        k += 1
    return k % 2 == 1


@njit(cache=True)
def _dlap_kernel(out: np.ndarray, s: int, t: int, rng: np.random.Generator) -> None:
    """CKS Alg. 2: fill ``out`` with discrete Laplace of scale t/s (Pr[y] ∝ exp(−s|y|/t))."""
    buf = np.empty(_BLOCK, dtype=np.int64)
    st = np.array([_BLOCK, 0, 0], dtype=np.int64)
    for i in range(out.size):
        while True:
            u = _uniform_below(t, buf, st, rng)
            if not _bern_exp_frac(u, t, buf, st, rng):
                continue
            v = 0
            while _bern_exp_frac(1, 1, buf, st, rng):
                v += 1
            y = (u + t * v) // s
            if _uniform_below(2, buf, st, rng) == 1:
                if y == 0:
                    continue
                out[i] = -y
            else:
                out[i] = y
            break


@njit(cache=True)
def _bern_exp_array(nums: np.ndarray, den: int, out: np.ndarray, rng: np.random.Generator
                    ) -> None:
    buf = np.empty(_BLOCK, dtype=np.int64)
    st = np.array([_BLOCK, 0, 0], dtype=np.int64)
    for i in range(nums.size):
        out[i] = _bern_exp_frac(nums[i], den, buf, st, rng)


def bernoulli_exp(num: Any, den: int, rng: Any = None) -> np.ndarray:
    """Exact Bernoulli(exp(−num/den)) draws for an integer array ``0 <= num <= den``."""
    nums = np.asarray(num, dtype=np.int64)
    if den < 1 or np.any(nums < 0) or np.any(nums > den):
        raise ParameterError("bernoulli_exp needs integers 0 <= num <= den, den >= 1")
    out = np.empty(nums.size, dtype=np.bool_)
    _bern_exp_array(nums.ravel(), int(den), out, as_rng(rng))
    return out.reshape(nums.shape)


def discrete_laplace(size: int, tau: float, rng: Any = None) -> np.ndarray:
    """``size`` exact draws of the discrete Laplace law Pr[y] ∝ exp(−τ|y|) (int64).

    ``tau`` is snapped down to the grid s/2^20 (:func:`snap_tau`); CKS Alg. 2 with scale t/s,
    t = 2^20, in a numba kernel whose only randomness is blocks of
    ``Generator.integers(0, 2^62)`` (exactly uniform words; a bounded draw takes fresh low bits
    and rejects, so it is exactly uniform too).
    """
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
        raise ParameterError(f"size must be an integer >= 0, got {size!r}")
    t = TAU_DENOMINATOR
    s = round(snap_tau(tau) * t)
    out = np.empty(int(size), dtype=np.int64)
    _dlap_kernel(out, s, t, as_rng(rng))
    return out


def discrete_laplace_pmf(y: Any, tau: float) -> np.ndarray:
    """Exact-law probabilities Pr[Y = y] = tanh(τ/2)·exp(−τ|y|) (for tests and references)."""
    yy = np.abs(np.asarray(y, dtype=np.float64))
    return np.tanh(tau / 2.0) * np.exp(-tau * yy)


def publish_counts(counts: np.ndarray, tau: float, rng: Any = None) -> np.ndarray:
    """Counts (int64, any shape) plus exact discrete Laplace(τ) noise, as int64.

    Sensitivity 1 per cell (each user contributes at most one record per time bin), so every bin
    is τ-DP for the sampled records; the values published are integers (no float leak).
    """
    c = np.asarray(counts)
    if not np.issubdtype(c.dtype, np.integer):
        raise ParameterError(f"counts must be integers, got dtype {c.dtype}")
    noise = discrete_laplace(int(c.size), tau, rng).reshape(c.shape)
    return c.astype(np.int64) + noise
