"""Constants and helpers for the pages under streamlit.testing.v1.AppTest (the ``app`` layer);
the fixtures built on them (``fake_map``, ``home``, ``app``) are in conftest.py.

The map (dashboard/map_element.py) is a browser component, opaque under AppTest, so it is
replaced by :class:`FakeMap`, which records what the page draws and delivers queued clicks exactly
as the component does: the front end's message is the trigger ``click`` under the component's
key, then the page's on_click callback runs. :func:`clicked` runs the page once with the click
delivered before the page body, as Streamlit runs a widget's callback before the script (one
run per click, as in the browser)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parent.parent / "dashboard" / "app.py")
TIMEOUT = 60
HOME_STAY = "Stay near wudaokou home"
"""The name a place clicked at alice's home gets: the suggested place (long stay) it lies on."""
BAD_CSV = (
    b"uid,time,lat,lon\n"
    b"u1,2024-01-01T00:00:00Z,39.9,116.3\n"
    b"u1,2024-01-01T00:01:00Z,95.0,116.3\n"  # latitude out of range
)


class FakeMap:
    """Stand-in for dashboard.map_element.show (see module docstring).

    Records each view the page draws (:func:`lmdk_core.map_view.map_view`) and delivers queued
    clicks as the component does: the front end's message (``lmdk_core/landmark_map.js``) is the
    trigger ``click`` under the component's key, then the page's on_click callback runs."""

    def __init__(self) -> None:
        self.calls: list[dict] = []
        self.pending: list[dict] = []

    def __call__(self, view, *, key, on_click):
        self.calls.append({"view": view, "key": key, "on_click": on_click})
        self.deliver()  # a click queued before a plain run arrives while the map is drawn

    def deliver(self) -> None:
        """The first queued click, as the component delivers it to the map drawn last: its
        message under the component's key, then the page's on_click callback."""
        if self.pending:
            st.session_state[self.calls[-1]["key"]] = {"click": self.pending.pop(0)}
            self.calls[-1]["on_click"]()

    @property
    def view(self) -> dict:
        return self.calls[-1]["view"]

    def click(self, lat: float, lng: float) -> None:
        """A click on the map background (or on anything drawn but a place circle)."""
        self.pending.append({"event": "map_click", "lat": lat, "lon": lng})

    def click_object(self, name: str, lat: float, lng: float) -> None:
        """A click on the place circle called ``name``, at (lat, lng)."""
        self.pending.append({"event": "place_click", "name": name, "lat": lat, "lon": lng})

    def circles(self) -> list[dict]:
        return self.view["places"]


def offline_page() -> AppTest:
    """The dashboard's first page under AppTest, not run yet, with no tile server
    (``?tiles=none``): what the ``app``, ``app_home`` and ``first_page`` fixtures start from."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["tiles"] = "none"
    return at


def run(at: AppTest) -> AppTest:
    """One script run, which must raise nothing."""
    at.run(timeout=TIMEOUT)
    assert not at.exception, [e.message for e in at.exception]
    return at


def metric(at: AppTest, label: str):
    return next(m for m in at.metric if m.label == label)


def clicked(at: AppTest, fake_map: FakeMap) -> AppTest:
    """The run a click on the map triggers: ``fake_map``'s first queued click (FakeMap.click,
    click_object, or a raw message in ``pending``) is delivered before the page body, as
    Streamlit runs the component's on_click callback before the script, so this one run shows
    the click's outcome everywhere on the page (a one-click-late view would show here). The
    page must have drawn the map before (a click needs a map to click on)."""
    import dashboard.state as state

    restore = state.restore_widgets  # the page's first call (dashboard/app.py, trace_page)

    def callback_then_restore() -> None:
        fake_map.deliver()
        restore()

    state.restore_widgets = callback_then_restore
    try:
        return run(at)
    finally:
        state.restore_widgets = restore


def add_place_by_click(at: AppTest, fake_map: FakeMap, lat: float, lon: float) -> AppTest:
    """A click on the map background at (lat, lon) and the run it triggers (:func:`clicked`)."""
    fake_map.click(lat, lon)
    return clicked(at, fake_map)


def home_place(home: tuple[float, float]) -> dict:
    """The place a click at ``home`` (alice's home) adds on the first page."""
    return {"name": HOME_STAY, "lat": round(home[0], 6), "lon": round(home[1], 6),
            "place_radius_m": 100.0}


def marked_at_home(at: AppTest, home: tuple[float, float]) -> AppTest:
    """``at``'s first run with the place a click at ``home`` adds (:func:`home_place`,
    selected) already in the session: one run instead of a first run and a click's
    (test_app.py's test_map_click_adds_a_landmark_place_and_updates_everything checks that
    the click leaves the same)."""
    at.session_state["places"] = [home_place(home)]
    at.session_state["selected"] = HOME_STAY
    return run(at)


def uploading(at: AppTest) -> AppTest:
    """``at``'s first run with "Upload files" already the source (the sample loaded, the
    uploader empty): one run instead of a first run and the radio's, whose callback only clears
    an upload error (a new session has none)."""
    at.session_state["source"] = "Upload files"
    run(at)
    assert at.radio(key="source").value == "Upload files" and not at.error
    return at


def session(at: AppTest):
    """The page's accounted session (lmdk_core.session.Session)."""
    return at.session_state["lmdk_session"]


def draw(at: AppTest) -> AppTest:
    """Press "Draw the real release" (section 6) and rerun."""
    at.button(key="draw_release").click()
    return run(at)


def set_budget(at: AppTest, total: float) -> AppTest:
    """Type ``total`` as the total budget and press "Set total budget" (section 6): one run,
    since the button's callback reads the field when clicked (state.set_total_budget; that
    typing alone sets nothing is test_app's test_exploring_is_free_and_every_real_draw_counts)."""
    at.number_input(key="total_budget_input").set_value(total)
    at.button(key="total_budget_set").click()
    return run(at)


def spent(at: AppTest) -> str:
    return metric(at, "Spent so far (all real releases)").value


def kept(at: AppTest) -> list:
    """The releases the page showed, most recent last (previews; the page shows a real draw
    instead once one exists for the setting)."""
    return [p.release for p in session(at).previews()]
