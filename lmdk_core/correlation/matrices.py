"""Transition matrices: validation, Bayes reversal, estimation from a trajectory, synthetic presets.

Conventions (algorithms.md §4): matrices are row-stochastic, ``n × n``.
P^F[a, k] = Pr(x_t = k | x_{t−1} = a) (forward), P^B[a, k] = Pr(x_{t−1} = k | x_t = a) (backward).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataWarning, MatrixError, ParameterError
from ..geo import degrees_to_metres, metres_to_degrees
from ..validation import check_int, check_nonnegative, check_positive

__all__ = [
    "STRENGTH_PRESETS",
    "TransitionModel",
    "check_transition_matrix",
    "reverse_chain",
    "synthetic_transition_matrix",
    "transition_matrix",
]

ROW_SUM_TOL = 1e-8
"""Absolute tolerance on |Σ_k P[a, k] − 1| accepted by :func:`check_transition_matrix`."""

STRENGTH_PRESETS: dict[str, float] = {"strong": 0.0, "moderate": 0.01, "weak": 0.1}
"""Strength s of :func:`synthetic_transition_matrix` per named correlation, as in the ConTPL demo
(Cao et al., PVLDB 2018: TM1 strong s = 0, TM2 moderate s = 0.01, TM3 weak s = 0.1, n = 30).

