"""My trace page, section 4b: the smoothing toggle (free post-processing) under AppTest — raw vs
smoothed error of the preview, the ledger untouched, and the smoothed public download."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
from apptest_helpers import APP, TIMEOUT, draw, metric, run, session, spent
from deferred_download import call_without_session, record_downloads
from exact_csv import read_csv_exact
from streamlit.testing.v1 import AppTest

from dashboard.smoothing_section import SMOOTH_KEY

SMOOTHED_CSV = "Public release, smoothed (CSV)"
SMOOTHED_GEOJSON = "Public release, smoothed (GeoJSON)"


def error_m(value: str) -> float:
    number, unit = value.split()[0].replace(",", ""), value.split()[-1]
    return float(number) * (1000.0 if unit == "km" else 1.0)


def test_toggle_compares_raw_and_smoothed_error_for_free(fake_map):
    at = run(AppTest.from_file(APP, default_timeout=TIMEOUT))
    toggle = at.toggle(key=SMOOTH_KEY)
    assert toggle.value is True and "no" not in toggle.label.lower()
    assert toggle.help and "costs no privacy budget" in toggle.help
    raw = error_m(metric(at, "Mean error, released points").value)
    smooth = error_m(metric(at, "Mean error, smoothed").value)
    assert smooth < raw  # on the bundled sample smoothing helps: default on
    preview = session(at).previews()[-1]
    assert any("**on**" in c.value for c in at.caption)
    before = spent(at)
    at.toggle(key=SMOOTH_KEY).set_value(False)
    run(at)
    assert any("**off**" in c.value for c in at.caption)
    assert session(at).previews()[-1] is preview  # the same preview, not redrawn
    assert spent(at) == before and len(session(at).draws()) == 0


def test_download_holds_the_smoothed_points(monkeypatch, fake_map):
    downloads = record_downloads(monkeypatch)
    at = run(AppTest.from_file(APP, default_timeout=TIMEOUT))
    draw(at)
    drawn = session(at).draws()[-1]
    smoothed = session(at).smoothed(drawn)
    assert {SMOOTHED_CSV, SMOOTHED_GEOJSON} <= set(downloads)
    csv = pd.read_csv(io.StringIO(call_without_session(downloads[SMOOTHED_CSV]["data"],
                                                       timeout_s=60)))
    held = ~np.isnan(smoothed.release.lat)  # only rows that carry a release (issue 27)
    assert list(csv.columns) == ["time", "lat", "lon"] and len(csv) == held.sum()
    np.testing.assert_allclose(csv["lat"].to_numpy(), smoothed.release.lat[held])
    assert not np.allclose(csv["lat"].to_numpy(), drawn.release.lat[held])
    assert "smoothed" in downloads[SMOOTHED_CSV]["file_name"]
    raw = read_csv_exact(io.StringIO(call_without_session(
        downloads["Public release (CSV)"]["data"], timeout_s=60)))
    np.testing.assert_array_equal(raw["lat"].to_numpy(),
                                  drawn.release.lat[~np.isnan(drawn.release.lat)])
    cost = spent(at)
    next(b for b in at.get("download_button") if b.label == SMOOTHED_CSV).click()
    run(at)
    assert spent(at) == cost and session(at).downloaded(drawn.person) == (drawn.token,)
    downloads.clear()
    at.toggle(key=SMOOTH_KEY).set_value(False)
    run(at)
    assert SMOOTHED_CSV not in downloads and "Public release (CSV)" in downloads
