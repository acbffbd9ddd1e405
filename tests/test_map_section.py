"""The map section under AppTest: base-map choice, click resolution, legend and suggestions.

The map component is replaced by test_app.FakeMap, which records each view drawn and delivers
the messages the map's front end sends (``map_click`` with a position; ``place_click`` with the
circle's name and the click's position).
"""

from __future__ import annotations

import re

import pytest
from apptest_helpers import APP, HOME_STAY, TIMEOUT, FakeMap, add_place_by_click, clicked, run
from streamlit.testing.v1 import AppTest

import dashboard.map_section as map_section
from lmdk_core import map_view, maps, stays
from lmdk_core import places as pl
from lmdk_core.errors import ParameterError
from lmdk_core.geo import offset_points


def _tiles(fake) -> str:
    return fake.view["tiles"]


@pytest.fixture
def app(fake_map):
    return run(AppTest.from_file(APP, default_timeout=TIMEOUT))  # no ?tiles: the real first run


@pytest.fixture(scope="module")
def first_real():
    """(AppTest, FakeMap): ``app`` as it is after its first run, one per module, for the tests
    that only read it (they never click, set a widget or run it: a test that does takes
    ``app``)."""
    with pytest.MonkeyPatch.context() as mp:
        fake = FakeMap()
        mp.setattr(map_section.map_element, "show", fake)
        yield run(AppTest.from_file(APP, default_timeout=TIMEOUT)), fake


def test_offline_by_default_with_context_one_click_street_map_kept_across_pages(app, fake_map):
    assert _tiles(fake_map) == ""  # first load: no tile server is asked for anything
    assert fake_map.view["context"]["features"]  # offline bearings
    note = " ".join(c.value for c in app.caption)
    assert "nothing leaves this machine" in note
    street = next(b for b in app.button if b.label == map_section.STREET_MAP_LABEL)
    street.click()
    run(app)
    assert _tiles(fake_map) == map_view.OSM_TILES
    assert app.radio(key="tiles_choice").value == "OpenStreetMap"
    # the choice survives a page switch (the sidebar radio is not drawn there) and back
    app.switch_page("page_population.py")
    run(app)
    assert app.session_state["base_map"] == "osm"
    assert "tiles_choice" not in app.session_state  # Streamlit dropped the radio's own state
    # back to My trace (a callable page: AppTest.switch_page takes files only, so by its hash)
    app._page_hash = next(h for h, info in app._registered_pages.items()
                          if info.get("page_name") == "My trace")
    run(app)
    assert app.radio(key="tiles_choice").value == "OpenStreetMap"
    assert _tiles(fake_map) == map_view.OSM_TILES
    back = next(b for b in app.button if b.label.startswith("Back to the offline map"))
    back.click()
    run(app)
    assert _tiles(fake_map) == ""


@pytest.mark.parametrize("query, tiled", [("osm", True), ("none", False)])
def test_query_parameter_sets_the_first_base_map(fake_map, query, tiled):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["tiles"] = query
    run(at)
    assert bool(_tiles(fake_map)) is tiled


def test_uploaded_data_gets_no_sample_context(app, fake_map):
    app.session_state["data_name"] = "my_trace.csv"  # what the data section records for a file
    run(app)
    assert fake_map.view["context"] is None


def _names(app) -> list[str]:
    return [p["name"] for p in app.session_state["places"]]


