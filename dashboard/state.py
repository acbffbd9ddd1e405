"""Per-session state of the dashboard and the callbacks that change it.

Everything a user creates (loaded trajectories, landmark places, selection, the releases drawn
for them and the ledger of releases downloaded) lives in ``st.session_state``; nothing is
shared between sessions. Callbacks run before the script body,
so a map click is applied before the page is drawn (no lost clicks, no one-click-late layers).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Hashable
from typing import Any

import pandas as pd
import streamlit as st

from lmdk_core import map_view, maps
from lmdk_core import places as pl
from lmdk_core.errors import LmdkError
from lmdk_core.session import ReleaseSettings, Session

MAP_KEY = "map"
BASE_MAP_FROM_QUERY = {"osm": "osm", "none": "none"}
"""``?tiles=`` values that set the session's first base map (tests and demos)."""
DEFAULT_RADIUS_M = 100.0

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
    # base map chosen for this session: offline unless the user asks for street tiles (or the
    # page was opened with ?tiles=osm|none); kept outside any widget so page switches keep it
    ss.setdefault("base_map", BASE_MAP_FROM_QUERY.get(st.query_params.get("tiles", ""), "none"))


def set_data(df: pd.DataFrame, name: str, *, files: list[str] | None = None,
             warnings: list[str] | None = None) -> None:
    """Replace the loaded trajectories (places are kept: they are locations, not data).

    ``files``: the names of the files read (shown in the sidebar); ``warnings``: the reader's
    repairs to show (a new load reports its own)."""
    st.session_state.df = df
    st.session_state.data_name = name
    st.session_state.data_files = list(files or [])
    st.session_state.load_warnings = list(warnings or [])
    st.session_state.data_token = f"{next(_token)}:{name}:{len(df)}"


def empty_uploader() -> None:
    """Give the uploader a new key, which empties it (a bad file would be read again)."""
    st.session_state.upload_version = st.session_state.get("upload_version", 0) + 1


def set_base_map(code: str, choice: str | None = None) -> None:
    """The session's base map (``"osm"``, ``"none"`` or ``"custom"``) and, from a callback, the
    selector's ``choice`` showing it."""
    st.session_state.base_map = code
    if choice is not None:
        set_widget("tiles_choice", choice)


def default_widget(name: str, value: Any) -> None:
    """Give a widget its first value (before it is drawn; an existing value stays)."""
    if name not in st.session_state:
        st.session_state[name] = value


def kept_dict(name: str) -> dict:
    """A per-session dict a section keeps its own results in (created on first use)."""
    return st.session_state.setdefault(name, {})


def kept_latest(name: str, ck: Any, make: Callable[[], Any]) -> Any:
    """``make()`` kept in this session under ``name`` while ``ck`` stays the same: the latest
    value only (a new ``ck`` replaces it), for work a rerun repeats unless its inputs changed.
    The value is shared, never mutated by the page."""
    kept = kept_dict(name)
    if "key" not in kept or kept["key"] != ck:
        kept.update(key=ck, value=make())
    return kept["value"]


def places() -> list[dict[str, Any]]:
    return st.session_state.places


def place_tuples() -> tuple[tuple[float, float, float, str], ...]:
    """Places as hashable (lat, lon, place_radius_m, name) tuples, for cache keys and library
    calls."""
    return tuple(
        (float(p["lat"]), float(p["lon"]), float(p["place_radius_m"]), str(p["name"]))
        for p in places()
    )


SUGGESTED_KEY = "suggested_places"
"""The suggested places shown on the page this run (dicts: name, lat, lon, place_radius_m),
kept by the map section so a click or a typed position on one is named after it."""
PLACES_ERROR_KEY = "places_error"
"""Why the last rename or table edit of the places was refused (shown in the places panel, so
nothing above the map moves); None once an edit succeeds."""


def set_suggested(suggested: list[dict[str, Any]]) -> None:
    """Remember the suggested places the page shows (see :data:`SUGGESTED_KEY`)."""
    st.session_state[SUGGESTED_KEY] = list(suggested)


def name_for(lat: float, lon: float, place_radius_m: float) -> str:
    """The name a place added at (``lat``, ``lon``) gets: that of the shown suggested place it
    matches (the new circle holds the suggestion's centre, or the position lies in the
    suggestion's circle; the nearest wins), else a neutral ``Place k``. Unique either way."""
    taken = [p["name"] for p in places()]
    suggested = [dict(s, place_radius_m=max(float(s["place_radius_m"]), place_radius_m))
                 for s in st.session_state.get(SUGGESTED_KEY) or []]
    match = maps.place_at(suggested, lat, lon)
    return pl.unique_place_name(match, taken) if match else pl.new_place_name(taken)


