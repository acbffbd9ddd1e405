"""Session.smoothed: smoothing a preview or a real draw is free (the ledger does not change),
keeps the simulation label of a preview and the token of a real draw."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from traces import WALK as TRACE

from lmdk_core import ParameterError, smooth_release
from lmdk_core.export import release_to_csv
from lmdk_core.session import Drawn, Preview, ReleaseSettings, Session

HOME = np.zeros(len(TRACE), dtype=bool)
HOME[100:140] = True
SETTINGS = ReleaseSettings(epsilon=1.0, scheme="skip")


def test_smoothed_preview_is_free_and_still_a_simulation():
    s = Session(total_budget=2.0)
    p = s.preview(TRACE, HOME, SETTINGS, key="k")
    sp = s.smoothed(p)
    assert isinstance(sp, Preview) and not sp.is_real
    assert sp.release.seeded and sp.label == p.label and sp.token == p.token
    assert not np.array_equal(sp.release.lat, p.release.lat, equal_nan=True)
    np.testing.assert_array_equal(sp.release.lat, smooth_release(p.release).lat)
    assert s.smoothed(p) is sp  # kept per item and options
    assert s.smoothed(p, motion="walk") is not sp
    assert len(s.ledger("me")) == 0 and s.spent("me") == 0.0
    with pytest.raises(ParameterError):
        s.record_download(sp)  # a preview never leaves, smoothed or not


def test_smoothed_real_draw_keeps_token_and_ledger():
    s = Session(total_budget=2.0)
    d = s.draw("me", TRACE, HOME, SETTINGS, key="k")
    spent = s.spent("me")
    sd = s.smoothed(d)
    assert isinstance(sd, Drawn) and sd.is_real and sd.token == d.token
    assert s.spent("me") == spent and len(s.ledger("me")) == 1
    assert not sd.release.seeded
    csv = release_to_csv(sd.release)
    assert not csv.startswith("#")  # a real release: no simulation label
    lat = pd.read_csv(__import__("io").StringIO(csv))["lat"].to_numpy()
    held = ~np.isnan(sd.release.lat)  # only rows that carry a release (issue 27)
    np.testing.assert_allclose(lat, sd.release.lat[held])
    assert not np.allclose(lat, d.release.lat[held])
    s.record_download(sd)
    assert s.downloaded("me") == (d.token,)
    assert s.spent("me") == spent


def test_smoothed_rejects_other_objects():
    with pytest.raises(ParameterError):
        Session().smoothed(smooth_release)
