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
(``add`` returns a new ledger); :class:`lmdk_core.session.Session` keeps one per person.

Everything else a release spends is added too (docs/composition.md):

* **fixed costs** — the ε_sel of its dummy-landmark selection and the ε_model of a DP correlation
  model its budgets were chosen from. Each cost has a key and counts once however many releases
  share it (one DP model behind two releases is paid once); a model that protects changes of up
  to k points pays ⌈(|L| + 1)/k⌉ times its ε_model (group privacy) when the landmarks grow past it;
* **radii** — a location release with protection radius r and budget ε_t loses at most
  ε_t·:func:`distance_factor` (d, r) ≈ ε_t·d/r between two true points d metres apart, so releases
  with different radii add up as Σ_r (d/r_r)·(their landmark loss). ``total_loss(distance_m=d)``
  evaluates that sum; without ``distance_m`` every release is judged at its own radius.
* the **real** landmarks: a release with dummy landmarks protects L' ⊇ L; the ledger composes over
  the real L (``add(..., landmarks=real_mask)``), since that is what the guarantee is about.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._deprecation import renamed
from .errors import ParameterError
from .times import utc_times
from .validation import as_budget_array, check_epsilon, check_nonnegative, check_positive

__all__ = [
    "LATTICE_SLACK", "Cost", "LedgerEntry", "ReleaseLedger", "distance_factor", "release_costs",
]

_ECEF_ERR_M = 1e-6  # lmdk_core.noise.exact.ECEF_ERR_M (not imported: that module loads numba)
_A_MIN = math.sqrt(3.0) * 2.0**10  # √3·r/g ≥ this for every lattice (g ≤ r/2^10)
LATTICE_SLACK = 1.0 / (_A_MIN + 2.0)
"""c in :func:`distance_factor`: the lattice's rounding, relative to its shift bound D."""


@renamed(positional=("radius_m",))
def distance_factor(distance_m: float, *, radius_m: float) -> float:
    """Upper bound on loss(d)/ε_t of lmdk's location mechanism (global lattice, radius r).

    Two true points ``distance_m`` = d metres apart (great circle) released at budget ε_t with
    protection radius ``radius_m`` = r lose at most ε_t·distance_factor(d, r), with x = d/r and
    c = :data:`LATTICE_SLACK` ≈ 0.00056 (the lattice's rounding): min(1, x + 3c + 6δ/(√3·r))
    for x ≤ 1 (δ = 10⁻⁶ m, the ECEF allowance; exactly 1 at d = r), and x + max(0, 3 − 2x)·c
    above. Proof: docs/composition.md, "Different radii"; tests/test_ledger.py checks it against
    the integer lattice shift of point pairs.
    """
    d = check_nonnegative(distance_m, "distance_m")
    r = check_positive(radius_m, "radius_m")
    x = d / r
    if x <= 1.0:
        return min(1.0, x + 3.0 * LATTICE_SLACK + 6.0 * _ECEF_ERR_M / (math.sqrt(3.0) * r))
    return x + max(0.0, 3.0 - 2.0 * x) * LATTICE_SLACK


@dataclass(frozen=True)
class Cost:
    """A fixed privacy cost outside the per-timestamp budgets: ``epsilon`` spent once on the
    whole series (a dummy selection ε_sel, a DP model ε_model), counted once per ``key``.
    ``protects``: the number of changed points it covers (None: any number, as for ε_sel,
    which is charged per release)."""

    key: str
    epsilon: float
    label: str = ""
    protects: int | None = None

    def charge(self, n_changed: int) -> float:
        """What it costs for neighbours differing at ``n_changed`` points (group privacy)."""
        if self.protects is None or n_changed <= self.protects:
            return self.epsilon
        return self.epsilon * math.ceil(n_changed / self.protects)


@dataclass(frozen=True, eq=False)
class LedgerEntry:
    """One recorded release: ``times`` (datetime64[ns] UTC or int64 index, one per timestamp),
    ``budget`` ε_t and the real ``landmarks`` (bool) at those times, its ``key``, a ``label``,
    its protection ``radius_m`` (None for a value release) and its fixed ``costs``."""

    key: str | None
    label: str
    times: np.ndarray
    budget: np.ndarray
    landmarks: np.ndarray
    radius_m: float | None = None
    costs: tuple[Cost, ...] = ()


def release_costs(release: Any, key: str | None) -> tuple[Cost, ...]:
    """The fixed costs a release carries in its params: ``epsilon_select`` (its dummy
    selection, charged per release) and ``epsilon_model`` (the DP model its budgets came from,
    charged once per ``model_key``)."""
    params = getattr(release, "params", {}) or {}
    out = []
    sel = float(params.get("epsilon_select") or 0.0)
    if sel > 0:
        out.append(Cost(f"{key or id(release)}:select", sel, "dummy landmark selection ε_sel"))
    model = float(params.get("epsilon_model") or 0.0)
    if model > 0:
        events = params.get("model_protects")
        out.append(Cost(f"model:{params.get('model_key') or key or id(release)}", model,
                        "DP correlation model ε_model",
                        None if events is None else int(events)))
    return tuple(out)


