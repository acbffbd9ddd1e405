"""The Streamlit dashboard under streamlit.testing.v1.AppTest (no browser).

The map (dashboard/map_element.py) is a browser component, opaque under AppTest, so it is
replaced by FakeMap, which records what the page draws and delivers queued clicks exactly as the
component does: the front end's message is the trigger ``click`` under the component's key, then
the page's on_click callback runs. The page is
then rerun, as the frontend would, and the tests check what the user would see.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from deferred_download import call_without_session
from page_charts import bundles, figure
from streamlit.testing.v1 import AppTest

import dashboard.map_section as map_section
from lmdk_core import places as pl
from lmdk_core.geo import haversine_m
from lmdk_core.release import SCHEMES, release_locations
from lmdk_core.sample import load_sample

APP = str(Path(__file__).resolve().parent.parent / "dashboard" / "app.py")
TIMEOUT = 60


class FakeMap:
    """Stand-in for dashboard.map_element.show (see module docstring).

    Records each view the page draws (:func:`lmdk_core.map_view.map_view`) and delivers queued
    clicks as the component does: the front end's message (``lmdk_core/landmark_map.js``) is the
    trigger ``click`` under the component's key, then the page's on_click callback runs."""

    def __init__(self) -> None:
        self.calls: list[dict] = []
        self.pending: list[dict] = []

    def __call__(self, view, *, key, on_click):
        self.calls.append({"view": view, "key": key})
        if self.pending:
            st.session_state[key] = {"click": self.pending.pop(0)}
            on_click()

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


@pytest.fixture
def fake_map(monkeypatch):
    fake = FakeMap()
    monkeypatch.setattr(map_section.map_element, "show", fake)
    return fake


@pytest.fixture(scope="module")
def sample():
    return load_sample()


@pytest.fixture(scope="module")
def home(sample):
    """Centre of alice's labelled home points in the sample (the sample's ground truth)."""
    h = sample[(sample.uid == sample.uid.iloc[0]) & (sample.place == "home")]
    return float(h.lat.median()), float(h.lon.median())


def run(at: AppTest) -> AppTest:
    at.run(timeout=TIMEOUT)
    assert not at.exception, [e.message for e in at.exception]
    return at


@pytest.fixture
def app(fake_map):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["tiles"] = "none"
    return run(at)


def metric(at: AppTest, label: str):
    return next(m for m in at.metric if m.label == label)


def add_place_by_click(at, fake_map, lat, lon):
    fake_map.click(lat, lon)
    run(at)  # the component event arrives during this run (callback), like a frontend event
    run(at)  # the rerun the frontend triggers
    return at


def chart(at: AppTest, key: str) -> dict:
    return figure(at, key)


# --------------------------------------------------------------------------- page


def test_default_page_shows_every_section(app, fake_map):
    text = " ".join(m.value for m in app.markdown)
    assert "What am I looking at?" in text
    headers = [h.value for h in app.header]
    for title in ("1 · Data", "2 · Landmark places", "3 · Budget allocation",
                  "4 · Released trajectory and its cost", "6 · Export"):
        assert title in headers
    labels = {m.label for m in app.metric}
    assert {"Mean error", "Fresh releases", "Budget spent Σε_t", "Max G_t vs ε"} <= labels
    chart(app, "allocation_chart")
    chart(app, "error_chart")
    # the map names no tile server (?tiles=none) and draws alice's trace
    assert fake_map.view["tiles"] == "" and len(fake_map.view["track"]) > 100


def test_every_control_has_help(app):
    kinds = ["button", "checkbox", "download_button", "file_uploader", "number_input", "radio",
             "select_slider", "selectbox", "slider", "text_input", "toggle"]
    seen = 0
    for kind in kinds:
        for w in app.get(kind):
            seen += 1
            assert (w.proto.help or "").strip(), f"{kind} {getattr(w, 'label', '')!r} has no help"
    assert seen >= 10


# --------------------------------------------------------------------------- places


def test_map_click_adds_a_landmark_place_and_updates_everything(app, fake_map, sample, home):
    eps_before = chart(app, "allocation_chart")
    assert metric(app, "Fresh releases").value
    add_place_by_click(app, fake_map, *home)
    places = app.session_state["places"]
    assert [p["name"] for p in places] == ["Home"]
    assert places[0]["place_radius_m"] == 100.0
    assert (places[0]["lat"], places[0]["lon"]) == pytest.approx(home, abs=1e-6)
    # drawn on the map as a 100 m circle named Home
    circles = fake_map.circles()
    assert len(circles) == 1 and circles[0]["radius_m"] == 100.0 and circles[0]["name"] == "Home"
    # landmark count in the table = points within 100 m (brute force with the haversine formula)
    alice = sample[sample.uid == sample.uid.iloc[0]]
    expected = int((haversine_m(alice.lat.to_numpy(), alice.lon.to_numpy(), *home) <= 100.0).sum())
    table = app.data_editor[0].value
    assert expected > 0 and int(table["landmarks"].iloc[0]) == expected
    # the allocation changed (uniform: ε/(|L|+1)) and the guarantee holds
    assert chart(app, "allocation_chart") != eps_before
    assert metric(app, "Max G_t vs ε").delta == "landmark-private"


def test_second_click_and_click_on_a_circle_selects_it(app, fake_map, home):
    add_place_by_click(app, fake_map, *home)
    add_place_by_click(app, fake_map, home[0] + 0.02, home[1] + 0.02)
    assert [p["name"] for p in app.session_state["places"]] == ["Home", "Clinic"]
    assert app.session_state["selected"] == "Clinic"
    fake_map.click_object("Home", *home)
    run(app)
    run(app)
    # a click on a circle selects it and adds nothing
    assert [p["name"] for p in app.session_state["places"]] == ["Home", "Clinic"]
    assert app.session_state["selected"] == "Home"
    assert fake_map.view["selected"] == "Home"  # drawn in the selection colour
    # remove the selected place
    remove = next(b for b in app.button if b.label == "Remove selected")
    remove.click()
    run(app)
    assert [p["name"] for p in app.session_state["places"]] == ["Clinic"]


def edits(edited: dict, deleted: list[int] | None = None) -> dict:
    """The st.data_editor edit state the frontend sends."""
    return {"edited_rows": edited, "added_rows": [], "deleted_rows": deleted or []}


def test_rename_radius_and_delete_through_the_table(app, fake_map, home):
    add_place_by_click(app, fake_map, *home)
    add_place_by_click(app, fake_map, home[0] + 0.02, home[1])
    editor_key = f"places_editor_{app.session_state['editor_version']}"
    app.session_state[editor_key] = edits({"0": {"name": "My home", "place_radius_m": 250.0}})
    run(app)
    places = app.session_state["places"]
    assert [(p["name"], p["place_radius_m"]) for p in places] == [("My home", 250.0),
                                                                  ("Clinic", 100.0)]
    editor_key = f"places_editor_{app.session_state['editor_version']}"
    app.session_state[editor_key] = edits({"1": {"name": "My home"}})
    run(app)
    # a duplicate name is refused, with a message
    assert [p["name"] for p in app.session_state["places"]] == ["My home", "Clinic"]
    assert any("already used" in e.value for e in app.error)
    editor_key = f"places_editor_{app.session_state['editor_version']}"
    app.session_state[editor_key] = edits({}, deleted=[0])
    run(app)
    assert [p["name"] for p in app.session_state["places"]] == ["Clinic"]


def test_suggested_place_is_added_with_its_radius(app):
    buttons = [b for b in app.button if b.label.startswith("Add:")]
    assert buttons
    buttons[0].click()
    run(app)
    places = app.session_state["places"]
    assert len(places) == 1 and places[0]["name"] == "Home"
    assert places[0]["place_radius_m"] >= 20


# --------------------------------------------------------------------------- data


BAD_CSV = (
    b"uid,time,lat,lon\n"
    b"u1,2024-01-01T00:00:00Z,39.9,116.3\n"
    b"u1,2024-01-01T00:01:00Z,95.0,116.3\n"  # latitude out of range
)


def test_bad_upload_shows_the_library_error_and_keeps_data_and_places(app, fake_map, home):
    add_place_by_click(app, fake_map, *home)
    name_before = app.session_state["data_name"]
    app.radio(key="source").set_value("Upload files")
    run(app)
    app.file_uploader(key="upload").set_value(("broken.csv", BAD_CSV, "text/csv"))
    run(app)
    errors = [e.value for e in app.error]
    assert any("broken.csv" in e for e in errors), errors
    assert app.session_state["data_name"] == name_before
    assert [p["name"] for p in app.session_state["places"]] == ["Home"]
    assert {"Mean error", "Max G_t vs ε"} <= {m.label for m in app.metric}


def test_good_upload_replaces_the_data(app):
    rows = ["uid,time,lat,lon"] + [
        f"bob,2024-01-01T00:{m:02d}:00Z,{39.9 + m * 1e-4:.6f},116.3" for m in range(30)
    ]
    app.radio(key="source").set_value("Upload files")
    run(app)
    app.file_uploader(key="upload").set_value(("mine.csv", "\n".join(rows).encode(), "text/csv"))
    run(app)
    assert app.session_state["data_name"] == "mine.csv"
    assert app.selectbox[0].value == "bob"
    assert "30 points" in " ".join(m.value for m in app.sidebar.markdown)


# --------------------------------------------------------------------------- privacy


@pytest.mark.parametrize("scheme", SCHEMES)
def test_every_scheme_runs_and_reports_its_guarantee(app, fake_map, home, scheme):
    add_place_by_click(app, fake_map, *home)
    app.selectbox(key="scheme").set_value(scheme)
    run(app)
    delta = metric(app, "Max G_t vs ε").delta
    assert delta == ("exceeds ε" if scheme == "event" else "landmark-private")
    spec = chart(app, "allocation_chart")
    assert spec["data"]
    if scheme in ("bd", "ba"):
        w = app.number_input(key=f"param_{scheme}_w")
        w.set_value(20)
        run(app)
        assert app.session_state["param_" + scheme + "_w"] == 20


def test_invalid_epsilon_shows_an_error_not_a_traceback(app):
    app.number_input(key="epsilon").set_value(0.0)
    run(app)
    assert any("epsilon" in e.value.lower() or "ε" in e.value for e in app.error)
    app.number_input(key="epsilon").set_value(2.0)
    run(app)
    assert not app.error
    assert metric(app, "Max G_t vs ε").value.endswith("/ 2")


def test_comparison_table(app):
    app.slider(key="compare_runs").set_value(2)
    run(app)
    next(b for b in app.button if b.label == "Run comparison").click()
    run(app)
    table = app.session_state["comparison"]
    assert list(table["scheme"]) == list(SCHEMES)
    assert (table["runs"] == 2).all()
    # the bar chart is drawn with the small plotly.js too (it has bars)
    assert {t["type"] for t in figure(app, "comparison_chart")["data"]} == {"bar"}
    assert bundles(app)[next(k for k in bundles(app) if k.endswith("comparison_chart"))] \
        .endswith("/plotly-lmdk.min.js")


# --------------------------------------------------------------------------- export


PUBLIC_LABELS = ("Public release (CSV)", "Public release (GeoJSON)")
PRIVATE_LABELS = ("PRIVATE analysis (JSON) — do not share",
                  "PRIVATE places (GeoJSON) — do not share")


def test_export_buttons_present(app):
    labels = {b.label for b in app.get("download_button")}
    assert set(PUBLIC_LABELS + PRIVATE_LABELS) <= labels


@pytest.fixture
def downloads(monkeypatch):
    """Record every download button's label, data and file name as the page draws it."""
    from streamlit.delta_generator import DeltaGenerator

    seen: dict[str, dict] = {}
    original = DeltaGenerator.download_button

    def recording(self, label, data, file_name=None, *args, **kwargs):
        seen[label] = {"data": data, "file_name": file_name}
        return original(self, label, data, file_name, *args, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "download_button", recording)
    return seen


