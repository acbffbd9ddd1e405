"""Plotly figures of budgets, guarantees, errors, privacy loss, scheme comparisons and trajectories.

Every function returns a :class:`plotly.graph_objects.Figure` with a title, axis titles with
units, a legend, hover text, the plotly_white look (:data:`TEMPLATE`), a fixed height and a constant
``uirevision`` (zoom and legend toggles persist across Streamlit reruns). The palette is
Okabe–Ito (distinguishable with the common colour-vision deficiencies); lines also differ by dash.

Time axes: pass ``time`` (a pandas DatetimeIndex/Series or array of datetimes; shown in UTC,
axis "time (UTC)") or None (axis "timestamp index", 0-based). Budgets ε_t, guarantees G_t and
losses are dimensionless privacy-loss values on the same scale as the user's ε.

Speed: figures hold a few traces of numpy arrays, no per-point Python and no per-point shapes.
Series longer than ``max_points`` (default :data:`MAX_POINTS`) are thinned for display only by
min–max decimation: each of ``max_points/2`` consecutive buckets keeps its smallest and largest
value, so peaks (e.g. G_t > ε) stay visible. Marker traces (landmarks, exceedances) are thinned by
stride when they exceed ``max_points``. Pass ``max_points=None`` to draw every point.
"""

from __future__ import annotations

import copy
import importlib.abc
import importlib.util
import math
import sys
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ._deprecation import renamed
from ._optional import missing_extra
from .accounting import as_landmark_mask, landmark_guarantee
from .errors import FigureExportError, ParameterError
from .formatting import plain_number
from .metrics import finite_mean
from .palette import (
    COLOUR_NAMES,
    LANDMARK_COLOUR,
    OKABE_ITO,
    PLACE_COLOUR,
    RELEASE_COLOUR,
    TRUE_COLOUR,
)
from .times import utc_times
from .trajectory import even_positions, lat_lon

try:
    import plotly.graph_objects as go
    import plotly.io as pio
except ImportError as exc:  # the core does not depend on plotly
    raise missing_extra("plotly", "plot", __name__) from exc
from .validation import as_numeric_array, check_epsilon, check_same_length

__all__ = [
    "CLOUD_BUTTONS",
    "COLOUR_NAMES",
    "FIGURE_FORMATS",
    "LOG_AXIS_RATIO",
    "LOSS_CURVES",
    "MAX_POINTS",
    "OKABE_ITO",
    "PALETTE",
    "PLOTLY_CONFIG",
    "RELEASE_COLOUR",
    "TEMPLATE",
    "TRUE_COLOUR",
    "allocation_figure",
    "comparison_figure",
    "curve_style",
    "display_index",
    "error_figure",
    "keep_charts_offline",
    "landmark_loss_array",
    "loss_figure",
    "plain_number",
    "save_figure",
    "thinning_note",
    "trajectory_figure",
]


CLOUD_BUTTONS = ("sendChartToCloud", "sendDataToCloud", "editInChartStudio")
"""Plotly modebar buttons that send a chart's data to a server (Plotly's "Share chart…" posts it
to cloud.plotly.com/newchart, and this plotly.js shows it by default)."""
PLOTLY_CONFIG: dict[str, Any] = {
    "displaylogo": False,  # no link to plotly.com
    "showSendToCloud": False,
    "plotlyServerURL": "",
    "modeBarButtonsToRemove": list(CLOUD_BUTTONS),
    "responsive": True,
}
"""The Plotly config of every lmdk chart — dashboard, Jupyter explorer, notebooks, story: no
button sends data off the machine (tests/test_charts_browser.py clicks every one that is left)."""


def keep_charts_offline() -> None:
    """Make :data:`PLOTLY_CONFIG` the default config of Plotly's renderers, so ``fig.show()`` in
    Jupyter (or a browser) offers no upload button either.

    Importing this module arranges it (:func:`_offline_when_loaded`) without loading Plotly's
    renderers: they import nbformat and jsonschema, 1.3 CPU-s in every process (the dashboard
    server and the CLI never use them). The config is applied the moment anything first loads
    them — ``pio.renderers``, ``fig.show()`` — or now if they are loaded already."""
    _configure(pio.renderers[name] for name in pio.renderers)


def _configure(renderers: Any) -> None:
    """Put :data:`PLOTLY_CONFIG` into the config of each renderer that has one."""
    for renderer in renderers:
        config = getattr(renderer, "config", None)
        if isinstance(config, dict):
            config.update(PLOTLY_CONFIG)


_RENDERERS = "plotly.io._renderers"


