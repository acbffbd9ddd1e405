"""read_trajectories on delimited text: column recognition, time forms, uploads, gzip, repairs."""

from __future__ import annotations

import gzip
import io
import warnings
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

from lmdk_core import DataWarning, read_trajectories

ROWS = [  # uid, ISO time (UTC), lat, lon, place — deliberately unsorted
    ("b", "2021-05-01T10:00:05Z", 39.91, 116.41, "work"),
    ("a", "2021-05-01T10:00:10Z", 39.92, 116.42, "home"),
    ("a", "2021-05-01T10:00:00Z", 39.90, 116.40, "home"),
    ("b", "2021-05-01T09:59:59Z", 39.93, 116.43, "cafe"),
]


def expected_frame() -> pd.DataFrame:
    """Independent reference: the rows sorted by (uid, time) with plain Python."""
    rows = sorted(ROWS, key=lambda r: (r[0], r[1]))
    return pd.DataFrame(
        {
            "uid": [r[0] for r in rows],
            "time": pd.to_datetime([r[1] for r in rows], utc=True),
            "lat": [r[2] for r in rows],
            "lon": [r[3] for r in rows],
            "place": [r[4] for r in rows],
        }
    )


def write_csv(path, header, rows, sep=","):
    path.write_text("\n".join([sep.join(header)] + [sep.join(map(str, r)) for r in rows]) + "\n")
    return path


def utc(*stamps: str) -> list[pd.Timestamp]:
    return [pd.Timestamp(s, tz="UTC") for s in stamps]


def assert_canonical(df: pd.DataFrame) -> None:
    assert list(df.columns[:4]) == ["uid", "time", "lat", "lon"]
    assert pd.api.types.is_string_dtype(df["uid"])
    assert str(df["time"].dtype) == "datetime64[ns, UTC]"
    assert df["lat"].dtype == np.float64 and df["lon"].dtype == np.float64
    assert isinstance(df.index, pd.RangeIndex) and df.index.start == 0


def compare(df: pd.DataFrame, ref: pd.DataFrame) -> None:
    assert_canonical(df)
    pd.testing.assert_frame_equal(df, ref, check_dtype=False)
    assert str(df["time"].dtype) == "datetime64[ns, UTC]"


