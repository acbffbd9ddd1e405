"""Exports: PUBLIC release files (CSV, GeoJSON) and ONE PRIVATE analysis file (JSON).

Public files hold only what an observer of the release is meant to see: the time (ISO 8601 UTC)
and the released location (or value) — no landmark flag, no ε_t, no published flag, no place
names, no settings. Republished rows stay as they are: landmark privacy takes the landmark
timestamps as public input, so a scheme's repeats (Skip) can show when the landmarks were;
hiding them is the job of dummy landmarks.

* :func:`release_to_csv` — one row per timestamp that carries a release (:func:`public_frame`):
  ``time`` (when known), ``lat``/``lon`` or ``value``; floats at full precision (they read back
  to the same doubles). Timestamps with nothing released yet (NaN: Skip before its first
  publication) are left out — which rows those are is read off the released output alone.
* :func:`release_to_geojson` — a FeatureCollection of one Point per released timestamp with the
  single property ``time`` (ISO 8601 UTC or null); the same rows.
* :func:`export_file_name` — file names that carry the allocation and the budget ε
  (``lmdk_public_release_skip_eps0.5.csv``), never a seed or a place.
* :func:`privacy_report` / :func:`report_to_json` — the private analysis file: its first key
  ``PRIVATE`` says it holds the user's places and true-data analysis and must not be shared;
  then the exact release configuration (no seed), the places, ε_t, G_t, published flags,
  BPL/FPL/TPL and the landmark loss, a summary judged against the user's ε and metrics computed
  from the true data. Strict JSON: NaN and ±inf become ``null``, numpy values plain numbers.

* :func:`write_release_files` / :func:`write_release_csv` / :func:`write_release_geojson` /
  :func:`write_report_json` — the same bytes written to binary files a chunk of rows at a time
  (:data:`DEFAULT_CHUNK_ROWS`), each column encoded by Arrow kernels (floats as Python's
  ``repr``, times at one ISO precision per series): memory follows the chunk, and the bytes
  do not depend on the chunk size. ``privacy_report(..., as_arrays=True)`` keeps the series as
  arrays for :func:`write_report_json`.

A seeded release (``Release.seeded``) is a simulation: every file says "simulation, not private"
(the CSV in a leading ``#`` comment line, the GeoJSON and the report in their ``lmdk`` marker).
Landmark places export through :func:`lmdk_core.places.places_to_geojson` (also private).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
import pathlib
import re
from collections.abc import Callable, Iterator, Mapping
from typing import IO, Any, Literal

import numpy as np
import pandas as pd

from ._version import __version__
from .accounting import landmark_guarantee
from .errors import ParameterError
from .validation import check_epsilon, check_same_length

__all__ = [
    "DEFAULT_CHUNK_ROWS",
    "PRIVATE_NOTICE",
    "REPORT_FORMAT_VERSION",
    "allocation_name",
    "export_file_name",
    "iso_utc",
    "jsonable",
    "privacy_report",
    "public_frame",
    "release_to_csv",
    "release_to_geojson",
    "released_rows",
    "report_to_json",
    "write_release_csv",
    "write_release_files",
    "write_release_geojson",
    "write_report_json",
]

REPORT_FORMAT_VERSION = 2
"""Version of the ``"lmdk"`` marker written into exported GeoJSON and reports (2: public files
hold only released fields; the report is the private analysis file)."""

PRIVATE_NOTICE = (
    "PRIVATE: this file contains your landmark places and an analysis of your true data "
    "(which timestamps are landmarks, the budget spent there, errors against your real "
    "locations). Do not share or publish it. Publish only the release CSV/GeoJSON files."
)
"""The first key's value of every private analysis file."""

_SECRET_KEYS = frozenset({"seed", "rng"})


def iso_utc(time: Any) -> np.ndarray:
    """ISO 8601 UTC strings (``2024-05-01T08:00:00Z``) for datetimes; naive times are taken as UTC.

    The precision is the coarsest of s/ms/us/ns that represents every timestamp exactly.
    """
    v = _utc_ns(time)
    unit = _iso_unit(v)
    return np.datetime_as_string(v.astype(f"datetime64[{unit}]"), unit=unit, timezone="UTC")


def _utc_ns(time: Any) -> np.ndarray:
    """Times as naive-UTC ``datetime64[ns]`` (aware ones converted, naive ones taken as UTC)."""
    t = pd.DatetimeIndex(time)
    if t.tz is not None:
        t = t.tz_convert("UTC").tz_localize(None)
    return t.to_numpy().astype("datetime64[ns]")


