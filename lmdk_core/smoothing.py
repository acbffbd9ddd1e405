"""Free post-processing of a release: a Kalman filter + Rauch–Tung–Striebel smoother.

:func:`smooth_release` reads ONLY what is public — the public frame of the release (``time`` and
``lat``/``lon`` or ``value``, as in ``release.to_frame(public=True)``) and public parameters (the
scheme's name, ε, ``radius_m`` or ``sensitivity``, the known noise law, a motion model with
public constants) — and never ``budget``, ``published`` or ``landmarks`` (private: they reveal the
landmarks). Any function of the public output alone is post-processing, so the smoothed release
has exactly the guarantee of its input and costs no budget (docs/smoothing.md).

Repeats are detected from the output itself: a row identical to the previous row (same lat and
lon, or the same value) is a republished approximation, not a new observation, and NaN rows
(nothing released yet) are not observations either. The smoother estimates every row — repeats
included — from the fresh observations before and after it. Under the public setting
``fill="interpolate"`` or ``"halfway"`` a filled row is a point on a line in time through its
neighbours, detected the same way (:func:`lmdk_core.schemes.fill.interpolated_rows`).

Model, per axis (east/north metres in the local projection of :mod:`lmdk_core.geo` for
locations; the value itself for values): a random walk, constant-velocity or integrated
Ornstein–Uhlenbeck model driven by white noise, observed with noise of variance ``R`` from the
mechanism's law (:func:`noise_variance`) where the fresh budget is a public parameter, else
fitted by maximum likelihood on the released points (free) and never below the law at ε (no
fresh release spends more than ε). Locations default to ``motion="auto"``: the public candidate
models :data:`CANDIDATES` averaged with weights ∝ their likelihood on the released points (free),
so a fast short trace gets a fast model instead of a fixed walk. ``robust=True`` uses Huber
weights on the normalised innovation (heavy-tailed noise). Equations and measured numbers:
docs/smoothing.md.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numba
import numpy as np

from .errors import ParameterError
from .geo import degrees_to_metres, offset_points
from .noise.apply import read_only
from .release import Release
from .schemes.fill import interpolate_fill, interpolated_rows, time_axis
from .times import epoch_ns, seconds

__all__ = ["MOTION", "noise_variance", "smooth_release"]

MOTION: dict[str, tuple[str, float, float]] = {
    "town": ("rw", 300.0, 0.0),
    "walk": ("rw", 30.0, 0.0),
    "drive": ("rw", 3000.0, 0.0),
}
"""Public motion models for locations: name → (kind, q, tau) — a random walk whose position
diffuses with variance q·Δt (q in m²/s). "town": q = 300 m²/s, a 30-s step of
σ ≈ 95 m per axis (≈ 3 m/s: people who walk, cycle or ride in a city); "walk": q = 30 m²/s
(≈ 1 m/s); "drive": q = 3000 m²/s (≈ 10 m/s). Public constants for the kind of person, never
fitted to the trace being released ("town" was picked among 100, 300 and 1000 m²/s on the
public GeoLife sample, docs/smoothing.md); ``motion="fit"`` fits q instead by maximum
likelihood on the released points (free post-processing). A tuple ``("rw", q)``,
``("cv", q)`` (constant velocity, q in m²/s³) or ``("iou", q, tau)`` (velocity an
Ornstein–Uhlenbeck process of stationary variance q m²/s² and time constant tau s) sets the
model directly."""

_KINDS = {"rw": 0, "cv": 1, "iou": 2}

CANDIDATES: tuple[tuple[str, float, float], ...] = (
    ("rw", 30.0, 0.0), ("rw", 300.0, 0.0), ("rw", 3000.0, 0.0),
    ("iou", 3.0, 120.0), ("iou", 3.0, 600.0), ("iou", 10.0, 60.0), ("iou", 30.0, 60.0))
"""Public candidate motion models of ``motion="auto"`` (the default for locations): the three
random walks of :data:`MOTION` and integrated Ornstein–Uhlenbeck velocities of stationary
velocity variance 3–30 m²/s² (σ ≈ 1.7–5.5 m/s per axis) and time constants 1–10 min. Fixed
constants, never fitted to a trace; the release's own likelihood picks one (free)."""

GAP_S = 600.0
"""Default ``gap_s``: after a gap between timestamps longer than this (seconds) the smoother
starts afresh (the person may have gone anywhere)."""

_ROBUST_K = 1.5
"""Huber threshold in standard deviations of the innovation."""


def _discrete_laplace_var(t: float) -> float:
    """Variance of the discrete Laplace law P(k) ∝ exp(−|k|/t) in lattice units."""
    a = math.exp(-1.0 / t)
    return 2.0 * a / (1.0 - a) ** 2


