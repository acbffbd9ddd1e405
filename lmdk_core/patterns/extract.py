"""Event extraction: trajectories → region events, value series → threshold-crossing events.

Both return an :class:`~lmdk_core.patterns.stream.EventStream` whose ticks are the input's
timestamps (one per point / value), kept per user (data subject). The type universe depends only
on the parameters (regions, kinds, thresholds), never on the data, so it is public.

Region events (per user, over the points in time order; a *visit* is a maximal run of
consecutive points in the same region, broken also by a gap longer than ``max_gap_s``):

* ``enter:<region>`` at the first point of a visit;
* ``leave:<region>`` at the first point after a visit (not emitted when the user's data ends, or a
  gap ends, inside the region);
* ``dwell:<region>`` at the first point of a visit at least ``dwell_s`` seconds after its start.

Threshold events (per user): ``up:<θ>`` at t when x_{t-1} < θ ≤ x_t, ``down:<θ>`` when
x_{t-1} ≥ θ > x_t.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ParameterError
from ..times import epoch_ns
from ..validation import as_finite_array, check_nonnegative
from .regions import as_regions
from .stream import NS_PER_S, EventStream, _as_ns, _order

__all__ = ["KINDS", "region_events", "threshold_events"]

KINDS = ("enter", "leave", "dwell")
"""Kinds of region events."""


def _users_and_times(uid: Any, time: Any) -> tuple[np.ndarray, tuple[str, ...], np.ndarray]:
    ser = pd.Series(uid)
    if isinstance(ser.dtype, pd.CategoricalDtype):
        cats = ser.cat.remove_unused_categories()
        codes = cats.cat.codes.to_numpy()
        names = [str(c) for c in cats.cat.categories]
        if len(set(names)) != len(names):
            raise ParameterError("user ids must stay distinct as strings")
    else:
        codes, names = pd.factorize(ser.astype(str), sort=True)
    return codes.astype(np.int32), tuple(names), _as_ns(time, "time")


def region_events(
    traj: pd.DataFrame, regions: Any, *, kinds: Sequence[str] = ("enter",),
    dwell_s: float = 600.0, max_gap_s: float | None = None,
) -> EventStream:
    """Region events of every user in ``traj`` (columns ``uid`` (optional), ``time``, ``lat, lon``).

    ``regions``: PlaceRegions / GridRegions, or places (list of ``Place`` or a frame);
    ``kinds``: any of ``enter``, ``leave``, ``dwell``; ``dwell_s`` seconds in a region before a
    dwell event; ``max_gap_s`` a longer gap between points ends a visit (None: never).
    Event types are ``<kind>:<region name>`` for every kind and region (in that order).
    """
    if not isinstance(traj, pd.DataFrame):
        raise ParameterError("traj must be a DataFrame with time, lat, lon (and uid) columns")
    missing = [c for c in ("time", "lat", "lon") if c not in traj.columns]
    if missing:
        raise ParameterError(f"trajectory is missing column(s) {missing}")
    kinds = tuple(kinds)
    bad = [k for k in kinds if k not in KINDS]
    if bad or not kinds:
        raise ParameterError(f"kinds must be a non-empty subset of {KINDS}, got {kinds}")
    dwell_ns = int(check_nonnegative(dwell_s, "dwell_s") * NS_PER_S)
    gap_ns = (None if max_gap_s is None
              else int(check_nonnegative(max_gap_s, "max_gap_s") * NS_PER_S))
    reg = as_regions(regions)
    uid = traj["uid"] if "uid" in traj.columns else np.zeros(len(traj), dtype=np.int64)
    ucode, users, time = _users_and_times(uid, epoch_ns(traj["time"], "time"))  # frame rule
    lat = as_finite_array(traj["lat"].to_numpy(), "lat")
    lon = as_finite_array(traj["lon"].to_numpy(), "lon")
    order = _order(ucode, time)
    ucode, time, lat, lon = ucode[order], time[order], lat[order], lon[order]
    rid = reg.assign(lat, lon)
    names = reg.names
    n_reg = len(names)
    n = rid.size

    first = np.ones(n, bool)  # first point of a visit (or of an out-of-region stretch)
    if n:
        first[1:] = (rid[1:] != rid[:-1]) | (ucode[1:] != ucode[:-1])
        if gap_ns is not None:
            first[1:] |= np.diff(time) > gap_ns
    run_start = np.flatnonzero(first)
    ticks: list[np.ndarray] = []
    etypes: list[np.ndarray] = []
    for k, kind in enumerate(kinds):
        base = k * n_reg
        if kind == "enter":
            idx = run_start[rid[run_start] >= 0]
            ticks.append(idx)
            etypes.append(base + rid[idx])
        elif kind == "leave":
            nxt = run_start[1:]  # the first point after each visit but the last
            prev = nxt - 1
            ok = (rid[prev] >= 0) & (ucode[nxt] == ucode[prev])
            if gap_ns is not None:
                ok &= (time[nxt] - time[prev]) <= gap_ns
            ticks.append(nxt[ok])
            etypes.append(base + rid[prev[ok]])
        else:  # dwell
            run_of = np.cumsum(first) - 1
            elapsed = time - time[run_start][run_of]
            reached = (elapsed >= dwell_ns) & (rid >= 0)
            just = reached.copy()
            just[1:] &= ~(reached[:-1] & (run_of[1:] == run_of[:-1]))
            idx = np.flatnonzero(just)
            ticks.append(idx)
            etypes.append(base + rid[idx])
    tick = np.concatenate(ticks).astype(np.int64) if ticks else np.zeros(0, np.int64)
    etype = np.concatenate(etypes).astype(np.int32) if etypes else np.zeros(0, np.int32)
    types = tuple(f"{kind}:{name}" for kind in kinds for name in names)
    return EventStream.from_arrays(tick_uid=ucode, tick_time=time, event_tick=tick,
                                   event_type=etype, types=types, users=users,
                                   lat=lat[tick], lon=lon[tick])


def threshold_events(
    values: Any, time: Any, thresholds: Sequence[float], *, uid: Any = None,
) -> EventStream:
    """Threshold-crossing events ``up:<θ>`` / ``down:<θ>`` of one or many value series.

    ``values`` and ``time`` (datetimes or int64 ns) have one entry per tick; ``uid`` (optional)
    names the user of each entry. Values must be finite.
    """
    x = as_finite_array(values, "values")
    th = as_finite_array(list(thresholds), "thresholds")
    if th.size == 0:
        raise ParameterError("give at least one threshold")
    if np.unique(th).size != th.size:
        raise ParameterError("thresholds must be distinct")
    ucode, users, t = _users_and_times(np.zeros(x.size, np.int64) if uid is None else uid, time)
    if t.size != x.size or ucode.size != x.size:
        raise ParameterError(f"length mismatch: values {x.size}, time {t.size}, uid {ucode.size}")
    order = _order(ucode, t)
    ucode, t, x = ucode[order], t[order], x[order]
    same = np.zeros(x.size, bool)
    same[1:] = ucode[1:] == ucode[:-1]
    prev = np.concatenate([[np.nan], x[:-1]]) if x.size else x
    ticks, etypes = [], []
    for j, theta in enumerate(th):
        up = same & (prev < theta) & (x >= theta)
        down = same & (prev >= theta) & (x < theta)
        for k, mask in enumerate((up, down)):
            idx = np.flatnonzero(mask)
            ticks.append(idx)
            etypes.append(np.full(idx.size, 2 * j + k, np.int32))
    types = tuple(f"{d}:{theta:.12g}" for theta in th for d in ("up", "down"))
    return EventStream.from_arrays(tick_uid=ucode, tick_time=t,
                                   event_tick=np.concatenate(ticks).astype(np.int64),
                                   event_type=np.concatenate(etypes), types=types, users=users)
