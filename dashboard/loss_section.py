"""Privacy loss over time under temporal correlation: upper bounds, explained and capped.

Every correlated figure comes from lmdk_core.correlation under a model whose origin is stated
(public preset, released points, or a DP estimate whose ε is added) and the release's real
neighbour relation (planar Laplace with radius r over grid cells). Only the landmark guarantee
G_t is ever compared with ε; the correlated curves are labelled upper bounds and capped by
composition. See docs/temporal-loss.md.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from lmdk_core import accounting, figures, loss_models, loss_text
from lmdk_core.errors import LmdkError, LmdkWarning

from . import charts, compute, state
from .compute import CHART_POINTS
from .formatting import fmt_distance, fmt_number, plain_text
from .privacy_section import Settings

LAZY_POINTS = 200_000
"""From this many moments on, this section (Markov bounds: seconds per million moments on every
change of places or settings) is computed only when the user asks for it (dashboard/app.py)."""
SOURCES = tuple(loss_models.LOSS_SOURCES.values())
SOURCE_HELP = (
    "A synthetic Markov chain of chosen strength on a public grid spanning the distance you "
    "choose (its bounds hold for places up to that far apart): no data is used, so the "
    "TPL-bounded budgets chosen from it leak nothing.",
    "A Markov chain fitted to the released (noisy) points: post-processing of what is already "
    "public, free of charge. It describes this release, so it cannot choose this release's "
    "budgets.",
    "Transition counts of your true trajectory on a public grid, with discrete Laplace noise: "
    "ε_model-DP. It is a release of your data: drawn once per setting and counted in the "
    "ledger (section 6) the moment it is drawn.",
)
EXTENTS_KM = [round(m / 1000) for m in loss_models.PRESET_EXTENTS_M]
DEFAULT_CENTRE = (39.99, 116.33)  # the bundled sample's area (public, synthetic data)
MODEL_INFO_KEY = "loss_model_info"
"""This section's record of the chosen correlation model (read by the export section)."""
BOUNDED_OPEN_KEY = "bounded_open"
"""The TPL-bounded expander's open state: it stays open after switching the release."""
_TOKEN_PARAMS = {
    "preset": ("strength", "extent_m", "radius_m"),
    "released": ("release", "cell_m_requested", "radius_m"),
    "dp": ("data", "epsilon_model", "protected_events", "centre", "extent_m", "cell_m",
           "radius_m"),
}


def model_info(model: Any, token: tuple) -> dict[str, Any]:
    """Source, description and parameters of a correlation model, for the private analysis."""
    names = _TOKEN_PARAMS[token[0]]
    params = {n: v for n, v in zip(names, token[1:], strict=True) if n not in ("release", "data")}
    if token[0] == "released":
        params["cell_m_used"] = cell_used(model)
    if token[0] == "preset":  # the cell side the extent implies
        params["cell_m"] = round(model.steps.offset / np.sqrt(2.0), 1)
    return {"source": model.source, "source_text": model.source_text,
            "description": model.description, "parameters": params,
            "epsilon_model": float(model.epsilon_model), "n_states": model.n_states,
            "neighbour_relation": model.steps.relation}


GLOSSARY = (
    "**In plain words** — **G_t** (landmark guarantee): the budget spent at all your landmark "
    "moments plus moment t; your promise is G_t ≤ ε. **TPL** (temporal privacy loss): what the "
    "whole release can reveal about one moment once consecutive locations are related. "
    "**BPL / FPL** (backward / forward privacy loss): the parts of TPL coming from earlier / "
    "later releases. **Σε_t**: the sum of all per-moment budgets. **α**: the largest TPL you "
    "allow for any one moment (used by the TPL-bounded allocation)."
)


def _style(prefix: str) -> str:
    return f"*({figures.curve_style(prefix)})*"


