"""The dashboard in a real headless Chromium (Playwright), served by `streamlit run`.

One session on one page load (a load costs the browser and the server far more than the checks
made on it), in the order a user goes: Leaflet loads offline (no request leaves 127.0.0.1 with
tiles "none"); a real click on the map adds a landmark place and the charts and metrics update
in place; exploring ε is free and every download button gives a parseable file of the one real
draw; more clicks keep the map's zoom; a bad upload shows the library's message in the page and
keeps the places, a crafted file name shows as text and fetches nothing, and a good file
uploaded next loads. Each step is named in a failure's message (browser_driver.step).
Skipped only when no Chromium is installed (`make chromium` installs one).
"""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile

import pytest
from browser_driver import (  # server and browser helpers, shared with bench/ and docs/
    MAP,
    chart_signature,
    click_map,
    goto_app,
    home_of_first_user,
    metrics_text,
    runs,
    selected_value,
    step,
    wait_chart_change,
    wait_idle,
    wait_zoomed,
)

from lmdk_core.places import places_from_geojson

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
]

DOWNLOADS = {  # file names carry the allocation released (issue 13): a pattern per button
    "Public release (CSV)": r"lmdk_public_release_[a-z0-9_]+_eps1\.csv",
    "Public release (GeoJSON)": r"lmdk_public_release_[a-z0-9_]+_eps1\.geojson",
    "PRIVATE analysis (JSON) — do not share":
        r"lmdk_PRIVATE_analysis_[a-z0-9_]+_eps1_DO_NOT_SHARE\.json",
    "PRIVATE places (GeoJSON) — do not share": r"lmdk_PRIVATE_places_DO_NOT_SHARE\.geojson",
}
RECORDED = {"Public release (CSV)", "Public release (GeoJSON)"}
"""The buttons whose download enters the ledger: each reruns the export fragment."""
TRACKER = "data/![ ](https://tracker.example/pixel.png?u=lmdk)/x.csv"
"""A zip member name that, rendered as markdown, is an image fetched from an outside host."""
BROKEN = b"uid,time,lat,lon\nu1,2024-01-01T00:00:00Z,95.0,116.3\n"
LOCAL = ("http://127.0.0.1", "data:", "blob:", "about:")


def _set_epsilon(page, value: float) -> None:
    box = page.locator("[data-testid='stSidebar'] "
                       "input[aria-label='Privacy budget ε of the next release']")
    n = runs(page)
    box.fill(f"{value:.3f}")
    box.press("Enter")
    wait_idle(page, since=n)


def _upload(page, name: str, mime: str, data: bytes) -> int:
    """Give the sidebar's uploader one file; returns the run count read before."""
    n = runs(page)
    page.locator("input[type='file']").first.set_input_files(
        {"name": name, "mimeType": mime, "buffer": data})
    return n


def _zip_named_like_a_tracker() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:  # the only member cannot be read: its name is quoted
        zf.writestr(TRACKER, BROKEN.decode())
    return buf.getvalue()


