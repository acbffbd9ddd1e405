"""Sound upper bounds on the privacy loss under Markov correlation (docs/temporal-loss.md).

For budgets ε_t from any scheme (zeros where it republishes), matrices P^B, P^F and the
release's neighbour relation (:mod:`.neighbours`: step losses ε_t·δ(a, b) between states), with
scaled budgets ε'_t = ε_t·δ_max (δ_max = the largest δ; 1 under Cao et al.'s assumption):

    BPL_1 = ε'_1,  BPL_t = L_B(BPL_{t−1}) + ε'_t
    FPL_T = ε'_T,  FPL_t = L_F(FPL_{t+1}) + ε'_t
    TPL_t = BPL_t + FPL_t − ε'_t

TPL_t bounds the loss of event t for the worst pair of states (Theorem 1 of the doc); for a pair
of hypotheses with δ ≤ δ_p the present term ε'_t is replaced by ε_t·δ_p (Theorem 2). Several
protected times S jointly lose at most
(BPL_{s₁} − ε'_{s₁}) + Σ_{s₁≤j≤s_k} ε'_j + (FPL_{s_k} − ε'_{s_k}) (Theorem 3);
Σ_{i∈S} TPL_i is NOT a bound. Every figure is capped explicitly by plain composition,
Σ_t ε'_t (with ε_t·δ_p at the protected times for a pair), which holds for any correlation.
All losses are in nats. Each step is one evaluation of a precomputed
:class:`~lmdk_core.correlation.increment.EnvelopeLoss`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._deprecation import renamed, renamed_property
from ..accounting import as_landmark_mask, landmark_guarantee
from ..errors import MatrixError, ParameterError
from ..validation import as_budget_array, check_nonnegative
from .increment import EnvelopeCache, EnvelopeLoss, envelope
from .matrices import check_transition_matrix, reverse_chain
from .neighbours import StepLosses

__all__ = ["LandmarkTemporalLoss", "TemporalLoss", "landmark_temporal_loss", "temporal_loss"]

MatrixLike = Any  # an (n, n) row-stochastic array or an EnvelopeLoss


@dataclass(frozen=True, eq=False)
class TemporalLoss:
    """Per-timestamp upper bounds on the privacy loss of one event (arrays of length T, nats)
    for the budgets ``budget`` (ε_t; ``.eps`` is a deprecated alias until 0.3).

    ``bpl``, ``fpl``, ``tpl`` bound the backward, forward and total loss of event t for the
    worst pair of states (budgets scaled by ``scale`` = δ_max of the neighbour relation);
    ``pair`` (or None) bounds the loss for two hypotheses at most ``pair_scale`` apart in δ.
    ``cap`` is the composition bound Σ_t ε_t·scale that every figure here respects.
    Guarantees: ε'_t ≤ BPL_t, FPL_t ≤ TPL_t ≤ cap.
    """

    budget: np.ndarray
    bpl: np.ndarray
    fpl: np.ndarray
    tpl: np.ndarray
    scale: float = 1.0
    pair: np.ndarray | None = None
    pair_scale: float | None = None
    cap: float = np.inf
    relation: str = "each release step is ε_t-DP between any two states"

    # the field was called ``eps``; per-timestamp budgets are spelled ``budget`` everywhere
    eps = renamed_property("eps", "budget")

    @property
    def frame(self) -> pd.DataFrame:
        """Columns t (0-based), eps, bpl, fpl, tpl (and tpl_pair when computed)."""
        f = pd.DataFrame(
            {"t": np.arange(self.budget.size), "eps": self.budget, "bpl": self.bpl, "fpl": self.fpl,
             "tpl": self.tpl}
        )
        if self.pair is not None:
            f["tpl_pair"] = self.pair
        return f

    def to_frame(self) -> pd.DataFrame:
        """Same as :attr:`frame`."""
        return self.frame


# The field was called ``eps``: the keyword keeps working for one release, with a warning.
TemporalLoss.__init__ = renamed(eps="budget")(TemporalLoss.__init__)  # type: ignore[method-assign]


def resolve_envelopes(
    P_backward: MatrixLike,
    P_forward: MatrixLike | None,
    marginal: Any,
    cache: EnvelopeCache | None = None,
):
    """(EnvelopeLoss for P^B, EnvelopeLoss for P^F) from the user's arguments: matrices or
    EnvelopeLoss objects, P^F derived from P^B and ``marginal`` by Bayes when not given."""
    if P_forward is None and marginal is not None:
        if isinstance(P_backward, EnvelopeLoss):
            raise ParameterError(
                "pass P_backward as a matrix (not an EnvelopeLoss) to derive P_forward"
            )
        P_forward = reverse_chain(check_transition_matrix(P_backward, "P_backward"), marginal)
    env_b = envelope(P_backward, name="P_backward", cache=cache)
    env_f = env_b if P_forward is None else envelope(P_forward, name="P_forward", cache=cache)
    if env_b.n_states != env_f.n_states:
        raise MatrixError(
            f"P_backward has {env_b.n_states} states but P_forward has {env_f.n_states}"
        )
    return env_b, env_f


def scaled_bounds(
    env_b: EnvelopeLoss, env_f: EnvelopeLoss, es: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(BPL, FPL, TPL, cap) for scaled budgets ``es`` (time on the last axis; 1-D, or 2-D with
    one row per person): the recursions of the module docstring, each capped by composition —
    BPL_t by Σ_{j≤t} ε'_j, FPL_t by Σ_{j≥t} ε'_j, TPL_t by ``cap`` = Σ_j ε'_j (one per row)."""
    csum = np.cumsum(es, axis=-1)
    rsum = np.cumsum(es[..., ::-1], axis=-1)[..., ::-1]
    cap = csum[..., -1] if es.shape[-1] else np.zeros(es.shape[:-1])
    bpl = np.minimum(env_b.backward(es), csum)
    fpl = np.minimum(env_f.forward(es), rsum)
    tpl = np.minimum(bpl + fpl - es, np.asarray(cap)[..., None])
    return bpl, fpl, tpl, np.atleast_1d(cap)