def test_every_download_yields_a_parseable_file(downloads, fake_map, home):
    """Issue 8 items 2 and 5: all four files are produced outside the session; the public ones
    hold only time and released coordinates, the private ones say so first."""
    at = run(AppTest.from_file(APP, default_timeout=TIMEOUT))
    add_place_by_click(at, fake_map, *home)
    assert set(PUBLIC_LABELS + PRIVATE_LABELS) <= set(downloads)
    files = {label: call_without_session(d["data"], timeout_s=60) for label, d in downloads.items()}
    names = {label: d["file_name"] for label, d in downloads.items()}
    release = list(at.session_state["releases"].values())[-1][1]
    csv = pd.read_csv(io.StringIO(files["Public release (CSV)"]))
    assert list(csv.columns) == ["time", "lat", "lon"] and len(csv) == len(release)
    np.testing.assert_array_equal(csv["lat"].to_numpy(), release.lat)
    gj = json.loads(files["Public release (GeoJSON)"])
    assert gj["type"] == "FeatureCollection" and gj["features"]
    assert all(f["geometry"]["type"] == "Point" and set(f["properties"]) == {"time"}
               for f in gj["features"])
    for label in PUBLIC_LABELS:
        assert "Home" not in files[label] and "eps" not in files[label]
        assert "PRIVATE" not in names[label] and "public" in names[label]
    analysis = json.loads(files[PRIVATE_LABELS[0]])
    assert next(iter(analysis)) == "PRIVATE" and "Do not share" in analysis["PRIVATE"]
    assert {"configuration", "places", "series", "summary", "correlation", "metrics"} <= set(
        analysis)
    assert analysis["places"][0]["name"] == "Home"
    assert analysis["configuration"]["scheme"] == "skip"  # the default scheme
    assert analysis["summary"]["landmark_private"] is True
    assert '"seed"' not in files[PRIVATE_LABELS[0]]
    places = pl.places_from_geojson(files[PRIVATE_LABELS[1]])
    assert [(p.name, p.lat, p.lon, p.place_radius_m) for p in places] == [
        (q["name"], q["lat"], q["lon"], q["place_radius_m"]) for q in at.session_state["places"]]
    for label in PRIVATE_LABELS:
        assert "PRIVATE" in names[label] and "DO_NOT_SHARE" in names[label]


