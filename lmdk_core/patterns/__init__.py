"""Pattern-level differential privacy for event streams (Gu et al., ICDE 2023; seed notes).

Where landmark privacy protects significant moments, pattern-level privacy protects significant
*sequences of events* — private patterns such as Home → Clinic within two hours — while the
patterns a data consumer legitimately queries (public patterns) stay detectable.

Pipeline: trajectory or value series → :mod:`~.extract` (typed events at public ticks, per
user) → :mod:`~.match` (seq patterns within a window) → :mod:`~.ppm` (Uniform / Adaptive PPM,
event-level RR; :mod:`~.protect` decides the protected type set: the private patterns' types and
the types paired with them) or :mod:`~.baselines` (w-event and landmark schemes via lmdk_core's
``release_values``) → :mod:`~.quality` (Prec, Rec, Q, MRE). :mod:`~.taxi` generates a
T-Drive-shaped data set; ``python -m lmdk_core.patterns.evaluate`` prints the evaluation table.
:mod:`~.ledger` keeps the real releases and their ledger (``PatternSession``: free seeded previews,
real draws counted when drawn at their loss per protected pattern occurrence, a total budget).
The maths and proofs are in docs/pattern-level-dp.md.
"""

from .._deprecation import renamed_attributes
from .extract import KINDS, region_events, threshold_events
from .match import Pattern, match, match_all, match_bruteforce
from .ppm import (
    NEIGHBOURS,
    PatternRelease,
    adaptive_allocation,
    adaptive_ppm,
    adaptive_ppm_periods,
    event_rr,
    release_with_allocation,
    type_budgets,
    uniform_allocation,
    uniform_ppm,
)
from .protect import Protection, footprint, paired_types, predictive_types, protection
from .quality import Quality, confusion, quality, quality_mre
from .regions import GridRegions, PlaceRegions, as_regions
from .rr import RR_MAX_EPSILON, flip_mask, flip_probability, flip_threshold, realised_epsilon
from .stream import NS_PER_S, EventStream

__getattr__ = renamed_attributes(__name__, mre=quality_mre)

__all__ = [
    "KINDS",
    "NEIGHBOURS",
    "NS_PER_S",
    "RR_MAX_EPSILON",
    "EventStream",
    "GridRegions",
    "Pattern",
    "PatternRelease",
    "PlaceRegions",
    "Protection",
    "Quality",
    "adaptive_allocation",
    "adaptive_ppm",
    "adaptive_ppm_periods",
    "as_regions",
    "confusion",
    "event_rr",
    "flip_mask",
    "flip_probability",
    "flip_threshold",
    "footprint",
    "match",
    "match_all",
    "match_bruteforce",
    "paired_types",
    "predictive_types",
    "protection",
    "quality",
    "quality_mre",
    "realised_epsilon",
    "region_events",
    "release_with_allocation",
    "threshold_events",
    "type_budgets",
    "uniform_allocation",
    "uniform_ppm",
]
