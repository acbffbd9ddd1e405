"""Budget allocation and perturbed output: controls (sidebar), allocation chart, metrics, errors,
scheme comparison. Numbers come from lmdk_core; this module only lays them out."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from lmdk_core import accounting, advice, figures
from lmdk_core import release as rl
from lmdk_core.errors import LmdkError
from lmdk_core.formatting import plain_percent
from lmdk_core.session import ReleaseSettings

from . import charts, compute, state
from .compute import CHART_POINTS
from .formatting import fmt_distance, fmt_number, plain_text

SCHEME_LABELS = {
    "event": "Event-level (ε at every timestamp)",
    "user": "User-level (ε spread over all timestamps)",
    "uniform": "Uniform (ε / (landmarks + 1))",
    "skip": "Skip (landmarks are not released)",
    "adaptive": "Adaptive — thesis reconstruction (ε / (landmarks + 1) per release)",
    "reserve": "Reserve (a share of ε kept for your places)",
    "bd": "BD — budget distribution",
    "ba": "BA — budget absorption",
}

PARAM_LABELS = {
    "w": "Window (moments)",
    "s_min": "Lowest sampling rate (share of moments, 0–1)",
    "inc": "Sampling-rate step up (when you move)",
    "dec": "Sampling-rate step down (when you stay)",
    "sample_landmarks": "Always release a fresh point at your places (lmdk addition)",
    "landmark_share": "Share of ε kept for your places (0–0.95)",
    "speed": "How fast you move at your places (m/s)",
    "fill": "Moments without a fresh point show",
}
"""Plain labels of the scheme parameters (lmdk_core.release.SCHEME_PARAMS names)."""

PARAM_HELP = {
    "w": "Window length, in moments (timestamps): any w consecutive moments together spend at "
    "most ε. Whole number ≥ 1.",
    "s_min": "Lowest sampling rate, a share between 0 and 1: the adaptive scheme releases a fresh "
    "point at least this often (0.1 = one moment in ten).",
    "inc": "How much the sampling rate (share 0–1) rises after a release that moved further than "
    "the noise: the trace is changing, so sample more.",
    "dec": "How much the sampling rate (share 0–1) falls after a release that stayed within the "
    "noise: the trace is quiet, so sample less.",
    "sample_landmarks": "Always release a fresh location at the moments at your places (landmark "
    "timestamps) instead of repeating the last one. Not in the thesis text: an lmdk addition.",
    "landmark_share": "The share of ε set aside for the moments at your places; ordinary moments "
    "spend the rest. The places share it: a fresh point there is released only when repeating "
    "the last point is expected to be worse. 0 = Skip. Leave it on automatic to pick the share "
    "with the smallest expected error from public facts only (number of moments, which are at "
    "your places, their times, ε, r and the speed below).",
    "speed": "The speed you assume while at your places, in metres per second (per moment when "
    "the trace has no times): 0 for places where you stay put, about 1.4 walking, 10 or more "
    "driving. Only this assumption is used, never your actual moves, so it costs no privacy.",
    "fill": "What the release shows at a moment where it publishes no fresh point (at your "
    "places). 'The last point' repeats the last fresh point and can be shown at once. 'On the "
    "line' puts it on the straight line, in time, between the fresh points before and after it: "
    "often closer to where you were, but worse when you left and came back in between. "
    "'Halfway' puts it midway between those two choices. The last two can only be shown once "
    "the next fresh point exists. All are computed from the released points and their times "
    "only, so none costs privacy budget; all show when you were at your places.",
}

FILL_LABELS = {"repeat": "The last point (shown at once)",
               "interpolate": "On the line between the points around it (delayed)",
               "halfway": "Halfway between those two (delayed)"}
"""Plain names of the ``fill`` values (lmdk_core.schemes.fill.FILLS)."""

DEFAULT_SCHEME = "skip"
"""Default scheme. Skip is landmark-private and spends the full ε on ordinary moments, so on the
sample (alice, Home + Clinic: 7,046 of 11,373 moments at the places) the first picture has a mean
error of ~0.6–0.9 km at ε = 1, r = 200 m, where Uniform gives ~3,800 km (ε/7,047 per moment)."""
DEFAULT_EPSILON = 1.0
EPSILON_MAX = 100.0
DEFAULT_RADIUS_M = 200.0


GLOSSARY = (
    ("|L|", "|L| = moments at your places"),
    ("ε/T", "T = all moments"),
    (" w ", "w = window length in moments"),
)


def _gloss(text: str) -> str:
    """Plain meanings of the symbols that ``text`` uses, as one trailing sentence."""
    used = [meaning for symbol, meaning in GLOSSARY if symbol in text]
    return f" ({'; '.join(used)}.)" if used else ""


def _share_input(label: str, widget_key: str, helptext: str) -> float | str:
    """Reserve's landmark share: "auto" (checkbox on) or a number in [0, 0.95]."""
    auto = st.checkbox("Choose the share for me", value=True, key=f"{widget_key}_auto",
                       help=helptext)
    if auto:
        return "auto"
    return float(st.number_input(label, value=0.2, min_value=0.0, max_value=0.95, step=0.05,
                                 format="%.2f", key=widget_key, help=helptext))


