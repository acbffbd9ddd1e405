"""Guide before releasing: the expected error of every scheme for the current places, a
recommendation, the ε (or release interval) that reaches a target accuracy, and a warning when
the release falls off the map. Numbers come from lmdk_core.advice; this module lays them out.

The simulated numbers use the true trace with a fixed seed: they are shown to the data owner
only, kept in this session, and never reach an export or a release.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from lmdk_core import advice
from lmdk_core.errors import LmdkError
from lmdk_core.formatting import plain_percent
from lmdk_core.times import epoch_ns, seconds

from . import compute, smoothing_section, state
from .formatting import fmt_distance, fmt_duration, fmt_number, plain_text
from .privacy_section import EPSILON_MAX, SCHEME_LABELS, Settings, use_epsilon, use_scheme

PROTECTS = {
    "event": "single moments only — NOT your places",
    "user": "every moment at once",
    "uniform": "your places + any one moment",
    "skip": "your places + any one moment (times shown)",
    "adaptive": "your places + any one moment",
    "reserve": "your places + any one moment (times shown)",
    "bd": "your places + one moment per window",
    "ba": "your places + one moment per window",
}
"""What each scheme protects, in a few plain words (the guarantee of lmdk_core.accounting)."""

WHY = {
    "event": "it adds the least noise — but protects single moments only, not your places.",
    "user": "it is the only one that protects every moment at once; expect huge noise.",
    "uniform": "few moments at your places, so ε/(landmarks + 1) per moment is still large.",
    "skip": "it spends the full ε on ordinary moments and repeats the last released point at "
    "your places instead of releasing them (so the times you were there are visible).",
    "adaptive": "the thesis's scheme, reconstructed: it releases only when you move and repeats "
    "the last point otherwise; each release gets ε/(landmarks + 1), as in Uniform.",
    "reserve": "it keeps a share of ε for your places and spends the rest on ordinary moments; "
    "at your places it releases a fresh point only when repeating the last one is expected to "
    "be worse.",
    "bd": "its private test releases only when the trace changes.",
    "ba": "its private test releases only when the trace changes.",
}
"""One-line reasons shown with the recommendation."""

HOW = {
    "closed form": "formula",
    "lower bound": "trial run on your trace",
    "simulate": "trial run on your trace",
}
SMOOTHED_HOW = "trial run on your trace, smoothed"
"""How the number is known when smoothing is on (the smoothed error of one trial release)."""
UNTRIED_HOW = {
    "lower bound": "formula, a lower bound",
    "simulate": "trial run (switched off)",
}
"""How the number is known while the trial releases are off (no trial was run)."""

COLUMNS = {
    "Scheme": st.column_config.TextColumn(width=200),
    "Expected mean error": st.column_config.TextColumn("Mean error", width=95),
    "Protects your places?": st.column_config.TextColumn("Protects places?", width=85),
    "What it protects": st.column_config.TextColumn(width=250),
    "How we know": st.column_config.TextColumn(width=140),
}
"""Column widths that keep the guide's table inside the page at 1280 px."""

CACHE_KEY = "guide_estimates"
TRIALS_KEY = "guide_trials_kept"
"""Smoothed trials that do not depend on where the places are (advice.estimate_errors' reuse),
for the current trace: a new place recomputes only the schemes it changes."""
KEPT = 4
"""Estimates kept per session (the simulation reads the true trace: never shared)."""
SEED = 0
"""Fixed seed of the what-if simulation (display only; a seed never reaches an export)."""
FAR_M = 1_000_000.0
"""Mean error (m) from which the warning explains that released points scatter over the globe."""
TRIALS_WIDGET = "guide_trials"
"""The switch of the trial releases. They are off until the user asks for them: on the sample
they were most of the server's CPU time of each map click (bench/bench_click.py --sections
measures it per section), and one server runs every session's clicks in turn. The formulas,
and the recommendation (public formulas only: advice.recommend), are always shown."""
LAZY_TRIAL_POINTS = 200_000
"""From this many moments on, the switch says that the trial releases are slow (seconds per
million moments on every click)."""


def trials_on() -> bool:
    """Whether the guide's trial releases are switched on (readable before the switch is drawn)."""
    return bool(state.get(TRIALS_WIDGET, False))


