"""The vectorised matcher agrees with the brute-force reference (hypothesis) and on examples."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmdk_core.errors import ParameterError
from lmdk_core.patterns import EventStream, Pattern, match, match_all, match_bruteforce

TYPES = ("A", "B", "C")


def _stream(n_users: int, ticks: list[list[int]], events: list[tuple[int, int]]) -> EventStream:
    uid = np.concatenate([np.full(len(t), u) for u, t in enumerate(ticks)]).astype(np.int64)
    time = np.concatenate([np.asarray(t, dtype=np.int64) for t in ticks]) * 1_000_000_000
    et = np.array([e[0] for e in events], dtype=np.int64)
    ty = np.array([e[1] for e in events], dtype=np.int64)
    return EventStream.from_arrays(tick_uid=uid, tick_time=time, event_tick=et, event_type=ty,
                                   types=TYPES)


@st.composite
def streams(draw):
    n_users = draw(st.integers(1, 3))
    ticks = []
    for _ in range(n_users):
        gaps = draw(st.lists(st.integers(1, 5), min_size=1, max_size=9))
        ticks.append(list(np.cumsum(gaps)))
    n = sum(len(t) for t in ticks)
    events = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, 2)), max_size=14))
    return _stream(n_users, ticks, events)


@settings(max_examples=150)
@given(streams(), st.lists(st.sampled_from(TYPES), min_size=1, max_size=4),
       st.integers(0, 20))
def test_matcher_equals_bruteforce(stream, types, window):
    p = Pattern(tuple(types), window)
    got = match(stream, p)
    ref = match_bruteforce(stream, p)
    np.testing.assert_array_equal(got, ref)
    other = Pattern(tuple(reversed(types)), window)  # grouped with another pattern's types
    np.testing.assert_array_equal(match_all(stream, [other, p])[1], ref)


def test_example_skip_till_next_match_and_window():
    # one user, ticks at 0..9 s; A@0 A@2 B@3 C@4 B@6 C@9
    s = _stream(1, [list(range(10))], [(0, 0), (2, 0), (3, 1), (4, 2), (6, 1), (9, 2)])
    # seq(A, B): earliest completion B@3 with the latest start A@2; nothing after 3 has an A
    np.testing.assert_array_equal(match(s, Pattern(("A", "B"), 10)), [[2, 3]])
    # seq(A, C) within 1 s: A@2..C@4 spans 2 s -> no match
    assert match(s, Pattern(("A", "C"), 1)).shape == (0, 2)
    # seq(B, C): B@3 C@4, then B@6 C@9 (non-overlapping, both reported)
    np.testing.assert_array_equal(match(s, Pattern(("B", "C"), 10)), [[3, 4], [6, 9]])


def test_concurrent_events_are_not_ordered():
    s = _stream(1, [[0, 1]], [(0, 0), (0, 1)])  # A and B at the same tick
    assert match(s, Pattern(("A", "B"), 10)).shape == (0, 2)


def test_matches_never_span_users():
    s = _stream(2, [[0], [1]], [(0, 0), (1, 1)])  # A for user 0, B for user 1
    assert match(s, Pattern(("A", "B"), 10)).shape == (0, 2)


def test_unknown_type_is_a_clear_error():
    s = _stream(1, [[0]], [])
    with pytest.raises(ParameterError, match="unknown event type 'Z'"):
        match(s, Pattern(("A", "Z"), 1))


def test_pattern_validation():
    with pytest.raises(ParameterError):
        Pattern((), 10)
    with pytest.raises(ParameterError):
        Pattern(("A",), -1)
    with pytest.raises(ParameterError):
        Pattern(("A",), float("nan"))
