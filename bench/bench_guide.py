"""The guide's error estimates on the bundled sample (alice): closed forms plus one seeded trial
release of each data-dependent scheme, against the baseline of the page's own release (one
release of the selected scheme, measured in the same run).

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
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
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
    # warm-up: numba compilation is a one-off per process, not the guide's cost
    advice.estimate_errors(traj, cases["Home + Clinic"], epsilon=1.0, radius_m=200.0)
    release_locations(traj, cases["Home + Clinic"], epsilon=1.0, scheme="skip", radius_m=200.0)
    print(f"sample: {len(traj):,} moments; median of {args.repeat} runs")
    print(f"{'case':<15} {'|L|':>6} {'guide (ms)':>11} {'release (ms)':>13} {'ratio':>6}")
    for name, mask in cases.items():
        guide = median_s(lambda m=mask: advice.estimate_errors(traj, m, epsilon=1.0,
                                                                radius_m=200.0), args.repeat)
        base = median_s(lambda m=mask: release_locations(traj, m, epsilon=1.0, scheme="skip",
                                                         radius_m=200.0), args.repeat)
        print(f"{name:<15} {int(mask.sum()):>6,} {1000 * guide:>11.1f} {1000 * base:>13.1f} "
              f"{guide / base:>6.2f}")


if __name__ == "__main__":
    main()
