"""The exact samplers' draws are pinned: the same variates from the same bit stream, and the
same number of bits read (issue 26 rewrote the kernels for speed with identical output).

The digests were computed with the kernels of a3562ea (one bit at a time through ``st``)
before the rewrite; every keyed or seeded release (a recomputed Dask partition redraws the
same keyed noise) depends on them staying identical. Each case reads across refills of the
word buffer (8192 words) and mixes per-element t and s.
"""

from __future__ import annotations

import hashlib

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmdk_core.noise import RandomSource
from lmdk_core.noise.apply import read_only
from lmdk_core.noise.discrete import (
    BitStream,
    _dlap_fill,
    bern_exp,
    bern_exp_array,
    discrete_laplace,
    discrete_laplace_array,
)


class Counting(RandomSource):
    """A source counting its refills, so the bits read are pinned too."""

    __slots__ = ("fills",)

    def fill(self, out):
        self.fills += 1
        super().fill(out)


def counting(kind: str) -> Counting:
    base = RandomSource.keyed(b"k" * 32, b"id") if kind == "keyed" else RandomSource.seeded(7)
    src = Counting(cipher=base._cipher, generator=base._gen)
    src.fills = 0
    return src


@numba.njit
def _one_by_one(buf, st, fn, t, s, out):
    """The per-call entry point (schemes and exact.py use it), element by element."""
    for i in range(out.size):
        out[i] = discrete_laplace(buf, st, fn, t[i], s[i])


@numba.njit
def _bern_one_by_one(buf, st, fn, n, m, out):
    for i in range(out.size):
        out[i] = bern_exp(buf, st, fn, n[i], m)


