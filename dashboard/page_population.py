"""Streamlit page "Population": personalised privacy for many people (standalone script).

Run it alone with ``streamlit run dashboard/page_population.py`` or add it to the app's
navigation (``st.Page("page_population.py", title="Population")``). The page uses a synthetic
population, or the user's own file (uid, time, lat, lon; read by
:func:`lmdk_core.population.read_population` and kept in this browser session only) on a public
window the user types; people's own budgets are set by picking their ids. It releases counts per
grid cell × hour with the personalised Sample mechanism and the baselines, and shows the
released heat map over time beside the true one, the error of each method, the people counted
per hour (released totals clipped to [0, number of people]: free post-processing) and the
ledger's state across repeated queries. Every acronym on the page has plain words beside it.
Every privacy decision lives in :mod:`lmdk_core.population`; this module only arranges controls
and views.

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
import warnings
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

if not __package__:  # a script run by Streamlit: import its own package first (PEP 366)
    _HERE = Path(__file__).resolve().parent  # dashboard/ in the repo, lmdk_dashboard/ installed
    sys.path[:0] = [] if str(_HERE.parent) in sys.path else [str(_HERE.parent)]
    __package__ = importlib.import_module(_HERE.name).__name__

from lmdk_core import LmdkError
from lmdk_core import population as P
from lmdk_core.correlation import personalised_release_temporal_loss
from lmdk_core.errors import LmdkWarning, ParameterError
from lmdk_core.noise.source import simulation_rng
from lmdk_core.times import epoch_ns

from . import charts, state
from .data_section import progress_text
from .formatting import plain_text

METHOD_LABELS = {"personalised": "Personalised: each at their own budget",
                 "threshold": "Threshold: drop those below τ",
                 "minimum": "Minimum: everyone at the lowest budget",
                 "user_level": "User-level: one budget for all hours"}
METHODS_EXPLAINED = (
    "**Personalised** (Jorgensen et al.'s Sample mechanism, 'PDP sampling'): a person whose "
    "budget for an hour is below the threshold τ is counted only some of the time — the "
    "smaller their budget, the less often — so everyone is protected at their own budget ε_u. "
    "**Threshold**: people whose budget for an hour is below the threshold τ are not counted "
    "that hour. **Minimum**: everyone's record is protected as if they had the lowest budget "
    "of the mix. **User-level**: the lowest budget spread over all hours, the same for all "
    "(classic differential privacy, ignoring what people chose). Average error = how far a "
    "released count is from the true one, on average over the map's cells (MAE).")
PAGE_CELL_M = 2000.0  # grid cell (m): 2 km keeps a recompute on 1,000 users under a second
CELL_CHOICES = (500.0, 1000.0, 2000.0, 5000.0)
PAGE_MAX_COUNTS = 1_000_000  # published counts (cells x hours) a page recompute handles
KEY = "pop_"  # prefix of this page's stored settings (widget keys: "_w_pop_...")
PEOPLE = (200, 500, 1000, 2000)
SCHEMES = ("skip", "uniform", "user")
SCHEME_WORDS = {
    "skip": "Skip: not counted at landmarks, full budget elsewhere",
    "uniform": "Uniform: budget split over landmark hours + one",
    "user": "User-level: budget spread over all hours",
}
TAU_CHOICES = ("mean", "median", "min_error", "quantile:0.25")
TAU_WORDS = {
    "mean": "mean: the average budget of the public mix",
    "median": "median: the middle budget of the public mix",
    "min_error": "min_error: smallest expected error",
    "quantile:0.25": "quantile:0.25: a quarter of budgets lie below",
}
def _mix_words(name: str) -> str:
    """A mix in plain words: the share of people in each budget group (from the mix itself)."""
    return f"{name}: {P.MIXES[name].label()}"


def _group_ranges() -> str:
    return ", ".join(f"{g} {lo:g}" + (f"–{hi:g}" if hi > lo else "")
                     for g, _, lo, hi in P.ICDE15_MIX.groups)


MIX_WORDS = {name: _mix_words(name) for name in P.MIXES}
MIX_HELP = ("The announced share of people in each budget group (icde15: the mix of "
            f"Jorgensen et al.'s experiments, ICDE 2015); budgets ε_u per group: "
            f"{_group_ranges()}. Each person's budget is drawn from it (a stand-in for asking "
            "them) unless you set it below. The threshold τ is computed from this public mix "
            "only, never from anyone's budget.")
QUERY_EPSILONS = (0.005, 0.01, 0.02, 0.05)
PREFERENCES_SEED = 0  # the synthetic people's budgets belong to the population: drawn once
SAMPLE_START, SAMPLE_DAYS = "2008-02-02", 7  # the synthetic population's public window

w = state.page_widget  # the key of a widget whose value survives page switches

PROPER = "ProPer (Ebadi et al.'s personal-budget ledger)"
REAL_EXPLAINER = f"""
The real release is the personalised release above (each person counted at their own budget),
drawn with **fresh OS randomness** (no seed). It is charged to this population's ledger the
moment it is drawn, whether or not you download it: each person pays their own loss — the most
this release can reveal about them, whether they were counted in an hour or not and in which
cell: their budget for the hour, capped at the threshold τ, summed over their landmark hours and
one more hour — at most their own budget ε_u. The same settings always give back the same draw;
other settings draw again and **add up**.
**The rule of {PROPER}:** people who cannot afford a release are **left out of it** — their
records are not counted — and charged nothing, so no one's spend ever passes their own budget
ε_u. A release nobody can afford is refused. The ledger's figures below are private (publisher
only).
"""


@st.cache_resource(show_spinner=False, max_entries=4)
def population(n_users: int, points_per_user: int, seed: int) -> dict[str, Any]:
    """Synthetic population (no real person; shared cache is fine) and its public grid."""
    traj, places = P.generate_population(n_users, points_per_user=points_per_user, rng=seed)
    grid = P.Grid.covering(start=SAMPLE_START, end=pd.Timestamp(SAMPLE_START)
                           + pd.Timedelta(days=SAMPLE_DAYS), cell_m=PAGE_CELL_M)
    return {"traj": traj, "places": places[places["name"] == "other"], "grid": grid,
            "uids": P.people_ids(traj), "source": ("synthetic", n_users),
            "label": f"the synthetic sample ({n_users:,} people, no real person)"}


def population_preferences(pop: dict[str, Any], mix_name: str) -> pd.DataFrame:
    """The people's budgets ε_u drawn from the public mix (part of the population: the same
    for every preview and every real release; the simulation seed does not change them)."""
    return P.draw_preferences(pop["uids"], P.MIXES[mix_name], rng=PREFERENCES_SEED)


def compute(pop: dict[str, Any], mix_name: str, scheme: str, tau: Any, seed: int,
            people: pd.DataFrame) -> dict[str, Any]:
    """Previews: every method on ``pop`` with the simulation ``seed``, each person at their
    budget in ``people``; τ and the floors come from the public mix only. Returns releases per
    method and the error table."""
    releases = P.release_methods(
        pop["traj"], people, grid=pop["grid"], places=pop["places"], scheme=scheme, tau=tau,
        mix=P.MIXES[mix_name], rng=seed)
    true = releases["personalised"].private.true_counts
    rows = []
    for m, rel in releases.items():
        err = np.abs(rel.counts - true)
        rows.append({"method": METHOD_LABELS[m], "threshold τ": rel.tau,
                     "average error, cells with people (MAE)":
                         float(err[true > 0].mean()) if (true > 0).any() else 0.0,
                     "average error, all cells (MAE)": float(err.mean())})
    pers = releases["personalised"]  # its loss under correlation (docs/temporal-loss.md §10)
    temporal = personalised_release_temporal_loss(pers.private.users["epsilon"], tau=pers.tau,
                                                  n_bins=pop["grid"].n_bins)
    return {"releases": releases, "true": true, "prefs": people,
            "errors": pd.DataFrame(rows), "temporal": temporal,
            "uncorrelated": min(float(pers.private.users["epsilon"].max()), pers.tau)}


def heatmap(z: np.ndarray, grid: P.Grid, title: str, zmax: float) -> go.Figure:
    lat, lon = grid.cell_centres()
    fig = go.Figure(go.Heatmap(z=z, x=lon, y=lat, zmin=0, zmax=zmax, colorscale="Viridis",
                               colorbar={"title": "count"}))
    fig.update_layout(title=title, height=360, margin={"l": 70, "r": 10, "t": 40, "b": 50},
                      xaxis_title="longitude", yaxis_title="latitude")
    return fig


PRESENT_LABEL = "people present (true count: private, publisher only)"


def kept_figure(result: dict[str, Any], grid: P.Grid, *, n_people: int) -> go.Figure:
    """People counted per hour by each method, as released and clipped to [0, n_people] (free
    post-processing of the released counts with the public number of people), beside the true
    number present (private, labelled so)."""
    x = grid.bin_starts()
    fig = go.Figure()
    fig.add_scatter(x=x, y=result["true"].sum(axis=(1, 2)), name=PRESENT_LABEL,
                    line={"color": "#767676", "dash": "dot"})
    for m, rel in result["releases"].items():
        if m != "user_level":
            fig.add_scatter(x=x, y=rel.released_bin_totals(clamp_to=n_people),
                            name=f"{METHOD_LABELS[m].split(':')[0]}: released")
    fig.update_layout(height=340, margin={"l": 70, "r": 10, "t": 30, "b": 40},
                      legend={"orientation": "h", "y": -0.2, "x": 0},
                      yaxis_title="people counted per hour",
                      title="People counted per hour (released, clipped to 0 – all people)")
    return fig


def ledger_section(pop: dict[str, Any], prefs: pd.DataFrame, pop_key: tuple, seed: int) -> None:
    """A seeded simulation of ProPer's repeated daily queries (a preview: it costs nothing)."""
    st.subheader("Repeated queries: the budget ledger (simulation)")
    st.caption(
        f"A seeded simulation of repeated queries, to see how {PROPER} behaves — it costs "
        "nothing and is not the ledger of your real releases (below). Each query counts one "
        "day's records per cell, each record at the budget ε chosen here, with noise of scale "
        "2/ε per cell, so a record counted, dropped or moved to another cell costs ε; a person "
        "present in k hours pays k·ε of their budget. People who cannot afford a query are "
        "silently left out and charged nothing. Budgets are never shown; the number left out "
        "is shown only as a noisy (differentially private) count. Leaving people out biases "
        "later answers toward people with large budgets — the critique of UniTraX (Munz et al.: "
        "people who run out of budget drop out of every later answer).")
    eps_q = st.select_slider("Budget ε per record per query", QUERY_EPSILONS,
                             key=w(KEY + "ledger_eps", 0.01, QUERY_EPSILONS),
                             help="The privacy budget each simulated query spends per record "
                                  "(smaller: more noise, more queries before budgets run out).")
    key = ("pop_ledger", pop_key, pop["grid"], seed)
    sim = state.page_value(KEY + "sim")
    if sim is None or sim["key"] != key:
        try:
            fresh_ledger = P.Ledger(prefs, display_epsilon=0.01, max_displays=7)
        except LmdkError as exc:  # a budget set below the simulation's reserve for its counts
            st.info(f"The simulation cannot run with these budgets: {plain_text(exc)} (each "
                    "budget pays 7 × 0.01 for showing the noisy number of people left out).")
            return
        sim = {"key": key, "ledger": fresh_ledger, "rows": []}
        state.set_page_value(KEY + "sim", sim)
    led: P.Ledger = sim["ledger"]
    rows: list[dict] = sim["rows"]
    c1, c2 = st.columns(2)
    if c1.button("Run the next daily query", key=KEY + "ledger_run", disabled=len(rows) >= 7,
                 help="Simulate the next day's count query through the budget ledger (seeded)."):
        grid = pop["grid"]
        rec = P.bounded_records(pop["traj"], grid=grid)
        per_day = 86_400 // grid.bin_s
        day = len(rows)
        q = rec[(rec["bin"] >= day * per_day) & (rec["bin"] < (day + 1) * per_day)]
        noisy, _ = P.ledger_counts(led, q.assign(key=q["cell"]), n_keys=grid.n_cells,
                                   epsilon=eps_q, rng=simulation_rng([seed, day, 0]))
        rows.append({"query (day)": day + 1, "budget ε per record": eps_q,
                     "users left out (noisy count)": led.noisy_excluded(
                         rng=simulation_rng([seed, day, 1])),
                     "released total": int(noisy.sum())})
    c2.button("Reset the simulation", key=KEY + "ledger_reset", on_click=state.set_page_value,
              args=(KEY + "sim", None), help="Start the simulated budget ledger again.")
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
    key = (pop_key, pop["grid"], scheme, tau)  # one draw per window and settings
    try:
        plan = sess.plan(pop_key, pop["traj"], prefs, key=key, **release)
    except LmdkError as exc:
        st.error(plain_text(exc), icon="⚠️")
        return
    summary = sess.summary(pop_key, prefs)
    m = [*st.columns(2), *st.columns(2)]  # 2 × 2: the labels fit at 1280 px
    m[0].metric("Real releases drawn", f"{summary.draws}",
                help="Real releases of this population in this session.")
    m[1].metric("Users whose budget is spent", f"{summary.n_spent:,} of {summary.n_users:,}",
                help="Users with nothing left: every later release leaves them out (private).")
    m[2].metric("Largest spend vs its budget",
                f"{summary.largest_spend:.3g} / {summary.largest_budget:.3g}"
                if summary.draws else "—",
                help="The largest spend of one person and that person's own budget ε_u "
                     f"(private). {PROPER} never lets a spend pass the person's budget.")
    m[3].metric("Left out of the last real release", f"{summary.n_excluded_last:,}",
                help="Users who could not afford the last real release (private).")
    drawn = sess.drawn(key)
    refusal = f"{KEY}draw_error:{hash(key)}"  # a refusal is shown with its own settings only
    if drawn is None:
        text = (f"Drawing now: **{plan.n_included:,}** of {plan.n_users:,} users can afford "
                f"this release (largest personal cost {plan.largest_cost:.3g}).")
        if plan.n_excluded:
            text += (f" **{plan.n_excluded:,}** would be left out — they cannot afford it "
                     f"with their budget, so under {PROPER} their records are not counted and "
                     "they are charged nothing.")
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
                   f"threshold τ = {drawn.release.tau:.3g}): {drawn.n_excluded:,} "
                   f"person(s) left out by {PROPER}, as their budget could not afford it. It "
                   "is kept for this session and never redrawn.",
                   icon=":material/task_alt:")
        st.download_button(
            "Released counts (CSV)", data=drawn.public_csv,
            file_name=f"lmdk_public_population_counts_{scheme}.csv", mime="text/csv",
            key=KEY + "download", on_click="ignore",
            help="The released counts only: time (bin start), row, col, cell centre, count — "
                 "every cell of the public grid. No true count, no budget, no seed.")
    st.caption("Previews above cost nothing; only this section's real releases are charged.")


