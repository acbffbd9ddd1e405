"""What the interactive landmark map shows, as plain JSON-ready data, and its front end.

One map front end, ``landmark_map.js`` (Leaflet), draws the map in both hosts: the Jupyter
explorer (:class:`lmdk_core.jupyter.LandmarkMap`) and the dashboard (``dashboard/map_element.py``,
a Streamlit component in the page itself). :func:`map_view` builds what it draws; the hosts only
deliver it. Display only: points are evenly thinned and rounded to 1e-6° (~0.1 m); nothing here
is a release, and the true points it carries never leave the user's own page.

Offline by construction: Leaflet comes from the installed ``xstatic-leaflet`` package
(:func:`leaflet_dir`), and no tile server is named unless ``tiles`` asks for one
(:func:`tile_source`): a tile server sees which area you look at.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import palette
from ._optional import missing_extra
from .errors import ParameterError
from .places import as_places
from .trajectory import even_positions, lat_lon

__all__ = [
    "FRONT_END",
    "OSM_ATTRIBUTION",
    "OSM_TILES",
    "MapClick",
    "leaflet_dir",
    "map_view",
    "parse_click",
    "thinned_points",
    "tile_source",
]

FRONT_END = Path(__file__).with_name("landmark_map.js")
"""The map's JavaScript (a ``render({model, el})`` function; each host adds its export)."""
OSM_TILES = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
"""OpenStreetMap's standard tile URL (a request per tile: the tile server sees where you look)."""
OSM_ATTRIBUTION = '&copy; <a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a>'
COLOURS = {"track": palette.TRUE_COLOUR, "landmark": palette.LANDMARK_COLOUR,
           "dummy": palette.DUMMY_COLOUR, "released": palette.RELEASE_COLOUR,
           "place": palette.PLACE_COLOUR, "selected": palette.SELECTED_COLOUR,
           "context": palette.CONTEXT_COLOUR}
"""The front end's colours: the palette's, so the map, the charts and the legend agree."""


def tile_source(tiles: str | None) -> tuple[str, str]:
    """(tile URL template, attribution) for ``tiles``: "none"/None/"" → no tiles, "osm" →
    OpenStreetMap, else a ``http(s)://…{z}/{x}/{y}…`` URL (ParameterError otherwise)."""
    if tiles in (None, "", "none"):
        return "", ""
    if tiles == "osm":
        return OSM_TILES, OSM_ATTRIBUTION
    if not isinstance(tiles, str) or not tiles.startswith(("http://", "https://", "/")):
        raise ParameterError(
            f"tiles must be 'none', 'osm' or a tile URL with {{z}}/{{x}}/{{y}}, got {tiles!r}")
    if not all(k in tiles for k in ("{z}", "{x}", "{y}")):
        raise ParameterError(f"custom tile URL must contain {{z}}, {{x}} and {{y}}: {tiles!r}")
    return tiles, "custom tiles"


def thinned_points(lat: Any, lon: Any, max_points: int) -> list[list[float]]:
    """The finite (lat, lon) pairs, evenly thinned to at most ``max_points`` (first and last
    kept), rounded to 1e-6° (~0.1 m): for display only."""
    lat = np.asarray(lat, dtype=float)
    lon = np.asarray(lon, dtype=float)
    ok = np.flatnonzero(np.isfinite(lat) & np.isfinite(lon))
    if max_points <= 0 or ok.size == 0:
        return []
    ok = ok[even_positions(ok.size, max(max_points, 2))]
    out: list[list[float]] = np.column_stack([lat[ok], lon[ok]]).round(6).tolist()
    return out


