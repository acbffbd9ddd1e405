"""Shared test configuration.

Hypothesis runs derandomised (a fixed seed per test) so the suite is deterministic on every
machine; set HYPOTHESIS_PROFILE=explore locally to search with fresh random examples.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,  # no replay of examples saved by earlier runs: every run sees the same cases
    deadline=None,
    max_examples=100,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("explore", deadline=None, max_examples=1000)  # saves failures to .hypothesis/
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