def noise_variance(kind: str, *, epsilon: float, scale: float) -> float:
    """Per-axis noise variance of one fresh release at budget ``epsilon``.

    ``kind`` "locations": ``scale`` = radius_m; the lattice mechanism adds an independent discrete
    Laplace variate of scale t (lattice units of g metres) to each Earth-centred axis, so the
    variance along any unit direction — east or north — is g²·Var(k) (m²). ``kind`` "values":
    ``scale`` = sensitivity Δ, variance g²·Var(k) in the value's units².
    """
    from .noise.exact import lattice_params, value_params

    if kind not in ("locations", "values"):
        raise ParameterError(f"kind must be 'locations' or 'values', got {kind!r}")
    epsilon, scale = _positive(epsilon, "epsilon"), _positive(scale, "scale")
    if kind == "locations":
        g, _, t = lattice_params(float(scale), float(epsilon))
    else:
        g, _, t = value_params(float(scale), float(epsilon))
    return float(g) ** 2 * _discrete_laplace_var(float(t))


@numba.njit(cache=True)
def _transition(kind, dt, q, tau):
    """One step of length dt: F = [[1, f01], [0, f11]] and Q = [[q00, q01], [q01, q11]].

    kind 0 random walk (q: m²/s), 1 constant velocity (q: m²/s³), 2 integrated
    Ornstein–Uhlenbeck velocity (q: stationary velocity variance m²/s², tau: its time constant s).
    """
    if kind == 0:
        return 0.0, 0.0, q * dt, 0.0, 0.0
    if kind == 1:
        return dt, 1.0, q * dt**3 / 3.0, q * dt**2 / 2.0, q * dt
    x = dt / tau
    a = math.exp(-x)
    # 2x − 3 + 4e^{−x} − e^{−2x}; for small x its series 2x³/3 − x⁴/2 (no cancellation)
    c = x**3 * (2.0 / 3.0 - 0.5 * x) if x < 1e-3 else 2.0 * x - 3.0 + 4.0 * a - a * a
    return tau * (1.0 - a), a, q * tau * tau * c, q * tau * (1.0 - a) ** 2, q * (1.0 - a * a)


@numba.njit(cache=True, nogil=True)
def _kalman_rts(y, obs, dt, r, q, kind, tau, v0, robust_k, smooth, gap, reset_var):
    """Filter (and smooth) ``y`` (n, k): k independent axes sharing one covariance recursion.

    ``obs[i]``: y[i] is an observation; ``dt[i]``: time since row i−1 (dt[0] unused); ``r``
    observation variance, ``q`` spectral density, ``cv`` constant velocity (else random walk),
    ``v0`` prior velocity variance, ``robust_k`` Huber threshold (0: plain Kalman). Returns the
    smoothed (or filtered) positions (n, k), NaN before the first observation, and the Gaussian
    log-likelihood terms (Σ log S, Σ ν²/S, number of observations) with S at unit R.
    """
    n, k = y.shape
    xf = np.empty((n, k, 2))  # filtered mean: position, velocity
    pf = np.empty((n, 3))  # filtered covariance: p00, p01, p11
    out = np.full((n, k), np.nan)
    sum_log_s = 0.0
    sum_nu2 = 0.0
    n_obs = 0
    start = -1
    for i in range(n):
        if start < 0:
            if not obs[i]:
                continue
            start = i
            for a in range(k):
                xf[i, a, 0] = y[i, a]
                xf[i, a, 1] = 0.0
            pf[i, 0] = r
            pf[i, 1] = 0.0
            pf[i, 2] = v0 if kind else 0.0
            continue
        f01, f11, q00, q01, q11 = _transition(kind, dt[i], q, tau)
        if dt[i] > gap:  # a long gap: start afresh (diffuse position, prior velocity)
            f01, f11, q00, q01, q11 = 0.0, 0.0, reset_var, 0.0, v0 if kind else 0.0
        # predict
        p00, p01, p11 = pf[i - 1, 0], pf[i - 1, 1], pf[i - 1, 2]
        a00 = p00 + 2.0 * f01 * p01 + f01 * f01 * p11 + q00
        a01 = f11 * p01 + f01 * f11 * p11 + q01
        a11 = f11 * f11 * p11 + q11
        for a in range(k):
            xf[i, a, 0] = xf[i - 1, a, 0] + f01 * xf[i - 1, a, 1]
            xf[i, a, 1] = f11 * xf[i - 1, a, 1]
        if obs[i]:
            s = a00 + r
            d2 = 0.0
            for a in range(k):
                nu = y[i, a] - xf[i, a, 0]
                d2 += nu * nu
            sum_log_s += k * math.log(s / r)
            sum_nu2 += d2 / s * r
            n_obs += k
            # robust: inflate R when the innovation is beyond robust_k standard deviations
            rr = r
            if robust_k > 0.0:
                z = math.sqrt(d2 / (k * s))
                if z > robust_k:
                    rr = r * z / robust_k + a00 * (z / robust_k - 1.0)
                    s = a00 + rr
            g0 = a00 / s
            g1 = a01 / s
            for a in range(k):
                nu = y[i, a] - xf[i, a, 0]
                xf[i, a, 0] += g0 * nu
                xf[i, a, 1] += g1 * nu
            pf[i, 0] = a00 * rr / s
            pf[i, 1] = a01 * rr / s
            pf[i, 2] = a11 - a01 * a01 / s
        else:
            pf[i, 0] = a00
            pf[i, 1] = a01
            pf[i, 2] = a11
    if start < 0:
        return out, sum_log_s, sum_nu2, n_obs
    last = n - 1
    for a in range(k):
        out[last, a] = xf[last, a, 0]
    if not smooth:
        for i in range(start, n):
            for a in range(k):
                out[i, a] = xf[i, a, 0]
        return out, sum_log_s, sum_nu2, n_obs
    # RTS backward pass: xs[i] = xf[i] + G (xs[i+1] − F xf[i]), G = Pf[i] Fᵀ Pp[i+1]⁻¹
    sx = np.empty((k, 2))
    for a in range(k):
        sx[a, 0] = xf[last, a, 0]
        sx[a, 1] = xf[last, a, 1]
    for i in range(n - 2, start - 1, -1):
        f01, f11, q00, q01, q11 = _transition(kind, dt[i + 1], q, tau)
        if dt[i + 1] > gap:
            f01, f11, q00, q01, q11 = 0.0, 0.0, reset_var, 0.0, v0 if kind else 0.0
        p00, p01, p11 = pf[i, 0], pf[i, 1], pf[i, 2]
        a00 = p00 + 2.0 * f01 * p01 + f01 * f01 * p11 + q00
        a01 = f11 * p01 + f01 * f11 * p11 + q01
        a11 = f11 * f11 * p11 + q11
        # C = Pf Fᵀ
        c00 = p00 + f01 * p01
        c01 = f11 * p01
        c10 = p01 + f01 * p11
        c11 = f11 * p11
        if kind:
            det = a00 * a11 - a01 * a01
            if det <= 0.0:
                g00, g01, g10, g11 = 0.0, 0.0, 0.0, 0.0
            else:
                i00, i01, i11 = a11 / det, -a01 / det, a00 / det
                g00 = c00 * i00 + c01 * i01
                g01 = c00 * i01 + c01 * i11
                g10 = c10 * i00 + c11 * i01
                g11 = c10 * i01 + c11 * i11
        else:
            g00 = c00 / a00 if a00 > 0.0 else 0.0
            g01 = g10 = g11 = 0.0
        for a in range(k):
            m0 = xf[i, a, 0] + f01 * xf[i, a, 1]
            m1 = f11 * xf[i, a, 1]
            d0 = sx[a, 0] - m0
            d1 = sx[a, 1] - m1
            n0 = xf[i, a, 0] + g00 * d0 + g01 * d1
            n1 = xf[i, a, 1] + g10 * d0 + g11 * d1
            sx[a, 0] = n0
            sx[a, 1] = n1
            out[i, a] = n0
    return out, sum_log_s, sum_nu2, n_obs


