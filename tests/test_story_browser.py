"""The stakeholder story opens in headless Chromium from a file with the network cut off:
every request that is not file:/data:/about: is aborted and counted, and the Plotly charts and
the Leaflet map must still draw (issue 13). (Issue 13's TPL-bounded switch, in the dashboard, is
checked on tests/test_pages_browser.py's page load.)"""

from __future__ import annotations

import os

import pytest

import lmdk_core as lm
from lmdk_core.story import release_story

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def story_file(tmp_path_factory):
    traj = lm.select_user(lm.load_sample(), "alice").iloc[:800]
    place = lm.Place("Home", float(traj.lat.iloc[400]), float(traj.lon.iloc[400]), 150)
    mask = lm.landmark_mask(traj, [place])
    rel = lm.release_locations(traj, mask, epsilon=1.0, scheme="skip", radius_m=200, rng=3)
    out = tmp_path_factory.mktemp("story")
    public = out / "public.html"
    public.write_text(release_story(rel, epsilon=1.0, allocation="skip", scheme="skip",
                                    settings={"Allocation released": "skip"}), "utf-8")
    private = out / "private.html"
    private.write_text(release_story(rel, epsilon=1.0, allocation="skip", scheme="skip",
                                     settings={}, include_private=True, traj=traj,
                                     landmarks=mask, places=[place]), "utf-8")
    return public, private


def _open_offline(browser, path, size=(1280, 720)):
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    blocked: list[str] = []

    def route(r):
        url = r.request.url
        if url.startswith(("file:", "data:", "about:", "blob:")):
            r.continue_()
        else:
            blocked.append(url)
            r.abort()

    page.route("**/*", route)
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page, blocked



@pytest.mark.parametrize("which, figures", [("public", 1), ("private", 4)])
def test_story_renders_with_no_network(browser, story_file, which, figures):
    path = story_file[0] if which == "public" else story_file[1]
    page, blocked = _open_offline(browser, path)
    page.wait_for_selector(".js-plotly-plot .main-svg", timeout=30_000)
    drawn = page.locator(".js-plotly-plot").evaluate_all(
        "els => els.filter(e => e.querySelector('.cartesianlayer .trace')).length")
    assert drawn == figures
    frames = [f for f in page.frames if f != page.main_frame]
    assert frames, "no map frame"
    for f in frames:
        f.wait_for_selector(".leaflet-container", timeout=30_000)
        assert f.locator(".leaflet-overlay-pane path").count() > 10  # released (+ true) points
    assert blocked == []
    if os.environ.get("LMDK_SCREENSHOTS"):  # to look at the story (never committed)
        page.screenshot(path=f"{os.environ['LMDK_SCREENSHOTS']}/story_{which}.png",
                        full_page=True)
    page.close()


def test_offline_check_fails_for_a_cdn_page(browser, tmp_path):
    """The route records what a page would fetch: a folium map left on its CDNs is caught."""
    import folium

    path = tmp_path / "cdn.html"
    folium.Map(tiles=None).save(str(path))
    page, blocked = _open_offline(browser, path)
    page.close()
    assert any(u.startswith("https://") for u in blocked)
