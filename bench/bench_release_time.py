"""Release.time on 1 M points: datetime64[ns] UTC (now) against the object array of Timestamps
that Release kept before (baseline, measured in the same run), and a whole release.

    python bench/bench_release_time.py [--n 1000000]
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lmdk_core import release_locations
from lmdk_core.release import utc_times


def best(fn, repeat: int = 3) -> float:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return min(out)


def peak_mb(fn) -> float:
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    n = ap.parse_args().n
    rng = np.random.default_rng(0)
    traj = pd.DataFrame({
        "time": pd.date_range("2024-01-01", periods=n, freq="s", tz="UTC"),
        "lat": 39.9 + np.cumsum(rng.normal(0, 1e-5, n)),
        "lon": 116.3 + np.cumsum(rng.normal(0, 1e-5, n)),
    })
    old = best(lambda: traj["time"].to_numpy(copy=True))  # object Timestamps (before)
    new = best(lambda: utc_times(traj["time"]))
    print(f"time column, {n:,} points: object Timestamps {old * 1e3:.1f} ms, "
          f"{peak_mb(lambda: traj['time'].to_numpy(copy=True)):.0f} MB; datetime64[ns] "
          f"{new * 1e3:.1f} ms, {peak_mb(lambda: utc_times(traj['time'])):.0f} MB; "
          f"speed-up {old / new:.0f}x")
    whole = best(lambda: release_locations(traj, epsilon=1.0, scheme="uniform", rng=1))
    print(f"release_locations (uniform, with time), {n:,} points: {whole:.3f} s "
          f"(of which the old time copy alone would be {old:.3f} s)")


if __name__ == "__main__":
    main()
