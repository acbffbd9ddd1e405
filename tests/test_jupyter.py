"""The Jupyter explorer's Python side: map clicks, settings, charts' data, previews and real
draws (the ledger), report, offline map.

Clicks are delivered as the browser delivers them: a custom widget message handled by the map
widget (``_handle_custom_msg``), not by calling the explorer's internals.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

pytest.importorskip("anywidget")
pytest.importorskip("ipywidgets")

import lmdk_core as lk
from lmdk_core.errors import ParameterError
from lmdk_core.jupyter import ExplorerSession, explore, tile_source
from lmdk_core.jupyter.session import SUMMARY_LABELS
from lmdk_core.session import BudgetExceededError

HOME = (39.9925, 116.3395)
CLINIC = (39.9820, 116.3564)


@pytest.fixture(scope="module")
def sample():
    return lk.load_sample()


@pytest.fixture(scope="module")
def alice(sample):
    # ~600 timestamps: fast, and still visits Home and the Clinic
    return lk.resample(lk.select_user(sample, "alice"), 600)


def _browser_click(ex, lat, lon):
    ex.map._handle_custom_msg({"event": "map_click", "lat": lat, "lon": lon}, [])


def _browser_place_click(ex, name):
    ex.map._handle_custom_msg({"event": "place_click", "name": name}, [])


def _trace(fig, prefix):
    found = [t for t in fig.data if (t.name or "").startswith(prefix)]
    assert found, f"no trace named {prefix!r}* in {[t.name for t in fig.data]}"
    return found[0]


def _inside(traj, lat, lon, r):
    """Independent landmark test: haversine distance to the centre ≤ r."""
    lat1, lon1 = np.radians(traj["lat"].to_numpy()), np.radians(traj["lon"].to_numpy())
    lat2, lon2 = math.radians(lat), math.radians(lon)
    a = (np.sin((lat2 - lat1) / 2) ** 2
         + np.cos(lat1) * math.cos(lat2) * np.sin((lon2 - lon1) / 2) ** 2)
    return 2 * 6_371_008.8 * np.arcsin(np.sqrt(a)) <= r


def test_click_adds_a_place_and_updates_mask_release_map_and_charts(alice):
    ex = explore(alice, rng=1, interval_s=None, loss_model="none")
    assert ex.places == [] and not ex.result.landmarks.any()
    before_error = np.array(_trace(ex.error_chart, "error").y, dtype=float)

    _browser_click(ex, *HOME)

    assert [(p.lat, p.lon, p.place_radius_m) for p in ex.places] == [(HOME[0], HOME[1], 100.0)]
    expected = _inside(alice, *HOME, 100.0)
    assert expected.sum() > 10
    np.testing.assert_array_equal(ex.result.landmarks, expected)
    np.testing.assert_array_equal(ex.release.landmarks, expected)
    # skip: nothing spent at landmarks, ε elsewhere
    np.testing.assert_allclose(ex.release.budget, np.where(expected, 0.0, 1.0))
    # the map shows the place and the landmark timestamps
    assert ex.map.places == [{"name": "Place 1", "lat": HOME[0], "lon": HOME[1], "radius_m": 100.0}]
    assert len(ex.map.landmark_points) == min(int(expected.sum()), 300)
    # the allocation chart marks exactly the landmark timestamps and draws the new ε_t
    marks = _trace(ex.allocation_chart, "landmark (")
    assert marks.name == f"landmark ({int(expected.sum())})"
    times = alice["time"].dt.tz_convert("UTC").dt.tz_localize(None).to_numpy()
    landmark_times = set(times[expected])
    assert 0 < len(marks.x) <= 400 and set(marks.x) <= landmark_times
    budget = np.array(_trace(ex.allocation_chart, "budget ε_t").y, dtype=float)
    assert budget.min() == 0.0 and budget.max() == 1.0
    # and the error chart shows the new release (fresh randomness: different errors)
    after_error = np.array(_trace(ex.error_chart, "error").y, dtype=float)
    assert not np.array_equal(np.nan_to_num(before_error), np.nan_to_num(after_error))

    _browser_click(ex, *CLINIC)
    assert [p.name for p in ex.places] == ["Place 1", "Place 2"]
    both = expected | _inside(alice, *CLINIC, 100.0)
    np.testing.assert_array_equal(ex.result.landmarks, both)
    assert _trace(ex.allocation_chart, "landmark (").name == f"landmark ({int(both.sum())})"


def test_place_click_selects_then_removes(alice):
    ex = explore(alice, rng=2, loss_model="none")
    _browser_click(ex, *HOME)
    n_lm = int(ex.result.landmarks.sum())
    release_before = ex.release

    _browser_place_click(ex, "Place 1")  # first click: select only, same release
    assert ex.map.selected == "Place 1" and ex.session.selected == "Place 1"
    assert ex.release is release_before and len(ex.places) == 1

    _browser_place_click(ex, "Place 1")  # second click: remove
    assert ex.places == [] and ex.map.places == [] and ex.map.selected is None
    assert not ex.result.landmarks.any()
    assert _trace(ex.allocation_chart, "landmark (").name == "landmark (0)"
    assert n_lm > 0


def test_malformed_browser_messages_change_nothing(alice):
    ex = explore(alice, rng=3, loss_model="none")
    release = ex.release
    for msg in ({"event": "map_click", "lat": "x", "lon": 1}, {"event": "map_click"},
                {"event": "map_click", "lat": float("nan"), "lon": 116.3},
                {"event": "map_click", "lat": 95.0, "lon": 116.3},
                {"event": "place_click", "name": 3}, {"event": "nope"}, ["not", "a", "dict"]):
        ex.map._handle_custom_msg(msg, [])
    _browser_place_click(ex, "no such place")
    assert ex.places == [] and ex.release is release


def test_unwrapped_longitude_from_leaflet_is_wrapped(alice):
    ex = explore(alice, rng=4, loss_model="none")
    _browser_click(ex, HOME[0], HOME[1] - 360.0)
    assert ex.places[0].lon == pytest.approx(HOME[1], abs=1e-9)
    np.testing.assert_array_equal(ex.result.landmarks, _inside(alice, *HOME, 100.0))


def test_settings_from_controls_update_release_and_chart_data(alice):
    ex = explore(alice, rng=5, interval_s=None, loss_model="none")
    _browser_click(ex, *HOME)
    n_lm = int(ex.result.landmarks.sum())

    ex.controls["epsilon"].value = 2.0
    assert ex.settings["epsilon"] == 2.0 and ex.release.epsilon == 2.0
    assert np.array(_trace(ex.allocation_chart, "budget ε_t").y, dtype=float).max() == 2.0
    assert _trace(ex.allocation_chart, "target ε").y == (2.0, 2.0)

    ex.controls["scheme"].value = "uniform"
    share = 2.0 / (n_lm + 1)
    np.testing.assert_allclose(ex.release.budget, share)
    np.testing.assert_allclose(np.array(_trace(ex.allocation_chart, "budget ε_t").y, float), share)
    assert np.max(ex.result.guarantee) <= 2.0 + 1e-9

    ex.controls["scheme"].value = "event"  # not landmark-private: the violation is drawn
    assert _trace(ex.allocation_chart, "G_t > ε (violation)")
    assert ex.result.summary()["landmark-private (G_t ≤ ε)"] is False

    # larger radius → larger planar-Laplace errors on average (mean 2r/ε_t per fresh release)
    ex.controls["scheme"].value = "event"
    small = ex.result.mae_m
    ex.controls["radius_m"].value = 2000.0
    assert ex.release.params["radius_m"] == 2000.0
    assert ex.result.mae_m > 3 * small
    err = np.array(_trace(ex.error_chart, "error").y, dtype=float)
    assert np.nanmean(err) > 3 * small


def test_release_interval_resamples(sample):
    traj = lk.select_user(sample, "bob")
    ex = explore(traj, rng=6, interval_s=None, loss_model="none")
    n_all = len(ex.release)
    assert n_all == len(traj)
    ex.controls["interval_s"].value = 600.0
    assert len(ex.release) == len(lk.resample(traj, 600)) < n_all
    x = _trace(ex.allocation_chart, "budget ε_t").x
    assert len(x) <= len(ex.release)


def test_python_api_and_controls_stay_in_sync(alice):
    ex = explore(alice, rng=7, loss_model="none")
    ex.set(epsilon=0.5, scheme="adaptive", radius_m=300.0)
    assert ex.controls["epsilon"].value == pytest.approx(0.5)
    assert ex.controls["scheme"].value == "adaptive"
    assert ex.release.scheme == "adaptive" and ex.release.epsilon == 0.5
    place = ex.add_place(*CLINIC, place_radius_m=250.0, name="Clinic")
    assert place.name == "Clinic" and ex.map.places[0]["radius_m"] == 250.0
    ex.remove_place("Clinic")
    assert ex.places == []


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf"), 1e308 * 10])
def test_bad_epsilon_is_refused_and_changes_nothing(alice, bad):
    with pytest.raises(ParameterError):
        ExplorerSession(alice, epsilon=bad)
    ex = explore(alice, rng=8, loss_model="none")
    release = ex.release
    ex.set(epsilon=bad)
    assert ex.settings["epsilon"] == 1.0 and ex.release is release
    assert "epsilon" in ex.status.value


def test_bad_settings_are_refused(alice):
    s = ExplorerSession(alice, loss_model="none")
    with pytest.raises(ParameterError, match="scheme"):
        s.update(scheme="bogus")
    with pytest.raises(ParameterError, match="radius_m"):
        s.update(radius_m=-5)
    with pytest.raises(ParameterError, match="unknown setting"):
        s.update(colour="red")
    with pytest.raises(ParameterError, match="already exists"):
        s.add_place(*HOME, name="A")
        s.add_place(*CLINIC, name="A")
    with pytest.raises(ParameterError, match="strength"):
        s.update(strength="extreme")
    with pytest.raises(ParameterError, match="dp_centre"):
        s.update(dp_centre=(95.0, 116.3))
    with pytest.raises(ParameterError, match="epsilon_model"):
        s.update(epsilon_model=0)
    with pytest.raises(ParameterError, match="total_budget"):
        ExplorerSession(alice, total_budget=-1.0)
    assert s.settings["strength"] == "moderate" and s.settings["epsilon_model"] == 0.5
    with pytest.raises(ParameterError):
        ExplorerSession(alice.iloc[:0])
    with pytest.raises(ParameterError):
        ExplorerSession(alice[["time"]])


def test_previews_are_seeded_simulations_and_real_draws_use_fresh_os_randomness(alice):
    a = ExplorerSession(alice, loss_model="none")
    b = ExplorerSession(alice, loss_model="none")
    assert a.result.kind == "preview" and a.result.release.seeded  # a simulation, labelled
    assert "simulat" in a.result.label
    assert not np.array_equal(a.result.release.lat, b.result.release.lat)  # fresh seeds
    c = ExplorerSession(alice, loss_model="none", rng=11)
    d = ExplorerSession(alice, loss_model="none", rng=11)
    np.testing.assert_array_equal(c.result.release.lat, d.result.release.lat)  # rng: previews
    first = c.result.release
    c.update(epsilon=2.0)
    c.update(epsilon=1.0)
    assert c.result.release is first  # the same setting shows the same preview
    c.new_preview()  # another simulated draw of the same setting, on request
    assert not np.array_equal(first.lat, c.result.release.lat)
    # real draws ignore rng: fresh OS randomness, not seeded
    c.draw()
    d.draw()
    assert c.result.kind == d.result.kind == "real"
    assert not c.result.release.seeded and not d.result.release.seeded
    assert not np.array_equal(c.result.release.lat, d.result.release.lat)
    assert not hasattr(c, "redraw")  # no way to redraw a real release


def test_exploring_is_free_drawing_costs_epsilon_once_and_is_never_redrawn(alice):
    s = ExplorerSession(alice, scheme="uniform", loss_model="none", total_budget=3.0)
    shown = []
    for eps in (0.5, 1.0, 2.0, 0.25):  # K settings explored, places clicked
        s.update(epsilon=eps)
        shown.append(s.result.release)
    s.add_place(*HOME)
    s.add_place(*CLINIC)
    s.remove_place("Place 2")
    s.new_preview()
    assert s.spent() == 0.0 and s.session.draws() == ()  # previews cost nothing
    assert all(r.seeded for r in shown)
    assert s.plan().cost == pytest.approx(0.25)

    s.update(epsilon=1.0)
    r = s.draw()
    assert r.kind == "real" and s.spent() == pytest.approx(1.0)  # counted when drawn
    drawn = r.drawn
    assert len(s.session.draws("alice")) == 1 and s.session.ledger("alice").entries
    s.update(epsilon=0.5)  # exploring on: a preview again, still free
    assert s.result.kind == "preview" and s.spent() == pytest.approx(1.0)
    s.update(epsilon=1.0)  # back to the drawn setting: the same draw, not a new one
    assert s.result.drawn is drawn and s.result.release is drawn.release
    assert s.draw().drawn is drawn and s.spent() == pytest.approx(1.0)
    with pytest.raises(ParameterError, match="never redrawn"):
        s.new_preview()

    s.update(epsilon=2.5)  # 1 + 2.5 > 3: refused before any noise is drawn
    with pytest.raises(BudgetExceededError, match="total budget"):
        s.draw()
    assert s.result.kind == "preview" and s.spent() == pytest.approx(1.0)
    s.set_total_budget(3.5)  # raised deliberately
    s.draw()
    assert s.spent() == pytest.approx(3.5) and s.total_budget() == 3.5
    # another person has a ledger of their own
    assert s.session.spent("bob") == 0.0


def test_a_preview_cannot_be_reported_or_exported(alice):
    ex = explore(alice, rng=12, loss_model="none")
    _browser_click(ex, *HOME)
    assert ex.result.kind == "preview"
    for export in (ex.report, ex.public_release):
        with pytest.raises(ParameterError, match="preview"):
            export()
    assert "PREVIEW" in ex.banner.value and not ex.draw_button.disabled
    assert "Draw the real release" in ex.draw_button.description
    assert "spent 0 of a total budget of 1" in ex.ledger.value
    ex.draw_button.click()  # the explicit action
    assert ex.result.kind == "real" and ex.spent == pytest.approx(1.0)
    assert "Real release" in ex.banner.value and ex.draw_button.disabled
    assert "spent 1 of a total budget of 1" in ex.ledger.value
    public = ex.public_release()
    assert list(public.columns) == ["time", "lat", "lon"]
    released = np.isfinite(ex.release.lat)  # nothing before the first fresh release
    np.testing.assert_array_equal(public["lat"], ex.release.lat[released])
    ex.set(epsilon=0.5)  # a new setting: a preview again, and drawing it would pass the total
    assert ex.result.kind == "preview"
    with pytest.raises(ParameterError, match="preview"):
        ex.report()
    assert "refused" in ex.ledger.value
    ex.draw()
    assert "total budget" in ex.status.value and ex.result.kind == "preview"
    assert ex.spent == pytest.approx(1.0)
    ex.budget_input.value = 1.5
    ex.budget_button.click()
    assert ex.total_budget == 1.5
    ex.draw()
    assert ex.result.kind == "real" and ex.spent == pytest.approx(1.5)


def test_report_is_private_complete_and_has_no_seed(alice):
    ex = explore(alice, rng=12, loss_model="moderate")
    _browser_click(ex, *HOME)
    ex.draw()
    report = ex.report()
    text = json.dumps(report, allow_nan=False)
    assert '"seed"' not in text and '"rng"' not in text  # no seed key anywhere
    assert report["lmdk"]["simulation"] is False  # a real draw, whatever rng was given
    assert report["settings"]["private"].startswith("PRIVATE")
    assert report["settings"]["ledger"] == {"person": "alice", "spent": 1.0,
                                            "total_budget": 1.0, "real_draws": 1}
    assert report["places"] == [
        {"name": "Place 1", "lat": HOME[0], "lon": HOME[1], "place_radius_m": 100.0}]
    n = len(ex.release)
    assert len(report["series"]["eps"]) == n and len(report["temporal"]["tpl"]) == n
    np.testing.assert_allclose(report["series"]["guarantee"], ex.result.guarantee)
    np.testing.assert_allclose(report["landmark_temporal_loss"], ex.result.loss.composed)
    assert report["correlation"]["source"] == "public"
    assert report["correlation"]["parameters"]["strength"] == "moderate"
    assert report["summary"]["n_landmarks"] == int(ex.result.landmarks.sum())
    assert report["metrics"]["mae_m"] == pytest.approx(lk.mae_metres(ex.result.traj, ex.release))
    assert ex.session.session.downloaded("alice") == (ex.result.drawn.token,)


def test_loss_chart_follows_the_correlation_model(alice):
    ex = explore(alice, rng=13, loss_model="none", scheme="uniform", total_budget=0.4)
    _browser_click(ex, *HOME)
    names = [t.name for t in ex.loss_chart.data]
    assert not any(n and n.startswith("TPL") for n in names)
    assert ex.result.loss is None and ex.result.model is None

    ex.controls["loss_model"].value = "preset"
    ex.controls["strength"].value = "strong"  # identity chain: TPL reaches the composition bound
    loss, model = ex.result.loss, ex.result.model
    eps = ex.release.budget
    assert model.source == "public" and "strong" in model.description
    np.testing.assert_allclose(loss.loss.tpl, eps.sum() * model.steps.worst, rtol=1e-9)
    assert model.description in ex.loss_chart.layout.title.text
    assert "preview" in ex.loss_chart.layout.title.text
    name = next(t.name for t in ex.loss_chart.data
                if t.name and t.name.startswith("landmark loss") and "upper bound" in t.name)
    composed = np.array(_trace(ex.loss_chart, name).y, float)
    assert composed.max() == pytest.approx(np.max(loss.composed))

    assert ex.controls["cell_m"].layout.display == "none"  # the released-points grid
    assert ex.controls["preset_extent_m"].value == 20_000.0
    ex.controls["preset_extent_m"].value = 50_000.0  # places further apart: larger steps
    assert ex.result.model.steps.worst > model.steps.worst
    assert "up to 50 km apart" in ex.result.model.description
    ex.controls["loss_model"].value = "released"
    r = ex.result
    assert r.model.source == "released" and ex.release is r.release  # same release shown
    assert np.all(r.loss.loss.tpl >= eps * r.model.steps.worst - 1e-12)
    assert np.all(r.loss.composed >= ex.result.guarantee - 1e-9)
    assert ex.controls["strength"].layout.display == "none"  # preset-only control hidden

    ex.controls["loss_model"].value = "dp"  # nothing drawn until asked: no chart, no cost
    assert ex.result.loss is None and ex.spent == 0.0
    assert "draw_dp_model" in ex.summary.value and ex.dp_button.layout.display is None
    ex.dp_button.click()
    assert "total budget" in ex.status.value and ex.spent == 0.0  # ε_model 0.5 > 0.4: refused
    ex.set_total_budget(2.0)
    ex.dp_button.click()
    assert ex.result.model.source == "dp" and ex.spent == pytest.approx(0.5)
    assert ex.result.model.protects == int(ex.result.landmarks.sum()) + 1
    ex.dp_button.click()  # the same model, not a second charge
    assert ex.spent == pytest.approx(0.5)

    ex.set(loss_model="trajectory")  # the model fitted to the true trace is gone
    assert "preset, released, dp, none" in ex.status.value
    assert ex.settings["loss_model"] == "dp"
    with pytest.raises(ParameterError, match="preset, released, dp, none"):
        ExplorerSession(alice, loss_model="trajectory")


def test_several_people_pick_one(sample):
    small = lk.resample(sample, 1800)
    ex = explore(small, rng=14, loss_model="none")
    assert ex.controls["user"].options == tuple(lk.users(small))
    assert set(ex.result.traj["uid"]) == {ex.settings["user"]}
    other = lk.users(small)[1]
    ex.controls["user"].value = other
    assert set(ex.result.traj["uid"]) == {other}


def test_map_is_offline_unless_tiles_are_chosen(alice):
    ex = explore(alice, rng=15, loss_model="none")
    assert ex.map.tiles == ""  # no tile layer: the map requests nothing
    esm, css = ex.map._esm, ex.map._css
    assert "Leaflet 1.9" in esm  # Leaflet inlined, not loaded from a CDN
    assert "import(" not in esm and "<script" not in esm
    assert "url(http" not in css.replace(" ", "") and "url(data:image" in css.replace(" ", "")
    ex.tiles.value = "osm"
    assert ex.map.tiles == lk.maps.OSM_TILES and "OpenStreetMap" in ex.map.attribution
    ex.tiles.value = "none"
    assert ex.map.tiles == ""
    assert tile_source("https://tiles.example/{z}/{x}/{y}.png")[0].endswith("{y}.png")
    for bad in ("ftp://x/{z}/{x}/{y}", "https://x/tiles", 3):
        with pytest.raises(ParameterError):
            tile_source(bad)


def test_display_produces_a_widget_bundle(alice):
    ex = explore(alice, rng=16, loss_model="none")
    bundle = ex._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "application/vnd.jupyter.widget-view+json" in data


@pytest.mark.parametrize(("interval", "label"), [("auto", "auto: every fix (≤ 5,000 timestamps)"),
                                                 (450.0, "7.5 min")])
def test_release_interval_shows_its_value_on_first_display(alice, interval, label):
    """Issue 27: the dropdown showed nothing. The browser draws the option at the synced
    ``index``; it must be the current setting from the first display on, also for an interval
    outside the presets (which used to raise 'Invalid selection' before it was added)."""
    ex = explore(alice, rng=17, loss_model="none", interval_s=interval)
    control = ex.controls["interval_s"]
    state = control.get_state()  # what the front end receives
    assert state["index"] is not None
    assert state["_options_labels"][state["index"]] == label
    assert control.value == interval == ex.settings["interval_s"]
    steps = [v for _label, v in control.options if isinstance(v, float)]
    assert steps == sorted(steps)  # an added interval is in order, not appended
    ex.set(interval_s=900.0)  # another value outside the presets, from Python
    state = ex.controls["interval_s"].get_state()
    assert state["_options_labels"][state["index"]] == "15 min"


def test_summary_shows_shares_and_numbers_as_the_app_does(alice):
    """Issue 27: 'fresh releases 0.1152' where the app says '12 %'. The share is read back from
    the summary table and checked against the released moments counted directly."""
    import re

    ex = explore(alice, rng=18, scheme="skip", interval_s=None, loss_model="none")
    _browser_click(ex, *HOME)
    rel = ex.result.release
    fresh, n = int(np.sum(rel.published)), len(rel.published)
    assert 0 < fresh < n
    cells = dict(re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td></tr>", ex.summary.value))
    shown = cells[SUMMARY_LABELS["fresh releases"]]
    assert re.fullmatch(r"\d{1,3} %", shown), shown
    assert abs(int(shown.removesuffix(" %")) - 100 * fresh / n) <= 0.5
    # other numbers: 3 significant digits, thousands separators, no long decimals
    assert not any(re.search(r"\d\.\d{4}", v) for v in cells.values()), cells


@pytest.mark.parametrize("model", ["none", "preset"])
def test_hiding_one_models_settings_leaves_every_other_control_shown(alice, model):
    """Issue 27 ('blank' controls): the controls shared ONE Layout, so hiding the settings of the
    models not chosen (display "none") hid every control in the browser — ε, scheme, radius,
    release interval, base map. Each control's own layout is what the front end draws."""
    ex = explore(alice, rng=19, loss_model=model)
    shown = {"epsilon", "scheme", "radius_m", "interval_s", "loss_model", "new_place_radius_m",
             *(("strength", "preset_extent_m") if model == "preset" else ())}
    hidden = {"strength", "preset_extent_m", "cell_m", "epsilon_model", "dp_extent_m",
              "dp_cell_m"} - shown
    displays = {k: c.layout.display for k, c in ex.controls.items()}
    assert all(displays[k] in (None, "") for k in shown), displays
    assert all(displays[k] == "none" for k in hidden), displays
    assert ex.tiles.layout.display in (None, "")
    assert ex.centre["lat"].layout.display == "none"  # the DP grid's centre: dp only


def test_auto_interval_names_what_it_picks_for_each_person(sample):
    """The "auto" choice says which interval it uses for the person shown, read back against
    the rule counted directly: the shortest preset whose resampled trace has ≤ 5,000 moments."""
    from lmdk_core.formatting import plain_duration
    from lmdk_core.jupyter.session import INTERVALS_S, MAX_TIMESTAMPS

    ex = explore(sample, rng=20, loss_model="none")
    for user in lk.users(sample)[:2]:
        ex.controls["user"].value = user
        one = lk.select_user(sample, user)
        fits = [s for s in INTERVALS_S if len(lk.resample(one, s)) <= MAX_TIMESTAMPS]
        expected = ("every fix" if len(one) <= MAX_TIMESTAMPS
                    else plain_duration(fits[0] if fits else INTERVALS_S[-1]))
        state = ex.controls["interval_s"].get_state()
        assert state["_options_labels"][state["index"]] == (
            f"auto: {expected} (≤ {MAX_TIMESTAMPS:,} timestamps)")
        assert len(ex.release) == (len(one) if expected == "every fix"
                                   else len(lk.resample(one, fits[0])))
