"""Noise mechanisms: Laplace (values), planar lattice Laplace (locations), randomised response.

One implementation of each mechanism, shared by these functions, the classes
:class:`Laplace`, :class:`PlanarLaplace`, :class:`RandomizedResponse` and every release scheme
(:mod:`lmdk_core.schemes`). ``noise`` selects how the noise is drawn:

* ``"safe"`` (default, release grade): exact discrete samplers on data-independent grids, fed
  by a ChaCha20 keystream keyed from the OS (:mod:`lmdk_core.noise`). Immune to Mironov's
  floating-point attack: both neighbours' outputs have the same support, and every probability
  ratio is bounded as proved in docs/fp-safe-noise.md.
* ``"fast"``: the same laws drawn in floating point from a numpy Generator — for simulations,
  Monte Carlo and benchmarks only; NOT for publication.

``rng``: None (fresh OS entropy: the only choice for real releases), or a seed / SeedSequence /
Generator / :class:`~lmdk_core.noise.RandomSource` for reproducible simulations and tests (a
seeded release is NOT private: whoever knows the seed can subtract the noise).

Guarantees (each call independent):

* Laplace: o = g·(round(x/g) + Z), g a power of two ≤ min(Δ, Δ/ε)/1024, Z discrete Laplace of
  integer scale t lattice units; ε'-DP for inputs differing by at most Δ, with the achieved
  ε' = (floor(Δ/g)+1)/t ≤ ε (:attr:`Laplace.achieved_epsilon`, within 0.2 % of ε).
* Planar lattice Laplace (geo-indistinguishability, Andrés et al. CCS 2013, made exact): the
  point's Earth-centred coordinates rounded to a global lattice of spacing g metres plus one
  discrete Laplace variate per axis, mapped back to (lat, lon). Any two locations at most
  ``radius_m`` metres apart (great circle) are ε'-indistinguishable, ε' ≤ ε, at every latitude,
  over the poles and the antimeridian, for any radius. Price: per-axis scale ≈ √3·r/ε, so the
  mean horizontal error is ≈ 2.86·r/ε metres (planar Laplace: 2·r/ε, but no exact version).
* Randomised response: release grade keeps a bit with probability e^ε₀/(1+e^ε₀) exactly
  (ε₀ = floor(ε·2^40)/2^40 ≤ ε) — no floating point is involved; ``"fast"`` refuses
  ε > 36.74 (the keep probability rounds to 1) and rounds the flip probability up.

The mechanisms require ε > 0 (finite); ε_t = 0 ("no release") is handled by the schemes.
Invalid arguments raise :class:`~lmdk_core.errors.ParameterError`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._deprecation import renamed
from .errors import ParameterError
from .noise.apply import check_rr_epsilon, noisy_bits, noisy_locations, noisy_values
from .noise.exact import lattice_params, value_params
from .noise.source import as_rng, as_source, check_noise
from .validation import check_epsilon, check_positive

__all__ = [
    "LATTICE_MEAN_ERROR_FACTOR",
    "Laplace",
    "PlanarLaplace",
    "RandomizedResponse",
    "as_rng",
    "laplace",
    "planar_laplace",
    "randomized_response",
    "rr_keep_probability",
    "unit_laplace",
]

Size = int | tuple[int, ...]

LATTICE_MEAN_ERROR_FACTOR = math.pi / 4.0 * 2.1051263765950052
"""Mean horizontal error of the lattice mechanism per metre of per-axis scale (≈ 1.6534).

