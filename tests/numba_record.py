"""Which numba kernels a block of code compiles or loads from numba's cache, and the CPU time
each took. Used by tests/conftest.py (importing the test modules runs no kernel) and by
bench/bench_compile.py (what a fresh install compiles)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator


@contextlib.contextmanager
def kernels_run() -> Iterator[list[tuple[str, float]]]:
    """``(module.name, CPU-s)`` per call of numba's compile within the block, in the order they
    started: a kernel's first call with new argument types, and each lookup of a callee while a
    caller is typed (~0 CPU-s once the callee is compiled). The CPU time includes the kernels
    compiled inside it and is ~0 for one loaded from the cache."""
    from numba.core.dispatcher import Dispatcher

    seen: list[tuple[str, float]] = []
    real = Dispatcher.compile

    def compile(self, sig):
        name = f"{self.py_func.__module__}.{self.py_func.__qualname__}"
        at = len(seen)
        seen.append((name, 0.0))
        t0 = time.process_time()
        try:
            return real(self, sig)
        finally:
            seen[at] = (name, time.process_time() - t0)

    Dispatcher.compile = compile
    try:
        yield seen
    finally:
        Dispatcher.compile = real
