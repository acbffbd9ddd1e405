"""Dummy-landmark option generation and selection at T = 10,000, |L| = 3,000 (target < 1 s).

Prints the time of hide_landmarks (greedy options + utilities + exponential-mechanism draw) and of
its parts, against an in-run baseline: the same greedy chain built step by step with a heap in
pure Python (the obvious sequential implementation); then the dummy-stays and Bernoulli
generators. Then the selection itself, old against new, on the bundled sample and the synthetic
mask: the expected number of dummies and Uniform's expected noise factor (exact, from the
selection probabilities), and how far the selection is from uniform (largest / smallest
probability). Old: u = -‖h(L') - h(L)‖₂ over 10 bins of shares, Δu = 1 (issue 25's audit:
near-uniform); new: lmdk_core.dummies.option_utilities (counts, Δu = 1 + ρ).
Privacy and cost on the sample: bench/bench_dummy_stays.py.
Run: python bench/bench_dummies.py
"""

from __future__ import annotations

import heapq
import time
from itertools import pairwise

import numpy as np

from lmdk_core import dummies as d


def heap_greedy(mask: np.ndarray) -> np.ndarray:
    """Baseline: repeatedly split the widest gap (max (t-a)(b-t), earliest t) with a heap."""
    n = mask.size
    pos = [-1, *np.flatnonzero(mask).tolist(), n]
    heap = []
    for a, b in pairwise(pos):
        if b - a >= 2:
            t = a + (b - a) // 2
            heapq.heappush(heap, (-(t - a) * (b - t), t, a, b))
    out = []
    while heap:
        _, t, a, b = heapq.heappop(heap)
        out.append(t)
        for lo, hi in ((a, t), (t, b)):
            if hi - lo >= 2:
                m = lo + (hi - lo) // 2
                heapq.heappush(heap, (-(m - lo) * (hi - m), m, lo, hi))
    return np.array(out)


def old_utilities(fam: d.OptionFamily, bins: int = 10) -> np.ndarray:
    """The audited utility: -‖h(L'_k) - h(L)‖₂ with normalised 10-bin histograms (Δu = 1)."""
    n = fam.landmarks.size
    base = d.bin_counts(fam.landmarks, bins=bins)
    onehot = np.zeros((len(fam), bins), dtype=np.int64)
    onehot[np.arange(len(fam)), (fam.order * bins) // n] = 1
    counts = base + np.cumsum(onehot, axis=0)
    h = counts / counts.sum(axis=1, keepdims=True)
    return -np.linalg.norm(h - base / base.sum(), axis=1)


def selection_row(name: str, mask: np.ndarray, eps_sel: float, epsilon: float = 1.0) -> None:
    fam = d.greedy_options(mask)
    sizes = np.arange(1, len(fam) + 1)
    real, ordinary = int(mask.sum()), int((~mask).sum())
    budget = epsilon / d.split_budget(epsilon, epsilon_select=eps_sel)
    p_old = d.exponential_probabilities(old_utilities(fam), epsilon=eps_sel, sensitivity=1.0)
    c = d.dummy_cost(mask, epsilon=epsilon, epsilon_select=eps_sel, generator="greedy")
    p_new = d.exponential_probabilities(d.option_utilities(fam), epsilon=eps_sel,
                                        sensitivity=d.UTILITY_SENSITIVITY)
    for label, p, e_d in (("old", p_old, float(np.dot(p_old, sizes))),
                          ("new", p_new, c.expected_dummies)):
        factor = (1 + e_d / (real + 1)) * budget
        print(f"  {name:<22} ε_sel {eps_sel:<4g} {label}: E[dummies] {e_d:8,.0f} "
              f"({e_d / ordinary:5.1%} of {ordinary:,} ordinary; target ρ·|L| = "
              f"{d.DUMMY_RATIO * real:,.0f}), Uniform noise x{factor:.3f}, "
              f"max/min probability {p.max() / p.min():.3g}")


def best_of(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    rng = np.random.default_rng(0)
    n, n_lmdk = 10_000, 3_000
    mask = np.zeros(n, bool)
    mask[rng.choice(n, n_lmdk, replace=False)] = True
    fam = d.greedy_options(mask)
    assert np.array_equal(fam.order, heap_greedy(mask)), "vectorised greedy != heap greedy"
    t_opts = best_of(lambda: d.greedy_options(mask))
    t_util = best_of(lambda: d.option_utilities(fam))
    u = d.option_utilities(fam)
    t_sel = best_of(lambda: d.exponential_select(u, epsilon=1.0))
    t_all = best_of(lambda: d.hide_landmarks(mask, epsilon_select=1.0, generator="greedy"))
    t_stays = best_of(lambda: d.hide_landmarks(mask, epsilon_select=0.1, generator="stays"))
    t_bern = best_of(lambda: d.hide_landmarks(mask, epsilon_select=0.1, generator="bernoulli"))
    t_heap = best_of(lambda: heap_greedy(mask), repeat=3)
    print(f"T = {n:,}, |L| = {n_lmdk:,}, options = {len(fam):,}")
    print(f"  greedy options (vectorised)     {t_opts * 1e3:8.1f} ms")
    print(f"  utilities of all options        {t_util * 1e3:8.1f} ms")
    print(f"  exponential-mechanism draw      {t_sel * 1e3:8.1f} ms")
    print(f"  hide_landmarks total            {t_all * 1e3:8.1f} ms   (target < 1000 ms)")
    print(f"  dummy stays (ChaCha20 words)    {t_stays * 1e3:8.1f} ms   (target < 1000 ms)")
    print(f"  bernoulli dummies               {t_bern * 1e3:8.1f} ms")
    print(f"  baseline: heap greedy (Python)  {t_heap * 1e3:8.1f} ms   "
          f"ratio {t_heap / t_opts:.1f}x slower than vectorised options")
    small = np.zeros(16, bool)
    small[[2, 3, 11]] = True
    t_ex = best_of(lambda: d.exhaustive_options(small), repeat=1)
    print(f"  exhaustive options, T = 16, |L| = 3: {t_ex * 1e3:.0f} ms (test reference only)")
    print(f"\nSelection, greedy options, ε = 1 in total (ρ = {d.DUMMY_RATIO:g}, "
          f"Δu = {d.UTILITY_SENSITIVITY:g}); exact, no draw:")
    import lmdk_core as lm
    from lmdk_core.interval import release_interval

    traj = lm.select_user(lm.load_sample(), "alice")
    L = lm.landmark_mask(traj, [(39.9925, 116.3395, 100), (39.9820, 116.3564, 100)])
    iv = release_interval(traj, L, interval_s=300)
    for eps_sel in (0.1, 0.5):
        selection_row("sample, every fix", L, eps_sel)
        selection_row("sample, 5 min", iv.landmarks, eps_sel)
        selection_row(f"random, T = {n:,}", mask, eps_sel)
    t_old = best_of(lambda: old_utilities(fam))
    print(f"  utilities: new {t_util * 1e3:.1f} ms, old {t_old * 1e3:.1f} ms "
          f"(ratio {t_util / t_old:.2f})")


if __name__ == "__main__":
    main()
