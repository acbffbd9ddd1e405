"""lmdk_core.advice with smoothing on: every scheme's error is the smoothed simulation, and the
data owner's ranking (public_only=False) follows it."""

from __future__ import annotations

import math

import numpy as np
from test_smoothing import TRACE

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
