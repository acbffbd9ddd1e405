"""Release a time series or a trajectory under a landmark-privacy scheme.

``release_values`` (Laplace noise, sensitivity Δ) and ``release_locations`` (planar Laplace,
protection radius ``radius_m`` metres) run any of :data:`SCHEMES` and return an immutable
:class:`Release`: the released series, the budget ε_t actually spent at each t (``budget``), and
which timestamps were fresh releases (``published``) rather than republished approximations.
``release_with_budget`` releases under a per-timestamp budget computed elsewhere.

One argument order everywhere: ``(data, landmarks, *, epsilon, scheme, ...)``; the privacy
parameters are keyword-only.

Guarantees (ε_t of independent steps, landmark set L, total ε): every scheme except ``event``
satisfies (ε, L)-landmark privacy, G_t = Σ_{i∈L∪{t}} ε_i ≤ ε at every t, for every input;
``bd``/``ba`` additionally satisfy w-event ε-DP (every w-window spends ≤ ε). ``event`` is the
event-level baseline and is NOT landmark-private once |L| ≥ 1 (see :mod:`lmdk_core.allocation`).
Landmark privacy takes the landmark timestamps as public input: Skip's repeats, for example,
show where the landmarks are (hiding them is the job of dummy landmarks).

Randomness (``rng``): ``None`` (the default) draws fresh OS entropy for every release — the only
setting for a real release. An int seed or a numpy Generator makes the release reproducible: a
*simulation*, unsafe to publish (whoever knows the seed subtracts the noise, and two releases with
the same seed share their noise, so their difference reveals the data). Such a release has
``Release.seeded = True`` and every export labels it "simulation, not private"; the seed itself
is never stored. ``seed=`` is a deprecated alias of ``rng=``.

Noise (``noise=``): "safe" (default) releases through the exact, floating-point-safe
mechanisms of lmdk_core.mechanisms, fed by a fresh ChaCha20 keystream keyed from the OS; "fast"
draws the same laws in floating point, for simulations only (docs/fp-safe-noise.md). The draw
order is fixed and independent of the data (lmdk_core.schemes._kernel, lmdk_core.noise.apply).

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

from ._deprecation import renamed, renamed_property
from .accounting import as_landmark_mask, landmark_guarantee
from .errors import ParameterError
from .landmarks import trajectory_points
from .noise.source import RandomSource, as_source, check_noise
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
from .times import ns_index, utc_times
from .validation import as_budget_array, as_finite_array, check_epsilon, check_positive

__all__ = [
    "PUBLIC_COLUMNS",
    "SCHEMES",
    "SCHEME_INFO",
    "SCHEME_PARAMS",
    "SIMULATION_LABEL",
    "Release",
    "release_locations",
    "release_values",
    "release_with_budget",
]

SIMULATION_LABEL = "simulation, not private (seeded or floating-point noise: do not publish)"
"""How everything produced from a simulation (a seeded or ``noise="fast"`` release) is
labelled."""

PUBLIC_COLUMNS = {"values": ("time", "value"), "locations": ("time", "lat", "lon")}
"""The only columns a public export may hold (``time`` when the release has times)."""

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

    ``budget[t]``: ε_t spent at t (0 where nothing fresh was released; ``.eps`` is a deprecated
    alias until 0.3);
    ``published[t]``: fresh noisy release (True) or republished/approximated (False; NaN output
    before the first release); ``landmarks``: the landmark mask used; ``params``: the scheme's
    parameters, ``sensitivity`` or ``radius_m``, derived budgets such as ``window_epsilon``;
    ``budget_source``: ``"scheme"`` or ``"custom"`` (release_with_budget); ``seeded``: True when
    drawn from a seed or a caller's generator, or with ``noise="fast"`` — a simulation, not a
    private release (the seed itself is not kept). Exactly one of ``values`` or (``lat``,
    ``lon``) is set; ``time`` is the input's times as ``datetime64[ns]`` in UTC (None without
    times).

    ``budget``, ``published`` and ``landmarks`` are private: they describe the true landmarks.
    Only :meth:`to_frame` with its default ``public=True`` is meant to be published.
    """

    scheme: str
    epsilon: float
    budget: np.ndarray
    published: np.ndarray
    landmarks: np.ndarray
    params: Mapping[str, Any]
    values: np.ndarray | None = None
    lat: np.ndarray | None = None
    lon: np.ndarray | None = None
    time: np.ndarray | None = None
    seeded: bool = False
    budget_source: str = "scheme"

    @property
    def simulation(self) -> bool:
        """True for a simulation — seeded, or drawn with ``noise="fast"`` (floating-point noise,
        whose outputs can reveal the input): every export labels it "simulation, not private".
        Same as :attr:`seeded`, which covers both."""
        return self.seeded

    def __post_init__(self) -> None:
        if self.time is not None:
            object.__setattr__(self, "time", utc_times(self.time))
        for name in ("budget", "published", "landmarks", "values", "lat", "lon", "time"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))
        if "seed" in self.params or "rng" in self.params:
            raise ParameterError("a Release never stores its seed or generator")
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))
        object.__setattr__(self, "seeded", bool(self.seeded))

    # the field was called ``eps``; per-timestamp budgets are spelled ``budget`` everywhere
    eps = renamed_property("eps", "budget")

    @property
    def kind(self) -> str:
        """"values" or "locations"."""
        return "values" if self.values is not None else "locations"

    @property
    def label(self) -> str:
        """"private release" or the simulation label for a seeded release."""
        return SIMULATION_LABEL if self.seeded else "private release (fresh OS randomness)"

    def __len__(self) -> int:
        return int(self.budget.size)

    @property
    def budget_spent(self) -> float:
        """Σ_t ε_t (not the privacy loss: see lmdk_core.accounting.landmark_guarantee)."""
        return float(self.budget.sum())

    @property
    def fresh_share(self) -> float:
        """Share of timestamps with a fresh release (0 for an empty release)."""
        return float(self.published.mean()) if self.published.size else 0.0

    def to_frame(self, *, public: bool = True) -> pd.DataFrame:
        """The release as a DataFrame.

        ``public=True`` (default): only what an observer is meant to see — ``time`` (UTC, when
        known) and ``value`` or ``lat``/``lon``. ``public=False`` adds the private columns
        ``eps`` (ε_t), ``published`` and ``landmark``, which reveal the landmarks: never publish
        that frame. A seeded release's frame says so in ``frame.attrs["lmdk"]``.
        """
        cols: dict[str, Any] = {}
        if self.time is not None:
            cols["time"] = ns_index(self.time.view(np.int64))
        if self.values is not None:
            cols["value"] = np.array(self.values)
        else:
            cols["lat"] = np.array(self.lat)
            cols["lon"] = np.array(self.lon)
        if not public:
            cols["eps"] = np.array(self.budget)
            cols["published"] = np.array(self.published)
            cols["landmark"] = np.array(self.landmarks)
        frame = pd.DataFrame(cols)
        frame.attrs["lmdk"] = {"public": public, "label": self.label, "seeded": self.seeded}
        return frame