def _scales(
    steps: StepLosses | None, separation: float | None, n: int
) -> tuple[float, float | None]:
    if steps is None:
        if separation is not None:
            raise ParameterError("separation needs steps= (the release's neighbour relation)")
        return 1.0, None
    if not isinstance(steps, StepLosses):
        raise ParameterError("steps must be a StepLosses (see correlation.location_steps)")
    if steps.n_states != n:
        raise MatrixError(f"steps has {steps.n_states} states but the matrices have {n}")
    scale = steps.worst
    if not np.isfinite(scale):
        raise ParameterError("the step losses must be finite")
    if separation is None:
        return scale, None
    return scale, steps.pair_scale(check_nonnegative(separation, "separation"))


@renamed(eps="budget")
def temporal_loss(
    budget: Any,
    P_backward: MatrixLike,
    P_forward: MatrixLike | None = None,
    *,
    marginal: Any = None,
    steps: StepLosses | None = None,
    separation: float | None = None,
    cache: EnvelopeCache | None = None,
) -> TemporalLoss:
    """Upper bounds on BPL, FPL and TPL per timestamp for budgets ``budget`` (1-D ε_t ≥ 0, nats;
    ``eps=`` is a deprecated alias).

    ``steps`` is the release's neighbour relation (:func:`location_steps`, :func:`value_steps`;
    None = each step ε_t-DP between any two states, Cao et al.'s assumption, which Laplace and
    planar Laplace do not satisfy). ``separation`` (metres or value units, needs ``steps``)
    adds ``.pair``: the bound for two hypotheses that far apart. ``P_backward`` / ``P_forward``
    are row-stochastic matrices or :class:`EnvelopeLoss` objects; ``cache`` an optional
    caller-owned :class:`EnvelopeCache`. If ``P_forward`` is None it is derived from
    ``P_backward`` by Bayes' rule with ``marginal`` when given, else taken equal to it.
    Raises MatrixError / ParameterError on invalid input.
    """
    e = as_budget_array(budget)
    env_b, env_f = resolve_envelopes(P_backward, P_forward, marginal, cache)
    scale, pscale = _scales(steps, separation, env_b.n_states)
    es = e * scale
    bpl, fpl, tpl, caps = scaled_bounds(env_b, env_f, es)
    total = float(caps[0]) if es.size else 0.0
    pair = None
    if pscale is not None:
        pair = np.minimum(tpl - es + e * pscale, total - es + e * pscale)
        pair.setflags(write=False)
    for arr in (e, bpl, fpl, tpl):
        arr.setflags(write=False)
    relation = steps.relation if steps is not None else TemporalLoss.relation
    return TemporalLoss(budget=e, bpl=bpl, fpl=fpl, tpl=tpl, scale=scale, pair=pair,
                        pair_scale=pscale, cap=total, relation=relation)