def use_epsilon(value: float) -> None:
    """Button callback: set the sidebar's ε before the widget is drawn (this section's key)."""
    state.set_widget("epsilon", float(value))


def use_scheme(scheme: str) -> None:
    """Button callback: set the sidebar's allocation scheme (this section's key)."""
    if scheme in rl.SCHEMES:
        state.set_widget("scheme", scheme)


@dataclass(frozen=True)
class Settings:
    epsilon: float
    scheme: str
    params: tuple[tuple[str, Any], ...]
    radius_m: float


def controls() -> Settings:
    """Privacy controls (sidebar)."""
    st.header("Privacy settings")
    epsilon = st.number_input(
        "Privacy budget ε of the next release",
        min_value=0.0,
        max_value=EPSILON_MAX,
        value=DEFAULT_EPSILON,
        step=0.1,
        format="%.3f",
        key="epsilon",
        help="How much an observer of this release may learn, at most, about your presence at the "
        "landmark places and at any one other moment. Smaller ε = stronger protection and more "
        "noise. Must be > 0. What all your real releases may lose together is your total "
        "budget, set in section 6; this ε never raises it.",
    )
    scheme = st.selectbox(
        "Allocation scheme",
        rl.SCHEMES,
        index=rl.SCHEMES.index(DEFAULT_SCHEME),
        format_func=lambda s: SCHEME_LABELS.get(s, s),
        key="scheme",
        help="How ε is spread over time. The guide under the map shows the expected error "
        "of each scheme for your places and recommends one. "
        + " ".join(f"{SCHEME_LABELS[k].split(' (')[0]}: {v}" for k, v in rl.SCHEME_INFO.items()),
    )
    st.caption(rl.SCHEME_INFO[scheme] + _gloss(rl.SCHEME_INFO[scheme]))
    params: dict[str, Any] = {}
    for name, default in rl.SCHEME_PARAMS.get(scheme, {}).items():
        widget_key = f"param_{scheme}_{name}"
        label = PARAM_LABELS.get(name, name.replace("_", " ").capitalize())
        helptext = PARAM_HELP.get(
            name, f"A setting of the {SCHEME_LABELS.get(scheme, scheme)} scheme (default "
            f"{default})."
        )
        if name == "landmark_share":
            params[name] = _share_input(label, widget_key, helptext)
        elif name == "fill":
            params[name] = st.selectbox(label, tuple(FILL_LABELS), key=widget_key,
                                        index=tuple(FILL_LABELS).index(str(default)),
                                        format_func=FILL_LABELS.get, help=helptext)
        elif name == "speed":
            params[name] = float(st.number_input(label, value=float(default), min_value=0.0,
                                                 max_value=100.0, step=0.1, format="%.2f",
                                                 key=widget_key, help=helptext))
        elif isinstance(default, bool):
            params[name] = st.checkbox(label, value=default, key=widget_key, help=helptext)
        elif isinstance(default, int):
            params[name] = int(st.number_input(label, value=default, min_value=1, step=1,
                                               key=widget_key, help=helptext))
        elif isinstance(default, float):
            params[name] = float(st.number_input(label, value=default, min_value=0.0,
                                                 max_value=1.0, step=0.05, format="%.2f",
                                                 key=widget_key, help=helptext))
        else:
            params[name] = st.text_input(label, value=str(default), key=widget_key, help=helptext)
    radius = st.number_input(
        "Protection radius r (m)",
        min_value=1.0,
        max_value=100_000.0,
        value=DEFAULT_RADIUS_M,
        step=50.0,
        key="radius_m",
        help="How far apart two locations may be and still look alike to an observer (metres): "
        "with the budget ε_t of one moment, locations within r are indistinguishable up to ε_t. "
        f"A released point is about {fmt_number(advice.mean_error_factor())}·r/ε_t metres off "
        "on average.",
    )
    st.caption(
        "ε: the privacy budget of the next release — smaller means stronger protection and more "
        "noise; what all your releases may lose together is your total budget (section 6). "
        "r: locations closer than r look alike. ε_t: the part of ε spent at one moment."
    )
    return Settings(float(epsilon), scheme, compute.params_key(params), float(radius))


