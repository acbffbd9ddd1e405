"""Benchmark: the Jupyter explorer's Python-side response to one map click.

A click (a custom widget message) adds a place, recomputes the landmark mask, a new release,
G_t, the errors and the loss under the chosen correlation model, redraws the map layers and
rebuilds the three charts as Plotly mimetype bundles. Printed: median wall time over
``--repeat`` clicks (ms), split into the session's recomputation and the widget update, and the
ratio to a baseline measured in the same run: the library release alone
(``release_locations`` with the same mask), what any recomputation must at least do.
The browser's own rendering is not included (measured by tests/test_jupyter_browser.py).

Never fails on timing. The machine may be shared: treat figures as indicative.

    python bench/bench_jupyter.py [--n 3000] [--loss moderate] [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import lmdk_core as lk
from lmdk_core.jupyter import explore


def median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=3000, help="timestamps (first n of the sample)")
    ap.add_argument("--loss", default="moderate", help="correlation model of the loss chart")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()

    sample = lk.load_sample()
    user = sample["uid"].value_counts().index[0]
    traj = lk.select_user(sample, user).iloc[: args.n].reset_index(drop=True)
    ex = explore(traj, interval_s=None, loss_model=args.loss)
    rng = np.random.default_rng(0)
    lat = traj["lat"].to_numpy()
    lon = traj["lon"].to_numpy()
    picks = iter(rng.integers(0, len(traj), 10 * args.repeat))

    def click() -> None:
        i = next(picks)
        ex.map.click(float(lat[i]), float(lon[i]))

    def session_only() -> None:
        i = next(picks)
        ex.session.add_place(float(lat[i]), float(lon[i]))

    def baseline() -> None:
        lk.release_locations(traj, ex.result.landmarks, epsilon=1.0, scheme="skip",
                             radius_m=200.0)

    click()  # warm-up (JIT, caches of the correlation model)
    base = median_ms(baseline, args.repeat)
    total = median_ms(click, args.repeat)
    core = median_ms(session_only, args.repeat)
    print(f"explorer click, n={len(traj):,} timestamps, loss model {args.loss!r}")
    print(f"  baseline release_locations        {base:8.1f} ms  (1.0x)")
    print(f"  session recomputation             {core:8.1f} ms  ({core / base:.1f}x)")
    print(f"  click -> map + charts updated     {total:8.1f} ms  ({total / base:.1f}x)")


if __name__ == "__main__":
    main()
