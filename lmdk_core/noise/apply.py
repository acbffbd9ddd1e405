"""Vectorised release-grade noise: values, locations, bits (numba loops over the exact kernels).

Each function takes per-element budgets ε_t, keyword ``budget=`` (> 0: release; ≤ 0: no release,
NaN, nothing drawn),
a :class:`~lmdk_core.noise.source.RandomSource` and ``noise`` ("safe" or "fast"), and returns
the released array(s) and the achieved ε'_t ≤ ε_t per element (0 where nothing was released).
Draw order: element by element, in index order (safe: variable words per variate; fast: one
pre-drawn block of unit Laplace variates, n×1 for values and n×3 for locations, whatever ε is).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

import numba
import numpy as np

from .._deprecation import renamed
from ..errors import ParameterError
from .discrete import new_state
from .exact import (
    MARGIN,
    T_MAX,
    lattice_draw,
    lattice_params,
    rr_flip,
    value_draw,
    value_params,
)
from .source import REFILL, RandomSource, check_noise, registered

__all__ = [
    "RR_MAX_EPSILON",
    "RR_MAX_EPSILON_FAST",
    "check_lattice_domain",
    "check_rr_epsilon",
    "check_value_domain",
    "check_value_magnitude",
    "noise_stream",
    "noisy_bits",
    "noisy_locations",
    "noisy_values",
]

RR_MAX_EPSILON = 2.0**20
"""The one ε limit of randomised response (per bit) for every release in the package: bits
(:func:`noisy_bits`), :func:`lmdk_core.mechanisms.randomized_response` and the pattern-level PPMs
(:mod:`lmdk_core.patterns.rr`). It is set by the exact sampler's domain: ε is used as the
integer numerator n = ⌊ε·2^40⌋ of ε₀ = n/2^40 in int64, and ε ≤ 2^20 keeps n ≤ 2^60, exact with
room below 2^63 (the hard edge is ε < 2^23). Above it :class:`ParameterError` names the limit."""
_RR_LIMIT_TEXT = "RR_MAX_EPSILON = 2^20 = 1048576"
RR_MAX_EPSILON_FAST = math.log(2.0**53)
"""Largest ε of float randomised response: beyond it the flip probability 1/(1+e^ε) is below
the 2^-53 resolution of a float uniform (keep probability rounds to 1)."""
_G_MIN = 2.0**-36  # coarsest-to-finest: |ECEF|/g < 2^59 fits int64 with room for the noise


def _scale_fits(d: int, eps: float) -> bool:
    """True when the integer scale t = ⌈D/ε·MARGIN⌉ is exact: computed in floating point before
    any int64 conversion (for ε ≲ 3e-16 the cast overflowed to a negative t, which passed a
    plain ``t <= T_MAX`` and made the samplers all but noiseless)."""
    t = float(d) / eps * MARGIN
    return math.isfinite(t) and 0.0 < t <= T_MAX


@renamed(eps="budget", positional=("budget",))
def check_value_domain(delta: float, *, budget: np.ndarray) -> None:
    """ParameterError unless every (Δ, ε_t > 0) of ``budget`` gives an exact grid (g normal,
    0 < t ≤ 2^53, D ≤ 2^53)."""
    pos = budget[budget > 0]
    if pos.size == 0:
        return
    for e in (float(pos.min()), float(pos.max())):  # t grows as ε falls, D as ε grows
        g, d, t = value_params(delta, e)
        if not (g >= 2.0**-1000 and d <= T_MAX and _scale_fits(int(d), e) and 0 < t <= T_MAX):
            raise ParameterError(
                f"epsilon {e:g} with sensitivity {delta:g} is outside the exact noise grid "
                f"(needs sensitivity/epsilon and sensitivity·epsilon within about 2^±40)")


@renamed(eps="budget", positional=("budget",))
def check_lattice_domain(radius_m: float, *, budget: np.ndarray) -> None:
    """ParameterError unless every (r, ε_t > 0) of ``budget`` gives an exact lattice."""
    pos = budget[budget > 0]
    if pos.size == 0:
        return
    for e in (float(pos.min()), float(pos.max())):
        g, d, t = lattice_params(radius_m, e)
        if not (g >= _G_MIN and d <= T_MAX and _scale_fits(int(d), e) and 0 < t <= T_MAX):
            raise ParameterError(
                f"epsilon {e:g} with radius_m {radius_m:g} is outside the exact lattice "
                f"(needs radius_m/epsilon ≥ 1e-7 m and radius_m/epsilon ≤ 1e13·radius_m)")


@renamed(eps="budget", positional=("budget",))
def check_value_magnitude(x: np.ndarray, delta: float, *, budget: np.ndarray) -> None:
    """ParameterError unless |x| < 2^52·g on the finest grid in use (the largest ε_t of
    ``budget``)."""
    pos = budget[budget > 0]
    if x.size == 0 or pos.size == 0:
        return
    g = value_params(delta, float(pos.max()))[0]  # g shrinks as ε grows
    top = float(np.max(np.abs(x)))
    if top >= 2.0**52 * g:
        raise ParameterError(
            f"values up to {top:g} are too large for the noise grid "
            f"(|value| must stay below 2^52·{g:g} at this sensitivity and epsilon)")


@contextlib.contextmanager
def noise_stream(source: RandomSource, noise: str, n: int, k: int) -> Iterator[tuple]:
    """(exact, units, buf, st, fn) for the kernels: fast mode pre-draws n×k unit Laplace."""
    exact = check_noise(noise) == "safe"
    if exact:
        units = np.empty((0, k))
        with registered(source) as sid:
            buf, st = new_state(sid)
            yield True, units, buf, st, REFILL
    else:
        units = source.generator.laplace(0.0, 1.0, (n, k))
        buf, st = new_state(0)
        yield False, units, buf, st, REFILL


@numba.njit(cache=True)
def _values_kernel(x, eps, delta, exact, units, buf, st, fn):
    n = x.size
    out = np.full(n, np.nan)
    ach = np.zeros(n)
    last = -1.0
    g, d, t = value_params(delta, 1.0)
    for i in range(n):
        if eps[i] > 0:
            if eps[i] != last:  # runs of equal budgets share their grid parameters
                last = eps[i]
                g, d, t = value_params(delta, last)
            out[i], ach[i] = value_draw(x[i], g, d, t, exact, units, i, buf, st, fn)
    return out, ach


@numba.njit(cache=True)
def _lattice_kernel(lat, lon, eps, radius_m, exact, units, buf, st, fn):
    n = lat.size
    out_lat = np.full(n, np.nan)
    out_lon = np.full(n, np.nan)
    ach = np.zeros(n)
    last = -1.0
    g, d, t = lattice_params(radius_m, 1.0)
    for i in range(n):
        if eps[i] > 0:
            if eps[i] != last:
                last = eps[i]
                g, d, t = lattice_params(radius_m, last)
            out_lat[i], out_lon[i], ach[i] = lattice_draw(
                lat[i], lon[i], g, d, t, exact, units, i, buf, st, fn)
    return out_lat, out_lon, ach


@numba.njit(cache=True)
def _rr_kernel(bits, eps_num, buf, st, fn):
    out = bits.copy()
    for i in range(bits.size):
        if rr_flip(buf, st, fn, eps_num[i]):
            out[i] = not bits[i]
    return out


def read_only(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a`` (no copy), for a numba kernel's inputs. Numba compiles a
    kernel once per argument type and writability is part of the type: passing every input
    read-only, read-only columns (pandas', a Release's) and writable arrays share one compile."""
    view = a.view()
    view.flags.writeable = False
    return view


