"""The Dask engine: the same per-user work on partitions that each hold all rows of their users.

Input is a Parquet directory written by :func:`write_partitioned` (one file per user bucket,
``bucket = BLAKE2b(uid) mod n``; users never straddle files) or a DataFrame, which is split the
same way in memory. Each partition runs :func:`lmdk_core.population.core.process_partition`
(no shuffle); only the sparse per-cell counts travel back, the driver checks that no user
appears in two partitions, sums them and adds the noise once. The coins of each user are keyed
by the uid, so the result is identical to the in-memory engine for the same seed.

Uses the active ``distributed.Client`` if there is one (a local or remote cluster), else Dask's
threaded scheduler. Needs the optional extra ``lmdk[dask]``.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
from typing import Any

import numpy as np
import pandas as pd

from ..errors import LmdkError, ParameterError
from ..trajectory import time_order
from .core import PartitionResult, process_partition

__all__ = ["run_dask", "user_buckets", "write_partitioned"]


def _require_dask():
    try:
        import dask
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise LmdkError("engine 'dask' needs Dask: pip install 'lmdk[dask]'") from None
    return dask


def user_buckets(uids: Any, n: int) -> np.ndarray:
    """Bucket 0..n−1 of each uid (BLAKE2b of the uid text, stable across runs and machines)."""
    u = pd.Index(np.asarray(uids).astype(str))
    uniq, inv = np.unique(u.to_numpy(), return_inverse=True)
    b = np.array([int.from_bytes(hashlib.blake2b(x.encode(), digest_size=8).digest(), "little")
                  % n for x in uniq], dtype=np.int64)
    return b[inv]


def write_partitioned(traj: pd.DataFrame, path: Any, n_files: int = 8) -> pathlib.Path:
    """Write ``traj`` as Parquet files ``part-XXXX.parquet`` under ``path``, users bucketed by
    uid so each user's rows are in exactly one file (sorted by uid, time)."""
    out = pathlib.Path(path)
    out.mkdir(parents=True, exist_ok=True)
    frame = traj[["uid", "time", "lat", "lon"]].copy()
    frame["uid"] = frame["uid"].astype(str)
    bucket = user_buckets(frame["uid"], n_files)
    for i in range(n_files):
        part = frame[bucket == i]
        part = part.take(time_order(part)[0])  # the package's one (uid, time) sort, stable
        part.to_parquet(out / f"part-{i:04d}.parquet", index=False)
    return out


def _partitions(data: Any, n: int | None) -> list[Any]:
    dask = _require_dask()
    if isinstance(data, pd.DataFrame):
        k = n or max(1, min(32, (os.cpu_count() or 1) * 2))
        bucket = user_buckets(data["uid"], k)
        return [dask.delayed(data[bucket == i]) for i in range(k)]
    path = pathlib.Path(data)
    if not path.is_dir():
        raise ParameterError(f"{path}: engine 'dask' needs a Parquet directory partitioned by "
                             "user (see write_partitioned) or a DataFrame")
    files = sorted(path.glob("*.parquet"))
    if not files:
        raise ParameterError(f"{path}: no .parquet files")
    read = dask.delayed(pd.read_parquet)
    return [read(f, columns=["uid", "time", "lat", "lon"]) for f in files]


def run_dask(data: Any, *, places: pd.DataFrame | None, progress: Any = None,
             n_partitions: int | None = None, **kw: Any) -> list[PartitionResult]:
    """Per-partition results (see module docstring); ``kw`` as for process_partition."""
    dask = _require_dask()
    parts = _partitions(data, n_partitions)
    job = dask.delayed(process_partition)
    tasks = [job(p, places=places, **kw) for p in parts]
    try:
        from distributed import as_completed, get_client

        client = get_client()
    except (ImportError, ValueError):
        client = None
    if client is None:
        results = list(dask.compute(*tasks, scheduler="threads"))
        if progress is not None:
            progress("partitions", len(results), len(results))
        return results
    futures = client.compute(tasks)
    for done, _ in enumerate(as_completed(futures), start=1):
        if progress is not None:
            progress("partitions", done, len(futures))
    return client.gather(futures)
