"""The random source of every release: one type, two kinds.

* :meth:`RandomSource.secure` — release grade. A ChaCha20 keystream (``cryptography``), keyed
  with 32 fresh bytes and a 16-byte nonce from :func:`os.urandom` when the source is created.
  ChaCha20 is a cryptographically strong stream cipher: its keystream is computationally
  indistinguishable from uniform bits, and every release gets its own key. Measured here:
  os.urandom ≈ 50–60 MB/s, this keystream ≈ 160–290 MB/s (``bench/bench_noise.py``).
* :meth:`RandomSource.seeded` — a numpy ``Generator`` (PCG64 by default) for simulations and
  tests only: anyone who knows or guesses the seed can subtract the noise. NOT for publication.

The exact samplers (:mod:`lmdk_core.noise.discrete`) read uniform 64-bit words through
:meth:`RandomSource.fill`; ``noise="fast"`` draws floating-point variates from
:attr:`RandomSource.generator` (for a secure source a numpy Generator seeded from the OS, so a
fast draw is fresh, but never floating-point safe).
"""

from __future__ import annotations

import ctypes
import itertools
import os
import threading
from typing import Any

import numpy as np

from ..errors import ParameterError

__all__ = ["NOISE_MODES", "RandomSource", "as_source", "check_noise"]

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
    def seeded(cls, seed: Any) -> RandomSource:
        """Reproducible source from a seed, SeedSequence or Generator. Unsafe for publication."""
        from ..mechanisms import as_rng

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
