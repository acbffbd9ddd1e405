"""Closed-form budget allocations ε_t of the data-independent schemes (algorithms.md §1).

With T timestamps, landmark set L and total budget ε:

* ``event``   ε_t = ε everywhere — event-level DP only; NOT landmark-private when |L| ≥ 1
  (G_t = ε·|L ∪ {t}| exceeds ε wherever L ∪ {t} has two or more elements);
* ``user``    ε_t = ε/T everywhere — user-level DP, Σ_t ε_t = ε, hence landmark-private;
* ``uniform`` ε_t = ε/(|L|+1) everywhere — G_t ≤ (|L|+1)·ε/(|L|+1) = ε;
* ``skip``    ε_t = ε at regular t, 0 at landmarks — G_t = ε_t ≤ ε (landmarks spend nothing).

The data-dependent schemes (adaptive, bd, ba) decide ε_t while releasing; their budgets come
with the :class:`~lmdk_core.release.Release` returned by ``release_values``/``release_locations``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .accounting import as_landmark_mask
from .errors import ParameterError
from .validation import check_epsilon, check_int

__all__ = ["ALLOCATION_SCHEMES", "allocate"]

ALLOCATION_SCHEMES = ("event", "user", "uniform", "skip")
"""Schemes whose budgets are a closed form of (T, L, ε) alone."""

_DATA_DEPENDENT = ("adaptive", "bd", "ba")
_NEEDS_TIMES = ("reserve",)  # data-independent, but its schedule reads the trace's public times


def allocate(
    n: Any, landmarks: Any = None, *legacy: Any, epsilon: Any = None, scheme: Any = None,
    **params: Any,
) -> np.ndarray:
    """Per-timestamp budgets ε_t (float array of length ``n``) of a data-independent scheme.

    Called like the release functions: ``allocate(n, landmarks, epsilon=..., scheme=...)``.
    ``n``: number of timestamps; ``landmarks``: bool mask of length ``n`` or integer indices
    (None = no landmarks); ``epsilon``: the user's total budget ε > 0. These four schemes take
    no parameters. The pre-0.2 positional order ``allocate(scheme, n, landmarks, epsilon)`` is
    still accepted (deprecated). Raises ParameterError for an unknown or data-dependent scheme,
    or invalid arguments.
    """
    if isinstance(n, str):  # legacy order: (scheme, n, landmarks, epsilon)
        if scheme is not None or len(legacy) > 2 or (len(legacy) == 2) == (epsilon is not None):
            raise ParameterError("allocate(n, landmarks, *, epsilon=..., scheme=...)")
        scheme, n, landmarks = n, landmarks, legacy[0] if legacy else None
        epsilon = legacy[1] if len(legacy) == 2 else epsilon
    elif legacy:
        raise ParameterError(
            "epsilon and scheme are keyword-only: allocate(n, landmarks, epsilon=..., scheme=...)"
        )
    if scheme in _DATA_DEPENDENT:
        raise ParameterError(
            f"scheme {scheme!r} decides its budgets from the data while releasing; use "
            f"release_values/release_locations (allocate supports: {', '.join(ALLOCATION_SCHEMES)})"
        )
    if scheme in _NEEDS_TIMES:
        raise ParameterError(
            f"scheme {scheme!r} plans its budgets from the trace's timestamps while releasing; "
            f"use release_values/release_locations (allocate supports: "
            f"{', '.join(ALLOCATION_SCHEMES)})"
        )
    if scheme not in ALLOCATION_SCHEMES:
        raise ParameterError(
            f"unknown scheme {scheme!r}; valid schemes: "
            f"{', '.join(ALLOCATION_SCHEMES + _DATA_DEPENDENT + _NEEDS_TIMES)}"
        )
    if params:
        raise ParameterError(
            f"scheme {scheme!r} takes no parameters, got: {', '.join(sorted(params))}"
        )
    n = check_int(n, "n", minimum=0)
    mask = as_landmark_mask(landmarks, n)
    eps = check_epsilon(epsilon)
    if scheme == "event":
        return np.full(n, eps)
    if scheme == "user":
        return np.full(n, eps / n) if n else np.zeros(0)
    if scheme == "uniform":
        return np.full(n, eps / (int(mask.sum()) + 1))
    return np.where(mask, 0.0, eps)  # skip
