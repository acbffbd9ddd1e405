"""Every page of the dashboard in a real headless Chromium, on one page load and one visit per
page: the first page, then the others through the sidebar's navigation; each visit makes every
check that reads its page, once, and the tests read what it found (a page load is the costly
part, a navigation about half of one):

* issue 27, major 3: axe-core finds no serious or critical accessibility violation on any page.
  axe-core is the copy bundled by the installed ``axe-playwright-python`` package (test extra):
  nothing is fetched at run time. The trace page is checked with a place added from the
  keyboard, so the loss section's bounds and the places table are checked too;
* issue 24 finding 11: every Plotly chart offered Plotly's "Share chart…" button, which posts
  the chart's data (the allocation marks landmark times, others draw the true trace) to
  cloud.plotly.com/newchart. On every page this clicks every modebar button that is left and
  asserts that no request leaves the app's host (from the page's first load on);

Skipped only when no Chromium is installed (`make chromium`)."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest
from browser_driver import MAP, goto_app, runs, step, wait_idle

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
]

PATHS = ("", "patterns", "population")
SIZE = (1280, 720)
"""Every check's viewport (the modebar check's was 1440×900, on its own visits: its buttons are
the same at either size, and a resize between the checks cost the browser a relayout and a
redraw of every chart)."""
SERIOUS = ("serious", "critical")
NO_NOTES = "() => !document.querySelector('.plotly-notifier .notifier-note')"
"""No note of Plotly's notifier is shown (a download's note goes 4.4 s after it appeared: plotly.js
fades it in over 0.7 s, shows it 3 s and fades it out over 0.7 s)."""
UPLOADERS = ("cloud", "share", "chart studio", "edit in")


class Loaded:
    """One browser page for the module, as a user goes: a first visit to the first page (no
    ``?tiles``) with a place added from the keyboard, then to each dashboard page through the
    sidebar's navigation; every request the page made is recorded. :meth:`checked` visits each
    page once, in whatever order the tests ask, and makes all of its checks there in a fixed
    order (so what a test reads does not depend on which tests ran before it)."""

    def __init__(self, server: str, browser) -> None:
        self.server, self.browser = server, browser
        self.page = None
        self.at: str | None = None
        self.requests: list[str] = []
        self.found: dict[str, dict] = {}

    def visit(self, path: str):
        if self.page is None:
            self.page = page = self.browser.new_page(
                viewport={"width": SIZE[0], "height": SIZE[1]}, accept_downloads=True)
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
            assert path not in self.found, f"page {path!r} visited twice"
            n = runs(page)
            page.locator(f"[data-testid='stSidebarNav'] a[href='{self.server}/{path}']").click()
            page.wait_for_url(f"{self.server}/{path}")
            wait_idle(page, since=n, draw=True)  # every chart drawn: the checks read them all
            self.at = path
        return page

    def checked(self, path: str) -> dict:
        """What the checks found on the page at ``path``: axe's serious or critical
        violations, then the modebar buttons' titles and how many were clicked. A check that
        fails closes the page: the next test starts from a new page load, not from a page left
        half-way through a check (whose own test reports the failure)."""
        if path not in self.found:
            try:
                self.found[path] = self._check(path)
            except BaseException:
                self.close()
                raise
        return self.found[path]

    def _check(self, path: str) -> dict:
        page = self.visit(path)
        out: dict = {}
        with step(f"axe on {path!r}"):
            # the page as a visit shows it: without the notes ("Image download succeeded",
            # Plotly's own) that the last page's PNG downloads left fading out
            page.wait_for_function(NO_NOTES, timeout=30_000, polling=100)
            out["violations"] = _violations(page)
        with step(f"modebar on {path!r}"):
            page.wait_for_selector(".js-plotly-plot .modebar-btn", state="attached",
                                   timeout=30_000)
            out["titles"] = page.eval_on_selector_all(
                ".js-plotly-plot .modebar-btn",
                "bs => bs.map(b => (b.getAttribute('data-title') || '').toLowerCase())")
            # every remaining button, on every chart (zoom, pan, reset, download as PNG, ...)
            out["clicked"] = page.eval_on_selector_all(
                ".js-plotly-plot .modebar-btn",
                "bs => { bs.forEach(b => b.dispatchEvent(new MouseEvent('click', "
                "{bubbles: true}))); return bs.length; }")
            wait_idle(page)
        return out

    def close(self) -> None:
        if self.page is not None:
            self.page.close()
        self.page, self.at = None, None


@pytest.fixture(scope="module")
def loaded(server, browser):
    pages = Loaded(server, browser)
    yield pages
    pages.close()


def _serious(page) -> list[dict]:
    """axe-core's serious or critical violations on the whole page, as axe-playwright-python's
    ``Axe().run(page)`` finds them (the same script and options), but axe injected once per
    document: that ran its ~0.5 MB script again before every check, and the sidebar's
    navigation keeps the document, so the Patterns and Population pages reuse the copy the first
    page's check injected."""
    from axe_playwright_python.base import AXE_SCRIPT
    from axe_playwright_python.sync_playwright import DEFAULT_OPTIONS

    if not page.evaluate("() => typeof window.axe?.run === 'function'"):
        page.evaluate(AXE_SCRIPT)
    found = page.evaluate("o => axe.run(document, o)", DEFAULT_OPTIONS)["violations"]
    return [v for v in found if v["impact"] in SERIOUS]


def _violations(page) -> list[str]:
    return [f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes'][:3]]}"
            for v in _serious(page)]


@pytest.mark.parametrize("path", PATHS)
def test_no_serious_or_critical_violation(loaded, path):
    assert loaded.checked(path)["violations"] == []


def test_a_violation_is_found_when_there_is_one(browser):
    """The check can fail: Streamlit's default caption grey (#828180, 3.9:1) is reported, and the
    caption grey of this app's theme (.streamlit/config.toml) is not (one page, one axe run: the
    only serious or critical violation is the contrast of the default grey's paragraph)."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.set_content("<html lang='en'><head><title>t</title></head><body><main>"
                         "<p id='default' style='color:#828180;background:#fff'>default caption</p>"
                         "<p id='app' style='color:#6E7074;background:#fff'>this app's caption</p>"
                         "</main></body></html>")
        found = [(v["id"], [n["target"] for n in v["nodes"]]) for v in _serious(page)]
        assert found == [("color-contrast", [["#default"]])]
    finally:
        page.close()


def test_no_modebar_button_sends_anything_off_the_machine(loaded, server):
    host = urlparse(server).netloc
    clicked = 0
    for path in sorted(PATHS, key=lambda p: p != loaded.at):  # the page shown now first
        found = loaded.checked(path)
        assert found["titles"], path
        assert not [t for t in found["titles"] if any(w in t for w in UPLOADERS)], (
            path, found["titles"])
        clicked += found["clicked"]
    assert clicked > 10
    away = sorted({u for u in loaded.requests
                   if urlparse(u).scheme in ("http", "https", "ws", "wss")
                   and urlparse(u).netloc != host})
    assert not away, away
