"""Section 4, smoothing: smooth the released points (free post-processing), raw vs smoothed error.

Thin glue over :meth:`lmdk_core.session.Session.smoothed` (the smoother reads only the public
output; the ledger does not change). The toggle's value is read before the toggle is drawn (the
map and the export above/below use it); the errors compared are the preview's — a simulation —
never a real draw's (privacy_section.shown_release says why).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from . import compute, state
from .formatting import fmt_distance

SMOOTH_KEY = "smooth_release"
DEFAULT = True
"""On by default: on real GPS traces it lowers the mean error (docs/smoothing.md)."""
TOGGLE_LABEL = "Smooth the released points (free post-processing)"
TOGGLE_HELP = (
    "Replaces each released point by an estimate from the released points before and after "
    "it (a Kalman smoother). It reads only what is published — the released points and their "
    "times — so it costs no privacy budget and the protection stays exactly the same. Points "
    "that merely repeat the previous one count once. The map, the error below and the public "
    "download then use the smoothed points."
)


def enabled() -> bool:
    """The toggle's current value (readable before the toggle is drawn in this run)."""
    return bool(state.get(SMOOTH_KEY, DEFAULT))


def smoothed(item: Any | None) -> Any | None:
    """The preview or real draw with its points smoothed when the toggle is on, else None
    (kept in the session per item: a rerun does not smooth again)."""
    if item is None or not enabled():
        return None
    return state.session().smoothed(item)


def shown(item: Any | None) -> Any | None:
    """What the map shows: ``item`` smoothed when the toggle is on, else ``item`` itself."""
    return smoothed(item) or item


def render(traj: pd.DataFrame, key: Any, preview: Any | None) -> None:
    """The toggle and the preview's mean error with and without smoothing, side by side."""
    st.subheader("Smoothing the released points")
    on = st.toggle(TOGGLE_LABEL, value=DEFAULT, key=SMOOTH_KEY, help=TOGGLE_HELP)
    if preview is None:
        return
    smooth = state.session().smoothed(preview)  # computed even when off: the comparison
    raw_mae = compute.release_error(key, preview.token, traj, preview.release)[1]
    smooth_mae = compute.release_error(key, f"{preview.token}|smoothed", traj,
                                       smooth.release)[1]
    c = st.columns(3)
    c[0].metric("Mean error, released points", fmt_distance(raw_mae),
                help="Mean distance between the true and the released location of the "
                "preview (a simulated draw with these settings).")
    c[1].metric("Mean error, smoothed", fmt_distance(smooth_mae),
                help="The same preview after smoothing: mean distance between the true and "
                "the smoothed location.")
    ratio = smooth_mae / raw_mae if raw_mae > 0 else float("nan")
    c[2].metric("Smoothed / released", f"{ratio:.2f}" if ratio == ratio else "–",
                help="Below 1: smoothing brings the published points closer to the truth.")
    st.caption(
        "Both numbers come from the preview, a simulation: the page never measures a real "
        "release against your true trace. Smoothing is "
        + ("**on**: the map and the public download use the smoothed points."
           if on else "**off**: the map and the public download use the released points."))