def test_no_seed_in_the_controls(app):
    keys = {w.key for kind in ("number_input", "text_input", "slider") for w in app.get(kind)}
    assert "seed" not in keys
    assert not any("seed" in (w.label or "").lower() for w in app.number_input)


def _kept(at) -> list:
    return [rel for _, rel in at.session_state["releases"].values()]


def test_release_is_kept_across_reruns_and_redrawn_on_a_new_setting(app):
    """Issue 8 item 1 on the page: no fixed seed. A rerun shows the same draw; a new ε draws
    new noise, so the two releases do not give the true points back by subtraction."""
    first = _kept(app)[-1]
    app.toggle(key="show_release").set_value(False)  # any rerun that changes no setting
    run(app)
    run(app)
    assert _kept(app)[-1] is first and len(_kept(app)) == 1
    app.number_input(key="epsilon").set_value(2.0)
    run(app)
    second = _kept(app)[-1]
    assert second is not first and second.epsilon == 2.0 and not second.seeded
    traj = app.session_state["df"]
    alice = traj[traj.uid == traj.uid.iloc[0]].reset_index(drop=True)
    # uniform with no landmarks: ε_t = ε, y_k = x + u·r/ε_k; shared unit draws u would give
    # x = 2·y2 − y1 exactly. The attack works on a seeded pair (main's seed 7 for every setting):
    true = alice.lat.to_numpy(), alice.lon.to_numpy()

    def recovery_error(y1, y2):
        est = (2 * np.asarray(y2.lat) - y1.lat, 2 * np.asarray(y2.lon) - y1.lon)
        return haversine_m(*est, *true)

    seeded = [release_locations(alice, epsilon=e, scheme="uniform", rng=7, noise="fast")
              for e in (1.0, 2.0)]
    # within metres (the lattice twin maps back to the sphere non-linearly), against ~570 m noise
    assert np.max(recovery_error(*seeded)) < 10.0
    assert np.median(recovery_error(first, second)) > 100.0  # fresh draws: nothing recovered
    # back to ε = 1: the release drawn for that setting is still there, not a third draw
    app.number_input(key="epsilon").set_value(1.0)
    run(app)
    assert _kept(app)[-1] is first


