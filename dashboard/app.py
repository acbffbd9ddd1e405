"""lmdk dashboard: one page per question, behind ``st.navigation``.

* **My trace** (this file's :func:`trace_page`): mark landmark places on your trajectory and see
  what is protected, at what cost.
* **Patterns** (``page_patterns.py``): pattern-level privacy for event streams.
* **Population** (``page_population.py``): personal budgets for many people.

Run from the repository root: ``streamlit run dashboard/app.py`` (``make run``).
The pages only arrange controls and views; all privacy logic lives in ``lmdk_core``.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import streamlit as st

if not __package__:  # a script run by Streamlit: import its own package first (PEP 366)
    _HERE = Path(__file__).resolve().parent  # dashboard/ in the repo, lmdk_dashboard/ installed
    sys.path[:0] = [] if str(_HERE.parent) in sys.path else [str(_HERE.parent)]
    __package__ = importlib.import_module(_HERE.name).__name__

from lmdk_core import maps

from . import (
    attack_section,
    compute,
    data_section,
    export_section,
    guide_section,
    hide_section,
    loss_section,
    map_section,
    privacy_section,
    smoothing_section,
    state,
    timing,
)
from .formatting import plain_text

# The one line under the title; the full explainer is one click away, so the map stays in view.
INTRO = (
    "Mark the places that matter to you (home, a clinic) on your trace and see what a noisy "
    "release protects, and at what cost."
)

# The page's top is kept short so the map below sits fully in view on a 1280x720 laptop screen
# (Streamlit's default 6rem top padding and 2.75rem title pushed it below the fold).
# While a run is under way, elements not yet redrawn still turn pale, but in one step (after
# Streamlit's 0.5 s delay and 1 s fade) instead of a fade: the fade recomposited the page at
# every frame for as long as a run lasted, so the slower the shared server, the more CPU each
# browser spent (the GPU process's share in bench/bench_load.py).
COMPACT_TOP = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 3.5rem; }
[data-testid="stMainBlockContainer"] h1 { font-size: 2rem; padding-top: 0; }
[data-stale="true"], [data-testid="stExpander"] details, [data-testid="stExpander"] summary {
  transition-timing-function: step-end !important; }
</style>"""

EXPLAINER = """
**What am I looking at?** A location trace reveals the places that matter to you — home, a clinic.
*Landmark privacy* lets you mark those places; the released trace is noisy, and ordinary moments
get less noise than your places, so the trace stays useful. Click your places on the map, pick how
the budget ε is spent over time, and see the released trace, its error in metres and the privacy
lost.

- **Protected:** *where* you were during all the moments spent at your places together with any
  one other moment — an observer of the released trace learns about them at most what ε allows.
- **Not protected:** *when* you were at your places. Landmark privacy treats those times as public,
  and a scheme may show them (Skip repeats the last released point at every landmark moment);
  hiding them is what the dummy landmarks of section 2b are for.
- **Previews are free, releases count:** what you see while you explore is a simulated preview
  that can never be downloaded. Section 6 draws the real release — fresh random noise, no seed —
  and counts it against your total budget the moment it is drawn, whether you download it or
  not: looking at several real releases and keeping the best is itself a use of your data.
- **Releases add up:** two noisy copies reveal more than one; section 6 adds up every real
  release (including the budget of dummy landmarks and of a DP correlation model) and refuses a
  draw that would pass your total budget.
- **Files:** the public release files hold only times and released locations; the analysis and
  places files contain your places — never share them.
"""


def trace_page() -> None:
    """My trace: places on the map, budget, release, loss, export (sections 1-6).

    Its settings survive a visit to another page (state.restore_widgets / save_widgets)."""
    timing.new_run()
    state.restore_widgets()
    try:
        with timing.section("total"), timing.profiled():
            _trace_page()
    finally:  # also after st.stop(): the values shown are the ones kept
        state.save_widgets()


