"""Benchmark: the dashboard's core recomputation for one trajectory.

What the app recomputes when the user changes ε, the scheme or the landmarks: allocation +
release + landmark guarantee + temporal loss (BPL/FPL/TPL and the landmark loss under
correlation) + error + the three Plotly figures. Target: ≤ 150 ms for 10,000 points.

Printed per step: median wall time over ``--repeat`` runs (ms) and its ratio to a baseline
measured in the same run: drawing the planar-Laplace noise for every point with plain numpy
(what any release must at least do). The transition matrix is estimated once per trajectory
(the app caches it), so it is timed separately and not counted in the total; serialising the
figures to JSON (done by Streamlit when it sends them) is also shown separately.

Never fails on timing. The machine may be shared: treat figures as indicative.

    python bench/bench_dashboard_core.py [--n 10000] [--scheme adaptive] [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np
import pandas as pd

import lmdk_core as lk
from lmdk_core import figures


def trajectory(n: int) -> pd.DataFrame:
    """The longest sample user's first ``n`` points, or a seeded random walk if ``n`` is larger."""
    sample = lk.load_sample()
    counts = sample["uid"].value_counts()
    user = lk.select_user(sample, counts.index[0])
    if n <= len(user):
        return user.iloc[:n].reset_index(drop=True)
    rng = np.random.default_rng(0)
    step = rng.normal(0, 2e-4, (n, 2)) * (rng.random((n, 1)) < 0.3)  # moves 30 % of the time
    start = np.array([39.98, 116.33])
    pts = start + np.cumsum(step, axis=0)
    return pd.DataFrame({
        "uid": "synthetic",
        "time": pd.date_range("2024-01-01", periods=n, freq="10s", tz="UTC"),
        "lat": pts[:, 0],
        "lon": pts[:, 1],
    })


def timed(fn, repeat: int):
    """(median seconds, last result) of ``repeat`` calls after one warm-up call."""
    out = fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000, help="trajectory length (points)")
    ap.add_argument("--scheme", default="adaptive", choices=lk.SCHEMES)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()

    traj = trajectory(args.n)
    n = len(traj)
    places = lk.suggest_places(traj).rename(columns={"suggested_radius_m": "radius_m"})
    mask = lk.landmark_mask(traj, places)
    epsilon, scheme, radius_m = args.epsilon, args.scheme, 200.0
    print(f"dashboard core: n = {n} points, |L| = {int(mask.sum())} landmarks, scheme = {scheme}, "
          f"ε = {epsilon}, median of {args.repeat} runs (shared machine: indicative only)")

    rng = np.random.default_rng(0)
    base, _ = timed(lambda: (rng.gamma(2.0, 1.0, n), rng.uniform(0, 2 * np.pi, n)), args.repeat)

    try:
        from lmdk_core.correlation import landmark_temporal_loss, temporal_loss, transition_matrix
    except ImportError as exc:  # correlation not available: time the rest
        print(f"  (temporal loss skipped: {exc})")
        temporal_loss = None
    steps: list[tuple[str, float]] = []
    once: list[tuple[str, float]] = []

    t, eps = timed(lambda: lk.allocate(n, mask, epsilon=epsilon, scheme="uniform"), args.repeat)
    steps.append(("allocation (uniform, closed form)", t))
    t, rel = timed(lambda: lk.release_locations(traj, mask, epsilon=epsilon, scheme=scheme,
                                                radius_m=radius_m, rng=1), args.repeat)
    steps.append((f"release_locations ({scheme})", t))
    eps = rel.budget
    t, g = timed(lambda: lk.landmark_guarantee(eps, mask), args.repeat)
    steps.append(("landmark guarantee G_t", t))
    t, err = timed(lambda: lk.error_metres(traj, rel), args.repeat)
    steps.append(("error per timestamp (m)", t))
    tl = lloss = None
    if temporal_loss is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t, model = timed(lambda: transition_matrix(traj), 1)
        once.append((f"transition matrix ({model.n_states} states, cached per trajectory)", t))
        # first call builds and caches the matrix envelopes; time the steady state
        t, tl = timed(lambda: temporal_loss(eps, model.P_backward, model.P_forward), args.repeat)
        steps.append(("temporal loss BPL/FPL/TPL", t))
        t, lloss = timed(lambda: landmark_temporal_loss(eps, mask, model.P_backward,
                                                        model.P_forward), args.repeat)
        steps.append(("landmark loss under correlation", t))
    time_axis = traj["time"]
    t, f1 = timed(lambda: figures.allocation_figure(eps, mask, epsilon=epsilon, time=time_axis,
                                                    guarantee=g), args.repeat)
    steps.append(("allocation_figure", t))
    t, f2 = timed(lambda: figures.error_figure(err, rel.published, time=time_axis,
                                               landmarks=mask), args.repeat)
    steps.append(("error_figure", t))
    t, f3 = timed(lambda: figures.loss_figure(eps, g, epsilon=epsilon, temporal=tl,
                                              landmark_loss=lloss,
                                              time=time_axis), args.repeat)
    steps.append(("loss_figure", t))
    t, _ = timed(lambda: [f.to_json() for f in (f1, f2, f3)], args.repeat)
    once.append(("figures → JSON (Streamlit's serialisation, not in total)", t))

    total = sum(t for _, t in steps)
    width = max(len(s) for s, _ in steps + once) + 2
    print(f"  {'baseline: numpy planar noise draw':<{width}} {base * 1e3:8.2f} ms   1.0x")
    for name, t in steps:
        print(f"  {name:<{width}} {t * 1e3:8.2f} ms {t / base:6.1f}x")
    print(f"  {'TOTAL core recomputation':<{width}} {total * 1e3:8.2f} ms {total / base:6.1f}x"
          f"   (target ≤ 150 ms at 10,000 points: {'met' if total <= 0.150 else 'NOT met'})")
    for name, t in once:
        print(f"  {name:<{width}} {t * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()