@numba.njit(cache=True, nogil=True, inline="always")
def _innovation(y, i, x0, c, g, a00, r, sum_log_s, sum_nu2):
    """Row i observed by filter (c, g) of :func:`_loglik_grid` with predicted position variance
    ``a00``: adds its log-likelihood terms to the sums (at unit R, as :func:`_kalman_rts`) and
    returns the innovation variance S."""
    k = y.shape[1]
    s = a00 + r
    d2 = 0.0
    for a in range(k):
        nu = y[i, a] - x0[c, g, a]
        d2 += nu * nu
    sum_log_s[c, g] += k * math.log(s / r)
    sum_nu2[c, g] += d2 / s * r
    return s


@numba.njit(cache=True, nogil=True)
def _loglik_grid(y, obs, dt, r_grid, qs, kinds, taus, v0s, gap, limits, glim, every):
    """Gaussian log-likelihood of the observations of ``y`` (n, k) under the filter of
    :func:`_kalman_rts` (no robust weights, no smoothing) for every motion model c (``qs[c]``,
    ``kinds[c]``, ``taus[c]``) and every observation variance in ``r_grid`` (``v0s[c, g]``: the
    prior velocity variance), in one pass over the rows; returns (models, variances).

    The same arithmetic as ``_kalman_rts(..., robust_k=0, smooth=False)`` followed by
    ``-0.5·(Σ log S + n_obs·log R + Σ ν²/S / R)``, so the numbers are identical; only the
    per-model and per-R passes, the stored filter states and the transition of each row
    (computed once per model for all R) are saved. For a random walk (kind 0) the velocity
    terms are exactly zero (F = [[1, 0], [0, 0]], zero prior and process velocity variance), so
    they are skipped: adding or multiplying those zeros leaves every number bit for bit as is.

    Pruning (``every`` > 0: checked every ``every`` rows): both sums only grow, so
    ``-0.5·(partial Σ log S + n_obs·log R + partial Σ ν²/S / R)`` is an upper bound on a cell's
    final value, computed in the same floating-point operations, whose roundings are monotone. A
    cell stops (its value −inf) once that bound is below ``limits[c]`` (a value its model is
    known to reach at another R: it cannot be the model's best), and a whole model stops once
    every cell's bound is below ``glim`` (its weight in motion="auto" is then below the floor
    anyway). ``limits`` −inf and ``glim`` −inf: nothing stops.
    """
    n, k = y.shape
    nm = qs.size
    m = r_grid.size
    x0 = np.empty((nm, m, k))
    x1 = np.zeros((nm, m, k))
    p00 = np.empty((nm, m))
    p01 = np.zeros((nm, m))
    p11 = np.zeros((nm, m))
    sum_log_s = np.zeros((nm, m))
    sum_nu2 = np.zeros((nm, m))
    n_obs = 0
    first = n  # the first observation starts every filter: position y, velocity 0
    for i in range(n):
        if obs[i]:
            first = i
            break
    for c in range(nm):
        for g in range(m):
            if first < n:
                # Element by element, not `x0[c, g, :] = y[first, :]`: copying an array into
                # a slice makes numba compile its shape-mismatch message (string formatting),
                # ~2.5 CPU-s per process on an empty cache. Same values.
                for a in range(k):
                    x0[c, g, a] = y[first, a]
            p00[c, g] = r_grid[g]
            p11[c, g] = v0s[c, g] if kinds[c] else 0.0
    active = np.ones((nm, m), dtype=np.bool_)
    alive = np.ones(nm, dtype=np.bool_)
    n_total = 0  # the final n_obs, for the bound
    for i in range(first + 1, n):
        if obs[i]:
            n_total += k
    n_log_r = np.empty(m)
    for g in range(m):
        n_log_r[g] = n_total * math.log(r_grid[g])
    for i in range(first + 1, n):
        reset = dt[i] > gap
        o = obs[i]
        if o:
            n_obs += k
        if every > 0 and (i - first) % every == 0:
            for c in range(nm):
                if not alive[c]:
                    continue
                top = -np.inf
                for g in range(m):
                    if active[c, g]:
                        bound = -0.5 * (sum_log_s[c, g] + n_log_r[g] + sum_nu2[c, g] / r_grid[g])
                        if bound < limits[c]:
                            active[c, g] = False
                        elif bound > top:
                            top = bound
                if top < glim:
                    alive[c] = False
                    active[c, :] = False
        for c in range(nm):
            if not alive[c]:
                continue
            kind = kinds[c]
            t01, t11, t00q, t01q, t11q = _transition(kind, dt[i], qs[c], taus[c])
            if kind == 0:  # random walk: position only (see docstring)
                for g in range(m):
                    if not active[c, g]:
                        continue
                    r = r_grid[g]
                    a00 = p00[c, g] + (_RESET * r if reset else t00q)
                    if o:
                        s = _innovation(y, i, x0, c, g, a00, r, sum_log_s, sum_nu2)
                        g0 = a00 / s
                        for a in range(k):
                            nu = y[i, a] - x0[c, g, a]
                            x0[c, g, a] += g0 * nu
                        p00[c, g] = a00 * r / s
                    else:
                        p00[c, g] = a00
                continue
            for g in range(m):
                if not active[c, g]:
                    continue
                r = r_grid[g]
                f01, f11, q00, q01, q11 = t01, t11, t00q, t01q, t11q
                if reset:
                    f01, f11, q00, q01, q11 = 0.0, 0.0, _RESET * r, 0.0, v0s[c, g]
                a00 = p00[c, g] + 2.0 * f01 * p01[c, g] + f01 * f01 * p11[c, g] + q00
                a01 = f11 * p01[c, g] + f01 * f11 * p11[c, g] + q01
                a11 = f11 * f11 * p11[c, g] + q11
                for a in range(k):
                    x0[c, g, a] = x0[c, g, a] + f01 * x1[c, g, a]
                    x1[c, g, a] = f11 * x1[c, g, a]
                if o:
                    s = _innovation(y, i, x0, c, g, a00, r, sum_log_s, sum_nu2)
                    g0 = a00 / s
                    g1 = a01 / s
                    for a in range(k):
                        nu = y[i, a] - x0[c, g, a]
                        x0[c, g, a] += g0 * nu
                        x1[c, g, a] += g1 * nu
                    p00[c, g] = a00 * r / s
                    p01[c, g] = a01 * r / s
                    p11[c, g] = a11 - a01 * a01 / s
                else:
                    p00[c, g] = a00
                    p01[c, g] = a01
                    p11[c, g] = a11
    out = np.full((nm, m), -np.inf)
    for c in range(nm):
        for g in range(m):
            if active[c, g]:
                r = r_grid[g]
                out[c, g] = -0.5 * (sum_log_s[c, g] + n_obs * math.log(r) + sum_nu2[c, g] / r)
    return out


