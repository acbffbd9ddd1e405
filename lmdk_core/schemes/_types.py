"""The raw result every scheme runner returns (wrapped into a Release by lmdk_core.release)."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np


class SchemeOutput(NamedTuple):
    """Released columns, budget spent per t, fresh-release flags, derived parameters, and the
    achieved ε'_t ≤ ε_t of the exact mechanisms (rounding to their grids included)."""

    columns: tuple[np.ndarray, ...]
    eps: np.ndarray
    published: np.ndarray
    derived: dict[str, Any]
    achieved: np.ndarray
