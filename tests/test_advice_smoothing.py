"""lmdk_core.advice with smoothing on: every scheme's error is the smoothed simulation, and the
data owner's ranking (public_only=False) follows it."""

from __future__ import annotations

import math

import numpy as np
from traces import WALK as TRACE

from lmdk_core import advice
from lmdk_core.metrics import mae_metres

HOME = np.zeros(len(TRACE), dtype=bool)
HOME[100:140] = True


def test_smoothed_estimates_are_simulated_for_every_scheme_and_help():
    raw = advice.estimate_errors(TRACE, HOME, epsilon=1.0, radius_m=200.0, rng=0)
    est = advice.estimate_errors(TRACE, HOME, epsilon=1.0, radius_m=200.0, rng=0, smooth=True)
    assert all(math.isnan(e.smoothed) for e in raw)
    assert [e.scheme for e in est] == [e.scheme for e in raw]
    for e, r in zip(est, raw, strict=True):
        assert np.isfinite(e.smoothed) and e.estimate == e.smoothed
        assert e.predicted == r.predicted or (math.isnan(e.predicted) and math.isnan(r.predicted))
    by = {e.scheme: e for e in est}
    # event and skip: fresh noise of known scale; smoothing takes off a good part of it
    for scheme in ("event", "skip"):
        assert by[scheme].smoothed < 0.7 * by[scheme].predicted * (1 if scheme == "event" else 2)
    assert by["event"].smoothed < mae_metres(TRACE, (TRACE.lat + 0.01, TRACE.lon))


def test_the_owner_ranking_follows_the_smoothed_error():
    def e(scheme, predicted, smoothed):
        return advice.SchemeEstimate(scheme, predicted, "closed form", float("nan"), True,
                                     smoothed)

    est = [e("uniform", 500.0, 300.0), e("skip", 400.0, 350.0)]
    assert advice.recommend(est).scheme == "skip"  # public ranking: the closed forms
    assert advice.recommend(est, public_only=False).scheme == "uniform"
    plain = [advice.SchemeEstimate("skip", 400.0, "closed form", float("nan"), True)]
    assert plain[0].estimate == 400.0  # no smoothing asked: unchanged


def test_smoothed_trial_smooths_the_release_whose_raw_error_is_shown():
    """One seeded release per scheme gives both numbers: its raw error is compare_schemes'
    (the unsmoothed estimate), and the smoothed error is that release smoothed."""
    from lmdk_core.noise.source import simulation_rng, spawn_seeds
    from lmdk_core.release import release_locations
    from lmdk_core.smoothing import smooth_release

    raw = {e.scheme: e for e in advice.estimate_errors(TRACE, HOME, epsilon=2.0, radius_m=200.0,
                                                        rng=3)}
    est = {e.scheme: e for e in advice.estimate_errors(TRACE, HOME, epsilon=2.0, radius_m=200.0,
                                                        rng=3, smooth=True)}
    for scheme in ("skip", "adaptive", "bd"):
        assert est[scheme].simulated == raw[scheme].simulated
    rel = release_locations(TRACE, HOME, epsilon=2.0, scheme="bd", radius_m=200.0,
                            rng=simulation_rng(spawn_seeds(3, 1)[0]), noise="fast")
    assert mae_metres(TRACE, rel) == est["bd"].simulated
    assert mae_metres(TRACE, smooth_release(rel)) == est["bd"].smoothed


def test_reused_trials_are_the_trials_of_the_new_places():
    """Event, user and uniform trials kept from other places (same |L|) are exactly what a fresh
    computation gives for the new places; Skip's are not reusable (its numbers differ), so
    reusing them would be wrong — it is recomputed."""
    other = np.zeros(len(TRACE), dtype=bool)
    other[200:240] = True  # as many landmark moments as HOME, elsewhere
    kept: dict = {}
    advice.estimate_errors(TRACE, HOME, epsilon=2.0, radius_m=200.0, rng=5, smooth=True,
                           reuse=kept)
    assert {k[0] for k in kept} == {"event", "user", "uniform"}
    again = advice.estimate_errors(TRACE, other, epsilon=2.0, radius_m=200.0, rng=5,
                                   smooth=True, reuse=kept)
    assert len(kept) == 3  # nothing new to keep: the same |L|
    fresh = advice.estimate_errors(TRACE, other, epsilon=2.0, radius_m=200.0, rng=5, smooth=True)
    np.testing.assert_array_equal([(e.simulated, e.smoothed) for e in again],
                                  [(e.simulated, e.smoothed) for e in fresh])
    home = {e.scheme: e for e in advice.estimate_errors(TRACE, HOME, epsilon=2.0, radius_m=200.0,
                                                        rng=5, smooth=True)}
    assert home["skip"].smoothed != {e.scheme: e for e in fresh}["skip"].smoothed
