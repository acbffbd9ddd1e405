"""Real population releases and the ledger of each population: previews free, draws counted.

The Population page explores settings with *previews*: releases with a simulation seed, never
downloadable. A **real draw** (:meth:`PopulationSession.draw`) releases the personalised counts
with fresh OS randomness (``rng=None``: a 32-byte master key from the OS, coins and noise from
ChaCha20 keystreams keyed by it) and is charged to the population's ProPer ledger
(:class:`~lmdk_core.population.Ledger`) before it is returned; the same ``key`` returns the same
draw, never a new one.

**What a draw costs each person.** u's loss in the release is the landmark guarantee for u,
max_t Σ_{i ∈ L_u ∪ {t}} min(ε_{u,i}, τ) ≤ ε_u (:func:`~lmdk_core.population.release_losses`,
docs/personalised-dp.md §3), for u's data at u's landmark bins and one more bin changed in any
way: records added, removed, or moved to another cell of their bin (the release's noise,
discrete Laplace(τ/2), and keep probabilities are calibrated for moves). It is computed from u's
own budget and landmarks before any coin or noise is drawn, and the ledger charges exactly it.
Draws compose sequentially per person: u's spend is the sum of u's losses.

**The ProPer rule** (docs/personalised-dp.md §5): the ledger's budget of u is u's own ε_u.
Users who can afford the draw are included and charged; users who cannot are **left out of the
release** (their records are not counted) and charged nothing, so no one's spend ever passes
their budget. A draw that nobody can afford is refused (nothing drawn, nothing charged). The
exclusion is silent in the public counts; the figures of :class:`LedgerSummary` (how many are
spent, left out, the largest spend) are PRIVATE, for the publisher only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ParameterError
from ..noise.source import new_id
from ..session import BudgetExceededError
from .ledger import Charge, Ledger
from .release import PopulationRelease, release_losses, release_population

__all__ = [
    "LedgerSummary", "PopulationDraw", "PopulationPlan", "PopulationSession",
    "preferences_fingerprint",
]


@dataclass(frozen=True)
class PopulationPlan:
    """What drawing now would do (PRIVATE): of the ``n_users`` of the ledger, how many have data
    in the release and can afford it (``n_included``); the others are left out."""

    n_users: int
    n_included: int
    largest_cost: float
    existing: bool

    @property
    def n_excluded(self) -> int:
        return self.n_users - self.n_included

    @property
    def fits(self) -> bool:
        return self.existing or self.n_included > 0


@dataclass(frozen=True)
class LedgerSummary:
    """The population's ledger at a glance (PRIVATE: for the publisher, never published).

    ``n_spent``: users whose whole budget is spent; ``n_excluded_last``: users left out of the
    last real draw; ``largest_spend`` / ``largest_budget``: the largest spend of one user and
    that user's budget (ties: the smallest budget); ``total_charged``: Σ_u of every charge."""

    n_users: int
    draws: int
    n_spent: int
    n_excluded_last: int
    largest_spend: float
    largest_budget: float
    total_charged: float

    @property
    def largest_share(self) -> float:
        return self.largest_spend / self.largest_budget if self.largest_budget else 0.0


@dataclass(frozen=True, eq=False)
class PopulationDraw:
    """A real population release: fresh OS randomness, charged to the population's ledger when
    drawn. ``release.private`` and ``charge`` are PRIVATE; publish only :meth:`public_csv`."""

    token: str
    population: Hashable
    key: Hashable
    release: PopulationRelease
    charge: Charge
    label: str = "real release (fresh OS randomness, counted in the ledger when drawn)"

    @property
    def is_real(self) -> bool:
        return True

    @property
    def n_excluded(self) -> int:
        return self.charge.n_excluded

    def public_csv(self) -> str:
        """The released counts only (:meth:`PopulationRelease.public_csv`)."""
        return self.release.public_csv()


def preferences_fingerprint(preferences: pd.DataFrame) -> str:
    """A digest of the budgets (uid, epsilon; any row order): the identity of a ledger's people
    and budgets (PRIVATE: derived from the budgets; for keys, never for publication)."""
    uid = preferences["uid"].astype(str).to_numpy()
    eps = preferences["epsilon"].to_numpy(dtype=np.float64)
    order = np.argsort(uid, kind="stable")
    h = hashlib.blake2b(digest_size=16)
    h.update("\x00".join(uid[order]).encode("utf-8"))
    h.update(eps[order].tobytes())
    return h.hexdigest()


