"""Streamlit page "Patterns": pattern-level privacy for event streams (Gu et al., ICDE 2023).

Standalone: ``streamlit run dashboard/page_patterns.py``; also a page for ``st.navigation``.
The page only arranges controls and views; the privacy logic is in ``lmdk_core.patterns``.

Exploring is free: the timeline, the counts and the quality chart are *previews*, releases with
a simulation seed that can never be downloaded. Section 5 draws the *real* release (fresh OS
randomness, ``lmdk_core.patterns.ledger.PatternSession``): it is counted in the ledger of the
data's person set the moment it is drawn, never redrawn for the same settings, refused before it
would pass the total budget, and is the only thing the page lets you download.

Settings are kept in a store outside the widgets (``dashboard.state.page_widget``), so they
survive a visit to another page; the page writes session state only through ``dashboard.state``.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

if not __package__:  # a script run by Streamlit: import its own package first (PEP 366)
    _HERE = Path(__file__).resolve().parent  # dashboard/ in the repo, lmdk_dashboard/ installed
    sys.path[:0] = [] if str(_HERE.parent) in sys.path else [str(_HERE.parent)]
    __package__ = importlib.import_module(_HERE.name).__name__

from lmdk_core.errors import LmdkError
from lmdk_core.export import export_file_name
from lmdk_core.formatting import plain_count
from lmdk_core.patterns import (
    NEIGHBOURS,
    GridRegions,
    Pattern,
    PlaceRegions,
    adaptive_allocation,
    predictive_types,
    protection,
    region_events,
    release_with_allocation,
    type_budgets,
    uniform_allocation,
)
from lmdk_core.patterns import evaluate as ev
from lmdk_core.patterns.figures import (
    MECHANISM_LABELS,
    quality_figure,
    timeline_figure,
)
from lmdk_core.patterns.ledger import PatternSession
from lmdk_core.patterns.protect import (
    PREDICTIVE_LIFT,
    PREDICTIVE_MIN_EVENTS,
    PREDICTIVE_PRECISION,
)
from lmdk_core.patterns.taxi import hotspots, taxi_trajectories
from lmdk_core.times import NS_PER_DAY, utc_midnight_ns

from . import charts, state
from .formatting import plain_text

w = state.page_widget  # the key of a widget whose value survives page switches

EPSILONS = (0.1, 0.5, 1.0, 2.0, 4.0, 8.0)
DEFAULT_MECHS = ["uniform", "uniform-event", "adaptive", "event-rr"]
KEY = "pat_"  # prefix of this page's stored settings (widget keys: "_w_pat_...")
SOURCES = ("sample", "taxis")
PATTERN_COLUMNS = ["name", "sequence", "window_min", "private"]
PLACE_COLUMNS = ["name", "lat", "lon", "radius_m"]
DEFAULT_TOTAL_BUDGET = 4.0  # the value the total-budget control offers first (set by a click)

EXPLAINER = """
**Pattern-level privacy.** Some *sequences* of events are sensitive — leaving home and reaching a
clinic within two hours — while others are what a data consumer legitimately asks about — home to
work. Mark the sensitive sequences **private** and the consumer's queries **public**. The
mechanism randomises the event types that private patterns use **and the types paired with
them** (arriving at and leaving the same place; crossing a threshold up and down): a real event
of such a type may be *suppressed* and synthetic ones are *injected*, so nobody can tell whether
a private pattern happened, while events of other types pass unchanged and public patterns stay
detectable.

**Previews are free, real releases count.** Sections 3 and 4 are *previews*: simulations with a
seed, which cost nothing and can never be downloaded. Section 5 draws the *real* release with
fresh randomness; it counts against your total budget the moment it is drawn, whether you
download it or not.
"""

REAL_EXPLAINER = """
The real release randomises the same event types with **fresh OS randomness** (no seed) and is
recorded in the ledger of this data's people the moment it is drawn — whether or not you
download it. The same settings always give back the same draw (it is never redrawn); other
settings draw again and **add up**: one occurrence of a private pattern loses ε (whole-occurrence
reading; m·ε under the single-event reading) in every real draw. Your **total budget** is the loss
per protected occurrence you accept across all real draws of this data; it has its own control,
and a draw that would pass it is refused before anything is drawn.
"""


# ------------------------------------------------------------------------------ data


@st.cache_data(show_spinner=False, max_entries=8)
def load_data(source: str, n_taxis: int) -> pd.DataFrame:
    """Bundled sample or synthetic taxis (both ship with lmdk; no uploads on this page)."""
    if source == "sample":
        from lmdk_core.sample import load_sample

        return load_sample()
    return taxi_trajectories(n_taxis, days=2)


def default_places(source: str, df: pd.DataFrame, user: str | None) -> pd.DataFrame:
    """Starting regions: the person's labelled places (sample) or the hotspots (taxis)."""
    if source == "sample":
        sub = df[(df["uid"] == user) & df["place"].notna() & (df["place"] != "")]
        tab = sub.groupby("place")[["lat", "lon"]].median().reset_index()
        tab = tab.rename(columns={"place": "name"})
        tab["name"] = tab["name"].str.capitalize()
        tab["radius_m"] = 150.0
        return tab[["name", "lat", "lon", "radius_m"]]
    return hotspots()[["name", "lat", "lon", "radius_m"]].head(10)


