"""Dummy landmarks: hide which timestamps are landmarks (algorithms.md §1, "Dummy landmarks").

The landmark schemes treat the landmark set L as public, yet their budgets reveal it (Skip spends
0 exactly at L, Uniform's ε/(|L|+1) reveals |L|). :func:`hide_landmarks` adds *dummy* landmarks
L' ⊋ L with part of the budget (ε_sel); the scheme then runs on L' with ε_scheme = ε - ε_sel
(:func:`split_budget`). Four generators (:data:`GENERATORS`):

* ``"stays"`` (the default): dummy *stays*. L' is a sticky two-state Markov chain conditioned to
  contain L (:func:`stay_dummies`), so dummies come in runs and fill ordinary stretches much like
  real stays do. For ANY stretch R of k consecutive ordinary moments, shown in L', the odds that
  R was a real stay rather than dummies grow at most e^(ε_sel·(1 + (k-1)/(K-1))/2)-fold — at
  most e^ε_sel for every stay up to K moments (:func:`default_stay_moments`: 1 % of the series).
* ``"bernoulli"``: every ordinary moment a dummy with probability e^(-ε_sel), independently. The
  bound holds per moment only: a stay of k moments gets e^(k·ε_sel).
* ``"greedy"`` / ``"exhaustive"`` (the landmark thesis, Katsomallos): nested options that fill
  the widest gaps, scored in moments by u_L(L') = -Σ_b |c_b(L' \\ L) - ρ·c_b(L)| (aim: ρ fake
  landmarks per real one, :data:`DUMMY_RATIO`) and chosen with the floored exponential
  mechanism (Δu = 1 + ρ, :func:`utility_sensitivity`). The option family itself is built from
  L, which ε_sel does not cover.

:func:`dummy_cost` gives the expected number of dummies and the expected growth of Uniform's
noise, exactly, for every generator.

For every generator the true landmarks stay (ε_scheme, L)-landmark private, because L ⊆ L'. Any
L' ⊇ L reveals L ⊆ L': no mechanism that always keeps L ⊆ L' can be ε-DP in L (except L' = T).
Proofs: docs/dummy-landmarks.md. Timestamps are positions 0..n-1 of the series. Randomness:
``rng=None`` (real releases) reads the ChaCha20 source of :mod:`lmdk_core.noise` keyed from the
OS; a seed or Generator is for tests and simulations only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations
from types import MappingProxyType
from typing import Any

import numpy as np

from ._deprecation import renamed
from .accounting import as_landmark_mask
from .errors import ParameterError
from .landmarks import trajectory_points
from .noise.source import as_rng, as_source
from .release import Release, release_locations, release_values
from .validation import check_epsilon, check_int, check_positive

__all__ = [
    "DEFAULT_BINS",
    "DUMMY_RATIO",
    "EXHAUSTIVE_MAX_REGULAR",
    "GENERATORS",
    "SELECTION_FLOOR",
    "SELECTION_FP_SLACK",
    "STAY_PERCENT",
    "UTILITY_SENSITIVITY",
    "DummyCost",
    "HiddenLandmarks",
    "HiddenRelease",
    "OptionFamily",
    "StayChain",
    "bernoulli_dummies",
    "bernoulli_probability",
    "bin_counts",
    "default_stay_moments",
    "dummy_cost",
    "dummy_probabilities",
    "exhaustive_options",
    "expected_dummies",
    "exponential_probabilities",
    "exponential_select",
    "gap_spread",
    "gap_sum_squares",
    "greedy_options",
    "hide_landmarks",
    "option_utilities",
    "release_hidden",
    "run_length_auc",
    "run_length_scores",
    "split_budget",
    "stay_chain",
    "stay_dummies",
    "stay_epsilon",
    "utility_sensitivity",
]

DEFAULT_BINS = 1
"""Bins of the thesis generators' utility (equal-width bins of 0..n-1). One bin: the selection
targets how many dummies; more bins also ask them to mirror the real landmarks' spread over time
(with long stays, that favours few dummies: the ordinary moments lie where the stays are not)."""

DUMMY_RATIO = 0.5
"""ρ of the thesis generators' utility: the selection aims at ρ fake landmarks per real one (one
for every two by default: a third of the landmarks shown are fake, and Uniform's noise grows by
about half), in every bin (:func:`option_utilities`). A public choice, fixed before looking at
the data."""

UTILITY_SENSITIVITY = 1.0 + DUMMY_RATIO
"""Δu = 1 + ρ of u_L(S) = -Σ_b |c_b(S \\ L) - ρ·c_b(L)| at the default ρ (docs/dummy-landmarks.md
§3): adding one timestamp j to L moves j from the dummy counts to the real counts of its bin,
so the vector inside the norm moves by (1 + ρ) in one coordinate (:func:`utility_sensitivity`)."""

SELECTION_FLOOR = 40.0
"""F: the exponential mechanism's weights are floored at e^-F times the best option's, so the
rejection sampler's acceptance test stays exact (e^-40 > 2^-76); the floored mechanism is still
ε_sel-DP (docs §4) and the floor moves at most K·e^-40 (< 10^-13 for K ≤ 10^4) of probability."""

EXHAUSTIVE_MAX_REGULAR = 18
"""The exhaustive generator enumerates 2^(regular timestamps) sets: refused above this."""

GENERATORS = ("stays", "bernoulli", "greedy", "exhaustive")
"""stays (the default): dummy stays, ε_sel covers any stay of up to K moments
(:func:`stay_dummies`); bernoulli: every regular timestamp a dummy with probability e^(-ε_sel),
independently, ε_sel covers one moment (:func:`bernoulli_dummies`); greedy / exhaustive: the
thesis's option families + exponential mechanism (the family depends on L)."""


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


