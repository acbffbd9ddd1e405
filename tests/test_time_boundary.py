"""One time rule for every public entry point that takes times (lmdk_core.times).

The same instants, spelled in every way a caller might (naive, tz-aware, other units, unsorted)
and the spellings the package refuses (integers, floats, text, NaT, mixed zones), are fed to each
entry point. Every entry point must accept the same spellings — with the result an independent
numpy computation on the true UTC instants predicts — and refuse the others with the same
ParameterError message. Before lmdk_core.times was the only converter, integer times were refused
by ``time_slice`` and ``release_locations`` (with two different messages) but read as
nanoseconds by ``release_interval`` and ``region_events``, and text was parsed by two of them.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from ast_scan import gc_paused

import lmdk_core as lk
from lmdk_core.errors import ParameterError
from lmdk_core.interval import release_interval
from lmdk_core.patterns import region_events
from lmdk_core.times import epoch_ns, event_ns, ns_index, utc_timestamp

NS = 1_000_000_000
# 14 fixes of one user around the 2024 Paris DST change (31 Mar, 01:00 UTC): 17-minute steps,
# then a 2-hour gap. A zone dropped instead of converted, or a unit misread, moves every result.
REF = (np.datetime64("2024-03-30T22:05:00", "ns").astype(np.int64)
       + np.r_[np.arange(8) * 17 * 60, 8 * 17 * 60 + 7200 + np.arange(6) * 17 * 60] * NS)
LAT = 48.85 + np.arange(REF.size) * 1e-4  # row i at latitude 48.85 + i/10^4: rows are traceable
START, END = pd.Timestamp("2024-03-31 01:00", tz="Europe/Paris"), "2024-03-31T02:30:00Z"
ZONE = lk.Place("Zone", 48.8507, 2.35, 5000)


def _frame(time: object, order: np.ndarray | None = None) -> pd.DataFrame:
    df = pd.DataFrame({"uid": "u", "time": time, "lat": LAT, "lon": 2.35,
                       "row": np.arange(REF.size)})
    return df if order is None else df.iloc[order].reset_index(drop=True)


UTC = pd.Series(ns_index(REF))
PERM = np.random.default_rng(3).permutation(REF.size)
mixed = UTC.astype(object)
mixed.iloc[::2] = [t.tz_convert("Asia/Tokyo") for t in UTC.iloc[::2]]
nat = UTC.copy()
nat.iloc[5] = pd.NaT
ACCEPTED = {
    "naive ns": _frame(REF.view("datetime64[ns]")),
    "naive s": _frame(REF.view("datetime64[ns]").astype("datetime64[s]")),
    "aware Paris": _frame(UTC.dt.tz_convert("Europe/Paris")),
    "aware +08:00 us": _frame(UTC.dt.tz_convert("Etc/GMT-8").dt.as_unit("us")),
    "unsorted": _frame(UTC, PERM),
}
REFUSED = {
    "int ns": _frame(REF),
    "int s": _frame(REF // NS),
    "float s": _frame(REF / NS),
    "strings": _frame(UTC.dt.strftime("%Y-%m-%dT%H:%M:%SZ")),
    "NaT": _frame(nat),
    "mixed zones": _frame(mixed),
}


def _via_release_locations(df: pd.DataFrame) -> object:
    rel = lk.release_locations(df, np.zeros(len(df), bool), epsilon=1.0, scheme="uniform",
                               radius_m=200, rng=1)
    return rel.time.view(np.int64)


def _via_release_with_budget(df: pd.DataFrame) -> object:
    return lk.release_with_budget(df, budget=np.full(len(df), 0.5), rng=1).time.view(np.int64)


def _via_ledger(df: pd.DataFrame) -> object:
    rel = lk.release_with_budget(df, budget=np.full(len(df), 0.5), rng=1)
    ledger = lk.ReleaseLedger().add(rel, key="a")
    return ledger.entries[0].times.view(np.int64)


def _via_time_slice(df: pd.DataFrame) -> object:
    return lk.time_slice(df, START, END)["row"].to_numpy()


def _via_summary(df: pd.DataFrame) -> object:
    s = lk.summary(df)
    return np.array([s["start"].value, s["end"].value])


def _via_release_interval(df: pd.DataFrame) -> object:
    return df["row"].to_numpy()[release_interval(df, [], interval_s=3600).kept]


def _via_region_events(df: pd.DataFrame) -> object:
    stream = region_events(df, [ZONE], kinds=("enter",), max_gap_s=1800)
    return stream.tick_time[stream.tick]


ENTRY_POINTS: dict[str, Callable[[pd.DataFrame], object]] = {
    "release_locations": _via_release_locations,
    "release_with_budget": _via_release_with_budget,
    "Ledger.add": _via_ledger,
    "time_slice": _via_time_slice,
    "summary": _via_summary,
    "release_interval": _via_release_interval,
    "region_events": _via_region_events,
}


def _expected(name: str, df: pd.DataFrame) -> np.ndarray:
    """What ``name`` must return, computed from the true UTC instants with plain numpy."""
    rows = df["row"].to_numpy()
    t = REF[rows]  # the instants, in the frame's row order
    if name in ("release_locations", "release_with_budget", "Ledger.add"):
        return t
    if name == "time_slice":
        lo, hi = utc_timestamp(START, "start").value, utc_timestamp(END, "end").value
        return rows[(t >= lo) & (t <= hi)]
    if name == "summary":
        return np.array([t.min(), t.max()])
    order = np.argsort(t, kind="stable")
    ts = t[order]
    if name == "release_interval":  # first fix of each epoch-aligned hour, in input order
        hour = ts // (3600 * NS)
        first = np.r_[True, hour[1:] != hour[:-1]]
        return rows[np.sort(order[first])]
    # region_events: every fix is in the zone; a visit starts at the first fix and after a gap
    return ts[np.r_[True, np.diff(ts) > 1800 * NS]]


@pytest.mark.parametrize("spelling", ACCEPTED)
def test_every_entry_point_reads_the_same_instants(spelling):
    df = ACCEPTED[spelling]
    for name, call in ENTRY_POINTS.items():
        got = call(df)
        assert np.array_equal(got, _expected(name, df)), (name, spelling)


@pytest.mark.parametrize("spelling", REFUSED)
def test_every_entry_point_refuses_with_the_same_message(spelling):
    messages = {}
    for name, call in ENTRY_POINTS.items():
        with pytest.raises(ParameterError) as err:
            call(REFUSED[spelling])
        messages[name] = str(err.value)
    assert len(set(messages.values())) == 1, messages
    (message,) = set(messages.values())
    assert message.startswith("time ")
    if spelling in ("int ns", "int s", "float s"):
        assert "got numbers" in message and "unit='s'" in message
    if spelling == "NaT":
        assert message.endswith("row 5")


def test_the_reference_is_not_trivial():
    """The fixture would catch a dropped zone or a misread unit: results differ when shifted."""
    df = ACCEPTED["naive ns"]
    shifted = df.assign(time=(REF + 3600 * NS).view("datetime64[ns]"))  # Paris read as UTC
    assert not np.array_equal(_via_time_slice(shifted), _expected("time_slice", df))
    assert not np.array_equal(_via_release_interval(df.iloc[::-1].reset_index(drop=True)),
                              _expected("release_interval", df))
    assert _expected("region_events", df).size == 2
    assert 0 < _expected("time_slice", df).size < REF.size


def test_pattern_ticks_take_the_boundary_output_as_is():
    """Streams store int64 ns, the format the boundary returns; datetimes convert the same way."""
    aware = UTC.dt.tz_convert("Europe/Paris")
    assert np.array_equal(event_ns(REF), REF)
    assert np.array_equal(event_ns(aware), epoch_ns(aware)) and np.array_equal(epoch_ns(aware), REF)
    with pytest.raises(ParameterError, match="got numbers"):
        event_ns(REF / NS)
    s = region_events(ACCEPTED["aware Paris"], [ZONE], kinds=("enter",), max_gap_s=1800)
    later = s.time_slice(start=pd.Timestamp(int(REF[8]), tz="UTC").tz_convert("Asia/Tokyo"))
    assert np.array_equal(later.tick_time, REF[8:])
    assert np.array_equal(s.time_slice(start=int(REF[8])).tick_time, REF[8:])


@pytest.mark.parametrize("pandas_2", [False, True])
def test_iso_text_parses_alike_on_pandas_2_and_3(monkeypatch, pandas_2):
    """The readers' text parsing: offsets applied, naive text taken as UTC, whatever the order.

    pandas 2.2's ``format="ISO8601"`` shifts a naive time by an earlier row's offset; the pandas 2
    branch parses the two kinds apart (forced here, so both branches run on either pandas).
    """
    from lmdk_core import times

    monkeypatch.setattr(times, "PANDAS_2", pandas_2 or times.PANDAS_2)
    text = pd.Series(["2020-01-01T10:00:00+02:00", "2020-01-01 09:00:00", "2020-01-01T09:30Z",
                      "2020-01-01", "not a time", "3000-01-01T00:00:00Z"])
    parsed, out = times.parse_iso_utc(text)
    want = ["2020-01-01 08:00", "2020-01-01 09:00", "2020-01-01 09:30", "2020-01-01"]
    assert list(parsed.iloc[:4]) == [pd.Timestamp(w, tz="UTC") for w in want]
    assert parsed.iloc[4] is pd.NaT
    if times.PANDAS_2:  # pandas 2 cannot hold year 3000 (NaT): named by the mask
        assert out.tolist() == [False] * 5 + [True]
    else:
        assert not out[:5].any()


# --- the boundary is the only converter: an AST scan of the package and the app -----------------
PKG = Path(lk.__file__).resolve().parent
APP = Path(__file__).resolve().parents[1] / "dashboard"
"""The app's pages and sections: they take times from lmdk_core.times too (its own conversions were
five: a guide duration, a page's day split and timeline bounds)."""
CONVERTERS = {"to_datetime", "to_timedelta", "DatetimeIndex", "datetime64"}  # calls
TIME_ATTRS = {"asi8", "tz_localize", "tz_convert", "as_unit"}
ALLOWED = {  # module: why it may convert itself
    # the readers parse raw files: epoch numbers in the unit the file declares and text, then hand
    # the result to lmdk_core.times (ticks_ns / parse_iso_utc) for the checks every entry shares
    "readers/canonical.py", "readers/takeout.py",
    # writes times back out as text at the coarsest exact unit: the output side, not an input
    "export.py",
    # the synthetic taxi generator's own clock (seconds from a fixed public start); reads no caller
    # times
    "patterns/taxi.py",
}


