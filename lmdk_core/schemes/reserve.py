"""Reserve: a budget-aware landmark scheme (lmdk's own design; proof in docs/landmark-reserve.md).

Regular timestamps are never summed together in G_t = Σ_{i∈L∪{t}} ε_i, so each can spend ε minus
what the landmarks spend together. Reserve therefore sets aside a landmark budget
B_L = ``landmark_share``·ε and

* every regular t publishes fresh at ε_R = ε − B_L (after the last landmark, at ε − Σ_L ε_i:
  what the landmarks actually left);
* the landmarks share B_L online: each landmark adds δ = B_L/|L| to a bank (δ rounded down so
  that every sum k·δ is exact); at landmark t the scheme publishes fresh with the whole bank
  when the *public model's* expected error of repeating the last release,
  err·unit/ε_last + min(speed·(τ_t − τ_last), REACH_M), exceeds the expected noise error
  err·unit/bank of a fresh release (and the bank's budget is on the exact grid); otherwise it
  repeats the last release, spends 0 and keeps banking. Before the first release there is
  nothing to repeat: a landmark then publishes once its bank's error is below err·unit/ε_R, the
  regular releases'.

err·unit/ε is the mean error of a release at budget ε (values Δ/ε; locations ≈ 2.86·r/ε m, see
:class:`~lmdk_core.schemes._space.Space`); τ is the public time in seconds (locations with
times) or the timestamp index (values, locations without times); ``speed`` the public motion
parameter in metres per second (per timestamp without times) or value units per timestamp.

Every decision reads only public inputs — the landmark mask, the times, ε, r or Δ, ``speed`` —
never the data, so the whole budget schedule ε_t is a data-independent function computed before
any noise is drawn, and the release is Skip's vectorised release run at that schedule
(:func:`~lmdk_core.schemes.vectorised.run_budget`). Σ_{i∈L} ε_i = K·δ ≤ |L|·δ ≤ B_L, hence
G_t ≤ ε for every t, any data, any noise (checked in exact rational arithmetic below).
With ``landmark_share=0`` the schedule is Skip's, output identical for the same seed.

``landmark_share="auto"`` picks the share s on the grid 0, 0.01, …, 0.95 minimising the public
model's expected mean error Ê(s) = mean of ê_t(s) over the t with a release to show (before the
first release there is none, as in Skip), ê_t = err·unit/ε_t at a fresh release and
err·unit/ε_last + min(speed·(τ_t − τ_last), reach) at a repeat (the triangle-inequality bound;
reach = REACH_M = 5 km for locations, ∞ for values) — computed by running the same schedule with
the model (ties: the smallest s) — and keeps s = 0 unless Ê(s) ≤ (1 − AUTO_MARGIN)·Ê(0)
(AUTO_MARGIN = 0.15). Under "auto" the share is a function of the landmark mask, so the figures
``landmark_share``/``regular_epsilon`` are not public parameters (``share_source`` = "auto");
a share the user gives is (``share_source`` = "given").

What a non-fresh moment shows is the scheme parameter ``fill`` (shared with Skip, applied by
:func:`~lmdk_core.schemes.run_scheme` after this module: :mod:`lmdk_core.schemes.fill`): the repeat
(default, online) or a delayed line between the fresh releases around it; the budgets are the
same for every fill (docs/landmark-reserve.md §7).

Why numba: the bank is a sequential state (each decision depends on the previous publication);
the kernel is a loop over timestamps that reads no data and draws no noise.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numba
import numpy as np

from .._deprecation import renamed
from ..errors import ParameterError
from ..noise.apply import check_lattice_domain, check_value_domain, check_value_magnitude
from ..noise.source import RandomSource
from ._kernel import usable
from ._space import Space
from ._types import SchemeOutput
from .fill import public_times
from .vectorised import run_budget

AUTO_SHARES = np.round(np.arange(96) * 0.01, 2)
"""Candidate landmark shares of ``landmark_share="auto"`` (0 … 0.95)."""

REACH_M = 5000.0
"""Public cap (metres) on the model's displacement of a repeated location, speed·Δτ ≤ REACH_M:
a person seen again after a long gap is modelled as anywhere within a town's reach, not
speed·Δτ away (0.1 m/s over a 34-day gap would be 290 km). Values have no cap."""


def reach_of(space: Space) -> float:
    """The displacement cap of the public model: REACH_M for locations, ∞ for values."""
    return REACH_M if space.kind == "locations" else math.inf


AUTO_MARGIN = 0.15
"""``landmark_share="auto"`` leaves Skip's schedule (s = 0) unless the public model expects its
mean error to fall by at least this fraction: on the GeoLife excerpts the model's predicted
gains below 15 % were measured losses (docs/landmark-reserve.md)."""

_DELTA_BITS = 30  # δ keeps ≤ 30 significant bits (fewer when |L| ≥ 2^23): every k·δ, k ≤ |L|, exact


@numba.njit(cache=True)
def reserve_schedule(kind, unit, err, landmarks, tau, last_lm, eps_reg, delta, speed,
                     eps, spent, model, write, reach=np.inf):
    """The public schedule up to the last landmark ``last_lm``, written into ``eps`` (budget),
    ``spent`` (deposits spent) and ``model`` (model error ê_t) for t ≤ last_lm; returns
    (K = deposits spent in all, Σ ê_t and the number of t ≤ last_lm that have a release to
    show; ê_t = NaN before the first release). ``write=False``: only the return values.

    Regular t: ε_t = ``eps_reg``. Landmark t: one more deposit δ = ``delta`` in the bank; publish
    with the bank k·δ iff err·unit/(k·δ) < err·unit/ε_last + speed·(τ_t − τ_last) (before the
    first release: < err·unit/ε_reg, the error of the regular releases) and k·δ is on the exact
    grid. Reads no data, draws no noise.
    """
    c = err * unit
    k = 0  # deposits in the bank
    total_k = 0
    have = False
    eps_last = 0.0
    tau_last = 0.0
    acc = 0.0
    shown = 0
    for t in range(last_lm + 1):
        if landmarks[t]:
            k += 1
            rep = c / eps_reg
            if have:
                rep = c / eps_last + min(speed * max(0.0, tau[t] - tau_last), reach)
            bank = k * delta
            if bank > 0.0 and c / bank < rep and usable(kind, unit, bank):
                e, used, err_t = bank, k, c / bank
                total_k += k
                k = 0
                have = True
                eps_last = bank
                tau_last = tau[t]
            else:
                e, used, err_t = 0.0, 0, rep if have else np.nan
        else:
            e, used, err_t = eps_reg, 0, c / eps_reg
            have = True
            eps_last = eps_reg
            tau_last = tau[t]
        if write:
            eps[t] = e
            spent[t] = used
            model[t] = err_t
        if have:
            acc += err_t
            shown += 1
    return total_k, acc, shown


def _split(epsilon: float, share: float, m: int) -> tuple[float, float]:
    """(ε_R, δ): ε_R = fl(ε·(1−s)) and the largest δ of ≤30 significant bits (53 − bitlen(m)
    when smaller) with ε_R + m·δ ≤ ε exactly."""
    eps_reg = epsilon * (1.0 - share)
    if m == 0 or share == 0.0:
        return (epsilon if m == 0 else eps_reg), 0.0
    room = Fraction(epsilon) - Fraction(eps_reg)  # exact B_L ≥ 0
    if room <= 0:
        return eps_reg, 0.0
    raw = float(room / m)
    bits = max(1, min(_DELTA_BITS, 53 - m.bit_length()))  # k·δ needs ≤ bits + bitlen(m) ≤ 53
    step = 2.0 ** (math.frexp(raw)[1] - bits)
    delta = math.floor(raw / step) * step
    while delta > 0 and Fraction(eps_reg) + m * Fraction(delta) > Fraction(epsilon):
        delta -= step
    return eps_reg, delta


def _tail(epsilon: float, delta: float, deposits: int, m: int) -> float:
    """Regular budget after the last landmark: the largest float e with e + K·δ ≤ ε exactly
    (≥ ε_R, since ε_R + K·δ ≤ ε_R + m·δ ≤ ε)."""
    if m == 0:
        return epsilon
    spent = Fraction(delta) * deposits
    e = float(Fraction(epsilon) - spent)
    while Fraction(e) + spent > Fraction(epsilon):
        e = math.nextafter(e, 0.0)
    return e


class _Plan:
    """What every candidate share has in common: times, last landmark, scratch arrays."""

    def __init__(self, space: Space, landmarks: np.ndarray) -> None:
        self.space, self.landmarks = space, landmarks
        self.m = int(landmarks.sum())
        self.last = int(np.flatnonzero(landmarks)[-1]) if self.m else -1
        self.tau = public_times(space)
        self.eps = np.zeros(space.n)
        self.spent = np.zeros(space.n, dtype=np.int64)
        self.model = np.zeros(space.n)

    def run(self, epsilon: float, share: float, speed: float) -> tuple[float, float, float, int]:
        """(ε_R, δ, ε_tail, K) at ``share``; fills eps/model up to the last landmark."""
        sp = self.space
        eps_reg, delta = _split(epsilon, share, self.m)
        k, _, _ = reserve_schedule(sp.code, sp.unit, sp.err, self.landmarks, self.tau, self.last,
                                   eps_reg, delta, speed, self.eps, self.spent, self.model, True,
                                   reach_of(sp))
        return eps_reg, delta, _tail(epsilon, delta, k, self.m), k

    def mean_error(self, epsilon: float, share: float, speed: float) -> float:
        """Ê(share): the model's mean expected error over the t with a release to show."""
        sp = self.space
        eps_reg, delta = _split(epsilon, share, self.m)
        k, acc, shown = reserve_schedule(sp.code, sp.unit, sp.err, self.landmarks, self.tau,
                                         self.last, eps_reg, delta, speed, self.eps,
                                         self.spent, self.model, False, reach_of(sp))
        tail = _tail(epsilon, delta, k, self.m)
        after = sp.n - self.last - 1
        shown += after
        return (acc + after * sp.err * sp.unit / tail) / shown if shown else math.inf


