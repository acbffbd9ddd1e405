"""Generate ``lmdk_core/data/sample_trajectories.csv``: synthetic multi-user, multi-day GPS data
in Beijing.

Nothing here comes from a real person: four invented users (alice, bob, carol, dave) live five days
(Thu 2024-03-07 .. Mon 2024-03-11, local time) between real-looking Beijing places — homes in
residential districts, offices in Zhongguancun / Guomao / Financial Street / Wangjing, hospitals,
malls and parks. The output is dedicated to the public domain (CC0), see ``data/README.md``.

Model, per user:

* **Schedule** — a list of stays ``(place, leave at HH:MM local)`` or ``(place, stay N minutes)``
  per day; leave times get N(0, 10 min) jitter (clipped to ±25 min), durations ×U(0.85, 1.15).
  Local time is Beijing (UTC+8, no DST); all output times are UTC.
* **Trips** between consecutive stays follow Manhattan-style street paths (1–3 turns along the
  east/north grid) at mode speeds in m/s: walk U(1.2, 1.6), bike U(3.5, 4.5) with traffic-light
  stops, bus U(8, 11) with a walk to/from the stop and 20–40 s halts every ~800 m, car U(10, 15)
  with traffic-light stops. The mode is walk below 1.2 km, else the user's preferred mode.
* **Sampling** — integer intervals of 10–20 s while moving and 20–60 s while staying (no duplicate
  timestamps); positions get Gaussian GPS jitter with σ drawn per point in 5–15 m; each stay also
  gets a fixed offset of up to ~15 m (a different room / parking spot each visit).
* **Gaps** — on about half of the nights the phone is off from ~00:00–01:30 to ~05:30–07:00 local;
  every day has Poisson(3) signal gaps of 2–15 minutes at random times.
* ``place`` is the ground-truth stay label (home, work, clinic, shop, restaurant, park, gym) or
  empty while moving.

Deterministic: each user draws from ``numpy.random.default_rng([seed, crc32(uid)])`` so the same
seed gives byte-identical CSV output. Run from the repo root::

    .venv/bin/python data/generate_sample.py   # writes lmdk_core/data/sample_trajectories.csv
"""

from __future__ import annotations

import argparse
import sys
import zlib
from pathlib import Path

import numpy as np

try:  # the script lives in data/, the package at the repo root
    from lmdk_core.geo import degrees_to_metres, offset_points
except ImportError:  # pragma: no cover - run as a plain script without an installed package
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from lmdk_core.geo import degrees_to_metres, offset_points

SEED = 20240307
"""Default seed of the bundled sample."""

START_LOCAL_DATE = "2024-03-07"
"""First local (Beijing) day of the sample, a Thursday."""

N_DAYS = 5
UTC_OFFSET_S = 8 * 3600
"""Beijing is UTC+8 all year."""

BEIJING_BBOX = (39.80, 116.25, 40.05, 116.55)
"""(lat_min, lon_min, lat_max, lon_max) containing every generated point (urban Beijing)."""

ORIGIN = (39.9087, 116.3975)
"""Tiananmen: origin of the local metric frame used for paths."""

# the packaged copy: shipped inside the wheel so that load_sample() works from an install
OUTPUT = Path(__file__).resolve().parent.parent / "lmdk_core" / "data" / "sample_trajectories.csv"

