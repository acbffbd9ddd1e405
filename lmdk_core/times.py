"""The time boundary: every time the package reads is validated and converted here, once.

Like MovingPandas' one ``Trajectory`` constructor, this module is the only place that looks at how
a caller spelled a time; every other module takes what it returns as-is (int64 UTC nanoseconds,
``datetime64[ns]`` naive-UTC arrays or a ``datetime64[ns, UTC]`` index). The rule, the same for
every public entry point (releases, sessions, trajectory operations, release intervals, region
events, the ledger):

* datetime64 of any unit (``s``/``ms``/``us``/``ns``): naive values are taken as UTC;
* tz-aware datetimes: converted to UTC;
* numbers (integer or float epoch values), text and object columns (e.g. Timestamps in mixed
  zones) are refused with :class:`ParameterError` — their unit, format or zone would be a guess;
  convert explicitly, e.g. ``pd.to_datetime(x, unit="s", utc=True)`` or
  ``pd.to_datetime(text, utc=True)``;
* missing values (NaT) and dates outside 1677..2262 are refused.

Scalars (bounds such as ``start``/``end``) follow the same rule, except that a date string is
parsed (:func:`utc_timestamp`). The pattern streams keep their ticks as int64 nanoseconds, the
format this module returns; :func:`event_ns` accepts that format besides datetimes.

The pandas 2/3 differences live here too: pandas 3 gives datetime columns whose unit depends on
the input (pandas 2.2 mostly ``ns``), so reading ``asi8`` or ``.value`` without converting would
mix units silently (a 1,800-second span read as 1.8 s); everything is read through
:func:`ticks_ns`, whose arithmetic handles any unit on both. A missing text field is NaN on both
(:func:`missing_text_as_nan`: pandas 2's Arrow paths gave None), and an Arrow table becomes the
frame pandas' own pyarrow engine makes of it on both (:func:`arrow_table_to_frame`).

* :func:`ticks_ns` — int64 nanoseconds since the Unix epoch (UTC) plus masks of missing values and
  of values outside the ``datetime64[ns]`` range (for the readers' row-level messages);
* :func:`epoch_ns` / :func:`utc_ns` / :func:`utc_times` — the same, raising
  :class:`ParameterError` instead, as int64, a UTC index or a naive-UTC ``datetime64[ns]`` array;
* :func:`utc_timestamp` — one scalar date/time as a UTC nanosecond Timestamp;
* :func:`ns_index` — int64 nanoseconds back to a ``datetime64[ns, UTC]`` index;
* :data:`NS_PER_S` / :func:`seconds` — durations between such nanoseconds in seconds (the one
  place the package scales nanoseconds to seconds); :data:`NS_PER_DAY` / :func:`utc_midnight_ns`
  — a day, and the UTC midnight that starts one.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .errors import ParameterError

__all__ = [
    "NAT", "NS_PER_DAY", "NS_PER_S", "PANDAS_2", "RANGE_TEXT", "arrow_table_to_frame", "epoch_ns",
    "event_ns", "missing_text_as_nan", "ns_index", "parse_iso_utc", "seconds", "ticks_ns",
    "utc_midnight_ns", "utc_ns", "utc_times", "utc_timestamp",
]

NAT = np.iinfo(np.int64).min
"""The int64 pattern of NaT."""
NS_PER_S = 1_000_000_000
"""Nanoseconds per second: the unit of :func:`epoch_ns` against durations given in seconds."""
NS_PER_DAY = 86_400 * NS_PER_S
"""Nanoseconds per (UTC) day."""
PANDAS_2 = int(pd.__version__.split(".")[0]) < 3
"""pandas 2.2 (supported, see pyproject.toml): ns-only datetimes, and ISO 8601 parsing that
mis-reads naive text after text with an offset (see :func:`parse_iso_utc`)."""
_OFFSET = r"\d:\d{2}(?::\d{2}(?:[.,]\d+)?)?\s*(?:[zZ]|[+-]\d{2}(?::?\d{2})?)$"
_YEAR = r"^\s*([+-]?\d{4,})-"
RANGE_TEXT = "outside the supported range 1677-09-22 .. 2262-04-11"
"""Why a date is refused: datetime64[ns] covers only these years."""


def missing_text_as_nan(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame``, parsed by Arrow (a CSV file of 1 MiB or more, Parquet), with NaN for a missing
    text field, as pandas' C engine gives it (the readers' other path).

    On pandas 2, Arrow's conversion and pandas' pyarrow engine give None in an object column,
    the C engine NaN, so one file's rows read differently by its size or format; pandas 3's
    ``str`` columns hold NaN whichever parsed them (nothing to do there). Changes ``frame`` in
    place and returns it."""
    if not PANDAS_2:
        return frame
    for i, dtype in enumerate(frame.dtypes):
        if isinstance(dtype, np.dtype) and dtype.kind == "O":
            values = frame.iloc[:, i].to_numpy(dtype=object)
            missing = pd.isna(values)
            # text only: a column of dates, lists or only missing values keeps its None, as
            # on pandas 3
            if missing.any() and pd.api.types.infer_dtype(values, skipna=True) == "string":
                values = values.copy()
                values[missing] = np.nan
                frame.isetitem(i, values)
    return frame