def utility_sensitivity(dummy_ratio: float = DUMMY_RATIO) -> float:
    """Δu = 1 + ρ of the count utility (:func:`option_utilities`) for ρ = ``dummy_ratio``
    (docs/dummy-landmarks.md §3): one timestamp more or less in L moves one moment between the
    dummy counts and the real counts of one bin."""
    return 1.0 + _ratio(dummy_ratio)


def _ratio(dummy_ratio: float) -> float:
    rho = check_positive(dummy_ratio, "dummy_ratio")
    if rho > 1e6:
        raise ParameterError("dummy_ratio must be at most 10^6 fake landmarks per real one")
    return rho


def bin_counts(landmarks: Any, n: int | None = None, *, bins: int = DEFAULT_BINS) -> np.ndarray:
    """How many landmarks fall in each of ``bins`` equal-width bins of 0..n-1 (bin of t:
    ⌊t·bins/n⌋, fixed and data-independent); int64, length ``bins``."""
    mask = _mask(landmarks, n)
    bins = check_int(bins, "bins", minimum=1)
    return np.bincount(_bin_of(np.flatnonzero(mask), mask.size, bins), minlength=bins)


def option_utilities(options: OptionFamily, *, landmarks: Any = None, bins: int = DEFAULT_BINS,
                     dummy_ratio: float = DUMMY_RATIO) -> np.ndarray:
    """u_L(S) = -Σ_b |c_b(S \\ L) - ρ·c_b(L)| for every option S (moments; c_b counts per bin of
    :func:`bin_counts`, ρ = ``dummy_ratio``): the options whose dummies come closest to ρ fake
    landmarks per real one *in every bin* score highest (u = 0 is a perfect match), so both how
    many dummies and where they fall matter. Sensitivity Δu = 1 + ρ over neighbouring L
    (:func:`utility_sensitivity`); the range over the options is typically hundreds of Δu.
    ``landmarks``: the L to score against (default: the family's own L; the privacy tests score
    one family against neighbouring sets). Vectorised (nested options by cumulative counts)."""
    bins = check_int(bins, "bins", minimum=1)
    rho = _ratio(dummy_ratio)
    n = options.landmarks.size
    ref = options.landmarks if landmarks is None else as_landmark_mask(landmarks, n)
    if not len(options):
        return np.zeros(0)
    real = bin_counts(ref, bins=bins)
    base = bin_counts(options.landmarks & ~ref, bins=bins)  # options' own L outside ref
    if options.order is not None:
        order = options.order
        onehot = np.zeros((order.size, bins), dtype=np.int64)
        keep = ~ref[order]  # a timestamp of ref is not a dummy for ref
        onehot[np.arange(order.size)[keep], _bin_of(order[keep], n, bins)] = 1
        counts = base + np.cumsum(onehot, axis=0)
    else:
        assert options.sets is not None  # a family has either a nested order or explicit sets
        counts = np.stack([base + np.bincount(_bin_of(a[~ref[a]], n, bins), minlength=bins)
                           for a in options.sets])
    return -np.abs(counts - rho * real).sum(axis=1)


# ----------------------------------------------------------------------------- selection


def exponential_probabilities(utilities: Any, *, epsilon: float,
                              sensitivity: float = UTILITY_SENSITIVITY) -> np.ndarray:
    """Probabilities of :func:`exponential_select`: ∝ exp(max(ε·(u - u*)/(2Δu), -F)) with u* the
    largest utility and F = :data:`SELECTION_FLOOR` (every option keeps at least e^-F of the best
    one's weight; docs/dummy-landmarks.md §4 proves the floored mechanism ε-DP)."""
    a = _exponents(utilities, epsilon, sensitivity)
    w = np.exp(a)
    return w / w.sum()


def _exponents(utilities: Any, epsilon: float, sensitivity: float) -> np.ndarray:
    u = _utilities(utilities)
    eps = check_epsilon(epsilon, "epsilon_select")
    delta = check_positive(sensitivity, "sensitivity")
    return np.maximum(eps * (u - u.max()) / (2.0 * delta), -SELECTION_FLOOR)


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


SELECTION_FP_SLACK = 2.0 * ((2.0 + SELECTION_FLOOR) * 2.0**-51 + 2.0**-70)
"""Bound on |p̂_k/p_k - 1| for :func:`exponential_select` (docs/dummy-landmarks.md §4): the
rounding of the exponent and of exp ((2 + F)·2^-51), and of the 128-bit acceptance test
(2^-128/e^-F < 2^-70), in the numerator and in the normaliser. The realised selection is
(ε_sel + 2δ/(1-δ))-DP with δ this slack (≈ 4·10^-14)."""


