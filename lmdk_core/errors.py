"""The package's exception and warning hierarchy.

Every error a user can trigger through :mod:`lmdk_core` is a subclass of :class:`LmdkError`,
so applications (the dashboard included) can catch one type and show its message verbatim.
"""

from __future__ import annotations


class LmdkError(Exception):
    """Base class of every error raised by lmdk_core."""


class ParameterError(LmdkError, ValueError):
    """An argument is invalid (ε ≤ 0 or NaN, negative radius, mismatched lengths, ...)."""


class MatrixError(ParameterError):
    """A transition matrix is not square, not row-stochastic, or contains NaN."""


class SourceFormatError(LmdkError, ValueError):
    """An input file cannot be read: the message is ``<source> <unit> <position>: <reason>``."""

    def __init__(self, reason: str, *, source: str | None, position: int | None, unit: str,
                 default_source: str = "<input>"):
        self.reason = reason
        self.source = source
        where = source or default_source
        if position is not None:
            where = f"{where} {unit} {position}"
        super().__init__(f"{where}: {reason}")


class TrajectoryFormatError(SourceFormatError):
    """A trajectory file cannot be read.

    The message names the file, the line (1-based, as a text editor shows it) or row, and the
    reason, e.g. ``trip.csv line 14: latitude 123.4 outside [-90, 90]``.
    """

    row: int | None = None
    """1-based data row, for formats without text lines (Parquet); None otherwise."""

    def __init__(self, reason: str, *, source: str | None = None, line: int | None = None):
        self.line = line
        super().__init__(reason, source=source, position=line, unit="line")


class LmdkWarning(UserWarning):
    """Base class of warnings: something was repaired or dropped, and the user is told how much."""


class DataWarning(LmdkWarning):
    """Input data was altered while loading (e.g. duplicate timestamps dropped)."""


class FigureExportError(LmdkError):
    """A static figure (PNG/SVG/PDF) cannot be written: kaleido or a Chromium/Chrome is missing, or
    the browser failed. The message names what to install; ``.html`` export needs neither."""
