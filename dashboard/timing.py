"""Optional per-section timing of a page run, for benchmarks (bench/bench_click.py --sections).

Off unless the server was started with the environment variable ``LMDK_TIMING`` set to a file
path; then every section's wall time and the CPU time of the script's thread are appended to
it as one tab-separated line (``run id, section, wall seconds, CPU seconds``): on a shared
machine the wall time grows with the load, the thread's CPU time much less, so the CPU column is
the one to compare across runs. No user data is written, only section names and durations.
With ``LMDK_PROFILE`` set to a path, :func:`profiled` also writes a cProfile of each page run
there (the last run wins).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_PATH = os.environ.get("LMDK_TIMING")
_PROFILE = os.environ.get("LMDK_PROFILE")
_runs = 0


def new_run() -> int:
    """Number the page run whose sections follow (only counted when timing is on)."""
    global _runs
    if _PATH:
        _runs += 1
    return _runs


@contextmanager
def section(name: str) -> Iterator[None]:
    """Time the body as section ``name`` (no-op when timing is off)."""
    if not _PATH:
        yield
        return
    t0, c0 = time.perf_counter(), time.thread_time()
    try:
        yield
    finally:
        wall, cpu = time.perf_counter() - t0, time.thread_time() - c0
        with open(_PATH, "a", encoding="utf-8") as f:
            f.write(f"{_runs}\t{name}\t{wall:.4f}\t{cpu:.4f}\n")


def records(path: Path, skip: int = 0) -> list[tuple[int, str, float, float]]:
    """The (run id, section, wall s, CPU s) lines of the timing file at ``path`` after its first
    ``skip`` lines (how the benchmarks read what :func:`section` wrote)."""
    lines = path.read_text(encoding="utf-8").splitlines()[skip:]
    return [(int(run), name, float(wall), float(cpu))
            for run, name, wall, cpu in (line.split("\t") for line in lines)]


@contextmanager
def profiled() -> Iterator[None]:
    """cProfile the body into ``$LMDK_PROFILE`` (no-op when unset)."""
    if not _PROFILE:
        yield
        return
    import cProfile

    prof = cProfile.Profile()
    prof.enable()
    try:
        yield
    finally:
        prof.disable()
        prof.dump_stats(_PROFILE)
