"""Issue 27, many people at once: two browsers on one server never see each other's data.

Two browser contexts (no shared cookies or storage, like two people) open the app; one adds a
place and uploads a file; the other, opened afterwards (a new session on a server that holds the
first one's data) and then rerun, has the sample, no place, and not the file's name or its person
anywhere on its page.
"""

from __future__ import annotations

import pytest
from browser_driver import MAP, goto_app, runs, wait_idle

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
        goto_app(a, server)
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

        # B, opened after A's changes (its first run: a new session's defaults), then rerun,
        # sees none of it. (B was opened with A and reloaded here: two loads of B, ~4 CPU-s
        # each, where this one load is the reload's check, a new session after all of A's
        # changes, and B's rerun below is the first one's, a rerun of a session that exists.)
        goto_app(b, server)
        for when in ("first run", "rerun"):
            if when == "rerun":
                _add_place(b, "not a position")  # a rerun of B's script after A's changes
            text = b.locator("body").inner_text()
            assert b.locator(MAP).evaluate(N_PLACES) == "0", when
            assert "bundled sample" in text, when
            assert secret.name not in text and "ann_private" not in text, when
        # and A still has its own (B's actions changed nothing there)
        assert a.locator(MAP).evaluate(N_PLACES) == "1"
    finally:
        a_ctx.close()
        b_ctx.close()
