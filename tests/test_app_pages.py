"""The app's navigation (My trace, Patterns, Population) and the dummy-landmark section on My trace.

AppTest with the map component replaced as in test_app.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import add_place_by_click, kept, offline_page, run, uploading
from page_charts import bundles, figure, figures
from streamlit.testing.v1 import AppTest

from lmdk_core.release import SCHEMES

LITE = "/component/dashboard.charts.lmdk_plotly_lite/plotly-lmdk.min.js"
"""The small plotly.js every chart of the dashboard loads (dashboard/charts.py)."""


def test_default_page_is_my_trace(first_page):
    app, _ = first_page
    assert app.title[0].value.startswith("lmdk — landmark privacy")
    assert any("2b · Hide when you were at your places" in e.label for e in app.expander)
    assert len(bundles(app)) >= 3 and set(bundles(app).values()) == {LITE}


@pytest.mark.slow
@pytest.mark.parametrize("page, words", [("page_patterns.py", "Pattern-level privacy"),
                                         ("page_population.py", "Population")])
def test_other_pages_render_without_errors(app, page, words):
    app.switch_page(page)
    run(app)
    text = " ".join(m.value for m in app.markdown) + " ".join(t.value for t in app.title)
    assert words in text
    # every chart (heat maps, bars, lines) is drawn with the small plotly.js
    assert figures(app) and set(bundles(app).values()) == {LITE}


def test_hiding_releases_on_real_plus_dummy_landmarks_with_the_rest_of_the_budget(
        app_home, fake_map):
    app = app_home
    plain = kept(app)[-1]
    real = np.asarray(plain.landmarks)
    assert real.sum() > 0
    app.toggle(key="hide_on").set_value(True)
    run(app)
    app.selectbox(key="hide_gen").set_value("bernoulli")
    run(app)
    hidden = kept(app)[-1]
    eps_sel = app.number_input(key="hide_eps").value
    assert hidden is not plain
    # L' contains L and more; the scheme ran with ε − ε_sel
    assert np.all(hidden.landmarks[real]) and hidden.landmarks.sum() > real.sum()
    assert hidden.epsilon == pytest.approx(plain.epsilon - eps_sel)
    # the private allocation chart marks the dummies apart from the real landmarks
    names = [t.get("name") for t in figure(app, "allocation_chart")["data"]]
    n_dummies = int(hidden.landmarks.sum() - real.sum())
    assert f"dummy landmark ({n_dummies}, private view)" in names
    # the map shows the dummies in their own (private) layer
    assert len(fake_map.view["dummy_points"]) > 0
    # a rerun keeps the same dummy draw and release
    app.toggle(key="show_release").set_value(False)
    run(app)
    assert kept(app)[-1] is hidden


def _zip(files: dict[str, str]) -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return buf.getvalue()


def test_zip_upload_gives_people_from_folders_and_repairs_reach_the_page(fake_map):
    """Issue 13: a zip of a GeoLife-style tree is one person per folder, and the reader's
    DataWarnings (a repeated timestamp dropped) are shown on the page, not only logged."""
    header = ("Geolife trajectory\nWGS 84\nAltitude is in Feet\nReserved 3\n"
              "0,2,255,My Track,0,0,2,8421376\n0\n")
    rows = [f"39.98,116.3{m},0,492,39744.1,2008-10-23,02:{m:02d}:00" for m in range(5)]
    data = _zip({
        "Data/000/Trajectory/a.plt": header + "\n".join([*rows, rows[-1]]) + "\n",  # repeat
        "Data/000/Trajectory/b.plt": header + rows[0].replace("2008-10-23", "2008-10-24") + "\n",
        "Data/010/Trajectory/c.plt": header + "\n".join(rows) + "\n",
    })
    app = uploading(offline_page())
    app.file_uploader(key="upload").set_value(("geolife.zip", data, "application/zip"))
    run(app)
    assert app.sidebar.selectbox[0].options == ["000", "010"]
    warned = " ".join(w.value for w in app.sidebar.warning)
    assert "dropped 1 row" in warned and "repeating a timestamp" in warned


def test_release_interval_releases_fewer_moments_and_fewer_landmarks(app_home):
    app = app_home
    every_fix = kept(app)[-1]
    app.number_input(key="interval_min").set_value(5.0)
    run(app)
    sparse = kept(app)[-1]
    assert len(sparse) < len(every_fix) / 5  # one location per 5 minutes (fixes every ~30 s)
    assert 0 < sparse.landmarks.sum() < every_fix.landmarks.sum()
    shown = " ".join(m.value for m in app.sidebar.markdown)
    assert f"**{len(sparse):,}** of {len(every_fix):,} moments released" in shown
    assert f"**{int(sparse.landmarks.sum()):,}** of " in shown


def test_comparison_with_dummy_landmarks_shows_each_scheme(app_home):
    app = app_home
    app.slider(key="compare_runs").set_value(1)
    run(app)
    app.button(key="compare_dummies_go").click()
    run(app)
    table = app.session_state["dummy_comparison"]  # the numbers; the page shows them formatted
    assert list(table["scheme"]) == list(SCHEMES)
    assert "Mean error, with dummy places" in app.dataframe[-1].value.columns
    assert (table["dummies_mean"] > 0).all()
    # every scheme has an error, except Skip when the dummies (drawn from OS entropy here) made
    # every moment a landmark: it then publishes nothing, and the page says so
    published = table["mae_dummies"] > 0
    assert published[table["scheme"] != "skip"].all()
    if not published.all():
        assert any("released nothing" in c.value for c in app.caption)


def _to_my_trace(at: AppTest) -> AppTest:
    """Back to the My trace page (a function page: AppTest.switch_page takes files only)."""
    at._page_hash = next(h for h, info in at._registered_pages.items()
                         if info.get("page_name") == "My trace")
    return run(at)


@pytest.mark.slow
def test_settings_survive_a_visit_to_another_page(app, fake_map, home):
    """Issue 23 finding 6: visiting Patterns or Population and coming back reset ε 3 → 1,
    Uniform → Skip and bob → alice (the places stayed). One visit to each page in turn, every
    setting checked after each return (the settings are made once, not once per page)."""
    person = app.sidebar.selectbox[0]
    person.set_value(person.options[1])
    run(app)
    add_place_by_click(app, fake_map, *home)
    app.number_input(key="epsilon").set_value(3.0)
    app.selectbox(key="scheme").set_value("uniform")
    app.number_input(key="radius_m").set_value(350.0)
    app.number_input(key="interval_min").set_value(5.0)
    run(app)
    before = {"person": app.sidebar.selectbox[0].value, "places": list(app.session_state["places"])}
    for page in ("page_patterns.py", "page_population.py"):
        app.switch_page(page)
        run(app)
        assert not app.exception, page
        _to_my_trace(app)
        assert not app.exception, page
        assert app.number_input(key="epsilon").value == 3.0, page
        assert app.selectbox(key="scheme").value == "uniform", page
        assert app.number_input(key="radius_m").value == 350.0, page
        assert app.number_input(key="interval_min").value == 5.0, page
        assert app.sidebar.selectbox[0].value == before["person"] != person.options[0], page
        assert list(app.session_state["places"]) == before["places"], page
