"""Thesis-style comparison: MAE of every scheme with and without dummy landmarks.

Reproduces the landmark thesis's dummy-landmark experiment (Katsomallos, "the-last-thing": "the
dummy landmark selection module introduces a reasonable data utility decline to all of our
schemes; however, Adaptive handles it well") on

1. the bundled sample (alice, Home and Clinic 100 m; every fix, and one fix per 5 minutes);
2. a real-data-shaped series: 1,000 hourly household energy readings shaped like the HUE data
   set the thesis used (daily and weekly cycle, log-normal noise; kWh), landmarks = the hours of
   highest use at 20/40/60/80 % of the series.

Same total ε for both variants (the dummy variant spends ε_sel of it on the selection). Each block
also prints the exact expected number of dummies and Uniform's expected noise factor
(lmdk_core.dummies.dummy_cost) next to the measured MAE ratios. Seeded:
a simulation, not a private release. Run: python bench/thesis_dummies.py [--runs N]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import lmdk_core as lm
from lmdk_core.comparison import compare_with_dummies
from lmdk_core.dummies import dummy_cost
from lmdk_core.interval import release_interval

EPSILON, EPSILON_SELECT, RADIUS_M = 1.0, 0.1, 200.0
SEED = 2025
"""Simulation seed of every comparison (compare_with_dummies(rng=SEED)): the table reproduces."""
LANDMARK_SCHEMES = ("uniform", "skip", "adaptive", "bd", "ba")


def hue_shaped(n: int = 1000, seed: int = 2) -> np.ndarray:
    """Hourly kWh: base load, morning and evening peaks, weekend lift, log-normal noise."""
    rng = np.random.default_rng(seed)
    h = np.arange(n)
    hour, day = h % 24, (h // 24) % 7
    shape = (0.45 + 0.5 * np.exp(-((hour - 7.5) ** 2) / 3) + 0.9 * np.exp(-((hour - 19) ** 2) / 5)
             + 0.15 * (day >= 5))
    return np.round(shape * rng.lognormal(0.0, 0.35, n), 2)


def verdict(df: pd.DataFrame) -> str:
    d = df.set_index("scheme").loc[list(LANDMARK_SCHEMES)]
    best = d["mae_ratio"].idxmin()
    ad = d.loc["adaptive"]
    lower_than_user = ad["mae_dummies"] < df.set_index("scheme").loc["user", "mae_dummies"]
    return (f"smallest MAE increase: {best} (x{d.loc[best, 'mae_ratio']:.2f}); adaptive "
            f"x{ad['mae_ratio']:.2f}, {'below' if lower_than_user else 'NOT below'} user-level "
            f"with dummies")


def show(title: str, df: pd.DataFrame, unit: str, mask: np.ndarray | None = None,
         epsilon_select: float = EPSILON_SELECT, generator: str = "greedy") -> None:
    print(f"\n{title}")
    if mask is not None:
        c = dummy_cost(mask, epsilon=EPSILON, epsilon_select=epsilon_select, generator=generator)
        print(f"  exact (lmdk_core.dummies.dummy_cost): E[dummies] {c.expected_dummies:,.1f}, "
              f"Uniform's noise scale x{c.noise_factor:.2f}")
    out = df[["scheme", "mae_real", "mae_dummies", "mae_ratio", "dummies_mean"]].copy()
    out.columns = ["scheme", f"MAE {unit} (L)", f"MAE {unit} (L')", "ratio", "mean dummies"]
    print(out.to_string(index=False, float_format=lambda v: f"{v:,.2f}"))
    print("  " + verdict(df))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    t0 = time.perf_counter()
    traj = lm.select_user(lm.load_sample(), "alice")
    places = [(39.9925, 116.3395, 100), (39.9820, 116.3564, 100)]
    L = lm.landmark_mask(traj, places)
    print(f"ε = {EPSILON} in total, ε_sel = {EPSILON_SELECT} of it for the dummy selection, "
          f"r = {RADIUS_M:.0f} m, {args.runs} runs, greedy options up to T")
    show(f"Sample, alice, every fix: T = {len(traj):,}, |L| = {L.sum():,}",
         compare_with_dummies(traj, L, epsilon=EPSILON, epsilon_select=EPSILON_SELECT,
                              runs=args.runs, rng=SEED, radius_m=RADIUS_M), "m", L)
    iv = release_interval(traj, L, interval_s=300)
    show(f"Sample, alice, one fix per 5 min: T = {iv.n_after:,}, |L| = {iv.landmarks_after:,}",
         compare_with_dummies(iv.trajectory, iv.landmarks, epsilon=EPSILON,
                              epsilon_select=EPSILON_SELECT, runs=args.runs, rng=SEED,
                              radius_m=RADIUS_M),
         "m", iv.landmarks)
    x = hue_shaped()
    for pct in (20, 40, 60, 80):
        Lx = x >= np.quantile(x, 1 - pct / 100)
        show(f"HUE-shaped hourly kWh: T = {x.size:,}, landmarks = top {pct} % hours "
             f"(|L| = {Lx.sum()}), Δ = 1 kWh",
             compare_with_dummies(x, Lx, epsilon=EPSILON, epsilon_select=EPSILON_SELECT,
                                  runs=args.runs, rng=SEED, sensitivity=1.0), "kWh", Lx)
    print("\nBernoulli dummies (generator='bernoulli', every pair covered, docs §5 Theorem B'), "
          "ε_sel = 0.5 of ε = 1:")
    show(f"Sample, alice, one fix per 5 min: T = {iv.n_after:,}, |L| = {iv.landmarks_after:,}",
         compare_with_dummies(iv.trajectory, iv.landmarks, epsilon=EPSILON, epsilon_select=0.5,
                              runs=args.runs, rng=SEED, radius_m=RADIUS_M,
                              generator="bernoulli"), "m",
         iv.landmarks, 0.5, "bernoulli")
    Lx = x >= np.quantile(x, 0.6)
    show(f"HUE-shaped hourly kWh, top 40 % hours (|L| = {Lx.sum()})",
         compare_with_dummies(x, Lx, epsilon=EPSILON, epsilon_select=0.5, runs=args.runs, rng=SEED,
                              sensitivity=1.0, generator="bernoulli"), "kWh", Lx, 0.5, "bernoulli")
    print(f"\n({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
