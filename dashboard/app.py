"""lmdk dashboard: mark landmark places on a trajectory and see what is protected, at what cost.

Run from the repository root: ``streamlit run dashboard/app.py`` (``make run``).
The page only arranges controls and views; all privacy logic lives in ``lmdk_core``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `streamlit run dashboard/app.py` puts only dashboard/ on the path
    sys.path.insert(0, str(ROOT))

from dashboard import (  # noqa: E402
    compute,
    data_section,
    export_section,
    loss_section,
    map_section,
    privacy_section,
    state,
)

EXPLAINER = """
**What am I looking at?** A location trace reveals the places that matter to you — home, a clinic.
*Landmark privacy* lets you mark those places: every moment spent there gets strong protection
(an observer of the released trace cannot tell whether you were there, up to the privacy level ε),
while ordinary moments are released with less noise, so the trace stays useful.
Below, click your places on the map, pick how the budget ε is spent over time, and see what the
released trace looks like, how far off it is (in metres), and how much privacy is really lost.
"""


def main() -> None:
    st.set_page_config(page_title="lmdk · landmark privacy", page_icon="📍", layout="wide")
    state.init()
    st.title("lmdk — landmark privacy for location traces")
    st.markdown(EXPLAINER)
    with st.sidebar:
        traj = data_section.render()
        settings = privacy_section.controls()
        st.header("Map")
        tiles = map_section.map_settings()
        show_release = st.toggle(
            "Show released trajectory on the map",
            value=True,
            key="show_release",
            help="Overlay the perturbed (released) locations, dashed, on the true trajectory.",
        )
    # One container always sits here, so a message appearing or going does not shift the
    # elements below (a shifted map would be re-mounted and lose its zoom).
    with st.container():
        if st.session_state.last_error:  # stays until dismissed or a later action succeeds
            st.error(st.session_state.last_error, icon="⚠️")
            st.button("Dismiss message", on_click=state.dismiss_error, help="Hide this message.")
    if traj is None:
        st.stop()
    key = compute.traj_key(st.session_state.data_token, traj)
    mask, _ = compute.landmarks(key, traj, state.place_tuples())
    release = privacy_section.compute_release(traj, key, settings)
    map_section.render(traj, key, tiles, release if show_release else None, mask)
    privacy_section.render(traj, key, settings, release, mask)
    temporal, landmark_loss = loss_section.render(traj, key, settings, release, mask)
    export_section.render(traj, settings, release, mask, temporal, landmark_loss)


main()
