"""dashboard.map_click: the script that reports a map click without the 250 ms debounce.

Its effect in a browser (one script run per click, places added and selected as before) is
checked by tests/test_browser_map.py; here, what it is built from."""

from __future__ import annotations

import folium
import pytest

from dashboard.map_click import SENT_ORDER, ClickAtOnce
from dashboard.map_section import RETURNED


def test_it_sends_the_keys_the_page_asks_for_in_the_component_s_order():
    assert list(RETURNED) == [k for k in SENT_ORDER if k in RETURNED]
    m = folium.Map(location=[40.0, 116.0], zoom_start=12)
    ClickAtOnce(RETURNED).add_to(m)
    html = m.get_root().render()
    assert f"{m.get_name()}.on('click'" in html  # bound to this map
    assert '["last_clicked", "last_object_clicked", "last_object_clicked_tooltip"]' in html
    assert "'streamlit:setComponentValue'" in html and "g.previous_data = value" in html


@pytest.mark.parametrize("keys", [["last_object_clicked", "last_clicked"], ["zoom"]])
def test_keys_it_cannot_send_like_the_component_are_refused(keys):
    with pytest.raises(ValueError, match="in this order"):
        ClickAtOnce(keys)
