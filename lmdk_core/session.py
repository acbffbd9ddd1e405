"""One accounted session: previews that cost nothing, real releases counted when drawn.

The dashboard (``dashboard/``), the Jupyter explorer (:mod:`lmdk_core.jupyter`) and scripts share
this pure-Python model of what a person does: explore settings, draw a release, look at it, take
it away. The rule it enforces (proof: docs/composition.md, "The interaction"):

* **Previews are free.** :meth:`Session.preview` draws a *simulation* — seeded noise, labelled
  "simulation, not private", never stored as a release and refused by every export of this
  session. Exploring K settings costs nothing, however good or bad the previews look.
* **Every real draw counts from the moment it exists.** :meth:`Session.draw` draws with fresh OS
  randomness and records the release in the person's ledger *before* returning it, whether or
  not it is ever downloaded: looking at a real draw's error and then downloading the best of K
  draws costs K·ε, and the ledger says so. Downloading the same draw again costs nothing more.
* **A real draw is never redrawn.** Releases are kept for the whole session, one per setting;
  asking again for the same setting returns the same draw.
* **The ledger counts everything**: the release's budgets over the real landmarks, the dummy
  selection's ε_sel, the DP correlation model's ε_model (once per model), and releases with
  different protection radii composed for two points ``reference_m`` metres apart
  (:func:`lmdk_core.ledger.distance_factor`).
* **Smoothing is free.** :meth:`Session.smoothed` returns a preview or a real draw with its
  released points smoothed (:func:`lmdk_core.smoothing.smooth_release`, post-processing of the
  public output): the ledger does not change, a smoothed preview is still a labelled simulation,
  and a smoothed real draw keeps the draw's token (downloading it is downloading that draw).
* **The budget is set once.** Each person has a total budget (the loss they accept across
  everything drawn), fixed when the session starts and changed only by
  :meth:`Session.set_total_budget`; the ε of the next release is a separate setting. A draw
  that would pass the total is refused before any noise is drawn.

Hosts identify a setting by a hashable ``key`` of their choosing (data, person, time range,
places, settings); the session never looks inside it.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ._deprecation import renamed
from .dummies import HiddenLandmarks, hide_landmarks, split_budget
from .errors import LmdkError, ParameterError
from .ledger import Cost, ReleaseLedger
from .noise.source import new_id, simulation_rng
from .release import SCHEMES, Release, _times, release_locations, release_with_budget
from .smoothing import smooth_release
from .validation import check_epsilon, check_positive

__all__ = [
    "GENERATORS",
    "PREVIEW_LABEL",
    "BudgetExceededError",
    "Drawn",
    "Plan",
    "Preview",
    "ReleaseSettings",
    "Session",
]

PREVIEW_LABEL = "preview: a simulated draw, never released and never downloadable"
GENERATORS = ("stays", "bernoulli", "greedy", "exhaustive")
"""Dummy-landmark generators (:func:`lmdk_core.dummies.hide_landmarks`)."""
KEPT_PREVIEWS = 16
"""Previews kept per session (a rerun shows the same preview; previews are free to redraw)."""


class BudgetExceededError(LmdkError):
    """A real draw would take the person's total loss past their total budget."""


@dataclass(frozen=True, kw_only=True)
class ReleaseSettings:
    """The settings of the next release (validated; immutable, hashable).

    ``epsilon``: ε of this release (scheme + dummy selection), > 0; ``scheme``: one of
    :data:`lmdk_core.SCHEMES`; ``params``: the scheme's parameters as sorted (name, value) pairs;
    ``radius_m``: protection radius r (metres); ``hide``: add dummy landmarks chosen with
    ``epsilon_select`` (taken from ``epsilon``) by ``generator``, at most ``max_dummies``.
    """

    epsilon: float = 1.0
    scheme: str = "skip"
    params: tuple[tuple[str, Any], ...] = ()
    radius_m: float = 200.0
    hide: bool = False
    epsilon_select: float = 0.1
    generator: str = "stays"
    max_dummies: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        if self.scheme not in SCHEMES:
            raise ParameterError(f"unknown scheme {self.scheme!r}; valid: {', '.join(SCHEMES)}")
        params = self.params.items() if isinstance(self.params, Mapping) else self.params
        object.__setattr__(self, "params", tuple(sorted((str(k), v) for k, v in params)))
        object.__setattr__(self, "radius_m", check_positive(self.radius_m, "radius_m"))
        if self.generator not in GENERATORS:
            raise ParameterError(f"generator must be one of {', '.join(GENERATORS)}")
        if self.hide:
            # raises if ε_sel ∉ (0, ε)
            split_budget(self.epsilon, epsilon_select=self.epsilon_select)

    @property
    def epsilon_scheme(self) -> float:
        """ε left for the scheme: ε − ε_sel with dummies, ε without."""
        if not self.hide:
            return self.epsilon
        return split_budget(self.epsilon, epsilon_select=self.epsilon_select)

    def but(self, **changes: Any) -> ReleaseSettings:
        """A copy with ``changes`` (validated)."""
        return replace(self, **changes)


