"""Delimited text with a header row (CSV, TSV, ``;`` or ``|`` separated; optionally gzipped).

Columns are recognised case-insensitively (see :mod:`.canonical`); the separator is sniffed from the
first lines. The user-id and coordinate columns are parsed with fixed types (ids stay text, so
``007`` keeps its zeros); time is inferred (ISO 8601 text, epoch seconds, or date + time columns).

A plain (not gzipped) file on disk of at least :data:`STREAM_MIN_BYTES` is parsed column-wise by
Arrow straight from the file, :data:`STREAM_BLOCK_BYTES` at a time (the bytes are never held
whole; ``progress(stage, done, total)`` is told the bytes read), with the same options as the
in-memory path, whose pyarrow engine parses files of that size too. Anything that path would
refuse or treat specially (a parse failure, a line longer than a block, a BOM, repeated column
names, ``max_bytes``) falls back to the in-memory path, so errors and warnings are unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from ..times import arrow_table_to_frame
from .canonical import finalize, map_columns, to_canonical
from .locate import Locator, nonblank_line_numbers
from .source import GZIP_MAGIC, Source, stem
from .text import (
    _PYARROW_MIN_BYTES,
    BOM,
    check_text,
    head_lines,
    read_delimited,
    sniff_separator,
    split_header,
)

STREAM_MIN_BYTES = _PYARROW_MIN_BYTES
"""Files from this size on are read by the streaming Arrow path."""
STREAM_BLOCK_BYTES = 1 << 22
"""Bytes parsed per block by the streaming path (a line longer than this falls back)."""


def _dtypes(cmap: Any) -> dict[str, Any]:
    dtype: dict[str, Any] = {cmap.lat: "float64", cmap.lon: "float64"}
    for col in (cmap.uid, cmap.date):
        if col is not None:
            dtype[col] = str
    if cmap.date is not None:
        dtype[cmap.time] = str
    return dtype


def read_csv_source(src: Source, report: list[str],
                    progress: Callable[[str, int, int], None] | None = None) -> pd.DataFrame:
    """Read one delimited-text source into the canonical frame (uid defaults to the file stem)."""
    streamed = _read_streaming(src, progress)
    if streamed is not None:
        raw, cmap, loc = streamed
    else:
        loc = Locator(src.name)
        data = check_text(src.read(), loc)
        lines = head_lines(data)
        sep = sniff_separator(lines)
        header = split_header(lines[0], sep)
        cmap = map_columns(header, loc)
        raw = read_delimited(data, loc, sep=sep, dtype=_dtypes(cmap))
        cmap = map_columns(raw.columns, loc)  # the parser's own column names are authoritative
        loc = Locator.for_text(src.name, data, header_lines=1)
    df = to_canonical(raw, cmap, loc, default_uid=stem(src.name))
    return finalize(df, src.name, report, loc)


def _read_streaming(src: Source, progress: Callable[[str, int, int], None] | None
                    ) -> tuple[pd.DataFrame, Any, Locator] | None:
    """(raw frame, column map, locator) parsed by Arrow block by block; None: use the
    in-memory path (see the module docstring)."""
    if src.path is None or src.raw is not None or src.member is not None:
        return None
    try:
        size = src.size
        if size < STREAM_MIN_BYTES or (src.max_bytes is not None and size > src.max_bytes):
            return None
        with open(src.path, "rb") as fh:
            head = fh.read(1 << 16)
        if head[:2] == GZIP_MAGIC or head.startswith(BOM) or not head.strip():
            return None
        lines = head_lines(head)
        sep = sniff_separator(lines)
        header = split_header(lines[0], sep)
        if len(set(header)) != len(header):
            return None  # pandas renames repeated columns; the in-memory path does that
        cmap = map_columns(header, Locator(src.name))
        raw = _arrow_blocks(src, sep, cmap, size, progress)
    except Exception:  # any refusal: the in-memory path names the exact problem
        return None
    path = src.path

    def lines_of_rows() -> Any:
        return nonblank_line_numbers(check_text(path.read_bytes(), Locator(src.name)))[1:]

    return raw, map_columns(raw.columns, Locator(src.name)), Locator(src.name, lines_of_rows)


def _arrow_blocks(src: Source, sep: str, cmap: Any, size: int,
                  progress: Callable[[str, int, int], None] | None) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.csv as pcsv

    types = {c: (pa.float64() if t == "float64" else pa.string())
             for c, t in _dtypes(cmap).items()}
    batches = []
    with pa.OSFile(str(src.path), "rb") as fh:
        reader = pcsv.open_csv(
            fh,
            read_options=pcsv.ReadOptions(block_size=STREAM_BLOCK_BYTES),
            parse_options=pcsv.ParseOptions(delimiter=sep),
            convert_options=pcsv.ConvertOptions(column_types=types, null_values=[""],
                                                strings_can_be_null=True))
        if progress is not None:
            progress("reading", 0, size)
        for batch in reader:  # a batch per block of about STREAM_BLOCK_BYTES
            batches.append(batch)
            if progress is not None and len(batches) * STREAM_BLOCK_BYTES < size:
                progress("reading", len(batches) * STREAM_BLOCK_BYTES, size)
        table = pa.Table.from_batches(batches, schema=reader.schema)
    del batches
    if progress is not None:
        progress("reading", size, size)
    frame = arrow_table_to_frame(table)
    del table
    pa.default_memory_pool().release_unused()  # give the parse buffers back to the system
    return frame