def release_settings(s: Settings, hide: Any = None) -> ReleaseSettings | None:
    """The library's settings of the next release (sidebar + section 2b), or None after showing
    why they are invalid."""
    try:
        if hide is not None and hide.enabled:
            return ReleaseSettings(epsilon=s.epsilon, scheme=s.scheme, params=s.params,
                                   radius_m=s.radius_m, hide=True,
                                   epsilon_select=hide.epsilon_select,
                                   generator=hide.generator, max_dummies=hide.max_dummies)
        return ReleaseSettings(epsilon=s.epsilon, scheme=s.scheme, params=s.params,
                               radius_m=s.radius_m)
    except LmdkError as err:
        st.error(f"Cannot release with these settings: {plain_text(err)}")
        return None


def bounded_allocation(key: Any) -> Any | None:
    """The TPL-bounded allocation section 5 switched the release to, if it is for ``key``."""
    bounded = state.get("bounded_budget")
    if bounded is not None and bounded["key"] == key:
        return bounded["allocation"]
    return None


def release_key(key: Any, rs: ReleaseSettings, allocation: Any) -> tuple:
    """What identifies one release in the session: the selection (data, person, time range,
    interval), the places, the settings and the allocation."""
    alloc = None
    if allocation is not None:
        budget = np.asarray(allocation.budget, dtype=float)
        alloc = (hashlib.sha256(budget.tobytes()).hexdigest(), allocation.model_key)
    return (key, state.place_tuples(), rs, alloc)


def shown_release(traj: pd.DataFrame, key: Any, rs: ReleaseSettings | None, mask: np.ndarray
                  ) -> tuple[Any | None, Any | None]:
    """(the real draw for these settings if the user made one — never redrawn — or None, and
    the free preview: a simulation kept for the setting, never downloadable). (None, None)
    after showing the library's error message.

    Every error, map and quality figure of the page comes from the preview, also once a real
    draw exists: choosing among real draws by their error against the true trace would reveal
    more than their ε (docs/composition.md). The real draw's budgets (its allocation, G_t,
    dummies) and its files are its own."""
    if rs is None:
        return None, None
    allocation = bounded_allocation(key)
    rkey = release_key(key, rs, allocation)
    session = state.session()
    try:
        preview = session.preview(traj, mask, rs, key=rkey, allocation=allocation)
    except LmdkError as err:
        st.error(f"Cannot release with these settings: {plain_text(err)}")
        return None, None
    return session.drawn(rkey), preview


PREVIEW_NOTE = (
    "**Preview** — a simulated release with the settings in the sidebar, for exploring: it is "
    "never released and cannot be downloaded, so exploring costs nothing. Section 6 draws the "
    "real release: fresh random noise, counted against your total budget the moment it is "
    "drawn (whether you download it or not)."
)
REAL_NOTE = (
    "**Your real release** for these settings is drawn (section 6) — once, with fresh random "
    "noise, counted against your total budget when it was drawn, and never redrawn. The "
    "allocation above is its own; the error below and the map show the preview, a simulated "
    "draw with the same settings: the page never shows a real release's error against your "
    "true trace, because picking among real releases by their true error would reveal more "
    "than their ε."
)


