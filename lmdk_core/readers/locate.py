"""Where a data row came from: 1-based line numbers (text formats) or row numbers (Parquet).

Line numbers are computed only when a message needs them (errors, warnings), vectorised over the
raw bytes: a "line" is what a text editor shows, and whitespace-only lines are skipped exactly as
the pandas parsers skip them, so data row ``i`` is the ``i``-th non-blank line after the header.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import TrajectoryFormatError

_WHITESPACE = np.array([9, 10, 11, 12, 13, 32], dtype=np.uint8)


def nonblank_line_numbers(data: bytes, skip_lines: int = 0) -> np.ndarray:
    """1-based numbers of the non-blank lines of ``data``, ignoring its first ``skip_lines``."""
    buf = np.frombuffer(data, dtype=np.uint8)
    newlines = np.flatnonzero(buf == 10)
    starts = np.r_[0, newlines + 1]
    ends = np.r_[newlines, buf.size]
    content = np.r_[0, np.cumsum(~np.isin(buf, _WHITESPACE), dtype=np.int64)]
    nonblank = content[ends] - content[starts] > 0
    nonblank[:skip_lines] = False
    return np.flatnonzero(nonblank) + 1


class Locator:
    """Turns a 0-based data-row index into ``"line N"`` / ``"row N"`` and builds errors.

    ``lines`` is a callable returning, for every data row, its 1-based line number (evaluated
    lazily, once); without it rows are reported as 1-based ``row N`` (tabular binary formats).
    """

    def __init__(self, name: str, lines: Callable[[], np.ndarray] | None = None):
        self.name = name
        self._lines_fn = lines
        self._lines: np.ndarray | None = None

    @classmethod
    def for_text(
        cls, name: str, data: bytes, *, skip_lines: int = 0, header_lines: int = 1
    ) -> Locator:
        """Locator for delimited text: ``skip_lines`` raw lines, then ``header_lines`` non-blank."""
        return cls(name, lambda: nonblank_line_numbers(data, skip_lines)[header_lines:])

    def line(self, row: int) -> int | None:
        """1-based line of data row ``row`` (None for row-numbered formats)."""
        if self._lines_fn is None:
            return None
        if self._lines is None:
            self._lines = self._lines_fn()
        if 0 <= row < self._lines.size:
            return int(self._lines[row])
        return None

    def where(self, row: int) -> str:
        """``"line N"`` or ``"row N"`` for data row ``row`` (0-based)."""
        line = self.line(row)
        return f"line {line}" if line is not None else f"row {row + 1}"

    def source(self, row: int | None = None) -> str:
        """Display name of the file holding data row ``row``."""
        return self.name

    def error(self, reason: str, row: int | None = None) -> TrajectoryFormatError:
        """A :class:`TrajectoryFormatError` naming the file, the line (or row) and the reason."""
        if row is None:
            return TrajectoryFormatError(reason, source=self.name)
        source = self.source(row)
        line = self.line(row)
        if line is not None:
            return TrajectoryFormatError(reason, source=source, line=line)
        err = TrajectoryFormatError(reason, source=source)
        err.row = row + 1
        err.args = (f"{source} row {row + 1}: {reason}",)
        return err


class BatchLocator(Locator):
    """Locator for rows concatenated from several files: each row knows its file and line."""

    def __init__(
        self, name: str, sources: list[str], file_of_row: np.ndarray, line_of_row: np.ndarray
    ):
        super().__init__(name, lambda: line_of_row)
        self._sources = sources
        self._file_of_row = file_of_row

    def source(self, row: int | None = None) -> str:
        return self.name if row is None else self._sources[int(self._file_of_row[row])]

    def where(self, row: int) -> str:
        return f"{self.source(row)} {super().where(row)}"