class _OfflineRenderers(importlib.abc.MetaPathFinder):
    """Runs :func:`keep_charts_offline` right after :data:`_RENDERERS` is first imported."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != _RENDERERS:
            return None
        sys.meta_path.remove(self)  # once; and the lookup below does not come back here
        spec = importlib.util.find_spec(name)
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module: Any) -> None:
            run(module)
            _configure(module.renderers._renderers.values())

        loader.exec_module = exec_module
        return spec


def _offline_when_loaded() -> None:
    if _RENDERERS in sys.modules:
        keep_charts_offline()
    elif not any(isinstance(f, _OfflineRenderers) for f in sys.meta_path):
        sys.meta_path.insert(0, _OfflineRenderers())


_offline_when_loaded()

PALETTE: tuple[str, ...] = tuple(OKABE_ITO.values())
"""Okabe–Ito colours in their customary order (usable as a Plotly ``colorway``)."""

LOG_AXIS_RATIO = 20.0
"""loss_figure switches to a log axis when a plotted loss exceeds this multiple of ε."""

CAP_LINE_RATIO = 10.0
"""loss_figure draws the composition bound only when it is within this factor of the plotted
curves (far above, it would flatten them; the page states it as a number)."""

MAX_POINTS = 4000
"""Default display limit of points per line trace (see module docstring)."""


DASH_NAMES: dict[str | None, str] = {None: "solid", "solid": "solid", "dash": "dashed",
                                     "dot": "dotted", "dashdot": "dash-dotted"}

LOSS_CURVES: tuple[tuple[str, str, str | None], ...] = (
    ("budget ε_t", "#999999", None),
    ("landmark guarantee G_t", OKABE_ITO["bluish_green"], None),
    ("BPL", OKABE_ITO["sky_blue"], "dashdot"),
    ("FPL", OKABE_ITO["orange"], "dot"),
    ("TPL: one event, worst pair", OKABE_ITO["blue"], None),
    ("one event,", OKABE_ITO["blue"], "dash"),
    ("landmark loss: landmarks + t, worst pair", OKABE_ITO["reddish_purple"], None),
    ("landmark loss: landmarks + t,", OKABE_ITO["reddish_purple"], "dash"),
    ("composition bound", "#999999", "dot"),
    ("target ε", OKABE_ITO["black"], "dash"),
)
"""(legend-name prefix, colour, dash) of every line :func:`loss_figure` can draw, in order; the
page's explanation of the curves is written from this table (:func:`curve_style`)."""



def curve_style(prefix: str) -> str:
    """'green, solid' — how the loss curve whose legend name starts with ``prefix`` is drawn."""
    for name, colour, dash in LOSS_CURVES:
        if name == prefix:
            return f"{COLOUR_NAMES[colour]}, {DASH_NAMES[dash]}"
    raise ParameterError(f"no loss curve named {prefix!r}")


_LOG_TICKS = {"dtick": 1, "tickformat": ",~r", "exponentformat": "none",
              "minor": {"showgrid": False, "ticks": ""}}
"""Log axes: one label per decade (1, 10, 100 …; 0.01 …), plain digits, no minor labels."""

def _template() -> dict:
    """Plotly's "plotly_white" restricted to what 2-D scatter and bar figures use.

    Dropping the 3-D/polar/geo/ternary axes and the heatmap colour scales leaves the look of these
    figures unchanged and makes each figure ~3x cheaper to build (plotly validates and deep-copies
    the whole template per figure).
    """
    full = pio.templates["plotly_white"].to_plotly_json()
    unused = {"polar", "ternary", "scene", "geo", "colorscale", "coloraxis"}
    return {
        "layout": {k: v for k, v in full["layout"].items() if k not in unused},
        "data": {k: v for k, v in full["data"].items() if k in ("scatter", "bar")},
    }


TEMPLATE: dict = _template()
"""The figures' template: plotly_white's 2-D subset (see :func:`_template`)."""
_TEMPLATE_PROPS: dict = go.layout.Template(TEMPLATE).to_plotly_json()
""":data:`TEMPLATE` as plotly's validation leaves it, validated once (see :func:`_figure`)."""

_GREY = "#999999"
_VIOLATION_FILL = "rgba(213, 94, 0, 0.30)"  # vermillion, translucent
_EPS_LABEL = "privacy budget ε"
_T_INDEX = "timestamp index"
_T_TIME = "time (UTC)"


# ---------------------------------------------------------------- helpers


def display_index(y: Any, max_points: int | None = MAX_POINTS) -> np.ndarray:
    """Indices of ``y`` to draw: all if ``len(y) <= max_points``, else min–max decimation.

    Buckets of consecutive points each keep the index of their minimum and maximum (NaN
    ignored), plus the first and last index; the result is sorted and unique, of length
    ``<= max_points + 2``.
    """
    y = np.asarray(y, dtype=np.float64)
    n = y.size
    if max_points is None or n <= max_points:
        return np.arange(n)
    if max_points < 2:
        raise ParameterError(f"max_points must be >= 2 or None, got {max_points}")
    buckets = max_points // 2
    k = math.ceil(n / buckets)
    pad = buckets * k - n
    nan = np.isnan(y)
    hi = np.pad(np.where(nan, -np.inf, y), (0, pad), constant_values=-np.inf).reshape(buckets, k)
    lo = np.pad(np.where(nan, np.inf, y), (0, pad), constant_values=np.inf).reshape(buckets, k)
    base = np.arange(buckets) * k
    idx = np.concatenate(([0, n - 1], base + hi.argmax(axis=1), base + lo.argmin(axis=1)))
    return np.unique(idx[idx < n])


def _thin(idx: np.ndarray, max_points: int | None) -> np.ndarray:
    """Stride-thin an index array of markers to at most ``max_points`` entries."""
    if max_points is None or idx.size <= max_points:
        return idx
    return idx[even_positions(idx.size, max(max_points, 2))]


def _time_axis(time: Any, n: int) -> tuple[np.ndarray, str, str]:
    """(x values, axis title, hover format of x) for ``n`` timestamps."""
    if time is None:
        return np.arange(n), _T_INDEX, "t = %{x}"
    t = utc_times(time, "time")  # the package's one time rule (naive = UTC, numbers refused)
    check_same_length(n, len(t), "time")
    return t, _T_TIME, "%{x|%Y-%m-%d %H:%M:%S} UTC"