def map_view(
    traj: Any,
    *,
    landmarks: Any = None,
    dummies: Any = None,
    release: Any = None,
    places: Iterable[Any] = (),
    selected: str | None = None,
    tiles: str | None = "none",
    context: Mapping[str, Any] | None = None,
    max_markers: int = 300,
    max_line_points: int = 2000,
    track_points: int = 0,
    height: str = "400px",
) -> dict[str, Any]:
    """Everything the map draws, as JSON-ready data (the model keys of ``landmark_map.js``).

    ``traj``: the true trajectory (lat/lon); ``landmarks`` and ``dummies``: bool masks over it
    (dummy landmarks are a private view); ``release``: released locations (NaN = not released);
    ``places``: anything :func:`lmdk_core.places.as_places` takes; ``tiles``: see
    :func:`tile_source`; ``context``: a GeoJSON FeatureCollection of offline bearings.
    ``max_markers`` markers per layer, ``max_line_points`` vertices of the line and
    ``track_points`` dots on it (all evenly thinned). Bad input raises ParameterError.
    """
    lat, lon = lat_lon(traj, "traj")

    def masked(mask: Any, name: str) -> list[list[float]]:
        if mask is None:
            return []
        m = np.asarray(mask, dtype=bool)
        if m.shape != lat.shape:
            raise ParameterError(f"{name} has {m.size} values for {lat.size} points")
        return thinned_points(lat[m], lon[m], max_markers)

    if context is not None and (not isinstance(context, Mapping)
                                or context.get("type") != "FeatureCollection"):
        raise ParameterError("context must be a GeoJSON FeatureCollection (a dict)")
    url, attribution = tile_source(tiles)
    rel = [] if release is None else thinned_points(*lat_lon(release, "release"), max_markers)
    return {
        "track": thinned_points(lat, lon, max_line_points),
        "track_points": thinned_points(lat, lon, track_points),
        "landmark_points": masked(landmarks, "landmarks"),
        "dummy_points": masked(dummies, "dummies"),
        "released": rel,
        "places": [{"name": p.name, "lat": p.lat, "lon": p.lon, "radius_m": p.place_radius_m}
                   for p in as_places(list(places))],
        "selected": selected,
        "tiles": url,
        "attribution": attribution,
        "context": dict(context) if context is not None else None,
        "colours": dict(COLOURS),
        "height": height,
    }


@dataclass(frozen=True)
class MapClick:
    """A click the map's front end reported: on the place circle named ``place``, or on the map
    (``place`` None). ``lat``/``lon`` in degrees (longitude wrapped into [-180, 180]); None only
    for a circle click that came without a position."""

    lat: float | None
    lon: float | None
    place: str | None = None


def _position(message: Mapping[str, Any]) -> tuple[float, float] | None:
    try:
        lat, lon = float(message["lat"]), float(message["lon"])
    except (KeyError, TypeError, ValueError):
        return None
    if not (math.isfinite(lat) and math.isfinite(lon) and -90.0 <= lat <= 90.0):
        return None
    if not -180.0 <= lon <= 180.0:  # Leaflet reports unwrapped longitudes after panning
        lon = (lon + 180.0) % 360.0 - 180.0
    return lat, lon


def parse_click(message: Any) -> MapClick | None:
    """The front end's message (``{"event": "map_click", "lat", "lon"}`` or ``{"event":
    "place_click", "name", "lat", "lon"}``) as a :class:`MapClick`; None for anything else or
    malformed (a map click off the globe, a place name that is not text), which hosts ignore."""
    if not isinstance(message, Mapping):
        return None
    event = message.get("event")
    where = _position(message)
    if event == "place_click" and isinstance(message.get("name"), str):
        lat, lon = where if where is not None else (None, None)
        return MapClick(lat, lon, message["name"])
    if event == "map_click" and where is not None:
        return MapClick(*where)
    return None


def leaflet_dir() -> Path:
    """The installed ``xstatic-leaflet`` files (leaflet.js, leaflet.css, images/): served or
    inlined by the hosts, never fetched from a CDN. MissingExtraError without the package."""
    try:
        from xstatic.pkg import leaflet as xleaflet
    except ImportError as exc:
        raise missing_extra("xstatic-leaflet", "app", __name__) from exc
    return Path(xleaflet.BASE_DIR)
