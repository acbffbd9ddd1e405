"""Operations on canonical trajectory frames (as returned by :func:`lmdk_core.read_trajectories`).

A trajectory frame has columns ``uid`` (str), ``time`` (datetimes), ``lat``, ``lon``
(float64 degrees), sorted by ``(uid, time)``, plus any extra columns, which every function here
carries along unchanged. The readers give ``time`` as datetime64[ns, UTC]; any other unit
(s/ms/us, as pandas 3 often produces) or zone works the same, because every time computation goes
through :mod:`lmdk_core.times`. All functions are pure (they return new frames with a fresh
RangeIndex) and vectorised. Times given as arguments may be strings, datetimes or Timestamps; naive
ones are taken as UTC.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .errors import ParameterError
from .geo import haversine_m
from .times import NS_PER_S, epoch_ns, ns_index, seconds, utc_timestamp
from .validation import as_numeric_array, check_int, check_positive

REQUIRED = ("uid", "time", "lat", "lon")

__all__ = [
    "downsample",
    "path_length_m",
    "resample",
    "select_user",
    "summary",
    "time_slice",
    "users"
]


def check_frame(df: Any, required: tuple[str, ...] = REQUIRED, name: str = "trajectory") -> None:
    """Raise ParameterError unless ``df`` is a DataFrame with the ``required`` columns."""
    if not isinstance(df, pd.DataFrame):
        raise ParameterError(f"{name} must be a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise ParameterError(
            f"{name} frame is missing column(s) {', '.join(missing)} (needs {', '.join(required)})"
        )


def _check(df: Any) -> pd.DataFrame:
    check_frame(df)
    return df


def time_order(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(permutation sorting by (uid, time), uid codes and UTC ns times in that order).

    Stable (ties keep row order) and robust to unsorted input; without a ``uid`` column the whole
    frame is one user. Times of any unit and zone (:func:`lmdk_core.times.epoch_ns`). User order:
    sorted ids (ids of mixed types: first appearance). The one sort of the package: the readers
    (:func:`lmdk_core.readers.canonical.finalize`), stays and resampling all use it. Input that
    is already in order returns the identity permutation without sorting.
    """
    t = epoch_ns(df["time"], "time")
    if "uid" in df.columns:
        try:
            codes, _ = pd.factorize(df["uid"], sort=True)
        except TypeError:  # ids of mixed types: order users by first appearance
            codes, _ = pd.factorize(df["uid"])
    else:
        codes = np.zeros(len(df), dtype=np.intp)
    dc, dt = np.diff(codes), np.diff(t)
    if np.all((dc > 0) | ((dc == 0) & (dt >= 0))):  # already sorted: the stable sort is identity
        return np.arange(len(df)), codes, t
    order = np.lexsort((t, codes))
    return order, codes[order], t[order]


def lat_lon(obj: Any, name: str = "trajectory") -> tuple[np.ndarray, np.ndarray]:
    """(lat, lon) float64 arrays in degrees, the one extractor every module uses.

    ``obj``: a DataFrame with ``lat``/``lon`` columns, an object with ``.lat``/``.lon`` (e.g. a
    Release), a mapping with ``lat``/``lon`` keys, a 2 × n array or a ``(lat, lon)`` pair. Values
    are only converted (NaN and inf pass: callers decide, e.g. NaN = not released yet); raises
    ParameterError for anything else, non-numeric values or unequal lengths.
    """
    if isinstance(obj, pd.DataFrame):
        missing = [c for c in ("lat", "lon") if c not in obj.columns]
        if missing:
            raise ParameterError(f"{name} is missing column(s) {missing}; it needs lat and lon")
        lat, lon = obj["lat"], obj["lon"]
    elif hasattr(obj, "lat") and hasattr(obj, "lon"):
        lat, lon = obj.lat, obj.lon
        if lat is None or lon is None:
            raise ParameterError(f"{name} has no locations (a values release?)")
    elif isinstance(obj, np.ndarray) and obj.ndim == 2 and obj.shape[0] == 2:
        lat, lon = obj[0], obj[1]
    elif isinstance(obj, (tuple, list)) and len(obj) == 2:
        lat, lon = obj
    elif hasattr(obj, "keys") and "lat" in obj and "lon" in obj:
        lat, lon = obj["lat"], obj["lon"]
    else:
        raise ParameterError(
            f"{name} must have lat/lon (a DataFrame with lat/lon columns, a Release or a "
            f"(lat, lon) pair), got {type(obj).__name__}"
        )
    lat = as_numeric_array(lat, f"{name} lat")
    lon = as_numeric_array(lon, f"{name} lon")
    if lat.size != lon.size:
        raise ParameterError(
            f"length mismatch: {name} lat has length {lat.size}, lon has length {lon.size}"
        )
    return lat, lon


