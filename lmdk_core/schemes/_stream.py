"""Randomness for the sequential kernels: the bit stream (safe) or pre-drawn floats (fast)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np

from ..noise.discrete import new_state
from ..noise.source import REFILL, RandomSource, check_noise, registered


@contextlib.contextmanager
def kernel_stream(source: RandomSource, noise: str, n: int, *, coins: bool = False
                  ) -> Iterator[tuple]:
    """(exact, units, coins, buf, st, fn) for a sequential kernel over n steps.

    Fast mode pre-draws, in this order, an n×4 block of unit Laplace variates (columns 0–2:
    publication, 3: test) and, if ``coins``, n uniforms — whatever the data.
    """
    if check_noise(noise) == "safe":
        with registered(source) as sid:
            buf, st = new_state(sid)
            yield True, np.empty((0, 4)), np.empty(0), buf, st, REFILL
    else:
        gen = source.generator
        units = gen.laplace(0.0, 1.0, (n, 4))
        u = gen.random(n) if coins else np.empty(0)
        buf, st = new_state(0)
        yield False, units, u, buf, st, REFILL
