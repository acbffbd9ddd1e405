"""A deterministic synthetic population for one city (simulation data, CC0, no real person).

Each user has three places — ``home``, ``work`` and ``other`` (a place visited in the evening
every third day, e.g. a clinic) — drawn uniformly in the inner 80 % of the city box, and follows
one daily routine (local time UTC+8): home until 08:00, commute, work 09:00–17:00, commute,
the other place 18:00–19:00 on visit days, home from 20:00. Each user has ``points_per_user``
GPS fixes at uniformly random times over ``days`` days, with 30 m Gaussian jitter.

T-Drive scale is ``generate_population(10_357, points_per_user=1_448)`` (≈ 15 M points). Users
are generated in chunks, so memory stays ~100 bytes per point; :func:`write_population` writes
the same data to Parquet chunk by chunk (any scale, memory of one chunk). ``rng`` (an integer
seed) only makes the *synthetic data* reproducible; it is not a release seed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._deprecation import renamed
from ..errors import ParameterError
from ..geo import offset_points
from ..noise.source import simulation_rng
from ..times import NS_PER_S, ns_index, utc_timestamp
from ..validation import check_int
from .grid import BEIJING_BBOX

__all__ = ["PLACE_KINDS", "generate_population", "write_population"]

PLACE_KINDS = ("home", "work", "other")
_RADIUS_M = {"home": 150.0, "work": 150.0, "other": 100.0}
_CHUNK_POINTS = 2_000_000


def _uids(n: int) -> list[str]:
    width = max(5, len(str(n - 1)))
    return [f"u{i:0{width}d}" for i in range(n)]


@renamed(seed="rng")
def generate_population(
    n_users: int, *, points_per_user: int = 200, days: int = 7,
    start: Any = "2008-02-02", bbox: tuple[float, float, float, float] = BEIJING_BBOX,
    rng: int = 0,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(trajectories, places) of ``n_users`` synthetic people.

    ``trajectories``: columns uid (categorical of str), time (datetime64[ns, UTC]), lat, lon,
    sorted by (uid, time). ``places``: uid, name (= kind), lat, lon, radius_m — every user's
    home, work and other place (each user's private input; pick the landmark kinds with
    ``places[places.name.isin([...])]``). ``rng``: the integer seed of this simulated data.
    """
    places, chunks = _generate(n_users, points_per_user=points_per_user, days=days, start=start,
                               bbox=bbox, seed=rng)
    uids = places["uid"].to_numpy()[::3]
    parts = list(chunks)
    n, k = len(uids), check_int(points_per_user, "points_per_user")
    uid = pd.Categorical.from_codes(np.repeat(np.arange(n), k), categories=uids)
    traj = pd.DataFrame({"uid": uid,
                         "time": ns_index(np.concatenate([p[1] for p in parts])),
                         "lat": np.concatenate([p[2] for p in parts]),
                         "lon": np.concatenate([p[3] for p in parts])})
    return traj, places


@renamed(seed="rng")
def write_population(
    path: Any, n_users: int, *, points_per_user: int = 200, days: int = 7,
    start: Any = "2008-02-02", bbox: tuple[float, float, float, float] = BEIJING_BBOX,
    rng: int = 0, row_group_rows: int = 250_000,
) -> pd.DataFrame:
    """Write the trajectories of :func:`generate_population` (the same data) as Parquet files
    ``part-XXXX.parquet`` in the directory ``path``, one per chunk of ~2 M points of whole
    users (partitioned by user: no user in two files; uid as text, sorted by uid, time), without
    holding the population in memory; returns the places."""
    import pathlib

    import pyarrow as pa
    import pyarrow.parquet as pq

    out = pathlib.Path(path)
    out.mkdir(parents=True, exist_ok=True)
    places, chunks = _generate(n_users, points_per_user=points_per_user, days=days, start=start,
                               bbox=bbox, seed=rng)
    k = check_int(points_per_user, "points_per_user")
    uids = places["uid"].to_numpy()[::3]
    for i, (u0, t_ns, lat, lon) in enumerate(chunks):
        m = t_ns.size // k
        table = pa.table({"uid": pa.array(np.repeat(uids[u0:u0 + m], k), pa.string()),
                          "time": pa.array(t_ns, pa.timestamp("ns", tz="UTC")),
                          "lat": lat, "lon": lon})
        pq.write_table(table, out / f"part-{i:04d}.parquet", row_group_size=row_group_rows)
    return places