def sample_window() -> tuple[Any, int, float, tuple[float, float, float, float]]:
    """(start date, days, cell m, bbox) of the public grid for an uploaded population: typed by
    the publisher (never read off the data: the first and last times and places are private)."""
    st.markdown("**Public window and grid** — chosen without looking at the data: only points "
                "inside are counted, and every cell and hour of it is published.")
    c = st.columns(3)
    start = c[0].date_input("First day (UTC)", key=w(KEY + "own_start",
                                                      pd.Timestamp(SAMPLE_START).date()),
                            help="The public start of the release, midnight UTC.")
    days = c[1].number_input("Days", 1, 31, key=w(KEY + "own_days", SAMPLE_DAYS),
                             help="How many days of hours the release covers (public).")
    cell = c[2].select_slider("Cell size (m)", CELL_CHOICES,
                              key=w(KEY + "own_cell", PAGE_CELL_M, CELL_CHOICES),
                              format_func=lambda v: f"{v:,.0f} m",
                              help="The side of the public grid's square cells, in metres.")
    b = st.columns(4)
    box = []
    for col, (label, default, lo, hi) in zip(b, (
            ("South edge (lat °)", P.BEIJING_BBOX[0], -90.0, 90.0),
            ("North edge (lat °)", P.BEIJING_BBOX[1], -90.0, 90.0),
            ("West edge (lon °)", P.BEIJING_BBOX[2], -180.0, 180.0),
            ("East edge (lon °)", P.BEIJING_BBOX[3], -180.0, 180.0)), strict=True):
        name = KEY + "own_" + label.split()[0].lower()
        box.append(col.number_input(label, lo, hi, key=w(name, default), step=0.01,
                                    format="%.4f", help="Edge of the public box, in degrees."))
    return start, int(days), float(cell), (box[0], box[1], box[2], box[3])


