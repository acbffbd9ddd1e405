"""Closed-form suprema of BPL / FPL over an unbounded horizon for a constant budget ε.

With ε_t = ε for all t, BPL_t increases to the least fixed point of α = L_B(α) + ε. For one
candidate (q, d) = (q_J, d_J), z = e^α solves d z² + (1 − d − q e^ε) z − e^ε (1 − q) = 0
(algorithms.md §4):

    d > 0:            α = log[((d + q e^ε − 1) + √((d + q e^ε − 1)² + 4 d e^ε (1 − q))) / (2d)]
    d = 0, q < 1,
      ε < log(1/q):   α = log[(1 − q) e^ε / (1 − q e^ε)]
    otherwise:        α = +inf

Since α − f(α) is non-decreasing for every candidate curve f, the fixed point of the envelope
L = max f is the maximum of the candidates' fixed points, taken over the hull vertices.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._deprecation import renamed
from ..errors import ParameterError
from .increment import envelope

__all__ = ["sup_bpl", "sup_fpl", "sup_loss"]


def _fixed_points(d: np.ndarray, q: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """Fixed point α(ε) for every candidate (rows) and budget (columns)."""
    d = d[:, None]
    q = q[:, None]
    E = np.exp(eps)[None, :]
    em1 = np.expm1(eps)[None, :]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # d > 0: positive root, cancellation-free in both signs of b
        b = d - (1.0 - q) + q * em1  # = d + q e^ε − 1
        c = 4.0 * d * E * (1.0 - q)
        root = np.sqrt(b * b + c)
        z_pos = np.where(b >= 0, (b + root) / (2.0 * d), 2.0 * E * (1.0 - q) / (root - b))
        a_pos = np.log(z_pos)
        # d = 0: finite iff q e^ε < 1
        denom = 1.0 - q * E  # > 0 iff ε < log(1/q)
        a_zero = np.where(
            denom > 0, eps[None, :] + np.log1p(-q) - np.log(np.where(denom > 0, denom, 1.0)), np.inf
        )
    out = np.where(d > 0, a_pos, a_zero)
    return np.where(eps[None, :] == 0, 0.0, out)


@renamed(eps="budget", positional=("budget",))
def sup_loss(P: Any, *, budget: Any) -> Any:
    """sup_t of the loss recursion α_t = L_P(α_{t−1}) + ε for a constant budget ε ≥ 0 (nats).

    ``P`` is a row-stochastic matrix or an EnvelopeLoss; ``budget`` the constant per-timestamp
    budget ε, a scalar or array (one supremum per element). Returns
    +inf where the loss is unbounded (e.g. the identity matrix, or ε ≥ log(1/q) for a candidate
    with d = 0); ε = 0 gives 0.
    """
    env = envelope(P)
    arr = np.asarray(budget, dtype=np.float64)
    flat = np.atleast_1d(arr).ravel()
    if np.any(~np.isfinite(flat)) or np.any(flat < 0):
        raise ParameterError("budget must be finite and >= 0")
    d, q = env.candidates
    out = _fixed_points(np.asarray(d), np.asarray(q), flat).max(axis=0)
    out = np.maximum(out, flat)  # guard against rounding: the supremum is never below ε
    return float(out[0]) if arr.ndim == 0 else out.reshape(arr.shape)


@renamed(eps="budget", positional=("budget",))
def sup_bpl(P_backward: Any, *, budget: Any) -> Any:
    """Supremum over t of BPL_t for a constant budget ε (``P_backward`` = P^B); +inf where
    unbounded."""
    return sup_loss(P_backward, budget=budget)


@renamed(eps="budget", positional=("budget",))
def sup_fpl(P_forward: Any, *, budget: Any) -> Any:
    """Supremum over t of FPL_t for a constant budget ε (``P_forward`` = P^F); +inf where
    unbounded."""
    return sup_loss(P_forward, budget=budget)
