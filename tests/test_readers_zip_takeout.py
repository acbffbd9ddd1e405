"""Zip archives (GeoLife/T-Drive layouts, mixed files, safety limits); Google location history."""

from __future__ import annotations

import io
import json
import struct
import tracemalloc
import zipfile

import numpy as np
import pandas as pd
import pytest

from lmdk_core.errors import DataWarning, TrajectoryFormatError
from lmdk_core.readers import read_trajectories, takeout
from lmdk_core.readers import source as source_mod

PLT_HEADER = (
    "Geolife trajectory\nWGS 84\nAltitude is in Feet\nReserved 3\n"
    "0,2,255,My Track,0,0,2,8421376\n0\n"
)


def plt(points: list[tuple[float, float, str]]) -> str:
    rows = [f"{lat},{lon},0,492,39744.1,{t[:10]},{t[11:]}" for lat, lon, t in points]
    return PLT_HEADER + "\n".join(rows) + "\n"


def make_zip(files: dict[str, str | bytes], **kw) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, **kw) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


GEOLIFE = {
    "Geolife Trajectories 1.3/Data/000/Trajectory/20081023025304.plt": plt(
        [(39.98, 116.30, "2008-10-23 02:53:04"), (39.99, 116.31, "2008-10-23 02:53:10")]
    ),
    "Geolife Trajectories 1.3/Data/000/Trajectory/20081024020959.plt": plt(
        [(39.97, 116.32, "2008-10-24 02:09:59")]
    ),
    "Geolife Trajectories 1.3/Data/010/Trajectory/20081025000000.plt": plt(
        [(40.00, 116.40, "2008-10-25 00:00:00"), (40.01, 116.41, "2008-10-25 00:00:05")]
    ),
    "Geolife Trajectories 1.3/Data/010/labels.txt": "Start Time\tEnd Time\tTransportation Mode\n",
    "__MACOSX/Geolife Trajectories 1.3/Data/010/._labels.txt": b"\x00\x05\x16\x07",
}


def test_geolife_zip_users_come_from_folders(tmp_path):
    path = tmp_path / "geolife.zip"
    path.write_bytes(make_zip(GEOLIFE))
    with pytest.warns(DataWarning, match="skipped 1 file"):  # labels.txt: not a trajectory
        df = read_trajectories(path)
    assert sorted(df["uid"].unique()) == ["000", "010"]
    assert df.groupby("uid").size().to_dict() == {"000": 3, "010": 2}
    assert df["lat"].tolist()[:3] == [39.98, 39.99, 39.97]


def test_zip_upload_as_file_like_and_bytes():
    data = make_zip(GEOLIFE)
    upload = io.BytesIO(data)
    upload.name = "my geolife.zip"
    with pytest.warns(DataWarning):
        a = read_trajectories(upload)
    with pytest.warns(DataWarning):
        b = read_trajectories(data)
    pd.testing.assert_frame_equal(a, b)
    assert a["uid"].nunique() == 2


def test_tdrive_and_csv_mixed_in_one_zip(tmp_path):
    files = {
        "taxi/1131.txt": "1131,2008-02-02 13:30:49,116.35,39.90\n"
        "1131,2008-02-02 13:31:49,116.36,39.91\n",
        "taxi/77.txt": "77,2008-02-02 13:30:00,116.40,39.95\n",
        "phone/walk.csv": "time,lat,lon\n2024-01-01T00:00:00Z,48.1,11.5\n"
        "2024-01-01T00:01:00Z,48.2,11.6\n",
    }
    path = tmp_path / "mixed.zip"
    path.write_bytes(make_zip(files))
    df = read_trajectories(path)
    assert df.groupby("uid").size().to_dict() == {"1131": 2, "77": 1, "walk": 2}
    taxi = df[df["uid"] == "1131"]
    assert taxi["lat"].tolist() == [39.90, 39.91]  # T-Drive's lon-before-lat honoured


