"""Folium maps of trajectories, landmark places and released locations, with Leaflet served locally.

folium loads Leaflet (and jQuery, Bootstrap, Font Awesome) from CDNs by default; offline the map
silently never appears, and online every page view tells those CDNs that someone opened the map.
:class:`LocalMap` is a ``folium.Map`` whose only assets are Leaflet's JS and CSS read from the
installed ``xstatic-leaflet`` package and inlined as ``data:`` URIs (marker/layer images inlined
too), so a map with ``tiles="none"`` makes no outside request — in a notebook and in the
stakeholder report alike. (The interactive map of the dashboard and the Jupyter explorer is
:mod:`lmdk_core.map_view` with ``landmark_map.js``.) The layers drawn here are plain Leaflet
(PolyLine, CircleMarker, Circle, Tooltip) and need nothing else.

Clicks: only place circles (and the offline bearings) are interactive. The trajectory, landmark,
dummy and release markers let clicks through to the map. :func:`place_at` resolves a click
geometrically (a click inside a place's circle is that place, whatever was under it).

Costs (measured): each folium child costs ~2 ms to render (folium compiles each rendered
element's script as a Jinja template); a trajectory is therefore drawn as one PolyLine and its
points (at most ``max_points``, downsampled for display only) as one :class:`CircleMarkers`
element per layer, which draws them all with a single script.
"""

from __future__ import annotations

import base64
import functools
import html
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from ._deprecation import renamed
from ._optional import missing_extra
from .errors import ParameterError
from .geo import haversine_m
from .map_view import OSM_TILES, leaflet_dir, thinned_points, tile_source
from .palette import (
    CONTEXT_COLOUR,
    DUMMY_COLOUR,
    LANDMARK_COLOUR,
    PLACE_COLOUR,
    RELEASE_COLOUR,
    SELECTED_COLOUR,
    TRUE_COLOUR,
)
from .places import as_places
from .trajectory import lat_lon

try:
    import folium
    from branca.element import MacroElement
    from folium.template import Template
    from folium.vector_layers import path_options
except ImportError as exc:  # the core does not depend on folium
    raise missing_extra("folium", "app", __name__) from exc

__all__ = [
    "LEGEND",
    "OSM_TILES",
    "CircleMarkers",
    "LegendEntry",
    "LocalMap",
    "base_map",
    "context_labels",
    "context_layer",
    "format_lat_lon",
    "landmark_layer",
    "legend_text",
    "local_leaflet",
    "named_place_near",
    "place_at",
    "place_layer",
    "release_layer",
    "tile_layer",
    "trajectory_map",
]


@dataclass(frozen=True)
class LegendEntry:
    """One layer as the page names it: the colour it is drawn in and the words used for it."""

    what: str
    colour: str
    colour_word: str
    mark: str

    def text(self) -> str:
        return f"{self.colour_word} {self.mark} = {self.what}"


LEGEND: tuple[LegendEntry, ...] = (
    LegendEntry("true trajectory", TRUE_COLOUR, "blue", "line and dots"),
    LegendEntry("landmark timestamps", LANDMARK_COLOUR, "pink", "filled dots"),
    LegendEntry("landmark place", PLACE_COLOUR, "green", "circle"),
    LegendEntry("selected place", SELECTED_COLOUR, "orange", "circle"),
    LegendEntry("released (perturbed) locations", RELEASE_COLOUR, "red", "hollow rings"),
    LegendEntry("dummy landmarks (only when hiding is on; only you see them)", DUMMY_COLOUR,
                "light blue", "filled dots"),
    LegendEntry("offline bearings (schematic roads, named places)", CONTEXT_COLOUR, "grey",
                "thin lines and small dots"),
)
"""The map's legend: the layers below draw with exactly these colours (one source for the
drawing, the caption and help texts)."""


def legend_entry(what: str) -> LegendEntry:
    """The legend entry whose ``what`` starts with ``what``."""
    for entry in LEGEND:
        if entry.what.startswith(what):
            return entry
    raise KeyError(what)


