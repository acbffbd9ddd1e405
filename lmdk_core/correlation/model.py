"""Where the Markov model comes from: a choice that is stated and, where needed, paid for.

A model fitted to the true trajectory and then used to choose the budgets ε_t (which are
released) leaks that trajectory without being accounted for. :class:`CorrelationModel` carries
its ``source``, and the source is set by the constructor that built the model, never by the
caller:

* :func:`public_grid_model` — ``"public"``: a synthetic preset on a public grid (no data);
* :func:`trajectory_model` with ``source="unreleased"`` — fitted to a period the caller
  designates and never releases; or ``source="released"`` — fitted to already released
  (published, paid-for) points: post-processing, free;
* :func:`dp_grid_model` — ``"dp"``: transition counts on a public grid with discrete Laplace
  noise, ``epsilon_model``-DP for changes of up to ``protected_events`` timestamps; its ε must
  be added to the release's total (:attr:`CorrelationModel.epsilon_model`);
* :meth:`CorrelationModel.from_matrices` — ``"caller"``: any matrices; the library cannot tell
  where they come from, so :func:`allocate_for_model` refuses to choose released budgets from
  them (losses can still be computed under them);
* :func:`declare_public_model` — ``"declared_public"``: matrices the caller declares public
  (not derived from the private data), naming where they come from; budgets may be chosen
  from them, and every allocation carries that declaration.

Constructing a :class:`CorrelationModel` any other way (its dataclass constructor,
``dataclasses.replace``) raises :class:`~lmdk_core.errors.ParameterError`. (Python cannot stop
deliberate tampering such as ``object.__setattr__``; the guard is against mislabelling.)

Each model also carries the release's neighbour relation (:class:`StepLosses`) and its
precomputed envelopes, so losses and allocations are cheap to recompute.
"""

from __future__ import annotations

import math
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._deprecation import renamed, renamed_attributes
from ..errors import ParameterError
from ..geo import degrees_to_metres, metres_to_degrees
from ..noise.discrete import discrete_laplace_array
from ..noise.source import as_source, new_id
from ..validation import check_epsilon, check_int, check_nonnegative, check_positive
from .increment import EnvelopeLoss
from .matrices import (
    _normalise_rows,
    check_transition_matrix,
    synthetic_transition_matrix,
    transition_matrix,
)
from .neighbours import StepLosses, location_steps

__all__ = [
    "MODEL_SOURCES",
    "CorrelationModel",
    "declare_public_model",
    "dp_grid_model",
    "integer_laplace",
    "model_loss",
    "public_grid_model",
    "trajectory_model",
]

MODEL_SOURCES: dict[str, str] = {
    "public": "a public or synthetic preset (uses no data)",
    "unreleased": "fitted to a period designated by the user that is never released",
    "released": "estimated from already released points (post-processing, no extra cost)",
    "dp": "a differentially private estimate of the transition counts (its ε is added)",
    "declared_public": "matrices the caller declared public (not derived from the private "
                       "data); the library cannot verify that",
    "caller": "matrices supplied by the caller, provenance unverified (cannot choose released "
              "budgets)",
}
"""Model sources and what each means for the privacy accounting."""

_CONSTRUCTORS: dict[str, str] = {
    "public": "public_grid_model",
    "unreleased": "trajectory_model(source='unreleased')",
    "released": "trajectory_model(source='released')",
    "dp": "dp_grid_model",
    "declared_public": "declare_public_model",
    "caller": "CorrelationModel.from_matrices",
}
_ISSUING: ContextVar[bool] = ContextVar("lmdk_correlation_model_issuing", default=False)
"""True only while :func:`_issue` constructs a model: the source comes from the library."""


