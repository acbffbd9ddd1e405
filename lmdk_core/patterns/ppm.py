"""Pattern-level privacy-preserving mechanisms (PPMs): Uniform and Adaptive (Gu et al., ICDE 2023).

**Indicators.** For every tick t of a user and every *protected* event type k, the indicator
I(t, k) ∈ {0, 1} says whether an event of type k occurs at t. The protected types are the
types of the private patterns **and the types deterministically paired with them**
(:mod:`lmdk_core.patterns.protect`: the other kinds of the same region — enter, leave, dwell —
and the other direction of the same threshold), so no public event gives a hidden one away.
Each indicator goes through binary randomised response with the type's budget ε_k
(:mod:`lmdk_core.patterns.rr`, exactly ε_k-DP in floating point): a real event whose bit flips to
0 is *suppressed*; a tick whose bit flips to 1 gets a *synthetic* event of type k. Events of
types in no private pattern pass unchanged. Released events of protected types carry no data
beyond their bit: their location is drawn afresh from the public distribution of the type's
region (uniform in the place or cell, :mod:`lmdk_core.patterns.regions`) for real and synthetic
events alike, and their time is the (public) tick.

**Budgets.** Each private pattern P = seq(E_1..E_m) gets per-position budgets ε_{P,i} ≥ 0 with
Σ_i ε_{P,i} ≤ ε; position i's budget is split equally over the group G(E_i) of types paired
with E_i (E_i included), and a type's budget is the minimum of the shares it gets over all
positions of all private patterns, so a type shared by several of them gets the smallest.

**Neighbour relation** (``neighbour=``; the seed's Definitions 1–3 admit both readings):

* ``"instance"`` (default) — pattern-level neighbours differ in any subset of the *footprint*
  of one private-pattern instance: its m events and the other events of the visits (threshold
  stretches) they begin or end. Uniform: ε_{P,i} = ε/m, i.e. ε/(m·|G(E_i)|) per type.
  Guarantee: the output distributions of such neighbours differ by a factor ≤ e^ε.
* ``"event"`` — in-pattern neighbours differ in the footprint of exactly one event of an
  instance. Uniform: ε_{P,i} = ε. Guarantee: e^ε for one event; a whole instance costs up to m·ε.

``paired=False`` (every function here) randomises the pattern types only: the opt-out, for
comparisons with the pre-issue-24 mechanism. Its releases publish the paired events as they are
and do NOT protect occurrences (docs/pattern-level-dp.md §3).

Adaptive PPM (instance reading): ε_{P,i} with Σ_i ε_{P,i} = ε chosen to maximise the quality
Q of the public patterns on a *historical period disjoint from the released one*, by replaying
the mechanism there (:func:`adaptive_allocation`). The allocation is a function of the history
stream, the patterns, ε, α and the replay seed only — never of the stream being released.

Randomness: ``rng=None`` draws fresh OS entropy (one ChaCha20
:class:`~lmdk_core.noise.RandomSource` per release: every flip and every location comes from
its keystream, no numpy Generator is involved); a seed or Generator is for simulations and
tests. Draw order: for each protected type in code order, the exact flip decision of every tick
(:func:`lmdk_core.noise.apply.noisy_bits`), then two words per released protected-type event
with a region for its location.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from .._deprecation import renamed
from ..errors import ParameterError
from ..noise import as_source, simulation_rng
from ..validation import check_epsilon, check_int, check_probability
from .match import Pattern, match_all
from .protect import Protection, footprint, paired_types, protection
from .quality import quality
from .regions import GridRegions, PlaceRegions
from .rr import RR_MAX_EPSILON, flip_mask, flip_threshold
from .stream import NS_PER_S, EventStream

__all__ = [
    "NEIGHBOURS",
    "PatternRelease",
    "adaptive_allocation",
    "adaptive_ppm",
    "adaptive_ppm_periods",
    "event_rr",
    "type_budgets",
    "uniform_allocation",
    "uniform_ppm",
]

NEIGHBOURS = ("instance", "event")
"""Neighbour relations: whole private-pattern instance (default) or a single event of one."""


@dataclass(frozen=True, eq=False)
class PatternRelease:
    """Result of a pattern-level release.

    ``stream`` is the released (public) event stream, ``type_epsilon`` the per-type budgets
    (public parameters) of every randomised type, ``protection`` which types are protected and
    which of them only because they are paired with a private-pattern type. ``suppressed`` (per
    true event) and ``injected`` (per released event) are PRIVATE diagnostics computed from the
    true stream: they are for the data holder's own evaluation and must never be published with
    the release.
    """

    mechanism: str
    epsilon: float
    neighbour: str
    stream: EventStream
    type_epsilon: Mapping[str, float]
    suppressed: np.ndarray
    injected: np.ndarray
    allocation: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    protection: Protection | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "type_epsilon", MappingProxyType(dict(self.type_epsilon)))
        object.__setattr__(self, "allocation", MappingProxyType(dict(self.allocation)))

    def public_frame(self) -> pd.DataFrame:
        """The released events only (uid, time, type, lat, lon): safe to publish."""
        return self.stream.to_frame()


def _check_neighbour(neighbour: Any) -> str:
    if neighbour not in NEIGHBOURS:
        raise ParameterError(f"neighbour must be one of {NEIGHBOURS}, got {neighbour!r}")
    return str(neighbour)


def _private(patterns: Sequence[Pattern]) -> list[Pattern]:
    priv = [p for p in patterns if p.private]
    if not priv:
        raise ParameterError("mark at least one pattern private: there is nothing to protect")
    names = [p.name for p in priv]
    if len(set(names)) != len(names):
        raise ParameterError("private patterns must have distinct names")
    return priv


def uniform_allocation(patterns: Sequence[Pattern], *, epsilon: float,
                       neighbour: str = "instance") -> dict[str, tuple[float, ...]]:
    """Per-position budgets of each private pattern: ε/m (instance) or ε (event)."""
    eps = check_epsilon(epsilon)
    nb = _check_neighbour(neighbour)
    return {p.name: (eps / p.m if nb == "instance" else eps,) * p.m for p in _private(patterns)}


def type_budgets(patterns: Sequence[Pattern],
                 allocation: Mapping[str, Sequence[float] | np.ndarray], *,
                 types: Sequence[str], paired: bool = True) -> dict[str, float]:
    """Budget of each protected type: position i's budget ε_{P,i} split equally over the group
    of E_i (the types of the universe ``types`` paired with it; only E_i when ``paired=False``),
    then the minimum over all the positions whose group holds the type."""
    out: dict[str, float] = {}
    for p in _private(patterns):
        if p.name not in allocation:
            raise ParameterError(f"allocation has no budgets for private pattern {p.name!r}")
        budget = np.asarray(allocation[p.name], dtype=np.float64)
        if budget.shape != (p.m,):
            raise ParameterError(f"allocation for {p.name!r} needs {p.m} budgets")
        for t, e in zip(p.types, budget, strict=True):
            group = paired_types(t, types) if paired else (t,)
            for k in group:
                out[k] = min(out.get(k, np.inf), float(e) / len(group))
    return out


def _region_of_types(stream: EventStream, regions: Any) -> np.ndarray | None:
    """Region code of each type named ``<kind>:<region>`` (-1 otherwise), or None."""
    if regions is None:
        return None
    if not isinstance(regions, (PlaceRegions, GridRegions)):
        raise ParameterError("regions must be PlaceRegions or GridRegions (or None)")
    index = {n: i for i, n in enumerate(regions.names)}
    return np.array([index.get(t.split(":", 1)[-1], -1) for t in stream.types], dtype=np.int64)


def _rr_release(stream: EventStream, type_eps: Mapping[str, float], regions: Any,
                rng: Any) -> tuple[EventStream, np.ndarray, np.ndarray]:
    """Randomised response on the indicators of the given types; see the module docstring."""
    source = as_source(rng)  # None: a fresh ChaCha20 source (OS entropy): flips AND locations
    codes = sorted(stream.type_code(t) for t in type_eps)
    eps = np.array([type_eps[stream.types[c]] for c in codes], dtype=np.float64)
    thresholds = flip_threshold(eps) if codes else np.zeros(0, np.int64)
    protected = np.isin(stream.etype, codes)
    n = stream.n_ticks
    suppressed = np.zeros(len(stream), bool)
    new_ticks: list[np.ndarray] = []
    new_types: list[np.ndarray] = []
    injected_parts: list[np.ndarray] = []
    for c, k in zip(codes, thresholds, strict=True):
        flips = flip_mask(k, rng=source, size=n)
        sel = np.flatnonzero(stream.etype == c)
        true_ticks = stream.tick[sel]
        suppressed[sel] = flips[true_ticks]
        flips[true_ticks] ^= True  # now: the released bit of type c at every tick
        out = np.flatnonzero(flips)
        new_ticks.append(out)
        new_types.append(np.full(out.size, c, np.int32))
        flips[true_ticks] = False  # now: released and not real, i.e. injected
        injected_parts.append(flips[out])
    keep = ~protected
    n_keep = int(keep.sum())
    tick = np.concatenate([stream.tick[keep], *new_ticks])
    etype = np.concatenate([stream.etype[keep], *new_types])
    injected = np.concatenate([np.zeros(n_keep, bool), *injected_parts])
    lat = np.full(tick.size, np.nan)
    lon = np.full(tick.size, np.nan)
    lat[:n_keep], lon[:n_keep] = stream.lat[keep], stream.lon[keep]
    region_of = _region_of_types(stream, regions)
    fresh = np.arange(n_keep, tick.size)
    if region_of is not None and fresh.size:
        reg = region_of[etype[fresh]]
        ok = reg >= 0
        la, lo = regions.sample(reg[ok], rng=source)  # the same keystream, never a numpy Generator
        lat[fresh[ok]], lon[fresh[ok]] = la, lo
    # the parts are each sorted by tick: a stable sort of the (tick, type) key merges the runs
    order = np.argsort(tick * len(stream.types) + etype, kind="stable")
    out_stream = EventStream(stream.tick_uid, stream.tick_time, tick[order].astype(np.int64),
                             etype[order].astype(np.int32), lat[order], lon[order],
                             stream.types, stream.users)
    return out_stream, suppressed, injected[order]


def _check_budget_limits(type_eps: Mapping[str, float]) -> None:
    for t, e in type_eps.items():
        if not e > 0:
            raise ParameterError(f"budget of type {t!r} must be > 0, got {e}")
        if e > RR_MAX_EPSILON:
            raise ParameterError(
                f"budget {e:.6g} of type {t!r} is above the limit of randomised response, "
                "RR_MAX_EPSILON = 2^20 = 1048576 (the exact sampler's domain); lower epsilon")


def uniform_ppm(stream: EventStream, patterns: Sequence[Pattern], *, epsilon: float,
                neighbour: str = "instance", regions: Any = None, rng: Any = None,
                paired: bool = True) -> PatternRelease:
    """Uniform pattern-level PPM: ε/m (or ε) per position, split over each position's paired
    types, by randomised response on every protected indicator.

    Pattern-level ε-DP for the chosen ``neighbour`` relation (module docstring). ``regions``
    (the regions the events were extracted with) lets released protected events carry a
    location drawn uniformly in their region; without it they carry none. ``rng=None``: fresh
    OS entropy. ``paired=False``: the opt-out (module docstring), no protection of occurrences.
    """
    alloc = uniform_allocation(patterns, epsilon=epsilon, neighbour=neighbour)
    return release_with_allocation(stream, patterns, alloc, epsilon=epsilon, neighbour=neighbour,
                                   regions=regions, rng=rng, mechanism="uniform", paired=paired)


def release_with_allocation(stream: EventStream, patterns: Sequence[Pattern],
                            allocation: Mapping[str, Sequence[float]], *, epsilon: float,
                            neighbour: str = "instance", regions: Any = None, rng: Any = None,
                            mechanism: str = "allocation", paired: bool = True
                            ) -> PatternRelease:
    """Release with given per-position budgets; checks Σ_i ε_{P,i} ≤ ε (instance) or ≤ ε each.
    Each position's budget is split over its paired types (``paired=False``: the opt-out)."""
    eps = check_epsilon(epsilon)
    nb = _check_neighbour(neighbour)
    for p in _private(patterns):
        b = np.asarray(allocation.get(p.name, ()), dtype=np.float64)
        if b.shape != (p.m,) or np.any(~np.isfinite(b)) or np.any(b <= 0):
            raise ParameterError(f"allocation for {p.name!r} must be {p.m} finite budgets > 0")
        total = b.sum() if nb == "instance" else b.max()
        if total > eps * (1 + 1e-12):
            what = "sum" if nb == "instance" else "largest"
            raise ParameterError(f"allocation for {p.name!r}: {what} budget {total:.6g} "
                                 f"exceeds epsilon {eps:.6g}")
    type_eps = type_budgets(patterns, allocation, types=stream.types, paired=paired)
    _check_budget_limits(type_eps)
    out, sup, inj = _rr_release(stream, type_eps, regions, rng)
    return PatternRelease(mechanism, eps, nb, out, type_eps, sup, inj,
                          {k: tuple(float(x) for x in v) for k, v in allocation.items()},
                          protection(patterns, stream.types, paired=paired))


