"""The Population page under streamlit.testing.v1.AppTest (standalone script, no browser).

Every test starts its own page on 200 people (no state shared between tests). Issue 23: the
previews are free; the real personalised release is charged to every person at once (ProPer:
those who cannot afford it are left out), never redrawn for the same settings, refused when
nobody can afford it; the download holds the released counts only.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from deferred_download import call_without_session, record_downloads
from page_charts import figures
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parent.parent / "dashboard" / "page_population.py")
STORE = "pages_store"


def fresh() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=180)
    at.session_state["_w_pop_n"] = 200
    return run(at)


@pytest.fixture
def app() -> AppTest:
    return fresh()


def run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def book(at: AppTest):
    return at.session_state[STORE]["pop_book"]


def draw(at: AppTest) -> AppTest:
    at.button(key="pop_draw").click()
    return run(at)


@pytest.mark.slow
def test_page_renders_maps_errors_and_kept_counts(app):
    assert not app.error
    errors = app.dataframe[0].value
    assert list(errors["method"]) == ["Personalised (Sample)", "Threshold", "Minimum",
                                      "User-level (uniform)"]
    mae = dict(zip(errors["method"], errors["MAE (occupied cells)"], strict=True))
    assert mae["Personalised (Sample)"] < mae["Minimum"] < mae["User-level (uniform)"]
    assert len(figures(app)) == 3
    for widget in (*app.number_input, *app.selectbox, *app.select_slider, *app.slider,
                   *app.button):
        assert widget.help, f"control {widget.label!r} has no help text"


@pytest.mark.slow
def test_slider_and_ledger_do_not_recompute_and_show_noisy_exclusions(app):
    before = app.session_state[STORE]["pop_result"]
    app.slider(key="_w_pop_bin").set_value(40)
    run(app)
    assert app.session_state[STORE]["pop_result"] is before  # memoised per session
    for _ in range(3):
        app.button(key="pop_ledger_run").click()
        run(app)
    table = app.dataframe[1].value
    assert list(table["query (day)"]) == [1, 2, 3]
    assert np.issubdtype(table["users left out (noisy count)"].dtype, np.integer)
    app.session_state[STORE]["pop_sim"]["ledger"].check()
    assert book(app).draws() == ()  # the simulated queries are previews: nothing charged


@pytest.mark.slow
def test_compute_with_uploaded_preferences_uses_no_private_tau():
    from dashboard.page_population import compute, population

    pop = population(50, 40, 0)
    prefs = pd.DataFrame({"uid": list(pop["uids"]), "epsilon": 0.5})
    out = compute(pop, "icde15", "skip", 1.0, 1, prefs)
    taus = dict(zip(out["errors"]["method"], out["errors"]["τ"], strict=True))
    assert taus["Personalised (Sample)"] == pytest.approx(1.0)  # the given number, not a rule


def test_previews_cost_nothing(app):
    for seed, tau, scheme in [(2, "median", "skip"), (3, "min_error", "uniform"),
                              (4, "mean", "user")]:
        app.number_input(key="_w_pop_seed").set_value(seed)
        app.selectbox(key="_w_pop_tau").set_value(tau)
        app.selectbox(key="_w_pop_scheme").set_value(scheme)
        run(app)
    assert book(app).draws() == ()
    assert _metric(app, "Real releases drawn") == "0"
    assert _metric(app, "Users whose budget is spent") == "0 of 200"
    assert not app.get("download_button")


def test_a_real_draw_charges_every_person_once_and_is_never_redrawn(app):
    draw(app)
    (drawn,) = book(app).draws()
    assert any("Real release drawn" in s.value for s in app.success)
    pop_key = drawn.population
    ledger = book(app)._ledgers[pop_key][1]
    users = drawn.release.private.users.set_index("uid")
    np.testing.assert_allclose(ledger.spent, users["loss"].reindex(ledger.uids).to_numpy())
    assert np.all(ledger.spent <= ledger.budget)
    ledger.check()
    assert _metric(app, "Real releases drawn") == "1"
    spent = ledger.spent.copy()
    app.number_input(key="_w_pop_seed").set_value(7)  # a preview setting: the same draw
    run(app)
    app.selectbox(key="_w_pop_tau").set_value("median")  # another release: not drawn yet
    run(app)
    assert not app.get("download_button")
    app.selectbox(key="_w_pop_tau").set_value("mean")
    run(app)
    assert book(app).draws() == (drawn,) and np.array_equal(ledger.spent, spent)
    assert app.get("download_button")


def test_a_second_release_leaves_out_who_cannot_afford_it(app):
    draw(app)  # skip, τ = mean: users with ε_u <= τ spend everything
    app.selectbox(key="_w_pop_tau").set_value("median")
    run(app)
    plan_text = " ".join(m.value for m in app.markdown if "Drawing now" in m.value)
    assert "would be left out" in plan_text and "ProPer" in plan_text
    draw(app)
    first, second = book(app).draws()
    assert second.n_excluded > 0
    assert _metric(app, "Left out of the last real release") == f"{second.n_excluded:,}"
    ledger = book(app)._ledgers[first.population][1]
    assert np.all(ledger.spent <= ledger.budget)
    kept = set(second.release.private.users["uid"])
    assert len(kept) == 200 - second.n_excluded


def test_a_release_nobody_can_afford_is_refused_and_nothing_is_charged():
    at = fresh()
    from dashboard.page_population import population

    uids = list(population(200, 200, 0)["uids"])
    csv = pd.DataFrame({"uid": uids, "epsilon": 0.5}).to_csv(index=False).encode()
    at.file_uploader(key="pop_prefs_upload").set_value(("prefs.csv", csv, "text/csv"))
    run(at)
    draw(at)  # skip, τ = 1: everyone pays min(0.5, 1) = 0.5, their whole budget
    assert _metric(at, "Users whose budget is spent") == "200 of 200"
    at.selectbox(key="_w_pop_scheme").set_value("uniform")
    run(at)
    assert any("would be refused" in w.value for w in at.warning)
    draw(at)
    assert any("none of the 200 users can afford" in e.value and "Nothing was drawn" in e.value
               for e in at.error)
    assert len(book(at).draws()) == 1 and _metric(at, "Real releases drawn") == "1"


@pytest.fixture
def downloads(monkeypatch):
    """Every download button's label, data and file name as the page draws it."""
    return record_downloads(monkeypatch)


def test_the_download_holds_the_released_counts_only(downloads):
    at = fresh()
    draw(at)
    assert set(downloads) == {"Released counts (CSV)"}
    text = call_without_session(downloads["Released counts (CSV)"]["data"])
    frame = pd.read_csv(io.StringIO(text))
    assert list(frame.columns) == ["time", "row", "col", "lat", "lon", "count"]
    (drawn,) = book(at).draws()
    np.testing.assert_array_equal(frame["count"].to_numpy(), drawn.release.counts.reshape(-1))
    for word in ("seed", "epsilon", "uid", "true", "tau"):
        assert word not in text.lower()
