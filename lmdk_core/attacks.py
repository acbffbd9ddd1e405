"""What an adversary learns from a public release file: attacks run on simulated releases.

The guarantee (G_t ≤ ε) bounds what the landmark moments reveal together with any one other
moment; these attacks show what a concrete adversary does with the whole public file. Each
attack reads ONLY what is public: the released times and locations and the public parameters
(ε, the protection radius r, the scheme). It is evaluated on seeded **simulated** releases —
never on a real release: :func:`public_trace` refuses a real draw — and compared with the same
attack on the raw trace and with a data-free baseline (docs/attacks.md).

* **Home and work** (:func:`home_work`, :func:`attacker_guesses`): the densest released spot at
  night (22:00–06:00 local time) and in working hours (Mon–Fri 09:00–17:00), found on a grid
  and refined by mean shift, plus the longest stays of the released trace
  (:func:`lmdk_core.stays.suggest_places`); scored by the distance from each true place to the
  nearest guess.
* **Place visits** (:func:`visit_inference`): for one place, "was the person there at t?",
  predicted from the released point's distance to the place and from exact repeats (the way
  Skip republishes the last point at landmark moments); precision and recall against the truth.
* **Re-identification** (:func:`reidentification`): the scikit-mobility location and
  home-and-work attacks (Pellungrini et al. 2017) on a grid: the adversary knows k true cells
  of a person (or their two most visited cells) and looks for released traces that contain
  them; the person is *singled out* when theirs is the only match.

Local time: the adversary takes the UTC offset from the released longitudes (15° per hour), a
guess that reads only the public file, unless ``utc_offset_h`` is given.

Two adversaries per release: one reads the file as it is; the other smooths it first
(:func:`lmdk_core.smooth_release`: free post-processing that reads only the public columns and
public parameters) and runs the same attacks on the result, through the same
:func:`public_trace` gate. :class:`AttackReport` keeps both; its sentences use the one that lands
closer to each place, or the smoothing one alone when the file is published smoothed.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .errors import ParameterError
from .geo import degrees_to_metres, haversine_m, metres_to_degrees
from .noise.source import simulation_rng, spawn_seeds
from .times import epoch_ns, ns_index, seconds
from .validation import check_int, check_positive, check_seed

__all__ = [
    "ATTACK_DRAWS",
    "DISTANCE_COLUMNS",
    "AttackReport",
    "PublicTrace",
    "attack_report",
    "attacker_guesses",
    "guarantee_sentences",
    "home_work",
    "noise_quantile",
    "place_sentences",
    "population_reidentification",
    "public_trace",
    "reidentification",
    "repeat_runs",
    "republished",
    "visit_inference",
]

ATTACK_DRAWS = 20
"""Simulated releases per evaluation (the page's "median over 20 simulated releases")."""
NIGHT_HOURS = (22, 6)
"""Local hours [start, end) the home attack reads (across midnight)."""
WORK_HOURS = (9, 17)
"""Local hours [start, end) on Monday–Friday the work attack reads."""
MAX_DWELL_S = 1800.0
"""A point's weight is the time to the next point, capped at this (a gap is not a stay)."""
STAY_GUESSES = 8
"""Longest released stays the adversary adds to the home and work guesses."""
MIN_CELL_M = 50.0
"""Smallest grid cell of the density search (metres): the raw trace's GPS scatter scale."""


# ----------------------------------------------------------------------------- the public trace


@dataclass(frozen=True, eq=False)
class PublicTrace:
    """What an observer of a release file sees: ``time`` (int64 ns, UTC), ``lat``, ``lon``
    (degrees), finite points only, in time order; ``rows``: the source row of each point (for
    scoring against the truth; attacks never read it); ``fill``: the release's public fill
    parameter (lmdk_core.schemes.fill), so that moments shown on a line between two releases are
    read as what they are — not fresh releases — like repeats."""

    time: np.ndarray
    lat: np.ndarray
    lon: np.ndarray
    rows: np.ndarray | None = None
    fill: str = "repeat"
    """The release's public ``fill`` parameter: how it shows moments without a fresh release."""

    def __len__(self) -> int:
        return int(self.lat.size)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame({"time": ns_index(self.time), "lat": self.lat, "lon": self.lon})


def public_trace(source: Any) -> PublicTrace:
    """The public columns of a simulated release, a :class:`~lmdk_core.session.Preview`, or a
    raw trajectory frame (``time``, ``lat``, ``lon``) — the attacks' only input.

    Refuses a real release (a :class:`~lmdk_core.session.Drawn`, a Release drawn with fresh OS
    randomness, or its public frame): attacks are evaluated on simulations, so looking at them
    never selects among real draws (docs/attacks.md)."""
    if getattr(source, "is_real", False):
        raise ParameterError("attacks run on simulated releases only, never on a real release")
    release = getattr(source, "release", source)
    fill = "repeat"
    if hasattr(release, "published"):  # a Release
        if not release.seeded:
            raise ParameterError("attacks run on simulated (seeded) releases only; this one was "
                                 "drawn with fresh OS randomness, a real release")
        if release.lat is None or release.time is None:
            raise ParameterError("attacks need a locations release with times")
        t = epoch_ns(release.time)
        lat, lon = np.asarray(release.lat, float), np.asarray(release.lon, float)
        if "smoothing" not in release.params:  # a smoothed file has no filled rows to read
            fill = str(release.params.get("fill", "repeat"))
    elif isinstance(source, pd.DataFrame):
        meta = source.attrs.get("lmdk", {})
        if meta.get("public") and not meta.get("seeded"):
            raise ParameterError("attacks run on simulated releases only; this frame is a real "
                                 "release's public file")
        missing = {"time", "lat", "lon"} - set(source.columns)
        if missing:
            raise ParameterError(f"a trace needs columns time, lat, lon (missing "
                                 f"{', '.join(sorted(missing))})")
        t = epoch_ns(source["time"])
        lat = source["lat"].to_numpy(dtype=float)
        lon = source["lon"].to_numpy(dtype=float)
    else:
        raise ParameterError(f"cannot attack a {type(source).__name__}: give a simulated "
                             "release, a preview or a trajectory frame")
    ok = np.flatnonzero(np.isfinite(lat) & np.isfinite(lon))
    pos = ok[np.argsort(t[ok], kind="stable")]  # rows of the source, in time order
    return PublicTrace(t[pos], lat[pos], lon[pos], pos, fill)


def republished(trace: PublicTrace) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which points are not fresh releases, read from the public file and its public fill: a
    point equal to the one before (a repeat), or — under a delayed fill — a point on the line
    between the releases around it (:func:`lmdk_core.schemes.fill.interpolated_rows`); and for
    every point the last fresh point at or before it (lat, lon), which the scheme would have
    repeated there."""
    from .schemes._space import forward_fill
    from .schemes.fill import running_seconds
    from .smoothing import observations

    n = len(trace)
    tau = running_seconds(seconds(trace.time - trace.time[0]) if n else None, n)
    fresh = observations(np.column_stack([trace.lat, trace.lon]), tau=tau, fill=trace.fill,
                         longitude=True)  # the smoother's own reading of the file
    alat, alon = forward_fill((trace.lat, trace.lon), fresh)
    return ~fresh, alat, alon


# ----------------------------------------------------------------------------- noise


@functools.lru_cache(maxsize=1)
def _unit_noise_distances() -> np.ndarray:
    """Sorted horizontal distances (per unit r/ε) of the package's location mechanism
    (:func:`lmdk_core.mechanisms.planar_laplace`): 20,000 seeded draws at a fixed public point."""
    from .mechanisms import planar_laplace

    n, r = 20_000, 1000.0
    lat, lon = planar_laplace(np.full(n, 45.0), np.full(n, 45.0), epsilon=1.0, radius_m=r, rng=0,
                              noise="fast")
    return np.sort(haversine_m(lat, lon, 45.0, 45.0) / r)


def noise_quantile(p: Any, *, epsilon: float, radius_m: float) -> np.ndarray:
    """The ``p``-quantile (metres) of the distance between a true and a released location at
    budget ``epsilon`` per moment and protection radius ``radius_m``: the release mechanism's
    noise (Laplace on each Earth-centred axis, docs/fp-safe-noise.md §5) scales with r/ε, so
    this is r/ε times the quantile of 20,000 seeded draws at r/ε = 1 (public: no data)."""
    eps, r = check_positive(epsilon, "epsilon"), check_positive(radius_m, "radius_m")
    q = np.asarray(p, dtype=float)
    if np.any((q <= 0) | (q >= 1)):
        raise ParameterError("quantiles must lie strictly between 0 and 1")
    unit = _unit_noise_distances()  # sorted: linear interpolation = np.quantile's default
    return np.interp(q * (unit.size - 1), np.arange(unit.size), unit) * r / eps


def _noise_m(p: float, epsilon: float | None, radius_m: float | None) -> float:
    """The ``p``-quantile of the noise the adversary assumes (0 for the raw trace)."""
    if epsilon is None or radius_m is None:
        return 0.0
    return float(noise_quantile(p, epsilon=epsilon, radius_m=radius_m))


def _scale_m(epsilon: float | None, radius_m: float | None) -> float:
    """Noise scale r/ε the adversary assumes for an ordinary moment (0 for the raw trace)."""
    if epsilon is None or radius_m is None:
        return 0.0
    return check_positive(radius_m, "radius_m") / check_positive(epsilon, "epsilon")


# ----------------------------------------------------------------------------- home and work


def _utc_offset_h(trace: PublicTrace, utc_offset_h: float | None) -> float:
    if utc_offset_h is not None:
        return float(utc_offset_h)
    return float(round(float(np.median(trace.lon)) / 15.0)) if len(trace) else 0.0


def _weights(t: np.ndarray) -> np.ndarray:
    """Seconds each point stands for: the time to the next point, capped (last point: 0)."""
    gap = seconds(np.diff(t, append=t[-1:])) if t.size else np.zeros(0)
    return np.minimum(gap, MAX_DWELL_S)


def _densest(x: np.ndarray, y: np.ndarray, w: np.ndarray, cell_m: float,
             reach_m: float) -> tuple[float, float] | None:
    """The weighted mode of points (local metres): the grid cell whose 3×3 block holds the most
    weight, then mean shift (flat kernel of radius ``reach_m``, 5 steps) from its centre."""
    keep = w > 0
    x, y, w = x[keep], y[keep], w[keep]
    if x.size == 0:
        return None
    ix = np.floor(x / cell_m).astype(np.int64)
    iy = np.floor(y / cell_m).astype(np.int64)
    ix0, iy0 = ix.min() - 1, iy.min() - 1
    span = int(iy.max() - iy0) + 2
    key = (ix - ix0) * span + (iy - iy0)
    cells, inv = np.unique(key, return_inverse=True)
    cw = np.bincount(inv, weights=w)
    dens = np.zeros(cells.size)
    for dx in (-1, 0, 1):
        for dy in (-1, 0, 1):
            nb = cells + dx * span + dy
            pos = np.minimum(np.searchsorted(cells, nb), cells.size - 1)
            dens += np.where(cells[pos] == nb, cw[pos], 0.0)
    best = cells[int(np.argmax(dens))]
    cx = (best // span + ix0 + 0.5) * cell_m
    cy = (best % span + iy0 + 0.5) * cell_m
    for _ in range(5):
        near = (x - cx) ** 2 + (y - cy) ** 2 <= reach_m**2
        if not near.any():
            break
        cx, cy = float(np.average(x[near], weights=w[near])), float(
            np.average(y[near], weights=w[near]))
    return float(cx), float(cy)


def home_work(trace: PublicTrace, *, epsilon: float | None = None,
              radius_m: float | None = None, utc_offset_h: float | None = None
              ) -> dict[str, tuple[float, float] | None]:
    """The adversary's home and work guesses (lat, lon), or None without points in the hours.

    Home: the densest spot of the released points at night; work: in working hours on weekdays
    (:data:`NIGHT_HOURS`, :data:`WORK_HOURS`, local time). Each point weighs the time to the
    next point (capped at :data:`MAX_DWELL_S`). ``epsilon``/``radius_m``: the release's public
    parameters, which set the search scale (grid cell max(50 m, r/ε), mean-shift radius
    50 m + the noise's 90 % quantile); omit both for a raw trace."""
    if len(trace) == 0:
        return {"home": None, "work": None}
    scale = _scale_m(epsilon, radius_m)
    cell = max(MIN_CELL_M, scale)
    reach = MIN_CELL_M + (_noise_m(0.9, epsilon, radius_m) if scale else MIN_CELL_M)
    off = _utc_offset_h(trace, utc_offset_h)
    local_h = (trace.time / 3.6e12 + off) % 24.0
    day = np.floor((trace.time / 3.6e12 + off) / 24.0).astype(np.int64)
    weekday = (day + 3) % 7  # 1970-01-01 was a Thursday (3 with Monday = 0)
    lat0, lon0 = float(trace.lat[0]), float(trace.lon[0])  # any nearby origin will do
    x, y = degrees_to_metres(lat0, lon0, trace.lat, trace.lon)
    w = _weights(trace.time)
    hours = {
        "home": (local_h >= NIGHT_HOURS[0]) | (local_h < NIGHT_HOURS[1]),
        "work": (weekday < 5) & (local_h >= WORK_HOURS[0]) & (local_h < WORK_HOURS[1]),
    }
    out: dict[str, tuple[float, float] | None] = {}
    for name, sel in hours.items():
        spot = _densest(x[sel], y[sel], w[sel], cell, reach)
        if spot is None:
            out[name] = None
            continue
        dlat, dlon = metres_to_degrees(lat0, spot[0], spot[1])
        out[name] = (lat0 + float(dlat), lon0 + float(dlon))
    return out


def repeat_runs(trace: PublicTrace, *, top: int = STAY_GUESSES,
                min_duration_s: float = 600.0) -> pd.DataFrame:
    """The ``top`` longest runs of one point republished unchanged (as Skip does at landmark
    moments, and every scheme between fresh releases), lasting at least ``min_duration_s``
    seconds from their first point to the next different one. Columns ``lat``, ``lon``,
    ``duration_s``, longest first."""
    lat, lon, dur = _repeat_runs(trace, top, min_duration_s)
    return pd.DataFrame({"lat": lat, "lon": lon, "duration_s": dur})


def _repeat_runs(trace: PublicTrace, top: int, min_duration_s: float = 600.0
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if len(trace) == 0:
        return np.zeros(0), np.zeros(0), np.zeros(0)
    rep, _, _ = republished(trace)
    first = np.flatnonzero(~rep | (np.arange(len(trace)) == 0))
    end_t = np.r_[trace.time[first[1:]], trace.time[-1]]  # until the next fresh point
    dur = seconds(end_t - trace.time[first])
    long = np.flatnonzero(dur >= min_duration_s)
    pick = long[np.argsort(-dur[long], kind="stable")[:top]]
    return trace.lat[first[pick]], trace.lon[first[pick]], dur[pick]


def attacker_guesses(trace: PublicTrace, *, epsilon: float | None = None,
                     radius_m: float | None = None, utc_offset_h: float | None = None,
                     stays: int = STAY_GUESSES) -> pd.DataFrame:
    """The adversary's short list of a person's places: the home and work guesses
    (:func:`home_work`) and ``stays`` more — on a raw trace its longest stays
    (:func:`lmdk_core.stays.suggest_places`: 10 min within 100 m, merged within 150 m), on a
    release (``epsilon`` given) its longest runs of a republished point (:func:`repeat_runs`;
    fresh noisy points never form stays, they are the density search's job). Columns
    ``guess``, ``lat``, ``lon``."""
    names, lat, lon = _guesses(trace, epsilon, radius_m, utc_offset_h,
                               check_int(stays, "stays", minimum=0))
    return pd.DataFrame({"guess": names, "lat": lat, "lon": lon})


def _guesses(trace: PublicTrace, epsilon: float | None, radius_m: float | None,
             utc_offset_h: float | None, stays: int) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(names, lat, lon) of :func:`attacker_guesses` as arrays."""
    from .stays import suggest_places

    spots = {k: v for k, v in home_work(trace, epsilon=epsilon, radius_m=radius_m,
                                        utc_offset_h=utc_offset_h).items() if v is not None}
    names = list(spots)
    lat = np.array([v[0] for v in spots.values()])
    lon = np.array([v[1] for v in spots.values()])
    if stays and len(trace):
        if _scale_m(epsilon, radius_m):
            s_lat, s_lon, _ = _repeat_runs(trace, stays)
        else:
            found = suggest_places(trace.frame(), top=stays)
            s_lat, s_lon = found["lat"].to_numpy(), found["lon"].to_numpy()
        names += [f"stay {i + 1}" for i in range(s_lat.size)]
        lat, lon = np.r_[lat, s_lat], np.r_[lon, s_lon]
    return names, lat, lon


def _nearest_m(guesses: tuple[list[str], np.ndarray, np.ndarray], plat: np.ndarray,
               plon: np.ndarray) -> np.ndarray:
    """Distance (m) from each place to the nearest guess (inf without guesses)."""
    _, glat, glon = guesses
    if glat.size == 0:
        return np.full(plat.size, np.inf)
    return haversine_m(plat[:, None], plon[:, None], glat[None, :], glon[None, :]).min(axis=1)


# ----------------------------------------------------------------------------- place visits


def visit_inference(trace: PublicTrace, place: Any, *, epsilon: float | None = None,
                    radius_m: float | None = None) -> np.ndarray:
    """For each point of ``trace``: does the adversary say the person was at ``place`` then?

    ``place``: (lat, lon, place_radius_m). A fresh point says yes within place radius + the
    noise's median distance; a republished point (equal to the one before, the way Skip
    republishes at landmark moments, or on the line of a delayed fill: :func:`republished`) by
    the fresh point it came from, within place radius + its 90 % quantile. Omit
    ``epsilon``/``radius_m`` for a raw trace (no noise: place radius only)."""
    plat, plon, prad = float(place[0]), float(place[1]), float(place[2])
    rep, alat, alon = republished(trace)
    d = haversine_m(alat, alon, plat, plon)  # a republished point: the fresh one it came from
    fresh_m = prad + _noise_m(0.5, epsilon, radius_m)
    repeat_m = prad + _noise_m(0.9, epsilon, radius_m)
    return np.where(rep, d <= repeat_m, d <= fresh_m)


def _precision_recall(said: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    tp = float(np.count_nonzero(said & truth))
    p = tp / said.sum() if said.any() else math.nan
    r = tp / truth.sum() if truth.any() else math.nan
    return p, r


# ----------------------------------------------------------------------------- the evaluation


@dataclass(frozen=True, eq=False)
class AttackReport:
    """The attacks of one setting over ``draws`` simulated releases (arrays: draws × places).

    ``released_m``: distance from each place to the adversary's nearest guess in each simulated
    release, reading the file as it is; ``smoothed_m``: the same after smoothing the file
    (:func:`lmdk_core.smooth_release` with its defaults); ``raw_m``: from the raw trace;
    ``baseline_m``: from as many uniform random guesses in the trace's bounding box (no data).
    ``precision``/``recall`` and ``smoothed_precision``/``smoothed_recall``: the visit attack per
    draw on the file and on the smoothed file; ``raw_precision``/``raw_recall`` on the raw trace;
    ``prevalence``: the share of moments at each place (the precision of always saying yes,
    whose recall is 1); ``hide``: the releases had dummy landmarks; ``published_smoothed``: the
    public file is published smoothed, so the smoothing adversary is the only one
    (:meth:`as_published`); ``fill``: the releases' public fill (how moments without a fresh
    release are shown). Computed from the true places: the numbers contain no coordinates,
    but they are not covered by ε (docs/attacks.md)."""

    places: tuple[str, ...]
    place_radius_m: np.ndarray
    epsilon: float
    radius_m: float
    scheme: str
    draws: int
    released_m: np.ndarray
    raw_m: np.ndarray
    baseline_m: np.ndarray
    precision: np.ndarray
    recall: np.ndarray
    raw_precision: np.ndarray
    raw_recall: np.ndarray
    prevalence: np.ndarray
    smoothed_m: np.ndarray
    smoothed_precision: np.ndarray
    smoothed_recall: np.ndarray
    hide: bool = False
    published_smoothed: bool = False
    fill: str = "repeat"

    def as_published(self, *, smoothed: bool) -> AttackReport:
        """The same report for a public file published smoothed (``smoothed=True``: only the
        adversary reading the smoothed file exists) or as released (both adversaries)."""
        return dataclasses.replace(self, published_smoothed=bool(smoothed))

    def smoothing_wins(self) -> np.ndarray:
        """Per place: the sentences use the adversary who smooths the file — the only one when
        the file is published smoothed, else when its median distance is strictly smaller."""
        smoothed = np.median(self.smoothed_m, axis=0)
        if self.published_smoothed:
            return np.ones(smoothed.size, dtype=bool)
        return smoothed < np.median(self.released_m, axis=0)

    def attacker_m(self) -> np.ndarray:
        """Nearest-guess distances (draws × places) of the adversary the sentences use."""
        return np.where(self.smoothing_wins()[None, :], self.smoothed_m, self.released_m)

    def median_m(self) -> np.ndarray:
        """Median over the draws of the nearest-guess distance of the adversary the sentences
        use (:meth:`smoothing_wins`), per place (metres)."""
        return np.median(self.attacker_m(), axis=0)

    def located(self) -> np.ndarray:
        """Per place: the median simulated release puts a guess within the protection radius
        r (or the place's own radius, if larger) — the scale the guarantee is stated at."""
        return self.median_m() <= np.maximum(self.radius_m, self.place_radius_m)

    def table(self) -> pd.DataFrame:
        """One row per place: the medians and the 10–90 % range over the draws."""
        def q(a: np.ndarray, p: float) -> np.ndarray:
            """Percentile p over the draws per place, ignoring NaN draws (a place the attack
            never says yes to has NaN precision in every draw: NaN, without a warning)."""
            out = np.full(len(self.places), np.nan)
            seen = np.isfinite(a).any(axis=0) if a.size else np.zeros(len(self.places), bool)
            if seen.any():
                out[seen] = np.nanpercentile(a[:, seen], p, axis=0)
            return out

        return pd.DataFrame({
            "place": list(self.places),
            "attacker": np.where(self.smoothing_wins(), "smoothed", "file"),
            "release_median_m": q(self.released_m, 50),
            "release_p10_m": q(self.released_m, 10),
            "release_p90_m": q(self.released_m, 90),
            "smoothed_median_m": q(self.smoothed_m, 50),
            "smoothed_p10_m": q(self.smoothed_m, 10),
            "smoothed_p90_m": q(self.smoothed_m, 90),
            "raw_m": self.raw_m,
            "baseline_median_m": q(self.baseline_m, 50),
            "visit_precision": q(self.precision, 50),
            "visit_recall": q(self.recall, 50),
            "smoothed_visit_precision": q(self.smoothed_precision, 50),
            "smoothed_visit_recall": q(self.smoothed_recall, 50),
            "raw_visit_precision": self.raw_precision,
            "raw_visit_recall": self.raw_recall,
            "always_yes_precision": self.prevalence,
        })

    def distances(self) -> pd.DataFrame:
        """Per place, the median nearest-guess distance (metres) of each adversary —
        :data:`DISTANCE_COLUMNS`: from the file, after smoothing it, from the raw trace, with no
        data — and ``shown``: the column of the adversary the sentences use."""
        t = self.table()
        file, smoothed, raw, none = DISTANCE_COLUMNS
        return pd.DataFrame({
            "place": t["place"], file: t["release_median_m"], smoothed: t["smoothed_median_m"],
            raw: t["raw_m"], none: t["baseline_median_m"],
            "shown": np.where(t["attacker"] == "smoothed", smoothed, file)})


DISTANCE_COLUMNS = ("from the file", "after smoothing it", "raw trace", "no data")
"""The adversaries of :meth:`AttackReport.distances`, in its column order."""


GUARANTEE_COVERS = (
    "What the guarantee covers: the moments at your places, together with any one other "
    "moment, reveal at most ε about where you were (locations within r of each other look "
    "alike)."
)
GUARANTEE_LEAVES = (
    "What it does not cover: every other moment gets fresh noise of its own, and many ordinary "
    "moments near a place, taken together, can point to it; nor does it hide when you were at "
    "your places."
)
HARDER = (
    "Settings that can make this harder: a larger protection radius r, a release interval "
    "(fewer moments released), dummy landmarks, or marking a wider place so that the moments "
    "around it are landmarks too."
)


def place_sentences(report: AttackReport, *, labels: Sequence[str] | None = None,
                    visits: bool = True) -> list[str]:
    """One plain paragraph per place with the report's numbers (``labels`` replace the place
    names, e.g. "place 1" in a public story; ``visits=False`` leaves out the visit attack,
    whose baseline is the share of time spent at the place). Markdown bold marks the
    numbers."""
    from .formatting import plain_distance, plain_percent

    names = list(labels) if labels is not None else list(report.places)
    table = report.table()
    located = report.located()
    out = []
    for j, row in table.iterrows():
        file_m, smooth_m = row.release_median_m, row.smoothed_median_m
        if report.published_smoothed:  # the smoothed file is all there is to read
            who, col, other = "an attacker looking for it in the public file (smoothed)", \
                "smoothed", (f"; published unsmoothed, the file would let it land within "
                             f"{plain_distance(min(file_m, smooth_m))}")
        elif row.attacker == "smoothed":
            who, col, other = "an attacker who smooths the public file", "smoothed", \
                f"; reading the file as it is, {plain_distance(file_m)}"
        else:
            who, col, other = "an attacker looking for it in the public file", "release", \
                f"; smoothing the file first, {plain_distance(smooth_m)}"
        vis = "smoothed_visit" if col == "smoothed" else "visit"
        precision, recall = row[f"{vis}_precision"], row[f"{vis}_recall"]
        text = (
            f"**{names[j]}**: {who} lands within **{plain_distance(row[f'{col}_median_m'])}** "
            f"(median over {report.draws} simulated releases; 10–90 %: "
            f"{plain_distance(row[f'{col}_p10_m'])}–{plain_distance(row[f'{col}_p90_m'])}"
            f"{other}), against **{plain_distance(row.raw_m)}** from the raw trace and "
            f"{plain_distance(row.baseline_median_m)} guessing without the file."
        )
        if visits and not math.isfinite(precision):
            text += (" Asked \"there now?\", it never says yes in any simulated release, so it "
                     f"finds none of the moments there (always saying yes: right "
                     f"{plain_percent(row.always_yes_precision)}).")
        elif visits:
            text += (f" Asked \"there now?\", it is right {plain_percent(precision)} "
                     f"of the times it says yes and finds {plain_percent(recall)} of "
                     f"the moments there (always saying yes: right "
                     f"{plain_percent(row.always_yes_precision)}).")
        if located[j]:
            radius = max(report.radius_m, float(report.place_radius_m[j]))
            what = ("the protection radius r" if radius == report.radius_m
                    else "the place's own radius")
            text += (f" In the median simulated release it lands within {what} "
                     f"({plain_distance(radius)}).")
        out.append(text)
    return out


def guarantee_sentences(report: AttackReport) -> list[str]:
    """What the guarantee covers and what it does not, and — when the attack locates a place
    within the protection radius — the settings that can make it harder."""
    out = [GUARANTEE_COVERS, GUARANTEE_LEAVES]
    if report.scheme == "skip" and not report.hide and not report.published_smoothed:
        out.append("Skip shows those times openly: it repeats the last released point at every "
                   "moment at your places." if report.fill == "repeat" else
                   "Skip shows those times openly: at every moment at your places it shows a "
                   "point on the line between the released points around it, not a fresh one.")
    if report.located().any():
        out.append("Here the attack locates a place although its moments are protected: it reads "
                   "every released point, and the guarantee does not bound what the ordinary "
                   "moments reveal together. " + HARDER)
    return out


def _settings(settings: Any) -> Any:
    from .session import ReleaseSettings

    if isinstance(settings, ReleaseSettings):
        return settings
    if isinstance(settings, Mapping):
        return ReleaseSettings(**settings)
    raise ParameterError("settings must be a ReleaseSettings or a mapping of its fields")


def attack_report(traj: pd.DataFrame, places: Any, *, settings: Any, rng: int,
                  draws: int = ATTACK_DRAWS, utc_offset_h: float | None = None,
                  allocation: Any = None) -> AttackReport:
    """Run every single-trace attack on ``draws`` seeded simulated releases of ``traj`` (one
    person; landmarks = the points within ``places``) with ``settings``
    (:class:`~lmdk_core.session.ReleaseSettings` or a mapping of its fields) — each read as it
    is and after :func:`lmdk_core.smooth_release` (free post-processing of the public file, with
    its defaults: the page's smoothed download) — on the raw trace, and against a data-free
    baseline.

    ``rng``: an integer seed, required — the result is a deterministic function of it, and the
    draws are simulations (:func:`public_trace` refuses anything else). ``allocation``: a
    TPL-bounded allocation to release with instead of the scheme (as
    :meth:`~lmdk_core.session.Session.preview` takes it)."""
    from .landmarks import place_masks
    from .places import as_places
    from .session import _draw
    from .smoothing import smooth_release

    rs = _settings(settings)
    draws = check_int(draws, "draws", minimum=1)
    check_seed(rng, "attack_report",
               "its draws are simulations; a real release is never attacked")
    pls = as_places(places)
    if not pls:
        raise ParameterError("mark at least one place to attack")
    names = tuple(p.name for p in pls)
    plat = np.array([p.lat for p in pls])
    plon = np.array([p.lon for p in pls])
    prad = np.array([p.place_radius_m for p in pls])
    truth = place_masks(traj, pls)  # (places, moments)
    mask = truth.any(axis=0)
    raw = public_trace(traj)
    eps = rs.epsilon_scheme
    r = rs.radius_m
    raw_g = _guesses(raw, None, None, utc_offset_h, STAY_GUESSES)
    raw_m = _nearest_m(raw_g, plat, plon)
    raw_pr = np.array([_precision_recall(visit_inference(raw, p.as_tuple()),
                                         truth[j][raw.rows]) for j, p in enumerate(pls)])
    seeds = spawn_seeds(int(rng), draws + 1)
    dist = np.empty((2, draws, len(pls)))  # [the file as it is, the file smoothed]
    pr = np.empty((2, draws, len(pls), 2))
    for i in range(draws):  # one simulated release per draw; each attack is vectorised
        rel, _, _ = _draw(traj, mask, rs, allocation, rng=simulation_rng(seeds[i]))
        for k, shown in enumerate((rel, smooth_release(rel))):  # public columns + parameters
            pub = public_trace(shown)  # the same gate: a simulated release only
            g = _guesses(pub, eps, r, utc_offset_h, STAY_GUESSES)
            dist[k, i] = _nearest_m(g, plat, plon)
            for j, p in enumerate(pls):  # a few places
                said = visit_inference(pub, p.as_tuple(), epsilon=eps, radius_m=r)
                pr[k, i, j] = _precision_recall(said, truth[j][pub.rows])
    base = simulation_rng(seeds[draws])
    k = 2 + STAY_GUESSES
    blat = base.uniform(raw.lat.min(), raw.lat.max(), size=(draws, k))
    blon = base.uniform(raw.lon.min(), raw.lon.max(), size=(draws, k))
    base_m = haversine_m(plat[None, :, None], plon[None, :, None], blat[:, None, :],
                         blon[:, None, :]).min(axis=2)
    return AttackReport(names, prad, rs.epsilon, r, rs.scheme, draws, dist[0], raw_m, base_m,
                        pr[0, ..., 0], pr[0, ..., 1], raw_pr[:, 0], raw_pr[:, 1],
                        truth.mean(axis=1), dist[1], pr[1, ..., 0], pr[1, ..., 1],
                        bool(rs.hide), fill=str(dict(rs.params).get("fill", "repeat")))


# ----------------------------------------------------------------------------- re-identification


def _cells(lat: np.ndarray, lon: np.ndarray, origin: tuple[float, float],
           cell_m: float) -> np.ndarray:
    """Grid cell codes (int64) of points on a square grid of ``cell_m`` metres at ``origin``."""
    x, y = degrees_to_metres(origin[0], origin[1], lat, lon)
    ix = np.floor(x / cell_m).astype(np.int64) + (1 << 20)
    iy = np.floor(y / cell_m).astype(np.int64) + (1 << 20)
    return ix * (1 << 21) + iy


def _visit_counts(uid: np.ndarray, cells: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                np.ndarray]:
    """Unique (user, cell) pairs with their point counts, sorted by user then cell."""
    pairs = np.stack([uid, cells], axis=1)
    uniq, counts = np.unique(pairs, axis=0, return_counts=True)
    return uniq[:, 0], uniq[:, 1], counts


def reidentification(true: Mapping[Any, PublicTrace], released: Mapping[Any,
                     PublicTrace], *, k: int = 2, cell_m: float = 500.0, instances: int = 20,
                     rng: int) -> pd.DataFrame:
    """The re-identification risk of each person when an adversary with background knowledge
    from the TRUE traces matches it against the RELEASED traces (both on a public grid of
    ``cell_m`` metres; scikit-mobility's definitions, Pellungrini et al. 2017).

    * Location attack: the adversary knows ``k`` distinct cells the person visited (``instances``
      random sets per person, seeded by ``rng``); a released trace matches when it has a point in
      each. Risk of one set = 1/(number of matches) if the person's own release matches, else 0.
    * Home-and-work attack: the adversary knows the person's two most visited true cells; a
      released trace matches when its own two most visited cells are those two.

    Returns one row per person: ``location_risk`` (max over the sets, skmob's convention),
    ``singled_out`` (share of the sets whose only match is the person's release),
    ``home_work_risk`` and ``home_work_singled_out``."""
    k = check_int(k, "k", minimum=1)
    cell_m = check_positive(cell_m, "cell_m")
    instances = check_int(instances, "instances", minimum=1)
    people = list(true)
    if set(people) != set(released) or not people:
        raise ParameterError("give the true and the released trace of the same people")
    idx = {u: i for i, u in enumerate(people)}
    all_lat = np.concatenate([true[u].lat for u in people])
    all_lon = np.concatenate([true[u].lon for u in people])
    origin = (float(np.median(all_lat)), float(np.median(all_lon)))

    def visits(traces: Mapping[Hashable, PublicTrace]) -> tuple[np.ndarray, ...]:
        uid = np.concatenate([np.full(len(traces[u]), idx[u]) for u in people])
        lat = np.concatenate([traces[u].lat for u in people])
        lon = np.concatenate([traces[u].lon for u in people])
        return _visit_counts(uid, _cells(lat, lon, origin, cell_m))

    t_uid, t_cell, t_count = visits(true)
    r_uid, r_cell, r_count = visits(released)
    n = len(people)
    ref = r_uid.astype(np.int64) * (1 << 43) + r_cell  # sorted: unique pairs by (user, cell)

    def has(users: np.ndarray, cells: np.ndarray) -> np.ndarray:
        """Whether the released trace of each of ``users`` has a point in ``cells`` (broadcast)."""
        key = users.astype(np.int64) * (1 << 43) + cells
        at = np.minimum(np.searchsorted(ref, key), ref.size - 1)
        return ref[at] == key

    gen = simulation_rng(int(rng))
    starts = np.searchsorted(t_uid, np.arange(n + 1))
    loc_risk = np.zeros(n)
    single = np.zeros(n)
    for u in range(n):  # per person: the instance sets, each matched against all releases
        cells_u = t_cell[starts[u]:starts[u + 1]]
        if cells_u.size < k:
            continue
        pick = np.argsort(gen.random((instances, cells_u.size)), axis=1)[:, :k]
        known = cells_u[pick]  # (instances, k)
        match = np.asarray(has(np.arange(n)[None, None, :], known[:, :, None]).all(axis=1))
        count = match.sum(axis=1)
        own = match[:, u]
        risk = np.where(own, 1.0 / np.maximum(count, 1), 0.0)
        loc_risk[u] = risk.max()
        single[u] = float(np.mean(own & (count == 1)))

    def top2(uid: np.ndarray, cell: np.ndarray, count: np.ndarray) -> np.ndarray:
        """Each person's two most visited cells (sorted pair; -1 when missing)."""
        order = np.lexsort((cell, -count, uid))
        u_s, c_s = uid[order], cell[order]
        first = np.searchsorted(u_s, np.arange(n))
        end = np.searchsorted(u_s, np.arange(n), side="right")
        a = np.where(first < end, c_s[np.minimum(first, c_s.size - 1)], -1)
        b = np.where(first + 1 < end, c_s[np.minimum(first + 1, c_s.size - 1)], -1)
        return np.sort(np.stack([a, b], axis=1), axis=1)

    hw_true, hw_rel = top2(t_uid, t_cell, t_count), top2(r_uid, r_cell, r_count)
    hw_match = (hw_rel[None, :, :] == hw_true[:, None, :]).all(axis=2)  # (target, release)
    hw_count = hw_match.sum(axis=1)
    hw_own = np.asarray(np.diag(hw_match), dtype=bool)
    return pd.DataFrame({
        "uid": people,
        "location_risk": loc_risk,
        "singled_out": single,
        "home_work_risk": np.where(hw_own, 1.0 / np.maximum(hw_count, 1), 0.0),
        "home_work_singled_out": (hw_own & (hw_count == 1)).astype(float),
    })



def population_reidentification(traj: pd.DataFrame, places: pd.DataFrame, epsilons: Any, *,
                                rng: int, scheme: str = "skip", radius_m: float = 200.0,
                                k: int = 2, cell_m: float = 500.0, draws: int = 3,
                                instances: int = 20) -> pd.DataFrame:
    """:func:`reidentification` in a population whose people were each released on their own
    (``scheme`` — event, user, uniform or skip — at their own ε_u, landmarks = their
    ``places``) — seeded simulations only — against the raw traces (the attack's
    truth-on-truth risk, scikit-mobility's measure).

    ``traj``: columns ``uid``, ``time``, ``lat``, ``lon``; ``places``: ``uid``, ``lat``, ``lon``
    and ``radius_m`` or ``place_radius_m``; ``epsilons``: a frame with ``uid`` and ``epsilon``
    (:func:`lmdk_core.population.draw_preferences`) or a mapping uid → ε_u. Each person's
    budgets come from :func:`lmdk_core.allocate`; all people are drawn in one
    :func:`lmdk_core.release_with_budget` call (a person's moments before their first fresh
    release are dropped, as a release of their own would show nothing there). Returns one row
    per source ("raw trace", "release 1", …): the share of people singled out by ``k`` known
    cells (mean over people), the mean location risk, and the share singled out by home and
    work."""
    from .allocation import allocate
    from .landmarks import place_masks
    from .release import release_with_budget
    from .session import DETERMINISTIC

    draws = check_int(draws, "draws", minimum=1)
    if scheme not in DETERMINISTIC:
        raise ParameterError(f"scheme must be one of {', '.join(DETERMINISTIC)}")
    check_seed(rng, "population_reidentification")
    eps = (dict(zip(epsilons["uid"], epsilons["epsilon"], strict=True))
           if isinstance(epsilons, pd.DataFrame) else dict(epsilons))
    frame = traj.sort_values(["uid", "time"], kind="stable").reset_index(drop=True)
    uid = frame["uid"].to_numpy()
    starts = np.flatnonzero(np.r_[True, uid[1:] != uid[:-1]])
    bounds = np.r_[starts, len(frame)]
    people = list(uid[starts])
    missing = [u for u in people if u not in eps]
    if missing:
        raise ParameterError(f"no budget ε_u for {len(missing)} people (first: {missing[0]!r})")
    radius_col = "place_radius_m" if "place_radius_m" in places.columns else "radius_m"
    by_uid: dict[Hashable, list[tuple[float, float, float]]] = {}
    for u, a, b, r in zip(places["uid"], places["lat"], places["lon"], places[radius_col],
                          strict=True):
        by_uid.setdefault(u, []).append((float(a), float(b), float(r)))
    budget = np.zeros(len(frame))
    mask = np.zeros(len(frame), dtype=bool)
    lat_all, lon_all = frame["lat"].to_numpy(), frame["lon"].to_numpy()
    for j, u in enumerate(people):  # per person: their landmarks and budgets (a few arrays)
        a, b = bounds[j], bounds[j + 1]
        if u in by_uid:
            mask[a:b] = place_masks((lat_all[a:b], lon_all[a:b]), by_uid[u]).any(axis=0)
        budget[a:b] = allocate(b - a, mask[a:b], epsilon=float(eps[u]), scheme=scheme)
    t = epoch_ns(frame["time"])

    def traces(lat: np.ndarray, lon: np.ndarray) -> dict[Hashable, PublicTrace]:
        """Each person's public trace (sorted by time already; finite points only)."""
        out = {}
        for j, u in enumerate(people):
            sl = slice(bounds[j], bounds[j + 1])
            ok = np.flatnonzero(np.isfinite(lat[sl]))
            out[u] = PublicTrace(t[sl][ok], lat[sl][ok], lon[sl][ok], ok)
        return out

    true = traces(lat_all, lon_all)
    seeds = spawn_seeds(int(rng), draws + 1)
    match_seed = int(simulation_rng(seeds[draws]).integers(2**31))
    rows = []

    def summary(name: str, released: Mapping[Hashable, PublicTrace]) -> None:
        out = reidentification(true, released, k=k, cell_m=cell_m, instances=instances,
                               rng=match_seed)
        rows.append({"source": name, "singled_out": float(out["singled_out"].mean()),
                     "location_risk": float(out["location_risk"].mean()),
                     "home_work_singled_out": float(out["home_work_singled_out"].mean())})

    summary("raw trace", true)
    fresh = budget > 0
    owner = np.repeat(np.arange(len(people)), np.diff(bounds))
    # a person's moments before their own first fresh release would repeat someone else's point
    first_fresh = np.full(len(people), np.iinfo(np.int64).max)
    np.minimum.at(first_fresh, owner[fresh], np.flatnonzero(fresh))
    shown = np.arange(len(frame)) >= first_fresh[owner]
    for i in range(draws):  # one simulated release of everyone, each at their own budgets
        rel = release_with_budget(frame[["time", "lat", "lon"]], mask, budget=budget,
                                  radius_m=radius_m, rng=simulation_rng(seeds[i]),
                                  noise="fast")
        lat = np.where(shown, np.asarray(rel.lat, dtype=float), np.nan)
        lon = np.where(shown, np.asarray(rel.lon, dtype=float), np.nan)
        summary(f"release {i + 1}", traces(lat, lon))
    return pd.DataFrame(rows)
