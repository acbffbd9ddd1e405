"""Temporal privacy loss under Markov correlation (Cao et al.; algorithms.md §4).

* :mod:`.matrices` — validate, reverse (Bayes), estimate from a trajectory, synthetic presets.
* :mod:`.neighbours` — the release's neighbour relation as per-pair step losses.
* :mod:`.increment` — the loss increment L(α), exact, precomputed per matrix
  (:class:`EnvelopeLoss`).
* :mod:`.loss` — BPL / FPL / TPL per timestamp for any budget vector, and the landmark view.
* :mod:`.suprema` — closed-form suprema for a constant budget.
* :mod:`.model` — where the Markov model comes from (public, unreleased, released, DP; caller
  matrices are labelled as such, or declared public explicitly).
* :mod:`.allocation` — budgets that bound TPL by a target α.
* :mod:`.global_schema` — a population release's BPL / FPL / TPL: the maximum over people, each
  with their own model and budgets (Cao et al.'s global schema).

All losses and budgets are in nats.
"""

from .._deprecation import renamed_attributes
from .allocation import (
    BoundedAllocation,
    allocate_bounded_tpl,
    allocate_for_model,
    constant_bounded_tpl,
)
from .global_schema import (
    PopulationTemporalLoss,
    personalised_release_temporal_loss,
    population_temporal_loss,
)
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
from .model import (
    MODEL_SOURCES,
    CorrelationModel,
    declare_public_model,
    dp_grid_model,
    integer_laplace,
    model_loss,
    public_grid_model,
    trajectory_model,
)
from .neighbours import StepLosses, any_pair_steps, location_steps, value_grid_step, value_steps
from .suprema import sup_bpl, sup_fpl, sup_loss

__getattr__ = renamed_attributes(__name__, discrete_laplace=integer_laplace)

__all__ = [
    "MODEL_SOURCES",
    "STRENGTH_PRESETS",
    "BoundedAllocation",
    "CorrelationModel",
    "EnvelopeCache",
    "EnvelopeLoss",
    "LandmarkTemporalLoss",
    "PopulationTemporalLoss",
    "StepLosses",
    "TemporalLoss",
    "TransitionModel",
    "allocate_bounded_tpl",
    "allocate_for_model",
    "any_pair_steps",
    "check_transition_matrix",
    "constant_bounded_tpl",
    "declare_public_model",
    "dp_grid_model",
    "envelope",
    "integer_laplace",
    "landmark_temporal_loss",
    "location_steps",
    "loss_increment",
    "loss_increment_fixed_point",
    "model_loss",
    "personalised_release_temporal_loss",
    "population_temporal_loss",
    "public_grid_model",
    "reverse_chain",
    "sup_bpl",
    "sup_fpl",
    "sup_loss",
    "synthetic_transition_matrix",
    "temporal_loss",
    "trajectory_model",
    "transition_matrix",
    "value_grid_step",
    "value_steps",
]
