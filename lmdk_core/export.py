"""Exports: the released series (CSV, GeoJSON) and a JSON privacy report.

* :func:`release_to_csv` — one row per timestamp, the columns of ``Release.to_frame()``; floats are
  written with full precision (they read back to the same doubles).
* :func:`release_to_geojson` — a FeatureCollection: one LineString through the released
  locations in time order, then one Point per released timestamp with properties ``t`` (0-based
  index), ``time`` (ISO 8601 UTC or null), ``eps`` (budget spent), ``published`` (fresh release)
  and ``landmark``. Timestamps with nothing released yet (NaN) are skipped.
* :func:`privacy_report` / :func:`report_to_json` — settings, ε_t, the landmark guarantee G_t,
  the temporal losses BPL/FPL/TPL and the landmark loss under correlation (when computed), a summary
  and the utility metrics, as strict JSON: NaN and ±inf become ``null``, numpy values plain numbers.

Landmark places export through :func:`lmdk_core.places.places_to_geojson`.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
import pathlib
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ._version import __version__
from .errors import ParameterError
from .validation import check_same_length

__all__ = [
    "REPORT_FORMAT_VERSION",
    "iso_utc",
    "jsonable",
    "privacy_report",
    "release_to_csv",
    "release_to_geojson",
    "report_to_json",
]

REPORT_FORMAT_VERSION = 1
"""Version of the ``"lmdk"`` marker written into exported GeoJSON and reports."""


def iso_utc(time: Any) -> np.ndarray:
    """ISO 8601 UTC strings (``2024-05-01T08:00:00Z``) for datetimes; naive times are taken as UTC.

    The precision is the coarsest of s/ms/us/ns that represents every timestamp exactly.
    """
    t = pd.DatetimeIndex(time)
    if t.tz is not None:
        t = t.tz_convert("UTC").tz_localize(None)
    v = t.to_numpy().astype("datetime64[ns]")
    ns = v.astype(np.int64)
    unit = "ns"
    for u, div in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if np.all(ns % div == 0):
            unit = u
            break
    return np.datetime_as_string(v.astype(f"datetime64[{unit}]"), unit=unit, timezone="UTC")


def release_to_csv(release: Any) -> str:
    """The release as CSV text (header row, no index), from ``release.to_frame()``."""
    return release.to_frame().to_csv(index=False, lineterminator="\n")


def _release_marker(release: Any) -> dict:
    return {
        "kind": "release",
        "version": REPORT_FORMAT_VERSION,
        "scheme": str(release.scheme),
        "epsilon": float(release.epsilon),
    }


def release_to_geojson(release: Any) -> dict:
    """A locations release as a GeoJSON FeatureCollection (see module docstring).

    Raises ParameterError for a values release (no coordinates).
    """
    if getattr(release, "lat", None) is None or getattr(release, "lon", None) is None:
        raise ParameterError(
            "only a locations release can be exported as GeoJSON (this one has values)"
        )
    lat = np.asarray(release.lat, dtype=np.float64)
    lon = np.asarray(release.lon, dtype=np.float64)
    n = lat.size
    eps = np.asarray(release.eps, dtype=np.float64)
    pub = np.asarray(release.published, dtype=bool)
    lmk = np.asarray(release.landmarks, dtype=bool)
    for arr, what in ((lon, "release lon"), (eps, "release eps"), (pub, "release published"),
                      (lmk, "release landmarks")):
        check_same_length(n, arr.size, what)
    ok = np.flatnonzero(np.isfinite(lat) & np.isfinite(lon))
    times: list[Any]
    if getattr(release, "time", None) is not None:
        times = iso_utc(np.asarray(release.time)[ok]).tolist()
    else:
        times = [None] * ok.size
    coords = np.column_stack((lon[ok], lat[ok])).tolist()
    features: list[dict] = []
    if ok.size >= 2:
        features.append({
            "type": "Feature",
            "geometry": {"type": "LineString", "coordinates": coords},
            "properties": {"kind": "released path", "scheme": str(release.scheme)},
        })
    features.extend(
        {
            "type": "Feature",
            "geometry": {"type": "Point", "coordinates": c},
            "properties": {"t": t, "time": tm, "eps": e, "published": p, "landmark": m},
        }
        for c, t, tm, e, p, m in zip(
            coords, ok.tolist(), times, eps[ok].tolist(), pub[ok].tolist(), lmk[ok].tolist(),
            strict=True,
        )
    )
    return {"type": "FeatureCollection", "lmdk": _release_marker(release), "features": features}


def _float_list(a: np.ndarray) -> list:
    """Float array → list with None for NaN/±inf."""
    a = np.asarray(a, dtype=np.float64)
    bad = ~np.isfinite(a)
    if not bad.any():
        return a.tolist()
    out = a.astype(object)
    out[bad] = None
    return out.tolist()


def jsonable(obj: Any, _path: str = "report") -> Any:
    """A copy of ``obj`` made of JSON types only: numpy → Python, NaN/±inf → None, datetimes →
    ISO 8601 strings, dataclasses → dicts, paths → str. Raises ParameterError for anything else."""
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


def privacy_report(
    *,
    settings: Mapping[str, Any],
    release: Any,
    guarantee: Any,
    temporal: Any = None,
    landmark_loss: Any = None,
    metrics: Mapping[str, Any],
) -> dict:
    """A JSON-ready report of one run.

    Keys: ``lmdk`` (format marker), ``settings`` (as given), ``release`` (scheme, ε, parameters,
    kind, length), ``series`` (``time``, ``eps`` = ε_t, ``published``, ``landmark``, ``guarantee``
    = G_t), ``temporal`` (``bpl``, ``fpl``, ``tpl``, or null), ``landmark_temporal_loss`` (the
    composed landmark loss per timestamp — an array or a LandmarkTemporalLoss — or null),
    ``summary`` (budget spent, max G_t, landmark-private, fresh share, max TPL/landmark loss and
    how many timestamps exceed ε) and ``metrics``. Every array has one entry per timestamp;
    non-finite numbers are null.
    """
    eps = np.asarray(release.eps, dtype=np.float64)
    n = eps.size
    g = np.asarray(guarantee, dtype=np.float64)
    check_same_length(n, g.size, "guarantee")
    pub = np.asarray(release.published, dtype=bool)
    lmk = np.asarray(release.landmarks, dtype=bool)
    epsilon = float(release.epsilon)
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
        "n_timestamps": n,
        "n_landmarks": int(lmk.sum()),
        "budget_spent": float(eps.sum()),
        "fresh_share": float(pub.mean()) if n else None,
        "max_guarantee": fmax(g),
        "landmark_private": bool(np.all(g <= epsilon + tol)),
        "guarantee_exceeds_epsilon": int(np.sum(g > epsilon + tol)),
        "max_tpl": fmax(temp["tpl"]) if temp else None,
        "max_landmark_temporal_loss": fmax(lloss),
        "landmark_temporal_exceeds_epsilon": (
            None if lloss is None else int(np.sum(lloss > epsilon + tol))
        ),
    }
    time = getattr(release, "time", None)
    report = {
        "lmdk": {
            "kind": "privacy-report",
            "version": REPORT_FORMAT_VERSION,
            "package_version": __version__,
        },
        "settings": dict(settings),
        "release": {
            "kind": getattr(release, "kind", None),
            "scheme": str(release.scheme),
            "epsilon": epsilon,
            "params": dict(release.params) if release.params is not None else {},
            "n_timestamps": n,
        },
        "series": {
            "time": None if time is None else iso_utc(np.asarray(time)).tolist(),
            "eps": eps,
            "published": pub,
            "landmark": lmk,
            "guarantee": g,
        },
        "temporal": temp,
        "landmark_temporal_loss": lloss,
        "summary": summary,
        "metrics": dict(metrics),
    }
    return jsonable(report)


def _dumps(obj: Any, level: int) -> str:
    """Indented JSON where objects nest one key per line but lists of scalars stay on one line."""
    pad = "  " * (level + 1)
    if isinstance(obj, dict) and obj:
        items = (
            f"{pad}{json.dumps(k, ensure_ascii=False)}: {_dumps(v, level + 1)}"
            for k, v in obj.items()
        )
        return "{\n" + ",\n".join(items) + "\n" + "  " * level + "}"
    if isinstance(obj, list) and any(isinstance(v, (dict, list)) for v in obj):
        inner = ",\n".join(pad + _dumps(v, level + 1) for v in obj)
        return "[\n" + inner + "\n" + "  " * level + "]"
    return json.dumps(obj, allow_nan=False, ensure_ascii=False, separators=(", ", ": "))


def report_to_json(report: Mapping[str, Any]) -> str:
    """Strict JSON text of a report (NaN/inf → null; raises ParameterError on unsupported values).

    Readable layout: one key per line, each per-timestamp series on a single line.
    """
    return _dumps(jsonable(report), 0) + "\n"
