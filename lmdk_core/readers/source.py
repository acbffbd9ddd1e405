"""Input sources: a path, a directory, or an open/uploaded file, turned into named byte sources.

Guarantees: every source has a display name used in messages (the file name, or the path inside
the given directory or zip archive); gzip input (by magic bytes) is decompressed transparently;
``max_bytes`` bounds both the bytes read and the decompressed size, so an oversized upload fails
early with a clear error instead of exhausting memory.

A zip archive (recognised by its magic bytes, whatever its name) is read like a directory: its
members become sources named ``<archive>/<member path>``, so a GeoLife ``Data/<user>/Trajectory``
tree keeps its user folders. Members are decompressed in memory, one at a time, only when read;
nothing is written to disk. An archive is refused with a clear error when it has more than
``ZIP_MAX_MEMBERS`` files, a member path that is absolute or climbs out with ``..``, encrypted
members, a member whose declared size exceeds the budget or whose compression ratio exceeds
``ZIP_MAX_RATIO`` (a zip bomb), or more decompressed bytes than it declares.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ParameterError, TrajectoryFormatError

GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGIC = b"PK\x03\x04"
ZIP_MAX_MEMBERS = 100_000
"""Most files read from one zip archive (the whole GeoLife data set has 18,670)."""
ZIP_MAX_BYTES = 4 * 1024**3
"""Decompressed bytes read from one zip archive when no ``max_bytes`` is given (4 GiB)."""
ZIP_MAX_RATIO = 250
"""Largest decompressed/compressed size ratio of a member over 1 MiB (GPS text: about 5–15)."""
GZIP_MAX_BYTES = ZIP_MAX_BYTES
"""Decompressed bytes read from one gzip stream when no ``max_bytes`` is given (4 GiB)."""
GZIP_MAX_RATIO = 100
"""Largest expansion of a gzip stream past 1 MiB (GPS text compresses 5–15-fold; a bomb, 1000+)."""
GZIP_CHUNK = 1024**2
"""gzip input is decompressed in chunks of this many bytes, each checked against the limits."""


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
    member: tuple[zipfile.ZipFile, zipfile.ZipInfo] | None = field(default=None, repr=False)
    _data: bytes | None = field(default=None, repr=False)

    def _file(self) -> Path:
        """The filesystem path of a source that is not in memory."""
        if self.path is None:
            raise ValueError(f"source {self.name!r} has neither bytes nor a path")
        return self.path

    @property
    def size(self) -> int:
        """Size in bytes as stored (before decompression)."""
        if self.member is not None:
            return self.member[1].compress_size
        return self._file().stat().st_size if self.raw is None else len(self.raw)

    def head(self, n: int = 4096) -> bytes:
        """The first ``n`` bytes after decompression (cheap: reads only the start of a file)."""
        if self._data is not None:
            return self._data[:n]
        if self.member is not None:
            return self.read()[:n]
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
            raw = self.raw if self.member is None else _unzip_member(self.name, *self.member)
            if raw is None:
                if self.max_bytes is not None and self.size > self.max_bytes:
                    raise _too_large(self.name, self.size, self.max_bytes)
                raw = self._file().read_bytes()
            if raw[:2] == GZIP_MAGIC:
                raw = self._gunzip(raw)
            self._data = raw
        return self._data

    def _gunzip(self, raw: bytes) -> bytes:
        """Decompress in :data:`GZIP_CHUNK` pieces, refusing as soon as the output passes
        ``max_bytes`` (or :data:`GZIP_MAX_BYTES`), or passes 1 MiB while expanding more than
        :data:`GZIP_MAX_RATIO`-fold: a 3 MiB gzip bomb is refused after at most 300 MiB, in
        about a second, instead of being read whole."""
        limit = GZIP_MAX_BYTES if self.max_bytes is None else self.max_bytes
        ratio_cap = max(len(raw), 1) * GZIP_MAX_RATIO
        chunks: list[bytes] = []
        total = 0
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as fh:
                while chunk := fh.read(GZIP_CHUNK):
                    total += len(chunk)
                    if total > limit:
                        shown = f"more than {limit:,} (decompressed)"
                        raise _too_large(self.name, shown, limit)
                    if total > 1024**2 and total > ratio_cap:
                        raise TrajectoryFormatError(
                            f"gzip data would expand more than {GZIP_MAX_RATIO}-fold "
                            f"({len(raw):,} bytes to over {total:,}): refused as a possible "
                            "gzip bomb", source=self.name)
                    chunks.append(chunk)
        except (OSError, EOFError, zlib.error) as exc:
            raise TrajectoryFormatError(f"corrupt gzip data ({exc})", source=self.name) from None
        return b"".join(chunks)


def _member_path(info: zipfile.ZipInfo) -> str:
    """Member path with ``/`` separators (some Windows tools store backslashes)."""
    return info.filename.replace("\\", "/")


def _unzip_member(name: str, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """The member's bytes; refuses more than its declared size (a forged header) or a bad CRC."""
    try:
        with archive.open(info) as fh:
            data = fh.read(info.file_size + 1)
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, NotImplementedError) as exc:
        raise TrajectoryFormatError(f"corrupt zip member ({exc})", source=name) from None
    if len(data) > info.file_size:
        raise TrajectoryFormatError(
            "zip member decompresses to more bytes than its header declares", source=name
        )
    return data


