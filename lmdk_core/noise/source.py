"""The random source of every release: one type, two kinds.

* :meth:`RandomSource.secure` — release grade. A ChaCha20 keystream (``cryptography``), keyed
  with 32 fresh bytes and a 16-byte nonce from :func:`os.urandom` when the source is created.
  ChaCha20 is a cryptographically strong stream cipher: its keystream is computationally
  indistinguishable from uniform bits, and every release gets its own key.
  ``bench/bench_noise.py`` prints the throughput of os.urandom and of this keystream, and the
  keystream's share of the exact sampler's time.
* :meth:`RandomSource.seeded` — a numpy ``Generator`` (PCG64 by default) for simulations and
  tests only: anyone who knows or guesses the seed can subtract the noise. NOT for publication.
* :meth:`RandomSource.keyed` — the same ChaCha20 keystream keyed by BLAKE2b(key ‖ label), for
  a release that must redraw the same coins (a recomputed Dask partition of a population
  release); the key comes from :func:`key_bytes` (fresh OS entropy for a real release).

This module is the package's one owner of randomness: no other module of ``lmdk_core`` calls
``np.random``, ``random``, ``secrets``, ``os.urandom`` or a cipher for a draw
(``tests/test_random_sources.py`` enforces it); they take ``rng=`` and hand it to
:func:`as_source` or :func:`as_rng`.

The exact samplers (:mod:`lmdk_core.noise.discrete`) read uniform 64-bit words through
:meth:`RandomSource.fill`; ``noise="fast"`` draws floating-point variates from
:attr:`RandomSource.generator` (for a secure source a numpy Generator seeded from the OS, so a
fast draw is fresh, but never floating-point safe).
"""

from __future__ import annotations

import ctypes
import hashlib
import itertools
import os
import secrets
import threading
from typing import Any

import numpy as np

from .._deprecation import renamed
from ..errors import ParameterError

__all__ = ["NOISE_MODES", "RandomSource", "as_rng", "as_source", "check_noise", "key_bytes",
           "new_id", "simulation_rng", "spawn_seeds"]

NOISE_MODES = ("safe", "fast")
"""``"safe"``: exact discrete samplers on data-independent grids (release grade, default).
``"fast"``: the same laws drawn in floating point from numpy — simulations only."""


def check_noise(noise: Any) -> str:
    """Return ``noise`` if it is ``"safe"`` or ``"fast"``, else ParameterError."""
    if not isinstance(noise, str) or noise not in NOISE_MODES:
        raise ParameterError(f"noise must be 'safe' or 'fast', got {noise!r}")
    return noise


class RandomSource:
    """Uniform 64-bit words (:meth:`fill`) and a numpy Generator (:attr:`generator`).

    Build one with :meth:`secure` (fresh OS entropy, release grade) or :meth:`seeded`
    (reproducible, simulations/tests only) or :func:`as_source`. ``is_secure`` says which.
    """

    __slots__ = ("_cipher", "_gen", "_zeros", "is_secure")

    def __init__(self, *, cipher: Any = None, generator: np.random.Generator | None = None):
        self._cipher = cipher
        self._gen = generator
        self._zeros = b""
        self.is_secure = cipher is not None

    @classmethod
    def secure(cls) -> RandomSource:
        """ChaCha20 keystream keyed with 32 bytes of os.urandom (fresh for every source)."""
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms

        cipher = Cipher(algorithms.ChaCha20(os.urandom(32), os.urandom(16)), mode=None)
        return cls(cipher=cipher.encryptor())

    @classmethod
    def keyed(cls, key: bytes, label: bytes) -> RandomSource:
        """ChaCha20 keystream keyed by BLAKE2b(``key`` ‖ 0 ‖ ``label``), zero nonce: the same
        (key, label) always gives the same words, distinct labels independent streams. Release
        grade iff ``key`` is (:func:`key_bytes` with rng=None: 32 bytes of os.urandom)."""
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms

        k = hashlib.blake2b(key + b"\x00" + label, digest_size=32).digest()
        return cls(cipher=Cipher(algorithms.ChaCha20(k, bytes(16)), mode=None).encryptor())

    @classmethod
    def seeded(cls, seed: Any) -> RandomSource:
        """Reproducible source from a seed, SeedSequence or Generator. Unsafe for publication."""
        return cls(generator=as_rng(seed))

    @property
    def generator(self) -> np.random.Generator:
        """numpy Generator for ``noise="fast"`` (OS-seeded for a secure source)."""
        if self._gen is None:
            self._gen = np.random.default_rng()
        return self._gen

    def fill(self, out: np.ndarray) -> None:
        """Overwrite the uint64 array ``out`` with uniform independent words."""
        if self._cipher is not None:
            nbytes = out.nbytes
            if len(self._zeros) != nbytes:
                self._zeros = bytes(nbytes)
            self._cipher.update_into(self._zeros, out.view(np.uint8))
        else:
            assert self._gen is not None  # a source has a cipher or a seeded generator
            out[:] = self._gen.integers(0, 2**64 - 1, size=out.size, dtype=np.uint64,
                                        endpoint=True)

    def words(self, n: int) -> np.ndarray:
        """``n`` fresh uniform uint64 words."""
        out = np.empty(n, dtype=np.uint64)
        self.fill(out)
        return out

    def uniform53(self, n: int) -> np.ndarray:
        """``n`` integers uniform in [0, 2^53) (uint64): the top 53 bits of :meth:`words` for a
        cipher source; ``generator.integers(0, 2**53)`` for a seeded one (its pinned draws)."""
        if self._cipher is not None:
            return self.words(n) >> np.uint64(11)
        return self.generator.integers(0, 2**53, size=n, dtype=np.uint64)


