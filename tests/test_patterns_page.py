"""The Patterns page under streamlit.testing.v1.AppTest (no browser)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from page_charts import figures
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parent.parent / "dashboard" / "page_patterns.py")
TIMEOUT = 180


@pytest.fixture(scope="module")
def page() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _text(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_page_renders_release_timeline_and_quality(page):
    assert not page.error
    assert "Guarantee" in _text(page) and "e^ε" in _text(page)
    assert len(figures(page)) == 2  # timeline + quality
    labels = [m.label for m in page.metric]
    assert "real events suppressed" in labels and "synthetic events injected" in labels
    for widget in (*page.number_input, *page.selectbox, *page.radio, *page.slider):
        assert widget.help, f"control {widget.label!r} has no help text"


def test_changing_epsilon_recomputes_quickly(page):
    page.number_input(key="pat_eps").set_value(4.0)
    t0 = time.perf_counter()
    page.run()
    elapsed = time.perf_counter() - t0
    assert not page.exception
    assert "e^ε = 54.6" in _text(page)
    assert elapsed < 10  # generous: shared CI machines; bench_patterns measures the real figure


def test_single_event_reading_states_the_weaker_guarantee(page):
    page.radio(key="pat_neighbour").set_value("event")
    page.run()
    assert not page.exception
    assert "single-event reading" in _text(page)
    page.radio(key="pat_neighbour").set_value("instance").run()


def test_builder_error_is_shown_and_patterns_are_kept(page):
    before = page.session_state["pat_patterns_sample"]
    page.button[0].click()  # "Add pattern" with no event type picked
    page.run()
    assert not page.exception
    assert any("pick at least one event type" in e.value for e in page.error)
    assert page.session_state["pat_patterns_sample"] == before


def test_builder_adds_a_pattern(page):
    page.multiselect(key="pat_new_seq").set_value(["enter:Work", "leave:Work"])
    page.button[0].click()
    page.run()
    assert not page.exception
    rows = page.session_state["pat_patterns_sample"]
    assert rows[-1]["sequence"] == "enter:Work → leave:Work"
    assert rows[-1]["private"] is False


@pytest.mark.slow
def test_taxi_source_runs():
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    at.radio(key="pat_source").set_value("taxis").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "H0" in _text(at)


def test_grid_regions_make_old_patterns_an_error_not_a_crash(page):
    page.radio(key="pat_regions").set_value("grid")
    page.run()
    assert not page.exception
    assert any("unknown event type" in e.value for e in page.error)
    assert page.session_state["pat_patterns_sample"][0]["private"] is True  # patterns kept
    page.radio(key="pat_regions").set_value("places").run()
    assert not page.error
