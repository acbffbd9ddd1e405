"""The explorer's state and computation, without any widget (pure Python, testable headless).

An :class:`ExplorerSession` is a thin view over two core modules, so the explorer and the
dashboard account and bound the loss the same way:

* :class:`lmdk_core.session.Session` does the accounting. Every change of place or setting shows
  a **preview** (:meth:`Session.preview`, kept per setting): a simulation with seeded noise,
  labelled as such, free, never exportable. A **real release** exists only after the explicit
  :meth:`ExplorerSession.draw` (:meth:`Session.draw`, keyed by person, release interval, places
  and release settings): fresh OS randomness, recorded in the person's ledger at once, and never
  redrawn — the same setting gives the same draw back. The ledger shows what was spent against a
  total budget set once (``total_budget=``, :meth:`ExplorerSession.set_total_budget`).
  :meth:`ExplorerSession.report` and :meth:`ExplorerSession.public_release` work on a real draw
  only.
* :mod:`lmdk_core.loss_models` gives the loss. The Markov model is a public preset, a model of
  the released points of the release shown (the real draw if there is one, else the preview),
  or a DP estimate paid through :meth:`Session.dp_model` (drawn only by the explicit
  :meth:`ExplorerSession.draw_dp_model`); the bounds are
  :func:`lmdk_core.loss_models.release_loss` of the release shown, for the real landmarks, with
  the pair at the protection radius. A model fitted to the true trajectory is not offered: its
  figures are not bounds on the loss of the released (lattice) points.

Randomness: previews draw a fresh seed each (``rng=None``) or, for reproducible tests and
simulations, from the seed/Generator passed as ``rng``; real draws always use fresh OS
randomness, whatever ``rng`` is, and no seed is ever written to :meth:`ExplorerSession.report`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .. import loss_models, loss_text
from .._deprecation import renamed
from ..accounting import landmark_guarantee
from ..errors import LmdkError, ParameterError
from ..export import privacy_report, public_frame
from ..landmarks import landmark_mask
from ..mechanisms import as_rng
from ..metrics import error_metres, mae_metres
from ..places import Place, as_place, new_place_name
from ..release import SCHEMES, Release, release_locations
from ..session import Drawn, Plan, Preview, ReleaseSettings, Session
from ..trajectory import resample, select_user, users
from ..validation import check_epsilon, check_positive

__all__ = [
    "DEFAULT_CENTRE",
    "INTERVALS_S",
    "LOSS_LABELS",
    "LOSS_MODELS",
    "MAX_TIMESTAMPS",
    "SUMMARY_BOUNDS",
    "SUMMARY_LABELS",
    "ExplorerResult",
    "ExplorerSession",
    "auto_interval",
]

INTERVALS_S: tuple[float, ...] = (30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)
"""Release intervals (seconds) offered by the explorer besides "every fix" (None)."""

MAX_TIMESTAMPS = 5000
"""``interval_s="auto"`` picks the shortest interval that keeps at most this many timestamps."""

LOSS_MODELS: tuple[str, ...] = ("preset", "released", "dp", "none")
"""Where the Markov model of the loss chart comes from (:mod:`lmdk_core.loss_models`): a public
preset of ``strength`` covering places up to ``preset_extent_m`` apart, the released points of
the release shown (grid of ``cell_m``), a paid DP estimate on a public grid, or no correlation
chart."""

LOSS_LABELS: dict[str, str] = {
    "preset": loss_models.LOSS_SOURCES["preset"],
    "released": loss_models.LOSS_SOURCES["released"],
    "dp": loss_models.LOSS_SOURCES["dp"],
    "none": "None (no correlation chart)",
}
"""The loss-model choices as the explorer labels them."""

DEFAULT_CENTRE: tuple[float, float] = (39.99, 116.33)
"""Default public centre (lat, lon) of the DP model's grid: the bundled sample's area, as in the
dashboard. It must be a public point, never derived from the data."""

_ADDS = "what correlation could add in the worst case, under this model (nats)"
SUMMARY_LABELS: dict[str, str] = {
    "release shown": "What is shown",
    "timestamps": "Moments released (timestamps)",
    "landmark timestamps": "Moments at your places (landmark timestamps)",
    "MAE (m)": "Mean error (m) — average distance between true and released points",
    "fresh releases": "Fresh releases — share of moments with a new noisy point (the others "
                      "repeat an earlier one)",
    "budget spent Σε_t": "Budget spent over all moments Σε_t",
    "max G_t": "Largest guarantee at your places G_t (units of ε; your promise is G_t ≤ ε)",
    "landmark-private (G_t ≤ ε)": "Landmark promise kept at every moment (G_t ≤ ε)",
    "bound: one moment, worst pair": f"One moment, the model's two farthest places — {_ADDS}",
    "bound: landmarks + t, worst pair": ("Your landmark moments and one more, the model's two "
                                         f"farthest places — {_ADDS}"),
    "bound: landmarks + t, places r apart": ("Your landmark moments and one more, two places "
                                             f"r apart — {_ADDS}"),
    "composition bound": ("Composition bound — the sum of all budgets Σε_t times the largest "
                          "per-step loss (nats)"),
    "bounds hold for": "These bounds hold for",
}
"""Plain row labels (with units) for the keys of :meth:`ExplorerResult.summary`, as the
explorer shows them; the keys themselves stay short and stable for code."""

SUMMARY_BOUNDS = frozenset(k for k in SUMMARY_LABELS if k.startswith("bound:")) | {
    "composition bound"}
"""Summary keys holding a loss bound (nats): shown with :func:`lmdk_core.loss_text.bound_text`,
which says when a bound promises practically nothing."""

_KEPT = 16  # seeded previews, released-point models and losses kept per session

PRIVATE_NOTE = (
    "PRIVATE: computed from the true trajectory (errors, landmark timestamps, correlation model); "
    "do not publish. Only the released series (time, lat, lon: ExplorerSession.public_release) "
    "is meant for publication; every real draw is already counted in the ledger."
)
PREVIEW_REFUSAL = (
    "the release shown is a preview (a simulation with seeded noise, free and never exported); "
    "draw the real release first with draw(), which counts ε against the total budget"
)


def auto_interval(traj: pd.DataFrame, max_timestamps: int = MAX_TIMESTAMPS) -> float | None:
    """The shortest of :data:`INTERVALS_S` (or None = every fix) giving ≤ ``max_timestamps``."""
    if len(traj) <= max_timestamps:
        return None
    for step in INTERVALS_S:
        if len(resample(traj, step)) <= max_timestamps:
            return step
    return INTERVALS_S[-1]


@dataclass(frozen=True, eq=False, kw_only=True)
class ExplorerResult:
    """What the explorer shows for the current setting.

    ``traj`` the trajectory being released (after resampling); ``landmarks`` the real landmark
    mask over it; ``release`` the release shown; ``kind`` ``"real"`` (``drawn`` is the
    :class:`~lmdk_core.session.Drawn`, counted in the ledger) or ``"preview"`` (``preview`` is
    the :class:`~lmdk_core.session.Preview`: a simulation, never exportable); ``guarantee``
    G_t; ``errors_m`` per-timestamp error (metres); ``model`` the correlation model (a
    :class:`~lmdk_core.correlation.CorrelationModel`) or None; ``loss`` its
    :class:`~lmdk_core.correlation.LandmarkTemporalLoss` (upper bounds, nats, from
    :func:`lmdk_core.loss_models.release_loss` with the pair at the protection radius) or None;
    ``warnings`` notes about the model (a coarser grid, a DP model not drawn yet, a trace
    spanning more than the model covers, …); ``covered_m`` the distance up to which the
    location model's bounds hold (its worst pair's reach; None without a model) and ``beyond``
    True when the trace shown (or the pair at r) is further apart than that: the figures are
    then no bound for those places; ``radius_m`` the protection radius r (metres), also the
    distance of the loss's pair of places.
    """

    traj: pd.DataFrame
    landmarks: np.ndarray
    release: Release
    kind: str
    guarantee: np.ndarray
    errors_m: np.ndarray
    model: Any
    loss: Any
    warnings: tuple[str, ...]
    drawn: Drawn | None = None
    preview: Preview | None = None
    covered_m: float | None = None
    beyond: bool = False
    radius_m: float | None = None

    @property
    def is_real(self) -> bool:
        """True for a real draw (counted in the ledger), False for a preview."""
        return self.kind == "real"

    @property
    def label(self) -> str:
        """What the release shown is, in one line."""
        src = self.drawn if self.drawn is not None else self.preview
        return str(getattr(src, "label", ""))

    @property
    def mae_m(self) -> float:
        """Mean location error in metres over timestamps with an output."""
        return mae_metres(self.traj, self.release)

    def sentences(self) -> loss_text.LossSentences:
        """What is protected, what is not and what correlation could add, in plain words: the
        app's loss-section lead for the same settings
        (:func:`lmdk_core.loss_text.release_sentences`)."""
        if self.radius_m is None:
            raise ParameterError("this result has no protection radius (radius_m)")
        return loss_text.release_sentences(
            epsilon=self.release.epsilon, guarantee=self.guarantee, landmarks=self.landmarks,
            radius_m=self.radius_m, loss=self.loss,
            separation_m=self.radius_m if self.loss is not None else None)

    def summary(self) -> dict[str, Any]:
        """The headline numbers shown above the charts (losses in nats; bounds under the model).
        The explorer labels each key with :data:`SUMMARY_LABELS`."""
        eps = self.release.epsilon
        g = self.guarantee
        out: dict[str, Any] = {
            "release shown": ("real draw (counted in the ledger)" if self.is_real
                              else "preview (simulation, not downloadable)"),
            "timestamps": len(self.release),
            "landmark timestamps": int(self.landmarks.sum()),
            "MAE (m)": self.mae_m,
            "fresh releases": self.release.fresh_share,
            "budget spent Σε_t": self.release.budget_spent,
            "max G_t": float(g.max()) if g.size else 0.0,
            "landmark-private (G_t ≤ ε)": bool(np.all(g <= eps + 1e-9)),
        }
        if self.loss is not None and g.size:
            out["bound: one moment, worst pair"] = float(np.max(self.loss.loss.tpl))
            out["bound: landmarks + t, worst pair"] = float(np.max(self.loss.composed))
            if self.loss.composed_pair is not None:
                out["bound: landmarks + t, places r apart"] = float(
                    np.max(self.loss.composed_pair))
            out["composition bound"] = float(self.loss.cap)
            if self.covered_m is not None:
                km = f"{self.covered_m / 1000:g} km"
                out["bounds hold for"] = (
                    f"NOT a bound for places further apart than {km} (your trace spans more)"
                    if self.beyond else f"places up to {km} apart")
        return out


class ExplorerSession:
    """Places, settings, previews, real draws and the ledger for one dataset (module docstring).

    ``trajectory``: DataFrame with lat, lon, time (and uid when several people: pick one with
    ``user``; default the first). Release settings (keyword-only, validated): ``epsilon`` the
    budget ε > 0 of the next release; ``scheme`` one of :data:`lmdk_core.SCHEMES`; ``radius_m``
    protection radius r (metres); ``interval_s`` release interval in seconds, None (every fix)
    or "auto"; ``params`` the scheme's parameters. Loss model: ``loss_model`` one of
    :data:`LOSS_MODELS` ("weak", "moderate", "strong" are accepted as the preset of that
    strength); ``strength`` of the preset and ``preset_extent_m`` the distance (metres) up to
    which its bounds hold (public: "places up to … km apart"); ``cell_m`` cell side (metres) of
    the released-points model; DP model: ``epsilon_model`` (its cost), ``dp_centre`` (a public
    (lat, lon)), ``dp_extent_m`` and ``dp_cell_m`` (metres) of its public grid.
    ``new_place_radius_m``: radius of places added by a click (metres). ``total_budget``: the
    total loss each person accepts across every real draw and DP model of this session (default
    1; change it only with :meth:`set_total_budget`). ``rng``: None (each preview gets a fresh
    seed) or a seed/Generator making previews reproducible (tests, simulations); it never
    affects a real draw.
    """

    def __init__(
        self,
        trajectory: pd.DataFrame,
        *,
        places: Iterable[Any] = (),
        user: Any = None,
        epsilon: float = 1.0,
        scheme: str = "skip",
        radius_m: float = 200.0,
        interval_s: float | str | None = "auto",
        params: Mapping[str, Any] | None = None,
        loss_model: str = "preset",
        strength: str = "moderate",
        preset_extent_m: float = loss_models.PRESET_EXTENT_M,
        cell_m: float = 500.0,
        epsilon_model: float = float(loss_models.DP_DEFAULTS["epsilon_model"]),
        dp_centre: tuple[float, float] = DEFAULT_CENTRE,
        dp_extent_m: float = float(loss_models.DP_DEFAULTS["extent_m"]),
        dp_cell_m: float = float(loss_models.DP_DEFAULTS["cell_m"]),
        new_place_radius_m: float = 100.0,
        total_budget: float = 1.0,
        rng: Any = None,
    ) -> None:
        if not isinstance(trajectory, pd.DataFrame) or not {"lat", "lon"} <= set(trajectory):
            raise ParameterError("trajectory must be a DataFrame with lat and lon columns")
        if len(trajectory) == 0:
            raise ParameterError("trajectory is empty")
        self._data = trajectory
        self.users: list[str] = users(trajectory) if "uid" in trajectory.columns else []
        self.session = Session(total_budget=check_epsilon(total_budget, "total_budget"))
        """The accounting (:class:`lmdk_core.session.Session`): previews, draws, ledgers."""
        self._rng = None if rng is None else as_rng(rng)
        self._places: list[Place] = []
        self.selected: str | None = None
        self._traj_cache: dict[Any, pd.DataFrame] = {}
        self._auto_steps: dict[Any, float | None] = {}
        self._mask_cache: dict[Any, np.ndarray] = {}
        self._seeded: dict[Hashable, Preview] = {}
        self._generation: dict[Hashable, int] = {}
        self._presets: dict[Any, Any] = {}
        self._spans: dict[int, tuple[pd.DataFrame, float]] = {}
        self._released: list[tuple[Release, float, Any, tuple[str, ...]]] = []
        self._dp_models: dict[tuple[tuple, int], Any] = {}  # (grid, |L| + 1) -> model
        self.settings: dict[str, Any] = {}
        self.update(user=user if user is not None else (self.users[0] if self.users else None),
                    epsilon=epsilon, scheme=scheme, radius_m=radius_m, interval_s=interval_s,
                    params=dict(params or {}), loss_model=loss_model, strength=strength,
                    preset_extent_m=preset_extent_m, cell_m=cell_m,
                    epsilon_model=epsilon_model, dp_centre=dp_centre, dp_extent_m=dp_extent_m,
                    dp_cell_m=dp_cell_m,
                    new_place_radius_m=new_place_radius_m, _compute=False)
        for p in places:
            self._places.append(self._as_place(p))
        self.result: ExplorerResult = self.compute()

    # ------------------------------------------------------------------ settings

    def _check(self, key: str, value: Any) -> Any:
        if key in ("epsilon", "epsilon_model"):
            return check_epsilon(value, key)
        if key == "scheme":
            if value not in SCHEMES:
                raise ParameterError(f"unknown scheme {value!r}; valid: {', '.join(SCHEMES)}")
            return value
        if key in ("radius_m", "cell_m", "new_place_radius_m", "dp_extent_m", "dp_cell_m",
                   "preset_extent_m"):
            return check_positive(value, key)
        if key == "interval_s":
            if value is None or value == "auto":
                return value
            return check_positive(value, "interval_s")
        if key == "loss_model":
            if value not in LOSS_MODELS and value not in loss_models.STRENGTHS:
                why = (" (a model fitted to the true trajectory gives no bound on the loss of "
                       "the release)" if value == "trajectory" else "")
                raise ParameterError(
                    f"loss_model must be one of {', '.join(LOSS_MODELS)}, got {value!r}{why}")
            return value
        if key == "strength":
            if value not in loss_models.STRENGTHS:
                raise ParameterError(
                    f"strength must be one of {', '.join(loss_models.STRENGTHS)}")
            return value
        if key == "dp_centre":
            try:
                lat, lon = (float(value[0]), float(value[1]))
            except (TypeError, ValueError, IndexError):
                raise ParameterError("dp_centre must be a public (lat, lon) pair") from None
            if not (math.isfinite(lat) and math.isfinite(lon) and -90 <= lat <= 90):
                raise ParameterError(f"dp_centre ({lat}, {lon}) is not a valid (lat, lon)")
            return (lat, lon)
        if key == "user":
            if self.users and str(value) not in self.users:
                raise ParameterError(f"unknown user {value!r}; the data has {self.users}")
            return None if value is None else str(value)
        if key == "params":
            if not isinstance(value, Mapping):
                raise ParameterError("params must be a mapping of scheme parameters")
            return dict(value)
        raise ParameterError(f"unknown setting {key!r}")

    def update(self, *, _compute: bool = True, **settings: Any) -> ExplorerResult | None:
        """Change settings (validated first: on error nothing changes), then show the preview
        of the new setting (or its real draw, if one was made). Costs nothing."""
        checked = {k: self._check(k, v) for k, v in settings.items()}
        if checked.get("loss_model") in loss_models.STRENGTHS:  # shorthand for a preset
            checked["strength"] = checked["loss_model"]
            checked["loss_model"] = "preset"
        if "scheme" in checked and "params" not in checked and \
                checked["scheme"] != self.settings.get("scheme"):
            checked["params"] = {}
        before, self.settings = self.settings, {**self.settings, **checked}
        if not _compute:
            return None
        try:
            self.release_settings  # noqa: B018 - validates the release settings together
            result = self.compute()
        except Exception:
            self.settings = before
            raise
        self.result = result
        return result

    @property
    def release_settings(self) -> ReleaseSettings:
        """The settings of the release (ε, scheme, its parameters, radius r) as the core
        session identifies them."""
        s = self.settings
        return ReleaseSettings(epsilon=s["epsilon"], scheme=s["scheme"],
                               params=tuple(s["params"].items()), radius_m=s["radius_m"])

    # ------------------------------------------------------------------ places

    @property
    def places(self) -> list[Place]:
        """The landmark places (a copy; change them with add_place / remove_place)."""
        return list(self._places)

    def _as_place(self, p: Any) -> Place:
        place = as_place(p, row=len(self._places) + 1, default_name=self._new_name(),
                         default_radius_m=self.settings["new_place_radius_m"])
        if any(q.name == place.name for q in self._places):
            raise ParameterError(f"a place named {place.name!r} already exists")
        return place

    def _new_name(self) -> str:
        return new_place_name(p.name for p in self._places)

    @renamed(radius_m="place_radius_m")
    def add_place(self, lat: float, lon: float, place_radius_m: float | None = None,
                  name: str | None = None) -> Place:
        """Add a landmark place (a map click) and show its preview. Returns the place.

        ``place_radius_m``: the place's radius in metres (None: the ``new_place_radius_m``
        setting; ``radius_m=`` is a deprecated alias)."""
        r = self.settings["new_place_radius_m"] if place_radius_m is None else place_radius_m
        place = self._as_place(Place(name or self._new_name(), lat, lon, r))
        self._places.append(place)
        self.result = self.compute()
        return place

    def remove_place(self, name: str) -> None:
        """Remove the place called ``name`` and show the new setting's preview."""
        if not any(p.name == name for p in self._places):
            raise ParameterError(f"no place named {name!r}")
        self._places = [p for p in self._places if p.name != name]
        if self.selected == name:
            self.selected = None
        self.result = self.compute()

    def click_place(self, name: str) -> None:
        """A click on a place: the first selects it, a click on the selected place removes it."""
        if self.selected == name:
            self.remove_place(name)
        elif any(p.name == name for p in self._places):
            self.selected = name

    # ------------------------------------------------------------------ the setting

    @property
    def person(self) -> Hashable:
        """Whose ledger the current release counts in: the selected user (or "trajectory")."""
        user = self.settings["user"]
        return "trajectory" if user is None else user

    def _step(self) -> float | None:
        """The release interval in seconds actually used (None: every fix)."""
        interval = self.settings["interval_s"]
        if "time" not in self._data.columns:
            return None
        return self.auto_interval_s if interval == "auto" else interval

    @property
    def auto_interval_s(self) -> float | None:
        """The interval ``interval_s="auto"`` picks for the selected person, in seconds (None:
        every fix, or a trajectory without times); computed once per person."""
        if "time" not in self._data.columns:
            return None
        user = self.settings["user"]
        if user not in self._auto_steps:
            self._auto_steps[user] = auto_interval(self._selected())
        return self._auto_steps[user]

    @property
    def trajectory(self) -> pd.DataFrame:
        """The trajectory being released: the selected person, resampled to ``interval_s``."""
        key = (self.settings["user"], self.settings["interval_s"])
        if key not in self._traj_cache:
            df = self._selected()
            step = self._step()
            if step is not None:
                df = resample(df, step)
            self._traj_cache[key] = df.reset_index(drop=True)
        return self._traj_cache[key]

    def _places_key(self) -> tuple:
        return tuple(sorted((p.lat, p.lon, p.place_radius_m) for p in self._places))

    @property
    def landmarks(self) -> np.ndarray:
        """The real landmark mask over :attr:`trajectory` (read-only)."""
        key = (self.settings["user"], self.settings["interval_s"], self._places_key())
        if key not in self._mask_cache:
            traj = self.trajectory
            mask = (landmark_mask(traj, self._places) if self._places
                    else np.zeros(len(traj), dtype=bool))
            mask.setflags(write=False)
            if len(self._mask_cache) >= _KEPT:
                self._mask_cache.pop(next(iter(self._mask_cache)))
            self._mask_cache[key] = mask
        return self._mask_cache[key]

    @property
    def key(self) -> Hashable:
        """The setting the release shown belongs to: (person, release interval in seconds,
        places, release settings). One real draw at most per key, ever."""
        return ("release", self.person, self._step(), self._places_key(), self.release_settings)

    # ------------------------------------------------------------------ previews and draws

    def _preview(self) -> Preview:
        key = self.key
        gen_key = (key, self._generation.get(key, 0))
        settings, traj, mask = self.release_settings, self.trajectory, self.landmarks
        if self._rng is None:
            return self.session.preview(traj, mask, settings, key=gen_key)
        if gen_key not in self._seeded:  # seeded from the caller's rng: reproducible
            rel = release_locations(traj, mask, epsilon=settings.epsilon,
                                    scheme=settings.scheme, radius_m=settings.radius_m,
                                    rng=self._rng, noise="fast", **dict(settings.params))
            if len(self._seeded) >= _KEPT:
                self._seeded.pop(next(iter(self._seeded)))
            self._seeded[gen_key] = Preview(rel, mask, None, settings)
        return self._seeded[gen_key]

    def new_preview(self) -> ExplorerResult:
        """Another simulated draw for the current setting (free). Refused when this setting
        has a real draw: a real release is never redrawn."""
        if self.session.drawn(self.key) is not None:
            raise ParameterError("this setting has a real draw, which is never redrawn; change "
                                 "a setting or a place to explore further")
        self._generation[self.key] = self._generation.get(self.key, 0) + 1
        self.result = self.compute()
        return self.result

    def plan(self) -> Plan:
        """What :meth:`draw` would cost now (computed before any noise; nothing is drawn)."""
        return self.session.plan(self.person, self.trajectory, self.landmarks,
                                 self.release_settings, key=self.key)

    def draw(self) -> ExplorerResult:
        """Draw the real release for the current setting: fresh OS randomness, recorded in the
        person's ledger at once (it counts whether or not it is ever exported). The same
        setting returns the same draw. Raises BudgetExceededError (nothing drawn) when it would
        pass the total budget."""
        self.session.draw(self.person, self.trajectory, self.landmarks, self.release_settings,
                          key=self.key)
        self.result = self.compute()
        return self.result

    @property
    def drawn(self) -> Drawn | None:
        """The real draw of the current setting, if one was made."""
        return self.session.drawn(self.key)

    def spent(self) -> float:
        """The total loss of everything drawn for the current person (ledger, at its reference
        distance): releases and DP models."""
        return self.session.spent(self.person)

    def total_budget(self) -> float:
        """The total loss the current person accepts across this session's real draws."""
        return self.session.total_budget(self.person)

    def set_total_budget(self, total_budget: float) -> None:
        """Change the current person's total budget: a deliberate act, never a side effect of
        the ε of the next release."""
        self.session.set_total_budget(self.person, total_budget=total_budget)
        self.result = self.compute()

    # ------------------------------------------------------------------ correlation models

    def _dp_params(self) -> dict[str, Any]:
        s = self.settings
        return {"epsilon_model": s["epsilon_model"], "centre": s["dp_centre"],
                "extent_m": s["dp_extent_m"], "cell_m": s["dp_cell_m"],
                "radius_m": s["radius_m"]}

    def _dp_grid_key(self) -> tuple:
        return (self.person, self._step(), tuple(sorted(self._dp_params().items())))

    def dp_model(self) -> Any:
        """The DP model already drawn for the current person, interval and grid whose
        ε_model covers the current landmarks (``protects`` ≥ |L| + 1), or None."""
        need = int(self.landmarks.sum()) + 1
        grid = self._dp_grid_key()
        fits = [m for (g, _k), m in self._dp_models.items() if g == grid and m.protects >= need]
        return min(fits, key=lambda m: m.protects) if fits else None

    def draw_dp_model(self) -> Any:
        """Draw the DP correlation model for the current setting (:meth:`Session.dp_model`):
        transition counts of the true trajectory on the public grid with fresh noise,
        ε_model-DP for changes of up to |L| + 1 points, charged to the ledger at once. A model
        that already covers the current landmarks is returned instead (never paid twice)."""
        model = self.dp_model()
        if model is None:
            need = int(self.landmarks.sum()) + 1
            key = (self._dp_grid_key(), need)
            model = self.session.dp_model(self.person, self.trajectory, key=("dp", *key),
                                          protected_events=need, **self._dp_params())
            self._dp_models[key] = model
        self.result = self.compute()
        return model

    def _model(self, release: Release) -> tuple[Any, tuple[str, ...]]:
        """(the correlation model chosen, notes) for ``release`` (the one shown)."""
        s = self.settings
        source = s["loss_model"]
        if source == "none":
            return None, ()
        if source == "preset":
            key = (s["strength"], s["preset_extent_m"], s["radius_m"])
            if key not in self._presets:
                self._presets[key] = loss_models.preset_model(
                    s["strength"], radius_m=s["radius_m"], extent_m=s["preset_extent_m"])
            return self._presets[key], ()
        if source == "released":
            for rel, cell, model, notes in self._released:
                if rel is release and cell == s["cell_m"]:
                    return model, notes
            model, caught = loss_models.released_model(release, cell_m=s["cell_m"])
            self._released = [*self._released[-(_KEPT - 1):],
                              (release, s["cell_m"], model, tuple(caught))]
            return model, tuple(caught)
        model = self.dp_model()
        if model is None:
            k = int(self.landmarks.sum()) + 1
            return None, (
                f"No DP model drawn yet for this grid and these landmarks: draw_dp_model() "
                f"(the button) draws one, costing ε_model = {s['epsilon_model']:g} for changes "
                f"of up to {k:,} points, charged to the ledger at once.",)
        return model, ()

    # ------------------------------------------------------------------ computation

    def compute(self) -> ExplorerResult:
        """The landmark mask, the release shown (the real draw of this setting if there is
        one, else its preview), G_t, the errors and the loss bounds. Draws nothing real."""
        traj, mask = self.trajectory, self.landmarks
        drawn = self.session.drawn(self.key)
        preview = None if drawn is not None else self._preview()
        src: Drawn | Preview = drawn if drawn is not None else preview  # type: ignore[assignment]
        rel = src.release
        g = landmark_guarantee(rel.budget, mask)
        errors = error_metres(traj, rel)
        model: Any = None
        loss: Any = None
        notes: tuple[str, ...] = ()
        covered, beyond = None, False
        try:
            model, notes = self._model(rel)
            if model is not None:
                loss = loss_models.release_loss(rel, mask, model,
                                                separation=self.settings["radius_m"])
            if model is not None:
                # The user's own trace compared with a public setting, shown on their own
                # screen: not a release (never exported; the bounds and budgets ignore it).
                covered = loss_models.covered_m(model)
                note = loss_models.extent_warning(model, self._span(traj),
                                                  self.settings["radius_m"])
                if note is not None:
                    beyond, notes = True, (*notes, note)
        except LmdkError as exc:
            model, loss, notes = None, None, (*notes, f"No loss chart: {exc}")
        return ExplorerResult(traj=traj, landmarks=mask, release=rel,
                              kind="real" if drawn is not None else "preview", guarantee=g,
                              errors_m=errors, model=model, loss=loss, warnings=tuple(notes),
                              drawn=drawn, preview=preview,
                              covered_m=covered if loss is not None else None,
                              beyond=beyond and loss is not None,
                              radius_m=float(self.settings["radius_m"]))

    def _span(self, traj: pd.DataFrame) -> float:
        """The largest distance between two fixes of ``traj`` (cached per trajectory)."""
        hit = self._spans.get(id(traj))
        if hit is None or hit[0] is not traj:
            hit = (traj, loss_models.trace_span_m(traj["lat"], traj["lon"]))
            self._spans = {**dict(list(self._spans.items())[-(_KEPT - 1):]), id(traj): hit}
        return hit[1]

    # ------------------------------------------------------------------ export

    def _real(self) -> Drawn:
        drawn = self.result.drawn
        if drawn is None or self.result.kind != "real":
            raise ParameterError(PREVIEW_REFUSAL)
        return drawn

    def model_info(self) -> dict[str, Any] | None:
        """Source, description and parameters of the model behind the loss shown."""
        model, s = self.result.model, self.settings
        if model is None:
            return None
        params: dict[str, Any] = {"loss_model": s["loss_model"], "radius_m": s["radius_m"]}
        if s["loss_model"] == "preset":
            params.update(strength=s["strength"], extent_m=s["preset_extent_m"],
                          cell_m=round(model.steps.offset / math.sqrt(2.0), 1))
        elif s["loss_model"] == "released":
            params.update(cell_m_requested=s["cell_m"])
        else:
            params.update(self._dp_params(), protected_events=model.protects)
        return {"source": model.source, "source_text": model.source_text,
                "description": model.description, "parameters": params,
                "epsilon_model": float(model.epsilon_model), "n_states": model.n_states,
                "neighbour_relation": model.steps.relation,
                "separation_m": s["radius_m"]}

    def report(self) -> dict:
        """The JSON-ready privacy report of the real draw shown (PRIVATE: see ``private``).

        Same format as the dashboard's (:func:`lmdk_core.export.privacy_report`); the ledger's
        spent and total budget are in ``settings``; no seed is written. Raises ParameterError
        for a preview: a simulation is never exported."""
        drawn = self._real()
        r, s = self.result, self.settings
        settings = {
            "private": PRIVATE_NOTE,
            "user": s["user"],
            "epsilon": s["epsilon"],
            "scheme": s["scheme"],
            "radius_m": s["radius_m"],
            "interval_s": self._step(),
            "loss_model": s["loss_model"],
            "ledger": {"person": str(self.person), "spent": self.spent(),
                       "total_budget": self.total_budget(),
                       "real_draws": len(self.session.draws(self.person))},
        }
        mae = r.mae_m
        out = privacy_report(
            release=r.release, epsilon=s["epsilon"], settings=settings, places=self._places,
            guarantee=r.guarantee, correlation=self.model_info(),
            temporal=None if r.loss is None else r.loss.loss,
            landmark_loss=None if r.loss is None else r.loss,
            metrics={"mae_m": mae if math.isfinite(mae) else None},
            release_interval_s=self._step() or 0.0,
        )
        self.session.record_download(drawn)
        return out

    def public_release(self) -> pd.DataFrame:
        """The publishable file of the real draw shown: time (if any), lat, lon — nothing
        else (ε_t, published flags and landmarks would tell where the landmarks are), one row
        per timestamp that carries a release (:func:`lmdk_core.export.public_frame`, the rows
        of the public CSV). Raises ParameterError for a preview."""
        drawn = self._real()
        self.session.record_download(drawn)
        return public_frame(drawn.release)

    def _selected(self) -> pd.DataFrame:
        user = self.settings["user"]
        return self._data if user is None or not self.users else select_user(self._data, user)