def event_rr(stream: EventStream, patterns: Sequence[Pattern], *, epsilon: float,
             neighbour: str = "instance", types: Sequence[str] | None = None,
             regions: Any = None, rng: Any = None) -> PatternRelease:
    """Baseline: event-level randomised response on EVERY event type (a stream PPM).

    It does not know which patterns are private, so to give the same pattern-level guarantee as
    the Uniform PPM it spends the smallest per-event budget min_P ε/|F_P| on every type, with
    |F_P| the number of cells of P's footprint (m_P without paired types; instance reading),
    or min ε/|G| over the private types' groups (event reading), on every type in ``types``
    (default: all types of the stream; restricting to the types of the patterns evaluated
    changes no match and saves time).
    """
    eps = check_epsilon(epsilon)
    nb = _check_neighbour(neighbour)
    priv = _private(patterns)
    if nb == "instance":
        per_event = min(eps / len(footprint(p.types, stream.types)) for p in priv)
    else:
        per_event = min(eps / len(paired_types(t, stream.types)) for p in priv for t in p.types)
    chosen = stream.types if types is None else tuple(types)
    type_eps = {t: per_event for t in chosen}
    _check_budget_limits(type_eps)
    out, sup, inj = _rr_release(stream, type_eps, regions, rng)
    return PatternRelease("event-rr", eps, nb, out, type_eps, sup, inj)


