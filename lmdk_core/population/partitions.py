"""User-disjoint partitions of a population: the units both engines process one at a time.

A *unit* holds every row of each of its users, so the per-user work
(:func:`lmdk_core.population.core.process_partition`) runs on it alone; summing the sparse
counts of all units gives the release of the whole population. Memory is bounded by a unit, time
is linear in the number of points (each unit is sorted on its own).

* A DataFrame is cut into runs of whole users of at most ``max_rows`` rows
  (:func:`frame_units`): users are numbered by a hash (``pandas.factorize``, no global sort) and
  rows are grouped by unit with a stable radix sort of the small unit numbers (or sliced
  directly when the frame is already grouped by user).
* Parquet (:func:`parquet_units`): a file, a directory or any fsspec URL (``file://``,
  ``memory://``, ``s3://``, ``gs://`` …) of Parquet files *partitioned by user* (no user in two
  files, e.g. :func:`~lmdk_core.population.dask_engine.write_partitioned`). Each file is split by
  its row groups: only the footers are read (the uid min/max statistics), and row groups whose
  uid ranges overlap or touch are kept together, so a user whose rows straddle two row groups
  stays in one unit (a file without statistics is one unit). Nothing reads the uid column on the
  driver; the engines check afterwards that no user appeared in two units.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..errors import LmdkError, ParameterError

__all__ = ["COLUMNS", "ParquetUnit", "frame_units", "parquet_units", "read_unit", "units_of",
           "user_codes"]

COLUMNS = ["uid", "time", "lat", "lon"]
MAX_ROWS = 1_000_000
"""Default size of a unit in rows (points): ~150 bytes of work memory per point."""


@dataclass(frozen=True)
class ParquetUnit:
    """Row groups ``row_groups`` of the Parquet file at ``url`` (fsspec URL with protocol)."""

    url: str
    row_groups: tuple[int, ...]
    n_rows: int
    storage_options: dict = field(default_factory=dict, compare=False)


def _is_url_like(data: Any) -> bool:
    return isinstance(data, str) or hasattr(data, "__fspath__")


def user_codes(uid: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(code of each row, ids as text): users numbered 0..k−1 in the order of their ids as text
    (the order of :func:`lmdk_core.trajectory.time_order` on text ids), found by hashing the
    rows (no sort of the rows, no Python string per row); ``text[code]`` is the row's id."""
    codes, uniq = pd.factorize(uid)
    if (codes < 0).any():
        raise ParameterError("population frame has rows without a uid")
    text = np.asarray(pd.Index(uniq).astype(str), dtype=object)
    merged, text = pd.factorize(text, sort=True)  # 1 and "1": one user; ids sorted as text
    return merged[codes], np.asarray(text, dtype=object)


def frame_units(data: pd.DataFrame, max_rows: int = MAX_ROWS) -> list[pd.DataFrame]:
    """User-disjoint pieces of ``data`` of at most ``max_rows`` rows each (a user with more rows
    than that is one piece of its own), in O(n) time."""
    missing = [c for c in COLUMNS if c not in data.columns]
    if missing:
        raise ParameterError(f"population frame is missing column(s) {', '.join(missing)}")
    n = len(data)
    if n <= max_rows:
        return [data]
    codes, _ = user_codes(data["uid"])
    per_user = np.bincount(codes)
    unit_of_user = np.empty(per_user.size, dtype=np.int64)
    n_units, size = 0, 0
    for i, c in enumerate(per_user.tolist()):  # per user, greedy: whole users, <= max_rows
        if size and size + c > max_rows:
            n_units, size = n_units + 1, 0
        unit_of_user[i] = n_units
        size += c
    n_units += 1
    unit = unit_of_user[codes]
    if np.all(unit[1:] >= unit[:-1]):  # grouped by user already: slices, no copy of indices
        bounds = np.r_[0, np.flatnonzero(unit[1:] != unit[:-1]) + 1, n]
        return [data.iloc[a:b] for a, b in itertools.pairwise(bounds)]
    small = unit.astype(np.int16 if n_units < 2**15 else np.int32)
    order = np.argsort(small, kind="stable")  # radix sort for 16-bit keys: linear
    bounds = np.r_[0, np.cumsum(np.bincount(small, minlength=n_units))]
    return [data.take(order[a:b]) for a, b in itertools.pairwise(bounds)]


def _fs(url: Any, storage_options: dict | None) -> tuple[Any, str]:
    try:
        import fsspec
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise LmdkError("reading Parquet partition by partition needs fsspec: pip install "
                        "'lmdk[dask]' (or pass a DataFrame)") from None
    try:
        return fsspec.core.url_to_fs(str(url) if not isinstance(url, str) else url,
                                     **(storage_options or {}))
    except (ImportError, ValueError) as exc:
        raise ParameterError(f"{url}: cannot open this location ({exc})") from None