def _zip_sources(name: str, archive: zipfile.ZipFile, max_bytes: int | None) -> list[Source]:
    """One Source per file of ``archive``, after the safety checks of the module docstring."""
    infos = [i for i in archive.infolist() if not i.is_dir()]
    if len(infos) > ZIP_MAX_MEMBERS:
        raise TrajectoryFormatError(
            f"zip archive has {len(infos):,} files, over the limit of {ZIP_MAX_MEMBERS:,}",
            source=name,
        )
    budget = ZIP_MAX_BYTES if max_bytes is None else max_bytes
    total = 0
    for info in infos:
        member = _member_path(info)
        if member.startswith("/") or ".." in member.split("/") or ":" in member.split("/")[0]:
            raise TrajectoryFormatError(f"unsafe path in zip archive: {info.filename!r}",
                                        source=name)
        if info.flag_bits & 0x1:
            raise TrajectoryFormatError(f"{member} is encrypted; unzip it first", source=name)
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > 1024**2 and ratio > ZIP_MAX_RATIO:
            raise TrajectoryFormatError(
                f"{member} would expand {ratio:,.0f}-fold (limit {ZIP_MAX_RATIO}): "
                "refused as a possible zip bomb",
                source=name,
            )
        total += info.file_size
        if total > budget:
            raise _too_large(name, f"more than {budget:,} (decompressed)", budget)
    # a gzip member is bounded like any upload: by the archive's budget
    return [Source(f"{name}/{_member_path(i)}", max_bytes=budget, member=(archive, i))
            for i in sorted(infos, key=_member_path)]


def _open_zip(name: str, source: bytes | Path) -> zipfile.ZipFile:
    """Open an archive from its bytes or its path; a damaged one is a TrajectoryFormatError."""
    try:
        return zipfile.ZipFile(io.BytesIO(source) if isinstance(source, bytes) else source)
    except (zipfile.BadZipFile, OSError) as exc:
        raise TrajectoryFormatError(f"corrupt zip archive ({exc})", source=name) from None


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
        if data[:4] == ZIP_MAGIC:
            return name, _zip_sources(name, _open_zip(name, data), max_bytes), True
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
    with open(path, "rb") as fh:
        is_zip = fh.read(4) == ZIP_MAGIC
    if is_zip:
        if max_bytes is not None and path.stat().st_size > max_bytes:
            raise _too_large(path.name, path.stat().st_size, max_bytes)
        return path.name, _zip_sources(path.name, _open_zip(path.name, path), max_bytes), True
    return path.name, [Source(path.name, path=path, max_bytes=max_bytes)], False
