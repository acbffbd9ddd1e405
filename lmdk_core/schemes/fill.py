"""What a release shows at a moment without a fresh release: the scheme parameter ``fill``.

Skip and Reserve publish fresh only where their budget ε_t > 0; every other moment shows a
function of the fresh releases around it:

* ``fill="repeat"`` (default; the thesis's Skip, online): the last fresh release (NaN before the
  first one);
* ``fill="interpolate"`` (delayed): between two fresh releases at t_a < t < t_b, the linear
  interpolation in public time of the two *released* points,
  x̃_a + (τ_t − τ_a)/(τ_b − τ_a)·(x̃_b − x̃_a); after the last fresh release, the repeat;
  before the first, NaN. The output at t is known once t_b's fresh release exists: a delay of
  at most the run of non-fresh moments around t.

Both read only released values at fresh moments, the fresh-release flags (a function of the
scheme's schedule) and the public times τ, never the data: post-processing, so every ε_t and
G_t is that of the scheme's fresh releases alone (proof: docs/landmark-reserve.md §7).
Locations interpolate latitude and longitude linearly in degrees, longitude along the shorter
way round the antimeridian.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ParameterError
from ._space import Columns, Space, forward_fill

FILLS = ("repeat", "interpolate")
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
                     longitude: bool = False) -> Columns:
    """``cols`` with every non-fresh moment between two fresh ones replaced by the linear
    interpolation in ``tau`` of the two fresh released values; the repeat after the last fresh
    moment; NaN before the first.

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
    return interpolate_fill(cols, published, public_times(space),
                            longitude=space.kind == "locations")


INTERPOLATED_RTOL = 1e-12
"""Relative tolerance of :func:`interpolated_rows` (rounding of the fill is ~1e-16 relative)."""


def interpolated_rows(y: np.ndarray, tau: np.ndarray, *, longitude: bool = False) -> np.ndarray:
    """True where row i of a ``fill="interpolate"`` output is a filled moment, read from the
    public output alone: rows i−1, i, i+1 finite and row i on the line through rows i−1 and i+1
    at its time (within INTERPOLATED_RTOL). Every filled row between two fresh releases passes
    (its neighbours lie on the same segment); a fresh row passes only if three noisy releases
    fall on one line to 1e-12, the analogue of two fresh releases being equal under
    ``fill="repeat"``. ``y``: (n, k) public output; ``tau``: (n,) public times;
    ``longitude``: the last column is a longitude in degrees."""
    y = np.asarray(y, dtype=float)
    n = y.shape[0]
    out = np.zeros(n, dtype=bool)
    if n < 3:
        return out
    tau = np.asarray(tau, dtype=float)
    a, m, b = y[:-2], y[1:-1], y[2:]
    span = tau[2:] - tau[:-2]
    w = np.divide(tau[1:-1] - tau[:-2], span, out=np.zeros(n - 2), where=span > 0)[:, None]
    d = b - a
    if longitude:
        d[:, -1] = _wrap(d[:, -1])
    gap = m - (a + w * d)
    if longitude:
        gap[:, -1] = _wrap(gap[:, -1])
    scale = np.abs(a) + np.abs(m) + np.abs(b)
    with np.errstate(invalid="ignore"):
        on = (np.abs(gap) <= INTERPOLATED_RTOL * scale).all(axis=1)
    out[1:-1] = on & np.isfinite(y).all(axis=1)[1:-1] & (span > 0)
    return out