def own_population() -> dict[str, Any] | None:
    """The uploaded population of this session (kept across page switches until removed), or
    None for the synthetic sample. A file that cannot be read is reported and the population
    used before stays; so do all settings."""
    with st.expander("Bring your own population", expanded=state.page_value(KEY + "own")
                     is not None):
        up = st.file_uploader(
            "Your own population: CSV or Parquet with uid, time, lat, lon",
            type=["csv", "tsv", "txt", "gz", "parquet", "zip"], key=KEY + "traj_upload",
            on_change=state.page_upload_changed, args=(KEY + "own", KEY + "traj_upload"),
            help="One row per location fix: person id, time (UTC), latitude, longitude — the "
                 "files the command “lmdk population FILE” reads. It replaces the synthetic "
                 "sample on this page for this browser session only; no other session can see "
                 "it.")
        stored = state.page_value(KEY + "own")
        failed = state.page_value(KEY + "own_error")
        if up is not None and (stored is None or stored["file_id"] != up.file_id) and (
                failed is None or failed[0] != up.file_id) and (
                up.file_id != state.page_value(KEY + "own_dismissed")):
            bar = st.progress(0.0, text=f"Reading {plain_text(up.name)}…")

            def tell(stage: str, done: int, total: int) -> None:  # the reader's progress
                share = min(1.0, done / total) if total else 0.0
                bar.progress(share, text=plain_text(progress_text(up.name, stage, done, total)))

            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always", LmdkWarning)
                    traj = P.read_population(up, progress=tell)
            except LmdkError as exc:
                state.set_page_value(KEY + "own_error", (up.file_id, str(exc)))
            else:
                stored = {"name": up.name, "file_id": up.file_id, "traj": traj,
                          "repairs": [str(c.message) for c in caught]}
                state.set_page_value(KEY + "own", stored)
                state.set_page_value(KEY + "own_error", None)
            bar.empty()
        failed = state.page_value(KEY + "own_error")
        if up is not None and failed is not None and failed[0] == up.file_id:
            st.error(f"This file could not be read, so the page keeps "
                     f"{'your earlier file' if stored else 'the synthetic sample'}: "
                     f"{plain_text(failed[1])}", icon="⚠️")
        if stored is None:
            st.caption("The page uses the synthetic sample"
                       + (" (you went back to it: remove the file above and upload it again "
                          "to use it)." if up is not None and up.file_id == state.page_value(
                              KEY + "own_dismissed") else " until you upload a file."))
            return None
        for msg in stored["repairs"][:3]:
            st.caption(f"Repaired while reading: {plain_text(msg)}")
        start, days, cell, bbox = sample_window()
        c1, c2 = st.columns([3, 1], vertical_alignment="center")
        c2.button("Back to the sample", key=KEY + "own_forget", on_click=forget_own,
                  args=(stored["file_id"],),
                  help="Forget your file in this session and use the synthetic sample again.")
        try:
            pop = own_grid(stored, start, days, cell, bbox)
        except LmdkError as exc:  # nothing below may quietly fall back to the sample
            st.error(f"Your population cannot be released on this window: {plain_text(exc)}",
                     icon="⚠️")
            st.stop()
        traj = pop["traj"]
        c1.caption(f"Using **{plain_text(stored['name'])}**: {len(pop['uids']):,} people, "
                   f"{pop['inside']:,} of {len(traj):,} points inside the public window "
                   "(private: publisher only). Each person's landmarks are their two longest "
                   "stays (as “lmdk population --suggest-places 2”).")
        return pop


