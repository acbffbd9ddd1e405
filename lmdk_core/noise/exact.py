"""Release-grade mechanisms on data-independent grids (derivations: docs/fp-safe-noise.md).

Per element, in numba (the sequential scheme kernels call the same functions):

* :func:`value_params` / :func:`value_point` — values: o = g·(round(x/g) + Z), g a power of
  two chosen from Δ and ε only, Z discrete Laplace of integer scale t ≥ D/ε lattice units,
  D = floor(Δ/g) + 1 ≥ |round(x/g) − round(x'/g)| for |x − x'| ≤ Δ. Achieved ε' = D/t ≤ ε.
* :func:`lattice_params` / :func:`lattice_point` — locations: the point's Earth-centred
  (ECEF, spherical Earth) coordinates rounded to a GLOBAL cubic lattice of spacing g metres,
  one discrete Laplace variate added per axis, the noisy lattice point mapped back to
  (lat, lon) by normalising. For two points at most r metres apart (great circle) the L1 lattice
  distance is at most D = floor((√3·r + 6·δ)/g) + 3 (δ: floating-point error allowance of the
  ECEF map), so with t ≥ D/ε the release is ε'-geo-indistinguishable, ε' = D/t ≤ ε, at every
  latitude, over the poles and the antimeridian, for any radius.
* :func:`test_units` — the private dissimilarity tests of BD/BA: a distance in grid units whose
  neighbours differ by at most D, noised like a value.

``exact=False`` (``noise="fast"``) draws the same laws in floating point from pre-drawn unit
Laplace variates: x + g·t·L (values), ECEF + g·t·L per axis (locations) — for simulations only.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ..geo import EARTH_RADIUS_M
from .discrete import bern_exp, discrete_laplace, random_bit, random_bits

__all__ = [
    "DIST_ERR_M",
    "ECEF_ERR_M",
    "GRID_BITS",
    "MARGIN",
    "T_MAX",
    "lattice_index",
    "lattice_params",
    "lattice_point",
    "value_params",
    "value_point",
]

GRID_BITS = 10
"""The grid is 2^GRID_BITS times finer than the noise scale (and than Δ or r)."""
MARGIN = 1.0 + 2.0**-40
"""Multiplies every float bound before it is rounded up: absorbs their few-ulp rounding errors."""
ECEF_ERR_M = 1e-6
"""Allowance (metres, per axis and point) for the float error of the ECEF map (actual < 2e-8)."""
DIST_ERR_M = 1e-6
"""Allowance (metres) for the float error of :func:`great_circle_m` (actual < 2e-8)."""
T_MAX = 2**53
"""Largest lattice scale t (and D) the samplers accept: exact in float64 and int64."""
SQRT3 = math.sqrt(3.0)
_DEG = math.pi / 180.0
_R = EARTH_RADIUS_M


@numba.njit(cache=True)
def pow2_floor(x):
    """The largest power of two ≤ x (x > 0 finite), exactly."""
    _, e = math.frexp(x)
    return math.ldexp(1.0, e - 1)


@numba.njit(cache=True)
def value_params(delta, eps):
    """(g, D, t) for values with sensitivity Δ at budget ε: grid, shift bound, integer scale."""
    g = pow2_floor(min(delta, delta / eps) / 2.0**GRID_BITS)
    d = np.int64(math.floor(delta / g)) + 1
    t = np.int64(math.ceil(d / eps * MARGIN))
    return g, d, t


@numba.njit(cache=True)
def lattice_params(radius_m, eps):
    """(g, D, t) for locations with protection radius r metres at budget ε."""
    g = pow2_floor(min(radius_m, radius_m / eps) / 2.0**GRID_BITS)
    d = np.int64(math.floor((SQRT3 * radius_m + 6.0 * ECEF_ERR_M) / g * MARGIN)) + 3
    t = np.int64(math.ceil(d / eps * MARGIN))
    return g, d, t


@numba.njit(cache=True)
def achieved(d, t):
    """ε' = D/t as a float not below the exact ratio."""
    e = d / t
    return np.nextafter(e, np.inf) if e * t < d else e


@numba.njit(cache=True)
def ecef(lat, lon):
    """Earth-centred coordinates in metres on the sphere of radius EARTH_RADIUS_M."""
    p = lat * _DEG
    lm = lon * _DEG
    c = math.cos(p)
    return _R * c * math.cos(lm), _R * c * math.sin(lm), _R * math.sin(p)


@numba.njit(cache=True)
def from_ecef(x, y, z):
    """(lat, lon) in degrees of the direction of (x, y, z); lon in [-180, 180)."""
    lat = math.atan2(z, math.hypot(x, y)) / _DEG
    lon = math.atan2(y, x) / _DEG
    if lon >= 180.0:
        lon -= 360.0
    return lat, lon


