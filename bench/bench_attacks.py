"""The My trace page's attack panel (section 4b) on the bundled sample, against a naive version.

For alice with Home (39.9925, 116.3395, 100 m) and Clinic (39.9820, 116.3564, 100 m) at the
page's defaults (Skip, ε = 1, r = 200 m), this times what section 4b computes on a change of
setting — :func:`lmdk_core.attacks.attack_report`: 20 seeded simulated releases, the home/work
density search, the repeat runs and the visit attack on each, as released and after
:func:`lmdk_core.smooth_release` (issue 28: the attacker who smooths the file first), the raw
trace and the baseline — and, in the same run:

* **naive**: the same attacks written the obvious way — the densest spot by counting, for every
  night/working-hours point, the weight of all points within the search radius (O(n²)), stays
  from :func:`lmdk_core.stays.suggest_places` on every release, and the visit attack as a Python
  loop over the points, on each release and on its smoothed version (the same smoother: there is
  no naive twin of it); timed on ``--naive-draws`` releases and scaled to 20;
* **smoothing alone**: the 20 ``smooth_release`` calls inside the panel (its added cost);
* **cached rerun**: the page's second run at the same setting (``st.cache_resource``: a dict
  look-up; measured here as a memoised call).

Target: the panel's work under 1 s on the sample. Seeded simulations only: nothing is released.
Last, the two attackers' medians for alice's home at ε = 0.1, 1 and 10 (20 draws, seed 0).
Run: python bench/bench_attacks.py [--repeats 3] [--naive-draws 2]
"""

from __future__ import annotations

import argparse
import functools
import time

import numpy as np

import lmdk_core as lm
from lmdk_core import attacks as at
from lmdk_core.session import ReleaseSettings, _draw
from lmdk_core.stays import suggest_places

PLACES = [lm.Place("Home", 39.9925, 116.3395, 100.0), lm.Place("Clinic", 39.9820, 116.3564, 100.0)]
SETTINGS = ReleaseSettings(epsilon=1.0, radius_m=200.0)


def naive_densest(x: np.ndarray, y: np.ndarray, w: np.ndarray, reach: float) -> tuple:
    best, where = -1.0, (np.nan, np.nan)
    for i in range(x.size):  # every point as a candidate centre
        near = (x - x[i]) ** 2 + (y - y[i]) ** 2 <= reach**2
        score = float(w[near].sum())
        if score > best:
            best, where = score, (x[i], y[i])
    return where


def naive_one(trace: at.PublicTrace, eps: float, r: float, truth: np.ndarray) -> None:
    """The attacks on one release, written the obvious way."""
    reach = 50.0 + float(at.noise_quantile(0.9, epsilon=eps, radius_m=r))
    local_h = (trace.time / 3.6e12 + 8) % 24.0
    x, y = lm.degrees_to_metres(39.99, 116.34, trace.lat, trace.lon)
    w = np.minimum(np.diff(trace.time, append=trace.time[-1:]) / 1e9, at.MAX_DWELL_S)
    for sel in ((local_h >= 22) | (local_h < 6), (local_h >= 9) & (local_h < 17)):
        naive_densest(x[sel], y[sel], w[sel], reach)
    suggest_places(trace.frame(), top=at.STAY_GUESSES)
    thr = 100.0 + float(at.noise_quantile(0.5, epsilon=eps, radius_m=r))
    for p in PLACES:
        said = [lm.haversine_m(a, b, p.lat, p.lon) <= thr for a, b in
                zip(trace.lat, trace.lon, strict=True)]
        np.count_nonzero(np.asarray(said) & truth[trace.rows])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--naive-draws", type=int, default=2)
    args = ap.parse_args()
    alice = lm.select_user(lm.load_sample(), "alice")
    at.attack_report(alice, PLACES, settings=SETTINGS, rng=99, draws=1)  # imports, caches

    fast, cpu = [], []
    for rep in range(args.repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        report = at.attack_report(alice, PLACES, settings=SETTINGS, rng=rep)
        fast.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    panel = float(np.median(fast))

    mask = lm.landmark_mask(alice, PLACES)
    truth = np.asarray(lm.landmarks.place_masks(alice, PLACES).any(axis=0), dtype=bool)
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(args.naive_draws):
        rel, _, _ = _draw(alice, mask, SETTINGS, None, rng=np.random.default_rng(i))
        for shown in (rel, lm.smooth_release(rel)):  # as released, then smoothed first
            naive_one(at.public_trace(shown), SETTINGS.epsilon, SETTINGS.radius_m, truth)
    naive = (time.perf_counter() - t0) / args.naive_draws * at.ATTACK_DRAWS
    naive_cpu = (time.process_time() - c0) / args.naive_draws * at.ATTACK_DRAWS

    rels = [_draw(alice, mask, SETTINGS, None, rng=np.random.default_rng(i))[0]
            for i in range(at.ATTACK_DRAWS)]
    smooth = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        for rel in rels:
            lm.smooth_release(rel)
        smooth.append(time.perf_counter() - t0)

    memo = functools.lru_cache(maxsize=4)(
        lambda key: at.attack_report(alice, PLACES, settings=SETTINGS, rng=key))
    memo(0)
    t0 = time.perf_counter()
    memo(0)
    cached = time.perf_counter() - t0

    print(f"sample alice, {len(alice):,} moments, places Home + Clinic, Skip ε = 1, r = 200 m, "
          f"{at.ATTACK_DRAWS} simulated releases")
    print(f"panel (attack_report)   median of {args.repeats}: {panel:8.3f} s   "
          f"(runs: {', '.join(f'{t:.3f}' for t in fast)})")
    print(f"panel CPU time (this process)     {float(np.median(cpu)):8.3f} s   (the wall time "
          "above includes waiting for a shared CPU)")
    print(f"naive (scaled to {at.ATTACK_DRAWS} draws from {args.naive_draws}): {naive:8.3f} s   "
          f"CPU {naive_cpu:.3f} s")
    print(f"ratio naive / panel:              {naive / panel:8.1f} x   "
          f"(CPU: {naive_cpu / float(np.median(cpu)):.1f} x)")
    print(f"of which smoothing 20 releases:   {float(np.median(smooth)):8.3f} s   "
          f"({float(np.median(smooth)) / panel:.0%} of the panel)")
    print(f"cached rerun (same setting):      {cached * 1e6:8.1f} µs")
    print(f"target < 1 s: {'met' if panel < 1.0 else 'NOT met'}")
    print(report.table().round(2).set_index("place").T.to_string())
    print("\nalice's Home, Skip, r = 200 m, median distance (m) over 20 simulated releases, seed 0")
    for eps in (0.1, 1.0, 10.0):
        row = at.attack_report(alice, PLACES[:1], settings={"epsilon": eps, "radius_m": 200.0},
                               rng=0).table().iloc[0]
        print(f"  ε = {eps:<4g}  from the file {row.release_median_m:7.0f}   after smoothing it "
              f"{row.smoothed_median_m:7.0f}   raw trace {row.raw_m:4.0f}   no data "
              f"{row.baseline_median_m:5.0f}   shown: {row.attacker}")


if __name__ == "__main__":
    main()
