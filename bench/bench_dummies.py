"""Dummy-landmark option generation and selection at T = 10,000, |L| = 3,000 (target < 1 s).

Prints the time of hide_landmarks (greedy options + utilities + exponential-mechanism draw) and of
its parts, against an in-run baseline: the same greedy chain built step by step with a heap in
pure Python (the obvious sequential implementation); then the dummy-stays and Bernoulli
generators. Privacy and cost on the sample: bench/bench_dummy_stays.py.
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


if __name__ == "__main__":
    main()