Its ``genTM(s, n)`` adds s to every entry of the identity *twice*, so every entry gets the
pseudo-count 2s: at n = 30, s = 0.01 keeps 1.02/1.6 ≈ 64 % of each row on the diagonal
(moderate) and s = 0.1 keeps 1.2/7 ≈ 17 % (weak); s = 0 is the identity (perfect correlation:
TPL grows to the user-level Σ ε).
"""


def check_transition_matrix(P: Any, name: str = "P", tol: float = ROW_SUM_TOL) -> np.ndarray:
    """Validate a row-stochastic matrix and return it as float64 with rows renormalised to sum 1.

    Raises :class:`MatrixError` when ``P`` is not a non-empty square 2-D array, contains NaN or
    inf, has a negative entry, or a row whose sum differs from 1 by more than ``tol``. The
    accepted drift (≤ ``tol``) is removed by dividing each row by its sum.
    """
    try:
        arr = np.array(P, dtype=np.float64)
    except (TypeError, ValueError):
        raise MatrixError(f"{name} must be a numeric matrix") from None
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] == 0:
        raise MatrixError(f"{name} must be a non-empty square matrix, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        r, c = np.argwhere(~np.isfinite(arr))[0]
        raise MatrixError(f"{name} contains NaN or infinite values (first at [{r}, {c}])")
    if np.any(arr < 0):
        r, c = np.argwhere(arr < 0)[0]
        raise MatrixError(f"{name} has a negative entry {arr[r, c]} at [{r}, {c}]")
    sums = arr.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > tol)
    if bad.size:
        r = int(bad[0])
        raise MatrixError(
            f"{name} is not row-stochastic: row {r} sums to {sums[r]:.12g} (must be 1 ± {tol:g})"
        )
    arr /= sums[:, None]
    return arr


def _check_marginal(marginal: Any, n: int) -> np.ndarray:
    """A probability vector of length ``n`` (non-negative, positive total), normalised."""
    try:
        pi = np.asarray(marginal, dtype=np.float64)
    except (TypeError, ValueError):
        raise MatrixError("marginal must be a numeric vector") from None
    if pi.ndim != 1 or pi.size != n:
        raise MatrixError(
            f"marginal must have length {n} (one entry per state), got shape {pi.shape}")
    if not np.all(np.isfinite(pi)) or np.any(pi < 0) or pi.sum() <= 0:
        raise MatrixError("marginal must be finite, >= 0 and not all zero")
    return pi / pi.sum()


def _normalise_rows(W: np.ndarray) -> np.ndarray:
    """Rows divided by their sums; an all-zero row (no evidence) becomes uniform."""
    sums = W.sum(axis=1, keepdims=True)
    n = W.shape[1]
    return np.where(sums > 0, W / np.where(sums > 0, sums, 1.0), 1.0 / n)


def reverse_chain(P: Any, marginal: Any) -> np.ndarray:
    """Reverse a transition matrix by Bayes' rule: R[a, k] ∝ marginal[k] · P[k, a].

    With ``P = P^F`` and the marginal of x_{t−1} this gives P^B; with ``P = P^B`` and the marginal
    of x_t it gives P^F. A state that cannot be reached (zero weight) gets a uniform row.
    """
    P = check_transition_matrix(P)
    pi = _check_marginal(marginal, P.shape[0])
    return _normalise_rows((pi[:, None] * P).T)


def synthetic_transition_matrix(n: int, strength: str | float = "moderate") -> np.ndarray:
    """Synthetic n-state matrix (I + 2s)/(1 + 2ns): the ConTPL demo's ``genTM(s, n)``.

    ``strength`` is a preset name from :data:`STRENGTH_PRESETS` (``"strong"`` s = 0, i.e. the
    identity; ``"moderate"`` s = 0.01; ``"weak"`` s = 0.1 — the demo's TM1–TM3 at n = 30) or a
    float s ≥ 0, on the authors' scale: every entry gets the pseudo-count 2s (``genTM`` adds s
    to the identity twice) before the rows are normalised. Larger s means weaker correlation;
    the matrix is symmetric, so it is its own backward counterpart under the uniform
    (stationary) marginal. Closed form of its loss increment: docs/temporal-loss.md §9.
    """
    n = check_int(n, "n", minimum=1)
    if isinstance(strength, str):
        key = strength.strip().lower()
        if key not in STRENGTH_PRESETS:
            raise ParameterError(
                f"unknown correlation strength {strength!r}; use one of "
                f"{sorted(STRENGTH_PRESETS)} or a number s >= 0"
            )
        s = STRENGTH_PRESETS[key]
    else:
        s = check_nonnegative(strength, "strength")
    return (np.eye(n) + 2.0 * s) / (1.0 + 2.0 * n * s)


@dataclass(frozen=True, eq=False)
class TransitionModel:
    """A Markov model of one trajectory on a square grid.

    Attributes:
        P_forward: (n, n) P^F[a, k] = Pr(next cell k | current cell a).
        P_backward: (n, n) P^B[a, k] = Pr(previous cell k | current cell a) (Bayes, empirical
            marginal).
        marginal: (n,) fraction of points in each state.
        cells: (n, 2) int grid indices (ix east, iy north) of each state.
        centres: (n, 2) cell centres as (lat, lon) degrees.
        states: (N,) state index of every input point.
        cell_m: cell side in metres actually used (may exceed the request, see ``max_states``).
        counts: (n, n) observed transition counts (before smoothing).
    """

    P_forward: np.ndarray
    P_backward: np.ndarray
    marginal: np.ndarray
    cells: np.ndarray
    centres: np.ndarray
    states: np.ndarray
    cell_m: float
    counts: np.ndarray

    @property
    def n_states(self) -> int:
        """Number of states (visited cells)."""
        return int(self.marginal.size)


def _grid(lat: np.ndarray, lon: np.ndarray, cell_m: float, lat0: float, lon0: float):
    east, north = degrees_to_metres(lat0, lon0, lat, lon)
    ix = np.floor(east / cell_m).astype(np.int64)
    iy = np.floor(north / cell_m).astype(np.int64)
    cells, states = np.unique(np.stack([ix, iy], axis=1), axis=0, return_inverse=True)
    return cells, states.ravel()


def transition_matrix(
    traj: pd.DataFrame,
    cell_m: float = 500.0,
    smoothing: float = 0.01,
    max_states: int | None = 400,
) -> TransitionModel:
    """Estimate P^F and P^B from one user's time-sorted trajectory on a grid of ``cell_m`` metres.

    Points (columns ``lat``, ``lon`` in degrees) are projected to a local equirectangular plane
    at the first point and binned into square cells; the states are the visited cells, in
    grid order. P^F counts consecutive-point transitions (self-loops included), adds the
    pseudo-count ``smoothing`` to every entry and normalises rows; a state never left (only
    possible with ``smoothing=0``) gets a uniform row. P^B follows by Bayes from P^F and the
    empirical marginal (fraction of points per state).

    The exact loss computation costs about O(n³) once per matrix, so if more than
    ``max_states`` cells are visited the cell side is doubled until at most ``max_states``
    remain (a :class:`DataWarning` says so; the side used is ``result.cell_m``). Pass
    ``max_states=None`` to disable the cap.
    """
    if not isinstance(traj, pd.DataFrame) or not {"lat", "lon"} <= set(traj.columns):
        raise ParameterError("traj must be a DataFrame with 'lat' and 'lon' columns")
    cell_m = check_positive(cell_m, "cell_m")
    smoothing = check_nonnegative(smoothing, "smoothing")
    if max_states is not None:
        max_states = check_int(max_states, "max_states", minimum=1)
    lat = traj["lat"].to_numpy(dtype=np.float64)
    lon = traj["lon"].to_numpy(dtype=np.float64)
    if lat.size < 2:
        raise ParameterError(
            f"traj needs at least 2 points to estimate transitions, got {lat.size}")
    if not (np.all(np.isfinite(lat)) and np.all(np.isfinite(lon))):
        raise ParameterError("traj has NaN or infinite coordinates")
    lat0, lon0 = float(lat[0]), float(lon[0])
    requested = cell_m
    cells, states = _grid(lat, lon, cell_m, lat0, lon0)
    n_requested = len(cells)
    while max_states is not None and len(cells) > max_states:
        cell_m *= 2.0
        cells, states = _grid(lat, lon, cell_m, lat0, lon0)
    if cell_m != requested:
        warnings.warn(
            f"{n_requested} cells of {requested:g} m "
            f"exceed max_states={max_states}: using {cell_m:g} m cells ({len(cells)} states)",
            DataWarning,
            stacklevel=2,
        )
    n = len(cells)
    counts = np.zeros((n, n), dtype=np.float64)
    np.add.at(counts, (states[:-1], states[1:]), 1.0)
    P_f = _normalise_rows(counts + smoothing)
    marginal = np.bincount(states, minlength=n).astype(np.float64) / states.size
    P_b = _normalise_rows((marginal[:, None] * P_f).T)
    clat, clon = metres_to_degrees(lat0, (cells[:, 0] + 0.5) * cell_m, (cells[:, 1] + 0.5) * cell_m)
    centres = np.stack([lat0 + clat, (lon0 + clon + 180.0) % 360.0 - 180.0], axis=1)
    return TransitionModel(
        P_forward=P_f,
        P_backward=P_b,
        marginal=marginal,
        cells=cells,
        centres=centres,
        states=states.astype(np.int64),
        cell_m=float(cell_m),
        counts=counts,
    )

