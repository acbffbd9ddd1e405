"""Real pattern-level releases and their ledger: previews are free, every real draw counts.

The Patterns page explores settings with *previews*: seeded simulations, never stored as a
release and never downloadable. A **real draw** (:meth:`PatternSession.draw`) releases the
stream with fresh OS randomness (``rng=None``) and is recorded in the ledger of its person set
*before* it is returned, whether or not it is ever downloaded; the same ``key`` (the settings)
returns the same draw, never a new one.

**What a draw costs.** A draw randomises each protected event type k with budget E(k) (the
per-type budgets of its allocation, :func:`~lmdk_core.patterns.type_budgets`: the private
patterns' types and the types paired with them). One occurrence of a pattern P = seq(t_1..t_m)
changes the cells of its *footprint*: for each t_i, one cell of every type of its group G(t_i)
(t_i and the types paired with it, :func:`~lmdk_core.patterns.footprint`). So the draw's loss
for it is ℓ(P) = Σ_i Σ_{k∈G(t_i)} E(k): at most ε for the draw's private patterns under the
whole-occurrence reading (``neighbour="instance"``), up to m·ε under the single-event reading;
a footprint type the draw does not randomise — a pattern type, or a type paired with one — is
published as it is and gives the occurrence away, ℓ(P) = ∞. Draws of the same events compose
sequentially: the loss of one occurrence of P over the draws d is Σ_d ℓ_d(P) (k occurrences of
one person: k times that, as the guarantee says; the ledger counts per occurrence).

**The ledger** of a person set (one person of the sample, or all taxis of the taxi set at once,
since the taxi release is one stream of many subjects) keeps every draw and, for every pattern
declared private in some draw, its loss over all draws. A pattern is *protected* while that loss
is finite. ``spent`` is the largest loss of a protected pattern: with the same private patterns
in every draw it is the sum of the draws' ε (single-event reading: m·ε each).

**The total budget** is set deliberately (:meth:`PatternSession.set_total_budget`), never by the
ε of a release, and there is no real draw before it is set. A draw is refused before any noise
is drawn (:class:`~lmdk_core.session.BudgetExceededError`) when

* no total budget is set, or the loss would pass it;
* it would publish as they are the events of a pattern that earlier draws protected (that
  protection would end: the loss becomes infinite);
* its events were extracted differently from the first draw of the ledger (other data, regions,
  event kinds, dwell time or time resolution): those are other events of the same trace, which
  the type rule above cannot compose with the ones already released.

Pure Python (numpy, pandas); the dashboard keeps one :class:`PatternSession` per browser session.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..errors import ParameterError
from ..noise.source import new_id
from ..session import BudgetExceededError
from ..validation import check_epsilon
from .match import Pattern
from .ppm import PatternRelease, release_with_allocation, type_budgets
from .protect import footprint
from .stream import EventStream

__all__ = [
    "PREVIEW_LABEL",
    "LedgerEntry",
    "PatternDraw",
    "PatternLedger",
    "PatternLoss",
    "PatternPlan",
    "PatternSession",
    "occurrence_loss",
    "public_csv",
]

PREVIEW_LABEL = "preview: a seeded simulation, never released and never downloadable"
_TOL = 1e-9  # float slack of budget comparisons (ε/m summed m times)

Types = tuple[str, ...]


def occurrence_loss(types: Sequence[str], type_epsilon: Mapping[str, float],
                    universe: Sequence[str] | None = None) -> float:
    """The loss of one occurrence of ``seq(types)`` in a release randomising each type k with
    ``type_epsilon[k]``: the sum over the cells of its footprint in the type ``universe``
    (each type's group of paired types, :func:`~lmdk_core.patterns.footprint`; without a
    universe the types themselves), infinite when one of them is published as it is."""
    cells = tuple(types) if universe is None else footprint(types, universe)
    total = 0.0
    for t in cells:
        e = type_epsilon.get(t)
        if e is None:
            return math.inf
        total += float(e)
    return total


@dataclass(frozen=True)
class LedgerEntry:
    """One real draw as the ledger sees it (no data: budgets, patterns, cost)."""

    token: str
    key: Hashable
    mechanism: str
    epsilon: float
    neighbour: str
    type_epsilon: Mapping[str, float]
    private: tuple[tuple[str, Types], ...]
    """(name, types) of each pattern this draw declared private."""
    cost: float
    """The draw's loss per occurrence of the private patterns it declared (the largest)."""
    universe: Types = ()
    """The event types of the released stream (public): they decide each type's paired types."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "type_epsilon", MappingProxyType(dict(self.type_epsilon)))


@dataclass(frozen=True)
class PatternLoss:
    """A pattern declared private in some draw: its loss per occurrence over every draw."""

    name: str
    types: Types
    loss: float
    exposed_by: int | None
    """1-based number of the first draw that published one of its types as it is (None:
    protected by every draw)."""

    @property
    def protected(self) -> bool:
        return self.exposed_by is None


@dataclass(frozen=True)
class PatternLedger:
    """The draws of one person set (immutable: :meth:`add` returns a new ledger)."""

    stream_key: Hashable = None
    entries: tuple[LedgerEntry, ...] = ()

    def add(self, entry: LedgerEntry, stream_key: Hashable) -> PatternLedger:
        if self.entries and stream_key != self.stream_key:
            raise ParameterError("a ledger composes draws of one event stream only")
        return PatternLedger(stream_key, (*self.entries, entry))

    def losses(self) -> list[PatternLoss]:
        """Every pattern declared private so far (by its types; the latest name), in order."""
        names: dict[Types, str] = {}
        for e in self.entries:
            for name, types in e.private:
                names[types] = name
        out = []
        for types, name in names.items():
            total, exposed = 0.0, None
            for i, e in enumerate(self.entries, start=1):
                loss = occurrence_loss(types, e.type_epsilon, e.universe)
                if math.isinf(loss) and exposed is None:
                    exposed = i
                total += loss
            out.append(PatternLoss(name, types, total, exposed))
        return out

    @property
    def spent(self) -> float:
        """The largest loss per occurrence of a protected pattern (0 before the first draw)."""
        return max((p.loss for p in self.losses() if p.protected), default=0.0)


@dataclass(frozen=True)
class PatternPlan:
    """What drawing now would do: the ledger's spent before and after, against the budget;
    ``problem`` says why the draw would be refused (None: it would not)."""

    spent: float
    after: float
    total_budget: float | None
    existing: bool
    problem: str | None = None

    @property
    def fits(self) -> bool:
        return self.existing or self.problem is None

    @property
    def cost(self) -> float:
        return 0.0 if self.existing else max(self.after - self.spent, 0.0)


@dataclass(frozen=True, eq=False)
class PatternDraw:
    """A real pattern-level release: fresh OS randomness, recorded in ``person``'s ledger when
    drawn. ``release`` holds PRIVATE diagnostics (suppressed/injected): publish only
    :meth:`public_csv`."""

    token: str
    person: Hashable
    key: Hashable
    release: PatternRelease
    entry: LedgerEntry
    label: str = "real release (fresh OS randomness, counted in the ledger when drawn)"

    @property
    def is_real(self) -> bool:
        return True

    def public_frame(self) -> Any:
        """The released events only (uid, time, type, lat, lon)."""
        return self.release.public_frame()

    def public_csv(self) -> str:
        return public_csv(self.release)


def public_csv(release: PatternRelease) -> str:
    """The released event stream as CSV: ``uid,time,type,lat,lon`` (times ISO 8601 UTC).

    Only what is released: no suppressed or injected flag, no true event, no budget, no seed."""
    frame = release.public_frame()
    frame["time"] = frame["time"].dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    return frame.to_csv(index=False, float_format="%.6f")


@dataclass
class _Book:
    total_budget: float | None = None
    ledger: PatternLedger = field(default_factory=PatternLedger)


class PatternSession:
    """The real pattern-level draws of one session and a ledger per person set (module
    docstring). ``person``: any hashable naming the person set, e.g. ``("sample", "alice")``
    or ``("taxis",)``; ``key``: the settings of a draw, its data and person included (one key,
    one draw); ``stream_key``: how its events were extracted (data, regions, kinds, dwell,
    resolution)."""

    def __init__(self) -> None:
        self._books: dict[Hashable, _Book] = {}
        self._drawn: dict[Hashable, PatternDraw] = {}

    def _book(self, person: Hashable) -> _Book:
        return self._books.setdefault(person, _Book())

    def total_budget(self, person: Hashable) -> float | None:
        """The loss per protected pattern occurrence ``person`` accepts over every real draw
        (None until set)."""
        return self._book(person).total_budget

    def set_total_budget(self, person: Hashable, total_budget: float) -> None:
        """A deliberate act, never a side effect of a release's ε; lowering it below what is
        spent refuses every further draw."""
        self._book(person).total_budget = check_epsilon(total_budget, "total_budget")

    def ledger(self, person: Hashable) -> PatternLedger:
        return self._book(person).ledger

    def spent(self, person: Hashable) -> float:
        return self._book(person).ledger.spent

    def drawn(self, key: Hashable) -> PatternDraw | None:
        """The real draw made for ``key`` (never redrawn)."""
        return self._drawn.get(key)

    def draws(self, person: Hashable | None = None) -> tuple[PatternDraw, ...]:
        return tuple(d for d in self._drawn.values() if person is None or d.person == person)

    def plan(self, person: Hashable, patterns: Sequence[Pattern],
             allocation: Mapping[str, Sequence[float]], *, key: Hashable,
             stream_key: Hashable, types: Sequence[str], neighbour: str = "instance"
             ) -> PatternPlan:
        """What :meth:`draw` would cost, from the budgets alone (before any noise); ``types``:
        the event types of the stream to release (they decide the paired types)."""
        book = self._book(person)
        spent = book.ledger.spent
        if key in self._drawn:
            return PatternPlan(spent, spent, book.total_budget, True)
        entry = _entry("plan", key, "plan", 1.0, neighbour, patterns, allocation, types)
        before = {p.types: p for p in book.ledger.losses()}
        if book.ledger.entries and stream_key != book.ledger.stream_key:
            return PatternPlan(spent, math.inf, book.total_budget, False, (
                "this data or its events (regions, event kinds, dwell time, time resolution) "
                "differ from those of your earlier real draws, so this release would publish "
                "other events of the same trace, which the ledger cannot add up with the ones "
                "already released. Return to the settings of your first real draw."))
        after = book.ledger.add(entry, stream_key)
        now = after.losses()
        lost = [p for p in now if not p.protected and p.types in before
                and before[p.types].protected]
        total = after.spent
        problem = None
        if lost:
            p = lost[0]
            missing = list(dict.fromkeys(t for t in footprint(p.types, entry.universe)
                                         if t not in entry.type_epsilon))
            problem = (f"this release would publish the events {', '.join(missing)} as they "
                       f"are, ending the protection your earlier real draws gave to "
                       f"“{p.name}”. Keep that pattern private.")
            total = math.inf
        elif book.total_budget is None:
            problem = ("no total budget is set: first set how much loss per protected pattern "
                       "occurrence you accept across every real draw.")
        elif total > book.total_budget + _TOL:
            problem = (f"it would bring the loss per protected pattern occurrence to "
                       f"{total:.3g}, above your total budget {book.total_budget:.3g} (spent so "
                       f"far {spent:.3g}). Lower ε, reuse a release you already drew, or raise "
                       "the total budget deliberately.")
        return PatternPlan(spent, total, book.total_budget, False, problem)

    def draw(self, person: Hashable, stream: EventStream, patterns: Sequence[Pattern],
             allocation: Mapping[str, Sequence[float]], *, key: Hashable,
             stream_key: Hashable, epsilon: float, neighbour: str = "instance",
             regions: Any = None, mechanism: str = "allocation") -> PatternDraw:
        """The real release for ``key``: drawn once with fresh OS randomness and recorded in
        ``person``'s ledger at once; the same ``key`` returns the same draw. Raises
        BudgetExceededError (nothing drawn, nothing recorded) when :meth:`plan` refuses it."""
        if key in self._drawn:
            return self._drawn[key]
        plan = self.plan(person, patterns, allocation, key=key, stream_key=stream_key,
                         types=stream.types, neighbour=neighbour)
        if not plan.fits:
            raise BudgetExceededError(f"Refused: {plan.problem} Nothing was drawn.")
        release = release_with_allocation(stream, patterns, allocation, epsilon=epsilon,
                                          neighbour=neighbour, regions=regions, rng=None,
                                          mechanism=mechanism)
        token = new_id(8)
        entry = _entry(token, key, mechanism, release.epsilon, release.neighbour, patterns,
                       allocation, stream.types)
        book = self._book(person)
        # recorded before anyone sees it: every real draw counts from the moment it exists
        book.ledger = book.ledger.add(entry, stream_key)
        drawn = PatternDraw(token, person, key, release, entry)
        self._drawn[key] = drawn
        return drawn


def _entry(token: str, key: Hashable, mechanism: str, epsilon: float, neighbour: str,
           patterns: Sequence[Pattern], allocation: Mapping[str, Sequence[float]],
           universe: Sequence[str]) -> LedgerEntry:
    universe = tuple(str(t) for t in universe)
    # the budgets the release will use (validates: a private pattern, its budgets)
    type_eps = type_budgets(patterns, allocation, types=universe)
    private = tuple((p.name, p.types) for p in patterns if p.private)
    cost = max(occurrence_loss(t, type_eps, universe) for _, t in private)
    return LedgerEntry(token, key, mechanism, float(epsilon), neighbour, type_eps, private,
                       cost, universe)
