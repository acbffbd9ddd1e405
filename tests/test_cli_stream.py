"""The streaming `lmdk release` (issue 26 part 2): column-wise text encoding checked against
Python's own ``repr``/``json.dumps``/``DataFrame.to_csv`` (independent implementations), chunk
boundaries that do not change a byte, the streaming CSV reader against the in-memory one, the
CLI's messages, and Ctrl-C leaving no partial output."""

from __future__ import annotations

import io
import json
import signal
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from interrupt import run_until_ctrl_c

import lmdk_core as lm
from lmdk_core import cli
from lmdk_core import export as E
from lmdk_core.cli import main
from lmdk_core.readers import csv as stream_csv

floats = st.floats(allow_nan=True, allow_infinity=True, width=64)


# ----------------------------------------------------------------------------- text encoding


@given(st.lists(floats, max_size=80))
def test_float_text_is_python_repr(xs):
    got = E._float_text(np.array(xs, dtype=np.float64)).to_pylist()
    assert got == [repr(x) if np.isfinite(x) else None for x in xs]


def test_float_text_every_magnitude_and_few_distinct_values():
    rng = np.random.default_rng(0)
    x = np.concatenate([10.0 ** rng.uniform(-320, 308, 20_000) * rng.choice([-1, 1], 20_000),
                        np.round(rng.normal(0, 1e6, 2000)), 10.0 ** np.arange(-12, 20),
                        [0.0, -0.0, 5e-324, 2.0**53, 1e16 - 2, 9.999999999999999e-05]])
    assert E._float_text(x).to_pylist() == [repr(v) for v in x.tolist()]
    few = np.tile([0.0, -0.0, 1.0, 0.5e-5, np.nan, np.inf], 50)  # the factorised path
    assert E._float_text(few).to_pylist() == [
        repr(v) if np.isfinite(v) else None for v in few.tolist()]


@given(st.lists(st.integers(-(2**62), 2**62), min_size=1, max_size=40))
def test_iso_text_matches_iso_utc(ns):
    v = np.array(ns, dtype=np.int64).view("datetime64[ns]")
    unit = E._iso_unit(v)
    assert E._iso_text(v, unit).to_pylist() == E.iso_utc(v).tolist()


@given(st.lists(floats, max_size=30), st.integers(1, 7))
def test_json_array_is_json_dumps_in_any_chunks(xs, chunk):
    a = np.array(xs, dtype=np.float64)
    want = json.dumps([x if np.isfinite(x) else None for x in xs])
    assert b"".join(E._json_array_pieces(a, chunk)).decode() == want
    b = a > 0
    assert b"".join(E._json_array_pieces(b, chunk)).decode() == json.dumps(b.tolist())


# ----------------------------------------------------------------------------- exports in chunks


def _release(n=23, *, with_time=True, nan_rows=(0, 1, 9), seeded=True):
    rng = np.random.default_rng(3)
    lat, lon = 39.9 + rng.normal(0, 0.01, n), 116.3 + rng.normal(0, 0.01, n)
    lat[list(nan_rows)] = np.nan
    lon[list(nan_rows)] = np.nan
    lat[5] = 40.0  # a whole number
    time = (pd.date_range("2024-03-01 09:00", periods=n, freq="7s").to_numpy().copy()
            if with_time else None)
    if with_time:
        time[4] += np.timedelta64(250, "ms")  # one ms time: the whole file at ms precision
    eps = np.where(np.arange(n) % 4 == 0, 0.0, 1 / 3)
    return lm.Release(scheme="skip", epsilon=1.0, budget=eps, published=eps > 0,
                      landmarks=np.arange(n) % 5 == 0, params={"radius_m": 200.0},
                      lat=lat, lon=lon, time=time, seeded=seeded)


def _reference_csv(rel) -> str:
    """The export as pandas writes it (what `release_to_csv` wrote before it streamed), without
    the rows that carry no release (pandas' own dropna: issue 27)."""
    frame = rel.to_frame(public=True)
    frame = frame.dropna(subset=[c for c in frame.columns if c != "time"])
    if "time" in frame:
        frame["time"] = E.iso_utc(frame["time"])
    text = frame.to_csv(index=False, lineterminator="\n")
    return (f"# lmdk {rel.label}\n" if rel.seeded else "") + text


