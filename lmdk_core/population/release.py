"""Population release: noisy counts per grid cell × time bin under personal budgets.

``release_population(traj, preferences, epsilon of each user via preferences, ...)`` runs
:func:`lmdk_core.population.core.process_partition` on the whole frame (``engine="memory"``) or
on Dask partitions that each hold every row of their users (``engine="dask"``), sums the sparse
counts, and adds exact discrete-Laplace(τ/2) noise once to every cell of the public grid.

**Neighbours.** Two populations are neighbours for u when u's data in one bin differ in any way:
u's record added, removed, or *moved* to another cell of the bin (a move changes two counts, so
the counts have sensitivity 2 and the noise parameter is τ/2). Every statement below holds for
all three.

Methods (Jorgensen et al., ICDE 2015, here per bin with landmark budgets):

* ``"personalised"`` — Sample: u's record in bin t is kept with probability
  π = e^{τ/2}(e^{ε_{u,t}} − 1)/((e^{τ/2} − 1)(e^{τ/2} + e^{ε_{u,t}})) if ε_{u,t} < τ, else 1
  (:func:`~lmdk_core.population.tau.keep_probability`: Jorgensen's probability recalibrated so
  that a move costs exactly ε_{u,t}); then counts with discrete Laplace(τ/2) noise. u's loss in
  bin t is min(ε_{u,t}, τ), so u keeps (ε_u, L_u)-landmark privacy;
* ``"threshold"`` — users with ε_{u,t} < τ are dropped from bin t, the others kept;
* ``"minimum"`` — τ = the public floor of the per-bin budgets (everyone treated as the most
  conservative user; users at or above it are all kept);
* ``"user_level"`` — every user gets the public floor ε_min spread uniformly over all bins
  (scheme ``user``, τ = ε_min / n_bins): classic user-level DP, ignoring preferences.

Only ``counts`` (and the public parameters) are public; :class:`PrivateStats` holds the true
counts and per-user figures for evaluation and is never written to a public file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd

from .._deprecation import renamed
from ..errors import ParameterError
from ..noise import RandomSource, key_bytes
from ..validation import check_int
from .core import (
    BOUNDING_RULES,
    PartitionResult,
    Totals,
    keyed_source,
    places_by_user,
    process_partition,
    user_losses,
)
from .grid import Grid
from .noise import MOVE_SENSITIVITY, count_noise_tau, publish_counts, snap_tau
from .partitions import MAX_ROWS, load, units_of
from .preferences import PreferenceMix
from .tau import choose_tau, public_bin_budgets

__all__ = [
    "METHODS", "PopulationRelease", "PrivateStats", "release_losses", "release_methods",
    "release_population", "resolve_method",
]

METHODS = ("personalised", "threshold", "minimum", "user_level")
ENGINES = ("memory", "dask")
_SCHEMES = ("event", "user", "uniform", "skip")

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True, eq=False)
class PrivateStats:
    """PRIVATE figures of a release (true counts, per-user budgets); never publish these."""

    true_counts: np.ndarray
    kept_counts: np.ndarray
    users: pd.DataFrame
    n_points: int
    n_outside: int


@dataclass(frozen=True, eq=False)
class PopulationRelease:
    """Public ``counts`` (int64, shape ``grid.shape`` = bins × rows × cols) and the public
    parameters that produced them; ``private`` holds what must not be published. ``tau`` is the
    threshold (in budget units); each count carries discrete Laplace(:attr:`noise_tau` = τ/2)
    noise."""

    counts: np.ndarray
    grid: Grid
    method: str
    scheme: str
    tau: float
    rule: str
    engine: str
    private: PrivateStats = field(repr=False)

    @property
    def noise_tau(self) -> float:
        """The parameter τ/2 of the discrete Laplace law Pr[y] ∝ exp(−(τ/2)|y|) on each count."""
        return count_noise_tau(self.tau)

    def released_bin_totals(self, *, clamp_to: int | None = None) -> np.ndarray:
        """Σ over cells per bin of the released counts: users kept per bin, as released.

        ``clamp_to``: the public number of people n; the totals are then clipped to [0, n]
        (each person has at most one record per bin, so the true total lies there). This reads
        only the released counts and a public number: post-processing, free of privacy cost;
        it can only move a total closer to the true one."""
        totals = self.counts.sum(axis=(1, 2))
        if clamp_to is None:
            return totals
        return np.clip(totals, 0, check_int(clamp_to, "clamp_to", minimum=0))

    def public_frame(self) -> pd.DataFrame:
        """The released counts, one row per bin × cell (every cell of the public grid):
        ``time`` (bin start, UTC), ``row``, ``col``, ``lat``, ``lon`` (cell centre), ``count``.
        Only public values: no true count, no budget, no seed."""
        n_bins, n_rows, n_cols = self.grid.shape
        lat, lon = self.grid.cell_centres()
        b, r, c = np.indices((n_bins, n_rows, n_cols)).reshape(3, -1)
        return pd.DataFrame({"time": self.grid.bin_starts()[b], "row": r, "col": c,
                             "lat": lat[r], "lon": lon[c],
                             "count": self.counts.reshape(-1)})

    def public_csv(self) -> str:
        """:meth:`public_frame` as CSV (times ISO 8601 UTC, cell centres to 6 decimals)."""
        frame = self.public_frame()
        frame["time"] = frame["time"].dt.strftime("%Y-%m-%dT%H:%M:%SZ")
        return frame.to_csv(index=False, float_format="%.6f")

    def public_metadata(self) -> dict:
        """JSON-ready public description (no seed, no budget, no true count)."""
        return {"lmdk": {"kind": "population-release", "version": 1},
                "method": self.method, "scheme": self.scheme, "tau": self.tau,
                "bounding_rule": self.rule,
                "noise": "discrete Laplace Pr[y] ∝ exp(-(tau/2)|y|) on every count, exact "
                         "integer sampler",
                "noise_tau": self.noise_tau,
                "neighbours": "one person's data in one bin: record added, removed or moved "
                              "to another cell",
                "grid": self.grid.to_dict()}


def resolve_method(method: str, scheme: str, tau: Any, *, n_bins: int,
                   mix: PreferenceMix | None = None, public_epsilon: Any = None,
                   epsilon_floor: float | None = None, assumed_landmark_bins: float = 0.0,
                   cell_count: float = 10.0) -> tuple[str, float, str]:
    """(scheme, τ, mode) actually run for ``method``, from public inputs only."""
    if method not in METHODS:
        raise ParameterError(f"unknown method {method!r}; use one of {', '.join(METHODS)}")
    if scheme not in _SCHEMES:
        raise ParameterError(f"unknown scheme {scheme!r}; use one of {', '.join(_SCHEMES)}")
    pub = None
    if public_epsilon is not None:
        pub = np.asarray(public_epsilon, dtype=np.float64)
    elif mix is not None:
        pub = mix.public_quantiles()
    floor = epsilon_floor if epsilon_floor is not None else (
        mix.floor if mix is not None else (float(np.min(pub)) if pub is not None else None))

    def need_public(what: str) -> np.ndarray:
        if pub is None:
            raise ParameterError(
                f"{what} needs public information: give the public preference mix, "
                "public_epsilon, or a numeric tau/epsilon_floor (private ε_u are never used)"
            )
        return pub

    if method == "user_level":
        if floor is None:
            need_public("user_level")
        assert floor is not None  # need_public raised: no public information
        return "user", snap_tau(float(floor) / n_bins), "sample"
    if method == "minimum":
        if floor is None:
            need_public("minimum")
        assert floor is not None  # need_public raised: no public information
        b = public_bin_budgets([float(floor)], scheme, n_bins,
                               assumed_landmark_bins=assumed_landmark_bins)
        return scheme, snap_tau(float(b.min())), "sample"
    if isinstance(tau, str):
        b = public_bin_budgets(need_public(f"tau rule {tau!r}"), scheme, n_bins,
                               assumed_landmark_bins=assumed_landmark_bins)
        t = choose_tau(tau, b, cell_count=cell_count)
    else:
        t = snap_tau(tau)
    return scheme, t, "threshold" if method == "threshold" else "sample"


def master_key(rng: Any) -> bytes:
    """32 key bytes: fresh OS entropy (rng=None), or derived from a simulation seed/Generator
    (:func:`lmdk_core.noise.source.key_bytes`, the package's one random source)."""
    return key_bytes(rng)


def noise_source(key: bytes) -> RandomSource:
    """The noise stream: the ChaCha20 keystream keyed by BLAKE2b(key ‖ "noise") (driver only;
    :func:`lmdk_core.population.core.keyed_source`)."""
    return keyed_source(key, b"noise")


def _preferences_series(preferences: Any) -> pd.Series:
    if isinstance(preferences, pd.Series):
        s = preferences
    elif isinstance(preferences, pd.DataFrame):
        if not {"uid", "epsilon"} <= set(preferences.columns):
            raise ParameterError("preferences need columns uid and epsilon")
        s = pd.Series(preferences["epsilon"].to_numpy(dtype=np.float64),
                      index=preferences["uid"].astype(str).to_numpy())
    elif isinstance(preferences, dict):
        s = pd.Series(preferences, dtype=np.float64)
    else:
        raise ParameterError("preferences must be a DataFrame (uid, epsilon), a Series or a dict")
    s = s.astype(np.float64)
    s.index = s.index.astype(str)
    bad = ~np.isfinite(s.to_numpy()) | (s.to_numpy() <= 0)
    if bad.any():
        raise ParameterError(f"user {s.index[np.flatnonzero(bad)[0]]!r}: epsilon must be a "
                             f"finite number > 0, got {s.iloc[np.flatnonzero(bad)[0]]}")
    if s.index.duplicated().any():
        raise ParameterError(f"user {s.index[s.index.duplicated()][0]!r} has two preferences")
    return s


@renamed(public_eps="public_epsilon")
def release_population(
    data: Any, preferences: Any, *, grid: Grid, places: pd.DataFrame | None = None,
    scheme: str = "skip", method: str = "personalised", tau: Any = "mean",
    mix: PreferenceMix | None = None, public_epsilon: Any = None,
    epsilon_floor: float | None = None, assumed_landmark_bins: float = 0.0,
    cell_count: float = 10.0, bounding_rule: str = "first", engine: str = "memory",
    rng: Any = None, progress: Progress | None = None, dask_partitions: int | None = None,
    scheduler: Any = None, storage_options: dict | None = None,
    partition_rows: int = MAX_ROWS,
) -> PopulationRelease:
    """Release counts per cell × bin of ``data`` (uid, time, lat, lon): a DataFrame, or a
    Parquet file, directory or fsspec URL (``file://``, ``s3://``, ``memory://`` …) partitioned
    by user (no user in two files; :func:`~lmdk_core.population.write_partitioned`).

    Both engines process user-disjoint partitions of at most ``partition_rows`` points
    (:mod:`.partitions`) and sum their sparse counts: ``engine="memory"`` one at a time in this
    process (memory bounded by a partition when reading Parquet), ``engine="dask"`` on the
    Dask cluster at ``scheduler`` (an address or a ``distributed.Client``; else the active
    client, else threads here). ``progress(stage, done, total)`` is called per partition.
    The release is the same for the same ``rng`` whatever the engine and partitioning: each
    user's coins are keyed by (release key, uid), the noise is drawn once on this process.

    ``preferences``: each user's ε_u (DataFrame uid, epsilon). ``places``: each user's landmark
    places (uid, lat, lon, radius_m). ``tau``: a number or a rule of :mod:`.tau` (rules read
    only ``mix``/``public_epsilon``). ``rng=None`` uses fresh OS entropy; a seed is for simulations.
    """
    if engine not in ENGINES:
        raise ParameterError(f"unknown engine {engine!r}; use one of {', '.join(ENGINES)}")
    if bounding_rule not in BOUNDING_RULES:
        raise ParameterError(f"unknown bounding rule {bounding_rule!r}; use one of "
                             f"{', '.join(BOUNDING_RULES)}")
    if not isinstance(grid, Grid):
        raise ParameterError("grid must be a lmdk_core.population.Grid")
    if engine == "memory" and scheduler is not None:
        raise ParameterError("a Dask scheduler needs engine='dask'")
    run_scheme, t, mode = resolve_method(
        method, scheme, tau, n_bins=grid.n_bins, mix=mix, public_epsilon=public_epsilon,
        epsilon_floor=epsilon_floor, assumed_landmark_bins=assumed_landmark_bins,
        cell_count=cell_count)
    eps_of = _preferences_series(preferences)
    rows = check_int(partition_rows, "partition_rows")
    if engine == "dask" and dask_partitions and isinstance(data, pd.DataFrame):
        rows = max(1, -(-len(data) // check_int(dask_partitions, "dask_partitions")))
    units = units_of(data, storage_options=storage_options, max_rows=rows)
    key = master_key(rng)
    kw: dict[str, Any] = dict(grid=grid, scheme=run_scheme, tau=t, mode=mode,
                              rule=bounding_rule, master_key=key)
    totals = Totals(grid.n_bins * grid.n_cells)
    places_idx = places_by_user(places)  # once, for every partition
    if engine == "memory":
        for i, unit in enumerate(units):
            totals.add(cast(PartitionResult, process_partition(
                load(unit), epsilon_of=eps_of, places=places_idx, **kw)))
            if progress is not None:
                progress("partitions", i + 1, len(units))
    else:
        from .dask_engine import run_dask

        run_dask(units, totals, epsilon_of=eps_of, places=places_idx, progress=progress,
                 scheduler=scheduler, **kw)
    return _finish(totals, grid, t, key, method=method, scheme=run_scheme,
                   rule=bounding_rule, engine=engine, progress=progress)


@renamed(public_eps="public_epsilon")
def release_losses(
    data: pd.DataFrame, preferences: Any, *, grid: Grid, places: pd.DataFrame | None = None,
    scheme: str = "skip", method: str = "personalised", tau: Any = "mean",
    mix: PreferenceMix | None = None, public_epsilon: Any = None,
    epsilon_floor: float | None = None, assumed_landmark_bins: float = 0.0,
    cell_count: float = 10.0, bounding_rule: str = "first",
) -> pd.DataFrame:
    """PRIVATE: what :func:`release_population` with the same arguments would cost each user
    (uid, epsilon, loss), computed before any coin or noise is drawn (in memory).

    u's loss is the landmark guarantee of the release for u, max_t Σ_{i ∈ L_u ∪ {t}} ℓ_{u,i}
    with ℓ_{u,i} = min(ε_{u,i}, τ) (docs/personalised-dp.md §3) — for u's records at the
    landmark bins and one more bin added, removed or moved to other cells: at most ε_u, and
    exactly ``private.users["loss"]`` of the release."""
    if not isinstance(grid, Grid):
        raise ParameterError("grid must be a lmdk_core.population.Grid")
    if not isinstance(data, pd.DataFrame):
        raise ParameterError("release_losses needs a DataFrame")
    run_scheme, t, mode = resolve_method(
        method, scheme, tau, n_bins=grid.n_bins, mix=mix, public_epsilon=public_epsilon,
        epsilon_floor=epsilon_floor, assumed_landmark_bins=assumed_landmark_bins,
        cell_count=cell_count)
    return user_losses(data, grid=grid, epsilon_of=_preferences_series(preferences),
                       places=places, scheme=run_scheme, tau=t, mode=mode, rule=bounding_rule)


@renamed(public_eps="public_epsilon")
def release_methods(
    data: pd.DataFrame, preferences: Any, *, grid: Grid, methods: tuple[str, ...] = METHODS,
    places: pd.DataFrame | None = None, scheme: str = "skip", tau: Any = "mean",
    mix: PreferenceMix | None = None, public_epsilon: Any = None,
    epsilon_floor: float | None = None, assumed_landmark_bins: float = 0.0,
    cell_count: float = 10.0, bounding_rule: str = "first", rng: Any = None,
) -> dict[str, PopulationRelease]:
    """Several methods on the same in-memory data, sharing the per-user work (landmarks,
    bounding, coins) — for evaluations and the dashboard. Each release alone is exactly the
    one :func:`release_population` gives for the same ``rng``, except that the noise of
    method m is drawn from the stream of (key, m); releasing several of them composes."""
    if not isinstance(grid, Grid):
        raise ParameterError("grid must be a lmdk_core.population.Grid")
    if not isinstance(data, pd.DataFrame):
        raise ParameterError("release_methods needs a DataFrame")
    resolved = [resolve_method(m, scheme, tau, n_bins=grid.n_bins, mix=mix,
                               public_epsilon=public_epsilon, epsilon_floor=epsilon_floor,
                               assumed_landmark_bins=assumed_landmark_bins,
                               cell_count=cell_count) for m in methods]
    key = master_key(rng)
    parts = cast(list[PartitionResult], process_partition(
        data, grid=grid, epsilon_of=_preferences_series(preferences), places=places,
        rule=bounding_rule, master_key=key, variants=resolved))  # one result per variant
    out = {}
    for m, (sc, t, _), p in zip(methods, resolved, parts, strict=True):
        totals = Totals(grid.n_bins * grid.n_cells)
        totals.add(p)
        out[m] = _finish(totals, grid, t, key + m.encode(), method=m, scheme=sc,
                         rule=bounding_rule, engine="memory", progress=None)
    return out


def _finish(totals: Totals, grid: Grid, tau: float, key: bytes, *, method: str, scheme: str,
            rule: str, engine: str, progress: Progress | None) -> PopulationRelease:
    if progress is not None:
        progress("noise", 0, 1)
    counts = publish_counts(totals.kept, tau, rng=noise_source(key),
                            sensitivity=MOVE_SENSITIVITY).reshape(grid.shape)
    if progress is not None:
        progress("noise", 1, 1)
    private = PrivateStats(totals.true.reshape(grid.shape), totals.kept.reshape(grid.shape),
                           totals.user_table(), totals.n_points, totals.n_outside)
    for arr in (counts, private.true_counts, private.kept_counts):
        arr.setflags(write=False)
    return PopulationRelease(counts, grid, method, scheme, tau, rule, engine, private)