# Every field is keyword-only (privacy parameters by name); positional calls warn for a release.
ReleaseSettings.__init__ = renamed(  # type: ignore[method-assign]
    positional=("epsilon", "scheme", "params", "radius_m", "hide", "epsilon_select", "generator",
                "max_dummies"))(ReleaseSettings.__init__)


@dataclass(frozen=True, eq=False)
class Preview:
    """A simulated release for exploring (seeded: every export labels it a simulation, and a
    :class:`Session` never lets it be downloaded). ``hidden``: its simulated dummy choice."""

    release: Release
    landmarks: np.ndarray
    hidden: HiddenLandmarks | None
    settings: ReleaseSettings
    token: str = ""
    label: str = PREVIEW_LABEL

    @property
    def is_real(self) -> bool:
        return False


@dataclass(frozen=True, eq=False)
class Drawn:
    """A real release: fresh OS randomness, recorded in ``person``'s ledger when drawn.

    ``token`` identifies it in the ledger (every download of it counts once); ``landmarks`` is
    the real landmark mask L (``release.landmarks`` is L' when dummies were added);
    ``allocation`` a short slug for file names (``"skip"``, ``"tpl_bounded"``, …)."""

    token: str
    person: Hashable
    key: Hashable
    release: Release
    landmarks: np.ndarray
    hidden: HiddenLandmarks | None
    settings: ReleaseSettings
    allocation: str
    costs: tuple[Cost, ...] = ()
    label: str = "private release (fresh OS randomness, counted in the ledger when drawn)"

    @property
    def is_real(self) -> bool:
        return True


@dataclass(frozen=True)
class Plan:
    """What drawing now would cost: the ledger's total before and after, against the budget
    (all at the person's reference distance)."""

    spent: float
    after: float
    total_budget: float
    existing: bool

    @property
    def fits(self) -> bool:
        return self.existing or self.after <= self.total_budget + 1e-9

    @property
    def cost(self) -> float:
        return 0.0 if self.existing else max(self.after - self.spent, 0.0)


@dataclass
class _Book:
    total_budget: float
    reference_m: float | None  # fixed by the first real draw (or set_total_budget)
    ledger: ReleaseLedger = field(default_factory=ReleaseLedger)
    downloaded: tuple[str, ...] = ()


def _allocation_slug(settings: ReleaseSettings, allocation: Any) -> str:
    slug = "tpl_bounded" if allocation is not None else settings.scheme
    return slug + ("_with_dummies" if settings.hide else "")