def _reference_geojson(rel) -> str:
    ok = np.isfinite(rel.lat) & np.isfinite(rel.lon)
    times = E.iso_utc(rel.time[ok]).tolist() if rel.time is not None else [None] * ok.sum()
    feats = [{"type": "Feature", "geometry": {"type": "Point", "coordinates": [x, y]},
              "properties": {"time": t}}
             for x, y, t in zip(rel.lon[ok].tolist(), rel.lat[ok].tolist(), times, strict=True)]
    return json.dumps({"type": "FeatureCollection", "lmdk": {
        "kind": "public-release", "version": E.REPORT_FORMAT_VERSION,
        "simulation": rel.seeded, **({"label": rel.label} if rel.seeded else {})},
        "features": feats})


@pytest.mark.parametrize("with_time, nan_rows", [(True, (0, 1, 9)), (False, (0, 1, 9)),
                                                  (True, (0, 4))])
def test_chunk_boundaries_give_the_same_bytes(with_time, nan_rows):
    """(0, 4): the one ms time has no release, so the file is at s precision."""
    rel = _release(with_time=with_time, nan_rows=nan_rows)
    outs = set()
    for chunk in (1, 2, 7, 22, 23, 24, 10_000):  # 23 rows: chunks that end mid-file and exactly
        csv, geo = io.BytesIO(), io.BytesIO()
        E.write_release_files(rel, csv=csv, geojson=geo, chunk_rows=chunk)
        outs.add((csv.getvalue(), geo.getvalue()))
    assert len(outs) == 1
    csv, geo = outs.pop()
    assert csv.decode() == _reference_csv(rel)
    assert geo.decode() == _reference_geojson(rel)
    assert E.release_to_csv(rel) == csv.decode()
    assert json.dumps(E.release_to_geojson(rel)) == geo.decode()


def test_chunked_values_csv_drops_rows_without_a_value():
    values = np.array([np.nan, 1.0, np.nan, np.inf, -0.0, 2.5e-7, np.nan])
    rel = lm.Release(scheme="event", epsilon=1.0, budget=np.full(7, 0.2),
                     published=np.ones(7, bool), landmarks=np.zeros(7, bool), params={},
                     values=values)
    for chunk in (1, 2, 3, 7):  # chunks with nothing to write, too
        buf = io.BytesIO()
        E.write_release_csv(rel, buf, chunk_rows=chunk)
        assert buf.getvalue().decode() == _reference_csv(rel) == \
            "value\n1.0\ninf\n-0.0\n2.5e-07\n"


def test_a_release_with_nothing_released_writes_headers_only():
    rel = _release(n=6, nan_rows=range(6))  # lat[5] = 40 but lon NaN: no release either
    for chunk in (1, 2, 6):
        csv, geo = io.BytesIO(), io.BytesIO()
        E.write_release_files(rel, csv=csv, geojson=geo, chunk_rows=chunk)
        assert csv.getvalue().decode() == f"# lmdk {rel.label}\ntime,lat,lon\n"
        assert json.loads(geo.getvalue())["features"] == []


def test_report_in_chunks_is_the_list_report():
    rel = _release(seeded=False)
    g = lm.landmark_guarantee(rel.budget, rel.landmarks)
    temporal = {"bpl": np.linspace(0, 1, 23), "fpl": np.full(23, np.inf), "tpl": np.zeros(23)}
    kw = dict(release=rel, epsilon=1.0, guarantee=g, places=[lm.Place("Home", 39.9, 116.3, 80)],
              settings={"seed": 3, "input": "x.csv"}, temporal=temporal,
              metrics={"mae_m": float("nan")})
    lists = E.privacy_report(**kw)
    text = E.report_to_json(lists)
    for chunk in (1, 4, 23, 100):
        buf = io.BytesIO()
        E.write_report_json(E.privacy_report(**kw, as_arrays=True), buf, chunk_rows=chunk)
        assert buf.getvalue().decode() == text
    rep = json.loads(text)
    assert rep == json.loads(json.dumps(lists))  # the lists, through Python's own json
    assert next(iter(rep)) == "PRIVATE" and '"seed"' not in text