def test_error_inside_zip_names_member_and_line(tmp_path):
    files = {
        "d/trip.csv": "time,lat,lon\n2024-01-01T00:00:00Z,48.1,11.5\n"
        "2024-01-01T00:01:00Z,123.4,11.6\n"
    }
    path = tmp_path / "bad.zip"
    path.write_bytes(make_zip(files))
    with pytest.raises(
        TrajectoryFormatError, match=r"bad\.zip/d/trip\.csv line 3: latitude 123\.4"
    ):
        read_trajectories(path)


@pytest.mark.parametrize(
    "member", ["../evil.csv", "/etc/evil.csv", "a/../../evil.csv", "C:/evil.csv"]
)
def test_zip_path_traversal_refused(member):
    data = make_zip({member: "time,lat,lon\n2024-01-01,1,1\n"})
    with pytest.raises(TrajectoryFormatError, match="unsafe path in zip archive"):
        read_trajectories(data)


def test_zip_bomb_refused_before_decompressing():
    data = make_zip({"big.csv": b"0" * (20 * 1024**2)})  # 20 MiB of zeros: ratio ~1000
    with pytest.raises(TrajectoryFormatError, match="possible zip bomb"):
        read_trajectories(data)


def test_zip_member_count_and_size_limits(monkeypatch):
    files = {f"f{i}.csv": "time,lat,lon\n2024-01-01,1,1\n" for i in range(4)}
    monkeypatch.setattr(source_mod, "ZIP_MAX_MEMBERS", 3)
    with pytest.raises(TrajectoryFormatError, match="4 files, over the limit of 3"):
        read_trajectories(make_zip(files))
    monkeypatch.setattr(source_mod, "ZIP_MAX_MEMBERS", 100)
    with pytest.raises(TrajectoryFormatError, match="over the limit max_bytes=50"):
        read_trajectories(make_zip(files), max_bytes=50)  # 4 × 27 decompressed bytes


def test_zip_member_larger_than_declared_is_refused():
    data = bytearray(make_zip({"a.csv": "time,lat,lon\n" + "2024-01-01T00:00:00Z,1,1\n" * 50}))
    cd = data.rfind(b"PK\x01\x02")  # central directory entry: uncompressed size at offset 24
    struct.pack_into("<I", data, cd + 24, 30)
    with pytest.raises(TrajectoryFormatError, match=r"zip member|corrupt zip"):
        read_trajectories(bytes(data))


def test_encrypted_member_refused():
    data = bytearray(make_zip({"secret.csv": "time,lat,lon\n2024-01-01,1,1\n"}))
    for sig, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):  # general-purpose flag bit 0
        at = data.find(sig) + offset
        data[at] |= 0x1
    with pytest.raises(TrajectoryFormatError, match=r"secret\.csv is encrypted"):
        read_trajectories(bytes(data))


def test_corrupt_zip_is_a_clear_error():
    data = make_zip(GEOLIFE)[:200]
    with pytest.raises(TrajectoryFormatError, match="corrupt zip"):
        read_trajectories(data)


# ---------------------------------------------------------------- Google location history

RECORDS = {
    "locations": [
        {
            "latitudeE7": 399925000,
            "longitudeE7": 1163395000,
            "accuracy": 12,
            "timestamp": "2022-03-01T08:00:00.000Z",
            "source": "WIFI",
        },
        {
            "latitudeE7": 399926000,
            "longitudeE7": 1163396000,
            "accuracy": 30,
            "timestamp": "2022-03-01T10:00:00+01:00",
        },
        {"latitudeE7": 399927000, "longitudeE7": 1163397000, "timestampMs": "1646125260000"},
        # an overflowed southern/western coordinate from a pre-2018 export
        {
            "latitudeE7": 4294967296 - 338000000,
            "longitudeE7": 4294967296 - 700000000,
            "timestampMs": "1646125320000",
        },
    ]
}


