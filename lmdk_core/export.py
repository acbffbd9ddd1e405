"""Exports: PUBLIC release files (CSV, GeoJSON) and ONE PRIVATE analysis file (JSON).

Public files hold only what an observer of the release is meant to see: the time (ISO 8601 UTC)
and the released location (or value) — no landmark flag, no ε_t, no published flag, no place
names, no settings. Republished rows stay as they are: landmark privacy takes the landmark
timestamps as public input, so a scheme's repeats (Skip) can show when the landmarks were;
hiding them is the job of dummy landmarks.

* :func:`release_to_csv` — one row per timestamp, the columns of ``Release.to_frame()``
  (public): ``time`` (when known), ``lat``/``lon`` or ``value``; floats at full precision (they
  read back to the same doubles), NaN (nothing released yet) as an empty field.
* :func:`release_to_geojson` — a FeatureCollection of one Point per released timestamp with the
  single property ``time`` (ISO 8601 UTC or null); timestamps with nothing released yet are
  skipped.
* :func:`privacy_report` / :func:`report_to_json` — the private analysis file: its first key
  ``PRIVATE`` says it holds the user's places and true-data analysis and must not be shared;
  then the exact release configuration (no seed), the places, ε_t, G_t, published flags,
  BPL/FPL/TPL and the landmark loss, a summary judged against the user's ε and metrics computed
  from the true data. Strict JSON: NaN and ±inf become ``null``, numpy values plain numbers.

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
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
import pandas as pd

from ._version import __version__
from .accounting import landmark_guarantee
from .errors import ParameterError
from .validation import check_epsilon, check_same_length

__all__ = [
    "PRIVATE_NOTICE",
    "REPORT_FORMAT_VERSION",
    "allocation_name",
    "export_file_name",
    "iso_utc",
    "jsonable",
    "privacy_report",
    "release_to_csv",
    "release_to_geojson",
    "report_to_json",
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
    t = pd.DatetimeIndex(time)
    if t.tz is not None:
        t = t.tz_convert("UTC").tz_localize(None)
    v = t.to_numpy().astype("datetime64[ns]")
    ns = v.astype(np.int64)
    unit: Literal["s", "ms", "us", "ns"] = "ns"
    units: tuple[tuple[Literal["s", "ms", "us"], int], ...] = (
        ("s", 10**9), ("ms", 10**6), ("us", 10**3))
    for u, div in units:
        if np.all(ns % div == 0):
            unit = u
            break
    return np.datetime_as_string(v.astype(f"datetime64[{unit}]"), unit=unit, timezone="UTC")


def _simulation_label(release: Any) -> str | None:
    if not getattr(release, "seeded", False):
        return None
    from .release import SIMULATION_LABEL

    return SIMULATION_LABEL


def release_to_csv(release: Any) -> str:
    """The PUBLIC release as CSV text (header row, no index): ``time`` (ISO 8601 UTC, when
    known) and ``lat``/``lon`` or ``value``. A seeded release starts with a ``#`` comment line
    saying it is a simulation, not private (read it back with ``pd.read_csv(..., comment="#")``).
    """
    frame = release.to_frame(public=True)
    if "time" in frame.columns:
        frame["time"] = iso_utc(frame["time"])
    text = frame.to_csv(index=False, lineterminator="\n")
    label = _simulation_label(release)
    return text if label is None else f"# lmdk {label}\n{text}"


def _public_marker(release: Any) -> dict:
    label = _simulation_label(release)
    return {
        "kind": "public-release",
        "version": REPORT_FORMAT_VERSION,
        "simulation": label is not None,
        **({"label": label} if label else {}),
    }


def release_to_geojson(release: Any) -> dict:
    """A locations release as a PUBLIC GeoJSON FeatureCollection (see module docstring).

    Raises ParameterError for a values release (no coordinates).
    """
    if getattr(release, "lat", None) is None or getattr(release, "lon", None) is None:
        raise ParameterError(
            "only a locations release can be exported as GeoJSON (this one has values)"
        )
    lat = np.asarray(release.lat, dtype=np.float64)
    lon = np.asarray(release.lon, dtype=np.float64)
    check_same_length(lat.size, lon.size, "release lon")
    ok = np.flatnonzero(np.isfinite(lat) & np.isfinite(lon))
    times: list[Any]
    if getattr(release, "time", None) is not None:
        times = iso_utc(np.asarray(release.time)[ok]).tolist()
    else:
        times = [None] * ok.size
    coords = np.column_stack((lon[ok], lat[ok])).tolist()
    features = [
        {"type": "Feature", "geometry": {"type": "Point", "coordinates": c},
         "properties": {"time": tm}}
        for c, tm in zip(coords, times, strict=True)
    ]
    return {"type": "FeatureCollection", "lmdk": _public_marker(release), "features": features}


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
    iso = iso_utc(np.asarray(time))
    return {"start": str(iso[0]), "end": str(iso[-1]), "n_timestamps": len(iso)}


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
}


def export_file_name(kind: str, allocation: str, ext: str) -> str:
    """File name of an export named after the allocation actually released.

    ``kind``: ``"public"`` (release CSV/GeoJSON), ``"analysis"`` (the private report),
    ``"story"`` (the public HTML story) or ``"private_story"`` (the opt-in private one); private
    kinds carry ``PRIVATE`` and ``DO_NOT_SHARE`` in the name. ``allocation`` is reduced to
    ``[a-z0-9_]`` (e.g. ``"tpl_bounded"``), ``ext`` is the suffix without the dot.
    """
    if kind not in _FILE_KINDS:
        raise ParameterError(f"unknown export kind {kind!r}; use one of {sorted(_FILE_KINDS)}")
    slug = "_".join(re.findall(r"[a-z0-9]+", str(allocation).lower())) or "release"
    if not re.fullmatch(r"[a-z0-9]+", str(ext)):
        raise ParameterError(f"file extension must be letters/digits without a dot, got {ext!r}")
    stem, tail = _FILE_KINDS[kind]
    return f"{stem.format(slug=slug)}{tail}.{ext}"


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
    """
    epsilon = check_epsilon(epsilon)
    eps = np.asarray(release.budget if hasattr(release, "budget") else release.eps,
                     dtype=np.float64)
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
            "time": None if time is None else iso_utc(np.asarray(time)).tolist(),
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
    return jsonable(report)


def _place_dict(p: Any) -> Any:
    if isinstance(p, Mapping) or dataclasses.is_dataclass(p):
        return p
    return list(p)


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