_LAW_BUDGET = {"event": lambda eps, n: eps, "skip": lambda eps, n: eps,
               "user": lambda eps, n: eps / max(n, 1)}
"""Schemes whose fresh releases all spend a budget known from public parameters (ε, length)."""

_Q_GRID = np.logspace(-7.0, 4.0, 23)
"""Candidate ratios q/R (per second) of the released-data fit (``motion="fit"``)."""


def _public_columns(release: Release) -> tuple[np.ndarray, np.ndarray | None]:
    """The public output as an (n, k) float array and the times as int64 ns (or None) — nothing
    else."""
    if release.values is not None:
        y = np.asarray(release.values, dtype=np.float64).reshape(-1, 1)
    else:
        y = np.column_stack([np.asarray(release.lat, dtype=np.float64),
                             np.asarray(release.lon, dtype=np.float64)])
    t = None if release.time is None else epoch_ns(release.time)
    return y, t


def observations(y: np.ndarray, *, tau: np.ndarray | None = None, fill: str = "repeat",
                 longitude: bool = False) -> np.ndarray:
    """True where row i of the public output is a new observation: not NaN, not identical to
    row i−1 (a republished approximation repeats the previous output exactly) and, under a
    delayed ``fill`` (public; ``tau`` the public times), not a filled row
    (:func:`lmdk_core.schemes.fill.interpolated_rows`; ``longitude``: the last column is one)."""
    ok = ~np.isnan(y).any(axis=1)
    if y.shape[0] > 1:
        ok[1:] &= (y[1:] != y[:-1]).any(axis=1)
    if fill != "repeat":
        tau = np.arange(y.shape[0], dtype=float) if tau is None else tau
        ok &= ~interpolated_rows(y, tau, fill=fill, longitude=longitude)
    return ok


