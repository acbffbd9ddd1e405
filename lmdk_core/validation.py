"""Argument checks shared by every module; each raises :class:`ParameterError` with a plain
message."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .errors import ParameterError


def check_epsilon(value: Any, name: str = "epsilon") -> float:
    """Return ``value`` as a float if it is a finite number > 0, else raise ParameterError."""
    try:
        eps = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number, got {value!r}") from None
    if math.isnan(eps) or math.isinf(eps):
        raise ParameterError(f"{name} must be finite, got {eps}")
    if eps <= 0:
        raise ParameterError(f"{name} must be > 0, got {eps}")
    return eps


def check_nonnegative(value: Any, name: str) -> float:
    """Return ``value`` as a float if it is a finite number ≥ 0, else raise ParameterError."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(x) or x < 0:
        raise ParameterError(f"{name} must be a finite number >= 0, got {x}")
    return x


def check_positive(value: Any, name: str) -> float:
    """Return ``value`` as a float if it is a finite number > 0 (check_epsilon with a name)."""
    return check_epsilon(value, name)


def check_int(value: Any, name: str, minimum: int = 1) -> int:
    """Return ``value`` as an int if it is an integer ≥ ``minimum``, else raise ParameterError."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        else:
            raise ParameterError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ParameterError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def check_seed(rng: Any, what: str, why: str = "a simulation") -> int:
    """Return ``rng`` as an int if it is an integer seed ≥ 0, else raise ParameterError naming
    ``what`` needs one and ``why`` (for functions whose draws must be reproducible simulations,
    never a real release's fresh OS randomness)."""
    if rng is None or isinstance(rng, bool) or not isinstance(rng, (int, np.integer)) or rng < 0:
        raise ParameterError(f"{what} needs an integer seed rng= >= 0 ({why}), got {rng!r}")
    return int(rng)


def check_probability(value: Any, name: str) -> float:
    """Return ``value`` as a float in [0, 1], else raise ParameterError."""
    x = check_nonnegative(value, name)
    if x > 1:
        raise ParameterError(f"{name} must lie in [0, 1], got {x}")
    return x


def as_numeric_array(values: Any, name: str, ndim: int = 1) -> np.ndarray:
    """Return ``values`` as a float64 array of the given ndim (NaN and inf allowed)."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be numeric") from None
    if arr.ndim != ndim:
        raise ParameterError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    return arr


def as_finite_array(values: Any, name: str, ndim: int = 1) -> np.ndarray:
    """Return ``values`` as a float64 array of the given ndim with no NaN or inf."""
    arr = as_numeric_array(values, name, ndim)
    if not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.isfinite(arr.ravel()))[0])
        raise ParameterError(f"{name} contains NaN or infinite values (first at index {bad})")
    return arr


def as_budget_array(values: Any, name: str = "eps") -> np.ndarray:
    """Return per-timestamp budgets ε_t as a finite 1-D float64 array, every entry ≥ 0."""
    arr = as_finite_array(values, name)
    if np.any(arr < 0):
        bad = int(np.flatnonzero(arr < 0)[0])
        raise ParameterError(f"{name} must be >= 0, got {arr[bad]} at index {bad}")
    return arr


def check_same_length(n: int, other: int, what: str) -> None:
    """Raise ParameterError when two lengths that must agree differ."""
    if n != other:
        raise ParameterError(f"length mismatch: {what} has length {other}, expected {n}")