class Session:
    """The accounted state of one person at the keyboard (see the module docstring).

    ``total_budget``: the loss each person's data may take in total across every real draw of
    this session (default 1); ``reference_m``: the distance (metres) at which releases with
    different radii are composed (default: the first release's radius). Both are per person and
    change only through :meth:`set_total_budget`.
    """

    def __init__(self, *, total_budget: float = 1.0, reference_m: float | None = None) -> None:
        self._default_budget = check_epsilon(total_budget, "total_budget")
        self._default_reference = (None if reference_m is None
                                   else check_positive(reference_m, "reference_m"))
        self._books: dict[Hashable, _Book] = {}
        self._drawn: dict[Hashable, Drawn] = {}
        self._previews: dict[Hashable, Preview] = {}
        self._models: dict[Hashable, Any] = {}
        self._plans: dict[tuple[Hashable, Hashable], tuple[Any, ...]] = {}
        self._smoothed: dict[tuple[str, str], Preview | Drawn] = {}

    # ------------------------------------------------------------------ budgets and ledger

    def _book(self, person: Hashable) -> _Book:
        book = self._books.get(person)
        if book is None:
            book = self._books[person] = _Book(self._default_budget, self._default_reference)
        return book

    def _reference(self, person: Hashable, radius_m: float | None) -> float | None:
        """The person's reference distance, or the one a draw at ``radius_m`` would fix."""
        ref = self._book(person).reference_m
        return ref if ref is not None else radius_m

    def total_budget(self, person: Hashable) -> float:
        """The total loss ``person`` accepts across this session's real draws."""
        return self._book(person).total_budget

    def reference_m(self, person: Hashable) -> float | None:
        """The distance (metres) at which the person's ledger composes different radii: the
        radius of their first real draw unless set explicitly (None before either)."""
        return self._book(person).reference_m

    def set_total_budget(self, person: Hashable, *, total_budget: float,
                         reference_m: float | None = None) -> None:
        """Change ``person``'s total budget (a deliberate act, never a side effect of the ε of
        the next release); lowering it below what is spent refuses every further draw."""
        book = self._book(person)
        book.total_budget = check_epsilon(total_budget, "total_budget")
        if reference_m is not None:
            book.reference_m = check_positive(reference_m, "reference_m")

    def ledger(self, person: Hashable) -> ReleaseLedger:
        """Every real draw of ``person``'s data in this session (immutable)."""
        return self._book(person).ledger

    def spent(self, person: Hashable, *, distance_m: float | None = None) -> float:
        """The total loss of everything drawn for ``person`` at ``distance_m`` (default: their
        reference distance)."""
        book = self._book(person)
        return book.ledger.total_loss(
            distance_m=book.reference_m if distance_m is None else distance_m)

    def loss_at(self, person: Hashable, distances_m: Any) -> np.ndarray:
        """The total loss for two true points at each of ``distances_m`` (metres) apart."""
        ledger = self.ledger(person)
        return np.array([ledger.total_loss(distance_m=float(d)) for d in np.ravel(distances_m)])

    def downloaded(self, person: Hashable) -> tuple[str, ...]:
        """Tokens of the draws whose files left the session (informational: every draw is
        already counted)."""
        return self._book(person).downloaded

    def record_download(self, drawn: Drawn | Preview | None) -> None:
        """A file of ``drawn`` was downloaded. Refuses previews (they cannot leave)."""
        if not isinstance(drawn, Drawn):
            raise ParameterError("only a real draw can be downloaded; a preview never leaves")
        book = self._book(drawn.person)
        if drawn.token not in book.downloaded:
            book.downloaded = (*book.downloaded, drawn.token)

    # ------------------------------------------------------------------ previews and draws

    def preview(self, traj: Any, landmarks: Any, settings: ReleaseSettings, *,
                key: Hashable = None, allocation: Any = None) -> Preview:
        """A simulated release for ``settings`` (kept per ``key``, so reruns show the same one;
        free: it is never recorded and cannot be downloaded)."""
        if key is not None and key in self._previews:
            self._previews[key] = self._previews.pop(key)  # most recently used last
            return self._previews[key]
        rel, mask, hidden = _draw(traj, landmarks, settings, allocation,
                                  rng=simulation_rng())  # OS-seeded simulation, not a release
        out = Preview(rel, mask, hidden, settings, f"preview-{new_id(8)}")
        if key is not None:
            self._previews[key] = out
            while len(self._previews) > KEPT_PREVIEWS:
                self._previews.pop(next(iter(self._previews)))
        return out

    def previews(self) -> tuple[Preview, ...]:
        """The previews kept (most recently made last)."""
        return tuple(self._previews.values())

    def drawn(self, key: Hashable) -> Drawn | None:
        """The real draw made for ``key`` in this session, if any (never redrawn)."""
        return self._drawn.get(key)

    def draws(self, person: Hashable | None = None) -> tuple[Drawn, ...]:
        """Every real draw (of ``person``), oldest first."""
        return tuple(d for d in self._drawn.values() if person is None or d.person == person)

    def plan(self, person: Hashable, traj: Any, landmarks: Any, settings: ReleaseSettings, *,
             key: Hashable = None, allocation: Any = None) -> Plan:
        """What :meth:`draw` would cost now, computed before any noise is drawn.

        The budgets ε_t of every scheme except Adaptive, BD and BA are a function of the
        landmarks alone, so the plan is exact for them; for those three (whose budgets follow
        their own noisy decisions) it uses their largest possible per-moment budget, and with
        dummy landmarks (drawn with the release) the real landmarks, which the guarantee is
        about. The plan never undercounts: see docs/composition.md."""
        book = self._book(person)
        ref = self._reference(person, settings.radius_m)
        spent = book.ledger.total_loss(distance_m=ref)
        if key is not None and key in self._drawn:
            return Plan(spent, spent, book.total_budget, True)
        # the host's key names the trace, places, settings and allocation; with the same
        # ledger and reference distance the plan is the same (a page asks on every rerun)
        memo = self._plans.get((person, key)) if key is not None else None
        if memo is not None and memo[0] is book.ledger and memo[1] == ref:
            return Plan(spent, memo[2], book.total_budget, False)
        mask = _mask(traj, landmarks)
        after = _plan_after(book.ledger, traj, mask, settings, allocation,
                            _costs("plan", settings, allocation, mask), ref)
        if key is not None:  # keep only plans against current ledgers (each holds its totals)
            self._plans = {k: v for k, v in self._plans.items()
                           if v[0] is self._book(k[0]).ledger}
            self._plans[(person, key)] = (book.ledger, ref, after)
            while len(self._plans) > KEPT_PREVIEWS:
                self._plans.pop(next(iter(self._plans)))
        return Plan(spent, after, book.total_budget, False)

    def draw(self, person: Hashable, traj: Any, landmarks: Any, settings: ReleaseSettings, *,
             key: Hashable, allocation: Any = None) -> Drawn:
        """The real release for ``key``: drawn once with fresh OS randomness and recorded in
        ``person``'s ledger at once; the same ``key`` returns the same draw.

        Raises :class:`BudgetExceededError` (before drawing) when the plan passes the person's
        total budget. ``allocation``: a TPL-bounded allocation (budgets ε_t and the model they
        came from) to release with instead of the scheme."""
        if key in self._drawn:
            return self._drawn[key]
        plan = self.plan(person, traj, landmarks, settings, key=key, allocation=allocation)
        if not plan.fits:
            raise BudgetExceededError(
                f"drawing this release would bring the total privacy loss to {plan.after:.3g}, "
                f"above the total budget {plan.total_budget:.3g} (spent so far "
                f"{plan.spent:.3g}); nothing was drawn. Lower ε, reuse a release you already "
                "drew, or raise the total budget deliberately."
            )
        rel, mask, hidden = _draw(traj, landmarks, settings, allocation, rng=None)
        token = new_id(8)
        costs = _costs(token, settings, allocation, mask)
        drawn = Drawn(token, person, key, rel, mask, hidden, settings,
                      _allocation_slug(settings, allocation), costs)
        book = self._book(person)
        if book.reference_m is None:  # the first real draw fixes the distance judged at
            book.reference_m = settings.radius_m
        # recorded before anyone sees it: every real draw counts from the moment it exists
        book.ledger = book.ledger.add(rel, key=token, label=drawn.allocation, landmarks=mask,
                                      costs=costs)
        self._drawn[key] = drawn
        return drawn

    def smoothed(self, item: Preview | Drawn, **options: Any) -> Preview | Drawn:
        """``item`` with its release smoothed by :func:`lmdk_core.smooth_release` (``options``
        are its keywords): free post-processing of the public output, so the ledger does not
        change. A preview stays a preview (simulation label kept); a real draw keeps its token,
        person and costs, so downloading the smoothed file records that same draw. Kept per
        item and options (a rerun returns the same object)."""
        if not isinstance(item, (Preview, Drawn)):
            raise ParameterError("smoothed() takes a Preview or a Drawn from this session")
        key = (item.token, repr(sorted(options.items())))
        out = self._smoothed.get(key)
        if out is None:
            out = replace(item, release=smooth_release(item.release, **options))
            self._smoothed[key] = out
            while len(self._smoothed) > KEPT_PREVIEWS:
                self._smoothed.pop(next(iter(self._smoothed)))
        return out

    # ------------------------------------------------------------------ correlation models

    def drawn_model(self, key: Hashable) -> Any | None:
        """The DP model drawn for ``key`` in this session, if any (never redrawn)."""
        return self._models.get(key)

    def dp_model(self, person: Hashable, traj: pd.DataFrame, *, key: Hashable,
                 **params: Any) -> Any:
        """A DP correlation model (:func:`lmdk_core.correlation.dp_grid_model`), drawn once per
        ``key`` with fresh OS randomness and charged to ``person``'s ledger at once (its bounds
        are shown, so it is a release of the data)."""
        if key in self._models:
            return self._models[key]
        from .correlation import dp_grid_model

        eps_m = check_epsilon(params.get("epsilon_model"), "epsilon_model")
        book = self._book(person)
        ref = self._reference(person, params.get("radius_m"))
        cost = Cost(f"model:pending:{new_id(4)}", eps_m, "DP correlation model ε_model",
                    int(params["protected_events"]) if "protected_events" in params else None)
        after = _with_cost(book.ledger, cost).total_loss(distance_m=ref)
        if after > book.total_budget + 1e-9:
            raise BudgetExceededError(
                f"estimating this model (ε_model = {eps_m:.3g}) would bring the total privacy "
                f"loss to {after:.3g}, above the total budget {book.total_budget:.3g}; nothing "
                "was drawn."
            )
        params = {k: v for k, v in params.items() if k != "rng"}
        model = dp_grid_model(traj, **params)
        cost = Cost(f"model:{model.key}", model.epsilon_model, "DP correlation model ε_model",
                    model.protects)
        book.ledger = _with_cost(book.ledger, cost, label=f"model {model.key}")
        self._models[key] = model
        return model