def test_ledger_counts_downloads_and_warns_before_passing_epsilon(app):
    def total():
        return metric(app, "Taken away so far").value

    assert total().startswith("0 /")
    assert not any("would bring the total" in w.value for w in app.warning)
    csv = next(b for b in app.get("download_button") if b.label == PUBLIC_LABELS[0])
    csv.click()
    run(app)
    assert total() == "1 / 1" and len(next(iter(app.session_state["ledgers"].values()))) == 1
    # the same release as GeoJSON: same noise, counted once
    next(b for b in app.get("download_button") if b.label == PUBLIC_LABELS[1]).click()
    run(app)
    assert total() == "1 / 1"
    assert metric(app, "After downloading this one").delta == "within ε"
    # a new setting draws a new release: taking it too would spend 1 + 0.5 > 0.5
    app.number_input(key="epsilon").set_value(0.5)
    run(app)
    assert metric(app, "After downloading this one").value == "1.5 / 0.5"
    assert "exceeds ε" in metric(app, "Taken away so far").delta
    assert any("would bring the total privacy loss" in w.value for w in app.warning)
    next(b for b in app.get("download_button") if b.label == PUBLIC_LABELS[0]).click()
    run(app)
    assert total() == "1.5 / 0.5"
    # the private files are not releases: downloading them does not touch the ledger
    next(b for b in app.get("download_button") if b.label == PRIVATE_LABELS[0]).click()
    run(app)
    assert total() == "1.5 / 0.5"


