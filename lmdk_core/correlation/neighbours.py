"""The neighbour relation of a release, as per-pair step losses between the model's states.

A release step with budget ε_t is assumed to satisfy, for every output o and states a ≠ b,

    K_t(o | a) ≤ exp(ε_t · δ(a, b)) · K_t(o | b)

(docs/temporal-loss.md §1). ``δ`` is the loss per unit of ε between two states:

* ``"any"`` — δ = 1 for every pair (Cao et al.'s assumption: each step ε_t-DP between any two
  states; true for randomized response over the states, not for Laplace or planar Laplace);
* ``"values"`` — the value release of sensitivity Δ (lmdk_core.noise.exact: the value is
  rounded to a grid of spacing g ≤ g_max = 2^⌊log2(Δ/2^10)⌋, discrete Laplace noise of integer
  scale t ≥ D/ε_t added, D = ⌊Δ/g⌋ + 1): δ(a, b) = (|v_a − v_b| + g_max) / Δ for a ≠ b, since
  rounding can put two values one grid step further apart than they are;
* ``"locations"`` — the location release with radius r (lmdk_core.noise.exact: the point is
  rounded to a global 3-D lattice of spacing g ≤ r/2^10, discrete Laplace noise of integer scale
  t ≥ D/ε_t added per axis) on grid cells whose true point may lie anywhere in its cell:
  δ(a, b) = f(d(c_a, c_b) + D_cell, r) for a ≠ b, with d the great-circle distance of the cell
  centres, D_cell the cell diagonal (two points in cells a and b are at most d(c_a, c_b) + D_cell
  apart) and f = :func:`lmdk_core.ledger.distance_factor`, the mechanism's loss per unit of ε
  between two points that far apart: (d + D_cell)/r plus the lattice rounding, at most
  3·LATTICE_SLACK ≈ 0.0017 and nothing from 1.5·r on.

δ(a, a) = 0 and δ obeys the triangle inequality in all three cases (docs/temporal-loss.md §1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ParameterError
from ..geo import haversine_m
from ..ledger import LATTICE_SLACK
from ..noise.exact import ECEF_ERR_M, GRID_BITS, pow2_floor
from ..validation import as_finite_array, check_nonnegative, check_positive

__all__ = ["StepLosses", "any_pair_steps", "location_steps", "value_grid_step", "value_steps"]

DIST_ERR_M = 1e-6
"""Allowance (metres, plus a relative 1e-12) for the float error of a computed centre distance."""


@dataclass(frozen=True, eq=False)
class StepLosses:
    """Per-unit-ε step losses δ(a, b) between the n states of a model (read-only (n, n) array).

    ``kind`` is ``"any"``, ``"values"`` or ``"locations"``; ``relation`` says in one sentence
    which neighbours the release protects and how much.
    """

    delta: np.ndarray
    kind: str
    relation: str
    unit_distance: float = 1.0  # r in metres (locations) or Δ (values): distance per unit of δ
    offset: float = 0.0  # added to a separation before scaling (cell diagonal / value grid step)

    @property
    def n_states(self) -> int:
        return int(self.delta.shape[0])

    @property
    def worst(self) -> float:
        """max_{a,b} δ(a, b): the factor turning ε_t into a step loss valid for every pair."""
        return float(self.delta.max()) if self.delta.size else 0.0

    @property
    def reach(self) -> float:
        """The largest separation (metres or value units) whose loss the worst pair bounds: the
        inverse of :meth:`pair_scale` at :attr:`worst`. For locations δ = f(s + D_cell, r) ≥
        s/r, so δ_max·r would overstate the reach near r; this inverts f (x ≤ 1:
        x + 3c + 6δ_e/(√3 r) capped at 1; 1 < x < 1.5: x + (3 − 2x)c; beyond: x)."""
        if self.kind == "any":
            return math.inf
        r, w = self.unit_distance, self.worst
        if self.kind == "values":
            return max(w * r - self.offset, 0.0)
        from ..ledger import LATTICE_SLACK as c

        if w >= 1.5:
            x = w
        elif w > 1.0:
            x = (w - 3.0 * c) / (1.0 - 2.0 * c)
        else:
            x = w - 3.0 * c - 6.0 * 1e-6 / (math.sqrt(3.0) * r)
        return max(x * r / (1.0 + 1e-12) - DIST_ERR_M - self.offset, 0.0)

    def pair_scale(self, separation: float) -> float:
        """δ for two hypotheses ``separation`` apart (metres or value units), ≤ :attr:`worst`.

        Locations: f(separation + D_cell, r) (:func:`location_factor`); values:
        (separation + g_max) / Δ. Any two states of the model have δ ≤ worst, so the result is
        capped there.
        """
        sep = check_nonnegative(separation, "separation")
        if self.kind == "any":
            return self.worst
        if self.kind == "locations":
            return min(float(location_factor(sep + self.offset, self.unit_distance)), self.worst)
        return float(min((sep + self.offset) / self.unit_distance, self.worst))


def _frozen(delta: np.ndarray) -> np.ndarray:
    delta = np.ascontiguousarray(delta, dtype=np.float64)
    np.fill_diagonal(delta, 0.0)
    delta.setflags(write=False)
    return delta


def any_pair_steps(n: int) -> StepLosses:
    """δ = 1 between any two of ``n`` states (each step ε_t-DP between any two states)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ParameterError(f"n must be an integer >= 1, got {n!r}")
    return StepLosses(_frozen(1.0 - np.eye(int(n))), "any",
                      "each release step is ε_t-DP between any two states")


