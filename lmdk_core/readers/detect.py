"""Format detection: by file extension first, then by content for unnamed or unknown inputs.

Recognised formats (names accepted by ``read_trajectories(format=...)``): ``csv``, ``geolife``
(alias ``plt``), ``tdrive`` (alias ``t-drive``), ``gpx``, ``parquet``, ``takeout`` (Google location
history JSON, alias ``json``). A ``.txt`` file is T-Drive
when its first line looks like ``id,YYYY-MM-DD HH:MM:SS,lon,lat``, otherwise delimited text with a
header. Content sniffing recognises Parquet magic bytes, GPX XML, the GeoLife header line, T-Drive
lines, Google location-history JSON, and delimited text whose header names latitude and longitude
columns.
"""

from __future__ import annotations

import re

from ..errors import ParameterError
from .canonical import header_has_coordinates
from .source import Source, inner_name
from .takeout import looks_like_takeout

FORMATS = ("csv", "geolife", "tdrive", "gpx", "parquet", "takeout")
_ALIASES = {"plt": "geolife", "t-drive": "tdrive", "pq": "parquet", "tsv": "csv", "txt": "csv",
            "json": "takeout"}
_EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "csv",
    ".plt": "geolife",
    ".gpx": "gpx",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".parq": "parquet",
    ".json": "takeout",
}
TDRIVE_LINE = re.compile(
    rb"^\s*[^,\s]+\s*,\s*\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}\s*,"
    rb"\s*[-+]?\d+(\.\d*)?\s*,\s*[-+]?\d+(\.\d*)?\s*$"
)


def normalise_format(fmt: str) -> str:
    """Canonical format name for ``fmt`` (``auto`` kept); raises ParameterError if unknown."""
    if not isinstance(fmt, str):
        raise ParameterError(f"format must be a string, got {type(fmt).__name__}")
    key = fmt.strip().lower()
    key = _ALIASES.get(key, key)
    if key != "auto" and key not in FORMATS:
        raise ParameterError(
            f"unknown format {fmt!r}; expected 'auto' or one of {', '.join(FORMATS)}"
        )
    return key


def first_line(head: bytes) -> bytes:
    """First non-blank line of ``head`` (BOM removed), without its line ending."""
    head = head.removeprefix(b"\xef\xbb\xbf")
    for line in head.splitlines():
        if line.strip():
            return line.strip()
    return b""


def extension_format(name: str) -> str | None:
    """Format implied by the extension of ``name`` (``.txt`` -> ``"txt"``: ask content), or None."""
    base = inner_name(name).lower()
    dot = base.rfind(".")
    ext = base[dot:] if dot > 0 else ""
    if ext == ".txt":
        return "txt"
    return _EXTENSIONS.get(ext)


def _looks_like_text(head: bytes) -> bool:
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:  # a multi-byte character cut at the end of the sample is fine
        return exc.start >= len(head) - 3
    return True


def sniff_content(head: bytes) -> str | None:
    """Format recognised from the first bytes of a file (text falls back to ``csv``), or None."""
    if head[:4] == b"PAR1":
        return "parquet"
    line = first_line(head)
    if line.startswith(b"<") and re.search(rb"<([\w.-]+:)?gpx[\s>]", head):
        return "gpx"
    if line.lower().startswith(b"geolife trajectory"):
        return "geolife"
    if TDRIVE_LINE.match(line):
        return "tdrive"
    if looks_like_takeout(head):
        return "takeout"
    return "csv" if _looks_like_text(head) else None


def detect_format(src: Source, *, in_directory: bool = False) -> str | None:
    """Format of ``src`` from its extension, then its content; None when unrecognised.

    In a directory only supported extensions count, and a ``.txt`` must be T-Drive or have a
    header naming latitude and longitude (so GeoLife's ``labels.txt`` is skipped, not an error).
    """
    fmt = extension_format(src.name)
    if fmt == "txt":
        line = first_line(src.head())
        if TDRIVE_LINE.match(line):
            return "tdrive"
        if in_directory:
            return "csv" if header_has_coordinates(line) else None
        return "csv"
    if fmt is not None or in_directory:
        return fmt
    return sniff_content(src.head())
