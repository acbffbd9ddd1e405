"""w-event baselines BD and BA (Kellaris et al., VLDB 2014), made landmark-private.

Both run Kellaris et al.'s algorithm unchanged with a *window budget* ε_w ≤ ε:

* private dissimilarity test at each t with ε_1 = ε_w/(2w): dis = d(x_t, o_last) + Lap(unit/ε_1)
  (values: |x_t − o_last|, sensitivity Δ; locations: great-circle distance in metres between
  x_t and the last released point, sensitivity r — by the triangle inequality moving x_t by
  ≤ r moves the distance by ≤ r), released exactly on a grid (lmdk_core.schemes._kernel);
* publish o_t = x_t + noise(ε_pub) if dis > err·unit/ε_pub — the noise scale of the publication
  (values Δ/ε_pub; locations the mean error ≈ 2.86·r/ε_pub) — else republish o_last, spend 0;
* ``eps`` per t = ε_1 (when a test is run) + ε_pub (when published).
* BD (budget distribution): ε_rm = ε_w/2 − Σ publication budgets of the previous w−1 steps,
  ε_pub = ε_rm/2.
* BA (budget absorption): each t is allotted ε_w/(2w); a publication absorbs the allotments of
  the non-nullified skipped timestamps since the previous publication's nullified period (its own
  included, at most w in all: ε_pub = k·ε_w/(2w), k ≤ w); the next k−1 timestamps (the k−1
  absorbed skipped allotments) are nullified: they republish and spend 0, running no test.

Every w-window spends ≤ ε_w/2 on tests and ≤ ε_w/2 on publications (Kellaris et al.), so
w-event ε_w-DP, hence w-event ε-DP.

Changes from Kellaris et al., and why:

1. *Landmark-aware window budget.* Plain BD/BA bound windows, not the landmark guarantee:
   landmarks spread over more than one window would make G_t = Σ_{i∈L∪{t}} ε_i exceed ε. A
   single step spends at most c·ε_w (c = 1/(2w) + 1/4 for BD, 1/(2w) + 1/2 for BA), and landmarks
   that fit in one w-window spend at most ε_w together. Cover L greedily, left to right, by
   windows [ℓ, ℓ+w−1] starting at the first uncovered landmark; a group of k landmarks spends
   ≤ min(1, k·c)·ε_w. Hence, for every decision path, G_t ≤ g(L)·ε_w with
   g(L) = Σ_groups min(1, k·c) + c (the + c for a regular t; omitted if every t is a landmark).
   We run with ε_w = ε · min(1, 1/g(L)) — the largest window budget this worst-case bound
   allows. With no landmarks ε_w = ε: exactly Kellaris et al.; with L = all timestamps it
   degrades to user-level Σ ε_t ≤ ε. ε_w is reported as ``window_epsilon`` in Release.params.
2. *First timestamp*: there is no o_last, so t = 0 publishes without a test (BD: ε_pub = ε_w/4;
   BA: its own allotment). Nullified BA timestamps skip the test too (its result is unused).
3. Noise and test thresholds use the scale of the mechanism in use (see above) instead of the
   1/ε of the original count setting.

4. *Unusable budgets*: a BD publication budget so small that its exact grid would overflow
   (ε_pub below ~1e-12·ε_w) is not made (the step republishes and spends only its test).

Why numba kernels: both schemes are sequential by nature (each decision depends on the last
release and on the budget left in the sliding window), so they cannot be vectorised; the kernels
release each point through the exact per-element mechanism (lmdk_core.noise.exact), drawing at
every t the test variate and then the publication variates, used or not (fixed draw order).
"""

from __future__ import annotations

import numba
import numpy as np

from .._deprecation import renamed
from ..noise.apply import check_lattice_domain, check_value_domain, check_value_magnitude
from ..noise.source import RandomSource
from ._kernel import burn, noisy_distance, release_point, test_params, usable
from ._space import Space
from ._stream import kernel_stream
from ._types import SchemeOutput


def step_cap(scheme: str, w: int) -> float:
    """c: the most a single step can spend, as a fraction of the window budget ε_w."""
    return 1.0 / (2 * w) + (0.25 if scheme == "bd" else 0.5)


@numba.njit(cache=True)
def landmark_cover_bound(landmark_idx, n, w, c):
    """g(L): G_t ≤ g·ε_w for every t and every decision path (see module docstring)."""
    total = 0.0
    m = landmark_idx.size
    i = 0
    while i < m:
        end = landmark_idx[i] + w  # window [ℓ, ℓ + w − 1]
        j = i
        while j < m and landmark_idx[j] < end:
            j += 1
        total += min(1.0, (j - i) * c)
        i = j
    if m < n:
        total += c
    return total


@renamed(positional=("epsilon", "w"))
def window_epsilon(scheme: str, landmarks: np.ndarray, *, epsilon: float, w: int) -> float:
    """Window budget ε_w = ε·min(1, 1/g(L)) satisfying both w-event ε-DP and G_t ≤ ε."""
    g = landmark_cover_bound(np.flatnonzero(landmarks), landmarks.size, w, step_cap(scheme, w))
    return epsilon if g <= 1.0 else epsilon / g


