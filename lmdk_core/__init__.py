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
    TrajectoryFormatError,
)
from .geo import EARTH_RADIUS_M, degrees_to_metres, haversine_m, metres_to_degrees, offset_points

__version__ = "0.1.0"

# Each capability adds its public names below, one block per module.
