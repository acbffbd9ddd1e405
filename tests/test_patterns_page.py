"""The Patterns page under streamlit.testing.v1.AppTest (no browser).

Every test that acts on the page starts its own (no state shared between them, so any order
gives the same results; the tests that only read it share one, ``first``). Issue 23: previews
are free; a real draw is counted when drawn, at ε per protected pattern occurrence, never
redrawn for the same settings, refused before it would pass the total budget (its own control,
not ε); the download holds the released events only.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from deferred_download import call_without_session, record_downloads
from page_charts import figure, figures
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parent.parent / "dashboard" / "page_patterns.py")
TIMEOUT = 180
STORE = "pages_store"


def fresh() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture
def page() -> AppTest:
    return fresh()


@pytest.fixture(scope="module")
def first() -> AppTest:
    """The page after its first run, one per module, for the tests that only read it (they
    never click, set a widget or run it: a test that does takes ``page``)."""
    return fresh()


def run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _text(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def _metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def book(at: AppTest):
    return at.session_state[STORE]["pat_book"]


def person(at: AppTest) -> tuple:
    return ("sample", at.selectbox(key="_w_pat_user").value)


def set_eps(at: AppTest, eps: float) -> AppTest:
    at.number_input(key="_w_pat_eps").set_value(eps)
    return run(at)


def set_budget(at: AppTest, total: float) -> AppTest:
    """Type ``total`` as the total budget and press "Set total budget": one run, since the
    button's callback reads the field when clicked (state.page_set_budget; that typing alone
    sets nothing is test_the_budget_is_its_own_control_not_epsilon's)."""
    at.number_input(key="_w_pat_budget_input").set_value(total)
    at.button(key="pat_set_budget").click()
    return run(at)


def draw(at: AppTest) -> AppTest:
    at.button(key="pat_draw").click()
    return run(at)


# ----------------------------------------------------------------------------- previews


def test_page_renders_release_timeline_and_quality(first):
    page = first
    assert not page.error
    assert "Guarantee" in _text(page) and "e^ε" in _text(page)
    assert len(figures(page)) == 2  # timeline + quality
    lines = figure(page, "pat_quality")["data"]  # issue 27: four lines, none hidden
    assert len({(t["line"]["dash"], t["marker"]["symbol"]) for t in lines}) == len(lines) == 4
    assert any(t["name"].endswith("same as Uniform PPM") for t in lines)  # Adaptive = Uniform
    labels = [m.label for m in page.metric]
    assert "real events suppressed" in labels and "synthetic events injected" in labels
    for widget in (*page.number_input, *page.selectbox, *page.radio, *page.slider,
                   *page.button):
        assert widget.help, f"control {widget.label!r} has no help text"
    assert any("preview (simulation)" in h.value for h in page.subheader)


def test_changing_epsilon_reuses_the_quality_simulations(page, monkeypatch):
    """A new ε redraws the preview only: the quality curves (all ε of the grid) are not
    simulated again. (Counted, not timed: a wall-clock bound failed on a loaded machine;
    bench/bench_patterns.py measures the time.)"""
    from lmdk_core.patterns import evaluate

    calls = []
    compare = evaluate.compare
    monkeypatch.setattr(evaluate, "compare", lambda *a, **k: calls.append(1) or compare(*a, **k))
    page.number_input(key="_w_pat_eps").set_value(4.0)
    run(page)
    assert "e^ε = 54.6" in _text(page)
    assert calls == []
    page.multiselect(key="_w_pat_mechs").set_value(["uniform"])  # the simulations' own
    page.number_input(key="_w_pat_runs").set_value(1)  # settings: simulated again, once
    run(page)
    assert calls == [1]


def test_single_event_reading_states_the_weaker_guarantee(page):
    page.radio(key="_w_pat_neighbour").set_value("event")
    run(page)
    assert "single-event reading" in _text(page)


