"""Data-independent schemes (event, user, uniform, skip): closed-form ε_t, one vectorised draw.

ε_t comes from :func:`lmdk_core.allocation.allocate`; every t with ε_t > 0 gets a fresh release
with noise of budget ε_t; Skip's landmarks (ε_t = 0) republish the last regular release, or NaN
before the first one — so Skip's output never depends on a landmark's true value.
"""

from __future__ import annotations

import numpy as np

from ..allocation import allocate
from ._space import Space, forward_fill
from ._types import SchemeOutput


def run_vectorised(
    scheme: str, space: Space, landmarks: np.ndarray, epsilon: float, rng: np.random.Generator
) -> SchemeOutput:
    """Release ``space`` under a data-independent scheme (see module docstring)."""
    return run_budget(space, allocate(scheme, space.n, landmarks, epsilon), rng)


def run_budget(space: Space, eps: np.ndarray, rng: np.random.Generator) -> SchemeOutput:
    """Fresh release with budget ε_t wherever ε_t > 0, republish the last release elsewhere."""
    published = eps > 0
    cols = forward_fill(space.perturb(eps, rng), published)
    return SchemeOutput(cols, eps, published, {})
