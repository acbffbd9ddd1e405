"""Property tests: any valid trajectory frame survives write (CSV / Parquet) -> read_trajectories.

The reference is computed with plain pandas operations (drop repeated (uid, time) keeping the
first, stable sort), independent of the reader's own sorting and de-duplication code.
"""

from __future__ import annotations

import io
import string
import warnings

import numpy as np
import pandas as pd
from hypothesis import example, given
from hypothesis import strategies as st

from lmdk_core import DataWarning, read_trajectories

UID_ALPHABET = string.ascii_letters + string.digits + "_-"
# 1970..2200 in ns (inside the datetime64[ns] range), some with sub-second parts
_T0, _T1 = 0, 7_258_118_400 * 10**9
times_ns = st.one_of(
    st.integers(_T0 // 10**9, _T1 // 10**9).map(lambda s: s * 10**9),
    st.integers(_T0, _T1),
)

ELEMENTS = {
    "uid": st.text(UID_ALPHABET, min_size=1, max_size=5),
    "t": times_ns,
    "lat": st.floats(-90, 90, allow_nan=False),
    "lon": st.floats(-180, 180, allow_nan=False),
    "note": st.text(string.ascii_letters, min_size=1, max_size=4),
    "speed": st.floats(-1e6, 1e6, allow_nan=False),
}


@st.composite
def _frames(draw) -> pd.DataFrame:
    """1-25 rows, drawn column by column as hypothesis.extra.pandas.data_frames draws them.
    (data_frames applies st.composite, which reads and parses its own source, once per column
    per example: these three tests took 7.5 CPU-s with it, 4.8 without.)"""
    n = draw(st.integers(1, 25))
    df = pd.DataFrame({name: draw(st.lists(elements, min_size=n, max_size=n))
                       for name, elements in ELEMENTS.items()})
    # repeated (uid, time) keys in a third to a half of the frames (data_frames: about a third)
    for i, j in draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                              max_size=2)):
        df.at[j, "uid"], df.at[j, "t"] = df.at[i, "uid"], df.at[i, "t"]
    return df


frames = _frames()


def to_trajectory(raw: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame(
        {
            "uid": raw["uid"].astype(str),
            "time": pd.to_datetime(raw["t"].astype(np.int64), unit="ns", utc=True),
            "lat": raw["lat"].astype(np.float64),
            "lon": raw["lon"].astype(np.float64),
            "note": raw["note"].astype(str),
            "speed": raw["speed"].astype(np.float64),
        }
    )
    return out


def reference(df: pd.DataFrame) -> pd.DataFrame:
    ref = df.drop_duplicates(["uid", "time"], keep="first")
    return ref.sort_values(["uid", "time"], kind="stable").reset_index(drop=True)


def check(read, df: pd.DataFrame) -> None:
    ref = reference(df)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        got = read()
    dropped = len(df) - len(ref)
    data_warnings = [w for w in rec if issubclass(w.category, DataWarning)]
    assert bool(data_warnings) == (dropped > 0)  # never silently
    if dropped:
        assert f"dropped {dropped} row" in str(data_warnings[0].message)
    assert str(got["time"].dtype) == "datetime64[ns, UTC]"
    pd.testing.assert_frame_equal(got, ref, check_dtype=False)


DUPES = pd.DataFrame(
    {"uid": ["a", "a", "b", "a"], "t": [5, 5, 5, 10**18], "lat": [1.0, 2.0, 3.0, 4.0],
     "lon": [0.0, 0.0, 0.0, 0.0], "note": ["x", "y", "z", "w"], "speed": [0.0, 1.0, 2.0, 3.0]}
)


@given(frames)
@example(DUPES)
def test_csv_round_trip(raw):
    df = to_trajectory(raw)
    buf = io.BytesIO(df.to_csv(index=False).encode())
    buf.name = "prop.csv"
    check(lambda: read_trajectories(buf), df)


@given(frames)
@example(DUPES)
def test_parquet_round_trip(raw):
    df = to_trajectory(raw)
    buf = io.BytesIO()
    df.to_parquet(buf, index=False)
    upload = io.BytesIO(buf.getvalue())
    upload.name = "prop.parquet"
    check(lambda: read_trajectories(upload), df)


@given(frames)
def test_read_write_read_is_identity(raw):
    df = to_trajectory(raw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        once = read_trajectories(io.BytesIO(df.to_csv(index=False).encode()))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # already canonical: nothing to repair
        twice = read_trajectories(io.BytesIO(once.to_csv(index=False).encode()))
    pd.testing.assert_frame_equal(twice, once)