def _download(page, label: str):
    """Click the download button ``label``; returns Playwright's download. A click that lands
    while a rerun redraws the button is lost in the browser, not in the app (the page is idle
    here, so this is rare): one more click after the page is idle again. A button that
    produces no file (issue 8 item 5) still fails both times."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    button = page.get_by_role("button", name=label, exact=True)
    button.scroll_into_view_if_needed()
    for attempt in range(2):
        try:
            with page.expect_download(timeout=10_000) as info:
                button.click()
            return info.value
        except PlaywrightTimeout:
            if attempt:
                raise
            wait_idle(page)
    raise AssertionError("unreachable")


def test_click_downloads_zoom_and_uploads_in_one_session(server, browser):
    """Issue 8 item 5 (two of the four download buttons gave no file), issue 13 (a bad file
    stayed in the uploader, so the next good one did not load), issue 23 (exploring is free;
    the files are of one real draw, counted once), issue 24 finding 6 (a crafted zip member
    name was rendered as markdown and the browser fetched its image from an outside host)."""
    page = browser.new_page(viewport={"width": 1366, "height": 1000}, accept_downloads=True)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    try:
        _one_session(page, server, requests)
    finally:
        page.close()


def _one_session(page, server: str, requests: list[str]) -> None:
    with step("first load: the trajectory and the allocation chart are drawn"):
        goto_app(page, f"{server}/?tiles=none")
        frame = page.locator(MAP)
        frame.wait_for(timeout=30_000)
        assert frame.locator(".leaflet-overlay-pane path").count() >= 1  # the trajectory
        # the page's first chart, scrolled to (drawn as it comes into view): the only chart
        # drawn, so the first Plotly chart below (drawing every chart cost ~1.2 CPU-s here and
        # at the click, and no check read the others)
        chart = page.locator(".lmdk-chart").first
        chart.scroll_into_view_if_needed()
        page.wait_for_function("d => d.classList.contains('js-plotly-plot') && !d.lmdkBusy",
                               arg=chart.element_handle(), timeout=30_000)
        before_chart = chart_signature(page, 0, draw=False)
        before = metrics_text(page)
        assert before_chart and "Mean error" in before

    with step("the user zooms into the allocation chart (a drag across its top panel)"):
        chart = page.locator(".js-plotly-plot").first
        drag = chart.locator(".nsewdrag").first.bounding_box()
        y = drag["y"] + drag["height"] / 2
        page.mouse.move(drag["x"] + 0.3 * drag["width"], y)
        page.mouse.down()
        page.mouse.move(drag["x"] + 0.6 * drag["width"], y + 2, steps=8)
        page.mouse.up()
        chart.evaluate(
            "d => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        zoomed = chart.evaluate("d => { d.__lmdkMark = 1; return d.layout.xaxis.range; }")
        assert zoomed is not None

    with step("a click on the map at alice's home adds a landmark place"):
        n = runs(page)
        click_map(page, *home_of_first_user())
        chart.scroll_into_view_if_needed()  # back to the chart: the page redraws it in view
        # ε_t changed: Skip (default) spends 0 at landmarks
        wait_chart_change(page, before_chart, draw=False)
        wait_idle(page, since=n)
        # The chart was updated in place, not re-created: the same element, the user's zoom
        # kept (main re-created every chart on every click: st.plotly_chart's id hashes the
        # figure).
        chart = page.locator(".js-plotly-plot").first
        assert chart.evaluate("d => d.__lmdkMark") == 1
        assert chart.evaluate("d => d.layout.xaxis.range") == zoomed
        after = metrics_text(page)
        selected = page.locator("[data-testid='stSelectbox']").filter(has_text="Selected place")
        assert "wudaokou home" in selected_value(selected, "wudaokou home")  # the stay clicked
        # Σε_t = ε·(T − |L|) under Skip: it changes with any landmark (the mean error may not,
        # to the metre, when few timestamps are landmarks)
        assert after["Budget spent Σε_t"] != before["Budget spent Σε_t"]
        assert frame.locator(".leaflet-overlay-pane path").count() >= 2  # + the place circle
        assert frame.locator("path.leaflet-interactive").count() >= 1  # only it takes clicks
        frame.scroll_into_view_if_needed()  # the chart out of view: not redrawn by the reruns below

    with step("exploring three values of ε is free: previews, no file offered"):
        for eps in (0.5, 2.0, 1.0):
            _set_epsilon(page, eps)
        assert page.get_by_role("button", name="Public release (CSV)").count() == 0
        assert metrics_text(page)["Spent so far (all real releases)"].startswith("0 /")

    with step("a real draw is counted once"):
        draw = page.get_by_role("button", name="Draw the real release")
        draw.scroll_into_view_if_needed()
        n = runs(page)
        draw.click()
        wait_idle(page, since=n)
        assert metrics_text(page)["Spent so far (all real releases)"].startswith("1 /")

    with step("every download button gives a file named as it says"):
        files: dict[str, str] = {}
        for label, name in DOWNLOADS.items():
            n = runs(page)
            download = _download(page, label)
            assert re.fullmatch(name, download.suggested_filename), download.suggested_filename
            files[label] = download.path().read_text(encoding="utf-8")
            if label in RECORDED:  # the ledger above the buttons is updated before the next
                wait_idle(page, since=n)

    with step("the four files parse and hold the one real draw"):
        rows = list(csv.reader(io.StringIO(files["Public release (CSV)"])))
        assert rows[0] == ["time", "lat", "lon"] and len(rows) > 1000
        gj = json.loads(files["Public release (GeoJSON)"])
        assert gj["type"] == "FeatureCollection" and len(gj["features"]) > 1000
        assert all(set(f["properties"]) == {"time"} for f in gj["features"])
        analysis = json.loads(files["PRIVATE analysis (JSON) — do not share"])
        assert next(iter(analysis)) == "PRIVATE"
        assert {"configuration", "places", "series", "summary"} <= set(analysis)
        assert [p["name"] for p in analysis["places"]] == ["Stay near wudaokou home"]
        places = places_from_geojson(files["PRIVATE places (GeoJSON) — do not share"])
        assert [p.name for p in places] == ["Stay near wudaokou home"]
        # the two public files are the one real draw, counted once when it was drawn
        assert metrics_text(page)["Spent so far (all real releases)"].startswith("1 /")
        lat = [float(r[1]) for r in rows[1:] if r[1]]  # Skip: nothing before its first release
        assert lat == pytest.approx([f["geometry"]["coordinates"][1] for f in gj["features"]
                                     if f["geometry"]["coordinates"]][-len(lat):], abs=1e-6)
        assert analysis["settings"]["ledger"]["total_loss"] == pytest.approx(1.0)

    with step("the map's zoom survives clicks, and a click made during a rerun is not lost"):
        # (the base map is not rebuilt; each click is sent at once, dashboard/map_element.py)
        frame.scroll_into_view_if_needed()
        zoom0 = frame.evaluate("el => el.lmdkMap.getZoom()")
        frame.locator(".leaflet-control-zoom-in").click()
        wait_zoomed(page, zoom0)  # the zoom-in has happened and its animation is over
        zoom = frame.evaluate("el => el.lmdkMap.getZoom()")
        box = frame.bounding_box()
        cx, cy = box["width"] / 2, box["height"] / 2
        n = runs(page)
        frame.click(position={"x": cx - 60, "y": cy})
        # the first click's rerun is under way
        page.wait_for_function("n => window.__lmdkRuns > n", arg=n, timeout=30_000)
        frame.click(position={"x": cx + 60, "y": cy})
        # names: the home stay's, then Place 2, Place 3 (the grid's cells are in the DOM)
        page.locator("td", has_text="Place 3").first.wait_for(state="attached", timeout=30_000)
        wait_idle(page, since=n)
        assert page.locator("td", has_text="Place 2").count() >= 1
        assert frame.evaluate("el => el.lmdkMap.getZoom()") == zoom

    with step("a bad upload: the library's message in the page, the places stay"):
        page.get_by_text("Upload files", exact=True).click()
        wait_idle(page)  # (a tab: may start no run)
        n = _upload(page, "broken.csv", "text/csv", BROKEN)
        alert = page.locator("[data-testid='stAlert']").filter(has_text="broken.csv")
        alert.wait_for(timeout=30_000)
        wait_idle(page, since=n)
        shown = selected_value(selected, "Place 3")
        assert "Place 3" in shown, page.locator("td").all_inner_texts()
        # the message did not re-mount the map: the zoom chosen above is still there
        assert frame.evaluate("el => el.lmdkMap.getZoom()") == zoom
        assert page.locator("td", has_text="wudaokou home").count() >= 1
        assert "Mean error" in metrics_text(page)

    with step("a zip member named like a markdown image shows as text and fetches nothing"):
        n = _upload(page, "trip.zip", "application/zip", _zip_named_like_a_tracker())
        tracker = page.locator("[data-testid='stAlert']").filter(has_text="tracker.example")
        tracker.wait_for(timeout=30_000)
        wait_idle(page, since=n)
        assert "![ ](https://tracker.example/pixel.png?u=lmdk)" in tracker.inner_text()
        assert tracker.locator("img").count() == 0

    with step("the bad files left the uploader: a good file loads and the messages go"):
        rows_csv = "\n".join(f"bob,2024-01-01T00:{m:02d}:00Z,{39.9 + m * 1e-4:.6f},116.3"
                             for m in range(30))
        n = _upload(page, "good.csv", "text/csv", f"uid,time,lat,lon\n{rows_csv}\n".encode())
        page.get_by_text("Loaded: good.csv", exact=False).wait_for(timeout=30_000)
        wait_idle(page, since=n)
        assert page.locator("[data-testid='stAlert']").filter(has_text="broken.csv").count() == 0
        assert page.locator("[data-testid='stAlert']").filter(
            has_text="tracker.example").count() == 0
        assert page.locator("td", has_text="wudaokou home").count() >= 1  # the places stay

    with step("nothing left 127.0.0.1 in the whole session"):
        # Leaflet is served by the app, there are no tiles, and no user string was fetched
        assert [u for u in requests if not u.startswith(LOCAL)] == []
