"""Threshold τ of the Sample mechanism, and the public per-bin budgets it is chosen from.

τ must not depend on anyone's private data, so every rule here reads only *public* inputs: the
announced preference mix (or an array the publisher declares public), the scheme, the number of
bins and a public assumption on the number of landmark bins per user. Rules:

* a number — used as given;
* ``"mean"`` — the mean public per-bin budget (Jorgensen et al.'s default);
* ``"median"`` or ``"quantile:q"`` — that quantile of the public per-bin budgets;
* ``"min_error"`` — the τ minimising a public estimate of one cell's mean squared error with
  ``cell_count`` records (:func:`estimated_cell_mse`): (bias of dropped records)² + sampling
  variance + variance of the discrete-Laplace(τ/2) noise, evaluated on the public budgets.

τ is the threshold in budget units: a record whose per-bin budget is at least τ is always kept,
and any change of it (added, removed, moved to another cell) costs its person τ.

Every τ is then snapped down to the exact grid of :func:`lmdk_core.population.noise.snap_tau`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._deprecation import renamed
from ..errors import ParameterError
from ..validation import as_finite_array, check_int, check_nonnegative, check_positive
from .noise import snap_tau

__all__ = ["TAU_RULES", "choose_tau", "estimated_cell_mse", "public_bin_budgets"]

TAU_RULES = ("mean", "median", "quantile:q", "min_error")


@renamed(public_eps="public_epsilon")
def public_bin_budgets(public_epsilon: Any, scheme: str, n_bins: int, *,
                       assumed_landmark_bins: float = 0.0) -> np.ndarray:
    """Per-bin budgets ε_{u,t} at a regular bin implied by public ε values under ``scheme``.

    skip/event: ε (regular bins spend the whole budget); user: ε / n_bins; uniform:
    ε / (assumed_landmark_bins + 1).
    """
    eps = as_finite_array(public_epsilon, "public_epsilon")
    if eps.size == 0 or np.any(eps <= 0):
        raise ParameterError("public_epsilon must be a non-empty array of values > 0")
    n = check_int(n_bins, "n_bins")
    a = check_nonnegative(assumed_landmark_bins, "assumed_landmark_bins")
    if scheme in ("skip", "event"):
        return eps.copy()
    if scheme == "user":
        return eps / n
    if scheme == "uniform":
        return eps / (a + 1.0)
    raise ParameterError(f"unknown scheme {scheme!r}; use one of event, user, uniform, skip")


@renamed(eps="epsilon")
def keep_probability(epsilon: np.ndarray, tau: float) -> np.ndarray:
    """The Sample mechanism's keep probability, calibrated for a record that may *move*:
    π = e^{τ/2}(e^ε − 1) / ((e^{τ/2} − 1)(e^{τ/2} + e^ε)) where ε < τ, else 1 (float; the
    release rounds it down).

    With discrete Laplace(τ/2) noise on every count (:func:`.noise.count_noise_tau`), moving a
    record kept with probability π from one cell to another changes the output law by at most
    (1 + π(a − 1))/(1 − π(1 − 1/a)), a = e^{τ/2}; this π makes that exactly e^ε (and 1 at
    ε = τ). Adding or removing the record costs less (docs/personalised-dp.md §3)."""
    e = np.minimum(np.asarray(epsilon, dtype=np.float64), tau)
    half = tau / 2.0
    p = np.expm1(e) / np.expm1(half) / (1.0 + np.exp(e - half))
    return np.where(e >= tau, 1.0, np.minimum(p, 1.0))


def dlap_variance(tau: float) -> float:
    """Variance of the discrete Laplace law Pr[y] ∝ e^{−τ|y|}: 2e^{−τ}/(1−e^{−τ})²."""
    return 2.0 * np.exp(-tau) / (-np.expm1(-tau)) ** 2


def estimated_cell_mse(tau: float, public_budgets: Any, cell_count: float = 10.0) -> float:
    """Public MSE estimate of one released cell holding ``cell_count`` records whose budgets are
    distributed like ``public_budgets``: (m·mean(1−π))² + m·mean(π(1−π)) + Var(noise), the
    noise being discrete Laplace(τ/2) (:func:`.noise.count_noise_tau`)."""
    b = as_finite_array(public_budgets, "public_budgets")
    m = check_positive(cell_count, "cell_count")
    p = keep_probability(b, tau)
    return float((m * np.mean(1 - p)) ** 2 + m * np.mean(p * (1 - p))
                 + dlap_variance(tau / 2.0))


def choose_tau(rule: Any, public_budgets: Any, *, cell_count: float = 10.0) -> float:
    """τ from a rule (see module docstring) over public per-bin budgets, snapped to the grid."""
    if not isinstance(rule, str):
        return snap_tau(rule)
    b = as_finite_array(public_budgets, "public_budgets")
    if b.size == 0:
        raise ParameterError("public_budgets is empty")
    if rule == "mean":
        return snap_tau(float(np.mean(b)))
    if rule == "median":
        return snap_tau(float(np.median(b)))
    if rule.startswith("quantile:"):
        try:
            q = float(rule.split(":", 1)[1])
        except ValueError:
            q = float("nan")
        if not 0 <= q <= 1:
            raise ParameterError(f"quantile must be in [0, 1], got {rule!r}")
        return snap_tau(float(np.quantile(b, q)))
    if rule == "min_error":
        lo, hi = float(b.min()), float(b.max())
        cands = np.unique(np.concatenate([np.geomspace(lo, max(hi, lo * 1.0001), 64), b]))
        cands = cands[(cands >= 2**-20) & (cands <= 50)]
        errs = [estimated_cell_mse(t, b, cell_count) for t in cands]
        return snap_tau(float(cands[int(np.argmin(errs))]))
    raise ParameterError(
        f"unknown tau rule {rule!r}; use a number or one of {', '.join(TAU_RULES)}")
