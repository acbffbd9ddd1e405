"""Stay-point detection and candidate places from long stays.

A **stay** (Li et al. 2008; Zheng 2015, "Trajectory data mining") is a maximal run of consecutive
points ``p_i .. p_k`` of one user, all within ``radius_m`` metres (haversine) of the run's first
point ``p_i``, lasting ``t_k - t_i >= min_duration_s``. The scan is the classic one: start at the
first point as anchor; extend the run while points stay within the radius; if the run lasts long
enough it is a stay and the next anchor is the first point after it, otherwise the next anchor is
``i + 1``. Unlike some published code, a run that reaches the end of the trajectory still counts.
Because the anchor is the run's first point — often a fix taken while still arriving — one long
visit can come out as two or more consecutive stays; :func:`suggest_places` merges them.

Complexity: an O(n) vectorised pre-filter discards every anchor that cannot start a stay (its
point ``min_duration_s`` later is already outside the radius, or the trajectory ends too soon), so
the Python loop runs over the surviving candidate anchors only — roughly one per stay on real data
— and each run is measured with chunked numpy distance scans. Typical cost O(n log n); worst case
(every anchor survives the filter but fails) O(n·w), with w the points per ``min_duration_s``
window.

:func:`suggest_places` groups stays whose centroids lie within ``merge_m`` and ranks the groups by
total dwell time: the long stays of a trajectory are its candidate landmarks (home, work, ...).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from ._deprecation import renamed
from .errors import ParameterError
from .geo import haversine_m
from .times import NS_PER_S, ns_index, seconds
from .trajectory import check_frame, time_order
from .validation import check_int, check_nonnegative, check_positive

__all__ = ["detect_stays", "suggest_places"]

PLACE_COLUMNS = ["lat", "lon", "total_duration_s", "visits", "suggested_radius_m"]


def _prepare(
    traj: pd.DataFrame,
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Sort by (uid, time); return (frame, int64 UTC ns times, lat, lon, user group starts)."""
    check_frame(traj, ("time", "lat", "lon"), name="traj")
    order, codes, t = time_order(traj)
    frame = traj.take(order).reset_index(drop=True)
    lat = frame["lat"].to_numpy(dtype=np.float64)
    lon = frame["lon"].to_numpy(dtype=np.float64)
    if not (np.isfinite(lat).all() and np.isfinite(lon).all()):
        raise ParameterError("traj lat/lon must be finite numbers (found NaN or inf)")
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]]) if len(frame) else codes[:0]
    return frame, t, lat, lon, starts


def _runs_one(
    t: np.ndarray, lat: np.ndarray, lon: np.ndarray, radius_m: float, min_ns: int
) -> list[tuple[int, int]]:
    """Stays (first, last) — inclusive indices — of one time-sorted trajectory (t in int64 ns)."""
    n = t.size
    if n == 0:
        return []
    # m[i]: first point at least min_duration after t_i. A stay anchored at i must contain m[i].
    # (never before i itself: with repeated timestamps the left search can land on an earlier twin)
    m = np.maximum(np.searchsorted(t, t + min_ns, side="left"), np.arange(n))
    ok = m < n
    cand = np.zeros(n, dtype=bool)
    idx = np.flatnonzero(ok)
    cand[idx] = haversine_m(lat[idx], lon[idx], lat[m[idx]], lon[m[idx]]) <= radius_m
    anchors = np.flatnonzero(cand)

    runs: list[tuple[int, int]] = []
    pos = 0  # smallest index allowed as the next anchor
    while True:
        k = int(np.searchsorted(anchors, pos, side="left"))
        if k >= anchors.size:
            break
        i = int(anchors[k])
        # first j > i farther than radius_m from p_i (or n), scanned in growing chunks
        j, lo, width = n, i + 1, max(int(m[i]) - i + 1, 32)
        while lo < n:
            hi = min(n, lo + width)
            out = np.flatnonzero(haversine_m(lat[i], lon[i], lat[lo:hi], lon[lo:hi]) > radius_m)
            if out.size:
                j = lo + int(out[0])
                break
            lo, width = hi, width * 2
        if t[j - 1] - t[i] >= min_ns:
            runs.append((i, j - 1))
            pos = j
        else:
            pos = i + 1
    return runs


