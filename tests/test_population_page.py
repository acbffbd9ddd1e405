"""The Population page under streamlit.testing.v1.AppTest (standalone script, no browser).

Every test that acts on the page starts its own on 200 people (no state shared between them;
the tests that only read it share one, ``first``). Issue 23: the
previews are free; the real personalised release is charged to every person at once (ProPer:
those who cannot afford it are left out), never redrawn for the same settings, refused when
nobody can afford it; the download holds the released counts only.
"""

from __future__ import annotations

import base64
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


def fresh(store: dict | None = None) -> AppTest:
    """The page after its first run on 200 people; ``store``: the page's stored values the
    session already holds (what its controls would have stored)."""
    at = AppTest.from_file(PAGE, default_timeout=180)
    at.session_state["_w_pop_n"] = 200
    if store is not None:
        at.session_state[STORE] = store
    return run(at)


@pytest.fixture
def app() -> AppTest:
    return fresh()


@pytest.fixture(scope="module")
def first() -> AppTest:
    """The page after its first run, one per module, for the tests that only read it (they
    never click, set a widget or run it: a test that does takes ``app``)."""
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
def test_page_renders_maps_errors_and_kept_counts(first):
    app = first
    assert not app.error
    errors = app.dataframe[0].value
    assert [m.split(":")[0] for m in errors["method"]] == ["Personalised", "Threshold",
                                                           "Minimum", "User-level"]
    mae = dict(zip([m.split(":")[0] for m in errors["method"]],
                   errors["average error, cells with people (MAE)"], strict=True))
    assert mae["Personalised"] < mae["Minimum"] < mae["User-level"]
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
def test_own_budgets_do_not_move_tau():
    """τ is computed from the public mix: setting people's own budgets leaves it unchanged."""
    from dashboard.page_population import compute, population, population_preferences

    pop = population(50, 40, 0)
    drawn = population_preferences(pop, "icde15")
    own = pd.DataFrame({"uid": list(pop["uids"]), "epsilon": 0.05})
    taus = [compute(pop, "icde15", "skip", "mean", 1, p)["errors"]["threshold τ"].iloc[0]
            for p in (drawn, own)]
    assert taus[0] == taus[1]


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
    from dashboard.page_population import population

    pop = population(200, 200, 0)  # the page's 200 people: everyone's own budget is 0.1
    at = fresh({"pop_budgets": {pop["source"]: dict.fromkeys(pop["uids"], 0.1)}})
    draw(at)  # skip, τ = mean of the mix > 0.1: everyone pays 0.1, their whole budget
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


# ------------------------------------------------------------ issue 27: the page a newcomer meets

JARGON = {  # token → plain words that must stand beside it (same label/help, caption or cell)
    "ProPer": "personal-budget ledger", "UniTraX": "drop out", "icde15": "% conservative",
    "Sample mechanism": "counted only some of the time", "ConTPL": "hour to hour",
    "MAE": "average error", "min_error": "smallest expected error", "quantile:": "lie below",
    "τ": "threshold", "ε": "budget", "Skip": "not counted", "User-level": "all hours",
}


def _visible_texts(at: AppTest) -> list[str]:
    """Every piece of text a person can see or hover, one string per element: a widget's
    label, help and options together; a table's columns and cells; a chart's titles and
    legend."""
    texts = [e.value for kind in ("title", "subheader", "markdown", "caption", "info",
                                  "warning", "error", "success") for e in at.get(kind)]
    texts += [f"{m.label} {m.proto.help}" for m in at.metric]
    for kind in ("selectbox", "select_slider", "slider", "number_input", "button",
                 "date_input", "radio"):
        for wdg in at.get(kind):
            opts = [str(o) for o in getattr(wdg, "options", [])]
            texts.append(" ".join([wdg.label, wdg.help or "", *opts]))
    texts += [e.label for e in at.get("expander")]
    texts += [u.proto.label + " " + u.proto.help for u in at.get("file_uploader")]
    for table in at.dataframe:
        frame = table.value
        texts.append(" ".join(map(str, frame.columns)))
        texts += [str(v) for c in frame.columns if frame[c].dtype == object for v in frame[c]]
    for fig in figures(at).values():
        layout = fig.get("layout", {})
        texts.append(" ".join([str(layout.get("title", {}).get("text", "")),
                               str(layout.get("yaxis", {}).get("title", {}).get("text", "")),
                               *[str(t.get("name", "")) for t in fig.get("data", [])]]))
    return texts


def test_every_jargon_word_has_plain_words_beside_it(first):
    texts = _visible_texts(first)
    seen = {token for token in JARGON for t in texts if token in t}
    assert {"ProPer", "UniTraX", "icde15", "τ", "ε", "MAE"} <= seen  # the scan reads the page
    missing = [(token, t[:90]) for t in texts for token, plain in JARGON.items()
               if token in t and plain.lower() not in t.lower()]
    assert not missing, missing


def test_the_scan_catches_a_bare_acronym():
    """The scan above fails on a caption that names ProPer without saying what it is."""
    bad = "Users who cannot afford a query are left out (ProPer)."
    assert [t for t in JARGON if t in bad and JARGON[t].lower() not in bad.lower()]


