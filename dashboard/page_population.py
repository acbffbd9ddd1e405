"""Streamlit page "Population": personalised privacy for many people (standalone script).

Run it alone with ``streamlit run dashboard/page_population.py`` or add it to the app's
navigation (``st.Page("page_population.py", title="Population")``). The page generates a
synthetic population (or takes uploaded preferences), releases counts per grid cell × hour with
the personalised Sample mechanism and the baselines, and shows the released heat map over time
beside the true one, the error of each method, the users kept per bin (as released) and the
ledger's state across repeated queries. Every privacy decision lives in
:mod:`lmdk_core.population`; this module only arranges controls and views.

The page is a *simulation* workbench: the synthetic data and the seed exist only to explore
settings; the true counts are shown because the publisher holds the data (they are private and
never exported from here).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from dashboard import charts  # noqa: E402
from lmdk_core import LmdkError  # noqa: E402
from lmdk_core import population as P  # noqa: E402

METHOD_LABELS = {"personalised": "Personalised (Sample)", "threshold": "Threshold",
                 "minimum": "Minimum", "user_level": "User-level (uniform)"}
PAGE_CELL_M = 2000.0  # grid cell (m): 2 km keeps a recompute on 1,000 users under a second


@st.cache_resource(show_spinner=False, max_entries=4)
def population(n_users: int, points_per_user: int, seed: int) -> dict[str, Any]:
    """Synthetic population (no real person; shared cache is fine) and its public grid."""
    traj, places = P.generate_population(n_users, points_per_user=points_per_user, seed=seed)
    grid = P.Grid.covering(start="2008-02-02", end="2008-02-09", cell_m=PAGE_CELL_M)
    return {"traj": traj, "places": places[places["name"] == "other"], "grid": grid,
            "uids": traj["uid"].cat.categories}


def compute(pop: dict[str, Any], mix_name: str, scheme: str, tau: Any, seed: int,
            preferences: pd.DataFrame | None = None) -> dict[str, Any]:
    """Run every method on ``pop``; returns releases per method and the error table."""
    mix = P.MIXES[mix_name]
    prefs = preferences if preferences is not None else P.draw_preferences(
        pop["uids"], mix, rng=seed)
    public_mix = None if preferences is not None else mix
    releases = P.release_methods(
        pop["traj"], prefs, grid=pop["grid"], places=pop["places"], scheme=scheme, tau=tau,
        mix=public_mix, epsilon_floor=None if public_mix else float(prefs["epsilon"].min()),
        rng=seed)
    true = releases["personalised"].private.true_counts
    rows = []
    for m, rel in releases.items():
        err = np.abs(rel.counts - true)
        rows.append({"method": METHOD_LABELS[m], "τ": rel.tau,
                     "MAE (occupied cells)": float(err[true > 0].mean()) if (true > 0).any()
                     else 0.0, "MAE (all cells)": float(err.mean())})
    return {"releases": releases, "true": true, "prefs": prefs,
            "errors": pd.DataFrame(rows)}


def heatmap(z: np.ndarray, grid: P.Grid, title: str, zmax: float) -> go.Figure:
    lat, lon = grid.cell_centres()
    fig = go.Figure(go.Heatmap(z=z, x=lon, y=lat, zmin=0, zmax=zmax, colorscale="Viridis",
                               colorbar={"title": "count"}))
    fig.update_layout(title=title, height=360, margin={"l": 70, "r": 10, "t": 40, "b": 50},
                      xaxis_title="longitude", yaxis_title="latitude")
    return fig


def kept_figure(result: dict[str, Any], grid: P.Grid) -> go.Figure:
    x = grid.bin_starts()
    fig = go.Figure()
    fig.add_scatter(x=x, y=result["true"].sum(axis=(1, 2)), name="users present (private)",
                    line={"color": "#999999"})
    for m, rel in result["releases"].items():
        if m != "user_level":
            fig.add_scatter(x=x, y=rel.released_bin_totals(), name=f"{METHOD_LABELS[m]}, "
                            "as released")
    fig.update_layout(height=300, margin={"l": 70, "r": 10, "t": 30, "b": 40},
                      yaxis_title="users kept per hour", title="Users kept per bin")
    return fig


def ledger_section(pop: dict[str, Any], prefs: pd.DataFrame) -> None:
    st.subheader("Repeated queries: the budget ledger")
    st.caption(
        "Each query counts one day's records per cell at ε per record; a user present in k "
        "hours pays k·ε. Users who cannot afford a query are silently left out and charged "
        "nothing (ProPer). Budgets are never shown; the number left out is shown only as a "
        "noisy (differentially private) count. Drop-out biases later answers toward users with "
        "large budgets (UniTraX's critique).")
    eps_q = st.select_slider("ε per record per query", [0.005, 0.01, 0.02, 0.05], value=0.01,
                             key="pop_ledger_eps")
    key = ("pop_ledger", id(pop), len(prefs))
    if st.session_state.get("pop_ledger_key") != key:
        st.session_state["pop_ledger_key"] = key
        st.session_state["pop_ledger"] = P.Ledger(prefs, display_epsilon=0.01, max_displays=7)
        st.session_state["pop_ledger_rows"] = []
    led: P.Ledger = st.session_state["pop_ledger"]
    rows: list[dict] = st.session_state["pop_ledger_rows"]
    c1, c2 = st.columns(2)
    if c1.button("Run the next daily query", key="pop_ledger_run", disabled=len(rows) >= 7):
        grid = pop["grid"]
        rec = P.bounded_records(pop["traj"], grid=grid)
        per_day = 86_400 // grid.bin_s
        day = len(rows)
        q = rec[(rec["bin"] >= day * per_day) & (rec["bin"] < (day + 1) * per_day)]
        noisy, _ = P.ledger_counts(led, q.assign(key=q["cell"]), n_keys=grid.n_cells,
                                   epsilon=eps_q)
        rows.append({"query (day)": day + 1, "ε per record": eps_q,
                     "users left out (noisy count)": led.noisy_excluded(),
                     "released total": int(noisy.sum())})
    if c2.button("Reset the ledger", key="pop_ledger_reset"):
        st.session_state["pop_ledger_key"] = None
        st.rerun()
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True)
    else:
        st.info("No query yet.")


def main() -> None:
    st.title("Population: personal budgets, personal landmarks")
    st.markdown(
        "Every person has their own privacy budget ε_u and their own landmark places. Counts "
        "per grid cell and hour are released with the **Sample mechanism**: a person whose "
        "budget in an hour is below the threshold τ is counted only with probability "
        "(e^ε − 1)/(e^τ − 1), so each gets exactly their own guarantee; then noise of scale "
        "1/τ is added to every cell. Baselines: everyone at the minimum ε (Minimum), dropping "
        "those below τ (Threshold), or one budget spread over all hours (user-level).")
    c = st.columns(4)
    n_users = c[0].select_slider("People", [200, 500, 1000, 2000], value=1000, key="pop_n")
    mix_name = c[1].selectbox("Preference mix (public)", list(P.MIXES), key="pop_mix",
                              help="icde15: conservative 54 %, moderate 37 %, liberal 9 % "
                                   "(Jorgensen et al., ICDE 2015)")
    scheme = c[2].selectbox("Each person's landmark scheme", ["skip", "uniform", "user"],
                            key="pop_scheme")
    tau = c[3].selectbox("Threshold τ rule", ["mean", "median", "min_error", "quantile:0.25"],
                         key="pop_tau", help="computed from the public mix only")
    seed = st.number_input("Simulation seed", 0, 10_000, 1, key="pop_seed",
                           help="simulation only: fixes the synthetic data's draws and noise")
    up = st.file_uploader("Or upload preferences (CSV uid,epsilon)", type="csv",
                          key="pop_prefs")
    pop = population(int(n_users), 200, 0)
    prefs = None
    if up is not None:
        try:
            prefs = P.read_preferences(up)
        except LmdkError as exc:
            st.error(str(exc))
            return
    tau_arg: Any = tau if prefs is None else 1.0
    key = (int(n_users), mix_name, scheme, tau_arg, int(seed),
           None if up is None else (up.name, up.size, float(prefs["epsilon"].sum())))
    memo = st.session_state.get("pop_result")
    if memo is None or memo[0] != key:  # recompute only when a setting changed (per session)
        try:
            with st.spinner("Releasing…"):
                memo = (key, compute(pop, mix_name, scheme, tau_arg, int(seed), prefs))
        except LmdkError as exc:
            st.error(str(exc))
            return
        st.session_state["pop_result"] = memo
    result = memo[1]
    grid = pop["grid"]
    st.subheader("Released heat map over time")
    b = st.slider("Hour (bin)", 0, grid.n_bins - 1, 12, key="pop_bin",
                  format="%d", help="bin index; bins are hours from 2008-02-02 00:00 UTC")
    rel = result["releases"]["personalised"]
    zmax = max(1.0, float(np.percentile(result["true"][b], 99.5)))
    left, right = st.columns(2)
    with left:
        charts.show(heatmap(rel.counts[b], grid, f"Released (personalised), "
                                                 f"{grid.bin_starts()[b]:%a %H:%M}", zmax),
                    key="pop_map_released")
    with right:
        charts.show(heatmap(result["true"][b], grid, "True (private, publisher only)", zmax),
                    key="pop_map_true")
    st.subheader("Error against the baselines")
    st.dataframe(result["errors"], hide_index=True)
    charts.show(kept_figure(result, grid), key="pop_kept")
    ledger_section(pop, result["prefs"])
    st.caption("To inspect one person's trace, open the “My trace” page.")


main()