def test_empty_release_writes_headers_only():
    rel = lm.Release(scheme="event", epsilon=1.0, budget=np.zeros(0), published=np.zeros(0, bool),
                     landmarks=np.zeros(0, bool), params={}, lat=np.zeros(0), lon=np.zeros(0))
    csv, geo = io.BytesIO(), io.BytesIO()
    E.write_release_files(rel, csv=csv, geojson=geo)
    assert csv.getvalue() == b"lat,lon\n"
    assert json.loads(geo.getvalue())["features"] == []


# ----------------------------------------------------------------------------- streaming reader


@pytest.fixture
def small_blocks(monkeypatch):
    """Stream every file, in blocks of 512 bytes."""
    monkeypatch.setattr(stream_csv, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream_csv, "STREAM_BLOCK_BYTES", 512)


def _read_both(path, monkeypatch, capture=True):
    calls = []
    streamed = lm.read_trajectories(path, progress=lambda *a: calls.append(a))
    with monkeypatch.context() as m:
        m.setattr(stream_csv, "STREAM_MIN_BYTES", 1 << 60)
        in_memory = lm.read_trajectories(path)
    return streamed, in_memory, calls


def _write_rows(path, n, *, trailing_newline=True, note=None):
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"uid": rng.choice(["007", "b"], n),
                       "time": pd.date_range("2024-01-01", periods=n, freq="s", tz="UTC"),
                       "lat": rng.uniform(-80, 80, n).round(6), "lon": rng.uniform(-170, 170, n),
                       "speed": rng.integers(0, 9, n), "note": rng.choice(["x", "", "NA"], n)})
    if note is not None:
        df.loc[n // 2, "note"] = note
    text = df.to_csv(index=False, lineterminator="\n")
    path.write_text(text if trailing_newline else text.rstrip("\n"))


@pytest.mark.parametrize("path_taken", ["streamed", "pyarrow engine", "parquet"])
def test_a_missing_text_field_reads_the_same_whatever_the_file_size(tmp_path, monkeypatch,
                                                                    path_taken):
    """A CSV file of 1 MiB or more is read by Arrow (streamed, or pandas' pyarrow engine), a
    smaller one by pandas' C engine; Parquet by Arrow. On pandas 2 the Arrow paths gave None
    for an empty text field and the C engine NaN (pandas 3: NaN in all), so the same rows read
    differently by the file's size or format (seen as a FutureWarning in make test-min). Every
    path now gives what the C engine gives, the same missing marker included."""
    from lmdk_core.readers import text

    path = tmp_path / "t.csv"
    _write_rows(path, 301)
    monkeypatch.setattr(stream_csv, "STREAM_BLOCK_BYTES", 512)
    with monkeypatch.context() as m:  # the C engine, in memory: the reference
        m.setattr(stream_csv, "STREAM_MIN_BYTES", 1 << 60)
        m.setattr(text, "_PYARROW_MIN_BYTES", 1 << 60)
        reference = lm.read_trajectories(path)
    if path_taken == "streamed":
        monkeypatch.setattr(stream_csv, "STREAM_MIN_BYTES", 0)
    elif path_taken == "pyarrow engine":
        monkeypatch.setattr(stream_csv, "STREAM_MIN_BYTES", 1 << 60)
        monkeypatch.setattr(text, "_PYARROW_MIN_BYTES", 0)
    else:
        path = tmp_path / "t.parquet"
        reference.to_parquet(path)  # empty text fields: Parquet nulls
    got = lm.read_trajectories(path)
    assert reference["note"].isna().sum() > 50  # empty fields are there to compare
    markers = [type(v).__name__ for v in got["note"][got["note"].isna()]]
    assert markers == [type(v).__name__ for v in reference["note"][reference["note"].isna()]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pandas 2 warns about None against NaN, not fails
        pd.testing.assert_frame_equal(got, reference)


def test_only_text_columns_get_nan_other_missing_values_stay_as_pandas_3_reads_them(tmp_path):
    """The rule above is for text: a Parquet column of dates, or one with no value at all,
    keeps None on pandas 2 as on pandas 3 (where only text columns become ``str``, NaN)."""
    import datetime as dt

    frame = pd.DataFrame({
        "uid": ["a"] * 4, "time": pd.date_range("2024-01-01", periods=4, freq="s", tz="UTC"),
        "lat": [1.0] * 4, "lon": [2.0] * 4, "note": ["x", None, "y", None],
        "day": [dt.date(2024, 1, 1), None, dt.date(2024, 1, 2), None], "nothing": [None] * 4})
    frame.to_parquet(path := tmp_path / "t.parquet")
    got = lm.read_trajectories(path)
    assert [type(v).__name__ for v in got["note"]] == ["str", "float", "str", "float"]
    assert [type(v).__name__ for v in got["day"]] == ["date", "NoneType", "date", "NoneType"]
    assert [type(v).__name__ for v in got["nothing"]] == ["NoneType"] * 4


@pytest.mark.parametrize("trailing_newline", [True, False])
def test_streaming_reader_equals_in_memory_reader(tmp_path, small_blocks, monkeypatch,
                                                  trailing_newline):
    path = tmp_path / "t.csv"
    _write_rows(path, 301, trailing_newline=trailing_newline)  # ends mid-block
    streamed, in_memory, calls = _read_both(path, monkeypatch)
    pd.testing.assert_frame_equal(streamed, in_memory)
    assert len(streamed) == 301 and streamed["uid"].iloc[0] == "007"
    assert calls and calls[-1] == ("reading", path.stat().st_size, path.stat().st_size)
    assert [c[1] for c in calls] == sorted(c[1] for c in calls)


def test_a_line_longer_than_a_block_still_reads(tmp_path, small_blocks, monkeypatch):
    path = tmp_path / "t.csv"
    _write_rows(path, 50, note="n" * 5000)  # one field 10x the block
    streamed, in_memory, _ = _read_both(path, monkeypatch)
    pd.testing.assert_frame_equal(streamed, in_memory)
    assert streamed["note"].str.len().max() == 5000


def test_a_bad_row_in_a_later_block_is_named_as_before(tmp_path, small_blocks, monkeypatch):
    path = tmp_path / "t.csv"
    _write_rows(path, 200)
    lines = path.read_text().splitlines()
    lines[180] = lines[180].replace(lines[180].split(",")[2], "123.5", 1)  # a latitude
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(lm.TrajectoryFormatError, match=r"t.csv line 181: latitude 123.5"):
        lm.read_trajectories(path)


# ----------------------------------------------------------------------------- CLI


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("stream")
    one = lm.time_slice(lm.select_user(lm.load_sample(), "alice"), "2024-03-07",
                        "2024-03-07 06:00")
    path = d / "alice.csv"
    one[["uid", "time", "lat", "lon"]].to_csv(path, index=False)
    far = d / "far.geojson"
    far.write_text(json.dumps(lm.places_to_geojson([lm.Place("Far", -33.9, 18.4, 100)])))
    return path, far


def _run(*argv):
    return main(["release", *map(str, argv), "--epsilon", "1"])


def test_empty_and_header_only_inputs_are_clear_errors(tmp_path, capsys):
    (tmp_path / "e.csv").write_text("")
    (tmp_path / "h.csv").write_text("uid,time,lat,lon\n")
    assert _run(tmp_path / "e.csv", "--out", tmp_path / "o") == 1
    assert capsys.readouterr().err.strip() == "lmdk: error: e.csv: file is empty"
    assert _run(tmp_path / "h.csv", "--out", tmp_path / "o") == 1
    assert "h.csv: no data rows" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_missing_places_file_and_unknown_user(trace, tmp_path, capsys):
    path, _ = trace
    assert _run(path, "--places", tmp_path / "nope.geojson", "--out", tmp_path / "o") == 1
    err = capsys.readouterr().err
    assert err.strip() == f"lmdk: error: --places {tmp_path / 'nope.geojson'}: no such file"
    assert _run(path, "--user", "bob", "--out", tmp_path / "o") == 1
    assert "no user 'bob'; its users: 'alice'" in capsys.readouterr().err


def test_output_checked_before_the_work(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "x").write_text("mine")
    # the input does not exist either: the output is refused first, before any reading
    assert _run(tmp_path / "missing.csv", "--out", out) == 1
    assert "output exists and is not an empty directory" in capsys.readouterr().err
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert _run(tmp_path / "missing.csv", "--out", blocker / "sub") == 1
    assert "is not a directory" in capsys.readouterr().err


def test_places_covering_no_point_warn_plainly(trace, tmp_path, capsys):
    path, far = trace
    assert _run(path, "--places", far, "--out", tmp_path / "o", "--seed", "1") == 0
    err = capsys.readouterr().err
    assert err.startswith("lmdk: warning: the 1 place(s) in ") and "cover none of the" in err
    assert ".py:" not in err and "Warning:" not in err  # no Python source path or class


def test_progress_only_on_a_terminal_or_when_asked(trace, tmp_path, capsys, monkeypatch):
    path, _ = trace
    assert _run(path, "--out", tmp_path / "a", "--seed", "1") == 0
    assert capsys.readouterr().err == ""  # not a terminal, not asked: silent
    assert _run(path, "--out", tmp_path / "b", "--seed", "1", "--progress") == 0
    err = capsys.readouterr().err
    assert "release: 1/1 (100%)" in err and "write: " in err and "report: 1/1" in err
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert _run(path, "--out", tmp_path / "c", "--seed", "1") == 0
    assert "\r" in capsys.readouterr().err  # a redrawn bar
    assert _run(path, "--out", tmp_path / "d", "--seed", "1", "--quiet") == 0
    assert capsys.readouterr().err == ""
    name = E.export_file_name("public", "skip", "csv", epsilon=1)
    assert (tmp_path / "a" / name).read_bytes() == \
        (tmp_path / "b" / name).read_bytes()  # same seed, same file


def test_ctrl_c_mid_write_leaves_no_partial_output(tmp_path, capsys, monkeypatch):
    """A real Ctrl-C (SIGINT under Python's default handler, as in a terminal: pytest-xdist
    workers ignore SIGINT) sent from the CLI's own progress call once the first chunk is on disk
    in the temporary directory, so it always lands mid-write: exit code 130, "lmdk: interrupted",
    no output and no ``.out.partial-*`` left. In this process: the interrupt surfaces from the
    progress call whether the signal comes from another process or from this one, and a separate
    interpreter (~1.5 CPU-s of imports) tested nothing more."""
    n = 6_000  # 3 chunks of rows: interrupted after the first is written, with two to go
    rng = np.random.default_rng(0)
    pd.DataFrame({"time": np.arange(n) * 5 + 1_700_000_000,
                  "lat": 39.9 + rng.normal(0, 1e-3, n).round(6),
                  "lon": 116.3 + rng.normal(0, 1e-3, n).round(6)}).to_csv(
        tmp_path / "big.csv", index=False)
    out = tmp_path / "out"
    on_disk: list[list[int]] = []
    shown = cli.Progress.__call__

    def interrupt_after_first_write(self, stage, done, total):
        shown(self, stage, done, total)
        if stage == "write" and done >= 1 and not on_disk:
            partial = [p for p in tmp_path.iterdir() if p.name.startswith(".out.partial-")]
            on_disk.append([f.stat().st_size for d in partial for f in d.iterdir()])
            assert 0 < done < total  # mid-write
            signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(cli.Progress, "__call__", interrupt_after_first_write)
    code = run_until_ctrl_c(main, ["release", str(tmp_path / "big.csv"), "--epsilon", "1",
                                   "--scheme", "uniform", "--out", str(out), "--progress",
                                   "--chunk-rows", "2000"])
    err = capsys.readouterr().err
    assert code == 130, err
    assert on_disk and max(on_disk[0]) > 0, on_disk  # the first chunk was in the temporary dir
    assert "lmdk: interrupted" in err.split("write: ", 1)[1]
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["big.csv"]  # no .out.partial-* left


# ----------------------------------------------------------------------------- attack, population
# issue 27 (CLI): the same care in every subcommand that reads a trace or writes files


def test_attack_checks_places_first_and_lists_users(trace, tmp_path, capsys):
    path, far = trace
    missing = tmp_path / "nope.geojson"
    # neither file exists: the small side file is named first, before the trace is read
    assert main(["attack", str(tmp_path / "none.csv"), "--places", str(missing),
                 "--epsilon", "1"]) == 1
    assert capsys.readouterr().err.strip() == f"lmdk: error: --places {missing}: no such file"
    assert main(["attack", str(path), "--places", str(far), "--epsilon", "1",
                 "--user", "bob"]) == 1
    assert "no user 'bob'; its users: 'alice'" in capsys.readouterr().err


def test_attack_warns_plainly_when_places_cover_no_point(trace, capsys, small_blocks):
    path, far = trace
    assert main(["attack", str(path), "--places", str(far), "--epsilon", "1", "--draws",
                 "1", "--progress"]) == 0
    out, err = capsys.readouterr()
    size = path.stat().st_size
    assert f"reading: {size}/{size} (100%)" in err  # progress while reading, too
    warned = [line for line in err.splitlines() if line.startswith("lmdk: warning:")]
    assert warned[0].startswith("lmdk: warning: the 1 place(s) in ")
    assert "cover none of the" in warned[0]
    assert err.count("lmdk: warning:") == 1  # numpy's "All-NaN slice" is not passed on
    assert ".py:" not in err and "Warning:" not in err and "All-NaN" not in err
    assert "Far" in out


def _population(tmp_path, *extra):
    return main(["population", "--generate", "6", "--points-per-user", "20", "--days", "1",
                 "--cell-m", "3000", "--tau", "1", "--seed", "1", *map(str, extra)])


def test_population_checks_output_and_side_files_before_the_work(tmp_path, capsys):
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("mine")
    assert _population(tmp_path, "--out", full, "--progress") == 1
    err = capsys.readouterr().err
    assert "output exists and is not an empty directory" in err
    assert "generating" not in err and "partitions" not in err  # nothing was done first
    for option in ("--places", "--preferences"):
        missing = tmp_path / f"{option[2:]}.csv"
        assert _population(tmp_path, option, missing, "--out", tmp_path / "o", "--progress") == 1
        err = capsys.readouterr().err
        assert err.strip().splitlines()[-1] == f"lmdk: error: {option} {missing}: no such file"
        assert "generating" not in err
    assert not (tmp_path / "o").exists()


def test_population_warns_when_places_cover_no_point_and_shows_writing(tmp_path, capsys):
    far = tmp_path / "far.csv"
    far.write_text("uid,lat,lon,radius_m\nu00000,-33.9,18.4,100\n")
    assert _population(tmp_path, "--places", far, "--out", tmp_path / "o", "--progress") == 0
    err = capsys.readouterr().err
    assert "lmdk: warning: the 1 place(s) cover none of the points of the 6 users" in err
    assert "write: 3/3 (100%)" in err
    assert ".py:" not in err


def test_population_shows_progress_while_reading(tmp_path, capsys, small_blocks):
    from lmdk_core.population import generate_population

    traj, _ = generate_population(5, points_per_user=20, days=1, rng=1)
    path = tmp_path / "t.csv"
    traj.assign(uid=traj["uid"].astype(str)).to_csv(path, index=False)
    assert main(["population", str(path), "--start", "2008-02-02", "--end", "2008-02-03",
                 "--cell-m", "3000", "--tau", "1", "--seed", "1", "--out", str(tmp_path / "o"),
                 "--progress"]) == 0
    size = path.stat().st_size
    assert f"reading: {size}/{size} (100%)" in capsys.readouterr().err


def test_a_release_with_no_position_says_so(trace, tmp_path, capsys):
    """Every point at a place: Skip releases nothing, and the publisher is told, not handed an
    empty file silently."""
    path, _ = trace
    everywhere = tmp_path / "all.geojson"
    everywhere.write_text(json.dumps(lm.places_to_geojson([lm.Place("All", 39.99, 116.33,
                                                                    50_000)])))
    out = tmp_path / "o"
    assert _run(path, "--places", everywhere, "--out", out, "--seed", "1") == 0
    err = capsys.readouterr().err
    assert "lmdk: warning: the skip release of user 'alice' holds no position" in err
    name = E.export_file_name("public", "skip", "csv", epsilon=1)
    assert (out / name).read_text().splitlines()[1:] == ["time,lat,lon"]  # after the # label
