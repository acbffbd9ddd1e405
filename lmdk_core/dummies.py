"""Dummy landmarks: hide which timestamps are landmarks (algorithms.md §1, "Dummy landmarks").

The landmark schemes treat the landmark set L as public, yet their budgets reveal it (Skip spends
0 exactly at L, Uniform's ε/(|L|+1) reveals |L|). Following the landmark thesis (Katsomallos,
"the-last-thing"), :func:`hide_landmarks` adds *dummy* landmarks: it builds nested options
L ⊂ L'_1 ⊂ L'_2 ⊂ … ⊆ T by adding regular timestamps, scores each by

    u(L') = -‖h(L') - h(L)‖₂       (h = normalised histogram of landmark positions, fixed bins)

and picks one with the exponential mechanism, Pr[L'_k] ∝ exp(ε_sel·u(L'_k)/(2Δu)). The scheme then
runs on L' with ε_scheme = ε - ε_sel (:func:`split_budget`).

What this protects (proofs in docs/dummy-landmarks.md):

* the true landmarks stay (ε_scheme, L)-landmark private whatever option is chosen, because L ⊆ L';
* for a *fixed* option family, the choice is ε_sel-DP between any two landmark sets that differ in
  one timestamp (Δu = :data:`UTILITY_SENSITIVITY` = 1 under add/remove-one, h(∅) = 0);
* NOT covered: the option family itself is built from L (greedy gap filling), and any L' ⊇ L
  reveals L ⊆ L'. No mechanism that always keeps L ⊆ L' can be ε-DP in L (except L' = T).

Timestamps are positions 0..n-1 of the series. Randomness: ``rng=None`` draws the selection's
uniform from the OS (``secrets``); a seed or Generator is for tests and simulations only.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations
from types import MappingProxyType
from typing import Any

import numpy as np

from .accounting import as_landmark_mask
from .errors import ParameterError
from .landmarks import trajectory_points
from .mechanisms import as_rng
from .release import Release, release_locations, release_values
from .validation import check_epsilon, check_int, check_positive

__all__ = [
    "DEFAULT_BINS",
    "EXHAUSTIVE_MAX_REGULAR",
    "GENERATORS",
    "UTILITY_SENSITIVITY",
    "HiddenLandmarks",
    "HiddenRelease",
    "OptionFamily",
    "bernoulli_dummies",
    "exhaustive_options",
    "exponential_probabilities",
    "exponential_select",
    "gap_spread",
    "gap_sum_squares",
    "greedy_options",
    "hide_landmarks",
    "landmark_histogram",
    "option_utilities",
    "release_hidden",
    "split_budget",
]

DEFAULT_BINS = 10
"""Fixed histogram bins over the timestamp range (h uses ``bins`` equal-width bins of 0..n-1)."""

UTILITY_SENSITIVITY = 1.0
"""Δu of u(L') = -‖h(L') - h(L)‖₂ when L and L̃ differ by one timestamp (docs/dummy-landmarks.md):
‖h(L) - h(L̃)‖₂ ≤ √2/(|L|+1) for |L| ≥ 1 and = 1 from ∅ to one landmark, so Δu = 1."""

EXHAUSTIVE_MAX_REGULAR = 18
"""The exhaustive generator enumerates 2^(regular timestamps) sets: refused above this."""

GENERATORS = ("greedy", "exhaustive", "bernoulli")
"""greedy / exhaustive: the thesis's option families + exponential mechanism; bernoulli: every
regular timestamp becomes a dummy with probability e^(-ε_sel), independently (no option family,
so nothing depends on L beyond L ⊆ L'; see :func:`bernoulli_dummies`)."""

_MAX_FP_SLACK = 1e-6
"""Largest accepted bound on the relative error of a realised selection probability."""


# ----------------------------------------------------------------------------- criterion


def _gaps(mask: np.ndarray) -> np.ndarray:
    """Landmark-to-landmark gaps with virtual landmarks at -1 and n (len |L|+1, sum n+1)."""
    pos = np.flatnonzero(mask)
    return np.diff(np.concatenate(([-1], pos, [mask.size])))


def gap_sum_squares(landmarks: Any, n: int | None = None) -> int:
    """Σ g² over the landmark-to-landmark gaps g (virtual landmarks at -1 and n), exactly.

    For sets of equal size the gap count and mean are fixed, so this orders them exactly as the
    standard deviation of the gaps does (:func:`gap_spread`), without rounding.
    """
    mask = _mask(landmarks, n)
    g = _gaps(mask).astype(np.int64)
    return int(np.dot(g, g))


def gap_spread(landmarks: Any, n: int | None = None) -> float:
    """Standard deviation of the landmark-to-landmark gaps (timestamps; virtual ends -1 and n)."""
    return float(np.std(_gaps(_mask(landmarks, n))))


def _mask(landmarks: Any, n: int | None) -> np.ndarray:
    arr = np.asarray(landmarks) if not isinstance(landmarks, np.ndarray) else landmarks
    if n is None:
        if arr.dtype != np.bool_:
            raise ParameterError("give n with integer landmark indices (or pass a bool mask)")
        n = arr.size
    return as_landmark_mask(landmarks, n)


# ----------------------------------------------------------------------------- options


@dataclass(frozen=True, eq=False)
class OptionFamily:
    """Candidate landmark sets L'_1, …, L'_K, each a strict superset of ``landmarks``.

    Nested families (greedy) store ``order``: option k adds ``order[:k]`` to L. Non-nested ones
    (exhaustive: the best set of each size on its own) store ``sets``: option k adds
    ``sets[k-1]``. ``generator`` names the generator.
    """

    landmarks: np.ndarray
    generator: str
    order: np.ndarray | None = None
    sets: tuple[np.ndarray, ...] | None = None

    @property
    def nested(self) -> bool:
        return self.order is not None

    def __len__(self) -> int:
        return int(self.order.size) if self.order is not None else len(self.sets or ())

    @property
    def sizes(self) -> np.ndarray:
        """|L'_k| for k = 1..K (every generator adds k timestamps to option k)."""
        return int(self.landmarks.sum()) + np.arange(1, len(self) + 1, dtype=np.int64)

    def added(self, k: int) -> np.ndarray:
        """The regular timestamps option k (1-based) adds to L, sorted."""
        k = check_int(k, "k", minimum=1)
        if k > len(self):
            raise ParameterError(f"option {k} does not exist; there are {len(self)} options")
        if self.order is not None:
            return np.sort(self.order[:k])
        assert self.sets is not None  # a family has either a nested order or explicit sets
        return np.sort(self.sets[k - 1])

    def mask(self, k: int) -> np.ndarray:
        """Bool mask of option k (1-based; k = 0 is L itself)."""
        out = self.landmarks.copy()
        if check_int(k, "k", minimum=0):
            out[self.added(k)] = True
        return out


def greedy_options(landmarks: Any, *, max_dummies: int | None = None) -> OptionFamily:
    """Nested options by greedy gap filling: each step adds the regular timestamp that keeps the
    standard deviation of landmark-to-landmark gaps lowest (ties: the earliest timestamp).

    Adding t inside a gap (a, b) keeps the number and mean of gaps and changes Σg² by
    -2(t-a)(b-t); so the greedy step is exactly "split the widest gap at its midpoint", and a gap
    split this way yields children of strictly lower priority. The whole greedy sequence is
    therefore the midpoint-bisection nodes of every gap sorted by (-priority, t): computed level by
    level in numpy, O(n log n), with no per-step loop. ``max_dummies`` caps K (None: all regular
    timestamps).
    """
    mask = _mask(landmarks, None)
    n = mask.size
    pos = np.flatnonzero(mask)
    a = np.concatenate(([-1], pos)).astype(np.int64)
    b = np.concatenate((pos, [n])).astype(np.int64)
    ts, prio = [], []
    while a.size:
        keep = (b - a) >= 2
        a, b = a[keep], b[keep]
        if not a.size:
            break
        t = a + (b - a) // 2
        ts.append(t)
        prio.append((t - a) * (b - t))
        a, b = np.concatenate((a, t)), np.concatenate((t, b))
    if ts:
        t_all, p_all = np.concatenate(ts), np.concatenate(prio)
        order = t_all[np.lexsort((t_all, -p_all))]
    else:
        order = np.zeros(0, dtype=np.int64)
    k_max = order.size if max_dummies is None else min(
        order.size, check_int(max_dummies, "max_dummies", minimum=1))
    return OptionFamily(_ro(mask), "greedy", order=_ro(order[:k_max]))


def exhaustive_options(landmarks: Any, *, max_dummies: int | None = None) -> OptionFamily:
    """For each size |L|+1, …, one set: the superset of L with the lowest gap spread (exact integer
    Σg²; ties: lexicographically first added timestamps). The thesis's "optimal" generator and the
    test reference for :func:`greedy_options`; options need not be nested. Enumerates every subset
    of the regular timestamps, so at most :data:`EXHAUSTIVE_MAX_REGULAR` of them are accepted.
    """
    mask = _mask(landmarks, None)
    regular = np.flatnonzero(~mask)
    if regular.size > EXHAUSTIVE_MAX_REGULAR:
        raise ParameterError(
            f"the exhaustive generator enumerates 2^{regular.size} sets; it accepts at most "
            f"{EXHAUSTIVE_MAX_REGULAR} regular timestamps (use generator='greedy')"
        )
    k_max = regular.size if max_dummies is None else min(
        regular.size, check_int(max_dummies, "max_dummies", minimum=1))
    added = []
    for k in range(1, k_max + 1):
        best, best_cost = None, None
        for combo in combinations(regular.tolist(), k):
            trial = mask.copy()
            trial[list(combo)] = True
            cost = gap_sum_squares(trial)
            if best_cost is None or cost < best_cost:
                best, best_cost = combo, cost
        added.append(_ro(np.array(best, dtype=np.int64)))
    return OptionFamily(_ro(mask), "exhaustive", sets=tuple(added))


def _ro(arr: np.ndarray) -> np.ndarray:
    arr = np.array(arr, copy=True)
    arr.setflags(write=False)
    return arr


# ----------------------------------------------------------------------------- utility


def _bin_of(t: np.ndarray, n: int, bins: int) -> np.ndarray:
    return (np.asarray(t, dtype=np.int64) * bins) // max(n, 1)


def landmark_histogram(landmarks: Any, n: int | None = None, *, bins: int = DEFAULT_BINS
                       ) -> np.ndarray:
    """Normalised histogram h(L) of landmark positions over ``bins`` equal-width bins of 0..n-1.

    Bin of t: ⌊t·bins/n⌋ (fixed, data-independent). Sums to 1; h(∅) = 0 (all zeros).
    """
    mask = _mask(landmarks, n)
    bins = check_int(bins, "bins", minimum=1)
    counts = np.bincount(_bin_of(np.flatnonzero(mask), mask.size, bins), minlength=bins)
    total = counts.sum()
    return counts / total if total else np.zeros(bins)


def option_utilities(options: OptionFamily, *, landmarks: Any = None, bins: int = DEFAULT_BINS
                     ) -> np.ndarray:
    """u(L'_k) = -‖h(L'_k) - h(L)‖₂ for every option (vectorised; nested options by cumulative
    bin counts). ``landmarks``: the L to score against (default: the family's own L; the privacy
    tests score one family against neighbouring sets)."""
    bins = check_int(bins, "bins", minimum=1)
    n = options.landmarks.size
    ref = options.landmarks if landmarks is None else as_landmark_mask(landmarks, n)
    h_ref = landmark_histogram(ref, bins=bins)
    if not len(options):
        return np.zeros(0)
    base = np.bincount(_bin_of(np.flatnonzero(options.landmarks), n, bins), minlength=bins)
    if options.order is not None:
        order = options.order
        onehot = np.zeros((order.size, bins), dtype=np.int64)
        onehot[np.arange(order.size), _bin_of(order, n, bins)] = 1
        counts = base + np.cumsum(onehot, axis=0)
    else:
        assert options.sets is not None  # a family has either a nested order or explicit sets
        counts = np.stack([base + np.bincount(_bin_of(a, n, bins), minlength=bins)
                           for a in options.sets])
    h = counts / counts.sum(axis=1, keepdims=True)
    return -np.sqrt(np.sum((h - h_ref) ** 2, axis=1))


# ----------------------------------------------------------------------------- selection


def exponential_probabilities(utilities: Any, *, epsilon: float,
                              sensitivity: float = UTILITY_SENSITIVITY) -> np.ndarray:
    """Exact-as-float exponential-mechanism probabilities ∝ exp(ε·u/(2Δu)) (max-shifted)."""
    u = _utilities(utilities)
    eps = check_epsilon(epsilon, "epsilon_select")
    delta = check_positive(sensitivity, "sensitivity")
    w = np.exp(eps * (u - u.max()) / (2.0 * delta))
    return w / w.sum()


def _utilities(utilities: Any) -> np.ndarray:
    try:
        u = np.asarray(utilities, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError("utilities must be numeric") from None
    if u.ndim != 1 or u.size == 0:
        raise ParameterError("utilities must be a non-empty 1-D array")
    if not np.all(np.isfinite(u)):
        raise ParameterError("utilities must be finite")
    return u


def _fp_slack(w: np.ndarray, exponent: float) -> float:
    """Bound δ on |p̂_k/p_k - 1| for the inverse-CDF sampler below (docs/dummy-landmarks.md §4):
    rounding of the weights (exponent magnitude ``exponent``), of their running sum and of the
    53-bit uniform. The realised selection is (ε_sel + 2δ/(1-δ))-DP where ε_sel is exact."""
    k = w.size
    return (2 * k + 2) * 2.0**-53 * float(w.sum() / w.min()) + (2 + exponent) * 2.0**-51


def _uniform53(rng: Any, size: int) -> np.ndarray:
    """``size`` integers uniform in [0, 2^53): OS entropy (secrets) when rng is None."""
    if rng is None:
        raw = np.frombuffer(secrets.token_bytes(8 * size), dtype=np.uint64)
        return raw >> np.uint64(11)
    return as_rng(rng).integers(0, 2**53, size=size, dtype=np.uint64)


def exponential_select(utilities: Any, *, epsilon: float,
                       sensitivity: float = UTILITY_SENSITIVITY, rng: Any = None,
                       size: int | None = None) -> int | np.ndarray:
    """Index k drawn with Pr ∝ exp(ε·u_k/(2Δu)) (exponential mechanism, ε-DP for utilities of
    sensitivity Δu over a fixed candidate set).

    Inverse CDF with a 53-bit integer uniform: every realised probability is within a relative
    error bound (:func:`_fp_slack`, checked ≤ 1e-6, else ParameterError) of the exact one, and
    no candidate has probability 0. ``rng=None``: OS entropy; a seed/Generator: tests only.
    ``size``: number of independent draws (None: one int).
    """
    u = _utilities(utilities)
    eps = check_epsilon(epsilon, "epsilon_select")
    delta = check_positive(sensitivity, "sensitivity")
    a = eps * (u - u.max()) / (2.0 * delta)
    w = np.exp(a)
    slack = _fp_slack(w, float(-a.min())) if w.min() > 0 else math.inf
    if slack > _MAX_FP_SLACK:
        raise ParameterError(
            f"epsilon_select={eps} is too large for {u.size} options: the selection "
            "probabilities cannot be computed accurately in floating point; lower epsilon_select"
        )
    cum = np.cumsum(w)
    m = 1 if size is None else check_int(size, "size", minimum=1)
    x = _uniform53(rng, m).astype(np.float64) * 2.0**-53 * cum[-1]
    idx = np.minimum(np.searchsorted(cum, x, side="right"), u.size - 1)
    return int(idx[0]) if size is None else idx


def bernoulli_dummies(landmarks: Any, *, epsilon_select: float, rng: Any = None
                      ) -> tuple[np.ndarray, float]:
    """Dummy mask: each regular timestamp independently with probability p̂ ≥ e^(-ε_sel).

    Returns ``(dummies, p̂)``. For every released L' and all L ⊂ L̃ = L + {j} ⊆ L':
    Pr[L' | L̃] / Pr[L' | L] = 1/p̂ ≤ e^(ε_sel) and Pr[L' | L] / Pr[L' | L̃] = p̂ ≤ 1, whatever L is
    (docs/dummy-landmarks.md §5, Theorem B'). Floating point: p̂ = ⌈p·2^53⌉/2^53 with p one ulp
    above the float exp(-ε_sel), and a draw is a dummy iff a uniform 53-bit integer is < p̂·2^53,
    so the realised probability is p̂ exactly and never below e^(-ε_sel) (for exp accurate to
    within one ulp). ``rng=None``: OS entropy (``secrets``).
    """
    mask = _mask(landmarks, None)
    eps = check_epsilon(epsilon_select, "epsilon_select")
    p = math.nextafter(math.exp(-eps), 2.0)
    threshold = min(math.ceil(math.ldexp(p, 53)), 2**53)
    # one draw per timestamp, landmark or not: the generator's consumption never depends on L
    draws = _uniform53(rng, max(mask.size, 1))[: mask.size]
    return (draws < np.uint64(threshold)) & ~mask, math.ldexp(threshold, -53)


# ----------------------------------------------------------------------------- high level


def split_budget(epsilon: float, epsilon_select: float) -> float:
    """ε_scheme for a total ε and a selection budget ε_sel: the largest float with
    ε_scheme + ε_sel ≤ ε (in floating point, so the reported total never exceeds ε)."""
    eps = check_epsilon(epsilon)
    sel = check_epsilon(epsilon_select, "epsilon_select")
    if sel >= eps:
        raise ParameterError(
            f"epsilon_select ({sel}) must be smaller than the total epsilon ({eps}): the scheme "
            "needs the rest"
        )
    rest = eps - sel
    while rest + sel > eps:
        rest = math.nextafter(rest, 0.0)
    return rest


@dataclass(frozen=True, eq=False)
class HiddenLandmarks:
    """Result of :func:`hide_landmarks` — PRIVATE: it says which landmarks are real.

    ``mask``: L' (run the scheme on it); ``landmarks``: the true L; ``dummies``: L' \\ L (sorted
    timestamps); ``epsilon_select``: ε_sel spent by the selection; ``option_sizes`` /
    ``option_utilities`` / ``probabilities``: every option's |L'_k|, u and selection probability;
    ``chosen``: 1-based index of the chosen option (0: no option existed, L' = L = T);
    ``params``: generator, bins, sensitivity, max_dummies, fp_slack, seeded (True: a seed or
    Generator was given — a simulation, not a private release). Only ``mask`` may be released.
    """

    mask: np.ndarray
    landmarks: np.ndarray
    dummies: np.ndarray
    epsilon_select: float
    option_sizes: np.ndarray
    option_utilities: np.ndarray
    probabilities: np.ndarray
    chosen: int
    params: Mapping[str, Any]

    def __post_init__(self) -> None:
        for name in ("mask", "landmarks", "dummies", "option_sizes", "option_utilities",
                     "probabilities"):
            object.__setattr__(self, name, _ro(getattr(self, name)))
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    @property
    def n_real(self) -> int:
        return int(self.landmarks.sum())

    def private_summary(self) -> dict[str, Any]:
        """JSON-ready numbers for the PRIVATE report (never a public file): counts of real and
        dummy landmarks, ε_sel, the generator and its parameters."""
        return {
            "private": True,
            "real_landmarks": self.n_real,
            "dummy_landmarks": self.n_dummies,
            "epsilon_select": self.epsilon_select,
            "options": int(self.option_sizes.size),
            **{k: v for k, v in self.params.items() if v is not None},
        }

    @property
    def n_dummies(self) -> int:
        return int(self.dummies.size)


def hide_landmarks(landmarks: Any, *, epsilon_select: float, generator: str = "greedy",
                   max_dummies: int | None = None, bins: int = DEFAULT_BINS,
                   rng: Any = None) -> HiddenLandmarks:
    """Add dummy landmarks to the bool mask ``landmarks`` (L) and return L' ⊋ L.

    Builds the options (``generator``: "greedy", fast, nested; or "exhaustive", ≤ 18 regular
    timestamps), scores them with u(L') = -‖h(L') - h(L)‖₂ over ``bins`` fixed bins, and picks
    one with the exponential mechanism at ``epsilon_select`` (ε_sel, Δu = 1). ``max_dummies`` caps
    the number of options (fix it independently of the data). ``generator="bernoulli"`` instead
    adds each regular timestamp with probability e^(-ε_sel) (:func:`bernoulli_dummies`; no
    options, no cap). ``rng``: None = OS entropy.

    Protected (docs/dummy-landmarks.md): running a scheme with budget ε_scheme on L' keeps every
    true landmark (ε_scheme, L)-landmark private, since L ⊆ L'; the choice among a fixed option
    family is ε_sel-DP w.r.t. adding or removing one landmark, so the user's total is
    ε_scheme + ε_sel (:func:`split_budget`). NOT protected: the released L' still contains L, and
    the greedy family is built from L, so pairs of landmark sets with different families are not
    covered by ε_sel — dummies make L deniable among L' only as far as that family allows.
    With "bernoulli" there is no family: for ANY two landmark sets L, L̃ ⊆ L' that differ in one
    timestamp the selection ratio is ≤ e^(ε_sel) (many more dummies at small ε_sel).
    """
    eps = check_epsilon(epsilon_select, "epsilon_select")
    if isinstance(landmarks, np.ndarray) and landmarks.dtype == np.bool_ and landmarks.ndim == 1:
        mask = landmarks.copy()
    else:
        raise ParameterError("landmarks must be a 1-D bool mask (one entry per timestamp)")
    if generator not in GENERATORS:
        raise ParameterError(f"unknown generator {generator!r}; valid: {', '.join(GENERATORS)}")
    bins = check_int(bins, "bins", minimum=1)
    if generator == "bernoulli":
        if max_dummies is not None:
            raise ParameterError("max_dummies applies to the greedy/exhaustive generators only")
        dmask, p_hat = bernoulli_dummies(mask, epsilon_select=eps, rng=rng)
        empty = np.zeros(0)
        return HiddenLandmarks(mask | dmask, mask, np.flatnonzero(dmask), eps,
                               empty.astype(np.int64), empty, empty, 0,
                               {"generator": generator, "dummy_probability": p_hat,
                                "seeded": rng is not None, "fp_slack": 0.0})
    build = greedy_options if generator == "greedy" else exhaustive_options
    family = build(mask, max_dummies=max_dummies)
    params = {"generator": generator, "bins": bins, "sensitivity": UTILITY_SENSITIVITY,
              "max_dummies": max_dummies, "seeded": rng is not None}
    if not len(family):  # every timestamp is a landmark: nothing to add, nothing to hide
        return HiddenLandmarks(mask, mask, np.zeros(0, np.int64), eps, np.zeros(0, np.int64),
                               np.zeros(0), np.zeros(0), 0, {**params, "fp_slack": 0.0})
    u = option_utilities(family, bins=bins)
    k = int(exponential_select(u, epsilon=eps, rng=rng))
    probs = exponential_probabilities(u, epsilon=eps)
    a = eps * (u - u.max()) / (2.0 * UTILITY_SENSITIVITY)
    chosen = family.mask(k + 1)
    return HiddenLandmarks(
        mask=chosen, landmarks=mask, dummies=family.added(k + 1), epsilon_select=eps,
        option_sizes=family.sizes, option_utilities=u, probabilities=probs, chosen=k + 1,
        params={**params, "fp_slack": _fp_slack(np.exp(a), float(-a.min()))},
    )


@dataclass(frozen=True, eq=False)
class HiddenRelease:
    """A release on dummy-augmented landmarks: ``release`` ran its scheme on ``hidden.mask`` with
    ``release.epsilon`` = ε_scheme; ``epsilon_total`` = ε_scheme + ε_sel ≤ the requested ε."""

    hidden: HiddenLandmarks
    release: Release
    epsilon_total: float


def release_hidden(data: Any, landmarks: Any, *, epsilon: float, epsilon_select: float,
                   scheme: str, radius_m: float | None = None, sensitivity: float | None = None,
                   rng: Any = None, generator: str = "greedy", max_dummies: int | None = None,
                   bins: int = DEFAULT_BINS, **params: Any) -> HiddenRelease:
    """Hide ``landmarks`` with :func:`hide_landmarks` (ε_sel), then release ``data`` under
    ``scheme`` on L' with ε_scheme = :func:`split_budget` (ε, ε_sel).

    ``data``: a trajectory (planar Laplace, ``radius_m``, default 200 m) or, with
    ``sensitivity``, a numeric series (Laplace). ``landmarks``: bool mask or indices. ``rng``:
    None = OS entropy for both steps; a seed or Generator (tests, simulations) feeds both, the
    selection first. ``params``: the scheme's parameters.
    """
    if radius_m is not None and sensitivity is not None:
        raise ParameterError("give radius_m (locations) or sensitivity (values), not both")
    e_scheme = split_budget(epsilon, epsilon_select)
    if sensitivity is None:
        n = trajectory_points(data)[0].size
    else:
        n = np.asarray(data).shape[0] if np.ndim(data) else 0
    mask = as_landmark_mask(landmarks, n)
    gen = None if rng is None else as_rng(rng)
    hidden = hide_landmarks(mask, epsilon_select=epsilon_select, generator=generator,
                            max_dummies=max_dummies, bins=bins, rng=gen)
    if sensitivity is None:
        rel = release_locations(data, hidden.mask, epsilon=e_scheme, scheme=scheme,
                                radius_m=200.0 if radius_m is None else radius_m, rng=gen,
                                **params)
    else:
        rel = release_values(data, hidden.mask, epsilon=e_scheme, scheme=scheme,
                             sensitivity=sensitivity, rng=gen, **params)
    return HiddenRelease(hidden, rel, e_scheme + hidden.epsilon_select)
