"""lmdk_core — landmark privacy for location trajectories and time series.

Load trajectories, mark landmark places, allocate a differential-privacy budget over time,
release protected output, and account for the privacy actually lost per timestamp (with and
without temporal correlation). Every public name is listed in ``__all__`` below, grouped by
topic, and documented in its module.

Conventions: privacy parameters are keyword-only — ``epsilon`` (the total budget ε),
``radius_m`` (the geo-indistinguishability radius in metres), ``rng`` (None = fresh OS
randomness; a seed only for simulations); the per-timestamp budget is ``budget``; data come
first, then landmarks: ``release_locations(traj, landmarks, epsilon=..., scheme=...)``. A place's
radius is ``place_radius_m`` and a stay's ``stay_radius_m``. ``tests/test_api.py`` enforces this
over every public callable; renamed spellings keep working for one release with a
DeprecationWarning (``lmdk_core._deprecation``, listed in CHANGELOG.md).
"""

from . import attacks, correlation, population
from ._version import __version__ as __version__
from .accounting import (
    as_landmark_mask,
    landmark_guarantee,
    landmark_violations,
    satisfies_landmark_privacy,
    satisfies_w_event,
    window_sums,
)
from .allocation import allocate
from .attacks import AttackReport, attack_report
from .comparison import compare_schemes, compare_with_dummies
from .correlation import (
    CorrelationModel,
    EnvelopeCache,
    EnvelopeLoss,
    TemporalLoss,
    allocate_bounded_tpl,
    allocate_for_model,
    constant_bounded_tpl,
    dp_grid_model,
    landmark_temporal_loss,
    location_steps,
    loss_increment,
    public_grid_model,
    sup_bpl,
    sup_fpl,
    synthetic_transition_matrix,
    temporal_loss,
    trajectory_model,
    transition_matrix,
    value_steps,
)
from .dummies import (
    HiddenLandmarks,
    HiddenRelease,
    exhaustive_options,
    greedy_options,
    hide_landmarks,
    release_hidden,
    split_budget,
)
from .errors import (
    DataWarning,
    LmdkError,
    LmdkWarning,
    MatrixError,
    ParameterError,
    SourceFormatError,
    TrajectoryFormatError,
)
from .export import (
    PRIVATE_NOTICE,
    privacy_report,
    release_to_csv,
    release_to_geojson,
    report_to_json,
)
from .geo import EARTH_RADIUS_M, degrees_to_metres, haversine_m, metres_to_degrees, offset_points
from .interval import IntervalResult, release_interval
from .landmarks import landmark_mask, landmarks_from_indices
from .ledger import Cost, LedgerEntry, ReleaseLedger, distance_factor
from .mechanisms import (
    Laplace,
    PlanarLaplace,
    RandomizedResponse,
    as_rng,
    laplace,
    planar_laplace,
    randomized_response,
    unit_laplace,
)
from .metrics import abs_error, error_metres, mae, mae_metres, mre
from .noise import RandomSource
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
from .sample import load_sample, load_sample_context, sample_path
from .session import (
    BudgetExceededError,
    Drawn,
    Preview,
    ReleaseSettings,
    Session,
)
from .smoothing import smooth_release
from .stays import detect_stays, suggest_places
from .trajectory import downsample, path_length_m, resample, select_user, summary, time_slice, users

__all__ = [  # noqa: RUF022 -- grouped by topic, sorted within each group
    # errors and warnings
    "DataWarning", "LmdkError", "LmdkWarning", "MatrixError", "ParameterError",
    "PlacesFormatError", "SourceFormatError", "TrajectoryFormatError",
    # geography
    "EARTH_RADIUS_M", "degrees_to_metres", "haversine_m", "metres_to_degrees", "offset_points",
    # data: reading, sample, trajectories
    "downsample", "load_sample", "load_sample_context", "path_length_m", "read_trajectories",
    "resample", "sample_path", "select_user", "summary", "time_slice", "users",
    # places and landmarks
    "Place", "detect_stays", "landmark_mask", "landmarks_from_indices", "places_from_frame",
    "places_from_geojson", "places_to_frame", "places_to_geojson", "suggest_places",
    # budgets and the landmark guarantee
    "SCHEMES", "SCHEME_INFO", "SCHEME_PARAMS", "allocate", "as_landmark_mask",
    "landmark_guarantee", "landmark_violations", "satisfies_landmark_privacy",
    "satisfies_w_event", "window_sums",
    # noise mechanisms and the random source
    "Laplace", "PlanarLaplace", "RandomSource", "RandomizedResponse", "as_rng", "laplace",
    "planar_laplace", "randomized_response", "unit_laplace",
    # releases, composition across releases, utility
    "Release", "release_locations", "release_values", "release_with_budget", "smooth_release",
    "Cost", "LedgerEntry", "ReleaseLedger", "distance_factor",
    # the accounted session shared by the dashboard and the Jupyter explorer
    "BudgetExceededError", "Drawn", "Preview", "ReleaseSettings", "Session",
    "abs_error", "compare_schemes", "error_metres", "mae", "mae_metres", "mre",
    # hiding the landmarks (dummy landmarks) and the release interval
    "HiddenLandmarks", "HiddenRelease", "IntervalResult", "compare_with_dummies",
    "exhaustive_options", "greedy_options", "hide_landmarks", "release_hidden",
    "release_interval", "split_budget",
    # exports: public release files, the private analysis file
    "PRIVATE_NOTICE", "privacy_report", "release_to_csv", "release_to_geojson",
    "report_to_json",
    # temporal correlation (lmdk_core.correlation)
    "CorrelationModel", "EnvelopeCache", "EnvelopeLoss", "TemporalLoss",
    "allocate_bounded_tpl", "allocate_for_model", "constant_bounded_tpl", "correlation",
    "dp_grid_model",
    "landmark_temporal_loss", "location_steps", "loss_increment", "public_grid_model",
    "sup_bpl", "sup_fpl", "synthetic_transition_matrix", "temporal_loss", "trajectory_model",
    "transition_matrix", "value_steps",
    # personalised DP for many people (lmdk_core.population)
    "population",
    # what an attacker learns from the public file, on simulated releases (lmdk_core.attacks)
    "AttackReport", "attack_report", "attacks",
    # figures (Plotly, extra "plot") and maps (Folium, extra "app"), loaded on first use
    "PALETTE", "allocation_figure", "comparison_figure", "error_figure", "loss_figure",
    "trajectory_figure", "FIGURE_FORMATS", "save_figure",
    "LocalMap", "local_leaflet", "trajectory_map",
]

# Plotly figures (extra "plot") and Folium maps with locally served Leaflet (extra "app") load on
# first use: the core installs without them, and users who never draw pay nothing at import.
# Without the extra, using one of these names raises MissingExtraError naming it.
_LAZY = {
    "PALETTE": "figures",
    "allocation_figure": "figures",
    "comparison_figure": "figures",
    "error_figure": "figures",
    "loss_figure": "figures",
    "trajectory_figure": "figures",
    "FIGURE_FORMATS": "figures",
    "save_figure": "figures",
    "LocalMap": "maps",
    "local_leaflet": "maps",
    "trajectory_map": "maps",
}


def __getattr__(name: str):
    from importlib import import_module

    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    if name in _LAZY.values():  # the submodule itself, e.g. lmdk_core.maps.trajectory_map
        return import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