def render(
    traj: pd.DataFrame, key: Any, s: Settings, shown: Any | None, mask: np.ndarray,
    preview: Any | None = None,
) -> None:
    """Section 3 for ``shown`` (the real draw, or the preview), section 4's errors for
    ``preview`` (session.Preview; default ``shown``)."""
    st.header("3 · Budget allocation")
    if shown is None:
        st.info("Fix the privacy settings in the sidebar to see the allocation and the release.")
        return
    preview = shown if preview is None else preview
    release = shown.release
    if release.scheme == "budget":
        st.info(
            "The release uses the TPL-bounded allocation of section 5, not the sidebar scheme "
            "(its landmark guarantee — the protection level of your places plus one moment: "
            f"largest G_t = {fmt_number(release.params['achieved_guarantee'])}, judged against "
            f"ε = {fmt_number(s.epsilon)}). Switch it off there.",
            icon="ℹ️",
        )
    guarantee = accounting.landmark_guarantee(release.budget, mask)
    st.caption(
        "Top: the budget ε_t spent at each timestamp (landmarks marked). Bottom: the landmark "
        "guarantee G_t — ε_t plus everything spent at landmarks — which must stay below the ε line "
        "for landmark privacy to hold."
    )
    released_with = np.asarray(release.landmarks, dtype=bool)
    dummies = released_with & ~mask if released_with.sum() > mask.sum() else None  # section 2b
    digest = compute.mask_digest(mask)
    compute.chart(
        "allocation", (key, shown.token, digest, float(s.epsilon)),
        lambda: figures.allocation_figure(
            release.budget, mask, epsilon=s.epsilon, time=traj["time"], guarantee=guarantee,
            dummies=dummies, max_points=CHART_POINTS,
        ),
        key="allocation_chart",
    )
    st.header("4 · Released trajectory and its cost")
    if shown.is_real:
        st.success(REAL_NOTE, icon=":material/lock:")
    else:
        st.info(PREVIEW_NOTE, icon=":material/visibility:")
    release = preview.release  # quality: always a simulated draw (see shown_release)
    err, mae = compute.release_error(key, preview.token, traj, release)  # once per preview
    c = st.columns(4)
    c[0].metric(
        "Mean error",
        fmt_distance(mae),
        help="Mean distance between the true and the released location (over timestamps "
        "with a release).",
    )
    c[1].metric(
        "Fresh releases",
        plain_percent(release.fresh_share),
        help="Share of timestamps with a newly perturbed location; the others repeat the last one "
        "(approximation) and spend no budget.",
    )
    c[2].metric(
        "Budget spent Σε_t",
        fmt_number(release.budget_spent),
        help="Sum of ε_t over all timestamps. Landmark privacy only bounds landmarks plus any one "
        "other timestamp (G_t), so this can exceed ε.",
    )
    gmax = float(guarantee.max()) if guarantee.size else 0.0
    ok = accounting.satisfies_landmark_privacy(release.budget, mask, epsilon=s.epsilon)
    c[3].metric(
        "Max G_t vs ε",
        f"{fmt_number(gmax)} / {fmt_number(s.epsilon)}",
        delta="landmark-private" if ok else "exceeds ε",
        delta_color="normal" if ok else "inverse",
        help="Largest landmark guarantee G_t = Σ_{landmarks ∪ {t}} ε_i. At most ε means every "
        "landmark visit (together with any one moment) is protected at level ε.",
    )
    st.caption(
        "Σε_t: all the per-moment budgets added up (it may exceed ε). G_t: how much an observer "
        "can learn about your places together with moment t — at most ε means protected."
    )
    if mask.sum() == 0:
        st.caption(
            "No landmark timestamps yet: with no landmarks every scheme protects each moment at ε."
        )
    compute.chart(
        "error", (key, preview.token, digest), lambda: figures.error_figure(
            err, release.published, time=traj["time"], landmarks=mask, max_points=CHART_POINTS
        ),
        key="error_chart",
    )
    _comparison(traj, key, s)


