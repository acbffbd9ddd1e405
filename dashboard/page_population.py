"""Streamlit page "Population": personalised privacy for many people (standalone script).

Run it alone with ``streamlit run dashboard/page_population.py`` or add it to the app's
navigation (``st.Page("page_population.py", title="Population")``). The page generates a
synthetic population (or takes uploaded preferences), releases counts per grid cell × hour with
the personalised Sample mechanism and the baselines, and shows the released heat map over time
beside the true one, the error of each method, the users kept per bin (as released) and the
ledger's state across repeated queries. Every privacy decision lives in
:mod:`lmdk_core.population`; this module only arranges controls and views.

Exploring is free: the heat maps, the error table and the repeated-query ledger are *previews*
(releases with a simulation seed, never downloadable). "The real release" draws the personalised
release with fresh OS randomness (:class:`lmdk_core.population.PopulationSession`): it is charged
at once to the population's ProPer ledger (each user pays their own loss; users who cannot
afford it are left out and pay nothing), never redrawn for the same settings, and its released
counts are the only file the page offers. What the page says each person gets holds for every
change of their data in an hour — counted or not, in one cell or another
(docs/personalised-dp.md §3) — and the ledger charges exactly that bound. The true counts are
shown because the publisher holds the data (they are private and never exported from here).

Settings are kept in a store outside the widgets (``dashboard.state.page_widget``), so they
survive a visit to another page; the page writes session state only through ``dashboard.state``.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

if not __package__:  # run as a script (`streamlit run`, a page of the app): PEP 366
    _HERE = Path(__file__).resolve().parent  # the package, whatever it is installed as
    if str(_HERE.parent) not in sys.path:
        sys.path.insert(0, str(_HERE.parent))
    __package__ = _HERE.name  # dashboard in the repo, lmdk_dashboard in a wheel
    importlib.import_module(__package__)

from lmdk_core import LmdkError
from lmdk_core import population as P
from lmdk_core.correlation import personalised_release_temporal_loss

from . import charts, state
from .formatting import plain_text

METHOD_LABELS = {"personalised": "Personalised (Sample)", "threshold": "Threshold",
                 "minimum": "Minimum", "user_level": "User-level (uniform)"}
PAGE_CELL_M = 2000.0  # grid cell (m): 2 km keeps a recompute on 1,000 users under a second
KEY = "pop_"  # prefix of this page's stored settings (widget keys: "_w_pop_...")
PEOPLE = (200, 500, 1000, 2000)
SCHEMES = ("skip", "uniform", "user")
TAU_CHOICES = ("mean", "median", "min_error", "quantile:0.25")
QUERY_EPSILONS = (0.005, 0.01, 0.02, 0.05)
PREFERENCES_SEED = 0  # the synthetic people's budgets belong to the population: drawn once

w = state.page_widget  # the key of a widget whose value survives page switches

REAL_EXPLAINER = """
The real release is the personalised (Sample) release above, drawn with **fresh OS randomness**
(no seed). It is charged to this population's ledger the moment it is drawn, whether or not you
download it: each person pays their own loss — the most this release can reveal about them, whether
they were counted in an hour or not and in which cell: min(ε_u,t, τ) summed over their landmark
hours and one more hour, at most their ε_u. The same settings always give back the same draw;
other settings draw again and **add up**.
**ProPer's rule:** people who cannot afford a release are **left out of it** — their records are
not counted — and charged nothing, so no one's spend ever passes their own budget ε_u. A release
nobody can afford is refused. The ledger's figures below are private (publisher only).
"""


@st.cache_resource(show_spinner=False, max_entries=4)
def population(n_users: int, points_per_user: int, seed: int) -> dict[str, Any]:
    """Synthetic population (no real person; shared cache is fine) and its public grid."""
    traj, places = P.generate_population(n_users, points_per_user=points_per_user, rng=seed)
    grid = P.Grid.covering(start="2008-02-02", end="2008-02-09", cell_m=PAGE_CELL_M)
    return {"traj": traj, "places": places[places["name"] == "other"], "grid": grid,
            "uids": traj["uid"].cat.categories}


def population_preferences(pop: dict[str, Any], mix_name: str) -> pd.DataFrame:
    """The synthetic people's budgets ε_u under the public mix (part of the population: the same
    for every preview and every real release; the simulation seed does not change them)."""
    return P.draw_preferences(pop["uids"], P.MIXES[mix_name], rng=PREFERENCES_SEED)


def compute(pop: dict[str, Any], mix_name: str, scheme: str, tau: Any, seed: int,
            preferences: pd.DataFrame | None = None) -> dict[str, Any]:
    """Previews: every method on ``pop`` with the simulation ``seed``; returns releases per
    method and the error table."""
    mix = P.MIXES[mix_name]
    prefs = preferences if preferences is not None else population_preferences(pop, mix_name)
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
    pers = releases["personalised"]  # its loss under correlation (docs/temporal-loss.md §10)
    temporal = personalised_release_temporal_loss(pers.private.users["epsilon"], tau=pers.tau,
                                                  n_bins=pop["grid"].n_bins)
    return {"releases": releases, "true": true, "prefs": prefs,
            "errors": pd.DataFrame(rows), "temporal": temporal,
            "uncorrelated": min(float(pers.private.users["epsilon"].max()), pers.tau)}


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


def ledger_section(pop: dict[str, Any], prefs: pd.DataFrame, pop_key: tuple, seed: int) -> None:
    """A seeded simulation of ProPer's repeated daily queries (a preview: it costs nothing)."""
    st.subheader("Repeated queries: the budget ledger (simulation)")
    st.caption(
        "A seeded simulation of repeated queries, to see how ProPer behaves — it costs nothing "
        "and is not the ledger of your real releases (below). Each query counts one day's "
        "records per cell at ε per record, with noise of scale 2/ε per cell, so a record counted, "
        "dropped or moved to another cell costs ε; a user present in k hours pays k·ε. Users who "
        "cannot afford a query are silently left out and charged nothing (ProPer). Budgets are "
        "never shown; the number left out is shown only as a noisy (differentially private) "
        "count. Drop-out biases later answers toward users with large budgets (UniTraX's "
        "critique).")
    eps_q = st.select_slider("ε per record per query", QUERY_EPSILONS,
                             key=w(KEY + "ledger_eps", 0.01, QUERY_EPSILONS),
                             help="The budget each simulated query spends per record.")
    key = ("pop_ledger", pop_key, seed)
    sim = state.page_value(KEY + "sim")
    if sim is None or sim["key"] != key:
        sim = {"key": key, "ledger": P.Ledger(prefs, display_epsilon=0.01, max_displays=7),
               "rows": []}
        state.set_page_value(KEY + "sim", sim)
    led: P.Ledger = sim["ledger"]
    rows: list[dict] = sim["rows"]
    c1, c2 = st.columns(2)
    if c1.button("Run the next daily query", key=KEY + "ledger_run", disabled=len(rows) >= 7,
                 help="Simulate the next day's count query through the ledger (seeded)."):
        grid = pop["grid"]
        rec = P.bounded_records(pop["traj"], grid=grid)
        per_day = 86_400 // grid.bin_s
        day = len(rows)
        q = rec[(rec["bin"] >= day * per_day) & (rec["bin"] < (day + 1) * per_day)]
        noisy, _ = P.ledger_counts(led, q.assign(key=q["cell"]), n_keys=grid.n_cells,
                                   epsilon=eps_q, rng=np.random.SeedSequence([seed, day, 0]))
        rows.append({"query (day)": day + 1, "ε per record": eps_q,
                     "users left out (noisy count)": led.noisy_excluded(
                         rng=np.random.SeedSequence([seed, day, 1])),
                     "released total": int(noisy.sum())})
    c2.button("Reset the simulation", key=KEY + "ledger_reset", on_click=state.set_page_value,
              args=(KEY + "sim", None), help="Start the simulated ledger again.")
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True)
    else:
        st.info("No simulated query yet.")


