"""Google location history: the Takeout ``Records.json`` and the on-device Timeline export.

Three layouts are recognised by their top-level keys (``format="takeout"``, extension ``.json``):

* **Takeout Records** (``Records.json``, until 2024): ``{"locations": [{"latitudeE7": 399925000,
  "longitudeE7": 1163395000, "timestamp": "2022-01-01T10:00:00.123Z", "accuracy": 20, ...}]}``;
  older files give ``timestampMs`` (epoch milliseconds, a string) instead of ``timestamp``.
  Coordinates are degrees × 10⁷; some old exports wrote negative coordinates as unsigned 32-bit
  integers (≥ 2³¹), which are read back as the signed values they encode (minus 2³²).
  Extras kept: ``accuracy`` (metres), ``altitude`` (metres).
* **On-device Timeline, Android** (``Timeline.json``, 2024 on): ``{"semanticSegments": [...],
  "rawSignals": [...]}``; coordinates are strings ``"39.9925°, 116.3395°"``. Points come from
  ``semanticSegments[].timelinePath[]`` (``point``, ``time``), ``rawSignals[].position``
  (``LatLng``, ``timestamp``, ``accuracyMeters``) and ``semanticSegments[].visit`` (the place at the
  visit's start and end time, so stays show as stays). Activity start/end points are not read: they
  are coarse estimates.
* **On-device Timeline, iOS**: a JSON array of segments with ``"geo:39.9925,116.3395"`` strings,
  ``visit.topCandidate.placeLocation`` and ``timelinePath[]`` items whose time is
  ``durationMinutesOffsetFromStartTime`` minutes after the segment's ``startTime``.

Every point keeps its origin in the ``kind`` extra column (``record``, ``path``, ``raw``,
``visit``), so an analysis can keep only measured points. Times carry their UTC offset and are
converted to UTC. The user id is the file stem (one person's history). Errors name the file and
the JSON path of the offending entry, e.g. ``Records.json locations[16]: latitudeE7 missing``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ..errors import TrajectoryFormatError
from .canonical import ColumnMap, finalize, to_canonical
from .locate import Locator
from .source import Source, stem
from .text import check_text

TAKEOUT_KEYS = (b'"locations"', b'"semanticSegments"', b'"rawSignals"', b'"timelinePath"')
"""Top-level keys whose presence near the start of a JSON file marks it as location history."""

_E7 = 1e-7
_INT32 = 2**31
_DEGREES = re.compile(r"^\s*([-+]?\d+(?:\.\d*)?)\s*°?\s*,\s*([-+]?\d+(?:\.\d*)?)\s*°?\s*$")
_GEO = re.compile(r"^\s*geo:\s*([-+]?\d+(?:\.\d*)?)\s*,\s*([-+]?\d+(?:\.\d*)?)")
PROGRESS_EVERY = 50_000
"""Entries (records, segments, signals) between two ``progress`` reports."""

Progress = Callable[[str, int, int], None]


class _JsonLocator(Locator):
    """Rows of a JSON file are reported by their JSON path, e.g. ``locations[16]``."""

    def __init__(self, name: str, paths: list[str] | _IndexPaths):
        super().__init__(name)
        self._paths = paths

    def where(self, row: int) -> str:
        return self._paths[row] if 0 <= row < len(self._paths) else f"entry {row + 1}"

    def error(self, reason: str, row: int | None = None) -> TrajectoryFormatError:
        if row is None:
            return TrajectoryFormatError(reason, source=self.name)
        return TrajectoryFormatError(reason, source=f"{self.name} {self.where(row)}")


def looks_like_takeout(head: bytes) -> bool:
    """True if the first bytes of a file look like one of the JSON layouts above."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return text[:1] in (b"{", b"[") and any(key in head for key in TAKEOUT_KEYS)


def _pair(text: Any, where: str, name: str) -> tuple[float, float]:
    """``"39.99°, 116.33°"`` or ``"geo:39.99,116.33"`` -> (lat, lon); error naming ``where``."""
    if isinstance(text, str):
        m = _DEGREES.match(text) or _GEO.match(text)
        if m:
            return float(m.group(1)), float(m.group(2))
    raise TrajectoryFormatError(
        f"coordinates {text!r} are not 'lat°, lon°' or 'geo:lat,lon'", source=f"{name} {where}"
    )


class _IndexPaths:
    """The JSON paths ``prefix[0]``, ``prefix[1]``, ... as a sequence, built only when asked for.

    A million-record ``Records.json`` needs one path only if a message names a record.
    """

    def __init__(self, prefix: str, n: int):
        self._prefix, self._n = prefix, n

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i: int) -> str:
        if not 0 <= i < self._n:
            raise IndexError(i)
        return f"{self._prefix}[{i}]"


class _Points:
    """Column lists of the points read so far, with each point's JSON path.

    Every operation is O(1) per point: reading must stay linear in the number of points (a test
    and ``bench/bench_takeout.py`` watch this).
    """

    def __init__(self) -> None:
        self.cols: dict[str, Any] = {k: [] for k in ("lat", "lon", "time", "kind")}
        self.extra: dict[str, Any] = {}
        self.paths: list[str] | _IndexPaths = []

    def add(self, lat: Any, lon: Any, time: Any, kind: str, path: str, **extra: Any) -> None:
        """Append one point: O(1) per call (an extra column is back-filled once, when first seen).

        Never build anything the size of the points read so far here (``setdefault(key, [None] *
        n)`` did, on every call: quadratic reading, 385 s for a million records).
        """
        n = len(self.paths)
        cols = self.cols
        cols["lat"].append(lat)
        cols["lon"].append(lon)
        cols["time"].append(time)
        cols["kind"].append(kind)
        for key, value in extra.items():
            values = self.extra.get(key)
            if values is None:
                values = self.extra[key] = [None] * n
            values.append(value)
        if len(self.extra) > len(extra):  # columns this point does not give
            for values in self.extra.values():
                if len(values) == n:
                    values.append(None)
        assert isinstance(self.paths, list)
        self.paths.append(path)

    def frame(self) -> pd.DataFrame:
        # lat/lon are always numbers here (checked, or parsed by _pair): float64 at once
        data: dict[str, Any] = {
            k: np.asarray(self.cols[k], dtype=np.float64) for k in ("lat", "lon")
        }
        for k in ("time", "kind"):
            data[k] = pd.Series(self.cols[k], dtype=object)
        for key, values in self.extra.items():
            data[key] = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce")
        return pd.DataFrame(data)


# epoch milliseconds well inside datetime64[ns]: converted in one vectorised pass; any other value
# takes pandas' own per-value route (pd.Timestamp), so what such a value reads as is unchanged
_MS_SAFE = pd.Timestamp.max.value // 10**6 - 1


def _bad_e7(key: str, value: Any, name: str, i: int) -> TrajectoryFormatError | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        what = "missing" if value is None else f"not a number ({value!r})"
        return TrajectoryFormatError(f"{key} {what}", source=f"{name} locations[{i}]")
    return None


def _report(progress: Progress | None, stage: str, done: int, total: int) -> int:
    """Tell ``progress`` (if any) ``(stage, done, total)``; returns the entry number of the next
    report (-1, never reached, without ``progress``). Readers compare each entry's number with
    it: one integer comparison per entry, no slices or calls."""
    if progress is None:
        return -1
    progress(stage, done, total)
    return done + PROGRESS_EVERY


def _records(doc: dict, name: str, out: _Points, progress: Progress | None = None) -> None:
    """``locations[]`` of a Records.json; one tight pass, first bad record raises (file order).
    ``progress("records", done, total)`` is told the records read."""
    locations = doc["locations"]
    if not isinstance(locations, list):
        raise TrajectoryFormatError("'locations' is not a list", source=name)
    lats: list[Any] = []
    lons: list[Any] = []
    times: list[Any] = []
    accuracy: list[Any] = []
    altitude: list[Any] = []
    ms_rows: list[int] = []
    ms_values: list[int] = []
    number = (int, float)
    total = len(locations)
    next_report = _report(progress, "records", 0, total)
    for i, rec in enumerate(locations):
        if i == next_report:
            next_report = _report(progress, "records", i, total)
        if type(rec) is not dict and not isinstance(rec, dict):
            raise TrajectoryFormatError("entry is not an object",
                                        source=f"{name} locations[{i}]")
        get = rec.get
        lat, lon = get("latitudeE7"), get("longitudeE7")
        if type(lat) not in number or type(lon) not in number:  # rare: check exactly
            err = _bad_e7("latitudeE7", lat, name, i) or _bad_e7("longitudeE7", lon, name, i)
            if err is not None:
                raise err
        time = get("timestamp")
        if time is None:
            raw_ms = get("timestampMs")
            if raw_ms is not None:
                try:
                    ms = int(raw_ms)
                    if -_MS_SAFE <= ms <= _MS_SAFE:
                        ms_rows.append(i)
                        ms_values.append(ms)
                    else:
                        time = pd.Timestamp(ms, unit="ms", tz="UTC").isoformat()
                except (TypeError, ValueError, OverflowError):
                    raise TrajectoryFormatError(
                        f"timestampMs {raw_ms!r} is not epoch milliseconds",
                        source=f"{name} locations[{i}]",
                    ) from None
        lats.append(lat)
        lons.append(lon)
        times.append(time)
        accuracy.append(get("accuracy"))
        altitude.append(get("altitude"))
    _report(progress, "records", total, total)
    n = len(lats)
    if not n:
        return
    if ms_rows:
        stamps = np.asarray(ms_values, dtype=np.int64).astype("datetime64[ms]")
        text = np.datetime_as_string(stamps, unit="ms", timezone="UTC").tolist()
        for row, value in zip(ms_rows, text, strict=True):
            times[row] = value
    lat = np.asarray(lats, dtype=np.float64)
    lon = np.asarray(lons, dtype=np.float64)
    lat = np.where(lat >= _INT32, lat - 2 * _INT32, lat) * _E7
    lon = np.where(lon >= _INT32, lon - 2 * _INT32, lon) * _E7
    out.cols.update(lat=lat, lon=lon, time=times, kind=["record"] * n)
    out.extra.update(accuracy=accuracy, altitude=altitude)
    out.paths = _IndexPaths("locations", n)


def _segment_points(seg: dict, i: int, name: str, out: _Points, prefix: str) -> None:
    base = f"{prefix}[{i}]"
    start = seg.get("startTime")
    for j, item in enumerate(seg.get("timelinePath") or []):
        path = f"{base}.timelinePath[{j}]"
        lat, lon = _pair(item.get("point"), path, name)
        time = item.get("time")
        if time is None and "durationMinutesOffsetFromStartTime" in item and start is not None:
            try:
                minutes = float(item["durationMinutesOffsetFromStartTime"])
                time = (pd.Timestamp(start) + pd.Timedelta(minutes=minutes)).isoformat()
            except (TypeError, ValueError):
                raise TrajectoryFormatError(
                    "durationMinutesOffsetFromStartTime is not a number", source=f"{name} {path}"
                ) from None
        out.add(lat, lon, time, "path", path)
    visit = seg.get("visit")
    if isinstance(visit, dict):
        place = (visit.get("topCandidate") or {}).get("placeLocation")
        text = place.get("latLng") if isinstance(place, dict) else place
        path = f"{base}.visit"
        lat, lon = _pair(text, path, name)
        for key in ("startTime", "endTime"):
            if seg.get(key) is not None:
                out.add(lat, lon, seg[key], "visit", f"{base}.{key}")


def _timeline(doc: Any, name: str, out: _Points, progress: Progress | None = None) -> None:
    """Segments and raw signals of a Timeline export; ``progress("segments"|"signals", done,
    total)`` is told the entries read."""
    signals: list[Any]
    if isinstance(doc, list):
        segments, prefix, signals = doc, "", []
    else:
        segments, prefix = doc.get("semanticSegments") or [], "semanticSegments"
        signals = doc.get("rawSignals") or []
    next_report = _report(progress, "segments", 0, len(segments))
    for i, seg in enumerate(segments):
        if i == next_report:
            next_report = _report(progress, "segments", i, len(segments))
        if isinstance(seg, dict):
            _segment_points(seg, i, name, out, prefix)
    _report(progress, "segments", len(segments), len(segments))
    if not signals:
        return
    next_report = _report(progress, "signals", 0, len(signals))
    for i, sig in enumerate(signals):
        if i == next_report:
            next_report = _report(progress, "signals", i, len(signals))
        pos = sig.get("position") if isinstance(sig, dict) else None
        if isinstance(pos, dict):
            path = f"rawSignals[{i}].position"
            lat, lon = _pair(pos.get("LatLng", pos.get("latLng")), path, name)
            out.add(
                lat,
                lon,
                pos.get("timestamp"),
                "raw",
                path,
                accuracy=pos.get("accuracyMeters"),
                altitude=pos.get("altitudeMeters"),
            )
    _report(progress, "signals", len(signals), len(signals))


def read_takeout_source(src: Source, report: list[str], *,
                        progress: Progress | None = None) -> pd.DataFrame:
    """Read one Google location-history JSON file into the canonical frame.

    ``progress(stage, done, total)``, if given, is told each stage in order: ``"parsing"``
    (bytes of JSON: 0, then all), ``"records"`` (Records.json) or ``"segments"``/``"signals"``
    (Timeline) every :data:`PROGRESS_EVERY` entries, then ``"times"`` (points: 0, then all)."""
    loc = Locator(src.name)
    data = check_text(src.read(), loc)
    if progress is not None:
        progress("parsing", 0, len(data))
    try:
        doc = json.loads(data)
    except json.JSONDecodeError as exc:
        raise TrajectoryFormatError(
            f"malformed JSON ({exc.msg})", source=src.name, line=exc.lineno
        ) from None
    if progress is not None:
        progress("parsing", len(data), len(data))
    del data
    out = _Points()
    if isinstance(doc, dict) and "locations" in doc:
        _records(doc, src.name, out, progress)
    elif isinstance(doc, list) or (
        isinstance(doc, dict) and ("semanticSegments" in doc or "rawSignals" in doc)
    ):
        _timeline(doc, src.name, out, progress)
    else:
        keys = ", ".join(list(doc)[:8]) if isinstance(doc, dict) else type(doc).__name__
        raise loc.error(
            "not a Google location history (expected 'locations' as in Records.json, or "
            f"'semanticSegments'/'rawSignals' as in Timeline.json); found: {keys or 'nothing'}"
        )
    if not out.paths:
        raise loc.error("no location points in this location history")
    del doc
    n = len(out.paths)
    if progress is not None:
        progress("times", 0, n)
    raw = out.frame()
    jloc = _JsonLocator(src.name, out.paths)
    missing = raw["time"].isna().to_numpy()
    if missing.any():
        raise jloc.error("point without a time", int(np.flatnonzero(missing)[0]))
    cmap = ColumnMap(lat="lat", lon="lon", time="time")
    df = to_canonical(raw, cmap, jloc, default_uid=stem(src.name))
    df["kind"] = df["kind"].astype(str)
    df = finalize(df, src.name, report, jloc)
    if progress is not None:
        progress("times", n, n)
    return df
