"""Stream baselines on the same event streams, through lmdk_core's public release API.

Each baseline sees the indicator *cells* (tick, type) of the chosen types as a 0/1 series, calls
:func:`lmdk_core.release_values` (Laplace noise, sensitivity 1) and releases an event wherever
the released value is ≥ 1/2. Events of other types pass unchanged (give ``types`` = every type
for a stream-wide baseline; types that occur in no evaluated pattern change no match).

* ``wevent(..., scheme="bd" | "ba")`` — Kellaris et al.'s w-event budget distribution /
  absorption on EACH USER'S OWN SERIES OF EACH TYPE: one release per (user, type), the user's 0/1
  cells of that type over the user's ticks, no landmarks, w = the most ticks that user has within
  the largest private window (ticks are public), and per type the budget
  ε_type = min_P ε/|types of P's footprint| (:func:`wevent_type_epsilon`). An occurrence of a
  private pattern changes cells of at most |types of F_P| of the user's series, each within w
  consecutive ticks, so it costs at most |types of F_P|·ε_type ≤ ε (instance reading; enter-only
  streams: a visit's leave can lie beyond the window). Users' series are disjoint, so each user
  gets that guarantee whatever the others' data (parallel composition). Like
  :func:`lmdk_core.patterns.ppm.event_rr`, it uses only the private patterns' lengths, not which
  types they use.
* ``landmark(..., scheme="uniform" | "skip" | "adaptive")`` — one call per user on the user's
  cells, type-major, with the cells holding true events of private-pattern types as landmarks
  and the total budget ε: (ε, L)-landmark privacy for each user, which covers every private
  instance (all its events are landmarks). Caveat: L is derived from the private events
  themselves, so the landmark set (and with ``uniform`` its size, through ε/(|L|+1)) is not
  hidden; this baseline is a utility reference, not a pattern-level-DP mechanism.

Randomness as everywhere: ``rng=None`` fresh OS entropy; a seed/Generator for simulations.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ParameterError
from ..mechanisms import as_rng
from ..release import release_values
from ..validation import check_epsilon
from .match import Pattern
from .ppm import PatternRelease, _private, _region_of_types
from .protect import footprint
from .stream import NS_PER_S, EventStream

__all__ = ["LANDMARK_SCHEMES", "WEVENT_SCHEMES", "landmark", "max_ticks_in_window",
           "ticks_in_window", "wevent", "wevent_type_epsilon"]

WEVENT_SCHEMES = ("bd", "ba")
LANDMARK_SCHEMES = ("uniform", "skip", "adaptive")


def ticks_in_window(stream: EventStream, window_s: float) -> np.ndarray:
    """For each user, the most of its ticks within any span of ``window_s`` seconds (inclusive),
    ≥ 1 (int64, one entry per user; ticks are public, so this is too)."""
    n_users = len(stream.users)
    if stream.n_ticks == 0:
        return np.ones(n_users, dtype=np.int64)
    secs = stream.tick_time // NS_PER_S
    key = stream.tick_uid.astype(np.int64) * (int(secs.max() - secs.min()) + int(window_s) + 2) \
        + (secs - secs.min())
    end = np.searchsorted(key, key + int(np.ceil(window_s)), side="right")
    count = end - np.arange(key.size)
    out = np.ones(n_users, dtype=np.int64)
    np.maximum.at(out, stream.tick_uid.astype(np.int64), count)
    return out


def max_ticks_in_window(stream: EventStream, window_s: float) -> int:
    """Most ticks of one user within any span of ``window_s`` seconds (inclusive), ≥ 1."""
    return int(ticks_in_window(stream, window_s).max(initial=1))


def _cells(stream: EventStream, codes: np.ndarray) -> np.ndarray:
    """0/1 matrix (n_ticks, K): true indicator of each chosen type at each tick."""
    bits = np.zeros((stream.n_ticks, codes.size), dtype=np.float64)
    col = np.full(len(stream.types), -1)
    col[codes] = np.arange(codes.size)
    sel = col[stream.etype] >= 0
    bits[stream.tick[sel], col[stream.etype[sel]]] = 1.0
    return bits


def _from_bits(stream: EventStream, codes: np.ndarray, released: np.ndarray, true_bits: np.ndarray,
               regions: Any, gen: np.random.Generator, name: str, eps: float,
               type_eps: dict[str, float]) -> PatternRelease:
    keep = ~np.isin(stream.etype, codes)
    t_idx, k_idx = np.nonzero(released)
    tick = np.concatenate([stream.tick[keep], t_idx])
    etype = np.concatenate([stream.etype[keep], codes[k_idx]]).astype(np.int32)
    lat = np.concatenate([stream.lat[keep], np.full(t_idx.size, np.nan)])
    lon = np.concatenate([stream.lon[keep], np.full(t_idx.size, np.nan)])
    region_of = _region_of_types(stream, regions)
    if region_of is not None and t_idx.size:
        reg = region_of[codes[k_idx]]
        ok = reg >= 0
        fresh = np.arange(int(keep.sum()), tick.size)[ok]
        lat[fresh], lon[fresh] = regions.sample(reg[ok], rng=gen)
    injected = np.concatenate([np.zeros(int(keep.sum()), bool), true_bits[t_idx, k_idx] == 0])
    col = np.full(len(stream.types), -1)
    col[codes] = np.arange(codes.size)
    sel = ~keep
    suppressed = np.zeros(len(stream), bool)
    suppressed[sel] = ~released[stream.tick[sel], col[stream.etype[sel]]]
    order = np.lexsort((etype, tick))
    out = EventStream(stream.tick_uid, stream.tick_time, tick[order].astype(np.int64),
                      etype[order], lat[order], lon[order], stream.types, stream.users)
    return PatternRelease(name, eps, "instance", out, type_eps, suppressed, injected[order])


def _codes(stream: EventStream, types: Sequence[str] | None) -> np.ndarray:
    chosen = stream.types if types is None else tuple(types)
    if not chosen:
        raise ParameterError("give at least one event type to protect")
    return np.array(sorted({stream.type_code(t) for t in chosen}), dtype=np.int64)


def wevent_type_epsilon(stream: EventStream, patterns: Sequence[Pattern], *, epsilon: float
                        ) -> float:
    """ε_type of :func:`wevent`: min over private patterns P of ε/|distinct types of P's
    footprint| (a stream mechanism that knows only the patterns' shapes, as event-level RR)."""
    eps = check_epsilon(epsilon)
    return min(eps / len(set(footprint(p.types, stream.types))) for p in _private(patterns))


def wevent(stream: EventStream, patterns: Sequence[Pattern], *, epsilon: float, scheme: str = "bd",
           types: Sequence[str] | None = None, regions: Any = None, rng: Any = None
           ) -> PatternRelease:
    """w-event baseline (BD or BA), one release per user and type of ``types`` (default: every
    type) at ε_type = :func:`wevent_type_epsilon`; see the module docstring for the guarantee."""
    if scheme not in WEVENT_SCHEMES:
        raise ParameterError(f"scheme must be one of {WEVENT_SCHEMES}, got {scheme!r}")
    eps = check_epsilon(epsilon)
    per_type = wevent_type_epsilon(stream, patterns, epsilon=eps)
    codes = _codes(stream, types)
    gen = as_rng(rng)
    bits = _cells(stream, codes)
    widths = ticks_in_window(stream, max(p.window_s for p in _private(patterns)))
    out_bits = np.zeros(bits.shape, bool)
    for user, (start, stop) in enumerate(stream.user_tick_ranges()):
        if stop == start:
            continue
        w = int(min(widths[user], stop - start))
        for col in range(codes.size):  # one release per (user, type): independent series
            rel = release_values(bits[start:stop, col], None, epsilon=per_type, scheme=scheme,
                                 rng=gen, w=w)
            assert rel.values is not None  # a value release carries values
            out_bits[start:stop, col] = rel.values >= 0.5
    return _from_bits(stream, codes, out_bits, bits, regions, gen, f"w-event:{scheme}", eps,
                      {stream.types[c]: per_type for c in codes})


def landmark(stream: EventStream, patterns: Sequence[Pattern], *, epsilon: float,
             scheme: str = "uniform", types: Sequence[str] | None = None, regions: Any = None,
             rng: Any = None) -> PatternRelease:
    """Landmark-scheme baseline, one release per user; see the module docstring (caveat on L)."""
    if scheme not in LANDMARK_SCHEMES:
        raise ParameterError(f"scheme must be one of {LANDMARK_SCHEMES}, got {scheme!r}")
    eps = check_epsilon(epsilon)
    priv = _private(patterns)
    codes = _codes(stream, types)
    protected = np.isin(codes, [stream.type_code(t) for p in priv for t in p.types])
    gen = as_rng(rng)
    bits = _cells(stream, codes)
    out_bits = np.zeros(bits.shape, bool)
    for start, stop in stream.user_tick_ranges():
        if stop == start:
            continue
        block = bits[start:stop].T  # type-major: (K, ticks)
        marks = (block > 0) & protected[:, None]
        rel = release_values(block.ravel(), marks.ravel(), epsilon=eps, scheme=scheme, rng=gen)
        assert rel.values is not None  # a value release carries values
        vals = np.nan_to_num(rel.values, nan=0.0).reshape(block.shape)
        out_bits[start:stop] = (vals >= 0.5).T
    return _from_bits(stream, codes, out_bits, bits, regions, gen, f"landmark:{scheme}", eps,
                      {stream.types[c]: eps for c in codes})
