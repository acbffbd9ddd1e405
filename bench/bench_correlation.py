"""Benchmark temporal_loss (BPL/FPL/TPL) against the per-timestamp fixed-point algorithm.

Usage: ``.venv/bin/python bench/bench_correlation.py [--T 10000] [--large 1000] [--baseline-steps 6]``

For each matrix: the once-per-matrix precomputation (EnvelopeLoss, the upper hull of the L(α)
candidates), the recursion over T timestamps (BPL and FPL, 2T envelope evaluations) and the
total. The baseline is Cao et al.'s fixed point per ordered row pair recomputed at every step
(:func:`loss_increment_fixed_point`, numpy, O(n³) per step): it is run on ``--baseline-steps``
loss values taken from the real BPL series and extrapolated to the 2T steps of a full TPL
computation (stated as such in the output); its values are checked against the envelope on
those steps. Targets (2-core machine): n = 200, T = 10,000 under 0.5 s; n = 1,000 under 30 s
including precomputation; memory under 2 GB. Wall-clock figures on a shared machine are noisy.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from lmdk_core.correlation import (
    EnvelopeLoss,
    loss_increment_fixed_point,
    synthetic_transition_matrix,
    temporal_loss,
)


def mobility_matrix(n: int, rng: np.random.Generator, width: int = 5, smoothing: float = 0.01) -> np.ndarray:
    """Banded 'move to a nearby state' matrix plus a small pseudo-count (like estimated ones)."""
    P = np.zeros((n, n))
    for a in range(n):
        lo, hi = max(0, a - width), min(n, a + width + 1)
        P[a, lo:hi] = rng.random(hi - lo)
        P[a, a] += 2.0
    P += smoothing / n
    return P / P.sum(1, keepdims=True)


def matrices(n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "synthetic moderate": synthetic_transition_matrix(n, "moderate"),
        "mobility (banded+smoothing)": mobility_matrix(n, rng),
        "dense Dirichlet(1)": rng.dirichlet(np.ones(n), size=n),
        "spiky Dirichlet(0.05)": rng.dirichlet(np.full(n, 0.05), size=n),
    }


def run(n: int, T: int, baseline_steps: int, rng: np.random.Generator) -> None:
    eps = np.full(T, 0.1)
    print(f"\nn = {n} states, T = {T} timestamps (eps_t = 0.1)")
    print(f"{'matrix':30s} {'cands':>6s} {'precomp s':>10s} {'recursion s':>12s} {'total s':>8s}"
          f" {'baseline s/step':>16s} {'baseline 2T s (extrap.)':>24s} {'speed-up':>9s} {'max |diff|':>11s}")
    for name, P in matrices(n, rng).items():
        t0 = time.perf_counter()
        env = EnvelopeLoss(P)
        t1 = time.perf_counter()
        r = temporal_loss(eps, env, env)
        t2 = time.perf_counter()
        total = t2 - t0
        line = (f"{name:30s} {env.n_candidates:6d} {t1 - t0:10.3f} {t2 - t1:12.4f} {total:8.3f}")
        if baseline_steps > 0:
            idx = np.linspace(0, T - 2, baseline_steps).astype(int)
            alphas = r.bpl[idx]
            tb = time.perf_counter()
            ref = loss_increment_fixed_point(P, alphas)
            per_step = (time.perf_counter() - tb) / baseline_steps
            diff = float(np.max(np.abs(ref - env(alphas))))
            extrap = per_step * 2 * T
            line += f" {per_step:16.4f} {extrap:24.1f} {extrap / total:8.0f}x {diff:11.1e}"
        print(line, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--T", type=int, default=10_000)
    ap.add_argument("--small", type=int, default=200)
    ap.add_argument("--large", type=int, default=1000)
    ap.add_argument("--baseline-steps", type=int, default=6,
                    help="fixed-point baseline steps per matrix (n = small); 1 step at n = large, 0 = skip")
    args = ap.parse_args()
    # warm the numba cache so compile/load time is not charged to the first matrix
    EnvelopeLoss(synthetic_transition_matrix(3, 0.1))(np.array([0.1]))
    temporal_loss([0.1, 0.1], np.eye(2))
    rng = np.random.default_rng(2024)
    run(args.small, args.T, args.baseline_steps, rng)
    run(args.large, args.T, min(args.baseline_steps, 1), rng)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak resident memory: {rss:.0f} MB (fixed-point baseline included, processed in row blocks)")
    print("baseline = per-timestamp fixed point over all ordered pairs, run on a few steps and "
          "extrapolated to 2T steps; shared 2-core machine: figures are noisy.")


if __name__ == "__main__":
    main()
