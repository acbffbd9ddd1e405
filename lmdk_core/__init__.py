"""lmdk_core — landmark privacy for location trajectories and time series.

Load trajectories, mark landmark places, allocate a differential-privacy budget over time,
release protected output, and account for the privacy actually lost per timestamp (with and
without temporal correlation). Every public name is listed in ``__all__`` below, grouped by
topic, and documented in its module.

Conventions: privacy parameters are keyword-only — ``epsilon`` (the total budget ε),
``radius_m`` (the geo-indistinguishability radius in metres), ``rng`` (None = fresh OS
randomness; a seed only for simulations); the per-timestamp budget is ``budget``; data come
first, then landmarks: ``release_locations(traj, landmarks, epsilon=..., scheme=...)``.
"""

from .errors import (
    DataWarning,
    LmdkError,
    LmdkWarning,
    MatrixError,
    ParameterError,
    SourceFormatError,
    TrajectoryFormatError,
)
from .geo import EARTH_RADIUS_M, degrees_to_metres, haversine_m, metres_to_degrees, offset_points

__version__ = "0.1.0"

from . import correlation
from .accounting import (
    as_landmark_mask,
    landmark_guarantee,
    landmark_violations,
    satisfies_landmark_privacy,
    satisfies_w_event,
    window_sums,
)
from .allocation import allocate
from .comparison import compare_schemes
from .correlation import (
    EnvelopeLoss,
    TemporalLoss,
    allocate_bounded_tpl,
    landmark_temporal_loss,
    loss_increment,
    sup_bpl,
    sup_fpl,
    synthetic_transition_matrix,
    temporal_loss,
    transition_matrix,
)
from .export import (
    PRIVATE_NOTICE,
    privacy_report,
    release_to_csv,
    release_to_geojson,
    report_to_json,
)
from .figures import (
    PALETTE,
    allocation_figure,
    comparison_figure,
    error_figure,
    loss_figure,
    trajectory_figure,
)
from .landmarks import landmark_mask, landmarks_from_indices
from .ledger import LedgerEntry, ReleaseLedger
from .mechanisms import (
    Laplace,
    PlanarLaplace,
    RandomizedResponse,
    as_rng,
    laplace,
    planar_laplace,
    planar_laplace_offsets,
    planar_offsets_from_units,
    randomized_response,
    unit_laplace,
    unit_planar_draws,
)
from .metrics import abs_error, error_metres, mae, mae_metres, mre
from .places import (
    Place,
    PlacesFormatError,
    places_from_frame,
    places_from_geojson,
    places_to_frame,
    places_to_geojson,
)
from .readers import read_trajectories
from .release import (
    SCHEME_INFO,
    SCHEME_PARAMS,
    SCHEMES,
    Release,
    release_locations,
    release_values,
    release_with_budget,
)
from .sample import load_sample, sample_path
from .stays import detect_stays, suggest_places
from .trajectory import downsample, path_length_m, resample, select_user, summary, time_slice, users

__all__ = [  # noqa: RUF022 -- grouped by topic, sorted within each group
    # errors and warnings
    "DataWarning", "LmdkError", "LmdkWarning", "MatrixError", "ParameterError",
    "PlacesFormatError", "SourceFormatError", "TrajectoryFormatError",
    # geography
    "EARTH_RADIUS_M", "degrees_to_metres", "haversine_m", "metres_to_degrees", "offset_points",
    # data: reading, sample, trajectories
    "downsample", "load_sample", "path_length_m", "read_trajectories", "resample",
    "sample_path", "select_user", "summary", "time_slice", "users",
    # places and landmarks
    "Place", "detect_stays", "landmark_mask", "landmarks_from_indices", "places_from_frame",
    "places_from_geojson", "places_to_frame", "places_to_geojson", "suggest_places",
    # budgets and the landmark guarantee
    "SCHEMES", "SCHEME_INFO", "SCHEME_PARAMS", "allocate", "as_landmark_mask",
    "landmark_guarantee", "landmark_violations", "satisfies_landmark_privacy",
    "satisfies_w_event", "window_sums",
    # noise mechanisms
    "Laplace", "PlanarLaplace", "RandomizedResponse", "as_rng", "laplace", "planar_laplace",
    "planar_laplace_offsets", "planar_offsets_from_units", "randomized_response",
    "unit_laplace", "unit_planar_draws",
    # releases, composition across releases, utility
    "Release", "release_locations", "release_values", "release_with_budget",
    "LedgerEntry", "ReleaseLedger",
    "abs_error", "compare_schemes", "error_metres", "mae", "mae_metres", "mre",
    # exports: public release files, the private analysis file
    "PRIVATE_NOTICE", "privacy_report", "release_to_csv", "release_to_geojson",
    "report_to_json",
    # temporal correlation (lmdk_core.correlation)
    "EnvelopeLoss", "TemporalLoss", "allocate_bounded_tpl", "correlation",
    "landmark_temporal_loss", "loss_increment", "sup_bpl", "sup_fpl",
    "synthetic_transition_matrix", "temporal_loss", "transition_matrix",
    # figures (Plotly) and maps (Folium, loaded on first use)
    "PALETTE", "allocation_figure", "comparison_figure", "error_figure", "loss_figure",
    "trajectory_figure", "LocalMap", "local_leaflet", "trajectory_map",
]

# Folium maps with locally served Leaflet (offline-capable). Imported on first use: folium
# alone costs ~0.2 s, which library users who never draw a map should not pay at import.
_LAZY = {"LocalMap": "maps", "local_leaflet": "maps", "trajectory_map": "maps"}


def __getattr__(name: str):
    from importlib import import_module

    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    if name in _LAZY.values():  # the submodule itself, e.g. lmdk_core.maps.trajectory_map
        return import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
