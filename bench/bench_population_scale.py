"""Population release at 1x, 2x, 4x and 8x T-Drive scale: time per point and peak memory.

Usage: ``.venv/bin/python bench/bench_population_scale.py [--scales 1,2,4,8]
[--engines memory,dask,old] [--old-scales 1] [--workers 2] [--keep DIR]``

T-Drive scale is 10,357 users x 1,448 points (~15 M points). The synthetic population of the
largest scale is written once as Parquet partitioned by user
(:func:`lmdk_core.population.generator.write_population`, files of ~2 M points of whole users,
never held in memory); scale k uses its first files (about k x 10,357 users; the exact number of
points is printed). Each release runs in a fresh subprocess, so its peak memory (VmHWM) is its
own:

* ``memory`` — ``release_population(directory)``: user-disjoint partitions of 1 M points read
  and processed one at a time in this process;
* ``dask`` — the same on a ``distributed.LocalCluster`` of ``--workers`` worker processes (one
  thread each); the peak of the driver and of each worker process are reported;
* ``old`` — the engine before issue 26 (commit dc0e492, extracted with ``git archive``): the
  whole population read into one DataFrame, one global (uid, time) sort. Run only at
  ``--old-scales`` (it needs ~235 bytes per point).

Printed: time per point (µs) and its ratio to the 1x run of the same engine, peak MB, and
memory/old ratios. Targets (issue 26): time per point within 20 % from 1x to 8x; in-memory
peak <= 2 GB at 4x; each Dask worker <= 1.5 GB. Wall-clock on a shared machine is noisy; the CPU
seconds of the driver are printed too.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
T_DRIVE_USERS, T_DRIVE_POINTS = 10_357, 1_448
OLD_COMMIT = "dc0e492"

CHILD = r"""
import json, sys, time
import numpy as np, pandas as pd
engine, data, places_path, n_workers = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
from lmdk_core.population import ICDE15_MIX, Grid, draw_preferences, release_population
from lmdk_core.population.noise import discrete_laplace
discrete_laplace(4, 1.0, 0)  # load the compiled kernel before timing

def vmhwm():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmHWM")) / 1024

places = pd.read_parquet(places_path)
prefs = draw_preferences(places["uid"].unique(), ICDE15_MIX, rng=1)  # every user of the 8x set
places = places[places["name"] == "other"]
grid = Grid.covering(start="2008-02-02", end="2008-02-09", cell_m=500, bin_s=3600)
kw = dict(grid=grid, places=places, mix=ICDE15_MIX, rng=2)
workers = {}
worker_cpu = 0.0
t0, c0 = time.perf_counter(), time.process_time()
if engine == "dask":
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                           dashboard_address=None, memory_limit="3GiB")
    client = Client(cluster)
    client.run(lambda: __import__("lmdk_core.population.core"))  # warm imports on workers
    w0 = client.run(time.process_time)
    t0, c0 = time.perf_counter(), time.process_time()
    rel = release_population(data, prefs, engine="dask", scheduler=client, **kw)
    wall_d = time.perf_counter() - t0
    w1 = client.run(time.process_time)
    workers = client.run(vmhwm)
    worker_cpu = sum(w1[k] - w0[k] for k in w1)
elif engine == "old":
    import glob
    frame = pd.concat([pd.read_parquet(f) for f in sorted(glob.glob(data + "/*.parquet"))],
                      ignore_index=True)
    rel = release_population(frame, prefs, **kw)
else:
    rel = release_population(data, prefs, **kw)
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps({"engine": engine, "wall_s": wall, "cpu_s": cpu + worker_cpu,
                  "driver_cpu_s": cpu, "peak_mb": vmhwm(),
                  "worker_peak_mb": sorted(workers.values()),
                  "points": int(rel.private.n_points),
                  "checksum": int(rel.private.kept_counts.sum())}))