def test_click_on_a_circle_or_inside_a_place_selects_it_never_adds_a_duplicate(
        app_home, fake_map, home):
    app = app_home  # alice's home marked as a click there leaves it (test_app.py)
    far = offset_points(home[0], home[1], 2000.0, 0.0)
    add_place_by_click(app, fake_map, float(far[0]), float(far[1]))
    assert _names(app) == [HOME_STAY, "Place 2"] and app.session_state["selected"] == "Place 2"
    # a click on Home's circle where its stroke lies just outside the 100 m radius: the
    # circle's click names Home
    edge = offset_points(home[0], home[1], 102.0, 0.0)
    fake_map.click_object(HOME_STAY, float(edge[0]), float(edge[1]))
    clicked(app, fake_map)
    assert _names(app) == [HOME_STAY, "Place 2"] and app.session_state["selected"] == HOME_STAY
    # a later plain click outside every place adds one
    app.session_state["selected"] = "Place 2"
    away = offset_points(home[0], home[1], 0.0, 900.0)
    add_place_by_click(app, fake_map, float(away[0]), float(away[1]))
    assert _names(app) == [HOME_STAY, "Place 2", "Place 3"]
    # a plain map click 60 m from Home's centre (radius 100 m) selects Home
    app.session_state["selected"] = "Place 2"
    near = offset_points(home[0], home[1], 0.0, -60.0)
    add_place_by_click(app, fake_map, float(near[0]), float(near[1]))
    assert _names(app) == [HOME_STAY, "Place 2", "Place 3"]
    assert app.session_state["selected"] == HOME_STAY
    # just outside the radius: a new place
    out = offset_points(home[0], home[1], 0.0, -130.0)
    add_place_by_click(app, fake_map, float(out[0]), float(out[1]))
    assert _names(app) == [HOME_STAY, "Place 2", "Place 3", "Place 4"]


def test_click_on_a_circle_no_place_has_any_more_falls_back_to_the_position(
        app_home, fake_map, home):
    """A circle drawn before a rename or removal, clicked: its position decides."""
    app = app_home  # alice's home marked as a click there leaves it (test_app.py)
    far = offset_points(home[0], home[1], 3000.0, 0.0)
    fake_map.click_object("Old name", float(far[0]), float(far[1]))
    clicked(app, fake_map)
    assert _names(app) == [HOME_STAY, "Place 2"]
    fake_map.click_object("Old name", *home)
    clicked(app, fake_map)
    assert _names(app) == [HOME_STAY, "Place 2"] and app.session_state["selected"] == HOME_STAY


MALFORMED = [None, {"event": "map_click", "lat": 91.0, "lon": 116.3},
             {"event": "place_click", "name": ["Home"]}]
"""One message of each kind the page must ignore (not a dict; a position off the globe; a place
click with no usable name): each takes the same path through the page (map_view.parse_click gives
None, on_map_click returns), and tests/test_map_view.py checks every malformed form against
parse_click itself, so the page is not run once per form."""


def test_malformed_map_messages_change_nothing(app_home, fake_map, home):
    app = app_home  # alice's home marked as a click there leaves it (test_app.py)
    before = [dict(p) for p in app.session_state["places"]]
    for message in MALFORMED:
        fake_map.pending.append(message)
        clicked(app, fake_map)
        assert app.session_state["places"] == before, message
    # the same page still takes a good click
    add_place_by_click(app, fake_map, home[0] + 0.02, home[1])
    assert len(app.session_state["places"]) == 2


def test_unwrapped_longitude_from_leaflet_is_wrapped(app, fake_map, home):
    """Leaflet reports longitudes past ±180° after panning across the antimeridian."""
    add_place_by_click(app, fake_map, home[0], home[1] - 360.0)
    (place,) = app.session_state["places"]
    assert place["lon"] == pytest.approx(home[1], abs=1e-6)


def test_legend_caption_and_help_texts_use_the_drawn_colours(first_real):
    app, fake_map = first_real
    captions = " ".join(c.value for c in app.caption)
    for entry in maps.LEGEND:
        assert entry.text() in captions
    toggle = app.toggle(key="show_release")
    release = maps.legend_entry("released")
    assert f"{release.colour_word} {release.mark}" in toggle.proto.help
    assert "dashed" not in toggle.proto.help and "dashed" not in captions
    # the map draws each layer in the legend's colour (hollow rings: tests/test_browser_map.py)
    colours = fake_map.view["colours"]
    for layer, what in [("track", "true"), ("landmark", "landmark timestamps"),
                        ("place", "landmark place"), ("selected", "selected"),
                        ("released", "released"), ("dummy", "dummy"), ("context", "offline")]:
        assert colours[layer] == maps.legend_entry(what).colour
    assert fake_map.view["released"]


