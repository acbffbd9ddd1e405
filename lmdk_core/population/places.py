"""Each user's landmark places suggested from their own stays (then that user's private input).

:func:`suggest_user_places` runs :func:`lmdk_core.suggest_places` on every user's own trajectory
separately (a place is never shared between users) and keeps each user's ``top`` places, with
the suggested radius. The result has the columns the population release reads (uid, name, lat,
lon, radius_m). The suggestions are computed from private data and stay private: they only
decide which bins are landmarks *for that user*, exactly like places the user marked.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._deprecation import renamed
from ..stays import suggest_places
from ..validation import check_int

__all__ = ["suggest_user_places"]


@renamed(radius_m="stay_radius_m")
def suggest_user_places(traj: pd.DataFrame, *, top: int = 2, stay_radius_m: float = 100.0,
                        min_duration_s: float = 1800.0) -> pd.DataFrame:
    """uid, name (``stay 1`` … by total dwell time), lat, lon, radius_m per user (private).

    ``stay_radius_m`` (metres) is the radius of a stay (:func:`lmdk_core.detect_stays`); the
    ``radius_m`` column is each suggested place's radius: the column of the population places
    table (uid, lat, lon, radius_m) that :func:`~lmdk_core.population.core.places_by_user` and
    the population release read and :func:`~lmdk_core.population.generate_population` writes,
    so the frame goes straight into a release.
    """
    k = check_int(top, "top")
    uid = traj["uid"].astype(str).to_numpy()
    order = np.argsort(uid, kind="stable")
    frame = traj.iloc[order].reset_index(drop=True)
    uid = uid[order]
    starts = np.flatnonzero(np.r_[True, uid[1:] != uid[:-1]]) if uid.size else np.zeros(0, int)
    ends = np.r_[starts[1:], uid.size]
    rows: list[tuple[Any, ...]] = []
    for s, e in zip(starts, ends, strict=True):  # per user: their own stays only
        sug = suggest_places(frame.iloc[s:e], stay_radius_m=stay_radius_m,
                             min_duration_s=min_duration_s, top=k)
        rows.extend((uid[s], f"stay {j + 1}", la, lo, r) for j, (la, lo, r) in enumerate(
            zip(sug["lat"], sug["lon"], sug["suggested_radius_m"], strict=True)))
    return pd.DataFrame(rows, columns=["uid", "name", "lat", "lon", "radius_m"])