def _json_file(tmp_path, name, doc):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_records_json(tmp_path):
    df = read_trajectories(_json_file(tmp_path, "Records.json", RECORDS))
    assert df["uid"].unique().tolist() == ["Records"]
    assert len(df) == 4
    times = df["time"].dt.strftime("%H:%M:%S").tolist()
    assert times == ["08:00:00", "09:00:00", "09:01:00", "09:02:00"]  # offsets converted to UTC
    np.testing.assert_allclose(df["lat"].iloc[0], 39.9925)
    assert df["kind"].eq("record").all()
    south = df.loc[df["time"] == pd.Timestamp(1646125320000, unit="ms", tz="UTC")]
    np.testing.assert_allclose(south[["lat", "lon"]].to_numpy()[0], [-33.8, -70.0])
    assert "accuracy" in df.columns


def test_records_json_duplicate_time_warns(tmp_path):
    same = {**RECORDS["locations"][1], "timestamp": "2022-03-01T09:00:00+01:00"}  # = 08:00Z
    doc = {"locations": [RECORDS["locations"][0], same]}
    with pytest.warns(DataWarning, match="dropped 1 row"):
        df = read_trajectories(_json_file(tmp_path, "Records.json", doc))
    assert len(df) == 1


def test_records_json_errors_name_the_entry(tmp_path):
    doc = {"locations": [RECORDS["locations"][0], {"longitudeE7": 1, "timestamp": "2022-01-01"}]}
    with pytest.raises(
        TrajectoryFormatError, match=r"Records\.json locations\[1\]: latitudeE7 missing"
    ):
        read_trajectories(_json_file(tmp_path, "Records.json", doc))
    doc = {"locations": [{"latitudeE7": 1200000000, "longitudeE7": 1, "timestamp": "2022-01-01"}]}
    with pytest.raises(TrajectoryFormatError, match=r"locations\[0\]: latitude 120 outside"):
        read_trajectories(_json_file(tmp_path, "Records.json", doc))


ANDROID = {
    "semanticSegments": [
        {
            "startTime": "2024-05-01T08:00:00.000+02:00",
            "endTime": "2024-05-01T09:00:00.000+02:00",
            "visit": {
                "hierarchyLevel": 0,
                "probability": 0.9,
                "topCandidate": {
                    "placeId": "x",
                    "semanticType": "HOME",
                    "probability": 0.8,
                    "placeLocation": {"latLng": "48.1371000°, 11.5754000°"},
                },
            },
        },
        {
            "startTime": "2024-05-01T09:00:00.000+02:00",
            "endTime": "2024-05-01T11:00:00.000+02:00",
            "timelinePath": [
                {"point": "48.1400000°, 11.5800000°", "time": "2024-05-01T09:10:00.000+02:00"},
                {"point": "48.1500000°, 11.5900000°", "time": "2024-05-01T09:20:00.000+02:00"},
            ],
        },
        {
            "startTime": "2024-05-01T09:00:00.000+02:00",
            "endTime": "2024-05-01T09:30:00.000+02:00",
            "activity": {
                "start": {"latLng": "48.1°, 11.5°"},
                "end": {"latLng": "48.2°, 11.6°"},
                "distanceMeters": 1500.0,
            },
        },
    ],
    "rawSignals": [
        {
            "position": {
                "LatLng": "48.1600000°, 11.6000000°",
                "accuracyMeters": 13,
                "altitudeMeters": 520.0,
                "source": "GPS",
                "timestamp": "2024-05-01T09:40:00.000+02:00",
            }
        },
        {"wifiScan": {"deliveryTime": "2024-05-01T09:41:00.000+02:00", "devicesRecords": []}},
    ],
    "userLocationProfile": {"frequentPlaces": []},
}


def test_android_timeline(tmp_path):
    df = read_trajectories(_json_file(tmp_path, "Timeline.json", ANDROID))
    assert df["kind"].tolist() == ["visit", "visit", "path", "path", "raw"]
    assert df["time"].iloc[0] == pd.Timestamp("2024-05-01T06:00:00Z")
    np.testing.assert_allclose(df[["lat", "lon"]].iloc[0], [48.1371, 11.5754])
    assert df["accuracy"].iloc[-1] == 13
    assert np.isnan(df["accuracy"].iloc[0])