def default_patterns(source: str) -> list[dict]:
    """Starting patterns over the named places of :func:`default_places`."""
    if source == "sample":
        return [
            {"name": "to the clinic", "sequence": "leave:Home → enter:Clinic", "window_min": 120.0,
             "private": True},
            {"name": "commute", "sequence": "leave:Home → enter:Work", "window_min": 120.0,
             "private": False},
            {"name": "home again", "sequence": "leave:Work → enter:Home", "window_min": 120.0,
             "private": False},
        ]
    return [
        {"name": "H0 → H1 → H2", "sequence": "enter:H0 → enter:H1 → enter:H2",
         "window_min": 135.0, "private": True},
        {"name": "H1 → H2", "sequence": "enter:H1 → enter:H2", "window_min": 60.0,
         "private": False},
        {"name": "H3 → H4", "sequence": "enter:H3 → enter:H4", "window_min": 60.0,
         "private": False},
    ]


def grid_patterns(rows: list[dict], places: pd.DataFrame, regions: GridRegions
                  ) -> tuple[list[dict], dict[str, str]]:
    """The place patterns ``rows`` in grid mode: each place replaced by the cell holding its
    centre (``leave:Home`` → ``leave:r3c5``), so the grid's defaults mean what the places'
    defaults mean; rows naming a place outside the grid are left out. Returns the rows and
    the place → cell map. Uses only the starting places (no other look at the data)."""
    codes = regions.assign(places["lat"].to_numpy(float), places["lon"].to_numpy(float))
    names = regions.names
    cell = {str(n): names[c] for n, c in zip(places["name"], codes, strict=True) if c >= 0}
    out = []
    for row in rows:
        seq = [t.split(":", 1) for t in row["sequence"].split(" → ")]
        if all(place in cell for _, place in seq):
            out.append({**row, "sequence": " → ".join(f"{k}:{cell[p]}" for k, p in seq)})
    return out, cell


def pattern_store(source: str, df: pd.DataFrame, user: str | None, regions
                  ) -> tuple[str, list[dict], str | None]:
    """Where the pattern table of these regions is kept, its starting rows, and a note saying
    what the grid's starting patterns are. Places: one table per data source; grid: one per
    source, person and cell size (cell names change with either)."""
    rows = default_patterns(source)
    if not isinstance(regions, GridRegions):
        return f"{KEY}patterns_{source}", rows, None
    grid_rows, cell = grid_patterns(rows, default_places(source, df, user), regions)
    used = sorted(set(cell) & {t.split(":", 1)[1] for r in rows
                               for t in r["sequence"].split(" → ")})
    example = cell[used[0]] if used else "r0c0"
    row, col = example[1:].split("c")
    note = (f"Grid cells are named by row and column: {example} is row {row}, column {col} "
            "(row 0 is the southernmost, column 0 the westernmost). The starting patterns use "
            "the cells holding the starting places: "
            + ", ".join(f"{plain_text(p)} in {cell[p]}" for p in used) + ".")
    return f"{KEY}patterns_{source}_grid_{user}_{regions.cell_m:g}", grid_rows, note


@st.cache_data(show_spinner=False, max_entries=16)
def build_events(source: str, n_taxis: int, user: str | None, regions_key: tuple,
                 kinds: tuple[str, ...], dwell_min: float, tick_min: float):
    """Event stream of the selected data (history = first day, release = the rest)."""
    df = load_data(source, n_taxis)
    if source == "sample" and user is not None:
        df = df[df["uid"] == user]
    kind, spec = regions_key
    regions: GridRegions | PlaceRegions
    if kind == "grid":
        regions = GridRegions.covering(df["lat"], df["lon"], spec)
    else:
        regions = PlaceRegions.from_places(pd.DataFrame(
            list(spec), columns=["name", "lat", "lon", "radius_m"]))
    events = region_events(df, regions, kinds=kinds, dwell_s=dwell_min * 60).coarsen(
        tick_min * 60)
    t0 = int(events.tick_time.min())
    split = utc_midnight_ns(t0) + NS_PER_DAY  # the first day is the history
    return regions, events.time_slice(stop=split), events.time_slice(start=split)


