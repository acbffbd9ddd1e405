"""Progress while a Google location history is read (issue 27, major 1 remainder): the reader
reports its stages with counts, the CLI prints them and the page's upload bar shows them."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

import dashboard.data_section as data_section
import lmdk_core as lm
from lmdk_core.cli import main
from lmdk_core.readers import takeout

STAGES = {"records": ["parsing", "records", "times"],
          "timeline": ["parsing", "segments", "signals", "times"]}


def _records_json(n: int) -> bytes:
    locs = [{"latitudeE7": 399_000_000 + 10 * i, "longitudeE7": 1_163_000_000 + 10 * i,
             "timestamp": f"2024-01-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"}
            for i in range(n)]
    return json.dumps({"locations": locs}).encode()


def _timeline_json(n_seg: int, n_sig: int) -> bytes:
    segs = [{"startTime": f"2024-01-01T{i:02d}:00:00Z", "endTime": f"2024-01-01T{i:02d}:30:00Z",
             "visit": {"topCandidate": {"placeLocation": {"latLng": "39.99°, 116.33°"}}}}
            for i in range(n_seg)]
    sigs = [{"position": {"LatLng": "39.98°, 116.31°",
                          "timestamp": f"2024-01-02T00:{i // 60:02d}:{i % 60:02d}Z"}}
            for i in range(n_sig)]
    return json.dumps({"semanticSegments": segs, "rawSignals": sigs}).encode()


def _read(path, monkeypatch, every: int) -> tuple:
    monkeypatch.setattr(takeout, "PROGRESS_EVERY", every)
    calls: list[tuple[str, int, int]] = []
    df = lm.read_trajectories(path, progress=lambda *a: calls.append(a))
    return df, calls


def _check(calls, stages: list[str], totals: dict[str, int]) -> None:
    """Stages in order, each from 0 (or its first block) up to its total, never backwards."""
    seen = list(dict.fromkeys(c[0] for c in calls))
    assert seen == stages
    for stage in stages:
        mine = [(d, t) for s, d, t in calls if s == stage]
        assert {t for _, t in mine} == {totals[stage]}
        done = [d for d, _ in mine]
        assert done == sorted(done) and done[0] == 0 and done[-1] == totals[stage]


@settings(max_examples=15, deadline=None)
@given(n=hs.integers(1, 40), every=hs.integers(1, 9))
def test_records_progress_counts_every_record(tmp_path_factory, n, every):
    path = tmp_path_factory.mktemp("rec") / "Records.json"
    data = _records_json(n)
    path.write_bytes(data)
    with pytest.MonkeyPatch.context() as mp:
        df, calls = _read(path, mp, every)
    assert len(df) == n
    _check(calls, STAGES["records"], {"parsing": len(data), "records": n, "times": n})
    # one report per block of `every` records, plus the end
    assert sum(s == "records" for s, _, _ in calls) == -(-n // every) + 1


def test_timeline_progress(tmp_path, monkeypatch):
    path = tmp_path / "Timeline.json"
    data = _timeline_json(5, 7)
    path.write_bytes(data)
    df, calls = _read(path, monkeypatch, 2)
    assert len(df) == 5 * 2 + 7  # a visit gives its start and end
    _check(calls, STAGES["timeline"],
           {"parsing": len(data), "segments": 5, "signals": 7, "times": 17})


def test_cli_prints_the_stages(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(takeout, "PROGRESS_EVERY", 10)
    path = tmp_path / "Records.json"
    path.write_bytes(_records_json(40))
    assert main(["release", str(path), "--epsilon", "1", "--out", str(tmp_path / "o"),
                 "--seed", "1", "--progress"]) == 0
    err = capsys.readouterr().err
    assert "records: 40/40 (100%)" in err and "times: 40/40 (100%)" in err
    assert err.index("parsing: ") < err.index("records: ") < err.index("times: ")


def test_progress_text():
    assert (data_section.progress_text("Records.json", "records", 400_000, 1_000_000)
            == "Reading Records.json: 400,000 of 1,000,000 records")
    assert (data_section.progress_text("a.csv", "reading", 3 * 2**20, 12 * 2**20, index=1,
                                       count=3) == "Reading a.csv (2 of 3): 3.0 of 12.0 MB read")
    assert data_section.progress_text("T.json", "parsing", 0, 2**21).endswith(
        "parsing 2.0 MB of JSON")


class _Bar:
    def __init__(self, log):
        self.log = log

    def progress(self, fraction, text):
        self.log.append((fraction, text))

    def empty(self):
        self.log.append("closed")


def test_upload_bar_follows_the_reader(monkeypatch):
    """The page's bar: whole file fractions in order, the reader's words, closed at the end."""
    log: list = []
    monkeypatch.setattr(data_section.st.sidebar, "progress", lambda *a, **k: _Bar(log))
    bar = data_section.UploadProgress(2)
    bar.file(0, "Records.json")
    for done in (0, 5, 10):
        bar("records", done, 10)
    bar.file(1, "b.csv")
    bar("reading", 2**20, 2**20)
    bar.close()
    assert log[-1] == "closed"
    fractions = [f for f, _ in log[:-1]]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    texts = [t for _, t in log[:-1]]  # as literal text (a file name is no Markdown)
    plain = data_section.plain_text
    assert plain("Reading Records.json (1 of 2): 5 of 10 records") in texts
    assert texts[-1] == plain("Reading b.csv (2 of 2): 1.0 of 1.0 MB read")