def _fp_slack(w: np.ndarray, exponent: float) -> float:
    """Bound δ on |p̂_k/p_k - 1| for an inverse-CDF sampler with a 53-bit uniform over the
    weights ``w`` (kept for the thesis comparison in docs §4: it grows with Σw/min w, which is
    why the selection samples by rejection instead)."""
    k = w.size
    return (2 * k + 2) * 2.0**-53 * float(w.sum() / w.min()) + (2 + exponent) * 2.0**-51


def _uniform53(rng: Any, size: int) -> np.ndarray:
    """``size`` integers uniform in [0, 2^53): the release-grade ChaCha20 source keyed from the
    OS (:meth:`lmdk_core.noise.RandomSource.secure`) when rng is None."""
    return as_source(rng).uniform53(size)


def _accept(q: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """True with probability q (floats in [e^-F, 1]) from the 128-bit uniform hi·2^64 + lo:
    realised probability within 2^-128 of q (:func:`_below` on the less likely side)."""
    small = q <= 0.5
    hit = _below(hi, lo, np.where(small, q, 1.0 - q))  # 1 - q is exact for q ≥ 1/2 (Sterbenz)
    return np.where(small, hit, ~hit)


def exponential_select(utilities: Any, *, epsilon: float,
                       sensitivity: float = UTILITY_SENSITIVITY, rng: Any = None,
                       size: int | None = None) -> int | np.ndarray:
    """Index k drawn with Pr ∝ exp(max(ε·(u_k - u*)/(2Δu), -F)) (:func:`exponential_probabilities`;
    the floored exponential mechanism, ε-DP for utilities of sensitivity Δu over a fixed
    candidate set, docs/dummy-landmarks.md §4).

    Rejection sampling: propose k uniformly (a 64-bit word, rejected above the largest multiple
    of K, so exactly uniform), accept with probability q_k = exp(a_k) ∈ [e^-F, 1] by a 128-bit
    comparison. The output is k with probability q̂_k/Σq̂ exactly, q̂ the realised acceptance
    probabilities, so every realised probability is within :data:`SELECTION_FP_SLACK` of the
    exact one however far apart the utilities are (an inverse CDF over float sums is not, for
    options ~2^-53 times less likely than the best). ``rng=None``: the ChaCha20 source keyed from
    the OS; a seed/Generator: tests only. ``size``: number of independent draws (None: one int).
    """
    q = np.exp(_exponents(utilities, epsilon, sensitivity))
    k = q.size
    m = 1 if size is None else check_int(size, "size", minimum=1)
    src = as_source(rng)
    limit = np.uint64(((2**64) // k) * k - 1)  # words ≤ limit are exactly uniform modulo k
    out = np.empty(m, dtype=np.int64)
    got = 0
    rate = float(q.sum()) / k  # acceptance probability per proposal, ≥ 1/K
    while got < m:
        batch = int(min(max(64, 1.3 * (m - got) / rate + 32), 2**20))  # ≤ 24 MiB of words
        words = src.words(3 * batch)
        idx_w, hi, lo = words[:batch], words[batch:2 * batch], words[2 * batch:]
        ok = idx_w <= limit
        idx = (idx_w[ok] % np.uint64(k)).astype(np.int64)
        take = idx[_accept(q[idx], hi[ok], lo[ok])][: m - got]
        out[got:got + take.size] = take
        got += take.size
    return int(out[0]) if size is None else out


def bernoulli_dummies(landmarks: Any, *, epsilon_select: float, rng: Any = None
                      ) -> tuple[np.ndarray, float]:
    """Dummy mask: each regular timestamp independently with probability p̂ ≥ e^(-ε_sel).

    Returns ``(dummies, p̂)``. For every released L' and all L ⊂ L̃ = L + {j} ⊆ L':
    Pr[L' | L̃] / Pr[L' | L] = 1/p̂ ≤ e^(ε_sel) and Pr[L' | L] / Pr[L' | L̃] = p̂ ≤ 1, whatever L is
    (docs/dummy-landmarks.md §5, Theorem B'). Floating point: p̂ = ⌈p·2^53⌉/2^53 with p one ulp
    above the float exp(-ε_sel), and a draw is a dummy iff a uniform 53-bit integer is < p̂·2^53,
    so the realised probability is p̂ exactly and never below e^(-ε_sel) (for exp accurate to
    within one ulp). ``rng=None``: the ChaCha20 source keyed from the OS.
    """
    mask = _mask(landmarks, None)
    threshold = _bernoulli_threshold(epsilon_select)
    # one draw per timestamp, landmark or not: the generator's consumption never depends on L
    draws = _uniform53(rng, max(mask.size, 1))[: mask.size]
    return (draws < np.uint64(threshold)) & ~mask, math.ldexp(threshold, -53)


def _bernoulli_threshold(epsilon_select: float) -> int:
    eps = check_epsilon(epsilon_select, "epsilon_select")
    p = math.nextafter(math.exp(-eps), 2.0)
    return min(math.ceil(math.ldexp(p, 53)), 2**53)


def bernoulli_probability(epsilon_select: float) -> float:
    """p̂ of :func:`bernoulli_dummies`: the realised dummy probability, ≥ e^(-ε_sel)."""
    return math.ldexp(_bernoulli_threshold(epsilon_select), -53)


# ----------------------------------------------------------------------------- stay dummies

STAY_PERCENT = 1
"""The stay length K that ε_sel covers by default: this percentage of the released moments,
rounded up, at least 2 (:func:`default_stay_moments`). n is public, so K is too."""

_U = 2.0**-53
_DESIGN_SHARE = 2.0**-20
"""The chain is built for ε_sel·(1 - 2^-20); the floating-point slack must fit in half the rest."""


def default_stay_moments(n: int) -> int:
    """K = max(2, ⌈n·STAY_PERCENT/100⌉): the longest stay ε_sel covers in a series of n moments."""
    n = check_int(n, "n", minimum=0)
    return max(2, -(-n * STAY_PERCENT // 100))


def stay_epsilon(moments: int, *, epsilon_select: float, stay_moments: int,
                 stays: int = 1) -> float:
    """The bound of :func:`stay_dummies` (docs/dummy-landmarks.md §5, Theorem S): for ``stays``
    runs of ordinary moments totalling ``moments`` moments, shown in L', the odds that they were
    real stays grow at most e^(returned value)-fold:
    ε_sel/2 per run + ε_sel/(2(K-1)) per further moment. One stay of k ≤ K moments: ≤ ε_sel."""
    eps = check_epsilon(epsilon_select, "epsilon_select")
    k = check_int(stay_moments, "stay_moments", minimum=2)
    runs = check_int(stays, "stays", minimum=1)
    m = check_int(moments, "moments", minimum=runs)
    return eps * (runs + (m - runs) / (k - 1)) / 2.0


@dataclass(frozen=True)
class StayChain:
    """The prior of :func:`stay_dummies`: a stationary two-state Markov chain on the moments
    (1 = shown as a landmark). Built by :func:`stay_chain` from ε_sel and K.

    ``on`` = π₁ = e^(-ε_a) (stationary share of 1s) and ``off`` = π₀ = 1 - π₁; ``alpha`` = P(1→0)
    = 1 - e^(-ε_b), ``keep_on`` = 1 - α; ``beta`` = P(0→1) = α·π₁/π₀, ``keep_off`` = 1 - β;
    ``lam`` = λ = 1 - α - β ∈ [0, 1), ``log_lam`` = ln λ. ε_a = ``epsilon_start`` =
    ε'/2 and ε_b = ``epsilon_step`` = ε'/(2(K-1)) with ε' = ε_sel·(1 - 2^-20) (the rest covers
    ``fp_slack``, a bound on the log-ratio error of the realised sampler)."""

    epsilon_select: float
    stay_moments: int
    epsilon_start: float
    epsilon_step: float
    on: float
    off: float
    alpha: float
    keep_on: float
    beta: float
    keep_off: float
    lam: float
    log_lam: float
    fp_slack: float

    def h(self, d: Any) -> np.ndarray:
        """P(Z_{t+d} = 1 | Z_t = 1) = π₁ + π₀·λ^d for d ≥ 1."""
        return self.on + self.off * _lam_pow(self, np.asarray(d, dtype=np.float64))


def _lam_pow(ch: StayChain, d: np.ndarray) -> np.ndarray:
    if ch.lam == 0.0:
        return np.zeros_like(d)
    return np.exp(d * ch.log_lam)


def stay_chain(epsilon_select: float, n: int, *, stay_moments: int | None = None) -> StayChain:
    """The Markov chain of :func:`stay_dummies` for a series of ``n`` moments (see
    :class:`StayChain`). ``stay_moments`` = K (default :func:`default_stay_moments` (n)).
    Refuses (ParameterError) parameters for which floating point cannot realise the bound."""
    eps = check_epsilon(epsilon_select, "epsilon_select")
    n = check_int(n, "n", minimum=0)
    k = default_stay_moments(n) if stay_moments is None else check_int(
        stay_moments, "stay_moments", minimum=2)
    design = eps * (1.0 - _DESIGN_SHARE)
    e_a = design / 2.0
    e_b = design / (2.0 * (k - 1))
    c = design * (k - 2) / (2.0 * (k - 1))  # ε_a - ε_b, without cancellation
    on, off = math.exp(-e_a), -math.expm1(-e_a)
    alpha, keep_on = -math.expm1(-e_b), math.exp(-e_b)
    gap = keep_on * -math.expm1(-c)  # π₀ - α = e^(-ε_b) - e^(-ε_a) ≥ 0
    beta = alpha * on / off if off > 0 else 0.0
    keep_off = (gap + alpha * off) / off if off > 0 else 0.0  # (π₀ - α·π₁)/π₀
    lam = gap / off if off > 0 else 0.0
    # ln λ to a few ulps relative: log1p near λ = 1, log below (docs §5, floating point)
    log_lam = (math.log1p(-alpha / off) if lam >= 0.5
               else math.log(lam) if lam > 0 else -math.inf)
    m = min(alpha * beta, keep_on, keep_off / 2.0, on, off)
    if not (m > 2.0**-1000 and math.isfinite(beta)):
        raise ParameterError(
            f"epsilon_select={eps} is outside the stay generator's range: its probabilities "
            "underflow in floating point"
        )
    # relative error per realised step probability (docs/dummy-landmarks.md §5, floating point)
    eta = (200.0 + 4.0 * e_b) * _U + 2.0**-127 / m
    slack = 2.0 * max(n, 1) * eta / (1.0 - eta)
    if slack > eps * _DESIGN_SHARE / 2.0:
        raise ParameterError(
            f"epsilon_select={eps} is too small for a series of {n} moments: the stay "
            "generator's probabilities cannot be realised accurately enough in floating point"
        )
    return StayChain(eps, k, e_a, e_b, on, off, alpha, keep_on, beta, keep_off, lam, log_lam,
                     slack)


def _stay_weights(mask: np.ndarray, ch: StayChain) -> tuple[np.ndarray, ...]:
    """Unnormalised weights (w0, w1) of Z_t = 0 / 1 given Z_{t-1} = 0 and given Z_{t-1} = 1
    (at t = 0: given nothing) and the next landmark after t: T(x→s)·P_e(s→1), e = its distance
    (no next landmark: T(x→s)). Landmark moments get (0, 1)."""
    n = mask.size
    idx = np.arange(n)
    nxt = np.minimum.accumulate(np.where(mask, idx, n)[::-1])[::-1] if n else idx
    ahead = (nxt < n) & ~mask
    e = np.where(ahead, nxt - idx, 1).astype(np.float64)
    x = e * ch.log_lam if ch.lam > 0 else np.full(n, -math.inf)
    g1 = np.where(ahead, ch.on + ch.off * (np.exp(x) if ch.lam > 0 else 0.0), 1.0)
    g0 = np.where(ahead, -ch.on * np.expm1(x), 1.0)
    w00, w01 = ch.keep_off * g0, ch.beta * g1
    w10, w11 = ch.alpha * g0, ch.keep_on * g1
    if n:
        w00[0], w01[0] = ch.off * g0[0], ch.on * g1[0]
        w10[0], w11[0] = w00[0], w01[0]
    for w0, w1 in ((w00, w01), (w10, w11)):
        w0[mask], w1[mask] = 0.0, 1.0
    return w00, w01, w10, w11


def _below(hi: np.ndarray, lo: np.ndarray, q: np.ndarray) -> np.ndarray:
    """U < q·2^128 for the 128-bit uniform U = hi·2^64 + lo and floats q ∈ [0, 1/2]: the event
    has probability ⌈q·2^128⌉/2^128, i.e. exactly q for q ≥ 2^-76 (docs §5)."""
    x = q * 2.0**64
    top = np.floor(x)
    bottom = np.ceil((x - top) * 2.0**64)
    top_u, bottom_u = top.astype(np.uint64), bottom.astype(np.uint64)
    return (hi < top_u) | ((hi == top_u) & (lo < bottom_u))


def _decide(w0: np.ndarray, w1: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """Z_t = 1 with probability w1/(w0+w1): the less likely value is drawn by :func:`_below`
    (so both realised probabilities carry a relative error of a few ulps only)."""
    one_small = w1 <= w0
    q = np.minimum(w0, w1) / (w0 + w1)
    hit = _below(hi, lo, q)
    return np.where(one_small, hit, ~hit)


def stay_dummies(landmarks: Any, *, epsilon_select: float, stay_moments: int | None = None,
                 rng: Any = None) -> tuple[np.ndarray, StayChain]:
    """Dummy stays: L' drawn from the chain of :func:`stay_chain` conditioned to contain L.

    Returns ``(dummies, chain)`` (dummies = L' \\ L as a bool mask). Guarantee (docs/
    dummy-landmarks.md §5, Theorem S): for every L, every set R of ordinary moments forming r runs
    of k moments in total, and every output L' ⊇ L ∪ R,
    Pr[L' | L ∪ R] ≤ e^(r·ε_sel/2 + (k-r)·ε_sel/(2(K-1)))·Pr[L' | L] — one stay of k ≤ K moments:
    ≤ e^ε_sel (:func:`stay_epsilon`) — and Pr[L' | L] ≤ Pr[L' | L ∪ R].

    Sampling: forward, Z_t given Z_{t-1} and the next landmark (the Markov property makes that
    the exact conditional law), one 128-bit uniform (two 64-bit words) per moment whatever L is,
    and the per-moment maps composed in numpy (O(n)). ``rng=None``: the ChaCha20 source.
    """
    mask = _mask(landmarks, None)
    ch = stay_chain(epsilon_select, mask.size, stay_moments=stay_moments)
    n = mask.size
    words = as_source(rng).words(2 * max(n, 1))
    hi, lo = words[:n], words[n:2 * n]
    w00, w01, w10, w11 = _stay_weights(mask, ch)
    f0 = _decide(w00, w01, hi, lo)  # Z_t if Z_{t-1} = 0
    f1 = _decide(w10, w11, hi, lo)  # Z_t if Z_{t-1} = 1
    if n:
        f1[0] = f0[0]  # t = 0 has no predecessor: both maps are the same constant
    # compose the maps x ↦ f_x(t): constants reset the state, the rest keep or flip it
    const = f0 == f1
    flip = f0 & ~f1
    last = np.maximum.accumulate(np.where(const, np.arange(n), 0)) if n else np.zeros(0, int)
    flips = np.cumsum(flip)
    z = f0[last] ^ ((flips - flips[last]) % 2 == 1)
    return z & ~mask, ch


def dummy_probabilities(landmarks: Any, *, epsilon_select: float,
                        stay_moments: int | None = None) -> np.ndarray:
    """Pr[t ∈ L' \\ L] for every moment under :func:`stay_dummies` (0 on L), exactly: with the
    nearest landmarks a < t < b, h(t-a)·h(b-t)/h(b-a) (h of :class:`StayChain`; one side missing:
    that factor and the denominator drop; none: π₁). PRIVATE: it depends on L."""
    mask = _mask(landmarks, None)
    ch = stay_chain(epsilon_select, mask.size, stay_moments=stay_moments)
    n = mask.size
    idx = np.arange(n)
    if not n:
        return np.zeros(0)
    nxt = np.minimum.accumulate(np.where(mask, idx, n)[::-1])[::-1]
    prv = np.maximum.accumulate(np.where(mask, idx, -1))
    before, after = prv >= 0, nxt < n
    da = np.where(before, idx - prv, 1)
    db = np.where(after, nxt - idx, 1)
    p = np.where(before, ch.h(da), 1.0) * np.where(after, ch.h(db), 1.0)
    p = np.where(before & after, p / ch.h(np.where(before & after, nxt - prv, 1)), p)
    p = np.where(before | after, p, ch.on)
    return np.where(mask, 0.0, np.minimum(p, 1.0))


def _selection(mask: np.ndarray, generator: str, epsilon_select: float,
               max_dummies: int | None, bins: int, dummy_ratio: float
               ) -> tuple[OptionFamily, np.ndarray, np.ndarray, float]:
    """(family, utilities, probabilities, Δu) of the thesis generators' selection on L."""
    build = greedy_options if generator == "greedy" else exhaustive_options
    family = build(mask, max_dummies=max_dummies)
    sens = utility_sensitivity(dummy_ratio)
    if not len(family):
        return family, np.zeros(0), np.zeros(0), sens
    u = option_utilities(family, bins=bins, dummy_ratio=dummy_ratio)
    probs = exponential_probabilities(u, epsilon=check_epsilon(epsilon_select, "epsilon_select"),
                                      sensitivity=sens)
    return family, u, probs, sens


def expected_dummies(landmarks: Any, *, epsilon_select: float, generator: str = "stays",
                     max_dummies: int | None = None, stay_moments: int | None = None,
                     bins: int = DEFAULT_BINS, dummy_ratio: float = DUMMY_RATIO) -> float:
    """E|L' \\ L| for ``generator`` on the bool mask ``landmarks`` (exact, no draw: the sum of the
    per-moment dummy probabilities, or of the options' sizes weighted by their selection
    probabilities). PRIVATE."""
    mask = _mask(landmarks, None)
    if generator == "stays":
        return float(dummy_probabilities(mask, epsilon_select=epsilon_select,
                                         stay_moments=stay_moments).sum())
    if generator == "bernoulli":
        return float((~mask).sum()) * bernoulli_probability(epsilon_select)
    if generator not in GENERATORS:
        raise ParameterError(f"unknown generator {generator!r}; valid: {', '.join(GENERATORS)}")
    family, _, probs, _ = _selection(mask, generator, epsilon_select, max_dummies, bins,
                                     dummy_ratio)
    if not len(family):
        return 0.0
    return float(np.dot(probs, family.sizes - int(mask.sum())))


@dataclass(frozen=True)
class DummyCost:
    """What dummy landmarks cost on average, exactly (:func:`dummy_cost`). PRIVATE.

    ``expected_dummies``: E|L' \\ L| (moments); ``ordinary``: n - |L|; ``real``: |L|;
    ``landmark_factor``: E[(|L'|+1)/(|L|+1)] — how much larger Uniform's noise scale at the
    other moments gets from the extra landmarks alone, at the same budget;
    ``budget_factor``: ε/ε_scheme, the part ε_sel takes; ``noise_factor``: their product, the
    expected ratio of Uniform's per-release noise scale with dummies to without (Laplace and
    planar Laplace errors scale with 1/budget, and Uniform spends ε/(|L|+1) per release)."""

    expected_dummies: float
    ordinary: int
    real: int
    landmark_factor: float
    budget_factor: float

    @property
    def noise_factor(self) -> float:
        return self.landmark_factor * self.budget_factor

    @property
    def dummy_share(self) -> float:
        """Expected share of the ordinary moments turned into dummies (0 without any)."""
        return self.expected_dummies / self.ordinary if self.ordinary else 0.0


def dummy_cost(landmarks: Any, *, epsilon: float, epsilon_select: float,
               generator: str = "stays", max_dummies: int | None = None,
               stay_moments: int | None = None, bins: int = DEFAULT_BINS,
               dummy_ratio: float = DUMMY_RATIO) -> DummyCost:
    """Expected number of dummies and expected error cost of hiding ``landmarks`` (bool mask L)
    at total ``epsilon`` with ``epsilon_select`` for the selection, computed exactly from the
    selection probabilities (:func:`expected_dummies`; the noise factor is linear in |L'|, so
    its expectation is exact too). PRIVATE: it depends on L."""
    mask = _mask(landmarks, None)
    e_scheme = split_budget(epsilon, epsilon_select=epsilon_select)
    expected = expected_dummies(mask, epsilon_select=epsilon_select, generator=generator,
                                max_dummies=max_dummies, stay_moments=stay_moments, bins=bins,
                                dummy_ratio=dummy_ratio)
    real = int(mask.sum())
    return DummyCost(expected, int(mask.size - real), real, 1.0 + expected / (real + 1),
                     check_epsilon(epsilon) / e_scheme)


# ----------------------------------------------------------------------------- the audit's attack


def run_length_scores(released: Any) -> np.ndarray:
    """For every moment, the length of the run of consecutive landmarks of ``released`` (L') it
    lies in (0 outside L'). Skip's public output shows L' (it repeats the last point there)."""
    mask = _mask(released, None)
    edges = np.diff(np.concatenate(([0], mask.astype(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    out = np.zeros(mask.size, dtype=np.int64)
    if starts.size:
        run = np.zeros(mask.size + 1, dtype=np.int64)
        np.add.at(run, starts, ends - starts)
        np.add.at(run, ends, -(ends - starts))
        out = np.cumsum(run)[: mask.size]
    return out


def run_length_auc(landmarks: Any, released: Any) -> float:
    """The audit's classifier (issue 24): score every moment of L' by the length of its run
    (:func:`run_length_scores`) and return the ROC AUC of real (L) against dummy (L' \\ L)
    moments — the chance that a random real moment scores above a random dummy one, ties
    counting half. 0.5: the score cannot tell them apart; NaN without real or dummy moments."""
    real = _mask(landmarks, None)
    shown = as_landmark_mask(released, real.size)
    if np.any(real & ~shown):
        raise ParameterError("released must contain every landmark (L ⊆ L')")
    score = run_length_scores(shown)
    a, b = score[real], score[shown & ~real]
    if not a.size or not b.size:
        return float("nan")
    values, inv = np.unique(np.concatenate((a, b)), return_inverse=True)
    ca = np.bincount(inv[: a.size], minlength=values.size).astype(np.float64)
    cb = np.bincount(inv[a.size:], minlength=values.size).astype(np.float64)
    below = np.cumsum(cb) - cb  # dummy moments scoring strictly lower
    return float((np.dot(ca, below) + 0.5 * np.dot(ca, cb)) / (a.size * b.size))


# ----------------------------------------------------------------------------- high level


@renamed(positional=("epsilon_select",))
def split_budget(epsilon: float, *, epsilon_select: float) -> float:
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
    ``chosen``: 1-based index of the chosen option (0: no option existed, L' = L = T, or a
    generator without options: stays, bernoulli); ``params``: generator and its parameters
    (stays: stay_moments K, epsilon_start, epsilon_per_moment, dummy_probability π₁, switch_off,
    switch_on; bernoulli: dummy_probability p̂; greedy/exhaustive: bins, sensitivity Δu,
    dummy_ratio ρ, floor F, max_dummies), fp_slack, seeded (True: a seed or Generator was
    given — a simulation, not a private release). Only ``mask`` may be released.
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


def hide_landmarks(landmarks: Any, *, epsilon_select: float, generator: str = "stays",
                   max_dummies: int | None = None, bins: int = DEFAULT_BINS,
                   rng: Any = None, stay_moments: int | None = None,
                   dummy_ratio: float = DUMMY_RATIO) -> HiddenLandmarks:
    """Add dummy landmarks to the bool mask ``landmarks`` (L) and return L' ⊋ L.

    ``generator``:

    * ``"stays"`` (default): dummy stays (:func:`stay_dummies`). For any run of k ordinary
      moments shown in L', the odds that it was a real stay grow at most
      e^(ε_sel·(1 + (k-1)/(K-1))/2)-fold: e^ε_sel for stays up to K = ``stay_moments`` moments
      (default :func:`default_stay_moments`, 1 % of the series), e^(ε_sel/2) for one moment.
    * ``"bernoulli"``: each regular timestamp with probability e^(-ε_sel)
      (:func:`bernoulli_dummies`): the bound holds per moment, e^(k·ε_sel) for a stay of k.
    * ``"greedy"`` (fast, nested) / ``"exhaustive"`` (≤ 18 regular timestamps): the thesis's
      options, scored in moments with u_L(L') = -Σ_b |c_b(L' \\ L) - ρ·c_b(L)| over ``bins``
      fixed bins (ρ = ``dummy_ratio`` fake landmarks per real one) and picked with the
      (floored) exponential mechanism at ε_sel (Δu = 1 + ρ). ``max_dummies`` caps the number of
      options (fix it independently of the data); it is refused for the other two generators.

    ``rng``: None = the ChaCha20 source keyed from the OS (real releases); a seed or Generator:
    simulations and tests (``params["seeded"]``).

    Protected (docs/dummy-landmarks.md): running a scheme with budget ε_scheme on L' keeps every
    true landmark (ε_scheme, L)-landmark private, since L ⊆ L'; the user's total is
    ε_scheme + ε_sel (:func:`split_budget`). NOT protected: the released L' still contains L; the
    greedy family is built from L, so pairs of landmark sets with different families are not
    covered by ε_sel.
    """
    eps = check_epsilon(epsilon_select, "epsilon_select")
    if isinstance(landmarks, np.ndarray) and landmarks.dtype == np.bool_ and landmarks.ndim == 1:
        mask = landmarks.copy()
    else:
        raise ParameterError("landmarks must be a 1-D bool mask (one entry per timestamp)")
    if generator not in GENERATORS:
        raise ParameterError(f"unknown generator {generator!r}; valid: {', '.join(GENERATORS)}")
    bins = check_int(bins, "bins", minimum=1)
    if generator in ("stays", "bernoulli") and max_dummies is not None:
        raise ParameterError("max_dummies applies to the greedy/exhaustive generators only (a cap "
                             f"would break the {generator} generator's guarantee)")
    if stay_moments is not None and generator != "stays":
        raise ParameterError("stay_moments applies to the stays generator only")
    _ratio(dummy_ratio)
    empty = np.zeros(0)
    if generator == "stays":
        dmask, ch = stay_dummies(mask, epsilon_select=eps, stay_moments=stay_moments, rng=rng)
        return HiddenLandmarks(mask | dmask, mask, np.flatnonzero(dmask), eps,
                               empty.astype(np.int64), empty, empty, 0,
                               {"generator": generator, "stay_moments": ch.stay_moments,
                                "epsilon_start": ch.epsilon_start,
                                "epsilon_per_moment": ch.epsilon_step,
                                "dummy_probability": ch.on, "switch_off": ch.alpha,
                                "switch_on": ch.beta, "seeded": rng is not None,
                                "fp_slack": ch.fp_slack})
    if generator == "bernoulli":
        dmask, p_hat = bernoulli_dummies(mask, epsilon_select=eps, rng=rng)
        return HiddenLandmarks(mask | dmask, mask, np.flatnonzero(dmask), eps,
                               empty.astype(np.int64), empty, empty, 0,
                               {"generator": generator, "dummy_probability": p_hat,
                                "seeded": rng is not None, "fp_slack": 0.0})
    family, u, probs, sens = _selection(mask, generator, eps, max_dummies, bins, dummy_ratio)
    params = {"generator": generator, "bins": bins, "sensitivity": sens,
              "dummy_ratio": float(dummy_ratio), "floor": SELECTION_FLOOR,
              "max_dummies": max_dummies, "seeded": rng is not None}
    if not len(family):  # every timestamp is a landmark: nothing to add, nothing to hide
        return HiddenLandmarks(mask, mask, np.zeros(0, np.int64), eps, np.zeros(0, np.int64),
                               np.zeros(0), np.zeros(0), 0, {**params, "fp_slack": 0.0})
    k = int(exponential_select(u, epsilon=eps, sensitivity=sens, rng=rng))
    chosen = family.mask(k + 1)
    return HiddenLandmarks(
        mask=chosen, landmarks=mask, dummies=family.added(k + 1), epsilon_select=eps,
        option_sizes=family.sizes, option_utilities=u, probabilities=probs, chosen=k + 1,
        params={**params, "fp_slack": SELECTION_FP_SLACK},
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
                   rng: Any = None, generator: str = "stays", max_dummies: int | None = None,
                   bins: int = DEFAULT_BINS, stay_moments: int | None = None,
                   dummy_ratio: float = DUMMY_RATIO, **params: Any) -> HiddenRelease:
    """Hide ``landmarks`` with :func:`hide_landmarks` (ε_sel), then release ``data`` under
    ``scheme`` on L' with ε_scheme = :func:`split_budget` (ε, ε_sel).

    ``data``: a trajectory (planar Laplace, ``radius_m``, default 200 m) or, with
    ``sensitivity``, a numeric series (Laplace). ``landmarks``: bool mask or indices. ``rng``:
    None = fresh OS-keyed randomness for both steps; a seed or Generator (tests, simulations)
    feeds both, the selection first. ``generator``, ``max_dummies``, ``bins``, ``stay_moments``,
    ``dummy_ratio``: as in :func:`hide_landmarks`. ``params``: the scheme's parameters.
    """
    if radius_m is not None and sensitivity is not None:
        raise ParameterError("give radius_m (locations) or sensitivity (values), not both")
    e_scheme = split_budget(epsilon, epsilon_select=epsilon_select)
    if sensitivity is None:
        n = trajectory_points(data)[0].size
    else:
        n = np.asarray(data).shape[0] if np.ndim(data) else 0
    mask = as_landmark_mask(landmarks, n)
    gen = None if rng is None else as_rng(rng)
    hidden = hide_landmarks(mask, epsilon_select=epsilon_select, generator=generator,
                            max_dummies=max_dummies, bins=bins, rng=gen,
                            stay_moments=stay_moments, dummy_ratio=dummy_ratio)
    if sensitivity is None:
        rel = release_locations(data, hidden.mask, epsilon=e_scheme, scheme=scheme,
                                radius_m=200.0 if radius_m is None else radius_m, rng=gen,
                                **params)
    else:
        rel = release_values(data, hidden.mask, epsilon=e_scheme, scheme=scheme,
                             sensitivity=sensitivity, rng=gen, **params)
    return HiddenRelease(hidden, rel, e_scheme + hidden.epsilon_select)
