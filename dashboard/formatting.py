"""Numbers for people on the page: the dashboard's names for :mod:`lmdk_core.formatting`
(units, thousands separators, never scientific notation)."""

from __future__ import annotations

import re

from lmdk_core.formatting import plain_distance as fmt_distance
from lmdk_core.formatting import plain_duration as fmt_duration
from lmdk_core.formatting import plain_epsilon as fmt_epsilon
from lmdk_core.formatting import plain_number as fmt_number

__all__ = ["fmt_distance", "fmt_duration", "fmt_epsilon", "fmt_number", "plain_text"]

_MARKDOWN = re.compile(r"([\\`*_\[\]()!<>#|~$:])")  # ":" too: no autolinked URL, no :icon:


def plain_text(text: object) -> str:
    """``text`` as literal text inside Streamlit markdown (alerts, captions): the characters that
    make links, images, HTML, code, emphasis or formulas are backslash-escaped, so a file name
    like ``![ ](https://tracker.example/p.png)`` shows as typed and fetches nothing. For every
    user-provided string (file and member names, person ids, place names, messages quoting
    them) shown through markdown."""
    return _MARKDOWN.sub(r"\\\1", str(text))
