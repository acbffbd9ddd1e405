"""Landmark places: named circles (centre latitude/longitude in degrees, radius in metres).

A :class:`Place` marks a significant location (home, work, clinic ...); every timestamp whose
true location lies within ``place_radius_m`` of a place is a landmark (see
:func:`lmdk_core.landmarks.landmark_mask`, which accepts :func:`places_to_frame` output).

:func:`as_places` is the package's one place normaliser: Place objects, ``(lat, lon,
place_radius_m[, name])`` tuples, dicts and DataFrames all become validated Place objects (errors
name the row); :func:`places_to_frame` gives the same frame for the same places in any form.
Places convert to and from a pandas DataFrame (columns ``name, lat, lon, place_radius_m``) and a
GeoJSON FeatureCollection of Points (``coordinates = [lon, lat]``, properties ``name`` and
``place_radius_m``; files with the older ``radius_m`` still read),
plus a top-level ``"lmdk"`` marker naming the kind and format version). The GeoJSON round trip is
exact: Python writes floats with ``repr``, which reads back to the same double.
Invalid places raise :class:`~lmdk_core.errors.ParameterError`; unreadable GeoJSON raises
:class:`PlacesFormatError` naming the source, the feature (1-based) and the reason.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ._deprecation import renamed, renamed_property
from .errors import ParameterError, SourceFormatError

__all__ = [
    "DEFAULT_RADIUS_M",
    "PLACES_FORMAT_VERSION",
    "Place",
    "PlacesFormatError",
    "as_place",
    "as_places",
    "new_place_name",
    "parse_lat_lon",
    "places_from_frame",
    "places_from_geojson",
    "places_to_frame",
    "places_to_geojson",
    "rename_refusal",
    "unique_place_name",
]

DEFAULT_RADIUS_M = 100.0
"""Radius in metres given to a place that does not state one."""

PLACES_FORMAT_VERSION = 1
"""Version of the ``"lmdk"`` marker written into places GeoJSON."""

_COLUMNS = ["name", "lat", "lon", "place_radius_m"]
_RADIUS_KEYS = ("place_radius_m", "radius_m")  # the second: files written before 0.2


def new_place_name(taken: Iterable[str]) -> str:
    """A neutral name for a new place: ``"Place k"`` with k one more than the number of places
    ``taken`` (the next free k if that name is used). Nothing is guessed about what the place
    is (issue 27: the first click was always called "Home")."""
    names = set(taken)
    k = len(names) + 1
    while f"Place {k}" in names:
        k += 1
    return f"Place {k}"


def unique_place_name(base: str, taken: Iterable[str]) -> str:
    """``base`` if no place in ``taken`` has that name, else ``"base 2"``, ``"base 3"``…"""
    names = set(taken)
    if base not in names:
        return base
    k = 2
    while f"{base} {k}" in names:
        k += 1
    return f"{base} {k}"


def rename_refusal(old: str, new: str, taken: Iterable[str]) -> str | None:
    """Why place ``old`` cannot be called ``new`` (already stripped), or None if it can: a
    place needs a name, and names are unique (``taken``: every place's name, ``old`` too)."""
    if not new:
        return "A place needs a name; not renamed."
    if new != old and new in set(taken):
        return f"Place name {new!r} is already used; not renamed."
    return None


_HEMISPHERE = {"N": 1.0, "S": -1.0, "E": 1.0, "W": -1.0}


def parse_lat_lon(text: str) -> tuple[float, float]:
    """A typed position as (lat, lon) degrees: ``'39.98, 116.31'``, ``'39.98 116.31'`` or the
    page's own form ``'39.98° N, 116.31° E'`` (S and W negate). ParameterError says what is
    wrong (not two numbers, latitude outside [-90, 90], longitude outside [-180, 180])."""
    if not isinstance(text, str) or not text.strip():
        raise ParameterError("type a latitude and a longitude, e.g. 39.98, 116.31")
    parts = [p for p in re.split(r"[,;\s]+", text.replace("°", " ").strip()) if p]
    values: list[float] = []
    for part in parts:
        if part.upper() in _HEMISPHERE and values:
            values[-1] = abs(values[-1]) * _HEMISPHERE[part.upper()]
            continue
        try:
            values.append(float(part))
        except ValueError:
            raise ParameterError(f"{part!r} is not a number: type a latitude and a longitude "
                                 "in degrees, e.g. 39.98, 116.31") from None
    if len(values) != 2:
        raise ParameterError(f"expected two numbers (latitude, longitude), got {len(values)}: "
                             f"{text.strip()!r}")
    return (_coordinate(values[0], "latitude", -90, 90),
            _coordinate(values[1], "longitude", -180, 180))


class PlacesFormatError(SourceFormatError):
    """A places file (GeoJSON) cannot be read; the message names the source, feature and reason."""

    def __init__(self, reason: str, *, source: str | None = None, feature: int | None = None):
        self.feature = feature
        super().__init__(reason, source=source, position=feature, unit="feature",
                         default_source="<places>")


def _coordinate(value: Any, name: str, low: float, high: float) -> float:
    """``value`` as a finite float within [low, high], else ParameterError."""
    if isinstance(value, bool):
        raise ParameterError(f"{name} must be a number, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(x) or not low <= x <= high:
        raise ParameterError(f"{name} {x} outside [{low:g}, {high:g}]")
    return x


@dataclass(frozen=True, init=False)
class Place:
    """A named landmark circle: centre ``lat``/``lon`` (degrees, WGS84) and ``place_radius_m``
    (metres, > 0) — the place's own circle, not the noise radius ``radius_m`` of a release.

    ``Place(name, lat, lon, place_radius_m=100.0)``; the keyword ``radius_m=`` and the attribute
    ``radius_m`` still work until 0.3, with a DeprecationWarning naming ``place_radius_m``
    (:mod:`lmdk_core._deprecation`). A Place prints, compares and iterates in that order
    (name, lat, lon, place_radius_m); :meth:`as_tuple` gives the ``(lat, lon, radius, name)`` form
    of :func:`lmdk_core.landmarks.landmark_mask`, which also takes Place objects directly.
    Values are stored as plain ``str``/``float``; invalid values raise ParameterError.
    """

    name: str
    lat: float
    lon: float
    place_radius_m: float = DEFAULT_RADIUS_M

    @renamed(radius_m="place_radius_m")
    def __init__(self, name: str, lat: float, lon: float,
                 place_radius_m: float | None = None) -> None:
        if not isinstance(name, str):
            raise ParameterError(f"place name must be a string, got {name!r}")
        label = f"place {name!r}"
        r: Any = DEFAULT_RADIUS_M if place_radius_m is None else place_radius_m
        if isinstance(r, bool) or (not isinstance(r, (int, float)) and not hasattr(r, "__float__")):
            raise ParameterError(f"{label} place_radius_m must be a number, got {r!r}")
        r = float(r)
        if not math.isfinite(r) or r <= 0:
            raise ParameterError(
                f"{label} place_radius_m must be a finite number > 0 metres, got {r}"
            )
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "lat", _coordinate(lat, f"{label} latitude", -90.0, 90.0))
        object.__setattr__(self, "lon", _coordinate(lon, f"{label} longitude", -180.0, 180.0))
        object.__setattr__(self, "place_radius_m", r)

    # ``radius_m`` is the protection radius of a release; a place's own is place_radius_m
    radius_m = renamed_property("radius_m", "place_radius_m")

    def as_tuple(self) -> tuple[float, float, float, str]:
        """``(lat, lon, place_radius_m, name)``: the tuple form :func:`landmark_mask` accepts."""
        return (self.lat, self.lon, self.place_radius_m, self.name)

    # Iterates in construction order, like its repr.
    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int | slice) -> Any:
        return (self.name, self.lat, self.lon, self.place_radius_m)[i]

    def __iter__(self):
        return iter((self.name, self.lat, self.lon, self.place_radius_m))


