"""Backward, forward and temporal privacy loss (BPL/FPL/TPL) under Markov correlation.

For budgets ε_t from any scheme (zeros where it republishes) and matrices P^B, P^F
(algorithms.md §4, Cao et al.):

    BPL_1 = ε_1,  BPL_t = L_B(BPL_{t−1}) + ε_t
    FPL_T = ε_T,  FPL_t = L_F(FPL_{t+1}) + ε_t
    TPL_t = BPL_t + FPL_t − ε_t

All losses are in nats (the unit of ε). Each step is one evaluation of a precomputed
:class:`~lmdk_core.correlation.increment.EnvelopeLoss`, so a whole series costs O(T log h) after
a once-per-matrix precomputation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..accounting import as_landmark_mask, landmark_guarantee
from ..errors import MatrixError, ParameterError
from ..validation import as_budget_array
from .increment import EnvelopeLoss, envelope
from .matrices import check_transition_matrix, reverse_chain

__all__ = ["LandmarkTemporalLoss", "TemporalLoss", "landmark_temporal_loss", "temporal_loss"]

MatrixLike = Any  # an (n, n) row-stochastic array or an EnvelopeLoss


@dataclass(frozen=True, eq=False)
class TemporalLoss:
    """Per-timestamp privacy loss under temporal correlation (arrays of length T, nats).

    Guarantees (up to rounding): BPL_t ≥ ε_t, FPL_t ≥ ε_t, TPL_t ≥ max(BPL_t, FPL_t) ≥ ε_t,
    and TPL_t ≤ Σ ε (the user-level loss, reached when rows have disjoint supports).
    """

    eps: np.ndarray
    bpl: np.ndarray
    fpl: np.ndarray
    tpl: np.ndarray

    @property
    def frame(self) -> pd.DataFrame:
        """Columns t (0-based), eps, bpl, fpl, tpl."""
        return pd.DataFrame(
            {"t": np.arange(self.eps.size), "eps": self.eps, "bpl": self.bpl, "fpl": self.fpl,
             "tpl": self.tpl}
        )

    def to_frame(self) -> pd.DataFrame:
        """Same as :attr:`frame`."""
        return self.frame


def _resolve(P_backward: MatrixLike, P_forward: MatrixLike | None, marginal: Any):
    """(EnvelopeLoss for P^B, EnvelopeLoss for P^F) from the user's arguments."""
    if P_forward is None and marginal is not None:
        if isinstance(P_backward, EnvelopeLoss):
            raise ParameterError("pass P_backward as a matrix (not an EnvelopeLoss) to derive P_forward")
        P_forward = reverse_chain(check_transition_matrix(P_backward, "P_backward"), marginal)
    env_b = envelope(P_backward, name="P_backward")
    env_f = env_b if P_forward is None else envelope(P_forward, name="P_forward")
    if env_b.n_states != env_f.n_states:
        raise MatrixError(
            f"P_backward has {env_b.n_states} states but P_forward has {env_f.n_states}"
        )
    return env_b, env_f


def temporal_loss(
    eps: Any,
    P_backward: MatrixLike,
    P_forward: MatrixLike | None = None,
    *,
    marginal: Any = None,
) -> TemporalLoss:
    """BPL, FPL and TPL per timestamp for budgets ``eps`` (1-D, finite, ≥ 0, nats).

    ``P_backward`` / ``P_forward`` are row-stochastic matrices or precomputed
    :class:`EnvelopeLoss` objects (reuse them to skip the once-per-matrix precomputation; plain
    matrices are memoised too). If ``P_forward`` is None it is derived from ``P_backward`` by
    Bayes' rule with ``marginal`` (the distribution of x_t) when given, else taken equal to
    ``P_backward``. Raises MatrixError / ParameterError on invalid input.
    """
    e = as_budget_array(eps)
    env_b, env_f = _resolve(P_backward, P_forward, marginal)
    bpl = env_b.backward(e)
    fpl = env_f.forward(e)
    tpl = bpl + fpl - e
    for arr in (e, bpl, fpl, tpl):
        arr.setflags(write=False)
    return TemporalLoss(eps=e, bpl=bpl, fpl=fpl, tpl=tpl)


@dataclass(frozen=True, eq=False)
class LandmarkTemporalLoss:
    """Landmark view of temporal loss (arrays of length T, nats).

    ``composed[t]`` = Σ_{i ∈ L ∪ {t}} TPL_i: the per-event temporal losses of the landmarks and of
    t added up (sequential composition of per-event losses, an upper bound on what an adversary
    learns about the landmark set plus t under the correlation model). ``guarantee[t]`` is the
    uncorrelated landmark guarantee G_t = Σ_{i ∈ L ∪ {t}} ε_i; composed ≥ guarantee.
    """

    landmarks: np.ndarray
    loss: TemporalLoss
    composed: np.ndarray
    guarantee: np.ndarray

    @property
    def frame(self) -> pd.DataFrame:
        """Columns t, landmark, eps, bpl, fpl, tpl, composed, guarantee."""
        f = self.loss.frame
        f.insert(1, "landmark", self.landmarks)
        f["composed"] = self.composed
        f["guarantee"] = self.guarantee
        return f


def landmark_temporal_loss(
    eps: Any,
    landmarks: Any,
    P_backward: MatrixLike,
    P_forward: MatrixLike | None = None,
    *,
    marginal: Any = None,
) -> LandmarkTemporalLoss:
    """Temporal loss composed over L ∪ {t} for every t, next to the uncorrelated G_t.

    ``landmarks`` is a bool mask of length T or integer indices (see
    :func:`lmdk_core.accounting.as_landmark_mask`); the matrices are as in :func:`temporal_loss`.
    """
    loss = temporal_loss(eps, P_backward, P_forward, marginal=marginal)
    mask = as_landmark_mask(landmarks, loss.eps.size)
    composed = loss.tpl[mask].sum() + np.where(mask, 0.0, loss.tpl)
    guarantee = landmark_guarantee(loss.eps, mask)
    return LandmarkTemporalLoss(landmarks=mask, loss=loss, composed=composed, guarantee=guarantee)