def forget_own(file_id: str) -> None:
    """Button callback: back to the sample; the file still in the uploader is not read again
    (uploading it anew, or another file, is)."""
    state.set_page_value(KEY + "own", None)
    state.set_page_value(KEY + "own_pop", None)
    state.set_page_value(KEY + "own_dismissed", file_id)


def own_grid(stored: dict[str, Any], start: Any, days: int, cell: float,
             bbox: tuple[float, float, float, float]) -> dict[str, Any]:
    """The uploaded population on its public grid (kept per session: never in a shared cache)."""
    key = (stored["file_id"], str(start), days, cell, bbox)
    memo = state.page_value(KEY + "own_pop")
    if memo is not None and memo[0] == key:
        return memo[1]
    t0 = pd.Timestamp(start)
    grid = P.Grid.covering(bbox=bbox, cell_m=cell, start=t0, end=t0 + pd.Timedelta(days=days))
    if grid.n_cells * grid.n_bins > PAGE_MAX_COUNTS:
        raise ParameterError(
            f"this grid has {grid.n_rows}×{grid.n_cols} cells × {grid.n_bins} hours = "
            f"{grid.n_cells * grid.n_bins:,} counts, more than the page's "
            f"{PAGE_MAX_COUNTS:,}: use larger cells, a smaller box or fewer days "
            "(the command “lmdk population” has no such limit)")
    traj = stored["traj"]
    b, _ = grid.locate(epoch_ns(traj["time"]), traj["lat"].to_numpy(), traj["lon"].to_numpy())
    with st.spinner("Finding each person's longest stays…"):
        places = P.suggest_user_places(traj, top=2)
    pop = {"traj": traj, "places": places, "grid": grid, "uids": P.people_ids(traj),
           "inside": int((b >= 0).sum()), "source": ("uploaded", stored["file_id"]),
           "label": f"your file {stored['name']}"}
    state.set_page_value(KEY + "own_pop", (key, pop))
    return pop


