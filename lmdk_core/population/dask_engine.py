"""The Dask engine: the per-user work of each user-disjoint partition on a Dask cluster.

The partitions (:mod:`.partitions`) are pieces of a DataFrame or runs of row groups of Parquet
files partitioned by user, at any fsspec URL the workers can read (``s3://``, ``gs://``,
``file://`` on a shared disk, local paths). The driver reads only the Parquet footers; each task
reads its own row groups, so a worker's memory follows the partition size, not the file or the
population. The per-user tables (ε_u by uid, the places of every user) are sent once, each held
by one task (:func:`_shared_tasks`), and the partitions' tasks refer to them. Only each
partition's sparse counts and per-user rows come back; the driver adds them up as they arrive
(checking that no user appears in two partitions) and draws the noise once.

**Recomputation is safe.** A partition's result is a deterministic function of its rows and the
release key: each user's keep coins are the ChaCha20 keystream keyed by BLAKE2b(key ‖ "coin" ‖
uid) (:func:`lmdk_core.population.core.user_coins`), and the count noise is drawn on the driver
only, after the sum. When a worker dies and Dask reruns its partitions elsewhere, they draw the
very same coins — never fresh randomness that an observer of two runs could compare — so the
release equals the undisturbed one (and the in-memory engine's, for the same ``rng``). The
per-user tables are task results, not scattered data, for the same reason: a result whose
last copy dies with its worker is computed again elsewhere, while scattered data would be lost
for good and every partition needing it cancelled (Dask's active memory manager keeps a single
copy of a key that no task on another worker needs, so one worker's death could lose it). If
Dask gives up (a partition's worker died too often, or the cluster lost what a partition
needs) the release stops with an LmdkError and nothing is published.

Without a cluster (no ``scheduler``, no active ``distributed.Client``) the partitions run on a
pool of threads on this machine. Needs the optional extra ``lmdk[dask]``.

**Worker CPU.** Dask starts each worker with ``MALLOC_TRIM_THRESHOLD_=65536``
(``distributed.nanny.pre-spawn-environ``): glibc then returns freed memory to the system at
once, so each large temporary of a partition is new pages for the kernel to clear, and a
partition takes more CPU (kernel time) in a worker than in process. The release is the same
either way; dropping that variable from the cluster's configuration trades it for workers that
keep freed memory (``bench/bench_population_scale.py --engines dask,dask-notrim`` measures both).
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import uuid
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Any, cast

import numpy as np
import pandas as pd

from ..errors import LmdkError
from ..trajectory import time_order
from .core import PartitionResult, Totals, process_partition
from .partitions import MAX_ROWS, ParquetUnit, load, read_unit, units_of

__all__ = [
    "SCHEDULER_ENV", "distinct_users", "open_client", "run_dask", "user_buckets",
    "write_partitioned",
]

SCHEDULER_ENV = "LMDK_DASK_SCHEDULER"
"""Environment variable the CLI reads for the address of a Dask scheduler."""


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


def write_partitioned(traj: pd.DataFrame, path: Any, n_files: int = 8,
                      row_group_rows: int = 250_000) -> pathlib.Path:
    """Write ``traj`` as Parquet files ``part-XXXX.parquet`` under ``path``, users bucketed by
    uid so each user's rows are in exactly one file (sorted by uid, time; row groups of about
    ``row_group_rows`` rows, which the engines read one run at a time)."""
    out = pathlib.Path(path)
    out.mkdir(parents=True, exist_ok=True)
    frame = traj[["uid", "time", "lat", "lon"]].copy()
    frame["uid"] = frame["uid"].astype(str)
    bucket = user_buckets(frame["uid"], n_files)
    for i in range(n_files):
        part = frame[bucket == i]
        part = part.take(time_order(part)[0])  # the package's one (uid, time) sort, stable
        part.to_parquet(out / f"part-{i:04d}.parquet", index=False,
                        row_group_size=row_group_rows)
    return out


def open_client(address: str) -> Any:
    """A ``distributed.Client`` connected to the scheduler at ``address``; LmdkError (a clear
    message) when it cannot be reached within 20 s."""
    return _client(address)[0]


def _client(scheduler: Any) -> tuple[Any, bool]:
    """(client or None, whether we opened it)."""
    if scheduler is not None and not isinstance(scheduler, str):
        return scheduler, False  # a distributed.Client
    try:
        from distributed import Client, get_client
    except ImportError:
        if scheduler is not None:
            raise LmdkError("a Dask scheduler needs distributed: pip install 'lmdk[dask]'") \
                from None
        return None, False
    if scheduler is None:
        try:
            return get_client(), False
        except ValueError:
            return None, False
    try:
        return Client(scheduler, timeout="20s", set_as_default=False), True
    except (OSError, TimeoutError) as exc:
        raise LmdkError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None


def _held(value: Any) -> Any:
    return value


def _shared_tasks(client: Any, args: tuple, token: str) -> list[Any]:
    """One future per value of ``args``: a task that returns it. Its value travels in the task's
    definition, which the scheduler keeps, so the scheduler can compute it again on a living
    worker if every copy is lost; data placed with ``Client.scatter`` has no definition and
    would be lost with its last worker (module docstring). Workers fetch it from each other on
    first use, as they would a scattered value."""
    return [client.submit(_held, value, key=f"lmdk-shared-{token}-{i}", pure=False)
            for i, value in enumerate(args)]


def _run_unit(unit: Any, epsilon_of: pd.Series, places: Any, kw: dict) -> PartitionResult:
    return cast(PartitionResult,
                process_partition(load(unit), epsilon_of=epsilon_of, places=places, **kw))


def _unit_users(unit: Any) -> np.ndarray:
    uid = read_unit(unit, columns=["uid"])["uid"] if isinstance(unit, ParquetUnit) else unit["uid"]
    return np.asarray(pd.Index(pd.unique(uid)).astype(str), dtype=object)


def _map_units(fn: Any, units: list[Any], args: tuple, client: Any, on_result: Any,
               progress: Any, stage: str) -> None:
    """``on_result(fn(unit, *args))`` for every unit, as results arrive; progress per unit."""
    n = len(units)
    if client is None:
        workers = max(1, min(n, os.cpu_count() or 1))
        with ThreadPoolExecutor(workers) as pool:
            todo = list(units)
            running: set[Any] = set()
            done_n = 0
            try:
                while todo or running:
                    while todo and len(running) < 2 * workers:  # bounded: memory ~ workers
                        running.add(pool.submit(fn, todo.pop(0), *args))
                    done, running = wait(running, return_when=FIRST_COMPLETED)
                    for f in done:
                        on_result(f.result())
                        done_n += 1
                        if progress is not None:
                            progress(stage, done_n, n)
            except BaseException:
                for f in running:
                    f.cancel()
                raise
        return
    from distributed import as_completed

    token = uuid.uuid4().hex[:12]
    shared = _shared_tasks(client, args, token)  # the per-user tables, sent once
    futures = [client.submit(fn, u, *shared, key=f"lmdk-{stage}-{token}-{i}", pure=False)
               for i, u in enumerate(units)]
    try:
        for done_n, fut in enumerate(as_completed(futures, loop=client.loop), start=1):
            on_result(fut.result())
            fut.release()
            if progress is not None:
                progress(stage, done_n, n)
    except BaseException as exc:
        client.cancel(futures)
        if shared:
            client.cancel(shared)
        if type(exc).__name__ == "KilledWorker":
            raise LmdkError(f"a Dask worker died while computing a partition too many times "
                            f"({exc}); nothing was released") from None
        if type(exc).__name__ == "FutureCancelledError":  # cancelled on the cluster, not here
            raise LmdkError(f"the Dask cluster cancelled a partition ({exc}); nothing was "
                            "released") from None
        raise


def run_dask(units: list[Any], totals: Totals, *, epsilon_of: pd.Series, places: Any,
             progress: Any = None, scheduler: Any = None, **kw: Any) -> None:
    """Add every partition's result to ``totals`` (see module docstring); ``kw`` as for
    :func:`~lmdk_core.population.core.process_partition` (grid, scheme, tau, mode, rule,
    master_key)."""
    _require_dask()
    client, own = _client(scheduler)
    try:
        _map_units(_run_unit, units, (epsilon_of, places, kw), client, totals.add, progress,
                   "partitions")
    finally:
        if own:
            client.close()


def distinct_users(data: Any, *, scheduler: Any = None, storage_options: dict | None = None,
                   max_rows: int = MAX_ROWS, progress: Any = None) -> np.ndarray:
    """The sorted user ids (text) of ``data`` (DataFrame or Parquet location), found partition
    by partition — on the cluster when there is one, so no process reads the whole uid column
    at once; the driver holds one id per user."""
    units = units_of(data, storage_options=storage_options, max_rows=max_rows)
    parts: list[np.ndarray] = []
    client, own = (None, False) if isinstance(data, pd.DataFrame) else _client(scheduler)
    try:
        _map_units(_unit_users, units, (), client, parts.append, progress, "users")
    finally:
        if own and client is not None:
            client.close()
    if not parts:
        return np.zeros(0, dtype=object)
    all_ids = np.concatenate(parts)
    return np.asarray(pd.unique(np.sort(all_ids.astype(str))), dtype=object)