# (label, lat, lon) — approximate real locations.
PLACES: dict[str, tuple[str, float, float]] = {
    # Haidian
    "wudaokou_home": ("home", 39.99250, 116.33950),
    "zgc_office": ("work", 39.98360, 116.30750),
    "xinzhongguan_mall": ("shop", 39.97800, 116.31950),
    "zgc_canteen": ("restaurant", 39.98120, 116.31020),
    "pku_third_hospital": ("clinic", 39.98200, 116.35640),
    "olympic_forest_park": ("park", 40.01050, 116.39250),
    # Chaoyang (CBD)
    "tuanjiehu_home": ("home", 39.93050, 116.46650),
    "guomao_office": ("work", 39.90930, 116.45900),
    "guomao_noodles": ("restaurant", 39.91100, 116.46200),
    "sanlitun_taikooli": ("shop", 39.93350, 116.45450),
    "chaoyang_hospital": ("clinic", 39.92600, 116.45350),
    "jintai_gym": ("gym", 39.92200, 116.46400),
    "chaoyang_park": ("park", 39.94050, 116.47900),
    # Dongcheng / Xicheng
    "hepingli_home": ("home", 39.95850, 116.41550),
    "financial_street_office": ("work", 39.91550, 116.35800),
    "financial_street_cafe": ("restaurant", 39.91750, 116.36050),
    "xidan_joy_city": ("shop", 39.91000, 116.37450),
    "pumch_hospital": ("clinic", 39.91200, 116.41600),
    "ditan_park": ("park", 39.95250, 116.41250),
    "ritan_park": ("park", 39.91550, 116.44250),
    # Wangjing
    "wangjing_home": ("home", 39.99850, 116.46900),
    "wangjing_soho": ("work", 39.99600, 116.48050),
    "kaide_mall": ("shop", 39.99250, 116.47450),
    "china_japan_hospital": ("clinic", 39.97400, 116.42750),
}

USERS = ("alice", "bob", "carol", "dave")
PREFERRED_MODE = {"alice": "bike", "bob": "bus", "carol": "car", "dave": "bus"}

# Day plans: (place key, ("until", "HH:MM") | ("for", minutes)); the last stay lasts until the
# first leave time of the next day. Keys: weekday abbreviations.
_A = {"home": "wudaokou_home", "work": "zgc_office", "lunch": "zgc_canteen",
      "shop": "xinzhongguan_mall", "clinic": "pku_third_hospital", "park": "olympic_forest_park"}
_B = {"home": "tuanjiehu_home", "work": "guomao_office", "lunch": "guomao_noodles",
      "shop": "sanlitun_taikooli", "clinic": "chaoyang_hospital", "gym": "jintai_gym",
      "park": "chaoyang_park"}
_C = {"home": "hepingli_home", "work": "financial_street_office", "lunch": "financial_street_cafe",
      "shop": "xidan_joy_city", "clinic": "pumch_hospital", "park": "ditan_park",
      "park2": "ritan_park"}
_D = {"home": "wangjing_home", "work": "wangjing_soho", "shop": "kaide_mall",
      "clinic": "china_japan_hospital", "park": "chaoyang_park"}


def _u(hhmm: str) -> tuple[str, str]:
    return ("until", hhmm)


def _f(minutes: float) -> tuple[str, float]:
    return ("for", minutes)


