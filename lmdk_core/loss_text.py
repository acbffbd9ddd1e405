"""The privacy-loss section in plain words: one sentence per number, computed from the numbers.

What is protected comes first (the landmark guarantee G, which holds without any model), then
what is not, then what temporal correlation could add in the worst case under a chosen Markov
model (the upper bounds of :mod:`lmdk_core.correlation`). Every number in these sentences is an
argument of :func:`loss_sentences`; nothing is typed by hand. See docs/temporal-loss.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import ParameterError
from .formatting import plain_distance, plain_number

__all__ = ["MEANINGLESS_ABOVE", "LossSentences", "bound_text", "loss_sentences", "odds_factor",
           "release_sentences"]

MEANINGLESS_ABOVE = 10.0
"""A loss bound above this (odds multiplied by more than e^10 ≈ 22,026) promises practically
nothing; the page says so next to it."""


@dataclass(frozen=True)
class LossSentences:
    """The section's lead, in reading order: ``protected``, ``not_protected``, ``correlated``
    (None when no model is chosen), ``joint`` (None without landmarks), ``large`` (None unless a
    bound passes :data:`MEANINGLESS_ABOVE`)."""

    protected: str
    not_protected: str
    correlated: str | None = None
    joint: str | None = None
    large: str | None = None

    def lines(self) -> list[str]:
        """The sentences that apply, in order."""
        return [s for s in (self.protected, self.not_protected, self.correlated, self.joint,
                            self.large) if s is not None]


def odds_factor(loss: float) -> str:
    """e^loss in words: '≈ 2.72×' for a loss up to :data:`MEANINGLESS_ABOVE`, else 'more than
    e^10 ≈ 22,026×' (a bound that large is not worth a precise factor)."""
    loss = float(loss)
    if not math.isfinite(loss) or loss < 0:
        raise ParameterError(f"a privacy loss must be a finite number ≥ 0, got {loss!r}")
    if loss > MEANINGLESS_ABOVE:
        return (f"more than e^{plain_number(MEANINGLESS_ABOVE)} ≈ "
                f"{plain_number(math.exp(MEANINGLESS_ABOVE))}×")
    return f"≈ {plain_number(math.exp(loss))}×"


def bound_text(loss: float) -> str:
    """A loss bound (nats) as shown next to its label: the number, and above
    :data:`MEANINGLESS_ABOVE` the words saying it promises practically nothing."""
    text = plain_number(loss)
    if math.isfinite(float(loss)) and float(loss) > MEANINGLESS_ABOVE:
        text += f" — promises practically nothing (above {plain_number(MEANINGLESS_ABOVE)})"
    return text


def _times_eps(x: float, epsilon: float) -> str:
    ratio = x / epsilon
    return "at most ε" if ratio <= 1 + 1e-9 else f"{plain_number(ratio)} times your ε"


def loss_sentences(*, epsilon: float, guarantee: float, n_landmarks: int, radius_m: float,
                   separation_m: float | None = None, pair: float | None = None,
                   worst: float | None = None, joint: float | None = None,
                   cap: float | None = None) -> LossSentences:
    """The sentences for a release with target ``epsilon`` whose largest landmark guarantee is
    ``guarantee`` (max_t G_t, ε units) over ``n_landmarks`` landmark timestamps and protection
    radius ``radius_m`` (metres). With a correlation model: ``pair`` (largest one-moment bound for
    two places ``separation_m`` metres apart), ``worst`` (largest one-moment bound, worst pair of
    cells), ``joint`` (largest bound for the landmarks and one more moment; None without
    landmarks) and ``cap`` (the composition bound)."""
    for name, v in (("epsilon", epsilon), ("radius_m", radius_m)):
        if not (math.isfinite(float(v)) and float(v) > 0):
            raise ParameterError(f"{name} must be a finite number > 0, got {v!r}")
    r = plain_distance(radius_m)
    g = float(guarantee)
    if n_landmarks > 0:
        moments = (f"at your {n_landmarks:,} landmark moment{'s' if n_landmarks != 1 else ''} "
                   "together with any one other moment")
    else:
        moments = "at any one moment (no moment of this trace is in a marked place yet)"
    keeps = ("≤" if g <= float(epsilon) * (1 + 1e-9) else ">")
    protected = (
        f"Protected, if your moments were unrelated: where you were {moments}. For two places "
        f"up to {r} apart, the release changes an observer's odds between them by at most "
        f"e^G {odds_factor(g)} — your guarantee G = {plain_number(g)} {keeps} "
        f"ε = {plain_number(epsilon)}.")
    if keeps == ">":
        protected += " This scheme does not keep the landmark promise G ≤ ε here."
    not_protected = (
        f"Not protected: *when* you were at your places (landmark times are public), and places "
        f"further apart than {r}, which are easier to tell apart in proportion to their "
        "distance.")
    correlated = joint_text = large = None
    if worst is not None:
        if pair is None or separation_m is None or cap is None:
            raise ParameterError("pair, separation_m and cap are needed with worst")
        correlated = (
            "What correlation could add in the worst case, under this model: someone who also "
            f"knows how you move could learn about one moment up to {plain_number(pair)} for two "
            f"places {plain_distance(separation_m)} apart ({_times_eps(pair, epsilon)}), and up "
            f"to {plain_number(worst)} for the model's two farthest places "
            f"({_times_eps(worst, epsilon)}). These are upper bounds, not the loss that "
            f"happens, and never above the composition bound {plain_number(cap)} (the sum of "
            "all budgets times the largest per-step loss).")
        if joint is not None:
            joint_text = (
                "All your landmark moments together with one more, in the same worst case: up "
                f"to {plain_number(joint)} ({_times_eps(joint, epsilon)}).")
        biggest = max(float(pair), float(worst), float(joint or 0.0))
        if biggest > MEANINGLESS_ABOVE:
            large = (
                f"A bound above {plain_number(MEANINGLESS_ABOVE)} (odds changed "
                f"{odds_factor(biggest)}) promises practically nothing: under this model, "
                "correlation could in the worst case expose those moments. The guarantee G "
                "above does not depend on the model.")
    return LossSentences(protected, not_protected, correlated, joint_text, large)


def release_sentences(*, epsilon: float, guarantee: Any, landmarks: Any, radius_m: float,
                      loss: Any = None, separation_m: float | None = None) -> LossSentences:
    """:func:`loss_sentences` for a release: the one preparation of its arguments, shared by
    the app's loss section and the Jupyter explorer. ``guarantee`` is G_t per timestamp (ε
    units), ``landmarks`` the landmark mask, ``radius_m`` the protection radius (metres);
    ``loss`` (optional) the release's :class:`~lmdk_core.correlation.LandmarkTemporalLoss`
    computed with pair distance ``separation_m`` (metres; required with ``loss``)."""
    g = np.asarray(guarantee, dtype=float)
    mask = np.asarray(landmarks, dtype=bool)
    base: dict[str, Any] = dict(epsilon=float(epsilon),
                                guarantee=float(g.max()) if g.size else 0.0,
                                n_landmarks=int(mask.sum()), radius_m=float(radius_m))
    if loss is None:
        return loss_sentences(**base)
    if separation_m is None or loss.loss.pair is None:
        raise ParameterError("the sentences about a pair of places need the loss computed with "
                             "separation_m (metres)")
    joint = (float(np.max(loss.composed_pair))
             if mask.any() and loss.composed_pair is not None else None)
    return loss_sentences(**base, separation_m=float(separation_m),
                          pair=float(np.max(loss.loss.pair)), worst=float(np.max(loss.loss.tpl)),
                          joint=joint, cap=float(loss.cap))