@dataclass(frozen=True, eq=False)
class CorrelationModel:
    """A Markov model of the states, the release's neighbour relation and where they come from.

    Built only by the library's constructors, each of which sets ``source`` (module docstring;
    :data:`MODEL_SOURCES`): a model cannot be given a provenance its constructor did not check.
    ``epsilon_model`` is the budget spent on the model itself (0 except for ``"dp"``): a release
    whose budgets are chosen from this model has total budget ε + epsilon_model. ``protects``:
    how many changed points that ε_model covers (``"dp"``); ``key``: a random identifier of this
    draw, so a ledger charges the same model once however many releases use it.
    """

    P_backward: np.ndarray
    P_forward: np.ndarray
    steps: StepLosses
    source: str
    description: str
    epsilon_model: float = 0.0
    env_backward: EnvelopeLoss | None = None
    env_forward: EnvelopeLoss | None = None
    protects: int | None = None
    key: str = ""

    @property
    def n_states(self) -> int:
        return int(self.P_forward.shape[0])

    @property
    def source_text(self) -> str:
        """One sentence for the page: where the model comes from."""
        return MODEL_SOURCES[self.source]

    def __post_init__(self) -> None:
        if not _ISSUING.get():
            raise ParameterError(
                "a CorrelationModel is built by a constructor, which sets its source: "
                "public_grid_model, trajectory_model, dp_grid_model, declare_public_model, or "
                "CorrelationModel.from_matrices for matrices of your own (source 'caller')"
            )

    @classmethod
    def from_matrices(
        cls,
        P_backward: Any,
        P_forward: Any,
        steps: StepLosses,
        *,
        description: str = "",
        source: str = "caller",
    ) -> CorrelationModel:
        """Wrap matrices supplied by the caller: the model's source is ``"caller"``.

        The library cannot tell where such matrices come from (they may be fitted to the very
        data being released), so :func:`~lmdk_core.correlation.allocate_for_model` refuses to
        choose released budgets from this model; losses under it can still be computed
        (:func:`model_loss`). ``source`` exists only to reject other labels: a public, released,
        unreleased or DP model comes from its own constructor, and matrices that really are
        public are declared with :func:`declare_public_model`.
        """
        if source != "caller":
            hint = (f"a {source!r} model comes only from {_CONSTRUCTORS[source]}"
                    if source in _CONSTRUCTORS else f"unknown model source {source!r}")
            raise ParameterError(
                f"from_matrices builds a caller-supplied model (source 'caller'); {hint}. For "
                "matrices that are public (not derived from the private data) use "
                "declare_public_model(..., provenance=...)"
            )
        return _issue(P_backward, P_forward, steps, "caller", description)


def _issue(
    P_backward: Any,
    P_forward: Any,
    steps: StepLosses,
    source: str,
    description: str,
    epsilon_model: float = 0.0,
    protects: int | None = None,
) -> CorrelationModel:
    """Validate and build a model with the ``source`` its library constructor states."""
    if source not in MODEL_SOURCES:
        raise ParameterError(f"unknown model source {source!r}")
    P_b = check_transition_matrix(P_backward, "P_backward")
    P_f = check_transition_matrix(P_forward, "P_forward")
    if not isinstance(steps, StepLosses):
        raise ParameterError("steps must be a StepLosses (see correlation.location_steps)")
    if not (P_b.shape == P_f.shape and steps.n_states == P_f.shape[0]):
        raise ParameterError(
            f"P_backward {P_b.shape}, P_forward {P_f.shape} and steps "
            f"({steps.n_states} states) disagree"
        )
    eps_m = check_nonnegative(epsilon_model, "epsilon_model")
    if source != "dp" and eps_m:
        raise ParameterError("only a 'dp' model spends budget (epsilon_model)")
    for M in (P_b, P_f):
        M.setflags(write=False)
    env_b = EnvelopeLoss(P_b, name="P_backward")
    env_f = env_b if np.array_equal(P_b, P_f) else EnvelopeLoss(P_f, name="P_forward")
    token = _ISSUING.set(True)
    try:
        return CorrelationModel(P_b, P_f, steps, source, description or MODEL_SOURCES[source],
                                eps_m, env_b, env_f, protects, new_id(8))
    finally:
        _ISSUING.reset(token)


def declare_public_model(
    P_backward: Any,
    P_forward: Any,
    steps: StepLosses,
    *,
    provenance: str,
    description: str = "",
) -> CorrelationModel:
    """A model of matrices the caller DECLARES public: source ``"declared_public"``.

    Use it only for matrices that do not depend on the private data being released — a
    published mobility study, a model of another population, a hand-made preset. The library
    cannot check that; this call is the caller's statement, and ``provenance`` (required, in
    words: where the matrices come from) is kept in the model's description and in every
    allocation chosen from it. Such a model may choose released budgets for free
    (:func:`~lmdk_core.correlation.allocate_for_model`). Matrices fitted to the private data
    must instead come from :func:`dp_grid_model` (paid for) or a period never released
    (:func:`trajectory_model` with ``source="unreleased"``).
    """
    if not isinstance(provenance, str) or not provenance.strip():
        raise ParameterError(
            "provenance must say where the matrices come from (e.g. 'published commuting "
            "survey 2019'): declaring a model public is a statement the library cannot check"
        )
    what = provenance.strip()
    desc = f"{description.strip()} — " if description.strip() else ""
    return _issue(P_backward, P_forward, steps, "declared_public",
                  f"{desc}declared public by the caller: {what}")


def _grid_centres(rows: int, cols: int, cell_m: float, lat0: float, lon0: float) -> np.ndarray:
    """(lat, lon) of the centres of a rows × cols grid of cells whose south-west corner is at
    (lat0, lon0)."""
    iy, ix = np.divmod(np.arange(rows * cols), cols)
    dlat, dlon = metres_to_degrees(lat0, (ix + 0.5) * cell_m, (iy + 0.5) * cell_m)
    return np.column_stack([lat0 + dlat, lon0 + dlon])