def test_ios_timeline_offsets_and_geo_strings(tmp_path):
    doc = [
        {
            "startTime": "2024-05-01T08:00:00.000+02:00",
            "endTime": "2024-05-01T08:30:00.000+02:00",
            "visit": {
                "topCandidate": {"placeLocation": "geo:48.137100,11.575400", "semanticType": "Home"}
            },
        },
        {
            "startTime": "2024-05-01T10:00:00.000+02:00",
            "endTime": "2024-05-01T12:00:00.000+02:00",
            "timelinePath": [
                {"point": "geo:48.140000,11.580000", "durationMinutesOffsetFromStartTime": "12"}
            ],
        },
    ]
    path = tmp_path / "location-history.json"
    path.write_text(json.dumps(doc))
    df = read_trajectories(path)
    assert df["kind"].tolist() == ["visit", "visit", "path"]
    assert df["time"].iloc[-1] == pd.Timestamp("2024-05-01T08:12:00Z")


def test_timeline_errors(tmp_path):
    bad = json.loads(json.dumps(ANDROID))
    bad["semanticSegments"][1]["timelinePath"][1]["point"] = "somewhere"
    with pytest.raises(
        TrajectoryFormatError,
        match=r"Timeline\.json semanticSegments\[1\]\.timelinePath\[1\]: coordinates 'somewhere'",
    ):
        read_trajectories(_json_file(tmp_path, "Timeline.json", bad))
    with pytest.raises(TrajectoryFormatError, match="not a Google location history"):
        read_trajectories(_json_file(tmp_path, "other.json", {"type": "FeatureCollection"}))
    with pytest.raises(TrajectoryFormatError, match="no location points"):
        read_trajectories(_json_file(tmp_path, "Timeline.json", {"semanticSegments": []}))
    path = tmp_path / "broken.json"
    path.write_text('{"locations": [\n{"latitudeE7": 1,\n}')
    with pytest.raises(TrajectoryFormatError, match=r"broken\.json line 3: malformed JSON"):
        read_trajectories(path)


def test_takeout_detected_by_content_and_inside_zip(tmp_path):
    raw = json.dumps(RECORDS).encode()
    assert len(read_trajectories(io.BytesIO(raw))) == 4  # unnamed upload: sniffed
    data = make_zip({"Takeout/Location History/Records.json": raw})
    df = read_trajectories(data)
    assert df["uid"].unique().tolist() == ["Records"] and len(df) == 4


# ------------------------------------------ Google location history: linear reading (issue 27)


class _Watched(list):
    """A list whose iteration notes, per item, what the reader allocated and freed again while
    handling it (``tracemalloc`` peak above current): an O(1) step per record allocates a few
    small objects, whatever the record's number. Deterministic (bytes, not seconds)."""

    def __iter__(self):
        self.transient = []
        for item in list.__iter__(self):
            tracemalloc.reset_peak()
            yield item
            current, peak = tracemalloc.get_traced_memory()
            self.transient.append(peak - current)


def _transient_per_item(read, items: list) -> np.ndarray:
    watched = _Watched(items)
    tracemalloc.start()
    try:
        read(watched)
    finally:
        tracemalloc.stop()
    assert len(watched.transient) == len(items)
    return np.asarray(watched.transient)


# a step costing O(records so far) allocates >= 8 bytes × 5,000 by the end: 10x the 4 KiB bound
# (the setdefault([None] * n) defect of issue 27 reaches 80 KiB here and fails)
N_LINEAR = 5_000


def _e7_record(i: int) -> dict:
    rec = {"latitudeE7": 399925000 + i, "longitudeE7": 1163395000 - i, "accuracy": i % 40}
    ms = 1646121600000 + 1000 * i + i % 1000  # 2022-03-01T08:00:00Z + i s + i ‰ s
    if i % 2:
        rec["timestamp"] = pd.Timestamp(ms, unit="ms", tz="UTC").isoformat()
    else:
        rec["timestampMs"] = str(ms)
    if i % 3 == 0:
        rec["altitude"] = 40
    return rec


