"""Issue 28 in headless Chromium: the public story shows the attack's numbers at the three
viewport sizes, inside the viewport's width (no sideways scrolling). The page's section 4b is
checked at the same sizes on the guide's page load (tests/test_guide_browser.py)."""

from __future__ import annotations

import numpy as np
import pytest
from browser_driver import VIEWPORTS, resize

import lmdk_core as lm
from lmdk_core import attacks as at
from lmdk_core.formatting import plain_distance
from lmdk_core.story import release_story

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PLACES = [lm.Place("Home", 39.9925, 116.3395, 100.0)]
FITS = "el => el.getBoundingClientRect().right <= window.innerWidth + 1"


@pytest.fixture(scope="module")
def story(tmp_path_factory):
    alice = lm.select_user(lm.load_sample(), "alice")
    rep = at.attack_report(alice, PLACES, settings={"epsilon": 1.0}, rng=0, draws=4)
    one = alice.iloc[:500]
    rel = lm.release_locations(one, None, epsilon=1.0, scheme="event", rng=1)
    path = tmp_path_factory.mktemp("story") / "private.html"  # the figures are private
    path.write_text(release_story(rel, epsilon=1.0, allocation="skip", scheme="skip",
                                  settings={}, attack=rep, include_private=True, traj=one,
                                  landmarks=np.zeros(len(one), bool)), "utf-8")
    return path, plain_distance(rep.median_m()[0])  # the attacker the sentence names


def test_story_shows_the_attack_numbers(browser, story):
    path, median = story
    page = browser.new_page(viewport={"width": VIEWPORTS[0][0], "height": VIEWPORTS[0][1]})
    page.goto(path.as_uri())
    text = page.get_by_text(f"lands within {median}").first
    for w, h in VIEWPORTS:
        resize(page, w, h, text)  # the layout follows the new width
        text.scroll_into_view_if_needed()
        assert text.is_visible() and text.evaluate(FITS), (w, h)
    page.close()
