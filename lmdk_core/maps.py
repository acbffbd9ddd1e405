"""Folium maps of trajectories, landmark places and released locations, with Leaflet served locally.

folium loads Leaflet (and jQuery, Bootstrap, Font Awesome) from CDNs by default; offline the map
silently never appears, and online every page view tells those CDNs that someone opened the map.
:class:`LocalMap` is a ``folium.Map`` whose only assets are Leaflet's JS and CSS read from the
installed ``xstatic-leaflet`` package and inlined as ``data:`` URIs (marker/layer images inlined
too), so a map with ``tiles="none"`` makes no outside request — in Streamlit (streamlit-folium)
and in a notebook alike. The layers drawn here are plain Leaflet (PolyLine, CircleMarker, Circle,
Tooltip) and need nothing else.

Costs (measured): each folium child costs ~2 ms to render (folium compiles each rendered
element's script as a Jinja template); a trajectory is therefore drawn as one PolyLine and its
points (at most ``max_points``, downsampled for display only) as one :class:`CircleMarkers`
element per layer, which draws them all with a single script.
"""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._optional import missing_extra
from .errors import ParameterError
from .trajectory import even_positions, lat_lon

try:
    import folium
    from branca.element import MacroElement
    from folium.template import Template
    from folium.vector_layers import path_options
except ImportError as exc:  # the core does not depend on folium
    raise missing_extra("folium", "app", __name__) from exc

__all__ = [
    "OSM_TILES",
    "CircleMarkers",
    "LocalMap",
    "base_map",
    "context_layer",
    "landmark_layer",
    "local_leaflet",
    "place_layer",
    "release_layer",
    "trajectory_map",
]

OSM_TILES = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
"""OpenStreetMap's standard tile URL (a request per tile: the tile server sees where you look)."""

_OSM_ATTRIBUTION = '&copy; <a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a>'

TRUE_COLOUR = "#0072B2"
RELEASE_COLOUR = "#D55E00"
LANDMARK_COLOUR = "#CC79A7"
PLACE_COLOUR = "#009E73"
SELECTED_COLOUR = "#E69F00"
CONTEXT_COLOUR = "#8C8C8C"
DUMMY_COLOUR = "#56B4E9"