# ----------------------------------------------------------------------------- adaptive


def _replay_quality(history: EventStream, patterns: Sequence[Pattern],
                    allocation: Mapping[str, Sequence[float] | np.ndarray], alpha: float,
                    seeds: Sequence[int], truth: list[np.ndarray], paired: bool) -> float:
    public = [p for p in patterns if not p.private]
    type_eps = type_budgets(patterns, allocation, types=history.types, paired=paired)
    qs = []
    for s in seeds:
        out, _, _ = _rr_release(history, type_eps, None, simulation_rng(s))
        qs.append(quality(truth, match_all(out, public), alpha=alpha).q)
    return float(np.mean(qs))


@renamed(seed="replay_seed")
def adaptive_allocation(
    history: EventStream, patterns: Sequence[Pattern], *, epsilon: float, alpha: float = 0.5,
    replays: int = 2, rounds: int = 3, floor: float = 0.1, replay_seed: int = 0,
    paired: bool = True,
) -> dict[str, tuple[float, ...]]:
    """Per-position budgets (Σ_i ε_{P,i} = ε per private pattern) maximising replayed Q.

    Depends ONLY on ``history`` (a period disjoint from the one to be released; treat it as
    public, e.g. an earlier period's *released* stream, or accept that it is used without
    protection), the patterns, ``epsilon``, ``alpha`` and ``replay_seed`` (``seed=`` is a
    deprecated alias: it seeds replays of public history, not a release).

    Search: start uniform; in each of ``rounds`` rounds try moving δ from one position to
    another of the same private pattern (δ = ε/(2m), halved each round), keeping each position
    ≥ ``floor``·ε/m; accept the best improving move; Q is the mean over ``replays`` replays with
    fixed seeds (common random numbers, so candidates are compared on the same coin flips).
    """
    eps = check_epsilon(epsilon)
    a = check_probability(alpha, "alpha")
    replays = check_int(replays, "replays")
    rounds = check_int(rounds, "rounds", minimum=0)
    fl = check_probability(floor, "floor")
    priv = _private(patterns)
    public = [p for p in patterns if not p.private]
    alloc = {p.name: np.full(p.m, eps / p.m) for p in priv}
    if not public:
        return {k: tuple(v) for k, v in alloc.items()}
    seeds = [replay_seed + i for i in range(replays)]
    truth = match_all(history, public)
    best = _replay_quality(history, patterns, alloc, a, seeds, truth, paired)
    for r in range(rounds):
        improved = True
        while improved:
            improved = False
            cand_best, cand_alloc = best, None
            for p in priv:
                delta = eps / (2 * p.m) / (2**r)
                low = fl * eps / p.m
                for i in range(p.m):
                    for j in range(p.m):
                        if i == j or p.types[i] == p.types[j] or alloc[p.name][i] - delta < low:
                            continue
                        trial = {k: v.copy() for k, v in alloc.items()}
                        trial[p.name][i] -= delta
                        trial[p.name][j] += delta
                        if trial[p.name].max() > RR_MAX_EPSILON:
                            continue
                        q = _replay_quality(history, patterns, trial, a, seeds, truth, paired)
                        if q > cand_best + 1e-12:
                            cand_best, cand_alloc = q, trial
            if cand_alloc is not None:
                best, alloc, improved = cand_best, cand_alloc, True
    # renormalise so each pattern's budgets sum to ε exactly in floating point (≤ ε)
    out = {}
    for p in priv:
        v = alloc[p.name] * (eps / alloc[p.name].sum())
        while v.sum() > eps:
            v = np.nextafter(v, 0)
        out[p.name] = tuple(float(x) for x in v)
    return out