_FORMS = ("Place objects, (lat, lon, place_radius_m[, name]) tuples, dicts with keys lat, lon, "
          "place_radius_m and name, or a DataFrame with those columns")


def _missing(value: Any) -> bool:
    """None or a float NaN (an empty cell of a table)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def as_place(item: Any, *, row: int = 1, default_name: str | None = None,
             default_radius_m: float = DEFAULT_RADIUS_M) -> Place:
    """One place from any accepted form, validated by :class:`Place`.

    Forms: a :class:`Place`; a mapping with ``lat``, ``lon`` and optional ``place_radius_m``
    (or the older ``radius_m``) and ``name``; a sequence ``(lat, lon, place_radius_m[, name])``.
    A missing (None/NaN) name becomes ``default_name`` or ``"place <row>"``; a missing radius
    ``default_radius_m``. Names are converted with ``str``. Raises ParameterError starting with
    ``places row <row>:`` and the reason.
    """
    if isinstance(item, Place):
        return item
    if isinstance(item, Mapping):
        missing = [k for k in ("lat", "lon") if k not in item]
        if missing:
            raise ParameterError(f"places row {row}: lacks {' and '.join(missing)}")
        name, lat, lon = item.get("name"), item["lat"], item["lon"]
        radius = next((item[k] for k in _RADIUS_KEYS if k in item), None)
    elif (isinstance(item, (str, bytes)) or not hasattr(item, "__len__")
          or not hasattr(item, "__getitem__") or len(item) not in (3, 4)):
        raise ParameterError(
            f"places row {row}: expected (lat, lon, place_radius_m[, name]), a dict or a "
            f"Place, got {item!r}")
    else:
        lat, lon, radius = item[0], item[1], item[2]
        name = item[3] if len(item) == 4 else None
    if _missing(name):
        name = default_name if default_name is not None else f"place {row}"
    try:
        return Place(str(name), lat, lon, default_radius_m if _missing(radius) else radius)
    except ParameterError as exc:
        raise ParameterError(f"places row {row}: {exc}") from None


def as_places(places: Any) -> list[Place]:
    """Validated :class:`Place` objects from any accepted form of a collection of places.

    ``places``: None or an iterable of Place objects, ``(lat, lon, place_radius_m[, name])``
    tuples or dicts (forms may be mixed), or a DataFrame with columns ``lat``, ``lon`` and
    optional ``name`` and ``place_radius_m`` (or the older ``radius_m``; extra columns ignored).
    Missing names become ``"place <row>"`` (1-based), missing radii :data:`DEFAULT_RADIUS_M`.
    This is the one place normaliser of the package (landmarks, maps, pattern regions, the
    notebook explorer use it). Raises ParameterError naming the row (1-based) and the reason.
    """
    if places is None:
        return []
    if isinstance(places, pd.DataFrame):
        missing = [c for c in ("lat", "lon") if c not in places.columns]
        if missing:
            raise ParameterError(f"places table lacks column(s) {', '.join(missing)}")
        keys = [c for c in ("name", "lat", "lon", *_RADIUS_KEYS) if c in places.columns]
        rcol = next((c for c in _RADIUS_KEYS if c in keys), None)
        keys = [c for c in keys if c not in _RADIUS_KEYS or c == rcol]  # one radius column
        columns = [places[c].tolist() for c in keys]
        items: list[Any] = [dict(zip(keys, values, strict=True))
                            for values in zip(*columns, strict=True)] if keys else []
    elif isinstance(places, (Place, Mapping, str, bytes)):
        raise ParameterError(f"places must be a collection of {_FORMS}; got one "
                             f"{type(places).__name__}")
    else:
        try:
            items = list(places)
        except TypeError:
            raise ParameterError(
                f"places must be a list of {_FORMS}; got {type(places).__name__}") from None
    return [as_place(item, row=row) for row, item in enumerate(items, start=1)]


def places_to_frame(places: Any) -> pd.DataFrame:
    """One row per place: columns ``name`` (str), ``lat``, ``lon``, ``place_radius_m`` (float64).

    Accepts every form :func:`as_places` accepts (Place objects, tuples, dicts, a DataFrame) and
    gives the same frame for the same places whatever the form; ParameterError names a bad row.
    """
    ps = as_places(places)
    return pd.DataFrame(
        {
            "name": pd.Series([p.name for p in ps], dtype=object),
            "lat": pd.Series([p.lat for p in ps], dtype="float64"),
            "lon": pd.Series([p.lon for p in ps], dtype="float64"),
            "place_radius_m": pd.Series([p.place_radius_m for p in ps], dtype="float64"),
        },
        columns=_COLUMNS,
    )


def places_from_frame(df: pd.DataFrame) -> list[Place]:
    """Places from a DataFrame with ``lat`` and ``lon`` columns (``name`` and ``place_radius_m``
    — or the older ``radius_m`` — optional); see :func:`as_places` for defaults and errors."""
    if not isinstance(df, pd.DataFrame):
        raise ParameterError(f"places must be a DataFrame, got {type(df).__name__}")
    return as_places(df)


def places_to_geojson(places: Any) -> dict:
    """GeoJSON FeatureCollection of Points (``[lon, lat]``), properties ``name`` and
    ``place_radius_m``. The file holds the user's places: it is private."""
    places = as_places(places)
    return {
        "type": "FeatureCollection",
        "lmdk": {"kind": "places", "version": PLACES_FORMAT_VERSION},
        "features": [
            {
                "type": "Feature",
                "geometry": {"type": "Point", "coordinates": [p.lon, p.lat]},
                "properties": {"name": p.name, "place_radius_m": p.place_radius_m},
            }
            for p in places
        ],
    }


