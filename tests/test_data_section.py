"""Data panel (issue 13, smaller things): a bad upload does not block the next one and its message
does not linger; a tree of many files shows a count and a collapsed list, not every name."""

from __future__ import annotations

import pytest
from apptest_helpers import BAD_CSV, HOME_STAY, offline_page, run, uploading
from page_charts import figures
from streamlit.testing.v1 import AppTest

from dashboard.data_section import describe_files


def _csv(uid: str, n: int, lat0: float = 39.9) -> bytes:
    rows = ["uid,time,lat,lon"] + [
        f"{uid},2024-01-01T{m // 60:02d}:{m % 60:02d}:00Z,{lat0 + m * 1e-4:.6f},116.3"
        for m in range(n)
    ]
    return "\n".join(rows).encode()


@pytest.fixture
def upload_app(fake_map):
    """The first page with "Upload files" already the source (apptest_helpers.uploading)."""
    return uploading(offline_page())


def _uploaders(at: AppTest) -> list:
    return list(at.sidebar.get("file_uploader"))


def _errors(at: AppTest) -> str:
    return " ".join(e.value for e in at.error)


def test_bad_file_is_reported_once_then_a_good_file_loads_and_places_stay(app_home):
    at = app_home
    at.number_input(key="epsilon").set_value(2.0)
    at.radio(key="source").set_value("Upload files")
    run(at)
    at.file_uploader(key="upload").set_value(("broken.csv", BAD_CSV, "text/csv"))
    run(at)
    assert "broken.csv" in _errors(at)
    # the bad file is no longer in the uploader: a fresh, empty uploader takes the next file
    (uploader,) = _uploaders(at)
    assert uploader.key != "upload" and not uploader.value
    at.file_uploader(key=uploader.key).set_value(("good.csv", _csv("bob", 30), "text/csv"))
    run(at)
    assert at.session_state["data_name"] == "good.csv"
    assert at.sidebar.selectbox[0].value == "bob"
    assert "broken.csv" not in _errors(at)  # the old message is gone
    assert [p["name"] for p in at.session_state["places"]] == [HOME_STAY]
    assert at.number_input(key="epsilon").value == 2.0
    run(at)  # and it does not come back on later reruns
    assert "broken.csv" not in _errors(at)


def test_good_files_load_next_to_a_bad_one_which_is_named_in_a_warning(upload_app):
    at = upload_app
    at.file_uploader(key="upload").set_value([
        ("broken.csv", BAD_CSV, "text/csv"),
        ("ann.csv", _csv("ann", 40), "text/csv"),
        ("ben.csv", _csv("ben", 20, 40.0), "text/csv"),
    ])
    run(at)
    assert at.sidebar.selectbox[0].options == ["ann", "ben"]
    assert at.session_state["data_name"] == "ann.csv, ben.csv"
    warned = " ".join(w.value for w in at.sidebar.warning)
    assert "Skipped 1 of 3 files" in warned and "broken.csv" in warned
    assert not _errors(at)


def test_files_of_one_person_in_any_order_are_joined_in_time_order(upload_app):
    """Several files are one frame sorted by (uid, time): a later day uploaded first, and a
    second person in between, come out in order."""
    late = _csv("ann", 3).replace(b"2024-01-01", b"2024-01-02")
    at = upload_app
    at.file_uploader(key="upload").set_value([
        ("ann_day2.csv", late, "text/csv"),
        ("ben.csv", _csv("ben", 3, 40.0), "text/csv"),
        ("ann_day1.csv", _csv("ann", 3), "text/csv"),
    ])
    run(at)
    df = at.session_state["df"]
    assert list(df["uid"]) == ["ann"] * 6 + ["ben"] * 3
    ann = df.loc[df["uid"] == "ann", "time"]
    assert ann.is_monotonic_increasing and ann.dt.day.tolist() == [1, 1, 1, 2, 2, 2]
    assert not _errors(at)


def test_many_files_show_a_count_and_a_collapsed_list(upload_app):
    at = upload_app
    names = [f"2008102{i}.csv" for i in range(8)]
    at.file_uploader(key="upload").set_value(
        [(n, _csv(f"u{i}", 5, 39.9 + i * 0.01), "text/csv") for i, n in enumerate(names)])
    run(at)
    caption = " ".join(c.value for c in at.sidebar.caption)
    # file names are shown as literal text (dashboard.formatting.plain_text escapes markdown)
    assert "Loaded: 8 files (20081020.csv, 20081021.csv, …)" in caption.replace("\\", "")
    assert names[-1] not in caption
    (listing,) = [e for e in at.sidebar.expander if e.label == "8 files loaded"]
    assert listing.proto.expanded is False
    assert listing.text[0].value.split("\n") == names


def test_describe_files():
    assert describe_files(["a.plt"]) == "a.plt"
    assert describe_files(["a", "b", "c"]) == "a, b, c"
    assert describe_files([f"f{i}" for i in range(111)]) == "111 files (f0, f1, …)"


LONG = 12_000
"""The threshold of a long trace the long-trace test runs the page with: above the sample's
people (alice has 11,373 moments, so its first page is the page users get) and 17x below the
real one (dashboard.loss_section.LAZY_POINTS)."""


@pytest.fixture
def long_trace_page(fake_map, monkeypatch):
    """The first page with section 5's threshold of a long trace lowered to :data:`LONG`."""
    from dashboard import loss_section

    assert loss_section.LAZY_POINTS > LONG
    monkeypatch.setattr(loss_section, "LAZY_POINTS", LONG)
    return run(offline_page())


