"""Optional per-section timing of a page run, for benchmarks (bench/bench_click.py --sections).

Off unless the server was started with the environment variable ``LMDK_TIMING`` set to a file
path; then every section's wall time is appended to it as one tab-separated line
(``run id, section, seconds``). No user data is written, only section names and durations.
With ``LMDK_PROFILE`` set to a path, :func:`profiled` also writes a cProfile of each page run
there (the last run wins).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

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
    t0 = time.perf_counter()
    try:
        yield
    finally:
        with open(_PATH, "a", encoding="utf-8") as f:
            f.write(f"{_runs}\t{name}\t{time.perf_counter() - t0:.4f}\n")


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
