"""Noise mechanisms: Laplace (values), planar Laplace (locations), randomised response (bits).

Every mechanism takes a :class:`numpy.random.Generator` (or a seed, see :func:`as_rng`), so a
seed makes a run reproducible. The draw order is fixed and documented per function:

* :func:`unit_laplace` draws ``size`` Laplace(0, 1) variates in one call;
* :func:`unit_planar_draws` draws ALL radii first (Gamma(2, 1)), then ALL angles (U[0, 2π));
* :func:`randomized_response` draws ``size`` uniforms in [0, 1) in one call.

Sequential schemes may pre-draw unit variates with the first two functions and scale them
themselves — Laplace: ``x + Δ/ε_t · u``; planar: distance ``r · ρ / ε_t`` metres at angle θ
(:func:`planar_offsets_from_units`) — which consumes the generator exactly as the vectorised
functions do.

Guarantees (each step independent, fresh randomness):

* Laplace: o = x + Lap(Δ/ε) is ε-DP for inputs differing by at most Δ (the sensitivity).
* Planar Laplace (geo-indistinguishability, Andrés et al., CCS 2013): with protection radius r
  metres and ε_geo = ε/r per metre, any two locations at most r metres apart are
  ε-indistinguishable.
  The distance from the true point is Gamma(shape 2, scale r/ε): mean 2r/ε metres.
* Randomised response: keeping a bit with probability e^ε/(1+e^ε) and flipping it otherwise is ε-DP.

The mechanisms require ε > 0 (finite); ε_t = 0 ("no release") is handled by the schemes, never by
infinite noise. Invalid arguments raise :class:`~lmdk_core.errors.ParameterError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import ParameterError
from .geo import offset_points
from .validation import check_epsilon, check_positive

__all__ = [
    "Laplace",
    "PlanarLaplace",
    "RandomizedResponse",
    "as_rng",
    "laplace",
    "planar_error_quantile_m",
    "planar_laplace",
    "planar_laplace_offsets",
    "planar_offsets_from_units",
    "randomized_response",
    "rr_keep_probability",
    "unit_laplace",
    "unit_planar_draws",
]

Size = int | tuple[int, ...]


# ----------------------------------------------------------------------------- randomness


def as_rng(seed_or_rng: Any = None) -> np.random.Generator:
    """Return a Generator: passed through, or seeded from None, an int ≥ 0 or a SeedSequence.

    Raises ParameterError for any other type (bool, float, str, legacy RandomState, ...) or a
    negative seed.
    """
    if isinstance(seed_or_rng, np.random.Generator):
        return seed_or_rng
    if seed_or_rng is None or isinstance(seed_or_rng, np.random.SeedSequence):
        return np.random.default_rng(seed_or_rng)
    if isinstance(seed_or_rng, (int, np.integer)) and not isinstance(seed_or_rng, (bool, np.bool_)):
        if seed_or_rng < 0:
            raise ParameterError(f"seed must be an integer >= 0, got {seed_or_rng}")
        return np.random.default_rng(int(seed_or_rng))
    raise ParameterError(
        "seed must be None, an integer >= 0, a numpy SeedSequence or a numpy Generator, "
        f"got {type(seed_or_rng).__name__}"
    )


def _check_size(size: Any) -> tuple[int, ...]:
    """Normalise an int or tuple of ints ≥ 0 into a shape tuple."""
    shape = (size,) if isinstance(size, (int, np.integer)) else size
    try:
        shape = tuple(shape)
    except TypeError:
        msg = f"size must be an integer or a tuple of integers, got {size!r}"
        raise ParameterError(msg) from None
    for n in shape:
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ParameterError(f"size must contain integers >= 0, got {size!r}")
    return tuple(int(n) for n in shape)


def unit_laplace(size: Size, rng: Any = None) -> np.ndarray:
    """Draw Laplace(0, 1) variates of shape ``size`` (one generator call; scale by Δ/ε_t)."""
    return as_rng(rng).laplace(0.0, 1.0, _check_size(size))


def unit_planar_draws(size: Size, rng: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Draw unit planar-Laplace variates: ``(radius_units, angle)``.

    ``radius_units`` ~ Gamma(shape 2, scale 1) (dimensionless; multiply by r/ε_t for metres) and
    ``angle`` ~ U[0, 2π) radians. Draw order is fixed: all radii first, then all angles.
    The Gamma(2, 1) radius is drawn as the sum of two standard exponentials (the same law,
    about 40 % cheaper than ``Generator.gamma``).
    """
    shape = _check_size(size)
    gen = as_rng(rng)
    radius_units = gen.standard_exponential((2, *shape)).sum(axis=0)
    angle = gen.uniform(0.0, 2.0 * np.pi, shape)
    return radius_units, angle


