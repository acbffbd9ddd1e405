"""GeoLife ``.plt`` files: 6 header lines, then ``lat,lon,0,altitude_ft,days,date,time`` per point.

``days`` (days since 1899-12-30) duplicates date + time and the third field is always 0, so both
are dropped; ``altitude_ft`` (feet, -777 = unknown) is kept as an extra column. The user id is the
folder name in the data set's ``Data/<user>/Trajectory/<file>.plt`` layout, else the file stem.
"""

from __future__ import annotations

from pathlib import PurePosixPath

import pandas as pd

from .batch import read_text_batch
from .canonical import ColumnMap, finalize, to_canonical
from .locate import Locator
from .source import Source, stem
from .text import check_text, read_delimited

HEADER_LINES = 6
PLT_COLUMNS = ["lat", "lon", "zero", "altitude_ft", "days", "date", "time"]
_READ = dict(sep=",", header=None, names=PLT_COLUMNS,
             dtype={"lat": "float64", "lon": "float64", "date": str, "time": str})
_WHAT = f"a GeoLife .plt has {HEADER_LINES} header lines, then points"


def geolife_uid(src: Source) -> str:
    """``<user>`` from ``.../<user>/Trajectory/<file>.plt`` (shown or real path), else the stem."""
    for parts in (PurePosixPath(src.name).parts, src.path.resolve().parts if src.path else ()):
        if len(parts) >= 3 and parts[-2].lower() == "trajectory":
            return parts[-3]
    return stem(src.name)


def read_geolife_source(src: Source, report: list[str]) -> pd.DataFrame:
    """Read one GeoLife ``.plt`` file into the canonical frame."""
    loc = Locator(src.name)
    data = check_text(src.read(), loc)
    n_lines = data.count(b"\n") + (not data.endswith(b"\n"))
    if n_lines <= HEADER_LINES:
        raise loc.error(f"no data rows ({_WHAT})")
    raw = read_delimited(data, loc, skiprows=HEADER_LINES, **_READ)
    raw = raw.drop(columns=["zero", "days"])
    loc = Locator.for_text(src.name, data, skip_lines=HEADER_LINES, header_lines=0)
    cmap = ColumnMap(lat="lat", lon="lon", time="time", date="date")
    df = to_canonical(raw, cmap, loc, default_uid=geolife_uid(src))
    return finalize(df, src.name, report, loc)


def read_geolife_batch(srcs: list[Source], report: list[str], name: str) -> pd.DataFrame | None:
    """Read many ``.plt`` files in one parse (None: fall back to file by file)."""
    cmap = ColumnMap(lat="lat", lon="lon", time="time", date="date", uid="uid")
    return read_text_batch(srcs, report, name=name, skip_lines=HEADER_LINES, what=_WHAT, cmap=cmap,
                           uid_of=geolife_uid, drop=("zero", "days"), **_READ)
