"""Delimited text with a header row (CSV, TSV, ``;`` or ``|`` separated; optionally gzipped).

Columns are recognised case-insensitively (see :mod:`.canonical`); the separator is sniffed from the
first lines. The user-id and coordinate columns are parsed with fixed types (ids stay text, so
``007`` keeps its zeros); time is inferred (ISO 8601 text, epoch seconds, or date + time columns).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .canonical import finalize, map_columns, to_canonical
from .locate import Locator
from .source import Source, stem
from .text import check_text, head_lines, read_delimited, sniff_separator, split_header


def read_csv_source(src: Source, report: list[str]) -> pd.DataFrame:
    """Read one delimited-text source into the canonical frame (uid defaults to the file stem)."""
    loc = Locator(src.name)
    data = check_text(src.read(), loc)
    lines = head_lines(data)
    sep = sniff_separator(lines)
    header = split_header(lines[0], sep)
    cmap = map_columns(header, loc)
    dtype: dict[str, Any] = {cmap.lat: "float64", cmap.lon: "float64"}
    for col in (cmap.uid, cmap.date):
        if col is not None:
            dtype[col] = str
    if cmap.date is not None:
        dtype[cmap.time] = str
    raw = read_delimited(data, loc, sep=sep, dtype=dtype)
    cmap = map_columns(raw.columns, loc)  # the parser's own column names are authoritative
    loc = Locator.for_text(src.name, data, header_lines=1)
    df = to_canonical(raw, cmap, loc, default_uid=stem(src.name))
    return finalize(df, src.name, report, loc)
