"""Release schemes: names, help texts, parameter defaults, and the dispatch registry.

Each scheme is implemented once against :class:`~lmdk_core.schemes._space.Space` and serves
both values and locations. ``run_scheme`` validates the scheme name and parameters and calls the
implementation; :mod:`lmdk_core.release` wraps the result into a Release.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .._deprecation import renamed
from ..accounting import landmark_guarantee
from ..errors import ParameterError
from ..noise.source import as_source, check_noise
from ..validation import check_int, check_nonnegative, check_probability
from ._space import Space
from ._types import SchemeOutput
from .adaptive import run_adaptive
from .fill import apply_fill, check_fill
from .reserve import check_share, run_reserve
from .vectorised import run_vectorised
from .wevent import run_wevent

__all__ = [
    "SCHEMES", "SCHEME_INFO", "SCHEME_PARAMS", "resolve_params", "run_scheme", "with_achieved",
]

SCHEMES = ("event", "user", "uniform", "skip", "adaptive", "reserve", "bd", "ba")
"""Every release scheme, baselines first."""

SCHEME_INFO: dict[str, str] = {
    "event": "Baseline: full budget ε at every timestamp. Protects single events only — "
             "NOT landmark-private once there is a landmark.",
    "user": "Baseline: ε/T at every timestamp, so the whole series costs ε (user-level DP). "
            "Private but very noisy.",
    "uniform": "ε/(|L|+1) at every timestamp: any landmarks plus one other event cost at most ε.",
    "skip": "Full ε at regular timestamps; landmarks are never released — they repeat the last "
            "regular release (or, with a delayed fill, lie between the releases around them).",
    "adaptive": "Thesis reconstruction: ε/(|L|+1) per release, like Uniform, but releases only "
                "as often as the data moves (sampling rate adapts); other timestamps repeat the "
                "last release for free. Publishing at every landmark (sample_landmarks) is an "
                "lmdk addition, not in the thesis text.",
    "reserve": "lmdk's budget-aware scheme: reserves a share of ε for the landmarks; regular "
               "timestamps spend the rest, landmarks share the reserve and publish only when a "
               "public motion model expects a repeat to be worse than a fresh release. Share 0 "
               "is Skip.",
    "bd": "w-event baseline (Kellaris et al.): a private test decides whether to release; budget "
          "distribution within each window of w steps, scaled down so landmarks stay protected.",
    "ba": "w-event baseline (Kellaris et al.): a private test decides whether to release; skipped "
          "steps' budget is absorbed by the next release, scaled down so landmarks stay protected.",
}
"""One-line plain-language explanation per scheme (dashboard help text)."""

SCHEME_PARAMS: dict[str, dict[str, object]] = {
    "event": {},
    "user": {},
    "uniform": {},
    "skip": {"fill": "repeat"},
    "adaptive": {"s_min": 0.1, "inc": 0.1, "dec": 0.1, "sample_landmarks": True},
    "reserve": {"landmark_share": "auto", "speed": 0.1, "fill": "repeat"},
    "bd": {"w": 10},
    "ba": {"w": 10},
}
"""Documented defaults of each scheme's parameters.

adaptive: ``s_min`` lowest sampling rate in [0, 1]; ``inc``/``dec`` rate step up/down (≥ 0);
``sample_landmarks`` always publish at landmarks (an lmdk addition, not in the thesis text).
reserve: ``landmark_share`` the share s of ε reserved for landmarks, in [0, 1), or "auto" (the
public model's best); ``speed`` (≥ 0) the public motion model: metres per second for locations
with times, metres per timestamp without times, value units per timestamp for values.
skip/reserve: ``fill`` what a moment without a fresh release shows: "repeat" (the last fresh
release; online, the thesis's Skip), "interpolate" (the straight line in public time between the
fresh releases before and after it) or "halfway" (the midpoint of those two); the last two are
delayed until the next fresh release; all are free post-processing (:mod:`lmdk_core.schemes.fill`).
bd/ba: ``w`` window length in timestamps (≥ 1).
"""


def check_scheme(scheme: Any) -> str:
    """Return ``scheme`` if it names a scheme, else ParameterError listing the valid ones."""
    if not isinstance(scheme, str) or scheme not in SCHEMES:
        raise ParameterError(f"unknown scheme {scheme!r}; valid schemes: {', '.join(SCHEMES)}")
    return scheme


def _check_bool(value: Any, name: str) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ParameterError(f"{name} must be True or False, got {value!r}")


_CHECKS: dict[str, Callable[[Any, str], Any]] = {
    "s_min": check_probability,
    "inc": check_nonnegative,
    "dec": check_nonnegative,
    "sample_landmarks": _check_bool,
    "w": lambda v, name: check_int(v, name, minimum=1),
    "landmark_share": check_share,
    "speed": check_nonnegative,
    "fill": check_fill,
}


def resolve_params(scheme: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """Validated parameters of ``scheme``: SCHEME_PARAMS defaults overridden by ``params``."""
    defaults = SCHEME_PARAMS[check_scheme(scheme)]
    unknown = sorted(set(params) - set(defaults))
    if unknown:
        valid = ", ".join(defaults) if defaults else "none"
        raise ParameterError(
            f"unknown parameter(s) {', '.join(unknown)} for scheme {scheme!r}; "
            f"valid parameters: {valid}"
        )
    merged = {**defaults, **params}
    return {name: _CHECKS[name](value, name) for name, value in merged.items()}


@renamed(positional=("epsilon", "rng", "params", "noise"))
def run_scheme(
    scheme: str, space: Space, landmarks: np.ndarray, *, epsilon: float,
    params: Mapping[str, Any], rng: Any = None, noise: str = "safe",
) -> SchemeOutput:
    """Run a validated scheme (``params`` from :func:`resolve_params`) on ``space`` with total
    budget ``epsilon``.

    ``rng``: None (fresh OS entropy), a seed/Generator (simulations only) or a RandomSource;
    ``noise``: "safe" (exact, default) or "fast" (float, simulations only). The derived
    parameters gain ``noise`` and ``achieved_epsilon`` (max_t Σ_{i∈L∪{t}} ε'_i ≤ ε over the
    achieved per-step budgets ε'_t ≤ ε_t).
    """
    source = as_source(rng)
    noise = check_noise(noise)
    fill = params.get("fill", "repeat")
    params = {k: v for k, v in params.items() if k != "fill"}  # applied below, to any scheme
    if scheme == "adaptive":
        out = run_adaptive(space, landmarks, epsilon=epsilon, source=source, noise=noise,
                           **params)
    elif scheme == "reserve":
        out = run_reserve(space, landmarks, epsilon=epsilon, source=source, noise=noise,
                          **params)
    elif scheme in ("bd", "ba"):
        out = run_wevent(scheme, space, landmarks, epsilon=epsilon, source=source, noise=noise,
                         **params)
    else:
        out = run_vectorised(scheme, space, landmarks, epsilon=epsilon, source=source,
                             noise=noise)
    if fill != "repeat":  # post-processing of the fresh releases: budgets unchanged
        out = out._replace(columns=apply_fill(out.columns, out.published, space, fill))
    return with_achieved(out, landmarks, noise)


def with_achieved(out: SchemeOutput, landmarks: np.ndarray, noise: str) -> SchemeOutput:
    """Add ``noise`` and the achieved landmark guarantee to ``out.derived``."""
    achieved = float(landmark_guarantee(out.achieved, landmarks).max()) if out.eps.size else 0.0
    return out._replace(derived={**out.derived, "noise": noise, "achieved_epsilon": achieved})
