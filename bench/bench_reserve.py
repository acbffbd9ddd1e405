"""Mean error of Reserve against Skip, Uniform and Adaptive (the thesis reconstruction), with the
ratio to Skip, on the bundled sample and on the GeoLife sample.

Per person: landmarks are either the timestamps of the person's two longest stays
(lmdk_core.stays.detect_stays, 100 m / 10 min) — "stays" — or of the two longest trips between
consecutive stays — "trips", where the landmarks move. Every scheme releases the person's trace
(ε = 1, r = 200 m, noise="fast", several seeds: a simulation); the error is the mean great-circle
distance between released and true points over the timestamps with a release (NaN before a
first release is left out), averaged over persons (weighted by points) and seeds. The GeoLife
sample (columns lat,lng,datetime,uid) is resampled to the first fix in each 30 s bin.

Timing: the automatic share (96 schedule passes) and a whole Reserve release against Skip's
release of the same synthetic trace (``--points`` fixes 5 s apart, landmark runs covering about
half of them, noise="fast"), in the same run.

Per person (the GeoLife sample's 001, 005 and MovingPandas' demodata trackers 0, 2, 19, each
resampled to one fix per 30 s): landmark sets stays, trips, scattered 10 % and 50 % (seeded);
Skip's noise-free displacement at the landmarks (the evaluation's "movement" measure), the
automatic share, the mean error of Skip, Uniform and Reserve and Reserve/Skip; then, for the
sets with movement (> r), Reserve at fixed shares 0.02–0.4 and speeds 0.1–10 m/s — what any
share could gain there (a measurement on the true data, not a rule: docs/landmark-reserve.md).

``--fills DRAWS``: instead, Skip's fills x̃_a + λ·w_t·(x̃_b − x̃_a) for λ = 0 (repeat), 0.25,
0.5 ("halfway"), 0.75, 1 ("interpolate") on bench/evaluation.py's real landmark sets at
ε = 0.1, 1, 10 (ratio to the repeat, same draws), and the fill's time against the repeat's.

Usage: python bench/bench_reserve.py [--seeds 5] [--geolife /work/evaldata/geolife_sample.txt.gz]
       [--demodata /work/evaldata/demodata_geolife.csv] [--speed 0.1] [--points 1000000]
       python bench/bench_reserve.py --fills 20 [--data /work/evaldata]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lmdk_core import haversine_m, release_locations  # noqa: E402
from lmdk_core.metrics import error_metres  # noqa: E402
from lmdk_core.sample import load_sample  # noqa: E402
from lmdk_core.schemes import reserve as rv  # noqa: E402
from lmdk_core.schemes._space import Space  # noqa: E402
from lmdk_core.stays import detect_stays  # noqa: E402

SCHEMES = ("skip", "uniform", "adaptive", "reserve")


def geolife(path: str, step_s: int = 30) -> pd.DataFrame:
    """GeoLife sample → (uid, time, lat, lon), first fix per ``step_s`` bin and person."""
    raw = pd.read_csv(path, dtype={"uid": str})
    df = pd.DataFrame({"uid": raw["uid"], "lat": raw["lat"], "lon": raw["lng"],
                       "time": pd.to_datetime(raw["datetime"], utc=True)})
    df = df.sort_values(["uid", "time"], kind="stable")
    df["bin"] = df["time"].dt.floor(f"{step_s}s")
    return df.drop_duplicates(["uid", "bin"]).drop(columns="bin").reset_index(drop=True)


def masks(person: pd.DataFrame) -> dict[str, np.ndarray]:
    """Landmark masks of one person: two longest stays, two longest trips between stays."""
    times = pd.DatetimeIndex(person["time"]).as_unit("ns").asi8
    stays = detect_stays(person[["time", "lat", "lon"]], stay_radius_m=100.0, min_duration_s=600.0)
    out = {}
    starts = np.searchsorted(times, pd.DatetimeIndex(stays["start"]).as_unit("ns").asi8)
    ends = np.searchsorted(times, pd.DatetimeIndex(stays["end"]).as_unit("ns").asi8, side="right")
    stay_mask = np.zeros(len(person), bool)
    for i in np.argsort(-stays["duration_s"].to_numpy())[:2]:
        stay_mask[starts[i]:ends[i]] = True
    out["stays"] = stay_mask
    trip_mask = np.zeros(len(person), bool)
    gaps = [(ends[i], starts[i + 1]) for i in range(len(stays) - 1) if starts[i + 1] > ends[i]]
    gaps.sort(key=lambda g: times[g[0]] - times[g[1] - 1])  # longest first
    for a, b in gaps[:2]:
        trip_mask[a:b] = True
    out["trips"] = trip_mask
    return out


def evaluate(frame: pd.DataFrame, seeds: int, speed: float | None
             ) -> tuple[dict[str, dict[str, float]], dict[str, list[float]]]:
    """({case: {scheme: mean error (m)}} over persons (weighted by points) and seeds,
    {case: Reserve's landmark share per person})."""
    sums: dict[str, dict[str, float]] = {}
    counts: dict[str, dict[str, int]] = {}
    shares: dict[str, list[float]] = {}
    for _, person in frame.groupby("uid", sort=True):
        person = person.reset_index(drop=True)
        for case, mask in masks(person).items():
            if not mask.any():
                continue
            for scheme in SCHEMES:
                params = {"speed": speed} if scheme == "reserve" and speed is not None else {}
                for seed in range(seeds):
                    rel = release_locations(person, mask, epsilon=1.0, radius_m=200.0,
                                            scheme=scheme, rng=seed, noise="fast", **params)
                    err = error_metres(person, rel)
                    ok = np.isfinite(err)
                    sums.setdefault(case, {}).setdefault(scheme, 0.0)
                    counts.setdefault(case, {}).setdefault(scheme, 0)
                    sums[case][scheme] += float(err[ok].sum())
                    counts[case][scheme] += int(ok.sum())
                    if scheme == "reserve" and seed == 0:
                        shares.setdefault(case, []).append(rel.params["landmark_share"])
    res = {c: {s: sums[c][s] / max(counts[c][s], 1) for s in SCHEMES} for c in sums}
    return res, shares


def report(name: str, res: dict[str, dict[str, float]], shares: dict[str, list[float]], n: int,
           lm: dict[str, float]) -> None:
    for case, row in res.items():
        print(f"{name:8s} {case:6s} landmarks {lm[case]:5.1%} of {n} points; auto shares "
              f"{', '.join(f'{s:.2f}' for s in shares.get(case, []))}")
        for scheme in SCHEMES:
            print(f"    {scheme:9s} {row[scheme]:10.0f} m   ratio vs skip "
                  f"{row[scheme] / row['skip']:6.3f}")


def landmark_shares(frame: pd.DataFrame) -> dict[str, float]:
    tot: dict[str, int] = {}
    for _, person in frame.groupby("uid", sort=True):
        for case, mask in masks(person.reset_index(drop=True)).items():
            tot[case] = tot.get(case, 0) + int(mask.sum())
    return {c: v / len(frame) for c, v in tot.items()}


def demodata(path: str, step_s: int = 30) -> pd.DataFrame:
    """MovingPandas' demodata_geolife.csv (X = lon, Y = lat) → (uid, time, lat, lon), first fix
    per ``step_s`` bin and tracker."""
    raw = pd.read_csv(path, sep=";")
    df = pd.DataFrame({"uid": "tracker " + raw["tracker"].astype(str),
                       "time": pd.to_datetime(raw["t"], utc=True, format="ISO8601"),
                       "lat": raw["Y"].astype(float), "lon": raw["X"].astype(float)})
    df = df.sort_values(["uid", "time"], kind="stable")
    df["bin"] = df["time"].dt.floor(f"{step_s}s")
    return df.drop_duplicates(["uid", "bin"]).drop(columns="bin").reset_index(drop=True)


def displacement(person: pd.DataFrame, mask: np.ndarray) -> float:
    """Mean distance (m) from each landmark's true point to the true point of the last regular
    moment before it (Skip's error at the landmarks without noise; NaN: none)."""
    idx = np.where(~mask, np.arange(mask.size), -1)
    np.maximum.accumulate(idx, out=idx)
    sel = mask & (idx >= 0)
    if not sel.any():
        return float("nan")
    lat, lon = person["lat"].to_numpy(), person["lon"].to_numpy()
    return float(haversine_m(lat[sel], lon[sel], lat[idx[sel]], lon[idx[sel]]).mean())


def per_person(frame: pd.DataFrame, seeds: int) -> None:
    """Per person and landmark set: movement, auto share, Skip/Uniform/Reserve, ratio; then the
    best any fixed share and speed reach on the sets with movement."""
    print("person     set            L   movement  share      skip   uniform   reserve  res/skip")
    moving = []
    worst = 0.0
    for uid, person in frame.groupby("uid", sort=True):
        person = person.reset_index(drop=True)
        sets = masks(person)
        for frac in (0.1, 0.5):
            pick = np.random.default_rng(7).choice(len(person), round(frac * len(person)),
                                                   replace=False)
            sets[f"scattered {frac:.0%}"] = np.isin(np.arange(len(person)), pick)
        for case, mask in sets.items():
            if not mask.any():
                continue
            err = {}
            for scheme in ("skip", "uniform", "reserve"):
                e = [np.nanmean(error_metres(person, rel := release_locations(
                    person, mask, epsilon=1.0, radius_m=200.0, scheme=scheme, rng=seed,
                    noise="fast"))) for seed in range(seeds)]
                err[scheme] = float(np.mean(e))
                if scheme == "reserve":
                    share = rel.params["landmark_share"]
            mov = displacement(person, mask)
            ratio = err["reserve"] / err["skip"]
            worst = max(worst, ratio)
            print(f"{uid:10s} {case:13s} {int(mask.sum()):5d} {mov:8.0f} m {share:5.2f} "
                  f"{err['skip']:9.0f} {err['uniform']:9.0f} {err['reserve']:9.0f} {ratio:9.3f}")
            if mov > 200.0:
                moving.append((uid, case, person, mask, err["skip"]))
    print(f"largest reserve/skip: {worst:.3f} (target ≤ 1.05)")
    print("sets with movement (> r = 200 m): best Reserve over fixed shares 0.02–0.4 × speeds "
          "0.1, 1, 10 m/s (measured on the true data)")
    for uid, case, person, mask, skip in moving:
        best = (np.inf, 0.0, 0.0)
        for share in (0.02, 0.05, 0.1, 0.2, 0.4):
            for speed in (0.1, 1.0, 10.0):
                e = np.mean([np.nanmean(error_metres(person, release_locations(
                    person, mask, epsilon=1.0, radius_m=200.0, scheme="reserve", rng=seed,
                    noise="fast", landmark_share=share, speed=speed)))
                    for seed in range(min(seeds, 3))])
                best = min(best, (float(e), share, speed))
        print(f"    {uid:10s} {case:13s} skip {skip:7.0f} m; best fixed reserve {best[0]:7.0f} m "
              f"(share {best[1]}, speed {best[2]}) = {best[0] / skip:.3f} × skip")


def timing(points: int) -> None:
    """Seconds of the automatic share and of whole releases, Reserve against Skip."""
    rng = np.random.default_rng(0)
    mask = np.cumsum(rng.random(points) < 1e-3) % 2 == 1
    trip = pd.DataFrame({"time": pd.date_range("2024-01-01", periods=points, freq="5s"),
                         "lat": 39.9 + np.cumsum(rng.normal(0, 1e-5, points)),
                         "lon": 116.4 + np.cumsum(rng.normal(0, 1e-5, points))})
    space = Space("locations", (trip["lat"].to_numpy(), trip["lon"].to_numpy()), 200.0,
                  np.arange(points) * 5.0)
    rv.auto_share(space, mask[:10], epsilon=1.0, speed=0.1)  # compile
    rv.schedule(space, mask[:10], epsilon=1.0, share=0.1, speed=0.1)
    t0 = time.perf_counter()
    rv.schedule(space, mask, epsilon=1.0, share=0.1, speed=0.1)
    one = time.perf_counter() - t0
    t0 = time.perf_counter()
    share = rv.auto_share(space, mask, epsilon=1.0, speed=0.1)
    auto = time.perf_counter() - t0
    out = {}
    for scheme in ("skip", "reserve"):
        t0 = time.perf_counter()
        release_locations(trip, mask, epsilon=1.0, scheme=scheme, rng=0, noise="fast")
        out[scheme] = time.perf_counter() - t0
    print(f"timing   {points} points, {mask.mean():.0%} landmarks: one schedule pass "
          f"{one:.3f} s; automatic share {auto:.2f} s (= {auto / one:.0f} passes, s = {share})")
    print(f"         release: skip {out['skip']:.2f} s, reserve {out['reserve']:.2f} s "
          f"(ratio {out['reserve'] / out['skip']:.2f})")


FILL_LAMBDAS = (0.0, 0.25, 0.5, 0.75, 1.0)
"""λ of the fill x̃_a + λ·w_t·(x̃_b − x̃_a): 0 repeat, 0.5 "halfway", 1 "interpolate"."""


def fills(data: Path, draws: int, epsilons: tuple[float, ...] = (0.1, 1.0, 10.0)) -> None:
    """Skip's fills at λ ∈ FILL_LAMBDAS on bench/evaluation.py's real landmark sets: per ε, the
    largest and the mean ratio to λ = 0 (the repeat) over the sets, the largest over the sets
    with movement, and the per-set ratios at ε = 1 (same draws for every λ)."""
    sys.path.insert(0, str(ROOT / "bench"))
    import evaluation as ev  # the evaluation's people, landmark sets and movement measure

    from lmdk_core import allocate, release_with_budget
    from lmdk_core.schemes.fill import interpolate_fill, time_axis
    from lmdk_core.times import utc_times

    people, _, _ = ev.load_people(data, None, False)
    for eps in epsilons:
        rows = []
        for p_i, person in enumerate(people):
            if person.group != "real":
                continue
            series = ev.Series("locations", (person.lat, person.lon), person.frame["time"],
                               ev.RADIUS_M, person.frame)
            tau = time_axis(utc_times(person.frame["time"]), person.n)
            for s_i, ls in enumerate(ev.landmark_sets(person, ev.SHARES, (p_i,))):
                if ls.kind in ("none", "all"):
                    continue
                budget = np.tile(allocate(person.n, ls.mask, epsilon=eps, scheme="skip"), draws)
                big = release_with_budget(
                    (np.tile(person.lat, draws), np.tile(person.lon, draws)), budget=budget,
                    radius_m=ev.RADIUS_M, noise="fast",
                    rng=np.random.default_rng([ev.SEED, 5, p_i, s_i]))
                cols = tuple(np.array(c).reshape(draws, -1) for c in (big.lat, big.lon))
                pub = np.array(big.published).reshape(draws, -1)
                err = [series.errors(interpolate_fill(cols, pub, tau, weight=lam,
                                                      longitude=True)).mean()
                       for lam in FILL_LAMBDAS]
                rows.append((f"{person.uid}, {ev.set_label(ls)}",
                             ev.skip_displacement(person.lat, person.lon, ls.mask),
                             *[e / err[0] for e in err]))
        df = pd.DataFrame(rows, columns=["set", "movement_m", *map(str, FILL_LAMBDAS)])
        moving = df["movement_m"] > ev.RADIUS_M
        print(f"fills    ε = {eps:g}, {draws} draws, {len(df)} sets ({int(moving.sum())} with "
              "movement): ratio to the repeat (λ = 0)")
        for lam in FILL_LAMBDAS[1:]:
            c = df[str(lam)]
            print(f"         λ = {lam:<4g} largest {c.max():.3f}  mean {c.mean():.3f}  largest "
                  f"with movement {c[moving].max():.3f}")
        if eps == 1.0:
            print(df.round(3).to_string(index=False))


def fill_timing(points: int) -> None:
    """Seconds of the delayed fill against the repeat (forward fill) over ``points`` moments."""
    from lmdk_core.schemes._space import forward_fill
    from lmdk_core.schemes.fill import interpolate_fill

    rng = np.random.default_rng(1)
    pub = np.cumsum(rng.random(points) < 1e-3) % 2 == 0
    cols = (rng.normal(size=points), rng.normal(size=points))
    tau = np.arange(points) * 5.0
    rep = itp = math.inf
    for _ in range(3):  # best of three (a shared machine)
        t0 = time.perf_counter()
        forward_fill(cols, pub)
        rep = min(rep, time.perf_counter() - t0)
        t0 = time.perf_counter()
        interpolate_fill(cols, pub, tau, weight=0.5, longitude=True)
        itp = min(itp, time.perf_counter() - t0)
    print(f"timing   fill of {points} points ({1 - pub.mean():.0%} filled), best of 3: repeat "
          f"{rep:.3f} s, halfway {itp:.3f} s (ratio {itp / rep:.1f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--speed", type=float, default=None,
                    help="Reserve's speed (default: the scheme's default)")
    ap.add_argument("--geolife", default="/work/evaldata/geolife_sample.txt.gz")
    ap.add_argument("--demodata", default="/work/evaldata/demodata_geolife.csv")
    ap.add_argument("--points", type=int, default=1_000_000)
    ap.add_argument("--fills", type=int, default=0, metavar="DRAWS",
                    help="only compare Skip's fills (λ grid) on the evaluation's real sets "
                         "(--data) with this many draws, and time the fill")
    ap.add_argument("--data", type=Path, default=Path("/work/evaldata"))
    args = ap.parse_args()
    if args.fills:
        fill_timing(args.points)
        fills(args.data, args.fills)
        return
    timing(args.points)
    data = {"sample": load_sample()[["uid", "time", "lat", "lon"]]}
    if Path(args.geolife).is_file():
        data["geolife"] = geolife(args.geolife)
    else:
        print(f"(GeoLife sample not found at {args.geolife}: skipped)")
    real = [f for f in (data.get("geolife"),
                        demodata(args.demodata) if Path(args.demodata).is_file() else None)
            if f is not None]
    if real:
        per_person(pd.concat(real, ignore_index=True), args.seeds)
    for name, frame in data.items():
        t0 = time.perf_counter()
        res, shares = evaluate(frame, args.seeds, args.speed)
        report(name, res, shares, len(frame), landmark_shares(frame))
        print(f"    ({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
