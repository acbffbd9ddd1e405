"""Predicted error of each scheme before releasing, and the ε that reaches a target accuracy.

Everything here is a closed form of public quantities only — the number of timestamps T, the
number of landmark timestamps |L| (public input in landmark privacy), ε and the protection
radius r — so looking at it, or choosing settings from it, reveals nothing about the trace
beyond T and |L|. Where a scheme's error also depends on how the person moves (republished
points: Skip at landmarks, Adaptive/BD/BA between publications) no closed form exists; the
prediction says so (``kind``), and a caller that wants a number simulates on the data, knowing
that such a simulation is for the data owner's eyes only.

Noise of one fresh release with budget e: mean error ``k·r/e`` metres for locations, where
``k`` is the location mechanism's mean error per r/ε (:func:`mean_error_factor`, read from
:class:`lmdk_core.mechanisms.PlanarLaplace` so it follows the mechanism in use), and ``Δ/e``
for Laplace values (mean |noise| of Laplace(Δ/e)).

Per scheme (fresh releases only; ε_t from :mod:`lmdk_core.allocation`):

* event  ``k·r/ε`` (not landmark-private);  user ``k·r·T/ε``;  uniform ``k·r·(|L|+1)/ε``;
* skip   ``k·r/ε`` at the T − |L| regular timestamps; landmarks repeat the last regular release,
  so their error adds the distance moved since then (``kind="lower bound"`` for the mean);
* adaptive / bd / ba: data-dependent (``kind="simulate"``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import ParameterError
from .validation import check_epsilon, check_int, check_positive

__all__ = [
    "ErrorPrediction",
    "epsilon_for_error",
    "interval_for_error",
    "mean_error_factor",
    "predict_errors",
]

_CLOSED = ("event", "user", "uniform")
_ORDER = ("event", "user", "uniform", "skip", "adaptive", "bd", "ba")


@dataclass(frozen=True)
class ErrorPrediction:
    """Predicted mean error of one scheme (metres for locations, value units for values).

    ``kind``: ``"closed form"`` (exact expectation of the noise), ``"lower bound"`` (the true mean
    is at least this) or ``"simulate"`` (no closed form; ``mean_error`` is NaN).
    ``landmark_private``: whether the scheme satisfies (ε, L)-landmark privacy.
    """

    scheme: str
    mean_error: float
    kind: str
    landmark_private: bool


def mean_error_factor(kind: str = "locations") -> float:
    """k such that one fresh release at budget e has mean error k·unit/e (unit = r or Δ)."""
    if kind == "values":
        return 1.0
    if kind != "locations":
        raise ParameterError(f"kind must be 'locations' or 'values', got {kind!r}")
    from .mechanisms import PlanarLaplace

    return float(PlanarLaplace(epsilon=1.0, radius_m=1.0).mean_error_m)


def _multiplier(scheme: str, n: int, n_landmarks: int) -> float:
    """How many times the event-level noise scale a fresh release of ``scheme`` carries."""
    return {"event": 1.0, "user": float(max(n, 1)), "uniform": float(n_landmarks + 1),
            "skip": 1.0}[scheme]


def _counts(n: int, n_landmarks: int) -> tuple[int, int]:
    n = check_int(n, "n", minimum=0)
    n_landmarks = check_int(n_landmarks, "n_landmarks", minimum=0)
    if n_landmarks > n:
        raise ParameterError(f"n_landmarks ({n_landmarks}) cannot exceed n ({n})")
    return n, n_landmarks


def predict_errors(
    *, n: int, n_landmarks: int, epsilon: float, radius_m: float | None = None,
    sensitivity: float | None = None,
) -> list[ErrorPrediction]:
    """Predicted mean error of every scheme for T = ``n`` timestamps and |L| = ``n_landmarks``.

    Give ``radius_m`` (locations, metres) or ``sensitivity`` (values). Ordered as
    :data:`lmdk_core.release.SCHEMES`.
    """
    n, n_landmarks = _counts(n, n_landmarks)
    eps = check_epsilon(epsilon)
    unit, kind = _unit(radius_m, sensitivity)
    base = mean_error_factor(kind) * unit / eps
    out = []
    for scheme in _ORDER:
        private = scheme != "event" or n_landmarks == 0
        if scheme in _CLOSED:
            out.append(ErrorPrediction(scheme, base * _multiplier(scheme, n, n_landmarks),
                                       "closed form", private))
        elif scheme == "skip":
            kind_s = "closed form" if n_landmarks == 0 else "lower bound"
            out.append(ErrorPrediction(scheme, base, kind_s, True))
        else:
            out.append(ErrorPrediction(scheme, float("nan"), "simulate", True))
    return out


def _unit(radius_m: float | None, sensitivity: float | None) -> tuple[float, str]:
    if (radius_m is None) == (sensitivity is None):
        raise ParameterError("give radius_m (locations) or sensitivity (values), exactly one")
    if radius_m is not None:
        return check_positive(radius_m, "radius_m"), "locations"
    return check_positive(sensitivity, "sensitivity"), "values"


def epsilon_for_error(
    scheme: str, *, target_error: float, n: int, n_landmarks: int,
    radius_m: float | None = None, sensitivity: float | None = None,
) -> float:
    """The ε at which ``scheme``'s fresh releases have mean error ``target_error``.

    Closed-form schemes only (event, user, uniform, skip — for Skip the regular timestamps).
    The result is the smallest ε whose predicted error is ≤ the target.
    """
    if scheme not in (*_CLOSED, "skip"):
        raise ParameterError(
            f"no closed form for scheme {scheme!r}; choose event, user, uniform or skip "
            "(adaptive, bd and ba depend on how the data moves: simulate them)"
        )
    n, n_landmarks = _counts(n, n_landmarks)
    target = check_positive(target_error, "target_error")
    unit, kind = _unit(radius_m, sensitivity)
    return mean_error_factor(kind) * unit * _multiplier(scheme, n, n_landmarks) / target


def interval_for_error(
    *, target_error_m: float, epsilon: float, radius_m: float, duration_s: float, n: int,
    n_landmarks: int,
) -> float | None:
    """Release interval (seconds) at which Uniform reaches ``target_error_m`` at budget ε.

    Releasing one location per interval keeps about the same share of landmark timestamps, so
    |L'| ≈ |L|·T'/T with T' = duration/interval; Uniform's error k·r·(|L'|+1)/ε meets the target
    when |L'| ≤ ε·target/(k·r) − 1. Returns None when no interval reaches it (even a single
    landmark release is too noisy) and 0.0 when every fix can be released. The estimate assumes
    the landmark share is unchanged by resampling; check the real |L'| after resampling.
    """
    n, n_landmarks = _counts(n, n_landmarks)
    eps = check_epsilon(epsilon)
    target = check_positive(target_error_m, "target_error_m")
    r = check_positive(radius_m, "radius_m")
    duration = check_positive(duration_s, "duration_s")
    allowed = eps * target / (mean_error_factor("locations") * r) - 1.0
    if allowed < 0 or (allowed < 1 and n_landmarks > 0):
        return None
    if n_landmarks <= allowed:
        return 0.0
    n_release = allowed * n / n_landmarks  # T' with |L'| = allowed
    return float(duration / max(np.floor(n_release), 1.0))