def test_builder_error_is_shown_and_patterns_are_kept(page):
    before = page.session_state[STORE]["pat_patterns_sample"]
    page.button[0].click()  # "Add pattern" with no event type picked
    run(page)
    assert any("pick at least one event type" in e.value for e in page.error)
    assert page.session_state[STORE]["pat_patterns_sample"] == before


def test_builder_adds_a_pattern(page):
    page.multiselect(key="pat_new_seq").set_value(["enter:Work", "leave:Work"])
    page.button[0].click()
    run(page)
    rows = page.session_state[STORE]["pat_patterns_sample"]
    assert rows[-1]["sequence"] == "enter:Work → leave:Work"
    assert rows[-1]["private"] is False
    assert not page.error


@pytest.mark.slow
def test_taxi_source_runs():
    at = fresh()
    at.radio(key="_w_pat_source").set_value("taxis")
    # every section runs on the taxis; section 4 simulates one mechanism once per ε (the
    # default four, four runs each, were most of this test's CPU: each mechanism's simulations
    # are the library's tests, tests/test_patterns*.py)
    at.multiselect(key="_w_pat_mechs").set_value(["uniform"])
    at.number_input(key="_w_pat_runs").set_value(1)
    run(at)
    quality = next(d.value for d in at.dataframe if "seeds" in d.value.columns)
    assert list(quality["mechanism"]) and (quality["seeds"] == 1).all()  # ran on the taxis
    assert "H0" in _text(at)
    assert any("Real releases of the taxis" in m.label for m in at.metric)


def _cells_note(at: AppTest) -> dict[str, str]:
    """{place: cell} from the page's note on the grid's starting patterns."""
    note = next(c.value for c in at.caption if "starting patterns use the cells" in c.value)
    pairs = note.rsplit(": ", 1)[1].rstrip(".").split(", ")
    return dict(p.replace("\\", "").split(" in ") for p in pairs)


def test_grid_mode_starts_with_the_places_patterns_on_their_cells(page):
    """Issue 27: grid regions used to keep the place patterns (leave:Home …), unknown there, so
    a newcomer's first grid page was an error. Now the grid starts with the same patterns on
    the cells holding those places; switching back restores the place patterns untouched."""
    places = page.session_state[STORE]["pat_patterns_sample"]
    page.multiselect(key="_w_pat_mechs").set_value([])  # no quality simulations: faster
    page.radio(key="_w_pat_regions").set_value("grid")
    run(page)
    assert not page.error
    cells = _cells_note(page)
    assert set(cells) == {"Home", "Work", "Clinic"}
    types = set(page.multiselect(key="pat_new_seq").options)
    user = page.selectbox(key="_w_pat_user").value
    grid = page.session_state[STORE][f"pat_patterns_sample_grid_{user}_1000"]
    assert [(r["name"], r["private"]) for r in grid] == [(r["name"], r["private"]) for r in places]
    for g, p in zip(grid, places, strict=True):  # leave:Home → leave:<Home's cell>, in order
        expect = " → ".join(f"{k}:{cells[name]}" for k, name in
                            (t.split(":") for t in p["sequence"].split(" → ")))
        assert g["sequence"] == expect
        assert set(g["sequence"].split(" → ")) <= types
    assert "Guarantee" in _text(page)  # the preview ran on them
    page.number_input(key="_w_pat_cell").set_value(2000.0)  # other cells: their own defaults
    run(page)
    assert not page.error
    assert f"pat_patterns_sample_grid_{user}_2000" in page.session_state[STORE]
    page.radio(key="_w_pat_regions").set_value("places")
    run(page)
    assert not page.error
    assert page.session_state[STORE]["pat_patterns_sample"] == places


