"""Shared handling of delimited text: emptiness and UTF-8 checks, separator sniffing, parsing.

Parsing uses pandas with the multithreaded pyarrow engine for large inputs (the C engine for
small ones, where thread start-up dominates). If the fast parse fails (a stray non-numeric value,
a ragged row, whitespace-only lines) the text is parsed again with the C engine as all-strings, so
the caller can locate the offending row exactly; only that error path costs more.
"""

from __future__ import annotations

import csv
import io
import re

import pandas as pd

from ..errors import TrajectoryFormatError
from ..times import missing_text_as_nan
from .locate import Locator

BOM = b"\xef\xbb\xbf"
SEPARATORS = (",", ";", "\t", "|")
_PYARROW_MIN_BYTES = 1 << 20
_C_LINE = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


def check_text(data: bytes, loc: Locator) -> bytes:
    """``data`` without a UTF-8 BOM; raise if it is empty or not valid UTF-8 (naming the line)."""
    if not data[:4096].strip() and not data.strip():
        raise loc.error("file is empty")
    data = data.removeprefix(BOM)
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
            byte = data[exc.start : exc.start + 1].hex()
            raise TrajectoryFormatError(
                f"not valid UTF-8 (byte 0x{byte} at column {col}); save the file as UTF-8",
                source=loc.name,
                line=line,
            ) from None
    return data


def head_lines(data: bytes, n: int = 20, skip: int = 0) -> list[str]:
    """Up to ``n`` non-blank lines (decoded) from the start of ``data``, after ``skip`` lines."""
    lines = data[: 1 << 16].splitlines()[skip:]
    return [ln.decode("utf-8", "replace") for ln in lines if ln.strip()][:n]


def sniff_separator(lines: list[str]) -> str:
    """The separator among , ; TAB | splitting the header most often, consistently (else ``,``)."""
    best, best_count = ",", 0
    for sep in SEPARATORS:
        counts = [ln.count(sep) for ln in lines]
        if not counts or counts[0] == 0:
            continue
        consistent = sum(c == counts[0] for c in counts) >= max(1, len(counts) // 2)
        if consistent and counts[0] > best_count:
            best, best_count = sep, counts[0]
    return best


def split_header(line: str, sep: str) -> list[str]:
    """Field names of a header line (quotes honoured)."""
    return next(csv.reader([line], delimiter=sep), [])


def read_delimited(data: bytes, loc: Locator, **kwargs) -> pd.DataFrame:
    """Parse delimited text with pandas; on a fast-path failure retry as strings (C engine).

    Only empty fields are missing values (``NA``, ``null`` stay text). A malformed row raises a
    TrajectoryFormatError naming its line.
    """
    kwargs.setdefault("na_values", [""])
    kwargs.setdefault("keep_default_na", False)
    engine = "pyarrow" if len(data) >= _PYARROW_MIN_BYTES else "c"
    try:
        frame = pd.read_csv(io.BytesIO(data), engine=engine, **kwargs)
    except Exception:
        pass
    else:
        return missing_text_as_nan(frame) if engine == "pyarrow" else frame
    kwargs["dtype"] = str
    try:
        return pd.read_csv(io.BytesIO(data), engine="c", **kwargs)
    except pd.errors.ParserError as exc:
        m = _C_LINE.search(str(exc))
        if m:
            raise TrajectoryFormatError(
                f"expected {m.group(1)} fields, found {m.group(3)}",
                source=loc.name,
                line=int(m.group(2)),
            ) from None
        raise loc.error(f"cannot parse as delimited text ({_short(exc)})") from None
    except (ValueError, pd.errors.EmptyDataError) as exc:
        raise loc.error(f"cannot parse as delimited text ({_short(exc)})") from None


def _short(exc: Exception, limit: int = 120) -> str:
    msg = " ".join(str(exc).split())
    return msg if len(msg) <= limit else msg[: limit - 1] + "…"
