"""Predicted error of each scheme before releasing, and the ε that reaches a target accuracy.

Everything here is a closed form of public quantities only — the number of timestamps T, the
number of landmark timestamps |L| (public input in landmark privacy), ε and the protection
radius r — so looking at it, or choosing settings from it, reveals nothing about the trace
beyond T and |L|. Where a scheme's error also depends on how the person moves (republished
points: Skip at landmarks, Adaptive/BD/BA between publications) no closed form exists; the
prediction says so (``kind``), and a caller that wants a number simulates on the data, knowing
that such a simulation is for the data owner's eyes only.

Noise of one fresh release with budget e: mean error ``k·r/e`` metres for locations, where
``k`` is the location mechanism's mean error per r/ε (:func:`mean_error_factor`, read from
:class:`lmdk_core.mechanisms.PlanarLaplace` so it follows the mechanism in use), and ``Δ/e``
for Laplace values (mean |noise| of Laplace(Δ/e)).

Per scheme (fresh releases only; ε_t from :mod:`lmdk_core.allocation`):

* event  ``k·r/ε`` (not landmark-private);  user ``k·r·T/ε``;  uniform ``k·r·(|L|+1)/ε``;
* skip   ``k·r/ε`` at the T − |L| regular timestamps; landmarks repeat the last regular release,
  so their error adds the distance moved since then (``kind="lower bound"`` for the mean);
* adaptive / reserve / bd / ba: data-dependent (``kind="simulate"``; Reserve's budgets are public
  but, like Skip's, its landmarks' error depends on how the person moves).

:func:`estimate_errors` adds a quick seeded simulation on the true trace for the schemes without
a closed form, and :func:`recommend` picks the landmark-private scheme with the smallest estimate.
With ``smooth=True`` it also smooths each simulated release (:func:`lmdk_core.smooth_release`,
free post-processing) and reports that error (``SchemeEstimate.smoothed``): smoothing has no
closed form, so every scheme is then simulated, and :attr:`SchemeEstimate.estimate` (the number
to show, and what ``recommend(..., public_only=False)`` ranks by) is the smoothed error.
Those numbers depend on the data: they are for the data owner's eyes only (never exported, never
part of a release). Derivations: ``docs/advice.md``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

from .errors import ParameterError
from .validation import check_epsilon, check_int, check_nonnegative, check_positive, check_seed

__all__ = [
    "PREFERENCE",
    "ErrorPrediction",
    "SchemeEstimate",
    "TargetAdvice",
    "epsilon_for_error",
    "epsilon_for_mean_error",
    "estimate_errors",
    "interval_for_error",
    "mean_error_factor",
    "predict_errors",
    "recommend",
    "share_outside_view",
    "skip_lag",
    "skip_mean_error",
]

_CLOSED = ("event", "user", "uniform")
_ORDER = ("event", "user", "uniform", "skip", "adaptive", "reserve", "bd", "ba")


@dataclass(frozen=True)
class ErrorPrediction:
    """Predicted mean error of one scheme (metres for locations, value units for values).

    ``kind``: ``"closed form"`` (exact expectation of the noise), ``"lower bound"`` (the true mean
    is at least this) or ``"simulate"`` (no closed form; ``mean_error`` is NaN).
    ``landmark_private``: whether the scheme satisfies (ε, L)-landmark privacy.
    """

    scheme: str
    mean_error: float
    kind: str
    landmark_private: bool


def mean_error_factor(kind: str = "locations") -> float:
    """k such that one fresh release at budget e has mean error k·unit/e (unit = r or Δ)."""
    if kind == "values":
        return 1.0
    if kind != "locations":
        raise ParameterError(f"kind must be 'locations' or 'values', got {kind!r}")
    from .mechanisms import PlanarLaplace

    return float(PlanarLaplace(epsilon=1.0, radius_m=1.0).mean_error_m)


def _multiplier(scheme: str, n: int, n_landmarks: int) -> float:
    """How many times the event-level noise scale a fresh release of ``scheme`` carries."""
    return {"event": 1.0, "user": float(max(n, 1)), "uniform": float(n_landmarks + 1),
            "skip": 1.0}[scheme]


def _counts(n: int, n_landmarks: int) -> tuple[int, int]:
    n = check_int(n, "n", minimum=0)
    n_landmarks = check_int(n_landmarks, "n_landmarks", minimum=0)
    if n_landmarks > n:
        raise ParameterError(f"n_landmarks ({n_landmarks}) cannot exceed n ({n})")
    return n, n_landmarks


def predict_errors(
    *, n: int, n_landmarks: int, epsilon: float, radius_m: float | None = None,
    sensitivity: float | None = None,
) -> list[ErrorPrediction]:
    """Predicted mean error of every scheme for T = ``n`` timestamps and |L| = ``n_landmarks``.

    Give ``radius_m`` (locations, metres) or ``sensitivity`` (values). Ordered as
    :data:`lmdk_core.release.SCHEMES`.
    """
    n, n_landmarks = _counts(n, n_landmarks)
    eps = check_epsilon(epsilon)
    unit, kind = _unit(radius_m, sensitivity)
    base = mean_error_factor(kind) * unit / eps
    out = []
    for scheme in _ORDER:
        private = scheme != "event" or n_landmarks == 0
        if scheme in _CLOSED:
            out.append(ErrorPrediction(scheme, base * _multiplier(scheme, n, n_landmarks),
                                       "closed form", private))
        elif scheme == "skip":
            kind_s = "closed form" if n_landmarks == 0 else "lower bound"
            out.append(ErrorPrediction(scheme, base, kind_s, True))
        else:
            out.append(ErrorPrediction(scheme, float("nan"), "simulate", True))
    return out


def _unit(radius_m: float | None, sensitivity: float | None) -> tuple[float, str]:
    if (radius_m is None) == (sensitivity is None):
        raise ParameterError("give radius_m (locations) or sensitivity (values), exactly one")
    if radius_m is not None:
        return check_positive(radius_m, "radius_m"), "locations"
    return check_positive(sensitivity, "sensitivity"), "values"


def epsilon_for_error(
    scheme: str, *, target_error: float, n: int, n_landmarks: int,
    radius_m: float | None = None, sensitivity: float | None = None,
) -> float:
    """The ε at which ``scheme``'s fresh releases have mean error ``target_error``.

    Closed-form schemes only (event, user, uniform, skip — for Skip the regular timestamps).
    The result is the smallest ε whose predicted error is ≤ the target.
    """
    if scheme not in (*_CLOSED, "skip"):
        raise ParameterError(
            f"no closed form for scheme {scheme!r}; choose event, user, uniform or skip "
            "(adaptive, bd and ba depend on how the data moves: simulate them)"
        )
    n, n_landmarks = _counts(n, n_landmarks)
    target = check_positive(target_error, "target_error")
    unit, kind = _unit(radius_m, sensitivity)
    return mean_error_factor(kind) * unit * _multiplier(scheme, n, n_landmarks) / target


def interval_for_error(
    *, target_error_m: float, epsilon: float, radius_m: float, duration_s: float, n: int,
    n_landmarks: int,
) -> float | None:
    """Release interval (seconds) at which Uniform reaches ``target_error_m`` at budget ε.

    Releasing one location per interval keeps about the same share of landmark timestamps, so
    |L'| ≈ |L|·T'/T with T' = duration/interval; Uniform's error k·r·(|L'|+1)/ε meets the target
    when |L'| ≤ ε·target/(k·r) − 1. Returns None when no interval reaches it (even a single
    landmark release is too noisy) and 0.0 when every fix can be released. The estimate assumes
    the landmark share is unchanged by resampling; check the real |L'| after resampling.
    """
    n, n_landmarks = _counts(n, n_landmarks)
    eps = check_epsilon(epsilon)
    target = check_positive(target_error_m, "target_error_m")
    r = check_positive(radius_m, "radius_m")
    duration = check_positive(duration_s, "duration_s")
    allowed = eps * target / (mean_error_factor("locations") * r) - 1.0
    if allowed < 0 or (allowed < 1 and n_landmarks > 0):
        return None
    if n_landmarks <= allowed:
        return 0.0
    n_release = allowed * n / n_landmarks  # T' with |L'| = allowed
    return float(duration / max(np.floor(n_release), 1.0))


# ------------------------------------------------------------ target for the headline mean error


@dataclass(frozen=True)
class TargetAdvice:
    """The ε at which ``scheme``'s mean error over every released moment (the headline *Mean
    error* of a release: :func:`lmdk_core.metrics.mae_metres`, repeats included, before any
    smoothing) is expected to be at most ``target_m`` metres.

    ``epsilon``: that ε (``inf`` when no ε reaches the target); ``floor_m``: the mean error no ε
    goes below (0 where every moment is released fresh; for Skip the distance its repeats lag
    behind); ``fresh_epsilon``: the public closed form — the ε at which the *fresh* releases
    alone average ``target_m``; ``reads_trace``: True when ``epsilon``/``floor_m`` were computed
    from the true trace (a what-if for the data owner: an ε chosen from it depends on the data,
    which the guarantee does not cover).
    """

    scheme: str
    target_m: float
    epsilon: float
    floor_m: float
    fresh_epsilon: float
    reads_trace: bool

    @property
    def reachable(self) -> bool:
        return bool(np.isfinite(self.epsilon))


def skip_lag(traj: Any, landmarks: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where Skip's release stands relative to the truth when the noise is ignored.

    Skip releases every regular moment fresh and repeats, at a landmark moment, its release of
    the last regular moment before it (nothing before the first regular moment). Returns
    ``source`` (index of that regular moment, −1 where nothing is released), and the east/north
    metres from the source's true point to the moment's true point (0 at regular moments)."""
    from .accounting import as_landmark_mask
    from .geo import degrees_to_metres
    from .landmarks import trajectory_points

    lat, lon = trajectory_points(traj)
    mask = as_landmark_mask(landmarks, lat.size)
    idx = np.arange(lat.size)
    source = np.maximum.accumulate(np.where(mask, -1, idx)) if lat.size else idx
    ok = source >= 0
    east, north = np.zeros(lat.size), np.zeros(lat.size)
    src = source[ok]
    east[ok], north[ok] = degrees_to_metres(lat[src], lon[src], lat[ok], lon[ok])
    return source, east, north


