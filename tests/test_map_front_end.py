"""The map's front end (lmdk_core/landmark_map.js) on its own, in real headless Chromium.

A local page loads the installed Leaflet and the front end with a stub model (what both hosts
give it), so what the map draws and sends is checked without a server: place names stay text
(a places file can come from anyone), layers are drawn in the legend's style, a click on the
background sends its position and a click on a circle sends only the place.
"""

from __future__ import annotations

import json

import pytest
from browser_driver import wait_zoomed

from lmdk_core import map_view
from lmdk_core.palette import RELEASE_COLOUR
from lmdk_core.places import Place

pytestmark = [
    pytest.mark.browser,
]

EVIL = '<img src=x onerror="window.__xss=1">Home'
PAGE = """<!doctype html><html><head><meta charset="utf-8">
<link rel="stylesheet" href="{leaflet}/leaflet.css"><script src="{leaflet}/leaflet.js"></script>
</head><body style="margin:0"><div id="host" style="width:600px"></div><script>
{front_end}
const handlers = {{}};
let view = {view};
window.sent = [];
window.model = {{
  get: (k) => view[k],
  on: (ev, fn) => {{ (handlers[ev] = handlers[ev] || []).push(fn); }},
  off: () => {{}},
  send: (msg) => window.sent.push(msg),
  set: (k, v) => {{
    view = {{...view, [k]: v}};
    (handlers['change:' + k] || []).forEach(f => f());
  }},
}};
render({{ model: window.model, el: document.getElementById('host') }});
</script></body></html>"""


@pytest.fixture
def page(browser, tmp_path):
    traj = {"lat": [39.90 + i * 1e-4 for i in range(200)], "lon": [116.30] * 200}
    view = map_view.map_view(
        traj, landmarks=[i < 50 for i in range(200)],
        release={"lat": [39.905 + i * 1e-4 for i in range(200)], "lon": [116.302] * 200},
        places=[Place(EVIL, 39.905, 116.30, 80.0)], height="400px")
    html = PAGE.format(leaflet=map_view.leaflet_dir().as_uri(), view=json.dumps(view),
                       front_end=map_view.FRONT_END.read_text(encoding="utf-8"))
    path = tmp_path / "map.html"
    path.write_text(html, encoding="utf-8")
    p = browser.new_page(viewport={"width": 800, "height": 600})
    p.goto(path.as_uri())
    p.wait_for_selector(".lmdk-map.leaflet-container path.lmdk-place")
    yield p
    p.close()


def test_place_names_are_text_and_layers_are_drawn_as_the_legend_says(page):
    circle = page.locator("path.lmdk-place")
    circle.hover()
    tooltip = page.locator(".leaflet-tooltip")
    tooltip.wait_for()
    assert tooltip.inner_text() == EVIL  # shown as typed, not parsed as HTML
    assert page.locator(".leaflet-tooltip img").count() == 0
    assert page.evaluate("window.__xss") is None
    strokes = page.locator(f"path[stroke='{RELEASE_COLOUR}']")
    assert strokes.count() >= 100  # released points: hollow red rings
    assert {strokes.nth(i).get_attribute("fill") for i in range(5)} == {"none"}


def test_clicks_send_a_position_or_only_the_place_and_updates_keep_the_zoom(page):
    box = page.locator(".lmdk-map").bounding_box()
    page.mouse.click(box["x"] + 20, box["y"] + box["height"] - 40)  # background, bottom left
    page.locator("path.lmdk-place").click()
    sent = page.evaluate("window.sent")
    assert [m["event"] for m in sent] == ["map_click", "place_click"]
    assert sent[1]["name"] == EVIL
    clicked = page.evaluate(
        "(xy) => document.querySelector('.lmdk-map').lmdkMap.containerPointToLatLng(xy)",
        [20, box["height"] - 40])
    assert sent[0]["lat"] == pytest.approx(clicked["lat"]) and sent[0]["lon"] == pytest.approx(
        clicked["lng"])
    # new places and selection redraw the circles; the user's zoom stays
    zoom = page.evaluate("document.querySelector('.lmdk-map').lmdkMap.getZoom()")
    page.locator(".leaflet-control-zoom-in").click()
    wait_zoomed(page, zoom)
    zoom = page.evaluate("document.querySelector('.lmdk-map').lmdkMap.getZoom()")
    page.evaluate("""() => { window.model.set('places', [
        {name: 'A', lat: 39.905, lon: 116.30, radius_m: 50},
        {name: 'B', lat: 39.91, lon: 116.30, radius_m: 50}]);
      window.model.set('selected', 'B'); }""")
    assert page.locator(".lmdk-map").get_attribute("data-places") == "2"
    assert page.evaluate("document.querySelector('.lmdk-map').lmdkMap.getZoom()") == zoom
    colours = page.locator("path.lmdk-place").evaluate_all(
        "els => els.map(e => e.getAttribute('stroke'))")
    assert sorted(colours) == sorted([map_view.COLOURS["place"], map_view.COLOURS["selected"]])