def _estimates(traj: pd.DataFrame, key: Any, s: Settings, mask: np.ndarray
               ) -> list[advice.SchemeEstimate]:
    """advice.estimate_errors, kept in this session for the current data, places and settings."""
    digest = compute.mask_digest(mask)
    simulate = trials_on()
    smooth = simulate and smoothing_section.enabled()
    ck = (key, digest, s.epsilon, s.radius_m, (s.scheme, s.params) if s.params else None,
          simulate, smooth)
    kept: dict = state.kept_dict(CACHE_KEY)
    if ck not in kept and not mask.any() and st.session_state.get("df") is compute.sample_frame():
        kept[ck] = _sample_estimates(_content_digest(traj), s.epsilon, s.radius_m,
                                     (s.scheme, s.params) if s.params else None, simulate,
                                     smooth, traj)
    if ck not in kept:
        params = {s.scheme: dict(s.params)} if s.params else None
        box: dict = state.kept_dict(TRIALS_KEY)
        if box.get("trace") != key or len(box.get("trials", ())) > 64:  # this trace's only
            box.update(trace=key, trials={})
        kept[ck] = advice.estimate_errors(traj, mask, epsilon=s.epsilon, radius_m=s.radius_m,
                                          rng=SEED, params=params, simulate=simulate,
                                          smooth=smooth, reuse=box["trials"])
        while len(kept) > KEPT:
            kept.pop(next(iter(kept)))
    return kept[ck]


def _content_digest(traj: pd.DataFrame) -> str:
    """Identity of a trajectory's public columns (time, lat, lon) by content."""
    h = pd.util.hash_pandas_object(traj[["time", "lat", "lon"]], index=False)
    return hashlib.sha256(h.to_numpy().tobytes()).hexdigest()


@st.cache_resource(show_spinner=False, max_entries=16)
def _sample_estimates(digest: str, epsilon: float, radius_m: float, params: Any,
                      simulate: bool, smooth: bool, _traj: pd.DataFrame
                      ) -> list[advice.SchemeEstimate]:
    """The guide's numbers for a selection of the bundled sample with no place marked, shared
    between sessions like the sample itself (compute.sample_frame): they are computed from
    public data and public settings only (the synthetic sample, ε, r, the scheme's parameters,
    the fixed seed), so every session would compute exactly these; no session's places or
    uploads ever reach this cache. Every first page load starts here."""
    chosen = {params[0]: dict(params[1])} if params else None
    return advice.estimate_errors(_traj, np.zeros(len(_traj), dtype=bool), epsilon=epsilon,
                                  radius_m=radius_m, rng=SEED, params=chosen,
                                  simulate=simulate, smooth=smooth)


def _tried(e: advice.SchemeEstimate) -> bool:
    """Whether ``e``'s number comes from a trial release (raw or smoothed)."""
    return bool(np.isfinite(e.smoothed) or np.isfinite(e.simulated))


def _number(e: advice.SchemeEstimate) -> str:
    """The estimate as the page shows it: a lower bound not replaced by a trial says so."""
    if e.kind == "lower bound" and not _tried(e):
        return f"≥ {fmt_distance(e.estimate)}"
    return fmt_distance(e.estimate)


def _how(e: advice.SchemeEstimate) -> str:
    if np.isfinite(e.smoothed):
        return SMOOTHED_HOW
    if e.kind != "closed form" and not _tried(e):
        return UNTRIED_HOW.get(e.kind, e.kind)
    return HOW.get(e.kind, e.kind)


def _table(est: list[advice.SchemeEstimate], best: str | None, current: str) -> pd.DataFrame:
    rows = []
    for e in est:
        name = SCHEME_LABELS.get(e.scheme, e.scheme).split(" (")[0]
        mark = " ★ recommended" if e.scheme == best else ""
        mark += " (selected)" if e.scheme == current else ""
        rows.append({
            "Scheme": name + mark,
            "Expected mean error": _number(e),
            "Protects your places?": "yes" if e.landmark_private else "NO",
            "What it protects": PROTECTS.get(e.scheme, ""),
            "How we know": _how(e),
        })
    return pd.DataFrame(rows)


def _ceil_sig(x: float, digits: int = 3) -> float:
    """x rounded UP to ``digits`` significant digits (so the rounded ε still meets a target)."""
    if x <= 0 or not math.isfinite(x):
        return x
    step = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    return math.ceil(x / step - 1e-9) * step


def _off_map(traj: pd.DataFrame, release: Any, recommended: str | None) -> None:
    """Warn when the released points fall outside the view of the trace (or at the poles)."""
    if release is None or release.lat is None:
        return
    share = advice.share_outside_view(traj["lat"], traj["lon"], release.lat, release.lon)
    if share < 0.5:
        return
    from lmdk_core.metrics import mae_metres

    mean = mae_metres(traj, release)
    hint = f" choose {SCHEME_LABELS[recommended].split(' (')[0]}," if recommended else ""
    text = (f"Released points are on average {fmt_distance(mean)} away — {plain_percent(share)} "
            f"fall outside the map. Raise ε,{hint} or release fewer moments (sidebar: Release "
            "interval).")
    if mean >= FAR_M:
        text += (" With noise of thousands of km the released points scatter over the globe: "
                 "the release maps each noisy point back onto the Earth's surface (valid "
                 "coordinates; post-processing, so no extra privacy cost), but such points say "
                 "nothing about where you were.")
    st.warning(text, icon=":material/travel_explore:")


