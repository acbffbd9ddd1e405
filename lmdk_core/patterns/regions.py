"""Named regions that turn locations into region codes: places (circles) or a square grid.

Both kinds expose the same two operations, vectorised over points:

* ``assign(lat, lon)`` — the region code of each point (-1: in no region). For places, a point in
  several circles belongs to the nearest centre;
* ``sample(codes, rng)`` — a location drawn uniformly inside each given region (the public
  distribution used for the attributes of released private-type events, see
  :mod:`lmdk_core.patterns.ppm`): uniform in the disc for places, in the cell for the grid.
  Uniforms come from the words of a :class:`~lmdk_core.noise.RandomSource` (``rng=None``: a
  fresh ChaCha20 source, as for every real release; a seed or Generator: simulations).

Region definitions are public parameters (the user's places, a grid over a fixed area); they
never depend on the data unless the caller builds them from it (``GridRegions.covering`` says so).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._deprecation import renamed
from ..errors import ParameterError
from ..geo import degrees_to_metres, haversine_m, offset_points
from ..noise import as_source
from ..places import places_to_frame
from ..validation import as_finite_array, check_positive

__all__ = ["GridRegions", "PlaceRegions", "as_regions", "uniforms"]


def uniforms(rng: Any, n: int) -> np.ndarray:
    """``n`` uniforms on the 2^-53 grid of [0, 1), from the 64-bit words of ``rng`` as a
    RandomSource (None: a fresh ChaCha20 source; a RandomSource: its words, so a real release
    draws them from its own keystream; a seed or Generator: reproducible, simulations only)."""
    words = as_source(rng).words(int(n))
    return (words >> np.uint64(11)).astype(np.float64) * 2.0**-53


@dataclass(frozen=True)
class PlaceRegions:
    """Circular regions: names, centres (degrees) and place radii ``place_radius_m`` (metres)."""

    names: tuple[str, ...]
    lat: np.ndarray
    lon: np.ndarray
    place_radius_m: np.ndarray

    @classmethod
    def from_places(cls, places: Any) -> PlaceRegions:
        """From places in any form :func:`lmdk_core.places.as_places` accepts (Place objects,
        tuples, dicts, a frame with ``name, lat, lon, place_radius_m``); names must be unique."""
        frame = places_to_frame(places)
        names = [str(n) for n in frame["name"]]
        if not names:
            raise ParameterError("give at least one place")
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise ParameterError(f"place names must be unique; repeated: {', '.join(dup)}")
        la, lo, r = (frame[c].to_numpy() for c in ("lat", "lon", "place_radius_m"))
        return cls(tuple(names), la, lo, r)

    def assign(self, lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
        """Code of the nearest place whose circle holds each point (inclusive), else -1.

        Points are sorted by latitude once; each place takes the latitude band and longitude
        range that surely contain its circle, then measures great-circle distances there only.
        """
        lat = np.asarray(lat, dtype=np.float64)
        lon = np.asarray(lon, dtype=np.float64)
        out = np.full(lat.size, -1, dtype=np.int32)
        best = np.full(lat.size, np.inf)
        # 1.01 x the circle's extent in degrees (spherical earth; cos floored near the poles)
        dlat = np.degrees(self.place_radius_m / 6_371_008.8) * 1.01 + 1e-9
        dlon = dlat / np.maximum(np.cos(np.radians(np.abs(self.lat) + dlat)), 1e-6)
        by_lat = np.argsort(lat)
        lat_sorted = lat[by_lat]
        lo_idx = np.searchsorted(lat_sorted, self.lat - dlat, side="left")
        hi_idx = np.searchsorted(lat_sorted, self.lat + dlat, side="right")
        for i in range(len(self.names)):
            band = by_lat[lo_idx[i]:hi_idx[i]]
            dl = np.abs((lon[band] - self.lon[i] + 180.0) % 360.0 - 180.0)
            cand = band[dl <= dlon[i]]
            if not cand.size:
                continue
            d = haversine_m(lat[cand], lon[cand], self.lat[i], self.lon[i])
            hit = (d <= self.place_radius_m[i]) & (d < best[cand])
            out[cand[hit]] = i
            best[cand[hit]] = d[hit]
        return out

    @renamed(positional=("rng",))
    def sample(self, codes: np.ndarray, *, rng: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Uniform points in the given discs (radius √U·r, angle U[0, 2π)); 2n words of
        ``rng`` (:func:`uniforms`)."""
        codes = np.asarray(codes, dtype=np.int64)
        u = uniforms(rng, 2 * codes.size)
        rho = np.sqrt(u[:codes.size]) * self.place_radius_m[codes]
        theta = u[codes.size:] * 2 * np.pi
        return offset_points(self.lat[codes], self.lon[codes], rho * np.cos(theta),
                             rho * np.sin(theta))


