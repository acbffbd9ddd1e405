"""Population release at 1x, 2x, 4x and 8x T-Drive scale: time per point and peak memory.

Usage: ``.venv/bin/python bench/bench_population_scale.py [--scales 1,2,4,8]
[--engines memory,dask,dask-notrim,old,base] [--old-scales 1] [--base COMMIT] [--workers 2]
[--keep DIR] [--repeat N]``

T-Drive scale is 10,357 users x 1,448 points (~15 M points). The synthetic population of the
largest scale is written once as Parquet partitioned by user
(:func:`lmdk_core.population.generator.write_population`, files of ~2 M points of whole users,
never held in memory); scale k uses its first files (about k x 10,357 users; the exact number of
points is printed). Every scale gets the preferences and places tables of *all* users of the
largest scale (a release is given more users' tables than its data holds). Each release runs
in a fresh subprocess, so its peak memory (VmHWM) is its own:

* ``memory`` — ``release_population(directory)``: user-disjoint partitions of 1 M points read
  and processed one at a time in this process;
* ``dask`` — the same on a ``distributed.LocalCluster`` of ``--workers`` worker processes (one
  thread each) with Dask's default worker environment; the peak of the driver and of each
  worker process are reported;
* ``dask-notrim`` — the same without the ``MALLOC_TRIM_THRESHOLD_=65536`` that Dask puts in
  each worker's environment (``distributed.nanny.pre-spawn-environ``): with it glibc hands
  freed memory back at once, so every large temporary of a partition is fresh pages for the
  kernel to clear (the workers' kernel CPU is printed as ``worker sys s``);
* ``old`` — the engine before issue 26 (commit dc0e492, extracted with ``git archive``): the
  whole population read into one DataFrame, one global (uid, time) sort. Run only at
  ``--old-scales`` (it needs ~235 bytes per point).
* ``base`` — the ``memory`` engine of the commit ``--base`` (extracted with ``git archive``):
  a before/after comparison in the same run, interleaved with ``memory`` at every scale and
  repeat.

What is timed (CPU seconds of the driver plus, for Dask, of the workers, ``os.times``):

* ``cpu s`` / ``cpu us/pt``: one whole release — reading, per-user work, the noise on every
  count of the grid (1.75 M counts), building the places index and preference table — what a
  user sees per point for that population size;
* not included, and printed as ``warm s``: the one-time costs of a process (imports, lazily
  imported modules, compiled numba kernels loaded from cache, Dask worker start), paid by a
  first release of ten users on another, small grid (so nothing of the measured grid is warm),
  for Dask also inside every worker process (its one task runs on one worker only);
* ``fixed s``: a release of ten users on the same grid and tables, after the measured one (the
  per-release cost that does not grow with points); ``slope`` = (cpu − fixed) / (points −
  its points) µs per point.

Targets (issue 26): time per point within 20 % from 1x to 8x; in-memory peak <= 2 GB at 4x;
each Dask worker <= 1.5 GB. Wall-clock on a shared machine is noisy; CPU seconds are the
figure to compare.
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
import glob, json, os, shutil, sys, tempfile, time
import pandas as pd
import pyarrow.parquet as pq
engine, data, places_path, n_workers = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
import lmdk_core
from lmdk_core.population import ICDE15_MIX, Grid, draw_preferences, release_population

def vmhwm():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmHWM")) / 1024

def cpu_times():
    t = os.times()
    return t.user + t.system, t.system

places = pd.read_parquet(places_path)
prefs = draw_preferences(places["uid"].unique(), ICDE15_MIX, rng=1)  # every user of the 8x set
places = places[places["name"] == "other"]
grid = Grid.covering(start="2008-02-02", end="2008-02-09", cell_m=500, bin_s=3600)
tmp = tempfile.mkdtemp()
# ten whole users of the data (files sorted by uid; the first row group holds more than ten)
rows = pq.ParquetFile(sorted(glob.glob(data + "/*.parquet"))[0]).read_row_group(0).to_pandas()
ids = pd.unique(rows["uid"])
assert len(ids) > 10
ten = os.path.join(tmp, "ten")
os.mkdir(ten)
rows[rows["uid"].isin(ids[:10])].to_parquet(os.path.join(ten, "part-0000.parquet"))
dkw = {}
if engine.startswith("dask"):
    import dask.config
    from distributed import Client, LocalCluster
    if engine == "dask-notrim":  # Dask's worker environment without MALLOC_TRIM_THRESHOLD_
        env = dict(dask.config.get("distributed.nanny.pre-spawn-environ"))
        env.pop("MALLOC_TRIM_THRESHOLD_", None)
        dask.config.set({"distributed.nanny.pre-spawn-environ": env})
    cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                           dashboard_address=None, memory_limit="3GiB")
    client = Client(cluster)
    dkw = dict(engine="dask", scheduler=client)

def release(path, g, rng):
    if engine == "old":  # the engine before issue 26 takes one DataFrame
        path = pd.concat([pd.read_parquet(f) for f in sorted(glob.glob(path + "/*.parquet"))],
                         ignore_index=True)
    return release_population(path, prefs, grid=g, places=places, mix=ICDE15_MIX, rng=rng,
                              **dkw)

def measured(path, g=grid, rng=2):
    w0 = client.run(cpu_times) if dkw else {}
    t0, c0 = time.perf_counter(), time.process_time()
    rel = release(path, g, rng)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    w1 = client.run(cpu_times) if dkw else {}
    return (rel, wall, cpu + sum(w1[k][0] - w0[k][0] for k in w1), cpu,
            [w1[k][1] - w0[k][1] for k in w1])

# one-time costs of a process (imports, lazy imports, compiled kernels, worker start): the ten
# users released on another, small grid first, so nothing of the measured grid is warmed
c0 = time.process_time()
small = Grid.covering(start="2008-02-02", end="2008-02-03", cell_m=5000, bin_s=3600)
release(ten, small, 3)
if dkw:  # the same in every worker process (the warm-up's one task ran on one worker only)
    client.run(lambda: release_population(ten, prefs, grid=small, places=places,
                                          mix=ICDE15_MIX, rng=3) and None)
warm = time.process_time() - c0 + (
    sum(v[0] for v in client.run(cpu_times).values()) if dkw else 0.0)
rel, wall, cpu, driver_cpu, w_sys = measured(data)
peak, workers = vmhwm(), (client.run(vmhwm) if dkw else {})
fixed, _, fixed_cpu, _, _ = measured(ten)  # what a release costs that is not per point
shutil.rmtree(tmp)
print(json.dumps({"engine": engine, "wall_s": wall, "cpu_s": cpu, "driver_cpu_s": driver_cpu,
                  "worker_sys_s": w_sys, "peak_mb": peak,
                  "worker_peak_mb": sorted(workers.values()),
                  "points": int(rel.private.n_points), "warm_cpu_s": warm,
                  "fixed_cpu_s": fixed_cpu, "fixed_points": int(fixed.private.n_points),
                  "checksum": int(rel.private.kept_counts.sum()),
                  "tree": os.path.dirname(os.path.dirname(os.path.realpath(lmdk_core.__file__)))}))
"""


