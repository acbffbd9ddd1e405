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
