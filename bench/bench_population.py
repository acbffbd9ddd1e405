"""Benchmark the population release at T-Drive scale (10,357 users, ~15 M points).

Usage: ``.venv/bin/python bench/bench_population.py [--users 10357] [--points 1448]
[--skip-dask] [--page-users 1000]``

Steps (each timed; the release steps run in fresh subprocesses so their peak memory is their
own): generate the synthetic population and write it as Parquet partitioned by user; then

* ``memory`` — read the Parquet files and release counts per 500 m cell × 1 h bin in memory;
* ``baseline`` — the same read plus a plain non-private histogram (np.bincount of cell × bin):
  the ratio release / baseline is what privacy costs on top of counting;
* ``dask`` — the same release on a Dask LocalCluster (2 worker processes, 1 thread each);
* ``page`` — the Population page's recompute on ``--page-users`` users (warm, best of 3).

Targets (issue 16): memory < 30 s with peak < 4 GB; Dask within 3x of memory; page <= 1 s.
Figures are wall-clock on a shared machine and noisy.
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

CHILD = r"""
import json, sys, time
import numpy as np, pandas as pd
mode, path = sys.argv[1], sys.argv[2]
from lmdk_core.population import ICDE15_MIX, Grid, draw_preferences, release_population
from lmdk_core.population.noise import discrete_laplace
discrete_laplace(4, 1.0, rng=0)  # load the compiled kernel before timing
grid = Grid.covering(start="2008-02-02", end="2008-02-09", cell_m=500, bin_s=3600)
t0 = time.perf_counter()
c0 = time.process_time()
if mode == "dask":
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    client = Client(cluster)
    t_cluster = time.perf_counter() - t0
    uids = pd.read_parquet(path, columns=["uid"])["uid"].astype(str).unique()
    data = path
else:
    data = pd.read_parquet(path)
    uids = data["uid"].astype(str).unique()
    t_cluster = 0.0
t_read = time.perf_counter() - t0
cpu_read = time.process_time() - c0
prefs = draw_preferences(uids, ICDE15_MIX, rng=1)
places = pd.read_parquet(path + "/../places.parquet")
places = places[places["name"] == "other"]
t1 = time.perf_counter()
c1 = time.process_time()
if mode == "baseline":
    t = pd.DatetimeIndex(data["time"]).as_unit("ns").asi8
    b, c = grid.locate(t, data["lat"].to_numpy(), data["lon"].to_numpy())
    ok = b >= 0
    counts = np.bincount(b[ok] * grid.n_cells + c[ok], minlength=grid.n_bins * grid.n_cells)
    n = int(counts.sum())
else:
    rel = release_population(data, prefs, grid=grid, places=places, mix=ICDE15_MIX, rng=2,
                             engine="dask" if mode == "dask" else "memory")
    n = int(rel.private.true_counts.sum())
t_work = time.perf_counter() - t1
cpu_work = time.process_time() - c1  # this process only (Dask workers are other processes)
# VmHWM: this process's own peak RSS (ru_maxrss would carry the parent's peak across exec)
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")) / 1024
print(json.dumps({"mode": mode, "read_s": t_read, "cluster_s": t_cluster, "work_s": t_work,
                  "cpu_read_s": cpu_read, "cpu_work_s": cpu_work,
                  "peak_mb_driver": peak, "records": n, "cells": grid.n_bins * grid.n_cells}))
"""


def child(mode: str, path: pathlib.Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(path)], capture_output=True,
                         text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT),
                                                   "PATH": "/usr/bin:/bin"})
    if out.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--page-only", action="store_true")
    ap.add_argument("--users", type=int, default=10_357)
    ap.add_argument("--points", type=int, default=1_448)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--skip-dask", action="store_true")
    ap.add_argument("--page-users", type=int, default=1000)
    args = ap.parse_args()
    if args.page_only:
        page(args.page_users)
        return
    from lmdk_core.population import generate_population, write_partitioned

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        traj, places = generate_population(args.users, points_per_user=args.points, rng=0)
        t_gen = time.perf_counter() - t0
        pq = write_partitioned(traj, pathlib.Path(tmp) / "points", n_files=args.files)
        places.to_parquet(pathlib.Path(tmp) / "places.parquet")
        n_points = len(traj)
        del traj
        print(f"population: {args.users:,} users, {n_points:,} points "
              f"(generated in {t_gen:.1f} s, written as {args.files} Parquet files)")
        res = {m: child(m, pq) for m in ("baseline", "memory")}
        if not args.skip_dask:
            res["dask"] = child("dask", pq)
    base = res["baseline"]["work_s"]
    print(f"grid: 500 m cells x 1 h bins = {res['memory']['cells']:,} published counts; "
          f"{res['memory']['records']:,} bounded records")
    print(f"{'engine':<10}{'read s':>8}{'work s':>9}{'work cpu s':>11}{'peak MB':>9}"
          f"{'x baseline':>12}")
    for m, r in res.items():
        print(f"{m:<10}{r['read_s']:8.1f}{r['work_s']:9.1f}{r['cpu_work_s']:11.1f}"
              f"{r['peak_mb_driver']:9.0f}{r['work_s'] / base:12.1f}")
    print("(wall-clock seconds on a shared machine; 'work cpu s' is the driver process's CPU "
          "time, which does not count time spent waiting for the cores)")
    mem = res["memory"]
    print(f"memory release: {mem['read_s'] + mem['work_s']:.1f} s incl. read, CPU "
          f"{mem['cpu_read_s'] + mem['cpu_work_s']:.1f} s (target < 30 s), "
          f"peak {mem['peak_mb_driver']:.0f} MB (target < 4096 MB)")
    if "dask" in res:
        d = res["dask"]
        print(f"dask / memory (release only): {d['work_s'] / mem['work_s']:.2f}x (target <= 3x); "
              f"cluster start {d['cluster_s']:.1f} s; peak MB is the driver's only")
    page(args.page_users)


def page(n_users: int) -> None:
    import logging

    sys.path.insert(0, str(ROOT))
    logging.getLogger("streamlit").setLevel(logging.ERROR)  # bare mode: no ScriptRunContext
    from dashboard.page_population import compute, population

    pop = population(n_users, 200, 0)
    compute(pop, "icde15", "skip", "mean", 1)  # warm (kernel load, caches)
    times, cpu = [], []
    for r in range(3):
        t0, c0 = time.perf_counter(), time.process_time()
        compute(pop, "icde15", "skip", "mean", 2 + r)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    print(f"page recompute on {n_users:,} users (4 methods): best {min(times):.2f} s wall, "
          f"{min(cpu):.2f} s CPU (target <= 1 s)")


if __name__ == "__main__":
    main()