_UNIT_R = 1000.0
"""Radius (m) at ε = 1 of the unit noise sample of :func:`skip_mean_error` (scaled by r/ε)."""
_PAIRS = 4
"""Antithetic noise pairs per landmark moment in :func:`skip_mean_error`."""


class _SkipCurve:
    """Expected mean error of Skip over its released moments as a function of ε (metres):
    regular moments k·r/ε exactly; each landmark moment E|d − N| over a fixed sample of the
    location mechanism's noise N (antithetic pairs ±N, so the estimate is even and convex in the
    noise scale r/ε, hence never increases with ε); floor = mean |d| (ε → ∞)."""

    def __init__(self, traj: Any, landmarks: Any, radius_m: float, rng: int) -> None:
        from .geo import degrees_to_metres, haversine_m
        from .landmarks import trajectory_points
        from .mechanisms import PlanarLaplace
        from .noise.source import simulation_rng

        lat, lon = trajectory_points(traj)
        source, east, north = skip_lag(traj, landmarks)
        released = source >= 0
        self.n = int(released.sum())
        self.radius_m = radius_m
        repeat = released & (source != np.arange(source.size))
        self.n_fresh = self.n - int(repeat.sum())
        src = source[repeat]
        lag = haversine_m(lat[src], lon[src], lat[repeat], lon[repeat])
        self.floor_m = float(lag.sum() / self.n) if self.n else float("nan")
        self.de, self.dn = east[repeat][:, None], north[repeat][:, None]  # (m, 1) metres
        self.ue = self.un = np.zeros((0, _PAIRS))
        if src.size:  # the mechanism's own noise at the source points, scale r = _UNIT_R at ε = 1
            at_lat, at_lon = np.repeat(lat[src], _PAIRS), np.repeat(lon[src], _PAIRS)
            nlat, nlon = PlanarLaplace(epsilon=1.0, radius_m=_UNIT_R).randomise(
                at_lat, at_lon, rng=simulation_rng(rng), noise="fast")
            ue, un = degrees_to_metres(at_lat, at_lon, nlat, nlon)
            self.ue = ue.reshape(src.size, _PAIRS) / _UNIT_R
            self.un = un.reshape(src.size, _PAIRS) / _UNIT_R
        self.k = mean_error_factor()
        self._seen: dict[float, float] = {}
        self._points: list[tuple[float, float, float]] = []  # (s = r/ε, value, slope in s)

    def __call__(self, epsilon: float) -> float:
        if not self.n:
            return float("nan")
        if epsilon in self._seen:  # the search may ask twice for one ε
            return self._seen[epsilon]
        scale = self.radius_m / epsilon
        fresh = self.n_fresh * self.k * scale
        minus, plus = np.empty_like(self.ue), np.empty_like(self.ue)
        slope = _lag_norms(self.de, self.dn, self.ue, self.un, scale, minus, plus)
        rep = (minus.sum() + plus.sum()) / (2 * _PAIRS)
        self._seen[epsilon] = out = float((fresh + rep) / self.n)
        # the curve in the noise scale s = r/ε at this point, and its slope there (for at_most)
        self._points.append((scale, out, (self.n_fresh * self.k + slope / (2 * _PAIRS)) / self.n))
        return out

    def at_most(self, epsilon: float, target: float) -> bool:
        """``self(epsilon) <= target``, the same answer, decided without evaluating the curve
        when the points already evaluated settle it: the curve is convex in s = r/ε, so it lies
        below the chord between evaluated points on either side of s and above the tangent at
        any evaluated point (docs/advice.md). A bound decides only with a relative margin of
        :data:`_DECIDE_MARGIN`, far above the rounding of an evaluation (~1e-13)."""
        if not self.n:
            return False
        s = self.radius_m / epsilon
        below = [p for p in self._points if p[0] < s]
        above = [p for p in self._points if p[0] > s]
        if below and above:
            (sa, fa, _), (sb, fb, _) = max(below), min(above)
            if fa + (fb - fa) * (s - sa) / (sb - sa) < target * (1.0 - _DECIDE_MARGIN):
                return True
        if self._points and max(f + d * (s - sp) for sp, f, d in self._points) > (
                target * (1.0 + _DECIDE_MARGIN)):
            return False
        return self(epsilon) <= target