def _series(values: Any, name: str, n: int | None = None) -> np.ndarray:
    """1-D float array (NaN allowed for gaps); length checked against ``n``."""
    arr = as_numeric_array(values, name)
    if n is not None:
        check_same_length(n, arr.size, name)
    return arr


def _line(x, y, idx, name, color, *, hover, dash=None, width=2.0, shape="linear", **kw) -> dict:
    return dict(
        type="scatter",
        x=x[idx],
        y=y[idx],
        name=name,
        mode="lines",
        line={"color": color, "width": width, "dash": dash, "shape": shape},
        hovertemplate=hover,
        **kw,
    )


def _markers(x, y, idx, name, color, *, symbol, hover, size=9, **kw) -> dict:
    return dict(
        type="scatter",
        x=x[idx],
        y=y[idx],
        name=name,
        mode="markers",
        marker={"color": color, "symbol": symbol, "size": size,
                "line": {"width": 1, "color": color}},
        hovertemplate=hover,
        **kw,
    )


def _epsilon_line(x, epsilon: float, *, xaxis: str = "x", yaxis: str = "y") -> dict:
    """The target ε as a dashed horizontal line spanning the data (one 2-point trace)."""
    # the ends as an array, not scalars: plotly 5.18 writes numpy datetime64 scalars as integer
    # nanoseconds, which a date axis reads as milliseconds (the line landed in the far future)
    ends = np.asarray(x)[[0, -1]] if len(x) else np.array([0, 1])
    return dict(
        type="scatter",
        x=ends,
        y=[epsilon, epsilon],
        name=f"target ε = {epsilon:g}",
        mode="lines",
        line={"color": OKABE_ITO["black"], "width": 1.5, "dash": "dash"},
        hovertemplate=f"target ε = {epsilon:g}<extra></extra>",
        xaxis=xaxis,
        yaxis=yaxis,
    )


