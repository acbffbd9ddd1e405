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


class _JsonLocator(Locator):
    """Rows of a JSON file are reported by their JSON path, e.g. ``locations[16]``."""

    def __init__(self, name: str, paths: list[str]):
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


class _Points:
    """Column lists of the points read so far, with each point's JSON path."""

    def __init__(self) -> None:
        self.cols: dict[str, list[Any]] = {k: [] for k in ("lat", "lon", "time", "kind")}
        self.extra: dict[str, list[Any]] = {}
        self.paths: list[str] = []

    def add(self, lat: Any, lon: Any, time: Any, kind: str, path: str, **extra: Any) -> None:
        n = len(self.paths)
        for col, value in (("lat", lat), ("lon", lon), ("time", time), ("kind", kind)):
            self.cols[col].append(value)
        for key, value in extra.items():
            self.extra.setdefault(key, [None] * n).append(value)
        for values in self.extra.values():
            if len(values) == n:
                values.append(None)
        self.paths.append(path)

    def frame(self) -> pd.DataFrame:
        data = {k: pd.Series(v, dtype=object) for k, v in self.cols.items()}
        for key, values in self.extra.items():
            data[key] = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce")
        return pd.DataFrame(data)


def _records(doc: dict, name: str, out: _Points) -> None:
    locations = doc["locations"]
    if not isinstance(locations, list):
        raise TrajectoryFormatError("'locations' is not a list", source=name)
    for i, rec in enumerate(locations):
        path = f"locations[{i}]"
        if not isinstance(rec, dict):
            raise TrajectoryFormatError("entry is not an object", source=f"{name} {path}")
        lat, lon = rec.get("latitudeE7"), rec.get("longitudeE7")
        for key, value in (("latitudeE7", lat), ("longitudeE7", lon)):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                what = "missing" if value is None else f"not a number ({value!r})"
                raise TrajectoryFormatError(f"{key} {what}", source=f"{name} {path}")
        time = rec.get("timestamp")
        if time is None and rec.get("timestampMs") is not None:
            try:
                time = pd.Timestamp(int(rec["timestampMs"]), unit="ms", tz="UTC").isoformat()
            except (TypeError, ValueError, OverflowError):
                raise TrajectoryFormatError(
                    f"timestampMs {rec['timestampMs']!r} is not epoch milliseconds",
                    source=f"{name} {path}",
                ) from None
        out.add(
            lat,
            lon,
            time,
            "record",
            path,
            accuracy=rec.get("accuracy"),
            altitude=rec.get("altitude"),
        )
    if out.paths:
        lat = np.asarray(out.cols["lat"], dtype=np.float64)
        lon = np.asarray(out.cols["lon"], dtype=np.float64)
        lat = np.where(lat >= _INT32, lat - 2 * _INT32, lat) * _E7
        lon = np.where(lon >= _INT32, lon - 2 * _INT32, lon) * _E7
        out.cols["lat"], out.cols["lon"] = list(lat), list(lon)


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


def _timeline(doc: Any, name: str, out: _Points) -> None:
    signals: list[Any]
    if isinstance(doc, list):
        segments, prefix, signals = doc, "", []
    else:
        segments, prefix = doc.get("semanticSegments") or [], "semanticSegments"
        signals = doc.get("rawSignals") or []
    for i, seg in enumerate(segments):
        if isinstance(seg, dict):
            _segment_points(seg, i, name, out, prefix)
    for i, sig in enumerate(signals):
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


def read_takeout_source(src: Source, report: list[str]) -> pd.DataFrame:
    """Read one Google location-history JSON file into the canonical frame."""
    loc = Locator(src.name)
    data = check_text(src.read(), loc)
    try:
        doc = json.loads(data)
    except json.JSONDecodeError as exc:
        raise TrajectoryFormatError(
            f"malformed JSON ({exc.msg})", source=src.name, line=exc.lineno
        ) from None
    out = _Points()
    if isinstance(doc, dict) and "locations" in doc:
        _records(doc, src.name, out)
    elif isinstance(doc, list) or (
        isinstance(doc, dict) and ("semanticSegments" in doc or "rawSignals" in doc)
    ):
        _timeline(doc, src.name, out)
    else:
        keys = ", ".join(list(doc)[:8]) if isinstance(doc, dict) else type(doc).__name__
        raise loc.error(
            "not a Google location history (expected 'locations' as in Records.json, or "
            f"'semanticSegments'/'rawSignals' as in Timeline.json); found: {keys or 'nothing'}"
        )
    if not out.paths:
        raise loc.error("no location points in this location history")
    raw = out.frame()
    jloc = _JsonLocator(src.name, out.paths)
    missing = raw["time"].isna().to_numpy()
    if missing.any():
        raise jloc.error("point without a time", int(np.flatnonzero(missing)[0]))
    cmap = ColumnMap(lat="lat", lon="lon", time="time")
    df = to_canonical(raw, cmap, jloc, default_uid=stem(src.name))
    df["kind"] = df["kind"].astype(str)
    return finalize(df, src.name, report, jloc)