def render(traj: pd.DataFrame, key: Any, s: Settings, mask: np.ndarray, release: Any) -> None:
    """The guide, drawn under the map (see the module docstring)."""
    mask = np.asarray(mask, dtype=bool)
    try:
        est = _estimates(traj, key, s, mask)
    except LmdkError as err:  # a bad setting is reported by the release; keep the page up
        st.caption(f"No error estimates for these settings: {plain_text(err)}")
        return
    best = advice.recommend(est)
    _off_map(traj, release, best.scheme if best else None)
    with st.expander("Before you release: expected error of each scheme", expanded=True):
        if release is not None and np.asarray(release.landmarks).sum() > mask.sum():
            st.info("Dummy landmarks are on (section 2b): the release protects more moments with "
                    "less of ε, so expect more error than these estimates for your places alone.")
        _guide(traj, key, s, mask, est, best)


def _guide(traj: pd.DataFrame, key: Any, s: Settings, mask: np.ndarray,
           est: list[advice.SchemeEstimate], best: advice.SchemeEstimate | None) -> None:
    by = {e.scheme: e for e in est}
    n, n_lm = int(mask.size), int(mask.sum())
    st.markdown(
        f"If you release now ({fmt_number(n)} moments, {fmt_number(n_lm)} of them at your "
        f"places, ε = {fmt_number(s.epsilon)}, radius r = {fmt_distance(s.radius_m)}): the "
        "average distance between your true and released locations, per scheme."
    )
    st.dataframe(_table(est, best.scheme if best else None, s.scheme), hide_index=True,
                 width="stretch", key="guide_table", column_config=COLUMNS)
    if best is not None:
        label = SCHEME_LABELS[best.scheme].split(" (")[0]
        st.success(f"Recommended: **{label}** — of the schemes that protect your places, the "
                   "smallest expected error by the formulas "
                   f"({_number(best).replace('≥', 'at least')} here): {WHY[best.scheme]}")
        st.caption("The recommendation uses only the formulas of public counts (moments, moments "
                   "at your places, ε, r), so following it reveals nothing more about your trace"
                   + ("; the simulated rows are for your judgement." if trials_on() else "."))
        current = by.get(s.scheme)
        worse = current is None or not current.landmark_private or not (
            current.estimate <= best.estimate * 1.05)
        if best.scheme != s.scheme and worse:
            st.button(f"Use {label}", key="guide_use_scheme", on_click=use_scheme,
                      args=(best.scheme,),
                      help="Switch the sidebar's allocation scheme to the recommended one.")
    if n_lm == 0:
        st.caption("No places marked yet: every scheme protects each moment at ε alike. Mark "
                   "your places on the map to see the difference.")
    slow = f" (slow for {fmt_number(n)} moments)" if n >= LAZY_TRIAL_POINTS else ""
    on = st.toggle(f"Trial releases on your trace{slow}", key=TRIALS_WIDGET,
                   help="Schemes without a formula (Adaptive, Reserve, BD, BA; Skip at your "
                   "places) get their number from one trial release of your trace, and with "
                   "smoothing on every scheme gets its smoothed error that way. That repeats on "
                   "every change of places or settings, so it runs only while this is on. The "
                   "recommendation uses the formulas only and does not need it.")
    if on:
        st.caption("Rows 'trial run on your trace' come from one trial release of your true "
                   "trace with a fixed seed: for your eyes only — never exported, never the "
                   "release you download.")
    elif smoothing_section.enabled():
        st.caption("Without the trial releases the numbers are formulas for the released points "
                   "before smoothing; switch them on to see each scheme's error after smoothing.")
    _target(traj, key, s, mask, by)


TARGET_KEY = "guide_target_advice"


def _target_advice(traj: pd.DataFrame, key: Any, mask: np.ndarray, scheme: str, target: float,
                   radius_m: float) -> advice.TargetAdvice:
    """advice.epsilon_for_mean_error, kept in this session (Skip's reads the true trace)."""
    ck = (key, compute.mask_digest(mask), scheme, target, radius_m)
    kept: dict = state.kept_dict(TARGET_KEY)
    if ck not in kept:
        kept[ck] = advice.epsilon_for_mean_error(traj, mask, scheme=scheme, target_error_m=target,
                                                 radius_m=radius_m, rng=SEED)
        while len(kept) > KEPT:
            kept.pop(next(iter(kept)))
    return kept[ck]


