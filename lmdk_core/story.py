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
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from .errors import ParameterError
from .formatting import (
    plain_distance,
    plain_duration,
    plain_epsilon,
    plain_number,
    plain_time,
    plain_time_span,
)
from .palette import COLOUR_NAMES, CONTEXT_COLOUR, RELEASE_COLOUR
from .validation import check_epsilon

__all__ = [
    "ILLUSTRATION_LANDMARKS",
    "StorySection",
    "attack_story_section",
    "illustration_figure",
    "public_context",
    "release_story",
    "released_extent_text",
    "released_map",
    "story_html",
    "story_summary",
]

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
    so Leaflet is inlined). ``tag``: what a public section holds, when it is more than the
    released output (default: "public: released output only").
    """

    title: str
    text: str = ""
    figure: Any = None
    map: Any = None
    private: bool = False
    tag: str = ""


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
    from .figures import PLOTLY_CONFIG  # no button that uploads the chart

    return fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id,
                       config=PLOTLY_CONFIG)


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
               if sec.private else f'<span class="public">{html.escape(sec.tag)}</span>'
               if sec.tag else '<span class="public">public: released output only</span>')
        parts = [f"<section><h2>{html.escape(sec.title)}</h2>{tag}", _paragraphs(sec.text)]
        if sec.figure is not None:
            parts.append(_figure_html(sec.figure, f"lmdk-figure-{k}"))
        if sec.map is not None:
            parts.append(_map_html(sec.map))
        body.append("".join(parts) + "</section>")
    if left_out:
        body.append(f"<p><em>{left_out} section(s) showing your true data or places were left "
                    "out; opt in to include them in a private copy.</em></p>")
    stamp = plain_time(datetime.now(UTC))
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


# ------------------------------------------------------------------ the release's story

ILLUSTRATION_LANDMARKS = (6, 7, 8, 9, 16, 17, 18)
"""Landmark positions of the made-up 24-moment series the public story draws a scheme's
allocation shape on (not the user's: the true landmark times never enter a public story)."""

_ILLUSTRATED = ("event", "user", "uniform", "skip")


_fmt = plain_number
"""Numbers in the report's text: the page's rule (3 significant digits, no exponent)."""


MAP_POINTS = 5000
"""Released points drawn on the story's map at most (evenly spread over time beyond that)."""


def public_context(context: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The part of an offline context (a GeoJSON FeatureCollection such as
    :func:`lmdk_core.sample.load_sample_context`) a PUBLIC story may draw: its lines and areas
    (roads), never its points — the sample's named points are its people's places, and a
    caller's points may be too. None when nothing is left."""
    if context is None:
        return None
    if not isinstance(context, Mapping) or context.get("type") != "FeatureCollection":
        raise ParameterError("context must be a GeoJSON FeatureCollection (a dict)")
    kept = [f for f in context.get("features", ())
            if (f.get("geometry") or {}).get("type") not in (None, "Point", "MultiPoint")]
    return {"type": "FeatureCollection", "features": kept} if kept else None


CORE_IN_TEN = 9
"""The story's caption says within what distance of their median point this many in ten of the
released points lie, and its map opens on them (heavy-tailed noise throws a few far away)."""


def _ceil_shown(metres: float) -> float:
    """``metres`` rounded UP to what :func:`plain_distance` shows (1 m below 10 km, 1 km above),
    so "within" stays true after rounding."""
    up = math.ceil(metres)
    return up if up < 10_000 else math.ceil(metres / 1000) * 1000


def _released_core(release: Any) -> tuple[np.ndarray, np.ndarray, float, float, float]:
    """The finite released (lat, lon), their median point (median latitude, median longitude)
    and the smallest distance r (metres) within which at least :data:`CORE_IN_TEN` in ten of
    them lie (released values only: free post-processing)."""
    from .geo import haversine_m
    from .trajectory import lat_lon

    lat, lon = lat_lon(release, "release")
    ok = np.isfinite(lat) & np.isfinite(lon)
    lat, lon = lat[ok], lon[ok]
    if lat.size == 0:
        return lat, lon, math.nan, math.nan, math.nan
    mid_lat, mid_lon = float(np.median(lat)), float(np.median(lon))
    dist = haversine_m(lat, lon, mid_lat, mid_lon)
    k = -(-CORE_IN_TEN * lat.size // 10)  # ceil in integers: the fewest points that make it
    r = float(np.partition(dist, k - 1)[k - 1])
    return lat, lon, mid_lat, mid_lon, r


def released_extent_text(release: Any) -> str:
    """Where the released points lie, in words, from the released points ONLY (free
    post-processing): within what distance of their median point 9 in 10 of them lie, and the
    north–south and east–west size of the area holding all of them (distances rounded up, so
    "within" stays true). Empty when nothing was released."""
    from .geo import haversine_m
    from .maps import format_lat_lon

    lat, lon, mid_lat, mid_lon, r = _released_core(release)
    if lat.size == 0:
        return ""
    lo_lat, hi_lat, lo_lon, hi_lon = lat.min(), lat.max(), lon.min(), lon.max()
    box_lat, box_lon = (lo_lat + hi_lat) / 2, (lo_lon + hi_lon) / 2
    ns = float(haversine_m(lo_lat, box_lon, hi_lat, box_lon))
    ew = float(haversine_m(box_lat, lo_lon, box_lat, hi_lon))  # along the area's middle
    area = (f"within an area {plain_distance(_ceil_shown(ns))} north–south by "
            f"{plain_distance(_ceil_shown(ew))} east–west")
    where = format_lat_lon(mid_lat, mid_lon)
    if lat.size < 10:
        return (f"The {lat.size} released point(s) lie {area}; their median point is at about "
                f"{where}.")
    return (f"{CORE_IN_TEN} in 10 released points lie within {plain_distance(_ceil_shown(r))} of "
            f"their median point (the median latitude and longitude, about {where}); the map "
            f"opens on them. All of them lie {area}.")


def released_map(release: Any, *, tiles: str | None = "none", max_points: int = MAP_POINTS,
                 context: Mapping[str, Any] | None = None) -> Any:
    """A map of the released locations ONLY (no true trace, no places), Leaflet inlined, with a
    scale bar.

    ``tiles``: ``"none"`` (default, no outside request), ``"osm"`` or an XYZ tile URL
    (:func:`lmdk_core.maps.tile_layer`); tiles are the one thing such a map would load from
    elsewhere. ``context``: offline bearings shipped with the data (e.g. the sample's schematic
    roads); only its lines and areas are drawn (:func:`public_context`).
    """
    import folium

    from . import maps
    from .map_view import thinned_points
    from .trajectory import lat_lon

    lat, lon = lat_lon(release, "release")
    core_lat, core_lon, mid_lat, mid_lon, r = _released_core(release)
    if core_lat.size:  # open on the points within r of the median (all of them stay drawn)
        from .geo import haversine_m

        near = haversine_m(core_lat, core_lon, mid_lat, mid_lon) <= r
        bounds = [[float(core_lat[near].min()), float(core_lon[near].min())],
                  [float(core_lat[near].max()), float(core_lon[near].max())]]
        centre = [mid_lat, mid_lon]
    else:
        bounds, centre = None, [0.0, 0.0]
    m = maps.LocalMap(location=centre, zoom_start=13, tiles=None, control_scale=True)
    maps.tile_layer(m, tiles)
    roads = public_context(context)
    if roads is not None:
        maps.context_layer(roads).add_to(m)
        maps.context_labels(roads).add_to(m)
    # one GeoJSON layer (drawn by Leaflet in the browser) instead of a folium element per point:
    # ~100x cheaper to build, so the report can hold every released point up to max_points
    coords = [[b, a] for a, b in thinned_points(lat, lon, max_points)]  # GeoJSON: lon, lat
    folium.GeoJson(
        {"type": "FeatureCollection", "features": [
            {"type": "Feature", "properties": {}, "geometry": {"type": "Point", "coordinates": c}}
            for c in coords]},
        name="Released (perturbed)",
        marker=folium.CircleMarker(radius=3, weight=1.5, fill=False, color=maps.RELEASE_COLOUR),
    ).add_to(m)
    if bounds is not None:
        m.fit_bounds(bounds, padding=(10, 10))
    return m


def illustration_figure(scheme: str, *, epsilon: float) -> Any:
    """How ``scheme`` spreads ε over a MADE-UP series of 24 moments with landmarks at
    :data:`ILLUSTRATION_LANDMARKS` (its shape, not the user's data), or None for the schemes
    that decide their budgets from the data while releasing (adaptive, bd, ba)."""
    if scheme not in _ILLUSTRATED:
        return None
    import plotly.graph_objects as go

    from .allocation import allocate
    from .figures import OKABE_ITO, TEMPLATE

    n = 24
    mask = np.zeros(n, dtype=bool)
    mask[list(ILLUSTRATION_LANDMARKS)] = True
    eps = allocate(n, mask, epsilon=epsilon, scheme=scheme)
    x = np.arange(1, n + 1)
    colours = np.where(mask, OKABE_ITO["vermillion"], OKABE_ITO["blue"])
    fig = go.Figure(
        [go.Bar(x=x, y=eps, marker={"color": colours.tolist()}, showlegend=False,
                hovertemplate="moment %{x}<br>ε_t = %{y:.3f}<extra></extra>"),
         go.Bar(x=[None], y=[None], name="ordinary moment (blue bar)",
                marker={"color": OKABE_ITO["blue"]}),
         go.Scatter(x=x[mask], y=np.zeros(int(mask.sum())), mode="markers",
                    name="moment at a place (vermillion bar and diamond)",
                    marker={"color": OKABE_ITO["vermillion"], "symbol": "diamond", "size": 9},
                    hovertemplate="moment %{x}: at a place<extra></extra>"),
         go.Scatter(x=[0.5, n + 0.5], y=[epsilon, epsilon], mode="lines",
                    name=f"total budget ε = {_fmt(epsilon)} (black dashed line)",
                    line={"color": OKABE_ITO["black"], "dash": "dash"}, hoverinfo="skip")],
        layout={"template": TEMPLATE, "height": 360, "barmode": "overlay",
                "title": {"text": f"Illustration: how '{scheme}' spreads ε over 24 made-up "
                          "moments (not your data)", "x": 0},
                "xaxis": {"title": {"text": "moment (1–24, made-up series)"}, "dtick": 1},
                "yaxis": {"title": {"text": "budget ε_t (privacy budget units)"},
                          "rangemode": "tozero", "tickformat": ".2~f"},
                "legend": {"orientation": "h", "y": -0.3},
                "margin": {"l": 70, "r": 20, "t": 60, "b": 90}},
    )
    return fig


def _budget_figure(release: Any) -> Any:
    """ε_t over the released times: only for a budget that does not depend on the landmarks."""
    import plotly.graph_objects as go

    from .figures import OKABE_ITO, TEMPLATE
    from .times import utc_times

    eps = np.asarray(release.budget, dtype=np.float64)
    x = (np.arange(eps.size) if release.time is None
         else utc_times(release.time, "release.time"))
    xtitle = "timestamp index" if release.time is None else "time (UTC)"
    return go.Figure(
        [go.Scatter(x=x, y=eps, mode="lines", line={"color": OKABE_ITO["blue"], "shape": "hv"},
                    name="budget ε_t (blue line)",
                    hovertemplate="ε_t = %{y:.4f}<extra></extra>")],
        layout={"template": TEMPLATE, "height": 360, "showlegend": True,
                "title": {"text": "Budget ε_t per released moment (chosen from the correlation "
                          "model, not from your places)", "x": 0},
                "xaxis": {"title": {"text": xtitle}},
                "yaxis": {"title": {"text": "budget ε_t (privacy budget units)"},
                          "rangemode": "tozero", "tickformat": ".3~f"},
                "legend": {"orientation": "h", "y": -0.25},
                "margin": {"l": 70, "r": 20, "t": 60, "b": 80}},
    )


def story_summary(
    *, epsilon: float, radius_m: float, allocation: str, n_released: int,
    start: Any = None, end: Any = None, interval_s: float | None = None,
    alpha: float | None = None, simulation: bool = False, private: bool = False,
) -> str:
    """The plain-language summary: what is protected, and at what cost (blank-line paragraphs).

    Built from the settings and the released times only (public); no true data enters it.
    ``start``/``end``: the first and last released times (any date/time; shown to the minute in
    UTC). ``private``: the report also holds the true trace and places (its first paragraph says
    so). ``simulation``: seeded or floating-point noise (the randomness paragraph says so).
    """
    span = f" {plain_time_span(start, end)}" if start is not None and end is not None else ""
    every = (f" one location every {plain_duration(interval_s)}" if interval_s else
             " every recorded location")
    parts = [
        f"What was shared: {n_released:,} noisy locations{span},{every}. "
        + ("This PRIVATE copy also shows the true trace and the places that matter to the "
           "person (their landmarks): do not share it." if private else
           "The true trace and the places that matter to the person (their landmarks) are not "
           "in this report."),
        f"What is protected: where the person was at their landmark places, at all those moments "
        f"together with any one other moment, is protected with a privacy budget of "
        f"ε = {_fmt(epsilon)}: whatever anyone does with the released trace, it cannot tell "
        f"apart two places within {_fmt(radius_m)} m of each other by more than a factor "
        f"e^ε ≈ {_fmt(float(np.exp(epsilon)))} in likelihood. Smaller ε means stronger "
        "protection.",
        "What is not protected: when the person was at their places. Landmark privacy treats "
        "those times as public, and some allocations show them (a released point repeated over "
        "a stretch of time).",
        f"The cost: every released point is moved at random. A point released with the whole "
        f"budget ε is on average 2·r/ε = {_fmt(2 * radius_m / epsilon)} m from the truth; "
        f"the allocation '{allocation}' gives each moment a share ε_t of ε, and a smaller "
        "share means a larger typical error (2·r/ε_t).",
        ("Randomness: the noise of this simulation came from a seed or from floating-point "
         "sampling, so it can be reproduced or its gaps exploited: it protects nothing. "
         if simulation else
         "Randomness: the noise was drawn from the operating system's random source once for "
         "this release; no seed exists that could undo it. ")
        + "Two different noisy releases of the same trace reveal more than one: their budgets "
        "add up.",
    ]
    if alpha is not None:
        parts.insert(3, f"Correlation: consecutive locations are related (where you are now "
                     f"says where you were a minute ago). The budgets were chosen so that, under "
                     f"the stated model of movement, the loss of any one moment stays below "
                     f"α = {_fmt(alpha)} (the temporal privacy loss, TPL, an upper bound).")
    if simulation:
        parts.insert(0, "SIMULATION: this release used seeded or floating-point noise and is not "
                     "private. Do not publish it.")
    return "\n\n".join(parts)


ATTACK_STORY_NOTE = (
    "These figures come from {draws} simulated releases with the same settings, never from this "
    "release. They are distances between an attacker's guesses and the person's true places: "
    "they hold no coordinates and no place names, but unlike the released trace they are "
    "computed from the true data and are not covered by ε."
)


ATTACK_PUBLIC_NOTE = (
    "The attack figures are only in the private version of this report: they are distances "
    "to the person's true places, so they are computed from the true data and ε does not "
    "cover them. A public file holds only what was released."
)


ATTACK_PRIVATE_TAG = "private: distances from simulated releases to your true places"


ATTACK_STORY_TAG = ("public-safe summary: distances from simulated releases to the true places, "
                    "no coordinates or names")


def attack_story_section(report: Any, *, private: bool = False) -> StorySection:
    """What an attacker learns from the public file (:mod:`lmdk_core.attacks`), public-safe
    unless ``private``: places are "place 1", "place 2", … and only distances are shown (the
    visit attack, whose baseline is the share of time spent at a place, only in the private
    story)."""
    from .attacks import guarantee_sentences, place_sentences

    labels = None if private else [f"Place {i + 1}" for i in range(len(report.places))]
    parts = [ATTACK_STORY_NOTE.format(draws=report.draws),
             *place_sentences(report, labels=labels, visits=private),
             " ".join(guarantee_sentences(report))]
    return StorySection("What an attacker learns from the public file",
                        "\n\n".join(p.replace("**", "") for p in parts),
                        tag=ATTACK_PRIVATE_TAG if private else ATTACK_STORY_TAG)


def release_story(
    release: Any,
    *,
    epsilon: float,
    allocation: str,
    settings: Mapping[str, Any],
    scheme: str | None = None,
    budget_is_public: bool = False,
    alpha: float | None = None,
    interval_s: float | None = None,
    tiles: str | None = "none",
    context: Mapping[str, Any] | None = None,
    include_private: bool = False,
    traj: Any = None,
    landmarks: Any = None,
    places: Any = None,
    temporal: Any = None,
    landmark_loss: Any = None,
    attack: Any = None,
) -> str:
    """The stakeholder story of one locations release as ONE offline HTML page.

    Public by default: the released trace on a map (:func:`released_map`), the allocation's
    shape (the real ε_t only when ``budget_is_public`` — a budget chosen without the landmarks,
    such as the TPL-bounded allocation of a public or DP model — otherwise
    :func:`illustration_figure` of ``scheme`` on made-up moments), the plain-language summary
    (:func:`story_summary`) and ``settings``. ``traj``, ``landmarks``, ``places``, ``temporal``
    and ``landmark_loss`` are read ONLY when ``include_private`` is True; the private story adds
    the true trace with the places, the real allocation and guarantee G_t, the error against the
    truth and the privacy loss, and its title says PRIVATE. ``context``: offline bearings shipped
    with the data (e.g. :func:`lmdk_core.sample.load_sample_context` for the bundled sample),
    drawn under the released points without its points (:func:`public_context`).
    """
    from .figures import allocation_figure, error_figure, loss_figure
    from .metrics import error_metres

    epsilon = check_epsilon(epsilon)
    if getattr(release, "lat", None) is None:
        raise ParameterError("the story shows a locations release (this one has values)")
    radius = float(release.params.get("radius_m", settings.get("radius_m", 0)) or 0)
    times = release.time
    start = end = None
    if times is not None and len(times):
        start, end = times[0], times[-1]
    summary = story_summary(
        epsilon=epsilon, radius_m=radius, allocation=allocation, n_released=len(release.budget),
        start=start, end=end, interval_s=interval_s, alpha=alpha,
        simulation=bool(getattr(release, "seeded", False)), private=include_private)
    roads = public_context(context)
    bearings = ("" if roads is None else
                f" Thin {COLOUR_NAMES[CONTEXT_COLOUR]} lines are schematic main roads shipped with "
                "lmdk, for orientation only (not from this person's data).")
    sections = [StorySection(
        "The released trace",
        f"Every hollow {COLOUR_NAMES[RELEASE_COLOUR]} circle is a released (noisy) location, "
        f"as anyone receiving the public file sees it (at most {MAP_POINTS:,} shown, evenly "
        f"spread over time). The true trace is not drawn.{bearings} The bar in the lower left "
        "corner shows the scale.\n\n" + released_extent_text(release),
        map=released_map(release, tiles=tiles, context=roads))]
    if budget_is_public:
        sections.append(StorySection(
            "How the privacy budget is spent over time",
            "Each moment's share ε_t of the budget. These budgets were chosen from the model of "
            "movement alone, never from the places, so showing them reveals nothing about "
            "the places.", figure=_budget_figure(release)))
    else:
        fig = illustration_figure(scheme or "", epsilon=epsilon)
        text = (f"The allocation '{allocation}' on a made-up series of 24 moments, 7 of them at "
                "places (vermillion bars and diamonds), to show its shape. The real per-moment "
                "budgets are not shown: they would reveal when the person was at their places.")
        if fig is None:
            text = (f"The allocation '{allocation}' decides each moment's budget while releasing, "
                    "from how the trace changes; the per-moment budgets are not shown because "
                    "they would reveal when the person was at their places. Its guarantee is the "
                    "same: the places' moments and any one other moment together spend at most ε.")
        sections.append(StorySection("How the privacy budget is spent", text, figure=fig))
    if attack is not None and include_private:
        sections.append(attack_story_section(attack, private=True))
    elif attack is not None:  # computed from the true places: not a released quantity
        sections.append(StorySection("What an attacker learns from the public file",
                                     ATTACK_PUBLIC_NOTE))
    if include_private:
        if traj is None or landmarks is None:
            raise ParameterError("a private story needs traj= and landmarks=")
        from .accounting import landmark_guarantee
        from .maps import trajectory_map

        mask = np.asarray(landmarks, dtype=bool)
        time = traj.get("time", None)
        eps = np.asarray(release.budget, dtype=np.float64)
        g = landmark_guarantee(eps, mask)
        sections += [
            StorySection("Before and after: your true trace, your places and the release",
                         "Blue line: the true trace; green circles: your places; pink dots: "
                         "true locations at landmark moments; hollow "
                         f"{COLOUR_NAMES[RELEASE_COLOUR]} circles: the "
                         "released locations.",
                         map=trajectory_map(traj, places=places or (), release=release,
                                            landmarks=mask, tiles=tiles), private=True),
            StorySection("Budget allocation and landmark guarantee G_t",
                         "Top: ε_t at each moment, landmarks marked. Bottom: G_t, the budget "
                         "of all landmark moments plus moment t; landmark privacy holds while it "
                         "stays at or below ε.",
                         figure=allocation_figure(eps, mask, epsilon=epsilon, time=time,
                                                  guarantee=g),
                         private=True),
            StorySection("Error of the released trace",
                         "Distance between each released point and the true location, in metres.",
                         figure=error_figure(error_metres(traj, release), release.published,
                                             time=time, landmarks=mask), private=True),
        ]
        sections.append(StorySection(
            "Privacy loss over time",
            "The landmark guarantee G_t and, under the correlation model, upper bounds on the "
            "loss (TPL: temporal privacy loss of one moment; BPL/FPL: its parts from earlier and "
            "later releases).",
            figure=loss_figure(eps, g, epsilon=epsilon, temporal=temporal,
                               landmark_loss=landmark_loss, time=time),
            private=True))
    title = f"Privacy-protected location release — {allocation}, {plain_epsilon(epsilon)}"
    return story_html(title=title, summary=summary, sections=sections, settings=settings,
                      include_private=include_private)
