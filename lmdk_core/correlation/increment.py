"""The loss increment L(α) of Cao et al. for a row-stochastic matrix, exact and fast.

For a matrix P, previous loss α ≥ 0 and y = e^α − 1 (algorithms.md §4):

    L(α) = max over ordered row pairs (q, d), q ≠ d,
           max over J ⊆ states of log[(1 + y q_J) / (1 + y d_J)]

Geometry used here: every subset J is a point (d_J, q_J) in the unit square and its value is
log of the slope from (−1/y, −1/y) to that point, so the maximum is attained at a vertex of the
upper convex hull of all points. Per pair, the upper boundary of its subset points is the chain
of prefixes of the indices sorted by q_j/d_j descending (Cao et al.'s prefix property). The
union over all pairs is reduced, once per matrix, to the upper hull truncated at slope 1
(:class:`EnvelopeLoss`, built in a numba kernel that discards most pairs with an O(n) test
before sorting). Then L(α) is one binary search over a few dozen hull vertices.

Candidates dropped by the hull are exactly those that can never be the maximiser for any α > 0,
so the result is exact up to floating-point rounding (relative 1e-14 tolerance in the
geometric tests). :func:`loss_increment_fixed_point` is the straightforward per-α algorithm
(Dinkelbach fixed point per pair), kept as an independent slow reference.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numba as nb
import numpy as np

from .._deprecation import renamed
from ..errors import ParameterError
from .matrices import check_transition_matrix

__all__ = [
    "EnvelopeCache", "EnvelopeLoss", "envelope", "loss_increment", "loss_increment_fixed_point",
]

_REL_TOL = 1e-14  # relative slack when testing whether a point lies above the current hull
_THREADS = max(1, min(4, os.cpu_count() or 1))  # threads for the once-per-matrix hull
_LARGE_ALPHA = 1.0  # above this, L is evaluated in the e^{-α} form (no overflow)


# --------------------------------------------------------------------------------------------
# Hull construction (numba)
# --------------------------------------------------------------------------------------------
@nb.njit(cache=True)
def _segment(hd, h, x):
    """Index lo of the hull segment with hd[lo] <= x < hd[lo + 1] (needs x < hd[h − 1])."""
    lo = 0
    hi = h - 1  # invariant hd[lo] <= x < hd[hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if hd[mid] <= x:
            lo = mid
        else:
            hi = mid
    return lo


@nb.njit(cache=True)
def _boundary(hd, hq, h, x):
    """Height of the relevant region's boundary at abscissa x ≥ 0 (hull, then slope-1 ray)."""
    if x >= hd[h - 1]:
        return hq[h - 1] + (x - hd[h - 1])
    lo = _segment(hd, h, x)
    return hq[lo] + (hq[lo + 1] - hq[lo]) * (x - hd[lo]) / (hd[lo + 1] - hd[lo])


@nb.njit(cache=True)
def _above(hd, hq, h, x, y):
    b = _boundary(hd, hq, h, x)
    return y > b + _REL_TOL * (abs(b) + 1e-300)


@nb.njit(cache=True)
def _merge_hull(hd, hq, h, pd, pq, m):
    """Upper hull of the h hull vertices and m new points (both sorted by d ascending),
    truncated at the first edge of slope ≤ 1. Returns new (hd, hq, h)."""
    tot = h + m
    md = np.empty(tot)
    mq = np.empty(tot)
    i = 0
    j = 0
    k = 0
    while i < h or j < m:
        take_hull = j >= m or (i < h and (hd[i] < pd[j] or (hd[i] == pd[j] and hq[i] >= pq[j])))
        if take_hull:
            md[k] = hd[i]
            mq[k] = hq[i]
            i += 1
        else:
            md[k] = pd[j]
            mq[k] = pq[j]
            j += 1
        k += 1
    od = np.empty(tot)
    oq = np.empty(tot)
    c = 0
    for k in range(tot):
        x = md[k]
        y = mq[k]
        if c > 0 and x == od[c - 1]:
            continue  # same abscissa, lower (sorted q descending within equal d)
        while c >= 2:
            cross = ((od[c - 1] - od[c - 2]) * (y - oq[c - 2])
                     - (oq[c - 1] - oq[c - 2]) * (x - od[c - 2]))
            if cross >= 0.0:
                c -= 1
            else:
                break
        od[c] = x
        oq[c] = y
        c += 1
    # truncate at the first edge with slope <= 1 (such vertices never maximise the ratio)
    keep = 1
    while keep < c and (oq[keep] - oq[keep - 1]) > (od[keep] - od[keep - 1]):
        keep += 1
    return od[:keep].copy(), oq[:keep].copy(), keep