def thinning_note(n: int, max_points: int | None) -> str | None:
    """What min–max thinning did to a series of ``n`` points, in words (None if not thinned)."""
    if max_points is None or n <= max_points:
        return None
    k = math.ceil(n / (max_points // 2))
    return (f"Thinned for display: each stretch of {k:,} points shows its min and max "
            f"({n:,} points in all)")


def _figure(traces: list, layout: dict, *, title: str, height: int, uirevision: str,
            note: str | None = None) -> go.Figure:
    """Build the figure in one validation pass (layout dict + common style; ~3x faster than
    constructing and then updating). ``note``: a line under the title (e.g. thinning)."""
    if note:
        layout["annotations"] = [*layout.get("annotations", ()), {
            "text": note, "xref": "paper", "yref": "paper", "x": 1.0, "y": 1.0,
            "xanchor": "right", "yanchor": "bottom", "showarrow": False,
            "font": {"size": 11, "color": "#555555"}}]
    layout.update(
        # Title on its own line below Plotly's modebar (which sits in the top-right corner).
        title={"text": title, "x": 0.0, "xanchor": "left", "yref": "container", "y": 1.0,
               "yanchor": "top", "pad": {"t": 30}},
        template="none",  # TEMPLATE's place: it is put in below
        height=height,
        margin={"l": 70, "r": 20, "t": 75, "b": 65 + 20 * math.ceil(len(traces) / 2)},
        # Legend under the plot, anchored to the figure bottom: never collides with the title or
        # the axis title, and wraps into rows at laptop width.
        legend={"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0.0,
                "x": 0.0, "xanchor": "left", "traceorder": "normal"},
        uirevision=uirevision,
        colorway=list(PALETTE),
        hoverlabel={"namelength": -1},
    )
    # The template is validated once (_TEMPLATE_PROPS), not per figure, where it was half of a
    # figure's construction: the figure is built with the registered empty template "none" in
    # its place, then given a copy of the validated one as plotly gives every figure its default
    # template (BaseFigure._initialize_layout_template). Same figure, key order included.
    fig = go.Figure(data=traces, layout=layout)
    lay = fig.layout
    lay._validate = False
    try:
        lay.template = copy.deepcopy(_TEMPLATE_PROPS)
    finally:
        lay._validate = True
    return fig


# ---------------------------------------------------------------- figures


@renamed(eps="budget", positional=("epsilon",))
def allocation_figure(
    budget: Any,
    landmarks: Any,
    *,
    epsilon: float,
    time: Any = None,
    guarantee: Any = None,
    dummies: Any = None,
    title: str = "Budget allocation ε_t and landmark guarantee G_t",
    tol: float = 1e-9,
    max_points: int | None = MAX_POINTS,
    height: int = 620,
) -> go.Figure:
    """Two stacked panels sharing the time axis.

    Top: the budget ε_t spent at each timestamp (a step line) with landmark timestamps marked;
    ``dummies`` (bool mask or indices of dummy landmarks, see :mod:`lmdk_core.dummies`) are
    marked apart as ``"dummy landmark (N, private view)"`` — a view for the data owner only.
    Bottom: the landmark guarantee G_t = Σ_{i∈L∪{t}} ε_i (computed if ``guarantee`` is None),
    the target ε as a dashed line, and — only where G_t > ε + ``tol`` — the excess shaded
    (trace name ``"G_t > ε (violation)"``).
    """
    e = _series(budget, "budget")
    n = e.size
    epsilon = check_epsilon(epsilon)
    mask = as_landmark_mask(landmarks, n)
    g = landmark_guarantee(e, mask) if guarantee is None else _series(guarantee, "guarantee", n)
    x, xtitle, xhover = _time_axis(time, n)
    lm = _thin(np.flatnonzero(mask), max_points)

    ie, ig = display_index(e, max_points), display_index(g, max_points)
    dummy_markers = []
    if dummies is not None:
        dm = as_landmark_mask(dummies, n) & ~mask
        dummy_markers.append(_markers(
            x, e, _thin(np.flatnonzero(dm), max_points),
            f"dummy landmark ({int(dm.sum())}, private view)", OKABE_ITO["reddish_purple"],
            symbol="x", hover=f"dummy landmark<br>{xhover}<br>ε_t = %{{y:.4g}}<extra></extra>"))
    traces = [
        _line(x, e, ie, "budget ε_t", OKABE_ITO["blue"], shape="hv",
              hover=f"{xhover}<br>ε_t = %{{y:.4g}}<extra></extra>"),
        _markers(x, e, lm, f"landmark ({int(mask.sum())})", OKABE_ITO["vermillion"],
                 symbol="diamond",
                 hover=f"landmark<br>{xhover}<br>ε_t = %{{y:.4g}}<extra></extra>"),
        *dummy_markers,
        _line(x, g, ig, "guarantee G_t", OKABE_ITO["bluish_green"], shape="hv",
              hover=f"{xhover}<br>G_t = %{{y:.4g}}<extra></extra>", xaxis="x2", yaxis="y2"),
        _epsilon_line(x, epsilon, xaxis="x2", yaxis="y2"),
    ]
    if np.any(g > epsilon + tol):
        # Filled between the ε line (previous trace) and max(G_t, ε): non-zero iff G_t > ε.
        above = np.maximum(g, epsilon)
        traces.append(
            _line(x, above, ig, "G_t > ε (violation)", OKABE_ITO["vermillion"], shape="hv",
                  width=0.5,
                  hover=f"{xhover}<br>G_t = %{{y:.4g}} > ε<extra></extra>", fill="tonexty",
                  fillcolor=_VIOLATION_FILL, xaxis="x2", yaxis="y2")
        )
    layout = dict(
        xaxis={"domain": [0, 1], "anchor": "y", "showticklabels": False, "matches": "x2"},
        yaxis={"domain": [0.56, 1.0], "title": {"text": "budget ε_t (units of ε)"},
               "rangemode": "tozero"},
        xaxis2={"domain": [0, 1], "anchor": "y2", "title": {"text": xtitle}},
        yaxis2={"domain": [0.0, 0.46], "title": {"text": "guarantee G_t (units of ε)"},
                "rangemode": "tozero"},
        hovermode="x",
    )
    return _figure(traces, layout, title=title, height=height, uirevision="lmdk-allocation",
                   note=thinning_note(n, max_points))


def error_figure(
    errors_m: Any,
    published: Any,
    *,
    time: Any = None,
    landmarks: Any = None,
    unit: str = "m",
    title: str | None = None,
    max_points: int | None = MAX_POINTS,
    height: int = 460,
) -> go.Figure:
    """Per-timestamp error of the released output, fresh releases vs. approximations marked.

    ``errors_m``: error per timestamp (metres for locations; pass ``unit`` for values), NaN where
    nothing was released yet (drawn as a gap). ``published``: True where a fresh noisy release was
    made, False where the scheme republished/approximated. Landmark timestamps are marked when
    given. The title states the mean absolute error over the finite errors.
    """
    err = _series(errors_m, "errors_m")
    n = err.size
    pub = np.asarray(published, dtype=bool)
    check_same_length(n, pub.size, "published")
    x, xtitle, xhover = _time_axis(time, n)
    idx = display_index(err, max_points)
    finite = np.isfinite(err)
    mae = finite_mean(err)
    if title is None:
        summary = (f"mean error {plain_number(mae)} {unit}" if finite.any()
                   else "nothing released yet")
        title = f"Error of the released output per timestamp ({summary})"
    hov = f"{xhover}<br>error = %{{y:,.4~r}} {unit}"
    traces = [
        _line(x, err, idx, "error", _GREY, width=1.0, hover=hov + "<extra></extra>"),
        _markers(x, err, idx[pub[idx]], f"fresh release ({int(pub.sum())})", OKABE_ITO["blue"],
                 symbol="circle", size=5, hover=hov + "<br>fresh release<extra></extra>"),
        _markers(x, err, idx[~pub[idx] & finite[idx]],
                 f"approximated ({int((~pub & finite).sum())})",
                 OKABE_ITO["orange"], symbol="square", size=5,
                 hover=hov + "<br>approximated (republished)<extra></extra>"),
    ]
    if landmarks is not None:
        # A rug of ticks along the time axis: shows where landmarks are without hiding errors.
        mask = as_landmark_mask(landmarks, n)
        lm = _thin(np.flatnonzero(mask), max_points)
        traces.append(
            _markers(x, np.zeros(n), lm, f"landmark timestamp ({int(mask.sum())})",
                     OKABE_ITO["vermillion"], symbol="line-ns-open", size=10,
                     hover=f"landmark<br>{xhover}<extra></extra>")
        )
    layout = dict(
        xaxis={"title": {"text": xtitle}},
        yaxis={"title": {"text": f"error ({unit})"}, "rangemode": "tozero"},
        hovermode="closest",
    )
    return _figure(traces, layout, title=title, height=height, uirevision="lmdk-error",
                   note=thinning_note(n, max_points))


def landmark_loss_array(landmark_loss: Any) -> Any:
    """The per-timestamp landmark loss: ``.composed`` of a LandmarkTemporalLoss, else the input."""
    return getattr(landmark_loss, "composed", landmark_loss)


def _temporal_field(temporal: Any, name: str) -> Any:
    if isinstance(temporal, (Mapping, pd.DataFrame)):
        return temporal[name]
    return getattr(temporal, name)


@renamed(eps="budget", positional=("epsilon",))
def loss_figure(
    budget: Any,
    guarantee: Any,
    *,
    epsilon: float,
    temporal: Any = None,
    landmark_loss: Any = None,
    time: Any = None,
    title: str = "Privacy loss over time",
    log_y: bool | None = None,
    tol: float = 1e-9,
    max_points: int | None = MAX_POINTS,
    height: int = 540,
    pair_label: str = "the chosen pair",
) -> go.Figure:
    """Privacy loss per timestamp: ε_t and the landmark guarantee G_t (the user's promise,
    without correlation) against the target ε (dashed), and, when given, the upper bounds on
    the loss under temporal correlation.

    ``temporal``: a TemporalLoss (or mapping/DataFrame) with ``bpl``, ``fpl``, ``tpl`` arrays;
    optional ``pair`` (bound for two hypotheses described by ``pair_label``) and ``cap`` (the
    composition bound, drawn as a line; every correlated curve is capped by it).
    ``landmark_loss``: the joint bound for L ∪ {t} (an array, or a LandmarkTemporalLoss whose
    ``.composed`` and ``.composed_pair`` are used). Only G_t, the user's guarantee, is marked
    where it exceeds ε + ``tol`` (trace name starts with ``"exceeds ε: G_t"``); the correlated
    curves are bounds under a model, not the guarantee, and are never marked as exceedances.
    BPL/FPL start hidden (click the legend to show them).

    ``log_y``: logarithmic loss axis; None (default) chooses it when some plotted loss exceeds
    :data:`LOG_AXIS_RATIO` × ε. Zero budgets do not appear on a log axis.
    """
    e = _series(budget, "budget")
    n = e.size
    g = _series(guarantee, "guarantee", n)
    epsilon = check_epsilon(epsilon)
    x, xtitle, xhover = _time_axis(time, n)
    cap = np.inf
    if temporal is not None:
        cap = float(getattr(temporal, "cap", np.inf) if not isinstance(temporal, Mapping)
                    else temporal.get("cap", np.inf))

    def hov(label: str) -> str:
        return f"{xhover}<br>{label} = %{{y:.4g}}<extra></extra>"

    def capped(arr: Any, name: str) -> np.ndarray:
        return np.minimum(_series(arr, name, n), cap)

    traces = [
        _line(x, e, display_index(e, max_points), "budget ε_t", _GREY, width=1.0, shape="hv",
              hover=hov("ε_t")),
        _line(x, g, display_index(g, max_points), "landmark guarantee G_t (no correlation)",
              OKABE_ITO["bluish_green"], shape="hv", hover=hov("G_t")),
    ]
    if temporal is not None:
        for field, label, color, dash, shown in (
            ("bpl", "BPL: from past releases (upper bound)", OKABE_ITO["sky_blue"], "dashdot",
             "legendonly"),
            ("fpl", "FPL: from future releases (upper bound)", OKABE_ITO["orange"], "dot",
             "legendonly"),
            ("tpl", "TPL: one event, worst pair (upper bound)", OKABE_ITO["blue"], None, True),
        ):
            s = capped(_temporal_field(temporal, field), field)
            traces.append(_line(x, s, display_index(s, max_points), label, color, dash=dash,
                                hover=hov(field.upper()), visible=shown))
        pair = (temporal.get("pair") if isinstance(temporal, Mapping)
                else getattr(temporal, "pair", None))
        if pair is not None:
            s = capped(pair, "pair")
            traces.append(_line(x, s, display_index(s, max_points),
                                f"one event, {pair_label} (upper bound)", OKABE_ITO["blue"],
                                dash="dash", hover=hov("bound")))
    if landmark_loss is not None:
        composed = capped(landmark_loss_array(landmark_loss), "landmark_loss")
        traces.append(_line(x, composed, display_index(composed, max_points),
                            "landmark loss: landmarks + t, worst pair (upper bound)",
                            OKABE_ITO["reddish_purple"], width=2.5,
                            hover=hov("landmark bound")))
        cp = getattr(landmark_loss, "composed_pair", None)
        if cp is not None:
            cps = capped(cp, "composed_pair")
            traces.append(_line(x, cps, display_index(cps, max_points),
                                f"landmark loss: landmarks + t, {pair_label} (upper bound)",
                                OKABE_ITO["reddish_purple"], dash="dash",
                                hover=hov("landmark bound")))
    peak = max((np.nanmax(np.asarray(tr["y"], dtype=float), initial=0.0) for tr in traces
                if tr.get("visible", True) is True), default=0.0)
    if np.isfinite(cap) and cap <= CAP_LINE_RATIO * max(peak, epsilon):
        line = _epsilon_line(x, cap)
        line.update(name="composition bound (any correlation)",
                    line={"color": _GREY, "dash": "dot", "width": 1.5},
                    hovertemplate="composition bound = %{y:.4g}<extra></extra>")
        traces.append(line)
    traces.append(_epsilon_line(x, epsilon))
    over = np.flatnonzero(g > epsilon + tol)
    if over.size:  # only the user's guarantee is compared with ε
        traces.append(
            _markers(x, g, _thin(over, max_points), f"exceeds ε: G_t ({over.size})",
                     OKABE_ITO["vermillion"], symbol="x-thin", size=6,
                     hover=f"{xhover}<br>G_t = %{{y:.4g}} > ε<extra></extra>")
        )
    peak = max(peak, *(np.nanmax(np.asarray(tr["y"], dtype=float), initial=0.0)
                       for tr in traces[-2:] if tr.get("visible", True) is True))
    if log_y is None:
        log_y = bool(peak > LOG_AXIS_RATIO * epsilon)
    ytitle = "privacy loss (units of ε" + (", log scale)" if log_y else ")")
    # on a log axis, losses far below ε (a decaying bound at a republished moment) would
    # stretch the axis over hundreds of decades: show from ε/1000 up
    lo, hi = epsilon * 1e-3, max(peak, epsilon) * 2.0
    layout = dict(
        xaxis={"title": {"text": xtitle}},
        yaxis={"title": {"text": ytitle}, "type": "log", **_LOG_TICKS,
               "range": [float(np.log10(lo)), float(np.log10(hi))]} if log_y else
              {"title": {"text": ytitle}, "rangemode": "tozero"},
        hovermode="x",
    )
    return _figure(traces, layout, title=title, height=height, uirevision="lmdk-loss",
                   note=thinning_note(n, max_points))


def comparison_figure(
    table: pd.DataFrame,
    *,
    title: str = "Mean location error by scheme (same data and seeds)",
    log_y: bool = True,
    height: int = 420,
) -> go.Figure:
    """Bars of mean MAE (metres) per scheme with ±1 std error bars over runs, coloured by whether
    the scheme is landmark-private (G_t ≤ ε everywhere). ``table``: :func:`compare_schemes` output.

    ``log_y`` (default) uses a log axis: user-level errors are often orders of magnitude larger.
    """
    need = {"scheme", "mae_m_mean", "mae_m_std", "landmark_private"}
    missing = need - set(table.columns)
    if missing:
        raise ParameterError(f"comparison table lacks column(s) {', '.join(sorted(missing))}")
    extra = [c for c in ("fresh_share_mean", "budget_spent", "max_guarantee") if c in table.columns]
    order = [str(s) for s in table["scheme"]]
    traces = []
    for private, name, color in (
        (True, "landmark-private (G_t ≤ ε)", OKABE_ITO["blue"]),
        (False, "not landmark-private (G_t > ε somewhere)", OKABE_ITO["vermillion"]),
    ):
        sub = table[table["landmark_private"].astype(bool) == private]
        hover = "<b>%{x}</b><br>mean error = %{y:,.4~r} m ± %{error_y.array:,.3~r} m"
        for i, c in enumerate(extra):
            hover += f"<br>{c.replace('_', ' ')} = %{{customdata[{i}]:.3g}}"
        traces.append(
            go.Bar(
                x=sub["scheme"].astype(str).to_numpy(),
                y=sub["mae_m_mean"].to_numpy(dtype=float),
                error_y={"type": "data", "array": sub["mae_m_std"].to_numpy(dtype=float),
                         "visible": True, "color": OKABE_ITO["black"]},
                customdata=sub[extra].to_numpy(dtype=float) if extra else None,
                name=name,
                marker={"color": color},
                hovertemplate=hover + "<extra></extra>",
            )
        )
    layout = dict(
        barmode="relative",
        xaxis={"title": {"text": "scheme"}, "categoryorder": "array", "categoryarray": order},
        yaxis={"title": {"text": "mean absolute error (m" + (", log scale)" if log_y else ")")},
               **({"type": "log", **_LOG_TICKS} if log_y else {"type": "linear",
                                                              "tickformat": ",~r"})},
        hovermode="closest",
    )
    return _figure(traces, layout, title=title, height=height, uirevision="lmdk-comparison")


def trajectory_figure(
    traj: Any,
    release: Any = None,
    landmarks: Any = None,
    *,
    places: Any = None,
    title: str = "Trajectory (longitude/latitude, no base map)",
    max_points: int | None = MAX_POINTS,
    height: int = 600,
) -> go.Figure:
    """Plain lon/lat scatter (no map tiles): the true path, released points, landmark timestamps
    and landmark places. The aspect ratio is locked so a metre east and a metre north have the
    same length on screen (at the mean latitude).

    ``traj``: DataFrame with lat/lon[, time] or a (lat, lon) pair. ``release``: a locations
    Release (or anything with .lat/.lon; NaN points skipped). ``landmarks``: mask or indices over
    ``traj``. ``places``: Place list or DataFrame with name/lat/lon(/radius_m), drawn as markers.
    """
    lat, lon = lat_lon(traj, "traj")
    n = lat.size
    check_same_length(n, lon.size, "traj lon")
    stride = np.arange(n) if max_points is None or n <= max_points else np.unique(
        np.r_[np.arange(0, n, math.ceil(n / max_points)), n - 1])
    hov = "lat %{y:.5f}°<br>lon %{x:.5f}°"
    traces = [
        go.Scatter(x=lon[stride], y=lat[stride], mode="lines", name="true path (blue line)",
                   line={"color": TRUE_COLOUR, "width": 1.2},
                   hovertemplate="true path<br>" + hov + "<extra></extra>")
    ]
    if release is not None:
        rlat, rlon = lat_lon(release, "release")
        check_same_length(n, rlat.size, "release")
        ok = np.flatnonzero(np.isfinite(rlat) & np.isfinite(rlon))
        ok = _thin(ok, max_points)
        traces.append(go.Scatter(x=rlon[ok], y=rlat[ok], mode="markers",
                                 name=f"released ({COLOUR_NAMES[RELEASE_COLOUR]} hollow circles)",
                                 marker={"color": RELEASE_COLOUR, "size": 6, "opacity": 0.8,
                                         "symbol": "circle-open"},
                                 hovertemplate="released<br>" + hov + "<extra></extra>"))
    if landmarks is not None:
        lm = _thin(np.flatnonzero(as_landmark_mask(landmarks, n)), max_points)
        traces.append(go.Scatter(x=lon[lm], y=lat[lm], mode="markers",
                                 name=f"landmark timestamp ({lm.size}, pink dots)",
                                 marker={"color": LANDMARK_COLOUR, "symbol": "circle",
                                         "size": 7},
                                 hovertemplate="landmark<br>" + hov + "<extra></extra>"))
    if places is not None:
        frame = places if isinstance(places, pd.DataFrame) else _places_frame(places)
        names = frame["name"].astype(str).to_numpy() if "name" in frame else None
        traces.append(go.Scatter(x=frame["lon"].to_numpy(dtype=float),
                                 y=frame["lat"].to_numpy(dtype=float),
                                 mode="markers+text", text=names, textposition="top center",
                                 name="landmark place (green star)",
                                 marker={"color": PLACE_COLOUR, "symbol": "star",
                                         "size": 14},
                                 hovertemplate="%{text}<br>" + hov + "<extra></extra>"))
    lat0 = float(np.nanmean(lat)) if n else 0.0
    layout = dict(
        xaxis={"title": {"text": "longitude (°E)"}},
        yaxis={"title": {"text": "latitude (°N)"}, "scaleanchor": "x",
               "scaleratio": 1.0 / max(math.cos(math.radians(lat0)), 1e-6)},
        hovermode="closest",
    )
    return _figure(traces, layout, title=title, height=height, uirevision="lmdk-trajectory")


def _places_frame(places: Any) -> pd.DataFrame:
    from .places import places_to_frame

    return places_to_frame(places)


# ---------------------------------------------------------------- static export

FIGURE_FORMATS: tuple[str, ...] = ("png", "svg", "pdf", "html")
"""Formats :func:`save_figure` writes: static images (kaleido + a local Chromium) or HTML."""

BROWSER_NAMES: tuple[str, ...] = (
    "chromium-headless-shell",  # Debian's, what `make chromium` installs
    "chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome",
)
"""Executables :func:`save_figure` looks for on PATH to render static images (first found wins;
``BROWSER_PATH`` overrides). kaleido alone does not know the headless shell."""

INSTALL_BROWSER = ("install a Chromium: `make chromium` (Debian's chromium-headless-shell) or "
                   "`apt-get install chromium`, or set BROWSER_PATH to a Chrome/Chromium")
"""What to do when no browser is found (part of :class:`~lmdk_core.errors.FigureExportError`)."""


def browser_path() -> str | None:
    """The Chromium/Chrome :func:`save_figure` renders with: ``BROWSER_PATH`` if set (even when
    it does not exist, so the error names it), else the first of :data:`BROWSER_NAMES` on PATH,
    else one kaleido/choreographer finds on its own (a copy it downloaded earlier, typical install
    paths) — nothing is downloaded. None when there is none."""
    import os
    import shutil

    if env := os.environ.get("BROWSER_PATH"):
        return env
    for name in BROWSER_NAMES:
        if found := shutil.which(name):
            return found
    try:
        from choreographer.browsers.chromium import Chromium

        return Chromium.find_browser(skip_local=False)
    except Exception:  # choreographer missing or its layout changed: no browser known
        return None


EXPORT_TIMEOUT_S = 90.0
"""Default longest wait, in seconds, for one static export by kaleido (its own per-render limit
is 90 s too). A render normally takes 1–3 s, a browser start included."""

EXPORT_ATTEMPTS = 2
"""Static exports tried before :func:`save_figure` gives up on a renderer that does not answer
(each in a new process with a new browser)."""

_KALEIDO_CHILD = """
import json, sys
import kaleido
job = json.loads(sys.stdin.buffer.read())
data = kaleido.calc_fig_sync(job["figure"], opts=job["opts"], kopts=job["kopts"])
sys.stdout.buffer.write(data)
"""
"""One static export, run by :func:`_render_static` in its own interpreter: kaleido reads the
browser's answers on a pipe it also holds open itself, so when its browser dies before
answering, kaleido (1.5, choreographer 1.4) waits for good; a process can be stopped."""


def _render_static(figure_json: str, opts: dict, browser: str, timeout_s: float,
                   name: str) -> bytes:
    """The bytes kaleido renders for the figure (Plotly JSON) with ``opts`` in ``browser``, in
    a child interpreter stopped after ``timeout_s`` seconds; tried :data:`EXPORT_ATTEMPTS`
    times. Raises FigureExportError when kaleido fails or never answers."""
    import json
    import subprocess
    import tempfile

    job = ('{"figure": ' + figure_json + ', "opts": ' + json.dumps(opts)
           + ', "kopts": ' + json.dumps({"mathjax": False, "path": browser}) + "}")
    for _ in range(EXPORT_ATTEMPTS):
        # files, not pipes, for the answer: a browser that outlives its stopped parent keeps
        # nothing of ours open, so nothing here waits on it
        with tempfile.TemporaryFile() as inp, tempfile.TemporaryFile() as out, \
                tempfile.TemporaryFile() as err:
            inp.write(job.encode("utf-8"))
            inp.seek(0)
            child = subprocess.Popen([sys.executable, "-c", _KALEIDO_CHILD], stdin=inp,
                                     stdout=out, stderr=err)
            try:
                code = child.wait(timeout_s)
            except subprocess.TimeoutExpired:
                child.kill()  # its browser sees its pipe close and exits
                child.wait()
                continue
            out.seek(0)
            err.seek(0)
            data, why = out.read(), err.read().decode("utf-8", "replace").strip()
        if code == 0 and data:
            return data
        last = why.splitlines()[-1] if why else f"exit code {code}, no image"
        raise FigureExportError(f"{name}: the static export in {browser} failed ({last})")
    raise FigureExportError(
        f"{name}: the static export in {browser} did not finish within {timeout_s:g} s, "
        f"{EXPORT_ATTEMPTS} times (each with a new browser)")


def save_figure(
    fig: Any,
    path: Any,
    format: str | None = None,
    *,
    width: int | None = None,
    height: int | None = None,
    scale: float = 1.0,
    timeout_s: float = EXPORT_TIMEOUT_S,
) -> Any:
    """Write a Plotly figure to ``path`` as PNG, SVG, PDF (static, for papers) or HTML.

    ``format``: one of :data:`FIGURE_FORMATS`, by default the file's suffix. ``width`` /
    ``height`` in CSS pixels (default: the figure's own, else 1000 by its height or 500);
    ``scale`` multiplies the PNG resolution (2 = print quality). ``timeout_s``: longest wait,
    in seconds, for a static export; one that does not answer is stopped and tried once more
    with a new browser (:data:`EXPORT_ATTEMPTS`). Returns the path written.

    Offline: static images are rendered by kaleido (≥ 1) in the system's Chromium/Chrome
    (:func:`browser_path`: Debian's chromium-headless-shell from ``make chromium`` is enough), on
    a local page that loads plotly.js from the installed plotly package with MathJax off, so no
    request leaves the machine and no browser is downloaded. ``html`` needs no browser: a
    standalone file with plotly.js inlined (~5 MB), which opens offline and prints to PDF/PNG
    from any browser. Raises :class:`~lmdk_core.errors.FigureExportError` (naming what to
    install, and the HTML route) when kaleido or a browser is missing or the browser fails,
    ParameterError for an unknown format or a bad size.
    """
    import os
    import pathlib

    out = pathlib.Path(path)
    fmt = (format or out.suffix.lstrip(".")).lower()
    if fmt not in FIGURE_FORMATS:
        raise ParameterError(
            f"{out.name}: unknown figure format {fmt or '(none)'!r}; "
            f"use one of {', '.join(FIGURE_FORMATS)} (or the matching file suffix)"
        )
    if not isinstance(fig, go.Figure):  # FigureWidget and dicts become a plain Figure
        fig = go.Figure(fig)
    w = width if width is not None else (fig.layout.width or 1000)
    h = height if height is not None else (fig.layout.height or 500)
    for name, v in (("width", w), ("height", h), ("scale", scale), ("timeout_s", timeout_s)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < 20000:
            raise ParameterError(f"{name} must be a number in (0, 20000), got {v!r}")
    if fmt == "html":
        fig.write_html(out, include_plotlyjs=True, full_html=True,
                       default_width=f"{int(w)}px", default_height=f"{int(h)}px")
        return out
    html_route = (f"or save as .html (save_figure(fig, '{out.stem}.html')) and print it "
                  "from a browser")
    if importlib.util.find_spec("kaleido") is None:  # it runs in a child (_render_static)
        raise FigureExportError(
            f"{out.name}: static {fmt.upper()} export needs kaleido>=1 (pip install "
            f"'lmdk[jupyter]') and a Chromium/Chrome; {html_route}"
        )
    browser = browser_path()
    if browser is None or not (os.path.isfile(browser) and os.access(browser, os.X_OK)):
        where = (f"BROWSER_PATH={browser!r} is not an executable file"
                 if browser else "no Chromium/Chrome found")
        raise FigureExportError(
            f"{out.name}: static {fmt.upper()} export needs a Chromium/Chrome and {where}; "
            f"{INSTALL_BROWSER}; {html_route}")
    opts = {"format": fmt, "width": int(w), "height": int(h), "scale": float(scale)}
    try:
        data = _render_static(fig.to_json(), opts, browser, float(timeout_s), out.name)
    except FigureExportError as exc:  # browser crash, render timeout, no answer
        raise FigureExportError(f"{exc}; {INSTALL_BROWSER}; {html_route}") from None
    out.write_bytes(data)
    return out