def set_own_budget(source: tuple) -> None:
    """Button callback: the picked person's own budget, stored for this population."""
    who, eps = st.session_state.get(KEY + "who"), st.session_state.get(KEY + "who_eps")
    if who is None:
        state.set_page_value(KEY + "budget_error", "Pick a person from the list first.")
        return
    budgets = dict(state.page_value(KEY + "budgets") or {})
    budgets[source] = {**budgets.get(source, {}), str(who): float(eps or 0.0)}
    state.set_page_value(KEY + "budgets", budgets)
    state.set_page_value(KEY + "budget_error", None)


def clear_own_budgets(source: tuple) -> None:
    budgets = dict(state.page_value(KEY + "budgets") or {})
    budgets.pop(source, None)
    state.set_page_value(KEY + "budgets", budgets)
    state.set_page_value(KEY + "budget_error", None)


def own_budgets(pop: dict[str, Any], drawn: pd.DataFrame, *, locked: bool
                ) -> pd.DataFrame | None:
    """The people's budgets: drawn from the public mix, with the ones set here by person id
    (picked from this population's own ids) in their place. None when they cannot be used."""
    source = pop["source"]
    own: dict[str, float] = (state.page_value(KEY + "budgets") or {}).get(source, {})
    why_locked = ("Fixed: a real release of these people was drawn with these budgets, and "
                  "the ledger counts against them.") if locked else None
    with st.expander(f"People's own budgets ({len(own):,} set)", expanded=bool(own)):
        st.caption(f"Pick a person of {plain_text(pop['label'])} by their id (type to "
                   "search) and give them their own budget ε_u; everyone else keeps the budget "
                   "drawn from the public mix. Budgets are private: they are never published.")
        c = st.columns([2, 1, 1], vertical_alignment="bottom")
        c[0].selectbox("Person", list(pop["uids"]), index=None, key=KEY + "who",
                       placeholder=f"Search {len(pop['uids']):,} ids…", disabled=locked,
                       help=why_locked or "The ids of this population's people (from your "
                                           "file, or the sample's); type to filter the list.")
        c[1].number_input("Their budget ε_u", 0.01, P.MAX_OWN_EPSILON, value=1.0, step=0.1,
                          key=KEY + "who_eps", disabled=locked,
                          help=why_locked or "This person's whole privacy budget over the "
                                             "release: smaller protects them more.")
        c[2].button("Set budget", key=KEY + "who_set", on_click=set_own_budget, args=(source,),
                    disabled=locked, help=why_locked or "Give the picked person this budget.")
        msg = state.page_value(KEY + "budget_error")
        if msg:
            st.error(plain_text(msg), icon="⚠️")
        if own:
            st.dataframe(pd.DataFrame({"person": list(own), "own budget ε_u": list(own.values())}),
                         hide_index=True)
            st.button("Clear these budgets", key=KEY + "who_clear", on_click=clear_own_budgets,
                      args=(source,), disabled=locked,
                      help=why_locked or "Everyone back to the budget drawn from the mix.")
    try:
        return P.with_own_budgets(drawn, own)
    except LmdkError as exc:
        st.error(plain_text(exc), icon="⚠️")
        return None


