"""Read trajectories (CSV, GeoLife ``.plt``, T-Drive ``.txt``, GPX, Parquet, Google location
history JSON; also inside zip archives) as one frame.

``read_trajectories(source)`` returns columns ``uid`` (str), ``time`` (datetime64[ns, UTC]),
``lat``, ``lon`` (float64, degrees), then every extra input column, sorted by ``(uid, time)`` with a
fresh RangeIndex.

Decisions (what is an error, what is a warning):

* **Errors** (:class:`~lmdk_core.errors.TrajectoryFormatError`, message ``<file> line N: <reason>``;
  Parquet says ``row N``; lines count the header, as an editor shows them): unknown format; empty
  file or a file with no data rows; bytes that are not UTF-8; a malformed row (wrong field count,
  malformed XML); missing latitude/longitude/time columns (the message lists the columns found);
  a missing, empty, non-numeric or infinite coordinate; latitude outside [-90, 90] or longitude
  outside [-180, 180]; a missing or unparseable time, or one outside 1677..2262; a missing user id
  in a user-id column; a GPX without track-point times; input larger than ``max_bytes``. Bad rows
  are never skipped: the file is refused and the first bad row named (with how many more exist),
  because silently analysing a different trajectory than the user uploaded is worse than failing.
* **Repaired, with a** :class:`~lmdk_core.errors.DataWarning`: repeated timestamps for one user
  (the first row in file order is kept; the warning gives the count and the first dropped line;
  across the files of a directory, the file read first wins: single files in path order, then
  GeoLife and T-Drive files, which are parsed together);
  in a directory, files of unsupported formats and empty files are skipped and listed.
* **Silent, by design**: unsorted input is sorted (stable, nothing lost); naive times are taken as
  UTC; numeric times are epoch seconds (milliseconds if every value is >= 1e11); hidden files in a
  directory (names starting with ``.``) are ignored.

Other conventions: a file without a user-id column is one user whose id is the file stem
(``trip.csv`` -> ``trip``; an unnamed upload, shown as ``<upload>``, -> ``upload``); only empty
fields count as missing (``NA`` is text); gzip input is recognised by its magic bytes
(``trip.csv.gz``); ``max_bytes`` counts every file of a directory.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any

import pandas as pd

from ..errors import DataWarning, TrajectoryFormatError
from .canonical import CANONICAL, finalize
from .csv import read_csv_source
from .detect import FORMATS, detect_format, extension_format, normalise_format
from .geolife import read_geolife_batch, read_geolife_source
from .gpx import read_gpx_source
from .parquet import read_parquet_source
from .source import Source, resolve
from .takeout import read_takeout_source
from .tdrive import read_tdrive_batch, read_tdrive_source

READERS = {
    "csv": read_csv_source,
    "geolife": read_geolife_source,
    "tdrive": read_tdrive_source,
    "gpx": read_gpx_source,
    "parquet": read_parquet_source,
    "takeout": read_takeout_source,
}
BATCH_READERS = {"geolife": read_geolife_batch, "tdrive": read_tdrive_batch}
"""Directory readers for formats that come as thousands of small files (one parse per directory)."""
_SUPPORTED = (".csv/.tsv/.txt (optionally .gz), .plt (GeoLife), .txt (T-Drive), .gpx, .parquet, "
              ".json (Google location history), or a .zip of these")

__all__ = ["FORMATS", "read_trajectories"]


def _list(names: list[str], limit: int = 5) -> str:
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _is_blank(src: Source) -> bool:
    return not src.head(4096).strip() and not src.read().strip()


def read_trajectories(
    source: Any, format: str = "auto", *, max_bytes: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> pd.DataFrame:
    """Load trajectories from a file path, a directory (recursively), a zip archive (read like a
    directory, see :mod:`lmdk_core.readers.source` for its safety limits) or an open/uploaded file.

    ``format``: ``"auto"`` (by extension, then content) or one of :data:`FORMATS` (aliases ``plt``,
    ``t-drive``); on a directory it keeps only files of that format. ``max_bytes`` bounds the
    input size (a directory's total; decompressed size for gzip). ``progress(stage, done,
    total)``: told the bytes read while a large CSV file streams in (see :mod:`.csv`), and the
stages and entries of a Google location history (see :mod:`.takeout`). Raises
    TrajectoryFormatError; warns DataWarning for every repair (see the module docstring).
    """
    fmt = normalise_format(format)
    name, sources, is_dir = resolve(source, max_bytes)
    report: list[str] = []
    frames: list[pd.DataFrame] = []
    skipped: list[str] = []
    empty: list[str] = []
    batches: dict[str, list[Source]] = {}
    for src in sources:
        if is_dir:
            if any(part.startswith(".") for part in PurePosixPath(src.name).parts):
                continue
            if extension_format(src.name) is not None and _is_blank(src):
                empty.append(src.name)
                continue
            found = detect_format(src, in_directory=True)
            if found is None or (fmt != "auto" and found != fmt):
                skipped.append(src.name)
                continue
            if found in BATCH_READERS:
                batches.setdefault(found, []).append(src)
                continue
        else:
            if _is_blank(src):
                raise TrajectoryFormatError("file is empty", source=src.name)
            found = detect_format(src) if fmt == "auto" else fmt
            if found is None:
                raise TrajectoryFormatError(
                    f"unknown format (supported: {_SUPPORTED})", source=src.name
                )
        if found == "csv":
            frames.append(read_csv_source(src, report, progress=progress))
        elif found == "takeout":
            frames.append(read_takeout_source(src, report, progress=progress))
        else:
            frames.append(READERS[found](src, report))
    for found, group in batches.items():
        df = BATCH_READERS[found](group, report, name) if len(group) > 1 else None
        frames.extend([df] if df is not None else [READERS[found](src, report) for src in group])
    if is_dir:
        if skipped:
            report.insert(
                0,
                f"{name}: skipped {len(skipped)} file(s) not in a supported format: "
                f"{_list(skipped)}",
            )
        if empty:
            report.insert(0, f"{name}: skipped {len(empty)} empty file(s): {_list(empty)}")
        if not frames:
            seen = f"skipped: {_list(empty + skipped)}; " if empty or skipped else ""
            raise TrajectoryFormatError(
                f"no trajectory files found ({seen}supported: {_SUPPORTED})", source=name
            )
    if len(frames) == 1:
        df = frames[0]
    else:
        df = pd.concat(frames, ignore_index=True, sort=False)
        extras = [c for c in df.columns if c not in CANONICAL]
        df = finalize(df[[*CANONICAL, *extras]], f"{name} (across files)", report)
    for msg in report:
        warnings.warn(msg, DataWarning, stacklevel=2)
    return df