PLANS: dict[str, dict[str, list]] = {
    "alice": {
        "Thu": [(_A["home"], _u("08:05")), (_A["work"], _u("12:05")), (_A["lunch"], _f(45)),
                (_A["work"], _u("18:20")), (_A["shop"], _f(25)), (_A["home"], None)],
        "Fri": [(_A["home"], _u("08:00")), (_A["clinic"], _f(80)), (_A["work"], _u("12:10")),
                (_A["lunch"], _f(40)), (_A["work"], _u("18:30")), (_A["home"], None)],
        "Sat": [(_A["home"], _u("09:30")), (_A["park"], _f(150)), (_A["shop"], _f(40)),
                (_A["home"], None)],
        "Sun": [(_A["home"], _u("15:00")), (_A["shop"], _f(30)), (_A["home"], None)],
        "Mon": [(_A["home"], _u("08:10")), (_A["work"], _u("12:00")), (_A["lunch"], _f(45)),
                (_A["work"], _u("18:40")), (_A["home"], None)],
    },
    "bob": {
        "Thu": [(_B["home"], _u("07:50")), (_B["work"], _u("12:15")), (_B["lunch"], _f(40)),
                (_B["work"], _u("18:45")), (_B["gym"], _f(75)), (_B["home"], None)],
        "Fri": [(_B["home"], _u("07:50")), (_B["work"], _u("12:10")), (_B["lunch"], _f(40)),
                (_B["work"], _u("14:30")), (_B["clinic"], _f(90)), (_B["home"], None)],
        "Sat": [(_B["home"], _u("10:30")), (_B["shop"], _f(120)), (_B["park"], _f(90)),
                (_B["home"], None)],
        "Sun": [(_B["home"], _u("11:00")), (_B["gym"], _f(70)), (_B["home"], None)],
        "Mon": [(_B["home"], _u("07:45")), (_B["work"], _u("12:15")), (_B["lunch"], _f(40)),
                (_B["work"], _u("18:50")), (_B["gym"], _f(75)), (_B["home"], None)],
    },
    "carol": {
        "Thu": [(_C["home"], _u("08:20")), (_C["work"], _u("12:00")), (_C["lunch"], _f(50)),
                (_C["work"], _u("17:50")), (_C["shop"], _f(60)), (_C["home"], None)],
        "Fri": [(_C["home"], _u("08:20")), (_C["work"], _u("12:00")), (_C["lunch"], _f(50)),
                (_C["work"], _u("17:50")), (_C["home"], None)],
        "Sat": [(_C["home"], _u("08:40")), (_C["park"], _f(80)), (_C["home"], _u("14:00")),
                (_C["shop"], _f(120)), (_C["home"], None)],
        "Sun": [(_C["home"], _u("10:00")), (_C["park2"], _f(100)), (_C["home"], None)],
        "Mon": [(_C["home"], _u("07:40")), (_C["clinic"], _f(110)), (_C["work"], _u("12:05")),
                (_C["lunch"], _f(45)), (_C["work"], _u("18:00")), (_C["home"], None)],
    },
    "dave": {
        "Thu": [(_D["home"], _u("09:10")), (_D["work"], _u("16:00")), (_D["clinic"], _f(75)),
                (_D["home"], None)],
        "Fri": [(_D["home"], _u("09:10")), (_D["work"], _u("12:30")), (_D["shop"], _f(50)),
                (_D["work"], _u("19:10")), (_D["shop"], _f(40)), (_D["home"], None)],
        "Sat": [(_D["home"], _u("11:00")), (_D["park"], _f(180)), (_D["home"], None)],
        "Sun": [(_D["home"], _u("13:00")), (_D["shop"], _f(60)), (_D["home"], None)],
        "Mon": [(_D["home"], _u("09:05")), (_D["work"], _u("12:30")), (_D["shop"], _f(50)),
                (_D["work"], _u("19:00")), (_D["home"], None)],
    },
}

WALK_MAX_M = 1200.0
MIN_STAY_S = 10 * 60
MOVE_DT = (10, 20)  # sampling interval while moving, seconds (inclusive)
STAY_DT = (15, 55)  # sampling interval while staying, seconds (inclusive)
JITTER_SIGMA_M = (5.0, 15.0)


def _xy(lat: float, lon: float) -> np.ndarray:
    """Local metric coordinates (east, north) in metres relative to :data:`ORIGIN`."""
    e, n = degrees_to_metres(ORIGIN[0], ORIGIN[1], lat, lon)
    return np.array([float(e), float(n)])