def _data_uri(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


@functools.lru_cache(maxsize=1)
def local_leaflet() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``(default_js, default_css)`` for folium: Leaflet from ``xstatic-leaflet`` as ``data:`` URIs.

    The CSS's image references (layer control, default marker icons) are inlined as well, so
    nothing is fetched from anywhere. Raises MissingExtraError if xstatic-leaflet is missing.
    """
    try:
        from xstatic.pkg import leaflet as xleaflet
    except ImportError as exc:
        raise missing_extra("xstatic-leaflet", "app", __name__) from exc

    base = Path(xleaflet.BASE_DIR)
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
    marker. ``locations`` are (lat, lon) pairs in degrees; ``style`` takes the options of
    ``folium.CircleMarker`` (``radius`` in pixels, ``color``, ``weight``, ``fill``, ...).
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

    def __init__(self, locations: Iterable[Iterable[float]], *, radius: float = 10,
                 **style: Any) -> None:
        super().__init__()
        self._name = "CircleMarkers"
        self.locations = [[float(a), float(b)] for a, b in locations]
        self.options = path_options(line=False, radius=radius, **style)


def _display_index(n: int, max_points: int) -> np.ndarray:
    """Evenly spaced indices into ``n`` points, at most ``max_points``, first and last kept."""
    return even_positions(n, max(max_points, 2))


def _tile_layer(m: folium.Map, tiles: str | None) -> None:
    if tiles in (None, "", "none"):
        return
    if tiles == "osm":
        folium.TileLayer(
            OSM_TILES, attr=_OSM_ATTRIBUTION, name="OpenStreetMap", max_zoom=19
        ).add_to(m)
        return
    if not isinstance(tiles, str) or not tiles.startswith(("http://", "https://", "/")):
        raise ParameterError(
            f"tiles must be 'none', 'osm' or a tile URL with {{z}}/{{x}}/{{y}}, got {tiles!r}"
        )
    if not all(k in tiles for k in ("{z}", "{x}", "{y}")):
        raise ParameterError(f"custom tile URL must contain {{z}}, {{x}} and {{y}}: {tiles!r}")
    folium.TileLayer(tiles, attr="custom tiles", name="custom tiles").add_to(m)


def _polyline(lat: np.ndarray, lon: np.ndarray, **style: Any) -> folium.PolyLine | None:
    ok = np.isfinite(lat) & np.isfinite(lon)
    if ok.sum() < 2:
        return None
    coords = np.column_stack([lat[ok], lon[ok]]).round(6).tolist()
    return folium.PolyLine(coords, **style)


def context_layer(context: Mapping[str, Any]) -> folium.GeoJson:
    """Offline orientation layer from a GeoJSON FeatureCollection (e.g. the sample's context).

    Lines (roads) are drawn thin and grey, points (named places) as small grey circles; every
    feature's ``name`` property is its tooltip. Nothing is fetched: it is plain Leaflet GeoJSON.
    """
    if not isinstance(context, Mapping) or context.get("type") != "FeatureCollection":
        raise ParameterError("context must be a GeoJSON FeatureCollection (a dict)")
    return folium.GeoJson(
        dict(context),
        name="context",
        style_function=lambda _f: {"color": CONTEXT_COLOUR, "weight": 1.5, "opacity": 0.6,
                                   "fillOpacity": 0.6, "fillColor": CONTEXT_COLOUR},
        marker=folium.CircleMarker(radius=3),
        tooltip=folium.GeoJsonTooltip(fields=["name"], labels=False),
    )


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
    render and send). The content depends only on ``traj``, ``tiles`` and the two limits
    (streamlit-folium keys the map's identity on its content, so the base map must not change
    when places change).
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
        height=height,
    )
    _tile_layer(m, tiles)
    if context is not None:
        context_layer(context).add_to(m)
    keep = _display_index(len(lat), max_line_points)
    line = _polyline(lat[keep], lon[keep], color=TRUE_COLOUR, weight=2, opacity=0.7)
    if line is not None:
        line.add_to(m)
    idx = _display_index(len(lat), max_points)
    idx = idx[ok[idx]]
    if len(idx):
        CircleMarkers(
            zip(np.round(lat[idx], 6), np.round(lon[idx], 6), strict=True),
            radius=2,
            color=TRUE_COLOUR,
            weight=1,
            fill=True,
            fill_opacity=0.8,
        ).add_to(m)
    if bounds is not None:
        m.fit_bounds(bounds, padding=(10, 10))
    return m


def _place_rows(places: Any) -> list[dict[str, Any]]:
    """Places (Place objects, dicts, tuples or a DataFrame) as dicts with name/lat/lon/radius_m."""
    if isinstance(places, pd.DataFrame):
        places = places.to_dict("records")
    rows = []
    for i, p in enumerate(places or ()):
        if isinstance(p, dict):
            d = dict(p)
            if "radius_m" not in d and "place_radius_m" in d:
                d["radius_m"] = d["place_radius_m"]
        elif hasattr(p, "lat") and hasattr(p, "lon"):
            d = {"name": getattr(p, "name", None), "lat": p.lat, "lon": p.lon,
                 "radius_m": getattr(p, "place_radius_m", getattr(p, "radius_m", None))}
        else:
            t = tuple(p)
            d = {"lat": t[0], "lon": t[1], "radius_m": t[2], "name": t[3] if len(t) > 3 else None}
        d["name"] = str(d.get("name") or f"Place {i + 1}")
        rows.append(d)
    return rows


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
            tooltip=folium.Tooltip(p["name"], sticky=False),
        ).add_to(fg)
    return fg


def landmark_layer(
    traj: Any, landmarks: np.ndarray, *, max_points: int = 300, name: str = "Landmark timestamps",
    colour: str = LANDMARK_COLOUR,
) -> folium.FeatureGroup:
    """The true locations at landmark timestamps, downsampled to ``max_points`` markers
    (``colour``: e.g. :data:`DUMMY_COLOUR` for dummy landmarks, a private view)."""
    fg = folium.FeatureGroup(name=name)
    lat, lon = lat_lon(traj, "traj")
    where = np.flatnonzero(np.asarray(landmarks, bool))
    idx = where[_display_index(len(where), max_points)]
    idx = idx[np.isfinite(lat[idx]) & np.isfinite(lon[idx])]
    if len(idx):
        CircleMarkers(
            zip(lat[idx], lon[idx], strict=True),
            radius=4,
            color=colour,
            weight=1,
            fill=True,
            fill_opacity=0.9,
        ).add_to(fg)
    return fg


def release_layer(
    release: Any, *, max_points: int = 300, name: str = "Released (perturbed)"
) -> folium.FeatureGroup:
    """Released locations as downsampled hollow markers (NaN = nothing released yet).

    No connecting line: noisy points joined in time order hide the map under a scribble.
    """
    fg = folium.FeatureGroup(name=name)
    lat, lon = lat_lon(release, "release")
    ok = np.flatnonzero(np.isfinite(lat) & np.isfinite(lon))
    idx = ok[_display_index(len(ok), max_points)]
    if len(idx):
        CircleMarkers(
            zip(np.round(lat[idx], 6), np.round(lon[idx], 6), strict=True),
            radius=3,
            color=RELEASE_COLOUR,
            weight=1.5,
            fill=False,
        ).add_to(fg)
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
