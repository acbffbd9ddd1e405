"""Temporal privacy loss under Markov correlation (Cao et al.; algorithms.md §4).

* :mod:`.matrices` — validate, reverse (Bayes), estimate from a trajectory, synthetic presets.
* :mod:`.increment` — the loss increment L(α), exact, precomputed per matrix (:class:`EnvelopeLoss`).
* :mod:`.loss` — BPL / FPL / TPL per timestamp for any budget vector, and the landmark view.
* :mod:`.suprema` — closed-form suprema for a constant budget.
* :mod:`.allocation` — budgets that bound TPL by a target α.

All losses and budgets are in nats.
"""

from .allocation import allocate_bounded_tpl
from .increment import (
    EnvelopeCache,
    EnvelopeLoss,
    envelope,
    loss_increment,
    loss_increment_fixed_point,
)
from .loss import LandmarkTemporalLoss, TemporalLoss, landmark_temporal_loss, temporal_loss
from .matrices import (
    STRENGTH_PRESETS,
    TransitionModel,
    check_transition_matrix,
    reverse_chain,
    synthetic_transition_matrix,
    transition_matrix,
)
from .suprema import sup_bpl, sup_fpl, sup_loss

__all__ = [
    "STRENGTH_PRESETS",
    "EnvelopeCache",
    "EnvelopeLoss",
    "LandmarkTemporalLoss",
    "TemporalLoss",
    "TransitionModel",
    "allocate_bounded_tpl",
    "check_transition_matrix",
    "envelope",
    "landmark_temporal_loss",
    "loss_increment",
    "loss_increment_fixed_point",
    "reverse_chain",
    "sup_bpl",
    "sup_fpl",
    "sup_loss",
    "synthetic_transition_matrix",
    "temporal_loss",
    "transition_matrix",
]
