"""Every page of the dashboard in a real headless Chromium, on one page load: the first page, then
the others through the sidebar's navigation, each visit shared by the checks that read it (a
page load is the costly part):

* issue 27, major 3: axe-core finds no serious or critical accessibility violation on any page.
  axe-core is the copy bundled by the installed ``axe-playwright-python`` package (test extra):
  nothing is fetched at run time. The trace page is checked with a place added from the
  keyboard, so the loss section's bounds and the places table are checked too;
* issue 24 finding 11: every Plotly chart offered Plotly's "Share chart…" button, which posts
  the chart's data (the allocation marks landmark times, others draw the true trace) to
  cloud.plotly.com/newchart. On every page this clicks every modebar button that is left and
  asserts that no request leaves the app's host (from the page's first load on).

Skipped only when no Chromium is installed (`make chromium`)."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest
from browser_driver import MAP, goto_app, resize, runs, wait_idle

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
]

PATHS = ("", "patterns", "population")
AXE_SIZE = (1280, 720)
MODEBAR_SIZE = (1440, 900)
SERIOUS = ("serious", "critical")
UPLOADERS = ("cloud", "share", "chart studio", "edit in")


class Loaded:
    """One browser page for the module, as a user goes: a first visit to the first page (no
    ``?tiles``) with a place added from the keyboard, then to each dashboard page through the
    sidebar's navigation (a page load costs the browser about twice what a navigation does);
    every request the page made is recorded."""

    def __init__(self, server: str, browser) -> None:
        self.server, self.browser = server, browser
        self.page = None
        self.at: str | None = None
        self.requests: list[str] = []

    def __call__(self, path: str):
        if self.page is None:
            self.page = page = self.browser.new_page(
                viewport={"width": AXE_SIZE[0], "height": AXE_SIZE[1]}, accept_downloads=True)
            page.on("request", lambda r: self.requests.append(r.url))
            page.on("dialog", lambda d: d.dismiss())
            goto_app(page, f"{self.server}/")
            # a place, from the keyboard: the landmark curves and the table appear
            page.locator(MAP).focus()
            n = runs(page)
            page.keyboard.press("Enter")
            wait_idle(page, since=n, draw=True)  # every chart drawn: the checks read them all
            self.at = ""
        page = self.page
        if path != self.at:
            n = runs(page)
            page.locator(f"[data-testid='stSidebarNav'] a[href='{self.server}/{path}']").click()
            page.wait_for_url(f"{self.server}/{path}")
            wait_idle(page, since=n, draw=True)  # every chart drawn: the checks read them all
            self.at = path
        return page

    def close(self) -> None:
        if self.page is not None:
            self.page.close()


@pytest.fixture(scope="module")
def loaded(server, browser):
    pages = Loaded(server, browser)
    yield pages
    pages.close()


def _violations(page) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(page).response["violations"]
    return [f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes'][:3]]}"
            for v in found if v["impact"] in SERIOUS]


@pytest.mark.parametrize("path", PATHS)
def test_no_serious_or_critical_violation(loaded, path):
    page = loaded(path)
    resize(page, *AXE_SIZE, "[data-testid='stMain']")
    assert _violations(page) == []


def test_a_violation_is_found_when_there_is_one(browser):
    """The check can fail: Streamlit's default caption grey (#828180, 3.9:1) is reported, and the
    caption grey of this app's theme (.streamlit/config.toml) is not."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.set_content("<html lang='en'><head><title>t</title></head><body><main>"
                         "<p style='color:#828180;background:#fff'>default caption</p>"
                         "</main></body></html>")
        assert any(v.startswith("color-contrast") for v in _violations(page))
        page.set_content("<html lang='en'><head><title>t</title></head><body><main>"
                         "<p style='color:#6E7074;background:#fff'>this app's caption</p>"
                         "</main></body></html>")
        assert _violations(page) == []
    finally:
        page.close()


def test_no_modebar_button_sends_anything_off_the_machine(loaded, server):
    host = urlparse(server).netloc
    clicked = 0
    for path in sorted(PATHS, key=lambda p: p != loaded.at):  # the page shown now first
        page = loaded(path)
        resize(page, *MODEBAR_SIZE, "[data-testid='stMain']")
        page.wait_for_selector(".js-plotly-plot .modebar-btn", state="attached", timeout=30_000)
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
    assert clicked > 10
    away = sorted({u for u in loaded.requests
                   if urlparse(u).scheme in ("http", "https", "ws", "wss")
                   and urlparse(u).netloc != host})
    assert not away, away
