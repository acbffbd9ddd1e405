"""Evaluation on synthetic populations (simulation seeds only; nothing here is a real release).

* :func:`error_table` — mean absolute error of the released counts against the true bounded
  counts, for the personalised Sample mechanism and the baselines Minimum, Threshold and
  user-level, per public preference mix;
* :func:`ledger_dropout` — repeated daily queries through the ProPer ledger: how many users are
  left out (true, and as the noisy count the UI may show) and the bias this drop-out causes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._deprecation import renamed
from ..errors import ParameterError
from .core import bounded_records
from .generator import generate_population
from .grid import Grid
from .ledger import Ledger, ledger_counts
from .preferences import MIXES, draw_preferences
from .release import METHODS, release_methods

__all__ = ["error_table", "format_table", "ledger_dropout"]


def _population(n_users: int, points_per_user: int, days: int, seed: int, cell_m: float,
                landmark_kinds: Sequence[str]) -> tuple[pd.DataFrame, pd.DataFrame, Grid]:
    traj, places = generate_population(n_users, points_per_user=points_per_user, days=days,
                                       rng=seed)
    grid = Grid.covering(start="2008-02-02", end=pd.Timestamp("2008-02-02") + pd.Timedelta(
        days=days), cell_m=cell_m)
    return traj, places[places["name"].isin(list(landmark_kinds))], grid


@renamed(seed="rng")
def error_table(*, n_users: int = 1000, points_per_user: int = 200, days: int = 7,
                mixes: Sequence[str] = tuple(MIXES), scheme: str = "skip",
                methods: Sequence[str] = METHODS, tau: Any = "mean", cell_m: float = 1000.0,
                landmark_kinds: Sequence[str] = ("other",), repeats: int = 3, rng: int = 0,
                progress: Callable[[str, int, int], None] | None = None) -> pd.DataFrame:
    """One row per (mix, method): τ, MAE over all cells, MAE over occupied cells (true count
    > 0), share of bounded records kept (private, evaluation only), averaged over ``repeats``;
    ``rng``: the integer seed of the whole simulation."""
    seed = int(rng)
    unknown = [m for m in mixes if m not in MIXES]
    if unknown:
        raise ParameterError(f"unknown mix {unknown[0]!r}; use one of {', '.join(MIXES)}")
    traj, places, grid = _population(n_users, points_per_user, days, seed, cell_m,
                                     landmark_kinds)
    total = len(mixes) * repeats
    done = 0
    acc: dict[tuple[str, str], list[tuple[float, float, float, float]]] = {}
    for mi, name in enumerate(mixes):
        mix = MIXES[name]
        prefs = draw_preferences(traj["uid"].cat.categories, mix, rng=seed + 1000 + mi)
        for r in range(repeats):
            rels = release_methods(traj, prefs, grid=grid, methods=tuple(methods),
                                   places=places, scheme=scheme, tau=tau, mix=mix,
                                   rng=seed * 7919 + 31 * r + mi)
            for method, rel in rels.items():
                true = rel.private.true_counts
                err = np.abs(rel.counts - true)
                acc.setdefault((name, method), []).append((
                    rel.tau, float(err.mean()), float(err[true > 0].mean()),
                    rel.private.kept_counts.sum() / max(1, true.sum())))
            done += 1
            if progress is not None:
                progress("evaluate", done, total)
    rows = []
    for (name, method), vals in acc.items():
        v = np.array(vals)
        rows.append({"mix": name, "method": method, "tau": float(v[:, 0].mean()),
                     "mae": float(v[:, 1].mean()), "mae_occupied": float(v[:, 2].mean()),
                     "kept_share": float(v[:, 3].mean())})
    return pd.DataFrame(rows)


def format_table(table: pd.DataFrame) -> str:
    """The error table as fixed-width text: MAE on occupied cells, one column per method."""
    wide = table.pivot(index="mix", columns="method", values="mae_occupied")
    wide = wide.reindex(index=list(dict.fromkeys(table["mix"])),
                        columns=list(dict.fromkeys(table["method"])))
    head = "MAE of released counts on occupied cells (lower is better)\n"
    return head + wide.to_string(float_format=lambda v: f"{v:9.2f}")


@renamed(seed="rng")
def ledger_dropout(*, n_users: int = 300, points_per_user: int = 200, days: int = 7,
                   mix: str = "icde15", epsilon: float = 0.02, cell_m: float = 5000.0,
                   rng: int = 0) -> pd.DataFrame:
    """Repeated queries (one per day: that day's records counted per cell, ε per record, so a
    user present in k bins of the day costs k·ε)
    through a fresh ledger. Per query: users excluded (true — private, evaluation only — and the
    noisy display), the true total of all records, the true total of the records actually
    counted, the released total, and the liberal share among the counted users. ``rng``: the
    integer seed of the whole simulation."""
    seed = int(rng)
    traj, _, grid = _population(n_users, points_per_user, days, seed, cell_m, ())
    prefs = draw_preferences(traj["uid"].cat.categories, MIXES[mix], rng=seed + 1)
    rec = bounded_records(traj, grid=grid)
    led = Ledger(prefs, display_epsilon=0.01, max_displays=days)
    group = prefs.set_index("uid")["group"].reindex(led.uids).to_numpy()
    rows = []
    per_day = 86_400 // grid.bin_s
    for day in range(days):
        q = rec[(rec["bin"] >= day * per_day) & (rec["bin"] < (day + 1) * per_day)]
        q = q.assign(key=q["cell"])
        noisy, ch = ledger_counts(led, q, n_keys=grid.n_cells, epsilon=epsilon,
                                  rng=seed * 101 + day)
        counted = q["uid"].isin(pd.Index(led.uids[ch.included]))
        rows.append({"query": day + 1, "excluded_true": ch.n_excluded,
                     "excluded_shown": led.noisy_excluded(rng=seed * 103 + day),
                     "true_total": len(q), "counted_total": int(counted.sum()),
                     "released_total": int(noisy.sum()),
                     "liberal_share_counted": float(np.mean(group[ch.included] == "liberal"))
                     if ch.included.any() else float("nan")})
    led.check()
    return pd.DataFrame(rows)