def _with_cost(ledger: ReleaseLedger, cost: Cost, label: str = "") -> ReleaseLedger:
    """``ledger`` with a cost that has no per-moment budgets (an empty entry, with times of the
    ledger's kind)."""
    kind = ledger.entries[0].times.dtype.kind if ledger.entries else "M"
    time = np.zeros(0, dtype="datetime64[ns]") if kind == "M" else None
    empty = _Planned(np.zeros(0), np.zeros(0, dtype=bool), time, {})
    return ledger.add(empty, key=cost.key, label=label or cost.label, costs=(cost,))


def _mask(traj: Any, landmarks: Any) -> np.ndarray:
    n = len(traj)
    mask = np.zeros(n, dtype=bool) if landmarks is None else np.asarray(landmarks, dtype=bool)
    if mask.shape != (n,):
        raise ParameterError(f"landmarks have length {mask.size}, the trajectory {n}")
    return mask


def _hides(settings: ReleaseSettings, mask: np.ndarray) -> bool:
    """Dummies are drawn (and ε_sel spent) only when there are real landmarks to hide."""
    return settings.hide and bool(mask.any())


def _costs(token: str, settings: ReleaseSettings, allocation: Any,
           mask: np.ndarray) -> tuple[Cost, ...]:
    out = []
    if _hides(settings, mask):
        out.append(Cost(f"{token}:select", settings.epsilon_select,
                        "dummy landmark selection ε_sel"))
    if allocation is not None and float(getattr(allocation, "epsilon_model", 0.0)) > 0:
        out.append(Cost(f"model:{allocation.model_key}", float(allocation.epsilon_model),
                        "DP correlation model ε_model", allocation.model_protects))
    return tuple(out)


