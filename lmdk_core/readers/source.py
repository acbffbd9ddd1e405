"""Input sources: a path, a directory, or an open/uploaded file, turned into named byte sources.

Guarantees: every source has a display name used in messages (the file name, or the path inside
the given directory); gzip input (by magic bytes) is decompressed transparently; ``max_bytes``
bounds both the bytes read and the decompressed size, so an oversized upload fails early with a
clear error instead of exhausting memory.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ParameterError, TrajectoryFormatError

GZIP_MAGIC = b"\x1f\x8b"


def _too_large(name: str, size: int | str, max_bytes: int) -> TrajectoryFormatError:
    shown = f"{size:,}" if isinstance(size, int) else size
    return TrajectoryFormatError(
        f"input is {shown} bytes, over the limit max_bytes={max_bytes:,}", source=name
    )


def inner_name(name: str) -> str:
    """The name without a trailing ``.gz`` (``trip.csv.gz`` -> ``trip.csv``)."""
    return name[:-3] if name.lower().endswith(".gz") else name


def stem(name: str) -> str:
    """Base name without folders, ``.gz`` and format extension (``a/trip.csv.gz`` -> ``trip``)."""
    base = inner_name(Path(name).name).strip("<>")
    return base.rsplit(".", 1)[0] if "." in base.lstrip(".") else base


@dataclass
class Source:
    """One input file: display ``name``, and a filesystem ``path`` or in-memory ``raw`` bytes."""

    name: str
    path: Path | None = None
    raw: bytes | None = None
    max_bytes: int | None = None
    _data: bytes | None = field(default=None, repr=False)

    def _file(self) -> Path:
        """The filesystem path of a source that is not in memory."""
        if self.path is None:
            raise ValueError(f"source {self.name!r} has neither bytes nor a path")
        return self.path

    @property
    def size(self) -> int:
        """Size in bytes as stored (before decompression)."""
        return self._file().stat().st_size if self.raw is None else len(self.raw)

    def head(self, n: int = 4096) -> bytes:
        """The first ``n`` bytes after decompression (cheap: reads only the start of a file)."""
        if self._data is not None:
            return self._data[:n]
        if self.raw is not None:
            start = self.raw[:2]
        else:
            with open(self._file(), "rb") as fh:
                start = fh.read(2)
        if start == GZIP_MAGIC:
            return self.read()[:n]
        if self.raw is not None:
            return self.raw[:n]
        with open(self._file(), "rb") as fh:
            return fh.read(n)

    def read(self) -> bytes:
        """All bytes, decompressed if gzip; raises TrajectoryFormatError over ``max_bytes``."""
        if self._data is None:
            raw = self.raw
            if raw is None:
                if self.max_bytes is not None and self.size > self.max_bytes:
                    raise _too_large(self.name, self.size, self.max_bytes)
                raw = self._file().read_bytes()
            if raw[:2] == GZIP_MAGIC:
                raw = self._gunzip(raw)
            self._data = raw
        return self._data

    def _gunzip(self, raw: bytes) -> bytes:
        limit = -1 if self.max_bytes is None else self.max_bytes + 1
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as fh:
                data = fh.read(limit)
        except (OSError, EOFError, zlib.error) as exc:
            raise TrajectoryFormatError(f"corrupt gzip data ({exc})", source=self.name) from None
        if self.max_bytes is not None and len(data) > self.max_bytes:
            shown = f"more than {self.max_bytes:,} (decompressed)"
            raise _too_large(self.name, shown, self.max_bytes)
        return data


def _read_filelike(obj: Any, max_bytes: int | None) -> tuple[str | None, bytes]:
    name = getattr(obj, "name", None)
    ok = isinstance(name, (str, os.PathLike)) and str(name)
    name = os.path.basename(str(name)) if ok else None
    if hasattr(obj, "seek"):
        with contextlib.suppress(OSError, ValueError):  # unseekable streams are read from here
            obj.seek(0)
    data = obj.read() if max_bytes is None else obj.read(max_bytes + 1)
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ParameterError(f"source.read() returned {type(data).__name__}, expected bytes or str")
    data = bytes(data)
    if max_bytes is not None and len(data) > max_bytes:
        raise _too_large(name or "<upload>", f"more than {max_bytes:,}", max_bytes)
    return name, data


def resolve(source: Any, max_bytes: int | None = None) -> tuple[str, list[Source], bool]:
    """Return ``(display name, sources, is_directory)`` for a path, directory, file-like or bytes.

    Directories are walked recursively in sorted order; hidden files and folders are included in
    the listing (the caller decides what to skip and reports it).
    """
    if max_bytes is not None and (
        isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1
    ):
        raise ParameterError(f"max_bytes must be a positive integer or None, got {max_bytes!r}")
    if isinstance(source, (bytes, bytearray, memoryview)):
        source = io.BytesIO(bytes(source))
    if hasattr(source, "read"):
        name, data = _read_filelike(source, max_bytes)
        name = name or "<upload>"
        return name, [Source(name, raw=data, max_bytes=max_bytes)], False
    if not isinstance(source, (str, os.PathLike)):
        raise ParameterError(
            f"source must be a path, a directory or a file-like object, got {type(source).__name__}"
        )
    path = Path(source)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file())
        if max_bytes is not None:
            total = sum(p.stat().st_size for p in files)
            if total > max_bytes:
                raise _too_large(path.name or str(path), total, max_bytes)
        srcs = [Source(p.relative_to(path).as_posix(), path=p, max_bytes=max_bytes) for p in files]
        return path.name or str(path), srcs, True
    if not path.exists():
        raise TrajectoryFormatError("no such file or directory", source=str(path))
    return path.name, [Source(path.name, path=path, max_bytes=max_bytes)], False
