"""The inference attack of issue 24 (finding 1), reimplemented, and its likelihood-ratio audit.

**The attack** (:func:`implied_trips`). A private pattern P = seq(leave:A, enter:B) hides the
trip A → B. An attacker who ignores the events of P's own types (they are randomised) reads the
other events of each person in time order; when a ``leave:B`` comes right after an
``enter:A`` (no other event it reads in between), the person was at A, then at B, so they left
A and entered B in between: it infers an occurrence of P inside that interval.
:func:`exact_inferences` counts the inferences that hold a true occurrence of P.

Before issue 24 the mechanisms randomised leave:A and enter:B only, so enter:A and leave:B
were published as they are and the attack read the truth: on the README example it recovers
alice's occurrence, on 200 synthetic taxis (``leave:H0 → enter:H1`` within 1 h, enter and leave
events, 5-minute ticks) 213 of its 213 inferences are exact. With the paired types protected
(:mod:`lmdk_core.patterns.protect`) the events it reads are randomised too.

**The audit** (:func:`neighbour_audit`). For one true occurrence o, S' is the stream without
o's *footprint* (its events and the other events of the visits they begin or end: the world
where the trip and those visits did not happen). Both are released ``runs`` times (one release
of ``runs`` copies of the person's stream: the copies are independent runs); the attacker fires
on a run when an inferred interval covers o's ticks. Pattern-level ε-DP says
P[fire | S] ≤ e^ε · P[fire | S'] for ANY attacker; the audit measures the ratio for this one and
for the strongest one (fire when every footprint cell of o is released as an event, the
likelihood-ratio test, whose ratio is exactly e^ε).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ParameterError
from ..noise.source import simulation_rng
from .match import Pattern, match
from .ppm import uniform_allocation
from .protect import DIRECTIONS, paired_types
from .stream import EventStream

__all__ = ["AuditResult", "exact_inferences", "footprint_cells", "implied_trips",
           "neighbour_audit", "without_cells"]


def _trip_types(pattern: Pattern) -> tuple[str, str, str, str]:
    """(leave:A, enter:B, enter:A, leave:B) of a pattern seq(leave:A, enter:B)."""
    if pattern.m != 2:
        raise ParameterError("the attack reads patterns seq(leave:A, enter:B)")
    (k1, _, a), (k2, _, b) = (t.partition(":") for t in pattern.types)
    if (k1, k2) != ("leave", "enter"):
        raise ParameterError("the attack reads patterns seq(leave:A, enter:B)")
    return pattern.types[0], pattern.types[1], f"enter:{a}", f"leave:{b}"


def implied_trips(stream: EventStream, pattern: Pattern,
                  ignored: Sequence[str] | None = None) -> np.ndarray:
    """The attack: tick intervals (first, last), shape (k, 2), in which it infers an
    occurrence of ``pattern`` = seq(leave:A, enter:B) — every ``leave:B`` whose previous event
    read (same person, earlier tick) is an ``enter:A``. It reads every event of ``stream``
    except those of the ``ignored`` types (default: the pattern's own two types)."""
    _, _, enter_a, leave_b = _trip_types(pattern)
    skip = set(pattern.types if ignored is None else ignored)
    if enter_a not in stream.types or leave_b not in stream.types:
        return np.zeros((0, 2), np.int64)
    keep = ~np.isin(stream.etype, [stream.type_code(t) for t in skip if t in stream.types])
    tick, ty = stream.tick[keep], stream.etype[keep]
    uid = stream.tick_uid[tick]
    ea, lb = stream.type_code(enter_a), stream.type_code(leave_b)
    # events are sorted by (tick, type); the previous one read must be strictly earlier
    prev = np.flatnonzero((ty[1:] == lb) & (ty[:-1] == ea) & (uid[1:] == uid[:-1])
                          & (tick[1:] > tick[:-1]))
    return np.stack([tick[prev], tick[prev + 1]], axis=1).astype(np.int64)


def exact_inferences(truth: EventStream, pattern: Pattern, inferred: np.ndarray) -> int:
    """How many inferred intervals hold a true occurrence of ``pattern`` (a match of it in the
    true stream starting and ending inside the interval)."""
    occ = match(truth, pattern)
    if not len(occ) or not len(inferred):
        return 0
    # matches do not overlap and are sorted: the first match starting at or after the
    # interval's start is the only candidate
    i = np.searchsorted(occ[:, 0], inferred[:, 0], side="left")
    ok = i < len(occ)
    hit = np.zeros(len(inferred), bool)
    hit[ok] = occ[i[ok], 1] <= inferred[ok, 1]
    return int(hit.sum())


def _visit_cells(stream: EventStream, tick: int, name: str) -> set[tuple[int, str]]:
    """The cells (tick, type) of the visit or threshold stretch that event (tick, name) begins
    or ends: at most one per type of its group (region kinds, threshold directions)."""
    group = paired_types(name, stream.types)
    cells = {(tick, name)}
    if len(group) == 1:
        return cells
    uid = stream.tick_uid[tick]
    lo, hi = stream.user_tick_ranges()[uid]
    mine = (stream.tick >= lo) & (stream.tick < hi)
    ticks = {t: stream.tick[mine & (stream.etype == stream.type_code(t))] for t in group}
    kind, _, rest = name.partition(":")
    if kind in DIRECTIONS:  # the stretch it begins ends at the next opposite crossing
        other = group[1]
        nxt = ticks[other][ticks[other] > tick]
        if nxt.size:
            cells.add((int(nxt[0]), other))
        return cells
    enter, leave, dwell = (f"{k}:{rest}" for k in ("enter", "leave", "dwell"))
    if kind == "enter":
        start = tick
    else:
        before = ticks.get(enter, np.zeros(0, np.int64))
        before = before[before < tick] if kind == "leave" else before[before <= tick]
        start = int(before[-1]) if before.size else lo
    if kind == "leave":
        end = tick
    else:
        after = ticks.get(leave, np.zeros(0, np.int64))
        after = after[after > start]
        end = int(after[0]) if after.size else hi - 1
    for t, at in ticks.items():
        if t == enter and kind != "enter" and start != lo:
            cells.add((start, t))
        elif t == leave and kind != "leave" and end != hi - 1:
            cells.add((end, t))
        elif t == dwell:
            cells.update((int(x), t) for x in at[(at >= start) & (at <= end)])
    return cells


def footprint_cells(stream: EventStream, pattern: Pattern, occurrence: Sequence[int]
                    ) -> list[tuple[int, str]]:
    """The cells of an occurrence's footprint: for each of its events, the cells of the visit
    (threshold stretch) it begins or ends. ``occurrence``: the event ticks of one embedding
    (for a two-event pattern, a row of :func:`~lmdk_core.patterns.match`)."""
    if len(occurrence) != pattern.m:
        raise ParameterError(f"an occurrence of {pattern.name!r} has {pattern.m} ticks")
    cells: set[tuple[int, str]] = set()
    for t, name in zip(occurrence, pattern.types, strict=True):
        cells |= _visit_cells(stream, int(t), name)
    return sorted(cells)


def without_cells(stream: EventStream, cells: Sequence[tuple[int, str]]) -> EventStream:
    """The stream with the events of ``cells`` removed (same ticks)."""
    key = stream.tick * len(stream.types) + stream.etype
    drop = np.isin(key, [t * len(stream.types) + stream.type_code(k) for t, k in cells])
    keep = ~drop
    return stream.with_events(stream.tick[keep], stream.etype[keep], stream.lat[keep],
                              stream.lon[keep])


def _person(stream: EventStream, tick: int, first: int, last: int) -> tuple[EventStream, int]:
    """The ticks first..last (one person's, around ``tick``) as a stream of their own, and the
    offset of its first tick."""
    uid = int(stream.tick_uid[tick])
    lo, hi = stream.user_tick_ranges()[uid]
    lo, hi = max(int(lo), first), min(int(hi), last + 1)
    sel = (stream.tick >= lo) & (stream.tick < hi)
    one = EventStream(np.zeros(hi - lo, np.int32), stream.tick_time[lo:hi],
                      stream.tick[sel] - lo, stream.etype[sel], stream.lat[sel], stream.lon[sel],
                      stream.types, (stream.users[uid],))
    return one, int(lo)


def _copies(one: EventStream, n: int) -> EventStream:
    """``n`` copies of a one-person stream as ``n`` people (independent runs of one release)."""
    k = one.n_ticks
    return EventStream(np.repeat(np.arange(n, dtype=np.int32), k), np.tile(one.tick_time, n),
                       (one.tick[None, :] + k * np.arange(n)[:, None]).ravel(),
                       np.tile(one.etype, n), np.tile(one.lat, n), np.tile(one.lon, n),
                       one.types, tuple(f"run{i}" for i in range(n)))


@dataclass(frozen=True)
class AuditResult:
    """Fire counts of the two attackers on S (the occurrence happened) and S' (its footprint
    removed), ``runs`` releases each."""

    runs: int
    epsilon: float
    footprint: tuple[tuple[int, str], ...]
    attack_s: int
    attack_s_prime: int
    best_s: int
    best_s_prime: int

    @staticmethod
    def _ratio(a: int, b: int) -> float:
        return np.inf if b == 0 else a / b if a else 0.0

    @property
    def attack_ratio(self) -> float:
        """P[the attack fires | S] / P[fires | S'] (measured)."""
        return self._ratio(self.attack_s, self.attack_s_prime)

    @property
    def best_ratio(self) -> float:
        """The same for the likelihood-ratio test (every footprint cell released)."""
        return self._ratio(self.best_s, self.best_s_prime)


def neighbour_audit(stream: EventStream, patterns: Sequence[Pattern], occurrence: Sequence[int],
                    *, epsilon: float, runs: int = 100_000, paired: bool = True,
                    margin_ticks: int = 12, rng: Any = 0) -> AuditResult:
    """Release S and S' (module docstring) ``runs`` times each with the Uniform PPM (whole
    occurrence reading) and count how often the attack of :func:`implied_trips` — on the first
    private pattern, reading every released type but its two — and the likelihood-ratio test
    fire for ``occurrence``. The attackers read the person's ticks from ``margin_ticks`` before
    the footprint to ``margin_ticks`` after it (the cells are released independently, so this
    is the release of those cells; a narrower view is one more attacker, and the bound holds
    for all). ``paired=False``: the pre-issue-24 mechanism. ``rng``: a seed (an audit is a
    simulation)."""
    from .ppm import release_with_allocation

    pattern = next(p for p in patterns if p.private)
    span = footprint_cells(stream, pattern, occurrence)
    one, lo = _person(stream, int(occurrence[0]), span[0][0] - margin_ticks,
                      span[-1][0] + margin_ticks)
    local = [int(t) - lo for t in occurrence]
    cells = [(t - lo, k) for t, k in span]
    alloc = uniform_allocation(patterns, epsilon=epsilon)
    gen = simulation_rng(rng)
    k = one.n_ticks
    counts = []
    for world in (one, without_cells(one, cells)):
        rel = release_with_allocation(_copies(world, runs), patterns, alloc, epsilon=epsilon,
                                      regions=None, rng=gen, paired=paired).stream
        trips = implied_trips(rel, pattern)
        run = trips[:, 0] // k
        covers = (trips[:, 0] - run * k <= local[0]) & (trips[:, 1] - run * k >= local[-1])
        fired = np.zeros(runs, bool)
        fired[run[covers]] = True
        present = np.ones(runs, bool)
        released = rel.tick * len(rel.types) + rel.etype
        for t, name in cells:
            want = (t + np.arange(runs) * k) * len(rel.types) + rel.type_code(name)
            present &= np.isin(want, released)
        counts.append((int(fired.sum()), int(present.sum())))
    (a_s, b_s), (a_n, b_n) = counts
    return AuditResult(runs, float(epsilon), tuple(cells), a_s, a_n, b_s, b_n)


# ----------------------------------------------------------------------------- figures

README_PLACES = (("Home", 39.9924, 116.3395, 150.0), ("Clinic", 39.9820, 116.3564, 150.0),
                 ("Work", 39.9836, 116.3075, 150.0))
"""The places of the README's Patterns example (alice of the bundled sample)."""


def readme_example() -> tuple[EventStream, list[Pattern]]:
    """The README's Patterns example: alice's enter/leave events on 5-minute ticks and its
    patterns (private leave:Home → enter:Clinic, public leave:Home → enter:Work, 2 h)."""
    from ..sample import load_sample
    from ..trajectory import select_user
    from .extract import region_events

    traj = select_user(load_sample(), "alice")
    places = [dict(zip(("name", "lat", "lon", "radius_m"), p, strict=True))
              for p in README_PLACES]
    import pandas as pd

    events = region_events(traj, pd.DataFrame(places), kinds=("enter", "leave")).coarsen(300)
    return events, [Pattern(("leave:Home", "enter:Clinic"), 7200, private=True),
                    Pattern(("leave:Home", "enter:Work"), 7200)]


def taxi_example(taxis: int = 200) -> tuple[EventStream, list[Pattern]]:
    """The audit's taxi setting: ``taxis`` synthetic taxis over 2 days, enter/leave events at
    the 20 hotspots, 5-minute ticks, private leave:H0 → enter:H1 within 1 h."""
    from .extract import region_events
    from .taxi import hotspot_regions, taxi_trajectories

    events = region_events(taxi_trajectories(taxis, days=2), hotspot_regions(),
                           kinds=("enter", "leave")).coarsen(300)
    return events, [Pattern(("leave:H0", "enter:H1"), 3600, private=True, name="H0 → H1")]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m lmdk_core.patterns.audit [--runs N] [--taxis N] [--taxi-runs N]``: the attack
    before and after issue 24 on the README example and the taxis, and the audit's ratios."""
    import argparse

    from .protect import protection

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--epsilon", type=float, default=2.0)
    ap.add_argument("--runs", type=int, default=100_000, help="runs per side, README example")
    ap.add_argument("--taxis", type=int, default=200)
    ap.add_argument("--taxi-runs", type=int, default=1_000, help="runs per side and occurrence")
    args = ap.parse_args(argv)
    eps = args.epsilon
    print(f"e^ε = {np.exp(eps):.4g} (ε = {eps:g}, whole-occurrence reading, Uniform PPM)")
    for label, (events, pats) in (("README example (alice)", readme_example()),
                                  (f"{args.taxis} synthetic taxis", taxi_example(args.taxis))):
        p = next(q for q in pats if q.private)
        prot = protection(pats, events.types)
        before = implied_trips(events, p)
        after = implied_trips(events, p, ignored=prot.types)
        print(f"\n{label}: private {' → '.join(p.types)}, {len(match(events, p))} occurrences")
        print(f"  from unprotected events alone, before (pattern types protected): "
              f"{len(before)} inferences, {exact_inferences(events, p, before)} exact")
        print(f"  after (protected: {', '.join(prot.types)}): {len(after)} inferences, "
              f"{exact_inferences(events, p, after)} exact")
        runs = args.runs if label.startswith("README") else args.taxi_runs
        occ = match(events, p)
        targets = [o for o in occ if ((before[:, 0] <= o[0]) & (before[:, 1] >= o[1])).any()]
        for paired in (False, True):
            tot = np.zeros(4, np.int64)
            for o in targets:
                r = neighbour_audit(events, pats, o, epsilon=eps, runs=runs, paired=paired,
                                    rng=[int(o[0]), int(paired)])
                tot += [r.attack_s, r.attack_s_prime, r.best_s, r.best_s_prime]
            ra = AuditResult._ratio(int(tot[0]), int(tot[1]))
            rb = AuditResult._ratio(int(tot[2]), int(tot[3]))
            print(f"  neighbour audit, {'paired types protected' if paired else 'before'}, "
                  f"{len(targets)} occurrence(s) × {runs:,} runs per side: attack fires "
                  f"{tot[0]:,} vs {tot[1]:,} (ratio {ra:.3g}); likelihood-ratio test "
                  f"{tot[2]:,} vs {tot[3]:,} (ratio {rb:.3g})")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
