"""Exact samplers on integers, in numba, reading uniform 64-bit words from a buffer.

Canonne, Kamath and Steinke (2020), "The Discrete Gaussian for Differential Privacy":

* :func:`bern_frac` — Bernoulli(n/m) for integers 0 ≤ n ≤ m: compares a uniform real, read one
  random bit at a time, with the binary expansion of n/m (exact; 2 bits on average);
* :func:`bern_exp` — Bernoulli(exp(−n/m)) (their Algorithm 1), integer arithmetic only;
* :func:`discrete_laplace` — P[Z = z] ∝ exp(−|z|·s/t) (their Algorithm 2), scale t/s.

Random bits come from a word buffer ``buf`` (uint64) and a state ``st`` (int64[2]: the next
bit position in the buffer, the source id). When the buffer runs out it is refilled *in place*
from the source through a ctypes callback ``fn`` and reading continues, so no sample is ever
truncated or restarted (restarting a rejection sampler would bias it). Bits are used frugally:
a Bernoulli costs ~2 bits, a uniform integer below t about log2(t) bits.

Vectorised entry points for Python: :func:`discrete_laplace_array` and :class:`BitStream`.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros

from .source import REFILL, RandomSource, registered

__all__ = [
    "BitStream",
    "bern_exp",
    "bern_frac",
    "discrete_laplace",
    "discrete_laplace_array",
    "discrete_laplace_pmf",
    "uniform_below",
]

BUFFER_WORDS = 1 << 13
"""Words per refill (64 KiB): refills are rare, and the objmode call cost is amortised."""


# The kernels keep the bit position in a local variable (a register) threaded through the
# readers below as ``(value, pos)``, inlined into one function by numba (``inline="always"``):
# reading st[0] from memory and storing it back at every bit chained each read on the previous
# store, and the callback argument stopped LLVM from inlining across calls. The refill check
# stays in each reader (a helper taking the callback measured ~30x slower). ``st`` is read once
# when a kernel starts and written once when it ends, so the bit stream, the refills and the
# bits read are exactly those of one-bit-at-a-time reads (tests/test_noise_identity.py).
# Each inlined copy costs compile time (a cold-cache discrete_laplace_array compiles in ~6.5
# CPU-s, 2.4 before), so each coin has one call site per kernel and the rare paths are calls.
# The exp(−γ) coin (:func:`_bern_exp`, the largest body) is a call too: it was inlined into
# five kernels: on an empty cache tests/numba_warmup.py compiled in 30.5 CPU-s, now 23.4
# (bench/bench_compile.py), for 0-3 % of the samplers' speed (bench/bench_noise.py, 2026-11-27).
_INLINE = {"cache": True, "inline": "always"}


@numba.njit(**_INLINE)
def _bit(buf, pos, fn, sid):
    """One uniform bit at position ``pos`` → (bit, next position)."""
    if pos >= buf.size * 64:
        fn(buf.ctypes.data, buf.size, sid)
        pos = 0
    return np.int64((buf[pos >> 6] >> np.uint64(pos & 63)) & np.uint64(1)), pos + 1


@numba.njit(**_INLINE)
def _bits(buf, pos, fn, sid, k):
    """``k`` uniform bits (1 ≤ k ≤ 62) as a non-negative int64 → (value, next position)."""
    if pos >= buf.size * 64:
        fn(buf.ctypes.data, buf.size, sid)
        pos = 0
    off = pos & 63
    avail = 64 - off
    word = buf[pos >> 6] >> np.uint64(off)
    if avail >= k:
        return np.int64(word & ((np.uint64(1) << np.uint64(k)) - np.uint64(1))), pos + k
    need = k - avail  # the rest of this word, then the low bits of the next one
    pos += avail
    if pos >= buf.size * 64:
        fn(buf.ctypes.data, buf.size, sid)
        pos = 0
    nxt = buf[pos >> 6] & ((np.uint64(1) << np.uint64(need)) - np.uint64(1))
    return np.int64(word | (nxt << np.uint64(avail))), pos + need


@numba.njit(**_INLINE)
def _uniform_below(buf, pos, fn, sid, m):
    if m <= 1:
        return np.int64(0), pos
    k = 64 - leading_zeros(np.uint64(m - 1))  # bits of m − 1 (one instruction, no loop)
    while True:
        u, pos = _bits(buf, pos, fn, sid, k)
        if u < m:
            return u, pos


@numba.njit(**_INLINE)
def _reverse_bits(x):
    """The 64 bits of uint64 ``x`` in reverse order (bit i → bit 63 − i), without branches."""
    x = ((x >> np.uint64(1)) & np.uint64(0x5555555555555555)) | (
        (x & np.uint64(0x5555555555555555)) << np.uint64(1))
    x = ((x >> np.uint64(2)) & np.uint64(0x3333333333333333)) | (
        (x & np.uint64(0x3333333333333333)) << np.uint64(2))
    x = ((x >> np.uint64(4)) & np.uint64(0x0F0F0F0F0F0F0F0F)) | (
        (x & np.uint64(0x0F0F0F0F0F0F0F0F)) << np.uint64(4))
    x = ((x >> np.uint64(8)) & np.uint64(0x00FF00FF00FF00FF)) | (
        (x & np.uint64(0x00FF00FF00FF00FF)) << np.uint64(8))
    x = ((x >> np.uint64(16)) & np.uint64(0x0000FFFF0000FFFF)) | (
        (x & np.uint64(0x0000FFFF0000FFFF)) << np.uint64(16))
    return (x >> np.uint64(32)) | (x << np.uint64(32))


@numba.njit(**_INLINE)
def _bern_pow2(buf, pos, fn, sid, n, m):
    """:func:`_bern_frac` for m = 2^k and 0 < n < m, a word at a time: the expansion of n/2^k
    is n's k bits from the top, so with them reversed into stream order (p_i at bit i − 1) the
    first differing bit is the lowest set bit of (stream word XOR p). It stops at the same bit
    as the bit-by-bit loop — the first difference, or p's last 1 bit (after it p is 0) — so it
    reads the same bits and gives the same coin, with one unpredictable branch per word instead
    of one per bit."""
    k = np.int64(63 - leading_zeros(np.uint64(m)))
    p = _reverse_bits(np.uint64(n)) >> np.uint64(64 - k)  # p_i at bit i − 1
    left = k - np.int64(trailing_zeros(np.uint64(n)))  # p_left is p's last 1 bit
    while True:
        if pos >= buf.size * 64:
            fn(buf.ctypes.data, buf.size, sid)
            pos = 0
        off = pos & 63
        avail = 64 - off
        lim = left if left < avail else avail
        x = (buf[pos >> 6] >> np.uint64(off)) ^ p
        if lim < 64:
            x &= (np.uint64(1) << np.uint64(lim)) - np.uint64(1)
        if x != 0:
            j = np.int64(trailing_zeros(x))
            return ((p >> np.uint64(j)) & np.uint64(1)) == 1, pos + j + 1  # U < p iff p has 1
        if left <= avail:
            return False, pos + left  # U and p agree up to p's last 1: U ≥ p
        pos += avail
        left -= avail
        p >>= np.uint64(avail)


@numba.njit(**_INLINE)
def _bern_frac(buf, pos, fn, sid, n, m):
    """Bernoulli(n/m) → (coin, next position): U = 0.b₁b₂… read bit by bit from the current
    word (held in a register) against the binary expansion of n/m."""
    if n >= m:
        return True, pos
    if n <= 0:
        return False, pos
    if m & (m - 1) == 0:
        return _bern_pow2(buf, pos, fn, sid, n, m)
    while True:
        if pos >= buf.size * 64:
            fn(buf.ctypes.data, buf.size, sid)
            pos = 0
        off = pos & 63
        word = buf[pos >> 6] >> np.uint64(off)
        for j in range(64 - off):
            n *= 2
            pbit = np.int64(1) if n >= m else np.int64(0)
            if pbit:
                n -= m
            b = np.int64((word >> np.uint64(j)) & np.uint64(1))
            if b != pbit:
                return b < pbit, pos + j + 1  # U < p iff at the first differing bit U has 0
            if n == 0:
                return False, pos + j + 1  # p's remaining bits are 0: U ≥ p
        pos += 64 - off


@numba.njit(**_INLINE)
def _bern_exp_le1(buf, pos, fn, sid, n, m):
    """Bernoulli(exp(−n/m)) for 0 ≤ n ≤ m (CKS Algorithm 1, γ ≤ 1) → (coin, next position)."""
    k = 1
    while True:
        # A ~ Bernoulli(γ/k) = Bernoulli(γ) AND Bernoulli(1/k) (independent): no overflow of m·k
        a, pos = _bern_frac(buf, pos, fn, sid, n, m)
        if not a:
            break
        a, pos = _bern_frac(buf, pos, fn, sid, 1, k)
        if not a:
            break
        k += 1
    return k % 2 == 1, pos


@numba.njit(cache=True)  # a call, not inlined: compiled once per process (see _INLINE)
def _bern_exp(buf, pos, fn, sid, n, m):
    """Bernoulli(exp(−n/m)) for n ≥ 0, m ≥ 1 → (coin, next position)."""
    while True:  # exp(−γ) = exp(−1)·exp(−(γ−1)): exp(−1) coins while γ > 1, then exp(−γ)
        last = n <= m
        a, pos = _bern_exp_le1(buf, pos, fn, sid, n if last else 1, m if last else 1)
        if last or not a:
            return a, pos
        n -= m


GEO_BITS = 12
"""Stream bits the geometric step of :func:`_dlap` looks up at once (a 2^12-entry table)."""


def _geometric_table(g: int) -> np.ndarray:
    """For every g-bit stream prefix (bit i = the i-th bit read): the geometric count v of
    :func:`_dlap` and the bits it reads, packed as ``v << 8 | bits``, or −1 when the loop
    would read past the g bits. Built by running that loop on the prefix — exp(−1) coins of
    CKS Algorithm 1, each a run of Bernoulli(1/k) coins read bit by bit as in bern_frac — so a
    hit reads exactly the bits, and gives exactly the v, of the loop itself."""
    out = np.full(1 << g, -1, dtype=np.int16)
    for x in range(1 << g):
        pos, v = 0, 0
        try:
            while True:
                k = 1
                while True:  # _bern_exp_le1(1, 1): Bernoulli(1) AND Bernoulli(1/k), k = 1, 2, …
                    n, m, coin = 1, k, None
                    if k == 1:
                        coin = True
                    while coin is None:
                        n *= 2
                        pbit = 1 if n >= m else 0
                        n -= m * pbit
                        if pos >= g:
                            raise IndexError
                        b = (x >> pos) & 1
                        pos += 1
                        if b != pbit:
                            coin = b < pbit
                        elif n == 0:
                            coin = False
                    if not coin:
                        break
                    k += 1
                if k % 2 == 0:  # the exp(−1) coin failed: v is complete
                    break
                v += 1
        except IndexError:
            continue
        out[x] = (v << 8) | pos
    return out


_GEO = _geometric_table(GEO_BITS)


@numba.njit(cache=True)
def _geometric(buf, pos, fn, sid):
    """v ~ Geometric(1 − e^{−1}) → (v, next position): exp(−1) coins until one fails (the
    path when the table does not resolve; a call, so the coins are compiled once)."""
    v = 0
    while True:
        a, pos = _bern_exp_le1(buf, pos, fn, sid, 1, 1)
        if not a:
            return v, pos
        v += 1


@numba.njit(**_INLINE)
def _dlap(buf, pos, fn, sid, t, s):
    """CKS Algorithm 2 → (Z, next position); see :func:`discrete_laplace`."""
    while True:
        u, pos = _uniform_below(buf, pos, fn, sid, t)
        a, pos = _bern_exp(buf, pos, fn, sid, u, t)
        if not a:
            continue
        # v ~ Geometric(1 − e^{−1}): count exp(−1) coins until one fails. Most runs end within
        # GEO_BITS bits: looked up from the current word when they are all in it (a refill
        # happens only when a bit is read, as in the loop), else read coin by coin.
        v = np.int64(-1)
        off = pos & 63
        if pos < buf.size * 64 and off <= 64 - GEO_BITS:
            e = np.int64(_GEO[(buf[pos >> 6] >> np.uint64(off)) & np.uint64(_GEO.size - 1)])
            if e >= 0:
                v = e >> 8
                pos += e & 255
        if v < 0:
            v, pos = _geometric(buf, pos, fn, sid)
        if s & (s - 1) == 0:  # s = 2^j (the population's): a shift, the same floor
            y = (u + t * v) >> np.int64(trailing_zeros(np.uint64(s)))
        else:
            y = (u + t * v) // s
        b, pos = _bit(buf, pos, fn, sid)
        if b == 1 and y == 0:
            continue
        return (-y if b == 1 else y), pos


# ------------------------------------------------------------ entry points on (buf, st, fn)
@numba.njit(cache=True)
def random_bit(buf, st, fn):
    """One uniform bit (0 or 1)."""
    b, st[0] = _bit(buf, st[0], fn, st[1])
    return b


@numba.njit(cache=True)
def random_bits(buf, st, fn, k):
    """``k`` uniform bits (1 ≤ k ≤ 62) as a non-negative int64."""
    u, st[0] = _bits(buf, st[0], fn, st[1], k)
    return u


@numba.njit(cache=True)
def uniform_below(buf, st, fn, m):
    """Uniform integer in {0, …, m−1} for 1 ≤ m ≤ 2^62 (rejection from the next power of two)."""
    u, st[0] = _uniform_below(buf, st[0], fn, st[1], m)
    return u


@numba.njit(cache=True)
def bern_frac(buf, st, fn, n, m):
    """Bernoulli(n/m), integers 0 ≤ n and 1 ≤ m ≤ 2^62: True with probability exactly n/m.

    Lazily compares U = 0.b₁b₂… (uniform bits) with the binary expansion of n/m.
    """
    a, st[0] = _bern_frac(buf, st[0], fn, st[1], n, m)
    return a


@numba.njit(cache=True)
def bern_exp(buf, st, fn, n, m):
    """Bernoulli(exp(−n/m)) for integers n ≥ 0, m ≥ 1 (CKS Algorithm 1, any γ = n/m ≥ 0)."""
    a, st[0] = _bern_exp(buf, st[0], fn, st[1], n, m)
    return a


@numba.njit(cache=True)
def discrete_laplace(buf, st, fn, t, s):
    """Z with P[Z = z] = (1 − e^{−s/t})/(1 + e^{−s/t})·e^{−|z|·s/t} (CKS Algorithm 2).

    ``t``, ``s`` positive integers (scale t/s), t ≤ 2^53.
    """
    z, st[0] = _dlap(buf, st[0], fn, st[1], t, s)
    return z


@numba.njit(cache=True)
def _dlap_fill(buf, st, fn, t, s, out):
    pos, sid = st[0], st[1]
    for i in range(out.size):
        out[i], pos = _dlap(buf, pos, fn, sid, t[i], s[i])
    st[0] = pos


def new_state(sid: int) -> tuple[np.ndarray, np.ndarray]:
    """An empty word buffer and a bit state for source id ``sid`` (first read refills)."""
    buf = np.empty(BUFFER_WORDS, dtype=np.uint64)
    st = np.array([BUFFER_WORDS * 64, sid], dtype=np.int64)
    return buf, st


class BitStream:
    """A source's words as a bit stream for the numba samplers (use as a context manager).

    ``with BitStream(source) as (buf, st, fn): kernel(buf, st, fn, …)`` — one stream per call;
    ``fn`` is the refill callback every sampler takes.
    """

    def __init__(self, source: RandomSource):
        self._reg = registered(source)

    def __enter__(self) -> tuple[np.ndarray, np.ndarray, object]:
        return (*new_state(self._reg.__enter__()), REFILL)

    def __exit__(self, *exc: object) -> None:
        self._reg.__exit__(*exc)


def discrete_laplace_array(t, s, size: int, source: RandomSource) -> np.ndarray:
    """``size`` independent discrete Laplace variates of scale t/s (int64 arrays or scalars)."""
    out = np.empty(size, dtype=np.int64)
    with BitStream(source) as (buf, st, fn):
        _dlap_fill(buf, st, fn, _per_draw(t, size), _per_draw(s, size), out)
    return out


def _per_draw(x, size: int) -> np.ndarray:
    """``x`` (int64) per draw for :func:`_dlap_fill`, which reads the first ``size``. A scalar
    is a stride-0 view (no point-sized copy) of at least two elements: numba types a one- or
    zero-element view as contiguous, another signature to compile (~5 CPU-s) for one draw."""
    a = np.asarray(x, dtype=np.int64)
    return np.broadcast_to(a, (max(size, 2) if a.ndim == 0 else size,))


@numba.njit(cache=True)
def _bern_exp_fill(buf, st, fn, n, m, out):
    pos, sid = st[0], st[1]
    for i in range(out.size):
        out[i], pos = _bern_exp(buf, pos, fn, sid, n[i], m)
    st[0] = pos


def bern_exp_array(n, m: int, source: RandomSource) -> np.ndarray:
    """Independent exact Bernoulli(exp(−n_i/m)) coins (bool array) for integers n_i ≥ 0, m ≥ 1."""
    nn = np.ascontiguousarray(np.asarray(n, dtype=np.int64).ravel())
    out = np.empty(nn.size, dtype=np.bool_)
    with BitStream(source) as (buf, st, fn):
        _bern_exp_fill(buf, st, fn, nn, int(m), out)
    return out.reshape(np.shape(n))


def discrete_laplace_pmf(z, t: float, s: float = 1) -> np.ndarray:
    """Closed-form mass function of :func:`discrete_laplace`, Pr[Z = z] = tanh(a/2)·exp(−a|z|)
    with a = s/t (float; for tests and docs; ``population.noise`` calls it with a = τ)."""
    a = s / t
    z = np.abs(np.asarray(z, dtype=np.float64))
    return np.tanh(a / 2.0) * np.exp(-a * z)
