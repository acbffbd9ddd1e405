"""The Patterns page's figures (lmdk_core.patterns.figures) read as a newcomer reads them, and
the counting helper its sentences use (issue 27, Patterns item): every series visible and named,
plain log-axis ticks, '1 event' not '1 events'."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lmdk_core.errors import ParameterError
from lmdk_core.formatting import plain_count
from lmdk_core.patterns.figures import MECHANISM_LABELS, log_ticks_125, quality_figure


@given(st.integers(-10**7, 10**7))
def test_plain_count_is_singular_for_exactly_one(n):
    text = plain_count(n, "event")
    number, noun = text.split(" ")
    assert int(number.replace(",", "")) == n
    assert noun == ("event" if n == 1 else "events")
    assert plain_count(n, "person", "people").endswith("person" if n == 1 else "people")


def test_plain_count_examples():
    assert plain_count(1, "event") == "1 event"
    assert plain_count(0, "event type") == "0 event types"
    assert plain_count(1219, "tick") == "1,219 ticks"


# ----------------------------------------------------------------------------- quality figure

EPS = (0.1, 0.5, 1.0, 2.0, 4.0, 8.0)


def summary(curves: dict[str, list[float]]) -> pd.DataFrame:
    """A summarise()-shaped table: one row per (mechanism, ε)."""
    return pd.DataFrame([{"epsilon": e, "mechanism": m, "q": q, "prec": q, "rec": q, "mre": 1 - q,
                          "q_std": 0.01, "seeds": 4}
                         for m, qs in curves.items() for e, q in zip(EPS, qs, strict=True)])


def distinguishable(fig: go.Figure) -> None:
    """Every line is drawn (not hidden), and no two share both dash and marker symbol."""
    styles = []
    for t in fig.data:
        assert t.visible in (None, True), f"{t.name} is hidden"
        assert "lines" in t.mode and "markers" in t.mode
        styles.append((t.line.dash or "solid", t.marker.symbol or "circle"))
    assert len(set(styles)) == len(styles), styles


def test_coinciding_lines_are_both_visible_and_the_legend_says_so():
    """The page's four default mechanisms where Adaptive equals Uniform (as on the sample):
    four visible lines with distinct dash and marker, the later one on top, thinner with
    smaller markers, and its legend entry names the line it covers."""
    same = [0.0, 0.03, 0.09, 0.0, 0.28, 0.34]
    fig = quality_figure(summary({"uniform": same, "uniform-event": [0, .1, .2, .3, .4, .5],
                                  "adaptive": list(same), "event-rr": [0, .02, 0, .08, .2, .5]}))
    distinguishable(fig)
    names = [t.name for t in fig.data]
    assert names[0] == MECHANISM_LABELS["uniform"]
    assert names[1] == MECHANISM_LABELS["uniform-event"]  # differs: no note
    assert names[2] == f"{MECHANISM_LABELS['adaptive']} — same as Uniform PPM"
    assert names[3] == MECHANISM_LABELS["event-rr"]
    under, over = fig.data[0], fig.data[2]
    assert over.marker.size < under.marker.size and over.line.width < under.line.width
    assert over.line.dash != "solid"  # the line underneath shows through its gaps


def test_near_lines_overlap_and_distinct_lines_carry_no_note():
    base = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    near = [v + 0.009 for v in base]
    apart = [v + 0.05 for v in base]
    fig = quality_figure(summary({"uniform": base, "adaptive": near, "event-rr": apart}))
    distinguishable(fig)
    assert fig.data[1].name.endswith("— overlaps Uniform PPM")
    assert fig.data[2].name == MECHANISM_LABELS["event-rr"]


def test_the_distinguishability_check_catches_the_old_figure():
    """The check above fails on lines styled alike (the figure before issue 27)."""
    x = np.array(EPS)
    old = go.Figure([go.Scatter(x=x, y=x * 0, mode="lines+markers", name=n) for n in "ab"])
    with pytest.raises(AssertionError):
        distinguishable(old)


def test_quality_axis_has_plain_1_2_5_ticks():
    fig = quality_figure(summary({"uniform": [0.5] * 6}))
    ax = fig.layout.xaxis
    assert ax.type == "log" and ax.tickmode == "array"
    assert list(ax.tickvals) == pytest.approx([0.1, 0.2, 0.5, 1, 2, 5])
    assert list(ax.ticktext) == ["0.1", "0.2", "0.5", "1", "2", "5"]
    assert ax.exponentformat == "none" and ax.minor.ticks == ""
    lo, hi = ax.range  # every ε drawn, none at the edge
    assert lo < math.log10(0.1) and hi > math.log10(8)
    assert "ε" in ax.title.text


@given(st.floats(1e-4, 1e4), st.floats(1.0, 1e5))
def test_log_ticks_are_every_1_2_5_value_in_range(lo, ratio):
    hi = lo * ratio
    ticks = log_ticks_125(lo, hi)
    # independent enumeration: m·10^k for m in 1, 2, 5 and k over a wide span
    expect = sorted(m * 10.0**k for k in range(-6, 11) for m in (1, 2, 5)
                    if lo * (1 - 1e-9) <= m * 10.0**k <= hi * (1 + 1e-9))
    assert ticks["tickvals"] == pytest.approx(expect, rel=1e-12)
    for text in ticks["ticktext"]:
        assert "e" not in text and "×" not in text and "^" not in text
        assert float(text.replace(",", "")) > 0


def test_log_ticks_reject_a_range_a_log_axis_cannot_show():
    for lo, hi in ((0.0, 1.0), (2.0, 1.0), (1.0, float("inf"))):
        with pytest.raises(ParameterError):
            log_ticks_125(lo, hi)
