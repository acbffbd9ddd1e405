"""ProPer-style budget ledger for repeated analyses of one population (Ebadi et al., POPL 2015).

Each user u has a private budget B_u (their ε_u) and a spent amount S_u. A query with per-record
budget ε over records derived from users costs u the personal amount C_u = ε × (number of u's
records in the query) (personalised sensitivity, their Cor. 3.4). A record may be added, removed
or *moved* to another cell (two counts change), so :func:`ledger_counts` adds discrete
Laplace(ε/2) noise to each count: each of u's records, changed in any of these ways, costs u at
most ε. :meth:`Ledger.charge_costs` charges costs computed elsewhere, e.g. a population release's
per-person loss (:func:`lmdk_core.population.release_losses`), which bounds the same changes.
Query rule:

* u can afford the query when S_u + C_u ≤ B_u − R_u (R_u: u's display reserve, below); such users
  are *included* and charged C_u;
* the others are *excluded*: their records are left out of the query and they are charged nothing;
* budgets, spends and the inclusion set are never revealed.

What the publisher may show about exclusions is itself a DP count: the number of users excluded
from the last query plus discrete-Laplace noise with ε_display. Every user, excluded or not, pays
ε_display for it out of a reserve R_u = ε_display × max_displays set aside at enrolment, so the
display never overdraws anyone. Invariant (tested): 0 ≤ S_u ≤ B_u at all times, and Σ_u S_u equals
the sum of all charges.

**New users** (:meth:`Ledger.add_users`): ProPer's database is live — each individual's budget is
set when their data are input (Ebadi et al. §4). A user enrolled after some queries has spent 0:
those queries did not touch their data (selection principle: a query costs nothing to records
outside it). Existing users are unaffected; a uid already in the ledger is refused.

**Drop-out bias** (Munz et al., UniTraX, POST 2018): the users excluded first are those with
small budgets or many records, so later answers silently describe a different population than
earlier ones. The ledger cannot remove this bias; the noisy exclusion count makes it visible.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._deprecation import renamed
from ..errors import ParameterError
from ..validation import check_epsilon, check_int
from .noise import MOVE_SENSITIVITY, publish_counts, snap_tau

__all__ = ["Charge", "Ledger", "ledger_counts"]


@dataclass(frozen=True)
class Charge:
    """One query's accounting (PRIVATE: which users were included and what each paid)."""

    included: np.ndarray
    cost: np.ndarray
    epsilon: float

    @property
    def n_excluded(self) -> int:
        return int((~self.included).sum())


