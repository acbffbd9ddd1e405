"""What a release shows at a moment without a fresh release: the scheme parameter ``fill``.

Skip and Reserve publish fresh only where their budget ε_t > 0; every other moment shows a
function of the fresh releases around it. Between two fresh releases x̃_a, x̃_b at moments
t_a < t < t_b with public times τ, and w_t = (τ_t − τ_a)/(τ_b − τ_a):

* ``fill="repeat"`` (default; the thesis's Skip, online): x̃_a, the last fresh release;
* ``fill="interpolate"`` (delayed): x̃_a + w_t·(x̃_b − x̃_a), the straight line in time between
  the two released points;
* ``fill="halfway"`` (delayed): x̃_a + (w_t/2)·(x̃_b − x̃_a), the midpoint of the two above, so at
  every moment its error is at most the mean of theirs (triangle inequality): a hedge for runs
  in which the person leaves and comes back, where the straight line is worse than the repeat.

After the last fresh release every fill repeats it; before the first there is nothing (NaN).
A delayed fill's output at t is known once t_b's fresh release exists: a delay of at most the
run of non-fresh moments around t.

Every fill reads only released values at fresh moments, the fresh-release flags (a function of
the scheme's schedule) and the public times τ, never the data: post-processing, so every ε_t
and G_t is that of the scheme's fresh releases alone (proof: docs/landmark-reserve.md §7).
Locations move latitude and longitude linearly in degrees, longitude along the shorter way round
the antimeridian.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ParameterError
from ._space import Columns, Space, forward_fill

FILL_WEIGHT = {"repeat": 0.0, "interpolate": 1.0, "halfway": 0.5}
"""λ of each fill: the output at t is x̃_a + λ·w_t·(x̃_b − x̃_a) (module docstring)."""

FILLS = tuple(FILL_WEIGHT)
"""The values of the scheme parameter ``fill`` (Skip and Reserve)."""


def check_fill(value: Any, name: str = "fill") -> str:
    """``value`` if it is one of :data:`FILLS`, else ParameterError."""
    if isinstance(value, str) and value in FILLS:
        return value
    raise ParameterError(f"{name} must be one of {', '.join(map(repr, FILLS))}, got {value!r}")


def running_seconds(seconds: np.ndarray | None, n: int) -> np.ndarray:
    """τ: seconds since the first timestamp, as a running maximum (non-finite entries carry the
    last finite one); the index 0..n−1 when there are no times."""
    if seconds is None:
        return np.arange(n, dtype=float)
    s = np.asarray(seconds, dtype=float)
    s = np.where(np.isfinite(s), s, -np.inf)
    s = np.maximum.accumulate(s) if s.size else s
    s = np.where(np.isfinite(s), s, 0.0)
    return s - (s[0] if s.size else 0.0)


def time_axis(time: np.ndarray | None, n: int) -> np.ndarray:
    """τ of a release's public ``time`` column (datetime64; None: the index), as the fill
    computed it: seconds since the first time, running maximum."""
    if time is None or len(time) == 0:
        return running_seconds(None, n)
    t = np.asarray(time)
    return running_seconds((t - t[0]) / np.timedelta64(1, "s"), n)


def public_times(space: Space) -> np.ndarray:
    """τ_t of a release: seconds since the first timestamp (running maximum) or the index."""
    return running_seconds(space.seconds, space.n)


def _wrap(d: np.ndarray) -> np.ndarray:
    """Degrees of longitude taken the shorter way round: into [−180, 180] (unchanged inside)."""
    return np.where(np.abs(d) > 180.0, (d + 180.0) % 360.0 - 180.0, d)


def interpolate_fill(cols: Columns, published: np.ndarray, tau: np.ndarray, *,
                     weight: float = 1.0, longitude: bool = False) -> Columns:
    """``cols`` with every non-fresh moment t between two fresh ones a < t < b replaced by
    x̃_a + ``weight``·w_t·(x̃_b − x̃_a), w_t = (τ_t − τ_a)/(τ_b − τ_a) (1: the straight line in
    time; 0.5: halfway between it and the repeat); the repeat after the last fresh moment; NaN
    before the first.

    ``cols``: arrays of shape (..., n) (one row per release); only their entries where
    ``published`` (same shape) is True are read. ``tau``: (n,) non-decreasing public times (two
    fresh moments at equal times: the earlier one is repeated). ``longitude``: the last column is
    a longitude in degrees (interpolated the shorter way round, kept in [−180, 180]).
    Vectorised: no loop over moments or rows.
    """
    pub = np.asarray(published, dtype=bool)
    n = pub.shape[-1]
    tau = np.asarray(tau, dtype=float)
    if tau.shape != (n,):
        raise ParameterError(f"tau must have one time per moment ({n}), got shape {tau.shape}")
    if n == 0:
        return tuple(np.array(c, dtype=float) for c in cols)
    ar = np.arange(n)
    prev = np.where(pub, ar, -1)
    np.maximum.accumulate(prev, axis=-1, out=prev)
    nxt = np.where(pub, ar, n)[..., ::-1]
    nxt = np.minimum.accumulate(nxt, axis=-1)[..., ::-1]
    inside = ~pub & (prev >= 0) & (nxt < n)
    a, b = np.maximum(prev, 0), np.minimum(nxt, n - 1)
    ta, tb = tau[a], tau[b]
    span = tb - ta
    w = np.zeros(np.broadcast_shapes(pub.shape, tau.shape))
    np.divide(tau - ta, span, out=w, where=inside & (span > 0))
    w *= float(weight)
    out = []
    last = len(cols) - 1
    for k, c in enumerate(cols):  # one or two columns (value; lat, lon)
        c = np.asarray(c, dtype=float)
        ca = np.take_along_axis(c, a, axis=-1)
        d = np.take_along_axis(c, b, axis=-1) - ca
        lon = longitude and k == last
        d = _wrap(d) if lon else d
        v = _wrap(ca + w * d) if lon else ca + w * d
        filled = np.where(inside, v, np.where(prev >= 0, ca, np.nan))
        out.append(filled)
    return tuple(out)


def apply_fill(cols: Columns, published: np.ndarray, space: Space, fill: str) -> Columns:
    """The columns a release shows under ``fill`` (see the module docstring), from its fresh
    releases at the ``published`` moments (other entries are not read)."""
    if check_fill(fill) == "repeat":
        return forward_fill(cols, published)
    return interpolate_fill(cols, published, public_times(space), weight=FILL_WEIGHT[fill],
                            longitude=space.kind == "locations")


INTERPOLATED_RTOL = 1e-12
"""Relative tolerance of :func:`interpolated_rows` (rounding of the fill is ~1e-16 relative)."""


def _on_line(y: np.ndarray, base: np.ndarray, other: np.ndarray, r: np.ndarray,
             longitude: bool) -> np.ndarray:
    """Rows where y = base + r·(other − base) within INTERPOLATED_RTOL (longitude wrapped)."""
    d = other - base
    if longitude:
        d[:, -1] = _wrap(d[:, -1])
    gap = y - (base + r[:, None] * d)
    if longitude:
        gap[:, -1] = _wrap(gap[:, -1])
    scale = np.abs(base) + np.abs(y) + np.abs(other)
    with np.errstate(invalid="ignore"):
        return (np.abs(gap) <= INTERPOLATED_RTOL * scale).all(axis=1)


def interpolated_rows(y: np.ndarray, tau: np.ndarray, *, fill: str = "interpolate",
                      longitude: bool = False) -> np.ndarray:
    """True where row i of a delayed fill's output (``fill`` "interpolate" or "halfway") is a
    filled moment, read from the public output alone. Within a run between fresh releases the
    filled rows and the fresh row before them lie on one line in time, ending at x̃_b (λ = 1) or
    short of it (λ < 1). Row i is filled when it lies on that line through

    * rows i−1 and i+1 at its time (every filled row whose neighbours are on the line: all of
      them when λ = 1);
    * for λ < 1 also rows i−2 and i−1, extended to its time (the last row of a longer run), or
      rows i−1 and i+1 at λ times its time's share (a run of one row).

    A fresh row passes only if independent noisy releases fall on one line to 1e-12: the
    analogue of two fresh releases being equal under ``fill="repeat"``. ``y``: (n, k) public
    output; ``tau``: (n,) public times; ``longitude``: the last column is a longitude."""
    lam = FILL_WEIGHT[check_fill(fill)]
    y = np.asarray(y, dtype=float)
    n = y.shape[0]
    out = np.zeros(n, dtype=bool)
    if n < 3 or lam == 0.0:
        return out
    tau = np.asarray(tau, dtype=float)
    span = tau[2:] - tau[:-2]
    w = np.divide(tau[1:-1] - tau[:-2], span, out=np.zeros(n - 2), where=span > 0)
    inner = (w > 0) & (w < 1)
    a, m, b = y[:-2], y[1:-1], y[2:]
    hit = inner & _on_line(m, a, b, w, longitude)
    if lam < 1.0:
        hit |= inner & _on_line(m, a, b, lam * w, longitude)
        step = tau[1:-1] - tau[:-2]                       # τ_{i−1} − τ_{i−2} for i = 2..n−1
        ahead = tau[2:] - tau[1:-1]                       # τ_i − τ_{i−1}
        r = np.divide(ahead, step, out=np.zeros(n - 2), where=step > 0)
        ext = (step > 0) & (ahead > 0) & _on_line(y[2:], y[1:-1], 2 * y[1:-1] - y[:-2], r,
                                                  longitude)
        out[2:] |= ext
    out[1:-1] |= hit
    return out & np.isfinite(y).all(axis=1)