# ----------------------------------------------------------------------------- validation


def _numeric(values: Any, name: str) -> np.ndarray:
    """``values`` as a float64 array of any shape, all finite; else ParameterError."""
    if isinstance(values, (str, bytes)):
        raise ParameterError(f"{name} must be numeric, got {values!r}")
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be numeric") from None
    if not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.isfinite(arr.ravel()))[0])
        raise ParameterError(f"{name} contains NaN or infinite values (first at index {bad})")
    return arr


def _epsilons(eps: Any, name: str = "epsilon") -> np.ndarray | float:
    """Validate a scalar ε (float returned) or an array of ε (all finite > 0)."""
    if np.ndim(eps) == 0:
        return check_epsilon(eps, name)
    try:
        arr = np.asarray(eps, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be numeric") from None
    if np.any(np.isnan(arr)) or np.any(np.isinf(arr)):
        raise ParameterError(f"{name} must be finite, got NaN or infinite values")
    if np.any(arr <= 0):
        bad = int(np.flatnonzero(arr.ravel() <= 0)[0])
        raise ParameterError(f"{name} must be > 0, got {arr.ravel()[bad]} at index {bad}")
    return arr


def _broadcast(*shapes: tuple[int, ...], what: str) -> tuple[int, ...]:
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise ParameterError(f"shape mismatch: {what} have shapes {shapes}") from None


# ----------------------------------------------------------------------------- Laplace


def laplace(values: Any, eps: Any, sensitivity: float = 1.0, rng: Any = None) -> np.ndarray:
    """Return ``values + Lap(sensitivity/eps)`` (ε-DP per element for neighbours within Δ).

    ``eps`` is a scalar or an array broadcastable against ``values`` (all finite > 0);
    ``sensitivity`` Δ is finite > 0, in the units of ``values``. Draws one block of unit Laplace
    variates of the broadcast shape.
    """
    x = _numeric(values, "values")
    e = _epsilons(eps)
    delta = check_positive(sensitivity, "sensitivity")
    shape = _broadcast(x.shape, np.shape(e), what="values and epsilon")
    return x + unit_laplace(shape, rng) * (delta / e)


# ----------------------------------------------------------------------------- planar Laplace


def planar_offsets_from_units(
    radius_units: Any, angle: Any, eps: Any, radius_m: float
) -> tuple[np.ndarray, np.ndarray]:
    """Scale unit planar draws into ``(east_m, north_m)``: distance ``radius_m·ρ/ε`` at angle θ."""
    e = _epsilons(eps)
    r = check_positive(radius_m, "radius_m")
    dist = np.asarray(radius_units, dtype=np.float64) * (r / e)
    theta = np.asarray(angle, dtype=np.float64)
    return dist * np.cos(theta), dist * np.sin(theta)


def planar_laplace_offsets(
    eps: Any, radius_m: float, size: Size, rng: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """Draw planar-Laplace offsets ``(east_m, north_m)`` in metres, ``size`` of them.

    ε-geo-indistinguishable for locations within ``radius_m`` metres (ε_geo = ε / radius_m per
    metre); ``eps`` is a scalar or broadcastable to ``size``. The distance is Gamma(2, radius_m/ε).
    """
    e = _epsilons(eps)
    r = check_positive(radius_m, "radius_m")
    shape = _check_size(size)
    if _broadcast(shape, np.shape(e), what="size and epsilon") != shape:
        raise ParameterError(f"epsilon of shape {np.shape(e)} does not broadcast to size {shape}")
    radius_units, angle = unit_planar_draws(shape, rng)
    return planar_offsets_from_units(radius_units, angle, e, r)


def planar_laplace(
    lat: Any, lon: Any, eps: Any, radius_m: float, rng: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """Perturb locations (decimal degrees) with planar Laplace; return ``(lat, lon)`` in degrees.

    Offsets are applied in the local metric projection at each point's latitude
    (:func:`lmdk_core.geo.offset_points`): latitude is clamped to [-90, 90], longitude wrapped to
    [-180, 180). ``lat`` and ``lon`` must have the same shape; ``eps`` scalar or broadcastable.
    """
    la = _numeric(lat, "lat")
    lo = _numeric(lon, "lon")
    if la.shape != lo.shape:
        raise ParameterError(f"length mismatch: lat has shape {la.shape}, lon has shape {lo.shape}")
    if np.any(np.abs(la) > 90):
        raise ParameterError("lat must lie in [-90, 90]")
    e = _epsilons(eps)
    shape = _broadcast(la.shape, np.shape(e), what="locations and epsilon")
    if shape != la.shape:
        raise ParameterError(f"epsilon of shape {np.shape(e)} does not match locations {la.shape}")
    east, north = planar_laplace_offsets(e, radius_m, shape, rng)
    return offset_points(la, lo, east, north)


def _lambertw_m1(z: Any) -> np.ndarray:
    """Lower branch W_{-1}(z) for z in [-1/e, 0) (numpy; Halley iterations). z = 0 gives -inf."""
    z = np.asarray(z, dtype=np.float64)
    out = np.full(z.shape, np.nan)
    out[z == 0] = -np.inf
    ok = (z >= -1.0 / np.e) & (z < 0)
    zz = z[ok]
    # Initial guess: branch-point series near -1/e, asymptotic expansion near 0.
    p = -np.sqrt(np.maximum(2.0 * (1.0 + np.e * zz), 0.0))
    near = -1.0 + p - p * p / 3.0 + 11.0 / 72.0 * p**3
    with np.errstate(divide="ignore", invalid="ignore"):
        l1 = np.log(-zz)
        l2 = np.log(-l1)
        far = l1 - l2 + l2 / l1
    w = np.where(zz < -0.25, near, far)
    for _ in range(12):
        ew = np.exp(w)
        f = w * ew - zz
        wp1 = w + 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            denom = ew * wp1 - (w + 2.0) * f / (2.0 * wp1)
            step = np.where((wp1 != 0) & (denom != 0), f / denom, 0.0)
        w = np.minimum(w - np.nan_to_num(step), -1.0)  # W_{-1} ≤ -1
    out[ok] = w
    return out


def planar_error_quantile_m(p: Any, eps: Any, radius_m: float) -> np.ndarray | float:
    """Distance in metres not exceeded with probability ``p`` by planar Laplace (inverse CDF).

    The distance CDF is C(ρ) = 1 − (1 + ε_geo ρ) e^{−ε_geo ρ}, so
    ρ = −(W_{−1}((p − 1)/e) + 1) / ε_geo with ε_geo = ε / radius_m. ``p`` in [0, 1]; p = 1 gives
    inf.
    """
    e = _epsilons(eps)
    r = check_positive(radius_m, "radius_m")
    pa = _numeric(p, "p")
    if np.any((pa < 0) | (pa > 1)):
        raise ParameterError("p must lie in [0, 1]")
    rho = -(_lambertw_m1((pa - 1.0) / np.e) + 1.0) * (r / e)
    rho = np.maximum(rho, 0.0)
    return float(rho) if np.ndim(rho) == 0 else rho


# ----------------------------------------------------------------------------- randomised response


def rr_keep_probability(eps: Any) -> np.ndarray | float:
    """Probability e^ε / (1 + e^ε) of reporting the true bit (numerically stable logistic)."""
    e = _epsilons(eps)
    keep = 1.0 / (1.0 + np.exp(-np.asarray(e)))
    return float(keep) if np.ndim(keep) == 0 else keep


def _bits(bits: Any) -> np.ndarray:
    if isinstance(bits, (str, bytes)):
        raise ParameterError(f"bits must be 0/1 or booleans, got {bits!r}")
    try:
        arr = np.asarray(bits)
    except (TypeError, ValueError):
        raise ParameterError("bits must be 0/1 or booleans") from None
    if arr.dtype == np.bool_:
        return arr
    if arr.size and not np.issubdtype(arr.dtype, np.number):
        raise ParameterError("bits must be 0/1 or booleans")
    if arr.size and not np.all((arr == 0) | (arr == 1)):
        raise ParameterError("bits must be 0/1 or booleans")
    return arr.astype(bool)


def randomized_response(bits: Any, eps: Any, rng: Any = None) -> np.ndarray:
    """Return the bits, each kept with probability e^ε/(1+e^ε) and flipped otherwise (ε-DP per bit).

    ``bits``: booleans or 0/1 numbers; ``eps`` scalar or broadcastable. Draws one block of
    uniforms of the broadcast shape; returns a bool array.
    """
    b = _bits(bits)
    keep_p = rr_keep_probability(eps)
    shape = _broadcast(b.shape, np.shape(keep_p), what="bits and epsilon")
    keep = as_rng(rng).random(shape) < keep_p
    return np.where(keep, b, ~b)


# ----------------------------------------------------------------------------- classes


@dataclass(frozen=True)
class Laplace:
    """Laplace mechanism with explicit parameters: ε-DP for values within ``sensitivity`` Δ."""

    epsilon: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "sensitivity", check_positive(self.sensitivity, "sensitivity"))

    @property
    def scale(self) -> float:
        """Noise scale b = Δ/ε (units of the values)."""
        return self.sensitivity / self.epsilon

    @property
    def variance(self) -> float:
        """Noise variance 2b²."""
        return 2.0 * self.scale**2

    def randomise(self, values: Any, rng: Any = None) -> np.ndarray:
        """Return ``values + Lap(Δ/ε)``."""
        return laplace(values, self.epsilon, self.sensitivity, rng)


@dataclass(frozen=True)
class PlanarLaplace:
    """Planar Laplace: ε-geo-indistinguishability for locations within ``radius_m`` metres."""

    epsilon: float
    radius_m: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "radius_m", check_positive(self.radius_m, "radius_m"))

    @property
    def epsilon_per_metre(self) -> float:
        """ε_geo = ε / r (per metre)."""
        return self.epsilon / self.radius_m

    @property
    def mean_error_m(self) -> float:
        """Expected distance from the true location, 2r/ε metres."""
        return 2.0 * self.radius_m / self.epsilon

    def error_quantile_m(self, p: Any) -> np.ndarray | float:
        """Distance in metres not exceeded with probability ``p`` (Lambert-W inverse CDF)."""
        return planar_error_quantile_m(p, self.epsilon, self.radius_m)

    def randomise(self, lat: Any, lon: Any, rng: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Return perturbed ``(lat, lon)`` in degrees."""
        return planar_laplace(lat, lon, self.epsilon, self.radius_m, rng)


@dataclass(frozen=True)
class RandomizedResponse:
    """Binary randomised response: ε-DP per bit."""

    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))

    @property
    def keep_probability(self) -> float:
        """e^ε / (1 + e^ε)."""
        return rr_keep_probability(self.epsilon)

    def randomise(self, bits: Any, rng: Any = None) -> np.ndarray:
        """Return randomised bits (bool array)."""
        return randomized_response(bits, self.epsilon, rng)