def _is_time_dtype(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.lstrip("<>=").startswith(("datetime64", "M8"))
    return isinstance(node, ast.Attribute) and node.attr == "datetime64"


def time_conversions(source: str) -> list[tuple[int, str]]:
    """(line, what) of each own time conversion in ``source``: pandas/numpy datetime parsing or
    casting, zone handling, raw nanosecond reads, Timestamps built from numbers, and ns↔s scaling
    by a literal 1e9 / 10**9 (docstrings and comments are not code, so they never count)."""
    hits = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            keys = {k.arg: k.value for k in node.keywords}
            if name in CONVERTERS:
                hits.append((node.lineno, f"{name}()"))
            elif name in ("astype", "view") and node.args and _is_time_dtype(node.args[0]):
                hits.append((node.lineno, f".{name}(datetime64)"))
            elif "dtype" in keys and _is_time_dtype(keys["dtype"]) and name != "zeros":
                hits.append((node.lineno, f"{name}(dtype=datetime64)"))
            elif name == "Timestamp" and {"tz", "unit"} & set(keys):
                hits.append((node.lineno, "Timestamp(number, tz/unit)"))
        elif isinstance(node, ast.Attribute) and node.attr in TIME_ATTRS:
            hits.append((node.lineno, f".{node.attr}"))
        elif (isinstance(node, ast.Constant) and type(node.value) in (int, float)
              and node.value == 1e9):
            hits.append((node.lineno, "1e9"))
        elif (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow)
              and getattr(node.left, "value", None) == 10
              and getattr(node.right, "value", None) == 9):
            hits.append((node.lineno, "10**9"))
    return sorted(hits)