def add_place(
    lat: float, lon: float, place_radius_m: float | None = None, name: str | None = None
) -> str:
    """Append a place (named by :func:`name_for` if no name is given; a taken name gets a
    number); returns its name and selects it."""
    radius = float(place_radius_m if place_radius_m is not None else st.session_state.new_radius)
    lat, lon = round(float(lat), 6), round(float(lon), 6)
    taken = [p["name"] for p in places()]
    name = pl.unique_place_name(name, taken) if name else name_for(lat, lon, radius)
    places().append({"name": name, "lat": lat, "lon": lon, "place_radius_m": radius})
    st.session_state.selected = name
    st.session_state.editor_version += 1
    st.session_state.last_error = None
    st.session_state[PLACES_ERROR_KEY] = None
    return name


def rename_place(old: str, new: str) -> bool:
    """Give place ``old`` the name ``new`` (stripped); position, radius and selection stay.
    A refusal (empty or taken name) is kept under :data:`PLACES_ERROR_KEY`; True if renamed."""
    new = str(new or "").strip()
    if new == old or not any(p["name"] == old for p in places()):
        return False
    refused = pl.rename_refusal(old, new, [p["name"] for p in places()])
    st.session_state[PLACES_ERROR_KEY] = refused
    if refused:
        return False
    st.session_state.places = [dict(p, name=new) if p["name"] == old else p for p in places()]
    if st.session_state.selected == old:
        st.session_state.selected = new
    st.session_state.editor_version += 1
    return True


RENAME_KEY = "rename_place"
"""Widget key of the selected place's name field: one key for good, so the field keeps the
keyboard focus after a rename (a new key makes a new element)."""
_RENAME_FOR = "_rename_for"


def sync_rename_field() -> None:
    """Before the name field is drawn: it shows the selected place's name whenever the selection
    changed since it was last set (text being typed for the same place stays)."""
    ss = st.session_state
    selected = ss.get("selected")
    if RENAME_KEY not in ss or ss.get(_RENAME_FOR, object()) != selected:
        ss[RENAME_KEY] = selected or ""
        ss[_RENAME_FOR] = selected


def rename_selected() -> None:
    """on_change of the name field (:data:`RENAME_KEY`): rename the selected place to its text;
    a refused name puts the place's name back in the field (the reason is shown next to it)."""
    selected = st.session_state.get("selected")
    if selected is not None and not rename_place(selected,
                                                 st.session_state.get(RENAME_KEY) or ""):
        st.session_state[RENAME_KEY] = selected


def add_typed_place(text_key: str, error_key: str) -> None:
    """Add a place at the position typed in widget ``text_key`` (radius: ``new_radius``); a
    position that cannot be read leaves its reason in ``error_key`` (None once one is added)."""
    try:
        lat, lon = pl.parse_lat_lon(st.session_state.get(text_key) or "")
    except LmdkError as err:
        st.session_state[error_key] = str(err)
        return
    st.session_state[error_key] = None
    inside = maps.place_at(places(), lat, lon)
    if inside is not None:
        select_place(inside)
    else:
        add_place(lat, lon)


def add_listed_place(choice_key: str, options: dict[str, tuple[float, float, float, str]]
                     ) -> None:
    """Add the place chosen in widget ``choice_key``: ``options`` maps each label to
    ``(lat, lon, place_radius_m, name)``."""
    chosen = options.get(st.session_state.get(choice_key) or "")
    if chosen is not None:
        lat, lon, radius, name = chosen
        add_place(lat, lon, radius, name)


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
    duplicate name (:func:`lmdk_core.places.rename_refusal`) or a radius that is not a positive
    number is refused with a message under :data:`PLACES_ERROR_KEY`. Returns True if the places
    changed.
    """
    old = places()
    taken = [p["name"] for p in old]
    new = []
    refused = None
    for i, row in edited.iterrows():
        if not 0 <= int(i) < len(old):
            continue
        p = dict(old[int(i)])
        name = str(row.get("name") or "").strip()
        why = pl.rename_refusal(p["name"], name, taken)
        if why:
            refused = why
        elif name != p["name"]:
            if st.session_state.selected == p["name"]:
                st.session_state.selected = name
            taken = [name if t == p["name"] else t for t in taken]
            p["name"] = name
        try:
            radius = float(row.get("place_radius_m"))
        except (TypeError, ValueError):
            radius = float("nan")
        if radius > 0:
            p["place_radius_m"] = radius
        elif radius != p["place_radius_m"]:
            refused = "A place radius must be a positive number of metres."
        new.append(p)
    if new == old and not refused:
        return False
    st.session_state[PLACES_ERROR_KEY] = refused
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


# --------------------------------------------------------------------------- the session


SESSION_KEY = "lmdk_session"
"""Where the browser session's :class:`lmdk_core.session.Session` lives."""


