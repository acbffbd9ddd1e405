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

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ._optional import missing_extra
from .errors import ParameterError
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
from .trajectory import even_positions, lat_lon

__all__ = [
    "FRONT_END",
    "OSM_ATTRIBUTION",
    "OSM_TILES",
    "leaflet_dir",
    "map_view",
    "thinned_points",
    "tile_source",
]

FRONT_END = Path(__file__).with_name("landmark_map.js")
"""The map's JavaScript (a ``render({model, el})`` function; each host adds its export)."""
OSM_TILES = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
"""OpenStreetMap's standard tile URL (a request per tile: the tile server sees where you look)."""
OSM_ATTRIBUTION = '&copy; <a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a>'
COLOURS = {"track": TRUE_COLOUR, "landmark": LANDMARK_COLOUR, "dummy": DUMMY_COLOUR,
           "released": RELEASE_COLOUR, "place": PLACE_COLOUR, "selected": SELECTED_COLOUR,
           "context": CONTEXT_COLOUR}
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


def leaflet_dir() -> Path:
    """The installed ``xstatic-leaflet`` files (leaflet.js, leaflet.css, images/): served or
    inlined by the hosts, never fetched from a CDN. MissingExtraError without the package."""
    try:
        from xstatic.pkg import leaflet as xleaflet
    except ImportError as exc:
        raise missing_extra("xstatic-leaflet", "app", __name__) from exc
    return Path(xleaflet.BASE_DIR)
