"""Per-session state of the dashboard and the callbacks that change it.

Everything a user creates (loaded trajectories, landmark places, selection, the releases drawn
for them and the ledger of releases downloaded) lives in ``st.session_state``; nothing is
shared between sessions. Callbacks run before the script body,
so a map click is applied before the page is drawn (no lost clicks, no one-click-late layers).
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Callable, Hashable
from typing import Any

import pandas as pd
import streamlit as st

from lmdk_core import map_view, maps
from lmdk_core.errors import LmdkError
from lmdk_core.ledger import ReleaseLedger

MAP_KEY = "map"
BASE_MAP_FROM_QUERY = {"osm": "osm", "none": "none"}
"""``?tiles=`` values that set the session's first base map (tests and demos)."""
DEFAULT_RADIUS_M = 100.0
KEPT_RELEASES = 8
"""Releases kept per session (one per setting; an evicted setting draws anew when revisited)."""

_token = itertools.count(1)


def init() -> None:
    """Create the session's state on first run (sample data loaded lazily by the data section)."""
    ss = st.session_state
    ss.setdefault("df", None)  # all loaded trajectories (uid, time, lat, lon, ...)
    ss.setdefault("data_name", None)  # what was loaded, shown to the user
    ss.setdefault("data_token", None)  # changes whenever new data is loaded (cache key)
    ss.setdefault("places", [])  # list of dicts: name, lat, lon, place_radius_m
    ss.setdefault("selected", None)  # name of the selected place
    ss.setdefault("editor_version", 0)  # bumps to reset the places editor after an edit
    ss.setdefault("last_error", None)
    ss.setdefault("load_warnings", [])  # the library's DataWarnings from the last upload
    ss.setdefault("new_radius", DEFAULT_RADIUS_M)
    ss.setdefault("releases", {})  # setting key -> (token, Release): drawn once, kept
    ss.setdefault("ledgers", {})  # (data name, uid) -> ReleaseLedger of downloaded releases
    # base map chosen for this session: offline unless the user asks for street tiles (or the
    # page was opened with ?tiles=osm|none); kept outside any widget so page switches keep it
    ss.setdefault("base_map", BASE_MAP_FROM_QUERY.get(st.query_params.get("tiles", ""), "none"))


def set_data(df: pd.DataFrame, name: str) -> None:
    """Replace the loaded trajectories (places are kept: they are locations, not data)."""
    st.session_state.df = df
    st.session_state.data_name = name
    st.session_state.load_warnings = []  # a new load reports its own repairs
    st.session_state.data_token = f"{next(_token)}:{name}:{len(df)}"


def places() -> list[dict[str, Any]]:
    return st.session_state.places


def place_tuples() -> tuple[tuple[float, float, float, str], ...]:
    """Places as hashable (lat, lon, place_radius_m, name) tuples, for cache keys and library
    calls."""
    return tuple(
        (float(p["lat"]), float(p["lon"]), float(p["place_radius_m"]), str(p["name"]))
        for p in places()
    )


def _unique_name(base: str) -> str:
    names = {p["name"] for p in places()}
    if base not in names:
        return base
    for i in itertools.count(2):
        if f"{base} {i}" not in names:
            return f"{base} {i}"
    raise AssertionError("unreachable")


def add_place(
    lat: float, lon: float, place_radius_m: float | None = None, name: str | None = None
) -> str:
    """Append a place (a unique name is chosen if none given); returns its name and selects it."""
    name = _unique_name(name or default_name())
    radius = float(place_radius_m if place_radius_m is not None else st.session_state.new_radius)
    lat, lon = round(float(lat), 6), round(float(lon), 6)
    places().append({"name": name, "lat": lat, "lon": lon, "place_radius_m": radius})
    st.session_state.selected = name
    st.session_state.editor_version += 1
    st.session_state.last_error = None
    return name


def default_name() -> str:
    """The first places are called Home and Clinic (what the tour uses), then Place N."""
    taken = {p["name"] for p in places()}
    for name in ("Home", "Clinic"):
        if name not in taken:
            return name
    return f"Place {len(places()) + 1}"


def select_place(name: str) -> None:
    """Select an existing place (drawn in the selection colour, offered for removal)."""
    st.session_state.selected = name
    st.session_state.editor_version += 1