def book() -> P.PopulationSession:
    """This browser session's real population releases and ledgers (never shared)."""
    return state.page_object(KEY + "book", P.PopulationSession)


def ledger_line(box: Any, pop_key: tuple, prefs: pd.DataFrame) -> None:
    """The population's ledger in one line, near the top (the full view: "The real release")."""
    summary = book().summary(pop_key, prefs)
    text = (f"**Ledger of this population:** {summary.draws} real release(s) drawn; "
            f"{summary.n_spent:,} of {summary.n_users:,} people have spent their whole budget")
    if summary.draws:
        text += (f"; largest spend {summary.largest_spend:.3g} of that person's budget "
                 f"{summary.largest_budget:.3g}")
    box.markdown(text + " (private: publisher only).")


def real_section(pop: dict[str, Any], pop_key: tuple, prefs: pd.DataFrame, scheme: str,
                 tau: Any, mix: P.PreferenceMix | None) -> None:
    """The real personalised release: plan, draw, public download, the population's ledger."""
    st.subheader("The real release")
    st.markdown(REAL_EXPLAINER)
    sess = book()
    release = {"grid": pop["grid"], "places": pop["places"], "scheme": scheme,
               "method": "personalised", "tau": tau, "mix": mix}
    key = (pop_key, scheme, tau)
    try:
        plan = sess.plan(pop_key, pop["traj"], prefs, key=key, **release)
    except LmdkError as exc:
        st.error(plain_text(exc), icon="⚠️")
        return
    summary = sess.summary(pop_key, prefs)
    m = st.columns(4)
    m[0].metric("Real releases drawn", f"{summary.draws}",
                help="Real releases of this population in this session.")
    m[1].metric("Users whose budget is spent", f"{summary.n_spent:,} of {summary.n_users:,}",
                help="Users with nothing left: every later release leaves them out (private).")
    m[2].metric("Largest spend vs its budget",
                f"{summary.largest_spend:.3g} / {summary.largest_budget:.3g}"
                if summary.draws else "—",
                help="The largest spend of one user and that user's own budget ε_u (private). "
                     "ProPer never lets a spend pass ε_u.")
    m[3].metric("Left out of the last real release", f"{summary.n_excluded_last:,}",
                help="Users who could not afford the last real release (private).")
    drawn = sess.drawn(key)
    refusal = f"{KEY}draw_error:{hash(key)}"  # a refusal is shown with its own settings only
    if drawn is None:
        text = (f"Drawing now: **{plan.n_included:,}** of {plan.n_users:,} users can afford "
                f"this release (largest personal cost {plan.largest_cost:.3g}).")
        if plan.n_excluded:
            text += (f" **{plan.n_excluded:,}** would be left out — ProPer: their records are "
                     "not counted and they are charged nothing.")
        st.markdown(text)
        if not plan.fits:
            st.warning("A draw now would be refused: no user can afford this release.",
                       icon=":material/block:")
        st.button(
            "Draw the real release", key=KEY + "draw", type="primary",
            on_click=state.page_call, args=(refusal, sess.draw, pop_key, pop["traj"], prefs),
            kwargs={"key": key, **release},
            help="Fresh OS randomness; charged to every included user at once, downloaded "
                 "or not.")
        msg = state.page_value(refusal)
        if msg:
            st.error(plain_text(msg), icon="⚠️")
    else:
        st.success(f"Real release drawn for these settings ({METHOD_LABELS['personalised']}, "
                   f"τ = {drawn.release.tau:.3g}): {drawn.n_excluded:,} user(s) left out "
                   "(ProPer). It is kept for this session and never redrawn.",
                   icon=":material/task_alt:")
        st.download_button(
            "Released counts (CSV)", data=drawn.public_csv,
            file_name=f"lmdk_public_population_counts_{scheme}.csv", mime="text/csv",
            key=KEY + "download", on_click="ignore",
            help="The released counts only: time (bin start), row, col, cell centre, count — "
                 "every cell of the public grid. No true count, no budget, no seed.")
    st.caption("Previews above cost nothing; only this section's real releases are charged.")


