"""The dashboard in a real headless Chromium (Playwright), served by `streamlit run`.

Checks what AppTest cannot: Leaflet actually loads offline (no request leaves 127.0.0.1 with
tiles "none"), a real click on the map adds a landmark place and the charts and metrics update,
a bad upload shows the library's message in the page and keeps the places, and a good file
uploaded next loads.
Skipped only when no Chromium is installed (`make chromium` installs one).
"""

from __future__ import annotations

import re

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
    wait_chart_change,
    wait_idle,
    wait_zoomed,
)

pytestmark = [
    pytest.mark.browser,
]




def test_click_adds_landmark_updates_page_offline_and_bad_upload(server, browser, tmp_path):
    page = browser.new_page(viewport={"width": 1366, "height": 1000})
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    goto_app(page, f"{server}/?tiles=none")
    frame = page.locator(MAP)
    frame.wait_for(timeout=30_000)
    assert frame.locator(".leaflet-overlay-pane path").count() >= 1  # the trajectory is drawn
    before_chart = chart_signature(page, 0)
    before = metrics_text(page)
    assert before_chart and "Mean error" in before
    # the user zooms into the allocation chart (a drag across its top panel)
    chart = page.locator(".js-plotly-plot").first
    chart.scroll_into_view_if_needed()
    drag = chart.locator(".nsewdrag").first.bounding_box()
    y = drag["y"] + drag["height"] / 2
    page.mouse.move(drag["x"] + 0.3 * drag["width"], y)
    page.mouse.down()
    page.mouse.move(drag["x"] + 0.6 * drag["width"], y + 2, steps=8)
    page.mouse.up()
    chart.evaluate("d => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    zoomed = chart.evaluate("d => { d.__lmdkMark = 1; return d.layout.xaxis.range; }")
    assert zoomed is not None

    n = runs(page)
    click_map(page, *home_of_first_user())
    wait_chart_change(page, before_chart)  # ε_t changed: Skip (default) spends 0 at landmarks
    wait_idle(page, since=n)
    # The chart was updated in place, not re-created: the same element, the user's zoom kept
    # (main re-created every chart on every click: st.plotly_chart's id hashes the figure).
    chart = page.locator(".js-plotly-plot").first
    assert chart.evaluate("d => d.__lmdkMark") == 1
    assert chart.evaluate("d => d.layout.xaxis.range") == zoomed
    after = metrics_text(page)
    selected = page.locator("[data-testid='stSelectbox']").filter(has_text="Selected place")
    assert "wudaokou home" in selected_value(selected, "wudaokou home")  # the stay clicked
    # Σε_t = ε·(T − |L|) under Skip: it changes with any landmark (the mean error may not, to
    # the metre, when few timestamps are landmarks)
    assert after["Budget spent Σε_t"] != before["Budget spent Σε_t"]
    assert frame.locator(".leaflet-overlay-pane path").count() >= 2  # trajectory + place circle
    assert frame.locator("path.leaflet-interactive").count() >= 1  # only the circle takes clicks

    # The zoom survives a click (the base map is not rebuilt), and a click made while the page
    # is still rerunning for the previous one is not lost. (Each click is sent at once,
    # dashboard/map_element.py.)
    zoom0 = frame.evaluate("el => el.lmdkMap.getZoom()")
    frame.locator(".leaflet-control-zoom-in").click()
    wait_zoomed(page, zoom0)  # the zoom-in has happened and its animation is over
    container = frame
    zoom = container.evaluate("el => el.lmdkMap.getZoom()")
    box = container.bounding_box()
    cx, cy = box["width"] / 2, box["height"] / 2
    n = runs(page)
    container.click(position={"x": cx - 60, "y": cy})
    # the first click's rerun is under way
    page.wait_for_function("n => window.__lmdkRuns > n", arg=n, timeout=30_000)
    container.click(position={"x": cx + 60, "y": cy})
    # names: the home stay's, then Place 2, Place 3 (the grid's cells are in the DOM)
    page.locator("td", has_text="Place 3").first.wait_for(state="attached", timeout=30_000)
    wait_idle(page, since=n)
    assert page.locator("td", has_text="Place 2").count() >= 1
    assert container.evaluate("el => el.lmdkMap.getZoom()") == zoom

    # Nothing left 127.0.0.1: Leaflet is served by the app and there are no tiles.
    local = ("http://127.0.0.1", "data:", "blob:", "about:")
    outside = [u for u in requests if not u.startswith(local)]
    assert outside == []

    # A bad upload: the library's message in the page, the place stays.
    page.get_by_text("Upload files", exact=True).click()
    wait_idle(page)  # (a tab: may start no run)
    n = runs(page)
    page.locator("input[type='file']").first.set_input_files(
        {"name": "broken.csv", "mimeType": "text/csv",
         "buffer": b"uid,time,lat,lon\nu1,2024-01-01T00:00:00Z,95.0,116.3\n"}
    )
    alert = page.locator("[data-testid='stAlert']").filter(has_text="broken.csv")
    alert.wait_for(timeout=30_000)
    wait_idle(page, since=n)
    shown = selected_value(selected, "Place 3")
    cells = page.locator("td").all_inner_texts()
    assert "Place 3" in shown, cells
    # the message did not re-mount the map: the zoom chosen above is still there
    assert container.evaluate("el => el.lmdkMap.getZoom()") == zoom
    assert page.locator("td", has_text="wudaokou home").count() >= 1
    assert "Mean error" in metrics_text(page)

    # Issue 13: the bad file left the uploader, so a good file loads next and the message goes.
    rows = "\n".join(f"bob,2024-01-01T00:{m:02d}:00Z,{39.9 + m * 1e-4:.6f},116.3"
                     for m in range(30))
    n = runs(page)
    page.locator("input[type='file']").first.set_input_files(
        {"name": "good.csv", "mimeType": "text/csv",
         "buffer": ("uid,time,lat,lon\n" + rows + "\n").encode()}
    )
    page.get_by_text("Loaded: good.csv", exact=False).wait_for(timeout=30_000)
    wait_idle(page, since=n)
    assert page.locator("[data-testid='stAlert']").filter(has_text="broken.csv").count() == 0
    assert page.locator("td", has_text="wudaokou home").count() >= 1  # the places stay
    page.close()


DOWNLOADS = {  # file names carry the allocation released (issue 13): a pattern per button
    "Public release (CSV)": r"lmdk_public_release_[a-z0-9_]+_eps1\.csv",
    "Public release (GeoJSON)": r"lmdk_public_release_[a-z0-9_]+_eps1\.geojson",
    "PRIVATE analysis (JSON) — do not share":
        r"lmdk_PRIVATE_analysis_[a-z0-9_]+_eps1_DO_NOT_SHARE\.json",
    "PRIVATE places (GeoJSON) — do not share": r"lmdk_PRIVATE_places_DO_NOT_SHARE\.geojson",
}
RECORDED = {"Public release (CSV)", "Public release (GeoJSON)"}
"""The buttons whose download enters the ledger: each reruns the export fragment."""


def _set_epsilon(page, value: float) -> None:
    box = page.locator("[data-testid='stSidebar'] "
                       "input[aria-label='Privacy budget ε of the next release']")
    n = runs(page)
    box.fill(f"{value:.3f}")
    box.press("Enter")
    wait_idle(page, since=n)


@pytest.mark.slow
def test_every_download_button_gives_a_parseable_file(server, browser):
    """Issue 8 item 5: on main two of the four buttons produced no file at all. Issue 23: the
    page explores with free previews and offers the files of a real draw only; that draw is
    counted once, whatever is downloaded, and every file holds the same draw."""
    import csv
    import io
    import json

    from lmdk_core.places import places_from_geojson

    page = browser.new_page(viewport={"width": 1366, "height": 1000}, accept_downloads=True)
    goto_app(page, f"{server}/?tiles=none")
    before_chart = chart_signature(page, 0)
    n = runs(page)
    click_map(page, *home_of_first_user())  # a place, so the places file is enabled
    wait_chart_change(page, before_chart)
    wait_idle(page, since=n)
    for eps in (0.5, 2.0, 1.0):  # exploring three settings: previews, free
        _set_epsilon(page, eps)
    assert page.get_by_role("button", name="Public release (CSV)").count() == 0
    assert metrics_text(page)["Spent so far (all real releases)"].startswith("0 /")
    draw = page.get_by_role("button", name="Draw the real release")
    draw.scroll_into_view_if_needed()
    n = runs(page)
    draw.click()
    wait_idle(page, since=n)
    assert metrics_text(page)["Spent so far (all real releases)"].startswith("1 /")
    files: dict[str, str] = {}
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for label, name in DOWNLOADS.items():
        button = page.get_by_role("button", name=label, exact=True)
        button.scroll_into_view_if_needed()
        n = runs(page)
        # A click that lands while a rerun redraws the button is lost in the browser, not in
        # the app (the page is idle here, so this is rare); one more click after the page is
        # idle again. A button that produces no file (issue 8 item 5) still fails both times.
        for attempt in range(2):
            try:
                with page.expect_download(timeout=10_000) as info:
                    button.click()
                break
            except PlaywrightTimeout:
                if attempt:
                    raise
                wait_idle(page)
        download = info.value
        assert re.fullmatch(name, download.suggested_filename), download.suggested_filename
        files[label] = download.path().read_text(encoding="utf-8")
        if label in RECORDED:  # the ledger above the buttons is updated before the next click
            wait_idle(page, since=n)
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
    lat = [float(r[1]) for r in rows[1:] if r[1]]  # Skip has nothing before its first release
    assert lat == pytest.approx([f["geometry"]["coordinates"][1] for f in gj["features"]
                                 if f["geometry"]["coordinates"]][-len(lat):], abs=1e-6)
    assert analysis["settings"]["ledger"]["total_loss"] == pytest.approx(1.0)
    page.close()


TRACKER = "data/![ ](https://tracker.example/pixel.png?u=lmdk)/x.csv"
"""A zip member name that, rendered as markdown, is an image fetched from an outside host."""


def test_user_strings_are_text_and_fetch_nothing(server, browser):
    """Issue 24 finding 6: a crafted zip member name was rendered as markdown in the error and
    the browser requested the image from an outside host. File and member names in messages
    are now plain text: the name shows as typed, and no request leaves the app's host."""
    import io
    import zipfile
    from urllib.parse import urlparse

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:  # the only member cannot be read: its name is quoted
        zf.writestr(TRACKER, "uid,time,lat,lon\nu1,2024-01-01T00:00:00Z,95.0,116.3\n")
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    try:
        goto_app(page, f"{server}/?tiles=none")
        page.get_by_text("Upload files", exact=True).click()
        wait_idle(page)
        n = runs(page)
        page.locator("input[type='file']").first.set_input_files(
            {"name": "trip.zip", "mimeType": "application/zip", "buffer": buf.getvalue()})
        alert = page.locator("[data-testid='stAlert']").filter(has_text="tracker.example")
        alert.wait_for(timeout=30_000)
        wait_idle(page, since=n)
        assert "![ ](https://tracker.example/pixel.png?u=lmdk)" in alert.inner_text()
        assert alert.locator("img").count() == 0
    finally:
        page.close()
    host = urlparse(server).netloc
    away = [u for u in requests if urlparse(u).scheme in ("http", "https")
            and urlparse(u).netloc != host]
    assert away == []
