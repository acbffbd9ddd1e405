"""The landmark map as a Streamlit component in the page itself (components v2, no iframe).

The map's front end is the one the Jupyter explorer uses, ``lmdk_core/landmark_map.js``, fed
with :func:`lmdk_core.map_view.map_view`. On a rerun the same map gets the new view and redraws
only the layers whose data changed, so the user's zoom and pan stay.

Replaces streamlit-folium, which cost every map click (bench/bench_click.py) a folium render of
~37 Jinja templates on the server, the map iframe's own message round trip and a debounce, and
cost the first load the iframe's separate document with its own copy of Leaflet.

Leaflet (JS, CSS, images) is served by this app's own server from the installed
``xstatic-leaflet`` package (a declared component directory); nothing is fetched from elsewhere
and no tile is requested unless the user asks for a street map.

A click reaches the server as the trigger ``click`` with the front end's message
(``{"event": "map_click", "lat", "lon"}`` or ``{"event": "place_click", "name"}``), which
:func:`dashboard.state.on_map_click` reads from ``st.session_state[key]["click"]`` in the
callback, before the page is drawn.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st
import streamlit.components.v1 as components_v1

from lmdk_core.map_view import FRONT_END, leaflet_dir

_LEAFLET = components_v1.declare_component("lmdk_leaflet", path=str(leaflet_dir()))
"""Serves leaflet.js, leaflet.css and images/ at ``/component/lmdk_leaflet/``."""

_HOST_JS = """
const loaded = {};
// Leaflet's script and its stylesheet, both loaded: a map drawn before leaflet.css applies
// shows its tiles, panes and labels unstyled in the page's flow until it does.
function loadLeaflet(base) {
  if (!loaded[base]) {
    let css = document.querySelector(`link[data-lmdk-leaflet="${base}"]`);
    if (!css) {
      css = document.createElement('link');
      css.rel = 'stylesheet';
      css.href = base + '/leaflet.css';
      css.dataset.lmdkLeaflet = base;
      document.head.appendChild(css);
    }
    const styled = css.sheet ? Promise.resolve() : new Promise((resolve) => {
      css.addEventListener('load', resolve, { once: true });
      css.addEventListener('error', resolve, { once: true });  // drawn unstyled, not lost
    });
    const script = new Promise((resolve, reject) => {
      const s = document.createElement('script');
      s.src = base + '/leaflet.js';
      s.onload = () => resolve(window.L);
      s.onerror = () => { delete loaded[base]; reject(new Error('could not load ' + s.src)); };
      document.head.appendChild(s);
    });
    loaded[base] = Promise.all([script, styled]).then(([L]) => L);
  }
  return loaded[base];
}
// The model the front end expects, over the component's latest data: get, on/off, send.
function makeModel(host) {
  const handlers = {};
  let view = host.lmdkData.view;
  return {
    get: (k) => view[k],
    on: (ev, fn) => { (handlers[ev] = handlers[ev] || []).push(fn); },
    off: (ev, fn) => { handlers[ev] = (handlers[ev] || []).filter((f) => f !== fn); },
    send: (msg) => host.lmdkSend('click', msg),
    update(next) {  // runs each handler whose data changed, once
      const changed = Object.keys(next).filter(
        (k) => JSON.stringify(next[k]) !== JSON.stringify(view[k]));
      view = next;
      const done = new Set();
      for (const k of changed) {
        for (const fn of handlers['change:' + k] || []) {
          if (!done.has(fn)) { done.add(fn); fn(); }
        }
      }
    },
  };
}
export default function ({ parentElement, data, setTriggerValue }) {
  let host = parentElement.querySelector('.lmdk-map-host');
  const first = !host;
  if (first) {
    host = document.createElement('div');
    host.className = 'lmdk-map-host';
    host.style.cursor = 'crosshair';
    parentElement.appendChild(host);
  }
  host.lmdkData = data;  // reruns while Leaflet loads: the map starts from the latest data
  host.lmdkSend = setTriggerValue;
  if (host.lmdkModel) {
    host.lmdkModel.update(data.view);
  } else if (first) {
    loadLeaflet(data.leaflet).then(() => {
      host.lmdkModel = makeModel(host);
      render({ model: host.lmdkModel, el: host });
    }).catch((err) => { host.textContent = 'The map could not be drawn: ' + err.message; });
  }
}
"""

_MAP = st.components.v2.component(
    "lmdk_map", js=FRONT_END.read_text(encoding="utf-8") + _HOST_JS, isolate_styles=False)


def leaflet_url() -> str:
    """Where this server serves Leaflet (under ``server.baseUrlPath`` if one is set)."""
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return f"{'/' + base if base else ''}/component/{_LEAFLET.name}"


def show(view: dict[str, Any], *, key: str, on_click: Callable[[], None]) -> None:
    """Draw ``view`` (:func:`lmdk_core.map_view.map_view`) at ``key``; ``on_click`` runs before
    the page when the map is clicked (the message is in ``st.session_state[key]["click"]``)."""
    _MAP(key=key, data={"view": view, "leaflet": leaflet_url()}, on_click_change=on_click)
