"""The ledger's work on every rerun of the page: the total spent, the totals at 1 km and 5 km and
the plan of the next draw, with two real draws of N moments recorded. Baseline in the same run:
the same questions asked of fresh objects (what every rerun cost before the ledger memoised its
totals and the session its plans). Prints figures; never fails on timing.

Usage: python bench/bench_ledger_rerun.py [--points 1000000] [--reruns 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
import pandas as pd

from lmdk_core.ledger import ReleaseLedger
from lmdk_core.session import ReleaseSettings, Session


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=1_000_000)
    ap.add_argument("--reruns", type=int, default=5)
    args = ap.parse_args()
    n = args.points
    rng = np.random.default_rng(0)
    traj = pd.DataFrame({"time": pd.date_range("2024-01-01", periods=n, freq="s", tz="UTC"),
                         "lat": 40 + np.cumsum(rng.normal(0, 1e-5, n)), "lon": np.full(n, 116.0)})
    mask = np.zeros(n, bool)
    mask[::50] = True
    s = Session(total_budget=100)
    base = ReleaseSettings(epsilon=1.0, scheme="uniform")
    s.draw("p", traj, mask, base, key=1)
    s.draw("p", traj, mask, base.but(epsilon=0.5), key=2)
    nxt = base.but(epsilon=0.7)

    def rerun(session: Session) -> float:
        t = time.perf_counter()
        session.spent("p")
        session.loss_at("p", [1000.0, 5000.0])
        session.plan("p", traj, mask, nxt, key=3)
        return time.perf_counter() - t

    cold = []
    for _ in range(args.reruns):  # fresh ledger and session objects: nothing memoised
        fresh = Session(total_budget=100)
        book = fresh._book("p")
        book.ledger = ReleaseLedger(s.ledger("p").entries)
        book.reference_m = s.reference_m("p")
        cold.append(rerun(fresh))
    rerun(s)  # the first rerun after a draw computes once
    warm = [rerun(s) for _ in range(args.reruns)]
    c, w = statistics.median(cold), statistics.median(warm)
    print(f"{n:,} moments per draw, 2 draws recorded; {args.reruns} reruns each")
    print(f"every question computed afresh   median {c:.3f} s")
    print(f"memoised (a rerun of the page)   median {w:.4f} s")
    print(f"ratio                            {c / w:,.0f}x")


if __name__ == "__main__":
    main()