def _as_motion(motion: Any, kind_of_data: str) -> tuple[str, float, float]:
    """(kind, q, tau) of a motion name or tuple (None: the default for the kind of data)."""
    if motion is None:
        motion = "auto" if kind_of_data == "locations" else "fit"
    if isinstance(motion, str):
        if motion == "fit":
            return ("fit", 0.0, 0.0)
        if motion == "auto" and kind_of_data == "locations":
            return ("auto", 0.0, 0.0)
        if motion in MOTION and kind_of_data == "locations":
            return MOTION[motion]
        valid = ", ".join([*MOTION, "fit"]) if kind_of_data == "locations" else "fit"
        raise ParameterError(f"unknown motion {motion!r} for {kind_of_data}; valid: {valid} "
                             "or a tuple ('rw', q), ('cv', q), ('iou', q, tau)")
    if isinstance(motion, tuple) and len(motion) in (2, 3) and motion[0] in _KINDS:
        kind = motion[0]
        q = _positive(motion[1], "motion q")
        if kind == "iou":
            if len(motion) != 3:
                raise ParameterError("motion ('iou', q, tau) needs its time constant tau (s)")
            return kind, q, _positive(motion[2], "motion tau")
        if len(motion) != 2:
            raise ParameterError(f"motion ({kind!r}, q) takes one parameter q")
        return kind, q, 0.0
    raise ParameterError(f"motion must be a name ({', '.join([*MOTION, 'fit'])}) or a tuple "
                         f"('rw', q), ('cv', q), ('iou', q, tau); got {motion!r}")