_DECIDE_MARGIN = 1e-9
"""Relative margin by which a convexity bound must clear the target in
:meth:`_SkipCurve.at_most` (evaluations round at ~1e-13 relative)."""


@numba.njit(cache=True, nogil=True)
def _lag_norms(de, dn, ue, un, scale, minus, plus):
    """|d − s·u| and |d + s·u| for every landmark moment i and noise pair j, into ``minus`` and
    ``plus``: the same hypot of the same differences as numpy's
    ``np.hypot(de - s·ue, dn - s·un)`` (bit for bit), in one pass without temporaries. Returns
    the derivative of their total in s (0 for a term at its zero: a subgradient)."""
    slope = 0.0
    for i in range(ue.shape[0]):
        for j in range(ue.shape[1]):
            se = scale * ue[i, j]
            sn = scale * un[i, j]
            m = math.hypot(de[i, 0] - se, dn[i, 0] - sn)
            p = math.hypot(de[i, 0] + se, dn[i, 0] + sn)
            minus[i, j] = m
            plus[i, j] = p
            if m > 0.0:
                slope -= (ue[i, j] * (de[i, 0] - se) + un[i, j] * (dn[i, 0] - sn)) / m
            if p > 0.0:
                slope += (ue[i, j] * (de[i, 0] + se) + un[i, j] * (dn[i, 0] + sn)) / p
    return slope


