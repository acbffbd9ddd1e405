"""The interactive explorer: a map, privacy controls and live charts in one notebook cell.

``explore(trajectory)`` returns an :class:`Explorer`; display it (it is the cell's last value, or
``display(ex)``). A click on the map adds a landmark place; a click on a place selects it, a
second click removes it.

Exploring is free: every change of place or setting shows a **preview** — a simulated release
(seeded noise, labelled as such, never exportable) drawn by
:meth:`lmdk_core.session.Session.preview` — with the allocation, error and loss charts of
:mod:`lmdk_core.figures` redrawn in place. The
**real release** is a separate, explicit action: the button "Draw the real release (counts
against your budget)" or :meth:`Explorer.draw`. It draws fresh OS randomness once per setting
(:meth:`lmdk_core.session.Session.draw`), records it in the person's ledger at once and is never
redrawn; the panel shows what was spent against the total budget. Only a real draw can be
reported or exported (:meth:`Explorer.report`, :meth:`Explorer.public_release`).

The loss chart shows upper bounds from :func:`lmdk_core.loss_models.release_loss` — the
computation the dashboard shows — under a public preset, a model of the released points of the
release shown, or a DP model drawn (and charged) only by the button "Draw the DP model".

Charts are plain Plotly figures shown in ``ipywidgets.Output`` areas through Plotly's own
mimetype renderer (offline: plotly.js comes with the installed JupyterLab extension). Plotly's
``FigureWidget`` was the first choice, but in JupyterLab 4.6 with plotly 7.1 and anywidget 0.11
its plots stayed empty in a real browser (0 traces after 150 s, even for a 3-point scatter), so
the explorer does not use it.

State readable from Python: ``ex.places``, ``ex.release``, ``ex.result`` (kind, mask, G_t,
errors, model, loss), ``ex.settings``, ``ex.spent``, ``ex.total_budget``. Settings change from
Python with ``ex.set(epsilon=2)`` (the controls follow) or from the controls (Python follows).
"""

from __future__ import annotations

import html
import json
import math
import re
from typing import Any

import ipywidgets as w
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from .. import figures, loss_models, loss_text
from .._deprecation import renamed
from ..errors import LmdkError
from ..formatting import plain_duration, plain_number, plain_percent
from ..places import Place
from ..release import SCHEME_INFO, SCHEMES, Release
from .map_widget import LandmarkMap
from .session import (
    INTERVALS_S,
    LOSS_LABELS,
    LOSS_MODELS,
    MAX_TIMESTAMPS,
    SUMMARY_BOUNDS,
    SUMMARY_LABELS,
    ExplorerResult,
    ExplorerSession,
)

__all__ = ["CHART_POINTS", "Explorer", "explore", "show_figure"]

CHART_POINTS = 400
"""Points per chart line (min-max thinned, peaks kept), as in the dashboard."""

DRAW_LABEL = "Draw the real release (counts against your budget)"
DP_LABEL = "Draw the DP model (costs ε_model)"
_TILES = (("none (offline, no request)", "none"), ("OpenStreetMap (online)", "osm"))
_CELLS_M = (100.0, 200.0, 300.0, 500.0, 750.0, 1000.0, 2000.0, 5000.0)
_DP_EXTENTS_M = (2000.0, 5000.0, 10000.0, 20000.0)
_DP_CELLS_M = (500.0, 1000.0, 2000.0)
_WARN = "#D55E00"
_NUMERIC_OPTIONS = ("cell_m", "dp_extent_m", "dp_cell_m",
                    "preset_extent_m")  # (label, value) pairs


def _interval_options(current: float | str | None,
                      auto: float | None) -> list[tuple[str, float | str | None]]:
    """The release-interval choices, ``current`` among them (a value outside the presets is
    added in order), labelled as the app labels durations; "auto" says what it picks
    (``auto``: seconds, None = every fix)."""
    steps = sorted({*INTERVALS_S, *([float(current)] if isinstance(current, (int, float))
                                    else [])})
    picked = "every fix" if auto is None else plain_duration(auto)
    return [(f"auto: {picked} (≤ {MAX_TIMESTAMPS:,} timestamps)", "auto"), ("every fix", None),
            *((plain_duration(v), v) for v in steps)]