def main() -> None:
    st.title("Population: personal budgets, personal landmarks")
    st.markdown(
        "Every person has their own privacy budget ε_u (smaller: better protected) and their own "
        "landmark places. Counts of people per grid cell and hour are released with "
        "**personalised sampling** (Jorgensen et al.'s Sample mechanism): a person whose budget "
        "for an hour is below the threshold τ is counted only some of the time, the less often "
        "the smaller their budget, and noise of scale 2/τ is added to every cell. Whatever a "
        "person's data in one hour — counted or not, in one cell or another — it changes the "
        "probability of any release by a factor of at most e^ε for their own budget ε in that "
        "hour; over their landmark hours and any one more hour, by at most e^(ε_u), their whole "
        "budget. The other methods compared are baselines (explained under the error table).")
    st.caption("**Previews are free, real releases count:** the maps, errors and simulated "
               "queries below are previews (seeded simulations, never downloadable); the real "
               "release at the end is drawn with fresh randomness and charged to every "
               "person's budget.")
    ledger_box = st.container()  # the population's ledger at a glance, filled below
    own = own_population()
    top = st.columns([1, 2])
    if own is None:
        n_users = top[0].select_slider(
            "People (sample)", PEOPLE, key=w(KEY + "n", 1000, PEOPLE),
            help="Size of the synthetic population (no real person).")
        pop = population(int(n_users), 200, 0)
    else:  # the sample's size is kept in the store for when the sample comes back
        pop = own
        top[0].markdown(f"**People:** {len(pop['uids']):,} (your file)")
    locked = pop["source"][0] == "uploaded" and any(
        cast(tuple, d.population)[0] == pop["source"] for d in book().draws())
    mixes = tuple(P.MIXES)
    mix_name = top[1].selectbox("Mix of budgets (public)", mixes,
                                key=w(KEY + "mix", "icde15", mixes), disabled=locked,
                                format_func=lambda v: MIX_WORDS[v], help=MIX_HELP)
    c = st.columns(2)
    scheme = c[0].selectbox("How each person spends their budget", SCHEMES,
                            key=w(KEY + "scheme", "skip", SCHEMES),
                            format_func=lambda v: SCHEME_WORDS[v],
                            help="Each person's landmark scheme: how their budget ε_u is "
                                 "spread over their hours, and what their landmark hours get.")
    tau = c[1].selectbox("Threshold τ rule", TAU_CHOICES, key=w(KEY + "tau", "mean", TAU_CHOICES),
                         format_func=lambda v: TAU_WORDS[v],
                         help="The threshold τ: people whose budget for an hour is at least τ "
                              "are always counted; the noise scale is 2/τ. Computed from the "
                              "public mix only, never from anyone's budget.")
    seed = st.number_input("Simulation seed (previews)", 0, 10_000, key=w(KEY + "seed", 1),
                           help="Previews only: fixes their coins and noise. The real release "
                                "uses fresh OS randomness and no seed.")
    people = own_budgets(pop, population_preferences(pop, mix_name), locked=locked)
    if people is None:
        return
    pop_key: tuple = (pop["source"], mix_name, P.preferences_fingerprint(people))
    key = (pop_key, pop["grid"], scheme, tau, int(seed))
    memo = state.page_value(KEY + "result")
    if memo is None or memo[0] != key:  # recompute only when a setting changed (per session)
        try:
            with st.spinner("Simulating the previews…"):
                memo = (key, compute(pop, mix_name, scheme, tau, int(seed), people))
        except LmdkError as exc:
            st.error(plain_text(exc))
            return
        state.set_page_value(KEY + "result", memo)
    result = memo[1]
    grid = pop["grid"]
    st.subheader("Released heat map over time — preview (simulation)")
    b = st.slider("Hour", 0, grid.n_bins - 1, key=w(KEY + "bin", min(12, grid.n_bins - 1)),
                  format="%d", help=f"Hours counted from {grid.start:%Y-%m-%d %H:%M} UTC.")
    rel = result["releases"]["personalised"]
    zmax = max(1.0, float(np.percentile(result["true"][b], 99.5)))
    left, right = st.columns(2)
    with left:
        charts.show(heatmap(rel.counts[b], grid, f"Preview (personalised), "
                                                 f"{grid.bin_starts()[b]:%a %d %b %Y %H:%M}",
                            zmax), key="pop_map_released")
    with right:
        charts.show(heatmap(result["true"][b], grid, "True (private, publisher only)", zmax),
                    key="pop_map_true")
    st.subheader("Error against the baselines (previews)")
    st.dataframe(result["errors"], hide_index=True)
    st.caption(METHODS_EXPLAINED)
    n_people = len(pop["uids"])
    charts.show(kept_figure(result, grid, n_people=n_people), key="pop_kept")
    st.caption(
        "Each line sums one method's released counts over the map for each hour. Noise can make "
        f"that sum negative or larger than the {n_people:,} people of the population, so it is "
        f"clipped to 0 – {n_people:,}: each person counts at most once an hour, and the number "
        "of people is the same whatever anyone's data, so the clipping reads only released "
        "values and public numbers — free post-processing, no privacy cost. The dotted line is "
        "the true number present (private, publisher only); a released line can still lie "
        "above it, by the noise.")
    st.caption(
        "**Under temporal correlation** (where a person is in one hour hints where they are in "
        "the next; Cao et al.'s global schema: a release loses what its most exposed person "
        "loses): if everyone's whereabouts from hour to hour follow the public 'moderate' "
        "chain of Cao et al.'s ConTPL demo on 30 places, one hour of one person's data loses "
        "at most "
        f"{result['temporal'].tpl.max():.3g} in this release, against at most "
        f"{result['uncorrelated']:.3g} without correlation, both in units of privacy budget "
        "(private: computed from the budgets, for the publisher only).")
    ledger_line(ledger_box, pop_key, people)
    ledger_section(pop, result["prefs"], pop_key, int(seed))
    real_section(pop, pop_key, people, scheme, tau, P.MIXES[mix_name])
    from .attack_section import population_panel  # re-identification (issue 28)

    population_panel(pop["traj"], pop["places"], people, scheme=scheme, cell_m=grid.cell_m,
                     key=(pop_key, scheme))
    st.caption("To inspect one person's trace, open the “My trace” page.")


main()
