"""Spherical-earth geometry in metres: haversine distances and metric offsets.

All angles are decimal degrees (WGS84 latitude/longitude), all distances metres. The earth is a
sphere of mean radius :data:`EARTH_RADIUS_M`; at the scales used here (offsets of metres to a few
kilometres) the error against the ellipsoid is below 0.5 %.

The local projections here (:func:`offset_points`, :func:`degrees_to_metres`) serve display,
sample generation and grid discretisation; release noise never goes through them: it is added
in Earth-centred coordinates at each point's own position (:mod:`lmdk_core.noise.exact`).
"""

from __future__ import annotations

import numpy as np

EARTH_RADIUS_M = 6_371_008.8
"""Mean earth radius in metres (IUGG)."""

_M_PER_DEG = np.pi * EARTH_RADIUS_M / 180.0


def haversine_m(lat1, lon1, lat2, lon2) -> np.ndarray:
    """Great-circle distance in metres between points (vectorised, broadcasting numpy arrays)."""
    p1 = np.radians(np.asarray(lat1, dtype=np.float64))
    p2 = np.radians(np.asarray(lat2, dtype=np.float64))
    dphi = p2 - p1
    dlmb = np.radians(np.asarray(lon2, dtype=np.float64) - np.asarray(lon1, dtype=np.float64))
    a = np.sin(dphi / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dlmb / 2) ** 2
    return 2 * EARTH_RADIUS_M * np.arcsin(np.sqrt(np.clip(a, 0.0, 1.0)))


def metres_to_degrees(lat, east_m, north_m) -> tuple[np.ndarray, np.ndarray]:
    """Convert east/north offsets in metres at latitude ``lat`` to (Δlat, Δlon) in degrees.

    Local equirectangular projection; near the poles cos(lat) is floored so Δlon stays finite.
    """
    lat = np.asarray(lat, dtype=np.float64)
    dlat = np.asarray(north_m, dtype=np.float64) / _M_PER_DEG
    coslat = np.maximum(np.cos(np.radians(lat)), 1e-12)
    dlon = np.asarray(east_m, dtype=np.float64) / (_M_PER_DEG * coslat)
    return dlat, dlon


def offset_points(lat, lon, east_m, north_m) -> tuple[np.ndarray, np.ndarray]:
    """Move points by east/north metres (local projection at each point's latitude).

    Latitude is clamped to [-90, 90], longitude wrapped to [-180, 180).
    """
    dlat, dlon = metres_to_degrees(lat, east_m, north_m)
    new_lat = np.clip(np.asarray(lat, dtype=np.float64) + dlat, -90.0, 90.0)
    new_lon = np.asarray(lon, dtype=np.float64) + dlon
    out = (new_lon < -180.0) | (new_lon >= 180.0)
    if out.any():  # wrapping only the few out-of-range values is ~10x cheaper than a full modulo
        new_lon = np.atleast_1d(new_lon)
        new_lon[out] = (new_lon[out] + 180.0) % 360.0 - 180.0
        new_lon = new_lon.reshape(np.shape(out))
    return new_lat, new_lon


def degrees_to_metres(lat0, lon0, lat, lon) -> tuple[np.ndarray, np.ndarray]:
    """East/north metres of (lat, lon) relative to (lat0, lon0) in the local projection at lat0."""
    lat0 = np.asarray(lat0, dtype=np.float64)
    dlon = (np.asarray(lon, dtype=np.float64) - lon0 + 180.0) % 360.0 - 180.0
    east = dlon * _M_PER_DEG * np.cos(np.radians(lat0))
    north = (np.asarray(lat, dtype=np.float64) - lat0) * _M_PER_DEG
    return east, north