def _iso_unit(v: np.ndarray) -> Literal["s", "ms", "us", "ns"]:
    """The coarsest of s/ms/us/ns that represents every time of ``v`` (datetime64[ns]) exactly:
    chosen once per series, so a file written in chunks has one precision throughout."""
    ns = v.astype(np.int64)
    units: tuple[tuple[Literal["s", "ms", "us"], int], ...] = (
        ("s", 10**9), ("ms", 10**6), ("us", 10**3))
    for u, div in units:
        if np.all(ns % div == 0):
            return u
    return "ns"


# ----------------------------------------------------------------------------- vectorised text
# Every exported number is written as Python's ``repr`` writes it (what ``json.dumps`` and
# ``DataFrame.to_csv`` wrote before the exports streamed), but encoded column-wise with Arrow
# kernels, one chunk of rows at a time: no Python object per element.

DEFAULT_CHUNK_ROWS = 1 << 17
"""Rows encoded and written at once by the streaming writers (memory ∝ this, not the series)."""

_Progress = Callable[[str, int, int], None]


def _pa() -> tuple[Any, Any]:
    import pyarrow as pa
    import pyarrow.compute as pc

    return pa, pc


def _float_text(a: np.ndarray) -> Any:
    """Arrow strings of ``repr(float(x))`` for finite ``x``, null for NaN/±inf.

    Arrow's shortest round-trip digits are Python's; only the layout differs, by magnitude
    (10^k are exact doubles, so comparing |x| with them gives the decimal exponent of the
    shortest digits exactly): whole numbers below 1e10 lack Python's ``.0``; 1e-9 ≤ |x| < 1e-6
    has a one-digit exponent (Python pads to two); 1e-6 ≤ |x| < 1e-4 is positional in Arrow and
    exponent form in Python; 1e10 ≤ |x| < 1e16 the reverse. Each class is re-laid out as a whole
    (a loop over at most 8 classes, never over values); the rest is already Python's text.
    """
    pa, pc = _pa()
    a = np.asarray(a, dtype=np.float64)
    # few distinct values (budgets, guarantees): format each once; a sample decides first
    if a.size > 64 and np.unique(a[:: max(1, a.size // 256)].view(np.int64)).size <= 32:
        codes, uniq = pd.factorize(a.view(np.int64))  # by bits: -0.0 is not 0.0
        if uniq.size * 8 <= a.size:
            return _float_text(np.asarray(uniq).view(np.float64)).take(pa.array(codes))
    finite = np.isfinite(a)
    text = pc.cast(pa.array(a, mask=~finite), pa.string())
    mag = np.abs(np.where(finite, a, 1.0))
    fixes: list[tuple[np.ndarray, Any]] = []

    def add(at: np.ndarray, fix: Callable[[Any, Any], Any]) -> None:
        if at.size:
            sub = text.take(pa.array(at))
            sign = pa.array(np.where(a[at] < 0, "-", ""))
            fixes.append((at, fix(sub, sign)))

    whole = np.flatnonzero(finite & (mag < 1e10) & (a == np.floor(np.where(finite, a, 0.5))))
    add(whole, lambda t, _: pc.binary_join_element_wise(t, ".0", ""))
    add(np.flatnonzero((mag >= 1e-9) & (mag < 1e-6)),
        lambda t, _: pc.replace_substring(t, "e-", "e-0"))
    for k in (5, 6):  # 1e-k <= |x| < 1e-(k-1): Arrow 0.0000ddd → Python d.ddde-0k
        def small(t: Any, sign: Any, k: int = k) -> Any:
            d = pc.utf8_slice_codeunits(pc.ascii_ltrim(t, "-"), k + 1)  # after "0." + k-1 zeros
            rest = pc.utf8_slice_codeunits(d, 1)
            head = pc.utf8_slice_codeunits(d, 0, 1)
            dot = pc.if_else(pc.equal(pc.utf8_length(rest), 0), "", ".")
            return pc.binary_join_element_wise(sign, head, dot, rest, f"e-0{k}", "")
        add(np.flatnonzero((mag >= 10.0**-k) & (mag < 10.0 ** (1 - k))), small)
    for k in range(10, 16):  # 10^k <= |x| < 10^(k+1): Arrow d.ddde+k → Python positional
        def big(t: Any, sign: Any, k: int = k) -> Any:
            mant = pc.utf8_slice_codeunits(pc.ascii_ltrim(t, "-"), 0, -4)  # drop "e+1k"
            d = pc.replace_substring(mant, ".", "")
            ipart = pc.utf8_rpad(pc.utf8_slice_codeunits(d, 0, k + 1), k + 1, "0")
            frac = pc.utf8_slice_codeunits(d, k + 1)
            frac = pc.if_else(pc.equal(pc.utf8_length(frac), 0), "0", frac)
            return pc.binary_join_element_wise(sign, ipart, ".", frac, "")
        add(np.flatnonzero((mag >= 10.0**k) & (mag < 10.0 ** (k + 1))), big)
    if not fixes:
        return text
    idx = np.arange(a.size)
    offset = a.size
    for at, _ in fixes:
        idx[at] = offset + np.arange(at.size)
        offset += at.size
    return pa.concat_arrays([text, *(f for _, f in fixes)]).take(pa.array(idx))


def _iso_text(v: np.ndarray, unit: str) -> Any:
    """Arrow strings of ISO 8601 UTC times (``v``: naive-UTC datetime64[ns]) at ``unit``, as
    :func:`iso_utc` writes them (``2024-05-01T08:00:00Z``)."""
    pa, pc = _pa()
    text = pc.cast(pa.array(v.astype(f"datetime64[{unit}]")), pa.string())
    return pc.binary_join_element_wise(pc.replace_substring(text, " ", "T", max_replacements=1),
                                       "Z", "")


def _joined(items: Any, sep: str) -> memoryview:
    """``sep.join(items)`` for an Arrow string array without nulls, as UTF-8 bytes (a view of
    Arrow's buffer: no copy)."""
    pa, pc = _pa()
    if len(items) == 0:
        return memoryview(b"")
    s = pc.binary_join_element_wise(items, sep, "") if sep else items
    if isinstance(s, pa.ChunkedArray):
        s = s.combine_chunks()
    width = np.int64 if pa.types.is_large_string(s.type) else np.int32
    off = np.frombuffer(s.buffers()[1], dtype=width)[s.offset: s.offset + len(s) + 1]
    data = s.buffers()[2]
    end = int(off[-1]) - len(sep.encode())
    return memoryview(data)[int(off[0]):end] if data is not None else memoryview(b"")


def _chunks(n: int, chunk_rows: int) -> Iterator[tuple[int, int]]:
    if not isinstance(chunk_rows, (int, np.integer)) or chunk_rows < 1:
        raise ParameterError(f"chunk_rows must be a positive integer, got {chunk_rows!r}")
    for i in range(0, n, int(chunk_rows)):
        yield i, min(n, i + int(chunk_rows))


def _json_items(a: np.ndarray) -> Any:
    """JSON text of each element of a numeric, boolean or datetime array (null for NaN/±inf)."""
    pa, pc = _pa()
    kind = a.dtype.kind
    if kind == "f":
        return pc.fill_null(_float_text(a), "null")
    if kind == "b":
        return pc.if_else(pa.array(a), "true", "false")
    if kind in "iu":
        return pc.cast(pa.array(a), pa.string())
    if kind == "M":
        v = _utc_ns(a)
        return pc.binary_join_element_wise('"', _iso_text(v, _iso_unit(v)), '"', "")
    raise ParameterError(f"cannot encode a {a.dtype} array as JSON")


def _json_array_pieces(a: np.ndarray, chunk_rows: int) -> Iterator[bytes]:
    """``json.dumps(list)`` of a 1-D array (separator ``", "``), one chunk of rows at a time."""
    yield b"["
    if a.dtype.kind == "M":  # one ISO precision over the whole series, not per chunk
        v = _utc_ns(a)
        unit = _iso_unit(v)
        enc: Callable[[np.ndarray], Any] = lambda c: _pa()[1].binary_join_element_wise(  # noqa: E731
            '"', _iso_text(c, unit), '"', "")
        a = v
    else:
        enc = _json_items
    for i, (lo, hi) in enumerate(_chunks(a.size, chunk_rows)):
        yield (b", " if i else b"") + _joined(enc(a[lo:hi]), ", ")
    yield b"]"


def _simulation_label(release: Any) -> str | None:
    if not getattr(release, "seeded", False):
        return None
    from .release import SIMULATION_LABEL

    return SIMULATION_LABEL


def release_to_csv(release: Any) -> str:
    """The PUBLIC release as CSV text (header row, no index): ``time`` (ISO 8601 UTC, when
    known) and ``lat``/``lon`` or ``value``, one row per timestamp that carries a release
    (:func:`released_rows`: no row before the first publication). A seeded release starts with
    a ``#`` comment line
    saying it is a simulation, not private (read it back with ``pd.read_csv(..., comment="#")``).
    The text of :func:`write_release_csv`.
    """
    import io

    buf = io.BytesIO()
    write_release_csv(release, buf)
    return buf.getvalue().decode("utf-8")


def _public_columns(release: Any) -> dict[str, np.ndarray]:
    """The public columns of ``Release.to_frame(public=True)``, as arrays (time naive UTC)."""
    cols: dict[str, np.ndarray] = {}
    if getattr(release, "time", None) is not None:
        cols["time"] = _utc_ns(release.time)
    if getattr(release, "values", None) is not None:
        cols["value"] = np.asarray(release.values, dtype=np.float64)
    else:
        cols["lat"] = np.asarray(release.lat, dtype=np.float64)
        cols["lon"] = np.asarray(release.lon, dtype=np.float64)
    return cols


def _carries_release(cols: Mapping[str, np.ndarray]) -> np.ndarray:
    """Rows of the public columns ``cols`` with a released value (no NaN in lat/lon/value)."""
    values = [v for k, v in cols.items() if k != "time"]
    keep = ~np.isnan(values[0])
    for v in values[1:]:
        keep &= ~np.isnan(v)
    return keep


def released_rows(release: Any) -> np.ndarray:
    """Boolean mask of the timestamps the public files hold: those with a released location
    (or value). A timestamp with nothing released yet (NaN — Skip before its first
    publication) has no row. The mask is a function of the released output alone (free
    post-processing; docs/exports.md)."""
    return _carries_release(_public_columns(release))


def public_frame(release: Any) -> pd.DataFrame:
    """The PUBLIC release as a DataFrame: the rows and columns of :func:`release_to_csv`
    (``time`` as UTC timestamps when known, ``lat``/``lon`` or ``value``; index 0..n-1)."""
    frame = release.to_frame(public=True)
    return frame.loc[released_rows(release)].reset_index(drop=True)


def write_release_csv(release: Any, fh: IO[bytes], *, chunk_rows: int = DEFAULT_CHUNK_ROWS,
                      progress: _Progress | None = None) -> None:
    """Write the PUBLIC release CSV (the text of :func:`release_to_csv`) to the binary file
    ``fh``, ``chunk_rows`` rows at a time: the same bytes for every ``chunk_rows``. Floats as
    Python writes them (full precision), NaN as an empty field, times at one ISO precision for
    the whole file; rows with nothing released are left out, chunk by chunk.
    ``progress(stage, done, total)`` is called after each chunk."""
    write_release_files(release, csv=fh, chunk_rows=chunk_rows, progress=progress)


def _csv_floats(text: Any, v: np.ndarray) -> Any:
    """CSV fields of floats as pandas writes them: ±inf as ``inf``/``-inf`` (NaN rows are
    dropped before; an empty field is left for any that is not)."""
    pa, pc = _pa()
    inf = np.isinf(v)
    if inf.any():
        text = pc.if_else(pa.array(inf), pa.array(np.where(v > 0, "inf", "-inf")), text)
    return pc.fill_null(text, "")


def write_release_files(release: Any, *, csv: IO[bytes] | None = None,
                        geojson: IO[bytes] | None = None, chunk_rows: int = DEFAULT_CHUNK_ROWS,
                        progress: _Progress | None = None) -> None:
    """Write the PUBLIC CSV (:func:`write_release_csv`) and/or GeoJSON
    (:func:`write_release_geojson`) in one pass over the rows, encoding each chunk's times and
    coordinates once for both files. Both hold only the rows that carry a release
    (:func:`released_rows`), dropped a chunk at a time."""
    pa, pc = _pa()
    cols = _public_columns(release)
    n = len(next(iter(cols.values())))
    if geojson is not None:
        head, _, _, _ = _geojson_parts(release)
        text = json.dumps(head)
        geojson.write(text[:-2].encode())  # up to the features' "["
        lat, lon = cols["lat"], cols["lon"]
        ok_all = np.isfinite(lat) & np.isfinite(lon)
        gunit = _iso_unit(cols["time"][ok_all]) if "time" in cols else "s"
    if csv is not None:
        label = _simulation_label(release)
        if label is not None:
            csv.write(f"# lmdk {label}\n".encode())
        csv.write((",".join(cols) + "\n").encode())
    released = _carries_release(cols)
    unit = _iso_unit(cols["time"][released]) if "time" in cols else "s"
    first_feature = True
    for lo, hi in _chunks(n, chunk_rows):
        text_of = {k: (_iso_text(v[lo:hi], unit) if k == "time" else _float_text(v[lo:hi]))
                   for k, v in cols.items()}
        if csv is not None:
            rows = released[lo:hi]
            take = None if rows.all() else pa.array(np.flatnonzero(rows))
            fields = [t if take is None else t.take(take) for t in (
                t if k == "time" else _csv_floats(t, cols[k][lo:hi]) for k, t in text_of.items())]
            lines = pc.binary_join_element_wise(*fields, ",") if len(fields) > 1 else fields[0]
            if len(lines):
                csv.write(_joined(lines, "\n"))
                csv.write(b"\n")
        if geojson is not None:
            ok = ok_all[lo:hi]
            keep = None if ok.all() else pa.array(np.flatnonzero(ok))

            def sub(t: Any, keep: Any = keep) -> Any:
                return t if keep is None else t.take(keep)

            if "time" not in cols:
                tm = pa.array(np.full(int(ok.sum()), "null"))
            else:
                tt = text_of["time"] if gunit == unit else _iso_text(cols["time"][lo:hi], gunit)
                tm = pc.binary_join_element_wise('"', sub(tt), '"', "")
            feat = pc.binary_join_element_wise(
                '{"type": "Feature", "geometry": {"type": "Point", "coordinates": [',
                sub(text_of["lon"]), ", ", sub(text_of["lat"]),
                ']}, "properties": {"time": ', tm, "}}", "")
            if len(feat):
                geojson.write(b"" if first_feature else b", ")
                geojson.write(_joined(feat, ", "))
                first_feature = False
        if progress is not None:
            progress("write", hi, n)
    if geojson is not None:
        geojson.write(b"]}")


def _public_marker(release: Any) -> dict:
    label = _simulation_label(release)
    return {
        "kind": "public-release",
        "version": REPORT_FORMAT_VERSION,
        "simulation": label is not None,
        **({"label": label} if label else {}),
    }


def _geojson_parts(release: Any) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray | None]:
    """(collection without features, lon, lat, naive-UTC times or None) of the finite rows."""
    if getattr(release, "lat", None) is None or getattr(release, "lon", None) is None:
        raise ParameterError(
            "only a locations release can be exported as GeoJSON (this one has values)"
        )
    lat = np.asarray(release.lat, dtype=np.float64)
    lon = np.asarray(release.lon, dtype=np.float64)
    check_same_length(lat.size, lon.size, "release lon")
    ok = np.flatnonzero(np.isfinite(lat) & np.isfinite(lon))
    times = None
    if getattr(release, "time", None) is not None:
        times = _utc_ns(np.asarray(release.time)[ok])
    head = {"type": "FeatureCollection", "lmdk": _public_marker(release), "features": []}
    return head, lon[ok], lat[ok], times


def release_to_geojson(release: Any) -> dict:
    """A locations release as a PUBLIC GeoJSON FeatureCollection (see module docstring).

    Raises ParameterError for a values release (no coordinates). For a file, prefer
    :func:`write_release_geojson` (the same JSON, written in chunks).
    """
    head, lon, lat, times = _geojson_parts(release)
    tl: list[Any] = iso_utc(times).tolist() if times is not None else [None] * lon.size
    coords = np.column_stack((lon, lat)).tolist()
    head["features"] = [
        {"type": "Feature", "geometry": {"type": "Point", "coordinates": c},
         "properties": {"time": tm}}
        for c, tm in zip(coords, tl, strict=True)
    ]
    return head


def write_release_geojson(release: Any, fh: IO[bytes], *,
                          chunk_rows: int = DEFAULT_CHUNK_ROWS,
                          progress: _Progress | None = None) -> None:
    """Write ``json.dumps(release_to_geojson(release))`` to the binary file ``fh``, encoding
    ``chunk_rows`` rows at a time (the same bytes for every ``chunk_rows``)."""
    _geojson_parts(release)  # a values release: refused before anything is written
    write_release_files(release, geojson=fh, chunk_rows=chunk_rows, progress=progress)


def _float_list(a: np.ndarray) -> list:
    """Float array → list with None for NaN/±inf."""
    a = np.asarray(a, dtype=np.float64)
    bad = ~np.isfinite(a)
    if not bad.any():
        return a.tolist()
    out = a.astype(object)
    out[bad] = None
    return out.tolist()


def jsonable(obj: Any, _path: str = "report", *, _arrays: bool = False) -> Any:
    """A copy of ``obj`` made of JSON types only: numpy → Python, NaN/±inf → None, datetimes →
    ISO 8601 strings, dataclasses → dicts, paths → str. Raises ParameterError for anything else.

    ``_arrays`` (internal): keep 1-D numeric, boolean and datetime arrays as numpy arrays, for
    :func:`write_report_json`, which encodes them column-wise.
    """
    if _arrays and isinstance(obj, np.ndarray) and obj.ndim == 1 and obj.dtype.kind in "fbiuM":
        return obj
    if _arrays and isinstance(obj, (pd.Series, pd.Index)):
        return jsonable(obj.to_numpy(), _path, _arrays=True)
    if _arrays and isinstance(obj, (Mapping, list, tuple)) and not isinstance(obj, pd.DataFrame):
        if isinstance(obj, Mapping):
            return {str(k): jsonable(v, f"{_path}.{k}", _arrays=True) for k, v in obj.items()}
        return [jsonable(v, f"{_path}[{i}]", _arrays=True) for i, v in enumerate(obj)]
    if obj is None or isinstance(obj, (str, bool)):
        return obj
    if isinstance(obj, (int, np.integer)) and not isinstance(obj, np.bool_):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        return x if math.isfinite(x) else None
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "fc":
            return _float_list(obj.real if obj.dtype.kind == "c" else obj)
        if obj.dtype.kind in "biu":
            return obj.tolist()
        if obj.dtype.kind == "M":
            return iso_utc(obj).tolist()
        return [jsonable(v, f"{_path}[{i}]") for i, v in enumerate(obj.tolist())]
    if isinstance(obj, (pd.Timestamp, _dt.datetime, np.datetime64)):
        return str(iso_utc([obj])[0])
    if isinstance(obj, (_dt.date, _dt.timedelta, pathlib.PurePath)):
        return str(obj)
    if isinstance(obj, (pd.Series, pd.Index)):
        return jsonable(obj.to_numpy(), _path)
    if isinstance(obj, pd.DataFrame):
        return {str(c): jsonable(obj[c].to_numpy(), f"{_path}.{c}") for c in obj.columns}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {
            f.name: jsonable(getattr(obj, f.name), f"{_path}.{f.name}")
            for f in dataclasses.fields(obj)
        }
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v, f"{_path}.{k}") for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [jsonable(v, f"{_path}[{i}]") for i, v in enumerate(obj)]
    raise ParameterError(f"{_path}: cannot be written to JSON (type {type(obj).__name__})")


def _temporal_dict(temporal: Any) -> dict | None:
    if temporal is None:
        return None
    get = (lambda k: temporal[k]) if isinstance(temporal, (Mapping, pd.DataFrame)) else (
        lambda k: getattr(temporal, k))
    return {k: np.asarray(get(k), dtype=np.float64) for k in ("bpl", "fpl", "tpl")}


def _without_secrets(obj: Any) -> Any:
    """A copy of nested settings without any ``seed``/``rng`` entry (never exported)."""
    if isinstance(obj, Mapping):
        return {k: _without_secrets(v) for k, v in obj.items() if str(k) not in _SECRET_KEYS}
    if isinstance(obj, list):
        return [_without_secrets(v) for v in obj]
    return obj


def _time_range(time: Any) -> dict | None:
    """UTC start/end and the number of released timestamps (None without times)."""
    if time is None or len(time) == 0:
        return None
    v = _utc_ns(np.asarray(time))
    unit = _iso_unit(v)  # the precision of the whole series, as the series itself is written
    ends = np.datetime_as_string(v[[0, -1]].astype(f"datetime64[{unit}]"), unit=unit,
                                 timezone="UTC")
    return {"start": str(ends[0]), "end": str(ends[1]), "n_timestamps": len(v)}


_ALLOCATION_NAMES = {"budget": "custom budget"}


def allocation_name(release: Any, allocation: str | None = None) -> str:
    """The short name of the allocation a release was drawn with, as files and pages show it.

    ``allocation``: the caller's name for a custom budget (e.g. ``"tpl_bounded"`` for the
    TPL-bounded allocation of :mod:`lmdk_core.correlation`); otherwise the scheme's name
    (``"custom budget"`` for a :func:`~lmdk_core.release.release_with_budget` release).
    """
    if allocation is not None:
        if not isinstance(allocation, str) or not allocation.strip():
            raise ParameterError("allocation must be a non-empty string or None")
        return allocation.strip()
    scheme = str(release.scheme)
    return _ALLOCATION_NAMES.get(scheme, scheme)


_FILE_KINDS = {
    "public": ("lmdk_public_release_{slug}", ""),
    "analysis": ("lmdk_PRIVATE_analysis_{slug}", "_DO_NOT_SHARE"),
    "story": ("lmdk_story_{slug}", ""),
    "private_story": ("lmdk_PRIVATE_story_{slug}", "_DO_NOT_SHARE"),
    "pattern": ("lmdk_public_pattern_release_{slug}", ""),
}


def _epsilon_text(epsilon: float) -> str:
    """ε as a file name writes it: at most 6 significant digits, no ``+`` (``1``, ``0.5``,
    ``0.333333``, ``1e-05``, ``1e07``)."""
    eps = check_epsilon(epsilon)
    return format(eps, ".6g").replace("e+", "e")


def export_file_name(kind: str, allocation: str, ext: str, *, epsilon: float) -> str:
    """File name of an export named after the allocation actually released and its budget ε.

    ``kind``: ``"public"`` (release CSV/GeoJSON), ``"analysis"`` (the private report),
    ``"story"`` (the public HTML story), ``"private_story"`` (the opt-in private one) or
    ``"pattern"`` (a pattern-level release of the Patterns page, named by its mechanism); private
    kinds carry ``PRIVATE`` and ``DO_NOT_SHARE`` in the name. ``allocation`` is reduced to
    ``[a-z0-9_]`` (e.g. ``"tpl_bounded"``), ``epsilon`` (the user's total budget ε > 0) is
    written with at most 6 significant digits (``_eps1``, ``_eps0.5``), ``ext`` is the suffix
    without the dot: ``lmdk_public_release_skip_eps0.5.csv``. Nothing else goes into a name (no
    seed, no place).
    """
    if kind not in _FILE_KINDS:
        raise ParameterError(f"unknown export kind {kind!r}; use one of {sorted(_FILE_KINDS)}")
    slug = "_".join(re.findall(r"[a-z0-9]+", str(allocation).lower())) or "release"
    if not re.fullmatch(r"[a-z0-9]+", str(ext)):
        raise ParameterError(f"file extension must be letters/digits without a dot, got {ext!r}")
    stem, tail = _FILE_KINDS[kind]
    return f"{stem.format(slug=slug)}_eps{_epsilon_text(epsilon)}{tail}.{ext}"


def privacy_report(
    *,
    release: Any,
    epsilon: float,
    guarantee: Any = None,
    settings: Mapping[str, Any] | None = None,
    places: Any = None,
    correlation: Mapping[str, Any] | None = None,
    temporal: Any = None,
    landmark_loss: Any = None,
    metrics: Mapping[str, Any] | None = None,
    allocation: str | None = None,
    release_interval_s: float | None = None,
    as_arrays: bool = False,
) -> dict:
    """The PRIVATE analysis file of one release, JSON-ready (see :func:`report_to_json`).

    ``epsilon``: the user's total budget ε — landmark privacy is judged against it in every
    path, including a release under a custom budget (``release_with_budget``) whose
    ``Release.epsilon`` may be something else. ``guarantee``: G_t per timestamp (default:
    computed from ``release.budget`` and ``release.landmarks``). ``places``: the landmark places
    (Place objects, dicts or tuples); ``correlation``: a description of the correlation model
    behind ``temporal``/``landmark_loss``; ``settings``: anything else worth recording (any
    ``seed``/``rng`` entry is dropped: a seed is never exported). ``allocation``: the name of
    the allocation released (see :func:`allocation_name`; default: the scheme's);
    ``release_interval_s``: the release interval in seconds (0 or None: every fix released).

    Keys, in order: ``PRIVATE`` (the :data:`PRIVATE_NOTICE`), ``lmdk`` (format marker, with
    ``simulation`` true for a seeded release), ``configuration`` (allocation, scheme, its
    parameters, the user's ε, budget source, randomness, kind, time range = UTC start/end and
    number of timestamps, length, release interval), ``places``, ``settings``,
    ``correlation``, ``series`` (``time``, ``eps`` = ε_t, ``published``, ``landmark``,
    ``guarantee`` = G_t), ``temporal`` (``bpl``, ``fpl``, ``tpl``, or null),
    ``landmark_temporal_loss``, ``summary`` (budget spent, max G_t, ``landmark_private`` = G_t ≤
    ε everywhere, exceedances, fresh share, max TPL / landmark loss) and ``metrics``. Every
    array has one entry per timestamp; non-finite numbers are null.

    ``as_arrays``: keep the per-timestamp series as numpy arrays (times as datetime64) instead
    of lists, for :func:`write_report_json` (the same file, without a Python object per entry).
    """
    epsilon = check_epsilon(epsilon)
    eps = np.asarray(release.budget, dtype=np.float64)
    n = eps.size
    lmk = np.asarray(release.landmarks, dtype=bool)
    check_same_length(n, lmk.size, "release landmarks")
    alloc = allocation_name(release, allocation)
    interval = None
    if release_interval_s is not None:
        interval = float(release_interval_s)
        if not math.isfinite(interval) or interval < 0:
            raise ParameterError(
                f"release_interval_s must be a finite number of seconds >= 0, got {interval!r}")
    g = (landmark_guarantee(eps, lmk) if guarantee is None
         else np.asarray(guarantee, dtype=np.float64))
    check_same_length(n, g.size, "guarantee")
    pub = np.asarray(release.published, dtype=bool)
    tol = 1e-9
    temp = _temporal_dict(temporal)
    if temp is not None:
        for k, v in temp.items():
            check_same_length(n, v.size, f"temporal {k}")
    lloss = None if landmark_loss is None else np.asarray(
        getattr(landmark_loss, "composed", landmark_loss), dtype=np.float64)
    if lloss is not None:
        check_same_length(n, lloss.size, "landmark_loss")

    def fmax(a: np.ndarray | None) -> float | None:
        return float(np.max(a)) if a is not None and a.size else None

    summary = {
        "allocation": alloc,  # the guarantee below is that of the allocation actually released
        "epsilon": epsilon,
        "n_timestamps": n,
        "n_landmarks": int(lmk.sum()),
        "budget_spent": float(eps.sum()),
        "fresh_share": float(pub.mean()) if n else None,
        "max_guarantee": fmax(g),
        "landmark_private": bool(np.all(g <= epsilon + tol)),
        "guarantee_exceeds_epsilon": int(np.sum(g > epsilon + tol)),
        "max_tpl": fmax(temp["tpl"]) if temp else None,
        # an UPPER BOUND on the landmarks' loss under correlation (docs/temporal-loss.md), not
        # the guarantee: it is reported, never judged against ε
        "max_landmark_temporal_loss_bound": fmax(lloss),
    }
    time = getattr(release, "time", None)
    label = _simulation_label(release)
    params = _without_secrets(dict(release.params) if release.params is not None else {})
    report = {
        "PRIVATE": PRIVATE_NOTICE,
        "lmdk": {
            "kind": "private-analysis",
            "version": REPORT_FORMAT_VERSION,
            "package_version": __version__,
            "simulation": label is not None,
            **({"label": label} if label else {}),
        },
        "configuration": {
            "kind": getattr(release, "kind", None),
            "allocation": alloc,
            "scheme": str(release.scheme),
            "params": params,
            "epsilon": epsilon,
            "budget_source": getattr(release, "budget_source", "scheme"),
            "randomness": (label or "fresh OS entropy (one draw per release, never reused)"),
            "time_range": _time_range(time),
            "n_timestamps": n,
            "release_interval_s": interval,
        },
        "places": None if places is None else [_place_dict(p) for p in places],
        "settings": _without_secrets(dict(settings or {})),
        "correlation": None if correlation is None else _without_secrets(dict(correlation)),
        "series": {
            "time": None if time is None else (
                _utc_ns(np.asarray(time)) if as_arrays else iso_utc(np.asarray(time)).tolist()),
            "eps": eps,
            "published": pub,
            "landmark": lmk,
            "guarantee": g,
        },
        "temporal": temp,
        "landmark_temporal_loss": lloss,
        "summary": summary,
        "metrics": dict(metrics or {}),
    }
    return jsonable(report, _arrays=as_arrays)


def _place_dict(p: Any) -> Any:
    if isinstance(p, Mapping) or dataclasses.is_dataclass(p):
        return p
    return list(p)


def _json_pieces(obj: Any, level: int, chunk_rows: int) -> Iterator[bytes]:
    """Indented JSON where objects nest one key per line but lists of scalars (and 1-D arrays,
    encoded ``chunk_rows`` entries at a time) stay on one line."""
    pad = "  " * (level + 1)
    if isinstance(obj, dict) and obj:
        yield b"{\n"
        for i, (k, v) in enumerate(obj.items()):
            yield f"{',' if i else ''}{'' if not i else chr(10)}{pad}".encode()
            yield f"{json.dumps(k, ensure_ascii=False)}: ".encode()
            yield from _json_pieces(v, level + 1, chunk_rows)
        yield ("\n" + "  " * level + "}").encode()
    elif isinstance(obj, list) and any(isinstance(v, (dict, list, np.ndarray)) for v in obj):
        yield b"[\n"
        for i, v in enumerate(obj):
            yield ((",\n" if i else "") + pad).encode()
            yield from _json_pieces(v, level + 1, chunk_rows)
        yield ("\n" + "  " * level + "]").encode()
    elif isinstance(obj, np.ndarray):
        yield from _json_array_pieces(obj, chunk_rows)
    else:
        yield json.dumps(obj, allow_nan=False, ensure_ascii=False,
                         separators=(", ", ": ")).encode()


def report_to_json(report: Mapping[str, Any]) -> str:
    """Strict JSON text of a report (NaN/inf → null; raises ParameterError on unsupported values).

    Readable layout: one key per line, each per-timestamp series on a single line.
    """
    return b"".join(_json_pieces(jsonable(report, _arrays=True), 0, DEFAULT_CHUNK_ROWS)
                    ).decode("utf-8") + "\n"


def write_report_json(report: Mapping[str, Any], fh: IO[bytes], *,
                      chunk_rows: int = DEFAULT_CHUNK_ROWS) -> None:
    """Write :func:`report_to_json` of ``report`` to the binary file ``fh``, encoding each
    per-timestamp series ``chunk_rows`` entries at a time (the same bytes for every
    ``chunk_rows``; pass ``privacy_report(..., as_arrays=True)`` to avoid lists in memory)."""
    for piece in _json_pieces(jsonable(report, _arrays=True), 0, chunk_rows):
        fh.write(piece)
    fh.write(b"\n")