def _feature_place(feature: Any, number: int, source: str) -> Place:
    def fail(reason: str) -> PlacesFormatError:
        return PlacesFormatError(reason, source=source, feature=number)

    if not isinstance(feature, Mapping) or feature.get("type") != "Feature":
        raise fail('not a GeoJSON Feature (expected an object with "type": "Feature")')
    geometry = feature.get("geometry")
    if not isinstance(geometry, Mapping) or geometry.get("type") != "Point":
        kind = geometry.get("type") if isinstance(geometry, Mapping) else geometry
        raise fail(f"geometry must be a Point, got {kind!r}")
    coords = geometry.get("coordinates")
    if not isinstance(coords, (list, tuple)) or len(coords) not in (2, 3):
        raise fail(f"Point coordinates must be [longitude, latitude], got {coords!r}")
    props = feature.get("properties") or {}
    if not isinstance(props, Mapping):
        raise fail(f"properties must be an object, got {props!r}")
    name = props.get("name", f"place {number}")
    if name is None:
        name = f"place {number}"
    if not isinstance(name, str):
        raise fail(f"name must be a string, got {name!r}")
    radius = next((props[k] for k in _RADIUS_KEYS if k in props), DEFAULT_RADIUS_M)
    try:
        return Place(name, coords[1], coords[0], DEFAULT_RADIUS_M if radius is None else radius)
    except ParameterError as exc:
        raise fail(str(exc)) from None