def _street_path(a: np.ndarray, b: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Waypoints (k, 2) of a Manhattan-style path from a to b: alternating east/north legs."""
    d = b - a
    if np.hypot(*d) < 150.0:
        return np.vstack([a, b])
    turns = int(rng.integers(1, 4))  # 1..3 turns
    n_e = (turns + 2) // 2 if rng.random() < 0.5 else (turns + 1) // 2
    n_n = turns + 1 - n_e
    east = d[0] * rng.dirichlet(np.full(max(n_e, 1), 2.0))
    north = d[1] * rng.dirichlet(np.full(max(n_n, 1), 2.0))
    first_east = n_e >= n_n
    pts = [a.copy()]
    p = a.copy()
    ie = inn = 0
    for leg in range(turns + 1):
        if (leg % 2 == 0) == first_east:
            p = p + np.array([east[ie], 0.0])
            ie += 1
        else:
            p = p + np.array([0.0, north[inn]])
            inn += 1
        pts.append(p.copy())
    pts[-1] = b.copy()
    return np.vstack(pts)


def _speed_profile(
    length: float, mode: str, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Knots (t_s, s_m) of arc length s against time t for one trip; stops are flat pieces."""
    t_k, s_k = [0.0], [0.0]

    def run(dist: float, speed: float) -> None:
        t_k.append(t_k[-1] + dist / speed)
        s_k.append(s_k[-1] + dist)

    def halt(seconds: float) -> None:
        t_k.append(t_k[-1] + seconds)
        s_k.append(s_k[-1])

    if mode == "walk":
        run(length, rng.uniform(1.2, 1.6))
        return np.array(t_k), np.array(s_k)
    if mode == "bus" and length > 1200.0:
        walk_a, walk_b = rng.uniform(200, 400), rng.uniform(150, 300)
        run(walk_a, rng.uniform(1.2, 1.6))
        halt(rng.uniform(60, 300))  # waiting for the bus
        ride, v = length - walk_a - walk_b, rng.uniform(8.0, 11.0)
        n_stops = max(int(ride // 800.0), 0)
        pieces = np.full(n_stops + 1, ride / (n_stops + 1))
        for i, piece in enumerate(pieces):
            run(piece, v * rng.uniform(0.85, 1.15))
            if i < n_stops:
                halt(rng.uniform(20, 40))
        run(walk_b, rng.uniform(1.2, 1.6))
        return np.array(t_k), np.array(s_k)
    lo, hi, p_light = (3.5, 4.5, 0.3) if mode == "bike" else (10.0, 15.0, 0.5)
    v = rng.uniform(lo, hi)
    n_pieces = max(int(length // 600.0), 1)
    for i in range(n_pieces):
        run(length / n_pieces, v * rng.uniform(0.85, 1.15))
        if i < n_pieces - 1 and rng.random() < p_light:
            halt(rng.uniform(15, 60))
    return np.array(t_k), np.array(s_k)


def _sample_times(
    t_from: int, t_end: float, dt: tuple[int, int], rng: np.random.Generator
) -> np.ndarray:
    """Integer sample times t_from + cumsum(U{dt}) that are < t_end (may be empty)."""
    if t_end <= t_from:
        return np.empty(0, dtype=np.int64)
    n = int((t_end - t_from) // dt[0]) + 2
    t = t_from + np.cumsum(rng.integers(dt[0], dt[1] + 1, size=n))
    return t[t < t_end]


def _user_track(
    uid: str, seed: int, n_days: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(t_utc_s int64, lat, lon, place) of one user, sorted by time, without duplicates."""
    rng = np.random.default_rng([seed, zlib.crc32(uid.encode())])
    day0_utc = int(np.datetime64(START_LOCAL_DATE, "s").astype(np.int64)) - UTC_OFFSET_S
    t_start, t_stop = day0_utc, day0_utc + n_days * 86400
    weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    # weekday index, Mon = 0 (1970-01-01 was a Thursday)
    first_wd = int((np.datetime64(START_LOCAL_DATE, "D").astype(np.int64) + 3) % 7)

    # 1. Flatten the plans into stays (place key, spec, local day start in UTC) across days; the
    #    evening home stay and the next morning's home stay are one overnight stay.
    merged: list[tuple[str, tuple | None, int]] = []
    for d in range(n_days):
        for key, spec in PLANS[uid][weekdays[(first_wd + d) % 7]]:
            if merged and merged[-1][0] == key:
                merged[-1] = (key, spec, day0_utc + d * 86400)
            else:
                merged.append((key, spec, day0_utc + d * 86400))

    # 2. Walk the timeline: stay -> trip -> stay ...
    ts, xs, ys, labels = [], [], [], []
    t = float(t_start)
    last_sample = t_start - int(rng.integers(0, 30))
    for i, (key, spec, day_utc) in enumerate(merged):
        label, lat, lon = PLACES[key]
        centre = _xy(lat, lon) + rng.normal(0.0, 7.0, size=2)  # where exactly, this visit
        if spec is None:
            leave = float(t_stop)
        elif spec[0] == "until":
            hh, mm = (int(v) for v in spec[1].split(":"))
            leave = day_utc + hh * 3600 + mm * 60 + float(np.clip(rng.normal(0, 600), -1500, 1500))
        else:
            leave = t + spec[1] * 60 * rng.uniform(0.85, 1.15)
        leave = min(max(leave, t + MIN_STAY_S), float(t_stop))
        st = _sample_times(last_sample, leave, STAY_DT, rng)
        if st.size:
            last_sample = int(st[-1])
            ts.append(st)
            xs.append(np.full(st.size, centre[0]))
            ys.append(np.full(st.size, centre[1]))
            labels.append(np.full(st.size, label, dtype=object))
        t = leave
        if i + 1 == len(merged) or t >= t_stop:
            break
        # trip to the next stay
        _, lat2, lon2 = PLACES[merged[i + 1][0]]
        path = _street_path(_xy(lat, lon), _xy(lat2, lon2), rng)
        seg = np.hypot(*np.diff(path, axis=0).T)
        cum = np.concatenate([[0.0], np.cumsum(seg)])
        straight = float(np.hypot(*(path[-1] - path[0])))
        mode = "walk" if straight < WALK_MAX_M else PREFERRED_MODE[uid]
        tk, sk = _speed_profile(float(cum[-1]), mode, rng)
        arrive = t + tk[-1]
        mt = _sample_times(last_sample, arrive, MOVE_DT, rng)
        if mt.size:
            last_sample = int(mt[-1])
            s = np.interp(mt - t, tk, sk)
            ts.append(mt)
            xs.append(np.interp(s, cum, path[:, 0]))
            ys.append(np.interp(s, cum, path[:, 1]))
            labels.append(np.full(mt.size, "", dtype=object))
        t = arrive

    tt = np.concatenate(ts).astype(np.int64)
    x, y = np.concatenate(xs), np.concatenate(ys)
    place = np.concatenate(labels)

    # 3. GPS jitter, sigma per point in metres.
    sigma = rng.uniform(*JITTER_SIGMA_M, size=tt.size)
    x = x + rng.normal(0.0, 1.0, size=tt.size) * sigma
    y = y + rng.normal(0.0, 1.0, size=tt.size) * sigma

    # 4. Gaps: phone off on some nights, random signal losses.
    keep = (tt >= t_start) & (tt < t_stop)
    for d in range(n_days):
        day = day0_utc + d * 86400
        if rng.random() < 0.5:
            off = day + rng.uniform(0, 90) * 60
            on = day + 5.5 * 3600 + rng.uniform(0, 90) * 60
            keep &= ~((tt >= off) & (tt < on))
        for _ in range(int(rng.poisson(3.0))):
            g0 = day + rng.uniform(0, 86400)
            keep &= ~((tt >= g0) & (tt < g0 + rng.uniform(2, 15) * 60))

    lat_out, lon_out = offset_points(ORIGIN[0], ORIGIN[1], x[keep], y[keep])
    return tt[keep], np.round(lat_out, 6), np.round(lon_out, 6), place[keep]


def generate(
    seed: int = SEED, n_days: int = N_DAYS, users: tuple[str, ...] = USERS
) -> dict[str, np.ndarray]:
    """Sample columns: uid (str), t (int64 UTC epoch seconds), lat, lon (degrees, 6 d.p.), place.

    Sorted by (uid, t); timestamps are unique per user. ``n_days`` ≤ 5 (the plans cover Thu–Mon).
    """
    if not 1 <= n_days <= N_DAYS:
        raise ValueError(f"n_days must be in 1..{N_DAYS}, got {n_days}")
    parts = {u: _user_track(u, seed, n_days) for u in sorted(users)}
    return {
        "uid": np.concatenate([np.full(p[0].size, u, dtype=object) for u, p in parts.items()]),
        "t": np.concatenate([p[0] for p in parts.values()]),
        "lat": np.concatenate([p[1] for p in parts.values()]),
        "lon": np.concatenate([p[2] for p in parts.values()]),
        "place": np.concatenate([p[3] for p in parts.values()]),
    }


def to_csv(cols: dict[str, np.ndarray]) -> str:
    """CSV text, header ``uid,time,lat,lon,place``; time ISO 8601 UTC ``...Z`` in whole seconds."""
    times = np.datetime_as_string(cols["t"].astype("datetime64[s]"), unit="s")
    lines = ["uid,time,lat,lon,place"]
    lines += [
        f"{u},{t}Z,{la:.6f},{lo:.6f},{p}"
        for u, t, la, lo, p in zip(
            cols["uid"], times, cols["lat"], cols["lon"], cols["place"], strict=True
        )
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--out", type=Path, default=OUTPUT)
    args = ap.parse_args(argv)
    cols = generate(args.seed)
    text = to_csv(cols)
    args.out.write_bytes(text.encode("ascii"))
    print(f"wrote {args.out}: {cols['t'].size} points, {len(set(cols['uid']))} users, "
          f"{len(text.encode()) / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
