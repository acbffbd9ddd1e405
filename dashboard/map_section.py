"""Map (streamlit-folium) with click-to-add landmark places, the places table and suggestions."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import streamlit as st
from streamlit_folium import st_folium

from lmdk_core import maps

from . import compute, state

TILE_CHOICES = {
    "OpenStreetMap": "osm",
    "None (no outside requests)": "none",
    "Custom tile URL": "custom",
}
RETURNED = ["last_clicked", "last_object_clicked_tooltip", "last_object_clicked_count"]
"""Only clicks rerun the page (pan and zoom do not)."""
BASE_POINTS = 120  # downsampled true points on the base map (each marker costs ~0.7 ms per rerun)
OVERLAY_POINTS = 150


def _default_tiles() -> str:
    """OpenStreetMap unless the page was opened with ?tiles=none (tests, strict offline use)."""
    wanted = st.query_params.get("tiles", "osm")
    for label, code in TILE_CHOICES.items():
        if code == wanted:
            return label
    return "OpenStreetMap"


def map_settings() -> str:
    """Base-map controls (sidebar); returns 'none', 'osm' or a custom tile URL."""
    if "tiles_choice" not in st.session_state:
        st.session_state.tiles_choice = _default_tiles()
    choice = st.radio(
        "Base map",
        list(TILE_CHOICES),
        key="tiles_choice",
        help="Map tiles are fetched from a tile server as you pan and zoom: that server learns "
        "which area you are looking at (likely your own home). 'None' makes no outside "
        "request at all; a custom URL lets you use a tile server you trust or host yourself.",
    )
    if TILE_CHOICES[choice] == "custom":
        url = st.text_input(
            "Tile URL",
            value="http://127.0.0.1:8080/{z}/{x}/{y}.png",
            key="tile_url",
            help="An XYZ tile URL containing {z}, {x} and {y}, e.g. a self-hosted tile server.",
        )
        return url
    if TILE_CHOICES[choice] == "osm":
        st.caption("Tiles come from tile.openstreetmap.org, which sees the area you view.")
    return TILE_CHOICES[choice]


def render(traj: pd.DataFrame, key: Any, tiles: str, release: Any | None, mask: np.ndarray) -> None:
    """The map (left) and the landmark places panel (right)."""
    st.header("2 · Landmark places")
    st.caption(
        "**Click the map** to mark a place you want protected (home, clinic…); click a circle to "
        "select it. Every timestamp within a place's radius is a *landmark*. "
        "Legend: blue = true trajectory, pink = landmark timestamps, green circle = place "
        "(orange = selected), hollow red = released (perturbed) locations, light blue = dummy "
        "landmarks (only when hiding is on in section 2b; only you see which are dummies)."
    )
    left, right = st.columns([3, 2], gap="medium")
    with left:
        try:
            base = maps.base_map(traj, tiles=tiles, max_points=BASE_POINTS)
        except Exception as err:  # invalid custom URL: fall back to no tiles, say why
            st.error(str(err))
            base = maps.base_map(traj, tiles="none", max_points=BASE_POINTS)
        layers = [maps.place_layer(state.places(), selected=st.session_state.selected)]
        if mask.any():
            layers.append(maps.landmark_layer(traj, mask, max_points=OVERLAY_POINTS))
        if release is not None and np.sum(release.landmarks) > mask.sum():  # section 2b is on
            dummies = np.asarray(release.landmarks, dtype=bool) & ~mask
            layers.append(maps.landmark_layer(
                traj, dummies, max_points=OVERLAY_POINTS, name="Dummy landmarks (private view)",
                colour=maps.DUMMY_COLOUR))
        if release is not None:
            layers.append(maps.release_layer(release, max_points=OVERLAY_POINTS))
        st_folium(
            base,
            key=state.MAP_KEY,
            height=480,
            use_container_width=True,
            returned_objects=RETURNED,
            feature_group_to_add=layers,
            on_change=state.on_map_click,
        )
    with right:
        _places_panel(traj, key)


def _places_panel(traj: pd.DataFrame, key: Any) -> None:
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
    if places:
        _, counts = compute.landmarks(key, traj, state.place_tuples())
        table = pd.DataFrame(places)[["name", "place_radius_m", "lat", "lon"]]
        table["landmarks"] = counts
        edited = st.data_editor(
            table,
            key=state.editor_key(),
            num_rows="delete",
            hide_index=True,
            disabled=["lat", "lon", "landmarks"],
            column_config={
                "name": st.column_config.TextColumn(
                    "Name", help="Rename a place (e.g. Home, Clinic)."
                ),
                "place_radius_m": st.column_config.NumberColumn(
                    "Radius (m)", min_value=1.0, help="Landmark radius around the place, metres."
                ),
                "lat": st.column_config.NumberColumn(
                    "Lat", format="%.5f", help="Centre latitude (°)."
                ),
                "lon": st.column_config.NumberColumn(
                    "Lon", format="%.5f", help="Centre longitude (°)."
                ),
                "landmarks": st.column_config.NumberColumn(
                    "Landmark timestamps", help="Timestamps of this trajectory inside the place."
                ),
            },
        )
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
        st.button(
            "Remove all places", on_click=state.clear_places, help="Start again with no places."
        )
    else:
        st.info("No landmark places yet: click the map, or add a suggested place below.")
    _suggestions(traj, key)


def _on_select() -> None:
    """Select the chosen place. An empty value (the widget being re-created) keeps the selection."""
    chosen = st.session_state.get(f"select_{st.session_state.editor_version}")
    if chosen is not None:
        st.session_state.selected = chosen


def _suggestions(traj: pd.DataFrame, key: Any) -> None:
    cands = compute.suggestions(key, traj)
    title = f"Suggested places from long stays ({len(cands)})"
    with st.expander(title, expanded=not state.places()):
        if cands.empty:
            st.caption("No stay long enough was found in this time range.")
            return
        taken = {(round(p["lat"], 4), round(p["lon"], 4)) for p in state.places()}
        for i, row in enumerate(cands.head(6).itertuples(index=False)):
            hours = float(row.total_duration_s) / 3600
            label = (
                f"Add: {hours:.1f} h over {row.visits} visit(s), "
                f"r {row.suggested_radius_m:.0f} m"
            )
            st.button(
                label,
                key=f"suggest_{i}",
                on_click=state.add_place,
                args=(float(row.lat), float(row.lon), float(row.suggested_radius_m)),
                disabled=(round(row.lat, 4), round(row.lon, 4)) in taken,
                help="Long stays are where landmarks usually are (home, work, clinic). "
                "One click adds a place there, with a radius covering the visits' GPS scatter.",
            )