def session() -> Session:
    """This browser session's accounted session (previews, real draws, ledgers, budgets): the
    same model the Jupyter explorer uses. Created on first use; never shared."""
    ss = st.session_state
    if SESSION_KEY not in ss:
        ss[SESSION_KEY] = Session(total_budget=DEFAULT_TOTAL_BUDGET)
    return ss[SESSION_KEY]


DEFAULT_TOTAL_BUDGET = 1.0
"""The total budget each person starts with (changed only with its own control, section 6)."""


def person(traj: pd.DataFrame) -> tuple[str | None, str]:
    """The ledger's identity of a selection: (what was loaded, the person's id)."""
    return (st.session_state.get("data_name"), str(traj["uid"].iloc[0]))


def draw_release(who: Hashable, traj: pd.DataFrame, mask: Any, settings: ReleaseSettings,
                 key: Hashable, allocation: Any = None) -> None:
    """Button callback: draw the real release for ``key`` (counted at once); a refusal or an
    error is shown as the page's message and changes nothing."""
    try:
        session().draw(who, traj, mask, settings, key=key, allocation=allocation)
    except LmdkError as err:
        report_error(err)
        return
    st.session_state.last_error = None


def draw_model(who: Hashable, traj: pd.DataFrame, key: Hashable, params: dict[str, Any]
               ) -> None:
    """Button callback: draw the DP correlation model for ``key`` (charged at once)."""
    try:
        session().dp_model(who, traj, key=key, **params)
    except LmdkError as err:
        report_error(err)


def record_download(drawn: Any) -> None:
    """download_button callback: a file of a real draw left the page (already counted)."""
    session().record_download(drawn)


def set_total_budget(who: Hashable, widget_key: str) -> None:
    """Button callback: the person's total budget becomes the value of ``widget_key``."""
    try:
        session().set_total_budget(who, total_budget=st.session_state.get(widget_key))
    except LmdkError as err:
        report_error(err)


# --------------------------------------------------------------------------- page switches

PERSISTENT = re.compile(
    r"^(source|uid_.*|range_.*|epsilon|scheme|radius_m|param_.*|interval_min|show_release|"
    r"smooth_release|"
    r"hide_(on|eps|gen|cap)|new_radius|tiles_choice|tile_url|loss_source|strength|"
    r"preset_cell_m|preset_extent_km|cell_m|eps_model|dp_(lat|lon|km|cell_m)|loss_separation|alpha|"
    r"use_bounded|release_bounded|compare_runs|story_private|loss_open|total_budget_input|"
    r"guide_trials)$"
)
"""Widget keys of the My trace page whose values survive a visit to another page."""
STORE_KEY = "widget_store"


def restore_widgets() -> None:
    """Before the page's widgets are drawn: give back the values Streamlit dropped while another
    page was shown (it deletes the state of widgets that a run does not draw)."""
    ss = st.session_state
    for name, value in ss.get(STORE_KEY, {}).items():
        if name not in ss:
            ss[name] = value


def save_widgets() -> None:
    """After the page's run: remember the values of its persistent widgets."""
    ss = st.session_state
    store = ss.setdefault(STORE_KEY, {})
    for name in list(ss.keys()):
        if isinstance(name, str) and PERSISTENT.match(name):
            store[name] = ss[name]


def set_widget(name: str, value: Any) -> None:
    """Set a widget's value from a callback (before the widget is drawn in the next run)."""
    st.session_state[name] = value
    st.session_state.setdefault(STORE_KEY, {})[name] = value


def put(name: str, value: Any) -> None:
    """Keep a non-widget value of the page (a record another section reads, a cached table)."""
    st.session_state[name] = value


def get(name: str, default: Any = None) -> Any:
    """A value kept with :func:`put` (or a widget's value)."""
    return st.session_state.get(name, default)