def test_a_pattern_of_types_the_regions_lack_says_what_to_do(page):
    """A genuine mistake (a place's event type typed into the grid's table) is an error that
    names the type and says how to fix it."""
    page.multiselect(key="_w_pat_mechs").set_value([])
    page.radio(key="_w_pat_regions").set_value("grid")
    run(page)
    user = page.selectbox(key="_w_pat_user").value
    rows = page.session_state[STORE][f"pat_patterns_sample_grid_{user}_1000"]
    rows.append({"name": "typo", "sequence": "enter:Home", "window_min": 60.0,
                 "private": False})
    run(page)
    (error,) = [e.value.replace("\\", "") for e in page.error]
    assert f"pattern row {len(rows)}: enter:Home is not an event type" in error
    assert "Pick the types from the list in 'Sequence' above, fix the row, or delete it" in error


def _all_text(at: AppTest) -> str:
    """Every sentence the page shows, and its figures' titles and legend entries."""
    parts = [e.value for kind in ("markdown", "caption", "success", "warning", "error", "info")
             for e in at.get(kind)]
    parts += [f"{m.label} {m.value}" for m in at.metric]
    for fig in figures(at).values():
        parts.append(fig["layout"]["title"]["text"])
        parts += [t.get("name", "") for t in fig["data"]]
    return "\n".join(parts)


def test_counts_are_singular_for_one(first):
    """Issue 27: '1 events' — the sample's first person has one event in the history day."""
    page = first
    text = _all_text(page).replace("\\", "")
    assert "(1 event in the history day)" in text
    assert not re.search(r"(?<![\d,.])1 (events|ticks|event types|draws|runs)\b", text), text


def test_previews_cost_nothing_and_cannot_be_downloaded(page):
    for eps, mech, seed in [(0.5, "uniform", 2), (4.0, "adaptive", 3), (8.0, "uniform", 4),
                            (1.0, "adaptive", 5)]:
        page.number_input(key="_w_pat_eps").set_value(eps)
        page.selectbox(key="_w_pat_mech").set_value(mech)
        page.number_input(key="_w_pat_seed").set_value(seed)
        run(page)
    page.radio(key="_w_pat_neighbour").set_value("event")
    run(page)
    assert book(page).spent(person(page)) == 0.0
    assert book(page).ledger(person(page)).entries == () and book(page).draws() == ()
    assert _metric(page, "Spent so far / your total budget") == "0 / not set"
    assert not page.get("download_button")


# ----------------------------------------------------------------------------- real draws


def test_a_real_draw_needs_a_total_budget_set_first(page):
    draw(page)
    assert any("no total budget is set" in e.value for e in page.error)
    assert book(page).ledger(person(page)).entries == ()


def test_drawing_counts_epsilon_and_the_same_setting_returns_the_same_draw(page):
    set_budget(page, 10.0)
    draw(page)
    who = person(page)
    assert book(page).spent(who) == pytest.approx(2.0)  # the default ε = 2, per occurrence
    assert _metric(page, "Spent so far / your total budget") == "2 / 10"
    assert any("Real release drawn" in s.value for s in page.success)
    (first,) = book(page).draws(who)
    set_eps(page, 3.0)  # another setting: not drawn, costs nothing yet
    assert not page.get("download_button") and book(page).spent(who) == pytest.approx(2.0)
    set_eps(page, 2.0)  # back: the same draw, never redrawn
    assert book(page).draws(who) == (first,)
    assert book(page).spent(who) == pytest.approx(2.0)
    assert _metric(page, "This release costs") == "0"  # already drawn: nothing more
    assert page.get("download_button")


def test_drawing_k_settings_costs_their_sum(page):
    set_budget(page, 100.0)
    for eps in (0.5, 1.0, 2.5, 4.0):
        set_eps(page, eps)
        draw(page)
    who = person(page)
    assert book(page).spent(who) == pytest.approx(8.0)
    assert [e.epsilon for e in book(page).ledger(who).entries] == [0.5, 1.0, 2.5, 4.0]
    table = page.dataframe[-2].value  # the ledger's draws
    assert list(table["loss per occurrence"]) == [0.5, 1.0, 2.5, 4.0]


