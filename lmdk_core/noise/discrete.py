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
from numba.cpython.unsafe.numbers import leading_zeros

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


# The refill check is written out in each reader: moving it into a helper taking the callback
# measured ~30x slower (numba does not inline the call through the function-pointer argument).
@numba.njit(cache=True)
def random_bit(buf, st, fn):
    """One uniform bit (0 or 1)."""
    if st[0] >= buf.size * 64:
        fn(buf.ctypes.data, buf.size, st[1])
        st[0] = 0
    pos = st[0]
    st[0] = pos + 1
    return np.int64((buf[pos >> 6] >> np.uint64(pos & 63)) & np.uint64(1))


@numba.njit(cache=True)
def random_bits(buf, st, fn, k):
    """``k`` uniform bits (1 ≤ k ≤ 62) as a non-negative int64."""
    if st[0] >= buf.size * 64:
        fn(buf.ctypes.data, buf.size, st[1])
        st[0] = 0
    pos = st[0]
    off = pos & 63
    avail = 64 - off
    word = buf[pos >> 6] >> np.uint64(off)
    if avail >= k:
        st[0] = pos + k
        return np.int64(word & ((np.uint64(1) << np.uint64(k)) - np.uint64(1)))
    need = k - avail  # the rest of this word, then the low bits of the next one
    pos += avail
    if pos >= buf.size * 64:
        fn(buf.ctypes.data, buf.size, st[1])
        pos = 0
    nxt = buf[pos >> 6] & ((np.uint64(1) << np.uint64(need)) - np.uint64(1))
    st[0] = pos + need
    return np.int64(word | (nxt << np.uint64(avail)))


@numba.njit(cache=True)
def uniform_below(buf, st, fn, m):
    """Uniform integer in {0, …, m−1} for 1 ≤ m ≤ 2^62 (rejection from the next power of two)."""
    if m <= 1:
        return np.int64(0)
    k = 64 - leading_zeros(np.uint64(m - 1))  # bits of m − 1 (one instruction, no loop)
    while True:
        u = random_bits(buf, st, fn, k)
        if u < m:
            return u


@numba.njit(cache=True)
def bern_frac(buf, st, fn, n, m):
    """Bernoulli(n/m), integers 0 ≤ n and 1 ≤ m ≤ 2^62: True with probability exactly n/m.

    Lazily compares U = 0.b₁b₂… (uniform bits) with the binary expansion of n/m.
    """
    if n >= m:
        return True
    if n <= 0:
        return False
    while True:
        n *= 2
        pbit = 1 if n >= m else 0
        if pbit:
            n -= m
        b = random_bit(buf, st, fn)
        if b != pbit:
            return b < pbit  # U < p iff at the first differing bit U has 0 and p has 1
        if n == 0:
            return False  # p's remaining bits are 0: U ≥ p (U = p has probability 0)


@numba.njit(cache=True)
def _bern_exp_le1(buf, st, fn, n, m):
    """Bernoulli(exp(−n/m)) for 0 ≤ n ≤ m (CKS Algorithm 1, γ ≤ 1)."""
    k = 1
    while True:
        # A ~ Bernoulli(γ/k) = Bernoulli(γ) AND Bernoulli(1/k) (independent): no overflow of m·k
        if not bern_frac(buf, st, fn, n, m):
            break
        if not bern_frac(buf, st, fn, 1, k):
            break
        k += 1
    return k % 2 == 1


@numba.njit(cache=True)
def bern_exp(buf, st, fn, n, m):
    """Bernoulli(exp(−n/m)) for integers n ≥ 0, m ≥ 1 (CKS Algorithm 1, any γ = n/m ≥ 0)."""
    while n > m:  # exp(−γ) = exp(−1)·exp(−(γ−1))
        if not _bern_exp_le1(buf, st, fn, 1, 1):
            return False
        n -= m
    return _bern_exp_le1(buf, st, fn, n, m)


@numba.njit(cache=True)
def discrete_laplace(buf, st, fn, t, s):
    """Z with P[Z = z] = (1 − e^{−s/t})/(1 + e^{−s/t})·e^{−|z|·s/t} (CKS Algorithm 2).

    ``t``, ``s`` positive integers (scale t/s), t ≤ 2^53.
    """
    while True:
        u = uniform_below(buf, st, fn, t)
        if not bern_exp(buf, st, fn, u, t):
            continue
        v = 0
        while _bern_exp_le1(buf, st, fn, 1, 1):
            v += 1
        y = (u + t * v) // s
        b = random_bit(buf, st, fn)
        if b == 1 and y == 0:
            continue
        return -y if b == 1 else y


@numba.njit(cache=True)
def _dlap_fill(buf, st, fn, t, s, out):
    for i in range(out.size):
        out[i] = discrete_laplace(buf, st, fn, t[i], s[i])


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
    # scalars broadcast as stride-0 views: no point-sized copies of t and s
    tt = np.broadcast_to(np.asarray(t, dtype=np.int64), (size,))
    ss = np.broadcast_to(np.asarray(s, dtype=np.int64), (size,))
    out = np.empty(size, dtype=np.int64)
    with BitStream(source) as (buf, st, fn):
        _dlap_fill(buf, st, fn, tt, ss, out)
    return out


@numba.njit(cache=True)
def _bern_exp_fill(buf, st, fn, n, m, out):
    for i in range(out.size):
        out[i] = bern_exp(buf, st, fn, n[i], m)


def bern_exp_array(n, m: int, source: RandomSource) -> np.ndarray:
    """Independent exact Bernoulli(exp(−n_i/m)) coins (bool array) for integers n_i ≥ 0, m ≥ 1."""
    nn = np.ascontiguousarray(np.asarray(n, dtype=np.int64).ravel())
    out = np.empty(nn.size, dtype=np.bool_)
    with BitStream(source) as (buf, st, fn):
        _bern_exp_fill(buf, st, fn, nn, int(m), out)
    return out.reshape(np.shape(n))


def discrete_laplace_pmf(z, t: int, s: int = 1) -> np.ndarray:
    """Closed-form mass function of :func:`discrete_laplace` (float; for tests and docs)."""
    a = s / t
    z = np.abs(np.asarray(z, dtype=np.float64))
    return np.tanh(a / 2.0) * np.exp(-a * z)
