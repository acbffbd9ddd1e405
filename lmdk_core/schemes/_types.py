"""The raw result every scheme runner returns (wrapped into a Release by lmdk_core.release)."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np


class SchemeOutput(NamedTuple):
    """Released columns, budget spent per t, fresh-release flags, and derived parameters."""

    columns: tuple[np.ndarray, ...]
    eps: np.ndarray
    published: np.ndarray
    derived: dict[str, Any]
