"""The Streamlit dashboard under streamlit.testing.v1.AppTest (no browser).

The map is replaced by apptest_helpers.FakeMap (the fixtures ``fake_map``, ``home`` and ``app``
are in conftest.py), which records what the page draws and delivers queued clicks as the
component does. After each click the page is rerun, as the frontend would, and the tests
check what the user would see.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from apptest_helpers import (
    APP,
    BAD_CSV,
    HOME_STAY,
    TIMEOUT,
    add_place_by_click,
    clicked,
    draw,
    home_place,
    kept,
    marked_at_home,
    metric,
    offline_page,
    run,
    session,
    set_budget,
    spent,
    uploading,
)
from deferred_download import call_without_session, record_downloads
from page_charts import bundles, figure
from streamlit.testing.v1 import AppTest

from lmdk_core import accounting
from lmdk_core import places as pl
from lmdk_core.geo import haversine_m
from lmdk_core.release import SCHEMES, release_locations
from lmdk_core.session import KEPT_PREVIEWS


def chart(at: AppTest, key: str) -> dict:
    return figure(at, key)


# --------------------------------------------------------------------------- page


def test_default_page_shows_every_section(first_page):
    app, fake_map = first_page
    text = " ".join(m.value for m in app.markdown)
    assert "What am I looking at?" in text
    headers = [h.value for h in app.header]
    for title in ("1 · Data", "2 · Landmark places", "3 · Budget allocation",
                  "4 · Released trajectory and its cost", "6 · Release and export"):
        assert title in headers
    labels = {m.label for m in app.metric}
    assert {"Mean error", "Fresh releases", "Budget spent Σε_t", "Max G_t vs ε"} <= labels
    chart(app, "allocation_chart")
    chart(app, "error_chart")
    # the map names no tile server (?tiles=none) and draws alice's trace
    assert fake_map.view["tiles"] == "" and len(fake_map.view["track"]) > 100


def test_every_control_has_help(first_page):
    app, _ = first_page
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
    assert [p["name"] for p in places] == [HOME_STAY]  # the suggested place it lies on
    assert places[0]["place_radius_m"] == 100.0
    assert (places[0]["lat"], places[0]["lon"]) == pytest.approx(home, abs=1e-6)
    # exactly what apptest_helpers.marked_at_home seeds for the tests that start after it
    assert list(places) == [home_place(home)] and app.session_state["selected"] == HOME_STAY
    # drawn on the map as a 100 m circle with that name
    circles = fake_map.circles()
    assert len(circles) == 1 and circles[0]["radius_m"] == 100.0 and circles[0]["name"] == HOME_STAY
    # landmark count in the table = points within 100 m (brute force with the haversine formula)
    alice = sample[sample.uid == sample.uid.iloc[0]]
    expected = int((haversine_m(alice.lat.to_numpy(), alice.lon.to_numpy(), *home) <= 100.0).sum())
    table = app.data_editor[0].value
    assert expected > 0 and int(table["landmarks"].iloc[0]) == expected
    # the allocation changed (uniform: ε/(|L|+1)) and the guarantee holds
    assert chart(app, "allocation_chart") != eps_before
    assert metric(app, "Max G_t vs ε").delta == "landmark-private"


def test_second_click_and_click_on_a_circle_selects_it(app_home, fake_map, home):
    app = app_home  # alice's home marked as a click there leaves it (test above)
    add_place_by_click(app, fake_map, home[0] + 0.02, home[1] + 0.02)
    assert [p["name"] for p in app.session_state["places"]] == [HOME_STAY, "Place 2"]
    assert app.session_state["selected"] == "Place 2"
    fake_map.click_object(HOME_STAY, *home)
    clicked(app, fake_map)
    # a click on a circle selects it and adds nothing
    assert [p["name"] for p in app.session_state["places"]] == [HOME_STAY, "Place 2"]
    assert app.session_state["selected"] == HOME_STAY
    assert fake_map.view["selected"] == HOME_STAY  # drawn in the selection colour
    # remove the selected place
    remove = next(b for b in app.button if b.label == "Remove selected")
    remove.click()
    run(app)
    assert [p["name"] for p in app.session_state["places"]] == ["Place 2"]


def edits(edited: dict, deleted: list[int] | None = None) -> dict:
    """The st.data_editor edit state the frontend sends."""
    return {"edited_rows": edited, "added_rows": [], "deleted_rows": deleted or []}


def test_rename_radius_and_delete_through_the_table(app_home, fake_map, home):
    app = app_home  # alice's home marked as a click there leaves it
    add_place_by_click(app, fake_map, home[0] + 0.02, home[1])
    editor_key = f"places_editor_{app.session_state['editor_version']}"
    app.session_state[editor_key] = edits({"0": {"name": "My home", "place_radius_m": 250.0}})
    run(app)
    places = app.session_state["places"]
    assert [(p["name"], p["place_radius_m"]) for p in places] == [("My home", 250.0),
                                                                  ("Place 2", 100.0)]
    editor_key = f"places_editor_{app.session_state['editor_version']}"
    app.session_state[editor_key] = edits({"1": {"name": "My home"}})
    run(app)
    # a duplicate name is refused, with a message
    assert [p["name"] for p in app.session_state["places"]] == ["My home", "Place 2"]
    assert any("already used" in e.value for e in app.error)
    editor_key = f"places_editor_{app.session_state['editor_version']}"
    app.session_state[editor_key] = edits({}, deleted=[0])
    run(app)
    assert [p["name"] for p in app.session_state["places"]] == ["Place 2"]


def test_suggested_place_is_added_with_its_radius(app):
    buttons = [b for b in app.button if b.label.startswith("Add:")]
    assert buttons
    buttons[0].click()
    run(app)
    places = app.session_state["places"]
    # named after where it is (issue 27: not "Home" for whatever is added first)
    assert len(places) == 1 and places[0]["name"] == HOME_STAY
    assert places[0]["place_radius_m"] >= 20


# --------------------------------------------------------------------------- data


def test_bad_upload_shows_the_library_error_and_keeps_data_and_places(app_home):
    app = app_home
    name_before = app.session_state["data_name"]
    app.radio(key="source").set_value("Upload files")
    run(app)
    app.file_uploader(key="upload").set_value(("broken.csv", BAD_CSV, "text/csv"))
    run(app)
    errors = [e.value for e in app.error]
    assert any("broken.csv" in e for e in errors), errors
    assert app.session_state["data_name"] == name_before
    assert [p["name"] for p in app.session_state["places"]] == [HOME_STAY]
    assert {"Mean error", "Max G_t vs ε"} <= {m.label for m in app.metric}


def test_good_upload_replaces_the_data(fake_map):
    app = uploading(offline_page())
    rows = ["uid,time,lat,lon"] + [
        f"bob,2024-01-01T00:{m:02d}:00Z,{39.9 + m * 1e-4:.6f},116.3" for m in range(30)
    ]
    app.file_uploader(key="upload").set_value(("mine.csv", "\n".join(rows).encode(), "text/csv"))
    run(app)
    assert app.session_state["data_name"] == "mine.csv"
    assert app.selectbox[0].value == "bob"
    assert "30 points" in " ".join(m.value for m in app.sidebar.markdown)


# --------------------------------------------------------------------------- privacy


def test_every_scheme_runs_and_reports_its_guarantee(app_home):
    """Each scheme in turn on one page with alice's home marked (a user switching schemes): one
    first run for all of them instead of one each; every scheme's checks are the same."""
    app = app_home
    for scheme in SCHEMES:
        app.selectbox(key="scheme").set_value(scheme)
        run(app)
        assert app.selectbox(key="scheme").value == scheme
        delta = metric(app, "Max G_t vs ε").delta
        assert delta == ("exceeds ε" if scheme == "event" else "landmark-private"), scheme
        spec = chart(app, "allocation_chart")
        assert spec["data"], scheme
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


