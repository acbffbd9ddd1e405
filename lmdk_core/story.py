"""A self-contained offline HTML report ("the story") for showing a release to other people.

:func:`story_html` assembles a title, a plain-language summary, the settings and a list of
:class:`StorySection` s (text, a Plotly figure, a Folium map) into ONE HTML file that opens in any
browser with no server and no network: plotly.js is inlined once, each map is an ``<iframe srcdoc>``
holding its own page with Leaflet inlined (:class:`lmdk_core.maps.LocalMap`), and nothing is
loaded from anywhere else (a test checks the file references no outside URL; map tiles, if the
caller chose any, are the one exception and the report says so).

Privacy: each section says whether it shows private material (the true trace, the places, the
per-timestamp budget that reveals the landmark timestamps, errors measured against the truth).
Private sections are left out unless ``include_private=True``; a report that includes them says so
in a banner at the top and in its ``<title>``, like the private analysis file.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .errors import ParameterError

__all__ = ["StorySection", "story_html"]

PRIVATE_BANNER = (
    "PRIVATE — this report contains your true trace and/or your places. Do not share it: only "
    "the released trace is covered by the privacy guarantee."
)

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#222;
background:#fafafa}
main{max-width:1100px;margin:0 auto;padding:24px}
h1{font-size:1.7rem;margin:0 0 .4rem}
h2{font-size:1.2rem;margin:1.6rem 0 .4rem}
p{line-height:1.5;max-width:75ch}
.banner{background:#fde8e8;border:2px solid #c0392b;color:#7b1d12;padding:10px 14px;
font-weight:600;border-radius:6px}
.public{color:#1e6b3a;font-size:.85rem}
.privatetag{color:#c0392b;font-size:.85rem;font-weight:600}
table{border-collapse:collapse;margin:.4rem 0}
td,th{border:1px solid #ddd;padding:4px 10px;text-align:left;font-size:.9rem}
iframe{width:100%;height:480px;border:1px solid #ccc;border-radius:6px;background:#fff}
footer{margin-top:2rem;color:#666;font-size:.8rem}
"""


@dataclass(frozen=True)
class StorySection:
    """One part of the story: a heading, plain text, and optionally a figure or a map.

    ``private``: True when the section shows anything derived from the true data that is not
    itself released (true trace, places, ε_t per timestamp, errors against the truth).
    ``figure`` is a Plotly figure; ``map`` a Folium map (use :class:`lmdk_core.maps.LocalMap`
    so Leaflet is inlined).
    """

    title: str
    text: str = ""
    figure: Any = None
    map: Any = None
    private: bool = False


def _paragraphs(text: str) -> str:
    blocks = [b.strip() for b in text.split("\n\n") if b.strip()]
    return "".join(f"<p>{html.escape(b)}</p>" for b in blocks)


def _settings_table(settings: Mapping[str, Any]) -> str:
    rows = "".join(
        f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>"
        for k, v in settings.items()
    )
    return f"<table>{rows}</table>" if rows else ""


def _figure_html(fig: Any, div_id: str) -> str:
    return fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id,
                       config={"displaylogo": False, "responsive": True})


def _map_html(m: Any) -> str:
    page = m.get_root().render()
    return f'<iframe title="map" srcdoc="{html.escape(page, quote=True)}"></iframe>'


def story_html(
    *,
    title: str,
    summary: str,
    sections: Sequence[StorySection],
    settings: Mapping[str, Any] | None = None,
    include_private: bool = False,
) -> str:
    """The whole report as one HTML string (write it with ``Path.write_text(..., "utf-8")``).

    ``summary``: plain-language paragraphs (blank-line separated) on what is protected and at
    what cost; ``settings``: what the reader needs to reproduce the release's guarantee (scheme,
    ε, radius, time range) — never a seed. Private sections are skipped (and counted in a note)
    unless ``include_private``.
    """
    if not isinstance(title, str) or not title.strip():
        raise ParameterError("title must be a non-empty string")
    settings = dict(settings or {})
    if any("seed" in str(k).lower() for k in settings):
        raise ParameterError("a seed must never appear in a report: remove it from settings")
    from plotly.offline import get_plotlyjs

    shown = [s for s in sections if include_private or not s.private]
    left_out = len(sections) - len(shown)
    has_private = any(s.private for s in shown)
    body = [f"<h1>{html.escape(title)}</h1>"]
    if has_private:
        body.append(f'<p class="banner">{html.escape(PRIVATE_BANNER)}</p>')
    body.append(_paragraphs(summary))
    if settings:
        body.append("<h2>Settings</h2>" + _settings_table(settings))
    for k, sec in enumerate(shown):
        tag = ('<span class="privatetag">private: derived from your true data</span>'
               if sec.private else '<span class="public">public: released output only</span>')
        parts = [f"<section><h2>{html.escape(sec.title)}</h2>{tag}", _paragraphs(sec.text)]
        if sec.figure is not None:
            parts.append(_figure_html(sec.figure, f"lmdk-figure-{k}"))
        if sec.map is not None:
            parts.append(_map_html(sec.map))
        body.append("".join(parts) + "</section>")
    if left_out:
        body.append(f"<p><em>{left_out} section(s) showing your true data or places were left "
                    "out; opt in to include them in a private copy.</em></p>")
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    body.append(f"<footer>Made with lmdk on {stamp}. This file loads nothing from the internet"
                "; map tiles, if any were chosen, are the only exception.</footer>")
    page_title = ("PRIVATE — " if has_private else "") + title
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(page_title)}</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<style>{_CSS}</style><script>{get_plotlyjs()}</script></head>"
        f"<body><main>{''.join(body)}</main></body></html>"
    )
