"""Event extraction against straightforward loop references, and the taxi generator."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lmdk_core as lm
from lmdk_core.errors import ParameterError
from lmdk_core.patterns import GridRegions, PlaceRegions, region_events, threshold_events
from lmdk_core.patterns.taxi import TDRIVE_FACTS, hotspot_regions, taxi_trajectories

PLACES = [lm.Place("P0", 40.0, 116.0, 150), lm.Place("P1", 40.0, 116.004, 150)]
# ~341 m apart: a point is in P0, in P1, or in neither


def _reference(lat, lon, secs, regions, dwell_s):
    rid = regions.assign(np.array(lat), np.array(lon))
    out = []
    start = None
    for i, r in enumerate(rid):
        new_visit = i == 0 or r != rid[i - 1]
        if new_visit:
            if i > 0 and rid[i - 1] >= 0:
                out.append((i, f"leave:{regions.names[rid[i - 1]]}"))
            start = i
            if r >= 0:
                out.append((i, f"enter:{regions.names[r]}"))
        if r >= 0 and secs[i] - secs[start] >= dwell_s and (
                i == start or secs[i - 1] - secs[start] < dwell_s):
            out.append((i, f"dwell:{regions.names[r]}"))
    return sorted(out)


@settings(max_examples=60)
@given(st.lists(st.tuples(st.sampled_from([0.0, 0.002, 0.004, 0.01]), st.integers(1, 400)),
                min_size=1, max_size=25))
def test_region_events_match_loop_reference(steps):
    regions = PlaceRegions.from_places(PLACES)
    lon = [116.0 + s[0] for s in steps]
    lat = [40.0] * len(steps)
    secs = list(np.cumsum([s[1] for s in steps]))
    traj = pd.DataFrame({"uid": "u", "time": pd.to_datetime(secs, unit="s", utc=True),
                         "lat": lat, "lon": lon})
    s = region_events(traj, regions, kinds=("enter", "leave", "dwell"), dwell_s=300)
    got = sorted((int(t), s.types[c]) for t, c in zip(s.tick, s.etype, strict=True))
    assert got == _reference(lat, lon, secs, regions, 300)


def test_grid_assign_and_sample_round_trip():
    g = GridRegions(40.0, 116.0, 500.0, 4, 5)
    codes = np.arange(20)
    lat, lon = g.sample(codes, rng=1)
    np.testing.assert_array_equal(g.assign(lat, lon), codes)
    assert g.assign(np.array([39.0]), np.array([116.0]))[0] == -1
    with pytest.raises(ParameterError):
        GridRegions(40.0, 116.0, 1.0, 2000, 2000)


def test_place_sample_stays_inside():
    regions = PlaceRegions.from_places(PLACES)
    lat, lon = regions.sample(np.repeat([0, 1], 500), rng=2)
    np.testing.assert_array_equal(regions.assign(lat, lon), np.repeat([0, 1], 500))


def test_threshold_events_reference():
    x = [0.0, 2.0, 1.0, 3.0, 0.5]
    s = threshold_events(x, np.arange(5) * 1_000_000_000, [1.0, 2.5])
    got = [(int(t), s.types[c]) for t, c in zip(s.tick, s.etype, strict=True)]
    assert got == [(1, "up:1"), (3, "up:2.5"), (4, "down:1"), (4, "down:2.5")]
    with pytest.raises(ParameterError):
        threshold_events([0.0, np.nan], [0, 1], [1.0])


def test_bad_inputs_are_clear_errors():
    with pytest.raises(ParameterError, match="missing"):
        region_events(pd.DataFrame({"lat": [1.0]}), PLACES)
    with pytest.raises(ParameterError, match="kinds"):
        region_events(pd.DataFrame({"time": [0], "lat": [1.0], "lon": [1.0]}), PLACES,
                      kinds=("stay",))
    with pytest.raises(ParameterError, match="unique"):
        PlaceRegions.from_places([PLACES[0], PLACES[0]])


def test_coarsen_collapses_per_slot():
    traj = pd.DataFrame({"uid": "u", "time": pd.to_datetime([0, 10, 20, 700], unit="s", utc=True),
                         "lat": 40.0, "lon": [116.0, 116.004, 116.0, 116.004]})
    s = region_events(traj, PLACES).coarsen(600)
    assert s.n_ticks == 2
    assert sorted((int(t), s.types[c]) for t, c in zip(s.tick, s.etype, strict=True)) == [
        (0, "enter:P0"), (0, "enter:P1"), (1, "enter:P1")]


def test_taxi_generator_is_deterministic_and_tdrive_shaped():
    a = taxi_trajectories(30, days=1)
    b = taxi_trajectories(30, days=1)
    pd.testing.assert_frame_equal(a, b)
    assert a["uid"].nunique() == 30
    gaps = a.groupby("uid", observed=True)["time"].diff().dt.total_seconds().dropna()
    assert 150 < gaps[gaps < 1000].median() < 200  # ~177 s sampling
    assert (gaps > 0).all()
    assert a["time"].min() >= pd.Timestamp(TDRIVE_FACTS["start"], tz="UTC")
    events = region_events(a, hotspot_regions())
    assert len(events) > 100


def test_readme_patterns_example_runs_and_its_comments_hold(capsys):
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Pattern-level privacy for event streams", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    # issue 24 finding 1: the paired types are protected too, ε/m split over each pair
    assert ("{'leave:Home': 0.5, 'enter:Home': 0.5, 'enter:Clinic': 0.5, 'leave:Clinic': 0.5}"
            in out)
    assert "enter:Home is protected too because it pairs with leave:Home" in out
    assert "Quality(tp=" in out


def _disc_radius_fraction(regions, lat, lon, code):
    d = lm.haversine_m(lat, lon, regions.lat[code], regions.lon[code])
    return (d / regions.place_radius_m[code]) ** 2  # uniform in the disc <=> (r/R)^2 ~ U(0, 1)


def test_place_sampler_is_uniform_in_the_disc_ks():
    from scipy import stats

    regions = PlaceRegions.from_places(PLACES)
    lat, lon = regions.sample(np.zeros(20_000, dtype=int), rng=11)
    u = _disc_radius_fraction(regions, lat, lon, 0)
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    east, north = lm.geo.degrees_to_metres(regions.lat[0], regions.lon[0], lat, lon)
    angle = (np.arctan2(north, east) + np.pi) / (2 * np.pi)
    assert stats.kstest(angle, "uniform").pvalue > 1e-3
    # the same test rejects a sampler with a uniform radius (mass piles up at the centre)
    rng = np.random.default_rng(12)
    wrong = rng.random(20_000) ** 2
    assert stats.kstest(wrong, "uniform").pvalue < 1e-6


def test_grid_sampler_is_uniform_in_the_cell_ks():
    from scipy import stats

    g = GridRegions(40.0, 116.0, 500.0, 3, 3)
    lat, lon = g.sample(np.full(20_000, 4), rng=13)
    east, north = lm.geo.degrees_to_metres(g.lat0, g.lon0, lat, lon)
    for x in (east / 500.0 - 1.0, north / 500.0 - 1.0):  # cell (1, 1): offsets in [0, 1)
        assert stats.kstest(x, "uniform").pvalue > 1e-3