def parse_patterns(rows: list[dict], types: tuple[str, ...]) -> list[Pattern]:
    """Table rows → Patterns; LmdkError naming the row and the problem."""
    out = []
    for i, row in enumerate(rows, start=1):
        seq = [t.strip() for t in str(row.get("sequence") or "").replace("->", "→").split("→")]
        seq = [t for t in seq if t]
        if not seq:
            raise LmdkError(f"pattern row {i}: the sequence is empty")
        unknown = [t for t in seq if t not in types]
        if unknown:
            kinds = sorted({t.split(":", 1)[0] for t in types})
            raise LmdkError(
                f"pattern row {i}: {', '.join(unknown)} "
                f"{'is not an event type' if len(unknown) == 1 else 'are not event types'} of "
                f"these regions and event kinds ({', '.join(kinds)}). Pick the types from the "
                "list in 'Sequence' above, fix the row, or delete it.")
        try:
            window = float(row.get("window_min"))  # type: ignore[arg-type]  # None: TypeError
        except (TypeError, ValueError):
            raise LmdkError(f"pattern row {i}: window must be a number of minutes") from None
        if not np.isfinite(window) or window < 0:
            raise LmdkError(f"pattern row {i}: window must be ≥ 0 minutes")
        name = str(row.get("name") or f"pattern {i}")
        out.append(Pattern(tuple(seq), window * 60, private=bool(row.get("private")), name=name))
    names = [p.name for p in out]
    if len(set(names)) != len(names):
        raise LmdkError("pattern names must be distinct")
    return out


