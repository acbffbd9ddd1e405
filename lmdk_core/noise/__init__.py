"""Floating-point-safe noise (docs/fp-safe-noise.md).

* :mod:`.source` — :class:`RandomSource`, the one random source type (ChaCha20 keyed from the
  OS for releases; seeded numpy for simulations and tests).
* :mod:`.discrete` — exact Bernoulli and discrete Laplace samplers (numba, integer arithmetic).
* :mod:`.exact` — per-element grid/lattice mechanisms shared by every release path.
* :mod:`.apply` — vectorised releases of values, locations and bits.
"""

from .source import (
    NOISE_MODES,
    RandomSource,
    as_rng,
    as_source,
    check_noise,
    key_bytes,
    new_id,
    simulation_rng,
    spawn_seeds,
)

__all__ = ["NOISE_MODES", "RandomSource", "as_rng", "as_source", "check_noise", "key_bytes",
           "new_id", "simulation_rng", "spawn_seeds"]