def skip_mean_error(traj: Any, landmarks: Any, *, epsilon: float, radius_m: float,
                    rng: int = 0) -> float:
    """Expected mean error (metres) of a Skip release of ``traj`` over its released moments —
    the headline *Mean error*, repeats at the landmarks included, before smoothing.

    Regular moments: the closed form k·r/ε. Landmark moments: the distance from the true point
    to the repeated release, averaged over a seeded sample of the mechanism's noise (``rng``;
    :data:`_PAIRS` antithetic pairs per moment). Reads the true trace: a what-if for the data
    owner, never part of a release."""
    eps = check_epsilon(epsilon)
    r = check_positive(radius_m, "radius_m")
    return _SkipCurve(traj, landmarks, r, check_seed(rng, "skip_mean_error"))(eps)


EPSILON_SEARCH_MAX = 1e12
"""Largest ε :func:`epsilon_for_mean_error` searches; a target it does not reach there is
reported as unreachable (at that ε the noise is far below a millimetre)."""


def epsilon_for_mean_error(
    traj: Any, landmarks: Any, *, scheme: str, target_error_m: float, radius_m: float,
    rng: int = 0,
) -> TargetAdvice:
    """The ε at which ``scheme``'s headline mean error (over every released moment, repeats
    included, unsmoothed) is expected to be at most ``target_error_m`` metres.

    Event, user, uniform (and Skip without landmarks) release every moment fresh: the public
    closed form :func:`epsilon_for_error` is exact in expectation, floor 0. Skip with landmarks
    repeats older points at the landmarks: its mean error never goes below
    :attr:`TargetAdvice.floor_m` (how far the person moved since the last regular moment), and
    the ε is found by bisection on :func:`skip_mean_error` (monotone in ε) — computed from the
    true trace (``reads_trace=True``). Other schemes have no closed form: ParameterError.
    """
    from .accounting import as_landmark_mask
    from .landmarks import trajectory_points

    lat, _ = trajectory_points(traj)
    mask = as_landmark_mask(landmarks, lat.size)
    n, n_lm = int(lat.size), int(mask.sum())
    target = check_positive(target_error_m, "target_error_m")
    r = check_positive(radius_m, "radius_m")
    fresh = epsilon_for_error(scheme, target_error=target, n=n, n_landmarks=n_lm, radius_m=r)
    if scheme != "skip" or n_lm == 0:
        return TargetAdvice(scheme, target, fresh, 0.0, fresh, False)
    curve = _SkipCurve(traj, mask, r, check_seed(rng, "epsilon_for_mean_error"))
    if not curve.n or not curve.floor_m < target or not curve(EPSILON_SEARCH_MAX) <= target:
        return TargetAdvice(scheme, target, float("inf"), curve.floor_m, fresh, True)
    hi = fresh  # about where it starts: a repeat is on average no closer than a fresh point
    while curve(hi) > target:
        hi = min(hi * 4.0, EPSILON_SEARCH_MAX)
    lo = hi / 2.0
    while curve(lo) <= target:
        lo /= 2.0
    for _ in range(60):  # bisection in log ε: f(lo) > target ≥ f(hi)
        mid = math.sqrt(lo * hi)
        if curve.at_most(mid, target):  # = curve(mid) <= target, often without evaluating
            hi = mid
        else:
            lo = mid
        if hi / lo < 1 + 1e-5:  # well inside the page's 3 significant digits
            break
    return TargetAdvice(scheme, target, hi, curve.floor_m, fresh, True)


