"""Report a map click to the page at once, not after streamlit-folium's 250 ms debounce.

streamlit-folium (0.27) reports every map event through one function debounced by 250 ms, so a
click reached the server a quarter of a second late: a quarter of the page's click latency
(bench/bench_click.py). :class:`ClickAtOnce` is a script added to the map that, right after
Leaflet has handed a click to streamlit-folium's own handlers, sends the same value those
handlers will send, by the components protocol every Streamlit component speaks
(``streamlit:setComponentValue``), and records it as the value last sent, so the debounced
report that follows finds nothing new and sends nothing (one script run per click; the
browser test counts them).

It reads streamlit-folium's ``window.__GLOBAL_DATA__``; if that is missing or has another shape
(a different streamlit-folium), it does nothing and the debounced report still works.
"""

from __future__ import annotations

import json

from branca.element import MacroElement
from folium.template import Template

_SOURCE = {"last_clicked": "lat_lng_clicked", "last_object_clicked": "last_object_clicked",
           "last_object_clicked_tooltip": "last_object_clicked_tooltip"}
"""Each key this script can send, and the field of ``window.__GLOBAL_DATA__`` it comes from."""
SENT_ORDER = tuple(_SOURCE)
"""The keys in streamlit-folium's own order (its comparison with the value last sent is of JSON
text, so the order matters)."""


class ClickAtOnce(MacroElement):
    """Added to a folium map shown by st_folium with ``returned_objects=keys``."""

    _template = Template("""
{% macro script(this, kwargs) %}
(function () {
  var keys = {{ this.keys_json }}, source = {{ this.source_json }};
  {{ this._parent.get_name() }}.on('click', function () {
    setTimeout(function () {  // after streamlit-folium's handlers of this same click
      var g = window.__GLOBAL_DATA__;
      if (!g || !('previous_data' in g) || !g.lat_lng_clicked) return;
      var value = {};
      keys.forEach(function (k) { value[k] = g[source[k]]; });
      if (JSON.stringify(value) === JSON.stringify(g.previous_data)) return;
      g.previous_data = value;
      window.parent.postMessage({isStreamlitMessage: true,
        type: 'streamlit:setComponentValue', value: value, dataType: 'json'}, '*');
    }, 0);
  });
})();
{% endmacro %}
""")

    def __init__(self, keys: list[str]) -> None:
        super().__init__()
        self._name = "ClickAtOnce"
        if list(keys) != [k for k in SENT_ORDER if k in keys]:  # unknown or out of order
            raise ValueError(f"ClickAtOnce sends {SENT_ORDER} in this order, got {keys}")
        self.keys_json = json.dumps(list(keys))
        self.source_json = json.dumps(_SOURCE)
