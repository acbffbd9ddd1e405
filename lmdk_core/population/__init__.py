"""Personalised differential privacy for many people (Ebadi et al. POPL 2015; Jorgensen et al.
ICDE 2015): population releases of counts per grid cell × time bin in which every user has their
own budget ε_u and their own landmark places, a ProPer-style ledger for repeated analyses, and two
engines (in memory, Dask). ``PopulationSession`` (:mod:`.session`) draws real releases (fresh OS
randomness) and charges each person their own loss in the population's ledger at once. The maths
and proofs are in docs/personalised-dp.md.
"""

from .core import BOUNDING_RULES, bounded_records
from .generator import PLACE_KINDS, generate_population
from .grid import BEIJING_BBOX, Grid
from .ledger import Charge, Ledger, ledger_counts
from .noise import discrete_laplace, publish_counts, snap_tau
from .people import MAX_OWN_EPSILON, people_ids, read_population, with_own_budgets
from .places import suggest_user_places
from .preferences import (
    ICDE15_MIX,
    MIXES,
    PreferenceMix,
    PreferencesFormatError,
    draw_preferences,
    preferences_from_column,
    read_preferences,
)
from .release import (
    METHODS,
    PopulationRelease,
    PrivateStats,
    release_losses,
    release_methods,
    release_population,
)
from .session import (
    LedgerSummary,
    PopulationDraw,
    PopulationPlan,
    PopulationSession,
    preferences_fingerprint,
)
from .tau import TAU_RULES, choose_tau, estimated_cell_mse, keep_probability, public_bin_budgets


def write_partitioned(*args, **kwargs):
    """Write a population as Parquet files partitioned by user (see dask_engine; needs no Dask)."""
    from .dask_engine import write_partitioned as _w

    return _w(*args, **kwargs)


__all__ = [
    "BEIJING_BBOX", "BOUNDING_RULES", "ICDE15_MIX", "MAX_OWN_EPSILON", "METHODS", "MIXES",
    "PLACE_KINDS",
    "TAU_RULES", "Charge", "Grid", "Ledger", "LedgerSummary", "PopulationDraw", "PopulationPlan",
    "PopulationRelease", "PopulationSession", "PreferenceMix",
    "PreferencesFormatError", "PrivateStats", "bounded_records", "choose_tau",
    "discrete_laplace", "draw_preferences", "estimated_cell_mse", "generate_population",
    "keep_probability", "ledger_counts", "people_ids",
    "preferences_fingerprint", "preferences_from_column",
    "public_bin_budgets", "publish_counts", "read_population",
    "read_preferences", "release_losses",
    "release_methods", "release_population", "snap_tau", "suggest_user_places",
    "with_own_budgets", "write_partitioned",
]