def test_no_module_converts_times_itself():
    """Every time conversion, in the library and in the app, goes through lmdk_core/times.py (a
    few justified library modules aside)."""
    found = {}
    with gc_paused():
        for path in sorted([*PKG.rglob("*.py"), *APP.rglob("*.py")]):
            rel = path.relative_to(PKG if path.is_relative_to(PKG) else APP.parent).as_posix()
            if rel == "times.py" or rel in ALLOWED:
                continue
            hits = time_conversions(path.read_text(encoding="utf-8"))
            if hits:
                found[rel] = hits
    assert APP.is_dir() and not found, f"own time conversions outside lmdk_core/times.py: {found}"
    assert all((PKG / rel).is_file() for rel in ALLOWED), "stale allowlist entry"
    assert time_conversions((PKG / "times.py").read_text(encoding="utf-8")), "scan sees nothing"


@pytest.mark.parametrize("line", [
    'pd.to_datetime(df["time"], utc=True)',
    'np.asarray(t).astype("datetime64[ns]")',
    "t.view('M8[ns]')",
    't.to_numpy(dtype="datetime64[ns]")',
    "idx.asi8",
    'ts.tz_localize("UTC")',
    "pd.DatetimeIndex(t, tz='UTC')",
    "pd.Timestamp(start, tz='UTC')",
    "(end - start) / 1e9",
    "secs * 1_000_000_000",
    "t // 10**9",
])
def test_the_scan_catches_each_kind_of_conversion(line):
    """The deliberately broken variants of the modules fixed so far: each line is found."""
    assert time_conversions(f"def f(df, t, idx, ts, start, end, secs):\n    return {line}\n")
    assert not time_conversions(f'def f():\n    """{line}"""\n    # {line}\n')
