"""Column mapping and validation into the canonical trajectory frame, then sorting and de-duping.

Canonical frame: ``uid`` (str), ``time`` (datetime64[ns, UTC]), ``lat``, ``lon`` (float64, degrees),
then every other input column unchanged. All checks are vectorised; only the first offending row is
turned into a message (with the number of further bad rows), so a clean million-row file costs a few
array passes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..times import NAT, RANGE_TEXT, parse_iso_utc, ticks_ns
from ..trajectory import time_order
from .locate import Locator
from .text import sniff_separator, split_header

LAT_NAMES = ("lat", "latitude")
LON_NAMES = ("lon", "lng", "long", "longitude")
TIME_NAMES = ("timestamp", "datetime", "time", "date")
UID_NAMES = ("uid", "user", "user_id", "userid", "id", "taxi_id")
CANONICAL = ("uid", "time", "lat", "lon")

_NUMERIC = re.compile(r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$")
_DECIMAL_COMMA = re.compile(r"^[-+]?\d+,\d+$")
_CLOCK = re.compile(r"^\s*\d{1,2}:\d{2}")
# datetime64[ns] bounds, in seconds since the epoch
_MIN_S, _MAX_S = pd.Timestamp.min.value / 1e9, pd.Timestamp.max.value / 1e9


@dataclass(frozen=True)
class ColumnMap:
    """Which input columns hold latitude, longitude, time (optionally date + time) and user id."""

    lat: str
    lon: str
    time: str
    date: str | None = None
    uid: str | None = None


def _by_lower(columns: Iterable) -> dict[str, str]:
    out: dict[str, str] = {}
    for col in columns:
        out.setdefault(str(col).strip().lower(), col)
    return out


def map_columns(columns: Iterable, loc: Locator) -> ColumnMap:
    """Find the canonical columns case-insensitively; raise naming what is missing and found."""
    columns = list(columns)
    low = _by_lower(columns)
    lat = next((low[n] for n in LAT_NAMES if n in low), None)
    lon = next((low[n] for n in LON_NAMES if n in low), None)
    time = next((low[n] for n in TIME_NAMES if n in low), None)
    date = low.get("date") if time is not None and time == low.get("time") else None
    uid = next((low[n] for n in UID_NAMES if n in low), None)
    missing = [w for w, c in (("latitude", lat), ("longitude", lon), ("time", time)) if c is None]
    if lat is None or lon is None or time is None:
        found = ", ".join(str(c) for c in columns[:20]) + (", …" if len(columns) > 20 else "")
        raise loc.error(
            f"missing {', '.join(missing)} column{'s' if len(missing) > 1 else ''} "
            f"(accepted: lat/latitude, lon/lng/long/longitude, time/timestamp/datetime/date+time); "
            f"found columns: {found or 'none'}"
        )
    return ColumnMap(lat=lat, lon=lon, time=time, date=date, uid=uid)


def header_has_coordinates(line: bytes | str) -> bool:
    """True if a header line names latitude and longitude columns (used for content sniffing)."""
    if isinstance(line, bytes):
        line = line.decode("utf-8", "replace")
    names = _by_lower(split_header(line, sniff_separator([line])))
    return any(n in names for n in LAT_NAMES) and any(n in names for n in LON_NAMES)


class _Problems:
    """Collects (bad-row mask, describe(row)) pairs and raises for the earliest bad row."""

    def __init__(self) -> None:
        self.checks: list[tuple[np.ndarray, Callable[[int], str]]] = []

    def add(self, mask: np.ndarray | None, describe: Callable[[int], str]) -> None:
        if mask is not None and mask.any():
            self.checks.append((mask, describe))

    def raise_first(self, loc: Locator) -> None:
        if not self.checks:
            return
        firsts = [int(np.argmax(mask)) for mask, _ in self.checks]
        i = int(np.argmin(firsts))
        row = firsts[i]
        n_bad = int(np.logical_or.reduce([mask for mask, _ in self.checks]).sum())
        reason = self.checks[i][1](row)
        if n_bad > 1:
            reason += f" (and {n_bad - 1} more bad row{'s' if n_bad > 2 else ''})"
        raise loc.error(reason, row)


def _fmt(x: float) -> str:
    return f"{float(x):.10g}"


def _blank(col: pd.Series, rows: np.ndarray) -> np.ndarray:
    """Mask (over ``rows``) of values that are missing or whitespace-only."""
    sub = col.iloc[rows]
    return (sub.isna() | (sub.astype(str).str.strip() == "")).to_numpy()


def _not_a_number(what: str, text: str) -> str:
    hint = " (use '.' as the decimal separator)" if _DECIMAL_COMMA.match(text) else ""
    return f"{what} {text!r} is not a number{hint}"


def _numbers(col: pd.Series, what: str, problems: _Problems) -> np.ndarray:
    """float64 values of ``col``; non-numeric text is reported, missing values are NaN."""
    if pd.api.types.is_numeric_dtype(col.dtype):
        return col.to_numpy(dtype=np.float64, na_value=np.nan)
    values = pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    nan_rows = np.flatnonzero(np.isnan(values))
    if nan_rows.size:
        sub = col.iloc[nan_rows]
        text = sub.astype(str).str.strip()
        literal_nan = (text.str.lower() == "nan").to_numpy()
        nonnum = np.zeros(values.size, dtype=bool)
        nonnum[nan_rows] = ~(_blank(col, nan_rows) | literal_nan)
        problems.add(nonnum, lambda r: _not_a_number(what, str(col.iloc[r]).strip()))
    return values


def _coordinate(col: pd.Series, what: str, limit: float, problems: _Problems) -> np.ndarray:
    values = _numbers(col, what, problems)
    problems.add(np.isnan(values), lambda r: f"missing {what}")
    problems.add(np.isinf(values), lambda r: f"{what} {values[r]} is not finite")
    with np.errstate(invalid="ignore"):
        out = np.abs(values) > limit
    problems.add(
        out & np.isfinite(values),
        lambda r: f"{what} {_fmt(values[r])} outside [-{limit:g}, {limit:g}]",
    )
    return values


def _epoch_ns(values: np.ndarray, problems: _Problems) -> np.ndarray:
    """Epoch seconds (milliseconds if every |value| >= 1e11) to int64 ns; out-of-range reported."""
    finite = np.isfinite(values)
    problems.add(np.isnan(values), lambda r: "missing time")
    unit_ns = 1_000_000 if finite.any() and np.abs(values[finite]).min() >= 1e11 else 1_000_000_000
    seconds = values * (unit_ns / 1e9)
    with np.errstate(invalid="ignore"):
        out = ~np.isnan(values) & ~((seconds > _MIN_S) & (seconds < _MAX_S))
    problems.add(out, lambda r: f"time {_fmt(values[r])} {RANGE_TEXT}")
    ok = finite & ~out
    v = np.where(ok, values, 0.0)
    whole = np.floor(v)  # exact integer part in the file's unit, then the fraction to ns
    ns = whole.astype(np.int64) * unit_ns + np.round((v - whole) * unit_ns).astype(np.int64)
    return np.where(ok, ns, NAT)


def _datetimes_ns(t: pd.Series, problems: _Problems, shown: pd.Series | None = None) -> np.ndarray:
    """Naive-UTC or tz-aware datetime Series (any unit) to int64 ns; out-of-range rows reported."""
    if not pd.api.types.is_datetime64_any_dtype(t.dtype):
        t = pd.to_datetime(t, errors="coerce")  # e.g. datetime.date objects
    ns, _, out = ticks_ns(t)
    label = shown if shown is not None else t
    problems.add(out, lambda r: f"time {str(label.iloc[r]).strip()!r} {RANGE_TEXT}")
    return ns


def _parse_time(col: pd.Series, problems: _Problems) -> np.ndarray:
    """Time column to int64 ns since the epoch (UTC): datetimes, epoch numbers or date/time text."""
    if pd.api.types.is_bool_dtype(col.dtype):
        problems.add(np.ones(len(col), bool), lambda r: f"time {col.iloc[r]!r} is not a date/time")
        return np.zeros(len(col), np.int64)
    if pd.api.types.is_numeric_dtype(col.dtype):
        return _epoch_ns(col.to_numpy(dtype=np.float64, na_value=np.nan), problems)
    if pd.api.types.is_datetime64_any_dtype(col.dtype):
        problems.add(col.isna().to_numpy(), lambda r: "missing time")
        return _datetimes_ns(col, problems)
    present = col.dropna()
    sample = next((str(v) for v in present.iloc[:100] if str(v).strip()), "")
    if _NUMERIC.match(sample):
        return _epoch_ns(_numbers(col, "time", problems), problems)
    is_text = present.map(type).eq(str).all() if col.dtype == object else True
    if not is_text:  # e.g. datetime.date / datetime objects from a parser
        problems.add(col.isna().to_numpy(), lambda r: "missing time")
        return _datetimes_ns(col, problems)
    text = col.str.strip()
    blank = (text.isna() | (text == "")).to_numpy()
    problems.add(blank, lambda r: "missing time")
    parsed, out = parse_iso_utc(text)  # pandas 2 and 3 alike (lmdk_core.times)
    problems.add(out, lambda r: f"time {text.iloc[r]!r} {RANGE_TEXT}")
    bad = parsed.isna().to_numpy() & ~blank & ~out
    if bad.any():  # not ISO 8601: let pandas infer one format from the first value
        try:
            guess = pd.to_datetime(text, utc=True, errors="coerce")
        except (ValueError, TypeError):
            guess = None
        if guess is not None:
            bad2 = guess.isna().to_numpy() & ~blank
            if bad2.sum() < bad.sum():
                parsed, bad = guess, bad2
    problems.add(bad, lambda r: f"cannot parse time {text.iloc[r]!r}")
    return _datetimes_ns(parsed, problems, shown=text)


def _combine_date_time(date: pd.Series, time: pd.Series) -> pd.Series:
    """``"<date> <time>"`` text; missing when either part is missing."""
    d = date.astype("str").str.strip()
    t = time.astype("str").str.strip()
    out = d + " " + t
    return out.mask(date.isna() | time.isna() | (d == "") | (t == ""))


def _uid(col: pd.Series | None, n: int, default_uid: str, problems: _Problems) -> pd.Series:
    """User ids as str; integral floats lose their ``.0``; missing/blank ids are reported."""
    if col is None:
        return pd.Series(pd.array([default_uid], dtype="str").take(np.zeros(n, dtype=np.intp)))
    codes, uniques = pd.factorize(col, use_na_sentinel=True)
    uniques = pd.Index(uniques)
    if pd.api.types.is_float_dtype(uniques.dtype) and np.all(np.mod(uniques.to_numpy(), 1) == 0):
        uniques = uniques.astype(np.int64)
    labels = uniques.astype(str).str.strip().to_numpy(dtype=object)
    missing = codes < 0
    if labels.size:
        missing |= (labels == "")[np.maximum(codes, 0)]
    problems.add(missing, lambda r: "missing user id")
    # expand the few distinct labels by index (fast for string arrays), not a per-row object array
    return pd.Series(pd.array(np.append(labels, ""), dtype="str").take(codes))


def to_canonical(
    raw: pd.DataFrame, cmap: ColumnMap, loc: Locator, default_uid: str
) -> pd.DataFrame:
    """Validate ``raw``; return the canonical frame in input order (raise on the first bad row)."""
    n = len(raw)
    if n == 0:
        raise loc.error("no data rows")
    problems = _Problems()
    lat = _coordinate(raw[cmap.lat], "latitude", 90.0, problems)
    lon = _coordinate(raw[cmap.lon], "longitude", 180.0, problems)
    used = {cmap.lat, cmap.lon, cmap.time}
    time_col = raw[cmap.time]
    if cmap.date is not None:
        sample = next((str(v) for v in time_col.dropna().iloc[:100] if str(v).strip()), "")
        if _CLOCK.match(sample):  # a clock-only time column: join it with the date column
            time_col = _combine_date_time(raw[cmap.date], time_col)
            used.add(cmap.date)
    ns = _parse_time(time_col, problems)
    uid = _uid(raw[cmap.uid] if cmap.uid is not None else None, n, default_uid, problems)
    if cmap.uid is not None:
        used.add(cmap.uid)
    problems.raise_first(loc)
    out = pd.DataFrame(
        {
            "uid": uid,
            "time": pd.DatetimeIndex(ns.view("datetime64[ns]"), tz="UTC"),
            "lat": lat,
            "lon": lon,
        },
        copy=False,  # lat/lon may be views of the parsed columns: no second copy of the data
    )
    for col in raw.columns:
        if col not in used:
            name = str(col)
            while name in out.columns:
                name += "_orig"
            out[name] = raw[col].array  # positional, dtype kept (nullable ints, categories, ...)
    return out


def finalize(
    df: pd.DataFrame, name: str, report: list[str], loc: Locator | None = None
) -> pd.DataFrame:
    """Sort by (uid, time) (stable: file order among ties) and drop repeated (uid, time) rows.

    The first row of each repeated (uid, time) is kept; the number dropped is appended to ``report``
    (with the line of the first dropped row when ``loc`` is given), never dropped silently.
    """
    order, codes, t = time_order(df)  # the package's one (uid, time) sort
    if not np.array_equal(order, np.arange(len(df))):
        df = df.take(order)
    dup = np.zeros(len(df), dtype=bool)
    dup[1:] = (codes[1:] == codes[:-1]) & (t[1:] == t[:-1])
    if dup.any():
        k = int(dup.sum())
        rows = np.flatnonzero(dup)
        first = int(order[rows].min())
        where = f"; first at {loc.where(first)}" if loc is not None else ""
        report.append(
            f"{name}: dropped {k} row{'s' if k > 1 else ''} repeating a timestamp already seen "
            f"for the same user (kept the first{where})"
        )
        df = df[~dup]
    return df.reset_index(drop=True)
