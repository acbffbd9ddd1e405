"""The Patterns page's figures (lmdk_core.patterns.figures) read as a newcomer reads them, and
the counting helper its sentences use (issue 27, Patterns item): every series visible and named,
plain log-axis ticks, '1 event' not '1 events'."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lmdk_core.formatting import plain_count


@given(st.integers(-10**7, 10**7))
def test_plain_count_is_singular_for_exactly_one(n):
    text = plain_count(n, "event")
    number, noun = text.split(" ")
    assert int(number.replace(",", "")) == n
    assert noun == ("event" if n == 1 else "events")
    assert plain_count(n, "person", "people").endswith("person" if n == 1 else "people")


def test_plain_count_examples():
    assert plain_count(1, "event") == "1 event"
    assert plain_count(0, "event type") == "0 event types"
    assert plain_count(1219, "tick") == "1,219 ticks"