With i.i.d. Laplace(b) noise on the three ECEF axes, the horizontal error is the norm of the
noise's tangent component; averaged over orientations it is (π/4)·E‖L‖·b, E‖L‖ = 2.10513·b
(docs/fp-safe-noise.md). At any one location it lies within [0.982, 1.011] of that average
(axis-aligned tangent planes: poles, meridians 0°/90°; diagonal ones)."""


# ----------------------------------------------------------------------------- randomness


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


@renamed(positional=("rng",))
def unit_laplace(size: Size, *, rng: Any = None) -> np.ndarray:
    """Draw float Laplace(0, 1) variates of shape ``size`` (simulations only: not fp-safe)."""
    return as_rng(rng).laplace(0.0, 1.0, _check_size(size))


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


# ----------------------------------------------------------------------------- Laplace


@renamed(eps="epsilon", positional=("epsilon", "sensitivity", "rng"))
def laplace(values: Any, *, epsilon: Any, sensitivity: float = 1.0, rng: Any = None,
            noise: str = "safe") -> np.ndarray:
    """Release ``values`` with Laplace noise (ε-DP per element for neighbours within Δ).

    ``epsilon`` scalar or broadcastable against ``values`` (all finite > 0); ``sensitivity`` Δ > 0
    in the units of the values. ``noise="safe"``: exact grid mechanism (module docstring).
    Privacy parameters are keyword-only (``eps=`` and positional ε are deprecated aliases).
    """
    x = _numeric(values, "values")
    e = _epsilons(epsilon)
    delta = check_positive(sensitivity, "sensitivity")
    shape = _broadcast(x.shape, np.shape(e), what="values and epsilon")
    xb = np.broadcast_to(x, shape).ravel()
    eb = np.broadcast_to(e, shape).ravel()
    out, _ = noisy_values(xb, budget=eb, sensitivity=delta, source=as_source(rng),
                          noise=check_noise(noise))
    return out.reshape(shape)


# ----------------------------------------------------------------------------- planar Laplace


def _locations(lat: Any, lon: Any) -> tuple[np.ndarray, np.ndarray]:
    la = _numeric(lat, "lat")
    lo = _numeric(lon, "lon")
    if la.shape != lo.shape:
        raise ParameterError(f"length mismatch: lat has shape {la.shape}, lon has shape {lo.shape}")
    if np.any(np.abs(la) > 90):
        raise ParameterError("lat must lie in [-90, 90]")
    return la, lo


@renamed(eps="epsilon", positional=("epsilon", "radius_m", "rng"))
def planar_laplace(lat: Any, lon: Any, *, epsilon: Any, radius_m: float, rng: Any = None,
                   noise: str = "safe") -> tuple[np.ndarray, np.ndarray]:
    """Perturb locations (decimal degrees) with the lattice mechanism; return ``(lat, lon)``.

    ε-geo-indistinguishable for locations within ``radius_m`` metres (great circle), everywhere
    on the sphere. Output latitude in [-90, 90], longitude in [-180, 180). ``epsilon`` scalar or
    broadcastable to the locations' shape.
    """
    la, lo = _locations(lat, lon)
    e = _epsilons(epsilon)
    r = check_positive(radius_m, "radius_m")
    shape = _broadcast(la.shape, np.shape(e), what="locations and epsilon")
    if shape != la.shape:
        raise ParameterError(f"epsilon of shape {np.shape(e)} does not match locations {la.shape}")
    out_lat, out_lon, _ = noisy_locations(
        la.ravel(), lo.ravel(), budget=np.broadcast_to(e, shape).ravel(), radius_m=r,
        source=as_source(rng), noise=check_noise(noise))
    return out_lat.reshape(shape), out_lon.reshape(shape)


# ----------------------------------------------------------------------------- randomised response


@renamed(eps="epsilon")
def rr_keep_probability(epsilon: Any) -> np.ndarray | float:
    """Probability e^ε / (1 + e^ε) of reporting the true bit (numerically stable logistic)."""
    e = _epsilons(epsilon)
    keep = 1.0 / (1.0 + np.exp(-np.asarray(e)))
    return float(keep) if np.ndim(keep) == 0 else keep


@renamed(eps="epsilon", positional=("epsilon", "rng"))
def randomized_response(bits: Any, *, epsilon: Any, rng: Any = None,
                        noise: str = "safe") -> np.ndarray:
    """Return the bits, each kept with probability e^ε/(1+e^ε) and flipped otherwise (ε-DP).

    ``bits``: booleans or 0/1 numbers; ``epsilon`` scalar or broadcastable. Returns a bool array.
    ``noise="safe"`` is exact (ε used as floor(ε·2^40)/2^40); ε above the package's one limit
    :data:`lmdk_core.noise.apply.RR_MAX_EPSILON` = 2^20 is refused (ParameterError naming it).
    ``"fast"`` (a simulation) also refuses ε > 36.74, where float flips round to never.
    """
    b = _bits(bits)
    e = _epsilons(epsilon)
    shape = _broadcast(b.shape, np.shape(e), what="bits and epsilon")
    out, _ = noisy_bits(np.broadcast_to(b, shape).ravel(),
                        budget=np.broadcast_to(e, shape).ravel(),
                        source=as_source(rng), noise=check_noise(noise))
    return out.reshape(shape)


# ----------------------------------------------------------------------------- classes


@dataclass(frozen=True, kw_only=True)
class Laplace:
    """Laplace mechanism on an exact grid: ε-DP for values within ``sensitivity`` Δ.

    The schemes release through :meth:`release` with per-timestamp budgets ε_t ≤ ``epsilon``.
    """

    epsilon: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "sensitivity", check_positive(self.sensitivity, "sensitivity"))

    @property
    def grid(self) -> float:
        """Output grid spacing g (a power of two, units of the values)."""
        return float(value_params(self.sensitivity, self.epsilon)[0])

    @property
    def achieved_epsilon(self) -> float:
        """ε' = (floor(Δ/g)+1)/t ≤ ε actually guaranteed (rounding to the grid included)."""
        _, d, t = value_params(self.sensitivity, self.epsilon)
        return d / t

    @property
    def scale(self) -> float:
        """Noise scale b = g·t ≈ Δ/ε (units of the values)."""
        g, _, t = value_params(self.sensitivity, self.epsilon)
        return float(g * t)

    @property
    def variance(self) -> float:
        """Noise variance ≈ 2b² (exactly g²·2e^{-1/t}/(1−e^{-1/t})² for the discrete law)."""
        g, _, t = value_params(self.sensitivity, self.epsilon)
        q = math.exp(-1.0 / t)
        return float(g * g * 2.0 * q / (1.0 - q) ** 2)

    @renamed(positional=("rng",))
    def randomise(self, values: Any, *, rng: Any = None, noise: str = "safe") -> np.ndarray:
        """Return the released values (same shape)."""
        return laplace(values, epsilon=self.epsilon, sensitivity=self.sensitivity, rng=rng,
                       noise=noise)

    @renamed(eps="budget", positional=("budget", "rng"))
    def release(self, values: np.ndarray, *, budget: np.ndarray, rng: Any = None,
                noise: str = "safe") -> tuple[np.ndarray, np.ndarray]:
        """1-D release with budgets ``budget`` (0 ≤ ε_t ≤ epsilon; 0: NaN, nothing drawn).

        Returns (released, achieved ε'_t ≤ ε_t).
        """
        e = _budgets(budget, self.epsilon, np.size(values))
        return noisy_values(values, budget=e, sensitivity=self.sensitivity, source=as_source(rng),
                            noise=check_noise(noise))


