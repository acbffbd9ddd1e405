"""Benchmark `lmdk release` on one person's 2,000,000 points against a pandas round trip of the
same CSV, in the same run (issue 26 part 2).

Both are whole processes started the same way (``python -m lmdk_core.cli release ...`` and a
``python -c`` that runs ``pd.read_csv`` then ``DataFrame.to_csv``), timed from outside:
wall time, CPU time (user + sys, ``resource.getrusage(RUSAGE_CHILDREN)`` differences) and the
peak RSS of the process (``ru_maxrss`` of the waited child, via ``os.wait4``). A forked child
starts with its parent's peak RSS, so this script imports neither pandas nor lmdk: the data
are generated in a child process too. The lmdk run
writes three files (public CSV and GeoJSON, private report) where pandas writes one; it also
imports the package and runs the release (Skip, one landmark place). Ratios are lmdk / pandas.
Targets: time <= 2.5x and peak memory <= 2x the pandas round trip. Never fails on timing; on a
shared machine compare the CPU-time ratio too (wall time counts waiting for a core).

Usage: ``python bench/bench_cli_release.py [--points N] [--repeat R] [--keep DIR]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_TIME, TARGET_MEMORY = 2.5, 2.0
PANDAS = ("import sys, pandas as pd; "
          "pd.read_csv(sys.argv[1]).to_csv(sys.argv[2], index=False)")


def make_data(d: Path, n: int) -> tuple[Path, Path]:
    """One user's n points every 5 s (ISO times, 6-decimal coordinates) and a places file,
    written by a child process (see the module docstring)."""
    subprocess.run([sys.executable, __file__, "--make-data", str(d), "--points", str(n)],
                   check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return d / "trace.csv", d / "places.geojson"


def _make_data(d: Path, n: int) -> None:
    import numpy as np
    import pandas as pd

    import lmdk_core as lm

    rng = np.random.default_rng(0)
    t = pd.Timestamp("2024-01-01", tz="UTC") + pd.to_timedelta(np.arange(n) * 5, unit="s")
    lat = 39.9 + np.cumsum(rng.normal(0, 1e-4, n))
    lon = 116.3 + np.cumsum(rng.normal(0, 1e-4, n))
    csv = d / "trace.csv"
    pd.DataFrame({"uid": "u1", "time": t.strftime("%Y-%m-%dT%H:%M:%SZ"),
                  "lat": lat.round(6), "lon": lon.round(6)}).to_csv(csv, index=False)
    places = d / "places.geojson"
    places.write_text(json.dumps(lm.places_to_geojson([lm.Place("Home", 39.9, 116.3, 300)])))


def run(cmd: list[str]) -> dict[str, float]:
    """Wall seconds, CPU seconds and peak RSS (MB) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {err}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu, "peak_mb": usage.ru_maxrss / 1024}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=2_000_000)
    ap.add_argument("--repeat", type=int, default=1, help="runs of each; the best is kept")
    ap.add_argument("--keep", help="write the data and outputs here instead of a temp dir")
    ap.add_argument("--make-data", help=argparse.SUPPRESS)  # the data-making child
    args = ap.parse_args()
    if args.make_data:
        _make_data(Path(args.make_data), args.points)
        return
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(args.keep or tmp)
        d.mkdir(parents=True, exist_ok=True)
        csv, places = make_data(d, args.points)
        size_mb = csv.stat().st_size / 1e6
        best: dict[str, dict[str, float]] = {}
        for i in range(args.repeat):
            out = d / f"lmdk-out-{i}"
            lmdk = run([sys.executable, "-m", "lmdk_core.cli", "release", str(csv), "--places",
                        str(places), "--epsilon", "1", "--scheme", "skip", "--out", str(out),
                        "--quiet"])
            written = sum(f.stat().st_size for f in out.iterdir()) / 1e6
            pandas = run([sys.executable, "-c", PANDAS, str(csv), str(d / f"pandas-{i}.csv")])
            for name, r in (("lmdk", lmdk), ("pandas", pandas)):
                if name not in best or r["wall_s"] < best[name]["wall_s"]:
                    best[name] = r
        lm_, pd_ = best["lmdk"], best["pandas"]
        print(f"input: {args.points:,} points, {size_mb:.1f} MB CSV; lmdk wrote "
              f"{written:.1f} MB in 3 files, pandas one CSV (best of {args.repeat})")
        print(f"{'':<26}{'wall s':>9}{'cpu s':>9}{'peak MB':>10}")
        for name, r in (("lmdk release", lm_), ("pandas read_csv+to_csv", pd_)):
            print(f"{name:<26}{r['wall_s']:>9.2f}{r['cpu_s']:>9.2f}{r['peak_mb']:>10.0f}")
        t_ratio = lm_["wall_s"] / pd_["wall_s"]
        c_ratio = lm_["cpu_s"] / pd_["cpu_s"]
        m_ratio = lm_["peak_mb"] / pd_["peak_mb"]
        print(f"ratio lmdk/pandas: wall {t_ratio:.2f}x (target <= {TARGET_TIME}x: "
              f"{'met' if t_ratio <= TARGET_TIME else 'missed'}), cpu {c_ratio:.2f}x, "
              f"peak memory {m_ratio:.2f}x (target <= {TARGET_MEMORY}x: "
              f"{'met' if m_ratio <= TARGET_MEMORY else 'missed'})")
        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
              f"this script's own peak RSS {own:.0f} MB (a child's floor)")


if __name__ == "__main__":
    main()
