"""Per-user work of a population release, on one partition that holds every row of its users.

For each user u (rows sorted by time), in this order:

1. points outside the public grid (box × time window) are dropped;
2. **landmark bins** L_u: bins holding at least one point within one of u's own places (the
   rule of :func:`lmdk_core.landmark_mask`, vectorised over users: :func:`own_place_mask`);
3. **per-bin budgets** ε_{u,t} = ``allocate(scheme, n_bins, L_u, epsilon=ε_u)`` — u's own landmark
   scheme over u's own bins, so u gets (ε_u, L_u)-landmark privacy (docs/personalised-dp.md);
4. **contribution bounding**: one record per (user, bin): the cell of the bin's first point
   (``rule="first"``) or the cell u visited most often in the bin (``rule="mode"``, ties → the
   smallest cell id);
5. **keep coin** of the record in bin t: u's coin stream is a ChaCha20 keystream keyed by
   BLAKE2b(master key ‖ uid) (:func:`keyed_source`, the cipher of the package's release-grade
   :class:`~lmdk_core.noise.RandomSource`) and holds one 53-bit integer per bin (drawn for every
   bin, whatever the data), so the coins do not depend on how users are partitioned. The record
   is kept when coin < ⌊π·(1 − 2^-48)·2^53⌋ (``mode="sample"``, π of
   :func:`~lmdk_core.population.tau.keep_probability`, calibrated so that *moving* the record to
   another cell costs exactly ε_{u,t}; 1 when ε_{u,t} ≥ τ) — the exact keep probability is at
   most π — or when ε_{u,t} ≥ τ (``mode="threshold"``).

The result is sparse counts of kept and of all bounded records per (bin, cell) key, plus private
per-user statistics, among them u's privacy loss in the release (``loss``: the landmark
guarantee max_t Σ_{i ∈ L_u ∪ {t}} ℓ_{u,i} with the per-bin loss ℓ_{u,i} = min(ε_{u,i}, τ) of the
Sample mode, τ or 0 of the threshold mode; :func:`release_loss`). ℓ_{u,i} bounds *any* change of
u's data in bin i: u's record added, removed, or moved to another cell (docs/personalised-dp.md
§3). Noise, discrete Laplace(τ/2) on every count, is added once, after the reduction
(:mod:`.release`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
import pandas as pd

from .._deprecation import renamed
from ..allocation import allocate
from ..errors import ParameterError
from ..landmarks import _places as _check_places
from ..landmarks import within_place
from ..noise import RandomSource
from ..trajectory import time_order
from .grid import Grid
from .tau import keep_probability

__all__ = [
    "BOUNDING_RULES",
    "PartitionResult",
    "PlaceIndex",
    "Places",
    "Totals",
    "bounded_records",
    "keyed_source",
    "places_by_user",
    "process_partition",
    "release_loss",
    "user_coins",
    "user_losses",
]

BOUNDING_RULES = ("first", "mode")
_ONE = 1 << 53
_SHRINK = 1.0 - 2.0**-48  # absorbs the few-ulp error of computing π
_BLOCK = 1 << 16
"""Points per block of :func:`own_place_mask` (its temporaries are O(block))."""


@dataclass
class PartitionResult:
    """Sparse per-(bin·n_cells + cell) counts and private per-user figures of one partition."""

    kept_keys: np.ndarray
    kept_counts: np.ndarray
    true_keys: np.ndarray
    true_counts: np.ndarray
    users: pd.DataFrame  # uid, epsilon, records, landmark_bins, kept, loss (private)
    n_points: int
    n_outside: int


def keyed_source(master_key: bytes, label: bytes) -> RandomSource:
    """A release-grade random source: the ChaCha20 keystream keyed by BLAKE2b(key ‖ label).

    The same cipher as :meth:`lmdk_core.noise.RandomSource.secure`, keyed from the release's
    master key (fresh OS entropy for a real release, :func:`.release.master_key`) so that every
    partition of a Dask run draws the same coins for the same user."""
    return RandomSource.keyed(master_key, label)


def user_coins(master_key: bytes, uid: str, n_bins: int) -> np.ndarray:
    """u's ``n_bins`` uniform 53-bit integers (int64) from the ChaCha20 keystream keyed by
    BLAKE2b(key ‖ "coin" ‖ uid) (:func:`keyed_source`)."""
    words = keyed_source(master_key, b"coin\x00" + uid.encode("utf-8")).words(n_bins)
    return (words >> np.uint64(11)).astype(np.int64)


@renamed(eps_t="budget", budget="epsilon")
def release_loss(budget: np.ndarray, landmarks: np.ndarray, *, tau: float, mode: str,
                 epsilon: np.ndarray) -> np.ndarray:
    """Each user's privacy loss in one release (rows of ``budget`` — the per-bin budgets
    ε_{u,t} — and ``landmarks``: users, columns: bins; ``epsilon``: each user's ε_u). Until 0.3
    the old call ``release_loss(eps_t, landmarks, ..., budget=ε_u)`` still works, with a
    warning.

    The per-bin loss is ℓ = min(ε_{u,t}, τ) (``mode="sample"``, docs/personalised-dp.md §3) or
    τ where ε_{u,t} ≥ τ and 0 elsewhere (``"threshold"``), for any change of u's data in bin t
    (u's record added, removed, or moved to another cell); over u's landmark neighbours the
    loss is max_t Σ_{i ∈ L_u ∪ {t}} ℓ_{u,i} = Σ_{L_u} ℓ + max_{t ∉ L_u} ℓ. For a landmark-private
    scheme it is at most ε_u; a sum that passes ε_u by a rounding error only (ε_u/(|L|+1)
    added |L|+1 times) is reported as ε_u. Scheme ``event`` is not landmark-private: its loss
    can pass ε_u, and is reported as it is."""
    e = np.asarray(budget, dtype=np.float64)
    lm = np.asarray(landmarks, dtype=bool)
    b = np.asarray(epsilon, dtype=np.float64)
    ell = np.where(e >= tau, tau, 0.0) if mode == "threshold" else np.minimum(e, tau)
    if ell.shape[1] == 0:
        return np.zeros(ell.shape[0])
    loss = np.where(lm, ell, 0.0).sum(axis=1) + np.where(lm, 0.0, ell).max(axis=1)
    return np.where((loss > b) & (loss <= b * (1 + 1e-9)), b, loss)


def keep_thresholds(eps: np.ndarray, tau: float, mode: str) -> np.ndarray:
    """Integer thresholds: a record is kept when its 53-bit coin is below the threshold."""
    e = np.asarray(eps, dtype=np.float64)
    if mode == "threshold":
        return np.where(e >= tau, _ONE, 0).astype(np.int64)
    p = keep_probability(e, tau)
    thr = np.floor(p * _SHRINK * _ONE).astype(np.int64)
    return np.where(e >= tau, _ONE, thr)


def _sorted_view(part: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                              np.ndarray]:
    """(uids, user code, time ns, lat, lon) sorted by (user, time); ``uids[code]`` is the id
    (as text). Users are numbered by hashing (:func:`.partitions.user_codes`: ids compared as
    text, one Python string per *user*), then the package's one (uid, time) sort orders the
    rows of this partition. Rows already in that order (a Parquet file written by user and time)
    are not copied: lat and lon are the frame's own columns."""
    from .partitions import user_codes

    missing = [c for c in ("uid", "time", "lat", "lon") if c not in part.columns]
    if missing:
        raise ParameterError(f"population frame is missing column(s) {', '.join(missing)}")
    code0, uniq = user_codes(part["uid"])
    # integer codes keep their order in time_order's factorize, so codes[i] is still uniq's index
    order, _, t_ns = time_order(pd.DataFrame({"uid": code0, "time": part["time"]}))
    lat = part["lat"].to_numpy(dtype=np.float64)
    lon = part["lon"].to_numpy(dtype=np.float64)
    if order.size > 1 and not np.all(order[1:] > order[:-1]):  # not the identity permutation
        code0, lat, lon = code0[order], lat[order], lon[order]
    return uniq, code0.astype(np.int64, copy=False), t_ns, lat, lon


def _bounded_records(key: np.ndarray, cell: np.ndarray, rule: str, n_cells: int
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(record key, record cell): one record per distinct key (keys sorted, non-decreasing)."""
    if key.size == 0:
        return key, cell
    if rule == "first":
        first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        return key[first], cell[first]
    pair = key * n_cells + cell
    upair, counts = np.unique(pair, return_counts=True)
    k, c = upair // n_cells, upair % n_cells
    order = np.lexsort((c, -counts, k))
    k, c = k[order], c[order]
    first = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    return k[first], c[first]


Places: TypeAlias = "pd.DataFrame | PlaceIndex | None"
"""Landmark places: a table (uid, lat, lon, radius_m), its :func:`places_by_user` index, or None."""

Variant = tuple[str, float, str]
"""(scheme, τ, mode) of one release computed from the same per-user work."""


def process_partition(
    part: pd.DataFrame, *, grid: Grid, epsilon_of: pd.Series, places: Places,
    scheme: str = "skip", tau: float = 1.0, mode: str = "sample", rule: str = "first",
    master_key: bytes, progress: Callable[[int, int], None] | None = None,
    variants: list[Variant] | None = None,
) -> PartitionResult | list[PartitionResult]:
    """Bounded, sampled records of one partition (every row of each of its users).

    ``epsilon_of``: ε_u indexed by uid (str). ``places``: uid, lat, lon, radius_m (u's own
    landmark places; None or no rows = no landmarks). With ``variants`` (a list of
    (scheme, τ, mode)), the landmarks, bounding and coins are computed once and one result per
    variant is returned (the baselines of an evaluation share this work).
    """
    single = variants is None
    variants = [(scheme, tau, mode)] if variants is None else variants
    for _, _, m in variants:
        if m not in ("sample", "threshold"):
            raise ParameterError(f"unknown mode {m!r}")
    prep = _prepare(part, grid=grid, epsilon_of=epsilon_of, places=places, rule=rule)
    uids, eps_u, L, ruser, rbin = prep.uids, prep.eps_u, prep.landmarks, prep.ruser, prep.rbin
    n_users, n_bins, n_cells = len(uids), grid.n_bins, grid.n_cells
    schemes = sorted({v[0] for v in variants})
    eps_t = {sc: np.empty((n_users, n_bins)) for sc in schemes}
    coins = np.empty((n_users, n_bins), dtype=np.int64)
    step = max(1, n_users // 100)
    for i in range(n_users):  # per user (not per point): own budget scheme and coin stream
        for sc in schemes:
            eps_t[sc][i] = allocate(sc, n_bins, L[i], epsilon=float(eps_u[i]))
        coins[i] = user_coins(master_key, str(uids[i]), n_bins)
        if progress is not None and (i % step == 0 or i == n_users - 1):
            progress(i + 1, n_users)
    r_coin = coins[ruser, rbin]
    out_key = rbin * n_cells + prep.rcell
    tk, tc = np.unique(out_key, return_counts=True)
    records = np.bincount(ruser, minlength=n_users) if n_users else np.zeros(0, np.int64)
    results = []
    for sc, t, m in variants:
        kept = r_coin < keep_thresholds(eps_t[sc][ruser, rbin], t, m)
        kk, kc = np.unique(out_key[kept], return_counts=True)
        users = pd.DataFrame({
            "uid": uids.astype(str), "epsilon": eps_u, "records": records,
            "landmark_bins": L.sum(axis=1),
            "kept": np.bincount(ruser[kept], minlength=n_users) if n_users else records,
            "loss": release_loss(eps_t[sc], L, tau=t, mode=m, epsilon=eps_u),
        })
        results.append(PartitionResult(kk, kc, tk, tc, users, prep.n_points, prep.n_outside))
    return results[0] if single else results


@dataclass
class _Prepared:
    """The per-user work every variant shares: users, budgets, landmark bins, bounded records."""

    uids: np.ndarray
    eps_u: np.ndarray
    landmarks: np.ndarray  # bool (n_users, n_bins)
    ruser: np.ndarray
    rbin: np.ndarray
    rcell: np.ndarray
    n_points: int
    n_outside: int


def _prepare(part: pd.DataFrame, *, grid: Grid, epsilon_of: pd.Series,
             places: Places, rule: str) -> _Prepared:
    if rule not in BOUNDING_RULES:
        raise ParameterError(f"unknown bounding rule {rule!r}; use one of {BOUNDING_RULES}")
    uids, code, t_ns, lat, lon = _sorted_view(part)
    n_points = int(code.size)
    b, cell = grid.locate(t_ns, lat, lon)
    del t_ns
    ok = b >= 0
    n_inside = int(np.count_nonzero(ok))
    if n_inside < n_points:  # (no copies when every point is inside the grid)
        code, b, cell, lat, lon = code[ok], b[ok], cell[ok], lat[ok], lon[ok]
    del ok
    n_users = len(uids)
    eps_u = epsilon_of.reindex(pd.Index(uids.astype(str))).to_numpy(dtype=np.float64)
    if n_users and np.isnan(eps_u).any():
        miss = uids[np.flatnonzero(np.isnan(eps_u))]
        raise ParameterError(
            f"{miss.size} user(s) have no privacy preference (first: {miss[0]!r}); give every "
            "user an epsilon"
        )
    n_bins = grid.n_bins
    rkey, rcell = _bounded_records(code * n_bins + b, cell, rule, grid.n_cells)
    # landmark bins L_u: bins with a point inside one of u's own places
    lmk = own_place_mask(code, lat, lon, uids, places)
    L = np.zeros((n_users, n_bins), dtype=bool)
    L[code[lmk], b[lmk]] = True
    return _Prepared(uids, eps_u, L, rkey // n_bins, rkey % n_bins, rcell, n_points,
                     n_points - n_inside)


def user_losses(part: pd.DataFrame, *, grid: Grid, epsilon_of: pd.Series,
                places: pd.DataFrame | None, scheme: str, tau: float, mode: str,
                rule: str = "first") -> pd.DataFrame:
    """PRIVATE: what one release with (``scheme``, ``tau``, ``mode``) would cost each user of
    ``part`` (uid, epsilon, loss; :func:`release_loss`), computed before any coin or noise is
    drawn — the personal costs a ledger charges (:meth:`lmdk_core.population.Ledger.charge_costs`).
    """
    if mode not in ("sample", "threshold"):
        raise ParameterError(f"unknown mode {mode!r}")
    prep = _prepare(part, grid=grid, epsilon_of=epsilon_of, places=places, rule=rule)
    n_users = len(prep.uids)
    eps_t = np.empty((n_users, grid.n_bins))
    for i in range(n_users):
        eps_t[i] = allocate(scheme, grid.n_bins, prep.landmarks[i], epsilon=float(prep.eps_u[i]))
    return pd.DataFrame({"uid": prep.uids.astype(str), "epsilon": prep.eps_u,
                         "loss": release_loss(eps_t, prep.landmarks, tau=tau, mode=mode,
                                              epsilon=prep.eps_u)})


def own_place_mask(code: np.ndarray, lat: np.ndarray, lon: np.ndarray, uids: np.ndarray,
                   places: Places) -> np.ndarray:
    """True where a point lies within one of *its own user's* places (``places``: a table, or
    :func:`places_by_user` of it, computed once for all partitions).

    The rule of :func:`lmdk_core.landmark_mask` (haversine distance ≤ radius_m, inclusive),
    vectorised over all users at once: pass j compares every point whose user has more than j
    places with that user's j-th place. As in :func:`lmdk_core.landmarks.place_masks`, only
    points in the place's latitude band (R·|Δφ| ≤ radius, widened by the same slack) are
    measured — the great-circle distance is at least R·|Δφ|. Points are taken in blocks of
    :data:`_BLOCK`, so the temporaries are O(block) whatever the partition size: a release's
    first partition does not grow the process by temporaries proportional to its points (fresh
    pages the kernel must clear, a per-release cost)."""
    out = np.zeros(code.size, dtype=bool)
    index = places_by_user(places)
    if not index or code.size == 0:
        return out
    # this partition's users only (the index may hold every user of a larger population)
    start, count = index.spans(uids)
    if not count.any():
        return out
    code = np.asarray(code)
    lat = np.asarray(lat, dtype=np.float64)
    lon = np.asarray(lon, dtype=np.float64)
    for a in range(0, code.size, _BLOCK):  # blocks of points (not a loop over points)
        s = slice(a, a + _BLOCK)
        c, la, lo, blk = code[s], lat[s], lon[s], out[s]  # views; blk writes into out
        first, n_own = start[c], count[c]
        phi = np.radians(la)
        for j in range(int(n_own.max())):  # j-th place of every user that has more than j
            pts = np.flatnonzero((n_own > j) & ~blk)  # a point already inside needs no more
            if pts.size == 0:
                continue
            plat, plon, rad = index.rows[first[pts] + j].T
            if pts.size == c.size:  # every point of the block: no gathers of its coordinates
                blk[:] = within_place(phi, la, lo, plat, plon, rad)
            else:
                blk[pts] = within_place(phi[pts], la[pts], lo[pts], plat, plon, rad)
    return out


def bounded_records(part: pd.DataFrame, *, grid: Grid, rule: str = "first") -> pd.DataFrame:
    """PRIVATE: the bounded records (uid, bin, cell, key = bin·n_cells + cell), one per
    (user, bin), by the same rule as the release (for ledger queries and evaluations)."""
    if rule not in BOUNDING_RULES:
        raise ParameterError(f"unknown bounding rule {rule!r}; use one of {BOUNDING_RULES}")
    uids, code, t_ns, lat, lon = _sorted_view(part)
    b, cell = grid.locate(t_ns, lat, lon)
    ok = b >= 0
    rkey, rcell = _bounded_records(code[ok] * grid.n_bins + b[ok], cell[ok], rule, grid.n_cells)
    rbin = rkey % grid.n_bins
    return pd.DataFrame({"uid": uids.astype(str)[rkey // grid.n_bins], "bin": rbin,
                         "cell": rcell, "key": rbin * grid.n_cells + rcell})


class PlaceIndex(Mapping[str, np.ndarray]):
    """Each user's places, read-only: ``index[uid]`` is an array of (lat, lon, radius_m) rows.

    Held as three arrays (the sorted ids, where each id's rows start, the rows), so it pickles
    as a few buffers: one Dask broadcast message whatever the number of users (a dict of one
    small array per user is serialised by Dask as one frame per user)."""

    def __init__(self, uids: np.ndarray, starts: np.ndarray, rows: np.ndarray):
        self.uids = np.asarray(uids, dtype=object)  # sorted, distinct (text)
        self.starts = np.asarray(starts, dtype=np.int64)  # len(uids) + 1 offsets into rows
        self.rows = np.asarray(rows, dtype=np.float64).reshape(-1, 3)
        self._pos = pd.Index(self.uids)

    def __reduce__(self) -> tuple:
        return (PlaceIndex, (self.uids, self.starts, self.rows))

    def __len__(self) -> int:
        return len(self.uids)

    def __iter__(self) -> Iterator[str]:
        return iter(self.uids.tolist())

    def __getitem__(self, uid: str) -> np.ndarray:
        i = self._pos.get_indexer([uid])[0]
        if i < 0:
            raise KeyError(uid)
        return self.rows[self.starts[i]:self.starts[i + 1]]

    def spans(self, uids: Any) -> tuple[np.ndarray, np.ndarray]:
        """(first row, number of rows) of each of ``uids`` (text) in :attr:`rows`; 0 rows for
        an id without places."""
        i = self._pos.get_indexer(pd.Index(np.asarray(uids, dtype=object)).astype(str))
        if len(self.uids) == 0:
            return np.zeros(i.size, np.int64), np.zeros(i.size, np.int64)
        j = np.where(i >= 0, i, 0)
        start = self.starts[j]
        return start, np.where(i >= 0, self.starts[j + 1] - start, 0)


_NO_PLACES = PlaceIndex(np.zeros(0, dtype=object), np.zeros(1, np.int64), np.zeros((0, 3)))


def places_by_user(places: Places) -> PlaceIndex:
    """Each user's places as an array of (lat, lon, radius_m) rows, keyed by uid (text): a
    :class:`PlaceIndex`; the table is checked as :func:`lmdk_core.landmark_mask` checks places.
    Idempotent; a mapping uid → rows (the older dict index) is converted and checked."""
    if isinstance(places, PlaceIndex):
        return places
    table = places
    if isinstance(places, Mapping):
        table = pd.DataFrame(
            [(u, *row) for u, rows in places.items() for row in np.asarray(rows).reshape(-1, 3)],
            columns=["uid", "lat", "lon", "radius_m"])
    if table is None or len(table) == 0:
        return _NO_PLACES
    if not isinstance(table, pd.DataFrame):
        raise ParameterError("places must be a table with columns uid, lat, lon, radius_m, got "
                             f"{type(table).__name__}")
    missing = [c for c in ("uid", "lat", "lon", "radius_m") if c not in table.columns]
    if missing:
        raise ParameterError(f"places table is missing column(s) {', '.join(missing)}")
    arr = _place_rows(table[["lat", "lon", "radius_m"]])
    uid = table["uid"].astype(str).to_numpy()
    order = np.argsort(uid, kind="stable")
    uid, arr = uid[order], arr[order]
    starts = np.flatnonzero(np.r_[True, uid[1:] != uid[:-1]])
    return PlaceIndex(uid[starts], np.r_[starts, uid.size], arr)


def _place_rows(table: pd.DataFrame) -> np.ndarray:
    """(lat, lon, radius_m) float rows of a places table, checked as
    :func:`lmdk_core.landmark_mask` checks places (:func:`lmdk_core.places.as_places`: finite,
    |lat| <= 90, |lon| <= 180, radius > 0; an empty radius becomes the default one).

    Numeric columns whose every row passes those checks are taken as they are, in one
    vectorised pass; otherwise (a failing row, an empty cell, a text or bool column) the table
    goes through the package's one place validator, row by row, which fixes or names the row."""
    cols = [table[c] for c in ("lat", "lon", "radius_m")]
    if all(isinstance(c.dtype, np.dtype) and c.dtype.kind in "iuf" for c in cols):
        arr = np.column_stack([c.to_numpy(dtype=np.float64) for c in cols])
        lat, lon, rad = arr.T
        with np.errstate(invalid="ignore"):
            ok = (np.isfinite(arr).all(axis=1) & (np.abs(lat) <= 90.0)
                  & (np.abs(lon) <= 180.0) & (rad > 0.0))
        if ok.all():
            return arr.reshape(len(table), 3)
    return np.column_stack(_check_places(table)).reshape(len(table), 3)


def _add_users(seen: set[str], users: Any) -> None:
    s = set(map(str, users))
    both = seen & s
    if both:
        raise ParameterError(
            f"user {sorted(both)[0]!r} appears in two partitions; the Parquet input must be "
            "partitioned by user (write it with lmdk_core.population.write_partitioned)"
        )
    seen |= s


class Totals:
    """The running sum of partition results, added one at a time (memory: the dense grid and
    the per-user table, not the partitions). Raises ParameterError when a user appears in two
    partitions."""

    def __init__(self, size: int):
        self.kept = np.zeros(size, dtype=np.int64)
        self.true = np.zeros(size, dtype=np.int64)
        self.users: list[pd.DataFrame] = []
        self.n_points = 0
        self.n_outside = 0
        self.n_parts = 0
        self._seen: set[str] = set()

    def add(self, part: PartitionResult) -> None:
        _add_users(self._seen, part.users["uid"])
        self.kept[part.kept_keys] += part.kept_counts  # keys of one part are unique (np.unique)
        self.true[part.true_keys] += part.true_counts
        self.users.append(part.users)
        self.n_points += part.n_points
        self.n_outside += part.n_outside
        self.n_parts += 1

    def user_table(self) -> pd.DataFrame:
        """All partitions' user rows, sorted by uid (independent of the partitioning)."""
        if not self.users:
            return pd.DataFrame(columns=["uid", "epsilon", "records", "landmark_bins", "kept",
                                         "loss"])
        return pd.concat(self.users, ignore_index=True).sort_values(
            "uid", kind="stable", ignore_index=True)
