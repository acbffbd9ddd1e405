"""numba building blocks of the sequential schemes (Adaptive, BD, BA).

Each step releases through the same per-element mechanisms as every other release path
(:func:`lmdk_core.noise.exact.value_point` / :func:`~lmdk_core.noise.exact.lattice_point`, at
the point's own location — no projection, no wrap taken from another point). Distances are
|a − b| for values and great-circle metres for locations (data-independent metrics).

Private dissimilarity tests (BD/BA) release a distance in grid units, stat = |round(x/g) −
round(o/g)| (values) or round(d(x, o)/g) (locations, d computed with error ≤ DIST_ERR_M), whose
neighbours differ by at most D = floor(Δ'/g) + 1, Δ' = Δ or r + 2·DIST_ERR_M, plus discrete
Laplace noise of scale t ≥ D/ε₁: ε₁'-DP with ε₁' = D/t ≤ ε₁ (docs/fp-safe-noise.md §5).

Draw order (identical for every input): at each t the kernel draws, in order, the step's
random variates — Adaptive: a 53-bit coin, then the publication variates (1 for values, 3 for
locations); BD/BA: the test variate, then the publication variates — whether or not the step
uses them. Safe mode reads them from the bit stream (the number of words a variate uses depends
on its value and scale only); fast mode reads row t of pre-drawn float arrays.
"""

from __future__ import annotations

import numba
import numpy as np

from ..noise.apply import _G_MIN
from ..noise.discrete import discrete_laplace
from ..noise.exact import (
    DIST_ERR_M,
    T_MAX,
    achieved,
    great_circle_m,
    lattice_params,
    lattice_point,
    value_params,
    value_point,
)


@numba.njit(cache=True)
def pub_params(kind, unit, eps):
    """(g, D, t) of a publication at budget ε."""
    if kind == 0:
        return value_params(unit, eps)
    return lattice_params(unit, eps)


@numba.njit(cache=True)
def usable(kind, unit, eps):
    """True when a publication at budget ε is inside the exact grid (else it is not made)."""
    if not eps > 0.0:
        return False
    g, d, t = pub_params(kind, unit, eps)
    return g >= _G_MIN and d <= T_MAX and t <= T_MAX


@numba.njit(cache=True)
def release_point(kind, data, t, eps, unit, exact, units, buf, st, fn, cand):
    """Release row t at budget ε into ``cand`` (2,); returns the achieved ε'."""
    if kind == 0:
        cand[0], a = value_point(data[t, 0], eps, unit, exact, units, t, buf, st, fn)
        cand[1] = 0.0
        return a
    cand[0], cand[1], a = lattice_point(data[t, 0], data[t, 1], eps, unit, exact, units, t,
                                        buf, st, fn)
    return a


@numba.njit(cache=True)
def burn(kind, unit, eps, exact, buf, st, fn):
    """Draw (and discard) a publication's variates at budget ε: keeps the draw order fixed."""
    if not exact:
        return
    _, _, t = pub_params(kind, unit, eps)
    for _ in range(1 if kind == 0 else 3):
        discrete_laplace(buf, st, fn, t, np.int64(1))


@numba.njit(cache=True)
def distance(kind, a0, a1, b0, b1):
    """|a − b| (values) or great-circle metres (locations)."""
    if kind == 0:
        return abs(a0 - b0)
    return great_circle_m(a0, a1, b0, b1)


def test_params(kind: int, unit: float, eps1: float) -> tuple[float, int, int]:
    """(g, D, t) of the dissimilarity test at budget ε₁ (sensitivity Δ, or r + 2·DIST_ERR_M)."""
    g, d, t = value_params(unit if kind == 0 else unit + 2.0 * DIST_ERR_M, eps1)
    return float(g), int(d), int(t)


@numba.njit(cache=True)
def noisy_distance(kind, data, t, last, have_last, g, d, tt, exact, units, buf, st, fn):
    """(noisy distance between x_t and the last release, achieved ε₁'); draws one variate."""
    if exact:
        z = discrete_laplace(buf, st, fn, tt, np.int64(1))
        if not have_last:
            return 0.0, 0.0
        if kind == 0:
            k = abs(np.int64(np.rint(data[t, 0] / g)) - np.int64(np.rint(last[0] / g)))
        else:
            k = np.int64(np.rint(great_circle_m(data[t, 0], data[t, 1], last[0], last[1]) / g))
        return (k + z) * g, achieved(d, tt)
    if not have_last:
        return 0.0, 0.0
    dist = distance(kind, data[t, 0], data[t, 1], last[0], last[1])
    return dist + g * tt * units[t, 3], achieved(d, tt)