def arrow_table_to_frame(table: Any) -> pd.DataFrame:
    """A pyarrow Table as the frame pandas' own pyarrow engine makes of it (pandas 3's conversion;
    pandas 2 has none, so Arrow's plain ``to_pandas``), with missing text as the C engine gives
    it (:func:`missing_text_as_nan`)."""
    try:
        from pandas.io._util import arrow_table_to_pandas
    except ImportError:  # pandas 2 has no such function: the plain conversion
        return missing_text_as_nan(table.to_pandas())
    return missing_text_as_nan(arrow_table_to_pandas(table))


def _naive_utc(values: Any, name: str) -> np.ndarray:
    """``values`` as a naive-UTC ``datetime64[unit]`` numpy array (unit kept)."""
    dtype = getattr(values, "dtype", None)
    if dtype is None:
        values = np.asarray(values)
        dtype = values.dtype
    if isinstance(dtype, pd.DatetimeTZDtype) or getattr(dtype, "kind", None) == "M":
        idx = pd.DatetimeIndex(values)
    elif pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
        raise ParameterError(
            f"{name} must hold datetimes, got numbers ({dtype}); convert epoch numbers with "
            f"pd.to_datetime(..., unit='s', utc=True)"
        )
    else:
        raise ParameterError(
            f"{name} must hold datetimes (datetime64, naive = UTC, or tz-aware), got {dtype}; "
            f"parse text or mixed zones with pd.to_datetime(..., utc=True)"
        )
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
    return ns_index(epoch_ns(values, name))


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


def parse_iso_utc(text: pd.Series) -> tuple[pd.Series, np.ndarray]:
    """ISO 8601 text as tz-aware UTC datetimes (NaT where unparsable; offsets applied, naive = UTC),
    and a mask of the rows whose dates are outside the ``datetime64[ns]`` range.

    pandas 3 parses such dates (at a coarser unit; :func:`ticks_ns` reports them), so its mask is
    all False. pandas 2.2 cannot hold them (they come back NaT: the mask names them by their year),
    and with ``format="ISO8601"`` it shifts a naive time by the offset of an earlier row, so naive
    and offset text are parsed apart there.
    """
    text = pd.Series(text)
    if not PANDAS_2:
        parsed = pd.to_datetime(text, utc=True, format="ISO8601", errors="coerce")
        return parsed, np.zeros(len(text), dtype=bool)
    has_offset = text.str.contains(_OFFSET, regex=True, na=False).to_numpy()
    ns = np.full(len(text), NAT, dtype=np.int64)
    for part in (has_offset, ~has_offset):
        if part.any():
            ns[part] = ticks_ns(pd.to_datetime(text[part], utc=True, format="ISO8601",
                                               errors="coerce"))[0]
    parsed = pd.Series(ns_index(ns), index=text.index)
    year = pd.to_numeric(text.str.extract(_YEAR, expand=False), errors="coerce").to_numpy()
    out = parsed.isna().to_numpy() & ((year <= 1677) | (year >= 2262))
    return parsed, out


def utc_times(values: Any, name: str = "time") -> np.ndarray:
    """``values`` as a naive-UTC ``datetime64[ns]`` array (errors as :func:`epoch_ns`)."""
    return epoch_ns(values, name).view("datetime64[ns]")


def ns_index(ns: Any) -> pd.DatetimeIndex:
    """int64 ns since the epoch (this module's output) as a ``datetime64[ns, UTC]`` index."""
    return pd.DatetimeIndex(np.asarray(ns, dtype=np.int64).view("datetime64[ns]"), tz="UTC")


def event_ns(values: Any, name: str = "time") -> np.ndarray:
    """Pattern-stream tick times as int64 ns: datetimes (as :func:`epoch_ns`) or int64 ns as-is.

    Integers are read as nanoseconds since the epoch — the format :func:`epoch_ns` returns and the
    streams store — not as seconds; floats and text are refused.
    """
    arr = values if hasattr(values, "dtype") else np.asarray(values)
    if arr.dtype.kind in "iu" or (arr.dtype == object and len(arr) == 0):
        return np.asarray(arr, dtype=np.int64)
    if arr.dtype.kind == "f" and len(arr) == 0:
        return np.zeros(0, np.int64)
    return epoch_ns(arr, name)


def utc_midnight_ns(ns: int) -> int:
    """The UTC midnight at or before ``ns`` (int64 ns since the epoch, as :func:`epoch_ns`), in
    the same unit: where a day of pattern-stream ticks starts."""
    return int(ns) // NS_PER_DAY * NS_PER_DAY


def seconds(ns: Any) -> np.ndarray:
    """Durations in int64 nanoseconds (differences of :func:`epoch_ns` values) as float seconds."""
    return np.asarray(ns, dtype=np.int64) / NS_PER_S
