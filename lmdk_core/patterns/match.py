"""Sequence patterns seq(E_1, ..., E_m) within a window, and the matcher (the CEP part).

**Semantics.** A *match* of ``seq(E_1..E_m)`` with window W in one user's stream is a choice of
events e_1, ..., e_m of types E_1, ..., E_m at strictly increasing times (events at the same tick
are concurrent, hence never ordered) with t(e_m) − t(e_1) ≤ W. Other events in between are
skipped. Matches never span users.

**Selection policy** ("skip-till-next-match, non-overlapping, earliest completion"): scan each
user's stream in time order and report the match that *completes first*; among the matches
completing at that event, report the one that *starts latest* (the tightest); then continue with
events strictly after the completing event, so reported matches do not overlap. A match is
reported as ``(start tick, end tick)``; tick indices identify user and time.

**Algorithm** (vectorised, O(m · n log n)): for every event j of type E_m, the latest start of an
embedding ending at j is found by walking back greedily — the last E_{m−1} strictly before j,
then the last E_{m−2} strictly before that, ... (greedy-latest is optimal for subsequence
embedding), one ``searchsorted`` per step over all j at once. Candidate j is valid if the walk
stays in j's user and spans ≤ W. Latest starts are non-decreasing in j, so the non-overlapping
selection is one pass over the candidates (a numba loop: it is sequential by nature).
:func:`match_bruteforce` enumerates all embeddings instead and is the reference in the tests.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numba
import numpy as np

from ..errors import ParameterError
from ..validation import check_nonnegative
from .stream import NS_PER_S, EventStream

__all__ = ["Pattern", "match", "match_all", "match_bruteforce"]


@dataclass(frozen=True)
class Pattern:
    """``seq(types...)`` within ``window_s`` seconds; ``private`` marks a pattern to hide."""

    types: tuple[str, ...]
    window_s: float
    private: bool = False
    name: str = ""

    def __post_init__(self) -> None:
        types = tuple(str(t) for t in self.types)
        if not types:
            raise ParameterError("a pattern needs at least one event type")
        object.__setattr__(self, "types", types)
        object.__setattr__(self, "window_s", check_nonnegative(self.window_s, "window_s"))
        object.__setattr__(self, "private", bool(self.private))
        if not self.name:
            object.__setattr__(self, "name", "seq(" + ", ".join(types) + ")")

    @property
    def m(self) -> int:
        """Pattern length (number of events)."""
        return len(self.types)

    def codes(self, stream: EventStream) -> np.ndarray:
        """The pattern's event types as codes of ``stream`` (ParameterError if unknown)."""
        return np.array([stream.type_code(t) for t in self.types], dtype=np.int32)


@numba.njit(cache=True)
def _select_non_overlapping(start: np.ndarray, end: np.ndarray) -> np.ndarray:  # pragma: no cover
    keep = np.zeros(start.size, np.bool_)
    last_end = -1
    for i in range(start.size):
        if start[i] > last_end:
            keep[i] = True
            last_end = end[i]
    return keep


def _type_ticks(stream: EventStream, codes: np.ndarray) -> dict[int, np.ndarray]:
    """Ticks of the events of each code (sorted: events are sorted by tick)."""
    wanted = np.unique(codes)
    lut = np.full(len(stream.types), -1, dtype=np.int64)
    lut[wanted] = np.arange(wanted.size)
    slot = lut[stream.etype]
    sel = slot >= 0
    ticks, slot = stream.tick[sel], slot[sel]
    if wanted.size == 1:
        return {int(wanted[0]): ticks}
    order = np.argsort(slot.astype(np.int16 if wanted.size < 2**15 else np.int64), kind="stable")
    bounds = np.searchsorted(slot[order], np.arange(wanted.size + 1))
    ticks = ticks[order]
    return {int(c): ticks[bounds[i]:bounds[i + 1]] for i, c in enumerate(wanted)}


def match(stream: EventStream, pattern: Pattern, *,
          _by_type: dict[int, np.ndarray] | None = None) -> np.ndarray:
    """Matches of ``pattern`` as an int64 array of shape (k, 2): ``(start tick, end tick)``."""
    codes = pattern.codes(stream)
    by_type = _type_ticks(stream, codes) if _by_type is None else _by_type
    end = by_type[int(codes[-1])]
    cur = end.copy()
    valid = np.ones(end.size, bool)
    for c in codes[-2::-1]:
        arr = by_type[int(c)]
        idx = np.searchsorted(arr, cur, side="left") - 1
        valid &= idx >= 0
        cur = arr[np.maximum(idx, 0)] if arr.size else np.zeros_like(cur)
    uid, time = stream.tick_uid, stream.tick_time
    if end.size:
        valid &= uid[cur] == uid[end]
        valid &= (time[end] - time[cur]) <= int(pattern.window_s * NS_PER_S)
    start, end = cur[valid], end[valid]
    keep = _select_non_overlapping(start, end)
    return np.stack([start[keep], end[keep]], axis=1).astype(np.int64)


def match_all(stream: EventStream, patterns: Sequence[Pattern]) -> list[np.ndarray]:
    """:func:`match` for each pattern (the events are grouped by type once for all of them)."""
    if not patterns:
        return []
    codes = np.concatenate([p.codes(stream) for p in patterns])
    by_type = _type_ticks(stream, codes)
    return [match(stream, p, _by_type=by_type) for p in patterns]


def match_bruteforce(stream: EventStream, pattern: Pattern) -> np.ndarray:
    """Reference matcher: enumerate every embedding, then apply the selection policy literally.

    Exponential in the pattern length; for tests on small streams only.
    """
    codes = pattern.codes(stream)
    w_ns = int(pattern.window_s * NS_PER_S)
    out: list[tuple[int, int]] = []
    uid_of = stream.uid
    for u in np.unique(uid_of):
        ev = [(int(t), int(c)) for t, c, uu in zip(stream.tick, stream.etype, uid_of, strict=True)
              if uu == u]
        embeddings = []
        for combo in itertools.combinations(range(len(ev)), pattern.m):
            ts = [ev[i][0] for i in combo]
            if any(ev[i][1] != c for i, c in zip(combo, codes, strict=True)):
                continue
            if any(b <= a for a, b in itertools.pairwise(ts)):
                continue
            if stream.tick_time[ts[-1]] - stream.tick_time[ts[0]] > w_ns:
                continue
            embeddings.append((ts[0], ts[-1]))
        last_end = -1
        while True:
            ok = [e for e in embeddings if e[0] > last_end]
            if not ok:
                break
            first_end = min(e[1] for e in ok)
            best_start = max(e[0] for e in ok if e[1] == first_end)
            out.append((best_start, first_end))
            last_end = first_end
    return np.array(sorted(out), dtype=np.int64).reshape(-1, 2)