@renamed(seed_or_rng="rng")
def as_rng(rng: Any = None) -> np.random.Generator:
    """Return a Generator: ``rng`` passed through, or seeded from None, an int ≥ 0 or a
    SeedSequence (``seed_or_rng=`` is the deprecated spelling of ``rng=``).

    Raises ParameterError for any other type (bool, float, str, legacy RandomState, ...) or a
    negative seed.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, (bool, np.bool_)):
        if rng < 0:
            raise ParameterError(f"seed must be an integer >= 0, got {rng}")
        return np.random.default_rng(int(rng))
    raise ParameterError(
        "seed must be None, an integer >= 0, a numpy SeedSequence or a numpy Generator, "
        f"got {type(rng).__name__}"
    )


def simulation_rng(entropy: Any = None) -> np.random.Generator:
    """A numpy Generator for a simulation or study (never a release): ``entropy`` is whatever
    ``np.random.default_rng`` takes — an int, a sequence of ints (e.g. ``[seed, run, ε·1000]``),
    a SeedSequence, a Generator (returned as is) or None (OS entropy)."""
    return np.random.default_rng(entropy)


def spawn_seeds(entropy: Any, n: int) -> list[np.random.SeedSequence]:
    """``n`` independent SeedSequence children of ``SeedSequence(entropy)`` (None: OS entropy),
    one per simulated run; build each run's Generator with :func:`simulation_rng`."""
    return np.random.SeedSequence(entropy).spawn(n)


def new_id(nbytes: int = 8) -> str:
    """A fresh random label (``2·nbytes`` hex digits from the OS) naming a ledger entry, a
    preview or a model — an identifier, never a draw of noise."""
    return secrets.token_hex(nbytes)


def key_bytes(rng: Any) -> bytes:
    """32 key bytes for :meth:`RandomSource.keyed`: fresh OS entropy (``rng=None``, a real
    release), or derived from a simulation seed (BLAKE2b) or Generator (its next 32 bytes)."""
    if rng is None:
        return os.urandom(32)
    if isinstance(rng, np.random.Generator):
        return rng.bytes(32)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng >= 0:
        return hashlib.blake2b(b"lmdk-population-seed" + int(rng).to_bytes(16, "little"),
                               digest_size=32).digest()
    raise ParameterError(
        f"rng must be None, an integer seed >= 0 or a numpy Generator, got {rng!r}")


def as_source(rng: Any = None) -> RandomSource:
    """``None`` → :meth:`RandomSource.secure`; a RandomSource → itself; anything a seed or
    Generator → :meth:`RandomSource.seeded` (simulations/tests only)."""
    if rng is None:
        return RandomSource.secure()
    if isinstance(rng, RandomSource):
        return rng
    return RandomSource.seeded(rng)


# ----------------------------------------------------------------------------- kernel refills
# numba kernels refill their word buffer through a ctypes callback (an objmode block in the hot
# path measured 15-40x slower): each running kernel call registers its source here under a
# fresh integer id. A failed refill cannot raise through numba, so it is recorded and re-raised
# when the kernel returns (the output is then discarded, never released).
_REGISTRY: dict[int, RandomSource] = {}
_ERRORS: dict[int, BaseException] = {}
_IDS = itertools.count(1)
_LOCK = threading.Lock()

REFILL_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


def _refill(ptr: int, n: int, sid: int) -> None:
    try:
        words = np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_uint64)), (n,))
        _REGISTRY[sid].fill(words)
    except BaseException as exc:
        _ERRORS[sid] = exc


REFILL = REFILL_TYPE(_refill)
"""The callback the numba samplers call with (buffer address, words, source id)."""


class registered:
    """Context manager: ``with registered(source) as sid:`` makes ``source`` refillable by id."""

    def __init__(self, source: RandomSource):
        self.source = source
        self.sid = 0

    def __enter__(self) -> int:
        with _LOCK:
            self.sid = next(_IDS)
            _REGISTRY[self.sid] = self.source
        return self.sid

    def __exit__(self, *exc: object) -> None:
        with _LOCK:
            _REGISTRY.pop(self.sid, None)
            err = _ERRORS.pop(self.sid, None)
        if err is not None:
            raise RuntimeError("the random source failed; nothing was released") from err
