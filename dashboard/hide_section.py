"""Page pieces for hiding the landmarks (dummy landmarks) and for the release interval.

Self-contained: each ``render_*`` takes what it needs and returns the choice; the numbers come
from :mod:`lmdk_core.dummies` and :mod:`lmdk_core.interval`. The dummy selection is drawn with
each release (lmdk_core.session): simulated for a preview; with fresh OS randomness, and ε_sel
counted, for the real draw. Everything shown here is PRIVATE (it tells real landmarks from
dummies, and the guarantee text names your longest stay); only L' goes to the release, and the
public export must show neither. The guarantees quoted are proved in docs/dummy-landmarks.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from lmdk_core import session as lmdk_session
from lmdk_core.dummies import (
    DUMMY_RATIO,
    EXHAUSTIVE_MAX_REGULAR,
    STAY_PERCENT,
    HiddenLandmarks,
    default_stay_moments,
    dummy_cost,
    run_length_scores,
    split_budget,
    stay_epsilon,
)
from lmdk_core.errors import LmdkError
from lmdk_core.formatting import plain_percent
from lmdk_core.interval import IntervalResult, release_interval
from lmdk_core.palette import OKABE_ITO

from . import charts
from .formatting import plain_text

GENERATOR_LABELS = {
    "stays": "Fake stays (provable per stay)",
    "bernoulli": "Random moments (provable per moment only)",
    "greedy": "Fast (fill the longest gaps first)",
    "exhaustive": "Exhaustive (best set of every size; short series only)",
}

PREFERRED_GENERATORS = ("stays", "bernoulli", "greedy", "exhaustive")
"""Offered in this order, the first being the default, as far as lmdk_core.session accepts them
(:func:`offered_generators`)."""

EXPLAIN = (
    "The release shows *when* you were at your places: Skip publishes nothing new there, and "
    "Uniform's budget per release gives away how many such moments there were. This adds fake "
    "landmarks at ordinary moments (by default whole fake stays), picked at random with part of "
    "your budget, and protects them exactly like the real ones. Price: that part of ε, plus "
    "more noise (more landmarks to protect). Limits: whoever sees the release still learns that "
    "your real moments are among the landmarks it shows; the fake ones make them harder to "
    "single out, not impossible."
)


def offered_generators(n_regular: int, accepted: tuple[str, ...] | None = None) -> list[str]:
    """The generators the page offers, default first: those the session's ReleaseSettings
    accepts (``accepted``, default :data:`lmdk_core.session.GENERATORS`) in the order of
    :data:`PREFERRED_GENERATORS`; the exhaustive search only for 1 to
    :data:`EXHAUSTIVE_MAX_REGULAR` ordinary moments."""
    ok = lmdk_session.GENERATORS if accepted is None else accepted
    return [g for g in PREFERRED_GENERATORS if g in ok and (
        g != "exhaustive" or 0 < n_regular <= EXHAUSTIVE_MAX_REGULAR)]


def _longest_stay(mask: np.ndarray) -> int:
    return int(run_length_scores(mask).max(initial=0))


def guarantee_text(landmarks: np.ndarray, *, epsilon_select: float, generator: str) -> str:
    """What ε_sel buys with ``generator``, per stay, in plain words (docs/dummy-landmarks.md
    §5-§6). PRIVATE: it names the length of your longest real stay."""
    mask = np.asarray(landmarks, dtype=bool)
    n, longest = mask.size, _longest_stay(mask)
    eps = float(epsilon_select)
    if generator == "stays":
        k = default_stay_moments(n)
        mine = stay_epsilon(max(longest, 1), epsilon_select=eps, stay_moments=k)
        return (
            f"Per stay: for any stretch of up to {k:,} moments ({STAY_PERCENT} % of the {n:,} "
            "released moments) that the release shows at your places, an observer's odds that "
            "you were really there rather than it being a fake stay grow at most "
            f"e^ε_sel = {math.exp(eps):.3g}-fold ({math.exp(eps / 2):.3g}-fold for one moment). "
            f"A longer stretch of k moments: at most e^(ε_sel·(1 + (k − 1)/{k - 1})/2)-fold; "
            f"for your longest stay here ({longest:,} moments) {math.exp(mine):.3g}-fold."
        )
    if generator == "bernoulli":
        return (
            "Per moment only: for any one moment the release shows at your places, an "
            f"observer's odds that you were really there grow at most e^ε_sel = "
            f"{math.exp(eps):.3g}-fold, but for a stay of k moments up to e^(k·ε_sel)-fold; for "
            f"your longest stay here ({longest:,} moments) e^{longest * eps:.3g}-fold."
        )
    return ("No guarantee for every moment or stay: the candidate sets are built from your "
            "real landmarks, which ε_sel does not cover.")


def cost_text(landmarks: np.ndarray, *, epsilon: float, epsilon_select: float, generator: str,
              max_dummies: int | None = None) -> str:
    """The expected number of fake landmarks and the expected growth of Uniform's noise, exact
    from the selection probabilities (:func:`lmdk_core.dummies.dummy_cost`), in plain words."""
    mask = np.asarray(landmarks, dtype=bool)
    c = dummy_cost(mask, epsilon=epsilon, epsilon_select=epsilon_select, generator=generator,
                   max_dummies=max_dummies)
    left = c.ordinary - c.expected_dummies
    return (
        f"Expected fake landmarks: about {c.expected_dummies:,.0f} extra protected moments on "
        f"average ({plain_percent(c.dummy_share)} of your {c.ordinary:,} ordinary moments; about "
        f"{left:,.0f} are left shown as ordinary). This makes Uniform's noise at your other "
        f"moments about {plain_percent(c.noise_factor - 1)} larger on "
        f"average: {plain_percent(c.landmark_factor - 1)} from protecting the fake landmarks too, "
        "the rest because ε_sel comes out of ε. Skip instead releases fresh points only at the "
        "ordinary moments left and repeats the last one through every fake landmark "
        "(\"Compare with dummy landmarks\" in the scheme comparison measures the error)."
    )


@dataclass(frozen=True)
class HideChoice:
    """The dummy-landmark settings of the next release: ``enabled``, ``epsilon_select`` (ε_sel,
    taken from ε), ``generator`` (default: the page's default, :func:`offered_generators`) and
    ``max_dummies`` (None: no limit). The dummies themselves
    are drawn with the release (lmdk_core.session): simulated for a preview, with fresh OS
    randomness — and ε_sel counted — for the real draw."""

    enabled: bool
    epsilon_select: float = 0.0
    generator: str = field(default_factory=lambda: offered_generators(0)[0])
    max_dummies: int | None = None


def render_hide(landmarks: np.ndarray, *, epsilon: float, key: str = "hide") -> HideChoice:
    """The "Hide when I was at my places" switch, ε_sel and the generator, with what they buy
    (:func:`guarantee_text`) and cost (:func:`cost_text`).

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
             "counts ε_sel with every real draw. With fake stays or random moments, a smaller "
             "ε_sel hides better and adds more fake landmarks.",
    )
    n_regular = int((~mask).sum())
    # the provable generators first: the thesis's candidates depend on the real landmarks,
    # which ε_sel does not cover (docs/dummy-landmarks.md)
    generator = c2.selectbox(
        "How the fake landmarks are chosen", offered_generators(n_regular),
        format_func=GENERATOR_LABELS.get, key=f"{key}_gen",
        help="Fake stays: ordinary stretches become fake stays, so a stay the release shows "
             "could be fake whatever its length; the odds that it is real grow at most "
             f"e^ε_sel-fold for stays up to {STAY_PERCENT} % of the released moments. Random "
             "moments: every ordinary moment is fake with probability e^-ε_sel, independently; "
             "one moment is covered at e^ε_sel, a stay of k moments only at e^(k·ε_sel). "
             "Fast / exhaustive: candidate sets add ordinary moments keeping the landmarks "
             "evenly spread (the thesis's method), and ε_sel picks how many, aiming at "
             f"{DUMMY_RATIO:g} fake landmarks per real one; the candidates depend on your real "
             "landmarks, which ε_sel does not cover. The exhaustive search is offered up to "
             f"{EXHAUSTIVE_MAX_REGULAR} ordinary moments.",
    )
    cap = 0
    if generator in ("greedy", "exhaustive"):
        cap = c3.number_input(
            "Most dummies (0 = no limit)", min_value=0, max_value=max(n_regular, 1), value=0,
            step=1, key=f"{key}_cap",
            help="Upper limit on the number of fake landmarks. Choose it without looking at your "
                 "data: a limit derived from your landmarks would itself reveal them.",
        )
    try:
        split_budget(epsilon, epsilon_select=eps_sel)
        guarantee = guarantee_text(mask, epsilon_select=float(eps_sel), generator=str(generator))
        cost = cost_text(mask, epsilon=float(epsilon), epsilon_select=float(eps_sel),
                         generator=str(generator), max_dummies=int(cap) or None)
    except LmdkError as exc:
        st.error(plain_text(exc), icon="⚠️")
        return HideChoice(False)
    st.caption(guarantee)
    st.caption(cost)
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
    gen = hidden.params.get("generator")
    if gen == "stays":
        how = ("Drawn as fake stays; ε_sel covers any stretch of up to "
               f"{hidden.params['stay_moments']:,} moments.")
    elif gen == "bernoulli":
        how = f"Each ordinary moment with probability {hidden.params['dummy_probability']:.3g}."
    else:
        how = f"Chosen at random among {len(hidden.option_sizes):,} candidate sets."
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
    if n_lp == hidden.mask.size and hidden.n_dummies:
        st.caption(f"In {kind}, every moment is a landmark (real or fake): Skip releases no point "
                   "at all. Hiding stays sometimes costs that much (docs/dummy-landmarks.md, "
                   "Proposition D; on the sample it happens in about 1 draw in 6 at "
                   "ε_sel = 0.1 and almost never at 0.3).")
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
