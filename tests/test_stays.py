"""Stay-point detection and place suggestion against hand-built trajectories and a brute-force
reference written from the textbook definition (Li et al. 2008)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from lmdk_core import ParameterError, detect_stays, suggest_places

LAT0, LON0 = 39.9087, 116.3975
T0 = pd.Timestamp("2024-03-07T00:00:00Z")
M_PER_DEG = math.pi * 6_371_008.8 / 180.0


def hav(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Independent scalar haversine (metres) for the reference."""
    r = 6_371_008.8
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dl = math.radians(lon2 - lon1)
    a = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * r * math.asin(math.sqrt(min(1.0, a)))


def brute_force(
    ts: list[float], lat: list[float], lon: list[float], r: float, t_min: float
) -> list[tuple[int, int]]:
    """Textbook stay-point scan, one point at a time: inclusive (first, last) index pairs."""
    n, i, out = len(ts), 0, []
    while i < n:
        j = i + 1
        while j < n and hav(lat[i], lon[i], lat[j], lon[j]) <= r:
            j += 1
        if ts[j - 1] - ts[i] >= t_min:
            out.append((i, j - 1))
            i = j
        else:
            i += 1
    return out


def frame(sec, east_m, north_m, uid=None) -> pd.DataFrame:
    """Trajectory at metric offsets from (LAT0, LON0), times in seconds after T0."""
    east_m, north_m = np.asarray(east_m, float), np.asarray(north_m, float)
    df = pd.DataFrame(
        {
            "time": T0 + pd.to_timedelta(np.asarray(sec, dtype=np.int64), unit="s"),
            "lat": LAT0 + north_m / M_PER_DEG,
            "lon": LON0 + east_m / (M_PER_DEG * math.cos(math.radians(LAT0))),
        }
    )
    if uid is not None:
        df.insert(0, "uid", uid)
    return df


def random_trajectory(seed: int, n_segments: int = 12) -> pd.DataFrame:
    """Alternating noisy stops (noise big enough to cross the radius sometimes) and walks."""
    rng = np.random.default_rng(seed)
    sec, e, nn = [], [], []
    t, pos = 0, np.zeros(2)
    for k in range(n_segments):
        m = int(rng.integers(1, 40))
        dt = rng.integers(1, 120, size=m)
        times = t + np.cumsum(dt)
        if k % 2 == 0:  # stop with GPS noise
            xy = pos + rng.normal(0, rng.uniform(5, 45), size=(m, 2))
        else:  # walk
            xy = pos + np.cumsum(rng.normal(0, rng.uniform(10, 150), size=(m, 2)), axis=0)
            pos = xy[-1]
        sec.extend(times)
        e.extend(xy[:, 0])
        nn.extend(xy[:, 1])
        t = int(times[-1])
    return frame(sec, e, nn)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize(
    ("radius", "t_min"), [(50.0, 120.0), (100.0, 600.0), (100.0, 0.0), (30.0, 300.0)]
)
def test_matches_brute_force(seed: int, radius: float, t_min: float) -> None:
    df = random_trajectory(seed)
    ts = ((df["time"] - T0).dt.total_seconds()).tolist()
    ref = brute_force(ts, df["lat"].tolist(), df["lon"].tolist(), radius, t_min)
    got = detect_stays(df, stay_radius_m=radius, min_duration_s=t_min)
    assert len(got) == len(ref)
    for row, (i, k) in zip(got.itertuples(), ref, strict=True):
        assert row.start == df["time"].iloc[i] and row.end == df["time"].iloc[k]
        assert row.n_points == k - i + 1
        assert row.duration_s == pytest.approx(ts[k] - ts[i])
        assert row.lat == pytest.approx(df["lat"].iloc[i : k + 1].mean(), abs=1e-9)
        assert row.lon == pytest.approx(df["lon"].iloc[i : k + 1].mean(), abs=1e-9)


