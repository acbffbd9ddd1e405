"""The page's charts kept per session (dashboard.compute.chart, issue 27's load target): a rerun
that changes none of a chart's inputs sends it without building or serialising it, and whatever
changes, the chart sent is the one a fresh build gives (checked on every run of a session that
clicks a place and changes the correlation strength)."""

from __future__ import annotations

from apptest_helpers import add_place_by_click, run

from dashboard import charts, compute

CHARTS = {"allocation", "error", "loss"}


def test_kept_charts_are_fresh_builds_and_an_unchanged_rerun_builds_none(app, fake_map, home,
                                                                         monkeypatch):
    kept = compute._chart_data
    page_built: list[str] = []
    served: list[str] = []

    def checked(name, ident, _build):
        def counted():
            page_built.append(name)
            return _build()

        data = kept(name, ident, counted)
        served.append(name)
        assert data == charts.payload(_build()), (name, ident)
        return data

    monkeypatch.setattr(compute, "_chart_data", checked)
    run(app)  # nothing changed since the first run: every chart comes from the session
    assert set(served) == CHARTS and page_built == []
    add_place_by_click(app, fake_map, *home)
    assert set(page_built) == CHARTS  # a new place: new budgets, errors and bounds
    page_built.clear()
    app.select_slider(key="strength").set_value("strong")
    run(app)
    assert page_built == ["loss"]  # only the loss chart reads the correlation model
