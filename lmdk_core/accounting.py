"""Privacy accounting without correlation: the landmark guarantee and w-event window sums.

A mechanism made of independent ε_t-DP steps satisfies (ε, L)-landmark privacy iff for every t

    G_t := Σ_{i ∈ L ∪ {t}} ε_i ≤ ε        (the landmark guarantee, per-timestamp privacy loss)

and w-event ε-DP iff every window of w consecutive timestamps spends Σ ε_t ≤ ε.
Budgets ε_t are finite and ≥ 0 (ε_t = 0: nothing released at t). Checks allow an absolute
tolerance ``tol`` for floating-point sums.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._deprecation import renamed
from .errors import ParameterError
from .validation import as_budget_array, check_epsilon, check_int, check_nonnegative

__all__ = [
    "as_landmark_mask",
    "landmark_guarantee",
    "landmark_violations",
    "satisfies_landmark_privacy",
    "satisfies_w_event",
    "window_sums",
]


def as_landmark_mask(landmarks: Any, n: int) -> np.ndarray:
    """Normalise landmarks into a bool mask of length ``n``.

    Accepts None (no landmarks), a bool mask of length ``n``, or integer timestamp indices in
    [0, n) (possibly empty; duplicates allowed). Raises ParameterError for a mask of the wrong
    length, out-of-range or non-integer indices.
    """
    n = check_int(n, "n", minimum=0)
    mask = np.zeros(n, dtype=bool)
    if landmarks is None:
        return mask
    if isinstance(landmarks, (str, bytes)):
        raise ParameterError(f"landmarks must be a bool mask or integer indices, got {landmarks!r}")
    try:
        arr = np.asarray(landmarks)
    except (TypeError, ValueError):
        raise ParameterError("landmarks must be a bool mask or integer indices") from None
    if arr.ndim != 1:
        if arr.ndim == 0:
            raise ParameterError("landmarks must be a 1-D bool mask or a list of integer indices")
        raise ParameterError(f"landmarks must be 1-dimensional, got shape {arr.shape}")
    if arr.dtype == np.bool_:
        if arr.size != n:
            raise ParameterError(
                f"length mismatch: landmark mask has length {arr.size}, expected {n}"
            )
        return arr.copy()
    if arr.size == 0:
        return mask
    if not np.issubdtype(arr.dtype, np.integer):
        raise ParameterError(f"landmark indices must be integers, got dtype {arr.dtype}")
    if np.any((arr < 0) | (arr >= n)):
        bad = int(arr[(arr < 0) | (arr >= n)][0])
        raise ParameterError(f"landmark index {bad} out of range [0, {n})")
    mask[arr] = True
    return mask



@renamed(eps="budget")
def landmark_guarantee(budget: Any, landmarks: Any) -> np.ndarray:
    """Per-timestamp privacy loss G_t = Σ_{i ∈ L ∪ {t}} ε_i (same length as ``budget``).

    ``budget``: the per-timestamp budgets ε_t (``eps=`` is a deprecated alias).
    L = ∅ gives G_t = ε_t (event level); L = all timestamps gives G_t = Σ ε (user level).
    """
    e = as_budget_array(budget)
    mask = as_landmark_mask(landmarks, e.size)
    return e[mask].sum() + np.where(mask, 0.0, e)


@renamed(eps="budget")
def window_sums(budget: Any, w: int) -> np.ndarray:
    """Σ ε_t over every window of ``w`` consecutive timestamps (length T − w + 1).

    Computed from cumulative sums. If T < w there is one (partial) window: the total.
    """
    e = as_budget_array(budget)
    w = check_int(w, "w", minimum=1)
    if e.size < w:
        return np.array([e.sum()])
    c = np.concatenate(([0.0], np.cumsum(e)))
    return np.maximum(c[w:] - c[:-w], 0.0)


@renamed(eps="budget", positional=("epsilon", "tol"))
def landmark_violations(budget: Any, landmarks: Any, *, epsilon: float,
                        tol: float = 1e-9) -> np.ndarray:
    """Timestamps (int indices) where G_t > ε + tol (``epsilon``: the total budget ε)."""
    epsilon = check_epsilon(epsilon)
    tol = check_nonnegative(tol, "tol")
    return np.flatnonzero(landmark_guarantee(budget, landmarks) > epsilon + tol)


@renamed(eps="budget", positional=("epsilon", "tol"))
def satisfies_landmark_privacy(budget: Any, landmarks: Any, *, epsilon: float,
                               tol: float = 1e-9) -> bool:
    """True iff G_t ≤ ε + tol at every timestamp ((ε, L)-landmark privacy)."""
    return landmark_violations(budget, landmarks, epsilon=epsilon, tol=tol).size == 0


@renamed(eps="budget", positional=("epsilon", "tol"))
def satisfies_w_event(budget: Any, w: int, *, epsilon: float, tol: float = 1e-9) -> bool:
    """True iff every window of ``w`` consecutive timestamps spends ≤ ε + tol (w-event ε-DP)."""
    epsilon = check_epsilon(epsilon)
    tol = check_nonnegative(tol, "tol")
    return bool(np.all(window_sums(budget, w) <= epsilon + tol))