CURVES = f"""
**How to read the curves** (all in units of ε; correlated ones are *upper bounds* under the
model above, never the exact loss, and never above the composition bound):
- **ε_t** {_style("budget ε_t")} — the budget each release spends.
- **Landmark guarantee G_t** {_style("landmark guarantee G_t")} — what landmark privacy promises
  without correlation: the budget of all landmarks plus t; this is your guarantee and it is the
  only curve compared with ε (the black dashed line).
- **TPL, worst pair** {_style("TPL: one event, worst pair")} — TPL (temporal privacy loss): how
  much the whole release can reveal about where you were at t, for the two most distant cells of
  the model.
- **One event, places … apart** {_style("one event,")} — the same for the two places you care
  about (distance above).
- **Landmark loss, landmarks + t** {_style("landmark loss: landmarks + t, worst pair")}; dashed
  for the chosen pair — how much the release can reveal about all landmark moments and t
  together (joint bound, not a sum of per-event losses).
- **BPL** {_style("BPL")} / **FPL** {_style("FPL")} (hidden; click the legend) — backward and
  forward privacy loss: the parts coming from earlier and from later releases.
- **Composition bound** {_style("composition bound")} — Σ ε_t (the sum of all budgets) scaled by
  the largest per-step loss: true for any correlation.
"""


def render(
    traj: pd.DataFrame, key: Any, s: Settings, release: Any | None, mask: np.ndarray
) -> tuple[Any, Any]:
    """Draw the section; return (temporal loss, landmark loss) for the report, or (None, None)."""
    st.header("5 · Privacy loss over time")
    st.caption(
        "Where you are now says a lot about where you were a minute ago, so someone who knows "
        "how you move can learn more about one moment than its own ε_t allows. This section "
        "shows upper bounds on that loss under a Markov model whose origin you choose; your "
        "landmark guarantee (section 3) does not depend on them."
    )
    lead = st.container(key="loss_lead")  # the plain sentences, first; filled once known
    st.caption(GLOSSARY)
    if release is None:
        st.info("Fix the privacy settings in the sidebar to see the privacy loss.")
        return None, None
    guarantee = accounting.landmark_guarantee(release.budget, mask)
    base = dict(epsilon=float(s.epsilon), guarantee=guarantee, landmarks=mask,
                radius_m=float(s.radius_m))
    c1, c2, c3 = st.columns([2, 1, 1])
    source = c1.radio("Correlation model", SOURCES, key="loss_source",
                      help=" ".join(f"{i + 1}. {h}" for i, h in enumerate(SOURCE_HELP)))
    separation = c3.number_input(
        "Pair you care about: places apart (m)", min_value=0.0, value=float(s.radius_m),
        step=50.0, key="loss_separation",
        help="Two places this far apart: the dashed curves bound how well the release tells "
        "them apart. Default: the protection radius r.")
    chosen = _model(source, c2, traj, key, s, release, mask)
    if chosen is None:
        state.put(MODEL_INFO_KEY, None)
        _lead(lead, loss_text.release_sentences(**base))
        return None, None
    model, token = chosen
    state.put(MODEL_INFO_KEY, model_info(model, token))
    st.caption(f"Model: {model.description}. Source: {model.source_text}. "
               f"Neighbour relation: {model.steps.relation}.")
    try:
        lm_loss = _loss(np.asarray(release.budget), mask, model, token, float(separation))
    except LmdkError as err:
        _lead(lead, loss_text.release_sentences(**base))
        st.error(plain_text(err))
        return None, None
    loss = lm_loss.loss
    pair_label = f"places {fmt_distance(separation)} apart"
    beyond = _beyond(traj, key, model, float(separation))
    scope = "" if beyond is None else f" Not a bound for places further apart than {beyond}."
    flag = {} if beyond is None else {"delta": f"not a bound beyond {beyond}",
                                      "delta_color": "off"}
    m = st.columns(4)
    m[0].metric("Bound, chosen pair", fmt_number(float(np.max(loss.pair))),
                help=f"Upper bound on the loss of one moment for two {pair_label} "
                f"(largest over time).{scope}", **flag)
    m[1].metric("Bound, worst pair", fmt_number(float(np.max(loss.tpl))),
                help="Upper bound on the loss of one moment for the two most distant cells "
                f"of the model (largest over time).{scope}", **flag)
    joint = float(np.max(lm_loss.composed_pair)) if mask.any() else None
    _lead(lead, loss_text.release_sentences(**base, loss=lm_loss,
                                            separation_m=float(separation)))
    m[2].metric("Bound, landmarks + t", "—" if joint is None else fmt_number(joint),
                help="Upper bound on the joint loss of all landmark moments and one more, for "
                f"places at the chosen distance. Mark a place in section 2 to see it.{scope}",
                **({} if joint is None else flag))
    m[3].metric("Composition bound", fmt_number(loss.cap),
                help="Σ ε_t times the largest per-step loss of the model: no correlation can "
                "make any figure here larger.")
    if joint is not None and np.any(lm_loss.composed_pair >= 0.999 * lm_loss.cap_pair):
        st.caption("The landmark bound equals composition: your landmark moments are spread over "
                   "the whole series, so under correlation every release between them can carry "
                   "information about them.")
    ident = (key, compute.release_token(release), compute.mask_digest(mask), float(s.epsilon),
             token, float(separation), beyond)  # every input of the chart (lm_loss: _loss's key)
    compute.chart(
        "loss", ident, lambda: figures.loss_figure(
            release.budget, guarantee, epsilon=s.epsilon, temporal=loss,
            landmark_loss=lm_loss if mask.any() else None, time=traj["time"],
            max_points=CHART_POINTS, pair_label=pair_label,
            title="Privacy loss over time: guarantee and upper bounds"
            + ("" if beyond is None else
               f" (not a bound for places further apart than {beyond})")),
        key="loss_chart",
    )
    with st.expander("What each curve means", expanded=False):
        st.markdown(CURVES)
    _bounded(traj, key, s, model, token, mask, float(separation))
    return loss, lm_loss


