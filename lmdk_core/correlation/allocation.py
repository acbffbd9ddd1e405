"""Budget allocations that bound the temporal privacy loss by a target α (Cao et al.).

* Unknown horizon (``T=None``): the constant ε solving supBPL(ε) + supFPL(ε) − ε = α, so
  TPL_t < α at every t of any series.
* Known horizon T: ε = [ε_1, ε_mid, …, ε_mid, ε_T] with ε_1 = a_B, ε_T = a_F,
  ε_mid = a_B − L_B(a_B) = a_F − L_F(a_F), a_F = α − L_B(a_B) and a_B solving
  a_B + L_F(α − L_B(a_B)) = α; then BPL_t = a_B for t < T, FPL_t = a_F for t > 1 and
  TPL_t = α at every t (algorithms.md §4).

Both are found by bisection on monotone functions; roots are taken on the safe side so that
TPL never exceeds α beyond rounding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._deprecation import renamed, renamed_property
from ..errors import ParameterError
from ..validation import check_epsilon, check_int
from .loss import MatrixLike, resolve_envelopes
from .suprema import sup_loss

__all__ = ["BoundedAllocation", "allocate_bounded_tpl", "allocate_for_model"]

_ITER = 200


def _bisect(f, lo: float, hi: float) -> float:
    """Largest x found in [lo, hi] with f(x) ≤ 0 for non-decreasing f with f(lo) ≤ 0."""
    for _ in range(_ITER):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if f(mid) <= 0:
            lo = mid
        else:
            hi = mid
    return lo


def constant_bounded_tpl(
    alpha: float,
    P_backward: MatrixLike,
    P_forward: MatrixLike | None = None,
    *,
    marginal: Any = None,
) -> float:
    """The constant budget ε (nats) keeping TPL ≤ ``alpha`` for any number of timestamps,
    assuming each release step is ε-DP between *any* two states (Cao et al.); 0.0 when no
    positive constant keeps TPL bounded (e.g. perfect correlation, the identity).
    ``P_forward``/``marginal`` default as in :func:`~lmdk_core.correlation.temporal_loss`.
    """
    alpha = check_epsilon(alpha, "alpha")
    env_b, env_f = resolve_envelopes(P_backward, P_forward, marginal)

    def excess(e: float) -> float:
        return sup_loss(env_b, budget=e) + sup_loss(env_f, budget=e) - e - alpha

    return float(_bisect(excess, 0.0, alpha))


def allocate_bounded_tpl(
    alpha: float,
    P_backward: MatrixLike,
    P_forward: MatrixLike | None = None,
    T: int | None = None,
    *,
    marginal: Any = None,
) -> np.ndarray:
    """Budgets ε_t (an array of length ``T``) whose TPL equals ``alpha`` (nats) at every
    timestamp under P^B / P^F (matrices or EnvelopeLoss), assuming each release step is
    ε_t-DP between *any* two states (Cao et al.); ``[alpha]`` for T = 1.

    Laplace and planar Laplace releases do not satisfy that assumption, and the budgets are
    released: use :func:`allocate_for_model`, which scales by the release's neighbour relation
    and takes only a model whose origin is stated. This function is the building block. For a
    budget valid for any horizon use :func:`constant_bounded_tpl`. ``P_forward``/``marginal``
    default as in :func:`~lmdk_core.correlation.temporal_loss`.
    """
    alpha = check_epsilon(alpha, "alpha")
    if T is None:
        raise ParameterError(
            "give T, the number of timestamps (for one budget valid for any horizon use "
            "constant_bounded_tpl)"
        )
    env_b, env_f = resolve_envelopes(P_backward, P_forward, marginal)
    T = check_int(T, "T", minimum=1)
    if T == 1:
        return np.array([alpha])

    def h(a_b: float) -> float:
        return a_b + env_f(alpha - env_b(a_b)) - alpha

    a_b = _bisect(h, 0.0, alpha)
    a_f = alpha - env_b(a_b)
    mid = max(0.0, min(a_b - env_b(a_b), a_f - env_f(a_f)))
    out = np.full(T, mid)
    out[0] = a_b
    out[-1] = a_f
    return out


@dataclass(frozen=True, eq=False)
class BoundedAllocation:
    """Budgets ε_t whose single-event loss bound (worst pair of states, under ``model``'s
    neighbour relation) is ``alpha`` at every t, and where the model came from.

    ``epsilon_model`` is what the model cost (``"dp"`` source); the release's total budget is
    Σ-composition of ``budget`` plus that. ``model_key`` / ``model_protects`` identify the model
    draw and how many changed points its ε_model covers: a release built on this allocation
    (``release_with_budget(budget=allocation)``) carries them, so a ledger charges the model.
    """

    budget: np.ndarray
    alpha: float
    source: str
    source_text: str
    description: str
    epsilon_model: float
    scale: float
    model_key: str = ""
    model_protects: int | None = None

    # the field was called ``eps``; per-timestamp budgets are spelled ``budget`` everywhere
    eps = renamed_property("eps", "budget")


# The field was called ``eps``: the keyword keeps working for one release, with a warning.
BoundedAllocation.__init__ = renamed(eps="budget")(BoundedAllocation.__init__)  # type: ignore[method-assign]


def allocate_for_model(alpha: float, model: Any, *, T: int) -> BoundedAllocation:
    """Cao et al.'s known-horizon allocation under ``model`` (a :class:`CorrelationModel`).

    The recursion runs on the step-loss-scaled budgets ε'_t = ε_t·δ_max, so the bound TPL_t of
    :func:`temporal_loss` with ``steps=model.steps`` equals ``alpha`` at every t, and the exact
    loss of any single event under the stated neighbour relation is at most ``alpha``
    (docs/temporal-loss.md, Theorem 4). The budgets are released, so they must not depend on
    unaccounted private data: only a model whose constructor states its origin can be used
    (public_grid_model, trajectory_model, dp_grid_model, or declare_public_model for matrices
    the caller declares public); a ``"caller"`` model (``CorrelationModel.from_matrices``) is
    refused.
    """
    from .model import CorrelationModel

    if not isinstance(model, CorrelationModel):
        raise ParameterError(
            "model must be a CorrelationModel (public_grid_model, trajectory_model, "
            "dp_grid_model, declare_public_model): the budgets are released, so the model's "
            "origin must be stated"
        )
    if model.source == "caller":
        raise ParameterError(
            "this model wraps matrices supplied by the caller (CorrelationModel.from_matrices), "
            "whose origin the library cannot tell, and the budgets chosen from it are released: "
            "fit it with dp_grid_model (paid for) or trajectory_model (unreleased or released "
            "points), or, if the matrices do not depend on the private data, declare them with "
            "declare_public_model(..., provenance=...)"
        )
    alpha = check_epsilon(alpha, "alpha")
    scale = model.steps.worst
    if not scale > 0:
        raise ParameterError("the neighbour relation has no positive step loss")
    scaled = allocate_bounded_tpl(alpha, model.env_backward, model.env_forward, T=T)
    eps = np.asarray(scaled, dtype=np.float64) / scale
    eps.setflags(write=False)
    return BoundedAllocation(budget=eps, alpha=alpha, source=model.source,
                             source_text=model.source_text, description=model.description,
                             epsilon_model=model.epsilon_model, scale=scale,
                             model_key=model.key, model_protects=model.protects)