def _uid_stats(meta: Any, col: int) -> list[tuple[str, str] | None]:
    out: list[tuple[str, str] | None] = []
    for i in range(meta.num_row_groups):
        st = meta.row_group(i).column(col).statistics
        if st is None or not st.has_min_max:
            out.append(None)
        else:
            lo, hi = st.min, st.max
            lo = lo.decode() if isinstance(lo, bytes) else str(lo)
            hi = hi.decode() if isinstance(hi, bytes) else str(hi)
            out.append((lo, hi))
    return out


def _row_group_runs(stats: list[tuple[str, str] | None], rows: list[int], max_rows: int
                    ) -> list[tuple[int, ...]]:
    """Row groups joined when their uid ranges overlap or touch (a user may straddle them),
    then adjacent groups packed up to ``max_rows`` rows."""
    n = len(stats)
    if n == 0:
        return []
    ranges = [s for s in stats if s is not None]
    if len(ranges) < n:
        return [tuple(range(n))]
    order = sorted(range(n), key=lambda i: ranges[i])  # by (min, max)
    comps: list[list[int]] = []
    hi = None
    for i in order:
        lo_i, hi_i = ranges[i]
        if comps and hi is not None and lo_i <= hi:
            comps[-1].append(i)
            hi = max(hi, hi_i)
        else:
            comps.append([i])
            hi = hi_i
    runs: list[list[int]] = []
    size = 0
    for comp in comps:
        c_rows = sum(rows[i] for i in comp)
        if runs and size + c_rows <= max_rows:
            runs[-1].extend(comp)
            size += c_rows
        else:
            runs.append(list(comp))
            size = c_rows
    return [tuple(sorted(r)) for r in runs]


def parquet_units(url: Any, *, storage_options: dict | None = None,
                  max_rows: int = MAX_ROWS) -> list[ParquetUnit]:
    """The units of a Parquet file or directory at ``url`` (footers only; see module doc)."""
    import pyarrow.parquet as pq

    fs, root = _fs(url, storage_options)
    if fs.isdir(root):
        files = sorted(p for p in fs.find(root) if p.endswith(".parquet"))
        if not files:
            raise ParameterError(f"{url}: no .parquet files")
    elif fs.exists(root):
        files = [root]
    else:
        raise ParameterError(f"{url}: no such file or directory")
    units = []
    for f in files:
        with fs.open(f, "rb") as fh:
            meta = pq.ParquetFile(fh).metadata
        names = [meta.schema.column(i).name for i in range(meta.num_columns)]
        missing = [c for c in COLUMNS if c not in names]
        if missing:
            raise ParameterError(f"{f}: missing column(s) {', '.join(missing)}")
        rows = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
        full = fs.unstrip_protocol(f)
        for run in _row_group_runs(_uid_stats(meta, names.index("uid")), rows, max_rows):
            units.append(ParquetUnit(full, run, sum(rows[i] for i in run),
                                     dict(storage_options or {})))
    return units


def read_unit(unit: ParquetUnit, columns: list[str] | None = None) -> pd.DataFrame:
    """The rows of one unit (uid as a categorical: no Python string per row; the other columns
    are Arrow's buffers, read-only, not copied into one consolidated block)."""
    import pyarrow.parquet as pq

    fs, path = _fs(unit.url, unit.storage_options)
    with fs.open(path, "rb") as fh:
        table = pq.ParquetFile(fh, read_dictionary=["uid"]).read_row_groups(
            list(unit.row_groups), columns=columns or COLUMNS)
    return table.to_pandas(split_blocks=True, self_destruct=True)


def units_of(data: Any, *, storage_options: dict | None = None, max_rows: int = MAX_ROWS
             ) -> list[Any]:
    """Units of a DataFrame (pieces of it) or of a Parquet location (:class:`ParquetUnit`)."""
    if isinstance(data, pd.DataFrame):
        return list(frame_units(data, max_rows))
    if _is_url_like(data):
        return parquet_units(data, storage_options=storage_options, max_rows=max_rows)
    raise ParameterError("population data must be a DataFrame or a Parquet file, directory or "
                         f"fsspec URL partitioned by user, got {type(data).__name__}")


def load(unit: Any) -> pd.DataFrame:
    """A unit's rows (a DataFrame piece as it is, a Parquet unit read)."""
    return read_unit(unit) if isinstance(unit, ParquetUnit) else unit


def iter_frames(units: list[Any]) -> Iterator[pd.DataFrame]:
    """The units' rows, one unit at a time."""
    for u in units:
        yield load(u)