"""


def run(engine: str, data: pathlib.Path, places: pathlib.Path, workers: int,
        pythonpath: pathlib.Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, engine, str(data), str(places),
                          str(workers)], capture_output=True, text=True, cwd=ROOT,
                         env={"PYTHONPATH": str(pythonpath), "PATH": "/usr/bin:/bin"})
    if out.returncode != 0:
        raise SystemExit(f"{engine} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scales", default="1,2,4,8")
    ap.add_argument("--engines", default="memory,dask,old")
    ap.add_argument("--old-scales", default="1")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--users", type=int, default=T_DRIVE_USERS, help="users at scale 1")
    ap.add_argument("--points", type=int, default=T_DRIVE_POINTS)
    ap.add_argument("--keep", help="directory to write (or reuse) the population in")
    args = ap.parse_args()
    scales = [int(s) for s in args.scales.split(",")]
    engines = args.engines.split(",")
    old_scales = {int(s) for s in args.old_scales.split(",") if s}
    from lmdk_core.population.generator import _CHUNK_POINTS, write_population

    with tempfile.TemporaryDirectory() as tmp:
        base = pathlib.Path(args.keep or tmp)
        full = base / "points"
        places = base / "places.parquet"
        n_max = max(scales) * args.users
        if not places.exists():
            t0 = time.perf_counter()
            write_population(full, n_max, points_per_user=args.points, rng=0).to_parquet(
                places)
            print(f"wrote {n_max:,} users x {args.points} points in "
                  f"{time.perf_counter() - t0:.0f} s")
        files = sorted(full.glob("*.parquet"))
        per_file = max(1, _CHUNK_POINTS // args.points)  # users per file
        old_tree = None
        if "old" in engines:
            old_tree = base / "old"
            if not old_tree.exists():
                old_tree.mkdir()
                arch = subprocess.run(["git", "archive", OLD_COMMIT, "lmdk_core"], cwd=ROOT,
                                      capture_output=True, check=True).stdout
                subprocess.run(["tar", "-x", "-C", str(old_tree)], input=arch, check=True)
        rows = []
        for k in scales:  # every engine at one scale, then the next scale
            n_files = max(1, round(k * args.users / per_file))
            d = base / f"scale-{k}"
            if not d.exists():
                d.mkdir()
                for f in files[:n_files]:
                    (d / f.name).symlink_to(f)
            for eng in engines:
                if eng == "old" and k not in old_scales:
                    continue
                path = old_tree if eng == "old" else ROOT
                r = run(eng, d, places, args.workers, path)  # type: ignore[arg-type]
                r["scale"] = k
                rows.append(r)
                print(json.dumps(r), flush=True)
    report(rows)


def report(rows: list[dict]) -> None:
    first = {}
    for r in rows:
        first.setdefault(r["engine"], r)
    print(f"\n{'engine':<8}{'scale':>6}{'points':>13}{'wall s':>9}{'us/pt':>7}{'x 1st':>7}"
          f"{'cpu s':>8}{'cpu us/pt':>10}{'x 1st':>7}{'peak MB':>9}  worker peaks MB")
    for r in rows:
        f = first[r["engine"]]
        us, us0 = (1e6 * r["wall_s"] / r["points"], 1e6 * f["wall_s"] / f["points"])
        cu, cu0 = (1e6 * r["cpu_s"] / r["points"], 1e6 * f["cpu_s"] / f["points"])
        wk = ", ".join(f"{w:.0f}" for w in r["worker_peak_mb"])
        print(f"{r['engine']:<8}{r['scale']:>5}x{r['points']:>13,}{r['wall_s']:9.1f}{us:7.3f}"
              f"{us / us0:7.2f}{r['cpu_s']:8.1f}{cu:10.3f}{cu / cu0:7.2f}{r['peak_mb']:9.0f}"
              f"  {wk}")
    olds = {r["scale"]: r for r in rows if r["engine"] == "old"}
    for r in rows:
        if r["engine"] == "memory" and r["scale"] in olds:
            o = olds[r["scale"]]
            print(f"memory / old at {r['scale']}x: wall {r['wall_s'] / o['wall_s']:.2f}x, "
                  f"CPU {r['cpu_s'] / o['cpu_s']:.2f}x, "
                  f"peak {r['peak_mb'] / o['peak_mb']:.2f}x (same release: "
                  f"{r['checksum'] == o['checksum']})")
    print("'x 1st' = time per point / the same engine's at the smallest scale run; 'cpu s' is "
          "the driver's CPU time plus, for dask, the workers' (wall-clock on a shared machine "
          "waits for the cores); dask's peak MB is the driver's, its workers' peaks follow")


if __name__ == "__main__":
    main()