def _generate(n_users: int, *, points_per_user: int, days: int, start: Any,
              bbox: tuple[float, float, float, float], seed: int) -> tuple[pd.DataFrame, Any]:
    """(places, iterator of (first user, times ns, lat, lon) per chunk of ~2 M points)."""
    n = check_int(n_users, "n_users")
    k = check_int(points_per_user, "points_per_user")
    d = check_int(days, "days")
    t0 = utc_timestamp(start, "start")
    la0, la1, lo0, lo1 = (float(v) for v in bbox)
    if not (la0 < la1 and lo0 < lo1):
        raise ParameterError(f"bbox must be (lat_min, lat_max, lon_min, lon_max), got {bbox}")
    rng = simulation_rng([int(seed), 0x10DC])
    uids = _uids(n)
    # places: n × 3 anchors in the inner 80 % of the box
    mla, mlo = 0.1 * (la1 - la0), 0.1 * (lo1 - lo0)
    plat = rng.uniform(la0 + mla, la1 - mla, (n, 3))
    plon = rng.uniform(lo0 + mlo, lo1 - mlo, (n, 3))
    places = pd.DataFrame({
        "uid": np.repeat(uids, 3),
        "name": np.tile(PLACE_KINDS, n),
        "lat": plat.ravel(), "lon": plon.ravel(),
        "radius_m": np.tile([_RADIUS_M[p] for p in PLACE_KINDS], n),
    })
    span_s = d * 86_400
    chunk = max(1, _CHUNK_POINTS // k)

    def chunks():
        for u0 in range(0, n, chunk):
            u1 = min(n, u0 + chunk)
            secs = np.sort(rng.integers(0, span_s, (u1 - u0, k)), axis=1)
            la, lo = _positions(secs, plat[u0:u1], plon[u0:u1], np.arange(u0, u1), rng)
            yield u0, t0.value + secs.ravel() * NS_PER_S, la.ravel(), lo.ravel()

    return places, chunks()


def _positions(secs: np.ndarray, plat: np.ndarray, plon: np.ndarray, users: np.ndarray,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Positions (m × k) for the routine at times ``secs`` (m × k seconds since start)."""
    local_h = ((secs / 3600.0) + 8.0) % 24.0
    day = (secs + 8 * 3600) // 86_400
    visit = ((users[:, None] + day) % 3) == 0
    home = (plat[:, [0]], plon[:, [0]])
    work = (plat[:, [1]], plon[:, [1]])
    other = (plat[:, [2]], plon[:, [2]])
    evening = (np.where(visit, other[0], home[0]), np.where(visit, other[1], home[1]))
    frac = local_h % 1.0
    # (from, to, fraction): a fixed place has from == to
    segments = [
        ((local_h < 8) | (local_h >= 20), home, home, 0.0),
        ((local_h >= 8) & (local_h < 9), home, work, frac),
        ((local_h >= 9) & (local_h < 17), work, work, 0.0),
        ((local_h >= 17) & (local_h < 18), work, evening, frac),
        ((local_h >= 18) & (local_h < 19), evening, evening, 0.0),
        ((local_h >= 19) & (local_h < 20), evening, home, frac),
    ]
    lat = np.empty(secs.shape)
    lon = np.empty(secs.shape)
    for sel, a, b, f in segments:
        fa = np.broadcast_to(a[0], secs.shape)[sel]
        fb = np.broadcast_to(b[0], secs.shape)[sel]
        ga = np.broadcast_to(a[1], secs.shape)[sel]
        gb = np.broadcast_to(b[1], secs.shape)[sel]
        w = f[sel] if isinstance(f, np.ndarray) else f
        lat[sel] = fa + (fb - fa) * w
        lon[sel] = ga + (gb - ga) * w
    east = rng.normal(0.0, 30.0, secs.shape)
    north = rng.normal(0.0, 30.0, secs.shape)
    return offset_points(lat, lon, east, north)
