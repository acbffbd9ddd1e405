"""LandmarkMap: a Leaflet map widget where a click adds a landmark place and a click on a place
selects it (anywidget; works in JupyterLab, Notebook 7 and VS Code).

Offline by construction: the widget's JavaScript is anywidget's (served by the local Jupyter
server from the installed package) plus this module's code with Leaflet inlined from the
installed ``xstatic-leaflet`` package (the same Leaflet :mod:`lmdk_core.maps` inlines for the
dashboard), and its CSS with Leaflet's images as ``data:`` URIs. The map requests no tile unless
``tiles`` is set (``"osm"`` or a ``{z}/{x}/{y}`` URL): a tile server sees where you look.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import anywidget
import traitlets

from ..map_view import COLOURS, FRONT_END, map_view, parse_click, tile_source
from ..maps import local_leaflet

__all__ = ["LandmarkMap", "tile_source"]

MAX_MARKERS = 300
"""Markers drawn per layer (landmark timestamps, released points): evenly thinned for display."""
MAX_LINE_POINTS = 2000
"""Vertices of the drawn trajectory line (evenly thinned for display, first and last kept)."""


def _decode(data_uri: str) -> str:
    return base64.b64decode(data_uri.split(",", 1)[1]).decode("utf-8")


@functools.lru_cache(maxsize=1)
def _assets() -> tuple[str, str]:
    """(ES module, CSS): Leaflet wrapped as a local ``L``, then the shared map front end
    (``lmdk_core/landmark_map.js``) and its export for anywidget."""
    (js,), (css,) = local_leaflet()
    leaflet = _decode(js[1])
    esm = (
        "const L = (() => {\nconst module = { exports: {} };\nconst exports = module.exports;\n"
        f"{leaflet}\n;module.exports.noConflict();\nreturn module.exports;\n}})();\n"
        + FRONT_END.read_text(encoding="utf-8")
        + "\nexport default { render };\n"
    )
    style = _decode(css[1]) + "\n.lmdk-map { min-height: 200px; cursor: crosshair; }\n"
    return esm, style


class LandmarkMap(anywidget.AnyWidget):
    """The map. Set its layers with :meth:`show`; react to clicks with :meth:`on_map_click`
    (callback(lat, lon)) and :meth:`on_place_click` (callback(name)).

    Browser clicks arrive as custom messages ``{"event": "map_click", "lat", "lon"}`` and
    ``{"event": "place_click", "name"}``; :meth:`click` and :meth:`click_place` send the same
    messages through the same path from Python (for scripts and tests). Malformed messages are
    ignored.
    """

    _esm, _css = _assets()

    track: Any = traitlets.List().tag(sync=True)
    landmark_points: Any = traitlets.List().tag(sync=True)
    released: Any = traitlets.List().tag(sync=True)
    places: Any = traitlets.List().tag(sync=True)
    selected = traitlets.Unicode(None, allow_none=True).tag(sync=True)
    tiles = traitlets.Unicode("").tag(sync=True)
    attribution = traitlets.Unicode("").tag(sync=True)
    height = traitlets.Unicode("420px").tag(sync=True)
    colours = traitlets.Dict(COLOURS).tag(sync=True)

    def __init__(self, *, tiles: str | None = "none", **kwargs: Any) -> None:
        url, attribution = tile_source(tiles)
        super().__init__(tiles=url, attribution=attribution, **kwargs)
        self._map_click: list[Callable[[float, float], None]] = []
        self._place_click: list[Callable[[str], None]] = []
        self.on_msg(self._on_message)

    # -------------------------------------------------------------- Python → browser

    def set_tiles(self, tiles: str | None) -> None:
        """Base map: "none" (no outside request), "osm" or a ``{z}/{x}/{y}`` URL."""
        self.tiles, self.attribution = tile_source(tiles)

    def show(self, traj: Any, *, landmarks: Any = None, release: Any = None,
             places: Iterable[Any] = (), selected: str | None = None) -> None:
        """Draw the true path, landmark timestamps, released points and places in one update
        (what :func:`lmdk_core.map_view.map_view` builds; the base map stays as set)."""
        view = map_view(traj, landmarks=landmarks, release=release, places=places,
                        selected=selected, max_markers=MAX_MARKERS,
                        max_line_points=MAX_LINE_POINTS)
        with self.hold_sync():
            if view["track"] != self.track:  # an unchanged track keeps the user's zoom
                self.track = view["track"]
            self.landmark_points = view["landmark_points"]
            self.released = view["released"]
            self.places = view["places"]
            self.selected = selected

    # -------------------------------------------------------------- browser → Python

    def on_map_click(self, callback: Callable[[float, float], None]) -> None:
        self._map_click.append(callback)

    def on_place_click(self, callback: Callable[[str], None]) -> None:
        self._place_click.append(callback)

    def _on_message(self, _widget: Any, content: Any, _buffers: Sequence[Any]) -> None:
        click = parse_click(content)
        if click is None:
            return
        if click.place is not None:
            for on_place in self._place_click:
                on_place(click.place)
        elif click.lat is not None and click.lon is not None:
            for on_map in self._map_click:
                on_map(click.lat, click.lon)

    def click(self, lat: float, lon: float) -> None:
        """Simulate a click on the map background at (lat, lon)."""
        self._handle_custom_msg({"event": "map_click", "lat": lat, "lon": lon}, [])

    def click_place(self, name: str) -> None:
        """Simulate a click on the place called ``name``."""
        self._handle_custom_msg({"event": "place_click", "name": name}, [])
