"""The explorer's state and computation, without any widget (pure Python, testable headless).

An :class:`ExplorerSession` holds one person's trajectory, the landmark places and the privacy
settings, and recomputes — with the library functions the dashboard uses — the landmark mask,
a release, the landmark guarantee G_t, the per-timestamp error and the privacy loss under
temporal correlation. :class:`~lmdk_core.jupyter.explorer.Explorer` draws it in a notebook.

Randomness: by default every release draws fresh OS entropy (``rng=None``); a seed or Generator
is for simulations and tests only and never appears in :meth:`ExplorerSession.report`.
Every recomputation is a new release: an exploration, not a publication (publishing several
releases of the same data composes their budgets).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .. import correlation
from ..accounting import landmark_guarantee
from ..errors import ParameterError
from ..export import privacy_report
from ..landmarks import landmark_mask
from ..mechanisms import as_rng
from ..metrics import error_metres, mae_metres
from ..places import Place, as_place
from ..release import SCHEMES, Release, release_locations
from ..trajectory import resample, select_user, users
from ..validation import check_epsilon, check_positive

__all__ = [
    "INTERVALS_S",
    "LOSS_MODELS",
    "MAX_TIMESTAMPS",
    "ExplorerResult",
    "ExplorerSession",
    "auto_interval",
]

INTERVALS_S: tuple[float, ...] = (30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)
"""Release intervals (seconds) offered by the explorer besides "every fix" (None)."""

MAX_TIMESTAMPS = 5000
"""``interval_s="auto"`` picks the shortest interval that keeps at most this many timestamps."""

LOSS_MODELS: tuple[str, ...] = ("trajectory", "strong", "moderate", "weak", "none")
"""Where the Markov model of the loss chart comes from: estimated from the person's own
trajectory on a grid of ``cell_m`` metres, a synthetic strength preset (30 states,
:data:`lmdk_core.correlation.STRENGTH_PRESETS`), or no correlation chart."""

SYNTHETIC_STATES = 30
PRIVATE_NOTE = (
    "PRIVATE: computed from the true trajectory (errors, landmark timestamps, correlation model); "
    "do not publish. Only the released series (Release.to_frame without the landmark column) is "
    "meant for publication, and only one release per dataset and budget."
)


def auto_interval(traj: pd.DataFrame, max_timestamps: int = MAX_TIMESTAMPS) -> float | None:
    """The shortest of :data:`INTERVALS_S` (or None = every fix) giving ≤ ``max_timestamps``."""
    if len(traj) <= max_timestamps:
        return None
    for step in INTERVALS_S:
        if len(resample(traj, step)) <= max_timestamps:
            return step
    return INTERVALS_S[-1]


@dataclass(frozen=True, eq=False)
class ExplorerResult:
    """One recomputation: the released data and everything derived from it.

    ``traj`` the released trajectory (after resampling); ``landmarks`` bool mask over it;
    ``release`` the Release; ``guarantee`` G_t; ``errors_m`` per-timestamp error (m);
    ``loss`` a LandmarkTemporalLoss or None (``loss_model="none"``); ``warnings`` messages
    raised while computing (e.g. a coarser grid chosen for the correlation model).
    """

    traj: pd.DataFrame
    landmarks: np.ndarray
    release: Release
    guarantee: np.ndarray
    errors_m: np.ndarray
    loss: Any
    warnings: tuple[str, ...]

    @property
    def mae_m(self) -> float:
        """Mean location error in metres over timestamps with an output."""
        return mae_metres(self.traj, self.release)

    def summary(self) -> dict[str, Any]:
        """The headline numbers shown above the charts."""
        eps = self.release.epsilon
        g = self.guarantee
        out = {
            "timestamps": len(self.release),
            "landmark timestamps": int(self.landmarks.sum()),
            "MAE (m)": self.mae_m,
            "fresh releases": self.release.fresh_share,
            "budget spent Σε_t": self.release.budget_spent,
            "max G_t": float(g.max()) if g.size else 0.0,
            "landmark-private (G_t ≤ ε)": bool(np.all(g <= eps + 1e-9)),
        }
        if self.loss is not None:
            out["max TPL"] = float(np.max(self.loss.loss.tpl)) if g.size else 0.0
            out["max landmark loss (correlated)"] = (
                float(np.max(self.loss.composed)) if g.size else 0.0
            )
        return out


class ExplorerSession:
    """Places, settings and the latest result for one person's trajectory.

    ``trajectory``: DataFrame with lat, lon, time (and uid when several people: pick one with
    ``user``; default the first). Settings (keyword-only, validated): ``epsilon`` total budget
    ε > 0; ``scheme`` one of :data:`lmdk_core.SCHEMES`; ``radius_m`` protection radius (m);
    ``interval_s`` release interval in seconds, None (every fix) or "auto"; ``params`` the
    scheme's parameters; ``loss_model`` one of :data:`LOSS_MODELS`; ``cell_m`` grid of the
    trajectory model (m); ``new_place_radius_m`` radius of places added by a click (m).
    ``rng``: None (fresh OS randomness for every release, the default) or a seed/Generator for
    reproducible simulations and tests.
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
        loss_model: str = "trajectory",
        cell_m: float = 500.0,
        new_place_radius_m: float = 100.0,
        rng: Any = None,
    ) -> None:
        if not isinstance(trajectory, pd.DataFrame) or not {"lat", "lon"} <= set(trajectory):
            raise ParameterError("trajectory must be a DataFrame with lat and lon columns")
        if len(trajectory) == 0:
            raise ParameterError("trajectory is empty")
        self._data = trajectory
        self.users: list[str] = users(trajectory) if "uid" in trajectory.columns else []
        self._rng = None if rng is None else as_rng(rng)
        self._places: list[Place] = []
        self.selected: str | None = None
        self._traj_cache: dict[Any, pd.DataFrame] = {}
        self._model_cache: dict[Any, tuple[Any, Any, tuple[str, ...]]] = {}
        self.settings: dict[str, Any] = {}
        self.update(user=user if user is not None else (self.users[0] if self.users else None),
                    epsilon=epsilon, scheme=scheme, radius_m=radius_m, interval_s=interval_s,
                    params=dict(params or {}), loss_model=loss_model, cell_m=cell_m,
                    new_place_radius_m=new_place_radius_m, _compute=False)
        for p in places:
            self._places.append(self._as_place(p))
        self.result: ExplorerResult = self.compute()

    # ------------------------------------------------------------------ settings

    def _check(self, key: str, value: Any) -> Any:
        if key == "epsilon":
            return check_epsilon(value)
        if key == "scheme":
            if value not in SCHEMES:
                raise ParameterError(f"unknown scheme {value!r}; valid: {', '.join(SCHEMES)}")
            return value
        if key in ("radius_m", "cell_m", "new_place_radius_m"):
            return check_positive(value, key)
        if key == "interval_s":
            if value is None or value == "auto":
                return value
            return check_positive(value, "interval_s")
        if key == "loss_model":
            if value not in LOSS_MODELS:
                raise ParameterError(f"loss_model must be one of {', '.join(LOSS_MODELS)}")
            return value
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
        """Change settings (validated first: on error nothing changes), then recompute."""
        checked = {k: self._check(k, v) for k, v in settings.items()}
        if "scheme" in checked and "params" not in checked and \
                checked["scheme"] != self.settings.get("scheme"):
            checked["params"] = {}
        self.settings.update(checked)
        if _compute:
            self.result = self.compute()
            return self.result
        return None

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
        names = {p.name for p in self._places}
        k = len(self._places) + 1
        while f"Place {k}" in names:
            k += 1
        return f"Place {k}"

    def add_place(self, lat: float, lon: float, radius_m: float | None = None,
                  name: str | None = None) -> Place:
        """Add a landmark place (a map click) and recompute. Returns the place."""
        r = self.settings["new_place_radius_m"] if radius_m is None else radius_m
        place = self._as_place(Place(name or self._new_name(), lat, lon, r))
        self._places.append(place)
        self.result = self.compute()
        return place

    def remove_place(self, name: str) -> None:
        """Remove the place called ``name`` and recompute."""
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

    # ------------------------------------------------------------------ computation

    @property
    def trajectory(self) -> pd.DataFrame:
        """The trajectory being released: the selected person, resampled to ``interval_s``."""
        user, interval = self.settings["user"], self.settings["interval_s"]
        key = (user, interval)
        if key not in self._traj_cache:
            df = self._data if user is None or not self.users else select_user(self._data, user)
            if "time" in df.columns:
                step = auto_interval(df) if interval == "auto" else interval
                if step is not None:
                    df = resample(df, step)
            self._traj_cache[key] = df.reset_index(drop=True)
        return self._traj_cache[key]

    def _model(self, traj: pd.DataFrame) -> tuple[Any, Any, tuple[str, ...]]:
        """(P^B, P^F) as precomputed envelopes, and warnings, cached per source."""
        source = self.settings["loss_model"]
        key = (source, self.settings["user"], self.settings["interval_s"],
               self.settings["cell_m"] if source == "trajectory" else None)
        if key not in self._model_cache:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                if source == "trajectory":
                    model = correlation.transition_matrix(traj, cell_m=self.settings["cell_m"])
                    pb, pf = model.P_backward, model.P_forward
                else:
                    pb = pf = correlation.synthetic_transition_matrix(SYNTHETIC_STATES, source)
            env_b = correlation.envelope(pb, name="P_backward")
            env_f = env_b if pf is pb else correlation.envelope(pf, name="P_forward")
            self._model_cache[key] = (env_b, env_f, tuple(str(w.message) for w in caught))
        return self._model_cache[key]

    def compute(self) -> ExplorerResult:
        """Recompute the landmark mask, a new release, G_t, the errors and the loss."""
        s = self.settings
        traj = self.trajectory
        mask = landmark_mask(traj, self._places) if self._places else np.zeros(len(traj), bool)
        rel = release_locations(traj, mask, epsilon=s["epsilon"], scheme=s["scheme"],
                                radius_m=s["radius_m"], rng=self._rng, **s["params"])
        g = landmark_guarantee(rel.eps, mask)
        errors = error_metres(traj, rel)
        loss = None
        notes: tuple[str, ...] = ()
        if s["loss_model"] != "none":
            env_b, env_f, notes = self._model(traj)
            loss = correlation.landmark_temporal_loss(rel.eps, mask, env_b, env_f)
        return ExplorerResult(traj=traj, landmarks=mask, release=rel, guarantee=g,
                              errors_m=errors, loss=loss, warnings=notes)

    def redraw(self) -> ExplorerResult:
        """A new release with the same settings (fresh randomness)."""
        self.result = self.compute()
        return self.result

    # ------------------------------------------------------------------ export

    def report(self) -> dict:
        """The JSON-ready privacy report of the current release (PRIVATE: see ``private``).

        Same format as the dashboard's (:func:`lmdk_core.export.privacy_report`); no seed is
        written, whatever randomness was used.
        """
        r = self.result
        s = self.settings
        settings = {
            "private": PRIVATE_NOTE,
            "user": s["user"],
            "epsilon": s["epsilon"],
            "scheme": s["scheme"],
            "radius_m": s["radius_m"],
            "interval_s": (auto_interval(self._selected()) if s["interval_s"] == "auto"
                           else s["interval_s"]),
            "loss_model": s["loss_model"],
            "cell_m": s["cell_m"] if s["loss_model"] == "trajectory" else None,
        }
        mae = r.mae_m
        return privacy_report(
            release=r.release, epsilon=s["epsilon"], settings=settings, places=self._places,
            guarantee=r.guarantee,
            temporal=None if r.loss is None else r.loss.loss,
            landmark_loss=None if r.loss is None else r.loss.composed,
            metrics={"mae_m": mae if math.isfinite(mae) else None},
        )

    def _selected(self) -> pd.DataFrame:
        user = self.settings["user"]
        return self._data if user is None or not self.users else select_user(self._data, user)
