"""GPX 1.0/1.1 files: every ``<trkpt>`` of every ``<trk>``/``<trkseg>``, with its ``<time>``.

Parsed with :mod:`xml.etree.ElementTree`, matching tags by local name so any namespace (or none)
works. Output extras: ``track`` (the track's ``<name>``, else ``track <k>``, 1-based), ``segment``
(1-based within the track) and ``ele`` (metres, NaN when absent). A GPX whose track points carry no
times is an error: the privacy analysis needs timestamps. Route points and waypoints are not read.
The user id is the file stem (a GPX file is one person's recording).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd

from ..errors import TrajectoryFormatError
from .canonical import ColumnMap, finalize, to_canonical
from .locate import Locator
from .source import Source, stem
from .text import check_text

_TRKPT = re.compile(rb"<([\w.-]+:)?trkpt[\s>/]")


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _children(el: ET.Element, name: str) -> list[ET.Element]:
    return [c for c in el if _local(c.tag) == name]


def _text(el: ET.Element, name: str) -> str | None:
    for c in el:
        if _local(c.tag) == name:
            return (c.text or "").strip() or None
    return None


def _trkpt_lines(data: bytes) -> np.ndarray:
    """1-based line of every ``<trkpt`` start tag, in document order."""
    starts = np.fromiter((m.start() for m in _TRKPT.finditer(data)), dtype=np.int64)
    newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    return np.searchsorted(newlines, starts) + 1


def read_gpx_source(src: Source, report: list[str]) -> pd.DataFrame:
    """Read one GPX file's track points into the canonical frame."""
    loc = Locator(src.name)
    data = check_text(src.read(), loc)
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        line = exc.position[0] if exc.position else None
        reason = str(exc).split(":")[0]
        raise TrajectoryFormatError(
            f"malformed GPX/XML ({reason})", source=src.name, line=line
        ) from None
    if _local(root.tag) != "gpx":
        raise loc.error(f"not a GPX file (root element is <{_local(root.tag)}>, expected <gpx>)")
    cols: dict[str, list] = {k: [] for k in ("lat", "lon", "time", "ele", "track", "segment")}
    for k, trk in enumerate(_children(root, "trk"), start=1):
        track = _text(trk, "name") or f"track {k}"
        for s, seg in enumerate(_children(trk, "trkseg"), start=1):
            for pt in _children(seg, "trkpt"):
                cols["lat"].append(pt.get("lat"))
                cols["lon"].append(pt.get("lon"))
                cols["time"].append(_text(pt, "time"))
                cols["ele"].append(_text(pt, "ele"))
                cols["track"].append(track)
                cols["segment"].append(s)
    if not cols["lat"]:
        raise loc.error("no track points (<trk>/<trkseg>/<trkpt>) found")
    raw = pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in cols.items()})
    loc = Locator(src.name, lambda: _trkpt_lines(data))
    if raw["time"].isna().all():
        raise loc.error("GPX track points have no <time>; timestamps are required", 0)
    raw["ele"] = pd.to_numeric(raw["ele"], errors="coerce")
    raw["track"] = raw["track"].astype(str)
    raw["segment"] = raw["segment"].astype(np.int64)
    cmap = ColumnMap(lat="lat", lon="lon", time="time")
    return finalize(to_canonical(raw, cmap, loc, default_uid=stem(src.name)), src.name, report, loc)