def test_records_json_reading_is_linear():
    """Each record costs the same whatever its number (the quadratic reader rebuilt a list as
    long as all records so far for every record: 385 s for a million, issue 27)."""
    out = takeout._Points()
    records = [_e7_record(i) for i in range(N_LINEAR)]
    transient = _transient_per_item(
        lambda locations: takeout._records({"locations": locations}, "Records.json", out), records
    )
    assert transient.max() < 4096, transient.argmax()
    frame = out.frame()
    assert len(frame) == N_LINEAR and frame.columns.tolist() == [
        "lat",
        "lon",
        "time",
        "kind",
        "accuracy",
        "altitude",
    ]


def test_timeline_reading_is_linear():
    """The same for the Timeline export's points (``_Points.add``), with columns that appear
    late or only on some points."""
    out = takeout._Points()
    segments = [
        {"timelinePath": [{"point": f"48.{i:07d}°, 11.5°", "time": f"2024-05-01T{i % 24:02d}:00Z"}]}
        for i in range(N_LINEAR)
    ]
    signals = [
        {
            "position": {
                "LatLng": "48.1°, 11.6°",
                "timestamp": "2024-05-02T00:00:00Z",
                **({"accuracyMeters": 5} if i % 2 else {"altitudeMeters": 500.0}),
            }
        }
        for i in range(N_LINEAR)
    ]
    doc = {"semanticSegments": segments, "rawSignals": []}
    transient = _transient_per_item(
        lambda segs: takeout._timeline({**doc, "semanticSegments": segs}, "T.json", out), segments
    )
    assert transient.max() < 4096, transient.argmax()
    doc["semanticSegments"] = []
    transient = _transient_per_item(
        lambda sigs: takeout._timeline({**doc, "rawSignals": sigs}, "T.json", out), signals
    )
    assert transient.max() < 4096, transient.argmax()
    frame = out.frame()
    assert len(frame) == 2 * N_LINEAR
    assert frame["accuracy"].isna().sum() == N_LINEAR + N_LINEAR // 2
    assert frame["altitude"].notna().sum() == N_LINEAR // 2


def test_records_json_large_file_errors_and_times(tmp_path):
    """Paths are built only for messages; timestampMs and timestamp read the same instants."""
    records = [_e7_record(i) for i in range(5000)]
    df = read_trajectories(_json_file(tmp_path, "Records.json", {"locations": records}))
    assert len(df) == 5000
    ms = df["time"].dt.tz_convert(None).to_numpy().astype("datetime64[ms]").astype(np.int64)
    i = np.arange(5000)
    np.testing.assert_array_equal(ms, 1646121600000 + 1000 * i + i % 1000)
    records[4321] = {**records[4321], "timestampMs": "soon"}
    records[4321].pop("timestamp", None)
    records[4400] = {"latitudeE7": 1}
    with pytest.raises(
        TrajectoryFormatError,
        match=r"Records\.json locations\[4321\]: timestampMs 'soon' is not epoch milliseconds",
    ):
        read_trajectories(_json_file(tmp_path, "Records.json", {"locations": records}))
    records[4321] = _e7_record(4321)
    with pytest.raises(TrajectoryFormatError, match=r"locations\[4400\]: longitudeE7 missing"):
        read_trajectories(_json_file(tmp_path, "Records.json", {"locations": records}))
    records[4400] = {**_e7_record(4400), "latitudeE7": 4294967296 - 338000000}
    records[4401] = {**_e7_record(4401), "latitudeE7": 1000000001}
    with pytest.raises(
        TrajectoryFormatError, match=r"locations\[4401\]: latitude 100.0000001 outside"
    ):
        read_trajectories(_json_file(tmp_path, "Records.json", {"locations": records}))
