"""Data-independent schemes (event, user, uniform, skip): closed-form ε_t, one vectorised draw.

ε_t comes from :func:`lmdk_core.allocation.allocate`; every t with ε_t > 0 gets a fresh release
through the space's mechanism object (Laplace / PlanarLaplace) at budget ε_t; Skip's landmarks
(ε_t = 0) republish the last regular release, or NaN
before the first one — so Skip's output never depends on a landmark's true value.
"""

from __future__ import annotations

import numpy as np

from .._deprecation import renamed
from ..allocation import allocate
from ..noise.source import RandomSource
from ._space import Space, forward_fill
from ._types import SchemeOutput


@renamed(positional=("epsilon", "source", "noise"))
def run_vectorised(
    scheme: str, space: Space, landmarks: np.ndarray, *, epsilon: float, source: RandomSource,
    noise: str,
) -> SchemeOutput:
    """Release ``space`` under a data-independent scheme (see module docstring)."""
    budget = allocate(space.n, landmarks, epsilon=epsilon, scheme=scheme)
    return run_budget(space, budget=budget, source=source, noise=noise)


@renamed(eps="budget", positional=("budget", "source", "noise"))
def run_budget(space: Space, *, budget: np.ndarray, source: RandomSource,
               noise: str) -> SchemeOutput:
    """Fresh release with budget ε_t wherever ε_t > 0, republish the last release elsewhere."""
    published = budget > 0
    cols, achieved = space.perturb(budget, source, noise)
    return SchemeOutput(forward_fill(cols, published), budget, published, {}, achieved)
