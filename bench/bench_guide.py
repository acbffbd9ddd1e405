"""The guide's numbers on the bundled sample (alice), as the page computes them on a map click:
the closed forms alone (the page's default: its trial releases wait for their switch), or with
one seeded trial release of each data-dependent scheme (``smooth=True``: every scheme's trial,
smoothed — what the page computes with the switch on and smoothing on, the landmark-free trials
reused as the page does), and the Skip target search (``epsilon_for_mean_error``), against the
baseline of the page's own release (one release of the selected scheme, measured in the same
run).

    python bench/bench_guide.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lmdk_core import advice, release_locations
from lmdk_core.landmarks import landmark_mask
from lmdk_core.sample import load_sample


def median_s(fn, repeat: int) -> float:
    """Median CPU seconds of this thread (robust to the shared machine's load)."""
    out = []
    for _ in range(repeat):
        t0 = time.thread_time()
        fn()
        out.append(time.thread_time() - t0)
    return statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    df = load_sample()
    traj = df[df.uid == df.uid.iloc[0]].reset_index(drop=True)
    lab = traj.groupby("place")[["lat", "lon"]].median()
    places = [(lab.loc[p, "lat"], lab.loc[p, "lon"], 100.0) for p in ("home", "clinic")]
    cases = {"no places": np.zeros(len(traj), bool), "Home + Clinic": landmark_mask(traj, places)}
    kw = dict(epsilon=1.0, radius_m=200.0)
    # warm-up: numba compilation is a one-off per process, not the guide's cost
    advice.estimate_errors(traj, cases["Home + Clinic"], **kw, smooth=True)
    advice.epsilon_for_mean_error(traj, cases["Home + Clinic"], scheme="skip",
                                  target_error_m=500.0, radius_m=200.0)
    release_locations(traj, cases["Home + Clinic"], scheme="skip", **kw)
    print(f"sample: {len(traj):,} moments; median CPU of {args.repeat} runs (ms)")
    print(f"{'case':<15} {'|L|':>6} {'formulas':>9} {'formulas+raw':>13} {'smoothed':>9} "
          f"{'Skip target':>12} {'release':>8} {'smoothed/release':>17}")
    for name, mask in cases.items():
        reuse: dict = {}
        advice.estimate_errors(traj, mask, **kw, smooth=True, reuse=reuse)  # landmark-free kept
        formulas = median_s(lambda m=mask: advice.estimate_errors(traj, m, **kw,
                                                                  simulate=False), args.repeat)
        raw = median_s(lambda m=mask: advice.estimate_errors(traj, m, **kw), args.repeat)
        smooth = median_s(lambda m=mask, r=reuse: advice.estimate_errors(
            traj, m, **kw, smooth=True, reuse=r), args.repeat)
        target = median_s(lambda m=mask: advice.epsilon_for_mean_error(
            traj, m, scheme="skip", target_error_m=500.0, radius_m=200.0), args.repeat)
        base = median_s(lambda m=mask: release_locations(traj, m, scheme="skip", **kw),
                        args.repeat)
        print(f"{name:<15} {int(mask.sum()):>6,} {1000 * formulas:>9.2f} {1000 * raw:>13.1f} "
              f"{1000 * smooth:>9.1f} "
              f"{1000 * target:>12.1f} {1000 * base:>8.1f} {smooth / base:>17.2f}")


if __name__ == "__main__":
    main()