def _draw(traj: Any, landmarks: Any, settings: ReleaseSettings, allocation: Any, *,
          rng: Any) -> tuple[Release, np.ndarray, HiddenLandmarks | None]:
    """(release, real landmark mask, dummy choice) — real when ``rng`` is None, else seeded."""
    mask = _mask(traj, landmarks)
    gen = None if rng is None else simulation_rng(rng)
    hidden = None
    protect = mask
    if _hides(settings, mask):
        hidden = hide_landmarks(mask, epsilon_select=settings.epsilon_select,
                                generator=settings.generator, max_dummies=settings.max_dummies,
                                rng=gen)
        protect = hidden.mask
    noise = "safe" if rng is None else "fast"
    if allocation is not None:
        rel = release_with_budget(traj, protect, budget=allocation, radius_m=settings.radius_m,
                                  epsilon=settings.epsilon, rng=gen, noise=noise)
    else:
        eps = settings.epsilon_scheme if hidden is not None else settings.epsilon
        rel = release_locations(traj, protect, epsilon=eps, scheme=settings.scheme,
                                radius_m=settings.radius_m, rng=gen, noise=noise,
                                **dict(settings.params))
    return rel, mask, hidden


DETERMINISTIC = ("event", "user", "uniform", "skip")
"""Schemes whose budgets ε_t are a function of the landmarks alone (lmdk_core.allocate)."""