def _flat(a: np.ndarray, n: int) -> np.ndarray:
    return read_only(np.ascontiguousarray(np.broadcast_to(np.asarray(a, dtype=np.float64),
                                                           (n,))))


@renamed(eps="budget", positional=("budget",))
def noisy_values(x: np.ndarray, *, budget: np.ndarray, sensitivity: float, source: RandomSource,
                 noise: str = "safe") -> tuple[np.ndarray, np.ndarray]:
    """Release 1-D ``x`` with per-element budgets ``budget``; returns (released, achieved ε')."""
    x = read_only(np.ascontiguousarray(x, dtype=np.float64).ravel())
    e = _flat(budget, x.size)
    check_value_domain(sensitivity, budget=e)
    check_value_magnitude(x, sensitivity, budget=e)
    with noise_stream(source, noise, x.size, 1) as (exact, units, buf, st, fn):
        return _values_kernel(x, e, float(sensitivity), exact, units, buf, st, fn)


@renamed(eps="budget", positional=("budget",))
def noisy_locations(lat: np.ndarray, lon: np.ndarray, *, budget: np.ndarray, radius_m: float,
                    source: RandomSource, noise: str = "safe"
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Release 1-D (lat, lon) with per-element budgets ``budget``; returns (lat', lon',
    achieved ε')."""
    la = read_only(np.ascontiguousarray(lat, dtype=np.float64).ravel())
    lo = read_only(np.ascontiguousarray(lon, dtype=np.float64).ravel())
    e = _flat(budget, la.size)
    check_lattice_domain(radius_m, budget=e)
    with noise_stream(source, noise, la.size, 3) as (exact, units, buf, st, fn):
        return _lattice_kernel(la, lo, e, float(radius_m), exact, units, buf, st, fn)


@renamed(eps="epsilon")
def check_rr_epsilon(epsilon: Any) -> None:
    """ParameterError naming the limit when some ε of ``epsilon`` (a number or per-bit array) is
    above :data:`RR_MAX_EPSILON`."""
    over = np.asarray(epsilon, dtype=np.float64)
    over = over[over > RR_MAX_EPSILON]  # NaN compares False: no release, no check
    if over.size:
        raise ParameterError(
            f"epsilon {over.max():g} is above the limit of randomised response, "
            f"{_RR_LIMIT_TEXT} (the exact sampler's domain: ε is used as the int64 "
            "⌊ε·2^40⌋); lower epsilon")


def rr_epsilon_numerator(eps: np.ndarray) -> np.ndarray:
    """floor(ε·2^40) as int64: exact RR runs at ε₀ = floor(ε·2^40)/2^40 ≤ ε."""
    return np.floor(np.asarray(eps, dtype=np.float64) * 2.0**40).astype(np.int64)


def rr_flip_probability_fast(eps: np.ndarray) -> np.ndarray:
    """Float RR flip probability rounded UP to the 2^-53 grid of a float uniform (≥ 1/(1+e^ε))."""
    q = 0.5 * (1.0 - np.tanh(0.5 * np.asarray(eps, dtype=np.float64)))  # 1/(1+e^ε)
    return np.ceil(q * 2.0**53 * (1.0 + 2.0**-40)) * 2.0**-53


@renamed(eps="budget", positional=("budget",))
def noisy_bits(bits: np.ndarray, *, budget: np.ndarray, source: RandomSource,
               noise: str = "safe") -> tuple[np.ndarray, np.ndarray]:
    """Randomised response per element with per-element budgets ``budget``; returns (released
    bits, achieved ε' ≤ ε)."""
    b = read_only(np.ascontiguousarray(bits, dtype=np.bool_).ravel())
    e = _flat(budget, b.size)
    if check_noise(noise) == "safe":
        check_rr_epsilon(e)
        num = rr_epsilon_numerator(e)
        with registered(source) as sid:
            buf, st = new_state(sid)
            out = _rr_kernel(b, num, buf, st, REFILL)
        return out, num * 2.0**-40
    if e.size and e.max() > RR_MAX_EPSILON_FAST:
        raise ParameterError(
            f"epsilon {e.max():g} is too large for floating-point randomised response "
            f"(keep probability rounds to 1): the largest safe epsilon is "
            f"{RR_MAX_EPSILON_FAST:.4f}; use noise='safe'")
    q = rr_flip_probability_fast(e)
    flip = source.generator.random(b.size) < q
    return np.where(flip, ~b, b), np.log1p(-q) - np.log(q)