def run(engine: str, data: pathlib.Path, places: pathlib.Path, workers: int,
        pythonpath: pathlib.Path) -> dict:
    # run in the tree itself: `python -c` puts the working directory first on sys.path, so from
    # ROOT every engine would import ROOT's lmdk_core whatever PYTHONPATH says
    out = subprocess.run([sys.executable, "-c", CHILD, engine, str(data), str(places),
                          str(workers)], capture_output=True, text=True, cwd=pythonpath,
                         env={"PYTHONPATH": str(pythonpath), "PATH": "/usr/bin:/bin"})
    if out.returncode != 0:
        raise SystemExit(f"{engine} failed:\n{out.stderr[-3000:]}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    if pathlib.Path(r.pop("tree")) != pathlib.Path(pythonpath).resolve():
        raise SystemExit(f"{engine} imported lmdk_core from elsewhere than {pythonpath}")
    return r


def tree_of(base: pathlib.Path, name: str, commit: str) -> pathlib.Path:
    """``lmdk_core`` of ``commit`` extracted (``git archive``) under ``base / name``, once."""
    tree = base / name
    if not tree.exists():
        tree.mkdir()
        arch = subprocess.run(["git", "archive", commit, "lmdk_core"], cwd=ROOT,
                              capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=arch, check=True)
    return tree


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scales", default="1,2,4,8")
    ap.add_argument("--engines", default="memory,dask,old")
    ap.add_argument("--old-scales", default="1")
    ap.add_argument("--base", help="commit whose memory engine the 'base' engine runs")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--users", type=int, default=T_DRIVE_USERS, help="users at scale 1")
    ap.add_argument("--points", type=int, default=T_DRIVE_POINTS)
    ap.add_argument("--keep", help="directory to write (or reuse) the population in")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs of each engine and scale; the table shows the least CPU")
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
        old_tree = tree_of(base, "old", OLD_COMMIT) if "old" in engines else None
        if "base" in engines and not args.base:
            raise SystemExit("engine 'base' needs --base COMMIT")
        base_tree = tree_of(base, f"base-{args.base}", args.base) if "base" in engines else None
        rows = []
        for rep in range(args.repeat):  # repeats interleaved: a change of load hits every scale
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
                    path = {"old": old_tree, "base": base_tree}.get(eng) or ROOT
                    r = run(eng, d, places, args.workers, path)  # type: ignore[arg-type]
                    r["scale"], r["repeat"] = k, rep
                    rows.append(r)
                    print(json.dumps(r), flush=True)
    report(rows)


def report(rows: list[dict]) -> None:
    runs: dict[tuple[str, int], list[dict]] = {}
    for r in rows:
        runs.setdefault((r["engine"], r["scale"]), []).append(r)
    spread = {key: max(x["cpu_s"] for x in rs) / min(x["cpu_s"] for x in rs)
              for key, rs in runs.items()}
    rows = [min(rs, key=lambda x: x["cpu_s"]) for rs in runs.values()]  # least disturbed run
    first = {}
    for r in rows:
        first.setdefault(r["engine"], r)

    def slope(r: dict) -> float:  # µs per point once the per-release cost is taken off
        return 1e6 * (r["cpu_s"] - r["fixed_cpu_s"]) / (r["points"] - r["fixed_points"])

    print(f"\n{'engine':<12}{'scale':>6}{'points':>13}{'wall s':>8}{'us/pt':>7}{'cpu s':>7}"
          f"{'cpu us/pt':>10}{'x 1st':>6}{'fixed s':>8}{'slope':>7}{'x 1st':>6}{'warm s':>7}"
          f"{'peak MB':>8}{'runs':>5}{'max/min':>8}  worker peaks MB; worker sys s")
    for r in rows:
        f = first[r["engine"]]
        us = 1e6 * r["wall_s"] / r["points"]
        cu, cu0 = (1e6 * r["cpu_s"] / r["points"], 1e6 * f["cpu_s"] / f["points"])
        wk = ", ".join(f"{w:.0f}" for w in r["worker_peak_mb"])
        ws = ", ".join(f"{w:.1f}" for w in r["worker_sys_s"])
        print(f"{r['engine']:<12}{r['scale']:>5}x{r['points']:>13,}{r['wall_s']:8.1f}{us:7.3f}"
              f"{r['cpu_s']:7.1f}{cu:10.3f}{cu / cu0:6.2f}{r['fixed_cpu_s']:8.2f}"
              f"{slope(r):7.3f}{slope(r) / slope(f):6.2f}{r['warm_cpu_s']:7.2f}"
              f"{r['peak_mb']:8.0f}{len(runs[r['engine'], r['scale']]):5d}"
              f"{spread[r['engine'], r['scale']]:8.2f}  {wk}{'; ' + ws if ws else ''}")
    for eng in first:  # the target: CPU per point within 20 % from the smallest to the largest
        per_pt = [r["cpu_s"] / r["points"] for r in rows if r["engine"] == eng]
        if len(per_pt) > 1:
            print(f"{eng}: cpu us/pt max/min over scales {max(per_pt) / min(per_pt):.2f}")
    for other in ("base", "old"):  # the same release from another tree, at the same scales
        against = {r["scale"]: r for r in rows if r["engine"] == other}
        for r in rows:
            if r["engine"] == "memory" and r["scale"] in against:
                o = against[r["scale"]]
                print(f"memory / {other} at {r['scale']}x: wall {r['wall_s'] / o['wall_s']:.2f}x, "
                      f"CPU {r['cpu_s'] / o['cpu_s']:.2f}x, fixed {r['fixed_cpu_s']:.2f} vs "
                      f"{o['fixed_cpu_s']:.2f} s, peak {r['peak_mb']:.0f} vs {o['peak_mb']:.0f} MB "
                      f"(same release: {r['checksum'] == o['checksum']})")
    print("'cpu us/pt' = CPU seconds of the release (driver plus, for dask, workers) / points, "
          "every per-release cost included; 'x 1st' = that / the same engine's at the smallest "
          "scale run. 'fixed s' = CPU of a release of ten users on the same grid and tables "
          "(noise on every count, the tables); 'slope' = (cpu - fixed) / (points - its points) "
          "µs. With --repeat, each row is the run of least CPU ('max/min': the spread of the "
          "runs' CPU). 'warm s' = one-time costs of the process, not in 'cpu s' (a release "
          "of the ten users on a small grid first: imports, compiled kernels, worker start). "
          "Wall-clock "
          "on a shared machine waits for the cores; dask's peak MB is the driver's")


if __name__ == "__main__":
    main()