def test_export_buttons_only_for_a_real_draw(app):
    """Issue 23: a preview never leaves the page; the public files exist only once the user
    drew the real release."""
    labels = {b.label for b in app.get("download_button")}
    assert not set(PUBLIC_LABELS) & labels and PRIVATE_LABELS[0] not in labels
    assert PRIVATE_LABELS[1] in labels  # the places file is not a release
    assert any("looking at a preview" in m.value for m in app.markdown)
    draw(app)
    labels = {b.label for b in app.get("download_button")}
    assert set(PUBLIC_LABELS + PRIVATE_LABELS) <= labels
    assert not [b for b in app.button if b.key == "draw_release"]


@pytest.fixture
def downloads(monkeypatch):
    """Every download button's label, data and file name as the page draws it."""
    return record_downloads(monkeypatch)


def test_every_download_yields_a_parseable_file(downloads, fake_map, home):
    """Issue 8 items 2 and 5: all four files are produced outside the session; the public ones
    hold only time and released coordinates, the private ones say so first."""
    at = marked_at_home(AppTest.from_file(APP, default_timeout=TIMEOUT), home)
    draw(at)
    assert set(PUBLIC_LABELS + PRIVATE_LABELS) <= set(downloads)
    files = {label: call_without_session(d["data"], timeout_s=60) for label, d in downloads.items()}
    names = {label: d["file_name"] for label, d in downloads.items()}
    release = session(at).draws()[-1].release
    assert not release.seeded
    from exact_csv import read_csv_exact

    csv = read_csv_exact(io.StringIO(files["Public release (CSV)"]))
    held = ~np.isnan(release.lat)  # only rows that carry a release (issue 27)
    assert list(csv.columns) == ["time", "lat", "lon"] and len(csv) == held.sum()
    np.testing.assert_array_equal(csv["lat"].to_numpy(), release.lat[held])
    gj = json.loads(files["Public release (GeoJSON)"])
    assert gj["type"] == "FeatureCollection" and gj["features"]
    assert all(f["geometry"]["type"] == "Point" and set(f["properties"]) == {"time"}
               for f in gj["features"])
    for label in PUBLIC_LABELS:
        assert "wudaokou" not in files[label] and "eps" not in files[label]  # no place name
        assert "PRIVATE" not in names[label] and "public" in names[label]
    analysis = json.loads(files[PRIVATE_LABELS[0]])
    assert next(iter(analysis)) == "PRIVATE" and "Do not share" in analysis["PRIVATE"]
    assert {"configuration", "places", "series", "summary", "correlation", "metrics"} <= set(
        analysis)
    assert analysis["places"][0]["name"] == HOME_STAY
    assert analysis["configuration"]["scheme"] == "skip"  # the default scheme
    assert analysis["summary"]["landmark_private"] is True
    assert "mae_m_simulated" in analysis["metrics"] and "mae_m" not in analysis["metrics"]
    assert '"seed"' not in files[PRIVATE_LABELS[0]]
    places = pl.places_from_geojson(files[PRIVATE_LABELS[1]])
    assert [(p.name, p.lat, p.lon, p.place_radius_m) for p in places] == [
        (q["name"], q["lat"], q["lon"], q["place_radius_m"]) for q in at.session_state["places"]]
    for label in PRIVATE_LABELS:
        assert "PRIVATE" in names[label] and "DO_NOT_SHARE" in names[label]