def test_suggestion_buttons_say_where_and_match_the_count(first_real, sample):
    app, _ = first_real
    expander = next(e for e in app.expander if e.label.startswith("Suggested places"))
    buttons = [b for b in app.button if b.label.startswith("Add:")]
    assert expander.label.endswith(f"({len(buttons)})")
    alice = sample[sample.uid == sample.uid.iloc[0]]
    cands = stays.suggest_places(alice).head(map_section.SUGGESTIONS_SHOWN)
    assert len(buttons) == len(cands)
    for b, row in zip(buttons, cands.itertuples(index=False), strict=True):
        assert b.label.startswith("Add: near ")
        assert f"radius {row.suggested_radius_m:,.0f} m" in b.label
        assert f"{row.visits} visit" in b.label
    # the longest stay of alice is her home, named by the sample's context
    assert "wudaokou home" in buttons[0].label


# ---- issue 27: places without the mouse; suggestions told apart and named neutrally


@pytest.mark.parametrize("text, expected", [
    ("39.98, 116.31", (39.98, 116.31)), ("39.98 116.31", (39.98, 116.31)),
    ("39.98° N, 116.31° W", (39.98, -116.31)), ("33.9° S; 18.4° E", (-33.9, 18.4)),
    ("-33.9,18.4", (-33.9, 18.4)),
])
def test_parse_lat_lon_reads_what_people_type(text, expected):
    assert pl.parse_lat_lon(text) == pytest.approx(expected)


@pytest.mark.parametrize("text, reason", [
    ("", "type a latitude and a longitude"), ("home", "'home' is not a number"),
    ("91, 10", "latitude 91.0 outside [-90, 90]"), ("10, 181", "longitude 181.0 outside"),
    ("1, 2, 3", "expected two numbers"), ("nan, 3", "latitude nan outside"),
])
def test_parse_lat_lon_says_what_is_wrong(text, reason):
    with pytest.raises(ParameterError, match=re.escape(reason)):
        pl.parse_lat_lon(text)


def test_typed_and_listed_places_are_added_with_clear_errors(app, fake_map, home):
    app.text_input(key=map_section.COORDS_KEY).set_value("100, 116.3")
    app.button(key="coords_add").click()
    run(app)
    assert app.session_state["places"] == []
    assert any("latitude 100.0 outside" in e.value for e in app.error)
    app.text_input(key=map_section.COORDS_KEY).set_value(f"{home[0]:.6f}, {home[1]:.6f}")
    app.button(key="coords_add").click()
    run(app)
    (place,) = app.session_state["places"]
    assert (place["lat"], place["lon"]) == pytest.approx(home, abs=1e-6)
    assert place["place_radius_m"] == app.number_input(key="new_radius").value
    assert not any("Could not add" in e.value for e in app.error)
    # the same position again selects the place rather than stacking a second one
    app.button(key="coords_add").click()
    run(app)
    assert len(app.session_state["places"]) == 1
    # the list of suggested places: the second one, with its radius and a neutral name
    box = app.selectbox(key=map_section.LISTED_KEY)
    box.set_value(box.options[1])
    app.button(key="listed_add").click()
    run(app)
    added = app.session_state["places"][-1]
    assert len(app.session_state["places"]) == 2
    assert added["name"].startswith("Stay near ")


def test_suggestion_labels_are_told_apart():
    import pandas as pd

    rows = pd.DataFrame({"lat": [40.0101, 40.0149, 40.0101], "lon": [116.3001, 116.3003, 116.3],
                         "suggested_radius_m": [50.0] * 3, "visits": [3] * 3,
                         "total_duration_s": [7200.0] * 3})
    labels = map_section.suggestion_labels(rows, None)
    assert len(set(labels)) == 3
    assert "40.0101° N, 116.3001° E" in labels[0]
    # with room, two decimals are kept
    assert "40.01° N" in map_section.suggestion_labels(rows.head(1), None)[0]
