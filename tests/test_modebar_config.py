"""Issue 24 finding 11: every Plotly chart offered Plotly's "Share chart…" button, which posts the
chart's data (the allocation marks landmark times, others draw the true trace) to
cloud.plotly.com/newchart. Every host of a chart is configured without it (here); in a real
headless Chromium, tests/test_pages_browser.py clicks every modebar button left on every page
of the dashboard and checks that no request leaves the app's host."""

from __future__ import annotations

import iri_grammar


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


def test_renderers_are_configured_when_first_loaded_not_at_import():
    """Importing lmdk_core.figures does not load Plotly's renderers (nbformat + jsonschema: 1.3
    CPU-s in every dashboard server and CLI process); whoever loads them later gets the offline
    config all the same. In a fresh process, so that the lazy path is the one taken."""
    import subprocess
    import sys

    code = (
        f"import sys\n{iri_grammar.SKIP}\n"
        "import lmdk_core.figures\n"
        "assert 'plotly.io._renderers' not in sys.modules\n"
        "import plotly.io as pio\n"
        "bad = [n for n in pio.renderers if isinstance(getattr(pio.renderers[n], 'config', None),"
        " dict) and pio.renderers[n].config.get('showSendToCloud') is not False]\n"
        "assert not bad, bad\n"
        "assert 'notebook' in list(pio.renderers)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
