"""Landmark timestamps: which events of a trajectory are sensitive places.

A timestamp is a *landmark* when its location lies within the protection radius of any place
(great-circle distance in metres, inclusive). Landmarks are returned as a bool mask over the
trajectory's timestamps, the form every scheme in :mod:`lmdk_core.release` accepts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .accounting import as_landmark_mask
from .errors import ParameterError
from .geo import EARTH_RADIUS_M, haversine_m
from .places import as_places
from .trajectory import lat_lon
from .validation import as_finite_array

__all__ = ["landmark_mask", "landmarks_from_indices", "place_masks"]

_BAND_SLACK = 1e-9
"""Relative slack of the latitude band (:func:`place_masks`), far above haversine's rounding."""


def trajectory_points(traj: Any) -> tuple[np.ndarray, np.ndarray]:
    """Validated (lat, lon) float arrays (finite, |lat| ≤ 90) of anything :func:`lat_lon` takes."""
    lat, lon = lat_lon(traj, "trajectory")
    lat = as_finite_array(lat, "lat")
    lon = as_finite_array(lon, "lon")
    if np.any(np.abs(lat) > 90):
        raise ParameterError("lat must lie in [-90, 90]")
    return lat, lon


def _places(places: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lat, lon, place_radius_m) float arrays of any form :func:`as_places` accepts."""
    ps = as_places(places)
    return (np.array([p.lat for p in ps], dtype=np.float64),
            np.array([p.lon for p in ps], dtype=np.float64),
            np.array([p.place_radius_m for p in ps], dtype=np.float64))


def place_masks(traj: Any, places: Any) -> np.ndarray:
    """Bool array of shape (places, timestamps): True where the point is within that place.

    ``traj`` and ``places`` as for :func:`landmark_mask`. A point is inside a place when its
    haversine distance to the centre is ≤ place_radius_m (inclusive).

    Only points in the place's latitude band are measured: the great-circle distance is at least
    R·|Δφ| (Δφ the latitude difference in radians), so a point with R·|Δφ| > radius is outside.
    The band is widened by a relative 1e-9 and 1 µm, far more than the rounding of either
    side, so the result is the haversine test's on every point (tests/test_landmarks.py checks
    it against a scalar loop, at the poles and across the antimeridian too). On a city-sized
    trace this measures a few per cent of the points.
    """
    lat, lon = trajectory_points(traj)
    plat, plon, rad = _places(places)
    out = np.zeros((plat.size, lat.size), dtype=bool)
    if lat.size == 0 or plat.size == 0:
        return out
    phi = np.radians(lat)
    for j in range(plat.size):  # a few places; each a vectorised pass over the points
        out[j] = within_place(phi, lat, lon, plat[j], plon[j], rad[j])
    return out


def within_place(phi: np.ndarray, lat: np.ndarray, lon: np.ndarray, plat: Any, plon: Any,
                 rad: Any) -> np.ndarray:
    """Bool per point: its haversine distance to the place centre (plat, plon) is ≤ rad metres
    (inclusive). ``phi`` = radians(lat), computed once by the caller; the place is one (scalars)
    or one per point (arrays aligned with the points). Only points in the place's latitude band
    are measured (:func:`place_masks` says why that is exact)."""
    reach = rad * (1.0 + _BAND_SLACK) + 1e-6
    band = np.flatnonzero(np.abs(phi - np.radians(plat)) * EARTH_RADIUS_M <= reach)
    out = np.zeros(phi.shape, dtype=bool)
    if band.size:
        def at(a: Any) -> Any:
            return a[band] if np.ndim(a) else a

        out[band] = haversine_m(lat[band], lon[band], at(plat), at(plon)) <= at(rad)
    return out


def landmark_mask(traj: Any, places: Any) -> np.ndarray:
    """Bool mask, one entry per timestamp of ``traj``: True where the point is within a place.

    ``traj``: one user's DataFrame (columns lat, lon; others ignored) or a ``(lat, lon)`` pair of
    arrays in decimal degrees. ``places``: any form :func:`lmdk_core.places.as_places` accepts
    (Place objects, ``(lat, lon, place_radius_m[, name])`` tuples, dicts, a DataFrame; bad rows
    raise ParameterError naming the row). A point is inside a place when its haversine distance
    to the centre is ≤ place_radius_m (inclusive); see :func:`place_masks`.
    """
    return np.asarray(place_masks(traj, places).any(axis=0), dtype=bool)  # (0, n) -> all False


def landmarks_from_indices(n: int, indices: Any) -> np.ndarray:
    """Bool mask of length ``n`` with True at the given integer timestamp indices (0-based).

    Duplicates are allowed; an index outside [0, n) raises ParameterError.
    """
    arr = np.asarray(indices)
    if arr.dtype == np.bool_:
        raise ParameterError("indices must be integer timestamps, not a bool mask")
    return as_landmark_mask(arr, n)