@nb.njit(cache=True)
def _sift_down(key, val, size, i):
    """Restore the max-heap property of key[:size] (val moved alongside) below position i."""
    while True:
        left = 2 * i + 1
        if left >= size:
            return
        big = left
        if left + 1 < size and key[left + 1] > key[left]:
            big = left + 1
        if key[big] <= key[i]:
            return
        key[i], key[big] = key[big], key[i]
        val[i], val[big] = val[big], val[i]
        i = big


@nb.njit(cache=True)
def _heapify(key, val, size):
    for i in range(size // 2 - 1, -1, -1):
        _sift_down(key, val, size, i)


# Support lines tried per pair before falling back to the exact (sorted) chain. Hulls whose
# vertices span many orders of magnitude in d (sparse rows, e.g. Dirichlet(0.05)) need a few dozen
# lines to certify a pair; each costs one SIMD pass over the pair's entries, far less than the
# heap-sorted chain walk (8 lines left nearly every such pair to the walk: 30 s at n = 1,000).
_MAX_LINES = 32


@nb.njit(cache=True)
def _hull_slope(hd, hq, h, x):
    """Slope of the region's boundary at abscissa x (1 on the final ray)."""
    if x >= hd[h - 1]:
        return 1.0
    lo = _segment(hd, h, x)
    return (hq[lo + 1] - hq[lo]) / (hd[lo + 1] - hd[lo])


@nb.njit(cache=True, fastmath=True)
def _line_height(vq, vd, m, lam):
    """Σ_t (vq_t − λ vd_t)_+ (reordered freely: SIMD; rounding is far below the hull tolerance)."""
    s = 0.0
    for t in range(m):
        s += max(vq[t] - lam * vd[t], 0.0)
    return s


@nb.njit(cache=True)
def _excluded(hd, hq, h, vq, vd, m, q0, tv, rmax, lam, hv):
    """True if support lines prove that no prefix point of the pair lies above the region.

    ``vq[:m]``, ``vd[:m]`` are the pair's entries with q_j > d_j > 0 (contiguous, so each new
    line H(λ) = q0 + Σ (q_j − λ d_j)_+ is a short vectorisable loop)."""
    lam[0] = rmax
    hv[0] = q0
    lam[1] = 1.0
    hv[1] = tv
    k = 2  # lines sorted by λ descending; consecutive intersections bound the chain from above
    i = 0  # intersections before i are verified (adding a line after them leaves them as they are)
    while i < k - 1:
        x = (hv[i + 1] - hv[i]) / (lam[i] - lam[i + 1])
        if x < 0.0:
            x = 0.0
        if not _above(hd, hq, h, x, min(hv[i] + lam[i] * x, hv[i + 1] + lam[i + 1] * x)):
            i += 1
            continue
        if k == _MAX_LINES:
            return False
        lnew = _hull_slope(hd, hq, h, x)
        if not (lam[i + 1] < lnew < lam[i]):
            lnew = np.sqrt(lam[i] * lam[i + 1])
            if not (lam[i + 1] < lnew < lam[i]):
                return False
        hnew = q0 + _line_height(vq, vd, m, lnew)
        for u in range(k, i + 1, -1):
            lam[u] = lam[u - 1]
            hv[u] = hv[u - 1]
        lam[i + 1] = lnew
        hv[i + 1] = hnew
        k += 1
    return True


@nb.njit(cache=True, nogil=True)
def _build_hull(P, rows):
    """Upper hull vertices (d, q), d ascending, of every prefix point of the ordered row pairs
    (a, b), a in ``rows``, b any other row. Releases the GIL (run row subsets in threads)."""
    n = P.shape[0]
    hd = np.zeros(1)
    hq = np.zeros(1)
    # h, m and the heap's root index are int64 from the start: a plain 1 or 0 is typed
    # Literal[int] while numba infers the loop, and every helper it reaches (_above, _excluded,
    # _sift_down, …) was compiled once more for that literal (11 extra specialisations on a cold
    # cache). Same values, same code paths.
    h = np.int64(1)
    idx = np.empty(n, dtype=np.int64)
    ratio = np.empty(n)
    vq = np.empty(n)
    vd = np.empty(n)
    cd = np.empty(n + 1)
    cq = np.empty(n + 1)
    lam = np.empty(_MAX_LINES)
    hv = np.empty(_MAX_LINES)
    tries = 0  # the line test pays off only if it often succeeds: sample it when it does not
    wins = 0
    for a in rows:
        for b in range(n):
            if a == b:
                continue
            q0 = 0.0
            tv = 0.0
            rmax = 0.0
            m = np.int64(0)
            for j in range(n):
                qj = P[a, j]
                dj = P[b, j]
                if qj > dj:
                    tv += qj - dj
                    if dj == 0.0:
                        q0 += qj
                    else:
                        r = qj / dj
                        if r > rmax:
                            rmax = r
                        idx[m] = j
                        ratio[m] = r
                        vq[m] = qj
                        vd[m] = dj
                        m += 1
            if tv <= 0.0:
                continue
            # Cheap exclusion: the pair's concave chain lies below every support line
            # q = H(λ) + λ d with H(λ) = Σ_j (q_j − λ d_j)_+; start with λ = rmax (H = q0) and
            # λ = 1 (H = tv), then add lines at the hull's slope where a corner pokes out.
            if _above(hd, hq, h, 0.0, q0):
                pass
            elif m == 0:
                continue
            elif rmax > 1.0 and np.isfinite(rmax) and (
                    tries < 256 or 8 * wins >= tries or (a + b) % 16 == 0):
                tries += 1
                if _excluded(hd, hq, h, vq, vd, m, q0, tv, rmax, lam, hv):
                    wins += 1
                    continue
            # exact chain: prefixes in ratio-descending order (equal ratios collapsed), popped
            # from a max-heap; stop once the rest of the chain provably stays inside the region
            _heapify(ratio, idx, m)
            c = 0
            if q0 > 0.0 and _above(hd, hq, h, 0.0, q0):
                cd[c] = 0.0
                cq[c] = q0
                c += 1
            sd = 0.0
            sq = q0
            rest_d = 0.0
            rest_q = 0.0
            for t in range(m):
                rest_d += P[b, idx[t]]
                rest_q += P[a, idx[t]]
            size = m
            while size > 0:
                r = ratio[0]
                j = idx[0]
                size -= 1
                ratio[0] = ratio[size]
                idx[0] = idx[size]
                _sift_down(ratio, idx, size, np.int64(0))
                sd += P[b, j]
                sq += P[a, j]
                rest_d -= P[b, j]
                rest_q -= P[a, j]
                if size > 0 and ratio[0] == r:
                    continue
                inside = not _above(hd, hq, h, sd, sq)
                if not inside:
                    cd[c] = sd
                    cq[c] = sq
                    c += 1
                elif size > 0:
                    rn = ratio[0]
                    if rn > 1.0 and np.isfinite(rn):
                        x = max(rest_q - rest_d, 0.0) / (rn - 1.0)
                        if not _above(hd, hq, h, sd + x, sq + rn * x):
                            break
            if c > 0:
                hd, hq, h = _merge_hull(hd, hq, h, cd, cq, c)
    return hd, hq


# --------------------------------------------------------------------------------------------
# Evaluation (numba)
# --------------------------------------------------------------------------------------------
@nb.njit(cache=True)
def _better(hd, hq, k, alpha, y, e):
    """True iff hull vertex k+1 gives a strictly larger ratio than vertex k at α."""
    d1 = hd[k + 1]
    q1 = hq[k + 1]
    d0 = hd[k]
    q0 = hq[k]
    lin = (q1 - q0) - (d1 - d0)
    quad = q1 * d0 - q0 * d1
    if alpha <= _LARGE_ALPHA:
        return lin + y * quad > 0.0
    return lin * e + (1.0 - e) * quad > 0.0


@nb.njit(cache=True)
def _eval_one(hd, hq, alpha):
    if not alpha > 0.0:
        return 0.0
    h = hd.size
    y = np.expm1(alpha) if alpha <= _LARGE_ALPHA else 0.0
    e = np.exp(-alpha)
    lo = 0
    hi = h - 1  # argmax in [lo, hi]; predicate "k+1 better than k" is true...true, false...false
    while lo < hi:
        mid = (lo + hi) // 2
        if _better(hd, hq, mid, alpha, y, e):
            lo = mid + 1
        else:
            hi = mid
    q = hq[lo]
    d = hd[lo]
    if alpha <= _LARGE_ALPHA:
        val = np.log1p(y * q) - np.log1p(y * d)
    elif d == 0.0:
        val = alpha + np.log(q + (1.0 - q) * e)
    else:
        val = np.log(q + (1.0 - q) * e) - np.log(d + (1.0 - d) * e)
    if val < 0.0:
        return 0.0
    if val > alpha:
        return alpha
    return val


@nb.njit(cache=True)
def _eval_many(hd, hq, alpha):
    out = np.empty(alpha.size)
    for i in range(alpha.size):
        out[i] = _eval_one(hd, hq, alpha[i])
    return out


@nb.njit(cache=True)
def _backward_recursion(hd, hq, eps):
    """BPL_1 = ε_1, BPL_t = L(BPL_{t−1}) + ε_t."""
    T = eps.size
    out = np.empty(T)
    if T == 0:
        return out
    out[0] = eps[0]
    for t in range(1, T):
        out[t] = _eval_one(hd, hq, out[t - 1]) + eps[t]
    return out


@nb.njit(cache=True)
def _backward_recursion_rows(hd, hq, eps):
    """The recursion of :func:`_backward_recursion` on every row of a 2-D ``eps``."""
    out = np.empty_like(eps)
    for r in range(eps.shape[0]):
        row = _backward_recursion(hd, hq, eps[r])
        # Element by element, not `out[r] = row`: copying an array into a slice makes numba
        # compile its shape-mismatch message (string formatting), ~2.5 CPU-s per process on
        # an empty cache. Same values.
        for t in range(row.size):
            out[r, t] = row[t]
    return out


def _parallel_hull(P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """_build_hull over interleaved row subsets in threads (n ≥ 64), hulls merged at the end."""
    n = P.shape[0]
    workers = min(_THREADS, max(1, n // 64))
    rows = np.arange(n, dtype=np.int64)
    if workers == 1:
        return _build_hull(P, rows)
    with ThreadPoolExecutor(workers) as pool:
        parts = list(pool.map(lambda k: _build_hull(P, rows[k::workers].copy()), range(workers)))
    d, q = parts[0]
    for d2, q2 in parts[1:]:
        d, q, _ = _merge_hull(d, q, d.size, d2, q2, d2.size)
    return d, q


# --------------------------------------------------------------------------------------------
# Public objects
# --------------------------------------------------------------------------------------------
def _alpha_array(alpha: Any) -> tuple[np.ndarray, bool]:
    arr = np.asarray(alpha, dtype=np.float64)
    scalar = arr.ndim == 0
    arr = np.atleast_1d(arr).ravel()
    if np.any(np.isnan(arr)) or np.any(arr < 0):
        raise ParameterError("alpha must be >= 0 and not NaN")
    return arr, scalar


class EnvelopeLoss:
    """L(α) of one transition matrix, precomputed once (about O(n³) in the worst case).

    Callable on a scalar or an array of α ≥ 0 (returns the same shape); each evaluation is a
    binary search over :attr:`n_candidates` hull vertices. Immutable; safe to cache and share.
    Guarantees 0 ≤ L(α) ≤ α, L non-decreasing and 1-Lipschitz; L(+inf) = +inf unless all rows
    are equal.
    """

    __slots__ = ("_d", "_n", "_q")

    def __init__(self, P: Any, *, name: str = "P"):
        P = np.ascontiguousarray(check_transition_matrix(P, name))
        d, q = _parallel_hull(P)
        self._d = d
        self._q = q
        self._n = P.shape[0]
        self._d.setflags(write=False)
        self._q.setflags(write=False)

    @property
    def n_states(self) -> int:
        """Number of states of the matrix."""
        return self._n

    @property
    def n_candidates(self) -> int:
        """Number of surviving (d_J, q_J) hull vertices."""
        return int(self._d.size)

    @property
    def candidates(self) -> tuple[np.ndarray, np.ndarray]:
        """Hull vertices as read-only arrays (d_J, q_J), d ascending."""
        return self._d, self._q

    def __call__(self, alpha: Any) -> Any:
        arr, scalar = _alpha_array(alpha)
        out = _eval_many(self._d, self._q, arr)
        return float(out[0]) if scalar else out.reshape(np.shape(alpha))

    @renamed(eps="budget")
    def backward(self, budget: np.ndarray) -> np.ndarray:
        """BPL_t for budgets ``budget`` (validated float array ≥ 0, time on the last axis: 1-D, or
        2-D with one row per person) with this matrix as P^B."""
        e = np.ascontiguousarray(budget, dtype=np.float64)
        if e.ndim == 2:
            return _backward_recursion_rows(self._d, self._q, e)
        return _backward_recursion(self._d, self._q, e)

    @renamed(eps="budget")
    def forward(self, budget: np.ndarray) -> np.ndarray:
        """FPL_t for budgets ``budget`` (as in :meth:`backward`) with this matrix as P^F."""
        # FPL_T = ε_T, FPL_t = L(FPL_{t+1}) + ε_t: the backward recursion on the reversed budgets
        rev = np.asarray(budget, dtype=np.float64)[..., ::-1]
        return self.backward(rev)[..., ::-1]

    def __repr__(self) -> str:
        return f"EnvelopeLoss(n_states={self._n}, n_candidates={self.n_candidates})"


class EnvelopeCache:
    """An explicit, per-caller memo of :class:`EnvelopeLoss` objects, safe to share between threads.

    The library keeps no process-wide cache (a matrix estimated from one person's trajectory
    must not outlive that person's session): a caller that recomputes losses for the same
    matrix holds one of these (e.g. one per dashboard session) and passes it as ``cache=``.
    Keys are a hash of the validated matrix's bytes; at most ``size`` entries are kept (least
    recently used evicted). Every read and write happens under one lock.
    """

    def __init__(self, size: int = 4):
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ParameterError(f"cache size must be an integer >= 1, got {size!r}")
        self._size = size
        self._items: OrderedDict[tuple, EnvelopeLoss] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._items.clear()

    def get(self, M: np.ndarray, name: str = "P") -> EnvelopeLoss:
        """The envelope of the validated matrix ``M``, built outside the lock on a miss."""
        key = (M.shape, hashlib.blake2b(M.tobytes(), digest_size=16).digest())
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
                return hit
        env = EnvelopeLoss(M, name=name)  # two threads may both build it: same result, no harm
        with self._lock:
            self._items[key] = env
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return env


def envelope(P: Any, *, name: str = "P", cache: EnvelopeCache | None = None) -> EnvelopeLoss:
    """The :class:`EnvelopeLoss` of ``P`` (returned as is if already one).

    Built afresh on every call unless ``cache`` (an :class:`EnvelopeCache` owned by the caller)
    is given; there is no hidden module-level cache.
    """
    if isinstance(P, EnvelopeLoss):
        return P
    M = check_transition_matrix(P, name)
    if cache is None:
        return EnvelopeLoss(M, name=name)
    return cache.get(M, name)


def loss_increment(P: Any, alpha: Any) -> Any:
    """Cao et al.'s loss increment L(α) of a row-stochastic matrix (or an :class:`EnvelopeLoss`).

    Exact maximum over all ordered row pairs and all subsets J; ``alpha`` is a scalar or an array
    of previous losses ≥ 0 (nats); returns a float or an array of the same shape.
    """
    return envelope(P)(alpha)


def loss_increment_fixed_point(P: Any, alpha: Any, block: int = 64) -> Any:
    """Reference L(α): per ordered pair, Cao et al.'s fixed point (Dinkelbach), recomputed per α.

    J = {j : q_j > v·d_j}, v = (1 + y q_J)/(1 + y d_J), iterated until J is stable, value log v.
    O(n³) work per α (rows processed ``block`` at a time to bound memory); slow, for tests and
    benchmarks only.
    """
    M = check_transition_matrix(P)
    arr, scalar = _alpha_array(alpha)
    n = M.shape[0]
    out = np.zeros(arr.size)
    for i, a in enumerate(arr):
        if a == 0:
            continue
        y = np.expm1(a)
        best = 0.0
        for a0 in range(0, n, block):
            q = M[a0 : a0 + block, None, :]  # (B, 1, n)
            d = M[None, :, :]  # (1, n, n)
            J = q > d
            qJ = np.where(J, q, 0.0).sum(-1)
            dJ = np.where(J, d, 0.0).sum(-1)
            v = (1.0 + y * qJ) / (1.0 + y * dJ)
            for _ in range(n + 1):  # Dinkelbach: v strictly increases until optimal
                J_new = q > v[..., None] * d
                qn = np.where(J_new, q, 0.0).sum(-1)
                dn = np.where(J_new, d, 0.0).sum(-1)
                vn = (1.0 + y * qn) / (1.0 + y * dn)
                up = vn > v  # rounding can make J cycle at large α: stop when v stalls
                if not up.any():
                    break
                qJ = np.where(up, qn, qJ)
                dJ = np.where(up, dn, dJ)
                v = np.where(up, vn, v)
            val = np.log1p(y * qJ) - np.log1p(y * dJ)
            best = max(best, float(val.max()))
        out[i] = min(best, a)
    return float(out[0]) if scalar else out.reshape(np.shape(alpha))


