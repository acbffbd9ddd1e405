"""The figures' template is validated once per process (lmdk_core.figures._figure), not once per
figure: every figure must still be exactly what plotly's full validation makes of it."""

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
