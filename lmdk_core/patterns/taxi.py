"""A deterministic, T-Drive-shaped synthetic taxi data set (no download; CC0, our own generator).

The real T-Drive set (Microsoft Research, Yuan et al. 2010) holds 10,357 Beijing taxis over one
week (2008-02-02 to 2008-02-08), about 15 M points, one fix every ~177 s on average, files
``id,time,lon,lat`` (longitude first). This generator reproduces that *shape* — many taxis, a
week, ~177 s sampling with jitter, off-duty gaps, trips between hotspots — inside the Beijing
urban box (lat 39.80–40.05, lon 116.25–116.55); it is not real data and reproduces no real taxi.

Model (per taxi, one numba loop over its fixes: the walk is sequential by nature):
``n_hotspots`` hotspots at fixed positions with Zipf popularity; a taxi waits at a hotspot
(exponential, mean ``wait_min`` minutes, GPS noise ~30 m), then drives in a straight line at
20–45 km/h to the next hotspot drawn from a fixed gravity-style transition matrix; with
probability ``p_off`` per trip (default 0.23: ~1,430 fixes per taxi-week, T-Drive ~1,450) it
goes off duty for 1–8 hours (no fixes). Everything is drawn from the integer seed
``rng`` alone, so the same arguments always give the same frame.
"""

# numba compiles only the legacy np.random.* API (seeded per taxi inside the kernel).
# ruff: noqa: NPY002
from __future__ import annotations

import numba
import numpy as np
import pandas as pd

from .._deprecation import renamed
from ..noise.source import simulation_rng
from ..validation import check_int, check_positive, check_probability, check_seed
from .regions import PlaceRegions

__all__ = ["BEIJING_BOX", "TDRIVE_FACTS", "hotspot_regions", "hotspots", "taxi_trajectories"]

BEIJING_BOX = (39.80, 40.05, 116.25, 116.55)
"""(lat_min, lat_max, lon_min, lon_max) of the generated city."""

TDRIVE_FACTS = {"taxis": 10_357, "points": 15_000_000, "sampling_s": 177,
                "start": "2008-02-02", "days": 7}
"""The real data set's shape, for scaling the generator to it."""

_START = np.datetime64("2008-02-02T00:00:00", "s").astype(np.int64)


@renamed(seed="rng")
def hotspots(n_hotspots: int = 20, *, rng: int = 2008) -> pd.DataFrame:
    """Hotspot centres (``name, lat, lon, radius_m``, 300 m) and Zipf ``weight``, fixed by the
    integer seed ``rng``."""
    n = check_int(n_hotspots, "n_hotspots", minimum=2)
    gen = simulation_rng(check_seed(rng, "hotspots", "a deterministic synthetic data set"))
    la0, la1, lo0, lo1 = BEIJING_BOX
    lat = la0 + 0.1 * (la1 - la0) + gen.random(n) * 0.8 * (la1 - la0)
    lon = lo0 + 0.1 * (lo1 - lo0) + gen.random(n) * 0.8 * (lo1 - lo0)
    weight = 1.0 / np.arange(1, n + 1) ** 0.8
    return pd.DataFrame({"name": [f"H{i}" for i in range(n)], "lat": lat, "lon": lon,
                         "radius_m": 300.0, "weight": weight / weight.sum()})


@renamed(seed="rng")
def hotspot_regions(n_hotspots: int = 20, *, rng: int = 2008) -> PlaceRegions:
    """The hotspots as PlaceRegions (event types ``enter:H<i>``); ``rng``: the integer seed."""
    return PlaceRegions.from_places(hotspots(n_hotspots, rng=rng))


def _transition_matrix(hs: pd.DataFrame, seed: int) -> np.ndarray:
    """Gravity model: popularity / (1 + distance_km), plus a preferred successor per hotspot."""
    lat, lon, w = hs["lat"].to_numpy(), hs["lon"].to_numpy(), hs["weight"].to_numpy()
    d_km = np.hypot((lat[:, None] - lat) * 111.0, (lon[:, None] - lon) * 85.0)
    p = w[None, :] / (1.0 + d_km)
    n = len(hs)
    succ = (np.arange(n) + 1) % n  # a chain H0 → H1 → H2 ... that patterns can follow
    p[np.arange(n), succ] += p.sum(axis=1)
    np.fill_diagonal(p, 0.0)
    rng = simulation_rng(seed + 1)
    p *= rng.uniform(0.8, 1.2, p.shape)
    return p / p.sum(axis=1, keepdims=True)