# --------------------------------------------------------------------------- estimates on the data


@dataclass(frozen=True)
class SchemeEstimate:
    """A scheme's closed-form prediction next to a quick simulation on the data (metres).

    ``predicted``/``kind``: as :class:`ErrorPrediction`; ``simulated``: mean error of one seeded
    release on the true trace (NaN when not simulated); ``smoothed``: mean error of that seeded
    release after :func:`lmdk_core.smooth_release` (NaN unless asked for). :attr:`estimate` is
    the number to show.
    """

    scheme: str
    predicted: float
    kind: str
    simulated: float
    landmark_private: bool
    smoothed: float = float("nan")

    @property
    def estimate(self) -> float:
        """The smoothed error when simulated (smoothing on), else the exact expectation where a
        closed form exists, else the simulation, else the bound."""
        if np.isfinite(self.smoothed):
            return self.smoothed
        if self.kind == "closed form" or not np.isfinite(self.simulated):
            return self.predicted
        return self.simulated


def estimate_errors(
    traj: Any, landmarks: Any, *, epsilon: float, radius_m: float, rng: int = 0,
    params: Mapping[str, Mapping[str, Any]] | None = None, simulate: bool = True,
    smooth: bool = False, reuse: MutableMapping[Any, tuple[float, float]] | None = None,
) -> list[SchemeEstimate]:
    """Closed forms for every scheme plus, where none is exact (Skip with landmarks, Adaptive,
    BD, BA), the mean error of one release simulated on ``traj`` with the seeded generator
    ``rng``.

    The simulation uses the true trace and a fixed seed: it is a what-if for the data owner,
    never a release; nothing from it may reach an export. ``params``: per-scheme parameters as
    in :func:`lmdk_core.comparison.compare_schemes` (unused schemes are ignored). ``smooth``:
    also simulate the schemes with a closed form, and smooth each scheme's simulated release
    (:func:`lmdk_core.smooth_release` with its defaults; ``traj`` should then carry its ``time``
    column): ``SchemeEstimate.smoothed``. The raw and the smoothed error come from the same
    release, the one ``compare_schemes(..., runs=1, rng=rng)`` draws. ``reuse``: a dict the
    caller keeps for this one ``traj``; the smoothed trials of schemes whose release does not
    depend on where the landmarks are (event and user: not at all; uniform: only on their
    number) are kept in it and reused when only the landmarks change.
    """
    from .accounting import as_landmark_mask
    from .comparison import compare_schemes
    from .landmarks import trajectory_points

    lat, lon = trajectory_points(traj)
    mask = as_landmark_mask(landmarks, lat.size)
    preds = predict_errors(n=lat.size, n_landmarks=int(mask.sum()), epsilon=epsilon,
                           radius_m=radius_m)
    todo = [p.scheme for p in preds if p.kind != "closed form"] if simulate else []
    sim: dict[str, float] = {}
    smoothed: dict[str, float] = {}
    if smooth and lat.size:  # every scheme simulated once: its raw and its smoothed error
        sim, smoothed = _trial_errors(traj, mask, [p.scheme for p in preds], epsilon, radius_m,
                                      rng, params, reuse)
        sim = {k: v for k, v in sim.items() if k in todo}
    elif todo and lat.size:
        chosen = {k: dict(v) for k, v in (params or {}).items() if k in todo}
        table = compare_schemes((lat, lon), mask, epsilon=epsilon, schemes=todo, runs=1,
                                rng=rng, radius_m=radius_m, params=chosen or None)
        sim = dict(zip(table["scheme"], table["mae_m_mean"].astype(float), strict=True))
    return [SchemeEstimate(p.scheme, p.mean_error, p.kind, sim.get(p.scheme, float("nan")),
                           p.landmark_private, smoothed.get(p.scheme, float("nan")))
            for p in preds]