def public_grid_model(
    strength: str | float = "moderate",
    *,
    radius_m: float,
    extent_m: float | None = None,
    cell_m: float | None = None,
    rows: int = 6,
    cols: int = 5,
) -> CorrelationModel:
    """Synthetic preset: ``rows × cols`` public cells (30 by default, where the strength
    presets are calibrated), P^B = P^F = :func:`synthetic_transition_matrix`.

    The grid's size is a public choice: ``extent_m``, the distance up to which two places are
    covered (cells of side c = extent_m / (√((rows−1)² + (cols−1)²) + √2), so the worst pair —
    the two corner cells, δ_max = (d(corners) + √2·c)/r — bounds any two places up to
    ``extent_m`` apart), or the cell side ``cell_m`` (one of the two; default: cells of 500 m).
    Its bounds say nothing about places further apart than δ_max·r
    (:func:`lmdk_core.loss_models.extent_warning`). Uses no data; its neighbour relation is that
    of a location release with radius ``radius_m`` over these cells.
    """
    rows = check_int(rows, "rows")
    cols = check_int(cols, "cols")
    if extent_m is not None and cell_m is not None:
        raise ParameterError("give the preset's extent_m or its cell_m, not both")
    if extent_m is not None:
        extent = check_positive(extent_m, "extent_m")
        cell_m = extent / (math.hypot(rows - 1, cols - 1) + math.sqrt(2.0))
    cell_m = check_positive(500.0 if cell_m is None else cell_m, "cell_m")
    P = synthetic_transition_matrix(rows * cols, strength)
    for _ in range(4):
        steps = location_steps(_grid_centres(rows, cols, cell_m, 0.0, 0.0), radius_m=radius_m,
                               cell_m=cell_m)
        covered = steps.reach + steps.offset  # the farthest centres, plus the cell diagonal
        if extent_m is None or covered >= extent:
            break
        # the degree grid and haversine are not exactly planar: widen the cells a hair so
        # the corner pair covers extent_m
        cell_m *= extent / covered * (1 + 1e-9)
    else:
        raise ParameterError(f"the preset covers {covered:.0f} m < extent_m = {extent:.0f} m")
    desc = (f"synthetic {strength} correlation on a public {rows}×{cols} grid of "
            f"{cell_m:.0f} m cells covering places up to {covered / 1000:.3g} km apart "
            "(P^B = P^F)")
    return _issue(P, P, steps, "public", desc)


def trajectory_model(
    traj: pd.DataFrame,
    *,
    source: str,
    radius_m: float,
    cell_m: float = 500.0,
    smoothing: float = 0.01,
    max_states: int | None = 400,
) -> CorrelationModel:
    """Model fitted to ``traj`` (see :func:`transition_matrix`), which must be either a period
    that is never released (``source="unreleased"``) or already released points
    (``source="released"``). A model of the true, released trajectory is not offered: it would
    make the budgets depend on unaccounted private data.
    """
    if source not in ("unreleased", "released"):
        raise ParameterError(
            "source must be 'unreleased' (a period never released) or 'released' (published "
            f"points); got {source!r}. Use dp_grid_model to estimate from the private data."
        )
    tm = transition_matrix(traj, cell_m=cell_m, smoothing=smoothing, max_states=max_states)
    steps = location_steps(tm.centres, radius_m=radius_m, cell_m=tm.cell_m)
    what = "released points" if source == "released" else "an unreleased period"
    desc = (f"Markov chain on {tm.n_states} cells of {tm.cell_m:g} m estimated from {len(traj):,} "
            f"{what}")
    return _issue(tm.P_backward, tm.P_forward, steps, source, desc)


@renamed(positional=("epsilon", "sensitivity", "rng"))
def integer_laplace(shape: tuple[int, ...], *, epsilon: float, sensitivity: float,
                    rng: Any = None) -> np.ndarray:
    """Integer noise with Pr[k] ∝ exp(−ε'|k|/Δ), ε' ≤ ε (the project's exact sampler).

    Added to integer counts it is ε-DP for L1 sensitivity Δ, with no floating-point output: the
    scale Δ/ε is rounded UP to a multiple of 2^-20 (so ε' = Δ·2^20/⌈Δ/ε·2^20⌉ ≤ ε) and drawn by
    :func:`lmdk_core.noise.discrete.discrete_laplace_array` in integer arithmetic.
    ``rng=None`` draws a fresh ChaCha20 keystream keyed from the OS.
    """
    s = 2**20
    t = math.ceil(check_positive(sensitivity, "sensitivity") / check_epsilon(epsilon) * s)
    size = int(np.prod(shape, dtype=np.int64))
    return discrete_laplace_array(t, s, size, as_source(rng)).reshape(shape)