@numba.njit(cache=True)
def _simulate(n_taxis, horizon_s, seed, hlat, hlon, cum_p, start_p, sampling_s, wait_s,
              p_off):  # pragma: no cover - compiled
    cap = int(horizon_s / (0.6 * sampling_s)) + 16
    out_t = np.empty(n_taxis * cap, np.int64)
    out_lat = np.empty(n_taxis * cap)
    out_lon = np.empty(n_taxis * cap)
    counts = np.zeros(n_taxis, np.int64)
    n_h = hlat.size
    for taxi in range(n_taxis):
        np.random.seed(seed * 1_000_003 + taxi)
        base = taxi * cap
        k = 0
        u = np.random.random()
        h = 0
        while h < n_h - 1 and start_p[h] < u:
            h += 1
        t = np.random.random() * 3600.0
        lat, lon = hlat[h], hlon[h]
        while t < horizon_s and k < cap:
            # wait at hotspot h
            wait_end = t + np.random.exponential(wait_s)
            while t < wait_end and t < horizon_s and k < cap:
                out_t[base + k] = int(t)
                out_lat[base + k] = hlat[h] + np.random.normal() * 0.00027
                out_lon[base + k] = hlon[h] + np.random.normal() * 0.00035
                k += 1
                t += sampling_s * (0.7 + 0.6 * np.random.random())
            if np.random.random() < p_off:  # off duty: a gap of 1-8 h, no fixes
                t += 3600.0 * (1.0 + 7.0 * np.random.random())
            # drive to the next hotspot
            u = np.random.random()
            nxt = 0
            while nxt < n_h - 1 and cum_p[h, nxt] < u:
                nxt += 1
            speed = (20.0 + 25.0 * np.random.random()) / 3.6  # m/s
            dy = (hlat[nxt] - hlat[h]) * 111_000.0
            dx = (hlon[nxt] - hlon[h]) * 85_000.0
            dur = np.sqrt(dx * dx + dy * dy) / speed
            t0 = t
            lat, lon = hlat[h], hlon[h]
            while t < t0 + dur and t < horizon_s and k < cap:
                f = (t - t0) / dur
                out_t[base + k] = int(t)
                out_lat[base + k] = lat + f * (hlat[nxt] - lat) + np.random.normal() * 0.0003
                out_lon[base + k] = lon + f * (hlon[nxt] - lon) + np.random.normal() * 0.0004
                k += 1
                t += sampling_s * (0.7 + 0.6 * np.random.random())
            h = nxt
        counts[taxi] = k
    return out_t, out_lat, out_lon, counts, cap


@renamed(seed="rng")
def taxi_trajectories(
    n_taxis: int = 200, *, days: float = 2.0, n_hotspots: int = 20, sampling_s: float = 177.0,
    wait_min: float = 20.0, p_off: float = 0.23, rng: int = 2008,
) -> pd.DataFrame:
    """Fixes of ``n_taxis`` taxis over ``days`` days from 2008-02-02 00:00 UTC, drawn from the
    integer seed ``rng`` alone.

    Columns ``uid`` (categorical ``"1"``, ``"2"``, ...), ``time`` (UTC, seconds), ``lat``,
    ``lon`` (degrees), sorted by uid then time. T-Drive scale: ``n_taxis=10357, days=7``
    (see bench/bench_patterns.py for the point count and timings).
    """
    n = check_int(n_taxis, "n_taxis")
    horizon = check_positive(days, "days") * 86400.0
    samp = check_positive(sampling_s, "sampling_s")
    wait = check_positive(wait_min, "wait_min") * 60.0
    off = check_probability(p_off, "p_off")
    seed = check_seed(rng, "taxi_trajectories", "a deterministic synthetic data set")
    hs = hotspots(n_hotspots, rng=seed)
    p = _transition_matrix(hs, seed)
    cum = np.cumsum(p, axis=1)
    start_p = np.cumsum(hs["weight"].to_numpy())
    t, lat, lon, counts, cap = _simulate(n, horizon, seed, hs["lat"].to_numpy(),
                                         hs["lon"].to_numpy(), cum, start_p, samp, wait, off)
    idx = (np.arange(cap)[None, :] < counts[:, None]).ravel()
    times = t[idx] + _START
    uid = np.repeat(np.arange(1, n + 1), counts)
    # strictly increasing seconds per taxi: int() of increasing floats ≥ 0.7·sampling_s apart
    return pd.DataFrame({
        "uid": pd.Categorical.from_codes(uid - 1,
                                         categories=[str(i) for i in range(1, n + 1)]),
        "time": pd.to_datetime(times, unit="s", utc=True),
        "lat": lat[idx],
        "lon": lon[idx],
    })
