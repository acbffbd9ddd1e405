"""The readers sort through the package's one (uid, time) sort: trajectory.time_order.

Unsorted input with time ties inside a user and users out of order: what read_trajectories
returns must be exactly the frame ordered by time_order (stable) with repeats dropped (first
kept) — and both must agree with an independent reference (Python's stable sorted()).
"""

from __future__ import annotations

import io
import warnings

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from lmdk_core import read_trajectories
from lmdk_core.readers.canonical import finalize
from lmdk_core.trajectory import time_order

T0 = pd.Timestamp("2021-05-01T10:00:00Z")

rows = st.lists(
    st.tuples(st.sampled_from(["b", "a", "c10", "c9"]), st.integers(0, 4),
              st.integers(0, 10_000)),
    min_size=1, max_size=40,
)


def _csv(data: list[tuple[str, int, int]]) -> bytes:
    lines = ["uid,time,lat,lon,row"]
    for i, (u, s, x) in enumerate(data):
        lines.append(f"{u},{(T0 + pd.Timedelta(seconds=s)).isoformat()},{x / 1e4},116.0,{i}")
    return ("\n".join(lines) + "\n").encode()


@settings(max_examples=40)
@given(rows)
def test_reader_order_is_time_order_and_matches_a_stable_reference(data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # repeated timestamps are reported as a DataWarning
        got = read_trajectories(io.BytesIO(_csv(data)), "csv")
    # independent reference: stable sort by (uid, second), then keep the first of each repeat
    ref, seen = [], set()
    for i, (u, s, _) in sorted(enumerate(data), key=lambda r: (r[1][0], r[1][1])):
        if (u, s) not in seen:
            seen.add((u, s))
            ref.append(i)
    assert got["row"].tolist() == ref
    # the same frame through the canonical sort, unsorted and with ties
    raw = pd.DataFrame({"uid": [u for u, _, _ in data],
                        "time": [T0 + pd.Timedelta(seconds=s) for _, s, _ in data],
                        "row": range(len(data))})
    order, codes, t = time_order(raw)
    keep = np.r_[True, (np.diff(codes) != 0) | (np.diff(t) != 0)]
    assert raw["row"].to_numpy()[order][keep].tolist() == ref


def test_finalize_orders_mixed_type_ids_like_time_order():
    """Ids pandas cannot sort (mixed types) follow time_order's rule instead of failing."""
    df = pd.DataFrame({"uid": [2, "a", 2, "a"],
                       "time": pd.to_datetime([3, 1, 1, 2], unit="s", utc=True),
                       "row": range(4)})
    order, _, _ = time_order(df)
    report: list[str] = []
    out = finalize(df, "x", report)
    assert out["row"].tolist() == df["row"].to_numpy()[order].tolist() == [2, 0, 1, 3]
    assert report == []


def test_sorted_input_is_returned_as_is_without_a_sort():
    df = pd.DataFrame({"uid": ["a", "a", "b"],
                       "time": pd.to_datetime([1, 1, 0], unit="s", utc=True)})
    order, _, _ = time_order(df)
    np.testing.assert_array_equal(order, [0, 1, 2])
    report: list[str] = []
    out = finalize(df, "x", report)
    assert len(out) == 2 and "dropped 1 row" in report[0]