def test_the_budget_is_its_own_control_not_epsilon(page):
    set_budget(page, 3.0)
    who = person(page)
    set_eps(page, 8.0)
    assert book(page).total_budget(who) == 3.0  # raising ε does not raise the budget
    page.number_input(key="_w_pat_budget_input").set_value(50.0)
    run(page)
    assert book(page).total_budget(who) == 3.0  # typing is not setting: the button is
    assert _metric(page, "Spent so far / your total budget") == "0 / 3"


def test_a_draw_past_the_budget_is_refused_and_nothing_is_recorded(page):
    set_budget(page, 3.0)
    draw(page)  # ε = 2
    who = person(page)
    set_eps(page, 1.5)
    assert any("would be refused" in w.value for w in page.warning)  # warned before
    draw(page)
    refused = [e.value for e in page.error]
    assert any("above your total budget 3" in e and "Nothing was drawn" in e for e in refused)
    assert len(book(page).ledger(who).entries) == 1
    assert book(page).spent(who) == pytest.approx(2.0)
    assert not page.get("download_button")
    set_eps(page, 1.0)  # fits exactly: allowed, and the old refusal is not shown for it
    assert not page.error
    draw(page)
    assert book(page).spent(who) == pytest.approx(3.0)


@pytest.fixture
def downloads(monkeypatch):
    """Every download button's label, data and file name as the page draws it."""
    return record_downloads(monkeypatch)


def test_the_download_holds_the_released_events_only(downloads):
    at = fresh()
    set_budget(at, 5.0)
    draw(at)
    assert set(downloads) == {"Public release (CSV)"}
    d = downloads["Public release (CSV)"]
    # named by mechanism and ε (issue 27: releases at different ε must not share a name)
    eps = at.number_input(key="_w_pat_eps").value  # the ε the page released with
    assert d["file_name"] == f"lmdk_public_pattern_release_uniform_eps{eps:g}.csv"
    text = call_without_session(d["data"])
    frame = pd.read_csv(io.StringIO(text))
    assert list(frame.columns) == ["uid", "time", "type", "lat", "lon"]
    (drawn,) = book(at).draws(person(at))
    assert len(frame) == len(drawn.release.stream)
    for word in ("seed", "suppressed", "injected", "epsilon", "private"):
        assert word not in text.lower()


# ----------------------------------------------------------------------------- issue 24, finding 1


def test_the_page_protects_the_paired_types_and_says_why(page):
    """Private "to the clinic" (leave:Home → enter:Clinic): the page also protects enter:Home
    and leave:Clinic, says so in plain words, states the guarantee over the whole footprint and
    what it does not cover, and a real draw still costs ε per occurrence. (Type names are
    user-provided: the page escapes them for markdown, hence the backslashes removed here.)"""
    text = _text(page).replace("\\", "")
    assert "enter:Home is protected too because it pairs with leave:Home" in text
    assert "leave:Clinic is protected too because it pairs with enter:Clinic" in text
    assert ("seeing the release can multiply their odds that the occurrence happened by at "
            "most 7.39") in text
    not_covered = text.split("Not covered:** events of the other types (", 1)[1].split(")")[0]
    assert "enter:Work" in not_covered and "enter:Home" not in not_covered
    budgets = next(d.value for d in page.dataframe if "protected because" in d.value.columns)
    assert dict(zip(budgets["event type"], budgets["ε per event"], strict=True)) == {
        "leave:Home": 0.5, "enter:Home": 0.5, "enter:Clinic": 0.5, "leave:Clinic": 0.5}
    assert set(budgets["protected because"]) == {"in a private pattern", "pairs with leave:Home",
                                                 "pairs with enter:Clinic"}
    assert any("history day holds too few events" in c.value for c in page.caption)
    set_budget(page, 10.0)
    draw(page)
    (drawn,) = book(page).draws(person(page))
    assert set(drawn.release.type_epsilon) == {"leave:Home", "enter:Home", "enter:Clinic",
                                               "leave:Clinic"}
    assert book(page).spent(person(page)) == pytest.approx(2.0)