# ``radius_m`` is the geo-indistinguishability radius only: the old keyword warns for one release.
PlaceRegions.__init__ = renamed(radius_m="place_radius_m")(PlaceRegions.__init__)  # type: ignore[method-assign]


@dataclass(frozen=True)
class GridRegions:
    """A square grid of ``cell_m``-metre cells, ``n_rows`` x ``n_cols``, south-west corner given.

    Cells use the local projection at the south-west corner (fine for a city; not for areas of
    hundreds of km). Cell names are ``r<row>c<col>``, row 0 in the south.
    """

    lat0: float
    lon0: float
    cell_m: float
    n_rows: int
    n_cols: int

    def __post_init__(self) -> None:
        check_positive(self.cell_m, "cell_m")
        if self.n_rows < 1 or self.n_cols < 1:
            raise ParameterError("a grid needs at least one row and one column")
        if self.n_rows * self.n_cols > 1_000_000:
            raise ParameterError(f"grid of {self.n_rows} x {self.n_cols} cells is too large "
                                 "(limit 1,000,000); use a larger cell_m")

    @classmethod
    def covering(cls, lat: Any, lon: Any, cell_m: float) -> GridRegions:
        """The smallest grid covering the given points (a data-derived, hence non-public, grid)."""
        la = as_finite_array(lat, "lat")
        lo = as_finite_array(lon, "lon")
        if la.size == 0:
            raise ParameterError("no points to cover with a grid")
        cell = check_positive(cell_m, "cell_m")
        lat0, lon0 = float(la.min()), float(lo.min())
        east, north = degrees_to_metres(lat0, lon0, la.max(), lo.max())
        return cls(lat0, lon0, cell, int(north // cell) + 1, int(east // cell) + 1)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f"r{r}c{c}" for r in range(self.n_rows) for c in range(self.n_cols))

    def assign(self, lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
        east, north = degrees_to_metres(self.lat0, self.lon0, lat, lon)
        col = np.floor(east / self.cell_m)
        row = np.floor(north / self.cell_m)
        ok = (col >= 0) & (col < self.n_cols) & (row >= 0) & (row < self.n_rows)
        code = np.where(ok, row * self.n_cols + col, -1)
        return code.astype(np.int32)

    @renamed(positional=("rng",))
    def sample(self, codes: np.ndarray, *, rng: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Uniform points in the given cells; 2n words of ``rng`` (:func:`uniforms`)."""
        codes = np.asarray(codes, dtype=np.int64)
        row, col = np.divmod(codes, self.n_cols)
        u = uniforms(rng, 2 * codes.size)
        east = (col + u[:codes.size]) * self.cell_m
        north = (row + u[codes.size:]) * self.cell_m
        return offset_points(np.full(codes.size, self.lat0), np.full(codes.size, self.lon0),
                             east, north)


Regions = PlaceRegions | GridRegions


def as_regions(regions: Any) -> Regions:
    """Pass regions through, or build PlaceRegions from places (list of Place or a frame)."""
    if isinstance(regions, (PlaceRegions, GridRegions)):
        return regions
    if isinstance(regions, (pd.DataFrame, Iterable)) and not isinstance(regions, (str, bytes)):
        return PlaceRegions.from_places(regions)
    raise ParameterError("regions must be PlaceRegions, GridRegions, Place objects or a frame")
