"""Cached wrappers around lmdk_core for the dashboard (no privacy logic of its own).

Only the bundled sample is cached globally (it is public), and the guide's numbers for it before
any place is marked (guide_section: public data and public settings). Everything computed from a
session's trajectory is cached with ``st.cache_resource(scope="session")`` — one user's uploaded
data or anything derived from it is never visible to another session. Releases are not cached
here at all: previews and real draws live in the session's lmdk_core.session.Session (state.py).
Results are immutable library objects (Release arrays are read-only) and are never mutated here,
so they are not copied. Trajectories are passed unhashed (``_traj``) next to a
cheap ``key`` (data token, uid, time range) that identifies them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from lmdk_core import landmarks as lm
from lmdk_core import sample, stays

CHART_POINTS = 400
"""Points per chart series in the page (min-max thinned, peaks kept): the browser redraws every
chart on each interaction, and a few thousand points per trace made a click take seconds."""

Places = tuple[tuple[float, float, float, str], ...]
SESSION: dict[str, Any] = {"scope": "session", "show_spinner": False, "max_entries": 4}
"""Per-session caches keep a few entries: enough for switching back and forth between settings."""


@st.cache_resource(show_spinner=False)
def sample_frame() -> pd.DataFrame:
    """The bundled (public, synthetic) sample; safe to share between sessions (never mutated:
    every selection makes a new frame)."""
    return sample.load_sample()


@st.cache_resource(**SESSION)
def landmarks(key: Any, _traj: pd.DataFrame, places: Places) -> tuple[np.ndarray, list[int]]:
    """Landmark mask over the trajectory and the number of landmark timestamps per place."""
    n = len(_traj)
    if not places:
        return np.zeros(n, bool), []
    masks = lm.place_masks(_traj, [p[:3] for p in places])  # one pass: mask and counts
    return masks.any(axis=0), [int(c) for c in masks.sum(axis=1)]


@st.cache_resource(**SESSION)
def suggestions(key: Any, _traj: pd.DataFrame) -> pd.DataFrame:
    """Candidate landmark places from long stays."""
    return stays.suggest_places(_traj)


def traj_key(token: str | None, traj: pd.DataFrame) -> tuple[Any, ...]:
    """Cheap identity of a selected trajectory: data token, user, first/last time, length."""
    t = traj["time"]
    return (token, str(traj["uid"].iloc[0]), str(t.iloc[0]), str(t.iloc[-1]), len(traj))


def mask_digest(mask: np.ndarray) -> str:
    """Identity of a boolean mask (its bits and its length) for per-session cache keys."""
    m = np.asarray(mask, dtype=bool)
    h = hashlib.sha256(np.packbits(m).tobytes())
    h.update(str(m.size).encode())
    return h.hexdigest()


def release_token(release: Any) -> str:
    """Content hash of a release's coordinates, values and budgets (identifies it in the
    per-session caches; release arrays are read-only)."""
    h = hashlib.blake2b(digest_size=16)
    for arr in (release.lat, release.lon, release.values, release.budget):
        if arr is not None:
            h.update(np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()


def params_key(params: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(params.items()))


@st.cache_resource(**SESSION)
def summary(key: Any, _traj: pd.DataFrame) -> dict[str, Any]:
    """Points, duration and median interval of the selected trajectory (its path length sums
    a million haversines on a big upload: computed once per selection, not on every rerun)."""
    from lmdk_core import trajectory

    return trajectory.summary(_traj)


def error_and_mean(traj: pd.DataFrame, release: Any) -> tuple[np.ndarray, float]:
    """Error in metres per timestamp of ``release`` (read-only) and its mean (MAE), from one
    pass of haversines (metrics.mae_metres would measure them again)."""
    from lmdk_core import metrics

    err = metrics.error_metres(traj, release)
    err.setflags(write=False)
    return err, metrics.finite_mean(err)


@st.cache_resource(**SESSION)
def release_error(key: Any, token: str, _traj: pd.DataFrame, _release: Any
                  ) -> tuple[np.ndarray, float]:
    """:func:`error_and_mean` of the preview or real draw ``token``, computed once per session."""
    return error_and_mean(_traj, _release)


@st.cache_resource(scope="session", show_spinner=False, max_entries=8)
def _chart_data(name: str, ident: tuple, _build: Callable[[], Any]) -> dict[str, Any]:
    from . import charts

    return charts.payload(_build())


def chart(name: str, ident: tuple, build: Callable[[], Any], *, key: str) -> None:
    """Draw the chart ``name`` that ``build()`` makes at ``key``, its figure built and
    serialised once per ``ident`` in this session (:func:`dashboard.charts.payload`). ``ident``
    must name every input the chart is drawn from (release token or content hash, mask digest,
    settings): a rerun that changed none of them (a widget elsewhere) sends the kept chart
    without building or serialising the figure again."""
    from . import charts

    charts.show(None, key=key, data=_chart_data(name, ident, build))
