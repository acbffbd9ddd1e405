"""Benchmark of lmdk_core.smooth_release: time for 10^4…10^6 points and error on real traces.

Part 1 (time): a synthetic walk, one fix per 30 s, released with Skip (ε = 1, r = 200 m, one
moment in 7 a landmark) as a simulation; smooth_release with its defaults (one Kalman + RTS
pass) and with ``motion="fit"`` (maximum likelihood on the released points, then the pass),
against a baseline in the same run: a pandas centred rolling median of the released points
(window 15). Target: the default smoothing (``motion="auto"``: the public candidate models
weighed by their likelihood on at most 50,000 rows, then one pass per model of non-negligible
weight) of 10^6 points in < 1 s.

Part 2 (error): per person of the trace files (default: the evaluation's GeoLife excerpts —
scikit-mobility's sample, people 001 and 005, and MovingPandas' demodata, trackers 0, 2, 19 —
else the bundled synthetic sample), resampled to one fix per 30 s, landmarks at the person's two
longest stays (lmdk_core.suggest_places, each with its suggested radius), ε = 1, r = 200 m:
mean error in metres of the raw release, of smooth_release (defaults = ``motion="auto"``, the
fixed "town" walk, ``motion="fit"``) and of a centred moving median (windows 9 and 15), averaged
over ``--draws`` simulated draws, each as a ratio of the raw error, and smooth/median9. Reserve
is smoothed twice: with its public figures, and without them (as bench/evaluation.py passes a
batched row: the noise variance is then fitted, bounded below by the law at ε).

    .venv/bin/python bench/bench_smoothing.py [--trace PATH] [--draws 3] [--max-n 1000000]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import timeit
from pathlib import Path

import numpy as np
import pandas as pd

import lmdk_core as lc
from lmdk_core.landmarks import landmark_mask
from lmdk_core.metrics import mae_metres

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_reserve import demodata  # one reader of the MovingPandas excerpt

GEOLIFE = Path("/work/evaldata/geolife_sample.txt.gz")
DEMODATA = Path("/work/evaldata/demodata_geolife.csv")
EPSILON, RADIUS_M, STEP_S = 1.0, 200.0, 30.0


def best_of(fn, repeat: int = 3) -> float:
    fn()  # warm-up (numba compilation, caches)
    return min(timeit.repeat(fn, number=1, repeat=repeat))


def median_points(rel: lc.Release, window: int) -> tuple[np.ndarray, np.ndarray]:
    m = rel.to_frame()[["lat", "lon"]].rolling(window, center=True, min_periods=1).median()
    return m["lat"].to_numpy(), m["lon"].to_numpy()


def timing(max_n: int) -> None:
    print("Part 1 — time (best of 3), Skip ε=1 r=200 m, one fix per 30 s")
    print(f"{'points':>9} {'smooth (s)':>11} {'fit (s)':>9} {'median15 (s)':>13} "
          f"{'smooth/median':>14}")
    rng = np.random.default_rng(0)
    n_values = [n for n in (10**4, 10**5, 10**6) if n <= max_n]
    for n in n_values:
        traj = pd.DataFrame({
            "time": pd.date_range("2024-01-01", periods=n, freq=f"{int(STEP_S)}s"),
            "lat": 40.0 + np.cumsum(rng.normal(0, 2e-4, n)),
            "lon": 116.0 + np.cumsum(rng.normal(0, 2e-4, n)),
        })
        rel = lc.release_locations(traj, np.arange(0, n, 7), epsilon=EPSILON, scheme="skip",
                                   radius_m=RADIUS_M, rng=1, noise="fast")
        t_s = best_of(lambda rel=rel: lc.smooth_release(rel))
        t_f = best_of(lambda rel=rel: lc.smooth_release(rel, motion="fit"))
        t_m = best_of(lambda rel=rel: median_points(rel, 15))
        print(f"{n:>9,} {t_s:>11.3f} {t_f:>9.3f} {t_m:>13.3f} {t_s / t_m:>14.2f}")


def read_traces(paths: list[Path] | None) -> tuple[str, pd.DataFrame]:
    """(name, frame of uid, time, lat, lon) of the trace files (default: the GeoLife excerpts
    that exist, else the bundled synthetic sample)."""
    if not paths:
        paths = [p for p in (GEOLIFE, DEMODATA) if p.exists()]
    if not paths:
        return "bundled synthetic sample", lc.load_sample()[["uid", "time", "lat", "lon"]]
    frames = []
    for path in paths:
        if path.name == "demodata_geolife.csv":  # MovingPandas: X = lon, Y = lat
            df = demodata(str(path))
        else:
            df = lc.read_trajectories(path)[["uid", "time", "lat", "lon"]]
            df["time"] = pd.to_datetime(df["time"], utc=True)
        frames.append(df)
    return ", ".join(p.name for p in paths), pd.concat(frames, ignore_index=True)


def accuracy(paths: list[Path] | None, draws: int) -> None:
    name, df = read_traces(paths)
    schemes = [s for s in ("skip", "uniform", "reserve") if s in lc.SCHEMES]
    print(f"\nPart 2 — mean error (m) and ratio to raw, {name}, ε={EPSILON:g}, "
          f"r={RADIUS_M:g} m, one fix per {STEP_S:g} s, landmarks = two longest stays, "
          f"{draws} simulated draws")
    rows = []
    for uid in lc.users(df):
        traj = lc.resample(lc.select_user(df, uid), STEP_S)
        places = lc.suggest_places(traj, top=2)
        mask = landmark_mask(traj, [(p.lat, p.lon, p.suggested_radius_m)
                                    for p in places.itertuples()])
        for scheme in schemes:
            acc: dict[str, list[float]] = {}
            for d in range(draws):
                rel = lc.release_locations(traj, mask, epsilon=EPSILON, scheme=scheme,
                                           radius_m=RADIUS_M, rng=100 + d, noise="fast")
                out = {"raw": mae_metres(traj, rel),
                       "smooth": mae_metres(traj, lc.smooth_release(rel)),
                       "smooth town": mae_metres(traj, lc.smooth_release(rel, motion="town")),
                       "smooth fit": mae_metres(traj, lc.smooth_release(rel, motion="fit")),
                       "median9": mae_metres(traj, median_points(rel, 9)),
                       "median15": mae_metres(traj, median_points(rel, 15))}
                if scheme == "reserve":  # as a batched evaluation row: no public figures
                    bare = dataclasses.replace(rel, params={"radius_m": RADIUS_M,
                                                            "noise": "fast"})
                    out["smooth bare"] = mae_metres(traj, lc.smooth_release(bare))
                for k, v in out.items():
                    acc.setdefault(k, []).append(v)
            mean = {k: float(np.mean(v)) for k, v in acc.items()}
            cols = [k for k in ("smooth", "smooth bare", "smooth town", "smooth fit", "median9",
                                "median15") if k in mean]
            rows.append({"person": uid, "points": len(traj), "landmark %": 100 * mask.mean(),
                         "scheme": scheme, "raw m": mean["raw"],
                         **{f"{k} ×raw": mean[k] / mean["raw"] for k in cols},
                         "smooth/median9": mean["smooth"] / mean["median9"]})
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        print("\nmean over people:")
        print(table.groupby("scheme")[[c for c in table.columns if "×raw" in c or "/" in c]]
              .mean().to_string(float_format=lambda v: f"{v:.3f}"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", type=Path, action="append", default=None,
                    help="trace file (repeatable): CSV with lat, lng or lon, datetime or time, "
                    "uid, or MovingPandas' demodata_geolife.csv (default: the GeoLife excerpts "
                    "in /work/evaldata if present, else the bundled sample)")
    ap.add_argument("--draws", type=int, default=3)
    ap.add_argument("--max-n", type=int, default=10**6)
    ap.add_argument("--skip-timing", action="store_true")
    args = ap.parse_args()
    if not args.skip_timing:
        timing(args.max_n)
    accuracy(args.trace, args.draws)


if __name__ == "__main__":
    main()
