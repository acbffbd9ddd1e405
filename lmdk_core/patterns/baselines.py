"""Stream baselines on the same event streams, through lmdk_core's public release API.

Each baseline sees the indicator *cells* (tick, type) of the chosen types as a 0/1 series, calls
:func:`lmdk_core.release_values` (Laplace noise, sensitivity 1) and releases an event wherever
the released value is ≥ 1/2. Events of other types pass unchanged (give ``types`` = every type
for a stream-wide baseline; types that occur in no evaluated pattern change no match).

* ``wevent(..., scheme="bd" | "ba")`` — Kellaris et al.'s w-event budget distribution /
  absorption on ONE series: all users' cells, tick-major (t₁k₁, t₁k₂, …, t₂k₁, …), user after
  user, no landmarks, w = K·w_ticks with K the number of types and w_ticks the most ticks any
  user has within the largest private window. Every private-pattern instance lies within w
  consecutive cells, so w-event ε-DP implies pattern-level ε-DP (instance reading).
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

from .. import release_values
from ..errors import ParameterError
from ..mechanisms import as_rng
from ..validation import check_epsilon
from .match import Pattern
from .ppm import PatternRelease, _private, _region_of_types
from .stream import NS_PER_S, EventStream

__all__ = ["LANDMARK_SCHEMES", "WEVENT_SCHEMES", "landmark", "max_ticks_in_window", "wevent"]

WEVENT_SCHEMES = ("bd", "ba")
LANDMARK_SCHEMES = ("uniform", "skip", "adaptive")


def max_ticks_in_window(stream: EventStream, window_s: float) -> int:
    """Most ticks of one user within any span of ``window_s`` seconds (inclusive), ≥ 1."""
    if stream.n_ticks == 0:
        return 1
    secs = stream.tick_time // NS_PER_S
    key = stream.tick_uid.astype(np.int64) * (int(secs.max() - secs.min()) + int(window_s) + 2) \
        + (secs - secs.min())
    end = np.searchsorted(key, key + int(np.ceil(window_s)), side="right")
    return int((end - np.arange(key.size)).max())


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
        lat[fresh], lon[fresh] = regions.sample(reg[ok], gen)
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


def wevent(stream: EventStream, patterns: Sequence[Pattern], *, epsilon: float, scheme: str = "bd",
           types: Sequence[str] | None = None, regions: Any = None, rng: Any = None
           ) -> PatternRelease:
    """w-event baseline (BD or BA) over all users' cells of ``types``; see the module docstring."""
    if scheme not in WEVENT_SCHEMES:
        raise ParameterError(f"scheme must be one of {WEVENT_SCHEMES}, got {scheme!r}")
    eps = check_epsilon(epsilon)
    priv = _private(patterns)
    codes = _codes(stream, types)
    gen = as_rng(rng)
    bits = _cells(stream, codes)
    w = codes.size * max_ticks_in_window(stream, max(p.window_s for p in priv))
    series = bits.ravel()  # tick-major: users are contiguous in the tick order
    rel = release_values(series, np.zeros(series.size, bool), epsilon=eps, scheme=scheme,
                         rng=gen, w=w) if series.size else None
    released = np.zeros(0) if rel is None else rel.values
    assert released is not None  # a value release carries values
    out_bits = released.reshape(bits.shape) >= 0.5
    return _from_bits(stream, codes, out_bits, bits, regions, gen, f"w-event:{scheme}", eps,
                      {stream.types[c]: eps for c in codes})


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