@dataclass(frozen=True, kw_only=True)
class PlanarLaplace:
    """Lattice planar Laplace: ε-geo-indistinguishability for locations within ``radius_m``."""

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
    def lattice_m(self) -> float:
        """Lattice spacing g in metres (a power of two ≤ min(r, r/ε)/1024)."""
        return float(lattice_params(self.radius_m, self.epsilon)[0])

    @property
    def achieved_epsilon(self) -> float:
        """ε' = D/t ≤ ε actually guaranteed for points within radius_m."""
        _, d, t = lattice_params(self.radius_m, self.epsilon)
        return d / t

    @property
    def axis_scale_m(self) -> float:
        """Per-axis Laplace scale b = g·t ≈ √3·r/ε metres."""
        g, _, t = lattice_params(self.radius_m, self.epsilon)
        return float(g * t)

    @property
    def mean_error_m(self) -> float:
        """Expected horizontal distance from the true location, ≈ 2.86·r/ε metres.

        LATTICE_MEAN_ERROR_FACTOR · b, averaged over orientations; at a given location within
        −1.8 %/+1.1 % of it (small-noise value: r/ε much smaller than the Earth's radius).
        """
        return LATTICE_MEAN_ERROR_FACTOR * self.axis_scale_m

    @renamed(positional=("rng",))
    def randomise(self, lat: Any, lon: Any, *, rng: Any = None,
                  noise: str = "safe") -> tuple[np.ndarray, np.ndarray]:
        """Return perturbed ``(lat, lon)`` in degrees."""
        return planar_laplace(lat, lon, epsilon=self.epsilon, radius_m=self.radius_m, rng=rng,
                              noise=noise)

    @renamed(eps="budget", positional=("budget", "rng"))
    def release(self, lat: np.ndarray, lon: np.ndarray, *, budget: np.ndarray, rng: Any = None,
                noise: str = "safe") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """1-D release with budgets ``budget`` (0 ≤ ε_t ≤ epsilon; 0: NaN, nothing drawn).

        Returns (lat', lon', achieved ε'_t ≤ ε_t).
        """
        e = _budgets(budget, self.epsilon, np.size(lat))
        return noisy_locations(lat, lon, budget=e, radius_m=self.radius_m,
                               source=as_source(rng), noise=check_noise(noise))