def test_places_geojson_import_restores_places_exactly(app):
    original = [pl.Place("Home", 39.98672312345, 116.35601987654, 123.456),
                pl.Place("Clinic", 39.9, 116.4, 80.0)]
    data = json.dumps(pl.places_to_geojson(original)).encode()
    uploader = app.file_uploader(key="places_upload")
    uploader.set_value(("places.geojson", data, "application/geo+json"))
    run(app)
    got = [(p["name"], p["lat"], p["lon"], p["place_radius_m"])
           for p in app.session_state["places"]]
    assert got == [(p.name, p.lat, p.lon, p.place_radius_m) for p in original]
    # a broken places file leaves them as they were
    uploader = app.file_uploader(key="places_upload")
    uploader.set_value(("bad.geojson", b"{not json", "application/geo+json"))
    run(app)
    assert any("bad.geojson" in e.value for e in app.error)
    assert [p["name"] for p in app.session_state["places"]] == ["Home", "Clinic"]


# --------------------------------------------------------------------------- privacy loss


def test_loss_section_bounds_are_labelled_capped_and_never_exceedances(app, fake_map, home):
    # before any place is marked: no landmark curve and nothing compared with ε but G_t
    names = [t.get("name", "") for t in chart(app, "loss_chart")["data"]]
    assert any("TPL" in n and "upper bound" in n for n in names)
    assert not any(n.startswith("exceeds") for n in names)
    add_place_by_click(app, fake_map, *home)
    assert "5 · Privacy loss over time" in [h.value for h in app.header]
    names = [t.get("name", "") for t in chart(app, "loss_chart")["data"]]
    assert any("landmark loss" in n for n in names)
    assert all("upper bound" in n for n in names if n.split(":")[0] in ("BPL", "FPL", "TPL"))
    assert any("public" in c.value for c in app.caption)  # the page says where the model is from
    # Strong correlation is the identity chain: the one-moment bound reaches the composition
    # bound Σ ε_t·δ_max, and is never shown above it
    app.select_slider(key="strength").set_value("strong")
    run(app)
    cap = float(metric(app, "Composition bound").value.replace(",", ""))
    worst = float(metric(app, "Bound, worst pair").value.replace(",", ""))
    assert worst == pytest.approx(cap, rel=0.01) and worst <= cap * 1.0001
    assert not any(getattr(m, "delta", None) == "exceeds ε" for m in app.metric)