def _target(traj: pd.DataFrame, key: Any, s: Settings, mask: np.ndarray,
            by: dict[str, advice.SchemeEstimate]) -> None:
    """Target accuracy → ε for the selected scheme (and the release interval for Uniform).

    The target is the page's *Mean error* (section 4): over every released moment, Skip's
    repeats included, before smoothing (advice.epsilon_for_mean_error)."""
    target = st.number_input(
        "I want released points within about … metres on average", min_value=1.0,
        max_value=10_000_000.0, value=500.0, step=100.0, key="guide_target_m",
        help="A target mean error in metres: the guide computes the budget ε that reaches it "
        "with the selected scheme.",
    )
    n, n_lm = int(mask.size), int(mask.sum())
    scheme = s.scheme
    name = SCHEME_LABELS.get(scheme, scheme).split(" (")[0]
    if by[scheme].kind == "simulate":
        fallback = "skip"
        st.markdown(f"{name} has no formula: its error depends on how you move. For comparison, "
                    f"{SCHEME_LABELS[fallback].split(' (')[0]}:")
        scheme, name = fallback, SCHEME_LABELS[fallback].split(" (")[0]
    adv = _target_advice(traj, key, mask, scheme, float(target), s.radius_m)
    smoothing = (" Errors of the released points before smoothing, as that Mean error; the "
                 "table above shows the smoothed ones." if smoothing_section.enabled()
                 and trials_on() else "")
    if adv.reads_trace:
        _target_from_trace(adv, name, s, smoothing)
        return
    need = _ceil_sig(adv.epsilon)
    st.markdown(f"**{name}** reaches a mean error of about {fmt_distance(float(target))} — the "
                f"*Mean error* of section 4 — at **ε = {fmt_number(need)}** (now ε = "
                f"{fmt_number(s.epsilon)}).")
    if smoothing:
        st.caption(smoothing.strip())
    if need > EPSILON_MAX:
        st.caption(f"That is beyond the largest ε this page allows ({fmt_number(EPSILON_MAX)}): "
                   "such a budget protects next to nothing. Choose the recommended scheme or "
                   "release fewer moments.")
    elif not math.isclose(need, s.epsilon, rel_tol=1e-9):
        st.button(f"Use ε = {fmt_number(need)}", key="guide_use_epsilon", on_click=use_epsilon,
                  args=(need,), help="Set the sidebar's privacy budget ε to this value.")
    if scheme == "uniform" and n_lm and "time" in traj and n > 1:
        duration = float(seconds(np.ptp(epoch_ns(traj["time"]))))
        if duration > 0:
            every = advice.interval_for_error(target_error_m=float(target), epsilon=s.epsilon,
                                              radius_m=s.radius_m, duration_s=duration, n=n,
                                              n_landmarks=n_lm)
            if every is None:
                st.caption("No release interval reaches it at this ε: even one release at your "
                           "places is noisier than the target.")
            elif every > 0:
                st.caption(f"Or keep ε = {fmt_number(s.epsilon)} and release one location "
                           f"every {fmt_duration(every)} (sidebar: Release interval) — an "
                           "estimate: check the new error after resampling.")


def _target_from_trace(adv: advice.TargetAdvice, name: str, s: Settings, smoothing: str) -> None:
    """Skip at your places: the Mean error has a floor set by how you move; the ε that reaches
    the target reads the true trace, so it is shown, not offered as a one-click setting."""
    target, fresh = fmt_distance(adv.target_m), fmt_number(_ceil_sig(adv.fresh_epsilon))
    if not adv.reachable:
        st.markdown(
            f"**{name}** cannot bring the *Mean error* of section 4 down to {target} at any ε: "
            "at your places it repeats the last point released before you got there, and over "
            f"all moments that keeps its mean error above **{fmt_distance(adv.floor_m)}** "
            f"however large ε is. Its fresh points alone average {target} at ε = {fresh}. For "
            "a smaller error choose a scheme that releases at your places (Uniform, Reserve).")
    else:
        need = _ceil_sig(adv.epsilon)
        st.markdown(
            f"**{name}** reaches a *Mean error* (section 4) of about {target} at **ε ≈ "
            f"{fmt_number(need)}** (now ε = {fmt_number(s.epsilon)}): at your places it repeats "
            "an older point, so it needs more ε than its fresh points alone (ε = "
            f"{fresh}), and it never gets below {fmt_distance(adv.floor_m)} however large ε is.")
        if need > EPSILON_MAX:
            st.caption(f"That is beyond the largest ε this page allows "
                       f"({fmt_number(EPSILON_MAX)}): such a budget protects next to nothing.")
    st.caption("Computed from your true trace — how far you move between your last ordinary "
               "moment and your places — with simulated noise: for your eyes only, never "
               "exported. No one-click button: an ε picked from your trace depends on it, and "
               "the guarantee does not cover that choice." + smoothing)