@st.fragment
def _comparison(traj: pd.DataFrame, key: Any, s: Settings) -> None:
    """Scheme comparison; a fragment, so its controls rerun only this part of the page."""
    with st.expander("Compare all schemes (repeated runs)", expanded=False):
        runs = st.slider(
            "Runs per scheme",
            1,
            50,
            10,
            key="compare_runs",
            help="Each scheme is released this many times with fresh random draws (a simulation: "
            "nothing here is exported); the table shows "
            "the mean and spread of the error. More runs = more reliable, slower.",
        )
        if st.button(
            "Run comparison",
            key="compare_go",
            help="Release with every scheme on this trajectory.",
        ):
            from lmdk_core import comparison

            mask = compute.landmarks(key, traj, state.place_tuples())[0]
            params = dict(s.params)
            bar = st.progress(0.0, text="comparing schemes…")
            rows = []
            try:
                for i, scheme in enumerate(rl.SCHEMES):
                    text = f"comparing schemes… {SCHEME_LABELS[scheme]}"
                    bar.progress(i / len(rl.SCHEMES), text=text)
                    rows.append(
                        comparison.compare_schemes(
                            traj,
                            mask,
                            epsilon=s.epsilon,
                            schemes=(scheme,),
                            runs=runs,
                            radius_m=s.radius_m,
                            params={scheme: params} if scheme == s.scheme and params else None,
                        )
                    )
            except LmdkError as err:
                st.error(plain_text(err))
                return
            finally:
                bar.empty()
            state.put("comparison", pd.concat(rows, ignore_index=True))
            state.put("comparison_for", (key, state.place_tuples(), s))
        table = state.get("comparison")
        if table is not None:
            if state.get("comparison_for") != (key, state.place_tuples(), s):
                st.warning(
                    "This table is for earlier settings or places; run the comparison again."
                )
            st.caption(
                f"{int(table['runs'].iloc[0])} runs per scheme, the same random draws for every "
                "scheme within a run. Mean error: average distance between true and released "
                "locations (± its spread over runs); largest protection level: the largest G_t, "
                "to compare with ε."
            )
            st.dataframe(display_table(table), hide_index=True, width="stretch",
                         key="comparison_table")
            charts.show(figures.comparison_figure(table), key="comparison_chart")
        _dummy_comparison(traj, key, s, runs)


def _dummy_comparison(traj: pd.DataFrame, key: Any, s: Settings, runs: int) -> None:
    """Each scheme with and without dummy landmarks (section 2b's settings), same total ε."""
    eps_sel = float(st.session_state.get("hide_eps") or min(0.1, s.epsilon / 2))
    generator = st.session_state.get("hide_gen") or "stays"
    if not st.button(
        "Compare with dummy landmarks",
        key="compare_dummies_go",
        help=f"Every scheme on your landmarks with ε, and on landmarks plus dummies (chosen with "
        f"ε_sel = {fmt_number(eps_sel)}, '{generator}' candidates, as in section 2b) with "
        "ε − ε_sel: what hiding when you were at your places costs in error (a simulation).",
    ):
        return
    from lmdk_core import comparison

    mask = compute.landmarks(key, traj, state.place_tuples())[0]
    if not mask.any():
        st.info("Mark a place first: with no landmarks there is nothing to hide.")
        return
    try:
        with st.spinner("comparing each scheme with and without dummy landmarks…"):
            table = comparison.compare_with_dummies(
                traj, mask, epsilon=s.epsilon, epsilon_select=eps_sel, runs=runs,
                radius_m=s.radius_m, generator=generator,
            )
    except LmdkError as err:
        st.error(plain_text(err))
        return
    st.caption(
        "Mean error without (your places only) and with dummy places, their ratio, and the "
        "average number of dummy moments added; the last column says whether your places (real "
        "and dummy) stayed protected at ε − ε_sel in every run (ε_sel: the part of ε spent on "
        "choosing the dummies)."
    )
    if table["mae_dummies"].isna().any():
        st.caption(
            "— in the error columns: that scheme released nothing. The dummies made every moment "
            "a landmark, and Skip publishes only at ordinary moments."
        )
    state.put("dummy_comparison", table)  # the numbers behind the formatted table
    st.dataframe(display_table(table), hide_index=True, width="stretch",
                 key="dummy_comparison_table")


def _yes_no(v: Any) -> str:
    return "yes" if bool(v) else "NO"


def display_table(table: pd.DataFrame) -> pd.DataFrame:
    """A comparison table for people: plain scheme names and column names, formatted values."""
    from lmdk_core import comparison

    def ratio(v: Any) -> str:
        return f"× {fmt_number(v)}"

    return comparison.display_frame(table, {
        "scheme": lambda v: SCHEME_LABELS.get(v, str(v)).split(" (")[0],
        "mae_m_mean": fmt_distance, "mae_m_std": fmt_distance,
        "mae_real": fmt_distance, "mae_dummies": fmt_distance, "mae_ratio": ratio,
        "fresh_share_mean": plain_percent,
        "budget_spent": fmt_number, "max_guarantee": fmt_number, "dummies_mean": fmt_number,
        "landmark_private": _yes_no, "landmark_private_dummies": _yes_no, "runs": fmt_number,
    })