def on_map_click() -> None:
    """The map's on_click callback: select the clicked place, or add a place where the map was
    clicked.

    The map (:mod:`dashboard.map_element`) sends ``{"event": "place_click", "name", "lat",
    "lon"}`` for a click on a place circle and ``{"event": "map_click", "lat", "lon"}`` for any
    other click. A click on a circle, or anywhere inside a place's radius, selects that place;
    only a click outside every place adds one, so clicking a place never stacks a duplicate on
    it. A circle click naming no place (drawn before a rename) counts as a click at its
    position. A malformed message or a position off the globe changes nothing.
    """
    data = st.session_state.get(MAP_KEY) or {}
    click = map_view.parse_click(data.get("click") if hasattr(data, "get") else None)
    if click is None:
        return
    if click.place is not None and any(p["name"] == click.place for p in places()):
        select_place(click.place)
        return
    if click.lat is None or click.lon is None:
        return
    inside = maps.place_at(places(), click.lat, click.lon)
    if inside is not None:
        select_place(inside)
    else:
        add_place(click.lat, click.lon)


def remove_selected() -> None:
    name = st.session_state.selected
    st.session_state.places = [p for p in places() if p["name"] != name]
    st.session_state.selected = None
    st.session_state.editor_version += 1


def clear_places() -> None:
    st.session_state.places = []
    st.session_state.selected = None
    st.session_state.editor_version += 1


def editor_key() -> str:
    return f"places_editor_{st.session_state.editor_version}"


def apply_table(edited: pd.DataFrame) -> bool:
    """Apply the places table as edited by the user (rename, radius, deleted rows).

    Rows are matched to places by index (the editor keeps the original index). An empty or
    duplicate name or a radius that is not a positive number is refused with a message.
    Returns True if the places changed.
    """
    old = places()
    new = []
    refused = None
    for i, row in edited.iterrows():
        if not 0 <= int(i) < len(old):
            continue
        p = dict(old[int(i)])
        name = str(row.get("name") or "").strip()
        if name and name != p["name"]:
            if any(q["name"] == name for q in old):
                refused = f"Place name {name!r} is already used; not renamed."
            else:
                if st.session_state.selected == p["name"]:
                    st.session_state.selected = name
                p["name"] = name
        elif not name:
            refused = "A place needs a name; not renamed."
        try:
            radius = float(row.get("place_radius_m"))
        except (TypeError, ValueError):
            radius = float("nan")
        if radius > 0:
            p["place_radius_m"] = radius
        elif radius != p["place_radius_m"]:
            refused = "A place radius must be a positive number of metres."
        new.append(p)
    if refused:
        st.session_state.last_error = refused
    if new == old and not refused:
        return False
    if st.session_state.selected not in {p["name"] for p in new}:
        st.session_state.selected = None
    st.session_state.places = new
    st.session_state.editor_version += 1
    return True


def replace_places(new: list[dict[str, Any]]) -> None:
    st.session_state.places = new
    st.session_state.selected = None
    st.session_state.editor_version += 1


def report_error(err: LmdkError | Exception) -> None:
    """Remember a library error message for display (the previous data and places stay).

    The message stays on the page until dismissed or until a later action succeeds.
    """
    st.session_state.last_error = str(err)


def dismiss_error() -> None:
    st.session_state.last_error = None


# --------------------------------------------------------------------------- releases


def kept_release(key: Hashable, draw: Callable[[], Any]) -> Any:
    """The release drawn for ``key`` (settings, places, data) in this session, drawing it with
    ``draw()`` (fresh randomness) the first time. Reruns never redraw; a new setting draws new
    noise. Only the last :data:`KEPT_RELEASES` settings are kept."""
    kept: dict = st.session_state.releases
    if key in kept:
        kept[key] = kept.pop(key)  # most recently used last
        return kept[key][1]
    release = draw()
    kept[key] = (secrets.token_hex(8), release)
    while len(kept) > KEPT_RELEASES:
        kept.pop(next(iter(kept)))
    return release


def release_token(release: Any) -> str | None:
    """The session's identifier of a kept release (the same draw has the same token)."""
    for token, rel in st.session_state.releases.values():
        if rel is release:
            return token
    return None


def ledger(person: Hashable) -> ReleaseLedger:
    """The releases of ``person``'s data downloaded in this session."""
    return st.session_state.ledgers.get(person, ReleaseLedger())


def record_download(person: Hashable, token: str, release: Any, label: str) -> None:
    """download_button callback: the release left the page; compose it into the ledger."""
    st.session_state.ledgers[person] = ledger(person).add(release, key=token, label=label)