def _trial_errors(traj: Any, mask: np.ndarray, schemes: Sequence[str], epsilon: float,
                  radius_m: float, rng: int,
                  params: Mapping[str, Mapping[str, Any]] | None,
                  reuse: MutableMapping[Any, tuple[float, float]] | None = None,
                  ) -> tuple[dict[str, float], dict[str, float]]:
    """Mean error (metres) of one seeded simulated release per scheme, raw and after
    smooth_release. The release is the one :func:`compare_schemes` draws for ``runs=1`` with
    the same seed (its first child seed), so the raw errors equal its table's. ``reuse``: see
    :func:`estimate_errors` (the budgets of event, user and uniform, hence their seeded noise,
    depend on the landmarks at most through |L|)."""
    from .landmarks import trajectory_points
    from .metrics import mae_metres
    from .noise.source import simulation_rng, spawn_seeds
    from .release import release_locations
    from .smoothing import smooth_release

    child = spawn_seeds(int(rng), 1)[0]
    points = trajectory_points(traj)  # the errors need no times: converted once, not per call
    raw, smoothed = {}, {}
    n_lm = int(np.count_nonzero(mask))
    for scheme in schemes:
        p = dict((params or {}).get(scheme, {}))
        key = (scheme, epsilon, radius_m, int(rng), repr(sorted(p.items())), mask.size,
               n_lm if scheme == "uniform" else None)
        if reuse is not None and scheme in _MASK_FREE and key in reuse:
            raw[scheme], smoothed[scheme] = reuse[key]
            continue
        rel = release_locations(traj, mask, epsilon=epsilon, scheme=scheme, radius_m=radius_m,
                                rng=simulation_rng(child), noise="fast",
                                **p)
        raw[scheme] = mae_metres(points, rel)
        smoothed[scheme] = mae_metres(points, smooth_release(rel))
        if reuse is not None and scheme in _MASK_FREE:
            reuse[key] = (raw[scheme], smoothed[scheme])
    return raw, smoothed


