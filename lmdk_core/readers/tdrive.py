"""T-Drive taxi files (``.txt``): no header; one point per line, ``id,YYYY-MM-DD HH:MM:SS,lon,lat``.

Note the order: **longitude before latitude**. Times are Beijing local time in the original data
set but carry no zone; like every naive time here they are read as UTC (documented, not shifted).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .batch import read_text_batch
from .canonical import ColumnMap, finalize, to_canonical
from .locate import Locator
from .source import Source, stem
from .text import check_text, read_delimited

TDRIVE_COLUMNS = ["uid", "time", "lon", "lat"]
_READ: dict[str, Any] = dict(
    sep=",", header=None, names=TDRIVE_COLUMNS,
    dtype={"uid": str, "time": str, "lon": "float64", "lat": "float64"},
)
_CMAP = ColumnMap(lat="lat", lon="lon", time="time", uid="uid")


def read_tdrive_source(src: Source, report: list[str]) -> pd.DataFrame:
    """Read one T-Drive file into the canonical frame."""
    loc = Locator(src.name)
    data = check_text(src.read(), loc)
    raw = read_delimited(data, loc, **_READ)
    loc = Locator.for_text(src.name, data, header_lines=0)
    df = to_canonical(raw, _CMAP, loc, default_uid=stem(src.name))
    return finalize(df, src.name, report, loc)


def read_tdrive_batch(srcs: list[Source], report: list[str], name: str) -> pd.DataFrame | None:
    """Read many T-Drive files in one parse (None: fall back to file by file)."""
    return read_text_batch(srcs, report, name=name, skip_lines=0, what="T-Drive file", cmap=_CMAP,
                           uid_of=None, **_READ)
