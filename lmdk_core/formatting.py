"""Numbers for people: units, thousands separators, never scientific notation on the page.

The dashboard, the figures and the offline report all format through these helpers, so one rule
holds wherever a number is shown.
"""

from __future__ import annotations

import math
from typing import Any

from ._deprecation import renamed

__all__ = ["plain_count", "plain_distance", "plain_duration", "plain_epsilon", "plain_number",
           "plain_percent", "plain_time", "plain_time_span"]


def plain_number(x: float) -> str:
    """3 significant digits below 1,000 (no exponent), thousands separators above;
    '—' if not finite."""
    x = float(x)
    if not math.isfinite(x):
        return "—"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if x == 0:
        return "0"
    digits = max(0, 2 - math.floor(math.log10(abs(x))))
    if abs(round(x, digits)) >= 1000:  # 999.9 rounds up to 1,000
        return f"{x:,.0f}"
    text = f"{x:.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def plain_distance(metres: float) -> str:
    """Metres below 10 km, kilometres above (thousands separators); '—' when not finite."""
    metres = float(metres)
    if not math.isfinite(metres):
        return "—"
    return f"{metres:,.0f} m" if abs(metres) < 10_000 else f"{metres / 1000:,.0f} km"


@renamed(eps="epsilon")
def plain_epsilon(epsilon: float) -> str:
    """A privacy budget, e.g. 'ε = 0.5'."""
    return f"ε = {plain_number(epsilon)}"


def plain_duration(seconds: float) -> str:
    """Seconds, minutes, hours or days, whichever reads best ('—' when not finite)."""
    s = float(seconds)
    if not math.isfinite(s):
        return "—"
    for unit, size in (("d", 86_400), ("h", 3_600), ("min", 60)):
        if abs(s) >= size:
            return f"{plain_number(s / size)} {unit}"
    return f"{plain_number(s)} s"


def plain_percent(share: float) -> str:
    """A share in [0, 1] as a whole percentage with a space ('34 %'); '< 1 %' and '> 99 %' for
    the non-zero and not-quite-all shares that would round to 0 % and 100 %; '—' if not finite."""
    x = float(share)
    if not math.isfinite(x):
        return "—"
    text = f"{x:.0%}"  # rounds half to even: 0.005 reads '0%' and 0.995 '100%'
    if text == "0%" and x > 0:
        return "< 1 %"
    if text == "100%" and x < 1:
        return "> 99 %"
    return text.replace("%", " %")


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _utc(value: Any) -> Any:
    """``value`` (string, datetime, Timestamp, datetime64; naive = UTC) as a UTC Timestamp."""
    from .times import utc_timestamp

    return utc_timestamp(value, "time")


def _day(t: Any) -> str:
    return f"{t.day} {_MONTHS[t.month - 1]} {t.year}"  # English whatever the locale


def plain_time(value: Any) -> str:
    """A moment for people, to the minute, in UTC: '23 Oct 2008, 02:53 UTC' (seconds dropped,
    never rounded up); naive times are taken as UTC."""
    t = _utc(value)
    return f"{_day(t)}, {t.hour:02d}:{t.minute:02d} UTC"


def plain_time_span(start: Any, end: Any) -> str:
    """'from 23 Oct 2008, 02:53 to 24 Oct 2008, 11:10 UTC', or 'on 23 Oct 2008 from 02:53 to
    11:10 UTC' when both fall on the same UTC day (to the minute, as :func:`plain_time`)."""
    a, b = _utc(start), _utc(end)
    if a.date() == b.date():
        return f"on {_day(a)} from {a.hour:02d}:{a.minute:02d} to {b.hour:02d}:{b.minute:02d} UTC"
    return f"from {plain_time(a).removesuffix(' UTC')} to {plain_time(b)}"


def plain_count(n: int, noun: str, plural: str | None = None) -> str:
    """'1 event', '0 events', '1,219 ticks': the count with thousands separators and the noun in
    the singular for exactly one, else ``plural`` (default: ``noun`` + 's')."""
    n = int(n)
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
