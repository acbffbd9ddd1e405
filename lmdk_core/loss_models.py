"""The correlated-loss models a host may show, and the one way their bounds are computed.

The dashboard's section 5 and the Jupyter explorer offer the same three sources of a Markov
model, each sound for the release it is applied to (docs/temporal-loss.md):

* ``"preset"`` — a synthetic strength preset on a public grid (uses no data, free);
* ``"released"`` — fitted to the released points (post-processing of what is public, free; it
  describes the release, so it cannot choose that release's budgets);
* ``"dp"`` — transition counts of the true trace with discrete Laplace noise (costs ε_model; a
  real draw, made and charged through :meth:`lmdk_core.session.Session.dp_model`).

Every model carries the release's neighbour relation (location steps for a release with
protection radius r), so :func:`release_loss` bounds the loss of the lattice release as drawn.
A model fitted to the true trace is not offered: its bounds would describe a chain the user
never released and could be far below the exact loss (the explorer's old "trajectory" model
labelled 1.52 an upper bound where the exact loss was at least 34).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from .errors import LmdkWarning, ParameterError

__all__ = [
    "DP_DEFAULTS",
    "LOSS_SOURCES",
    "PRESET_CELLS_M",
    "STRENGTHS",
    "preset_model",
    "release_loss",
    "released_model",
]

LOSS_SOURCES: dict[str, str] = {
    "preset": "Public preset (uses no data)",
    "released": "Estimated from the released points",
    "dp": "DP estimate from your trajectory (costs ε_model)",
}
"""The model sources both hosts offer, with their labels."""
STRENGTHS = ("weak", "moderate", "strong")
PRESET_CELLS_M = (100, 200, 500, 1000)
DP_DEFAULTS: dict[str, Any] = {"epsilon_model": 0.5, "extent_m": 10_000.0, "cell_m": 1000.0}
"""Defaults of the DP model's public grid (its centre must be a public point)."""


def preset_model(strength: str = "moderate", *, radius_m: float, cell_m: float = 500.0) -> Any:
    """The public preset of ``strength`` on 6×5 public cells of ``cell_m`` metres, with the
    neighbour relation of a release with protection radius ``radius_m``."""
    from .correlation import public_grid_model

    if strength not in STRENGTHS:
        raise ParameterError(f"strength must be one of {', '.join(STRENGTHS)}")
    return public_grid_model(strength, radius_m=radius_m, cell_m=cell_m)


def released_model(release: Any, *, cell_m: float = 500.0) -> tuple[Any, list[str]]:
    """(model of ``release``'s released points, the library's warnings as text).

    The release's own radius is the neighbour relation. Warnings (a coarser grid chosen when
    the points visit too many cells) are returned so a host can show them every time."""
    from .correlation import trajectory_model

    if getattr(release, "lat", None) is None:
        raise ParameterError("a model of released points needs a location release")
    lat, lon = np.asarray(release.lat), np.asarray(release.lon)
    ok = np.isfinite(lat) & np.isfinite(lon)
    if ok.sum() < 2:
        raise ParameterError("the release has fewer than 2 released points to fit a model to")
    pts = pd.DataFrame({"lat": lat[ok], "lon": lon[ok]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LmdkWarning)
        model = trajectory_model(pts, source="released", radius_m=float(release.params["radius_m"]),
                                 cell_m=cell_m)
    return model, [str(w.message) for w in caught if issubclass(w.category, LmdkWarning)]


def release_loss(release: Any, landmarks: Any, model: Any, *,
                 separation: float | None = None) -> Any:
    """Upper bounds (BPL/FPL/TPL per moment, and jointly over the landmarks) on the loss of
    ``release`` under ``model``, for the real ``landmarks``; ``separation`` (metres) adds the
    bounds for two places that far apart. The one computation behind every host's loss chart."""
    from .correlation import model_loss

    return model_loss(np.asarray(release.budget), landmarks, model, separation=separation)
