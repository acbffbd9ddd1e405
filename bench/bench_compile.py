"""Benchmark numba's compile work: what a fresh install (or CI's fresh clone) pays once.

Usage: ``.venv/bin/python bench/bench_compile.py [--top 12]``

Runs each part of tests/numba_warmup.py (the kernels the suite, the app and the notebooks
use, with their argument types) in a new process on an empty numba cache (a temporary
``NUMBA_CACHE_DIR``), then once more on the cache it filled: the CPU-seconds of each, their
ratio, and the kernels that took longest to compile (inclusive of what they compiled inside
them, as tests/numba_record.py records them). The parts run one after the other, so the figures
are per process; the suite runs the two side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, sys, time
sys.path[:0] = [sys.argv[2], sys.argv[3]]
from numba_record import kernels_run

t0 = time.process_time()
import numba_warmup
imported = time.process_time()
with kernels_run() as compiled:
    numba_warmup.PARTS[sys.argv[1]]()
done = time.process_time()
print(json.dumps({"import": imported - t0, "run": done - imported,
                  "compiled": [[sec, name] for name, sec in compiled]}))
"""


def run_part(part: str, cache: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, part, str(ROOT), str(ROOT / "tests")],
        env={**os.environ, "NUMBA_CACHE_DIR": cache}, capture_output=True, text=True,
        check=True, cwd=ROOT)
    return json.loads(out.stdout.splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=12, help="kernels listed per part")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    from numba_warmup import PARTS

    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    total_cold = total_warm = 0.0
    for part in PARTS:
        with tempfile.TemporaryDirectory(prefix="lmdk-bench-compile-") as cache:
            cold = run_part(part, cache)
            warm = run_part(part, cache)
        total_cold += cold["run"]
        total_warm += warm["run"]
        print(f"\npart {part!r}: empty cache {cold['run']:.1f} CPU-s, filled cache "
              f"{warm['run']:.2f} CPU-s (ratio {cold['run'] / warm['run']:.0f}x); "
              f"imports {cold['import']:.1f} CPU-s; "
              f"{len({name for _, name in cold['compiled']})} kernels")
        for sec, name in sorted(cold["compiled"], reverse=True)[:args.top]:
            print(f"  {sec:6.2f} CPU-s  {name}")
    print(f"\nall parts: empty cache {total_cold:.1f} CPU-s, filled {total_warm:.2f} CPU-s "
          f"(ratio {total_cold / total_warm:.0f}x)")


if __name__ == "__main__":
    main()