def test_basic_csv_is_canonical_sorted_and_keeps_extras(tmp_path):
    path = write_csv(tmp_path / "trip.csv", ["uid", "time", "lat", "lon", "place"], ROWS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # unsorted input is sorted silently: no warning
        df = read_trajectories(path)
    compare(df, expected_frame())


@pytest.mark.parametrize(
    "names",
    [
        ("UID", "Time", "LAT", "LON"),
        ("user", "timestamp", "latitude", "longitude"),
        ("user_id", "datetime", "Latitude", "lng"),
        ("id", "TIMESTAMP", "lat", "long"),
        ("taxi_id", "time", "lat", "Longitude"),
        (" uid ", " time", "lat ", " lon"),
    ],
)
def test_column_names_are_recognised_case_insensitively(tmp_path, names):
    path = write_csv(tmp_path / "t.csv", [*names, "place"], ROWS)
    compare(read_trajectories(path), expected_frame())


@pytest.mark.parametrize("sep", [",", ";", "\t", "|"])
def test_separator_is_sniffed(tmp_path, sep):
    path = write_csv(tmp_path / "t.csv", ["uid", "time", "lat", "lon", "place"], ROWS, sep=sep)
    compare(read_trajectories(path), expected_frame())


def test_epoch_seconds_integer_and_fractional(tmp_path):
    secs = [1_600_000_000, 1_600_000_030.25, 1_600_000_001.5]
    rows = [("u", s, 1.0, 2.0) for s in secs]
    path = write_csv(tmp_path / "e.csv", ["uid", "time", "lat", "lon"], rows)
    df = read_trajectories(path)
    ref = sorted(pd.Timestamp(int(s * 1000), unit="ms", tz="UTC") for s in secs)
    assert list(df["time"]) == ref


def test_epoch_milliseconds_are_recognised(tmp_path):
    ms = [1_600_000_000_123, 1_600_000_060_000]
    rows = [("u", m, 1.0, 2.0) for m in ms]
    path = write_csv(tmp_path / "e.csv", ["uid", "time", "lat", "lon"], rows)
    expected = [pd.Timestamp(m, unit="ms", tz="UTC") for m in ms]
    assert list(read_trajectories(path)["time"]) == expected


def test_iso_offsets_are_converted_to_utc_and_naive_times_taken_as_utc(tmp_path):
    rows = [("u", "2020-01-01T10:00:00+02:00", 1, 2), ("u", "2020-01-01 09:00:00", 1, 2)]
    df = read_trajectories(write_csv(tmp_path / "tz.csv", ["uid", "time", "lat", "lon"], rows))
    assert list(df["time"]) == utc("2020-01-01 08:00", "2020-01-01 09:00")


def test_non_iso_times_are_parsed_with_an_inferred_format(tmp_path):
    rows = [("u", "03/15/2020 10:00:00", 1, 2), ("u", "03/16/2020 11:30:00", 1, 2)]
    df = read_trajectories(write_csv(tmp_path / "us.csv", ["uid", "time", "lat", "lon"], rows))
    assert list(df["time"]) == utc("2020-03-15 10:00", "2020-03-16 11:30")


def test_date_and_time_columns_are_combined(tmp_path):
    rows = [
        ("u", "2008-10-23", "02:53:04", 39.9, 116.3),
        ("u", "2008-10-24", "00:00:01", 39.9, 116.3),
    ]
    path = write_csv(tmp_path / "dt.csv", ["uid", "Date", "Time", "lat", "lon"], rows)
    df = read_trajectories(path)
    assert list(df["time"]) == utc("2008-10-23 02:53:04", "2008-10-24 00:00:01")
    assert "Date" not in df.columns and "Time" not in df.columns


def test_user_ids_stay_text(tmp_path):
    rows = [("007", "2020-01-01", 1, 2), ("7", "2020-01-01", 1, 2), ("NA", "2020-01-01", 1, 2)]
    df = read_trajectories(write_csv(tmp_path / "ids.csv", ["uid", "time", "lat", "lon"], rows))
    assert sorted(df["uid"]) == ["007", "7", "NA"]


def test_single_user_file_gets_stable_default_uid_from_file_name(tmp_path):
    rows = [("2020-01-01", 1, 2), ("2020-01-02", 1, 2)]
    path = write_csv(tmp_path / "morning_run.csv", ["time", "lat", "lon"], rows)
    a, b = read_trajectories(path), read_trajectories(path)
    assert set(a["uid"]) == {"morning_run"}
    pd.testing.assert_frame_equal(a, b)
    up = read_trajectories(io.BytesIO(path.read_bytes()))  # unnamed upload
    assert set(up["uid"]) == {"upload"}


def test_uploaded_file_like_with_name_text_stream_and_bytes(tmp_path):
    data = write_csv(tmp_path / "x.csv", ["uid", "time", "lat", "lon", "place"], ROWS).read_bytes()
    upload = io.BytesIO(data)
    upload.name = "phone export.csv"  # like streamlit's UploadedFile
    upload.read(10)  # a partly consumed upload is read from the start
    compare(read_trajectories(upload), expected_frame())
    compare(read_trajectories(io.StringIO(data.decode())), expected_frame())
    compare(read_trajectories(data), expected_frame())


def test_gzip_csv_by_extension_and_by_content(tmp_path):
    data = write_csv(tmp_path / "x.csv", ["uid", "time", "lat", "lon", "place"], ROWS).read_bytes()
    gz = tmp_path / "sample.csv.gz"
    gz.write_bytes(gzip.compress(data))
    compare(read_trajectories(gz), expected_frame())
    compare(read_trajectories(io.BytesIO(gzip.compress(data))), expected_frame())


def test_bom_and_blank_lines_and_crlf(tmp_path):
    body = "\r\n".join(",".join(map(str, r)) for r in ROWS)
    text = "\ufeffuid,time,lat,lon,place\r\n\r\n" + body + "\r\n\r\n"
    path = tmp_path / "win.csv"
    path.write_bytes(text.encode("utf-8"))
    compare(read_trajectories(path), expected_frame())


def test_duplicate_timestamps_keep_first_and_warn_with_count_and_line(tmp_path):
    rows = [
        ("u", "2020-01-01T00:00:00Z", 1.0, 2.0, "first"),
        ("u", "2020-01-01T00:00:01Z", 1.0, 2.0, "x"),
        ("u", "2020-01-01T00:00:00Z", 5.0, 6.0, "dup1"),  # line 4
        ("v", "2020-01-01T00:00:00Z", 1.0, 2.0, "other user: kept"),
        ("u", "2020-01-01T00:00:00Z", 7.0, 8.0, "dup2"),
    ]
    path = write_csv(tmp_path / "dups.csv", ["uid", "time", "lat", "lon", "note"], rows)
    with pytest.warns(DataWarning) as rec:
        df = read_trajectories(path)
    msg = str(rec[0].message)
    assert "dups.csv" in msg and "dropped 2 rows" in msg and "line 4" in msg
    assert len(df) == 3
    first = df[(df.uid == "u") & (df.time == pd.Timestamp("2020-01-01", tz="UTC"))]
    assert first["note"].tolist() == ["first"] and first["lat"].tolist() == [1.0]


def test_whitespace_around_values_is_tolerated(tmp_path):
    path = tmp_path / "ws.csv"
    path.write_text("uid,time,lat,lon\n u1 , 2020-01-01 00:00:00 , 39.5 , 116.5 \n")
    df = read_trajectories(path)
    assert df["uid"].tolist() == ["u1"]
    assert df["lat"].tolist() == [39.5] and df["lon"].tolist() == [116.5]
    assert df["time"].tolist() == [pd.Timestamp("2020-01-01", tz="UTC")]


def _read_fast(path, threshold: int) -> pd.DataFrame:
    """read_trajectories(path), checking that the file is over the fast paths' ``threshold``
    (the fixture ``fast_read_threshold``) and that the streaming Arrow path (which alone
    reports ``reading``) read the whole file."""
    assert path.stat().st_size > threshold
    calls: list[tuple] = []
    df = read_trajectories(path, progress=lambda *a: calls.append(a))
    size = path.stat().st_size
    assert calls and calls[-1] == ("reading", size, size), calls
    return df


def test_large_csv_uses_fast_path_and_matches_reference(tmp_path, fast_read_threshold):
    """Above the threshold the streaming Arrow path parses; the result must equal a plain
    reconstruction (with repeated (uid, time) keys, ~7 % of rows, as at 40,000 rows over
    100,000 s)."""
    rng = np.random.default_rng(3)
    n = 4_000
    uid = rng.choice(["001", "002", "003"], n)
    secs = rng.integers(1_500_000_000, 1_500_010_000, n)
    lat, lon = rng.uniform(-90, 90, n).round(6), rng.uniform(-180, 180, n).round(6)
    time = pd.to_datetime(secs, unit="s", utc=True)
    ref = pd.DataFrame({"uid": uid, "time": time, "lat": lat, "lon": lon})
    path = tmp_path / "big.csv"
    ref.to_csv(path, index=False)
    ref = ref.drop_duplicates(["uid", "time"]).sort_values(["uid", "time"], kind="stable")
    assert len(ref) < 0.95 * n  # repeated keys to drop
    ref = ref.reset_index(drop=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        df = _read_fast(path, fast_read_threshold)
    compare(df, ref)


TIME_FORMS = {
    "date-only": lambda i: f"2020-{1 + i % 12:02d}-{1 + i % 28:02d}",
    "iso-millis": lambda i: f"2020-01-01T{i % 24:02d}:{i % 60:02d}:{i % 59:02d}.{i % 1000:03d}",
    "mixed-offsets": lambda i: (
        f"2020-01-01T{i % 24:02d}:{i % 60:02d}:00{'+01:00' if i % 2 else 'Z'}"
    ),
    "epoch-float": lambda i: f"{1.6e9 + i * 0.25:.2f}",
}


@pytest.mark.parametrize("form", TIME_FORMS)
def test_time_forms_on_the_fast_path(tmp_path, form, fast_read_threshold):
    """Files over the threshold take the Arrow path: times must match pandas' own parse of the
    text (6,000 rows: every hour, minute, second and millisecond value the forms write)."""
    times = [TIME_FORMS[form](i) for i in range(6_000)]
    path = tmp_path / "t.csv"
    path.write_text("uid,time,lat,lon\n" + "".join(f"u{i},{t},1,2\n" for i, t in enumerate(times)))
    if form == "epoch-float":  # exact decimal arithmetic, not float
        ref = pd.Series([pd.Timestamp(int(Decimal(t) * 10**9), tz="UTC") for t in times])
    else:
        ref = pd.to_datetime(pd.Series(times), utc=True, format="ISO8601")
    df = _read_fast(path, fast_read_threshold)
    # row i's time, found by its uid (a KeyError if one is missing), compared as UTC instants
    # in ns, column-wise (a list of Timestamps compared one by one is ~40x slower)
    got = df.set_index("uid")["time"].loc[[f"u{i}" for i in range(len(times))]]
    assert len(got) == len(times) and str(got.dt.tz) == "UTC"
    np.testing.assert_array_equal(_utc_ns(got), _utc_ns(ref))


def _utc_ns(times: pd.Series) -> np.ndarray:
    """A tz-aware series' instants as UTC nanoseconds since the epoch (int64)."""
    return times.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy("datetime64[ns]").view(
        np.int64)
