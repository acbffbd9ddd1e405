"""Benchmark release-grade noise against noise="fast" (float numpy) in the same run.

Usage: ``.venv/bin/python bench/bench_noise.py [--n 1000000] [--repeat 3] [--counts 1750000]``

Prints, best of ``repeat``: the random sources' throughput (os.urandom, the ChaCha20 keystream
that release-grade noise reads, numpy PCG64), random bits used per discrete Laplace variate,
and values / locations / bits per second for noise="safe" and noise="fast" with their ratio.
Targets (issue 9): safe values ≥ 2 M/s, safe locations ≥ 1 M points/s on the 2-core machine.
The population's noise (issue 26): ns per count of the exact discrete Laplace with its t = 2^21
on ``--counts`` grid counts, the share of it spent producing keystream words, and numpy's float
Laplace on as many counts in the same run as the baseline.
Figures are wall-clock and noisy on a shared machine (the load average is printed).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from lmdk_core.noise import RandomSource
from lmdk_core.noise.apply import noisy_bits, noisy_locations, noisy_values
from lmdk_core.noise.discrete import BitStream, _dlap_fill, discrete_laplace_array
from lmdk_core.population.noise import MOVE_SENSITIVITY, TAU_DENOMINATOR

CPU: list[float] = []  # CPU seconds of the last best_of call's best run


def best_of(fn, repeat: int) -> float:
    """Best wall time of ``repeat`` runs; its CPU time goes to CPU[-1] (contention-robust)."""
    best, cpu = np.inf, np.inf
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall, used = time.perf_counter() - t, time.process_time() - c
        if wall < best:
            best, cpu = wall, used
    CPU.append(cpu)
    return best


def population_noise(m: int, rep: int) -> None:
    """The population's count noise: t = 2^21 (Δ = 2), s = τ·2^20 for τ/2 = 0.5, 1, 2."""
    t = TAU_DENOMINATOR * MOVE_SENSITIVITY
    key = os.urandom(32)
    words = np.empty(1 << 13, dtype=np.uint64)
    src = RandomSource.keyed(key, b"words")
    w_sec = best_of(lambda: [src.fill(words) for _ in range(64)], rep) / (64 * words.size)
    w_cpu = CPU[-1] / (64 * words.size)
    print(f"keyed ChaCha20 words: {1 / w_cpu / 1e6:.0f} M words/s CPU ({1 / w_sec / 1e6:.0f} wall)")
    for tau in (1.0, 2.0, 4.0):
        s = round(tau / 2 * TAU_DENOMINATOR)
        discrete_laplace_array(t, s, 10, RandomSource.keyed(key, b"warm"))  # load the kernel
        src = RandomSource.keyed(key, b"noise")
        with BitStream(src) as (b, st, fn):
            out = np.empty(min(m, 5_000), dtype=np.int64)  # < one buffer of bits
            _dlap_fill(b, st, fn, np.full(out.size, t), np.full(out.size, s), out)
            bits = int(st[0]) / out.size  # read from bit 0 of the first fill, within it
        best_of(lambda s=s: discrete_laplace_array(
            t, s, m, RandomSource.keyed(key, b"noise")), rep)
        exact = CPU[-1] / m
        gen = np.random.default_rng()
        best_of(lambda s=s, gen=gen: gen.laplace(0.0, t / s, m), rep)
        flt = CPU[-1] / m
        print(f"population noise t = 2^21, s = {s:>9,} (scale {t / s:g}): exact "
              f"{exact * 1e9:6.1f} ns/count CPU ({bits:4.1f} bits, of which keystream "
              f"{bits / 64 * w_cpu / exact:5.1%}); numpy float Laplace {flt * 1e9:5.1f} ns/count; "
              f"ratio {exact / flt:5.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--counts", type=int, default=1_750_000, help="grid counts (T-Drive: 1.75 M)")
    args = ap.parse_args()
    n, rep = args.n, args.repeat
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; n = {n:,}")
    population_noise(args.counts, rep)

    mb = 32 << 20
    secure = RandomSource.secure()
    buf = np.empty(mb // 8, dtype=np.uint64)
    t_os = best_of(lambda: os.urandom(mb), rep)
    t_cc = best_of(lambda: secure.fill(buf), rep)
    seeded = RandomSource.seeded(0)
    t_pcg = best_of(lambda: seeded.fill(buf), rep)
    print(f"sources: os.urandom {mb / t_os / 1e6:6.0f} MB/s | ChaCha20 (release grade) "
          f"{mb / t_cc / 1e6:6.0f} MB/s | numpy PCG64 (seeded) {mb / t_pcg / 1e6:6.0f} MB/s")

    class Counting(RandomSource):
        """The secure keystream, counting refills (to report random bits per variate)."""

        __slots__ = ("fills",)

        def fill(self, out):
            self.fills += 1
            super().fill(out)

    for t in (1, 1_500, 2**40):
        tt = np.full(n, t, dtype=np.int64)
        ones = np.ones(n, dtype=np.int64)
        out = np.empty(n, dtype=np.int64)
        src = Counting(cipher=RandomSource.secure()._cipher)
        src.fills = 0
        with BitStream(src) as (b, st, fn):
            _dlap_fill(b, st, fn, tt[:10], ones[:10], out[:10])  # compile / load
            fills0, pos0 = src.fills, int(st[0])
            _dlap_fill(b, st, fn, tt, ones, out)
            used = (src.fills - fills0) * b.size * 64 + int(st[0]) - pos0
            sec = best_of(lambda b=b, st=st, fn=fn, tt=tt, ones=ones, out=out: _dlap_fill(
                b, st, fn, tt, ones, out), rep)
        print(f"discrete Laplace, scale {t:>17,}: {n / sec / 1e6:6.2f} M/s wall, "
              f"{n / CPU[-1] / 1e6:6.2f} M/s CPU, {used / n:5.1f} random bits per variate")

    x = np.cumsum(np.random.default_rng(0).normal(0, 1, n))
    lat = 39.9 + np.cumsum(np.random.default_rng(1).normal(0, 1e-4, n))
    lon = 116.4 + np.cumsum(np.random.default_rng(2).normal(0, 1e-4, n))
    eps = np.full(n, 0.5)
    bits = np.random.default_rng(3).random(n) < 0.5
    rows = []
    for what, call in (
        ("values (Laplace, Δ=1)", lambda src, m: noisy_values(
            x, budget=eps, sensitivity=1.0, source=src, noise=m)),
        ("locations (lattice, r=200 m)", lambda src, m: noisy_locations(
            lat, lon, budget=eps, radius_m=200.0, source=src, noise=m)),
        ("bits (randomised response)", lambda src, m: noisy_bits(
            bits, budget=eps, source=src, noise=m)),
    ):
        call(RandomSource.secure(), "safe")  # warm the numba cache
        call(RandomSource.secure(), "fast")
        safe = best_of(lambda c=call: c(RandomSource.secure(), "safe"), rep)
        safe_cpu = CPU[-1]
        fast = best_of(lambda c=call: c(RandomSource.secure(), "fast"), rep)
        rows.append((what, n / safe / 1e6, n / safe_cpu / 1e6, n / fast / 1e6,
                     n / CPU[-1] / 1e6, safe / fast))
    print("M/s: per wall-clock second | per CPU second of this process (contention-robust)")
    print(f"{'release':30s} {'safe wall':>9s} {'safe CPU':>9s} {'fast wall':>9s} "
          f"{'fast CPU':>9s} {'safe/fast':>9s}")
    for what, s, sc, f, fc, ratio in rows:
        print(f"{what:30s} {s:9.2f} {sc:9.2f} {f:9.2f} {fc:9.2f} {ratio:9.2f}")


if __name__ == "__main__":
    main()