def test_no_seed_in_the_controls(first_page):
    app, _ = first_page
    keys = {w.key for kind in ("number_input", "text_input", "slider") for w in app.get(kind)}
    assert "seed" not in keys
    assert not any("seed" in (w.label or "").lower() for w in app.number_input)


def test_previews_are_kept_and_a_real_draw_is_never_redrawn(app):
    """Issue 23 finding 3 (a kept release was silently redrawn after 8 other settings) and
    issue 8 item 1 (no fixed seed): previews are simulations, kept per setting; the real draw
    is made once on request, and coming back to its setting after any number of others shows
    that same draw."""
    first = kept(app)[-1]
    assert first.seeded and "simulation" in first.label  # a preview is labelled as one
    app.toggle(key="show_release").set_value(False)  # any rerun that changes no setting
    run(app)
    run(app)
    assert kept(app)[-1] is first and not session(app).draws()
    error_before = metric(app, "Mean error").value, chart(app, "error_chart")
    draw(app)
    real = session(app).draws()[-1]
    # the real draw's error against the true trace is never shown: picking among real draws by
    # it would cost more than their ε (docs/composition.md); the page keeps the preview's
    assert (metric(app, "Mean error").value, chart(app, "error_chart")) == error_before
    assert not real.release.seeded and len(session(app).draws()) == 1
    # more settings than any cache keeps: the session's previews (KEPT_PREVIEWS) and the
    # page's st.cache entries (at most 16, the same number)
    for eps in np.linspace(1.01, 1.12, KEPT_PREVIEWS + 1):
        app.number_input(key="epsilon").set_value(float(eps))
        run(app)
    # exploring drew nothing real and cost nothing (17 previews after a real draw; the test
    # below checks previews before any draw)
    assert len(session(app).draws()) == 1 and spent(app) == "1 / 1"
    app.number_input(key="epsilon").set_value(1.0)
    run(app)
    assert session(app).draws()[-1] is real and len(session(app).draws()) == 1
    assert any("never redrawn" in s.value for s in app.success)
    text = " ".join(m.value for m in app.markdown)
    assert "looking at a preview" not in text