@given(
    st.lists(
        st.tuples(st.integers(0, 400), st.floats(-150, 150), st.floats(-150, 150)),
        min_size=0,
        max_size=40,
    ),
    st.sampled_from([0.0, 60.0, 600.0]),
)
@example(steps=[(0, 0.0, 0.0), (0, 0.0, 101.0)], t_min=0.0)  # twin timestamps, 101 m apart
def test_matches_brute_force_property(steps: list, t_min: float) -> None:
    """Arbitrary small trajectories, repeated timestamps included, on a ~100 m scale."""
    sec = np.cumsum([dt for dt, _, _ in steps]).astype(np.int64)
    df = frame(sec, [x for _, x, _ in steps], [y for _, _, y in steps])
    ref = brute_force(
        sec.astype(float).tolist(), df["lat"].tolist(), df["lon"].tolist(), 100.0, t_min
    )
    got = detect_stays(df, stay_radius_m=100.0, min_duration_s=t_min)
    assert list(zip(got["start"], got["end"], got["n_points"], strict=True)) == [
        (df["time"].iloc[i], df["time"].iloc[k], k - i + 1) for i, k in ref
    ]


def test_known_stays_found_exactly() -> None:
    """Stop 20 min at A, drive, 15 min at B, drive, 5 min at C (too short), stay at D to the end."""
    rng = np.random.default_rng(1)
    parts = []  # (seconds, east, north)
    t = 0

    def stop(x: float, y: float, minutes: float) -> tuple[int, int]:
        nonlocal t
        sec = t + np.arange(0, minutes * 60 + 1, 30)
        parts.append((sec, x + rng.uniform(-8, 8, sec.size), y + rng.uniform(-8, 8, sec.size)))
        t = int(sec[-1])
        return int(sec[0]), int(sec[-1])

    def drive(x0: float, y0: float, x1: float, y1: float) -> None:
        nonlocal t
        d = math.hypot(x1 - x0, y1 - y0)
        # 10 m/s, a fix every 10 s (100 m apart), none within 150 m of either end
        sec = t + np.arange(15, d / 10.0 - 14, 10)
        f = (sec - t) / (d / 10.0)
        parts.append((sec, x0 + f * (x1 - x0), y0 + f * (y1 - y0)))
        t += math.ceil(d / 10.0)

    a = stop(0, 0, 20)
    drive(0, 0, 2000, 0)
    b = stop(2000, 0, 15)
    drive(2000, 0, 2000, 1500)
    stop(2000, 1500, 5)
    drive(2000, 1500, 0, 1500)
    d = stop(0, 1500, 30)
    sec, e, n = (np.concatenate(x) for x in zip(*parts, strict=True))
    got = detect_stays(frame(sec, e, n, uid="u"))

    assert list(got.columns) == ["uid", "lat", "lon", "start", "end", "duration_s", "n_points"]
    assert len(got) == 3
    for row, (s0, s1), (x, y) in zip(got.itertuples(), [a, b, d], [(0, 0), (2000, 0), (0, 1500)],
                                          strict=True):
        assert row.start == T0 + pd.Timedelta(seconds=s0)
        assert row.end == T0 + pd.Timedelta(seconds=s1)
        assert row.duration_s == s1 - s0
        assert row.n_points == (s1 - s0) // 30 + 1
        true_lat = LAT0 + y / M_PER_DEG
        true_lon = LON0 + x / (M_PER_DEG * math.cos(math.radians(LAT0)))
        assert hav(row.lat, row.lon, true_lat, true_lon) < 5.0
    assert str(got["start"].dtype) == "datetime64[ns, UTC]"


@pytest.mark.parametrize(("t_min", "expected"), [(599.999, 1), (600.0, 1), (600.001, 0)])
def test_min_duration_boundary(t_min: float, expected: int) -> None:
    df = frame([0, 300, 600, 700], [0, 5, -5, 5000], [0, 5, 5, 0])
    got = detect_stays(df, stay_radius_m=100, min_duration_s=t_min)
    assert len(got) == expected
    if expected:
        assert got["duration_s"].iloc[0] == 600.0 and got["n_points"].iloc[0] == 3


def test_run_reaching_end_of_trajectory_counts() -> None:
    got = detect_stays(frame([0, 5000, 5010, 5700], [-9000, 0, 3, 0], [0, 0, 0, 4]))
    assert len(got) == 1 and got["n_points"].iloc[0] == 3 and got["duration_s"].iloc[0] == 700.0


