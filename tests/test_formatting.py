"""Numbers shown on the page: no scientific notation, units, thousands separators."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from dashboard.formatting import fmt_distance, fmt_duration, fmt_number  # the page's names


def test_examples_read_as_people_write_them() -> None:
    assert fmt_number(1.441e6) == "1,441,000"
    assert fmt_number(0.5) == "0.5"
    assert fmt_number(12.345) == "12.3"
    assert fmt_number(999.96) == "1,000"
    assert fmt_number(0.000123456) == "0.000123"
    assert fmt_number(float("nan")) == "—"
    assert fmt_distance(1.441e6) == "1,441 km"
    assert fmt_distance(2_749.4) == "2,749 m"
    assert fmt_duration(1800) == "30 min"
    assert fmt_duration(3.5 * 86_400) == "3.5 d"


@given(st.floats(min_value=-1e12, max_value=1e12, allow_nan=False).filter(lambda x: abs(x) > 1e-6))
def test_no_exponent_and_value_kept_to_three_digits(x: float) -> None:
    text = fmt_number(x)
    assert "e" not in text.lower()
    value = float(text.replace(",", ""))
    assert math.isclose(value, x, rel_tol=5e-3, abs_tol=0.5 if abs(x) >= 1000 else 0)


from datetime import UTC, datetime, timedelta, timezone  # noqa: E402

import pandas as pd  # noqa: E402

from lmdk_core.formatting import plain_percent, plain_time, plain_time_span  # noqa: E402

_MOMENTS = st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1))


def test_times_and_shares_read_as_people_write_them() -> None:
    assert plain_time("2008-10-23T02:53:04Z") == "23 Oct 2008, 02:53 UTC"
    assert plain_time(pd.Timestamp("2008-10-23 10:53:59", tz="Asia/Shanghai")) == (
        "23 Oct 2008, 02:53 UTC")
    assert plain_time_span("2008-10-23T02:53:04", "2008-10-23T11:10:59") == (
        "on 23 Oct 2008 from 02:53 to 11:10 UTC")
    assert plain_time_span("2008-10-23T23:59", "2008-10-24T00:01") == (
        "from 23 Oct 2008, 23:59 to 24 Oct 2008, 00:01 UTC")
    assert [plain_percent(x) for x in (0, 0.001, 0.3447, 0.996, 1, 1.5, float("nan"))] == [
        "0 %", "< 1 %", "34 %", "> 99 %", "100 %", "150 %", "—"]


@given(_MOMENTS, st.integers(-14 * 60, 14 * 60))
def test_plain_time_is_the_utc_minute_whatever_the_zone(t: datetime, offset_min: int) -> None:
    """Read back with strptime (C locale month names): the UTC moment floored to the minute."""
    aware = t.replace(tzinfo=timezone(timedelta(minutes=offset_min)))
    text = plain_time(aware)
    back = datetime.strptime(text, "%d %b %Y, %H:%M UTC").replace(tzinfo=UTC)
    utc = aware.astimezone(UTC)
    assert back == utc.replace(second=0, microsecond=0)
    assert plain_time(t) == plain_time(t.replace(tzinfo=UTC))  # naive = UTC


@given(_MOMENTS, st.integers(0, 3 * 86_400))
def test_plain_time_span_names_the_day_once_only_within_a_day(t: datetime, gap_s: int) -> None:
    end = t + timedelta(seconds=gap_s)
    text = plain_time_span(t, end)
    if t.date() == end.date():
        assert text == (f"on {plain_time(t).split(',')[0]} from {t:%H:%M} to {end:%H:%M} UTC")
    else:
        assert text == f"from {plain_time(t).removesuffix(' UTC')} to {plain_time(end)}"


@given(st.floats(min_value=0, max_value=1))
def test_plain_percent_never_rounds_a_part_to_none_or_all(share: float) -> None:
    """'0 %' only for nothing and '100 %' only for everything (rounding the share would say
    '0 %' for 1 fresh release in 1,000); otherwise within half a percent."""
    text = plain_percent(share)
    assert (text == "0 %") == (share == 0) and (text == "100 %") == (share == 1)
    if text not in ("< 1 %", "> 99 %"):
        assert abs(int(text.removesuffix(" %")) - 100 * share) <= 0.5 + 1e-9
