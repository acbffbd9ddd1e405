"""Numbers for people: units, thousands separators, never scientific notation on the page.

The dashboard, the figures and the offline report all format through these helpers, so one rule
holds wherever a number is shown.
"""

from __future__ import annotations

import math

__all__ = ["plain_count", "plain_distance", "plain_duration", "plain_epsilon", "plain_number"]


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


def plain_epsilon(eps: float) -> str:
    """A privacy budget, e.g. 'ε = 0.5'."""
    return f"ε = {plain_number(eps)}"


def plain_duration(seconds: float) -> str:
    """Seconds, minutes, hours or days, whichever reads best ('—' when not finite)."""
    s = float(seconds)
    if not math.isfinite(s):
        return "—"
    for unit, size in (("d", 86_400), ("h", 3_600), ("min", 60)):
        if abs(s) >= size:
            return f"{plain_number(s / size)} {unit}"
    return f"{plain_number(s)} s"


def plain_count(n: int, noun: str, plural: str | None = None) -> str:
    """'1 event', '0 events', '1,219 ticks': the count with thousands separators and the noun in
    the singular for exactly one, else ``plural`` (default: ``noun`` + 's')."""
    n = int(n)
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
