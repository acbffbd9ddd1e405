"""Compare release schemes on the same trajectory, landmarks, budget and random draws.

:func:`compare_schemes` releases the trajectory ``runs`` times with every scheme and summarises
utility (mean location error in metres, share of fresh releases) next to privacy (budget spent,
the largest landmark guarantee G_t, and whether G_t ≤ ε everywhere). It shows what landmark
privacy buys: user-level protection is private but very noisy, event-level is accurate but not
landmark-private, the landmark schemes sit in between.

Randomness: the comparison is a simulation (its releases are never published). ``rng`` (None =
fresh OS entropy, or an int seed for a reproducible table) seeds one SeedSequence whose
``spawn(runs)`` gives one independent child per run; in run k every scheme draws from a fresh
generator on child k (common random numbers), so differences between schemes are not noise
between draws.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .accounting import as_landmark_mask, landmark_guarantee
from .errors import ParameterError
from .landmarks import trajectory_points
from .metrics import mae_metres
from .noise.source import simulation_rng, spawn_seeds
from .release import SCHEMES, release_locations
from .validation import check_epsilon, check_int, check_positive

__all__ = [
    "COLUMN_LABELS", "COMPARISON_COLUMNS", "DUMMY_COMPARISON_COLUMNS", "compare_schemes",
    "compare_with_dummies", "display_frame",
]

COMPARISON_COLUMNS = (
    "scheme",
    "mae_m_mean",
    "mae_m_std",
    "fresh_share_mean",
    "budget_spent",
    "max_guarantee",
    "landmark_private",
    "runs",
)
"""Columns of :func:`compare_schemes` output, in order."""


def _run_seeds(rng: Any, runs: int) -> list[Any]:
    """One independent SeedSequence child per run from ``rng`` (None = OS entropy, int = seed)."""
    if rng is not None and (
        not isinstance(rng, (int, np.integer)) or isinstance(rng, bool) or rng < 0
    ):
        raise ParameterError(f"rng must be None or an integer seed >= 0, got {rng!r}")
    return spawn_seeds(None if rng is None else int(rng), runs)


def _mean_published(errors: np.ndarray) -> float:
    """Mean of the per-run errors over the runs that published something; NaN (no warning) when
    none did."""
    ok = errors[np.isfinite(errors)]
    return float(ok.mean()) if ok.size else float("nan")


def compare_schemes(
    traj: Any,
    landmarks: Any = None,
    *,
    epsilon: float,
    schemes: Sequence[str] = SCHEMES,
    runs: int = 10,
    rng: int | None = None,
    radius_m: float = 200.0,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    tol: float = 1e-9,
) -> pd.DataFrame:
    """One row per scheme, averaged over ``runs`` independent releases of ``traj``.

    ``traj``: DataFrame with lat, lon (or a (lat, lon) pair); ``landmarks``: bool mask or
    indices; ``epsilon``: total budget ε; ``radius_m``: planar-Laplace protection radius (m);
    ``params``: per-scheme parameters, e.g. ``{"bd": {"w": 20}}``; ``rng``: None (fresh OS
    entropy) or an int ≥ 0 seed for a reproducible table.

    Columns: ``scheme``; ``mae_m_mean``/``mae_m_std`` — mean and sample std (ddof=1; 0 for one
    run) over runs of the per-run mean location error in metres (timestamps with no output yet
    excluded, as in :func:`lmdk_core.metrics.mae_metres`); ``fresh_share_mean`` — mean share of
    timestamps with a fresh release; ``budget_spent`` — mean Σ_t ε_t; ``max_guarantee`` — largest
    G_t over all timestamps and runs; ``landmark_private`` — G_t ≤ ε + ``tol`` everywhere in every
    run; ``runs``.
    """
    epsilon = check_epsilon(epsilon)
    runs = check_int(runs, "runs", minimum=1)
    radius_m = check_positive(radius_m, "radius_m")
    if isinstance(schemes, str):
        schemes = (schemes,)
    schemes = tuple(schemes)
    unknown = [s for s in schemes if s not in SCHEMES]
    if unknown or not schemes:
        raise ParameterError(
            f"unknown scheme(s) {unknown or '(none given)'}; valid schemes: {', '.join(SCHEMES)}"
        )
    params = dict(params or {})
    stray = [s for s in params if s not in schemes]
    if stray:
        raise ParameterError(
            f"params given for scheme(s) not compared: {', '.join(map(str, stray))}"
        )
    children = _run_seeds(rng, runs)

    lat, lon = trajectory_points(traj)
    mask = as_landmark_mask(landmarks, lat.size)
    points = (lat, lon)

    rows = []
    for scheme in schemes:
        mae = np.empty(runs)
        fresh = np.empty(runs)
        spent = np.empty(runs)
        gmax = np.empty(runs)
        for k, child in enumerate(children):
            rel = release_locations(points, mask, epsilon=epsilon, scheme=scheme,
                                    radius_m=radius_m, rng=simulation_rng(child),
                                    noise="fast", **params.get(scheme, {}))
            mae[k] = mae_metres(points, rel)
            fresh[k] = rel.fresh_share
            spent[k] = rel.budget_spent
            g = landmark_guarantee(rel.budget, mask)
            gmax[k] = g.max() if g.size else 0.0
        rows.append({
            "scheme": scheme,
            "mae_m_mean": _mean_published(mae),
            "mae_m_std": float(np.nanstd(mae, ddof=1)) if np.isfinite(mae).sum() > 1 else 0.0,
            "fresh_share_mean": float(fresh.mean()),
            "budget_spent": float(spent.mean()),
            "max_guarantee": float(gmax.max()),
            "landmark_private": bool(np.all(gmax <= epsilon + tol)),
            "runs": runs,
        })
    return pd.DataFrame(rows, columns=list(COMPARISON_COLUMNS))


# Dummy landmarks (lmdk_core.dummies): each scheme with and without hiding L, same total ε.

DUMMY_COMPARISON_COLUMNS = (
    "scheme",
    "mae_real",
    "mae_dummies",
    "mae_ratio",
    "dummies_mean",
    "landmark_private_dummies",
    "runs",
)
"""Columns of :func:`compare_with_dummies` output, in order."""


def compare_with_dummies(
    data: Any,
    landmarks: Any,
    *,
    epsilon: float,
    epsilon_select: float,
    schemes: Sequence[str] = SCHEMES,
    runs: int = 10,
    rng: int | None = None,
    radius_m: float | None = None,
    sensitivity: float | None = None,
    generator: str = "greedy",
    max_dummies: int | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    tol: float = 1e-9,
) -> pd.DataFrame:
    """The dummy-landmark variant of each scheme next to the plain one, at the same total ε.

    Plain: the scheme on the true L with ε. Dummies: :func:`lmdk_core.dummies.release_hidden`
    (ε_sel = ``epsilon_select`` to choose L' ⊋ L, the scheme on L' with ε − ε_sel). ``data``: a
    trajectory (``radius_m``, default 200 m; error in metres) or, with ``sensitivity``, a numeric
    series (absolute error). Per run k both variants draw from generators on child k of
    ``SeedSequence(rng)`` (None: OS entropy; an int: a reproducible table) — a simulation, not a
    private release.

    Columns: ``mae_real`` / ``mae_dummies`` — mean over runs of the per-run MAE (NaN when the
    release published nothing in any run: Skip when the dummies cover every moment); ``mae_ratio`` —
    their ratio; ``dummies_mean`` — mean |L' \\ L|; ``landmark_private_dummies`` — G_t over L' ≤
    ε − ε_sel + ``tol`` in every run; ``runs``.
    """
    from .dummies import release_hidden
    from .metrics import mae
    from .release import release_values

    epsilon = check_epsilon(epsilon)
    runs = check_int(runs, "runs", minimum=1)
    schemes = (schemes,) if isinstance(schemes, str) else tuple(schemes)
    unknown = [s for s in schemes if s not in SCHEMES]
    if unknown or not schemes:
        raise ParameterError(
            f"unknown scheme(s) {unknown or '(none given)'}; valid schemes: {', '.join(SCHEMES)}"
        )
    children = _run_seeds(rng, runs)
    params = dict(params or {})
    if sensitivity is None:
        points = trajectory_points(data)
        n = points[0].size
        r = check_positive(200.0 if radius_m is None else radius_m, "radius_m")

        def plain(mask, gen, **kw):
            return release_locations(points, mask, epsilon=epsilon, scheme=kw.pop("scheme"),
                                     radius_m=r, rng=gen, noise="fast", **kw)

        def error(rel):
            return mae_metres(points, rel)
        space: dict[str, Any] = {"radius_m": r}
        payload: Any = points
    else:
        if radius_m is not None:
            raise ParameterError("give radius_m (locations) or sensitivity (values), not both")
        values = np.asarray(data, dtype=np.float64)
        n = values.size

        def plain(mask, gen, **kw):
            return release_values(values, mask, epsilon=epsilon, scheme=kw.pop("scheme"),
                                  sensitivity=sensitivity, rng=gen, noise="fast", **kw)

        def error(rel):
            return mae(values, rel)
        space = {"sensitivity": sensitivity}
        payload = values
    mask = as_landmark_mask(landmarks, n)
    rows = []
    for scheme in schemes:
        extra = dict(params.get(scheme, {}))
        real, hid, dum = np.empty(runs), np.empty(runs), np.empty(runs)
        private = True
        for k, child in enumerate(children):
            real[k] = error(plain(mask, simulation_rng(child), scheme=scheme, **extra))
            out = release_hidden(payload, mask, epsilon=epsilon, epsilon_select=epsilon_select,
                                 scheme=scheme, rng=simulation_rng(child),
                                 generator=generator, max_dummies=max_dummies, **space, **extra)
            hid[k] = error(out.release)
            dum[k] = out.hidden.n_dummies
            g = landmark_guarantee(out.release.budget, out.hidden.mask)
            private &= bool(g.size == 0 or g.max() <= out.release.epsilon + tol)
        mr, md = _mean_published(real), _mean_published(hid)
        rows.append({"scheme": scheme, "mae_real": mr, "mae_dummies": md,
                     "mae_ratio": md / mr if mr > 0 else float("nan"),
                     "dummies_mean": float(dum.mean()), "landmark_private_dummies": private,
                     "runs": runs})
    return pd.DataFrame(rows, columns=list(DUMMY_COMPARISON_COLUMNS))


# Display: human column names for both tables (units in the name; values formatted by the caller).

COLUMN_LABELS: dict[str, str] = {
    "scheme": "Scheme",
    "mae_m_mean": "Mean error",
    "mae_m_std": "± spread over runs",
    "fresh_share_mean": "Fresh releases",
    "budget_spent": "Budget spent (sum of ε per moment)",
    "max_guarantee": "Largest protection level used at your places",
    "landmark_private": "Protects your places (landmark-private)",
    "runs": "Runs",
    "mae_real": "Mean error, your places only",
    "mae_dummies": "Mean error, with dummy places",
    "mae_ratio": "Error ratio (with dummies / without)",
    "dummies_mean": "Dummy moments added (mean)",
    "landmark_private_dummies": "Protects your places with dummies",
}
"""Plain names of the columns of :func:`compare_schemes` and :func:`compare_with_dummies`."""


def display_frame(
    table: pd.DataFrame, formatters: Mapping[str, Callable[[Any], str]] | None = None,
) -> pd.DataFrame:
    """``table`` for people: each column passed through ``formatters[column]`` (if given) and
    renamed with :data:`COLUMN_LABELS` (unknown columns keep their name). Returns a new frame."""
    out = table.copy()
    for col, fmt in (formatters or {}).items():
        if col in out.columns:
            out[col] = [fmt(v) for v in out[col]]
    return out.rename(columns=COLUMN_LABELS)
