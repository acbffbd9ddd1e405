"""Integer noise for published counts, sampled exactly (no floating point anywhere).

Textbook Laplace noise ``x + b·log(U)`` leaks the input through floating-point gaps (Mironov,
CCS 2012). Counts are integers, so they are published with *discrete* Laplace noise,
Pr[Y = y] ∝ exp(−(τ/Δ)·|y|), drawn with the Canonne–Kamath–Steinke algorithm (NeurIPS 2020,
Alg. 1 and 2) in integer arithmetic by the shared exact sampler :mod:`lmdk_core.noise.discrete`,
which reads only uniform random words. Adding it to integer counts is τ-DP for any change of L1
size at most Δ (the ``sensitivity``) with the exact ratio e^{τ} (no approximation term), because
τ is first snapped to the dyadic grid τ = s / 2^20 (:func:`snap_tau`) and τ/Δ = s/(Δ·2^20) is a
rational the sampler represents exactly.

Population counts use Δ = :data:`MOVE_SENSITIVITY` = 2: a person's record moving from one cell to
another in the same bin lowers one count by one and raises another by one
(docs/personalised-dp.md §3), so the noise of each count has parameter τ/2
(:func:`count_noise_tau`).

The number of draws depends only on the random values, never on the counts; :func:`publish_counts`
is the one place where noise meets published counts.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._deprecation import renamed
from ..errors import ParameterError
from ..noise.discrete import bern_exp_array, discrete_laplace_array
from ..noise.discrete import discrete_laplace_pmf as _discrete_laplace_pmf
from ..noise.source import as_source
from ..validation import check_epsilon

__all__ = [
    "MOVE_SENSITIVITY",
    "TAU_DENOMINATOR",
    "bernoulli_exp",
    "count_noise_tau",
    "discrete_laplace",
    "discrete_laplace_pmf",
    "publish_counts",
    "snap_tau",
]

TAU_DENOMINATOR = 2**20
"""τ is used as s / 2^20 with an integer s ≥ 1 (so τ ≥ 2^-20 ≈ 9.5e-7)."""

TAU_MAX = 50.0
"""Largest τ accepted: e^τ must stay far inside floating point for the keep probabilities."""

MOVE_SENSITIVITY = 2
"""L1 sensitivity of the counts of one bin to one person's data in it: moving u's record from
cell c to cell c' changes count c by −1 and count c' by +1 (adding or removing it changes one
count by 1)."""


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


@renamed(positional=("rng",))
def bernoulli_exp(num: Any, den: int, *, rng: Any = None) -> np.ndarray:
    """Exact Bernoulli(exp(−num/den)) draws for an integer array ``0 <= num <= den``."""
    nums = np.asarray(num, dtype=np.int64)
    if den < 1 or np.any(nums < 0) or np.any(nums > den):
        raise ParameterError("bernoulli_exp needs integers 0 <= num <= den, den >= 1")
    return bern_exp_array(nums, int(den), as_source(rng))


def _sensitivity(sensitivity: Any) -> int:
    if (isinstance(sensitivity, bool) or not isinstance(sensitivity, (int, np.integer))
            or not 1 <= sensitivity <= 64):
        raise ParameterError(f"sensitivity must be an integer in [1, 64], got {sensitivity!r}")
    return int(sensitivity)


def count_noise_tau(tau: float) -> float:
    """The parameter τ/2 of the discrete Laplace law added to each population count (exact:
    (snapped τ)/:data:`MOVE_SENSITIVITY`), so that moving one record in a bin costs τ."""
    return snap_tau(tau) / MOVE_SENSITIVITY


@renamed(positional=("rng",))
def discrete_laplace(size: int, tau: float, *, rng: Any = None,
                     sensitivity: int = 1) -> np.ndarray:
    """``size`` exact draws of the discrete Laplace law Pr[y] ∝ exp(−(τ/Δ)|y|) (int64), Δ =
    ``sensitivity``.

    ``tau`` is snapped down to the grid s/2^20 (:func:`snap_tau`); CKS Alg. 2 with scale t/s,
    t = Δ·2^20, drawn by the project's one exact sampler (:mod:`lmdk_core.noise.discrete`):
    ``rng=None`` reads a fresh ChaCha20 keystream keyed from the OS, a seed or Generator its
    words (simulations, and the per-release keyed stream of :mod:`.release`).
    """
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
        raise ParameterError(f"size must be an integer >= 0, got {size!r}")
    s = round(snap_tau(tau) * TAU_DENOMINATOR)
    t = TAU_DENOMINATOR * _sensitivity(sensitivity)
    return discrete_laplace_array(t, s, int(size), as_source(rng))


def discrete_laplace_pmf(y: Any, tau: float) -> np.ndarray:
    """Exact-law probabilities Pr[Y = y] = tanh(τ/2)·exp(−τ|y|) (for tests and references): the
    noise module's mass function at rate τ."""
    return _discrete_laplace_pmf(y, 1, tau)


@renamed(positional=("rng",))
def publish_counts(counts: np.ndarray, tau: float, *, rng: Any = None,
                   sensitivity: int = 1) -> np.ndarray:
    """Counts (int64, any shape) plus exact discrete Laplace(τ/Δ) noise on each, as int64.

    τ-DP for any change of the counts of L1 size at most Δ = ``sensitivity``: Δ = 1 for a count
    of people (one person in or out), Δ = :data:`MOVE_SENSITIVITY` = 2 for counts per cell of
    bounded records (one record per person and bin, which may move to another cell). The values
    published are integers (no float leak).
    """
    c = np.asarray(counts)
    if not np.issubdtype(c.dtype, np.integer):
        raise ParameterError(f"counts must be integers, got dtype {c.dtype}")
    noise = discrete_laplace(int(c.size), tau, rng=rng, sensitivity=sensitivity).reshape(c.shape)
    noise += c.astype(np.int64, copy=False)  # in place: no third count-sized array
    return noise