@numba.njit(cache=True)
def great_circle_m(lat1, lon1, lat2, lon2):
    """Great-circle distance in metres, atan2(|u×v|, u·v) form (well conditioned everywhere)."""
    x1, y1, z1 = ecef(lat1, lon1)
    x2, y2, z2 = ecef(lat2, lon2)
    cx = y1 * z2 - z1 * y2
    cy = z1 * x2 - x1 * z2
    cz = x1 * y2 - y1 * x2
    dot = x1 * x2 + y1 * y2 + z1 * z2
    return _R * math.atan2(math.sqrt(cx * cx + cy * cy + cz * cz), dot)


# The scale's denominator is passed as np.int64(1), not 1: numba types a literal 1 as
# Literal[int](1) and compiled discrete_laplace (its sampler inlined, the costliest kernel to
# compile) once for that and once more for the int64 of other callers. Same draws.
@numba.njit(cache=True)
def _noise(exact, units, row, col, t, buf, st, fn):
    """One variate in lattice units: discrete Laplace of scale t, or t·(pre-drawn Laplace(0,1))."""
    if exact:
        return np.float64(discrete_laplace(buf, st, fn, t, np.int64(1)))
    return t * units[row, col]


@numba.njit(cache=True)
def value_point(x, eps, delta, exact, units, row, buf, st, fn):
    """Release one value at budget ε (> 0); returns (released, achieved ε')."""
    g, d, t = value_params(delta, eps)
    return value_draw(x, g, d, t, exact, units, row, buf, st, fn)


@numba.njit(cache=True)
def value_draw(x, g, d, t, exact, units, row, buf, st, fn):
    """:func:`value_point` with its grid parameters (g, D, t) already computed."""
    if exact:
        k = np.int64(np.rint(x / g)) + discrete_laplace(buf, st, fn, t, np.int64(1))
        return k * g, achieved(d, t)
    return x + g * t * units[row, 0], achieved(d, t)


@numba.njit(cache=True)
def lattice_index(lat, lon, g):
    """The point's lattice coordinates: round(ECEF/g) per axis (g a power of two: exact)."""
    x, y, z = ecef(lat, lon)
    return np.int64(np.rint(x / g)), np.int64(np.rint(y / g)), np.int64(np.rint(z / g))


@numba.njit(cache=True)
def lattice_point(lat, lon, eps, radius_m, exact, units, row, buf, st, fn):
    """Release one location at budget ε (> 0); returns (lat', lon', achieved ε')."""
    g, d, t = lattice_params(radius_m, eps)
    return lattice_draw(lat, lon, g, d, t, exact, units, row, buf, st, fn)


@numba.njit(cache=True)
def lattice_draw(lat, lon, g, d, t, exact, units, row, buf, st, fn):
    """:func:`lattice_point` with its lattice parameters (g, D, t) already computed."""
    if exact:
        kx, ky, kz = lattice_index(lat, lon, g)
        vx = (kx + discrete_laplace(buf, st, fn, t, np.int64(1))) * g
        vy = (ky + discrete_laplace(buf, st, fn, t, np.int64(1))) * g
        vz = (kz + discrete_laplace(buf, st, fn, t, np.int64(1))) * g
    else:
        x, y, z = ecef(lat, lon)
        s = g * t
        vx = x + s * units[row, 0]
        vy = y + s * units[row, 1]
        vz = z + s * units[row, 2]
    la, lo = from_ecef(vx, vy, vz)
    return la, lo, achieved(d, t)


@numba.njit(cache=True)
def test_units(stat_units, d, t, exact, units, row, col, buf, st, fn):
    """Noisy statistic in grid units: stat + discrete Laplace(t) (or t·Laplace(0,1) if fast).

    ε'-DP with ε' = D/t when neighbouring inputs move ``stat_units`` by at most D.
    """
    return stat_units + _noise(exact, units, row, col, t, buf, st, fn)


@numba.njit(cache=True)
def uniform53(buf, st, fn):
    """A uniform float in [0, 1) on the 2^-53 grid (for post-processing coin flips)."""
    return random_bits(buf, st, fn, 53) * 2.0**-53


@numba.njit(cache=True)
def rr_flip(buf, st, fn, eps_num):
    """True with probability exactly 1/(1 + e^{ε₀}), ε₀ = eps_num/2^40 (exact RR flip).

    Propose keep or flip with a fair bit; accept a flip with probability e^{−ε₀}; repeat on
    rejection: P(flip) = (e^{−ε₀}/2)/(1/2 + e^{−ε₀}/2).
    """
    while True:
        if random_bit(buf, st, fn) == 0:
            return False
        if bern_exp(buf, st, fn, eps_num, np.int64(1) << 40):
            return True