def test_long_trace_computes_the_loss_section_only_when_asked(long_trace_page):
    """Section 5 and the guide's trial releases on a long trace (at least
    ``loss_section.LAZY_POINTS`` moments) wait for their toggles (each costs seconds per
    million moments on every click). Run with the threshold lowered to LONG
    (long_trace_page): the same branch on a trace of LONG moments instead of 200,000."""
    import io

    import numpy as np
    import pandas as pd

    at = long_trace_page
    # the sample's trace is below the threshold: its loss chart is drawn at once
    assert any("loss_chart" in c for c in figures(at))
    n = LONG  # the smallest trace the page calls long
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({
        "uid": "long",
        "time": pd.Timestamp("2024-01-01", tz="UTC") + pd.to_timedelta(np.arange(n) * 5, "s"),
        "lat": 39.95 + np.cumsum(rng.normal(0, 2e-5, n)),
        "lon": 116.35 + np.cumsum(rng.normal(0, 2e-5, n)),
    })
    buf = io.BytesIO()
    frame.to_parquet(buf)
    at.radio(key="source").set_value("Upload files")
    run(at)
    at.file_uploader(key="upload").set_value(("long.parquet", buf.getvalue(), "application/x"))
    run(at)
    charts = lambda: list(figures(at))  # noqa: E731
    assert not any("loss_chart" in c for c in charts())
    assert any("allocation_chart" in c for c in charts())
    assert any(t.label.startswith(f"5 · Show the privacy loss over time (slow for {n:,} moments)")
               for t in at.toggle)
    at.toggle(key="loss_open").set_value(True)
    run(at)
    assert any("loss_chart" in c for c in charts())
    # the guide's latest estimates (the sample's, simulated, came before the upload)
    simulated = lambda: list(at.session_state["guide_estimates"])[-1][-1]  # noqa: E731
    assert simulated() is False
    at.toggle(key="guide_trials").set_value(True)
    run(at)
    assert simulated() is True


def _records(minutes: range) -> bytes:
    import json

    return json.dumps({"locations": [
        {"latitudeE7": 399000000 + m * 1000, "longitudeE7": 1163000000,
         "timestamp": f"2024-05-01T08:{m:02d}:00Z"} for m in minutes]}).encode()


def _timeline(minutes: range) -> bytes:
    import json

    return json.dumps({"semanticSegments": [{
        "startTime": "2024-05-01T10:00:00.000+00:00", "endTime": "2024-05-01T11:00:00.000+00:00",
        "timelinePath": [{"point": f"{39.95 + m * 1e-4:.7f}°, 116.3100000°",
                          "time": f"2024-05-01T10:{m:02d}:00.000+00:00"} for m in minutes]}]}
    ).encode()


def test_a_later_upload_replaces_the_earlier_one(upload_app):
    """Issue 27: a second upload used to be read together with the first (their people
    merged); now the uploader is emptied once a file is loaded and the next one replaces it."""
    at = upload_app
    at.file_uploader(key="upload").set_value(("ann.csv", _csv("ann", 30), "text/csv"))
    run(at)
    assert at.sidebar.selectbox[0].options == ["ann"]
    (uploader,) = _uploaders(at)
    assert uploader.key != "upload" and not uploader.value  # emptied after a good load
    at.file_uploader(key=uploader.key).set_value(("ben.csv", _csv("ben", 20, 40.0), "text/csv"))
    run(at)
    assert at.sidebar.selectbox[0].options == ["ben"]
    assert at.session_state["data_name"] == "ben.csv"


def test_records_and_timeline_of_one_takeout_are_one_person(upload_app):
    at = upload_app
    at.file_uploader(key="upload").set_value([
        ("Records.json", _records(range(0, 30)), "application/json"),
        ("Timeline.json", _timeline(range(0, 20)), "application/json"),
    ])
    run(at)
    df = at.session_state["df"]
    assert at.sidebar.selectbox[0].options == ["location history"]
    assert len(df) == 50 and df["time"].is_monotonic_increasing
    # a CSV uploaded with them keeps its own person
    at.file_uploader(key=_uploaders(at)[0].key).set_value([
        ("Records.json", _records(range(0, 30)), "application/json"),
        ("Timeline.json", _timeline(range(0, 20)), "application/json"),
        ("ben.csv", _csv("ben", 5, 40.0), "text/csv"),
    ])
    run(at)
    assert at.sidebar.selectbox[0].options == ["ben", "location history"]


def test_long_traces_say_the_year_and_durations_in_plain_units(upload_app):
    """Issue 27: the time slider had no year; durations read "17496.0 h" and "one every
    12600 s"."""
    rows = ["uid,time,lat,lon"] + [
        f"zoe,{2022 + d // 365}-{1 + (d % 365) // 31:02d}-{1 + (d % 365) % 28:02d}T"
        f"{(d * 7) % 24:02d}:00:00Z,39.9,116.3" for d in range(0, 700, 3)]
    at = upload_app
    at.file_uploader(key="upload").set_value(("zoe.csv", "\n".join(rows).encode(), "text/csv"))
    run(at)
    slider = at.sidebar.slider[0]
    assert slider.proto.format == "YYYY-MM-DD HH:mm"
    summary = next(m.value for m in at.sidebar.markdown if "points** over" in m.value)
    import re

    over = re.search(r"over \*\*([\d.,]+) (\w+)\*\*", summary)
    every = re.search(r"one every \*\*([\d.,]+) (\w+)\*\*", summary)
    assert over.group(2) == "d" and 600 < float(over.group(1).replace(",", "")) < 800
    assert every.group(2) in ("h", "d") and float(every.group(1)) < 100  # not "12600 s"
