"""Numbers for people on the page: the dashboard's names for :mod:`lmdk_core.formatting`
(units, thousands separators, never scientific notation)."""

from __future__ import annotations

from lmdk_core.formatting import plain_distance as fmt_distance
from lmdk_core.formatting import plain_duration as fmt_duration
from lmdk_core.formatting import plain_epsilon as fmt_epsilon
from lmdk_core.formatting import plain_number as fmt_number

__all__ = ["fmt_distance", "fmt_duration", "fmt_epsilon", "fmt_number"]