class Ledger:
    """Per-user budgets and spends (see module docstring). ``budgets``: DataFrame uid, epsilon."""

    def __init__(self, budgets: pd.DataFrame, *, display_epsilon: float = 0.01,
                 max_displays: int = 5):
        self.display_epsilon = snap_tau(check_epsilon(display_epsilon, "display_epsilon"))
        self.max_displays = check_int(max_displays, "max_displays", minimum=0)
        self.reserve = self.display_epsilon * self.max_displays
        self.uids, self.budget = self._enrolment(budgets, known=pd.Index([]))
        self.spent = np.zeros(self.budget.size)
        self.displays = 0
        self._display_charged = 0.0  # Σ of every display charge (users enrolled at the time)
        self.history: list[Charge] = []
        self._index = pd.Index(self.uids)

    def _enrolment(self, budgets: pd.DataFrame, *, known: pd.Index
                   ) -> tuple[np.ndarray, np.ndarray]:
        """(uids, budgets) of new users, checked: columns, no uid twice or already ``known``,
        every budget finite, > 0 and at least the display reserve."""
        if not isinstance(budgets, pd.DataFrame) or not {"uid", "epsilon"} <= set(
                budgets.columns):
            raise ParameterError("budgets need columns uid and epsilon")
        uids = budgets["uid"].astype(str).to_numpy()
        if pd.Index(uids).duplicated().any():
            raise ParameterError("budgets list a user twice")
        again = known.intersection(pd.Index(uids))
        if len(again):
            raise ParameterError(
                f"{len(again)} user(s) are already in the ledger (first: {again[0]!r}); a "
                "user's budget is set once, when they are enrolled")
        b = budgets["epsilon"].to_numpy(dtype=np.float64)
        if not np.all(np.isfinite(b)) or np.any(b <= 0):
            raise ParameterError("every budget must be a finite number > 0")
        if np.any(b < self.reserve):
            raise ParameterError(
                f"a budget is smaller than the display reserve ε_display * max_displays = "
                f"{self.reserve:g}; lower display_epsilon or max_displays")
        return uids, b

    def add_users(self, budgets: pd.DataFrame) -> int:
        """Enrol new users (DataFrame uid, epsilon) after the ledger was created; returns how
        many. ProPer semantics: a new user has spent 0 (earlier queries and displays did not
        touch their data) and is charged by later queries and displays like everyone else;
        existing users' budgets and spends are unchanged. The full display reserve is set
        aside for them too (conservative: they meet at most the displays left). Raises
        ParameterError, changing nothing, for a uid already in the ledger or listed twice, or
        a budget that is not finite, > 0 and at least the display reserve."""
        uids, b = self._enrolment(budgets, known=self._index)
        self.uids = np.concatenate([self.uids, uids])
        self.budget = np.concatenate([self.budget, b])
        self.spent = np.concatenate([self.spent, np.zeros(b.size)])
        self._index = pd.Index(self.uids)
        return int(b.size)

    @property
    def total_charged(self) -> float:
        return float(sum(c.cost.sum() for c in self.history)) + self._display_charged

    @renamed(positional=("epsilon",))
    def charge(self, records: Any, *, epsilon: float) -> Charge:
        """Account one query: ``records`` = records of each user in the query (aligned with
        ``uids``, or a Series indexed by uid); returns the private Charge."""
        eps = check_epsilon(epsilon)
        if isinstance(records, pd.Series):
            r = records.reindex(self._index).fillna(0).to_numpy(dtype=np.float64)
        else:
            r = np.asarray(records, dtype=np.float64)
        if r.shape != self.budget.shape or np.any(r < 0) or not np.all(np.isfinite(r)):
            raise ParameterError("records must give a count >= 0 for every user of the ledger")
        return self._charge(eps * r, eps)

    def charge_costs(self, costs: Any) -> Charge:
        """Account one release whose personal cost C_u is given (aligned with ``uids``, or a
        Series indexed by uid; users not in it cost 0), e.g. the landmark loss of a population
        release (:func:`lmdk_core.population.release_losses`: u's records at u's landmark bins
        and one more bin added, removed or moved to other cells cost u at most C_u, and the
        charge is exactly C_u). The query rule is the same:
        users who can afford C_u are included and charged, the others left out and charged
        nothing. ``Charge.epsilon`` is the largest cost."""
        if isinstance(costs, pd.Series):
            c = costs.reindex(self._index).fillna(0).to_numpy(dtype=np.float64)
        else:
            c = np.asarray(costs, dtype=np.float64)
        if c.shape != self.budget.shape or np.any(c < 0) or not np.all(np.isfinite(c)):
            raise ParameterError("costs must give a finite cost >= 0 for every user of the ledger")
        return self._charge(c, float(c.max()) if c.size else 0.0)

    def affordable(self, costs: Any) -> np.ndarray:
        """PRIVATE: which users could pay ``costs`` now (the rule of :meth:`charge_costs`),
        without charging anyone."""
        c = (costs.reindex(self._index).fillna(0).to_numpy(dtype=np.float64)
             if isinstance(costs, pd.Series) else np.asarray(costs, dtype=np.float64))
        return self.spent + c <= self.budget - self.reserve

    def _charge(self, cost: np.ndarray, eps: float) -> Charge:
        room = self.budget - self.reserve
        new = self.spent + cost
        ok = new <= room
        self.spent = np.where(ok, new, self.spent)
        charge = Charge(ok, np.where(ok, cost, 0.0), eps)
        self.history.append(charge)
        return charge

    def noisy_excluded(self, rng: Any = None) -> int:
        """The number excluded from the last query + discrete Laplace(ε_display) (public).

        Charges every user ε_display from the reserve; refuses after ``max_displays``."""
        if not self.history:
            raise ParameterError("no query has been charged yet")
        if self.displays >= self.max_displays:
            raise ParameterError(f"the display reserve is used up ({self.max_displays} displays)")
        self.displays += 1
        self.spent = self.spent + self.display_epsilon
        self._display_charged += self.display_epsilon * self.spent.size
        true = self.history[-1].n_excluded
        return int(publish_counts(np.array([true], dtype=np.int64), self.display_epsilon,
                                  rng=rng)[0])

    def remaining(self) -> np.ndarray:
        """PRIVATE: each user's unspent budget (query room plus unused display reserve)."""
        return self.budget - self.spent

    def check(self) -> None:
        """Assert the ledger invariants (raises AssertionError)."""
        assert np.all(self.spent >= 0)
        assert np.all(self.spent <= self.budget)
        assert abs(self.spent.sum() - self.total_charged) <= 1e-9 * max(1.0, self.spent.sum())


def ledger_counts(ledger: Ledger, records: pd.DataFrame, *, n_keys: int, epsilon: float,
                  rng: Any = None) -> tuple[np.ndarray, Charge]:
    """Answer one count query through the ledger: ``records`` (PRIVATE: uid, key) are the
    bounded records the query covers (key in [0, n_keys), e.g. bin·n_cells + cell, one record
    per user per bin). Users who cannot afford ε × their records are left out and pay nothing.
    Each count gets discrete Laplace(ε/2) noise (sensitivity :data:`~.noise.MOVE_SENSITIVITY`),
    so each record added, removed or moved to another key costs its user at most the ε charged.
    Returns (public noisy counts per key, private Charge)."""
    eps_noise = snap_tau(epsilon, "epsilon")  # refuse a bad ε before charging anyone
    per_user = records.groupby(records["uid"].astype(str), sort=False).size()
    charge = ledger.charge(per_user, epsilon=epsilon)  # charged ε >= the snapped ε of the noise
    ok_users = pd.Index(ledger.uids[charge.included])
    keep = records["uid"].astype(str).isin(ok_users).to_numpy()
    counts = np.bincount(records["key"].to_numpy()[keep], minlength=n_keys).astype(np.int64)
    noisy = publish_counts(counts, eps_noise, rng=rng, sensitivity=MOVE_SENSITIVITY)
    return noisy, charge