def test_radius_boundary_is_inclusive_side() -> None:
    # 99 m stays inside a 100 m radius, 101 m breaks the run before 600 s are reached
    inside = detect_stays(frame([0, 300, 600], [0, 99, 0], [0, 0, 0]))
    outside = detect_stays(frame([0, 300, 600], [0, 101, 0], [0, 0, 0]))
    assert len(inside) == 1 and len(outside) == 0


def test_empty_input() -> None:
    empty = frame([], [], [])
    got = detect_stays(empty)
    assert got.empty
    assert list(got.columns) == ["lat", "lon", "start", "end", "duration_s", "n_points"]
    places = suggest_places(empty)
    assert places.empty
    assert list(places.columns) == [
        "lat", "lon", "total_duration_s", "visits", "suggested_radius_m"
    ]


def test_users_are_separate_and_order_does_not_matter() -> None:
    # u1 and u2 each stand still for 400 s at the same spot: neither alone reaches 600 s
    u1 = frame([0, 200, 400], [0, 0, 0], [0, 0, 0], uid="u1")
    u2 = frame([500, 700, 900], [0, 0, 0], [0, 0, 0], uid="u2")
    assert detect_stays(pd.concat([u1, u2])).empty
    assert len(detect_stays(pd.concat([u1, u2]).drop(columns="uid"))) == 1

    df = random_trajectory(3).assign(uid="x")
    df2 = random_trajectory(4).assign(uid="y")
    both = pd.concat([df, df2], ignore_index=True)
    shuffled = both.sample(frac=1.0, random_state=0)
    pd.testing.assert_frame_equal(detect_stays(both), detect_stays(shuffled))
    solo = pd.concat([detect_stays(df), detect_stays(df2)], ignore_index=True)
    pd.testing.assert_frame_equal(detect_stays(both), solo)


def test_bad_arguments() -> None:
    df = frame([0, 10], [0, 0], [0, 0])
    with pytest.raises(ParameterError, match="stay_radius_m"):
        detect_stays(df, stay_radius_m=-1)
    with pytest.raises(ParameterError, match="min_duration_s"):
        detect_stays(df, min_duration_s=float("nan"))
    with pytest.raises(ParameterError, match="lon"):
        detect_stays(df.drop(columns="lon"))
    with pytest.raises(ParameterError, match="finite"):
        detect_stays(df.assign(lat=[np.nan, 0.0]))
    with pytest.raises(ParameterError, match="top"):
        suggest_places(df, top=0)


def test_suggest_places_ranks_by_dwell_and_merges_visits() -> None:
    """Home (3 long visits, spots 40 m apart), shop 600 m away (2 short visits), park once."""
    rng = np.random.default_rng(7)
    places = {"home": (0.0, 0.0), "shop": (600.0, 0.0), "park": (0.0, -900.0)}
    visits = [("home", 0, 120), ("shop", 130, 20), ("home", 160, 90), ("park", 260, 45),
              ("shop", 320, 15), ("home", 340, 100)]
    sec, e, n = [], [], []
    expected = {k: 0.0 for k in places}
    for name, start_min, minutes in visits:
        s = start_min * 60 + np.arange(0, minutes * 60 + 1, 20)
        x, y = places[name]
        spot = rng.uniform(-20, 20, size=2)
        sec.append(s)
        e.append(x + spot[0] + rng.normal(0, 6, s.size))
        n.append(y + spot[1] + rng.normal(0, 6, s.size))
        expected[name] += minutes * 60
    df = frame(np.concatenate(sec), np.concatenate(e), np.concatenate(n))
    got = suggest_places(df)

    assert len(got) == 3
    assert list(got["visits"]) == [3, 1, 2]  # home, park (45 min), shop (35 min in total)
    assert got["total_duration_s"].tolist() == [expected[k] for k in ("home", "park", "shop")]
    for row, name in zip(got.itertuples(), ["home", "park", "shop"], strict=True):
        x, y = places[name]
        assert hav(row.lat, row.lon, LAT0 + y / M_PER_DEG,
                   LON0 + x / (M_PER_DEG * math.cos(math.radians(LAT0)))) < 30.0
        assert row.suggested_radius_m % 10 == 0 and 20 <= row.suggested_radius_m <= 60
    assert len(suggest_places(df, top=2)) == 2
    # merge_m = 0: every visit is its own candidate
    assert len(suggest_places(df, merge_m=0.0, top=10)) == 6
