"""Compile lmdk_core's numba kernels once, before the test processes use them.

``tests/conftest.py`` runs the two parts below in two subprocesses as a distributed suite
starts, and the test processes wait for them before their first test. On a fresh clone numba's
on-disk cache (``cache=True``) is empty: every process that met a kernel first compiled it
itself (the workers, the dashboard servers, the notebook kernels), 21 CPU-s more than a warm
run on 2 cores. With the cache filled here they load it (~0.3 s). With a warm cache this is a
~1.2 s run, overlapped with the test processes' start. The Makefile's install steps (``make
run`` and ``make test`` on a fresh clone) also run both parts while pip installs the extras,
so that the app's first page and the suite start with the cache filled.

Each call below is a small instance of what the suite runs, with the same argument types, so
the signatures compiled are the ones the tests load.
"""

from __future__ import annotations

import numpy as np

import lmdk_core as lk
from lmdk_core import correlation
from lmdk_core.advice import skip_mean_error
from lmdk_core.noise.apply import noisy_bits
from lmdk_core.noise.source import as_source
from lmdk_core.patterns import taxi
from lmdk_core.patterns.match import _select_non_overlapping
from lmdk_core.population.noise import bernoulli_exp, discrete_laplace
from lmdk_core.schemes import SCHEMES
from lmdk_core.smoothing import smooth_release


def _trace() -> tuple:
    traj = lk.select_user(lk.load_sample(), "alice").iloc[:400].reset_index(drop=True)
    mask = np.zeros(len(traj), dtype=bool)
    mask[100:140] = True
    return traj, mask


def _schemes() -> None:
    """Every scheme's kernel and the exact samplers they call (the coins, the discrete
    Laplace, the population's too, which reuses them)."""
    traj, mask = _trace()
    values = np.linspace(0.0, 1.0, len(traj))
    for scheme in SCHEMES:
        lk.release_locations(traj, mask, epsilon=1.0, scheme=scheme, radius_m=200)
        lk.release_values(values, mask, epsilon=1.0, scheme=scheme)
    skip_mean_error(traj, mask, epsilon=1.0, radius_m=200.0)
    discrete_laplace(10, 2.0)


def _rest() -> None:
    """Everything else: the Kalman kernels (the smoothing page, the advice, the explorer) on
    a BA-like release built here from the trace moved ~50 m, so this half runs no scheme (its
    budget is not public: the noise is fitted, as for a BA release), the temporal loss, the
    taxi streams, randomised response and the population's exp coins."""
    traj, mask = _trace()
    n = len(traj)
    published = ~mask & (np.arange(n) % 6 == 0)
    smooth_release(lk.Release(
        scheme="ba", epsilon=1.0, budget=np.where(published, 0.05, 0.0), published=published,
        landmarks=mask, params={"w": 10, "radius_m": 200.0, "window_epsilon": 0.2},
        lat=np.where(published, traj["lat"] + 4.5e-4, np.nan),
        lon=np.where(published, traj["lon"], np.nan), time=traj["time"]))
    eps = lk.allocate(n, mask, epsilon=1.0, scheme="skip")
    for m in (8, 80):  # the hull's single- and multi-threaded paths
        P = correlation.synthetic_transition_matrix(m, 0.1)
        lk.landmark_temporal_loss(eps, mask, P, P)
    env = correlation.EnvelopeLoss(P)  # evaluated on its own and on one row per person
    env(np.array([0.5, 2.0]))
    env.backward(np.ones((2, 3)))
    assert len(taxi.taxi_trajectories(3, days=0.05))
    noisy_bits(mask, budget=np.full(mask.size, 0.5), source=as_source(None))
    bernoulli_exp(np.arange(1, 5), 8)
    _select_non_overlapping(np.arange(5, dtype=np.int64), np.arange(5, dtype=np.int64) + 2)


PARTS = {"schemes": _schemes, "rest": _rest}
"""Two halves of about equal compile time, run side by side (on an empty cache 10.7 and 10.4
CPU-s, on a filled one ~0.5 each: bench/bench_compile.py, 2026-11-27). The split follows what
each kernel calls: the discrete Laplace and its geometric step are compiled in the first half
only; the exp coin still in both (~1.5 CPU-s: randomised response needs it too). Before,
13.4 and 10.0 CPU-s, with the Kalman kernels in the first half and the population's Laplace
(its geometric step and coins again) in the second; beside the test processes' collection,
the first half then ran alone for its last ~7 s."""


if __name__ == "__main__":
    import sys
    from pathlib import Path

    part, done = sys.argv[1], Path(sys.argv[2])  # done: written however it ends; tests wait
    try:
        PARTS[part]()
        done.write_text("compiled\n", encoding="utf-8")
    except BaseException as err:  # the tests then compile what they meet, as without this
        done.write_text(f"failed: {err!r}\n", encoding="utf-8")
        raise
