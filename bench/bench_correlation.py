"""Benchmark temporal_loss (BPL/FPL/TPL) against the per-timestamp fixed-point algorithm.

Usage: ``.venv/bin/python bench/bench_correlation.py [--T 10000] [--large 1000] [--baseline-steps 6]
[--section-only]``

Section recomputation (issue 10: under 150 ms for 10,000 points): what the privacy-loss
section recomputes when a place or the budget changes — the bounds of Theorems 1–3 for the
worst pair and the chosen pair under a cached model (public preset, model of released points,
DP model) plus the Plotly figure — against the baseline of rebuilding the model's envelopes
on every rerun (what an uncached page would pay).

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


def mobility_matrix(n: int, rng: np.random.Generator, width: int = 5,
                    smoothing: float = 0.01) -> np.ndarray:
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
          f" {'baseline s/step':>16s} {'baseline 2T s (extrap.)':>24s} {'speed-up':>9s}"
          f" {'max |diff|':>11s}")
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


def section(T: int, repeat: int) -> None:
    """Time the privacy-loss section's recomputation on T points of the bundled sample."""
    import pandas as pd

    from lmdk_core import figures
    from lmdk_core.accounting import landmark_guarantee
    from lmdk_core.allocation import allocate
    from lmdk_core.correlation import (
        CorrelationModel,
        dp_grid_model,
        model_loss,
        public_grid_model,
        trajectory_model,
    )
    from lmdk_core.sample import load_sample

    s = load_sample()
    traj = s[s.uid == s.uid.iloc[0]].iloc[:T].reset_index(drop=True)
    T = len(traj)
    mask = np.zeros(T, dtype=bool)
    mask[::50] = True
    eps = allocate("uniform", T, mask, 1.0)
    g = landmark_guarantee(eps, mask)
    rng = np.random.default_rng(1)
    noisy = pd.DataFrame({"lat": traj.lat + rng.normal(0, 2e-3, T),
                          "lon": traj.lon + rng.normal(0, 2e-3, T)})  # stand-in released points
    models = {
        "public preset (30 cells)": lambda: public_grid_model("moderate", radius_m=200.0),
        "released points (500 m cells)": lambda: trajectory_model(
            noisy, source="released", radius_m=200.0, cell_m=500.0),
        "DP estimate (10 km / 1 km)": lambda: dp_grid_model(
            traj, epsilon_model=0.5, protected_events=int(mask.sum()) + 1,
            centre=(39.99, 116.33), extent_m=10_000.0, cell_m=1000.0, radius_m=200.0, rng=0),
    }
    print(f"\nprivacy-loss section recomputation, T = {T:,} points, {int(mask.sum())} landmarks "
          f"(median of {repeat})")
    print(f"{'model':32s} {'states':>6s} {'section ms':>11s} {'rebuild-model baseline ms':>26s}"
          f" {'ratio':>7s}")
    for name, make in models.items():
        m = make()

        def recompute(m: CorrelationModel = m) -> None:
            lm = model_loss(eps, mask, m, separation=200.0)
            figures.loss_figure(eps, g, epsilon=1.0, temporal=lm.loss, landmark_loss=lm,
                                max_points=400, pair_label="places 200 m apart")

        recompute()
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            recompute()
            times.append(time.perf_counter() - t0)
        sec = float(np.median(times)) * 1e3
        t0 = time.perf_counter()
        # the timing does not depend on the model's source (a caller's model here)
        fresh = CorrelationModel.from_matrices(m.P_backward, m.P_forward, m.steps)
        recompute(fresh)
        base = (time.perf_counter() - t0) * 1e3
        print(f"{name:32s} {m.n_states:6d} {sec:11.1f} {base:26.1f} {base / sec:6.1f}x",
              flush=True)
    print("target: section under 150 ms at T = 10,000 (model cached per session).")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--T", type=int, default=10_000)
    ap.add_argument("--small", type=int, default=200)
    ap.add_argument("--large", type=int, default=1000)
    ap.add_argument("--baseline-steps", type=int, default=6,
                    help="fixed-point baseline steps per matrix (n = small); "
                         "1 step at n = large, 0 = skip")
    ap.add_argument("--section-only", action="store_true", help="only the section timing")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    # warm the numba cache so compile/load time is not charged to the first matrix
    EnvelopeLoss(synthetic_transition_matrix(3, 0.1))(np.array([0.1]))
    temporal_loss([0.1, 0.1], np.eye(2))
    section(args.T, args.repeat)
    if args.section_only:
        return
    rng = np.random.default_rng(2024)
    run(args.small, args.T, args.baseline_steps, rng)
    run(args.large, args.T, min(args.baseline_steps, 1), rng)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak resident memory: {rss:.0f} MB "
          "(fixed-point baseline included, processed in row blocks)")
    print("baseline = per-timestamp fixed point over all ordered pairs, run on a few steps and "
          "extrapolated to 2T steps; shared 2-core machine: figures are noisy.")


if __name__ == "__main__":
    main()
