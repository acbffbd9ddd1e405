"""Benchmark the pattern-level pipeline: extraction, matching, PPMs, and one evaluation step.

Usage: ``python bench/bench_patterns.py [--taxis 2000] [--days 7] [--repeat 2]``
(T-Drive scale: ``--taxis 10357 --days 7``, about 15 M points; needs ~6 GB RAM and a few minutes).

Figures (wall clock, noisy on a shared machine), each with an in-run baseline ratio:

* generation of the synthetic taxi set (points/s);
* event extraction (region assignment + enter events) in points/s, and matching of 5 patterns
  in events/s; the baseline is one ``np.argsort`` of the same number of float64 values;
* Uniform PPM and event-level RR in input events/s and ticks/s; the baseline is drawing one
  raw 64-bit random word per (tick, protected type) — the PPM's irreducible cost;
* one step of the evaluation protocol (5-min ticks, patterns from day 1, Uniform PPM, matching,
  quality) for one ε and seed, also summed with generation and extraction;
* the page's recompute on the bundled 4-person sample (extraction, 3 mechanisms x 6 ε, Q).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import lmdk_core as lm
from lmdk_core.patterns import (
    Pattern,
    event_rr,
    match_all,
    quality,
    region_events,
    uniform_ppm,
)
from lmdk_core.patterns.evaluate import choose_patterns
from lmdk_core.patterns.taxi import hotspot_regions, taxi_trajectories


def best_of(fn, repeat: int) -> tuple[float, object]:
    best, out = np.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def page_recompute() -> float:
    """The page's work on the bundled sample: events, 3 mechanisms x 6 ε, quality."""
    traj = lm.load_sample()
    places = [lm.Place(n, la, lo, 150) for n, la, lo in (
        ("Home", 39.992428, 116.339452), ("Work", 39.983636, 116.307472),
        ("Clinic", 39.982046, 116.356350), ("Shop", 39.978001, 116.319532))]
    t0 = time.perf_counter()
    s = region_events(traj, places, kinds=("enter", "leave")).coarsen(300)
    pats = [Pattern(("leave:Home", "enter:Clinic"), 7200, private=True),
            Pattern(("leave:Home", "enter:Work"), 7200),
            Pattern(("leave:Work", "enter:Home"), 7200)]
    pub = [p for p in pats if not p.private]
    truth = match_all(s, pub)
    types = sorted({t for p in pats for t in p.types})
    for eps in (0.1, 0.5, 1, 2, 4, 8):
        for rel in (uniform_ppm(s, pats, epsilon=eps, rng=1),
                    uniform_ppm(s, pats, epsilon=eps, neighbour="event", rng=1),
                    event_rr(s, pats, epsilon=eps, types=types, rng=1)):
            quality(truth, match_all(rel.stream, pub))
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--taxis", type=int, default=2000)
    ap.add_argument("--days", type=float, default=7.0)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    taxi_trajectories(10, days=1)  # compile / load the numba kernels outside the timings

    t_total = time.perf_counter()
    t_gen, traj = best_of(lambda: taxi_trajectories(args.taxis, days=args.days), 1)
    n_pts = len(traj)
    print(f"taxi set: {args.taxis} taxis x {args.days:g} days = {n_pts:,} points "
          f"({n_pts / args.taxis:,.0f} per taxi; T-Drive: ~1,450 per taxi-week)")
    print(f"  generation           {t_gen:7.2f} s  {n_pts / t_gen / 1e6:6.2f} M points/s")

    regions = hotspot_regions()
    t_ext, stream = best_of(lambda: region_events(traj, regions), args.repeat)
    t_sort, _ = best_of(lambda: np.argsort(traj["lat"].to_numpy()), args.repeat)
    print(f"  extraction           {t_ext:7.2f} s  {n_pts / t_ext / 1e6:6.2f} M points/s "
          f"-> {len(stream):,} events  (ratio vs argsort of the points: {t_ext / t_sort:.1f})")

    pats = choose_patterns(stream, 4)
    t_match, matches = best_of(lambda: match_all(stream, pats), args.repeat)
    n_ev = len(stream)
    print(f"  matching 5 patterns  {t_match:7.2f} s  {n_ev / t_match / 1e6:6.2f} M events/s "
          f"({sum(len(m) for m in matches):,} matches)")
    print(f"  extraction+matching  {t_ext + t_match:7.2f} s  "
          f"{n_ev / (t_ext + t_match) / 1e6:6.2f} M events/s, "
          f"{n_pts / (t_ext + t_match) / 1e6:6.2f} M points/s")

    types = sorted({t for p in pats for t in p.types})
    n_prot = pats[0].m
    t_ppm, _ = best_of(lambda: uniform_ppm(stream, pats, epsilon=1.0, rng=1), args.repeat)
    t_raw, _ = best_of(lambda: np.random.default_rng(1).bit_generator.random_raw(
        stream.n_ticks * n_prot), args.repeat)
    print(f"  Uniform PPM          {t_ppm:7.2f} s  {n_ev / t_ppm / 1e6:6.2f} M events/s, "
          f"{stream.n_ticks * n_prot / t_ppm / 1e6:6.1f} M indicators/s "
          f"(ratio vs raw draws: {t_ppm / t_raw:.1f})")
    t_rr, _ = best_of(lambda: event_rr(stream, pats, epsilon=1.0, types=types, rng=1),
                      args.repeat)
    print(f"  event-level RR       {t_rr:7.2f} s  {n_ev / t_rr / 1e6:6.2f} M events/s "
          f"({len(types)} types)")

    # the evaluation protocol for one ε and seed: coarsen to 5-min ticks, patterns from day 1,
    # Uniform PPM on the rest, match the public patterns, Q (generation and extraction above)
    t0 = time.perf_counter()
    ticks = stream.coarsen(300)
    split = (int(ticks.tick_time.min()) // 86_400_000_000_000 + 1) * 86_400_000_000_000
    history, rest = ticks.time_slice(stop=split), ticks.time_slice(start=split)
    pats = choose_patterns(history, 4)
    pub = [p for p in pats if not p.private]
    truth = match_all(rest, pub)
    t_prep = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = uniform_ppm(rest, pats, epsilon=1.0, rng=2)
    q = quality(truth, match_all(out.stream, pub)).q
    t_step = time.perf_counter() - t0
    print(f"  protocol, one ε and seed: coarsen+split+patterns+truth {t_prep:.2f} s, "
          f"PPM+match+Q {t_step:.2f} s (Q = {q:.3f}); with generation and extraction "
          f"{t_gen + t_ext + t_prep + t_step:.1f} s")
    print(f"whole benchmark run: {time.perf_counter() - t_total:.1f} s")
    t_page = min(page_recompute() for _ in range(args.repeat))
    print(f"page recompute on the bundled sample: {t_page:.2f} s (target ≤ 1 s)")


if __name__ == "__main__":
    main()
