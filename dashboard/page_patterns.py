"""Streamlit page "Patterns": pattern-level privacy for event streams (Gu et al., ICDE 2023).

Standalone: ``streamlit run dashboard/page_patterns.py``; also a page for ``st.navigation``.
The page only arranges controls and views; the privacy logic is in ``lmdk_core.patterns``.
Its releases are previews with a simulation seed: the page exports nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `streamlit run dashboard/page_patterns.py` puts dashboard/ first
    sys.path.insert(0, str(ROOT))

from dashboard import charts  # noqa: E402
from lmdk_core.errors import LmdkError  # noqa: E402
from lmdk_core.patterns import (  # noqa: E402
    NEIGHBOURS,
    GridRegions,
    Pattern,
    PlaceRegions,
    adaptive_allocation,
    region_events,
    release_with_allocation,
    type_budgets,
    uniform_allocation,
)
from lmdk_core.patterns import evaluate as ev  # noqa: E402
from lmdk_core.patterns.figures import (  # noqa: E402
    MECHANISM_LABELS,
    quality_figure,
    timeline_figure,
)
from lmdk_core.patterns.taxi import hotspots, taxi_trajectories  # noqa: E402

EPSILONS = (0.1, 0.5, 1.0, 2.0, 4.0, 8.0)
DEFAULT_MECHS = ["uniform", "uniform-event", "adaptive", "event-rr"]
KEY = "pat_"  # prefix of this page's session-state keys

EXPLAINER = """
**Pattern-level privacy.** Some *sequences* of events are sensitive — leaving home and reaching a
clinic within two hours — while others are what a data consumer legitimately asks about — home to
work. Mark the sensitive sequences **private** and the consumer's queries **public**. The
mechanism randomises only the event types that private patterns use: a real event of such a type
may be *suppressed* and synthetic ones are *injected*, so nobody can tell whether a private
pattern happened, while events of other types pass unchanged and public patterns stay detectable.
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