def ts_case(name: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    r = np.random.default_rng(len(name))
    if name == "population":
        return np.full(n, 2**21), np.full(n, 2**20)
    if name == "population-strong":
        return np.full(n, 2**21), np.full(n, 3 * 2**17 + 5)
    if name == "small":
        return np.full(n, 3), np.full(n, 1)
    if name == "scale-one":
        return np.full(n, 1), np.full(n, 1)
    if name == "huge":
        return np.full(n, 2**40 + 3), np.full(n, 1)
    # mixed: per-element t (powers of two and not) and s
    t = r.choice(np.array([1, 2, 3, 7, 64, 1500, 2**20, 2**21, 2**21 + 1, 2**33]), n)
    s = r.choice(np.array([1, 2, 5, 2**10, 2**20, 2**21 + 7]), n)
    return t.astype(np.int64), s.astype(np.int64)


PINNED = {  # case: (keyed digest, seeded digest)
    "population": ("2e075ec40c8dce4b20aa49a8", "450c750f5997f42b42492c21"),
    "population-strong": ("dea3e13775f227946ad68663", "6bcc5b8b89bd62327ad660e5"),
    "small": ("c26c2367bfa000530ead8c0a", "714aa163ebeab6f9a436e585"),
    "scale-one": ("4ef0cd58c45dbd62afae21e7", "f92863ecb9b1d900efe04392"),
    "huge": ("7c9e80e6e0113a143225e43e", "52b4d10b93965a27f758fc57"),
    "mixed": ("54d9426e7d8aaa173e926641", "eeb138ab021662b42a061e9f"),
}
PINNED_ARRAY, PINNED_BERN_EXP = "6c7073704ee4d7949394d06f", "ab6393d1e60b74f71c6ab6a9"

CASES = [(c, k) for c in ("population", "population-strong", "small", "scale-one", "huge",
                          "mixed") for k in ("keyed", "seeded")]


def scales(x) -> np.ndarray:
    """``x`` as int64 scales for ``_dlap_fill``, typed as the library passes them: a read-only
    view that is not contiguous (a scalar scale is a stride-0 view, lmdk_core.noise.discrete.
    _per_draw), so these tests load the kernel the suite's warm-up compiled instead of compiling
    another signature (~9 CPU-s on an empty cache). Same values."""
    return read_only(np.repeat(np.asarray(x, dtype=np.int64), 2)[::2])


def digest(name: str, kind: str, kernel) -> str:
    t, s = ts_case(name, 100_000 if name in ("small", "scale-one") else 20_000)
    out = np.empty(t.size, dtype=np.int64)
    src = counting(kind)
    with BitStream(src) as (buf, st, fn):
        kernel(buf, st, fn, scales(t), scales(s), out)
        used = (src.fills, int(st[0]))
    assert src.fills >= 2  # the draws read across a refill of the buffer
    return hashlib.sha256(out.tobytes() + repr(used).encode()).hexdigest()[:24]


@pytest.mark.parametrize(("name", "kind"), CASES)
def test_discrete_laplace_draws_are_pinned(name, kind):
    """Same variates and same bits read, through the array kernel and the per-call one."""
    got = digest(name, kind, _dlap_fill)
    assert got == PINNED[name][("keyed", "seeded").index(kind)]
    assert digest(name, kind, _one_by_one) == got


def test_array_entry_point_and_bern_exp_are_pinned():
    z = discrete_laplace_array(2**21, 2**20, 30_000, RandomSource.keyed(b"k" * 32, b"arr"))
    assert hashlib.sha256(z.tobytes()).hexdigest()[:24] == PINNED_ARRAY
    n = np.arange(30_000, dtype=np.int64) % 4099
    b = bern_exp_array(n, 1024, RandomSource.keyed(b"k" * 32, b"bern"))
    assert hashlib.sha256(b.tobytes()).hexdigest()[:24] == PINNED_BERN_EXP
    out = np.empty(n.size, dtype=np.bool_)
    with BitStream(RandomSource.keyed(b"k" * 32, b"bern")) as (buf, st, fn):
        _bern_one_by_one(buf, st, fn, n, 1024, out)
    np.testing.assert_array_equal(out, b)


def test_a_changed_sampler_changes_the_digest():
    """The digest sees a one-unit change of scale (a test that could not fail would not)."""
    t, s = ts_case("population", 20_000)
    out = np.empty(t.size, dtype=np.int64)
    with BitStream(counting("keyed")) as (buf, st, fn):
        _dlap_fill(buf, st, fn, scales(t + 1), scales(s), out)
    assert hashlib.sha256(out.tobytes()).hexdigest() != hashlib.sha256(
        discrete_laplace_array(2**21, 2**20, 20_000, counting("keyed")).tobytes()).hexdigest()


# ----------------------------------------------------------------------------- a reference
class Bits:
    """The stream read one bit at a time from Python integers (bit i of word j = bit 64·j + i)."""

    def __init__(self, words: np.ndarray):
        self.x, self.pos = int.from_bytes(words.tobytes(), "little"), 0

    def bit(self) -> int:
        b = (self.x >> self.pos) & 1
        self.pos += 1
        return b


def ref_bern_frac(r: Bits, n: int, m: int) -> bool:
    if n >= m:
        return True
    if n <= 0:
        return False
    while True:
        n *= 2
        pbit = int(n >= m)
        n -= m * pbit
        b = r.bit()
        if b != pbit:
            return b < pbit
        if n == 0:
            return False


def ref_bern_exp_le1(r: Bits, n: int, m: int) -> bool:
    k = 1
    while ref_bern_frac(r, n, m) and ref_bern_frac(r, 1, k):
        k += 1
    return k % 2 == 1


def ref_discrete_laplace(r: Bits, t: int, s: int) -> int:
    """CKS Algorithm 2 exactly as written, one bit at a time, in Python integers."""
    k = (t - 1).bit_length()
    while True:
        u = t
        while u >= t:
            u = sum(r.bit() << i for i in range(k))
        n, ok = u, True
        while n > t:
            if not ref_bern_exp_le1(r, 1, 1):
                ok = False
                break
            n -= t
        if not ok or not ref_bern_exp_le1(r, n, t):
            continue
        v = 0
        while ref_bern_exp_le1(r, 1, 1):
            v += 1
        y = (u + t * v) // s
        b = r.bit()
        if b == 1 and y == 0:
            continue
        return -y if b == 1 else y


@settings(max_examples=40, deadline=None)
@given(t=st.one_of(st.integers(1, 2**40), st.integers(0, 40).map(lambda j: 2**j)),
       s=st.one_of(st.integers(1, 2**22), st.integers(0, 22).map(lambda j: 2**j)),
       seed=st.integers(0, 2**32))
def test_kernel_matches_a_bit_by_bit_reference(t, s, seed):
    """The numba kernel (register position, word-at-a-time coins against 2^k, the geometric
    table) gives the values, and reads the bits, of CKS Algorithm 2 run one bit at a time."""
    out = np.empty(8, dtype=np.int64)
    with BitStream(RandomSource.seeded(seed)) as (buf, st_, fn):
        _dlap_fill(buf, st_, fn, scales(np.full(8, t)), scales(np.full(8, s)), out)
        used, words = int(st_[0]), buf.copy()
    r = Bits(words)
    assert [ref_discrete_laplace(r, t, s) for _ in range(8)] == out.tolist()
    assert r.pos == used


def test_the_reference_sees_a_one_bit_shift():
    """Reading the stream one bit late gives other values (the comparison can fail)."""
    with BitStream(RandomSource.seeded(3)) as (buf, st_, fn):
        out = np.empty(8, dtype=np.int64)
        _dlap_fill(buf, st_, fn, scales(np.full(8, 2**21)), scales(np.full(8, 2**20)), out)
        r = Bits(buf.copy())
    r.pos = 1
    assert [ref_discrete_laplace(r, 2**21, 2**20) for _ in range(8)] != out.tolist()