def _random_source(rng: Any) -> tuple[RandomSource, bool]:
    """The random source to draw from and whether it is reproducible (seeded)."""
    try:
        return as_source(rng), rng is not None
    except ParameterError as err:
        raise ParameterError(str(err).replace("seed must", "rng must", 1)) from None


def _times(data: Any) -> np.ndarray | None:
    if isinstance(data, pd.DataFrame) and "time" in data.columns:
        return utc_times(data["time"])
    return None


def _release(space: Space, landmarks: Any, epsilon: float, scheme: str, params: dict[str, Any],
             rng: Any, extra: dict[str, Any], time: np.ndarray | None,
             noise: str = "safe") -> Release:
    mask = as_landmark_mask(landmarks, space.n)
    source, seeded = _random_source(rng)
    seeded = seeded or noise == "fast"  # float noise is for simulations only, seeded or not
    out = run_scheme(scheme, space, mask, epsilon=epsilon, rng=source, params=params, noise=noise)
    cols: dict[str, Any] = dict(zip(("values",) if space.kind == "values" else ("lat", "lon"),
                                    out.columns, strict=True))
    return Release(
        scheme=scheme, epsilon=epsilon, budget=out.eps, published=out.published, landmarks=mask,
        params={**params, **extra, **out.derived}, time=time, seeded=seeded, **cols,
    )


@renamed(seed="rng")
def release_values(
    values: Any, landmarks: Any = None, *, epsilon: float, scheme: str,
    sensitivity: float = 1.0, rng: Any = None, noise: str = "safe",
    **params: Any,
) -> Release:
    """Release a numeric series with Laplace noise (Δ = ``sensitivity``) under ``scheme``.

    ``landmarks``: bool mask or integer indices (None: no landmarks); ``epsilon``: total budget
    ε > 0; ``rng``: None = fresh OS randomness (real releases), an int seed or a Generator = a
    reproducible simulation, not private (``seed=`` is deprecated); ``params``: the
    scheme's parameters (defaults in SCHEME_PARAMS). Raises ParameterError on invalid input.
    """
    resolved, eps = resolve_params(check_scheme(scheme), params), check_epsilon(epsilon)
    delta = check_positive(sensitivity, "sensitivity")
    x = as_finite_array(values, "values")
    return _release(Space("values", (x,), delta), landmarks, eps, scheme, resolved, rng,
                    {"sensitivity": delta}, None, check_noise(noise))