def test_two_real_draws_share_no_noise(app):
    """Fresh OS randomness for every real draw: two releases at ε = 1 and 2 do not give the
    true points back by subtraction (they would with a shared seed)."""
    app.number_input(key="epsilon").set_value(0.5)  # two draws fit the default budget of 1
    run(app)
    first = draw(app) and session(app).draws()[-1].release
    app.number_input(key="epsilon").set_value(0.25)
    run(app)
    draw(app)
    second = session(app).draws()[-1].release
    assert second is not first and not second.seeded
    traj = app.session_state["df"]
    alice = traj[traj.uid == traj.uid.iloc[0]].reset_index(drop=True)
    # uniform with no landmarks: ε_t = ε, y_k = x + u·r/ε_k; shared unit draws u would give
    # x = 2·y2 − y1 exactly. The attack works on a seeded pair:
    true = alice.lat.to_numpy(), alice.lon.to_numpy()

    def recovery_error(y1, y2):
        est = (2 * np.asarray(y2.lat) - y1.lat, 2 * np.asarray(y2.lon) - y1.lon)
        return haversine_m(*est, *true)

    seeded = [release_locations(alice, epsilon=e, scheme="uniform", rng=7, noise="fast")
              for e in (0.5, 1.0)]
    assert np.max(recovery_error(*seeded)) < 10.0  # the attack works on shared noise
    assert np.median(recovery_error(second, first)) > 100.0  # fresh draws: nothing recovered


def test_exploring_is_free_and_every_real_draw_counts(app):
    """Issue 23 findings 1 and 5: K previews cost nothing; each real draw counts from the moment
    it is drawn (viewing it and keeping the best of K costs K·ε), downloads add nothing more,
    and the total budget does not follow the ε slider. (Two settings explored before any draw
    here; the test above explores 17 after one and checks they cost nothing either.)"""
    assert spent(app).startswith("0 /")
    for eps in (0.2, 0.3):  # settings explored: previews of two other ε
        app.number_input(key="epsilon").set_value(eps)
        run(app)
    assert spent(app) == "0 / 1" and not session(app).draws()
    app.number_input(key="epsilon").set_value(0.5)
    run(app)
    draw(app)
    assert spent(app) == "0.5 / 1"
    for label in PUBLIC_LABELS:  # the same draw downloaded twice: nothing more
        next(b for b in app.get("download_button") if b.label == label).click()
        run(app)
    assert spent(app) == "0.5 / 1"
    # a second real draw after seeing the first one's error: counted at once
    app.number_input(key="epsilon").set_value(0.4)
    run(app)
    draw(app)
    assert spent(app) == "0.9 / 1"
    # raising ε makes no room: the budget is its own setting
    app.number_input(key="epsilon").set_value(1.5)
    run(app)
    assert spent(app) == "0.9 / 1"
    assert app.button(key="draw_release").disabled
    assert any("above your total budget" in w.value for w in app.warning)
    # raising the total budget is a deliberate act of its own
    app.number_input(key="total_budget_input").set_value(3.0)
    run(app)
    assert spent(app) == "0.9 / 1"
    app.button(key="total_budget_set").click()
    run(app)
    assert spent(app) == "0.9 / 3" and not app.button(key="draw_release").disabled
    draw(app)
    assert spent(app) == "2.4 / 3" and len(session(app).draws()) == 3


def test_k_real_draws_cost_k_epsilon_in_the_files(downloads, fake_map, home):
    """Taking away K real draws after viewing their quality costs K·ε on the page and in the
    private analysis file."""
    at = marked_at_home(AppTest.from_file(APP, default_timeout=TIMEOUT), home)
    set_budget(at, 10.0)
    for k, eps in enumerate((1.0, 1.1, 1.2), start=1):
        at.number_input(key="epsilon").set_value(eps)
        run(at)
        draw(at)
        expected = sum((1.0, 1.1, 1.2)[:k])
        assert spent(at) == f"{expected:.3g} / 10"
    analysis = json.loads(call_without_session(downloads[PRIVATE_LABELS[0]]["data"],
                                               timeout_s=60))
    ledger = analysis["settings"]["ledger"]
    assert ledger["total_loss"] == pytest.approx(3.3) and ledger["real_draws"] == 3


