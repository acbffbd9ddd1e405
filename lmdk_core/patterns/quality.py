"""Quality of public-pattern detection on a released stream (seed notes: Prec, Rec, Q, MRE).

Matches of the public patterns on the unprotected stream are the truth; matches on the released
stream are the answers. A match is identified by (pattern, start tick, end tick) — tick indices
name the user and the time, and released streams share the true stream's ticks.

* TP = |truth ∩ answers|, FP = |answers \\ truth|, FN = |truth \\ answers| (summed over patterns);
* Prec = TP/(TP+FP), Rec = TP/(TP+FN). Conventions for empty denominators: with no answers,
  Prec = 1 if there was nothing to find (FN = 0) and 0 otherwise; with no truth, Rec = 1 if
  nothing was claimed (FP = 0) and 0 otherwise;
* Q = α·Prec + (1 − α)·Rec, α ∈ [0, 1];
* MRE = (Q_ord − Q_PPM)/Q_ord, Q_ord the quality without protection. Against the unprotected
  stream itself Q_ord = 1, so MRE = 1 − Q; ``q_ord`` can be given when the reference differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._deprecation import renamed_attributes
from ..errors import ParameterError
from ..validation import check_probability

__all__ = ["Quality", "confusion", "quality", "quality_mre"]


@dataclass(frozen=True)
class Quality:
    """Counts and scores of one comparison."""

    tp: int
    fp: int
    fn: int
    alpha: float

    @property
    def precision(self) -> float:
        if self.tp + self.fp == 0:
            return 1.0 if self.fn == 0 else 0.0
        return self.tp / (self.tp + self.fp)

    @property
    def recall(self) -> float:
        if self.tp + self.fn == 0:
            return 1.0 if self.fp == 0 else 0.0
        return self.tp / (self.tp + self.fn)

    @property
    def q(self) -> float:
        """Q = α·Prec + (1 − α)·Rec."""
        return self.alpha * self.precision + (1 - self.alpha) * self.recall

    @property
    def mre(self) -> float:
        """(Q_ord − Q)/Q_ord with Q_ord = 1 (the unprotected stream against itself)."""
        return quality_mre(self.q)

    def with_alpha(self, alpha: float) -> Quality:
        return Quality(self.tp, self.fp, self.fn, check_probability(alpha, "alpha"))


def _pair_keys(m: np.ndarray) -> np.ndarray:
    """Unique rows of an (k, 2) int64 array as a structured view (exact, no overflow)."""
    view = np.ascontiguousarray(m).view([("s", np.int64), ("e", np.int64)]).ravel()
    return np.unique(view)


def confusion(truth: np.ndarray, answers: np.ndarray) -> tuple[int, int, int]:
    """(TP, FP, FN) between two (k, 2) arrays of (start tick, end tick) matches."""
    t = _pair_keys(np.asarray(truth, dtype=np.int64).reshape(-1, 2))
    a = _pair_keys(np.asarray(answers, dtype=np.int64).reshape(-1, 2))
    tp = int(np.intersect1d(t, a, assume_unique=True).size)
    return tp, int(a.size - tp), int(t.size - tp)


def quality(truth: Sequence[np.ndarray], answers: Sequence[np.ndarray], *,
            alpha: float = 0.5) -> Quality:
    """Micro-averaged Quality over public patterns (``truth[i]``/``answers[i]`` per pattern)."""
    a = check_probability(alpha, "alpha")
    if len(truth) != len(answers):
        raise ParameterError(f"{len(truth)} truth match lists but {len(answers)} answer lists")
    tp = fp = fn = 0
    for t, s in zip(truth, answers, strict=True):
        x, y, z = confusion(t, s)
        tp, fp, fn = tp + x, fp + y, fn + z
    return Quality(tp, fp, fn, a)


def quality_mre(q_ppm: float, q_ord: float = 1.0) -> float:
    """Mean relative error of pattern quality, (Q_ord − Q_PPM)/Q_ord; Q_ord must be > 0.

    (Named apart from :func:`lmdk_core.metrics.mre`, the relative error of released values;
    ``lmdk_core.patterns.mre`` is a deprecated alias.)"""
    if not q_ord > 0:
        raise ParameterError(f"Q_ord must be > 0, got {q_ord}")
    return (q_ord - q_ppm) / q_ord


__getattr__ = renamed_attributes(__name__, mre=quality_mre)