def adaptive_ppm(stream: EventStream, patterns: Sequence[Pattern], *, history: EventStream,
                 epsilon: float, alpha: float = 0.5, regions: Any = None, rng: Any = None,
                 **search: Any) -> PatternRelease:
    """Adaptive pattern-level PPM: budgets from :func:`adaptive_allocation` on ``history``.

    ``history`` must cover a period disjoint from ``stream`` (ParameterError if any user's
    history overlaps the released period). Pattern-level ε-DP (instance reading) for ``stream``.
    """
    _check_disjoint(history, stream)
    paired = bool(search.get("paired", True))
    alloc = adaptive_allocation(history, patterns, epsilon=epsilon, alpha=alpha, **search)
    return release_with_allocation(stream, patterns, alloc, epsilon=epsilon,
                                   neighbour="instance", regions=regions, rng=rng,
                                   mechanism="adaptive", paired=paired)


def adaptive_ppm_periods(stream: EventStream, patterns: Sequence[Pattern], *, period_s: float,
                         epsilon: float, alpha: float = 0.5, regions: Any = None,
                         rng: Any = None, **search: Any) -> list[PatternRelease]:
    """Adaptive PPM re-estimated per period, learning only from what was already released.

    The stream is cut into periods of ``period_s`` seconds (boundaries at multiples of
    ``period_s`` since the epoch: public). Period 1 uses the Uniform allocation; period p > 1
    uses :func:`adaptive_allocation` on the *released* stream of period p − 1 — post-processing
    of an ε-DP release, so the allocation costs nothing and touches no unprotected data. Each
    period's release is pattern-level ε-DP (instance reading) for occurrences inside it; an
    occurrence straddling a boundary is covered by the two releases together (at most 2ε).
    """
    from ..validation import check_positive

    step = int(check_positive(period_s, "period_s") * NS_PER_S)
    eps = check_epsilon(epsilon)
    gen = as_source(rng)  # one source for every period (None: fresh OS entropy)
    paired = bool(search.get("paired", True))
    out: list[PatternRelease] = []
    if not stream.n_ticks:
        return out
    first = int(stream.tick_time.min()) // step
    last = int(stream.tick_time.max()) // step
    previous: EventStream | None = None
    for k in range(first, last + 1):
        part = stream.time_slice(start=k * step, stop=(k + 1) * step)
        if previous is None:
            alloc = uniform_allocation(patterns, epsilon=eps)
        else:
            alloc = adaptive_allocation(previous, patterns, epsilon=eps, alpha=alpha, **search)
        rel = release_with_allocation(part, patterns, alloc, epsilon=eps, regions=regions,
                                      rng=gen, mechanism="adaptive-periods", paired=paired)
        out.append(rel)
        previous = rel.stream
    return out


def _check_disjoint(history: EventStream, stream: EventStream) -> None:
    if history.types != stream.types:
        raise ParameterError("history and stream must use the same event types")
    if not history.n_ticks or not stream.n_ticks:
        return
    h = pd.DataFrame({"u": np.asarray(history.users)[history.tick_uid], "t": history.tick_time})
    s = pd.DataFrame({"u": np.asarray(stream.users)[stream.tick_uid], "t": stream.tick_time})
    hs = h.groupby("u")["t"].agg(["min", "max"])
    ss = s.groupby("u")["t"].agg(["min", "max"])
    both = hs.merge(ss, left_index=True, right_index=True, suffixes=("_h", "_s"))
    overlap = (both["min_h"] <= both["max_s"]) & (both["min_s"] <= both["max_h"])
    if overlap.any():
        u = overlap.index[overlap.to_numpy()][0]
        raise ParameterError(f"history overlaps the released period (user {u!r}); the adaptive "
                             "allocation must come from a disjoint period")