_MASK_FREE = ("event", "user", "uniform")
"""Schemes whose seeded trial release depends on the landmarks at most through |L|."""


PREFERENCE = ("skip", "reserve", "uniform", "adaptive", "bd", "ba", "user", "event")
"""Tie-break order of :func:`recommend`: landmark schemes before the baselines (with no
landmarks Skip, Uniform and event-level are the same release)."""


def recommend(estimates: Sequence[SchemeEstimate], *, margin: float = 0.05,
              public_only: bool = True) -> SchemeEstimate | None:
    """The landmark-private scheme with the smallest finite number; None when no
    landmark-private scheme has one.

    ``public_only`` (default): rank by :attr:`SchemeEstimate.predicted` only — closed forms and
    bounds of T, |L|, ε and r — so the recommendation is a function of public quantities and
    following it is not a data-dependent choice. ``public_only=False`` ranks by
    :attr:`SchemeEstimate.estimate`, which may use the simulation on the true trace (then the
    choice depends on the data: for the data owner's own judgement, not covered by ε).
    A number that is not an exact expectation (a lower bound or one simulated run) counts as
    ``(1 + margin)`` times itself, so a closed form wins unless the other is clearly smaller.
    Smoothed errors (``estimate_errors(..., smooth=True)``) are simulations: they are ranked
    only with ``public_only=False`` (the public ranking has no closed form for smoothing).
    Ties go by :data:`PREFERENCE`.
    """
    margin = check_nonnegative(margin, "margin")

    def number(e: SchemeEstimate) -> float:
        return e.predicted if public_only else e.estimate

    def rank(e: SchemeEstimate) -> tuple[float, int]:
        exact = e.kind == "closed form" and (public_only or not np.isfinite(e.smoothed))
        value = number(e) * (1.0 if exact else 1.0 + margin)
        order = PREFERENCE.index(e.scheme) if e.scheme in PREFERENCE else len(PREFERENCE)
        return value, order

    candidates = [e for e in estimates if e.landmark_private and np.isfinite(number(e))]
    return min(candidates, key=rank) if candidates else None


def share_outside_view(
    lat: Any, lon: Any, released_lat: Any, released_lon: Any, *, pad: float = 0.25,
) -> float:
    """Share of released points (NaN = no release, ignored) outside the true trace's bounding
    box enlarged by ``pad`` of its size on every side (at least ~1 km): the part of the release
    a map fitted to the trace cannot show. Display only (it reads the true trace)."""
    lat = np.asarray(lat, dtype=np.float64)
    lon = np.asarray(lon, dtype=np.float64)
    rlat = np.asarray(released_lat, dtype=np.float64)
    rlon = np.asarray(released_lon, dtype=np.float64)
    ok = np.isfinite(rlat) & np.isfinite(rlon)
    if not ok.any() or lat.size == 0:
        return 0.0
    pad = check_positive(pad, "pad") if pad else 0.0
    min_deg = 0.01  # ~1 km: a trace that never moves still gets a readable view
    dlat = max(float(lat.max() - lat.min()) * pad, min_deg)
    dlon = max(float(lon.max() - lon.min()) * pad, min_deg)
    inside = ((rlat >= lat.min() - dlat) & (rlat <= lat.max() + dlat)
              & (rlon >= lon.min() - dlon) & (rlon <= lon.max() + dlon))
    return float(1.0 - inside[ok].mean())