def _plan_after(ledger: ReleaseLedger, traj: Any, mask: np.ndarray, settings: ReleaseSettings,
                allocation: Any, costs: tuple[Cost, ...], reference_m: float | None) -> float:
    """An upper bound on the ledger's total once the draw is recorded (docs/composition.md).

    Exact when the budgets are known before the noise (a given allocation; event, user, uniform
    and skip without dummies), and an upper bound per moment for those four with dummies (see
    the comment below). Adaptive, BD and BA are landmark-private for a landmark set L' ⊇ L
    (dummies only add moments), so at their own landmarks plus one moment they spend at most
    ε_scheme, and at each real landmark of earlier draws that is not in L at most ε_scheme
    (G_t ≥ ε_t): their share of total(t) is at most ε_scheme·(1 + that count), times the
    distance factor of their radius."""
    from .allocation import allocate
    from .ledger import distance_factor

    time = _times(traj)
    params = {"radius_m": settings.radius_m}
    hides = _hides(settings, mask)
    eps = settings.epsilon_scheme if hides else settings.epsilon
    budget: np.ndarray | None = None
    if allocation is not None:
        budget = np.asarray(allocation.budget, dtype=float)
    elif settings.scheme in DETERMINISTIC:
        # with dummies L' ⊇ L, the budgets per moment are at most those computed on L: Event
        # and User ignore the landmarks, Uniform spends ε/(|L'|+1) ≤ ε/(|L|+1), and Skip spends
        # 0 on L' and ε elsewhere ≤ 0 on L and ε elsewhere
        budget = np.asarray(allocate(mask.size, mask, epsilon=eps, scheme=settings.scheme),
                            dtype=float)
    if budget is not None:
        planned = _Planned(budget, mask, time, params)
        return ledger.total_if_added(planned, key="__plan__", landmarks=mask, costs=costs,
                                     distance_m=reference_m)
    base = ledger.add(_Planned(np.zeros(mask.size), mask, time, params), key="__plan__",
                      landmarks=mask, costs=costs)
    extra = 0
    if ledger.entries:  # this draw's moments that are real landmarks of earlier draws, not of L
        tt = time if time is not None else np.arange(mask.size, dtype=np.int64)
        earlier = ledger.landmark_times()
        pos = np.minimum(np.searchsorted(earlier, tt), max(earlier.size - 1, 0))
        hit = earlier[pos] == tt if earlier.size else np.zeros(mask.size, dtype=bool)
        extra = int((hit & ~mask).sum())
    share = eps * (1 + extra)
    factor = (1.0 if reference_m is None
              else distance_factor(reference_m, radius_m=settings.radius_m))
    return base.total_loss(distance_m=reference_m) + share * factor


@dataclass(frozen=True)
class _Planned:
    """What the ledger reads of a release, without one: the budgets a draw will spend, before
    any noise (for :meth:`Session.plan`), or none at all (a cost drawn on its own)."""

    budget: np.ndarray
    landmarks: np.ndarray
    time: np.ndarray | None
    params: Mapping[str, Any]