@st.cache_data(show_spinner=False, max_entries=16)
def quality_table(_history, _stream, stream_key: tuple, patterns: tuple, mechanisms: tuple,
                  seeds: int, alpha: float) -> pd.DataFrame:
    """Prec/Rec/Q/MRE per mechanism and ε (cached per data, patterns and settings)."""
    pats = [Pattern(t, w, private=p, name=n) for n, t, w, p in patterns]
    runs = ev.compare(_stream, pats, epsilons=EPSILONS, mechanisms=list(mechanisms),
                      history=_history, seeds=seeds, baseline_seeds=max(1, seeds // 2),
                      adaptive_alpha=alpha)
    return ev.summarise(runs, [alpha])


# ------------------------------------------------------------------------------ page


def guarantee_sentence(neighbour: str, eps: float, pats: list[Pattern],
                       types: tuple[str, ...]) -> str:
    """The page's guarantee in plain words (docs/pattern-level-dp.md §3–4; claims register)."""
    priv = [p for p in pats if p.private]
    prot = protection(pats, types)
    others = [t for t in types if t not in prot.types]
    factor = f"{np.exp(eps):.3g}"
    not_covered = (
        f" **Not covered:** events of the other types ({plain_text(', '.join(others))}) are "
        "published as they are; if they predict a private event (see the check below), they "
        "can give it away." if others else "")
    if neighbour == "instance":
        return (f"**Guarantee:** for every private pattern "
                f"({plain_text(', '.join(p.name for p in priv))}), "
                "whether one occurrence happened — its events together with the other events "
                "of the visits they begin or end, all of the protected types "
                f"({plain_text(', '.join(prot.types))}) — changes the probability of any "
                f"released stream by at most a factor e^ε = {factor} (ε = {eps:g}). In plain "
                "words: whatever anyone knew before, seeing the release can multiply their "
                f"odds that the occurrence happened by at most {factor}. Several occurrences of "
                "the same person add up (k occurrences: e^(kε))." + not_covered)
    m = max(p.m for p in priv)
    return (f"**Guarantee (single-event reading):** any ONE event of a private pattern, with "
            f"the other events of its visit, changes the probability of any released stream by "
            f"at most e^ε = {factor}; a whole occurrence of length m costs up to e^(mε) (here up "
            f"to e^{m * eps:g}) — weaker than the default whole-occurrence reading." + not_covered)


def protection_notes(stream, history, pats: list[Pattern]) -> None:
    """Which types the page protects besides the patterns' own and why; and the check of the
    unprotected types that predict a protected one on the history day."""
    prot = protection(pats, stream.types)
    if prot.added:
        st.markdown("**Protected together with your private patterns** (added by the page):\n\n"
                    + "\n".join(f"* {r}" for r in prot.reasons()))
    table = predictive_types(history, pats)
    measured = (
        "What is checked: on the history day only (the first day, never released; read here "
        "without protection, like the Adaptive PPM does, and shown to you alone), for each "
        "unprotected type u and protected type k, the share of u events with a k event of the "
        "same person within the private pattern's window before or after, against the same "
        "share at a random sampling time. A warning means: at least "
        f"{PREDICTIVE_MIN_EVENTS} u events, at least {PREDICTIVE_PRECISION:.0%} of them near a k "
        f"event, and at least {PREDICTIVE_LIFT:g}× the random rate.")
    strong = table[table["strong"]]
    if not len(strong):
        busy = table[table["events"] >= PREDICTIVE_MIN_EVENTS]
        note = ("No unprotected type predicts a protected one on the history day."
                if len(busy) else
                f"The history day holds too few events of unprotected types (fewer than "
                f"{PREDICTIVE_MIN_EVENTS} of each) to check whether they predict a protected "
                "one.")
        st.caption(f"{note} {measured}")
        return
    lines = [f"* **{plain_text(r.unprotected)}**: {r.hits:,} of its "
             f"{plain_count(r.events, 'event')} had a "
             f"**{plain_text(r.protected)}** "
             f"within {r.window_s / 60:g} min ({r.precision:.0%}; at a random time "
             f"{r.base_rate:.0%})" for r in strong.itertuples()]
    st.warning("Unprotected events that give a protected one away: the guarantee does not "
               "cover them, since they are published as they are. Make a pattern with them "
               "private, or remove that event kind.\n\n" + "\n".join(lines),
               icon=":material/visibility:")
    st.caption(measured)


def show_message(name: str) -> None:
    """The stored message ``name`` (an error or a refusal), if any."""
    message = state.page_value(name)
    if message:
        st.error(plain_text(message), icon="⚠️")


def sidebar() -> dict:
    """The sidebar's controls (each kept across page switches); returns their values."""
    with st.sidebar:
        st.header("Patterns page")
        source = st.radio(
            "Data", SOURCES, key=w(KEY + "source", "sample", SOURCES),
            format_func=lambda s: {"sample": "bundled sample (4 people, 5 days)",
                                   "taxis": "synthetic taxis (T-Drive-shaped, 2 days)"}[s],
            help="Both data sets ship with lmdk. The first day is the history the Adaptive "
                 "PPM learns from; the page releases the remaining days.")
        n_taxis = 50
        if source == "taxis":
            n_taxis = st.slider("Taxis", 10, 300, step=10, key=w(KEY + "taxis", 50),
                                help="Number of synthetic taxis (one data subject each).")
        df = load_data(source, n_taxis)
        user = None
        if source == "sample":
            people = sorted(df["uid"].unique())
            user = st.selectbox("Person", people, key=w(KEY + "user", people[0], people),
                                help="Whose events to protect and show.")
        region_kind = st.radio(
            "Regions", ["places", "grid"], key=w(KEY + "regions", "places", ("places", "grid")),
            horizontal=True,
            help="Events happen when the person enters/leaves/dwells in a region: your named "
                 "places (table below) or the cells of a square grid.")
        all_kinds = ["enter", "leave", "dwell"]
        kinds = tuple(st.multiselect(
            "Event kinds", all_kinds,
            key=w(f"{KEY}kinds_{source}",
                  ["enter", "leave"] if source == "sample" else ["enter"], all_kinds),
            help="enter: first fix inside a region; leave: first fix after a visit; dwell: "
                 "the visit reached the dwell time."))
        dwell_min = st.number_input(
            "Dwell time (minutes)", 1.0, 600.0, key=w(KEY + "dwell", 10.0),
            help="Minutes in a region before a dwell event.")
        tick_min = st.number_input(
            "Time resolution (minutes)", 1.0, 120.0, key=w(KEY + "tick", 5.0),
            help="Events are placed on a public grid of this many minutes; each (slot, type) is "
                 "one indicator for randomised response. Coarser: fewer synthetic events.")
        st.header("Privacy")
        eps = st.number_input(
            "Privacy budget ε", min_value=0.01, max_value=20.0, step=0.5,
            key=w(KEY + "eps", 2.0), help="Budget of the next release per private-pattern "
                                          "occurrence (see the neighbour relation). Smaller ε: "
                                          "stronger privacy, more noise. Your total budget "
                                          "across real releases is set in section 5.")
        neighbour = st.radio(
            "Neighbour relation", list(NEIGHBOURS),
            key=w(KEY + "neighbour", "instance", NEIGHBOURS),
            format_func=lambda n: {"instance": "whole occurrence (ε/m per event)",
                                   "event": "single event (ε per event)"}[n],
            help="What is hidden: a whole occurrence of a private pattern (default, the "
                 "pattern-level guarantee) or any single event of one (weaker).")
        mechanism = st.selectbox(
            "Mechanism", ["uniform", "adaptive"],
            key=w(KEY + "mech", "uniform", ("uniform", "adaptive")),
            format_func=lambda k: MECHANISM_LABELS[k],
            help="Uniform: the same budget for every event of a private pattern. Adaptive: "
                 "budgets chosen on the history day so the public patterns suffer least. Used "
                 "by the preview and by the real release.")
        seed = st.number_input(
            "Simulation seed (previews)", 0, 2**31 - 1, key=w(KEY + "seed", 1),
            help="The previews are seeded simulations (free, never downloadable); the real "
                 "release of section 5 uses fresh OS randomness and no seed.")
        ledger_box = st.container()
    return {"source": source, "n_taxis": n_taxis, "df": df, "user": user,
            "region_kind": region_kind, "kinds": kinds, "dwell_min": float(dwell_min),
            "tick_min": float(tick_min), "eps": float(eps), "neighbour": neighbour,
            "mechanism": mechanism, "seed": int(seed), "ledger_box": ledger_box}


def regions_section(source: str, df: pd.DataFrame, user: str | None, region_kind: str
                    ) -> tuple:
    """Section 1: the regions table (kept across page switches) or the grid's cell size."""
    st.subheader("1 · Regions")
    if region_kind == "grid":
        cell = st.number_input("Grid cell size (m)", 200.0, 10_000.0, step=100.0,
                               key=w(KEY + "cell", 1000.0), help="Side of each square cell, "
                                                                 "metres.")
        return ("grid", float(cell))
    name = f"{KEY}places_{source}_{user}"
    if state.page_value(name) is None:
        state.set_page_value(name, default_places(source, df, user).to_dict("records"))
    st.caption("Name, centre (degrees) and radius (metres) of each region; add or delete "
               "rows. Names become event types such as enter:Home.")
    editor = f"{name}_editor_{state.page_value(name + '_version', 0)}"
    table = st.data_editor(
        pd.DataFrame(state.page_value(name), columns=PLACE_COLUMNS), num_rows="dynamic",
        key=editor, on_change=state.page_table_edited, args=(name, editor, PLACE_COLUMNS),
        column_config={"radius_m": st.column_config.NumberColumn(
            "radius (m)", min_value=1.0, help="Radius in metres.")})
    try:
        table = table.dropna()
        regions_key = ("places", tuple(
            (str(r.name), float(r.lat), float(r.lon), float(r.radius_m))
            for r in table.itertuples(index=False)))
        PlaceRegions.from_places(table)  # validates: unique names, ranges
    except (LmdkError, ValueError, AttributeError) as exc:
        st.error(f"Regions: {plain_text(exc)}", icon="⚠️")
        st.stop()
    return regions_key


def patterns_section(store: tuple[str, list[dict], str | None], stream) -> list[Pattern]:
    """Section 2: the pattern builder and table (kept across page switches); ``store``: see
    :func:`pattern_store`."""
    st.subheader("2 · Patterns")
    pkey, defaults, note = store
    if state.page_value(pkey) is None:
        state.set_page_value(pkey, defaults)
    if note:
        st.caption(note)
    with st.form(KEY + "builder", clear_on_submit=False):
        cols = st.columns([3, 1, 1, 1])
        seq = cols[0].multiselect(
            "Sequence (pick event types in order)", list(stream.types), key=KEY + "new_seq",
            help="The pattern matches these events in this order, other events in between "
                 "are skipped.")
        window = cols[1].number_input("Window (min)", 0.0, 10_000.0, 120.0, key=KEY + "new_w",
                                      help="First to last event within this many minutes.")
        private = cols[2].checkbox("Private", key=KEY + "new_priv",
                                   help="Private: to hide. Public: the consumer's query.")
        name = cols[3].text_input("Name", key=KEY + "new_name", help="Optional label.")
        if st.form_submit_button("Add pattern", help="Append this pattern to the table."):
            if not seq:
                state.set_page_value(KEY + "error", "Add pattern: pick at least one event type.")
            else:
                state.set_page_value(pkey, [
                    *state.page_value(pkey), {"name": name or " → ".join(seq),
                                              "sequence": " → ".join(seq),
                                              "window_min": window, "private": private}])
                state.set_page_value(KEY + "error", None)
            st.rerun()
    st.caption("Edit the table to change a pattern, tick *private* to hide it (unticked: a "
               "public query), or select rows and delete them.")
    editor = f"{pkey}_editor_{state.page_value(pkey + '_version', 0)}"
    rows = st.data_editor(
        pd.DataFrame(state.page_value(pkey), columns=PATTERN_COLUMNS),
        num_rows="dynamic", key=editor, on_change=state.page_table_edited,
        args=(pkey, editor, PATTERN_COLUMNS),
        column_config={
            "sequence": st.column_config.TextColumn(
                "sequence", help="Event types separated by →"),
            "window_min": st.column_config.NumberColumn("window (min)", min_value=0.0),
            "private": st.column_config.CheckboxColumn(
                "private", help="Private patterns are hidden; others are public queries."),
        })
    pats = parse_patterns(rows.to_dict("records"), stream.types)
    if not any(p.private for p in pats):
        raise LmdkError("mark at least one pattern private: there is nothing to protect")
    if all(p.private for p in pats):
        raise LmdkError("add at least one public pattern: quality is measured on them")
    return pats


def preview_section(stream, release, pats: list[Pattern], alloc: dict, eps: float,
                    neighbour: str) -> None:
    """Section 3: what the preview releases (a seeded simulation: nothing here is exported)."""
    st.subheader("3 · What is released — preview (simulation)")
    st.caption("A **preview**: this release is a seeded simulation, for exploring only. It "
               "costs nothing and can never be downloaded; the real release is section 5.")
    st.markdown(guarantee_sentence(neighbour, eps, pats, stream.types))
    budgets = type_budgets(pats, alloc, types=stream.types)
    added = protection(pats, stream.types).added
    st.dataframe(pd.DataFrame({"event type": list(budgets),
                               "protected because": [
                                   f"pairs with {', '.join(added[t])}" if t in added
                                   else "in a private pattern" for t in budgets],
                               "ε per event": [round(v, 4) for v in budgets.values()],
                               "flip probability": [round(1 / (1 + np.exp(v)), 4)
                                                    for v in budgets.values()]}),
                 hide_index=True)
    c1, c2, c3 = st.columns(3)
    c1.metric("real events suppressed", f"{int(release.suppressed.sum()):,}",
              help="Real events of private-pattern types whose bit flipped to 0 (preview).")
    c2.metric("synthetic events injected", f"{int(release.injected.sum()):,}",
              help="Ticks whose bit flipped to 1 got a synthetic event (preview).")
    protected = [stream.type_code(t) for t in budgets]
    c3.metric("events passed unchanged",
              f"{int((~np.isin(stream.etype, protected)).sum()):,}",
              help="Events of types in no private pattern: never touched.")
    users = list(stream.users)
    show_user = users[0] if len(users) == 1 else st.selectbox(
        "Timeline of", users, key=w(KEY + "tl_user", users[0], users),
        help="Whose events to draw.")
    day0 = utc_midnight_ns(int(stream.tick_time.min()))
    days = st.slider("Days shown", 1, 4, key=w(KEY + "tl_days", 1),
                     help="Length of the timeline window from the first released day.")
    charts.show(timeline_figure(stream, release, user=show_user,
                                start=day0, stop=day0 + days * NS_PER_DAY),
                key=KEY + "timeline")
    st.caption("Suppressed and injected marks are the data holder's private diagnostics: the "
               "consumer sees only the released stream (blue and orange, unlabelled).")


def quality_section(history, stream, key: tuple, pats: list[Pattern], eps: float) -> None:
    """Section 4: public-pattern quality against ε (seeded simulations, cached)."""
    st.subheader("4 · Public-pattern quality against ε (simulations)")
    cols = st.columns([2, 1, 1])
    mechs = cols[0].multiselect(
        "Mechanisms", list(ev.MECHANISMS), key=w(KEY + "mechs", DEFAULT_MECHS, ev.MECHANISMS),
        format_func=lambda k: MECHANISM_LABELS[k],
        help="Baselines (event-level RR, w-event BD/BA, landmark schemes) run on the same "
             "events; the landmark ones run once per person (slower on many taxis).")
    alpha = cols[1].slider("α (weight of precision)", 0.0, 1.0, step=0.25,
                           key=w(KEY + "alpha", 0.5), help="Q = α·Prec + (1−α)·Rec.")
    seeds = cols[2].number_input("Runs per ε", 1, 50, key=w(KEY + "runs", 4),
                                 help="Simulation runs averaged per point.")
    if not mechs:
        return
    ptuple = tuple((p.name, p.types, p.window_s, p.private) for p in pats)
    table = quality_table(history, stream, key, ptuple, tuple(mechs), int(seeds), float(alpha))
    metrics = ("q", "prec", "rec", "mre")
    metric = st.radio("Show", metrics, horizontal=True, key=w(KEY + "metric", "q", metrics),
                      format_func=str.upper,
                      help="Q, precision, recall, or MRE = (Q_ord − Q)/Q_ord with Q_ord = 1.")
    charts.show(quality_figure(table, metric=metric), key=KEY + "quality")
    show = table[table["epsilon"] == min(EPSILONS, key=lambda e: abs(e - eps))]
    st.dataframe(show[["mechanism", "prec", "rec", "q", "mre", "seeds"]].round(3),
                 hide_index=True)
    st.caption("Prec/Rec over public-pattern matches against the unprotected stream; "
               "mean over runs. Table: the ε of the grid nearest to your ε.")


def person_set(source: str, user: str | None) -> tuple:
    """Whose ledger a release of this data goes to: one person of the sample, or the taxis
    (one stream of many subjects: every taxi is in every release of it)."""
    return ("sample", user) if source == "sample" else ("taxis",)


def who_label(person: tuple) -> str:
    return f"{person[1]} (sample)" if person[0] == "sample" else "the taxis"


def book() -> PatternSession:
    """This browser session's real pattern releases and ledgers (never shared)."""
    return state.page_object(KEY + "book", PatternSession)


def ledger_line(box, person: tuple) -> None:
    """The ledger at a glance, in the sidebar: spent so far / total budget."""
    total = book().total_budget(person)
    box.metric(f"Real releases of {who_label(person)}: spent / total budget",
               f"{book().spent(person):.3g} / " + ("not set" if total is None else
                                                  f"{total:.3g}"),
               help="Loss per protected pattern occurrence over every real release drawn "
                    "(section 5). Previews cost nothing.")


def real_section(person: tuple, stream_key: tuple, stream, regions, pats: list[Pattern],
                 alloc: dict, eps: float, neighbour: str, mechanism: str) -> None:
    """Section 5: the total budget, the real draw, its public download and the ledger."""
    st.subheader("5 · The real release")
    st.markdown(REAL_EXPLAINER)
    sess = book()
    ptuple = tuple((p.name, p.types, p.window_s, p.private) for p in pats)
    key = (stream_key, eps, neighbour, mechanism, ptuple)
    total = sess.total_budget(person)
    c1, c2 = st.columns([3, 2], vertical_alignment="bottom")
    c1.number_input(
        f"Your total budget for {who_label(person)}", min_value=0.01, max_value=1000.0,
        step=0.5, key=w(KEY + "budget_input", DEFAULT_TOTAL_BUDGET),
        help="The loss per protected pattern occurrence you accept across EVERY real release "
             "of this data. Separate from ε (the budget of one release): it changes only when "
             "you click the button.")
    c2.button("Set total budget", key=KEY + "set_budget", on_click=state.page_set_budget,
              args=(KEY + "budget_error", sess, person, KEY + "budget_input"),
              help="Make the value on the left your total budget (a deliberate act).")
    plan = sess.plan(person, pats, alloc, key=key, stream_key=stream_key, types=stream.types,
                     neighbour=neighbour)
    show_message(KEY + "budget_error")
    m1, m2, m3 = st.columns(3)
    m1.metric("Spent so far / your total budget",
              f"{plan.spent:.3g} / " + ("not set" if total is None else f"{total:.3g}"),
              help="Loss per protected pattern occurrence over every real release drawn.")
    m2.metric("This release costs", f"{plan.cost:.3g}",
              delta="already drawn" if plan.existing else "per occurrence", delta_color="off",
              delta_arrow="off",
              help="ε per private-pattern occurrence, its paired events included (single-event "
                   "reading: m·ε); nothing more for a release already drawn.")
    m3.metric("After drawing it", "—" if np.isinf(plan.after) else f"{plan.after:.3g}",
              help="Spent so far plus this release.")
    if mechanism == "adaptive" and neighbour == "instance":
        st.caption("Adaptive learns its budgets from the history day, which it uses "
                   "unprotected: the ledger counts the released days only.")
    drawn = sess.drawn(key)
    refusal = f"{KEY}draw_error:{hash(key)}"  # a refusal is shown with its own settings only
    if drawn is None:
        if plan.problem:
            st.warning(f"A draw now would be refused: {plain_text(plan.problem)}",
                       icon=":material/block:")
        st.button(
            "Draw the real release", key=KEY + "draw", type="primary",
            on_click=state.page_call,
            args=(refusal, sess.draw, person, stream, pats, alloc),
            kwargs={"key": key, "stream_key": stream_key, "epsilon": eps,
                    "neighbour": neighbour, "regions": regions, "mechanism": mechanism},
            help="Fresh OS randomness; counted in the ledger at once, downloaded or not.")
        show_message(refusal)
    else:
        released = drawn.release.stream
        st.success(f"Real release drawn for these settings: "
                   f"{plain_count(len(released), 'event')} released ({mechanism}, ε = {eps:g}). "
                   "It is kept for this session and never redrawn.", icon=":material/task_alt:")
        st.download_button(
            "Public release (CSV)", data=drawn.public_csv,
            file_name=export_file_name("pattern", mechanism, "csv", epsilon=eps),
            mime="text/csv",
            key=KEY + "download", on_click="ignore",
            help="The released events only: uid, time, type, lat, lon. No suppressed or "
                 "injected flag, no true event, no seed; the file name gives the mechanism "
                 "and ε.")
    ledger_tables(person)


def ledger_tables(person: tuple) -> None:
    ledger = book().ledger(person)
    if not ledger.entries:
        st.info(f"No real release of {who_label(person)} yet: the ledger is empty.")
        return
    st.markdown(f"**Ledger of {who_label(person)}** (every real release, drawn or downloaded)")
    st.dataframe(pd.DataFrame([
        {"draw": i, "mechanism": e.mechanism, "ε": e.epsilon,
         "reading": "whole occurrence" if e.neighbour == "instance" else "single event",
         "loss per occurrence": round(e.cost, 4)}
        for i, e in enumerate(ledger.entries, start=1)]), hide_index=True)
    st.dataframe(pd.DataFrame([
        {"private pattern": p.name, "sequence": " → ".join(p.types),
         "loss per occurrence (all draws)": None if not p.protected else round(p.loss, 4),
         "status": "protected" if p.protected else
         f"not protected: draw {p.exposed_by} published its events as they are"}
        for p in ledger.losses()]), hide_index=True)


def main() -> None:
    st.title("Patterns — hide private event sequences, keep public ones detectable")
    st.markdown(EXPLAINER)
    cfg = sidebar()
    source, n_taxis, df, user = cfg["source"], cfg["n_taxis"], cfg["df"], cfg["user"]
    eps, neighbour, kinds = cfg["eps"], cfg["neighbour"], cfg["kinds"]
    person = person_set(source, user)
    ledger_line(cfg["ledger_box"], person)
    show_message(KEY + "error")

    regions_key = regions_section(source, df, user, cfg["region_kind"])
    if not kinds:
        st.error("Choose at least one event kind.", icon="⚠️")
        st.stop()
    try:
        regions, history, stream = build_events(source, n_taxis, user, regions_key, kinds,
                                                cfg["dwell_min"], cfg["tick_min"])
    except LmdkError as exc:
        st.error(f"Events: {plain_text(exc)}", icon="⚠️")
        st.stop()
    st.caption(f"{plain_count(len(stream), 'event')} on {plain_count(stream.n_ticks, 'tick')} "
               f"released ({plain_count(len(history), 'event')} in the history day); "
               f"{plain_count(len(stream.types), 'event type')}.")

    # the allocation is decided before any noise: the preview and the real draw share it
    mechanism = "uniform" if neighbour == "event" else cfg["mechanism"]
    try:
        pats = patterns_section(pattern_store(source, df, user, regions), stream)
        alloc = (uniform_allocation(pats, epsilon=eps, neighbour=neighbour)
                 if mechanism == "uniform" else adaptive_allocation(history, pats, epsilon=eps))
        release = release_with_allocation(stream, pats, alloc, epsilon=eps, neighbour=neighbour,
                                          regions=regions, rng=cfg["seed"], mechanism=mechanism)
    except LmdkError as exc:
        st.error(plain_text(exc), icon="⚠️")
        st.stop()

    preview_section(stream, release, pats, alloc, eps, neighbour)
    protection_notes(stream, history, pats)
    stream_key = (source, n_taxis, user, regions_key, kinds, cfg["dwell_min"], cfg["tick_min"])
    quality_section(history, stream, stream_key, pats, eps)
    real_section(person, stream_key, stream, regions, pats, alloc, eps, neighbour, mechanism)


main()
