"""The interactive explorer: a map, privacy controls and live charts in one notebook cell.

``explore(trajectory)`` returns an :class:`Explorer`; display it (it is the cell's last value, or
``display(ex)``). A click on the map adds a landmark place; a click on a place selects it, a
second click removes it. Every change of place or setting draws a new release with the same
library functions the dashboard uses (:func:`lmdk_core.release_locations`,
:func:`lmdk_core.landmark_mask`, :mod:`lmdk_core.correlation`, :mod:`lmdk_core.figures`) and
redraws the allocation, error and loss charts in place.

Charts are plain Plotly figures shown in ``ipywidgets.Output`` areas through Plotly's own
mimetype renderer (offline: plotly.js comes with the installed JupyterLab extension). Plotly's
``FigureWidget`` was the first choice, but in JupyterLab 4.6 with plotly 7.1 and anywidget 0.11
its plots stayed empty in a real browser (0 traces after 150 s, even for a 3-point scatter), so
the explorer does not use it.

State readable from Python: ``ex.places``, ``ex.release``, ``ex.result`` (mask, G_t, errors,
loss), ``ex.settings``, ``ex.report()``. Settings change from Python with ``ex.set(epsilon=2)``
(the controls follow) or from the controls (Python follows).
"""

from __future__ import annotations

import html
import json
import math
from typing import Any

import ipywidgets as w
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from .. import figures
from ..errors import LmdkError
from ..places import Place
from ..release import SCHEME_INFO, SCHEMES, Release
from .map_widget import LandmarkMap
from .session import INTERVALS_S, LOSS_MODELS, ExplorerResult, ExplorerSession

__all__ = ["CHART_POINTS", "Explorer", "explore", "show_figure"]

CHART_POINTS = 400
"""Points per chart line (min-max thinned, peaks kept), as in the dashboard."""

_TILES = (("none (offline, no request)", "none"), ("OpenStreetMap (online)", "osm"))
_LOSS_LABELS = {
    "trajectory": "estimated from this trajectory",
    "strong": "synthetic: strong",
    "moderate": "synthetic: moderate",
    "weak": "synthetic: weak",
    "none": "none (no loss chart)",
}


def _interval_label(step: float) -> str:
    return f"{step / 60:g} min" if step >= 60 else f"{step:g} s"


def show_figure(out: w.Output, fig: go.Figure) -> None:
    """Replace what ``out`` shows with ``fig`` (Plotly's mimetype bundle; no kernel display call,
    so it works from widget callbacks and outside a kernel alike)."""
    spec = json.loads(pio.to_json(fig, validate=False))
    spec.setdefault("config", {})["displaylogo"] = False
    title = (fig.layout.title.text or "figure") if fig.layout.title else "figure"
    out.outputs = ({"output_type": "display_data", "metadata": {},
                    "data": {"application/vnd.plotly.v1+json": spec,
                             "text/plain": f"<Plotly figure: {title}>"}},)


