"""The correlated-loss models a host may show, and the one way their bounds are computed.

The dashboard's section 5 and the Jupyter explorer offer the same three sources of a Markov
model, each sound for the release it is applied to (docs/temporal-loss.md):

* ``"preset"`` — a synthetic strength preset on a public grid (uses no data, free). Its
  extent is a public setting ("places up to … km apart", :data:`PRESET_EXTENT_M`): its bounds
  hold for places up to that distance apart only, and :func:`extent_warning` tells the user
  when their own trace spans more;
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
    "PRESET_EXTENTS_M",
    "PRESET_EXTENT_M",
    "STRENGTHS",
    "covered_m",
    "extent_warning",
    "preset_model",
    "release_loss",
    "released_model",
    "trace_span_m",
]

LOSS_SOURCES: dict[str, str] = {
    "preset": "Public preset (uses no data)",
    "released": "Estimated from the released points",
    "dp": "DP estimate from your trajectory (costs ε_model)",
}
"""The model sources both hosts offer, with their labels."""
STRENGTHS = ("weak", "moderate", "strong")
PRESET_EXTENTS_M = (2_000.0, 5_000.0, 10_000.0, 20_000.0, 50_000.0, 100_000.0)
"""The preset extents the hosts offer ("places up to … km apart")."""
PRESET_EXTENT_M = 20_000.0
"""Default preset extent: places up to 20 km apart (a city)."""
DP_DEFAULTS: dict[str, Any] = {"epsilon_model": 0.5, "extent_m": 10_000.0, "cell_m": 1000.0}
"""Defaults of the DP model's public grid (its centre must be a public point)."""


def preset_model(strength: str = "moderate", *, radius_m: float,
                 extent_m: float | None = None, cell_m: float | None = None) -> Any:
    """The public preset of ``strength`` on 6×5 public cells whose two farthest points are
    ``extent_m`` metres apart (default :data:`PRESET_EXTENT_M`), or of cells of ``cell_m``
    metres (:func:`lmdk_core.correlation.public_grid_model`; give one of the two), with the
    neighbour relation of a release with protection radius ``radius_m``.

    Its worst pair covers any two places up to :func:`covered_m` apart, and no further: for a
    trace spanning more, its bounds are not bounds (:func:`extent_warning`)."""
    from .correlation import public_grid_model

    if strength not in STRENGTHS:
        raise ParameterError(f"strength must be one of {', '.join(STRENGTHS)}")
    if cell_m is not None:
        if extent_m is not None:
            raise ParameterError("give the preset's extent_m or its cell_m, not both")
        return public_grid_model(strength, radius_m=radius_m, cell_m=cell_m)
    return public_grid_model(strength, radius_m=radius_m,
                             extent_m=PRESET_EXTENT_M if extent_m is None else extent_m)


def covered_m(model: Any) -> float:
    """The largest distance (metres) between two places whose loss ``model``'s worst pair
    bounds: the farthest cell centres plus the cell diagonal (``StepLosses.reach`` plus its
    offset), not δ_max·r, which overstates it near r by the lattice's rounding."""
    return float(model.steps.reach + model.steps.offset)


def trace_span_m(lat: Any, lon: Any) -> float:
    """The largest distance (metres) between two fixes of a trace (0 for fewer than two).

    Exact over all pairs up to 4,000 distinct fixes; beyond, over the vertices of the convex
    hull of the fixes in a local plane (the farthest pair lies on it, up to the projection)."""
    from .geo import degrees_to_metres, haversine_m

    lat = np.asarray(lat, dtype=np.float64)
    lon = np.asarray(lon, dtype=np.float64)
    ok = np.isfinite(lat) & np.isfinite(lon)
    lat, lon = lat[ok], lon[ok]
    # the distinct fixes, sorted by (lat, lon): np.unique(..., axis=0)'s rows, 4x faster
    order = np.lexsort((lon, lat))
    a, b = lat[order], lon[order]
    new = np.ones(a.size, dtype=bool)
    new[1:] = (a[1:] != a[:-1]) | (b[1:] != b[:-1])
    pts = np.column_stack([a[new], b[new]])
    if len(pts) < 2:
        return 0.0
    if len(pts) > 4000:
        from scipy.spatial import ConvexHull, QhullError

        east, north = degrees_to_metres(pts[0, 0], pts[0, 1], pts[:, 0], pts[:, 1])
        try:
            pts = pts[ConvexHull(np.column_stack([east, north])).vertices]
        except QhullError:  # all fixes on a line: its two ends are among these four
            pts = pts[[np.argmin(east), np.argmax(east), np.argmin(north), np.argmax(north)]]
    best = 0.0
    for i in range(0, len(pts), 1000):
        block = pts[i:i + 1000]
        d = haversine_m(block[:, None, 0], block[:, None, 1], pts[None, :, 0], pts[None, :, 1])
        best = max(best, float(np.max(d)))
    return best


def extent_warning(model: Any, span_m: float, separation: float | None = None) -> str | None:
    """The warning a host shows, to the user only, when a location model's bounds do not cover
    the user's own trace (it spans more than the model's worst pair reaches) or the pair they
    chose; None when they do, or for a model that is not about locations.

    Every location model bounds the loss only between its own cells: the public preset's
    extent, the DP model's public grid (points outside are clamped to its border), the cells of
    the released points. Comparing the user's trace with the model on their own screen is not
    a release: the text is never exported, and the bounds and budgets do not depend on it."""
    steps = getattr(model, "steps", None)
    if steps is None or steps.kind != "locations":
        return None
    covered = covered_m(model)
    far = [f"your trace spans {span_m / 1000:.1f} km"] if span_m > covered else []
    if separation is not None and separation > covered:
        far.append(f"the pair you chose is {separation / 1000:.1f} km apart")
    if not far:
        return None
    what, fix = _MODEL_REACH.get(model.source, ("The model", "Choose a model that covers it."))
    return (f"{what} covers places up to {covered / 1000:g} km apart, but "
            f"{' and '.join(far)}: its figures are not a bound for places further apart than "
            f"{covered / 1000:g} km. {fix}")


_MODEL_REACH = {
    "public": ("The public preset", "Choose a larger extent."),
    "dp": ("The DP model's public grid", "Choose a larger grid (side) for the DP model."),
    "released": ("The model of the released points", "Choose larger grid cells."),
}


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
