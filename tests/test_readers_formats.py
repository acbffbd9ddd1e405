"""read_trajectories on GeoLife .plt (file, tree), T-Drive, GPX, Parquet and mixed directories."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pandas as pd
import pytest

from lmdk_core import DataWarning, ParameterError, TrajectoryFormatError, read_trajectories

PLT_HEADER = (
    "Geolife trajectory\nWGS 84\nAltitude is in Feet\nReserved 3\n"
    "0,2,255,My Track,0,0,2,8421376\n0\n"
)


def utc(*stamps) -> list[pd.Timestamp]:
    return [pd.Timestamp(s, tz="UTC") for s in stamps]
GEOLIFE_EPOCH = pd.Timestamp("1899-12-30", tz="UTC")


def plt_text(points) -> str:
    """GeoLife lines from (lat, lon, alt_ft, time) with the days field computed independently."""
    lines = []
    for lat, lon, alt, t in points:
        t = pd.Timestamp(t, tz="UTC")
        days = (t - GEOLIFE_EPOCH) / pd.Timedelta(days=1)
        lines.append(f"{lat},{lon},0,{alt},{days:.10f},{t:%Y-%m-%d},{t:%H:%M:%S}")
    return PLT_HEADER + "\n".join(lines) + "\n"


PTS = [
    (39.984702, 116.318417, 492, "2008-10-23 02:53:04"),
    (39.984683, 116.318450, 491, "2008-10-23 02:53:10"),
    (39.984686, 116.318417, -777, "2008-10-23 02:53:15"),
]


def test_geolife_single_file(tmp_path):
    path = tmp_path / "20081023025304.plt"
    path.write_text(plt_text(PTS))
    df = read_trajectories(path)
    assert df["lat"].tolist() == [p[0] for p in PTS] and df["lon"].tolist() == [p[1] for p in PTS]
    assert df["altitude_ft"].tolist() == [p[2] for p in PTS]
    assert set(df["uid"]) == {"20081023025304"}
    # independent reference: the file's own "days since 1899-12-30" field
    raw = pd.read_csv(path, skiprows=6, header=None)
    from_days = GEOLIFE_EPOCH + pd.to_timedelta(raw[4], unit="D")
    assert np.abs((df["time"] - from_days).dt.total_seconds()).max() < 0.01
    assert "days" not in df.columns and "zero" not in df.columns


def test_geolife_tree_uses_folder_names_as_users_and_skips_labels(tmp_path):
    root = tmp_path / "Geolife Trajectories 1.3" / "Data"
    for user, files in {"000": 2, "001": 1}.items():
        traj = root / user / "Trajectory"
        traj.mkdir(parents=True)
        for k in range(files):
            shifted = [(a, b, c, pd.Timestamp(t) + pd.Timedelta(hours=k)) for a, b, c, t in PTS]
            (traj / f"2008102{k}.plt").write_text(plt_text(shifted))
    (root / "001" / "labels.txt").write_text(
        "Start Time\tEnd Time\tTransportation Mode\n2008/10/23 02:53:04\t2008/10/23 03:00:00\tbus\n"
    )
    with pytest.warns(DataWarning, match="labels.txt"):
        df = read_trajectories(tmp_path / "Geolife Trajectories 1.3")
    assert df.groupby("uid").size().to_dict() == {"000": 6, "001": 3}
    one = read_trajectories(root / "000" / "Trajectory" / "20081020.plt")  # one file of the tree
    assert set(one["uid"]) == {"000"}


def test_tdrive_longitude_comes_before_latitude(tmp_path):
    path = tmp_path / "366.txt"
    path.write_text(
        "366,2008-02-02 13:33:52,116.36422,39.88781\n366,2008-02-02 13:37:16,116.37481,39.88782\n"
    )
    for df in (read_trajectories(path), read_trajectories(path, format="t-drive")):
        assert df["lat"].tolist() == [39.88781, 39.88782]
        assert df["lon"].tolist() == [116.36422, 116.37481]
        assert df["uid"].tolist() == ["366", "366"]
        assert df["time"].tolist() == utc("2008-02-02 13:33:52", "2008-02-02 13:37:16")


def test_txt_with_a_header_is_read_as_csv(tmp_path):
    path = tmp_path / "export.txt"
    path.write_text("user\ttime\tlat\tlon\nz\t2020-01-01T00:00:00\t1\t2\n")
    df = read_trajectories(path)
    assert df["uid"].tolist() == ["z"] and df["lat"].tolist() == [1.0]


GPX11 = """<?xml version="1.0" encoding="UTF-8"?>
<gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1">
  <wpt lat="1" lon="1"><name>not a track point</name></wpt>
  <trk><name>Morning</name>
    <trkseg>
      <trkpt lat="47.3769" lon="8.5417"><ele>408.5</ele><time>2020-06-01T06:00:00Z</time></trkpt>
      <trkpt lat="47.3770" lon="8.5420"><time>2020-06-01T06:00:10Z</time></trkpt>
    </trkseg>
    <trkseg>
      <trkpt lat="47.3780" lon="8.5430"><time>2020-06-01T06:05:00+01:00</time></trkpt>
    </trkseg>
  </trk>
  <trk>
    <trkseg><trkpt lat="-33.9" lon="151.2"><time>2020-06-02T00:00:00Z</time></trkpt></trkseg>
  </trk>