def test_the_page_warns_when_an_unprotected_type_predicts_a_protected_one(monkeypatch):
    import lmdk_core.patterns as pt

    def strong(history, pats):
        return pd.DataFrame([{"unprotected": "enter:Work", "protected": "leave:Home",
                              "window_s": 7200.0, "events": 9, "hits": 9, "precision": 1.0,
                              "base_rate": 0.2, "strong": True}])

    monkeypatch.setattr(pt, "predictive_types", strong)
    at = fresh()
    (warning,) = [w.value.replace("\\", "") for w in at.warning
                  if "give a protected one away" in w.value]
    assert "**enter:Work**: 9 of its 9 events had a **leave:Home** within 120 min" in warning
    assert any("What is checked: on the history day only" in c.value for c in at.caption)


def page_functions(*names: str, **ns) -> dict:
    """The page's functions ``names``, compiled from its source with the globals ``ns`` (the
    page module runs the page when imported)."""
    import ast

    source = (Path(__file__).resolve().parent.parent / "dashboard" / "page_patterns.py")
    tree = ast.parse(source.read_text(encoding="utf-8"))
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in names]
    assert len(fns) == len(names)
    exec(compile(ast.Module(fns, []), str(source), "exec"), ns)
    return ns


def test_region_and_pattern_names_are_text_in_the_guarantee():
    """Issue 24 finding 6 on this page: region names come from the user's table and reach the
    guarantee sentence (markdown); a name that is a markdown image fetches nothing."""
    from dashboard.formatting import plain_text
    from lmdk_core.patterns import Pattern, protection

    ns = page_functions("guarantee_sentence", np=np, plain_text=plain_text,
                        protection=protection, Pattern=Pattern)
    evil = "enter:![x](https://tracker.example/p.png)"
    sentence = ns["guarantee_sentence"](
        "instance", 2.0, [Pattern((evil, "leave:Home"), 3600.0, private=True)],
        (evil, "leave:Home", "enter:Work"))
    assert "![x](" not in sentence and "\\!\\[x\\]\\(" in sentence


def test_grid_patterns_put_each_place_on_the_cell_holding_it():
    """The grid's starting patterns, checked against cells placed by hand: each place sits at
    the centre of a chosen cell (500 m from every edge, so any local projection agrees); a
    pattern naming a place outside the grid is left out, the others keep name and flag."""
    from lmdk_core.patterns import GridRegions

    ns = page_functions("default_patterns", "grid_patterns", pd=pd, GridRegions=GridRegions)
    grid = GridRegions(40.0, 116.0, 1000.0, 3, 4)
    m_per_deg_lat, m_per_deg_lon = 111_195.0, 111_195.0 * np.cos(np.radians(40.0))

    def at(row: float, col: float) -> tuple[float, float]:
        return (40.0 + (row + 0.5) * 1000 / m_per_deg_lat,
                116.0 + (col + 0.5) * 1000 / m_per_deg_lon)

    places = pd.DataFrame([("Home", *at(1, 2)), ("Work", *at(0, 0)), ("Clinic", *at(2, 3))],
                          columns=["name", "lat", "lon"])
    rows = ns["default_patterns"]("sample")
    out, cells = ns["grid_patterns"](rows, places, grid)
    assert cells == {"Home": "r1c2", "Work": "r0c0", "Clinic": "r2c3"}
    assert [r["sequence"] for r in out] == ["leave:r1c2 → enter:r2c3", "leave:r1c2 → enter:r0c0",
                                            "leave:r0c0 → enter:r1c2"]
    assert [(r["name"], r["private"], r["window_min"]) for r in out] == [
        (r["name"], r["private"], r["window_min"]) for r in rows]
    places.loc[2, ["lat", "lon"]] = at(5, 3)  # the clinic north of the grid
    out, cells = ns["grid_patterns"](rows, places, grid)
    assert "Clinic" not in cells
    assert [r["name"] for r in out] == ["commute", "home again"]