def _lead(box: Any, sentences: loss_text.LossSentences) -> None:
    """The section's lead: what is protected, what is not, what correlation could add."""
    with box:
        st.markdown("\n".join(f"- {line}" for line in sentences.lines()))


def _model(source: str, col: Any, traj: pd.DataFrame, key: Any, s: Settings, release: Any,
           mask: np.ndarray) -> tuple[Any, tuple] | None:
    """(the chosen CorrelationModel (cached), a token identifying it), or None after showing
    why not."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", LmdkWarning)
            if source == SOURCES[0]:
                strength = col.select_slider(
                    "Correlation strength", options=["weak", "moderate", "strong"],
                    value="moderate", key="strength",
                    help="Strong: the next cell is (almost) certain given the current one, so "
                    "loss accumulates fastest. Weak: cells are nearly independent.")
                km = col.select_slider(
                    "Places up to … km apart", options=EXTENTS_KM,
                    value=round(loss_models.PRESET_EXTENT_M / 1000), key="preset_extent_km",
                    help="The distance the preset covers (a public choice, not read from your "
                    "data): its 6×5 cells are scaled so the two farthest cells are this far "
                    "apart, and every bound holds for places up to this distance apart only. "
                    "Choose one that covers everywhere you go.")
                token = ("preset", strength, float(km) * 1000, float(s.radius_m))
                model = _preset(*token[1:])  # loss_models.preset_model, shared by sessions
            elif source == SOURCES[1]:
                cell = col.select_slider(
                    "Grid cell (m)", options=[200, 300, 500, 750, 1000, 2000, 5000], value=500,
                    key="cell_m", help="Released points are grouped into square cells of this "
                    "side. At most 400 cells are kept: if the points visit more, the side is "
                    "doubled until they fit, and the cell actually used is shown below.")
                token = ("released", compute.release_token(release), float(cell), float(s.radius_m))
                model, notes = _released(token[1], release, *token[2:])
                used = cell_used(model)
                if used is not None and used != float(cell):
                    st.caption(f"Grid cell used: {fmt_number(used)} m, not the {cell:,} m you "
                               f"chose — {' '.join(notes)}")
            else:
                chosen = _dp_controls(col, traj, key, s, mask)
                if chosen is None:
                    return None
                model, token = chosen
    except LmdkError as err:
        st.error(plain_text(err))
        return None
    for w in caught:
        if issubclass(w.category, LmdkWarning):
            st.caption(f"⚠ {plain_text(w.message)}")
    return model, token


def _dp_controls(col: Any, traj: pd.DataFrame, key: Any, s: Settings, mask: np.ndarray) -> Any:
    eps_m = col.number_input("ε_model", min_value=0.01, value=0.5, step=0.1, key="eps_model",
                             help="Budget spent on the model; added to the release's total.")
    with st.expander("Public grid of the DP model", expanded=False):
        g = st.columns(4)
        lat = g[0].number_input("Centre latitude", value=DEFAULT_CENTRE[0], format="%.4f",
                                key="dp_lat", help="A public point (e.g. a city centre), "
                                "not derived from your data.")
        lon = g[1].number_input("Centre longitude", value=DEFAULT_CENTRE[1], format="%.4f",
                                key="dp_lon")
        extent = g[2].select_slider("Side (km)", options=[2, 5, 10, 20], value=10, key="dp_km")
        cell = g[3].select_slider("Cell (m)", options=[500, 1000, 2000], value=1000,
                                  key="dp_cell_m")
    k = int(mask.sum()) + 1
    token = ("dp", key, float(eps_m), k, (float(lat), float(lon)), float(extent) * 1000,
             float(cell), float(s.radius_m))
    model = state.session().drawn_model(token)
    if model is None:
        st.info(f"The DP model is a release of your true trajectory: drawing it spends "
                f"ε_model = {fmt_number(eps_m)} of your total budget (section 6) at once.",
                icon=":material/lock:")
        st.button("Draw the DP model", key="dp_model_draw", on_click=state.draw_model,
                  args=(state.person(traj), traj, token, dict(
                      epsilon_model=float(eps_m), protected_events=k,
                      centre=(float(lat), float(lon)), extent_m=float(extent) * 1000,
                      cell_m=float(cell), radius_m=float(s.radius_m))),
                  help="Transition counts of your trajectory on the public grid above, with "
                  "fresh discrete Laplace noise; drawn once for these settings and kept.")
        return None
    st.caption(f"The DP model spent ε_model = {fmt_number(eps_m)} for changes of up to {k:,} "
               "points (the landmarks and one more). It was drawn once for these settings and "
               "is counted in the ledger of section 6; a release whose budgets are chosen from "
               "it does not pay for it again.")
    return model, token


@st.cache_resource(show_spinner=False, max_entries=8)
def _preset(strength: str, extent_m: float, radius_m: float) -> Any:
    """Public preset: no data involved, so shared between sessions."""
    return loss_models.preset_model(strength, radius_m=radius_m, extent_m=extent_m)


def _beyond(traj: pd.DataFrame, key: Any, model: Any, separation: float) -> str | None:
    """For a location model that does not cover the user's trace (or the chosen pair): show
    the warning and return the distance it covers, as text; else None.

    This compares the user's own trace with a public setting and shows the result on the
    user's own screen only: it is not a release (never exported, and neither the bounds nor
    the budgets depend on it)."""
    note = loss_models.extent_warning(model, _span(key, traj), separation)
    if note is None:
        return None
    st.warning(note, icon=":material/warning:")
    return f"{loss_models.covered_m(model) / 1000:g} km"


@st.cache_resource(scope="session", show_spinner=False, max_entries=4)
def _span(key: Any, _traj: pd.DataFrame) -> float:
    """The largest distance between two fixes of the trajectory identified by ``key``
    (metres)."""
    return loss_models.trace_span_m(_traj["lat"], _traj["lon"])


@st.cache_resource(scope="session", show_spinner=False, max_entries=4)
def _released(token: str, _release: Any, cell_m: float, radius_m: float) -> tuple[Any, list]:
    """(model of the released points, the library's warnings as text): the warnings are kept
    with the cached model, so a coarser grid is explained on every rerun, not only the first.
    ``radius_m`` is part of the cache key only: the release's own radius is used."""
    return loss_models.released_model(_release, cell_m=cell_m)


def cell_used(model: Any) -> float | None:
    """The grid cell side (m) a fitted model actually used, as its description states it."""
    m = re.search(r"cells of ([0-9.]+) m", model.description)
    return float(m.group(1)) if m else None


@st.cache_resource(scope="session", show_spinner=False, max_entries=4)
def _loss(eps: np.ndarray, mask: np.ndarray, _model: Any, token: tuple, separation: float) -> Any:
    """Bounds of budgets ``eps`` under the model identified by ``token``
    (:func:`lmdk_core.loss_models.release_loss`'s computation)."""
    from lmdk_core import correlation

    return correlation.model_loss(eps, mask, _model, separation=separation)


@st.cache_resource(scope="session", show_spinner=False, max_entries=4)
def _allocation(alpha: float, _model: Any, token: tuple, n: int) -> Any:
    from lmdk_core import correlation

    return correlation.allocate_for_model(alpha, _model, T=n)


@st.fragment
def _bounded(traj: pd.DataFrame, key: Any, s: Settings, model: Any, token: tuple,
             mask: np.ndarray, separation: float) -> None:
    with st.expander("Bound the temporal loss (TPL-bounded allocation)", key=BOUNDED_OPEN_KEY,
                     on_change="rerun"):
        st.caption("TPL (temporal privacy loss): how much the whole release can reveal about "
                   "one moment once you count that consecutive locations are related. This "
                   "allocation picks each ε_t so that this bound never exceeds α.")
        if model.source == "released":
            st.info("A model estimated from this release cannot choose this release's budgets. "
                    "Pick the public preset or the DP estimate to compute the allocation.")
            _switch_release(key, None)
            return
        alpha = st.number_input(
            "Target bound α (largest loss allowed for one moment)", min_value=0.01,
            value=float(s.epsilon), step=0.1, format="%.3f",
            key="alpha",
            help="Choose per-timestamp budgets so that the upper bound on the loss of any one "
            "moment (worst pair of cells of the model) never exceeds α.")
        info = state.get(MODEL_INFO_KEY)
        if info is not None:  # the α set here, recorded in the private analysis
            info["alpha"] = float(alpha)
        if not st.toggle("Show the TPL-bounded allocation", key="use_bounded",
                         help="Compute the budgets ε_t that keep the one-moment bound ≤ α "
                         "under this model, and their loss."):
            _switch_release(key, None)
            return
        try:
            alloc = _allocation(float(alpha), model, token, len(traj))
            lm_b = _loss(np.asarray(alloc.budget), mask, model, token, separation)
        except LmdkError as err:
            st.error(plain_text(err))
            return
        eps_b = np.asarray(alloc.budget)
        c = st.columns(3)
        c[0].metric("Budget per timestamp", fmt_number(float(np.median(eps_b))),
                    help="Median ε_t of the bounded allocation: the share of privacy budget "
                    "a typical moment gets.")
        c[1].metric("Bound, worst pair (bounded)", fmt_number(float(np.max(lm_b.loss.tpl))),
                    help="At most α by construction (upper bound on the loss of one moment).")
        c[2].metric("Model cost ε_model", fmt_number(alloc.epsilon_model),
                    help="Budget spent to estimate the model (0 for a public preset).")
        charts.show(
            figures.loss_figure(eps_b, accounting.landmark_guarantee(eps_b, mask),
                                epsilon=s.epsilon,
                                temporal=lm_b.loss, landmark_loss=lm_b if mask.any() else None,
                                time=traj["time"], max_points=CHART_POINTS,
                                pair_label=f"places {fmt_distance(separation)} apart",
                                title="Privacy loss with the TPL-bounded allocation"),
            key="loss_bounded_chart",
        )
        use = st.toggle(
            "Release with this allocation", key="release_bounded",
            help="Switch the release, the map overlay, the allocation chart, the metrics and the "
            "exports to the TPL-bounded budgets (scheme 'budget'). Off: back to the sidebar "
            "scheme.")
        _switch_release(key, alloc if use else None, alpha=float(alpha),
                        model=state.get(MODEL_INFO_KEY))
        st.caption(
            f"Budgets chosen from: {alloc.description} ({alloc.source_text}). They keep the "
            "one-moment bound ≤ α; they are not landmark-aware (section 3 shows their G_t once "
            "you release with them). "
            + ("The release above uses them." if use else
               "The release above still uses the scheme chosen in the sidebar.")
        )


def _switch_release(key: Any, allocation: Any | None, *, alpha: float | None = None,
                    model: dict[str, Any] | None = None) -> None:
    """Make the whole page release with ``allocation`` (a BoundedAllocation; None: the sidebar
    scheme); rerun if it changed. The allocation carries the model's ε_model into the release
    (release_with_budget), and ``alpha`` and ``model`` (:func:`model_info`) travel with it so
    the exports can say which allocation they hold."""
    current = state.get("bounded_budget")
    if allocation is None:
        if current is not None:
            state.put("bounded_budget", None)
            st.rerun(scope="app")
        return
    eps = np.asarray(allocation.budget)
    if current is None or current["key"] != key or not np.array_equal(current["eps"], eps):
        state.put("bounded_budget", {"key": key, "eps": eps, "alpha": alpha, "model": model,
                                     "allocation": allocation})
        st.rerun(scope="app")
