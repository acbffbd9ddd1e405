"""The map (an in-page Leaflet component) with click-to-add landmark places, the places table
and suggested places."""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import streamlit as st

from lmdk_core import map_view, maps, sample
from lmdk_core.errors import LmdkError

from . import compute, map_element, state
from .formatting import fmt_distance, fmt_duration, plain_text

TILE_CHOICES = {
    "None (no outside requests)": "none",
    "OpenStreetMap": "osm",
    "Custom tile URL": "custom",
}
CODE_TO_CHOICE = {code: label for label, code in TILE_CHOICES.items()}
STREET_MAP_LABEL = "Show street map"
DEFAULT_TILE_URL = "http://127.0.0.1:8080/{z}/{x}/{y}.png"
BASE_POINTS = 120  # true points drawn as dots on the line (display only, evenly thinned)
OVERLAY_POINTS = 150  # markers per layer: landmark timestamps, dummies, released points
MAP_HEIGHT = 400
"""Map height in px: with the compact page top the whole map is in view at 1280x720 and up (a
map partly below the fold scrolled on press and the click landed hundreds of metres off)."""
SUGGESTIONS_SHOWN = 6


def _use_street_map() -> None:
    state.set_base_map("osm", CODE_TO_CHOICE["osm"])


def _use_offline_map() -> None:
    state.set_base_map("none", CODE_TO_CHOICE["none"])


def map_settings() -> str:
    """Base-map controls (sidebar); returns 'none', 'osm' or a custom tile URL.

    The choice lives in ``st.session_state.base_map`` (set by :func:`state.init`: offline unless
    ``?tiles=osm``), so it survives reruns and page switches; the radio only mirrors it.
    """
    ss = st.session_state
    # first run: the radio shows the session's base map (page switches: state.restore_widgets)
    state.default_widget("tiles_choice", CODE_TO_CHOICE.get(ss.base_map, CODE_TO_CHOICE["none"]))
    choice = st.radio(
        "Base map",
        list(TILE_CHOICES),
        key="tiles_choice",
        help="Map tiles are fetched from a tile server as you pan and zoom: that server learns "
        "which area you are looking at (likely your own home). 'None' (the default) makes no "
        "outside request at all; a custom URL lets you use a tile server you trust or host "
        "yourself.",
    )
    state.set_base_map(TILE_CHOICES[choice])
    if ss.base_map == "custom":
        state.default_widget("tile_url", DEFAULT_TILE_URL)
        return st.text_input(
            "Tile URL",
            key="tile_url",
            help="An XYZ tile URL containing {z}, {x} and {y}, e.g. a self-hosted tile server.",
        )
    if ss.base_map == "osm":
        st.caption("Tiles come from tile.openstreetmap.org, which sees the area you view.")
    return ss.base_map


def _base_map_choice(tiles: str) -> None:
    """The privacy note and the one-click switch, beside the map."""
    if tiles == "none":
        st.caption("🔒 **Offline map**: nothing leaves this machine. A street map loads tiles "
                   "from openstreetmap.org, which sees the area you view.")
        st.button(STREET_MAP_LABEL, on_click=_use_street_map, key="street_map_on",
                  help="Loads map tiles from tile.openstreetmap.org for this session; that "
                  "server learns which area you look at. Switch back at any time.")
    elif tiles == "osm":
        st.caption("🌐 **Street map on**: tile.openstreetmap.org sees the area you view.")
        st.button("Back to the offline map", on_click=_use_offline_map,
                  key="street_map_off", help="Stop fetching map tiles: no outside requests.")


@functools.lru_cache(maxsize=1)
def _sample_context() -> dict[str, Any]:
    return sample.load_sample_context()


def context_for_data() -> dict[str, Any] | None:
    """The offline bearings (schematic roads, named places) when the bundled sample is loaded;
    None for a user's own data (the sample's invented places would mislead there)."""
    name = st.session_state.get("data_name") or ""
    if not name.startswith("bundled sample"):
        return None
    try:
        return _sample_context()
    except LmdkError:
        return None


def render(traj: pd.DataFrame, key: Any, tiles: str, release: Any | None, mask: np.ndarray) -> None:
    """The map (left) and the landmark places panel (right)."""
    st.header("2 · Landmark places")
    st.caption(
        "**Click the map** to mark a place you want protected (home, clinic…); click inside a "
        "place to select it."
    )
    context = context_for_data()
    left, right = st.columns([3, 2], gap="medium")
    with left:
        dummies = None
        if release is not None and np.sum(release.landmarks) > mask.sum():  # section 2b is on
            dummies = np.asarray(release.landmarks, dtype=bool) & ~mask
        view = dict(places=state.places(), selected=st.session_state.selected,
                    landmarks=mask, dummies=dummies, release=release,
                    context=context, max_markers=OVERLAY_POINTS, track_points=BASE_POINTS,
                    height=f"{MAP_HEIGHT}px")
        # every input of the view: a rerun that changed none of them (a widget elsewhere)
        # sends the kept view instead of thinning and listing the points again
        ck = (key, tiles, state.place_tuples(), view["selected"], compute.mask_digest(mask),
              None if dummies is None else compute.mask_digest(dummies),
              None if release is None else compute.release_token(release), context is not None)
        try:
            shown = state.kept_latest(VIEW_KEY, ck, lambda: map_view.map_view(traj, tiles=tiles,
                                                                              **view))
        except LmdkError as err:  # invalid custom URL: fall back to no tiles, say why
            st.error(plain_text(err))
            shown = map_view.map_view(traj, tiles="none", **view)
        # only a click reruns the page (pan and zoom do not), and loading the map does not
        map_element.show(shown, key=state.MAP_KEY, on_click=state.on_map_click)
        st.caption("Every timestamp within a place's radius is a *landmark*. Legend: "
                   + maps.legend_text(context=context is not None))
    with right:
        _base_map_choice(tiles)
        _places_panel(traj, key, context)


