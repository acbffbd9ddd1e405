"""The data a scheme releases — one value per timestamp, or one location — behind one interface.

Every scheme is written once against :class:`Space`; the space supplies the mechanism object
(:class:`~lmdk_core.mechanisms.Laplace` for values, :class:`~lmdk_core.mechanisms.PlanarLaplace`
for locations — the same objects users call), the noise scale used by data-dependent decisions,
and the (n, 2) coordinate array the sequential numba kernels read. Locations are never
projected: the kernels add noise at each point's own position through the lattice mechanism
(:mod:`lmdk_core.noise.exact`) and measure distances along great circles.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..mechanisms import LATTICE_MEAN_ERROR_FACTOR, Laplace, PlanarLaplace
from ..noise.exact import SQRT3
from ..noise.source import RandomSource

Columns = tuple[np.ndarray, ...]
"""Released series: ``(values,)`` or ``(lat, lon)``."""

VALUES, LOCATIONS = 0, 1
"""Kind codes of the numba kernels."""


@dataclass(frozen=True)
class Space:
    """True data plus the mechanism parameters of one release.

    ``unit`` is the sensitivity Δ (values) or the protection radius r in metres (locations);
    ``err`` turns ``unit/ε`` into the mean error of a release, the scale compared by
    data-dependent decisions: 1 for values (Laplace scale Δ/ε), ≈ 2.86 for locations (mean
    horizontal error of the lattice mechanism, ≈ 2.86·r/ε metres).
    """

    kind: str
    columns: Columns
    unit: float
    seconds: np.ndarray | None = None
    """Public timestamps in seconds (float, one per row) when the data has times, else None."""

    @property
    def n(self) -> int:
        return int(self.columns[0].size)

    @property
    def code(self) -> int:
        return VALUES if self.kind == "values" else LOCATIONS

    @property
    def err(self) -> float:
        return 1.0 if self.kind == "values" else LATTICE_MEAN_ERROR_FACTOR * SQRT3

    # -------------------------------------------------------------- vectorised release
    def perturb(self, eps: np.ndarray, source: RandomSource, noise: str
                ) -> tuple[Columns, np.ndarray]:
        """Fresh release at every t with ε_t > 0 (NaN where ε_t = 0); returns (columns, ε'_t).

        Draws only where ε_t > 0, in index order (``noise="fast"``: one n×1 or n×3 block of
        unit variates whatever ε is).
        """
        if not np.any(eps > 0):
            cols = tuple(np.full(self.n, np.nan) for _ in self.columns)
            return cols, np.zeros(self.n)
        top = float(eps.max())
        if self.kind == "values":
            out, ach = Laplace(epsilon=top, sensitivity=self.unit).release(
                self.columns[0], budget=eps, rng=source, noise=noise)
            return (out,), ach
        lat, lon, ach = PlanarLaplace(epsilon=top, radius_m=self.unit).release(
            self.columns[0], self.columns[1], budget=eps, rng=source, noise=noise)
        return (lat, lon), ach

    # -------------------------------------------------------------- sequential kernels
    def kernel_data(self) -> np.ndarray:
        """(n, 2) float64 C-contiguous: (value, 0) or (lat, lon) per row."""
        data = np.zeros((self.n, 2))
        for k, c in enumerate(self.columns):
            data[:, k] = c
        return data

    def from_kernel(self, out: np.ndarray) -> Columns:
        """Kernel output rows back to released columns (NaN rows stay NaN)."""
        return tuple(out[:, k].copy() for k in range(len(self.columns)))


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
