"""Plotly figures of the pattern-level page and notebook: event timeline and quality vs ε."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..errors import ParameterError
from ..figures import _LOG_TICKS, OKABE_ITO, _figure
from ..formatting import plain_number
from ..times import ns_index
from .ppm import PatternRelease
from .stream import EventStream, _bound_ns

__all__ = ["MECHANISM_LABELS", "log_ticks_125", "quality_figure", "timeline_figure"]

MECHANISM_LABELS = {
    "uniform": "Uniform PPM (pattern-level ε-DP)",
    "uniform-event": "Uniform PPM, single-event reading (ε per event)",
    "adaptive": "Adaptive PPM (pattern-level ε-DP)",
    "event-rr": "event-level RR on every type",
    "bd": "w-event BD",
    "ba": "w-event BA",
    "lm-uniform": "landmark Uniform",
    "lm-skip": "landmark Skip",
    "lm-adaptive": "landmark Adaptive",
}
"""Plain-language name of each mechanism key of :mod:`lmdk_core.patterns.evaluate`."""


def timeline_figure(true: EventStream, release: PatternRelease, *, user: str | None = None,
                    start: Any = None, stop: Any = None, max_events: int = 3000,
                    height: int = 420) -> go.Figure:
    """Events of one user over time, one row per type: true events, and the released stream with
    suppressed (removed) and injected (synthetic) events marked.

    Suppressed/injected marks come from the release's PRIVATE diagnostics: the figure is for the
    data holder, not for publication. At most ``max_events`` markers per trace are drawn.
    """
    users = true.users
    u = users.index(user) if user is not None else 0
    if user is not None and user not in users:
        raise ParameterError(f"unknown user {user!r}")
    rel = release.stream
    lo = _bound_ns(start, "start") if start is not None else None
    hi = _bound_ns(stop, "stop") if stop is not None else None

    def select(stream: EventStream, extra: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        keep = (stream.uid == u) & extra
        t = stream.time
        if lo is not None:
            keep &= t >= lo
        if hi is not None:
            keep &= t < hi
        idx = np.flatnonzero(keep)[:max_events]
        return ns_index(t[idx]).to_numpy(), stream.etype[idx]

    names = np.asarray(true.types, dtype=object)
    used = np.unique(np.concatenate([true.etype[true.uid == u], rel.etype[rel.uid == u]]))
    order = [str(names[c]) for c in used]
    traces = []
    spec = (
        ("true events", true, np.ones(len(true), bool), OKABE_ITO["black"], "circle-open", 11),
        ("released (kept)", rel, ~release.injected, OKABE_ITO["blue"], "circle", 6),
        ("suppressed", true, release.suppressed, OKABE_ITO["vermillion"], "x", 10),
        ("injected (synthetic)", rel, release.injected, OKABE_ITO["orange"], "diamond", 8),
    )
    for label, stream, mask, color, symbol, size in spec:
        x, c = select(stream, mask)
        traces.append(go.Scatter(
            x=x, y=names[c], mode="markers", name=label,
            marker={"color": color, "symbol": symbol, "size": size},
            hovertemplate=f"<b>{label}</b><br>%{{y}}<br>%{{x}}<extra></extra>"))
    layout = {
        "xaxis": {"title": {"text": "time (UTC)"}},
        "yaxis": {"title": {"text": "event type"}, "categoryorder": "array",
                  "categoryarray": order[::-1], "type": "category"},
        "hovermode": "closest",
    }
    title = (f"Events of {users[u]}: true stream and released stream "
             f"({release.mechanism}, ε = {release.epsilon:g})")
    return _figure(traces, layout, title=title, height=height, uirevision="lmdk-pattern-timeline")


LINE_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
MARKER_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "cross", "star",
                  "triangle-down", "hexagon")
"""The k-th line of :func:`quality_figure` has dash ``k % 6`` and marker ``k % 9``: up to 18
lines differ in dash or marker, not only in colour."""

OVERLAP = 0.01
"""Two lines of :func:`quality_figure` *overlap* when they have the same ε values and differ by at
most this much at each of them (1 % of the 0–1 axis: ~4 px on a 420 px chart)."""


def log_ticks_125(lo: float, hi: float) -> dict[str, Any]:
    """Plotly axis settings for a log axis over [lo, hi]: ticks at 1, 2 and 5 times the powers of
    ten inside the range, labelled as plain numbers (0.1, 0.2, 0.5, 1, 2, 5 …), no minor labels,
    no exponents."""
    lo, hi = float(lo), float(hi)
    if not (0 < lo <= hi and np.isfinite(hi)):
        raise ParameterError(f"a log axis needs 0 < lo ≤ hi (finite), got {lo}, {hi}")
    decades = 10.0 ** np.arange(np.floor(np.log10(lo)), np.floor(np.log10(hi)) + 1)
    vals = (decades[:, None] * np.array([1.0, 2.0, 5.0])).ravel()
    vals = vals[(vals >= lo * (1 - 1e-9)) & (vals <= hi * (1 + 1e-9))]
    pad = 0.05 * max(np.log10(hi / lo), 0.5)
    return {**{k: v for k, v in _LOG_TICKS.items() if k != "dtick"}, "type": "log",
            "tickmode": "array", "tickvals": vals.tolist(),
            "ticktext": [plain_number(v) for v in vals],
            "range": [np.log10(lo) - pad, np.log10(hi) + pad]}


def _short(label: str) -> str:
    """'Uniform PPM' of 'Uniform PPM (pattern-level ε-DP)'."""
    return label.split(" (", 1)[0]


def _overlapping(x: np.ndarray, y: np.ndarray, earlier: list[tuple[str, np.ndarray, np.ndarray]]
                 ) -> tuple[str, bool] | None:
    """(label, exactly equal) of the first earlier line that ``(x, y)`` would hide, if any."""
    for label, x0, y0 in earlier:
        if x0.shape == x.shape and np.array_equal(x0, x):
            diff = np.abs(np.where(np.isnan(y0) & np.isnan(y), 0.0, y0 - y))
            if not np.isnan(diff).any() and diff.max(initial=0.0) <= OVERLAP:
                return label, bool(diff.max(initial=0.0) == 0)
    return None


def quality_figure(summary: pd.DataFrame, *, metric: str = "q", height: int = 420) -> go.Figure:
    """``metric`` (q, prec, rec or mre) against ε, one line per mechanism, ±1 std band for Q.

    ``summary``: :func:`lmdk_core.patterns.evaluate.summarise` output for one α (and one m).
    Every line has its own dash and marker (:data:`LINE_DASHES`, :data:`MARKER_SYMBOLS`); a line
    that would hide under an earlier one (:data:`OVERLAP`) is drawn on top, thinner and with
    smaller markers, and its legend entry says "same as …" (equal values) or "overlaps …".
    The ε axis is logarithmic with 1-2-5 ticks (:func:`log_ticks_125`).
    """
    if metric not in ("q", "prec", "rec", "mre"):
        raise ParameterError("metric must be q, prec, rec or mre")
    need = {"epsilon", "mechanism", metric}
    if need - set(summary.columns):
        raise ParameterError(f"summary lacks column(s) {sorted(need - set(summary.columns))}")
    label = {"q": "quality Q = α·Prec + (1−α)·Rec", "prec": "precision", "rec": "recall",
             "mre": "MRE = (Q_ord − Q)/Q_ord"}[metric]
    traces: list[go.Scatter] = []
    drawn: list[tuple[str, np.ndarray, np.ndarray]] = []
    for k, (mech, block) in enumerate(summary.groupby("mechanism", sort=False)):
        block = block.sort_values("epsilon")
        x = block["epsilon"].to_numpy(float)
        y = block[metric].to_numpy(float)
        err = block["q_std"].fillna(0).to_numpy() if metric in ("q", "mre") else None
        name = MECHANISM_LABELS.get(str(mech), str(mech))
        under = _overlapping(x, y, drawn)
        drawn.append((name, x, y))
        legend = name if under is None else (
            f"{name} — {'same as' if under[1] else 'overlaps'} {_short(under[0])}")
        traces.append(go.Scatter(
            x=x, y=y, mode="lines+markers", name=legend,
            line={"dash": LINE_DASHES[k % len(LINE_DASHES)],
                  "width": 2.5 if under is None else 1.5},
            marker={"symbol": MARKER_SYMBOLS[k % len(MARKER_SYMBOLS)],
                    "size": 10 if under is None else 6},
            error_y=None if err is None else {"type": "data", "array": err, "visible": True},
            hovertemplate=f"<b>{name}</b><br>ε = %{{x:g}}<br>{metric} = %{{y:.3f}}"
                          "<extra></extra>"))
    eps = summary["epsilon"].to_numpy(float)
    eps = eps[np.isfinite(eps) & (eps > 0)]
    xaxis = ({"title": {"text": "privacy budget ε (log scale)"}, **log_ticks_125(
        eps.min(), eps.max())} if eps.size else {"title": {"text": "privacy budget ε"}})
    layout = {
        "xaxis": xaxis,
        "yaxis": {"title": {"text": label}, "range": [-0.02, 1.02]},
        "hovermode": "closest",
    }
    return _figure(traces, layout, title=f"Public-pattern {label} against ε (mean over seeds)",
                   height=height, uirevision="lmdk-pattern-quality")
