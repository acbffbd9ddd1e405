"""Plotly figures of the pattern-level page and notebook: event timeline and quality vs ε."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..errors import ParameterError
from ..figures import OKABE_ITO, _figure
from ..times import ns_index
from .ppm import PatternRelease
from .stream import EventStream, _bound_ns

__all__ = ["MECHANISM_LABELS", "quality_figure", "timeline_figure"]

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


def quality_figure(summary: pd.DataFrame, *, metric: str = "q", height: int = 420) -> go.Figure:
    """``metric`` (q, prec, rec or mre) against ε, one line per mechanism, ±1 std band for Q.

    ``summary``: :func:`lmdk_core.patterns.evaluate.summarise` output for one α (and one m).
    """
    if metric not in ("q", "prec", "rec", "mre"):
        raise ParameterError("metric must be q, prec, rec or mre")
    need = {"epsilon", "mechanism", metric}
    if need - set(summary.columns):
        raise ParameterError(f"summary lacks column(s) {sorted(need - set(summary.columns))}")
    label = {"q": "quality Q = α·Prec + (1−α)·Rec", "prec": "precision", "rec": "recall",
             "mre": "MRE = (Q_ord − Q)/Q_ord"}[metric]
    traces = []
    for mech, block in summary.groupby("mechanism", sort=False):
        block = block.sort_values("epsilon")
        err = block["q_std"].fillna(0).to_numpy() if metric in ("q", "mre") else None
        traces.append(go.Scatter(
            x=block["epsilon"].to_numpy(), y=block[metric].to_numpy(), mode="lines+markers",
            name=MECHANISM_LABELS.get(str(mech), str(mech)),
            error_y=None if err is None else {"type": "data", "array": err, "visible": True},
            hovertemplate=f"<b>{mech}</b><br>ε = %{{x:g}}<br>{metric} = %{{y:.3f}}<extra></extra>"))
    layout = {
        "xaxis": {"title": {"text": "privacy budget ε (log scale)"}, "type": "log"},
        "yaxis": {"title": {"text": label}, "range": [-0.02, 1.02]},
        "hovermode": "closest",
    }
    return _figure(traces, layout, title=f"Public-pattern {label} against ε (mean over seeds)",
                   height=height, uirevision="lmdk-pattern-quality")
