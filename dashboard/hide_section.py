"""Page pieces for hiding the landmarks (dummy landmarks) and for the release interval.

Self-contained: each ``render_*`` takes what it needs and returns the choice; the numbers come
from :mod:`lmdk_core.dummies` and :mod:`lmdk_core.interval`. The dummy selection is drawn with
each release (lmdk_core.session): simulated for a preview; with fresh OS randomness, and ε_sel
counted, for the real draw. Everything shown here is PRIVATE (it tells real landmarks from
dummies); only L' goes to the release, and the public export must show neither.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from lmdk_core.dummies import EXHAUSTIVE_MAX_REGULAR, HiddenLandmarks, split_budget
from lmdk_core.errors import LmdkError
from lmdk_core.interval import IntervalResult, release_interval
from lmdk_core.palette import OKABE_ITO

from . import charts
from .formatting import plain_text

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
    """The dummy-landmark settings of the next release: ``enabled``, ``epsilon_select`` (ε_sel,
    taken from ε), ``generator`` and ``max_dummies`` (None: no limit). The dummies themselves
    are drawn with the release (lmdk_core.session): simulated for a preview, with fresh OS
    randomness — and ε_sel counted — for the real draw."""

    enabled: bool
    epsilon_select: float = 0.0
    generator: str = "bernoulli"
    max_dummies: int | None = None


def render_hide(landmarks: np.ndarray, *, epsilon: float, key: str = "hide") -> HideChoice:
    """The "Hide when I was at my places" switch, ε_sel and the option generator.

    ``landmarks``: the real landmark mask L; ``epsilon``: the release's ε (the scheme gets
    ε − ε_sel). Returns the choice; :func:`render_details` shows what a release drew."""
    mask = np.asarray(landmarks, dtype=bool)
    st.subheader("Dummy landmarks")
    enabled = st.toggle(
        "Hide when I was at my places", value=False, key=f"{key}_on",
        help="Add fake (dummy) landmarks at ordinary moments so the release does not show "
             "exactly when you were at your places. Costs part of ε and adds noise.",
    )
    if not enabled:
        st.caption(EXPLAIN)
        return HideChoice(False)
    c1, c2, c3 = st.columns(3)
    eps_sel = c1.number_input(
        "Budget for choosing the dummies ε_sel", min_value=0.0, max_value=100.0,
        value=min(0.1, float(epsilon) / 2), step=0.05, format="%.3f", key=f"{key}_eps",
        help="Taken from the release's ε: the scheme gets ε - ε_sel, and the ledger (section 6) "
             "counts ε_sel with every real draw. More ε_sel makes the choice follow your real "
             "landmark pattern more closely (less random).",
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
        split_budget(epsilon, eps_sel)
    except LmdkError as exc:
        st.error(plain_text(exc), icon="⚠️")
        return HideChoice(False)
    return HideChoice(True, float(eps_sel), str(generator), int(cap) or None)


def render_details(shown: Any, *, epsilon: float, key: str = "hide") -> None:
    """What the release on the page drew: real and dummy landmarks (PRIVATE: only you see the
    split), the budget split and the strip chart. ``shown``: a session Preview or Drawn."""
    hidden: HiddenLandmarks | None = getattr(shown, "hidden", None)
    if hidden is None:
        return
    e_scheme = shown.settings.epsilon_scheme
    kind = "this preview (simulated)" if not shown.is_real else "your real release"
    m1, m2, m3 = st.columns(3)
    m1.metric("Real landmarks", f"{hidden.n_real:,}", help="Private: only you see this split.")
    how = (f"Each ordinary moment with probability {hidden.params['dummy_probability']:.3g}."
           if hidden.params.get("generator") == "bernoulli" else
           f"Chosen at random among {len(hidden.option_sizes):,} candidate sets.")
    m2.metric("Dummy landmarks", f"{hidden.n_dummies:,}", help=f"In {kind}. {how}")
    m3.metric("Budget ε_scheme + ε_sel", f"{e_scheme:.3g} + {hidden.epsilon_select:.3g}",
              help="ε_scheme for the release + ε_sel for choosing the dummies; together ≤ ε = "
                   f"{float(epsilon):.3g}, and both count in the ledger with every real draw.")
    n_l, n_lp = hidden.n_real, int(hidden.mask.sum())
    st.caption(
        f"In {kind}, every landmark-aware scheme protects {n_lp:,} landmarks instead of "
        f"{n_l:,}: Uniform and Adaptive spend ε_scheme/(|L'|+1) = {e_scheme / (n_lp + 1):.3g} "
        f"per release instead of ε/(|L|+1) = {float(epsilon) / (n_l + 1):.3g}."
    )
    st.caption(EXPLAIN)
    charts.show(landmark_strip(hidden), key=f"{key}_strip")


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
