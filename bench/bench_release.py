"""Benchmark release_locations / release_values on 1,000,000 points for every scheme.

Usage: ``.venv/bin/python bench/bench_release.py [--n 1000000] [--repeat 3]``

Reports, per scheme and per ``noise`` ("fast": float numpy draws, simulations only; "safe":
the default, exact samplers fed by a fresh ChaCha20 keystream), the best-of-``repeat`` wall time
and throughput, next to the raw cost of drawing the same number of Laplace samples with numpy in
the same run (x raw = release time / raw draw time), the safe/fast time ratio, and the time of a
10,000-point release (dashboard budget: 150 ms). Targets (issue 9): safe ≥ 2 M values/s and
≥ 1 M locations/s. The first-call cost of the numba kernels is measured in fresh
processes: with an empty on-disk cache (compilation) and with a warm cache (load only).
Figures are wall-clock and noisy on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from lmdk_core import SCHEMES, release_locations, release_values

FIRST_CALL = """
import time, numpy as np
t0 = time.perf_counter()
from lmdk_core import release_locations
t1 = time.perf_counter()
lat, lon = np.full(100, 39.9), np.full(100, 116.4)
for s in ("adaptive", "bd", "ba"):
    release_locations((lat, lon), [3], epsilon=1.0, scheme=s, rng=0)
t2 = time.perf_counter()
print(f"{t1 - t0:.3f} {t2 - t1:.3f}")
"""


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def first_call_cost() -> tuple[tuple[float, float], tuple[float, float]]:
    """(import s, first 3 kernel calls s) with a cold numba cache, then with the warm cache."""
    out = []
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        for _ in range(2):  # cold, then warm (same cache dir)
            res = subprocess.run([sys.executable, "-c", FIRST_CALL], env=env, check=True,
                                 capture_output=True, text=True)
            imp, call = map(float, res.stdout.split())
            out.append((imp, call))
    return out[0], out[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    n = args.n
    rng = np.random.default_rng(0)
    lat = 39.9 + np.cumsum(rng.normal(0, 1e-4, n))
    lon = 116.4 + np.cumsum(rng.normal(0, 1e-4, n))
    values = np.cumsum(rng.normal(0, 1, n))
    landmarks = rng.random(n) < 0.05

    cold, warm = first_call_cost()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"numba first call (adaptive+bd+ba, 100 points): cold cache {cold[1]:.2f} s "
          f"(compile), warm cache {warm[1]:.2f} s (load); import lmdk_core {warm[0]:.2f} s")
    for s in ("adaptive", "bd", "ba"):  # warm this process
        for noise in ("safe", "fast"):
            release_locations((lat[:10], lon[:10]), [1], epsilon=1.0, scheme=s, rng=0,
                              noise=noise)
            release_values(values[:10], [1], epsilon=1.0, scheme=s, rng=0, noise=noise)

    gen = np.random.default_rng(1)
    raw = best_of(lambda: gen.laplace(0.0, 1.0, n), args.repeat)
    print(f"\nn = {n:,} points, {landmarks.mean():.0%} landmarks, best of {args.repeat}")
    print(f"raw numpy Laplace draw of n samples: {raw * 1e3:7.1f} ms "
          f"({n / raw / 1e6:6.1f} M samples/s)\n")
    print(f"{'scheme':<9} {'kind':<10} {'noise':<5} {'time ms':>8} {'M pts/s':>8} "
          f"{'x raw':>6} {'safe/fast':>9} {'10k ms':>7}")
    for kind in ("locations", "values"):
        for s in SCHEMES:
            times = {}
            for noise in ("fast", "safe"):
                if kind == "locations":
                    def fn(s=s, noise=noise, m=n):
                        return release_locations((lat[:m], lon[:m]), landmarks[:m], epsilon=1.0,
                                                 scheme=s, rng=None, noise=noise)
                else:
                    def fn(s=s, noise=noise, m=n):
                        return release_values(values[:m], landmarks[:m], epsilon=1.0, scheme=s,
                                              rng=None, noise=noise)
                t = best_of(fn, args.repeat)
                small = best_of(lambda fn=fn: fn(m=10_000), args.repeat)
                times[noise] = t
                ratio = f"{t / times['fast']:9.2f}" if noise == "safe" else f"{'':9s}"
                print(f"{s:<9} {kind:<10} {noise:<5} {t * 1e3:8.1f} {n / t / 1e6:8.2f} "
                      f"{t / raw:6.1f} {ratio} {small * 1e3:7.1f}")

if __name__ == "__main__":
    main()
