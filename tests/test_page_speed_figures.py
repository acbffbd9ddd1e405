"""Speed-ups of what the dashboard's page computes on its runs, checked against independent
references: the figures' template is validated once per process (lmdk_core.figures._figure), not
once per figure, and every figure must still be exactly what plotly's full validation makes of
it; loss_models.trace_span_m finds the distinct fixes by a sort, and its span must still be the
all-pairs maximum."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from lmdk_core import figures

N = 60  # small series: the template does not depend on the data


def _cases() -> dict:
    mask = np.zeros(N, bool)
    mask[5:9] = True
    eps = np.where(mask, 0.01, 0.5)
    table = pd.DataFrame({"scheme": ["event", "skip"], "mae_m_mean": [100.0, 300.0],
                          "mae_m_std": [5.0, 9.0], "landmark_private": [False, True]})
    return {
        "allocation": lambda: figures.allocation_figure(eps, mask, epsilon=1.0, max_points=20),
        "error": lambda: figures.error_figure(np.linspace(1, 50, N), mask, landmarks=mask),
        "loss": lambda: figures.loss_figure(eps, eps + 0.5, epsilon=1.0),
        "comparison": lambda: figures.comparison_figure(table),
        "trajectory": lambda: figures.trajectory_figure(
            (np.linspace(39.9, 40.0, N), np.linspace(116.3, 116.4, N)), landmarks=mask),
    }


@pytest.mark.parametrize("name", list(_cases()))
def test_figure_is_what_full_validation_makes(name):
    fig = _cases()[name]()
    reference = go.Figure(fig.to_dict())  # plotly validates every property, template included
    assert fig.to_json() == reference.to_json()
    assert fig.layout.template.to_plotly_json() == go.layout.Template(figures.TEMPLATE
                                                                      ).to_plotly_json()


def test_figures_do_not_share_their_template():
    a, b = (_cases()["error"]() for _ in range(2))
    a.layout.template.layout.font.size = 30
    assert b.layout.template.layout.font.size != 30
    assert go.layout.Template(figures.TEMPLATE).to_plotly_json() == figures._TEMPLATE_PROPS


def test_an_unvalidated_template_would_be_caught(monkeypatch):
    """The check above fails for a figure given the template as written (keys in another
    order than validation leaves them), so it can tell."""
    monkeypatch.setattr(figures, "_TEMPLATE_PROPS", copy.deepcopy(figures.TEMPLATE))
    fig = _cases()["error"]()
    assert fig.to_json() != go.Figure(fig.to_dict()).to_json()


# ------------------------------------------------------------------ loss_models.trace_span_m
# (its distinct fixes by lexsort instead of np.unique(axis=0): same fixes, same span)

from hypothesis import given  # noqa: E402
from hypothesis import strategies as hst  # noqa: E402

from lmdk_core import loss_models  # noqa: E402
from lmdk_core.geo import haversine_m  # noqa: E402


def _all_pairs(lat: np.ndarray, lon: np.ndarray) -> float:
    ok = np.isfinite(lat) & np.isfinite(lon)
    lat, lon = lat[ok], lon[ok]
    return float(np.max(haversine_m(lat[:, None], lon[:, None], lat[None], lon[None]),
                        initial=0.0))


_coord = hst.sampled_from([39.9, 39.95, 40.0, -0.0, 0.0, float("nan")])


@given(hst.lists(hst.tuples(_coord, _coord), max_size=30))
def test_trace_span_is_the_largest_distance_of_all_pairs(points):
    """Repeated fixes, ±0 and NaN: the span is the all-pairs maximum."""
    lat = np.array([p[0] for p in points], dtype=float)
    lon = np.array([p[1] for p in points], dtype=float)
    assert loss_models.trace_span_m(lat, lon) == _all_pairs(lat, lon)


def test_repeated_fixes_count_once_for_the_exact_path():
    """4,100 fixes, 1,000 distinct: the exact path (≤ 4,000 distinct fixes), so the span equals
    the all-pairs maximum exactly; counted with their repeats they would take the hull's path,
    which is off by some 1e-5 m here."""
    rng = np.random.default_rng(0)
    lat = 40.0 + rng.normal(0, 0.05, 1000)
    lon = 116.3 + rng.normal(0, 0.05, 1000)
    pick = rng.integers(0, 1000, 4100)
    pick[:1000] = np.arange(1000)
    assert loss_models.trace_span_m(lat[pick], lon[pick]) == _all_pairs(lat, lon)
