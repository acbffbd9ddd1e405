"""Issue 28 on the My trace page (AppTest): section 4b shows the attack's numbers per place from
simulated releases, says what the guarantee covers and what it does not, never touches the
real release, and computes nothing while collapsed."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pytest
from apptest_helpers import FakeMap, add_place_by_click, draw, offline_page, run
from browser_driver import home_of_first_user
from deferred_download import call_without_session, record_downloads
from ordered_steps import OrderedSteps
from streamlit.testing.v1 import AppTest

import dashboard.map_section as map_section
from dashboard.export_section import STORY_LABEL
from lmdk_core import attacks
from lmdk_core.formatting import plain_distance
from lmdk_core.story import ATTACK_PUBLIC_NOTE


@pytest.fixture(scope="module")
def page():
    """The page with Home marked (default settings), every attack_report call recorded, taken
    through :class:`Flow`'s steps. One page for the module (its first run with a place costs far
    more than the checks made on it)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield Flow(*_page(monkeypatch, home_of_first_user()))


def _page(monkeypatch, home):
    calls = []
    real = attacks.attack_report

    def spy(*args, **kw):
        calls.append(kw)
        out = real(*args, **kw)
        calls[-1]["report"] = out
        return out

    monkeypatch.setattr(attacks, "attack_report", spy)
    monkeypatch.setattr(map_section.map_element, "show", fake := FakeMap())
    calls.append({"downloads": record_downloads(monkeypatch)})
    return add_place_by_click(run(offline_page()), fake, *home), calls


def _section(at: AppTest):
    return next(e for e in at.expander if "What an attacker learns" in e.label)


def _section_text(at: AppTest) -> str:
    return "\n".join(m.value for m in _section(at).markdown)


def _section_table(at: AppTest):
    return _section(at).dataframe[0].value


class Flow(OrderedSteps):
    """The module's page taken through :attr:`STEPS` (:class:`OrderedSteps`: each once and in
    this order whichever test asks first, each recording what its test checks, so no test
    depends on which tests ran before it). ``at`` and ``calls``: the page and every
    attack_report call's keywords and report (``calls[0]`` holds the recorded downloads)."""

    STEPS = ("collapsed", "opened", "unsmoothed")

    def __init__(self, at: AppTest, calls: list) -> None:
        super().__init__()
        self.at, self.calls = at, calls

    def _collapsed(self) -> dict:
        """The page as the place's click left it: section 4b collapsed."""
        return {"calls": len(self.calls), "markdown": bool(_section(self.at).markdown)}

    def _opened(self) -> dict:
        """Section 4b opened."""
        self.at.session_state["attack_open"] = True
        run(self.at)
        return {"calls": list(self.calls), "smoothed": self.at.toggle(key="smooth_release").value,
                "text": _section_text(self.at), "table": _section_table(self.at).copy()}

    def _unsmoothed(self) -> dict:
        """Then the smoothing toggle off."""
        before = len(self.calls)
        self.at.toggle(key="smooth_release").set_value(False)
        run(self.at)
        return {"before": before, "calls": list(self.calls), "text": _section_text(self.at),
                "columns": list(_section_table(self.at).columns)}


def test_collapsed_at_first_computes_nothing(page):
    """Section 4b starts collapsed: with a place marked no attack runs until it is opened, so a
    map click updates the charts without waiting for 20 simulated releases."""
    seen = page.upto("collapsed")
    assert seen["calls"] == 1 and not seen["markdown"]  # only the download recorder: no attack