def uploaded_preferences() -> tuple[pd.DataFrame | None, bool]:
    """The uploaded preferences (kept across page switches until removed or forgotten), and
    whether an upload failed (its message is shown)."""
    up = st.file_uploader("Or upload preferences (CSV uid,epsilon)", type="csv",
                          key=KEY + "prefs_upload", on_change=state.page_upload_changed,
                          args=(KEY + "prefs", KEY + "prefs_upload"),
                          help="Each person's own budget ε_u; τ is then 1 (no public mix).")
    stored = state.page_value(KEY + "prefs")
    if up is not None and (stored is None or stored["file_id"] != up.file_id):
        try:
            stored = {"name": up.name, "file_id": up.file_id, "prefs": P.read_preferences(up)}
        except LmdkError as exc:
            st.error(plain_text(exc))
            return None, True
        state.set_page_value(KEY + "prefs", stored)
    if stored is None:
        return None, False
    if up is None:
        c1, c2 = st.columns([3, 1], vertical_alignment="center")
        c1.caption(f"Using the uploaded preferences **{stored['name']}** "
                   f"({len(stored['prefs']):,} users).")
        c2.button("Forget them", key=KEY + "prefs_forget", on_click=state.set_page_value,
                  args=(KEY + "prefs", None), help="Go back to the preference mix.")
    return stored["prefs"], False