# ---- Patterns and Population pages
# Their settings live in one non-widget store, because Streamlit deletes a widget's state when a
# run does not draw the widget (while another page is shown). Each widget has the key
# "_w_<name>" and gets its value back from the store before it is drawn (page_widget); the
# pages' other state (tables, messages, the real draws and their ledgers) is in the same store.
# The pages write session state only through these functions.

PAGES_STORE = "pages_store"
"""The non-widget store of the Patterns and Population pages: {name: value}."""
WIDGET_PREFIX = "_w_"
"""Widget key of a stored setting: ``_w_<name>``."""


def _pages() -> dict[str, Any]:
    ss = st.session_state
    if PAGES_STORE not in ss:
        ss[PAGES_STORE] = {}
    return ss[PAGES_STORE]


def _offered(value: Any, options: Any) -> bool:
    if options is None:
        return True
    opts = list(options)
    if isinstance(value, (list, tuple)):
        return all(v in opts for v in value)
    return value in opts


def page_value(name: str, default: Any = None) -> Any:
    """A stored setting or object of the Patterns/Population pages (``default`` if none)."""
    return _pages().get(name, default)


def set_page_value(name: str, value: Any) -> None:
    """Store a value of the Patterns/Population pages (not a widget's: see set_page_widget)."""
    _pages()[name] = value


def page_object(name: str, factory: Any) -> Any:
    """The stored object ``name``, made with ``factory()`` on first use (the pages' sessions
    of real draws and ledgers: never shared with another browser session)."""
    store = _pages()
    if name not in store:
        store[name] = factory()
    return store[name]


def page_widget(name: str, default: Any, options: Any = None) -> str:
    """The key ``_w_<name>`` of the widget that shows setting ``name``; call it just before the
    widget is drawn, and give the widget no value/index/default of its own.

    The value the widget holds is copied to the store; when Streamlit dropped the widget's
    state (another page was shown), the stored value is given back. ``options``: the values the
    widget offers now (a stored value no longer offered falls back to ``default``)."""
    ss = st.session_state
    key = WIDGET_PREFIX + name
    store = _pages()
    if key in ss and _offered(ss[key], options):
        store[name] = ss[key]
        return key
    value = store.get(name, default)
    ss[key] = value if _offered(value, options) else default
    store[name] = ss[key]
    return key


def set_page_widget(name: str, value: Any) -> None:
    """Set a stored setting and its widget (from a callback: before the widget is drawn)."""
    _pages()[name] = value
    st.session_state[WIDGET_PREFIX + name] = value


def page_call(error_name: str, fn: Any, *args: Any, **kwargs: Any) -> None:
    """Button callback: ``fn(*args, **kwargs)``; an LmdkError (a refusal) becomes the page's
    message under ``error_name`` and changes nothing, success clears the message."""
    try:
        fn(*args, **kwargs)
    except LmdkError as err:
        _pages()[error_name] = str(err)
        return
    _pages()[error_name] = None


def page_set_budget(error_name: str, book: Any, who: Any, name: str) -> None:
    """Button callback: ``book.set_total_budget(who, <value of the widget of setting name>)``,
    read when the button is clicked (a deliberate act, separate from the ε of a release)."""
    value = st.session_state.get(WIDGET_PREFIX + name, _pages().get(name))
    page_call(error_name, book.set_total_budget, who, value)


def page_table_edited(name: str, editor_key: str, columns: list[str]) -> None:
    """on_change of a data editor showing the rows stored under ``name``: apply its edits to
    the stored rows (kept across page switches) and start a fresh editor on them."""
    rows = [dict(r) for r in _pages().get(name, [])]
    delta = st.session_state.get(editor_key) or {}
    for i, change in (delta.get("edited_rows") or {}).items():
        if 0 <= int(i) < len(rows):
            rows[int(i)].update(change)
    gone = {int(i) for i in delta.get("deleted_rows") or []}
    rows = [r for i, r in enumerate(rows) if i not in gone]
    for added in delta.get("added_rows") or []:
        rows.append({c: added.get(c) for c in columns})
    _pages()[name] = rows
    version = name + "_version"
    _pages()[version] = _pages().get(version, 0) + 1


def page_upload_changed(name: str, uploader_key: str) -> None:
    """on_change of a file uploader: a file removed by the user forgets the stored file (a
    page switch empties the uploader without a change, and the stored file stays)."""
    if st.session_state.get(uploader_key) is None:
        _pages()[name] = None