def _entry(release: Any, key: str | None, label: str, landmarks: Any = None,
           costs: tuple[Cost, ...] = ()) -> LedgerEntry:
    budget = as_budget_array(release.budget, "budget")
    mask = np.asarray(release.landmarks if landmarks is None else landmarks, dtype=bool)
    time = getattr(release, "time", None)
    times = (np.arange(budget.size, dtype=np.int64) if time is None
             else utc_times(time, "time"))
    if not (mask.size == times.size == budget.size):
        raise ParameterError(
            f"release arrays differ in length: budget {budget.size}, landmarks {mask.size}, "
            f"time {times.size}"
        )
    for a in (times, budget, mask):
        a.setflags(write=False)
    params = getattr(release, "params", {}) or {}
    radius = params.get("radius_m")
    all_costs = {c.key: c for c in (*release_costs(release, key), *costs)}
    for c in all_costs.values():
        check_nonnegative(c.epsilon, "cost")
    return LedgerEntry(key=key, label=str(label), times=times, budget=budget, landmarks=mask,
                       radius_m=None if radius is None else float(radius),
                       costs=tuple(all_costs.values()))


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
    _memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    """Totals already computed, per distance: the ledger never changes, and a page asks for its
    total several times on every rerun (about 0.1 s each per 10⁶ recorded moments)."""

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, key: object) -> bool:
        return key is not None and any(e.key == key for e in self.entries)

    def add(self, release: Any, *, key: str | None = None, label: str = "",
            landmarks: Any = None, costs: tuple[Cost, ...] = ()) -> ReleaseLedger:
        """A new ledger with ``release`` recorded (unchanged if ``key`` is already recorded).

        ``landmarks``: the real landmark mask (default ``release.landmarks``; give it when the
        release protected dummies too); ``costs``: fixed costs besides those its params carry
        (:func:`release_costs`)."""
        if key is not None and key in self:
            return self
        entry = _entry(release, key, label, landmarks, tuple(costs))
        if self.entries and (entry.times.dtype.kind != self.entries[0].times.dtype.kind):
            raise ParameterError(
                "cannot compose a release with times and a release without times in one ledger"
            )
        return ReleaseLedger((*self.entries, entry))

    def costs(self) -> tuple[Cost, ...]:
        """The fixed costs of every release, each key once."""
        seen: dict[str, Cost] = {}
        for e in self.entries:
            for c in e.costs:
                seen.setdefault(c.key, c)
        return tuple(seen.values())

    def _factor(self, entry: LedgerEntry, distance_m: float | None) -> float:
        if distance_m is None or entry.radius_m is None:
            return 1.0
        return distance_factor(distance_m, radius_m=entry.radius_m)

    def loss_per_time(self, *, distance_m: float | None = None
                      ) -> tuple[np.ndarray, np.ndarray]:
        """``(times, total)``: the union of the releases' timestamps (sorted) and total(t).

        ``distance_m``: judge location releases for two true points that far apart (each
        release's ε_t scaled by :func:`distance_factor`); None: each at its own radius."""
        union, total, _ = self._totals(distance_m)
        return union, total

    def _totals(self, distance_m: float | None) -> tuple[np.ndarray, np.ndarray, float]:
        """(union of timestamps, total(t) there, total(t) at a t no release covers); computed
        once per distance (the arrays are read-only)."""
        if distance_m not in self._memo:
            union, total, base = self._compute_totals(distance_m)
            for a in (union, total):
                a.setflags(write=False)
            self._memo[distance_m] = (union, total, base)
        return self._memo[distance_m]

    def landmark_times(self) -> np.ndarray:
        """The union L of the recorded releases' real landmark timestamps (sorted)."""
        if not self.entries:
            return np.zeros(0, dtype=np.int64)
        return _sorted_unique(np.concatenate([e.times[e.landmarks] for e in self.entries]))

    def _compute_totals(self, distance_m: float | None
                        ) -> tuple[np.ndarray, np.ndarray, float]:
        if not self.entries:
            return np.zeros(0, dtype=np.int64), np.zeros(0), 0.0
        union = _sorted_unique(np.concatenate([e.times for e in self.entries]))
        is_landmark = np.zeros(union.size, dtype=bool)
        fresh = np.zeros(union.size)  # Σ_r f_r·ε^r_t over the releases covering t
        landmark_spent = 0.0  # Σ_r f_r·Σ_{i ∈ L ∩ T_r} ε^r_i, filled once L is known
        positions = []
        factors = [self._factor(e, distance_m) for e in self.entries]
        for e, f in zip(self.entries, factors, strict=True):
            pos = np.searchsorted(union, e.times)
            positions.append(pos)
            is_landmark[pos[e.landmarks]] = True
            np.add.at(fresh, pos, f * e.budget)
        for e, pos, f in zip(self.entries, positions, factors, strict=True):
            landmark_spent += f * float(e.budget[is_landmark[pos]].sum())
        changed = int(is_landmark.sum()) + 1  # L ∪ {t}: what a neighbouring series changes
        base = landmark_spent + sum(c.charge(changed) for c in self.costs())
        return union, base + np.where(is_landmark, 0.0, fresh), base

    def total_loss(self, *, distance_m: float | None = None) -> float:
        """max_t total(t): the landmark-privacy loss of everything recorded (0 if nothing),
        fixed costs included; ``distance_m`` as in :meth:`loss_per_time`."""
        _, total, outside = self._totals(distance_m)
        return max(float(total.max()) if total.size else 0.0, outside)

    def total_if_added(self, release: Any, *, key: str | None = None,
                       landmarks: Any = None, costs: tuple[Cost, ...] = (),
                       distance_m: float | None = None) -> float:
        """The total loss if ``release`` were recorded too (as now if its key is recorded)."""
        return self.add(release, key=key, landmarks=landmarks, costs=costs).total_loss(
            distance_m=distance_m)

    @renamed(positional=("epsilon",))
    def would_exceed(self, release: Any, *, epsilon: float, key: str | None = None,
                     landmarks: Any = None, distance_m: float | None = None,
                     tol: float = 1e-9) -> bool:
        """True if recording ``release`` would push the total loss past ``epsilon``."""
        return self.total_if_added(release, key=key, landmarks=landmarks,
                                   distance_m=distance_m) > check_epsilon(epsilon) + tol
