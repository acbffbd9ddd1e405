"""Issue 23 finding 6 for the Patterns and Population pages: their settings survive a visit to
another page of the app (Streamlit drops the state of every widget a run does not draw), and
their real draws and ledgers stay. AppTest on dashboard/app.py (st.navigation), with the map
component replaced as in test_app.py."""

from __future__ import annotations

import pytest
from apptest_helpers import APP, TIMEOUT, run
from streamlit.testing.v1 import AppTest

STORE = "pages_store"


@pytest.fixture
def app(fake_map):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["tiles"] = "none"
    at.session_state["_w_pop_n"] = 200  # a small population keeps the test quick
    return run(at)


def _to_my_trace(at: AppTest) -> AppTest:
    """Back to the My trace page (a function page: AppTest.switch_page takes files only)."""
    at._page_hash = next(h for h, info in at._registered_pages.items()
                         if info.get("page_name") == "My trace")
    return run(at)


def _patterns_settings(at: AppTest) -> dict:
    return {"eps": at.number_input(key="_w_pat_eps").value,
            "mech": at.selectbox(key="_w_pat_mech").value,
            "person": at.selectbox(key="_w_pat_user").value,
            "seed": at.number_input(key="_w_pat_seed").value,
            "neighbour": at.radio(key="_w_pat_neighbour").value,
            "days": at.slider(key="_w_pat_tl_days").value,
            "kinds": at.multiselect(key="_w_pat_kinds_sample").value,
            "mechs": at.multiselect(key="_w_pat_mechs").value}


def _population_settings(at: AppTest) -> dict:
    return {"n": at.select_slider(key="_w_pop_n").value,
            "scheme": at.selectbox(key="_w_pop_scheme").value,
            "tau": at.selectbox(key="_w_pop_tau").value,
            "seed": at.number_input(key="_w_pop_seed").value,
            "bin": at.slider(key="_w_pop_bin").value}


@pytest.mark.slow
def test_patterns_and_population_settings_survive_page_switches(app):
    run(app.switch_page("page_patterns.py"))
    people = app.selectbox(key="_w_pat_user").options
    app.selectbox(key="_w_pat_user").set_value(people[1])
    app.number_input(key="_w_pat_eps").set_value(3.5)
    app.selectbox(key="_w_pat_mech").set_value("adaptive")
    app.number_input(key="_w_pat_seed").set_value(9)
    app.slider(key="_w_pat_tl_days").set_value(2)
    app.multiselect(key="_w_pat_kinds_sample").set_value(["enter", "leave", "dwell"])
    # no quality simulations (section 4, most of this test's CPU on every new pattern list):
    # an empty choice is a setting that must survive the visits too
    app.multiselect(key="_w_pat_mechs").set_value([])
    run(app)
    app.multiselect(key="pat_new_seq").set_value(["enter:Work", "leave:Work"])
    app.button[0].click()  # Add pattern
    run(app)
    app.number_input(key="_w_pat_budget_input").set_value(12.0)
    app.button(key="pat_set_budget").click()  # one run: the callback reads the field
    run(app)
    app.button(key="pat_draw").click()
    run(app)
    patterns = _patterns_settings(app)
    rows = list(app.session_state[STORE]["pat_patterns_sample"])
    assert rows[-1]["sequence"] == "enter:Work → leave:Work"
    book = app.session_state[STORE]["pat_book"]
    assert len(book.draws()) == 1

    run(app.switch_page("page_population.py"))
    assert "_w_pat_eps" not in app.session_state  # Streamlit dropped the Patterns widgets
    app.selectbox(key="_w_pop_scheme").set_value("uniform")
    app.selectbox(key="_w_pop_tau").set_value("median")
    app.number_input(key="_w_pop_seed").set_value(5)
    app.slider(key="_w_pop_bin").set_value(30)
    run(app)
    population = _population_settings(app)
    assert population == {"n": 200, "scheme": "uniform", "tau": "median", "seed": 5, "bin": 30}

    run(app.switch_page("page_patterns.py"))
    assert "_w_pop_scheme" not in app.session_state
    assert _patterns_settings(app) == patterns
    assert patterns["eps"] == 3.5 and patterns["person"] == people[1] and patterns["mechs"] == []
    assert list(app.session_state[STORE]["pat_patterns_sample"]) == rows
    assert app.session_state[STORE]["pat_book"] is book and len(book.draws()) == 1
    assert any("Real release drawn" in s.value for s in app.success)  # the same draw

    _to_my_trace(app)
    assert not app.exception
    run(app.switch_page("page_population.py"))
    assert _population_settings(app) == population
    run(app.switch_page("page_patterns.py"))
    assert _patterns_settings(app) == patterns



def _script() -> None:
    import streamlit as st

    from dashboard import state

    if st.session_state.get("show", True):
        st.number_input("ε", 0.1, 20.0, key=state.page_widget("t_eps", 2.0))
        st.selectbox("who", ["a", "b", "c"], key=state.page_widget("t_who", "a", ["a", "b", "c"]))
    else:
        st.write("another page")


def test_a_run_without_the_widgets_gives_their_values_back():
    """What Streamlit does while another page is shown: a run that does not draw a widget
    deletes its state; the next run that draws it gets the stored value back."""
    at = AppTest.from_function(_script, default_timeout=TIMEOUT).run()
    at.number_input(key="_w_t_eps").set_value(6.5)
    at.selectbox(key="_w_t_who").set_value("c")
    at.run()
    at.session_state["show"] = False
    at.run()
    at.run()  # the widgets' state is gone now
    assert "_w_t_eps" not in at.session_state and "_w_t_who" not in at.session_state
    assert at.session_state[STORE]["t_eps"] == 6.5
    at.session_state["show"] = True
    at.run()
    assert not at.exception
    assert at.number_input(key="_w_t_eps").value == 6.5
    assert at.selectbox(key="_w_t_who").value == "c"


def _table_script() -> None:
    import streamlit as st

    from dashboard import state

    if state.page_value("rows") is None:
        state.set_page_value("rows", [{"name": "a", "w": 1.0}, {"name": "b", "w": 2.0},
                                      {"name": "c", "w": 3.0}])
    if st.session_state.get("delta") is not None:  # what a data editor's state holds
        state.page_table_edited("rows", "delta", ["name", "w"])
        del st.session_state["delta"]


def test_table_edits_are_applied_to_the_stored_rows_and_a_fresh_editor_starts():
    at = AppTest.from_function(_table_script, default_timeout=TIMEOUT).run()
    at.session_state["delta"] = {"edited_rows": {1: {"w": 5.0}}, "deleted_rows": [0],
                                 "added_rows": [{"name": "d"}]}
    at.run()
    assert not at.exception
    assert at.session_state[STORE]["rows"] == [{"name": "b", "w": 5.0}, {"name": "c", "w": 3.0},
                                               {"name": "d", "w": None}]
    assert at.session_state[STORE]["rows_version"] == 1
