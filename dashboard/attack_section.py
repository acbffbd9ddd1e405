"""Section 4b: what an attacker learns from the public file, next to what the guarantee covers.

The numbers come from :func:`lmdk_core.attacks.attack_report` on seeded simulated releases with
the page's settings (never the real release), cached per setting in this session. They are shown
for the public file as the page publishes it: smoothed when section 4's toggle is on (then the
only attacker reads the smoothed file), else the stronger of the attacker reading the file as it
is and the one who smooths it first (:meth:`~lmdk_core.attacks.AttackReport.as_published`)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from lmdk_core import attacks
from lmdk_core.errors import LmdkError

from . import compute, smoothing_section, state
from .formatting import fmt_distance, plain_text
from .privacy_section import bounded_allocation, release_key

ATTACK_SEED = 0
"""Seed of the page's simulated releases: the same setting shows the same numbers."""
OPEN_KEY = "attack_open"
"""The section's expander state: collapsed (the default), nothing is computed — its
simulated releases cost about as much as the rest of a click, so they run only once asked for
and the charts above and below come first."""
RECORD_KEY = "attack_record"
"""This section's last report and the release it is for (read by the stakeholder story)."""


SMOOTHING_IS_FREE = ("smoothing reads only the public file and its settings, so anyone can do "
                     "it and it changes nothing in the guarantee.")
PUBLISHED_SMOOTHED = ("Your public download is smoothed (section 4), so the figures are those of "
                      "an attacker reading the smoothed file.")
PUBLISHED_AS_IS = ("Your public download is not smoothed, so each place shows the stronger of an "
                   "attacker reading the file as it is and one who smooths it first.")


def distance_table(rep: attacks.AttackReport) -> pd.DataFrame:
    """The report's median distances per place (:meth:`~lmdk_core.attacks.AttackReport.
    distances`) in plain words, headed for the file the page publishes."""
    file, smoothed, raw, none = attacks.DISTANCE_COLUMNS
    names = ({file: "Unsmoothed file", smoothed: "Smoothed (published)"}
             if rep.published_smoothed else
             {file: "From the file", smoothed: "After smoothing it"})
    names |= {"place": "Place", raw: "Raw trace", none: "No data"}
    table = rep.distances().drop(columns="shown")
    for col in attacks.DISTANCE_COLUMNS:
        table[col] = [fmt_distance(v) for v in table[col]]
    return table.rename(columns=names)


@st.cache_resource(**compute.SESSION)
def report(release_key: Any, places: compute.Places, _traj: pd.DataFrame, _rs: Any,
           _allocation: Any = None) -> attacks.AttackReport:
    """The attacks for one setting (``release_key``: the page's identity of a release — trace,
    settings, allocation — and the places), computed once."""
    return attacks.attack_report(_traj, list(places), settings=_rs, rng=ATTACK_SEED,
                                 allocation=_allocation)


def render(traj: pd.DataFrame, key: Any, rs: Any) -> attacks.AttackReport | None:
    """Section 4b (an expander, collapsed at first; the attacks run only while it is open, with
    a spinner; kept per setting). Returns the report."""
    box = st.expander(f"4b · What an attacker learns from the public file (open to run "
                      f"{attacks.ATTACK_DRAWS} simulated attacks)", expanded=False,
                      key=OPEN_KEY, on_change="rerun")
    with box:
        if not box.open:
            return None
        places = state.place_tuples()
        if rs is None or not places:
            st.info("Mark a place on the map to see what an attacker reading the public file "
                    "learns about it.")
            return None
        smoothed = smoothing_section.enabled()  # what the public download holds
        st.caption(
            f"The attacker reads only the public file (times and released locations) and its "
            f"settings (ε, r, scheme), and may smooth it first: {SMOOTHING_IS_FREE} Run on "
            f"{attacks.ATTACK_DRAWS} simulated releases with "
            "these settings — never on your real release — and on your raw trace for "
            "comparison. Its guesses: the densest released spot at night and in working hours, "
            "and the longest runs of a repeated point (docs/attacks.md). "
            + (PUBLISHED_SMOOTHED if smoothed else PUBLISHED_AS_IS)
        )
        allocation = bounded_allocation(key)
        try:
            rkey = release_key(key, rs, allocation)
            with st.spinner(f"Attacking {attacks.ATTACK_DRAWS} simulated releases…",
                            show_time=True):  # shown only while it runs (kept per setting)
                rep = report(rkey, places, traj, rs, allocation).as_published(smoothed=smoothed)
        except LmdkError as err:
            st.error(f"The attacks could not run: {plain_text(err)}")
            return None
        st.dataframe(distance_table(rep), hide_index=True)
        for text in attacks.place_sentences(rep):
            st.markdown(text)
        st.markdown(" ".join(attacks.guarantee_sentences(rep)))
        state.put(RECORD_KEY, {"release_key": rkey, "report": rep})
        return rep


POPULATION_PEOPLE = 200
"""People of the Population page the re-identification panel attacks (the first ones by id)."""
POPULATION_DRAWS = 3
POPULATION_OPEN_KEY = "pop_attack_open"


@st.cache_resource(**compute.SESSION)
def population_report(key: Any, _traj: pd.DataFrame, _places: pd.DataFrame, _people: pd.DataFrame,
                      scheme: str, cell_m: float) -> pd.DataFrame:
    """Re-identification of the first people of a population (``key``: its identity)."""
    first = list(_traj["uid"].drop_duplicates().sort_values())[:POPULATION_PEOPLE]
    traj = _traj[_traj["uid"].isin(first)]
    return attacks.population_reidentification(
        traj, _places[_places["uid"].isin(first)], _people[_people["uid"].isin(first)],
        rng=ATTACK_SEED, scheme=scheme, cell_m=cell_m, draws=POPULATION_DRAWS)


def population_panel(traj: pd.DataFrame, places: pd.DataFrame, people: pd.DataFrame, *,
                     scheme: str, cell_m: float, key: Any) -> None:
    """The Population page's re-identification panel (an expander; computed only while open)."""
    box = st.expander("Re-identification: what a few known places single out",
                      key=POPULATION_OPEN_KEY, on_change="rerun")
    with box:
        if not box.open:
            return
        st.caption(
            f"If each of the first {POPULATION_PEOPLE} people's traces were released on its own "
            f"({scheme} at their own ε_u, {POPULATION_DRAWS} simulated releases — never a real "
            "one), how many would an attacker single out knowing 2 cells of the public grid "
            "they visited, or their two most visited cells (home and work)? scikit-mobility's "
            "definitions; the raw traces for comparison (docs/attacks.md §3). It attacks "
            "individual releases, not the count release above.")
        try:
            table = population_report(key, traj, places, people, scheme, cell_m)
        except LmdkError as err:
            st.error(f"The attack could not run: {plain_text(err)}")
            return
        shown = table.rename(columns={
            "source": "Data attacked", "singled_out": "Singled out by 2 known cells",
            "location_risk": "Mean risk (2 cells)",
            "home_work_singled_out": "Singled out by home and work"})
        st.dataframe(shown.style.format({c: "{:.0%}" for c in shown.columns[1:]}),
                     hide_index=True)