VIEW_KEY = "map_view"
"""The map's latest view (lmdk_core.map_view.map_view), kept in this session with its inputs
(:func:`render`); the page never mutates it."""


class Offer(NamedTuple):
    """One suggested place as the panel offers it (button, list entry, name of a new place)."""

    lat: float
    lon: float
    radius_m: float
    name: str
    label: str


OFFERS_KEY = "suggestion_offers"


def offers(traj: pd.DataFrame, key: Any, context: dict[str, Any] | None
           ) -> tuple[tuple[Offer, ...], int]:
    """The :data:`SUGGESTIONS_SHOWN` longest stays as offered (names and labels told apart),
    and how many stays there are: worked out once per selection in this session (the labels
    look up the sample's named places for every suggestion), not on every rerun."""
    def make() -> tuple[tuple[Offer, ...], int]:
        cands = compute.suggestions(key, traj)
        shown = cands.head(SUGGESTIONS_SHOWN)
        labels = suggestion_labels(shown, context)
        return tuple(Offer(float(r.lat), float(r.lon), float(r.suggested_radius_m),
                           suggestion_name(r, context), label)
                     for r, label in zip(shown.itertuples(index=False), labels,
                                         strict=True)), len(cands)

    return state.kept_latest(OFFERS_KEY, (key, context is not None), make)


def _places_panel(traj: pd.DataFrame, key: Any, context: dict[str, Any] | None) -> None:
    shown, _ = offers(traj, key, context)
    # a click or a typed position on a suggested place takes that suggestion's name
    state.set_suggested([{"name": o.name, "lat": o.lat, "lon": o.lon,
                          "place_radius_m": o.radius_m} for o in shown])
    places = state.places()
    st.number_input(
        "Radius for new places (m)",
        min_value=10.0,
        max_value=5000.0,
        step=10.0,
        key="new_radius",
        help="Radius of the circle around a clicked point; timestamps inside it are landmarks. "
        "Change a place's radius in the table below.",
    )
    _keyboard_entry(traj, key, context)
    if places:
        mask, counts = compute.landmarks(key, traj, state.place_tuples())
        table = pd.DataFrame(places)[["name", "place_radius_m", "lat", "lon"]]
        table["landmarks"] = counts
        edited = st.data_editor(
            table,
            key=state.editor_key(),
            num_rows="delete",
            hide_index=True,
            disabled=["lat", "lon", "landmarks"],
            width="content",  # the column widths below, not stretched past the panel
            # three columns fit the panel at 1280 px; each centre is under the table instead
            column_order=("name", "place_radius_m", "landmarks"),
            column_config={
                "name": st.column_config.TextColumn(
                    "Name", help="Rename a place (e.g. Home, Clinic)."
                ),
                "place_radius_m": st.column_config.NumberColumn(
                    "Radius (m)", min_value=1.0,
                    help="Landmark radius around the place, metres.",
                ),
                "landmarks": st.column_config.NumberColumn(
                    "Landmarks", format="localized",
                    help="Landmark timestamps: timestamps of this trajectory inside the place.",
                ),
            },
        )
        total = int(mask.sum())
        centres = "; ".join(f"{p['name']} at {maps.format_lat_lon(p['lat'], p['lon'], 5)}"
                            for p in places)
        st.caption(f"**{total:,} landmark timestamps** in {len(places)} "
                   f"place{'s' if len(places) != 1 else ''}, of {len(traj):,} in this trace. "
                   f"Centres: {centres}.")
        if state.apply_table(edited):
            st.rerun()  # redraw map, charts and table with the edited places
        names = [p["name"] for p in places]
        sel = st.session_state.selected
        c1, c2 = st.columns(2)
        c1.selectbox(
            "Selected place",
            names,
            index=names.index(sel) if sel in names else None,
            key=f"select_{st.session_state.editor_version}",
            on_change=_on_select,
            placeholder="click a circle",
            help="The selected place is drawn in orange; remove it with the button.",
        )
        c2.button(
            "Remove selected",
            on_click=state.remove_selected,
            disabled=sel not in names,
            help="Delete the selected place (its timestamps stop being landmarks).",
        )
        state.sync_rename_field()
        st.text_input(
            "Name of the selected place",
            key=state.RENAME_KEY,
            disabled=sel not in names,
            on_change=state.rename_selected,
            placeholder="select a place to rename it",
            help="Type a new name and press Enter (or Tab away) to rename the selected place; "
            "its position, radius and landmarks stay. Names are unique. The Name column of "
            "the table renames too.",
        )
        refused = state.get(state.PLACES_ERROR_KEY)
        if refused:
            st.error(plain_text(refused), icon="⚠️")
        st.button(
            "Remove all places", on_click=state.clear_places, help="Start again with no places."
        )
    else:
        st.info("No landmark places yet: click the map, or add a suggested place below.")
    _suggestions(traj, key, context)