def _all_runs(
    traj: pd.DataFrame, stay_radius_m: float, min_duration_s: float
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Validate, then (frame, int64 ns times, lat, lon, first, last): runs as indices into the
    sorted frame."""
    radius_m = check_positive(stay_radius_m, "stay_radius_m")
    min_duration_s = check_nonnegative(min_duration_s, "min_duration_s")
    frame, t, lat, lon, starts = _prepare(traj)
    min_ns = math.ceil(min_duration_s * NS_PER_S)
    first, last = [], []
    bounds = np.r_[starts, len(frame)]
    for a, b in itertools.pairwise(bounds):
        for i, k in _runs_one(t[a:b], lat[a:b], lon[a:b], radius_m, min_ns):
            first.append(a + i)
            last.append(a + k)
    return frame, t, lat, lon, np.asarray(first, dtype=np.intp), np.asarray(last, dtype=np.intp)


def _mean_lat_lon(
    lat: np.ndarray, lon: np.ndarray, weights: np.ndarray | None = None
) -> tuple[float, float]:
    """Centroid in degrees; longitudes are unwrapped around the first one (safe across ±180°)."""
    dlon = (lon - lon[0] + 180.0) % 360.0 - 180.0
    c_lon = (lon[0] + np.average(dlon, weights=weights) + 180.0) % 360.0 - 180.0
    return float(np.average(lat, weights=weights)), float(c_lon)


@renamed(radius_m="stay_radius_m")
def detect_stays(
    traj: pd.DataFrame, stay_radius_m: float = 100.0, min_duration_s: float = 600.0
) -> pd.DataFrame:
    """Stay points of a trajectory (see module docstring for the definition).

    ``traj`` needs columns ``time`` (datetimes; naive values are taken as UTC), ``lat``, ``lon``
    (degrees); with a ``uid`` column each user is scanned separately and the result starts with
    ``uid``. Rows need not be sorted. ``stay_radius_m`` > 0 in metres (the stay's radius; the old
    keyword ``radius_m=`` is deprecated: ``radius_m`` names only the protection radius),
    ``min_duration_s`` ≥ 0 in seconds.

    Returns one row per stay, ordered by (uid,) start: ``lat, lon`` centroid (mean of the stay's
    points, degrees), ``start, end`` (UTC timestamps of its first and last point), ``duration_s``
    (float seconds, end − start) and ``n_points``. Empty input gives an empty frame with these
    columns.
    """
    frame, t, lat, lon, first, last = _all_runs(traj, stay_radius_m, min_duration_s)
    cent = [_mean_lat_lon(lat[i : k + 1], lon[i : k + 1]) for i, k in zip(first, last, strict=True)]
    out = pd.DataFrame(
        {
            "lat": np.array([c[0] for c in cent], dtype=np.float64),
            "lon": np.array([c[1] for c in cent], dtype=np.float64),
            "start": ns_index(t[first]),
            "end": ns_index(t[last]),
            "duration_s": seconds(t[last] - t[first]),
            "n_points": (last - first + 1).astype(np.int64),
        }
    )
    if "uid" in frame.columns:
        out.insert(0, "uid", frame["uid"].to_numpy()[first])
    return out


@renamed(radius_m="stay_radius_m")
def suggest_places(
    traj: pd.DataFrame,
    stay_radius_m: float = 100.0,
    min_duration_s: float = 600.0,
    merge_m: float = 150.0,
    top: int = 8,
) -> pd.DataFrame:
    """Candidate landmark places: stays grouped by location, ranked by total dwell time.

    Stays come from :func:`detect_stays` (``stay_radius_m``, ``min_duration_s``; every user of
    ``traj`` is scanned separately, but a place visited by several users is one group). Grouping
    is leader clustering: stays are taken longest first; a stay joins the group whose leader (its
    longest stay) is nearest, if that leader's centroid lies within ``merge_m`` metres, else it
    leads a new group. Deterministic, and no chaining of neighbouring places.

    Returns at most ``top`` rows, by ``total_duration_s`` descending: ``lat, lon`` (dwell-weighted
    centroid of the member stays, degrees), ``total_duration_s`` (seconds), ``visits`` (number of
    stays) and ``suggested_radius_m`` — the 95th percentile distance of the member stays' points
    from the place centre, rounded up to 10 m, at least 20 m: a landmark circle that covers the
    visits' GPS scatter.
    """
    merge_m = check_nonnegative(merge_m, "merge_m")
    top = check_int(top, "top", minimum=1)
    _, t, lat, lon, first, last = _all_runs(traj, stay_radius_m, min_duration_s)
    if first.size == 0:
        return pd.DataFrame({c: pd.Series(dtype=np.float64) for c in PLACE_COLUMNS}).astype(
            {"visits": np.int64}
        )
    s_lat = np.empty(first.size)
    s_lon = np.empty(first.size)
    for s, (i, k) in enumerate(zip(first, last, strict=True)):
        s_lat[s], s_lon[s] = _mean_lat_lon(lat[i : k + 1], lon[i : k + 1])
    dur = seconds(t[last] - t[first])

    order = np.argsort(-dur, kind="stable")
    leaders: list[int] = []
    group = np.empty(first.size, dtype=np.intp)
    for s in order:
        if leaders:
            d = haversine_m(s_lat[s], s_lon[s], s_lat[leaders], s_lon[leaders])
            g = int(np.argmin(d))
            if d[g] <= merge_m:
                group[s] = g
                continue
        leaders.append(int(s))
        group[s] = len(leaders) - 1

    rows = []
    for g in range(len(leaders)):
        members = np.flatnonzero(group == g)
        w = dur[members] if dur[members].sum() > 0 else None
        c_lat, c_lon = _mean_lat_lon(s_lat[members], s_lon[members], w)
        pts = np.concatenate([np.arange(first[s], last[s] + 1) for s in members])
        p95 = float(np.percentile(haversine_m(c_lat, c_lon, lat[pts], lon[pts]), 95))
        rows.append((c_lat, c_lon, float(dur[members].sum()), members.size,
                     max(20.0, math.ceil(p95 / 10.0) * 10.0)))
    out = pd.DataFrame(rows, columns=PLACE_COLUMNS).astype({"visits": np.int64})
    out = out.sort_values("total_duration_s", ascending=False, kind="stable").head(top)
    return out.reset_index(drop=True)