def even_positions(n: int, max_points: int) -> np.ndarray:
    """At most ``max_points`` (≥ 2) increasing positions in ``range(n)``, evenly spaced, always
    including the first and the last: the one display downsampler (frames, maps, markers)."""
    if n <= max_points:
        return np.arange(n)
    if max_points < 2:
        raise ParameterError(f"max_points must be >= 2, got {max_points}")
    # spacing (n-1)/(m-1) > 1, so floor(x + 0.5) gives m distinct, increasing positions
    return np.floor(np.linspace(0.0, n - 1, max_points) + 0.5).astype(np.int64)


def users(df: pd.DataFrame) -> list[str]:
    """Distinct user ids, sorted."""
    return sorted(map(str, pd.unique(_check(df)["uid"])))


def select_user(df: pd.DataFrame, uid: Any) -> pd.DataFrame:
    """The rows of one user (``uid`` compared as text), in time order, with a fresh index."""
    _check(df)
    mask = (df["uid"].astype(str) == str(uid)).to_numpy()
    if not mask.any():
        ids = users(df)
        shown = ", ".join(ids[:5]) + (", …" if len(ids) > 5 else "")
        raise ParameterError(f"unknown user {uid!r}; the data has {len(ids)} user(s): {shown}")
    return df.loc[mask].reset_index(drop=True)


def downsample(df: pd.DataFrame, max_points: int) -> pd.DataFrame:
    """At most ``max_points`` rows, evenly spaced by position, always keeping the first and last.

    For display. Positions are over the whole frame; call on one user (``select_user``) to keep
    each user's endpoints. A frame already that small is returned as a copy.
    """
    _check(df)
    m = check_int(max_points, "max_points", minimum=2)
    return df.iloc[even_positions(len(df), m)].reset_index(drop=True)


def resample(df: pd.DataFrame, interval_s: float) -> pd.DataFrame:
    """One point per user per ``interval_s``-second interval: the first observation in it.

    Intervals are aligned to the Unix epoch (UTC), so the same interval grid applies to every user
    and to any time slice. Empty intervals produce no row (no interpolation); kept rows are real
    observations with their extra columns.
    """
    _check(df)
    step = check_positive(interval_s, "interval_s")
    if df.empty:
        return df.reset_index(drop=True)
    step_ns = max(round(step * NS_PER_S), 1)
    order, c, t = time_order(df)
    bins = np.floor_divide(t, step_ns)
    first = np.ones(len(order), dtype=bool)
    first[1:] = (c[1:] != c[:-1]) | (bins[1:] != bins[:-1])
    return df.iloc[np.sort(order[first])].reset_index(drop=True)


def time_slice(df: pd.DataFrame, start: Any = None, end: Any = None) -> pd.DataFrame:
    """Rows with ``start <= time <= end`` (either bound may be None for open-ended)."""
    _check(df)
    lo = utc_timestamp(start, "start") if start is not None else None
    hi = utc_timestamp(end, "end") if end is not None else None
    if lo is not None and hi is not None and lo > hi:
        raise ParameterError(f"start {lo} is after end {hi}")
    t = epoch_ns(df["time"], "time")
    mask = np.ones(len(df), dtype=bool)
    if lo is not None:
        mask &= t >= lo.value
    if hi is not None:
        mask &= t <= hi.value
    return df.loc[mask].reset_index(drop=True)


def path_length_m(df: pd.DataFrame) -> float:
    """Total travelled distance in metres: haversine between consecutive points of each user."""
    _check(df)
    if len(df) < 2:
        return 0.0
    order, codes, _ = time_order(df)
    same = codes[1:] == codes[:-1]
    lat, lon = df["lat"].to_numpy(np.float64)[order], df["lon"].to_numpy(np.float64)[order]
    d = haversine_m(lat[:-1], lon[:-1], lat[1:], lon[1:])
    return float(d[same].sum())


def summary(df: pd.DataFrame) -> dict[str, Any]:
    """Counts and time span of a trajectory frame.

    Keys: ``n_points``, ``n_users``, ``start``, ``end`` (UTC Timestamps, None when empty),
    ``duration_s`` (end − start, seconds), ``median_interval_s`` (median gap between consecutive
    points of the same user, seconds; NaN with fewer than two points per user), ``length_m``
    (travelled distance, metres) and ``bbox`` (``(lat_min, lon_min, lat_max, lon_max)`` or None).
    """
    _check(df)
    n = len(df)
    if n == 0:
        return {
            "n_points": 0, "n_users": 0, "start": None, "end": None, "duration_s": 0.0,
            "median_interval_s": float("nan"), "length_m": 0.0, "bbox": None,
        }
    _, codes, t = time_order(df)
    gaps = seconds(np.diff(t)[codes[1:] == codes[:-1]])
    lat, lon = df["lat"].to_numpy(np.float64), df["lon"].to_numpy(np.float64)
    start, end = int(t.min()), int(t.max())
    first, last = ns_index([start, end])
    return {
        "n_points": n,
        "n_users": int(pd.unique(df["uid"]).size),
        "start": first,
        "end": last,
        "duration_s": float(seconds(end - start)),
        "median_interval_s": float(np.median(gaps)) if gaps.size else float("nan"),
        "length_m": path_length_m(df),
        "bbox": (float(lat.min()), float(lon.min()), float(lat.max()), float(lon.max())),
    }
