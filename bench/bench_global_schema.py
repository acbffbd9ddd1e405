"""Benchmark the population temporal loss under the global schema (docs/temporal-loss.md §10).

Usage: ``.venv/bin/python bench/bench_global_schema.py [--people 10000] [--T 168] [--models 20]``

``population_temporal_loss`` groups the people by model, computes each distinct budget row once
and runs all rows of a group in one numba kernel; the baseline in the same run is a Python loop
calling ``temporal_loss`` once per person and taking the maximum (what the seed describes:
compute each individual, then the max). Two cases: one shared public model (ConTPL 'moderate',
30 states) with budgets from a few landmark schemes, and ``--models`` distinct per-person models.
Both results are checked equal. Wall-clock figures on a shared machine are noisy.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from lmdk_core import allocate
from lmdk_core.correlation import (
    EnvelopeCache,
    population_temporal_loss,
    synthetic_transition_matrix,
    temporal_loss,
)


def budgets(people: int, T: int, rng: np.random.Generator) -> np.ndarray:
    """Per-person per-bin budgets min(ε_{u,t}, τ) of skip / uniform / user schemes."""
    eps_u = rng.choice([0.1, 0.5, 1.0, 2.0], size=people)
    schemes = rng.choice(["skip", "uniform", "user"], size=people)
    out = np.empty((people, T))
    for u in range(people):  # building the input, not timed
        mask = rng.random(T) < 0.05
        out[u] = np.minimum(allocate(T, mask, epsilon=float(eps_u[u]), scheme=str(schemes[u])),
                            0.5)
    return out


def loop_max(B: np.ndarray, each: list, cache: EnvelopeCache) -> np.ndarray:
    """The baseline: temporal_loss once per person, then the maximum."""
    return np.max([temporal_loss(B[u], each[u], cache=cache).tpl for u in range(len(B))], axis=0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--people", type=int, default=10_000)
    ap.add_argument("--T", type=int, default=168)
    ap.add_argument("--models", type=int, default=20)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    B = budgets(args.people, args.T, rng)
    P = synthetic_transition_matrix(30, "moderate")
    population_temporal_loss(B[:2], P)  # compile the kernels outside the timings
    cases = {"one shared model": (P, [P] * args.people)}
    mats = [synthetic_transition_matrix(30, s) for s in np.linspace(0.002, 0.2, args.models)]
    per = [mats[u % args.models] for u in range(args.people)]
    cases[f"{args.models} per-person models"] = (per, per)
    print(f"{args.people:,} people × {args.T} bins")
    for name, (arg, each) in cases.items():
        t0 = time.perf_counter()
        fast = population_temporal_loss(B, arg, cache=EnvelopeCache(size=max(4, args.models)))
        t_fast = time.perf_counter() - t0
        t0 = time.perf_counter()
        ref = loop_max(B, each, EnvelopeCache(size=max(4, args.models)))
        t_loop = time.perf_counter() - t0
        assert np.allclose(fast.tpl, ref, rtol=1e-12, atol=0)
        print(f"{name}: population_temporal_loss {t_fast:.3f} s, per-person loop "
              f"{t_loop:.3f} s, ratio {t_loop / t_fast:.1f}×; max TPL {fast.tpl.max():.4g}")


if __name__ == "__main__":
    main()