@dataclass(frozen=True, eq=False)
class LandmarkTemporalLoss:
    """Upper bound on the joint loss of the landmarks and t under correlation (length T, nats).

    ``composed[t]`` bounds the loss of the set S = L ∪ {t} for the worst pair of states at every
    time of S: (BPL_{s₁} − ε'_{s₁}) + Σ_{s₁≤j≤s_k} ε'_j + (FPL_{s_k} − ε'_{s_k}),
    s₁ = min S, s_k = max S (docs/temporal-loss.md, Theorem 3), capped by ``cap`` = Σ_t ε'_t.
    ``composed_pair`` (or None): the same for hypotheses at most ``loss.pair_scale`` apart at each
    protected time, capped by its own composition bound ``cap_pair``. ``guarantee[t]`` is the
    uncorrelated landmark guarantee G_t = Σ_{i ∈ L ∪ {t}} ε_i (the user's promise).
    """

    landmarks: np.ndarray
    loss: TemporalLoss
    composed: np.ndarray
    guarantee: np.ndarray
    composed_pair: np.ndarray | None = None
    cap_pair: np.ndarray | None = None

    @property
    def cap(self) -> float:
        """The composition bound Σ_t ε'_t that ``composed`` never exceeds."""
        return self.loss.cap

    @property
    def frame(self) -> pd.DataFrame:
        """Columns t, landmark, eps, bpl, fpl, tpl, composed, guarantee (and pair columns)."""
        f = self.loss.frame
        f.insert(1, "landmark", self.landmarks)
        f["composed"] = self.composed
        if self.composed_pair is not None:
            f["composed_pair"] = self.composed_pair
        f["guarantee"] = self.guarantee
        return f


@renamed(eps="budget")
def landmark_temporal_loss(
    budget: Any,
    landmarks: Any,
    P_backward: MatrixLike,
    P_forward: MatrixLike | None = None,
    *,
    marginal: Any = None,
    steps: StepLosses | None = None,
    separation: float | None = None,
    cache: EnvelopeCache | None = None,
) -> LandmarkTemporalLoss:
    """Sound upper bound on the joint loss of L ∪ {t} for every t, next to the uncorrelated G_t.

    ``landmarks`` is a bool mask of length T or integer indices (see
    :func:`lmdk_core.accounting.as_landmark_mask`); the other arguments are as in
    :func:`temporal_loss`. With no landmark, ``composed`` equals TPL.
    """
    loss = temporal_loss(budget, P_backward, P_forward, marginal=marginal, steps=steps,
                         separation=separation, cache=cache)
    e = loss.budget
    T = e.size
    mask = as_landmark_mask(landmarks, T)
    es = e * loss.scale
    idx = np.flatnonzero(mask)
    if idx.size == 0 or T == 0:
        composed = loss.tpl.copy()
    else:
        t = np.arange(T)
        s1 = np.minimum(idx[0], t)
        sk = np.maximum(idx[-1], t)
        C = np.concatenate([[0.0], np.cumsum(es)])
        raw = (loss.bpl[s1] - es[s1]) + (C[sk + 1] - C[s1]) + (loss.fpl[sk] - es[sk])
        composed = np.clip(raw, 0.0, loss.cap)
    composed_pair = cap_pair = None
    if loss.pair_scale is not None:
        # at the protected times the step loss is ε_j·δ_p instead of ε'_j
        saving = es - e * loss.pair_scale
        red = saving[mask].sum() + np.where(mask, 0.0, saving)
        composed_pair = np.maximum(composed - red, 0.0)
        cap_pair = loss.cap - red
        composed_pair.setflags(write=False)
        cap_pair.setflags(write=False)
    composed.setflags(write=False)
    guarantee = landmark_guarantee(e, mask)
    return LandmarkTemporalLoss(landmarks=mask, loss=loss, composed=composed, guarantee=guarantee,
                                composed_pair=composed_pair, cap_pair=cap_pair)
