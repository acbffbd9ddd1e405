"""Issue 24 finding 11: every Plotly chart offered Plotly's "Share chart…" button, which posts the
chart's data (the allocation marks landmark times, others draw the true trace) to
cloud.plotly.com/newchart. In a real headless Chromium, on every page of the dashboard, this
clicks every modebar button that is left and asserts that no request leaves the app's host.
Skipped only when no Chromium is installed (`make chromium`)."""

from __future__ import annotations

import os
from urllib.parse import urlparse

import pytest
from browser_driver import CHROMIUM, goto_app, wait_idle

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} missing (run `make chromium`)"
    ),
]

PAGES = ("/?tiles=none", "/patterns?tiles=none", "/population?tiles=none")
UPLOADERS = ("cloud", "share", "chart studio", "edit in")


@pytest.mark.slow
def test_no_modebar_button_sends_anything_off_the_machine(server, browser):
    host = urlparse(server).netloc
    page = browser.new_page(viewport={"width": 1440, "height": 900}, accept_downloads=True)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("dialog", lambda d: d.dismiss())
    clicked = 0
    try:
        for path in PAGES:
            goto_app(page, server + path)
            page.wait_for_selector(".js-plotly-plot .modebar-btn", state="attached",
                                   timeout=30_000)
            titles = page.eval_on_selector_all(
                ".js-plotly-plot .modebar-btn",
                "bs => bs.map(b => (b.getAttribute('data-title') || '').toLowerCase())")
            assert titles, path
            assert not [t for t in titles if any(w in t for w in UPLOADERS)], (path, titles)
            # every remaining button, on every chart (zoom, pan, reset, download as PNG, ...)
            clicked += page.eval_on_selector_all(
                ".js-plotly-plot .modebar-btn",
                "bs => { bs.forEach(b => b.dispatchEvent(new MouseEvent('click', "
                "{bubbles: true}))); return bs.length; }")
            wait_idle(page)
    finally:
        page.close()
    assert clicked > 10
    away = sorted({u for u in requests if urlparse(u).scheme in ("http", "https", "ws", "wss")
                   and urlparse(u).netloc != host})
    assert not away, away


def test_every_host_uses_the_offline_config():
    """The dashboard's charts, the story and Jupyter's renderers carry the config without the
    upload buttons (plotly.js shows "Share chart…" unless told not to)."""
    import plotly.io as pio

    from dashboard import charts
    from lmdk_core import figures
    from lmdk_core.story import _figure_html

    assert charts.CONFIG["showSendToCloud"] is False
    assert set(figures.CLOUD_BUTTONS) <= set(charts.CONFIG["modeBarButtonsToRemove"])
    html = _figure_html(figures.error_figure([1.0, 2.0], [True, False]), "x")
    assert '"showSendToCloud": false' in html and '"sendChartToCloud"' in html
    for name in ("plotly_mimetype", "jupyterlab", "notebook"):
        assert pio.renderers[name].config.get("showSendToCloud") is False, name
    import ipywidgets as w

    from lmdk_core.jupyter.explorer import show_figure

    out = w.Output()
    show_figure(out, figures.error_figure([1.0, 2.0], [True, False]))
    config = out.outputs[0]["data"]["application/vnd.plotly.v1+json"]["config"]
    assert config["showSendToCloud"] is False and "sendChartToCloud" in config[
        "modeBarButtonsToRemove"]