def _population_csv(people: list[str], bad_row: bool = False) -> bytes:
    rows = ["uid,time,lat,lon"]
    for i, who in enumerate(people):
        for k in range(12):  # one fix an hour from 02:00, near a spot of their own
            rows.append(f"{who},2008-02-02T{2 + k:02d}:{7 * i % 60:02d}:00Z,"
                        f"{39.90 + 0.02 * i + 0.0001 * k:.5f},{116.40 + 0.02 * i:.5f}")
    if bad_row:
        rows.append("x,not a time,abc,116.4")
    return "\n".join(rows).encode()


def _array(v) -> np.ndarray:
    """A plotted array as the page holds it (plain list or plotly's typed bdata)."""
    if isinstance(v, dict) and "bdata" in v:
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
    return np.asarray(v, dtype=float)


def _kept_ok(at: AppTest, n_people: int, true_total: np.ndarray) -> None:
    """The counted-per-hour chart: every released line in [0, n_people]; only a line labelled
    private shows the true counts."""
    from dashboard.page_population import PRESENT_LABEL

    fig = next(f for i, f in figures(at).items() if i.endswith("pop_kept"))
    for trace in fig["data"]:
        y = _array(trace["y"])
        if trace["name"] == PRESENT_LABEL:
            assert "private" in trace["name"]
            np.testing.assert_array_equal(y, true_total)
        else:
            assert "released" in trace["name"] and y.min() >= 0 and y.max() <= n_people


def test_own_population_upload_own_budgets_and_a_bad_file():
    at = fresh()
    at.selectbox(key="_w_pop_tau").set_value("median")  # a setting that must survive
    run(at)
    names = ["ana", "bo", "chen", "dee", "eli"]
    at.file_uploader(key="pop_traj_upload").set_value(
        ("mine.csv", _population_csv(names), "text/csv"))
    run(at)
    assert not at.error, [e.value for e in at.error]
    result = at.session_state[STORE]["pop_result"][1]
    rel = result["releases"]["personalised"]
    assert sorted(rel.private.users["uid"]) == names  # the release counts these people
    assert rel.private.n_points - rel.private.n_outside == 60
    _kept_ok(at, 5, result["true"].sum(axis=(1, 2)))
    assert not [x for x in at.select_slider if x.key == "_w_pop_n"]  # no sample size now
    for widget in (*at.number_input, *at.selectbox, *at.select_slider, *at.slider,
                   *at.button, *at.date_input):
        assert widget.help, f"control {widget.label!r} has no help text"
    # own budgets: people are picked from the file's ids, not typed synthetic ones
    who = at.selectbox(key="pop_who")
    assert list(who.options) == names
    who.set_value("chen")
    at.number_input(key="pop_who_eps").set_value(0.05)
    at.button(key="pop_who_set").click()
    run(at)
    people = at.session_state[STORE]["pop_result"][1]["prefs"].set_index("uid")["epsilon"]
    assert people["chen"] == pytest.approx(0.05) and (people.drop("chen") != 0.05).all()
    draw(at)
    (drawn,) = book(at).draws()
    ledger = book(at)._ledgers[drawn.population][1]
    assert dict(zip(ledger.uids, ledger.budget, strict=True))["chen"] == pytest.approx(0.05)
    assert at.button(key="pop_who_set").disabled  # budgets fixed once drawn on
    assert at.selectbox(key="_w_pop_mix").disabled
    at.number_input(key="_w_pop_own_days").set_value(2)  # another window, the same people:
    run(at)  # their ledger (spends and draws) goes on; the new window is not drawn yet
    assert _metric(at, "Real releases drawn") == "1" and not at.get("download_button")
    assert book(at)._ledgers[drawn.population][1] is ledger
    # a malformed file: a clear message, no traceback, the population and settings stay
    at.file_uploader(key="pop_traj_upload").set_value(
        ("broken.csv", b"who,when\n1,2\n", "text/csv"))
    run(at)
    (err,) = [e.value for e in at.error]
    assert "could not be read" in err and "broken.csv" in err and "Traceback" not in err
    kept = at.session_state[STORE]["pop_result"][1]["releases"]["personalised"]
    assert sorted(kept.private.users["uid"]) == names
    assert at.selectbox(key="_w_pop_tau").value == "median"
    assert book(at).draws() == (drawn,)
    at.number_input(key="_w_pop_own_days").set_value(31)  # a window too big for the page:
    at.select_slider(key="_w_pop_own_cell").set_value(500.0)  # said, and nothing falls back
    run(at)
    assert any("cannot be released on this window" in e.value for e in at.error)
    assert not at.get("download_button") and not figures(at)
    at.button(key="pop_own_forget").click()  # back to the sample: the file is not read again
    run(at)
    users = at.session_state[STORE]["pop_result"][1]["releases"]["personalised"].private.users
    assert len(users) == 200 and not set(users["uid"]) & set(names)
    other = fresh()  # another browser session at the same time sees the sample, not the file
    users = other.session_state[STORE]["pop_result"][1]["releases"]["personalised"]
    assert not set(users.private.users["uid"]) & set(names)
    assert other.session_state[STORE].get("pop_own") is None