def test_dummy_draws_and_radii_are_counted(app_home):
    """Issue 23 finding 2: ε_sel is counted (two dummy draws showed "856 / 1"; the true total
    is 2), and releases with different radii compose by distance."""
    app = app_home
    set_budget(app, 100.0)
    app.toggle(key="hide_on").set_value(True)
    run(app)
    app.selectbox(key="hide_gen").set_value("bernoulli")
    run(app)
    draw(app)
    assert spent(app) == "1 / 100"  # ε_scheme 0.9 + ε_sel 0.1
    app.number_input(key="hide_eps").set_value(0.2)  # a second dummy draw
    run(app)
    draw(app)
    assert spent(app) == "2 / 100"
    app.toggle(key="hide_on").set_value(False)
    run(app)
    app.number_input(key="radius_m").set_value(2000.0)
    run(app)
    draw(app)
    # at the protection distance 200 m the r = 2 km release adds about 200/2000 of its ε
    assert float(spent(app).split(" /")[0]) == pytest.approx(2.1, abs=0.01)
    caption = " ".join(c.value for c in app.caption)
    assert "5 km apart" in caption


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


def test_loss_section_preset_covers_a_chosen_extent_and_warns_beyond_it(app):
    # default: places up to 20 km apart, which covers the sample trace — no warning
    assert app.select_slider(key="preset_extent_km").value == 20
    assert any("up to 20 km apart" in c.value for c in app.caption)
    assert not any("not a bound" in w.value for w in app.warning)
    worst20 = float(metric(app, "Bound, worst pair").value.replace(",", ""))
    # a preset smaller than the trace: the page says its figures are no bound beyond it
    app.select_slider(key="preset_extent_km").set_value(2)
    run(app)
    assert not app.exception
    note = next(w.value for w in app.warning if "not a bound" in w.value)
    assert "covers places up to 2 km apart" in note and "your trace spans" in note
    m = metric(app, "Bound, worst pair")
    assert "not a bound beyond 2 km" in str(m.delta)
    assert float(m.value.replace(",", "")) < worst20  # smaller, and no bound for the trace
    title = chart(app, "loss_chart")["layout"]["title"]["text"]
    assert "not a bound for places further apart than 2 km" in title


def test_loss_section_released_and_dp_models(app):
    app.radio(key="loss_source").set_value("Estimated from the released points")
    run(app)
    assert any("released points" in c.value for c in app.caption)
    assert not app.exception
    app.radio(key="loss_source").set_value("DP estimate from your trajectory (costs ε_model)")
    run(app)
    # choosing the DP model draws nothing: it is a release of the data, made on request
    assert spent(app) == "0 / 1" and not session(app)._models
    assert any("spends ε_model = 0.5" in i.value for i in app.info)
    set_budget(app, 2.0)
    app.button(key="dp_model_draw").click()
    run(app)
    assert any("ε_model = 0.5" in c.value for c in app.caption)
    assert spent(app) == "0.5 / 2"  # counted the moment it is drawn
    assert not app.exception
    # a release built on the model's TPL-bounded allocation does not pay for it again
    app.expander(key="bounded_open")  # the allocation lives in this expander
    app.toggle(key="use_bounded").set_value(True)
    run(app)
    app.toggle(key="release_bounded").set_value(True)
    run(app)
    draw(app)
    drawn = session(app).draws()[-1]
    assert drawn.release.scheme == "budget" and drawn.release.params["epsilon_model"] == 0.5
    g = float(np.max(accounting.landmark_guarantee(drawn.release.budget, drawn.landmarks)))
    assert float(spent(app).split(" /")[0]) == pytest.approx(0.5 + g, abs=1e-3)


def test_bounded_allocation_keeps_tpl_below_alpha(app):
    app.number_input(key="alpha").set_value(0.5)
    app.toggle(key="use_bounded").set_value(True)
    run(app)
    chart(app, "loss_bounded_chart")
    assert float(metric(app, "Bound, worst pair (bounded)").value) <= 0.5 * 1.001


def test_release_switches_to_the_bounded_allocation_and_back(app_home):
    app = app_home
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


def test_several_files_user_and_time_range(fake_map):
    app = uploading(offline_page())
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