def _positive(value: Any, name: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a positive number, got {value!r}") from None
    if not (math.isfinite(v) and v > 0):
        raise ParameterError(f"{name} must be a positive finite number, got {value!r}")
    return v


def _law_variance(release: Release, kind: str, n: int) -> float | None:
    """Per-axis noise variance from the law when the fresh budget is a function of public
    parameters only (event, skip: ε; user: ε/n; reserve with a share given by the user, not
    "auto": its regular moments' ε − B_L = ``params["regular_epsilon"]``); else None."""
    scale = float(release.params["radius_m" if kind == "locations" else "sensitivity"])
    if (release.scheme == "reserve" and release.params.get("share_source") == "given"
            and "regular_epsilon" in release.params):
        return noise_variance(kind, epsilon=float(release.params["regular_epsilon"]),
                              scale=scale)
    budget_of = _LAW_BUDGET.get(release.scheme)
    if budget_of is None:
        return None
    return noise_variance(kind, epsilon=budget_of(float(release.epsilon), n), scale=scale)


def _variance_floor(release: Release, kind: str) -> float:
    """The least per-axis noise variance any fresh release can have: the law at ε itself (no
    single release of any scheme spends more than ε, since G_t ≤ ε). A fitted R never goes
    below it."""
    scale = float(release.params["radius_m" if kind == "locations" else "sensitivity"])
    return noise_variance(kind, epsilon=float(release.epsilon), scale=scale)


_RESET = 1e8
"""Position variance added at a gap, in units of the noise variance (a diffuse restart)."""

_R_GRID = 2.0 ** np.arange(-4.0, 4.01, 0.5)
"""Factors of the rough noise variance tried by the maximum-likelihood fit of R."""


def _rough_variance(y: np.ndarray, obs: np.ndarray) -> float:
    """A robust first guess of the per-axis noise variance from the observations alone: the
    normalised MAD of second differences (for locally straight motion they are pure noise,
    of variance 6R)."""
    z = y[obs]
    if z.shape[0] < 3:
        return 1.0
    d2 = z[2:] - 2.0 * z[1:-1] + z[:-2]
    mad = float(np.median(np.abs(d2 - np.median(d2, axis=0))))
    return max((1.4826 * mad) ** 2 / 6.0, 1e-300)


def _run(y: np.ndarray, obs: np.ndarray, dt: np.ndarray, r: float | None,
         motion: tuple[str, float, float], robust: bool, gap: float,
         r_range: tuple[float, float] | None = None
         ) -> tuple[np.ndarray, float, float, tuple[str, float, float]]:
    """Smooth (n, k) ``y``; returns (smoothed, q, R), fitting by maximum likelihood on the
    observations whatever is not given (``motion="fit"``: q; ``r=None``: R)."""
    kind, q, tau = motion
    step = float(np.median(dt[1:])) if dt.size > 1 else 1.0
    step = step if step > 0 else 1.0

    # the kernels' inputs read-only, whatever the caller's (noise.apply.read_only: one compile)
    y, obs, dt = read_only(y), read_only(obs), read_only(dt)
    fy, fobs, fdt = map(read_only, _fit_rows(y, obs, dt))

    def passes(r_: float, q_: float, code_: int, smooth: bool, robust_k: float):
        if smooth:
            return _kalman_rts(y, obs, dt, r_, q_, code_, tau, _v0(code_, q_, r_, step),
                               robust_k, True, gap, _RESET * r_)
        return _kalman_rts(fy, fobs, fdt, r_, q_, code_, tau, _v0(code_, q_, r_, step),
                           robust_k, False, gap, _RESET * r_)

    if kind == "auto":  # average the public candidate models by their likelihood (free)
        if r is not None:
            r_grid = [r]
        else:
            lo_r, hi_r = r_range if r_range is not None else (0.0, np.inf)
            rough = _rough_variance(fy, fobs)
            r_grid = sorted({float(min(max(f * rough, lo_r), hi_r)) for f in _R_GRID})
        fits = []  # (log-likelihood, model, R) of each candidate at its best R
        grids = _models_loglik(fy, fobs, fdt, r_grid, CANDIDATES, step, gap, prune=True)
        for cand, lls_r in zip(CANDIDATES, grids, strict=True):
            top = (-np.inf, 1.0)
            for ll, rr in zip(lls_r, r_grid, strict=True):
                if ll > top[0]:
                    top = (float(ll), rr)
            fits.append((top[0], cand, top[1]))
        lls = np.array([f[0] for f in fits])
        w = np.exp(lls - lls.max())
        w[w < _W_MIN] = 0.0
        w /= w.sum()
        out = np.zeros_like(y)
        for wi, (_, (c_kind, c_q, c_tau), rr) in zip(w, fits, strict=True):
            if wi > 0.0:
                c_code = _KINDS[c_kind]
                sm, *_ = _kalman_rts(y, obs, dt, rr, c_q, c_code, c_tau,
                                     _v0(c_code, c_q, rr, step), _ROBUST_K if robust else 0.0,
                                     True, gap, _RESET * rr)
                out += wi * sm
        _, chosen, r = fits[int(np.argmax(lls))]
        return out, chosen[1], r, chosen
    if kind == "fit":
        kind, code = "rw", 0
        best: tuple[float, float, float] = (-np.inf, 1.0, 1.0)
        for lam in _Q_GRID:
            if r is None:  # profile likelihood: R̂ = mean of ν²/S at unit R, kept ≥ the floor
                _, sl, sn, no = passes(1.0, float(lam), code, False, 0.0)
                r_hat = max(sn / no if no else 1.0, r_range[0] if r_range else 0.0, 1e-300)
                ll = -0.5 * (sl + no * math.log(r_hat) + sn / r_hat) if no else 0.0
                trial = (ll, float(lam), r_hat)
            else:
                _, sl, sn, no = passes(r, float(lam) * r, code, False, 0.0)
                trial = (-0.5 * (sl + no * math.log(r) + sn / r), float(lam), r)
            if trial[0] > best[0]:
                best = trial
        r = best[2]
        q = best[1] * r
    else:
        code = _KINDS[kind]
        if r is None:
            rough = _rough_variance(fy, fobs)
            best_r: tuple[float, float] = (-np.inf, rough)
            lo_r, hi_r = r_range if r_range is not None else (0.0, np.inf)
            grid = sorted({float(min(max(f * rough, lo_r), hi_r)) for f in _R_GRID})
            for ll, rr in zip(_grid_loglik(fy, fobs, fdt, grid, q, code, tau, step, gap), grid,
                              strict=True):
                if ll > best_r[0]:
                    best_r = (float(ll), rr)
            r = best_r[1]
    out, *_ = passes(r, q, code, True, _ROBUST_K if robust else 0.0)
    return out, q, r, (kind, q, tau)


def _grid_loglik(y: np.ndarray, obs: np.ndarray, dt: np.ndarray, r_grid: list[float], q: float,
                 code: int, tau: float, step: float, gap: float) -> np.ndarray:
    """Log-likelihood of the filter of one motion model at each observation variance of
    ``r_grid`` (one batched pass: :func:`_loglik_grid`)."""
    kind = next(name for name, c in _KINDS.items() if c == code)
    return _models_loglik(y, obs, dt, r_grid, ((kind, q, tau),), step, gap)[0]


def _models_loglik(y: np.ndarray, obs: np.ndarray, dt: np.ndarray, r_grid: list[float],
                   models: tuple[tuple[str, float, float], ...], step: float, gap: float,
                   prune: bool = False) -> np.ndarray:
    """Log-likelihood of the filter of every motion model ``(kind, q, tau)`` at each observation
    variance of ``r_grid``, shape (models, variances): one pass over the rows for all of them
    (:func:`_loglik_grid`).

    ``prune``: only what motion="auto" reads is exact — each model's largest value and where it
    is (the first R with it), for every model whose weight exp(ll − max ll) can reach
    :data:`_W_MIN`; a value that cannot be either is −inf. First every model is filtered at the
    middle R of the grid (an exact value each model reaches), then the whole grid with cells and
    models dropped by their upper bounds (docs/smoothing.md)."""
    y, obs, dt = read_only(y), read_only(obs), read_only(dt)  # as _run passes them: one compile
    r_arr = np.asarray(r_grid, dtype=np.float64)
    codes = np.array([_KINDS[kind] for kind, _, _ in models], dtype=np.int64)
    qs = np.array([float(q) for _, q, _ in models])
    taus = np.array([float(tau) for _, _, tau in models])
    v0s = np.array([[_v0(int(code), float(q), float(rr), step) for rr in r_arr]
                    for code, q in zip(codes, qs, strict=True)]).reshape(len(models), r_arr.size)
    none = np.full(len(models), -np.inf)
    if not prune or r_arr.size < 3:
        return _loglik_grid(y, obs, dt, r_arr, qs, codes, taus, v0s, float(gap), none,
                            -np.inf, 0)
    mid = r_arr.size // 2
    probe = _loglik_grid(y, obs, dt, r_arr[mid:mid + 1], qs, codes, taus,
                         np.ascontiguousarray(v0s[:, mid:mid + 1]), float(gap), none, -np.inf,
                         0)[:, 0]
    # a model whose every value is below this has weight < _W_MIN against the best probe
    best = float(probe.max())
    glim = best + math.log(_W_MIN) - _W_SLACK * max(1.0, abs(best))
    return _loglik_grid(y, obs, dt, r_arr, qs, codes, taus, v0s, float(gap), probe, glim,
                        _PRUNE_EVERY)


_W_MIN = 1e-3
"""motion="auto": a candidate model whose weight exp(ll − max ll) is below this gets none."""
_W_SLACK = 1e-9
"""Relative log-likelihood margin of the model pruning (values round at ~1e-16 relative)."""
_PRUNE_EVERY = 256
"""Rows between two pruning checks of :func:`_loglik_grid`."""


FIT_ROWS = 50_000
"""The maximum-likelihood fits read at most this many rows: all of a shorter release, else
ten evenly spaced blocks of consecutive rows (each block starts afresh), so fitting costs the
same at 10⁴ and 10⁶ points."""


def _fit_rows(y: np.ndarray, obs: np.ndarray, dt: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = y.shape[0]
    if n <= FIT_ROWS:
        return y, obs, dt
    block = FIT_ROWS // 10
    starts = np.linspace(0, n - block, 10).astype(np.int64)
    idx = (starts[:, None] + np.arange(block)[None, :]).ravel()
    fdt = dt[idx].copy()
    fdt[::block] = np.inf  # a block boundary is a reset
    return np.ascontiguousarray(y[idx]), obs[idx], fdt


def _v0(code: int, q: float, r: float, step: float) -> float:
    """Prior velocity variance: IOU its stationary variance q; constant velocity diffuse
    (10 noise standard deviations per typical step); unused by the random walk."""
    if code == 2:
        return q
    return 100.0 * r / (step * step)


def bridge_long_gaps(out: np.ndarray, obs: np.ndarray, t: np.ndarray, gap: float
                     ) -> np.ndarray:
    """``out`` with every row that is not an observation and lies in a gap of more than ``gap``
    (time units of ``t``) between two observations replaced by the straight line, in time,
    between the smoothed rows at the gap's two ends; such rows after the last observation hold
    its smoothed value.

    Inside a long run of repeats (Skip at the person's places: a night at home) the motion
    model alone carries the last velocity into the gap and can drift kilometres from both ends
    (tests/test_smoothing_gaps.py: more than 1 km after an arrival at speed; on the sample at
    ε = 10 the smoothed release was worse than the raw one); the line never leaves the segment
    between the two ends. It reads only the smoothed output,
    the observation flags and the public times: post-processing, free.
    """
    n = out.shape[0]
    idx = np.arange(n)
    prev = np.maximum.accumulate(np.where(obs, idx, -1))
    nxt = np.minimum.accumulate(np.where(obs, idx, n)[::-1])[::-1]
    pi, ni = np.maximum(prev, 0), np.minimum(nxt, n - 1)
    long_gap = ~obs & (prev >= 0) & ((nxt >= n) | (t[ni] - t[pi] > gap))
    line = np.column_stack(interpolate_fill(tuple(out.T), obs, t))  # held after the last
    return np.where(long_gap[:, None], line, out)


def smooth_release(release: Release, *, motion: Any = None, noise_sd: float | None = None,
                   robust: bool = False, gap_s: float = GAP_S,
                   domain: tuple[float, float] | None = None) -> Release:
    """The release smoothed by a Kalman filter + RTS smoother: free post-processing.

    Reads only the public output (``time`` and ``lat``/``lon`` or ``value``: the columns of
    ``release.to_frame(public=True)``) and public parameters (``scheme``, ``epsilon``,
    ``radius_m`` or ``sensitivity``); never ``budget``, ``published`` or ``landmarks``. A row
    identical to the row before it is a repeat (the scheme republished its last output), not a
    new observation; NaN rows (nothing released yet) stay NaN. The result therefore has the
    input's privacy guarantee unchanged and costs no budget.

    ``motion``: locations — "auto" (default: the public models :data:`CANDIDATES` averaged by
    their likelihood on the released points), "town", "walk", "drive" (public random-walk
    constants, :data:`MOTION`), "fit" (q fitted by maximum likelihood on the released points) or
    a tuple
    ``("rw", q)``, ``("cv", q)``, ``("iou", q, tau)``; values — "fit" (default) or a tuple, q in
    units²/s (units²/step without times). ``noise_sd``: per-axis noise standard deviation of a
    fresh release, metres (or value units); None = the mechanism's law where every fresh release
    spends a public budget (event, skip: ε; user: ε/n; reserve with a share the user gave:
    ``regular_epsilon``), otherwise fitted by maximum likelihood on the released points, never
    below the law at ε. ``robust``: Huber-weighted updates (heavy-tailed noise). ``gap_s``: the
    smoother starts afresh after a longer gap between timestamps (seconds; steps without times),
    and rows without a new observation inside a longer gap between observations follow the
    straight line between its two ends (:func:`bridge_long_gaps`).
    ``domain``: values only, ``(lo, hi)`` to clamp the smoothed values to.

    Returns a :class:`Release` with the same scheme, ε, time, ``seeded`` flag and (copied, for
    the accounting) budget/published/landmarks, the smoothed output, and ``params["smoothing"]``
    saying how it was smoothed. Raises ParameterError on invalid parameters.
    """
    if not isinstance(release, Release):
        raise ParameterError(f"smooth_release needs a Release, got {type(release).__name__}")
    kind = release.kind
    if motion is None:
        motion = "auto" if kind == "locations" else "fit"
    mot = _as_motion(motion, kind)
    gap = _positive(gap_s, "gap_s")
    if not isinstance(robust, (bool, np.bool_)):
        raise ParameterError(f"robust must be True or False, got {robust!r}")
    lo = hi = None
    if domain is not None:
        if kind != "values":
            raise ParameterError("domain applies to values only (locations are not clamped)")
        try:
            lo, hi = (float(v) for v in domain)
        except (TypeError, ValueError):
            raise ParameterError(f"domain must be a pair (lo, hi), got {domain!r}") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
            raise ParameterError(f"domain must be finite with lo ≤ hi, got {domain!r}")
    y, t = _public_columns(release)
    n = y.shape[0]
    r = None if noise_sd is None else _positive(noise_sd, "noise_sd") ** 2
    source = "given"
    if r is None:
        r = _law_variance(release, kind, n)
        source = "law" if r is not None else "fitted on the released points"
    obs = observations(y, tau=time_axis(release.time, n), fill=release.params.get("fill", "repeat"),
                       longitude=kind == "locations")
    if kind == "locations" and obs.any():
        first = int(np.argmax(obs))
        lat0, lon0 = float(y[first, 0]), float(y[first, 1])
        z = np.column_stack(degrees_to_metres(lat0, lon0, y[:, 0], y[:, 1]))
    else:
        z = y
    dt = np.ones(n)
    if t is not None and n > 1:
        dt[1:] = seconds(np.maximum(np.diff(t), 0))  # unsorted times: no step
    r_range = None if r is not None else (_variance_floor(release, kind), np.inf)
    if obs.any():
        out, q, r, mot = _run(np.ascontiguousarray(z), obs, dt, r, mot, bool(robust), gap,
                              r_range)
        out = bridge_long_gaps(out, obs, np.cumsum(dt), gap)
    else:
        out, q, r = np.full_like(y, np.nan), mot[1], (r if r is not None else float("nan"))
    cols: dict[str, Any]
    if kind == "locations":
        if obs.any():
            lat, lon = offset_points(lat0, lon0, out[:, 0], out[:, 1])
        else:
            lat, lon = out[:, 0], out[:, 1]
        cols = {"lat": lat, "lon": lon}
    else:
        v = out[:, 0]
        if lo is not None:
            v = np.clip(v, lo, hi)
        cols = {"values": v}
    how = {"method": "Kalman filter + RTS smoother (post-processing, free)",
           "motion": motion if isinstance(motion, str) else mot[0],
           "model": [mot[0], float(mot[1]), float(mot[2])], "q": float(q),
           "noise_sd": float(math.sqrt(r)) if math.isfinite(r) else None,
           "noise_source": source, "robust": bool(robust), "gap_s": gap}
    if mot[0] == "iou":
        how["tau_s"] = mot[2]
    if lo is not None:
        how["domain"] = [lo, hi]
    return dataclasses.replace(release, params={**release.params, "smoothing": how}, **cols)