def test_loss_section_released_and_dp_models(app):
    app.radio(key="loss_source").set_value("Estimated from the released points")
    run(app)
    assert any("released points" in c.value for c in app.caption)
    assert not app.exception
    app.radio(key="loss_source").set_value("DP estimate from your trajectory (costs ε_model)")
    run(app)
    assert any("ε_model = 0.5" in c.value for c in app.caption)
    assert not app.exception


def test_bounded_allocation_keeps_tpl_below_alpha(app):
    app.number_input(key="alpha").set_value(0.5)
    app.toggle(key="use_bounded").set_value(True)
    run(app)
    chart(app, "loss_bounded_chart")
    assert float(metric(app, "Bound, worst pair (bounded)").value) <= 0.5 * 1.001


def test_release_switches_to_the_bounded_allocation_and_back(app, fake_map, home):
    add_place_by_click(app, fake_map, *home)
    spent_scheme = metric(app, "Budget spent Σε_t").value
    app.number_input(key="alpha").set_value(0.5)
    app.toggle(key="use_bounded").set_value(True)
    run(app)
    app.toggle(key="release_bounded").set_value(True)
    run(app)
    # every view now uses the bounded budgets: the page's bound is the bounded one (<= alpha)
    assert float(metric(app, "Bound, worst pair").value) <= 0.5 * 1.001
    assert metric(app, "Budget spent Σε_t").value != spent_scheme
    assert any("TPL-bounded allocation of section 5" in i.value for i in app.info)
    assert not app.exception
    app.toggle(key="release_bounded").set_value(False)
    run(app)
    assert metric(app, "Budget spent Σε_t").value == spent_scheme
    assert not any("TPL-bounded allocation of section 5" in i.value for i in app.info)


def test_comparison_says_when_it_is_stale(app, fake_map, home):
    app.slider(key="compare_runs").set_value(1)
    next(b for b in app.button if b.label == "Run comparison").click()
    run(app)
    assert not app.warning
    add_place_by_click(app, fake_map, *home)
    assert any("earlier settings" in w.value for w in app.warning)


def _csv(uid: str, n: int, lat0: float) -> bytes:
    rows = ["uid,time,lat,lon"] + [
        f"{uid},2024-01-01T{m // 60:02d}:{m % 60:02d}:00Z,{lat0 + m * 1e-4:.6f},116.3"
        for m in range(n)
    ]
    return "\n".join(rows).encode()


def test_several_files_user_and_time_range(app):
    app.radio(key="source").set_value("Upload files")
    run(app)
    app.file_uploader(key="upload").set_value(
        [("a.csv", _csv("ann", 120, 39.9), "text/csv"),
         ("b.csv", _csv("ben", 40, 40.0), "text/csv")]
    )
    run(app)
    person = app.sidebar.selectbox[0]
    assert person.options == ["ann", "ben"]
    assert "120 points" in " ".join(m.value for m in app.sidebar.markdown)
    person.set_value("ben")
    run(app)
    assert "40 points" in " ".join(m.value for m in app.sidebar.markdown)
    # the time range keeps points whose time is within [start, end]: 00:00 … 00:20 → 21 points
    span = app.sidebar.slider[0]
    start = span.value[0]
    span.set_value((start, start + pd.Timedelta(minutes=20).to_pytimedelta()))
    run(app)
    assert "21 points" in " ".join(m.value for m in app.sidebar.markdown)


def test_release_overlay_toggle_and_bad_tile_url(app, fake_map):
    assert fake_map.view["released"]
    app.toggle(key="show_release").set_value(False)
    run(app)
    assert fake_map.view["released"] == []
    app.radio(key="tiles_choice").set_value("Custom tile URL")
    run(app)
    app.text_input(key="tile_url").set_value("https://tiles.example.org/no-placeholders.png")
    run(app)
    assert any("{z}" in e.value for e in app.error)  # the library's message, map still drawn
    assert fake_map.view["tiles"] == ""
