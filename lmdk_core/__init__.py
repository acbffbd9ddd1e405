"""lmdk_core — landmark privacy for location trajectories and time series.

Load trajectories, mark landmark places, allocate a differential-privacy budget over time,
release protected output, and account for the privacy actually lost per timestamp (with and
without temporal correlation). Every public name below is documented in its module.
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

# Each capability adds its public names below, one block per module.

# Engine-A: noise mechanisms, privacy accounting, utility metrics.
from .accounting import (
    as_landmark_mask,
    landmark_guarantee,
    landmark_violations,
    satisfies_landmark_privacy,
    satisfies_w_event,
    window_sums,
)
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
from .sample import load_sample, sample_path
from .stays import detect_stays, suggest_places
from .landmarks import landmark_mask, landmarks_from_indices
from .allocation import allocate
from .release import (
    SCHEME_INFO,
    SCHEME_PARAMS,
    SCHEMES,
    Release,
    release_locations,
    release_values,
    release_with_budget,
)
from .readers import read_trajectories
from .trajectory import downsample, path_length_m, resample, select_user, summary, time_slice, users
# Figures helper: places, exports, scheme comparison, Plotly figures.
from .places import (
    Place,
    PlacesFormatError,
    places_from_frame,
    places_from_geojson,
    places_to_frame,
    places_to_geojson,
)
from .export import privacy_report, release_to_csv, release_to_geojson, report_to_json
from .comparison import compare_schemes
from .figures import (
    PALETTE,
    allocation_figure,
    comparison_figure,
    error_figure,
    loss_figure,
    trajectory_figure,
)

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

# Temporal privacy loss under Markov correlation (BPL/FPL/TPL, bounded-TPL budgets).
from . import correlation
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

# Static figure export (PNG/SVG/PDF via kaleido and the local Chromium, or offline HTML).
from .figures import FIGURE_FORMATS, save_figure
