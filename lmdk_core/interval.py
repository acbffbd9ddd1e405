"""Release interval: publish one location per N seconds instead of every fix.

:func:`release_interval` resamples a trajectory with :func:`lmdk_core.trajectory.resample` (the
first fix in each epoch-aligned interval of ``interval_s`` seconds, one user at a time) and
carries the landmark mask along, so a page can show how many timestamps and landmarks are left
before and after. Fewer landmarks mean more budget per release for Uniform and Adaptive
(ε/(|L|+1)). The kept rows are chosen from the timestamps alone (not from the locations or the
landmarks), so resampling spends no privacy budget.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .accounting import as_landmark_mask
from .errors import ParameterError
from .trajectory import resample
from .validation import check_positive

__all__ = ["IntervalResult", "release_interval"]

_ROW = "__lmdk_row__"


@dataclass(frozen=True, eq=False)
class IntervalResult:
    """A trajectory resampled to one fix per ``interval_s`` seconds, with its landmark mask.

    ``trajectory``: the kept rows (fresh index); ``landmarks``: bool mask over them; ``kept``:
    their row positions in the input; counts before/after: ``n_before``, ``n_after``,
    ``landmarks_before``, ``landmarks_after``.
    """

    trajectory: pd.DataFrame
    landmarks: np.ndarray
    kept: np.ndarray
    interval_s: float
    n_before: int
    landmarks_before: int

    @property
    def n_after(self) -> int:
        return int(self.kept.size)

    @property
    def landmarks_after(self) -> int:
        return int(self.landmarks.sum())

    def counts(self) -> dict[str, int]:
        """Timestamps and landmarks before and after resampling (for display)."""
        return {"timestamps_before": self.n_before, "timestamps_after": self.n_after,
                "landmarks_before": self.landmarks_before,
                "landmarks_after": self.landmarks_after}


def release_interval(traj: pd.DataFrame, landmarks: Any, *, interval_s: float) -> IntervalResult:
    """Keep one fix per ``interval_s`` seconds (> 0) of ``traj`` and the matching landmarks.

    ``traj``: trajectory frame (columns uid, time, lat, lon); ``landmarks``: bool mask or indices
    over its rows (e.g. :func:`lmdk_core.landmark_mask` on ``traj``). Intervals are aligned to the
    Unix epoch, so the grid is the same for every user and time slice.
    """
    if not isinstance(traj, pd.DataFrame):
        raise ParameterError(f"expected a trajectory DataFrame, got {type(traj).__name__}")
    step = check_positive(interval_s, "interval_s")
    mask = as_landmark_mask(landmarks, len(traj))
    if _ROW in traj.columns:
        raise ParameterError(f"trajectory has a reserved column {_ROW!r}")
    missing = [c for c in ("uid", "time") if c not in traj.columns]
    if missing:
        raise ParameterError(f"trajectory frame is missing column(s) {', '.join(missing)}")
    tagged = traj[["uid", "time"]].assign(lat=0.0, lon=0.0, **{_ROW: np.arange(len(traj))})
    # resample reads the times through lmdk_core.times (any unit and zone; numbers refused)
    kept = resample(tagged, step)[_ROW].to_numpy(dtype=np.int64)
    kept.setflags(write=False)
    lm = mask[kept]
    lm.setflags(write=False)
    return IntervalResult(trajectory=traj.iloc[kept].reset_index(drop=True), landmarks=lm,
                          kept=kept, interval_s=step, n_before=len(traj),
                          landmarks_before=int(mask.sum()))