@renamed(positional=("epsilon", "share", "speed"))
def schedule(
    space: Space, landmarks: np.ndarray, *, epsilon: float, share: float, speed: float
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """(ε_t, model error ê_t, public figures) of Reserve at landmark share ``share``."""
    plan = _Plan(space, landmarks)
    eps_reg, delta, tail, k = plan.run(epsilon, share, speed)
    eps, model = plan.eps, plan.model
    eps[plan.last + 1:] = tail  # every t after the last landmark is regular
    model[plan.last + 1:] = space.err * space.unit / tail
    figures = {"landmark_share": share,
               "landmark_budget": epsilon - eps_reg if plan.m else 0.0,
               "regular_epsilon": eps_reg, "landmark_deposit": delta,
               "landmark_spent": float(Fraction(delta) * k)}
    return eps, model, figures


def expected_error(model: np.ndarray) -> float:
    """Ê: the mean of the model errors ê_t over the t with a release to show (NaN: none yet)."""
    shown = model[np.isfinite(model)]
    return float(shown.mean()) if shown.size else math.inf


@renamed(positional=("epsilon", "speed"))
def auto_share(space: Space, landmarks: np.ndarray, *, epsilon: float, speed: float) -> float:
    """argmin_s Ê(s) over AUTO_SHARES (ties: smallest s; 0 without landmarks), or 0 unless
    Ê(s) ≤ (1 − AUTO_MARGIN)·Ê(0): the regular moments' cost is certain, the landmarks' gain
    only modelled."""
    if not landmarks.any() or space.n == 0:
        return 0.0
    plan = _Plan(space, landmarks)
    errs = [plan.mean_error(epsilon, float(s), speed) for s in AUTO_SHARES]
    if not np.isfinite(min(errs)):
        return 0.0
    best = int(np.argmin(errs))
    if np.isfinite(errs[0]) and errs[best] > (1.0 - AUTO_MARGIN) * errs[0]:
        return 0.0  # the model's gain is within its own error: keep Skip's schedule
    return float(AUTO_SHARES[best])


def check_share(value: Any, name: str) -> float | str:
    """``"auto"`` or a float in [0, 1), else ParameterError."""
    if isinstance(value, str):
        if value == "auto":
            return value
        raise ParameterError(f"{name} must be 'auto' or a number in [0, 1), got {value!r}")
    if isinstance(value, (bool, np.bool_)):
        raise ParameterError(f"{name} must be 'auto' or a number in [0, 1), got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ParameterError(
            f"{name} must be 'auto' or a number in [0, 1), got {value!r}") from None
    if not (0.0 <= x < 1.0):
        raise ParameterError(f"{name} must be 'auto' or a number in [0, 1), got {value!r}")
    return x


@renamed(positional=("epsilon", "source", "noise"))
def run_reserve(
    space: Space,
    landmarks: np.ndarray,
    *,
    epsilon: float,
    source: RandomSource,
    noise: str,
    landmark_share: float | str,
    speed: float,
) -> SchemeOutput:
    """Release ``space`` with Reserve: the public schedule, then one vectorised release."""
    share = (auto_share(space, landmarks, epsilon=epsilon, speed=speed)
             if landmark_share == "auto" else float(landmark_share))
    eps, model, figures = schedule(space, landmarks, epsilon=epsilon, share=share, speed=speed)
    if space.kind == "values":
        check_value_domain(space.unit, budget=eps)
        check_value_magnitude(space.columns[0], space.unit, budget=eps)
    else:
        check_lattice_domain(space.unit, budget=eps)
    out = run_budget(space, budget=eps, source=source, noise=noise)
    figures["model_error"] = expected_error(model)
    # "given": the share, hence regular_epsilon = ε(1 − s), is a public parameter of the release;
    # "auto": the share is a function of the landmark mask, so it (and regular_epsilon) is not
    figures["share_source"] = "auto" if landmark_share == "auto" else "given"
    return out._replace(derived=figures)
