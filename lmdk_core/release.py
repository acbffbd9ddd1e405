"""Release a time series or a trajectory under a landmark-privacy scheme.

``release_values`` (Laplace noise, sensitivity Δ) and ``release_locations`` (planar Laplace,
protection radius r metres) run any of :data:`SCHEMES` and return an immutable :class:`Release`:
the released series, the budget ε_t actually spent at each t, and which timestamps were fresh
releases (``published``) rather than republished approximations.

Guarantees (ε_t of independent steps, landmark set L, total ε): every scheme except ``event``
satisfies (ε, L)-landmark privacy, G_t = Σ_{i∈L∪{t}} ε_i ≤ ε at every t, for every input;
``bd``/``ba`` additionally satisfy w-event ε-DP (every w-window spends ≤ ε). ``event`` is the
event-level baseline and is NOT landmark-private once |L| ≥ 1 (see :mod:`lmdk_core.allocation`).
Noise (``noise=``): "safe" (default) releases through the exact, floating-point-safe mechanisms
of lmdk_core.mechanisms, fed by fresh OS entropy unless a seed is given; "fast" draws the same
laws in floating point, for simulations only (docs/fp-safe-noise.md). A seed makes a release
reproducible and is for simulations and tests only: the draw order is fixed and independent
of the data (lmdk_core.schemes._kernel, lmdk_core.noise.apply).

Derived budgets are reported in ``Release.params``: ``release_epsilon`` (adaptive, ε/(|L|+1)),
``window_epsilon`` (bd/ba, the landmark-aware window budget, see lmdk_core.schemes.wevent),
``noise``, and ``achieved_epsilon`` — the landmark guarantee max_t G'_t ≤ ε of the per-step
budgets the exact mechanisms actually achieve (grid rounding included).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from .accounting import as_landmark_mask, landmark_guarantee
from .landmarks import trajectory_points
from .noise.source import as_source, check_noise
from .schemes import (
    SCHEME_INFO,
    SCHEME_PARAMS,
    SCHEMES,
    check_scheme,
    resolve_params,
    run_scheme,
    with_achieved,
)
from .schemes._space import Space
from .schemes.vectorised import run_budget
from .errors import ParameterError
from .validation import as_budget_array, as_finite_array, check_epsilon, check_positive

__all__ = [
    "Release",
    "SCHEMES",
    "SCHEME_INFO",
    "SCHEME_PARAMS",
    "release_locations",
    "release_values",
    "release_with_budget",
]


def _frozen(arr: np.ndarray | None) -> np.ndarray | None:
    if arr is None:
        return None
    arr = np.asarray(arr)
    if arr.flags.writeable:
        arr = arr.copy() if arr.base is not None else arr
        arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class Release:
    """Result of one release (immutable: arrays are read-only, ``params`` a read-only mapping).

    ``eps[t]``: budget spent at t (0 where nothing fresh was released); ``published[t]``: fresh
    noisy release (True) or republished/approximated (False; NaN before the first release);
    ``landmarks``: the landmark mask used; ``params``: every parameter used (scheme parameters,
    ``seed``, ``sensitivity`` or ``radius_m``, derived budgets such as ``window_epsilon``).
    Exactly one of ``values`` or (``lat``, ``lon``) is set; ``time`` is copied from the input.
    """

    scheme: str
    epsilon: float
    eps: np.ndarray
    published: np.ndarray
    landmarks: np.ndarray
    params: Mapping[str, Any]
    values: np.ndarray | None = None
    lat: np.ndarray | None = None
    lon: np.ndarray | None = None
    time: np.ndarray | None = None

    def __post_init__(self) -> None:
        for name in ("eps", "published", "landmarks", "values", "lat", "lon", "time"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    @property
    def kind(self) -> str:
        """"values" or "locations"."""
        return "values" if self.values is not None else "locations"

    def __len__(self) -> int:
        return int(self.eps.size)

    @property
    def budget_spent(self) -> float:
        """Σ_t ε_t (not the privacy loss: see lmdk_core.accounting.landmark_guarantee)."""
        return float(self.eps.sum())

    @property
    def fresh_share(self) -> float:
        """Share of timestamps with a fresh release (0 for an empty release)."""
        return float(self.published.mean()) if self.published.size else 0.0

    def to_frame(self) -> pd.DataFrame:
        """DataFrame with columns [time], value or lat/lon, eps, published, landmark."""
        cols: dict[str, Any] = {}
        if self.time is not None:
            cols["time"] = self.time
        if self.values is not None:
            cols["value"] = self.values
        else:
            cols["lat"] = self.lat
            cols["lon"] = self.lon
        cols["eps"] = self.eps
        cols["published"] = self.published
        cols["landmark"] = self.landmarks
        return pd.DataFrame({k: np.array(v) for k, v in cols.items()})


def _setup(scheme: str, epsilon: Any, params: Mapping[str, Any]) -> tuple[dict[str, Any], float]:
    resolved = resolve_params(check_scheme(scheme), params)
    return resolved, check_epsilon(epsilon)


def _release(space: Space, landmarks: Any, epsilon: float, scheme: str, params: dict[str, Any],
             seed: Any, extra: dict[str, Any], time: np.ndarray | None,
             noise: str = "safe") -> Release:
    mask = as_landmark_mask(landmarks, space.n)
    out = run_scheme(scheme, space, mask, epsilon, seed, params, noise)
    cols = dict(zip(("values",) if space.kind == "values" else ("lat", "lon"), out.columns))
    return Release(
        scheme=scheme, epsilon=epsilon, eps=out.eps, published=out.published, landmarks=mask,
        params={**params, **extra, "seed": seed, **out.derived}, time=time, **cols,
    )


def release_values(
    values: Any, landmarks: Any, epsilon: float, scheme: str, *,
    sensitivity: float = 1.0, seed: Any = None, noise: str = "safe", **params: Any,
) -> Release:
    """Release a numeric series with Laplace noise (Δ = ``sensitivity``) under ``scheme``.

    ``landmarks``: bool mask or integer indices; ``epsilon``: total budget ε > 0; ``params``:
    the scheme's parameters (defaults in SCHEME_PARAMS). Raises ParameterError on invalid input.
    """
    resolved, eps = _setup(scheme, epsilon, params)
    delta = check_positive(sensitivity, "sensitivity")
    x = as_finite_array(values, "values")
    return _release(Space("values", (x,), delta), landmarks, eps, scheme, resolved, seed,
                    {"sensitivity": delta}, None, check_noise(noise))


def release_locations(
    traj: Any, landmarks: Any, epsilon: float, scheme: str, *,
    radius_m: float = 200.0, seed: Any = None, noise: str = "safe", **params: Any,
) -> Release:
    """Release a trajectory with planar Laplace noise (protection radius ``radius_m`` metres).

    ``traj``: DataFrame with lat, lon (and optionally time, copied to Release.time) or a
    ``(lat, lon)`` pair of arrays in decimal degrees. Other arguments as in release_values.
    """
    resolved, eps = _setup(scheme, epsilon, params)
    r = check_positive(radius_m, "radius_m")
    lat, lon = trajectory_points(traj)
    time = None
    if isinstance(traj, pd.DataFrame) and "time" in traj.columns:
        time = traj["time"].to_numpy(copy=True)
    return _release(Space("locations", (lat, lon), r), landmarks, eps, scheme, resolved, seed,
                    {"radius_m": r}, time, check_noise(noise))


def release_with_budget(
    data: Any, eps: Any, *, landmarks: Any = None, radius_m: float | None = None,
    sensitivity: float | None = None, seed: Any = None, noise: str = "safe",
) -> Release:
    """Release ``data`` with a given per-timestamp budget ε_t ≥ 0 (scheme ``"budget"``).

    For allocations computed elsewhere, e.g. the TPL-bounded budgets of
    :func:`lmdk_core.correlation.allocate_bounded_tpl`: a fresh release wherever ε_t > 0,
    the last release repeated (spending 0) elsewhere. ``data`` is a trajectory (as in
    :func:`release_locations`; give ``radius_m``, default 200 m) or a numeric series (give
    ``sensitivity``). The budget itself is the only guarantee: ``Release.epsilon`` is set to
    the landmark guarantee it achieves, max_t G_t over ``landmarks`` (none: max_t ε_t).
    """
    if radius_m is not None and sensitivity is not None:
        raise ParameterError("give radius_m (locations) or sensitivity (values), not both")
    if sensitivity is not None:
        scale = check_positive(sensitivity, "sensitivity")
        space = Space("values", (as_finite_array(data, "values"),), scale)
        extra: dict[str, Any] = {"sensitivity": scale}
        time = None
    else:
        scale = check_positive(200.0 if radius_m is None else radius_m, "radius_m")
        space = Space("locations", trajectory_points(data), scale)
        extra = {"radius_m": scale}
        time = (data["time"].to_numpy(copy=True)
                if isinstance(data, pd.DataFrame) and "time" in data.columns else None)
    budget = as_budget_array(eps)
    if budget.size != space.n:
        raise ParameterError(f"length mismatch: eps has length {budget.size}, data has {space.n}")
    mask = as_landmark_mask(landmarks, space.n)
    noise = check_noise(noise)
    out = with_achieved(run_budget(space, budget, as_source(seed), noise), mask, noise)
    achieved = float(landmark_guarantee(budget, mask).max()) if space.n else 0.0
    cols = dict(zip(("values",) if space.kind == "values" else ("lat", "lon"), out.columns))
    return Release(scheme="budget", epsilon=achieved, eps=out.eps, published=out.published,
                   landmarks=mask, params={**extra, "seed": seed, **out.derived}, time=time,
                   **cols)