def _extent_label(metres: float) -> str:
    return f"places up to {metres / 1000:g} km apart"


def _options(values: tuple[float, ...], current: float, unit: str = " m") -> list:
    vals = sorted({*values, float(current)})
    return [(f"{v:,.0f}{unit}", v) for v in vals]


def show_figure(out: w.Output, fig: go.Figure) -> None:
    """Replace what ``out`` shows with ``fig`` (Plotly's mimetype bundle; no kernel display call,
    so it works from widget callbacks and outside a kernel alike)."""
    spec = json.loads(pio.to_json(fig, validate=False))
    spec.setdefault("config", {}).update(figures.PLOTLY_CONFIG)  # no button uploads the chart
    title = (fig.layout.title.text or "figure") if fig.layout.title else "figure"
    out.outputs = ({"output_type": "display_data", "metadata": {},
                    "data": {"application/vnd.plotly.v1+json": spec,
                             "text/plain": f"<Plotly figure: {title}>"}},)


class Explorer:
    """Map + controls + charts over an :class:`ExplorerSession` (see module docstring).

    Arguments are those of :class:`~lmdk_core.jupyter.session.ExplorerSession` (including
    ``total_budget`` and ``rng``, which seeds previews only), plus ``tiles`` ("none" by default:
    no outside request; "osm" or a ``{z}/{x}/{y}`` URL to opt in) and ``map_height`` (CSS
    height of the map).
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

        def row() -> w.Layout:
            # one Layout per widget: a shared one hid EVERY control when _sync_controls set
            # display="none" on the hidden model settings (issue 27: the "blank" controls)
            return w.Layout(width="420px")

        eps_min = min(0.01, s["epsilon"])
        eps_max = max(10.0, s["epsilon"])
        self.controls: dict[str, w.ValueWidget] = {
            "epsilon": w.FloatLogSlider(
                value=s["epsilon"], base=10, min=math.log10(eps_min), max=math.log10(eps_max),
                step=0.05, readout_format=".3g", continuous_update=False,
                description="ε of this release", style=style, layout=row()),
            "scheme": w.Dropdown(options=list(SCHEMES), value=s["scheme"],
                                 description="scheme", style=style, layout=row()),
            "radius_m": w.FloatLogSlider(
                value=s["radius_m"], base=10, min=math.log10(min(10.0, s["radius_m"])),
                max=math.log10(max(5000.0, s["radius_m"])), step=0.05, readout_format=".0f",
                continuous_update=False, description="radius r (m)", style=style,
                layout=row()),
            "interval_s": w.Dropdown(
                options=_interval_options(s["interval_s"], self.session.auto_interval_s),
                value=s["interval_s"],
                description="release interval", style=style, layout=row()),
            "loss_model": w.Dropdown(options=[(LOSS_LABELS[m], m) for m in LOSS_MODELS],
                                     value=s["loss_model"], description="correlation model",
                                     style=style, layout=row()),
            "strength": w.Dropdown(options=list(loss_models.STRENGTHS), value=s["strength"],
                                   description="preset strength", style=style, layout=row()),
            "preset_extent_m": w.Dropdown(
                options=[(_extent_label(v), v)
                         for v in sorted({*loss_models.PRESET_EXTENTS_M, s["preset_extent_m"]})],
                value=s["preset_extent_m"], description="preset covers", style=style,
                layout=row()),
            "cell_m": w.Dropdown(options=_options(_CELLS_M, s["cell_m"]), value=s["cell_m"],
                                 description="model grid cell", style=style, layout=row()),
            "epsilon_model": w.BoundedFloatText(
                value=s["epsilon_model"], min=0.001, max=1000.0, step=0.1,
                description="DP model ε_model", style=style, layout=row()),
            "dp_extent_m": w.Dropdown(options=_options(_DP_EXTENTS_M, s["dp_extent_m"]),
                                      value=s["dp_extent_m"], description="DP grid side",
                                      style=style, layout=row()),
            "dp_cell_m": w.Dropdown(options=_options(_DP_CELLS_M, s["dp_cell_m"]),
                                    value=s["dp_cell_m"], description="DP grid cell",
                                    style=style, layout=row()),
            "new_place_radius_m": w.FloatSlider(
                value=s["new_place_radius_m"], min=10, max=max(2000.0, s["new_place_radius_m"]),
                step=10, continuous_update=False, readout_format=".0f",
                description="new place radius (m)", style=style, layout=row()),
        }
        if self.session.users:
            self.controls["user"] = w.Dropdown(options=self.session.users, value=s["user"],
                                               description="person", style=style, layout=row())
        self.centre = {  # the DP grid's public centre (lat, lon)
            "lat": w.FloatText(value=s["dp_centre"][0], description="DP grid centre lat",
                               style=style, layout=row()),
            "lon": w.FloatText(value=s["dp_centre"][1], description="DP grid centre lon",
                               style=style, layout=row()),
        }
        self.tiles = w.Dropdown(options=_TILES, value=tiles if tiles in ("none", "osm") else None,
                                description="base map", style=style, layout=row())
        self.budget_input = w.BoundedFloatText(
            value=self.session.total_budget(), min=0.001, max=1e6, step=0.5,
            description="total budget", style=style, layout=w.Layout(width="260px"))
        self.scheme_info = w.HTML()
        self.banner = w.HTML()
        self.ledger = w.HTML()
        self.summary = w.HTML()
        self.lead = w.HTML(layout=w.Layout(width="100%"))  # the plain sentences (lead_html)
        self.places_table = w.HTML()
        self.status = w.HTML()
        self.draw_button = w.Button(
            description=DRAW_LABEL, icon="lock", button_style="warning",
            layout=w.Layout(width="420px"),
            tooltip="fresh OS randomness, once for this setting; counted in the ledger at once")
        self.preview_button = w.Button(description="New preview", icon="refresh",
                                       tooltip="another simulated draw of this setting (free)")
        self.remove_button = w.Button(description="Remove selected place", icon="trash")
        self.budget_button = w.Button(description="Set total budget",
                                      tooltip="the total loss this person accepts across every "
                                      "real draw of this session")
        self.dp_button = w.Button(description=DP_LABEL, icon="lock",
                                  layout=w.Layout(width="420px"),
                                  tooltip="transition counts of the true trajectory with fresh "
                                  "noise on the public grid; charged to the ledger at once")
        self.draw_button.on_click(lambda _b: self.draw())
        self.preview_button.on_click(lambda _b: self.new_preview())
        self.remove_button.on_click(lambda _b: self._remove_selected())
        self.budget_button.on_click(
            lambda _b: self.set_total_budget(float(self.budget_input.value)))
        self.dp_button.on_click(lambda _b: self.draw_dp_model())
        for key, control in self.controls.items():
            control.observe(lambda change, key=key: self._control_changed(key, change["new"]),
                            names="value")
        for control in self.centre.values():
            control.observe(lambda _change: self._centre_changed(), names="value")
        self.tiles.observe(lambda change: self._tiles_changed(change["new"]), names="value")

        r = self.session.result
        self.outputs = {name: w.Output(layout=w.Layout(width="100%"))
                        for name in ("allocation", "error", "loss")}
        self.charts: dict[str, go.Figure] = {}
        self._syncing = False
        self._refresh(r)

        order = ["user", "epsilon", "scheme", "radius_m", "interval_s", "loss_model", "strength",
                 "preset_extent_m", "cell_m", "epsilon_model", "dp_extent_m", "dp_cell_m"]
        panel = w.VBox([
            w.HTML("<b>Privacy settings</b>"),
            *[self.controls[k] for k in order if k in self.controls],
            self.centre["lat"], self.centre["lon"], self.dp_button,
            self.controls["new_place_radius_m"], self.scheme_info, self.tiles,
            w.HBox([self.preview_button, self.remove_button]),
            self.draw_button, self.ledger, w.HBox([self.budget_input, self.budget_button]),
            self.status, self.places_table,
        ], layout=w.Layout(width="440px", flex="0 0 440px"))
        self.widget = w.VBox([
            w.HTML("<b>Click the map to add a landmark place; click a place to select it, "
                   "click it again to remove it.</b>"),
            self.banner,
            w.HBox([w.VBox([self.map, self.lead, self.summary],  # wide: sentences, long labels
                           layout=w.Layout(flex="1 1 0%", min_width="360px")),
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
        """The release shown (read-only arrays): the real draw of the current setting, or its
        preview (``ex.result.kind`` says which)."""
        return self.session.result.release

    @property
    def result(self) -> ExplorerResult:
        """The release shown and everything derived from it."""
        return self.session.result

    @property
    def settings(self) -> dict[str, Any]:
        """The current settings (a copy)."""
        return dict(self.session.settings)

    @property
    def spent(self) -> float:
        """What the current person's real draws (and DP models) cost so far (ledger)."""
        return self.session.spent()

    @property
    def total_budget(self) -> float:
        """The total loss the current person accepts across this session's real draws."""
        return self.session.total_budget()

    def report(self) -> dict:
        """The privacy report of the real draw shown (PRIVATE: derived from the true data).
        Raises ParameterError for a preview."""
        return self.session.report()

    def public_release(self) -> pd.DataFrame:
        """The publishable columns (time, lat, lon) of the real draw shown. Raises
        ParameterError for a preview."""
        return self.session.public_release()

    def draw(self) -> None:
        """Draw the real release of the current setting (counts against the total budget; the
        same setting returns the same draw). A refusal is shown in the panel."""
        self._run(self.session.draw)

    def new_preview(self) -> None:
        """Another free simulated draw of the current setting (refused once it is drawn)."""
        self._run(self.session.new_preview)

    def draw_dp_model(self) -> None:
        """Draw (and pay for) the DP correlation model of the current setting."""
        self._run(self.session.draw_dp_model)

    def set_total_budget(self, total_budget: float) -> None:
        """Set the current person's total budget deliberately."""
        self._run(lambda: self.session.set_total_budget(total_budget))

    def set(self, **settings: Any) -> None:
        """Change several settings at once (validated; one preview); controls follow."""
        self._run(lambda: self.session.update(**settings))

    @renamed(radius_m="place_radius_m")
    def add_place(self, lat: float, lon: float, place_radius_m: float | None = None,
                  name: str | None = None) -> Place:
        """Add a landmark place from Python (as a map click does, with a radius ``place_radius_m``
        in metres and a name; ``radius_m=`` is a deprecated alias)."""
        out: list[Place] = []
        self._run(lambda: out.append(self.session.add_place(lat, lon, place_radius_m, name)))
        return out[0] if out else None  # type: ignore[return-value]

    def remove_place(self, name: str) -> None:
        self._run(lambda: self.session.remove_place(name))

    # ------------------------------------------------------------------ events

    def _run(self, action: Any) -> None:
        """Run a state change; refresh on success, show the reason on a library error."""
        try:
            action()
        except LmdkError as exc:
            self.status.value = f"<span style='color:{_WARN}'>{_escape(str(exc))}</span>"
            self._sync_controls()
            self._draw_ledger()
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
            self.status.value = f"<span style='color:{_WARN}'>{_escape(str(exc))}</span>"
            return
        if len(self.session.places) != before:
            self._refresh(self.session.result)
        else:  # selection only: the same release
            self._draw_map(self.session.result)
            self._draw_places()

    def _remove_selected(self) -> None:
        if self.session.selected is not None:
            self._run(lambda: self.session.remove_place(self.session.selected))

    def _control_changed(self, key: str, value: Any) -> None:
        if self._syncing or self.session.settings.get(key) == value:
            return
        self._run(lambda: self.session.update(**{key: value}))

    def _centre_changed(self) -> None:
        centre = (self.centre["lat"].value, self.centre["lon"].value)
        if self._syncing or self.session.settings["dp_centre"] == centre:
            return
        self._run(lambda: self.session.update(dp_centre=centre))

    def _tiles_changed(self, value: str | None) -> None:
        if value is not None:
            self.map.set_tiles(value)

    def _sync_controls(self) -> None:
        s = self.session.settings
        self._syncing = True
        try:
            interval = self.controls["interval_s"]  # "auto" names its pick for this person
            options = _interval_options(s["interval_s"], self.session.auto_interval_s)
            if list(interval.options) != options:
                interval.options = options
                interval.value = s["interval_s"]
            for key, control in self.controls.items():
                if control.value != s[key]:
                    if key in _NUMERIC_OPTIONS and s[key] not in [
                            v for _label, v in control.options]:
                        label = (_extent_label(s[key]) if key == "preset_extent_m" else
                                 f"{s[key]:,.0f} m")
                        control.options = [*control.options, (label, s[key])]
                    control.value = s[key]
            for i, part in enumerate(("lat", "lon")):
                if self.centre[part].value != s["dp_centre"][i]:
                    self.centre[part].value = s["dp_centre"][i]
        finally:
            self._syncing = False
        source = s["loss_model"]
        show = {"strength": source == "preset", "preset_extent_m": source == "preset",
                "cell_m": source == "released"}
        for key in ("epsilon_model", "dp_extent_m", "dp_cell_m"):
            show[key] = source == "dp"
        for key, on in show.items():
            self.controls[key].layout.display = None if on else "none"
        for widget in (*self.centre.values(), self.dp_button):
            widget.layout.display = None if source == "dp" else "none"

    # ------------------------------------------------------------------ drawing

    def _time(self, r: ExplorerResult) -> Any:
        return r.traj["time"] if "time" in r.traj.columns else None

    def _allocation_figure(self, r: ExplorerResult) -> go.Figure:
        return figures.allocation_figure(r.release.budget, r.landmarks, epsilon=r.release.epsilon,
                                         time=self._time(r), guarantee=r.guarantee,
                                         max_points=CHART_POINTS, height=480)

    def _error_figure(self, r: ExplorerResult) -> go.Figure:
        title = None
        if not r.is_real:
            mae = r.mae_m
            title = ("Preview (simulation, not a release): error per timestamp"
                     + (f" (mean error {mae:,.0f} m)" if math.isfinite(mae) else ""))
        return figures.error_figure(r.errors_m, r.release.published, time=self._time(r),
                                    landmarks=r.landmarks, max_points=CHART_POINTS, height=400,
                                    title=title)

    def _loss_figure(self, r: ExplorerResult) -> go.Figure:
        what = "" if r.is_real else " — preview (simulation)"
        if r.loss is None:
            return figures.loss_figure(r.release.budget, r.guarantee, epsilon=r.release.epsilon,
                                       time=self._time(r),
                                       title=f"Privacy loss over time (no correlation){what}",
                                       max_points=CHART_POINTS, height=460)
        radius = self.session.settings["radius_m"]
        if r.beyond and r.covered_m is not None:  # the trace spans more than the preset covers
            what += f" — NOT a bound for places further apart than {r.covered_m / 1000:g} km"
        return figures.loss_figure(
            r.release.budget, r.guarantee, epsilon=r.release.epsilon, temporal=r.loss.loss,
            landmark_loss=r.loss if r.landmarks.any() else None, time=self._time(r),
            title=f"Privacy loss over time: upper bounds under {r.model.description}{what}",
            pair_label=f"places {radius:,.0f} m apart", max_points=CHART_POINTS, height=460)

    def _draw_map(self, r: ExplorerResult) -> None:
        self.map.show(r.traj, landmarks=r.landmarks, release=r.release,
                      places=self.session.places, selected=self.session.selected)

    def _draw_places(self) -> None:
        selected = " style='background:#E69F0033'"
        rows = "".join(
            f"<tr{selected if p.name == self.session.selected else ''}>"
            f"<td>{_escape(p.name)}</td><td>{p.lat:.5f}</td><td>{p.lon:.5f}</td>"
            f"<td>{p.place_radius_m:g}</td></tr>"
            for p in self.session.places)
        self.places_table.value = (
            "<b>Landmark places</b>" + (
                "<table><tr><th>name</th><th>lat</th><th>lon</th><th>radius (m)</th></tr>"
                f"{rows}</table>" if rows else "<br><i>none yet: click the map</i>"))

    def _draw_ledger(self) -> None:
        s = self.session
        spent, total = s.spent(), s.total_budget()
        line = (f"<b>Ledger ({_escape(str(s.person))})</b>: spent {spent:.4g} of a total "
                f"budget of {total:.4g}")
        if s.result.is_real:
            nxt = "This setting is drawn: showing its real release (never redrawn)."
        else:
            try:
                plan = s.plan()
                nxt = (f"Drawing this setting would cost {plan.cost:.4g} (total "
                       f"{plan.after:.4g})" + ("." if plan.fits else
                                               f" — <span style='color:{_WARN}'>above the "
                                               "total budget: refused</span>."))
            except LmdkError as exc:
                nxt = _escape(str(exc))
        self.ledger.value = f"{line}.<br><small>{nxt}</small>"
        self.draw_button.disabled = s.result.is_real
        self.draw_button.description = ("Real release drawn (counted)" if s.result.is_real
                                        else DRAW_LABEL)
        self.preview_button.disabled = s.result.is_real
        self.budget_input.value = total

    def _draw_banner(self, r: ExplorerResult) -> None:
        if r.is_real:
            self.banner.value = (
                "<div style='padding:4px 8px;border-left:6px solid #0072B2'><b>Real release</b> "
                "(fresh OS randomness, counted in the ledger when drawn): report() and "
                "public_release() export it.</div>")
        else:
            self.banner.value = (
                f"<div style='padding:4px 8px;border-left:6px solid {_WARN}'><b>PREVIEW</b> — "
                f"{_escape(r.label)}. Free to explore; nothing here can be exported. "
                f"“{_escape(DRAW_LABEL)}” makes the real one.</div>")

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
        rows = "".join(f"<tr><td>{_escape(SUMMARY_LABELS.get(k, k))}</td><td>{_fmt(v, k)}</td>"
                       "</tr>" for k, v in r.summary().items())
        self.lead.value = lead_html(r.sentences())
        notes = "".join(f"<br><small>{_escape(m)}</small>" for m in r.warnings)
        model = ("" if r.model is None else
                 f"<br><small>Model: {_escape(r.model.description)}. Source: "
                 f"{_escape(r.model.source_text)}. Neighbour relation: "
                 f"{_escape(r.model.steps.relation)}. Losses are upper bounds under this "
                 "model (nats); only G_t is compared with ε.</small>")
        title = "This release" if r.is_real else "This preview (simulation)"
        self.summary.value = f"<b>{title}</b><table>{rows}</table>{model}{notes}"
        self._draw_banner(r)
        self._draw_ledger()
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