@dataclass(frozen=True, kw_only=True)
class RandomizedResponse:
    """Binary randomised response: ε-DP per bit (exact with ``noise="safe"``)."""

    epsilon: float

    def __post_init__(self) -> None:
        eps = check_epsilon(self.epsilon)
        check_rr_epsilon(eps)  # the one limit, RR_MAX_EPSILON = 2^20
        object.__setattr__(self, "epsilon", eps)

    @property
    def keep_probability(self) -> float:
        """e^ε / (1 + e^ε)."""
        return float(rr_keep_probability(self.epsilon))

    @property
    def achieved_epsilon(self) -> float:
        """ε₀ = floor(ε·2^40)/2^40 ≤ ε of the exact sampler."""
        return math.floor(self.epsilon * 2.0**40) * 2.0**-40

    @renamed(positional=("rng",))
    def randomise(self, bits: Any, *, rng: Any = None, noise: str = "safe") -> np.ndarray:
        """Return randomised bits (bool array)."""
        return randomized_response(bits, epsilon=self.epsilon, rng=rng, noise=noise)


# The pre-0.2 positional constructors Laplace(ε, Δ), PlanarLaplace(ε, r), RandomizedResponse(ε)
# keep working for one release, with a DeprecationWarning (diffprivlib's keyword-only mechanisms).
Laplace.__init__ = renamed(positional=("epsilon", "sensitivity"))(Laplace.__init__)  # type: ignore[method-assign]
PlanarLaplace.__init__ = renamed(positional=("epsilon", "radius_m"))(PlanarLaplace.__init__)  # type: ignore[method-assign]
RandomizedResponse.__init__ = renamed(positional=("epsilon",))(RandomizedResponse.__init__)  # type: ignore[method-assign]


def _budgets(eps: Any, cap: float, n: int) -> np.ndarray:
    """Per-element budgets: finite, 0 ≤ ε_t ≤ cap, length n (broadcast from a scalar)."""
    try:
        e = np.asarray(eps, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError("budgets must be numeric") from None
    e = np.broadcast_to(e, (n,)) if e.ndim == 0 else e
    if e.shape != (n,):
        raise ParameterError(f"length mismatch: {e.size} budgets for {n} elements")
    if not np.all(np.isfinite(e)) or np.any(e < 0) or np.any(e > cap):
        raise ParameterError(f"budgets must be finite and within [0, {cap}]")
    return np.ascontiguousarray(e)
