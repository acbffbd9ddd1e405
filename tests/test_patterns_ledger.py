"""The ledger of real pattern-level releases (lmdk_core.patterns.ledger): every real draw is
counted when drawn, at its loss per protected pattern occurrence; draws add up; the total budget
is its own setting; a draw that would pass it, end a pattern's protection or release other
events is refused before any noise is drawn; the public file holds the released events only."""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmdk_core.errors import LmdkError, ParameterError
from lmdk_core.patterns import EventStream, Pattern, type_budgets, uniform_allocation
from lmdk_core.patterns.ledger import PatternSession, occurrence_loss, public_csv
from lmdk_core.session import BudgetExceededError

TYPES = ("a", "b", "c", "d")
PERSON = ("sample", "alice")
STREAM_KEY = ("sample", "alice", "places")


def _stream(seed: int = 0, n_ticks: int = 60, users: int = 2) -> EventStream:
    rng = np.random.default_rng(seed)
    uid = np.repeat(np.arange(users), n_ticks)
    time = np.tile(np.arange(n_ticks) * 300 * 10**9, users)
    ev_tick = rng.integers(0, uid.size, 40)
    ev_type = rng.integers(0, len(TYPES), 40)
    return EventStream.from_arrays(tick_uid=uid, tick_time=time, event_tick=ev_tick,
                                   event_type=ev_type, types=TYPES)


PATS = [Pattern(("a", "b"), 3600, private=True, name="a→b"), Pattern(("c", "d"), 3600)]


def _session(budget: float | None = 100.0) -> PatternSession:
    s = PatternSession()
    if budget is not None:
        s.set_total_budget(PERSON, budget)
    return s


def _draw(s, eps, pats=PATS, *, key=None, neighbour="instance", stream_key=STREAM_KEY):
    alloc = uniform_allocation(pats, epsilon=eps, neighbour=neighbour)
    return s.draw(PERSON, _stream(), pats, alloc,
                  key=key or (stream_key, eps, neighbour, tuple(pats)),
                  stream_key=stream_key, epsilon=eps, neighbour=neighbour)


def test_occurrence_loss_sums_type_budgets_and_is_infinite_for_a_type_left_as_it_is():
    assert occurrence_loss(("a", "b"), {"a": 0.5, "b": 0.25}) == 0.75
    assert occurrence_loss(("a", "a"), {"a": 0.5}) == 1.0  # two events of one type: two bits
    assert math.isinf(occurrence_loss(("a", "c"), {"a": 0.5}))


def test_a_draw_counts_epsilon_at_once_and_the_same_key_is_never_redrawn():
    s = _session()
    d = _draw(s, 2.0)
    assert d.is_real and s.spent(PERSON) == pytest.approx(2.0)
    assert len(s.ledger(PERSON).entries) == 1
    again = _draw(s, 2.0)
    assert again is d and s.spent(PERSON) == pytest.approx(2.0)
    assert s.drawn((STREAM_KEY, 2.0, "instance", tuple(PATS))) is d


def test_single_event_reading_costs_m_epsilon_per_occurrence():
    s = _session()
    _draw(s, 1.0, neighbour="event")
    assert s.spent(PERSON) == pytest.approx(2.0)  # ε per event, two events per occurrence


@settings(max_examples=60)
@given(eps=st.lists(st.floats(0.05, 5.0), min_size=1, max_size=6),
       neighbours=st.lists(st.sampled_from(["instance", "event"]), min_size=6, max_size=6))
def test_recorded_total_is_the_sum_of_the_draws_loss_per_protected_occurrence(eps, neighbours):
    """The guarantee: with the same private patterns in every draw, the ledger's total is
    exactly Σ_d (ε_d per occurrence: ε_d, or m·ε_d under the single-event reading)."""
    s = _session(budget=1e6)
    expected = 0.0
    for i, (e, nb) in enumerate(zip(eps, neighbours, strict=False)):
        _draw(s, e, key=i, neighbour=nb)
        expected += e if nb == "instance" else 2 * e
    assert s.spent(PERSON) == pytest.approx(expected, rel=1e-12)
    assert sum(x.cost for x in s.ledger(PERSON).entries) == pytest.approx(expected, rel=1e-12)


@settings(max_examples=60)
@given(draws=st.lists(st.tuples(st.floats(0.05, 3.0),
                                st.lists(st.booleans(), min_size=3, max_size=3)),
                      min_size=1, max_size=5))