_EMPHASIS = re.compile(r"[*]([^*]+)[*]")


def lead_html(sentences: loss_text.LossSentences) -> str:
    """The app's loss-section lead (:func:`lmdk_core.loss_text.release_sentences`) as HTML: one
    list item per sentence, in the app's order, ``*word*`` in italics as the app's Markdown."""
    items = "".join("<li style='margin-bottom:4px'>" + _EMPHASIS.sub(r"<i>\1</i>", _escape(line))
                    + "</li>" for line in sentences.lines())
    return ("<div style='line-height:1.4'><b>What this release protects, in plain words</b>"
            f"<ul style='margin-top:4px;padding-left:20px'>{items}</ul></div>")


_SHARES = frozenset({"fresh releases"})
"""Summary rows that are shares of the timestamps (shown as percentages, as the app does)."""


def _fmt(v: Any, key: str = "") -> str:
    """A summary value as the dashboard shows it (lmdk_core.formatting): shares as whole
    percentages, other numbers with 3 significant digits and thousands separators."""
    if isinstance(v, bool):
        return "yes" if v else f"<span style='color:{_WARN}'>no</span>"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if key in SUMMARY_BOUNDS:
            return _escape(loss_text.bound_text(v))
        return plain_percent(v) if key in _SHARES else plain_number(v)
    return _escape(str(v))


def explore(trajectory: pd.DataFrame, **settings: Any) -> Explorer:
    """An :class:`Explorer` on ``trajectory`` (see :class:`ExplorerSession` for the settings).

    Previews (free simulations) while you explore; a real release only when you draw it (fresh
    OS randomness, counted in the ledger). No tile or CDN request unless ``tiles="osm"`` (or a
    tile URL) is passed or chosen in the base-map control.
    """
    return Explorer(trajectory, **settings)
