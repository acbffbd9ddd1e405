"""The app's navigation (My trace, Patterns, Population) and the dummy-landmark section on My trace.

AppTest with the map component replaced as in test_app.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest
from test_app import APP, TIMEOUT, _kept, add_place_by_click, fake_map, home, run, sample  # noqa: F401


@pytest.fixture
def app(fake_map):  # noqa: F811
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["tiles"] = "none"
    return run(at)


def test_default_page_is_my_trace(app):
    assert app.title[0].value.startswith("lmdk — landmark privacy")
    assert any("2b · Hide when you were at your places" in e.label for e in app.expander)


@pytest.mark.slow
@pytest.mark.parametrize("page, words", [("page_patterns.py", "Pattern-level privacy"),
                                         ("page_population.py", "Population")])
def test_other_pages_render_without_errors(app, page, words):
    app.switch_page(page)
    run(app)
    text = " ".join(m.value for m in app.markdown) + " ".join(t.value for t in app.title)
    assert words in text


def test_hiding_releases_on_real_plus_dummy_landmarks_with_the_rest_of_the_budget(
        app, fake_map, home):  # noqa: F811
    add_place_by_click(app, fake_map, *home)
    plain = _kept(app)[-1]
    real = np.asarray(plain.landmarks)
    assert real.sum() > 0
    app.toggle(key="hide_on").set_value(True)
    run(app)
    app.selectbox(key="hide_gen").set_value("bernoulli")
    run(app)
    hidden = _kept(app)[-1]
    eps_sel = app.number_input(key="hide_eps").value
    assert hidden is not plain
    # L' contains L and more; the scheme ran with ε − ε_sel
    assert np.all(hidden.landmarks[real]) and hidden.landmarks.sum() > real.sum()
    assert hidden.epsilon == pytest.approx(plain.epsilon - eps_sel)
    # a rerun keeps the same dummy draw and release
    app.toggle(key="show_release").set_value(False)
    run(app)
    assert _kept(app)[-1] is hidden