def _on_select() -> None:
    """Select the chosen place. An empty value (the widget being re-created) keeps the selection."""
    chosen = st.session_state.get(f"select_{st.session_state.editor_version}")
    if chosen is not None:
        state.select_place(chosen)


def suggestion_label(row: Any, context: dict[str, Any] | None, digits: int = 2) -> str:
    """'Add: near <named place or lat/lon> · 82 h over 7 visits · radius 40 m'."""
    radius = float(row.suggested_radius_m)
    visits = int(row.visits)
    return (f"Add: near {_where(row, context, digits)} · "
            f"{fmt_duration(float(row.total_duration_s))} over "
            f"{visits:,} visit{'s' if visits != 1 else ''} · radius {fmt_distance(radius)}")


def _where(row: Any, context: dict[str, Any] | None, digits: int = 2) -> str:
    near = maps.named_place_near(context, float(row.lat), float(row.lon),
                                 within_m=float(row.suggested_radius_m))
    return near if near is not None else maps.format_lat_lon(float(row.lat), float(row.lon),
                                                             digits)


def suggestion_labels(rows: pd.DataFrame, context: dict[str, Any] | None) -> list[str]:
    """One label per suggested place, told apart: coordinates get more decimals (up to 5,
    about 1 m) until no two labels are the same."""
    items = list(rows.itertuples(index=False))
    labels: list[str] = []
    for digits in range(2, 6):
        labels = [suggestion_label(r, context, digits) for r in items]
        if len(set(labels)) == len(labels):
            break
    return labels


def suggestion_name(row: Any, context: dict[str, Any] | None) -> str:
    """The name a suggested place gets: the named place it lies at (offline bearings), else
    'Stay near <lat, lon>' (neutral: nothing is guessed about what the place is)."""
    return f"Stay near {_where(row, context, 4)}"


COORDS_KEY = "coords_text"
COORDS_ERROR_KEY = "coords_error"
LISTED_KEY = "listed_place"


def _keyboard_entry(traj: pd.DataFrame, key: Any, context: dict[str, Any] | None) -> None:
    """Add a place without the mouse: typed coordinates, or a choice from the suggested
    places. Enter in the field (or the button) adds; focus stays where it was."""
    with st.form("add_place_form", border=False, enter_to_submit=True):
        c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
        c1.text_input("Add a place at (latitude, longitude)", key=COORDS_KEY,
                      placeholder="e.g. 39.9800, 116.3100",
                      help="Degrees, e.g. 39.98, 116.31 or 39.98° N, 116.31° E. The place gets "
                      "the radius above; a position inside a place selects it.")
        c2.form_submit_button("Add", key="coords_add", on_click=state.add_typed_place,
                              args=(COORDS_KEY, COORDS_ERROR_KEY),
                              help="Mark a place at the typed position (Enter in the field "
                              "does the same).")
    error = state.get(COORDS_ERROR_KEY)
    if error:
        st.error(plain_text(f"Could not add a place: {error}."), icon="⚠️")
    shown, _ = offers(traj, key, context)
    if not shown:
        return
    options = {o.label.removeprefix("Add: "): (o.lat, o.lon, o.radius_m, o.name) for o in shown}
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    c1.selectbox("Or add a suggested place (long stays)", list(options), index=None,
                 key=LISTED_KEY, placeholder="choose a long stay",
                 help="Long stays are where landmarks usually are (home, work, clinic).")
    c2.button("Add", key="listed_add", on_click=state.add_listed_place,
              args=(LISTED_KEY, options),
              help="Mark the chosen long stay as a place, with its suggested radius.")


def _suggestions(traj: pd.DataFrame, key: Any, context: dict[str, Any] | None) -> None:
    shown, total = offers(traj, key, context)
    title = f"Suggested places from long stays ({len(shown)})"
    with st.expander(title, expanded=not state.places()):
        if not shown:
            st.caption("No stay long enough was found in this time range.")
            return
        if total > len(shown):
            st.caption(f"The {len(shown)} longest of {total:,} stays.")
        taken = {(round(p["lat"], 4), round(p["lon"], 4)) for p in state.places()}
        for i, o in enumerate(shown):
            st.button(
                o.label,
                key=f"suggest_{i}",
                on_click=state.add_place,
                args=(o.lat, o.lon, o.radius_m, o.name),
                disabled=(round(o.lat, 4), round(o.lon, 4)) in taken,
                help="Long stays are where landmarks usually are (home, work, clinic). "
                "One click adds a place there, with the radius shown: it covers the visits' "
                "GPS scatter (you can change it in the table).",
            )
