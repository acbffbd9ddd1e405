"""The public release grid: square cells of ``cell_m`` metres over a bounding box × time bins.

Everything here is *public* and chosen without looking at the data (the bounding box, the cell
size, the start time, the bin length and the number of bins), so the set of published cells and
bins reveals nothing. Points outside the box or the time window are not part of the release.

Cells: the box is cut into rows of ``cell_m`` metres of latitude and columns of ``cell_m`` metres
of longitude measured at the box's centre latitude (a local equirectangular grid; cells are
exactly ``cell_m`` tall and ``cell_m·cos(lat)/cos(lat_c)`` wide, within 1 % over 50 km at
Beijing's latitude). Cell id = row · n_cols + col; bin id = ⌊(time − start) / bin⌋.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ParameterError
from ..geo import EARTH_RADIUS_M
from ..times import NS_PER_S, utc_timestamp
from ..validation import check_int, check_positive

__all__ = ["BEIJING_BBOX", "Grid"]

_M_PER_DEG = math.pi * EARTH_RADIUS_M / 180.0

BEIJING_BBOX = (39.70, 40.15, 116.10, 116.70)
"""(lat_min, lat_max, lon_min, lon_max) of the synthetic city and the default release box."""


@dataclass(frozen=True)
class Grid:
    """Public grid: ``bbox`` (lat_min, lat_max, lon_min, lon_max) degrees, ``cell_m`` metres,
    ``start`` (UTC), ``bin_s`` seconds per time bin, ``n_bins`` bins."""

    bbox: tuple[float, float, float, float]
    cell_m: float
    start: pd.Timestamp
    bin_s: int
    n_bins: int

    def __post_init__(self) -> None:
        try:
            box = tuple(float(v) for v in self.bbox)
        except (TypeError, ValueError):
            raise ParameterError(f"bbox must be 4 numbers, got {self.bbox!r}") from None
        if len(box) != 4 or not all(math.isfinite(v) for v in box):
            raise ParameterError(f"bbox must be 4 finite numbers, got {self.bbox!r}")
        la0, la1, lo0, lo1 = box
        if not (-90 <= la0 < la1 <= 90 and -180 <= lo0 < lo1 <= 180):
            raise ParameterError(
                f"bbox must be (lat_min < lat_max, lon_min < lon_max) in degrees, got {box}"
            )
        object.__setattr__(self, "bbox", box)
        object.__setattr__(self, "cell_m", check_positive(self.cell_m, "cell_m"))
        object.__setattr__(self, "start", utc_timestamp(self.start, "start"))
        object.__setattr__(self, "bin_s", check_int(self.bin_s, "bin_s"))
        object.__setattr__(self, "n_bins", check_int(self.n_bins, "n_bins"))
        if self.n_cells * self.n_bins > 200_000_000:
            raise ParameterError(
                f"grid too large: {self.n_rows}x{self.n_cols} cells x {self.n_bins} bins "
                "exceeds 2e8 published counts; use larger cells, bins or a smaller box"
            )

    @classmethod
    def covering(cls, *, bbox: Any = BEIJING_BBOX, cell_m: float = 500.0, start: Any,
                 end: Any, bin_s: int = 3600) -> Grid:
        """Grid whose bins cover [start, end) (public times), ``bin_s`` seconds each."""
        t0, t1 = utc_timestamp(start, "start"), utc_timestamp(end, "end")
        if t1 <= t0:
            raise ParameterError(f"end ({t1}) must be after start ({t0})")
        b = check_int(bin_s, "bin_s")
        n = math.ceil((t1 - t0).total_seconds() / b)
        return cls(bbox=bbox, cell_m=cell_m, start=t0, bin_s=b, n_bins=n)

    @property
    def dlat(self) -> float:
        return self.cell_m / _M_PER_DEG

    @property
    def dlon(self) -> float:
        lat_c = 0.5 * (self.bbox[0] + self.bbox[1])
        return self.cell_m / (_M_PER_DEG * max(math.cos(math.radians(lat_c)), 1e-6))

    @property
    def n_rows(self) -> int:
        return max(1, math.ceil((self.bbox[1] - self.bbox[0]) / self.dlat))

    @property
    def n_cols(self) -> int:
        return max(1, math.ceil((self.bbox[3] - self.bbox[2]) / self.dlon))

    @property
    def n_cells(self) -> int:
        return self.n_rows * self.n_cols

    @property
    def shape(self) -> tuple[int, int, int]:
        """(n_bins, n_rows, n_cols): the shape of a published count array."""
        return (self.n_bins, self.n_rows, self.n_cols)

    def bin_starts(self) -> pd.DatetimeIndex:
        return pd.date_range(self.start, periods=self.n_bins, freq=pd.Timedelta(seconds=self.bin_s))

    def cell_centres(self) -> tuple[np.ndarray, np.ndarray]:
        """(lat, lon) of the row centres and column centres (1-D arrays, degrees)."""
        lat = self.bbox[0] + (np.arange(self.n_rows) + 0.5) * self.dlat
        lon = self.bbox[2] + (np.arange(self.n_cols) + 0.5) * self.dlon
        return lat, lon

    def locate(self, time_ns: np.ndarray, lat: np.ndarray, lon: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
        """(bin id, cell id) int64 arrays per point; −1 in both where outside the grid.

        Computed in place (three point-sized arrays and a mask, no further temporaries)."""
        la = np.asarray(lat, dtype=np.float64)
        lo = np.asarray(lon, dtype=np.float64)
        b = np.asarray(time_ns, dtype=np.int64) - self.start.value
        np.floor_divide(b, self.bin_s * NS_PER_S, out=b)
        r = la - self.bbox[0]
        r /= self.dlat
        np.floor(r, out=r)
        c = lo - self.bbox[2]
        c /= self.dlon
        np.floor(c, out=c)
        ok = b >= 0  # each condition below is one temporary at a time (a tuple of them
        ok &= b < self.n_bins  # would hold all seven at once)
        ok &= r >= 0
        ok &= r < self.n_rows
        ok &= c >= 0
        ok &= c < self.n_cols
        ok &= la <= self.bbox[1]
        ok &= lo <= self.bbox[3]
        r *= self.n_cols
        r += c  # row·n_cols + col, exact in float64 inside the grid
        del c
        np.logical_not(ok, out=ok)  # now: outside
        np.copyto(r, -1.0, where=ok)
        np.copyto(b, -1, where=ok)
        return b, r.astype(np.int64)

    def to_dict(self) -> dict:
        """JSON-ready public description of the grid."""
        return {"bbox": list(self.bbox), "cell_m": self.cell_m,
                "start": self.start.isoformat().replace("+00:00", "Z"), "bin_s": self.bin_s,
                "n_bins": self.n_bins, "n_rows": self.n_rows, "n_cols": self.n_cols,
                "dlat": self.dlat, "dlon": self.dlon}