def places_from_geojson(obj: dict | str | bytes, source: str = "places.geojson") -> list[Place]:
    """Places from a GeoJSON FeatureCollection (or a single Feature) of Points.

    ``obj`` is the parsed object or its JSON text. Each feature needs Point coordinates
    ``[lon, lat]`` (an altitude is ignored); properties ``name`` (default ``"place <n>"``) and
    ``place_radius_m`` (or the older ``radius_m``; default :data:`DEFAULT_RADIUS_M`) are
    optional. Raises PlacesFormatError naming
    ``source``, the feature number (1-based) and the reason.
    """
    if isinstance(obj, (bytes, bytearray)):
        try:
            obj = obj.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise PlacesFormatError(f"not UTF-8 text ({exc.reason})", source=source) from None
    if isinstance(obj, str):
        try:
            obj = json.loads(obj)
        except json.JSONDecodeError as exc:
            raise PlacesFormatError(
                f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", source=source
            ) from None
    if not isinstance(obj, Mapping):
        raise PlacesFormatError(
            f"expected a GeoJSON object, got {type(obj).__name__}", source=source
        )
    kind = obj.get("type")
    if kind == "Feature":
        features: Any = [obj]
    elif kind == "FeatureCollection":
        features = obj.get("features")
        if not isinstance(features, list):
            raise PlacesFormatError('FeatureCollection lacks a "features" list', source=source)
    else:
        raise PlacesFormatError(
            f"expected a GeoJSON FeatureCollection of Points, got type {kind!r}", source=source
        )
    return [_feature_place(f, i, source) for i, f in enumerate(features, start=1)]
