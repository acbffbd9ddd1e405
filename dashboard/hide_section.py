"""Page pieces for hiding the landmarks (dummy landmarks) and for the release interval.

Self-contained: each ``render_*`` takes what it needs and returns the choice; the numbers come
from :mod:`lmdk_core.dummies` and :mod:`lmdk_core.interval`. The dummy selection is drawn once per
setting and kept in this session (a rerun never redraws; a new setting draws afresh from OS
entropy). Everything shown here is PRIVATE (it tells real landmarks from dummies); only the
returned mask L' goes to the release, and the public export must show neither.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from lmdk_core.dummies import (
    EXHAUSTIVE_MAX_REGULAR,
    HiddenLandmarks,
    hide_landmarks,
    split_budget,
)
from lmdk_core.errors import LmdkError
from lmdk_core.interval import IntervalResult, release_interval
from lmdk_core.palette import OKABE_ITO

from . import charts, compute

GENERATOR_LABELS = {
    "greedy": "Fast (fill the longest gaps first)",
    "bernoulli": "Random, provable (each ordinary moment with probability e^-ε_sel)",
    "exhaustive": "Exhaustive (best set of every size; short series only)",
}

EXPLAIN = (
    "The release shows *when* you were at your places: Skip publishes nothing new there, and "
    "Uniform's budget per release gives away how many such moments there were. This adds fake "
    "landmarks at ordinary moments, picked at random with part of your budget, and protects them "
    "exactly like the real ones. Price: that part of ε, plus more noise (more landmarks to "
    "protect). Limits: whoever sees the release still learns that your real moments are among "
    "the landmarks it shows; the fake ones make them harder to single out, not impossible."
)


@dataclass(frozen=True)
class HideChoice:
    """What the page releases with: ``mask`` (L', or L when hiding is off), ``epsilon_select``
    (0 when off) and ``epsilon_scheme`` for the scheme; ``hidden`` has the private details."""

    enabled: bool
    mask: np.ndarray
    epsilon_select: float
    epsilon_scheme: float
    hidden: HiddenLandmarks | None


def _signature(mask: np.ndarray, *parts: Any) -> str:
    return hashlib.sha256(repr((compute.mask_digest(mask), *parts)).encode()).hexdigest()


def render_hide(landmarks: np.ndarray, *, epsilon: float, key: str = "hide") -> HideChoice:
    """The "Hide when I was at my places" switch, ε_sel and the option generator.

    ``landmarks``: the real landmark mask L; ``epsilon``: the user's total ε. Returns the mask to
    release with and the budget split ε = ε_scheme + ε_sel.
    """
    mask = np.asarray(landmarks, dtype=bool)
    off = HideChoice(False, mask, 0.0, float(epsilon), None)
    st.subheader("Dummy landmarks")
    enabled = st.toggle(
        "Hide when I was at my places", value=False, key=f"{key}_on",
        help="Add fake (dummy) landmarks at ordinary moments so the release does not show "
             "exactly when you were at your places. Costs part of ε and adds noise.",
    )
    if not enabled:
        st.caption(EXPLAIN)
        return off
    c1, c2, c3 = st.columns(3)
    eps_sel = c1.number_input(
        "Budget for choosing the dummies ε_sel", min_value=0.0, max_value=100.0,
        value=min(0.1, float(epsilon) / 2), step=0.05, format="%.3f", key=f"{key}_eps",
        help="Taken from your total ε: the scheme gets ε - ε_sel. More ε_sel makes the choice "
             "follow your real landmark pattern more closely (less random).",
    )
    n_regular = int((~mask).sum())
    # the provable method first: the thesis's candidates depend on the real landmarks, which
    # ε_sel does not fully cover (docs/dummy-landmarks.md)
    generators = ["bernoulli", "greedy"] + (
        ["exhaustive"] if 0 < n_regular <= EXHAUSTIVE_MAX_REGULAR else [])
    generator = c2.selectbox(
        "How candidate sets are built", generators, format_func=GENERATOR_LABELS.get,
        key=f"{key}_gen",
        help="Fast / exhaustive: candidate sets add ordinary moments one by one, keeping the "
             "landmarks evenly spread (the thesis's method; the candidates depend on your real "
             "landmarks, which ε_sel does not fully cover). Random: every ordinary moment "
             "becomes a dummy with probability e^-ε_sel, so any one of the shown landmarks is at "
             "most e^ε_sel times likelier to be real than before (many more dummies). "
             f"The exhaustive search is offered up to {EXHAUSTIVE_MAX_REGULAR} ordinary moments.",
    )
    cap = 0
    if generator != "bernoulli":
        cap = c3.number_input(
            "Most dummies (0 = no limit)", min_value=0, max_value=max(n_regular, 1), value=0,
            step=1, key=f"{key}_cap",
            help="Upper limit on the number of fake landmarks. Choose it without looking at your "
                 "data: a limit derived from your landmarks would itself reveal them.",
        )
    try:
        e_scheme = split_budget(epsilon, eps_sel)
        sig = _signature(mask, eps_sel, generator, cap)
        cached = st.session_state.get(f"{key}_draw")
        if cached is None or cached[0] != sig:
            hidden = hide_landmarks(mask, epsilon_select=eps_sel, generator=generator,
                                    max_dummies=int(cap) or None)
            st.session_state[f"{key}_draw"] = (sig, hidden)
        hidden = st.session_state[f"{key}_draw"][1]
    except LmdkError as exc:
        st.error(str(exc), icon="⚠️")
        return off
    m1, m2, m3 = st.columns(3)
    m1.metric("Real landmarks", f"{hidden.n_real:,}", help="Private: only you see this split.")
    how = (f"Each ordinary moment with probability {hidden.params['dummy_probability']:.3g}."
           if generator == "bernoulli" else
           f"Chosen at random among {len(hidden.option_sizes):,} candidate sets.")
    m2.metric("Dummy landmarks", f"{hidden.n_dummies:,}", help=how)
    m3.metric("Budget ε_scheme + ε_sel", f"{e_scheme:.3g} + {hidden.epsilon_select:.3g}",
              help="ε_scheme for the release + ε_sel for choosing the dummies; together ≤ ε = "
                   f"{float(epsilon):.3g}.")
    n_l, n_lp = hidden.n_real, int(hidden.mask.sum())
    st.caption(
        f"Every landmark-aware scheme now protects {n_lp:,} landmarks instead of {n_l:,}: "
        f"Uniform and Adaptive spend ε_scheme/(|L'|+1) = {e_scheme / (n_lp + 1):.3g} per "
        f"release instead of ε/(|L|+1) = {float(epsilon) / (n_l + 1):.3g}."
    )
    st.caption(EXPLAIN)
    charts.show(landmark_strip(hidden), key=f"{key}_strip")
    return HideChoice(True, hidden.mask, hidden.epsilon_select, e_scheme, hidden)


def landmark_strip(hidden: HiddenLandmarks) -> go.Figure:
    """PRIVATE view: real and dummy landmarks over the timestamps, in two colours (never export
    this figure; the release and its public files show neither)."""
    real = np.flatnonzero(hidden.landmarks)
    fig = go.Figure([
        go.Scatter(x=real, y=np.ones(real.size), mode="markers", name="real landmark",
                     marker={"color": OKABE_ITO["vermillion"], "symbol": "line-ns-open",
                             "size": 14}),
        go.Scatter(x=hidden.dummies, y=np.zeros(hidden.dummies.size), mode="markers",
                     name="dummy landmark",
                     marker={"color": OKABE_ITO["blue"], "symbol": "line-ns-open", "size": 14}),
    ])
    fig.update_layout(
        title="Private view: where the real and the dummy landmarks are",
        height=220, margin={"l": 10, "r": 10, "t": 40, "b": 30},
        xaxis_title="timestamp (position in the released series)",
        yaxis={"tickvals": [0, 1], "ticktext": ["dummy", "real"], "range": [-0.6, 1.6]},
        legend={"orientation": "h", "y": 1.25, "x": 1, "xanchor": "right"},
    )
    return fig


def render_interval(traj: pd.DataFrame, landmarks: np.ndarray, *, key: str = "interval"
                    ) -> IntervalResult:
    """Release interval: one location per N minutes (0 = every fix), with both counts shown."""
    minutes = st.number_input(
        "Release one location every … minutes (0 = every fix)", min_value=0.0, max_value=1440.0,
        value=0.0, step=1.0, key=f"{key}_min",
        help="Fewer released moments mean fewer landmarks and more budget per release; "
             "location-sharing apps do the same. The kept fixes are chosen by time alone.",
    )
    if minutes > 0:
        out = release_interval(traj, landmarks, interval_s=minutes * 60.0)
    else:
        kept = np.arange(len(traj))
        out = IntervalResult(traj.reset_index(drop=True), np.asarray(landmarks, bool), kept,
                             0.0, len(traj), int(np.sum(landmarks)))
    c = out.counts()
    # one full-width line each: two metrics side by side do not fit a sidebar
    st.markdown(f"**{c['timestamps_after']:,}** of {c['timestamps_before']:,} moments released",
                help="Moments released after resampling, of all the fixes in the trace.")
    st.markdown(f"**{c['landmarks_after']:,}** of {c['landmarks_before']:,} at your places "
                "(landmarks)",
                help="Released moments at your places, of all such fixes in the trace.")
    return out


render = render_hide
"""The brief's name for the hide switch: ``render(landmarks, epsilon=...) -> HideChoice``."""