def legend_text(*, context: bool = False) -> str:
    """The legend as one line of words (the offline-bearings entry only with ``context``)."""
    entries = [e for e in LEGEND if context or e.colour != CONTEXT_COLOUR]
    return "; ".join(e.text() for e in entries) + "."


def _data_uri(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


@functools.lru_cache(maxsize=1)
def local_leaflet() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``(default_js, default_css)`` for folium: Leaflet from ``xstatic-leaflet`` as ``data:`` URIs.

    The CSS's image references (layer control, default marker icons) are inlined as well, so
    nothing is fetched from anywhere. Raises MissingExtraError if xstatic-leaflet is missing.
    """
    base = leaflet_dir()
    js = (base / "leaflet.js").read_bytes()
    css = (base / "leaflet.css").read_text(encoding="utf-8")

    def inline_image(match: re.Match[str]) -> str:
        name = match.group(1)
        path = base / "images" / name
        if not path.is_file():
            return match.group(0)
        mime = "image/svg+xml" if name.endswith(".svg") else "image/png"
        return f"url({_data_uri(path.read_bytes(), mime)})"

    css = re.sub(r"url\(\s*['\"]?images/([^'\")]+)['\"]?\s*\)", inline_image, css)
    return (
        [("leaflet", _data_uri(js, "text/javascript"))],
        [("leaflet_css", _data_uri(css.encode("utf-8"), "text/css"))],
    )


class LocalMap(folium.Map):
    """A ``folium.Map`` that needs only Leaflet, inlined from the installed package (no CDN)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.default_js, self.default_css = local_leaflet()


class CircleMarkers(MacroElement):
    """Many Leaflet circle markers of one style, drawn by one script (``L.circleMarker`` each).

    Drawing the same markers as that many ``folium.CircleMarker`` children cost ~2 ms each per
    page run (420 markers: ~0.8 s of every map click); one element costs about as much as one
    marker. ``locations`` are (lat, lon) pairs in degrees; ``radius_px`` is each marker's radius
    in screen pixels (Leaflet's ``radius``; ``radius=`` is deprecated: a bare radius in this
    package is ambiguous); ``style`` takes the other options of ``folium.CircleMarker``
    (``color``, ``weight``, ``fill``, ...).
    """

    _template = Template(
        """
        {% macro script(this, kwargs) %}
            {{ this.locations|tojson }}.forEach(function (p) {
                L.circleMarker(p, {{ this.options|tojson }})
                    .addTo({{ this._parent.get_name() }});
            });
        {% endmacro %}
        """
    )

    @renamed(radius="radius_px")
    def __init__(self, locations: Iterable[Iterable[float]], *, radius_px: float = 10,
                 **style: Any) -> None:
        super().__init__()
        self._name = "CircleMarkers"
        self.locations = [[float(a), float(b)] for a, b in locations]
        self.options = path_options(line=False, radius=radius_px, **style)


def tile_layer(m: folium.Map, tiles: str | None) -> None:
    """Add the base-map tiles ``tiles`` names to ``m`` (:func:`lmdk_core.map_view.tile_source`):
    nothing for "none"/None/"" (no outside request), OpenStreetMap for "osm", else the
    ``{z}/{x}/{y}`` URL; ParameterError for anything else. Tiles are the one thing a map here
    loads from elsewhere: every tile request tells that server which area is being looked at."""
    url, attribution = tile_source(tiles)
    if url:
        name = "OpenStreetMap" if url == OSM_TILES else attribution
        folium.TileLayer(url, attr=attribution, name=name, max_zoom=19).add_to(m)


_Layer = TypeVar("_Layer", bound=folium.MacroElement)


def _passive(layer: _Layer) -> _Layer:
    """Make a vector layer ignore the mouse (clicks go to the map). folium's path options drop
    ``interactive``, so it is set on the rendered options directly."""
    options: dict[str, Any] = layer.options  # type: ignore[attr-defined]
    options["interactive"] = False
    return layer


def _points(parent: Any, lat: np.ndarray, lon: np.ndarray, max_points: int,
            **style: Any) -> None:
    """Add the finite points, thinned to ``max_points`` by :func:`map_view.thinned_points`
    (rounded to ~0.1 m: display only), to ``parent`` as one passive :class:`CircleMarkers`."""
    coords = thinned_points(lat, lon, max_points)
    if coords:
        _passive(CircleMarkers(coords, **style)).add_to(parent)


def _polyline(lat: np.ndarray, lon: np.ndarray, max_points: int,
              **style: Any) -> folium.PolyLine | None:
    """The finite points thinned to ``max_points`` vertices as one PolyLine (None below 2)."""
    coords = thinned_points(lat, lon, max_points)
    return folium.PolyLine(coords, **style) if len(coords) >= 2 else None


def context_layer(context: Mapping[str, Any]) -> folium.GeoJson:
    """Offline orientation layer from a GeoJSON FeatureCollection (e.g. the sample's context).

    Lines (roads) are drawn thin and grey, points (named places) as small grey dots, labelled by
    :func:`context_labels`. Nothing is fetched (plain Leaflet GeoJSON) and nothing is clickable:
    a click on a road goes to the map (adds a place there), never reads as an object click.
    """
    if not isinstance(context, Mapping) or context.get("type") != "FeatureCollection":
        raise ParameterError("context must be a GeoJSON FeatureCollection (a dict)")
    return folium.GeoJson(
        dict(context),
        name="context",
        control=False,
        style_function=lambda _f: {"color": CONTEXT_COLOUR, "weight": 1.5, "opacity": 0.6,
                                   "fillOpacity": 0.6, "fillColor": CONTEXT_COLOUR},
        marker=_passive(folium.CircleMarker(radius=3)),
        interactive=False,
    )


class TextLabels(MacroElement):
    """Small non-interactive text labels (``L.divIcon`` markers), drawn by one script.

    ``labels`` are (lat, lon, text) with text already HTML-escaped; ``style`` is the labels' CSS.
    One element instead of a folium Marker + DivIcon per label: each folium element costs ~2 ms
    of every page run (see :class:`CircleMarkers`).
    """

    _template = Template(
        """
        {% macro script(this, kwargs) %}
            {{ this.labels|tojson }}.forEach(function (p) {
                L.marker([p[0], p[1]], {interactive: false, keyboard: false, icon: L.divIcon({
                    className: "empty", iconSize: [0, 0], iconAnchor: [-5, 6],
                    html: '<div style="' + {{ this.style|tojson }} + '">' + p[2] + '</div>'})})
                    .addTo({{ this._parent.get_name() }});
            });
        {% endmacro %}
        """
    )

    def __init__(self, labels: Iterable[tuple[float, float, str]], *, style: str) -> None:
        super().__init__()
        self._name = "TextLabels"
        self.labels = [[float(lat), float(lon), str(text)] for lat, lon, text in labels]
        self.style = style


_LABEL_STYLE = (
    "font:11px sans-serif;color:#555;white-space:nowrap;text-shadow:0 0 2px #fff,0 0 2px #fff"
)


def context_labels(context: Mapping[str, Any]) -> folium.FeatureGroup:
    """Small grey text labels next to the context's named points and at the middle vertex of its
    named lines (" (schematic)" left out: the legend says so); non-interactive, offline."""
    fg = folium.FeatureGroup(name="context labels", control=False)
    labels = []
    for f in context.get("features", ()):
        geom, props = f.get("geometry") or {}, f.get("properties") or {}
        coords = geom.get("coordinates") or []
        if not props.get("name") or not coords:
            continue
        if geom.get("type") == "Point":
            lon, lat = coords[:2]
        elif geom.get("type") == "LineString":
            lon, lat = coords[len(coords) // 2][:2]
        else:
            continue
        labels.append((lat, lon, html.escape(str(props["name"]).removesuffix(" (schematic)"))))
    if labels:
        TextLabels(labels, style=_LABEL_STYLE).add_to(fg)
    return fg


def base_map(
    traj: Any,
    *,
    tiles: str | None = "none",
    max_points: int = 300,
    max_line_points: int = 2000,
    height: str | int = "100%",
    context: Mapping[str, Any] | None = None,
) -> LocalMap:
    """Deterministic base map: tiles, the true trajectory as one PolyLine plus downsampled points.

    The line has at most ``max_line_points`` vertices (evenly spaced, first and last kept; at city
    zoom a few thousand vertices are indistinguishable from all of them and cost far less to
    render and send). The content depends only on ``traj``, ``tiles`` and the two limits.
    With ``tiles="none"`` the map shows a plain background and makes no outside request;
    ``context`` (a GeoJSON FeatureCollection, see :func:`context_layer`) draws offline bearings
    under the trajectory.
    """
    lat, lon = lat_lon(traj, "traj")
    ok = np.isfinite(lat) & np.isfinite(lon)
    if ok.any():
        bounds = [
            [float(lat[ok].min()), float(lon[ok].min())],
            [float(lat[ok].max()), float(lon[ok].max())],
        ]
        centre = [(bounds[0][0] + bounds[1][0]) / 2, (bounds[0][1] + bounds[1][1]) / 2]
    else:
        bounds, centre = None, [0.0, 0.0]
    m = LocalMap(
        location=centre,
        zoom_start=13,
        tiles=None,
        control_scale=True,
        double_click_zoom=False,
        keyboard=False,  # its mousedown focus() scrolled a partly hidden map under the cursor
        height=height,
    )
    tile_layer(m, tiles)
    if context is not None:
        context_layer(context).add_to(m)
        context_labels(context).add_to(m)
    line = _polyline(lat, lon, max_line_points, color=TRUE_COLOUR, weight=2, opacity=0.7)
    if line is not None:
        _passive(line).add_to(m)
    _points(m, lat, lon, max_points, radius_px=2, color=TRUE_COLOUR, weight=1, fill=True,
            fill_opacity=0.8)
    if bounds is not None:
        m.fit_bounds(bounds, padding=(10, 10))
    return m


def _place_rows(places: Any) -> list[dict[str, Any]]:
    """Places in any form :func:`lmdk_core.places.as_places` accepts, as dicts with
    name/lat/lon/radius_m (validated; a bad row raises ParameterError naming it)."""
    return [{"name": p.name, "lat": p.lat, "lon": p.lon, "radius_m": p.place_radius_m}
            for p in as_places(places)]


def place_layer(
    places: Any, *, selected: str | None = None, name: str = "Landmark places"
) -> folium.FeatureGroup:
    """Landmark places as Circles (true radius in metres) with the place name as tooltip.

    The tooltip text is exactly the place name, so a click on a circle identifies the place.
    """
    fg = folium.FeatureGroup(name=name)
    for p in _place_rows(places):
        colour = SELECTED_COLOUR if p["name"] == selected else PLACE_COLOUR
        folium.Circle(
            [float(p["lat"]), float(p["lon"])],
            radius=float(p["radius_m"]),
            color=colour,
            weight=3 if p["name"] == selected else 2,
            fill=True,
            fill_opacity=0.25,
            tooltip=folium.Tooltip(html.escape(p["name"]), sticky=False),  # a name is text
        ).add_to(fg)
    return fg


def place_at(places: Any, lat: float, lon: float) -> str | None:
    """Name of the place whose circle contains (``lat``, ``lon``) in degrees, or None.

    A point is inside a place when its great-circle distance to the centre is at most the place's
    radius in metres; of several such places the one with the nearest centre wins (ties: the
    first listed). Non-finite coordinates are inside no place.
    """
    rows = _place_rows(places)
    if not rows or not (np.isfinite(lat) and np.isfinite(lon)):
        return None
    c_lat = np.array([float(r["lat"]) for r in rows])
    c_lon = np.array([float(r["lon"]) for r in rows])
    radius = np.array([float(r["radius_m"]) for r in rows])
    dist = haversine_m(c_lat, c_lon, float(lat), float(lon))
    inside = np.flatnonzero(dist <= radius)
    if inside.size == 0:
        return None
    return str(rows[int(inside[np.argmin(dist[inside])])]["name"])


def named_place_near(
    context: Mapping[str, Any] | None, lat: float, lon: float, within_m: float
) -> str | None:
    """Name of the context's named point feature nearest to (``lat``, ``lon``) if it lies within
    ``within_m`` metres, else None (e.g. to say where a suggested place is)."""
    if not context:
        return None
    named = [
        (f["properties"]["name"], *f["geometry"]["coordinates"][:2])
        for f in context.get("features", ())
        if f.get("geometry", {}).get("type") == "Point" and f.get("properties", {}).get("name")
    ]
    if not named:
        return None
    p_lon = np.array([float(n[1]) for n in named])
    p_lat = np.array([float(n[2]) for n in named])
    dist = haversine_m(p_lat, p_lon, float(lat), float(lon))
    best = int(np.argmin(dist))
    return str(named[best][0]) if dist[best] <= within_m else None


def format_lat_lon(lat: float, lon: float, digits: int = 2) -> str:
    """``'39.98° N, 116.31° E'``: degrees with hemisphere letters (no minus signs)."""
    ns = "N" if lat >= 0 else "S"
    ew = "E" if lon >= 0 else "W"
    return f"{abs(lat):.{digits}f}° {ns}, {abs(lon):.{digits}f}° {ew}"


def landmark_layer(
    traj: Any, landmarks: np.ndarray, *, max_points: int = 300, name: str = "Landmark timestamps",
    colour: str = LANDMARK_COLOUR,
) -> folium.FeatureGroup:
    """The true locations at landmark timestamps, downsampled to ``max_points`` markers
    (``colour``: e.g. :data:`DUMMY_COLOUR` for dummy landmarks, a private view)."""
    fg = folium.FeatureGroup(name=name)
    lat, lon = lat_lon(traj, "traj")
    where = np.flatnonzero(np.asarray(landmarks, bool))
    _points(fg, lat[where], lon[where], max_points, radius_px=4, color=colour, weight=1, fill=True,
            fill_opacity=0.9)
    return fg


def release_layer(
    release: Any, *, max_points: int = 300, name: str = "Released (perturbed)"
) -> folium.FeatureGroup:
    """Released locations as downsampled hollow markers (NaN = nothing released yet).

    No connecting line: noisy points joined in time order hide the map under a scribble.
    """
    fg = folium.FeatureGroup(name=name)
    lat, lon = lat_lon(release, "release")
    _points(fg, lat, lon, max_points, radius_px=3,
            color=RELEASE_COLOUR, weight=1.5, fill=False)
    return fg


def trajectory_map(
    traj: Any,
    *,
    places: Iterable[Any] = (),
    release: Any = None,
    landmarks: np.ndarray | None = None,
    tiles: str | None = "none",
    max_points: int = 300,
    selected: str | None = None,
) -> LocalMap:
    """One map with the trajectory, landmark places/timestamps and (optionally) a release.

    ``tiles``: ``"none"`` (default, no outside request), ``"osm"`` (OpenStreetMap tiles) or a
    custom ``{z}/{x}/{y}`` tile URL. ``places`` as in :func:`place_layer`; ``landmarks`` a bool
    mask over ``traj``; ``release`` a locations Release or a DataFrame with lat/lon.
    Works offline in a notebook too (Leaflet inlined).
    """
    m = base_map(traj, tiles=tiles, max_points=max_points)
    if landmarks is not None:
        landmark_layer(traj, landmarks, max_points=max_points).add_to(m)
    if release is not None:
        release_layer(release, max_points=max_points).add_to(m)
    place_layer(list(places), selected=selected).add_to(m)
    if tiles not in (None, "", "none") or release is not None or landmarks is not None:
        folium.LayerControl(collapsed=True).add_to(m)
    return m
