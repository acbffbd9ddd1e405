"""Utility metrics: how far a release is from the truth.

Locations: per-timestamp great-circle error in metres (:func:`error_metres`) and its mean
(:func:`mae_metres`). Values: absolute error, mean absolute error and mean relative error.

A release may contain NaN where nothing was released yet (e.g. Skip before the first regular
timestamp). Such timestamps get error NaN, and the means average over the finite errors only;
count them with ``np.isnan(error_metres(...)).sum()``. A mean over no finite error is NaN.
The true series must be finite. Length mismatches raise ParameterError.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import ParameterError
from .geo import haversine_m
from .trajectory import lat_lon
from .validation import as_finite_array, as_numeric_array, check_nonnegative, check_same_length

__all__ = ["abs_error", "error_metres", "finite_mean", "mae", "mae_metres", "mre"]


def _float_array(values: Any, name: str) -> np.ndarray:
    """1-D float array; NaN allowed (unreleased), inf is not."""
    arr = as_numeric_array(values, name)
    if np.any(np.isinf(arr)):
        raise ParameterError(f"{name} contains infinite values")
    return arr


def _values(obj: Any, name: str) -> Any:
    """Values of a Release (``.values`` attribute that is not a DataFrame's) or the array itself."""
    if hasattr(obj, "values") and not isinstance(obj, np.ndarray):
        vals = obj.values
        return vals() if callable(vals) else vals
    return obj


def error_metres(true: Any, release: Any) -> np.ndarray:
    """Per-timestamp haversine distance in metres between true and released locations.

    ``true``: DataFrame with ``lat``/``lon`` columns or a ``(lat, lon)`` pair (finite degrees).
    ``release``: an object with ``.lat``/``.lon`` (e.g. a Release) or a ``(lat, lon)`` pair; NaN
    where the release is NaN (nothing released yet).
    """
    tlat, tlon = lat_lon(true, "true")
    rlat, rlon = lat_lon(release, "release")
    tlat, tlon = as_finite_array(tlat, "true lat"), as_finite_array(tlon, "true lon")
    rlat, rlon = _float_array(rlat, "release lat"), _float_array(rlon, "release lon")
    check_same_length(tlat.size, tlon.size, "true lon")
    check_same_length(tlat.size, rlat.size, "release lat")
    check_same_length(tlat.size, rlon.size, "release lon")
    return haversine_m(tlat, tlon, rlat, rlon)


def finite_mean(x: np.ndarray) -> float:
    """Mean of the finite entries of ``x`` (NaN where nothing was released), NaN if none: the
    mean error of an array from :func:`error_metres` or :func:`abs_error`, without a second pass
    over the data."""
    x = np.asarray(x, dtype=np.float64)
    finite = x[np.isfinite(x)]
    return float(finite.mean()) if finite.size else float("nan")


def mae_metres(true: Any, release: Any) -> float:
    """Mean location error in metres over timestamps with a release (NaN errors skipped)."""
    return finite_mean(error_metres(true, release))


def abs_error(values: Any, release: Any) -> np.ndarray:
    """Per-timestamp |o_t − x_t|; ``release`` is a Release (``.values``) or an array. NaN kept."""
    x = as_finite_array(_values(values, "values"), "values")
    o = _float_array(_values(release, "release"), "release")
    check_same_length(x.size, o.size, "release")
    return np.abs(o - x)


def mae(values: Any, release: Any) -> float:
    """Mean absolute error over released timestamps (NaN skipped)."""
    return finite_mean(abs_error(values, release))


def mre(values: Any, release: Any, floor: float = 1.0) -> float:
    """Mean relative error: mean of |o_t − x_t| / max(|x_t|, floor) over released timestamps.

    ``floor`` (> 0, units of the values) avoids division by zero for values near 0.
    """
    floor = check_nonnegative(floor, "floor")
    if floor == 0:
        raise ParameterError("floor must be > 0, got 0.0")
    x = as_finite_array(_values(values, "values"), "values")
    return finite_mean(abs_error(x, release) / np.maximum(np.abs(x), floor))
