"""The data a scheme releases — one value per timestamp, or one location — behind one interface.

Every scheme is written once against :class:`Space`; the space supplies the noise mechanism
(Laplace for values, planar Laplace for locations), the noise scale used by data-dependent
decisions, and a metric embedding for the sequential kernels.

Metric embedding (sequential schemes only): values are 1-D points; locations are projected to
east/north metres (equirectangular, :func:`lmdk_core.geo.degrees_to_metres`) around the reference
(lat₀ = middle of the latitude range, lon₀ = first longitude), the kernel adds planar noise and
measures distances there, and the result is mapped back with :func:`lmdk_core.geo.offset_points`
(the exact inverse of the projection). East–west distances at latitude φ are scaled by
cos φ / cos lat₀: within 10 km (north–south) of lat₀ at mid-latitudes the distortion is below
0.2 %, so the protection radius r holds to that precision. Vectorised schemes apply the noise at
each point's own latitude instead (no projection).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..geo import degrees_to_metres, offset_points
from ..mechanisms import unit_laplace, unit_planar_draws

Columns = tuple[np.ndarray, ...]
"""Released series: ``(values,)`` or ``(lat, lon)``."""


@dataclass(frozen=True)
class Space:
    """True data plus the mechanism parameters of one release.

    ``unit`` is the sensitivity Δ (values) or the protection radius r in metres (locations);
    ``err`` turns ``unit/ε`` into the noise scale compared by data-dependent decisions:
    1 for values (Laplace scale Δ/ε), 2 for locations (mean planar error 2r/ε metres).
    """

    kind: str
    columns: Columns
    unit: float

    @property
    def n(self) -> int:
        return int(self.columns[0].size)

    @property
    def dim(self) -> int:
        return len(self.columns)

    @property
    def err(self) -> float:
        return 1.0 if self.kind == "values" else 2.0

    # -------------------------------------------------------------- vectorised release
    def perturb(self, eps: np.ndarray, rng: np.random.Generator) -> Columns:
        """Fresh noisy release at every t with ε_t > 0 (NaN where ε_t = 0).

        Draws exactly ``n`` unit variates (all radii then all angles for locations) whatever
        ``eps`` is, so the generator's consumption does not depend on the data or the budgets.
        """
        pub = eps > 0
        scale = np.zeros(self.n)
        np.divide(self.unit, eps, out=scale, where=pub)
        if self.kind == "values":
            out = unit_laplace(self.n, rng)
            out *= scale
            out += self.columns[0]
            cols: Columns = (out,)
        else:
            rho, theta = unit_planar_draws(self.n, rng)
            rho *= scale
            east, north = _directions(theta)
            east *= rho
            north *= rho
            cols = offset_points(self.columns[0], self.columns[1], east, north)
        if not pub.all():
            for c in cols:
                c[~pub] = np.nan
        return cols

    # -------------------------------------------------------------- metric embedding
    def reference(self) -> tuple[float, float]:
        """Projection origin (lat₀, lon₀) for locations."""
        lat, lon = self.columns
        if lat.size == 0:
            return 0.0, 0.0
        return float(0.5 * (lat.min() + lat.max())), float(lon[0])

    def to_metric(self) -> np.ndarray:
        """(n, d) float64 C-contiguous coordinates: values as 1-D points, locations in metres."""
        if self.kind == "values":
            return np.ascontiguousarray(self.columns[0].reshape(-1, 1))
        lat0, lon0 = self.reference()
        east, north = degrees_to_metres(lat0, lon0, self.columns[0], self.columns[1])
        return np.ascontiguousarray(np.column_stack((east, north)))

    def from_metric(self, coords: np.ndarray) -> Columns:
        """Map kernel output coordinates back to released columns (NaN rows stay NaN)."""
        if self.kind == "values":
            return (coords[:, 0].copy(),)
        lat0, lon0 = self.reference()
        return offset_points(lat0, lon0, coords[:, 0], coords[:, 1])

    def unit_noise(self, rng: np.random.Generator) -> np.ndarray:
        """(n, d) unit noise for the metric kernels: Laplace(0,1), or planar ρ·(cos θ, sin θ).

        Multiply by ``unit/ε_t`` to get the noise of an ε_t release. Consumes the generator like
        :meth:`perturb` (n Laplace draws, or n radii then n angles).
        """
        if self.kind == "values":
            return unit_laplace(self.n, rng).reshape(-1, 1)
        rho, theta = unit_planar_draws(self.n, rng)
        east, north = _directions(theta)
        out = np.empty((self.n, 2))
        np.multiply(rho, east, out=out[:, 0])
        np.multiply(rho, north, out=out[:, 1])
        return out


def _directions(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(cos θ, sin θ) for θ in [0, 2π); overwrites ``theta``.

    sin θ = ±√(1 − cos²θ) (negative for θ > π): one transcendental call instead of two, which
    is most of the cost of a vectorised location release; absolute error < 1e-10.
    """
    cos = np.cos(theta)
    below = theta > np.pi
    sin = np.multiply(cos, cos, out=theta)
    np.subtract(1.0, sin, out=sin)
    np.maximum(sin, 0.0, out=sin)
    np.sqrt(sin, out=sin)
    np.negative(sin, out=sin, where=below)
    return cos, sin


def forward_fill(cols: Columns, published: np.ndarray) -> Columns:
    """Republish: each unpublished t gets the last published release (NaN before the first)."""
    if published.all():
        return cols
    idx = np.where(published, np.arange(published.size), -1)
    np.maximum.accumulate(idx, out=idx)
    out = []
    for c in cols:
        filled = c[np.maximum(idx, 0)]
        filled[idx < 0] = np.nan
        out.append(filled)
    return tuple(out)
