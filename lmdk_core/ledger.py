"""A ledger of the releases a user has taken away, and their total landmark-privacy loss.

Every release of the same person's data spends privacy again (sequential composition): two
downloads of independently drawn releases at ε each lose up to 2ε together. The ledger records,
per release, its budget ε_t and landmark mask keyed by absolute time (``Release.time``; the
0-based index for a release without times), and reports the total loss

    total(t) = Σ_r Σ_{i ∈ (L ∪ {t}) ∩ T_r} ε^r_i,        total = max_t total(t)

where T_r are the timestamps release r covers and L is the union of every release's landmark
timestamps (a place marked in any release is treated as a landmark for all of them — the
conservative reading when the places changed between releases). With one release this is
max_t G_t. For a t outside every release's range the sum is Σ_r Σ_{i∈L∩T_r} ε^r_i, never more
than at the timestamps the releases cover, so the maximum over the union of their timestamps is
the maximum over all t.

Proof of the bound: docs/composition.md; tests/test_ledger.py checks it against brute force.

The same drawn release (same noise) downloaded twice, e.g. as CSV and as GeoJSON, reveals
nothing new: give it one ``key`` and it is counted once. The ledger is a pure immutable value
(``add`` returns a new ledger); the dashboard keeps one per person in the session.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import ParameterError
from .validation import as_budget_array, check_epsilon

__all__ = ["LedgerEntry", "ReleaseLedger"]


@dataclass(frozen=True, eq=False)
class LedgerEntry:
    """One recorded release: ``times`` (datetime64[ns] UTC or int64 index, one per timestamp),
    ``budget`` ε_t and ``landmarks`` (bool) at those times, its ``key`` and a ``label``."""

    key: str | None
    label: str
    times: np.ndarray
    budget: np.ndarray
    landmarks: np.ndarray


def _entry(release: Any, key: str | None, label: str) -> LedgerEntry:
    budget = as_budget_array(release.budget if hasattr(release, "budget") else release.eps,
                             "budget")
    mask = np.asarray(release.landmarks, dtype=bool)
    time = getattr(release, "time", None)
    times = (np.arange(budget.size, dtype=np.int64) if time is None
             else np.asarray(time, dtype="datetime64[ns]"))
    if not (mask.size == times.size == budget.size):
        raise ParameterError(
            f"release arrays differ in length: budget {budget.size}, landmarks {mask.size}, "
            f"time {times.size}"
        )
    for a in (times, budget, mask):
        a.setflags(write=False)
    return LedgerEntry(key=key, label=str(label), times=times, budget=budget, landmarks=mask)


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """``np.unique`` by sorting: numpy 2.4's hash-based ``np.unique`` took 2.8 s for 10⁶ times
    (sorting: 0.1 s), and the page computes the ledger's loss on every release."""
    values = np.sort(values, kind="stable")
    keep = np.ones(values.size, dtype=bool)
    keep[1:] = values[1:] != values[:-1]
    return values[keep]


@dataclass(frozen=True)
class ReleaseLedger:
    """The releases taken away so far (immutable; see the module docstring for the loss)."""

    entries: tuple[LedgerEntry, ...] = ()

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, key: object) -> bool:
        return key is not None and any(e.key == key for e in self.entries)

    def add(self, release: Any, *, key: str | None = None, label: str = "") -> ReleaseLedger:
        """A new ledger with ``release`` recorded (unchanged if ``key`` is already recorded)."""
        if key is not None and key in self:
            return self
        entry = _entry(release, key, label)
        if self.entries and (entry.times.dtype.kind != self.entries[0].times.dtype.kind):
            raise ParameterError(
                "cannot compose a release with times and a release without times in one ledger"
            )
        return ReleaseLedger((*self.entries, entry))

    def loss_per_time(self) -> tuple[np.ndarray, np.ndarray]:
        """``(times, total)``: the union of the releases' timestamps (sorted) and total(t)."""
        if not self.entries:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        union = _sorted_unique(np.concatenate([e.times for e in self.entries]))
        is_landmark = np.zeros(union.size, dtype=bool)
        fresh = np.zeros(union.size)  # Σ_r ε^r_t over the releases covering t
        landmark_spent = 0.0  # Σ_r Σ_{i ∈ L ∩ T_r} ε^r_i, filled once L is known
        positions = []
        for e in self.entries:
            pos = np.searchsorted(union, e.times)
            positions.append(pos)
            is_landmark[pos[e.landmarks]] = True
            np.add.at(fresh, pos, e.budget)
        for e, pos in zip(self.entries, positions, strict=True):
            landmark_spent += float(e.budget[is_landmark[pos]].sum())
        return union, landmark_spent + np.where(is_landmark, 0.0, fresh)

    def total_loss(self) -> float:
        """max_t total(t): the landmark-privacy loss of everything taken away (0 if nothing)."""
        _, total = self.loss_per_time()
        return float(total.max()) if total.size else 0.0

    def total_if_added(self, release: Any, *, key: str | None = None) -> float:
        """The total loss if ``release`` were taken away too (as now if its key is recorded)."""
        return self.add(release, key=key).total_loss()

    def would_exceed(self, release: Any, epsilon: float, *, key: str | None = None,
                     tol: float = 1e-9) -> bool:
        """True if taking ``release`` away would push the total loss past ``epsilon``."""
        return self.total_if_added(release, key=key) > check_epsilon(epsilon) + tol
