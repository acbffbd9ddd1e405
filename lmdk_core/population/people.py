"""Bring your own population, and set people's own budgets by their ids (page-facing helpers).

:func:`read_population` reads a population's trajectories (uid, time, lat, lon: CSV, Parquet or
any format :func:`lmdk_core.read_trajectories` knows — the reader ``lmdk population FILE``
uses) and refuses a file with no points. :func:`people_ids` lists
the people of a population (sorted, as strings: the ids a person picks from), and
:func:`with_own_budgets` sets some people's own budgets ε_u over the budgets drawn from the
public mix, refusing ids that are not in the population (with a sample of those that are).

Everything here is PRIVATE (trajectories, ids, budgets): for the publisher's session only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ParameterError, TrajectoryFormatError
from ..readers import read_trajectories

__all__ = ["MAX_OWN_EPSILON", "people_ids", "read_population", "with_own_budgets"]

MAX_OWN_EPSILON = 50.0
"""The largest budget a person may set (the limit of :func:`read_preferences` files)."""


def read_population(source: Any, *, progress: Callable[[str, int, int], None] | None = None
                    ) -> pd.DataFrame:
    """The trajectories of a population: uid, time, lat, lon (+ any extra columns), from a path,
    an open or uploaded file (CSV, Parquet, …). ``progress(stage, done, total)`` is told the
    bytes read while a large CSV streams in. Raises TrajectoryFormatError (LmdkError) with the
    file's name when the file cannot be read or holds no point."""
    frame = read_trajectories(source, progress=progress)
    name = str(getattr(source, "name", source))
    if frame.empty:
        raise TrajectoryFormatError("no points left after reading", source=name)
    return frame


def people_ids(traj: pd.DataFrame) -> pd.Index:
    """The population's person ids as strings, sorted (what a person is picked by)."""
    uid = traj["uid"]
    values = uid.cat.categories if isinstance(uid.dtype, pd.CategoricalDtype) else uid.unique()
    return pd.Index(np.unique(np.asarray(values).astype(str)), name="uid")


def with_own_budgets(preferences: pd.DataFrame, budgets: Mapping[str, float]) -> pd.DataFrame:
    """``preferences`` (uid, group, epsilon) with ``budgets`` (uid → ε_u) set as those people's
    own budgets (group ``"own choice"``); the others keep theirs. Raises ParameterError for an
    id that is not in ``preferences`` or a budget outside (0, :data:`MAX_OWN_EPSILON`]."""
    if not budgets:
        return preferences
    ids = pd.Index(preferences["uid"].astype(str))
    own = pd.Series(budgets, dtype=np.float64)
    own.index = own.index.astype(str)
    unknown = own.index.difference(ids)
    if len(unknown):
        listed = ", ".join(repr(u) for u in unknown[:3]) + (
            f" and {len(unknown) - 3:,} more" if len(unknown) > 3 else "")
        known = ", ".join(repr(u) for u in ids[:3])
        raise ParameterError(f"{listed}: not a person of this population (its ids are like "
                             f"{known}; pick them from the list)")
    eps = own.to_numpy()
    bad = ~np.isfinite(eps) | (eps <= 0) | (eps > MAX_OWN_EPSILON)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ParameterError(f"{own.index[i]!r}: a budget must be a number in "
                             f"(0, {MAX_OWN_EPSILON:g}], got {eps[i]!r}")
    at = ids.get_indexer(own.index)
    out = preferences.copy()
    out["epsilon"] = out["epsilon"].to_numpy(dtype=np.float64, copy=True)
    out.loc[out.index[at], "epsilon"] = eps
    if "group" in out.columns:
        out["group"] = out["group"].astype(object)
        out.loc[out.index[at], "group"] = "own choice"
    return out
