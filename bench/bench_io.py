"""Benchmark read_trajectories on 1,000,000 points for 1,000 users, CSV and Parquet.

Each measurement runs in a fresh subprocess (imports and one warm-up load of a 100-point file of
the same format done before the clock starts, so lazy first-call imports are not timed) and
reports the wall time of the load and the process's peak RSS (``resource.getrusage`` maxrss),
also above its post-import RSS. Baseline, same run and same file: raw
``pandas.read_csv(engine="pyarrow")`` and ``pandas.read_parquet``; the ratio is lmdk time /
baseline time. Targets (issue 2, on 2 cores):
CSV < 3 s, Parquet < 1 s. Never fails on timing.

Usage: ``python bench/bench_io.py [--points N] [--users U] [--repeat R]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGETS_S = {"csv": 3.0, "parquet": 1.0}


def make_data(path: Path, n_points: int, n_users: int) -> dict[str, Path]:
    """Write the same random trajectories as CSV (ISO times) and Parquet."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(42)
    per_user = n_points // n_users
    uid = np.repeat([f"u{i:04d}" for i in range(n_users)], per_user)
    gaps = rng.integers(1, 60, size=uid.size)
    start = np.repeat(rng.integers(1_600_000_000, 1_700_000_000, n_users), per_user)
    cum = np.cumsum(gaps)
    cum -= np.repeat(cum[::per_user] - gaps[::per_user], per_user)  # restart the sum per user
    t = pd.to_datetime(start + cum, unit="s", utc=True)
    lat = 39.9 + rng.normal(0, 0.05, uid.size)
    lon = 116.4 + rng.normal(0, 0.05, uid.size)
    df = pd.DataFrame({"uid": uid, "time": t, "lat": lat.round(6), "lon": lon.round(6)})
    files = {"csv": path / "points.csv", "parquet": path / "points.parquet"}
    df.to_csv(files["csv"], index=False, date_format="%Y-%m-%dT%H:%M:%SZ")
    df.to_parquet(files["parquet"], index=False)
    return files


def child(impl: str, fmt: str, file: str, warmup: str) -> None:
    """Load ``warmup`` then ``file`` once; print JSON with seconds, rows and RSS figures (MB)."""
    import resource

    import pandas as pd

    import lmdk_core

    def rss_mb() -> float:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * resource.getpagesize() / 2**20

    def load(path: str) -> pd.DataFrame:
        if impl == "lmdk":
            return lmdk_core.read_trajectories(path)
        if fmt == "csv":
            return pd.read_csv(path, engine="pyarrow")
        return pd.read_parquet(path)

    load(warmup)
    before = rss_mb()
    t0 = time.perf_counter()
    df = load(file)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {"seconds": seconds, "rows": len(df), "peak_mb": peak, "delta_mb": peak - before}
    print(json.dumps(out))


def measure(impl: str, fmt: str, file: Path, warmup: Path, repeat: int) -> dict:
    runs = []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, __file__, "--child", impl, fmt, str(file), str(warmup)],
            check=True, capture_output=True, text=True,
        )
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return min(runs, key=lambda r: r["seconds"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=1_000_000)
    ap.add_argument("--users", type=int, default=1_000)
    ap.add_argument("--repeat", type=int, default=1, help="best of R runs per measurement")
    ap.add_argument(
        "--child", nargs=4, metavar=("IMPL", "FMT", "FILE", "WARMUP"), help=argparse.SUPPRESS
    )
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory(prefix="bench_io_") as tmp:
        t0 = time.perf_counter()
        files = make_data(Path(tmp), args.points, args.users)
        (Path(tmp) / "warm").mkdir()
        warm = make_data(Path(tmp) / "warm", 100, 10)
        sizes = {k: p.stat().st_size / 2**20 for k, p in files.items()}
        print(f"bench_io: {args.points:,} points, {args.users:,} users "
              f"(data written in {time.perf_counter() - t0:.1f} s; "
              f"CSV {sizes['csv']:.1f} MB, Parquet {sizes['parquet']:.1f} MB)")
        print(f"{'format':8} {'lmdk s':>8} {'pandas s':>9} {'ratio':>6} {'target':>7} "
              f"{'lmdk peak MB':>13} {'(+load)':>8} {'pandas peak MB':>15} {'(+load)':>8}")
        for fmt, file in files.items():
            ours = measure("lmdk", fmt, file, warm[fmt], args.repeat)
            base = measure("pandas", fmt, file, warm[fmt], args.repeat)
            assert ours["rows"] == base["rows"], (ours, base)
            ok = "ok" if ours["seconds"] < TARGETS_S[fmt] else "MISSED"
            print(f"{fmt:8} {ours['seconds']:8.2f} {base['seconds']:9.2f} "
                  f"{ours['seconds'] / base['seconds']:6.1f} {f'<{TARGETS_S[fmt]:g}s {ok}':>7} "
                  f"{ours['peak_mb']:13.0f} {ours['delta_mb']:8.0f} "
                  f"{base['peak_mb']:15.0f} {base['delta_mb']:8.0f}")
        print("(targets: 1,000,000 points on 2 cores; timings are noisy on a shared machine)")


if __name__ == "__main__":
    main()