class Explorer:
    """Map + controls + charts over an :class:`ExplorerSession` (see module docstring).

    Arguments are those of :class:`~lmdk_core.jupyter.session.ExplorerSession`, plus ``tiles``
    ("none" by default: no outside request; "osm" or a ``{z}/{x}/{y}`` URL to opt in) and
    ``map_height`` (CSS height of the map).
    """

    def __init__(self, trajectory: pd.DataFrame, *, tiles: str | None = "none",
                 map_height: str = "420px", **settings: Any) -> None:
        self.session = ExplorerSession(trajectory, **settings)
        s = self.session.settings
        self.map = LandmarkMap(tiles=tiles, height=map_height,
                               layout=w.Layout(width="100%"))  # fill its flex box
        self.map.on_map_click(self._map_clicked)
        self.map.on_place_click(self._place_clicked)

        style = {"description_width": "150px"}
        layout = w.Layout(width="420px")
        eps_min = min(0.01, s["epsilon"])
        eps_max = max(10.0, s["epsilon"])
        self.controls: dict[str, w.ValueWidget] = {
            "epsilon": w.FloatLogSlider(
                value=s["epsilon"], base=10, min=math.log10(eps_min), max=math.log10(eps_max),
                step=0.05, readout_format=".3g", continuous_update=False,
                description="privacy budget ε", style=style, layout=layout),
            "scheme": w.Dropdown(options=list(SCHEMES), value=s["scheme"],
                                 description="scheme", style=style, layout=layout),
            "radius_m": w.FloatLogSlider(
                value=s["radius_m"], base=10, min=math.log10(min(10.0, s["radius_m"])),
                max=math.log10(max(5000.0, s["radius_m"])), step=0.05, readout_format=".0f",
                continuous_update=False, description="radius r (m)", style=style,
                layout=layout),
            "interval_s": w.Dropdown(
                options=[("auto (≤ 5,000 timestamps)", "auto"), ("every fix", None)]
                + [(_interval_label(v), v) for v in INTERVALS_S],
                value=s["interval_s"], description="release interval", style=style,
                layout=layout),
            "loss_model": w.Dropdown(options=[(_LOSS_LABELS[m], m) for m in LOSS_MODELS],
                                     value=s["loss_model"], description="correlation model",
                                     style=style, layout=layout),
            "new_place_radius_m": w.FloatSlider(
                value=s["new_place_radius_m"], min=10, max=max(2000.0, s["new_place_radius_m"]),
                step=10, continuous_update=False, readout_format=".0f",
                description="new place radius (m)", style=style, layout=layout),
        }
        if self.session.users:
            self.controls["user"] = w.Dropdown(options=self.session.users, value=s["user"],
                                               description="person", style=style, layout=layout)
        if s["interval_s"] not in dict(self.controls["interval_s"].options).values():
            self.controls["interval_s"].options = [
                *self.controls["interval_s"].options,
                (_interval_label(s["interval_s"]), s["interval_s"])]
            self.controls["interval_s"].value = s["interval_s"]
        self.tiles = w.Dropdown(options=_TILES, value=tiles if tiles in ("none", "osm") else None,
                                description="base map", style=style, layout=layout)
        self.scheme_info = w.HTML()
        self.summary = w.HTML()
        self.places_table = w.HTML()
        self.status = w.HTML()
        self.redraw_button = w.Button(description="New release", icon="refresh",
                                      tooltip="the same settings, fresh randomness")
        self.remove_button = w.Button(description="Remove selected place", icon="trash")
        self.redraw_button.on_click(lambda _b: self._run(self.session.redraw))
        self.remove_button.on_click(lambda _b: self._remove_selected())
        for key, control in self.controls.items():
            control.observe(lambda change, key=key: self._control_changed(key, change["new"]),
                            names="value")
        self.tiles.observe(lambda change: self._tiles_changed(change["new"]), names="value")

        r = self.session.result
        self.outputs = {name: w.Output(layout=w.Layout(width="100%"))
                        for name in ("allocation", "error", "loss")}
        self.charts: dict[str, go.Figure] = {}
        self._syncing = False
        self._refresh(r)

        order = ["user", "epsilon", "scheme", "radius_m", "interval_s", "loss_model",
                 "new_place_radius_m"]
        panel = w.VBox([
            w.HTML("<b>Privacy settings</b>"),
            *[self.controls[k] for k in order if k in self.controls],
            self.scheme_info, self.tiles,
            w.HBox([self.redraw_button, self.remove_button]),
            self.status, self.summary, self.places_table,
        ], layout=w.Layout(width="440px"))
        self.widget = w.VBox([
            w.HTML("<b>Click the map to add a landmark place; click a place to select it, "
                   "click it again to remove it.</b>"),
            w.HBox([w.Box([self.map], layout=w.Layout(flex="1 1 auto", min_width="360px")),
                    panel]),
            self.outputs["allocation"], self.outputs["error"], self.outputs["loss"],
        ])

    # ------------------------------------------------------------------ Python state

    @property
    def places(self) -> list[Place]:
        """The landmark places (a copy)."""
        return self.session.places

    @property
    def release(self) -> Release:
        """The current release (read-only arrays)."""
        return self.session.result.release

    @property
    def result(self) -> ExplorerResult:
        """The current release and everything derived from it."""
        return self.session.result

    @property
    def settings(self) -> dict[str, Any]:
        """The current settings (a copy)."""
        return dict(self.session.settings)

    def report(self) -> dict:
        """The privacy report of the current release (PRIVATE: derived from the true data)."""
        return self.session.report()

    def set(self, **settings: Any) -> None:
        """Change several settings at once (validated; one recomputation); controls follow."""
        self._run(lambda: self.session.update(**settings))

    def add_place(self, lat: float, lon: float, radius_m: float | None = None,
                  name: str | None = None) -> Place:
        """Add a landmark place from Python (as a map click does, with a radius and name)."""
        out: list[Place] = []
        self._run(lambda: out.append(self.session.add_place(lat, lon, radius_m, name)))
        return out[0] if out else None  # type: ignore[return-value]

    def remove_place(self, name: str) -> None:
        self._run(lambda: self.session.remove_place(name))

    # ------------------------------------------------------------------ events

    def _run(self, action: Any) -> None:
        """Run a state change; refresh on success, show the reason on a library error."""
        try:
            action()
        except LmdkError as exc:
            self.status.value = f"<span style='color:#D55E00'>{_escape(str(exc))}</span>"
            self._sync_controls()
            return
        self.status.value = ""
        self._refresh(self.session.result)

    def _map_clicked(self, lat: float, lon: float) -> None:
        self._run(lambda: self.session.add_place(lat, lon))

    def _place_clicked(self, name: str) -> None:
        before = len(self.session.places)
        try:
            self.session.click_place(name)
        except LmdkError as exc:
            self.status.value = f"<span style='color:#D55E00'>{_escape(str(exc))}</span>"
            return
        if len(self.session.places) != before:
            self._refresh(self.session.result)
        else:  # selection only: no new release
            self._draw_map(self.session.result)
            self._draw_places()

    def _remove_selected(self) -> None:
        if self.session.selected is not None:
            self._run(lambda: self.session.remove_place(self.session.selected))

    def _control_changed(self, key: str, value: Any) -> None:
        if self._syncing or self.session.settings.get(key) == value:
            return
        self._run(lambda: self.session.update(**{key: value}))

    def _tiles_changed(self, value: str | None) -> None:
        if value is not None:
            self.map.set_tiles(value)

    def _sync_controls(self) -> None:
        self._syncing = True
        try:
            for key, control in self.controls.items():
                value = self.session.settings[key]
                if control.value != value:
                    control.value = value
        finally:
            self._syncing = False

    # ------------------------------------------------------------------ drawing

    def _time(self, r: ExplorerResult) -> Any:
        return r.traj["time"] if "time" in r.traj.columns else None

    def _allocation_figure(self, r: ExplorerResult) -> go.Figure:
        return figures.allocation_figure(r.release.eps, r.landmarks, r.release.epsilon,
                                         time=self._time(r), guarantee=r.guarantee,
                                         max_points=CHART_POINTS, height=480)

    def _error_figure(self, r: ExplorerResult) -> go.Figure:
        return figures.error_figure(r.errors_m, r.release.published, time=self._time(r),
                                    landmarks=r.landmarks, max_points=CHART_POINTS, height=400)

    def _loss_figure(self, r: ExplorerResult) -> go.Figure:
        title = "Privacy loss over time"
        if r.loss is None:
            return figures.loss_figure(r.release.eps, r.guarantee, r.release.epsilon,
                                       time=self._time(r), title=title + " (no correlation)",
                                       max_points=CHART_POINTS, height=460)
        source = _LOSS_LABELS[self.session.settings["loss_model"]]
        return figures.loss_figure(r.release.eps, r.guarantee, r.release.epsilon,
                                   temporal=r.loss.loss, landmark_loss=r.loss.composed,
                                   time=self._time(r), title=f"{title}: correlation {source}",
                                   max_points=CHART_POINTS, height=460)

    def _draw_map(self, r: ExplorerResult) -> None:
        self.map.show(r.traj, landmarks=r.landmarks, release=r.release,
                      places=self.session.places, selected=self.session.selected)

    def _draw_places(self) -> None:
        selected = " style='background:#E69F0033'"
        rows = "".join(
            f"<tr{selected if p.name == self.session.selected else ''}>"
            f"<td>{_escape(p.name)}</td><td>{p.lat:.5f}</td><td>{p.lon:.5f}</td>"
            f"<td>{p.radius_m:g}</td></tr>"
            for p in self.session.places)
        self.places_table.value = (
            "<b>Landmark places</b>" + (
                "<table><tr><th>name</th><th>lat</th><th>lon</th><th>radius (m)</th></tr>"
                f"{rows}</table>" if rows else "<br><i>none yet: click the map</i>"))

    @property
    def allocation_chart(self) -> go.Figure:
        """The budget allocation / landmark guarantee chart as shown now."""
        return self.charts["allocation"]

    @property
    def error_chart(self) -> go.Figure:
        """The per-timestamp error chart as shown now."""
        return self.charts["error"]

    @property
    def loss_chart(self) -> go.Figure:
        """The privacy-loss chart as shown now."""
        return self.charts["loss"]

    def _refresh(self, r: ExplorerResult) -> None:
        s = self.session.settings
        self._sync_controls()
        self.scheme_info.value = f"<i>{_escape(SCHEME_INFO[s['scheme']])}</i>"
        rows = "".join(f"<tr><td>{_escape(k)}</td><td>{_fmt(v)}</td></tr>"
                       for k, v in r.summary().items())
        notes = "".join(f"<br><small>{_escape(m)}</small>" for m in r.warnings)
        self.summary.value = f"<b>This release</b><table>{rows}</table>{notes}"
        self._draw_places()
        self._draw_map(r)
        self.charts = {"allocation": self._allocation_figure(r), "error": self._error_figure(r),
                       "loss": self._loss_figure(r)}
        for name, fig in self.charts.items():
            show_figure(self.outputs[name], fig)

    # ------------------------------------------------------------------ display

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)


def _escape(text: str) -> str:
    return html.escape(text, quote=True)


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "<span style='color:#D55E00'>no</span>"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:,.4g}"
    return _escape(str(v))


def explore(trajectory: pd.DataFrame, **settings: Any) -> Explorer:
    """An :class:`Explorer` on ``trajectory`` (see :class:`ExplorerSession` for the settings).

    Fresh OS randomness for every release by default; no tile or CDN request unless
    ``tiles="osm"`` (or a tile URL) is passed or chosen in the base-map control.
    """
    return Explorer(trajectory, **settings)
