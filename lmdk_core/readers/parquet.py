"""Parquet files: the same column recognition and validation as CSV; problems are reported by row.

Row numbers are 1-based data rows (there are no text lines). Datetime columns are used as they are
(naive ones taken as UTC); numeric time columns are epoch seconds.
"""

from __future__ import annotations

import io

import pandas as pd

from ..times import missing_text_as_nan
from .canonical import finalize, map_columns, to_canonical
from .locate import Locator
from .source import Source, stem


def read_parquet_source(src: Source, report: list[str]) -> pd.DataFrame:
    """Read one Parquet source into the canonical frame."""
    loc = Locator(src.name)
    data = src.read()
    if not data:
        raise loc.error("file is empty")
    try:
        raw = pd.read_parquet(io.BytesIO(data))
    except Exception as exc:
        msg = " ".join(str(exc).split())[:120]
        raise loc.error(f"not a readable Parquet file ({msg})") from None
    raw = missing_text_as_nan(raw)  # pandas 2 gives None for a missing text field, 3 NaN
    # a named index (e.g. saved after set_index("uid")) is data: turn it back into columns
    raw = raw.reset_index(drop=isinstance(raw.index, pd.RangeIndex))
    cmap = map_columns(raw.columns, loc)
    df = to_canonical(raw, cmap, loc, default_uid=stem(src.name))
    return finalize(df, src.name, report, loc)