class PopulationSession:
    """The real population draws of one session and a ProPer ledger per population.

    ``population``: any hashable naming the people and their budgets (e.g. the data set and
    its preferences); its ledger is created from ``preferences`` (uid, epsilon) at first use and
    later calls must give the same preferences. ``key``: the settings of a draw, its
    population included (one key, one draw).
    """

    def __init__(self) -> None:
        self._ledgers: dict[Hashable, tuple[str, Ledger]] = {}
        self._drawn: dict[Hashable, PopulationDraw] = {}
        self._costs: dict[tuple[Hashable, Hashable], pd.Series] = {}

    def ledger(self, population: Hashable, preferences: pd.DataFrame) -> Ledger:
        """The population's ledger (budgets = each user's ε_u; no display reserve)."""
        fp = preferences_fingerprint(preferences)
        if population not in self._ledgers:
            self._ledgers[population] = (fp, Ledger(preferences[["uid", "epsilon"]],
                                                    max_displays=0))
        known, led = self._ledgers[population]
        if known != fp:
            raise ParameterError("these preferences differ from the ones the population's "
                                 "ledger was opened with")
        return led

    def drawn(self, key: Hashable) -> PopulationDraw | None:
        """The real draw made for ``key`` (never redrawn)."""
        return self._drawn.get(key)

    def draws(self, population: Hashable | None = None) -> tuple[PopulationDraw, ...]:
        return tuple(d for d in self._drawn.values()
                     if population is None or d.population == population)

    def costs(self, population: Hashable, key: Hashable, data: pd.DataFrame,
              preferences: pd.DataFrame, **release: Any) -> pd.Series:
        """PRIVATE: each user's loss in the release ``key`` of ``population`` (uid → loss)."""
        if (population, key) not in self._costs:
            tab = release_losses(data, preferences, **release)
            self._costs[population, key] = pd.Series(tab["loss"].to_numpy(),
                                                     index=tab["uid"].to_numpy())
        return self._costs[population, key]

    def plan(self, population: Hashable, data: pd.DataFrame, preferences: pd.DataFrame, *,
             key: Hashable, **release: Any) -> PopulationPlan:
        """What :meth:`draw` would do now, before any coin or noise is drawn."""
        led = self.ledger(population, preferences)
        n = int(led.budget.size)
        if key in self._drawn:
            return PopulationPlan(n, n - self._drawn[key].n_excluded,
                                  float(self._drawn[key].charge.cost.max(initial=0.0)), True)
        cost = self.costs(population, key, data, preferences, **release)
        present = pd.Index(led.uids).isin(cost.index)  # users with data in this release
        ok = led.affordable(cost) & present
        return PopulationPlan(n, int(ok.sum()), float(cost.max()) if cost.size else 0.0,
                              False)

    def draw(self, population: Hashable, data: pd.DataFrame, preferences: pd.DataFrame, *,
             key: Hashable, **release: Any) -> PopulationDraw:
        """The real release for ``key`` (keyword arguments of
        :func:`~lmdk_core.population.release_population`, without ``rng``): drawn once with
        fresh OS randomness over the users who can afford it, charged at once; the same ``key``
        returns the same draw. Raises BudgetExceededError when no user can afford it."""
        if key in self._drawn:
            return self._drawn[key]
        if "rng" in release:
            raise ParameterError("a real draw takes no rng: it uses fresh OS randomness")
        plan = self.plan(population, data, preferences, key=key, **release)
        if not plan.fits:
            raise BudgetExceededError(
                f"Refused: none of the {plan.n_users:,} users can afford this release (every "
                "budget would be passed). Nothing was drawn. Reuse a release you already drew.")
        led = self.ledger(population, preferences)
        cost = self.costs(population, key, data, preferences, **release)
        included = set(led.uids[led.affordable(cost)])
        inside = data["uid"].astype(str).isin(included).to_numpy()
        rel = release_population(data[inside], preferences, rng=None, **release)
        # charged before anyone sees it: every real draw counts from the moment it exists
        charge = led.charge_costs(cost)
        drawn = PopulationDraw(new_id(8), population, key, rel, charge)
        self._drawn[key] = drawn
        return drawn

    def summary(self, population: Hashable, preferences: pd.DataFrame) -> LedgerSummary:
        led = self.ledger(population, preferences)
        budget, spent = led.budget, led.spent
        i = int(np.lexsort((budget, -spent))[0]) if budget.size else 0
        last = led.history[-1].n_excluded if led.history else 0
        return LedgerSummary(
            n_users=int(budget.size), draws=len(led.history),
            n_spent=int((budget - spent <= 1e-9 * budget).sum()), n_excluded_last=last,
            largest_spend=float(spent[i]) if budget.size else 0.0,
            largest_budget=float(budget[i]) if budget.size else 0.0,
            total_charged=led.total_charged)