@numba.njit(cache=True)
def bd_kernel(kind, data, eps_w, w, unit, err, tg, td, tt, exact, units, buf, st, fn):
    """Budget distribution over (n, 2) rows; returns (released, eps, achieved, published).

    ``tg, td, tt``: the test's grid, shift bound and scale (test_params). Draws at every t: the
    test variate, then the publication variates (at ε_pub, or at ε₁ when ε_pub is unusable).
    """
    n = data.shape[0]
    out = np.full((n, 2), np.nan)
    eps = np.zeros(n)
    ach = np.zeros(n)
    pub_eps = np.zeros(n)
    published = np.zeros(n, dtype=np.bool_)
    last = np.full(2, np.nan)
    cand = np.empty(2)
    eps1 = eps_w / (2.0 * w)
    used = 0.0  # Σ publication budgets of steps t−w+1 .. t−1
    for t in range(n):
        if t >= 1:
            used += pub_eps[t - 1]
        if t >= w:
            used -= pub_eps[t - w]
        if t % w == 0:  # re-sum exactly now and then: no drift of the running sum
            used = 0.0
            for i in range(max(0, t - w + 1), t):
                used += pub_eps[i]
        eps_pub = max(0.0, eps_w / 2.0 - used) / 2.0
        dis, a_test = noisy_distance(kind, data, t, last, t > 0, tg, td, tt, exact, units,
                                     buf, st, fn)
        ok = usable(kind, unit, eps_pub)
        if ok:
            a_pub = release_point(kind, data, t, eps_pub, unit, exact, units, buf, st, fn, cand)
        else:
            burn(kind, unit, eps1, exact, buf, st, fn)
            a_pub = 0.0
        if t == 0:
            publish = ok
        else:
            eps[t] = eps1
            ach[t] = a_test
            publish = ok and dis > err * unit / eps_pub
        if publish:
            last[0] = cand[0]
            last[1] = cand[1]
            pub_eps[t] = eps_pub
            eps[t] += eps_pub
            ach[t] += a_pub
            published[t] = True
        out[t, 0] = last[0]
        out[t, 1] = last[1]
    return out, eps, ach, published


@numba.njit(cache=True)
def ba_kernel(kind, data, eps_w, w, unit, err, tg, td, tt, exact, units, buf, st, fn):
    """Budget absorption over (n, 2) rows; returns (released, eps, achieved, published).

    Draws at every t (nullified ones included): the test variate, then the publication
    variates (at ε_pub = k·ε_w/(2w), or at one allotment when nullified).
    """
    n = data.shape[0]
    out = np.full((n, 2), np.nan)
    eps = np.zeros(n)
    ach = np.zeros(n)
    published = np.zeros(n, dtype=np.bool_)
    last = np.full(2, np.nan)
    cand = np.empty(2)
    allot = eps_w / (2.0 * w)
    eps1 = allot
    free_start = 0  # first timestamp after the last publication's nullified period
    for t in range(n):
        dis, a_test = noisy_distance(kind, data, t, last, t > 0, tg, td, tt, exact, units,
                                     buf, st, fn)
        if t >= free_start:
            k = min(t - free_start + 1, w)
            eps_pub = k * allot
            a_pub = release_point(kind, data, t, eps_pub, unit, exact, units, buf, st, fn, cand)
            if t == 0:
                publish = True
            else:
                eps[t] = eps1
                ach[t] = a_test
                publish = dis > err * unit / eps_pub
            if publish:
                last[0] = cand[0]
                last[1] = cand[1]
                eps[t] += eps_pub
                ach[t] += a_pub
                published[t] = True
                free_start = t + k  # nullify t+1 .. t+k−1
        else:
            burn(kind, unit, allot, exact, buf, st, fn)
        out[t, 0] = last[0]
        out[t, 1] = last[1]
    return out, eps, ach, published


_KERNELS = {"bd": bd_kernel, "ba": ba_kernel}


@renamed(positional=("epsilon", "source", "noise"))
def run_wevent(
    scheme: str,
    space: Space,
    landmarks: np.ndarray,
    *,
    epsilon: float,
    source: RandomSource,
    noise: str,
    w: int,
) -> SchemeOutput:
    """Release ``space`` with BD or BA at the landmark-aware window budget (draw order: kernels)."""
    eps_w = window_epsilon(scheme, landmarks, epsilon=epsilon, w=w)
    eps1 = eps_w / (2 * w)
    budgets = np.array([eps1, eps_w / 4 if scheme == "bd" else eps_w / 2])  # BA: k·ε₁, k ≤ w
    if space.kind == "values":
        check_value_domain(space.unit, budget=budgets)
        check_value_magnitude(space.columns[0], space.unit, budget=budgets)
    else:
        check_lattice_domain(space.unit, budget=budgets)
        check_value_domain(space.unit, budget=budgets[:1])  # the test's distance grid
    tg, td, tt = test_params(space.code, space.unit, eps1)
    with kernel_stream(source, noise, space.n) as (exact, units, _, buf, st, fn):
        out, eps, ach, published = _KERNELS[scheme](
            space.code, space.kernel_data(), eps_w, w, space.unit, space.err, tg, td, tt,
            exact, units, buf, st, fn,
        )
    return SchemeOutput(space.from_kernel(out), eps, published, {"window_epsilon": eps_w}, ach)