def main() -> None:
    st.title("Population: personal budgets, personal landmarks")
    st.markdown(
        "Every person has their own privacy budget ε_u and their own landmark places. Counts "
        "per grid cell and hour are released with the **Sample mechanism**: a person whose "
        "budget in an hour is below the threshold τ is counted only with a probability set by "
        "their budget, and noise of scale 2/τ is added to every cell. Whatever a person's data "
        "in one hour — counted or not, in one cell or another — it changes the probability of "
        "any release by a factor of at most e^ε for their own budget ε in that hour; over their "
        "landmark hours and any one more hour, by at most e^(ε_u). Baselines: everyone at the "
        "minimum ε (Minimum), dropping those below τ (Threshold), or one budget spread over all "
        "hours (user-level).")
    st.caption("**Previews are free, real releases count:** the maps, errors and simulated "
               "queries below are previews (seeded simulations, never downloadable); the real "
               "release at the end is drawn with fresh randomness and charged to every person.")
    ledger_box = st.container()  # the population's ledger at a glance, filled below
    c = st.columns(4)
    n_users = c[0].select_slider("People", PEOPLE, key=w(KEY + "n", 1000, PEOPLE),
                                 help="Size of the synthetic population (no real person).")
    mixes = tuple(P.MIXES)
    mix_name = c[1].selectbox("Preference mix (public)", mixes,
                              key=w(KEY + "mix", "icde15", mixes),
                              help="icde15: conservative 54 %, moderate 37 %, liberal 9 % "
                                   "(Jorgensen et al., ICDE 2015)")
    scheme = c[2].selectbox("Each person's landmark scheme", SCHEMES,
                            key=w(KEY + "scheme", "skip", SCHEMES),
                            help="How each person spends ε_u over their hours.")
    tau = c[3].selectbox("Threshold τ rule", TAU_CHOICES, key=w(KEY + "tau", "mean", TAU_CHOICES),
                         help="computed from the public mix only")
    seed = st.number_input("Simulation seed (previews)", 0, 10_000, key=w(KEY + "seed", 1),
                           help="Previews only: fixes their coins and noise. The real release "
                                "uses fresh OS randomness and no seed.")
    prefs, failed = uploaded_preferences()
    if failed:
        return
    pop = population(int(n_users), 200, 0)
    tau_arg: Any = tau if prefs is None else 1.0
    if prefs is None:
        pop_key: tuple = ("synthetic", int(n_users), mix_name)
        people = population_preferences(pop, mix_name)
    else:
        pop_key = ("uploaded", int(n_users), P.preferences_fingerprint(prefs))
        people = prefs
    key = (pop_key, scheme, tau_arg, int(seed))
    memo = state.page_value(KEY + "result")
    if memo is None or memo[0] != key:  # recompute only when a setting changed (per session)
        try:
            with st.spinner("Simulating the previews…"):
                memo = (key, compute(pop, mix_name, scheme, tau_arg, int(seed), prefs))
        except LmdkError as exc:
            st.error(plain_text(exc))
            return
        state.set_page_value(KEY + "result", memo)
    result = memo[1]
    grid = pop["grid"]
    st.subheader("Released heat map over time — preview (simulation)")
    b = st.slider("Hour (bin)", 0, grid.n_bins - 1, key=w(KEY + "bin", 12),
                  format="%d", help="bin index; bins are hours from 2008-02-02 00:00 UTC")
    rel = result["releases"]["personalised"]
    zmax = max(1.0, float(np.percentile(result["true"][b], 99.5)))
    left, right = st.columns(2)
    with left:
        charts.show(heatmap(rel.counts[b], grid, f"Preview (personalised), "
                                                 f"{grid.bin_starts()[b]:%a %H:%M}", zmax),
                    key="pop_map_released")
    with right:
        charts.show(heatmap(result["true"][b], grid, "True (private, publisher only)", zmax),
                    key="pop_map_true")
    st.subheader("Error against the baselines (previews)")
    st.dataframe(result["errors"], hide_index=True)
    charts.show(kept_figure(result, grid), key="pop_kept")
    st.caption(
        "**Under temporal correlation** (Cao et al.'s global schema: a release loses what its "
        "most exposed person loses): if everyone's whereabouts from hour to hour follow the "
        "public 'moderate' chain of Cao et al.'s ConTPL demo on 30 places, one hour of one "
        f"person's data loses at most {result['temporal'].tpl.max():.3g} in this release, "
        f"against at most {result['uncorrelated']:.3g} without correlation (private: computed "
        "from the budgets, for the publisher only).")
    ledger_line(ledger_box, pop_key, people)
    ledger_section(pop, result["prefs"], pop_key, int(seed))
    real_section(pop, pop_key, people, scheme, tau_arg,
                 P.MIXES[mix_name] if prefs is None else None)
    from .attack_section import population_panel  # re-identification (issue 28)

    population_panel(pop["traj"], pop["places"], people, scheme=scheme, cell_m=PAGE_CELL_M,
                     key=(pop_key, scheme))
    st.caption("To inspect one person's trace, open the “My trace” page.")


main()
