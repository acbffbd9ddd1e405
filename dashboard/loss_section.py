"""Privacy loss over time under temporal correlation.

BPL/FPL/TPL, the landmark loss and the TPL-bounded budget, all from lmdk_core.correlation.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from lmdk_core import accounting, figures
from lmdk_core.errors import LmdkError, LmdkWarning

from . import compute
from .compute import CHART_POINTS
from .privacy_section import Settings, fmt_number

SOURCES = ("Estimated from this trajectory", "Synthetic preset")
SYNTHETIC_STATES = 30  # the presets are calibrated at n = 30 states


def render(
    traj: pd.DataFrame, key: Any, s: Settings, release: Any | None, mask: np.ndarray
) -> tuple[Any, Any]:
    """Draw the section; return (temporal loss, landmark loss) for the report, or (None, None)."""
    st.header("5 · Privacy loss over time")
    st.caption(
        "Consecutive locations are correlated (where you are now says a lot about where you were a "
        "minute ago), so the privacy actually lost at a timestamp can exceed its ε_t. "
        "BPL accumulates loss from the past, FPL from the future, TPL = BPL + FPL − ε_t "
        "(Cao et al.). The landmark loss composes the loss over all landmark timestamps."
    )
    if release is None:
        st.info("Fix the privacy settings in the sidebar to see the privacy loss.")
        return None, None
    c1, c2 = st.columns(2)
    source = c1.radio(
        "Correlation model",
        SOURCES,
        key="loss_source",
        horizontal=True,
        help="Estimated: a Markov chain of grid cells fitted to this person's own trajectory "
        "(the worst case an adversary with the same data could use). Synthetic: a textbook "
        "matrix of chosen strength, to see the effect of correlation alone.",
    )
    if source == SOURCES[0]:
        cell_m = c2.select_slider(
            "Grid cell size (m)",
            options=[100, 200, 300, 500, 750, 1000, 2000, 5000],
            value=500,
            key="cell_m",
            help="Locations are grouped into square cells of this side; transitions between cells "
            "form the Markov model. Small cells = more states (slower; capped at 400 states).",
        )
        model = _estimated(key, traj, float(cell_m))
        if model is None:
            return None, None
        p_b, p_f, label = model
    else:
        strength = c2.select_slider(
            "Correlation strength",
            options=["weak", "moderate", "strong"],
            value="moderate",
            key="strength",
            help="Strong: the next location is (almost) certain given the current one — privacy "
            "loss accumulates fastest. Weak: locations are nearly independent.",
        )
        p_b, p_f, label = _synthetic(strength)
    st.caption(label)
    try:
        result = compute.temporal(key, np.asarray(release.eps), mask, p_b, p_f)
        loss, lm_loss = result.loss, result.composed
    except LmdkError as err:
        st.error(str(err))
        return None, None
    guarantee = accounting.landmark_guarantee(release.eps, mask)
    m = st.columns(3)
    m[0].metric(
        "Max TPL",
        fmt_number(float(np.max(loss.tpl))),
        help="Largest temporal privacy loss at any single timestamp, given the correlation model.",
    )
    lm_max = float(np.max(lm_loss)) if np.size(lm_loss) else 0.0
    m[1].metric(
        "Max landmark loss vs ε",
        f"{fmt_number(lm_max)} / {s.epsilon:.3g}",
        delta="within ε" if lm_max <= s.epsilon + 1e-9 else "exceeds ε",
        delta_color="normal" if lm_max <= s.epsilon + 1e-9 else "inverse",
        help="Loss composed over all landmark timestamps under correlation; landmark privacy "
        "promises at most ε without correlation.",
    )
    m[2].metric(
        "Timestamps with TPL > ε",
        f"{int(np.sum(np.asarray(loss.tpl) > s.epsilon + 1e-9)):,}",
        help="Moments where correlation pushes the loss of that moment above the budget ε.",
    )
    st.plotly_chart(
        figures.loss_figure(
            release.eps, guarantee, s.epsilon, temporal=loss, landmark_loss=lm_loss,
            time=traj["time"],
            max_points=CHART_POINTS,
        ),
        key="loss_chart",
        width="stretch",
    )
    _bounded(traj, key, s, p_b, p_f, mask)
    return loss, lm_loss


@st.cache_data(show_spinner=False)
def _synthetic(strength: str) -> tuple[np.ndarray, np.ndarray, str]:
    from lmdk_core import correlation

    P = correlation.synthetic_transition_matrix(SYNTHETIC_STATES, strength)
    label = f"Synthetic {strength} correlation, {SYNTHETIC_STATES} states (symmetric: P^B = P^F)."
    return P, P, label


def _estimated(
    key: Any, traj: pd.DataFrame, cell_m: float
) -> tuple[np.ndarray, np.ndarray, str] | None:
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", LmdkWarning)
            tm = compute.transition(key, traj, cell_m)
    except LmdkError as err:
        st.error(str(err))
        return None
    for w in caught:
        if issubclass(w.category, LmdkWarning):
            st.caption(f"⚠ {w.message}")
    label = (
        f"Markov chain on {tm.n_states} grid cells of {tm.cell_m:.0f} m, "
        f"estimated from {len(traj):,} points."
    )
    return tm.P_backward, tm.P_forward, label


@st.fragment
def _bounded(
    traj: pd.DataFrame, key: Any, s: Settings, p_b: np.ndarray, p_f: np.ndarray, mask: np.ndarray
) -> None:
    with st.expander("Bound the temporal loss (TPL-bounded allocation)", expanded=False):
        alpha = st.number_input(
            "Target TPL bound α",
            min_value=0.0,
            value=float(s.epsilon),
            step=0.1,
            format="%.3f",
            key="alpha",
            help="Choose per-timestamp budgets so that the temporal privacy loss never exceeds α, "
            "whatever the correlation (Cao et al.'s bounded allocation).",
        )
        if not st.toggle(
            "Show the TPL-bounded allocation",
            key="use_bounded",
            help="Compute the budget ε_t that keeps TPL ≤ α for this correlation model, "
            "and its loss.",
        ):
            _switch_release(key, None)
            return
        try:
            eps_b = compute.bounded(key, float(alpha), p_b, p_f, len(traj))
            result = compute.temporal(key, eps_b, mask, p_b, p_f)
            loss_b, lm_b = result.loss, result.composed
        except LmdkError as err:
            st.error(str(err))
            return
        g_b = accounting.landmark_guarantee(eps_b, mask)
        c = st.columns(3)
        c[0].metric(
            "Budget per timestamp",
            f"{float(np.median(eps_b)):.3g}",
            help="Median ε_t of the bounded allocation.",
        )
        c[1].metric(
            "Max TPL (bounded)", f"{float(np.max(loss_b.tpl)):.3g}", help="At most α by design."
        )
        c[2].metric(
            "Max landmark loss",
            f"{float(np.nanmax(lm_b)) if mask.any() else 0.0:.3g}",
            help="Composed loss over the landmark timestamps with the bounded budgets.",
        )
        st.plotly_chart(
            figures.loss_figure(
                eps_b, g_b, s.epsilon, temporal=loss_b, landmark_loss=lm_b, time=traj["time"],
                max_points=CHART_POINTS,
                title="Privacy loss with the TPL-bounded allocation",
            ),
            key="loss_bounded_chart",
            width="stretch",
        )
        use = st.toggle(
            "Release with this allocation",
            key="release_bounded",
            help="Switch the release, the map overlay, the allocation chart, the metrics and the "
            "exports to the TPL-bounded budgets (scheme 'budget'). Off: back to the sidebar scheme.",
        )
        _switch_release(key, eps_b if use else None)
        st.caption(
            "The bounded allocation spends a small ε_t so that TPL ≤ α at every timestamp; it is "
            "not landmark-aware (its landmark guarantee G_t is shown in section 3 once you release "
            "with it). " + ("The release above uses it." if use else
                            "The release above still uses the scheme chosen in the sidebar.")
        )


def _switch_release(key: Any, eps: np.ndarray | None) -> None:
    """Make the whole page release with ``eps`` (None: the sidebar scheme); rerun if it changed."""
    current = st.session_state.get("bounded_budget")
    if eps is None:
        if current is not None:
            st.session_state.bounded_budget = None
            st.rerun(scope="app")
        return
    if current is None or current["key"] != key or not np.array_equal(current["eps"], eps):
        st.session_state.bounded_budget = {"key": key, "eps": eps}
        st.rerun(scope="app")