__getattr__ = renamed_attributes(__name__, discrete_laplace=integer_laplace)


def dp_grid_model(
    traj: pd.DataFrame,
    *,
    epsilon_model: float,
    protected_events: int,
    centre: tuple[float, float],
    extent_m: float,
    cell_m: float,
    radius_m: float,
    smoothing: float = 1.0,
    rng: Any = None,
) -> CorrelationModel:
    """ε_model-DP Markov model of ``traj`` on a public square grid.

    The grid (side ``extent_m`` centred at the public point ``centre`` = (lat, lon), cells of
    ``cell_m`` metres, at most 20 × 20) must not be derived from the data; points outside are
    clamped to the border cells. Transition counts get discrete Laplace noise for L1
    sensitivity 4·``protected_events`` (changing one point changes at most two transitions,
    each by moving one count), then are clamped at 0, smoothed by ``smoothing`` per entry and
    normalised; P^B follows by Bayes from the noisy counts (post-processing). Sequential
    composition: a release using this model has total budget ε + ``epsilon_model``.
    ``rng`` only for simulations and tests; None uses fresh OS randomness.
    """
    if not isinstance(traj, pd.DataFrame) or not {"lat", "lon"} <= set(traj.columns):
        raise ParameterError("traj must be a DataFrame with 'lat' and 'lon' columns")
    eps_m = check_epsilon(epsilon_model, "epsilon_model")
    k_events = check_int(protected_events, "protected_events")
    extent = check_positive(extent_m, "extent_m")
    cell = check_positive(cell_m, "cell_m")
    smoothing = check_positive(smoothing, "smoothing")
    side = int(np.ceil(extent / cell - 1e-9))
    if side > 20:
        raise ParameterError(
            f"the grid has {side}×{side} cells; at most 20×20 (raise cell_m or lower extent_m)"
        )
    try:
        clat, clon = (float(centre[0]), float(centre[1]))
    except (TypeError, ValueError, IndexError):
        raise ParameterError("centre must be a (lat, lon) pair of numbers") from None
    if not (np.isfinite(clat) and np.isfinite(clon) and -90 <= clat <= 90):
        raise ParameterError(f"centre ({clat}, {clon}) is not a valid (lat, lon)")
    half = side * cell / 2.0
    dlat, dlon = metres_to_degrees(clat, -half, -half)
    lat0, lon0 = clat + float(dlat), clon + float(dlon)
    lat = traj["lat"].to_numpy(dtype=np.float64)
    lon = traj["lon"].to_numpy(dtype=np.float64)
    if lat.size < 2 or not (np.all(np.isfinite(lat)) and np.all(np.isfinite(lon))):
        raise ParameterError("traj needs at least 2 finite points")
    east, north = degrees_to_metres(lat0, lon0, lat, lon)
    ix = np.clip(np.floor(east / cell), 0, side - 1).astype(np.int64)
    iy = np.clip(np.floor(north / cell), 0, side - 1).astype(np.int64)
    states = iy * side + ix
    n = side * side
    counts = np.zeros((n, n), dtype=np.int64)
    np.add.at(counts, (states[:-1], states[1:]), 1)
    noisy = counts + integer_laplace((n, n), epsilon=eps_m, sensitivity=4.0 * k_events, rng=rng)
    W = np.maximum(noisy, 0).astype(np.float64) + smoothing
    P_f = _normalise_rows(W)
    pi = W.sum(axis=1) / W.sum()  # noisy occupancy (post-processing)
    P_b = _normalise_rows((pi[:, None] * P_f).T)
    steps = location_steps(_grid_centres(side, side, cell, lat0, lon0), radius_m=radius_m,
                           cell_m=cell)
    desc = (f"DP estimate (ε_model = {eps_m:g}, up to {k_events} changed points) of the "
            f"transitions on a public {side}×{side} grid of {cell:g} m cells")
    return _issue(P_b, P_f, steps, "dp", desc, epsilon_model=eps_m, protects=k_events)


@renamed(eps="budget")
def model_loss(
    budget: Any, landmarks: Any, model: CorrelationModel, *, separation: float | None = None
):
    """:func:`landmark_temporal_loss` of budgets ``budget`` under ``model`` (its neighbour relation
    and precomputed envelopes); ``separation`` adds the bounds for a pair that far apart."""
    from .loss import landmark_temporal_loss

    if not isinstance(model, CorrelationModel):
        raise ParameterError("model must be a CorrelationModel")
    return landmark_temporal_loss(budget, landmarks, model.env_backward, model.env_forward,
                                  steps=model.steps, separation=separation)