@renamed(seed="rng")
def release_locations(
    traj: Any, landmarks: Any = None, *, epsilon: float, scheme: str,
    radius_m: float = 200.0, rng: Any = None, noise: str = "safe",
    **params: Any,
) -> Release:
    """Release a trajectory with planar Laplace noise (protection radius ``radius_m`` metres).

    ``traj``: DataFrame with lat, lon (and optionally time, kept as Release.time in UTC) or a
    ``(lat, lon)`` pair of arrays in decimal degrees. Other arguments as in release_values.
    """
    resolved, eps = resolve_params(check_scheme(scheme), params), check_epsilon(epsilon)
    r = check_positive(radius_m, "radius_m")
    lat, lon = trajectory_points(traj)
    time, seconds = _times(traj), None
    if time is not None and time.size:  # public times: Reserve's motion model reads them
        seconds = (time - time[0]) / np.timedelta64(1, "s")
    return _release(Space("locations", (lat, lon), r, seconds), landmarks, eps, scheme, resolved,
                    rng, {"radius_m": r}, time, check_noise(noise))


@renamed(seed="rng", eps="budget")
def release_with_budget(
    data: Any, landmarks: Any = None, *, budget: Any = None, epsilon: float | None = None,
    radius_m: float | None = None, sensitivity: float | None = None, rng: Any = None,
    noise: str = "safe",
) -> Release:
    """Release ``data`` with a given per-timestamp budget ε_t ≥ 0 (scheme ``"budget"``).

    For allocations computed elsewhere, e.g. the TPL-bounded budgets of
    :func:`lmdk_core.correlation.allocate_bounded_tpl`: a fresh release wherever ε_t > 0,
    the last release repeated (spending 0) elsewhere. ``data`` is a trajectory (as in
    :func:`release_locations`; give ``radius_m``, default 200 m) or a numeric series (give
    ``sensitivity``). ``epsilon``: the user's total budget, recorded as ``Release.epsilon``
    (it is what the release is judged against; the budget itself may exceed it). Without it,
    ``Release.epsilon`` is the landmark guarantee the budget achieves, max_t G_t over
    ``landmarks`` (none: max_t ε_t). ``eps=`` (for ``budget=``) and ``seed=`` are deprecated.
    ``budget`` may be an allocation object with ``budget`` and ``epsilon_model`` (a
    :class:`lmdk_core.correlation.BoundedAllocation`): the release then carries the model's cost
    in ``params`` (``epsilon_model``, ``model_key``, ``model_protects``), which a
    :class:`lmdk_core.ReleaseLedger` adds to the total.
    """
    if budget is None:
        raise ParameterError("release_with_budget needs budget= (ε_t per timestamp)")
    model_cost: dict[str, Any] = {}
    # an allocation object: its budgets and what its model cost (a Release has budget but no
    # epsilon_model; an array has neither)
    if hasattr(budget, "budget") and hasattr(budget, "epsilon_model"):
        if float(budget.epsilon_model) > 0:
            model_cost = {"epsilon_model": float(budget.epsilon_model),
                          "model_key": str(getattr(budget, "model_key", "") or ""),
                          "model_protects": getattr(budget, "model_protects", None)}
        budget = budget.budget
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
        time = _times(data)
    b = as_budget_array(budget, "budget")
    if b.size != space.n:
        raise ParameterError(f"length mismatch: budget has length {b.size}, data has {space.n}")
    mask = as_landmark_mask(landmarks, space.n)
    target = None if epsilon is None else check_epsilon(epsilon)
    noise = check_noise(noise)
    source, seeded = _random_source(rng)
    seeded = seeded or noise == "fast"  # float noise is for simulations only, seeded or not
    out = with_achieved(run_budget(space, budget=b, source=source, noise=noise), mask, noise)
    achieved = float(landmark_guarantee(b, mask).max()) if space.n else 0.0
    cols: dict[str, Any] = dict(zip(("values",) if space.kind == "values" else ("lat", "lon"),
                                    out.columns, strict=True))
    return Release(scheme="budget", epsilon=achieved if target is None else target,
                   budget=out.eps, published=out.published, landmarks=mask,
                   params={**extra, "achieved_guarantee": achieved, **model_cost, **out.derived},
                   time=time,
                   seeded=seeded, budget_source="custom", **cols)
