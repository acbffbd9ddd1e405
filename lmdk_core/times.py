"""The one conversion of datetimes to UTC nanoseconds, whatever their unit and zone.

pandas 3 gives datetime columns whose unit depends on the input (``s``, ``ms``, ``us`` or ``ns``),
so reading ``asi8`` or ``.value`` without converting mixes units silently (a 1,800-second span read
as 1.8 s). Every path that does arithmetic on times — readers, trajectory operations, stay
detection — converts through this module:

* :func:`ticks_ns` — int64 nanoseconds since the Unix epoch (UTC) plus masks of missing values and
  of values outside the ``datetime64[ns]`` range (for the readers' row-level messages);
* :func:`epoch_ns` / :func:`utc_ns` — the same, raising :class:`ParameterError` instead;
* :func:`utc_timestamp` — one scalar date/time as a UTC nanosecond Timestamp.

Naive datetimes are taken as UTC; tz-aware ones are converted to UTC. Numbers are refused
(their unit would be a guess): convert epoch numbers explicitly, e.g.
``pd.to_datetime(x, unit="s", utc=True)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .errors import ParameterError

__all__ = ["NAT", "RANGE_TEXT", "epoch_ns", "ticks_ns", "utc_ns", "utc_timestamp"]

NAT = np.iinfo(np.int64).min
"""The int64 pattern of NaT."""
RANGE_TEXT = "outside the supported range 1677-09-22 .. 2262-04-11"
"""Why a date is refused: datetime64[ns] covers only these years."""


def _naive_utc(values: Any, name: str) -> np.ndarray:
    """``values`` as a naive-UTC ``datetime64[unit]`` numpy array (unit kept)."""
    dtype = getattr(values, "dtype", None)
    if dtype is not None and (
        pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)
    ):
        raise ParameterError(
            f"{name} must hold datetimes, got numbers ({dtype}); convert epoch numbers with "
            f"pd.to_datetime(..., unit='s', utc=True)"
        )
    try:
        idx = pd.DatetimeIndex(values)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ParameterError(f"{name} must hold datetimes ({exc})") from None
    if idx.tz is not None:
        idx = idx.tz_convert("UTC").tz_localize(None)
    return np.asarray(idx.to_numpy())


def ticks_ns(values: Any, name: str = "time") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(int64 ns since the epoch, NaT mask, out-of-range mask) of datetimes of any unit.

    Rows that are NaT or outside the ``datetime64[ns]`` range hold :data:`NAT` in the first
    array; nothing overflows. Raises ParameterError if ``values`` are not datetimes.
    """
    arr = _naive_utc(values, name)
    unit, count = np.datetime_data(arr.dtype)
    ticks = arr.view(np.int64)
    nat = ticks == NAT
    if unit == "ns" and count == 1:
        return ticks.copy(), nat, np.zeros(ticks.shape, dtype=bool)
    per_ns = int(pd.Timedelta(count, unit=unit).value)
    lo = pd.Timestamp.min.value // per_ns + 1
    hi = pd.Timestamp.max.value // per_ns
    out = ~nat & ((ticks < lo) | (ticks > hi))
    ok = ~nat & ~out
    return np.where(ok, np.where(ok, ticks, 0) * per_ns, NAT), nat, out


def epoch_ns(values: Any, name: str = "time") -> np.ndarray:
    """int64 nanoseconds since the Unix epoch (UTC) of datetimes of any unit and zone.

    Raises ParameterError for non-datetimes, missing values (NaT) and dates outside 1677..2262.
    """
    ns, nat, out = ticks_ns(values, name)
    if nat.any():
        raise ParameterError(f"{name} contains missing timestamps (NaT), first at row "
                             f"{int(np.argmax(nat))}")
    if out.any():
        raise ParameterError(f"{name} row {int(np.argmax(out))}: date {RANGE_TEXT}")
    return ns


def utc_ns(values: Any, name: str = "time") -> pd.DatetimeIndex:
    """``values`` as a ``datetime64[ns, UTC]`` DatetimeIndex (errors as :func:`epoch_ns`)."""
    return pd.DatetimeIndex(epoch_ns(values, name).view("datetime64[ns]"), tz="UTC")


def utc_timestamp(value: Any, name: str) -> pd.Timestamp:
    """One date/time (string, datetime, Timestamp, datetime64) as a UTC nanosecond Timestamp.

    Naive values are taken as UTC. Raises ParameterError for anything else, NaT, numbers and
    dates outside 1677..2262.
    """
    if isinstance(value, (bool, int, float, np.number)):
        raise ParameterError(f"{name} must be a date/time, got the number {value!r}")
    try:
        ts = pd.Timestamp(value)
    except (TypeError, ValueError, OverflowError):
        raise ParameterError(f"{name} must be a date/time, got {value!r}") from None
    if ts is pd.NaT:
        raise ParameterError(f"{name} must be a date/time, got {value!r}")
    ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
    try:
        return ts.as_unit("ns")
    except (OverflowError, ValueError):  # OutOfBoundsDatetime is a ValueError
        raise ParameterError(f"{name} {value!r} is {RANGE_TEXT}") from None