def _trace_page() -> None:
    state.init()
    st.html(COMPACT_TOP)
    st.title("lmdk — landmark privacy for location traces")
    intro, more = st.columns([5, 2], vertical_alignment="center")
    intro.markdown(INTRO)
    with more.popover("What am I looking at?", icon=":material/help:", width="stretch"):
        st.markdown(EXPLAINER)
    with st.sidebar:
        with timing.section("data"):
            traj = data_section.render()
        with timing.section("controls"):
            settings = privacy_section.controls()
        if traj is not None:  # one location per N minutes: fewer moments, fewer landmarks
            with timing.section("interval"):
                st.subheader("Release interval")
                full_key = compute.traj_key(st.session_state.data_token, traj)
                full_mask, _ = compute.landmarks(full_key, traj, state.place_tuples())
                interval = hide_section.render_interval(traj, full_mask)
                if interval.interval_s > 0:
                    traj = interval.trajectory
        st.header("Map")
        tiles = map_section.map_settings()
        release_legend = maps.legend_entry("released")
        show_release = st.toggle(
            "Show released trajectory on the map",
            value=True,
            key="show_release",
            help="Overlay the released (perturbed) locations on the true trajectory, drawn as "
            f"{release_legend.colour_word} {release_legend.mark}.",
        )
    # One container always sits here, so a message appearing or going does not shift the
    # elements below (a shifted map would be re-mounted and lose its zoom).
    with st.container():
        if st.session_state.last_error:  # stays until dismissed or a later action succeeds
            st.error(plain_text(st.session_state.last_error), icon="⚠️")
            st.button("Dismiss message", on_click=state.dismiss_error, help="Hide this message.")
    if traj is None:
        st.stop()
    with timing.section("landmarks"):
        if interval.interval_s > 0:
            key = compute.traj_key(f"{st.session_state.data_token}|{interval.interval_s}", traj)
            mask, _ = compute.landmarks(key, traj, state.place_tuples())
        else:  # every fix released: the mask of the whole selection (not computed twice)
            key, mask = full_key, full_mask
    map_box = st.container()  # drawn after the release it overlays, above the dummy section
    with timing.section("hide"):
        hide_box = st.expander("2b · Hide when you were at your places (dummy landmarks)",
                               expanded=False)
        with hide_box:
            hide = hide_section.render_hide(mask, epsilon=settings.epsilon)
    with timing.section("release"), st.spinner(
        f"Simulating a preview for {len(traj):,} moments…", show_time=True
    ):  # shown only when it takes a while: a kept preview or draw comes back at once
        rsettings = privacy_section.release_settings(settings, hide)
        drawn, preview = privacy_section.shown_release(traj, key, rsettings, mask)
        shown = drawn if drawn is not None else preview  # budgets and files: the real draw
        release = None if preview is None else preview.release  # quality: the preview
        shown_points = smoothing_section.shown(preview)  # the map: smoothed when toggled
    with timing.section("hide"), hide_box:
        hide_section.render_details(shown, epsilon=settings.epsilon)
    with timing.section("map"), map_box:
        map_section.render(traj, key, tiles,
                           shown_points.release if show_release and shown_points else None, mask)
    with timing.section("guide"):
        guide_section.render(traj, key, settings, mask, release)
    with timing.section("privacy"):
        privacy_section.render(traj, key, settings, shown, mask, preview)
    with timing.section("smoothing"):
        smoothing_section.render(traj, key, preview)
    with timing.section("attack"):
        attack_section.render(traj, key, rsettings)
    with timing.section("loss"):
        temporal, landmark_loss = _loss_section(
            traj, key, settings, None if shown is None else shown.release, mask)
    with timing.section("export"):
        export_section.render(traj, settings, shown, mask, temporal, landmark_loss,
                              rsettings=rsettings, key=key, preview=preview,
                              smoothed=smoothing_section.smoothed(drawn))


def _loss_section(traj: Any, key: Any, settings: Any, release: Any, mask: Any
                  ) -> tuple[Any, Any]:
    """Section 5, lazily for long traces (then the export has no loss figures until opened)."""
    if len(traj) >= loss_section.LAZY_POINTS and not st.toggle(
        f"5 · Show the privacy loss over time (slow for {len(traj):,} moments)",
        key="loss_open",
        help="The temporal-loss bounds take a few seconds on a trace this long; they are "
        "computed only while this is on.",
    ):
        return None, None
    with st.spinner(f"Computing the privacy-loss bounds over {len(traj):,} moments…"):
        return loss_section.render(traj, key, settings, release, mask)


def main() -> None:
    st.set_page_config(page_title="lmdk · landmark privacy", page_icon="📍", layout="wide")
    pages = [
        st.Page(trace_page, title="My trace", icon=":material/person_pin_circle:",
                url_path="trace", default=True),
        st.Page(str(Path(__file__).with_name("page_patterns.py")), title="Patterns",
                icon=":material/timeline:", url_path="patterns"),
        st.Page(str(Path(__file__).with_name("page_population.py")), title="Population",
                icon=":material/groups:", url_path="population"),
    ]
    st.navigation(pages).run()


main()
