"""What a private pattern implies: the protected type set, and what else may still predict it.

**Paired types** (issue 24, finding 1). Some events never come alone. Every visit to a region
R has an ``enter:R`` (its first fix), a ``leave:R`` (the first fix after it, unless the data
ends or a gap ends the visit there) and, if long enough, a ``dwell:R``; every crossing of a
threshold θ upwards (``up:θ``) starts a stretch above θ that the next ``down:θ`` ends, and the
other way round. Randomising ``leave:Home`` and ``enter:Clinic`` while publishing
``enter:Home`` and ``leave:Clinic`` as they are gives the trip away: a public ``leave:Clinic``
whose previous public event is ``enter:Home`` proves that the person left home and entered the
clinic in between (the audit recovered 213 of 213 such occurrences on 200 synthetic taxis).

So the *group* of a type is the set of types deterministically paired with it — the kinds of
the same region, the two directions of the same threshold — that exist in the stream's type
universe (a public parameter: regions × kinds, thresholds × directions). The **protected type
set** of the private patterns is the union of the groups of their types (:func:`protection`),
and the mechanisms randomise all of it by default (``paired=True``; ``paired=False`` is the
documented opt-out that randomises the pattern types only, for comparisons: its releases do
NOT protect occurrences, and the ledger says so).

**Footprint.** The *footprint* of an occurrence of P = seq(E_1..E_m) is, for each event e_i,
the events of the visit (or threshold stretch) that e_i begins or ends: at most one event per
type of the group G(E_i). The budgets: position i's budget ε_{P,i} is split equally over its
group, so a whole footprint costs Σ_i Σ_{k∈G(E_i)} ε_{P,i}/|G(E_i)| = Σ_i ε_{P,i} ≤ ε
(docs/pattern-level-dp.md §3–4).

**Predictive types** (:func:`predictive_types`): a heuristic warning, not a guarantee — which
unprotected types' events come with an event of a protected type nearby, measured on a stream
the caller names (the page uses the history day, which is never released).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
import pandas as pd

from ..errors import ParameterError
from .extract import KINDS
from .match import Pattern
from .stream import NS_PER_S, EventStream

__all__ = [
    "DIRECTIONS",
    "Protection",
    "footprint",
    "paired_types",
    "predictive_types",
    "protection",
]

DIRECTIONS = ("up", "down")
"""Directions of threshold-crossing events (``up:<θ>``, ``down:<θ>``)."""


def paired_types(name: str, universe: Sequence[str]) -> tuple[str, ...]:
    """The group of ``name``: the types of ``universe`` deterministically paired with it, itself
    included (first). ``kind:R`` (kind in enter/leave/dwell) pairs with the other kinds of R;
    ``up:θ`` with ``down:θ``; any other type is alone."""
    prefix, sep, rest = name.partition(":")
    if sep and prefix in KINDS:
        family: tuple[str, ...] = KINDS
    elif sep and prefix in DIRECTIONS:
        family = DIRECTIONS
    else:
        return (name,)
    known = set(universe)
    others = tuple(f"{k}:{rest}" for k in family if k != prefix and f"{k}:{rest}" in known)
    return (name, *others)


def footprint(types: Sequence[str], universe: Sequence[str], *, paired: bool = True
              ) -> tuple[str, ...]:
    """The types of the cells an occurrence of ``seq(types)`` changes: each type's group in
    order (with repeats: one cell per position and group member)."""
    if not paired:
        return tuple(types)
    return tuple(k for t in types for k in paired_types(t, universe))


def _why(name: str, partner: str) -> str:
    """Plain words: why ``partner`` is protected with ``name``."""
    prefix, _, rest = name.partition(":")
    if prefix in DIRECTIONS:
        return (f"every crossing of {rest} upwards is followed by one downwards and the other "
                f"way round, so a public {partner} would show when the hidden {name} happened")
    return (f"every visit to {rest} has its enter, its leave and, if long enough, its dwell "
            f"event, so a public {partner} would show when the hidden {name} happened")


@dataclass(frozen=True)
class Protection:
    """The protected type set of some private patterns in a type universe.

    ``groups``: each private-pattern type → its group (itself first). ``added``: each type
    protected only because it is paired with a private-pattern type → those types.
    ``types``: every protected type, in universe order (unknown names last)."""

    groups: Mapping[str, tuple[str, ...]]
    added: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    types: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "groups", MappingProxyType(dict(self.groups)))
        object.__setattr__(self, "added", MappingProxyType(dict(self.added)))

    def reasons(self) -> list[str]:
        """One plain sentence per added type: what it pairs with and why it is protected."""
        out = []
        for t, because in self.added.items():
            out.append(f"{t} is protected too because it pairs with {', '.join(because)}: "
                       + _why(because[0], t) + ".")
        return out


def protection(patterns: Sequence[Pattern], universe: Sequence[str], *, paired: bool = True
               ) -> Protection:
    """The protected type set of the private ``patterns`` in ``universe`` (module docstring);
    ``paired=False``: the pattern types only (the opt-out)."""
    priv = [p for p in patterns if p.private]
    if not priv:
        raise ParameterError("mark at least one pattern private: there is nothing to protect")
    own = list(dict.fromkeys(t for p in priv for t in p.types))
    groups = {t: paired_types(t, universe) if paired else (t,) for t in own}
    added: dict[str, list[str]] = {}
    for t, group in groups.items():
        for k in group[1:]:
            if k not in groups:
                added.setdefault(k, []).append(t)
    every = set(own) | set(added)
    order = [t for t in universe if t in every] + [t for t in own if t not in set(universe)]
    return Protection(groups, {k: tuple(v) for k, v in added.items()}, tuple(order))


# ----------------------------------------------------------------------------- warning


PREDICTIVE_MIN_EVENTS = 5
PREDICTIVE_PRECISION = 0.9
PREDICTIVE_LIFT = 2.0


def _within(stream: EventStream, code: int, window_ns: int) -> np.ndarray:
    """Per tick: does the same user have an event of type ``code`` within ± window_ns?"""
    n = stream.n_ticks
    sel = stream.etype == code
    if not sel.any() or n == 0:
        return np.zeros(n, bool)
    t = stream.tick_time - stream.tick_time.min()
    span = int(t.max()) + 2 * window_ns + 1
    key = stream.tick_uid.astype(np.int64) * span + t  # ticks are sorted by (user, time)
    ek = np.sort(key[stream.tick[sel]])
    i = np.searchsorted(ek, key)
    best = np.full(n, np.iinfo(np.int64).max)
    ok = i < ek.size
    best[ok] = ek[i[ok]] - key[ok]
    ok = i > 0
    best[ok] = np.minimum(best[ok], key[ok] - ek[i[ok] - 1])
    return best <= window_ns


def predictive_types(stream: EventStream, patterns: Sequence[Pattern], *, paired: bool = True,
                     min_events: int = PREDICTIVE_MIN_EVENTS,
                     min_precision: float = PREDICTIVE_PRECISION,
                     min_lift: float = PREDICTIVE_LIFT) -> pd.DataFrame:
    """How well each unprotected type's events predict an event of a protected type nearby.

    Measured on ``stream`` alone (use data that is public or never released, e.g. a history
    period; the measure reads it without protection). For every protected type k (the
    :func:`protection` set) let W be the longest window of the private patterns whose footprint
    holds k, and for every other type u with events in ``stream``:

    * ``events`` — the number n_u of u events;
    * ``precision`` — the share of u events with an event of k of the same person within W
      before or after (|t_u − t_k| ≤ W);
    * ``base_rate`` — the share of all ticks (sampling times) with an event of k of the same
      person within W: the precision of guessing at a random time;
    * ``strong`` — n_u ≥ ``min_events``, precision ≥ ``min_precision`` and
      precision ≥ ``min_lift`` × base_rate.

    Rows (unprotected, protected, window_s, events, hits, precision, base_rate, strong), most
    precise first. A strong row is a warning: those public events may give the protected type
    away, whatever the mechanism does with it."""
    prot = protection(patterns, stream.types, paired=paired)
    window: dict[str, float] = {}
    for p in patterns:
        if p.private:
            for k in footprint(p.types, stream.types, paired=paired):
                window[k] = max(window.get(k, 0.0), float(p.window_s))
    protected = set(prot.types)
    counts = np.bincount(stream.etype, minlength=len(stream.types))
    rows = []
    for k in prot.types:
        if k not in stream.types:
            continue
        w_ns = int(window[k] * NS_PER_S)
        near = _within(stream, stream.type_code(k), w_ns)
        base = float(near.mean()) if near.size else 0.0
        for code, u in enumerate(stream.types):
            if u in protected or counts[code] == 0:
                continue
            hits = int(near[stream.tick[stream.etype == code]].sum())
            n_u = int(counts[code])
            prec = hits / n_u
            rows.append({"unprotected": u, "protected": k, "window_s": window[k],
                         "events": n_u, "hits": hits, "precision": prec, "base_rate": base,
                         "strong": bool(n_u >= min_events and prec >= min_precision
                                        and prec >= min_lift * base)})
    cols = ["unprotected", "protected", "window_s", "events", "hits", "precision", "base_rate",
            "strong"]
    frame = pd.DataFrame(rows, columns=cols)
    return frame.sort_values(["strong", "precision", "events"], ascending=False,
                             kind="stable").reset_index(drop=True)
