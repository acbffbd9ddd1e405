"""Issue 27, major 3: axe-core finds no serious or critical accessibility violation on any page.

axe-core is the copy bundled by the installed ``axe-playwright-python`` package (test extra):
nothing is fetched at run time. The trace page is checked with a place added from the keyboard
, so the loss section's bounds and the places table are checked too.
"""

from __future__ import annotations

import os

import pytest
from browser_driver import CHROMIUM, IDLE, MAP, goto_app, runs, wait_idle

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} missing (run `make chromium`)"
    ),
]

SERIOUS = ("serious", "critical")


def _violations(page) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(page).response["violations"]
    return [f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes'][:3]]}"
            for v in found if v["impact"] in SERIOUS]


@pytest.mark.parametrize("path", ["", "patterns", "population"])
def test_no_serious_or_critical_violation(server, browser, path):
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        if path:
            page.goto(f"{server}/{path}", timeout=60_000)
            page.wait_for_selector("[data-testid='stMain']", timeout=60_000)
            page.wait_for_selector(IDLE, timeout=60_000)
            wait_idle(page, settle_ms=500)
        else:
            goto_app(page, server)
            page.locator(MAP).focus()
            n = runs(page)
            page.keyboard.press("Enter")  # a place: the landmark curves and the table appear
            wait_idle(page, since=n)
        assert _violations(page) == []
    finally:
        page.close()


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