def test_panel_shows_the_numbers_of_simulated_releases(page):
    seen = page.upto("opened")
    calls = seen["calls"]
    assert len(calls) > 1, "section 4b ran no attack"
    rep = calls[-1]["report"]
    assert isinstance(calls[-1]["rng"], int)  # seeded simulations only
    assert seen["smoothed"]  # the page publishes the smoothed file
    text = seen["text"]
    row = rep.table().iloc[0]
    # the figures are those of the smoothed file, the one the page publishes
    assert (f"in the public file (smoothed) lands within **{plain_distance(row.smoothed_median_m)}"
            f"** (median over 20 simulated") in text
    assert f"against **{plain_distance(row.raw_m)}** from the raw trace" in text
    assert row.raw_m < 100  # the raw trace gives home away
    assert attacks.GUARANTEE_COVERS in text and attacks.GUARANTEE_LEAVES in text
    shown = rep.as_published(smoothed=True)
    assert text.startswith("\n".join(attacks.place_sentences(shown)))
    # the located-place sentence appears exactly when the code says the place is located
    assert ("locates a place although its moments are protected" in text) == bool(
        shown.located().any())
    table = seen["table"]
    assert list(table.iloc[0]) == [row.place, *(plain_distance(v) for v in (
        row.release_median_m, row.smoothed_median_m, row.raw_m, row.baseline_median_m))]
    assert list(table.columns)[1:3] == ["Unsmoothed file", "Smoothed (published)"]


def test_unsmoothed_download_shows_the_stronger_attacker_without_new_attacks(page):
    """Smoothing off: the public file is the release itself, so each place shows whichever
    attacker lands closer — reading it or smoothing it first — from the same report."""
    seen = page.upto("unsmoothed")
    calls = seen["calls"]
    assert len(calls) == seen["before"]  # the same simulated releases: the toggle only reads
    rep = calls[-1]["report"]
    text = seen["text"]
    assert text.startswith("\n".join(attacks.place_sentences(rep)))
    row = rep.table().iloc[0]
    best = min(row.release_median_m, row.smoothed_median_m)
    assert rep.median_m()[0] == best and f"lands within **{plain_distance(best)}**" in text
    assert seen["columns"][1:3] == ["From the file", "After smoothing it"]


@pytest.mark.slow
def test_cached_per_setting_never_on_the_real_release_and_lazy(page):
    """Last on the module's page: it changes the settings after every step of :class:`Flow`
    (which it takes first: section 4b open, smoothing off)."""
    page.upto(Flow.STEPS[-1])
    at, calls = page.at, page.calls
    n = len(calls)
    run(at)
    assert len(calls) == n  # a rerun with the same setting computes nothing
    at.number_input(key="total_budget_input").set_value(100.0)
    run(at)
    at.button(key="total_budget_set").click()
    run(at)
    draw(at)  # a real release exists now
    before = _section_text(at)
    assert before  # still the simulations' numbers
    for kw in calls[1:]:
        assert isinstance(kw["rng"], int)
    # the public stakeholder story does not carry the distances (computed from the true
    # places): it says they are in the private version
    story = html.unescape(call_without_session(calls[0]["downloads"][STORY_LABEL]["data"]))
    rep = calls[-1]["report"]
    assert f"within {plain_distance(rep.table().iloc[0].release_median_m)}" not in story
    assert ATTACK_PUBLIC_NOTE in story
    at.number_input(key="epsilon").set_value(0.2)
    run(at)
    assert len(calls) > n
    assert np.median(calls[-1]["report"].released_m[:, 0]) > np.median(
        calls[n - 1]["report"].released_m[:, 0])  # less ε, the attacker lands farther
    n = len(calls)
    at.session_state["attack_open"] = False  # collapsed: nothing is computed
    at.number_input(key="epsilon").set_value(0.3)
    run(at)
    assert len(calls) == n


@pytest.mark.slow
def test_population_page_panel_runs_only_when_opened():
    page = str(Path(__file__).resolve().parent.parent / "dashboard" / "page_population.py")
    at = AppTest.from_file(page, default_timeout=180)
    at.session_state["_w_pop_n"] = 200
    run(at)
    box = next(e for e in at.expander if "Re-identification" in e.label)
    assert not box.dataframe  # collapsed: nothing computed
    at.session_state["pop_attack_open"] = True
    run(at)
    box = next(e for e in at.expander if "Re-identification" in e.label)
    table = box.dataframe[0].value
    assert list(table["Data attacked"]) == ["raw trace", "release 1", "release 2", "release 3"]
    raw = table.iloc[0]
    assert (table.iloc[1:]["Singled out by home and work"] < raw["Singled out by home and work"]
            ).all()