@st.cache_data(show_spinner=False, max_entries=16)
def build_events(source: str, n_taxis: int, user: str | None, regions_key: tuple,
                 kinds: tuple[str, ...], dwell_min: float, tick_min: float):
    """Event stream of the selected data (history = first day, release = the rest)."""
    df = load_data(source, n_taxis)
    if source == "sample" and user is not None:
        df = df[df["uid"] == user]
    kind, spec = regions_key
    if kind == "grid":
        regions = GridRegions.covering(df["lat"], df["lon"], spec)
    else:
        regions = PlaceRegions.from_places(pd.DataFrame(
            list(spec), columns=["name", "lat", "lon", "radius_m"]))
    events = region_events(df, regions, kinds=kinds, dwell_s=dwell_min * 60).coarsen(
        tick_min * 60)
    t0 = int(events.tick_time.min())
    day = 86400 * 10**9
    split = (t0 // day + 1) * day
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
            raise LmdkError(f"pattern row {i}: unknown event type(s) {', '.join(unknown)}")
        window = row.get("window_min")
        try:
            window = float(window)
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


def guarantee_sentence(neighbour: str, eps: float, pats: list[Pattern]) -> str:
    priv = [p for p in pats if p.private]
    if neighbour == "instance":
        return (f"**Guarantee:** for every private pattern ({', '.join(p.name for p in priv)}), "
                f"one occurrence — all its events together — changes the probability of any "
                f"released stream by at most a factor e^ε = {np.exp(eps):.3g} (ε = {eps:g}); "
                "several occurrences of the same person add up (k occurrences: e^(kε)).")
    m = max(p.m for p in priv)
    return (f"**Guarantee (single-event reading):** any ONE event of a private pattern changes "
            f"the probability of any released stream by at most e^ε = {np.exp(eps):.3g}; a whole "
            f"occurrence of length m costs up to e^(mε) (here up to e^{m * eps:g}) — weaker than "
            "the default whole-occurrence reading.")


def main() -> None:
    ss = st.session_state
    ss.setdefault(KEY + "error", None)
    st.title("Patterns — hide private event sequences, keep public ones detectable")
    st.markdown(EXPLAINER)

    with st.sidebar:
        st.header("Patterns page")
        source = st.radio(
            "Data", ["sample", "taxis"], key=KEY + "source",
            format_func=lambda s: {"sample": "bundled sample (4 people, 5 days)",
                                   "taxis": "synthetic taxis (T-Drive-shaped, 2 days)"}[s],
            help="Both data sets ship with lmdk. The first day is the history the Adaptive "
                 "PPM learns from; the page releases the remaining days.")
        n_taxis = 50
        if source == "taxis":
            n_taxis = st.slider("Taxis", 10, 300, 50, step=10, key=KEY + "taxis",
                                help="Number of synthetic taxis (one data subject each).")
        df = load_data(source, n_taxis)
        user = None
        if source == "sample":
            user = st.selectbox("Person", sorted(df["uid"].unique()), key=KEY + "user",
                                help="Whose events to protect and show.")
        region_kind = st.radio(
            "Regions", ["places", "grid"], key=KEY + "regions", horizontal=True,
            help="Events happen when the person enters/leaves/dwells in a region: your named "
                 "places (table below) or the cells of a square grid.")
        kinds = tuple(st.multiselect(
            "Event kinds", ["enter", "leave", "dwell"],
            default=["enter", "leave"] if source == "sample" else ["enter"], key=KEY + "kinds",
            help="enter: first fix inside a region; leave: first fix after a visit; dwell: "
                 "the visit reached the dwell time."))
        dwell_min = st.number_input(
            "Dwell time (minutes)", 1.0, 600.0, 10.0, key=KEY + "dwell",
            help="Minutes in a region before a dwell event.")
        tick_min = st.number_input(
            "Time resolution (minutes)", 1.0, 120.0, 5.0, key=KEY + "tick",
            help="Events are placed on a public grid of this many minutes; each (slot, type) is "
                 "one indicator for randomised response. Coarser: fewer synthetic events.")
        st.header("Privacy")
        eps = st.number_input(
            "Privacy budget ε", min_value=0.01, max_value=20.0, value=2.0, step=0.5,
            key=KEY + "eps", help="Total budget per private-pattern occurrence (see the "
                                  "neighbour relation). Smaller ε: stronger privacy, more noise.")
        neighbour = st.radio(
            "Neighbour relation", list(NEIGHBOURS), key=KEY + "neighbour",
            format_func=lambda n: {"instance": "whole occurrence (ε/m per event)",
                                   "event": "single event (ε per event)"}[n],
            help="What is hidden: a whole occurrence of a private pattern (default, the "
                 "pattern-level guarantee) or any single event of one (weaker).")
        mechanism = st.selectbox(
            "Mechanism shown in the timeline", ["uniform", "adaptive"], key=KEY + "mech",
            format_func=lambda k: MECHANISM_LABELS[k],
            help="Uniform: the same budget for every event of a private pattern. Adaptive: "
                 "budgets chosen on the history day so the public patterns suffer least.")
        seed = st.number_input(
            "Simulation seed", 0, 2**31 - 1, 1, key=KEY + "seed",
            help="The page previews releases with a seeded simulation; real releases use fresh "
                 "OS randomness (rng=None in lmdk_core.patterns), and nothing is exported.")

    if ss[KEY + "error"]:
        st.error(ss[KEY + "error"], icon="⚠️")

    # regions table
    st.subheader("1 · Regions")
    if region_kind == "places":
        base = default_places(source, df, user)
        st.caption("Name, centre (degrees) and radius (metres) of each region; add or delete "
                   "rows. Names become event types such as enter:Home.")
        table = st.data_editor(
            base, num_rows="dynamic", key=f"{KEY}places_{source}_{user}",
            column_config={"radius_m": st.column_config.NumberColumn(
                "radius (m)", min_value=1.0, help="Radius in metres.")})
        try:
            table = table.dropna()
            regions_key = ("places", tuple(
                (str(r.name), float(r.lat), float(r.lon), float(r.radius_m))
                for r in table.itertuples(index=False)))
            PlaceRegions.from_places(table)  # validates: unique names, ranges
        except (LmdkError, ValueError, AttributeError) as exc:
            st.error(f"Regions: {exc}", icon="⚠️")
            st.stop()
    else:
        cell = st.number_input("Grid cell size (m)", 200.0, 10_000.0, 1000.0, step=100.0,
                               key=KEY + "cell", help="Side of each square cell, metres.")
        regions_key = ("grid", float(cell))
    if not kinds:
        st.error("Choose at least one event kind.", icon="⚠️")
        st.stop()
    try:
        regions, history, stream = build_events(source, n_taxis, user, regions_key, kinds,
                                                float(dwell_min), float(tick_min))
    except LmdkError as exc:
        st.error(f"Events: {exc}", icon="⚠️")
        st.stop()
    st.caption(f"{len(stream):,} events on {stream.n_ticks:,} ticks released "
               f"({len(history):,} events in the history day); {len(stream.types)} event types.")

    # pattern builder
    st.subheader("2 · Patterns")
    pkey = f"{KEY}patterns_{source}"
    if pkey not in ss:
        ss[pkey] = default_patterns(source)
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
                ss[KEY + "error"] = "Add pattern: pick at least one event type."
            else:
                ss[pkey] = [*ss[pkey], {"name": name or " → ".join(seq),
                                        "sequence": " → ".join(seq), "window_min": window,
                                        "private": private}]
                ss[KEY + "error"] = None
            st.rerun()
    st.caption("Edit the table to change a pattern, tick *private* to hide it (unticked: a "
               "public query), or select rows and delete them.")
    rows = st.data_editor(
        pd.DataFrame(ss[pkey], columns=["name", "sequence", "window_min", "private"]),
        num_rows="dynamic", key=f"{pkey}_editor",
        column_config={
            "sequence": st.column_config.TextColumn(
                "sequence", help="Event types separated by →"),
            "window_min": st.column_config.NumberColumn("window (min)", min_value=0.0),
            "private": st.column_config.CheckboxColumn(
                "private", help="Private patterns are hidden; others are public queries."),
        })
    try:
        pats = parse_patterns(rows.to_dict("records"), stream.types)
        if not any(p.private for p in pats):
            raise LmdkError("mark at least one pattern private: there is nothing to protect")
        if all(p.private for p in pats):
            raise LmdkError("add at least one public pattern: quality is measured on them")
        alloc = (uniform_allocation(pats, epsilon=eps, neighbour=neighbour)
                 if mechanism == "uniform" or neighbour == "event"
                 else adaptive_allocation(history, pats, epsilon=eps))
        release = release_with_allocation(stream, pats, alloc, epsilon=eps, neighbour=neighbour,
                                          regions=regions, rng=int(seed), mechanism=mechanism)
    except LmdkError as exc:
        st.error(str(exc), icon="⚠️")
        st.stop()

    # guarantee and timeline
    st.subheader("3 · What is released")
    st.markdown(guarantee_sentence(neighbour, eps, pats))
    budgets = type_budgets(pats, alloc)
    st.dataframe(pd.DataFrame({"event type": list(budgets),
                               "ε per event": [round(v, 4) for v in budgets.values()],
                               "flip probability": [round(1 / (1 + np.exp(v)), 4)
                                                    for v in budgets.values()]}),
                 hide_index=True)
    c1, c2, c3 = st.columns(3)
    c1.metric("real events suppressed", f"{int(release.suppressed.sum()):,}",
              help="Real events of private-pattern types whose bit flipped to 0.")
    c2.metric("synthetic events injected", f"{int(release.injected.sum()):,}",
              help="Ticks whose bit flipped to 1 got a synthetic event.")
    protected = [stream.type_code(t) for t in budgets]
    c3.metric("events passed unchanged",
              f"{int((~np.isin(stream.etype, protected)).sum()):,}",
              help="Events of types in no private pattern: never touched.")
    users = list(stream.users)
    show_user = users[0] if len(users) == 1 else st.selectbox(
        "Timeline of", users, key=KEY + "tl_user", help="Whose events to draw.")
    day0 = pd.Timestamp(int(stream.tick_time.min()), tz="UTC").floor("D")
    days = st.slider("Days shown", 1, 4, 1, key=KEY + "tl_days",
                     help="Length of the timeline window from the first released day.")
    charts.show(timeline_figure(stream, release, user=show_user,
                                start=day0.tz_localize(None).to_datetime64(),
                                stop=(day0 + pd.Timedelta(days=days)).tz_localize(None)
                                .to_datetime64()),
                key=KEY + "timeline")
    st.caption("Suppressed and injected marks are the data holder's private diagnostics: the "
               "consumer sees only the released stream (blue and orange, unlabelled).")

    # quality
    st.subheader("4 · Public-pattern quality against ε")
    cols = st.columns([2, 1, 1])
    mechs = cols[0].multiselect(
        "Mechanisms", list(ev.MECHANISMS), default=DEFAULT_MECHS, key=KEY + "mechs",
        format_func=lambda k: MECHANISM_LABELS[k],
        help="Baselines (event-level RR, w-event BD/BA, landmark schemes) run on the same "
             "events; the landmark ones run once per person (slower on many taxis).")
    alpha = cols[1].slider("α (weight of precision)", 0.0, 1.0, 0.5, step=0.25, key=KEY + "alpha",
                           help="Q = α·Prec + (1−α)·Rec.")
    seeds = cols[2].number_input("Runs per ε", 1, 50, 4, key=KEY + "runs",
                                 help="Simulation runs averaged per point.")
    if mechs:
        key = (source, n_taxis, user, regions_key, kinds, float(dwell_min), float(tick_min))
        ptuple = tuple((p.name, p.types, p.window_s, p.private) for p in pats)
        table = quality_table(history, stream, key, ptuple, tuple(mechs), int(seeds),
                              float(alpha))
        metric = st.radio("Show", ["q", "prec", "rec", "mre"], horizontal=True,
                          key=KEY + "metric", format_func=str.upper,
                          help="Q, precision, recall, or MRE = (Q_ord − Q)/Q_ord with Q_ord = 1.")
        charts.show(quality_figure(table, metric=metric), key=KEY + "quality")
        show = table[table["epsilon"] == min(EPSILONS, key=lambda e: abs(e - eps))]
        st.dataframe(show[["mechanism", "prec", "rec", "q", "mre", "seeds"]].round(3),
                     hide_index=True)
        st.caption("Prec/Rec over public-pattern matches against the unprotected stream; "
                   "mean over runs. Table: the ε of the grid nearest to your ε.")


main()