def test_spent_is_the_largest_loss_of_a_pattern_every_draw_protected(draws):
    """With private patterns that change between draws, the ledger's total is the largest
    Σ_d ℓ_d(P) over the patterns every draw randomised, computed here independently; a draw
    that would publish a protected pattern's events as they are is refused."""
    candidates = [Pattern(("a", "b"), 3600, name="ab"), Pattern(("b", "c"), 3600, name="bc"),
                  Pattern(("d",), 3600, name="d")]
    s = _session(budget=1e6)
    kept: list[dict] = []  # type budgets of each recorded draw, "_": its private patterns
    for i, (e, flags) in enumerate(draws):
        pats = [Pattern(p.types, p.window_s, private=f, name=p.name)
                for p, f in zip(candidates, flags, strict=True)]
        if not any(flags):
            continue
        alloc = uniform_allocation(pats, epsilon=e)
        type_eps = type_budgets(pats, alloc, types=TYPES)
        try:
            s.draw(PERSON, _stream(), pats, alloc, key=i, stream_key=STREAM_KEY, epsilon=e)
        except BudgetExceededError as err:
            assert "ending the protection" in str(err)
            continue
        kept.append({**type_eps, "_": tuple(p.name for p in pats if p.private)})
    names = {n for k in kept for n in k["_"]}
    losses = []
    for p in candidates:
        if p.name not in names:
            continue
        per = [occurrence_loss(p.types, {t: v for t, v in k.items() if t != "_"}) for k in kept]
        if all(np.isfinite(per)):
            losses.append(sum(per))
    assert s.spent(PERSON) == pytest.approx(max(losses, default=0.0), rel=1e-12)


def test_budget_is_set_deliberately_and_refusals_record_nothing():
    s = _session(budget=None)
    with pytest.raises(BudgetExceededError, match="no total budget is set"):
        _draw(s, 1.0)
    assert s.ledger(PERSON).entries == ()
    s.set_total_budget(PERSON, 3.0)
    _draw(s, 2.0)
    plan = s.plan(PERSON, PATS, uniform_allocation(PATS, epsilon=1.5), key="next",
                  stream_key=STREAM_KEY, types=TYPES)
    assert not plan.fits and plan.after == pytest.approx(3.5)
    with pytest.raises(BudgetExceededError, match="above your total budget 3"):
        _draw(s, 1.5)
    assert len(s.ledger(PERSON).entries) == 1 and s.spent(PERSON) == pytest.approx(2.0)
    _draw(s, 1.0)  # exactly at the budget: allowed
    assert s.spent(PERSON) == pytest.approx(3.0)
    with pytest.raises(ParameterError):
        s.set_total_budget(PERSON, -1)
    assert s.total_budget(PERSON) == 3.0


def test_a_draw_may_not_end_a_protection_nor_release_other_events():
    s = _session()
    _draw(s, 1.0)
    other = [Pattern(("c", "d"), 3600, private=True, name="c→d"), Pattern(("a", "b"), 3600)]
    with pytest.raises(BudgetExceededError, match="publish the events a, b as they are"):
        _draw(s, 1.0, other)
    with pytest.raises(BudgetExceededError, match="differ from those of your earlier"):
        _draw(s, 1.0, stream_key=("sample", "alice", "grid"))
    both = [Pattern(("a", "b"), 3600, private=True, name="a→b"),
            Pattern(("c", "d"), 3600, private=True, name="c→d")]
    _draw(s, 1.0, both)  # keeps a→b protected; c→d was published by the first draw
    losses = {p.name: p for p in s.ledger(PERSON).losses()}
    assert losses["a→b"].protected and losses["a→b"].loss == pytest.approx(2.0)
    assert not losses["c→d"].protected and losses["c→d"].exposed_by == 1
    assert s.spent(PERSON) == pytest.approx(2.0)
    assert len(s.ledger(PERSON).entries) == 2


def test_people_have_separate_ledgers():
    s = _session()
    _draw(s, 1.0)
    assert s.spent(("taxis",)) == 0.0 and s.total_budget(("taxis",)) is None


def test_public_csv_holds_the_released_events_only():
    s = _session()
    d = _draw(s, 2.0)
    text = d.public_csv()
    assert text == public_csv(d.release)
    frame = pd.read_csv(io.StringIO(text))
    assert list(frame.columns) == ["uid", "time", "type", "lat", "lon"]
    assert len(frame) == len(d.release.stream)
    for word in ("seed", "suppressed", "injected", "epsilon"):
        assert word not in text
    released = d.release.stream.to_frame()
    assert (frame["type"].to_numpy() == released["type"].to_numpy()).all()


def test_invalid_allocation_records_nothing():
    s = _session()
    with pytest.raises(LmdkError):
        s.draw(PERSON, _stream(), PATS, {"a→b": (1.0,)}, key="bad", stream_key=STREAM_KEY,
               epsilon=1.0)
    assert s.ledger(PERSON).entries == () and s.drawn("bad") is None