</gpx>
"""


@pytest.mark.parametrize(
    "text",
    [
        GPX11,
        GPX11.replace("GPX/1/1", "GPX/1/0").replace('version="1.1"', 'version="1.0"'),
        GPX11.replace(' xmlns="http://www.topografix.com/GPX/1/1"', ""),
        GPX11.replace('xmlns="', 'xmlns:g="')
        .replace("<", "<g:")
        .replace("<g:/", "</g:")
        .replace("<g:?", "<?"),
    ],
    ids=["gpx11", "gpx10", "no-namespace", "prefixed"],
)
def test_gpx_tracks_segments_and_points(tmp_path, text):
    path = tmp_path / "ride.gpx"
    path.write_text(text)
    df = read_trajectories(path)
    assert set(df["uid"]) == {"ride"}
    assert len(df) == 4  # the waypoint is not a track point
    expected_times = utc(
        "2020-06-01T05:05:00Z",
        "2020-06-01T06:00:00Z",
        "2020-06-01T06:00:10Z",
        "2020-06-02T00:00:00Z",
    )
    assert df["time"].tolist() == expected_times
    assert df["lat"].tolist() == [47.3780, 47.3769, 47.3770, -33.9]
    assert df["track"].tolist() == ["Morning", "Morning", "Morning", "track 2"]
    assert df["segment"].tolist() == [2, 1, 1, 1]
    assert df["ele"].iloc[1] == 408.5 and np.isnan(df["ele"].iloc[2])


def test_gpx_upload_without_name_is_sniffed():
    df = read_trajectories(io.BytesIO(GPX11.encode()))
    assert len(df) == 4


def test_parquet_with_aliases_and_time_types(tmp_path):
    naive = pd.DataFrame(
        {
            "User": ["a", "a", "b"],
            "Timestamp": pd.to_datetime(["2020-01-02", "2020-01-01", "2020-01-01"]),
            "Latitude": [1.0, 2.0, 3.0],
            "lng": [4.0, 5.0, 6.0],
            "speed": [1, 2, 3],
        }
    )
    naive.to_parquet(tmp_path / "n.parquet")
    df = read_trajectories(tmp_path / "n.parquet")
    assert df["uid"].tolist() == ["a", "a", "b"]
    assert df["time"].tolist() == utc("2020-01-01", "2020-01-02", "2020-01-01")
    assert df["lat"].tolist() == [2.0, 1.0, 3.0] and df["speed"].tolist() == [2, 1, 3]

    aware = naive.assign(Timestamp=naive["Timestamp"].dt.tz_localize("Asia/Shanghai"))
    aware.to_parquet(tmp_path / "a.parquet")
    got = read_trajectories(tmp_path / "a.parquet")["time"]
    days = ["2020-01-01", "2020-01-02", "2020-01-01"]
    shanghai = [pd.Timestamp(t, tz="Asia/Shanghai") for t in days]
    assert got.tolist() == [t.tz_convert("UTC") for t in shanghai]

    epoch = pd.DataFrame(
        {"uid": [7, 7], "time": [1_600_000_000, 1_600_000_001], "lat": [0.0] * 2, "lon": [0.0] * 2}
    )
    epoch.set_index("uid").to_parquet(tmp_path / "e.parquet")  # the uid is a named index
    e = read_trajectories(tmp_path / "e.parquet")
    assert e["uid"].tolist() == ["7", "7"]
    expected = [pd.Timestamp(1_600_000_000 + k, unit="s", tz="UTC") for k in (0, 1)]
    assert e["time"].tolist() == expected


def test_parquet_upload_by_magic_bytes(tmp_path):
    buf = io.BytesIO()
    one = {"uid": ["x"], "time": ["2020-01-01T00:00:00Z"], "lat": [1.0], "lon": [2.0]}
    pd.DataFrame(one).to_parquet(buf)
    df = read_trajectories(io.BytesIO(buf.getvalue()))
    assert df["uid"].tolist() == ["x"] and df["time"].tolist() == utc("2020-01-01")


def test_directory_of_mixed_formats_equals_union_of_files(tmp_path):
    d = tmp_path / "mixed"
    (d / "sub").mkdir(parents=True)
    (d / "a.csv").write_text(
        "uid,time,lat,lon,place\n"
        "u1,2020-01-01T00:00:00Z,1,2,home\nu1,2020-01-01T00:01:00Z,1,2,home\n"
    )
    (d / "sub" / "t.txt").write_text("42,2008-02-02 13:33:52,116.36,39.88\n")
    (d / "r.gpx").write_text(GPX11)
    (d / "x.plt").write_text(plt_text(PTS))
    t = pd.to_datetime(["2020-01-01T00:00:30Z"])
    pq = {"uid": ["u1"], "time": t, "lat": [3.0], "lon": [4.0]}
    pd.DataFrame(pq).to_parquet(d / "p.parquet")
    (d / ".hidden.csv").write_text("garbage")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df = read_trajectories(d)
    files = [d / "a.csv", d / "sub" / "t.txt", d / "r.gpx", d / "x.plt", d / "p.parquet"]
    ref = pd.concat([read_trajectories(p) for p in files], ignore_index=True)
    ref = ref.sort_values(["uid", "time"], kind="stable").reset_index(drop=True)
    pd.testing.assert_frame_equal(df[ref.columns], ref)
    assert df.groupby("uid").size().to_dict() == {"42": 1, "r": 4, "u1": 3, "x": 3}
    # the Parquet point is sorted between the two CSV points
    assert df.loc[df.uid == "u1", "lat"].tolist() == [1.0, 3.0, 1.0]


def test_duplicates_across_files_are_reported(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    for name in ("one.csv", "two.csv"):
        (d / name).write_text("uid,time,lat,lon\nu,2020-01-01T00:00:00Z,1,2\n")
    with pytest.warns(DataWarning, match="across files.*dropped 1 row"):
        df = read_trajectories(d)
    assert len(df) == 1


def test_format_argument(tmp_path):
    path = tmp_path / "data.dat"
    path.write_text("lat,lon,time\n1,2,2020-01-01\n")
    assert len(read_trajectories(path, format="csv")) == 1
    assert len(read_trajectories(path)) == 1  # text content sniffed as CSV
    with pytest.raises(ParameterError, match="unknown format 'xls'"):
        read_trajectories(path, format="xls")
    d = tmp_path / "dir"
    d.mkdir()
    (d / "a.csv").write_text("lat,lon,time\n1,2,2020-01-01\n")
    (d / "b.plt").write_text(plt_text(PTS))
    with pytest.warns(DataWarning, match="b.plt"):
        only_csv = read_trajectories(d, format="csv")
    assert set(only_csv["uid"]) == {"a"}


def test_directory_batches_equal_file_by_file_reading(tmp_path):
    """GeoLife trees and T-Drive folders are parsed in one go; the result equals per-file reads."""
    root = tmp_path / "Data"
    files = []
    for u in range(3):
        traj = root / f"{u:03d}" / "Trajectory"
        traj.mkdir(parents=True)
        for k in range(4):
            day = pd.Timedelta(days=k)
            shifted = [(a + u / 100, b, c, pd.Timestamp(t) + day) for a, b, c, t in PTS]
            text = plt_text(shifted)
            if k == 1:
                text = text.replace("\n39.9847", "\n\n39.9847", 1)  # a blank line inside the body
            (traj / f"f{k}.plt").write_text(text)
            files.append(traj / f"f{k}.plt")
    taxis = tmp_path / "taxi"
    taxis.mkdir()
    for t in range(3):
        (taxis / f"{t}.txt").write_text(
            f"{t},2008-02-02 13:33:5{t},116.36,39.88\n{t},2008-02-02 13:40:00,116.37,39.89"
        )
        files.append(taxis / f"{t}.txt")
    df = read_trajectories(tmp_path)
    ref = pd.concat([read_trajectories(f) for f in files], ignore_index=True)
    ref = ref.sort_values(["uid", "time"], kind="stable").reset_index(drop=True)
    pd.testing.assert_frame_equal(df[ref.columns], ref)
    sizes = {"000": 12, "001": 12, "002": 12, "0": 2, "1": 2, "2": 2}
    assert df.groupby("uid").size().to_dict() == sizes


def test_extra_column_dtypes_survive(tmp_path):
    df = pd.DataFrame(
        {
            "uid": ["a", "a"],
            "time": pd.to_datetime(["2020-01-02", "2020-01-01"], utc=True),
            "lat": [1.0, 2.0],
            "lon": [3.0, 4.0],
            "count": pd.array([1, None], dtype="Int64"),
            "mode": pd.Categorical(["walk", "bus"]),
        }
    )
    df.to_parquet(tmp_path / "x.parquet")
    got = read_trajectories(tmp_path / "x.parquet")
    assert str(got["count"].dtype) == "Int64" and isinstance(got["mode"].dtype, pd.CategoricalDtype)
    assert got["mode"].tolist() == ["bus", "walk"] and got["count"].isna().tolist() == [True, False]


@pytest.mark.parametrize("tz", [None, "Asia/Shanghai"])
@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_parquet_time_column_of_any_unit_reads_as_utc_nanoseconds(tmp_path, unit, tz):
    t = np.array(["2024-03-07T00:00:00", "2024-03-07T00:30:00", "1600-01-01"], "datetime64[s]")
    time = pd.DatetimeIndex(t[:2].astype(f"datetime64[{unit}]"))
    time = time.tz_localize(tz) if tz else time
    pd.DataFrame({"time": time, "lat": [1.0, 2.0], "lon": [3.0, 4.0]}).to_parquet(tmp_path / "p.pq")
    got = read_trajectories(tmp_path / "p.pq")["time"]
    assert str(got.dtype) == "datetime64[ns, UTC]"
    first = pd.Timestamp("2024-03-07T00:00:00", tz=tz or "UTC")
    assert got.tolist() == [first, first + pd.Timedelta(minutes=30)]
    assert (got.iloc[1] - got.iloc[0]).total_seconds() == 1800.0
    if unit != "ns":  # a coarse unit holds dates the nanosecond range cannot: named, not wrapped
        old = pd.DatetimeIndex(t[1:].astype(f"datetime64[{unit}]"))
        pd.DataFrame({"time": old, "lat": [1.0, 2.0], "lon": [3.0, 4.0]}).to_parquet(
            tmp_path / "o.pq"
        )
        with pytest.raises(TrajectoryFormatError, match=r"row 2: time '1600-01-01.*supported"):
            read_trajectories(tmp_path / "o.pq")