def value_grid_step(sensitivity: float) -> float:
    """g_max: the largest grid spacing the value release uses for sensitivity Δ at any ε.

    :func:`lmdk_core.noise.exact.value_params` takes g = the largest power of two
    ≤ min(Δ, Δ/ε)/2^GRID_BITS, never above the largest power of two ≤ Δ/2^GRID_BITS.
    """
    sens = check_positive(sensitivity, "sensitivity")
    return float(pow2_floor(sens / 2.0**GRID_BITS))


def value_steps(values: Any, *, sensitivity: float) -> StepLosses:
    """δ(a, b) = (|v_a − v_b| + g_max)/Δ (a ≠ b) for the value release of numeric states
    ``values`` with sensitivity Δ > 0.

    The release rounds each value to a grid of spacing g ≤ g_max (:func:`value_grid_step`) and
    adds discrete Laplace noise of integer scale t ≥ D/ε_t, D = ⌊Δ/g⌋ + 1; the exact loss
    between a and b is |round(a/g) − round(b/g)|/t ≤ ε_t·(|a − b| + g)/Δ
    (docs/temporal-loss.md §1). It also bounds the continuous ``noise="fast"`` draw and plain
    Laplace of scale Δ/ε_t.
    """
    v = as_finite_array(values, "values")
    sens = check_positive(sensitivity, "sensitivity")
    if v.size == 0:
        raise ParameterError("values must not be empty")
    g = value_grid_step(sens)
    rel = (f"values Δ = {sens:g} apart are ε_t-indistinguishable; on the release grid "
           f"(step ≤ {g:.3g}) two values lose at most ε_t·(|a − b| + {g:.3g})/Δ")
    return StepLosses(_frozen((np.abs(v[:, None] - v[None, :]) + g) / sens), "values", rel,
                      sens, g)


def location_factor(distance_m: Any, radius_m: float) -> np.ndarray:
    """:func:`lmdk_core.ledger.distance_factor` (d', r) elementwise, d' = d·(1 + 1e-12) + 10⁻⁶ m.

    Loss per unit of ε_t between two true points at most ``distance_m`` = d apart (d computed in
    floating point: d' covers its error) released with protection radius r by the lattice
    mechanism: with x = d'/r and c = LATTICE_SLACK, min(1, x + 3c + 6δ/(√3·r)) for x ≤ 1 and
    x + max(0, 3 − 2x)·c above (docs/composition.md §2.3; the same floating-point expressions).
    """
    d = np.asarray(distance_m, dtype=np.float64)
    x = (d * (1.0 + 1e-12) + DIST_ERR_M) / radius_m
    near = np.minimum(1.0, x + 3.0 * LATTICE_SLACK + 6.0 * ECEF_ERR_M / (np.sqrt(3.0) * radius_m))
    far = x + np.maximum(0.0, 3.0 - 2.0 * x) * LATTICE_SLACK
    return np.where(x <= 1.0, near, far)


def location_steps(centres: Any, *, radius_m: float, cell_m: float) -> StepLosses:
    """δ(a, b) = f(d(c_a, c_b) + √2·cell_m, r) for grid cells with centres (lat, lon) degrees.

    ``radius_m`` is the geo-indistinguishability radius r (metres) of the release: points r
    apart are ε_t-indistinguishable; ``cell_m`` the side of the model's square cells (metres,
    0 allowed: the states are points). f = :func:`location_factor` adds the release lattice's
    rounding to (d + √2·cell_m)/r: at most 3·LATTICE_SLACK ≈ 0.0017, none from 1.5·r on
    (docs/temporal-loss.md §1).
    """
    c = as_finite_array(centres, "centres", ndim=2)
    if c.shape[1] != 2 or c.shape[0] == 0:
        raise ParameterError(f"centres must be an (n, 2) array of (lat, lon), got {c.shape}")
    r = check_positive(radius_m, "radius_m")
    side = check_nonnegative(cell_m, "cell_m")
    diag = float(np.sqrt(2.0) * side)
    d = haversine_m(c[:, None, 0], c[:, None, 1], c[None, :, 0], c[None, :, 1])
    rel = (f"points r = {r:g} m apart are ε_t-indistinguishable; two cells a, b lose at most "
           f"ε_t·(d(a, b) + {diag:.0f} m)/r (cell diagonal {diag:.0f} m) plus the release "
           f"lattice's rounding (≤ {3.0 * LATTICE_SLACK:.4f}·ε_t)")
    return StepLosses(_frozen(location_factor(d + diag, r)), "locations", rel, r, diag)
