"""Issue 27, many people at once: two browsers on one server never see each other's data.

Two browser contexts (no shared cookies or storage, like two people) open the app; one adds a
place and uploads a file; the other, reloaded and rerun, still has the sample, no place, and
not the file's name or its person anywhere on its page.
"""

from __future__ import annotations

import pytest
from browser_driver import MAP, goto_app, goto_apps, runs, wait_idle

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
]

FIELD = "input[aria-label='Add a place at (latitude, longitude)']"
N_PLACES = "el => el.dataset.places"


def _add_place(page, text: str) -> None:
    n = runs(page)
    page.locator(FIELD).fill(text)
    page.locator(FIELD).press("Enter")
    wait_idle(page, since=n)


def test_two_browsers_never_see_each_others_places_or_uploads(server, browser, tmp_path):
    secret = tmp_path / "secret_trace_of_ann.csv"
    secret.write_text("uid,time,lat,lon\n" + "\n".join(
        f"ann_private,2024-01-01T00:{m:02d}:00Z,{48.1 + m * 1e-4:.5f},11.5" for m in range(40)))
    a_ctx, b_ctx = browser.new_context(), browser.new_context()
    try:
        a, b = a_ctx.new_page(), b_ctx.new_page()
        for p in (a, b):
            p.set_viewport_size({"width": 1280, "height": 720})
        goto_apps((a, b), server)  # both first runs at once
        _add_place(a, "39.9750, 116.3200")
        a.wait_for_function(f"() => document.querySelector('{MAP}').dataset.places === '1'")
        # A uploads a file of its own
        n = runs(a)
        a.locator("[data-testid='stSidebar']").get_by_text("Upload files").click()
        wait_idle(a, since=n)
        n = runs(a)
        a.locator("[data-testid='stSidebar'] input[type='file']").set_input_files(str(secret))
        a.locator("[data-testid='stSidebar']").get_by_text(
            f"Loaded: {secret.name}").wait_for(timeout=30_000)
        wait_idle(a, since=n)
        assert "40 points" in a.locator("[data-testid='stSidebar']").inner_text()

        # B: its own rerun and a reload see none of it
        _add_place(b, "not a position")  # a rerun of B's script after A's changes
        assert b.locator(MAP).evaluate(N_PLACES) == "0"
        goto_app(b, server)  # a new load of B's page (a reload, waited for until drawn)
        text = b.locator("body").inner_text()
        assert b.locator(MAP).evaluate(N_PLACES) == "0"
        assert "bundled sample" in text
        assert secret.name not in text and "ann_private" not in text
        # and A still has its own (B's actions changed nothing there)
        assert a.locator(MAP).evaluate(N_PLACES) == "1"
    finally:
        a_ctx.close()
        b_ctx.close()
