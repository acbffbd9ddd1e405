"""dashboard/hide_section.py under streamlit.testing AppTest (a tiny page runs it alone)."""

from __future__ import annotations

import pytest
from page_charts import figures
from streamlit.testing.v1 import AppTest

TIMEOUT = 60


def hide_page():
    import numpy as np
    import pandas as pd
    import streamlit as st

    from dashboard import hide_section
    from lmdk_core.session import ReleaseSettings, Session

    L = np.zeros(200, bool)
    L[20:60] = True
    L[150:170] = True
    traj = pd.DataFrame({"lat": np.full(200, 40.0), "lon": np.linspace(116.0, 116.1, 200)})
    eps = st.session_state.get("test_eps", 1.0)
    choice = hide_section.render(L, epsilon=eps)
    settings = ReleaseSettings(epsilon=eps, hide=choice.enabled,
                               epsilon_select=choice.epsilon_select or 0.1,
                               generator=choice.generator, max_dummies=choice.max_dummies)
    session = st.session_state.setdefault("session", Session())
    shown = session.preview(traj, L, settings, key=settings)  # what the page shows
    hide_section.render_details(shown, epsilon=eps)
    mask = shown.hidden.mask if shown.hidden is not None else L
    st.session_state["result"] = {
        "enabled": choice.enabled, "mask": np.flatnonzero(mask).tolist(),
        "eps_sel": choice.epsilon_select, "eps_scheme": settings.epsilon_scheme,
        "real": np.flatnonzero(L).tolist(), "spent": session.spent("p"),
    }


def interval_page():
    import lmdk_core as lm
    from dashboard import hide_section

    traj = lm.select_user(lm.load_sample(), "alice")
    L = lm.landmark_mask(traj, [(39.9925, 116.3395, 100), (39.9820, 116.3564, 100)])
    import streamlit as st

    st.session_state["counts"] = hide_section.render_interval(traj, L).counts()


def _metrics(at):
    return {m.label: m.value for m in at.metric}


@pytest.fixture
def session_accepts_stays(monkeypatch):
    """The page once lmdk_core.session's ReleaseSettings accepts the stays generator (the
    page offers what the session accepts; see hide_section.offered_generators)."""
    from lmdk_core import session

    if "stays" not in session.GENERATORS:
        monkeypatch.setattr(session, "GENERATORS", ("stays", *session.GENERATORS))


def test_offered_generators_default_to_fake_stays():
    from dashboard import hide_section as h

    everything = ("bernoulli", "greedy", "exhaustive", "stays")
    assert h.offered_generators(140, everything) == ["stays", "bernoulli", "greedy"]
    assert h.offered_generators(10, everything) == ["stays", "bernoulli", "greedy", "exhaustive"]
    assert h.offered_generators(0, everything)[-1] == "greedy"
    # what lmdk_core.session does not accept yet is not offered (ReleaseSettings would refuse it)
    assert h.offered_generators(140, ("bernoulli", "greedy")) == ["bernoulli", "greedy"]
    assert h.HideChoice(True).generator == h.offered_generators(0)[0]
    assert set(h.GENERATOR_LABELS) == set(h.PREFERRED_GENERATORS)


def test_guarantee_and_cost_texts_match_the_library():
    """Every number in the texts is the library's: the stay bound of Theorem S, Bernoulli's
    e^(k·ε_sel), and the exact expected number of dummies."""
    import math

    import numpy as np

    from dashboard import hide_section as h
    from lmdk_core import dummies as d

    L = np.zeros(1000, bool)
    L[100:400] = True  # a 300-moment stay
    L[600:650] = True
    text = h.guarantee_text(L, epsilon_select=0.1, generator="stays")
    k = d.default_stay_moments(1000)
    assert k == 10
    assert "up to 10 moments (1 % of the 1,000 released moments)" in text
    assert f"{math.exp(0.1):.3g}-fold" in text and f"{math.exp(0.05):.3g}-fold" in text
    mine = d.stay_epsilon(300, epsilon_select=0.1, stay_moments=k)
    assert f"longest stay here (300 moments) {math.exp(mine):.3g}-fold" in text
    bern = h.guarantee_text(L, epsilon_select=0.1, generator="bernoulli")
    assert "Per moment only" in bern and "e^30-fold" in bern
    assert "No guarantee" in h.guarantee_text(L, epsilon_select=0.1, generator="greedy")
    cost = h.cost_text(L, epsilon=1.0, epsilon_select=0.1, generator="stays")
    expected = d.expected_dummies(L, epsilon_select=0.1)
    assert f"about {expected:,.0f} extra protected moments" in cost
    assert f"{expected / 650:.0%} of your 650 ordinary moments".replace("%", " %") in cost
    assert f"about {650 - expected:,.0f} are left shown as ordinary" in cost
    # Uniform's noise factor, independently: (|L|+1+E[D])/(|L|+1) · ε/ε_scheme
    total = (351 + expected) / 351 * 1.0 / d.split_budget(1.0, epsilon_select=0.1)
    assert f"about {total - 1:.0%} larger".replace("%", " %") in cost
    assert f"{expected / 351:.0%} from protecting".replace("%", " %") in cost
    greedy = h.cost_text(L, epsilon=1.0, epsilon_select=0.1, generator="greedy")
    g = d.expected_dummies(L, epsilon_select=0.1, generator="greedy")
    assert abs(g - d.DUMMY_RATIO * 350) < 10  # the count utility aims at ρ·|L| dummies
    assert f"about {g:,.0f} extra protected moments" in greedy


def _hides_with_budget_split(at, first_label, first_prefix):
    r = at.session_state["result"]
    assert r["enabled"] is False and r["mask"] == r["real"] and r["eps_sel"] == 0.0
    assert "fake landmarks" in at.caption[0].value
    at.toggle(key="hide_on").set_value(True).run()
    assert not at.exception
    r = at.session_state["result"]
    assert r["enabled"] and set(r["real"]) < set(r["mask"])
    assert r["eps_sel"] == 0.1 and r["eps_scheme"] + r["eps_sel"] <= 1.0
    # the guarantee and the expected cost are stated before anything is drawn
    assert at.caption[0].value.startswith(first_prefix)
    assert at.caption[1].value.startswith("Expected fake landmarks:")
    m = _metrics(at)
    assert m["Real landmarks"] == "60"
    assert int(m["Dummy landmarks"].replace(",", "")) == len(r["mask"]) - 60
    assert "ε_scheme/(|L'|+1)" in at.caption[2].value
    assert "fake landmarks" in at.caption[3].value
    names = {t.get("name") for fig in figures(at).values() for t in fig["data"]}
    assert {"real landmark", "dummy landmark"} <= names
    # a rerun keeps the same (simulated) draw; a new setting draws again; nothing is spent
    first = r["mask"]
    assert r["spent"] == 0.0
    at.run()
    assert at.session_state["result"]["mask"] == first
    at.number_input(key="hide_eps").set_value(0.2).run()
    r2 = at.session_state["result"]
    assert r2["eps_sel"] == 0.2 and set(r2["real"]) < set(r2["mask"])
    # the exhaustive generator is not offered for 140 ordinary moments
    options = at.selectbox(key="hide_gen").options
    assert options[0] == first_label and len(options) in (2, 3)  # the default first
    assert "hide_cap" not in [w.key for w in at.number_input]  # no cap for provable dummies
    at.selectbox(key="hide_gen").set_value("greedy").run()
    r3 = at.session_state["result"]
    assert set(r3["real"]) <= set(r3["mask"]) and r3["eps_sel"] == 0.2
    assert "hide_cap" in [w.key for w in at.number_input]
    assert "No guarantee" in at.caption[0].value


def test_off_by_default_then_hides_with_budget_split(session_accepts_stays):
    from dashboard import hide_section as h

    assert h.HideChoice(True).generator == "stays"
    at = AppTest.from_function(hide_page, default_timeout=TIMEOUT).run()
    assert not at.exception
    _hides_with_budget_split(at, "Fake stays (provable per stay)", "Per stay:")


def test_page_works_with_the_generators_the_session_accepts_today():
    """Before lmdk_core.session lists the stays generator the page offers what it accepts."""
    from lmdk_core import session

    at = AppTest.from_function(hide_page, default_timeout=TIMEOUT).run()
    assert not at.exception
    first = "stays" if "stays" in session.GENERATORS else "bernoulli"
    from dashboard.hide_section import GENERATOR_LABELS

    _hides_with_budget_split(at, GENERATOR_LABELS[first],
                             "Per stay:" if first == "stays" else "Per moment only:")


def test_a_draw_that_makes_every_moment_a_landmark_says_so(session_accepts_stays, monkeypatch):
    import numpy as np

    from lmdk_core import dummies

    real = dummies.stay_dummies

    def everything(mask, **kw):  # the draw in which every ordinary moment becomes a dummy
        return ~np.asarray(mask), real(mask, **kw)[1]

    monkeypatch.setattr(dummies, "stay_dummies", everything)
    at = AppTest.from_function(hide_page, default_timeout=TIMEOUT).run()
    at.toggle(key="hide_on").set_value(True).run()
    assert not at.exception
    assert len(at.session_state["result"]["mask"]) == 200
    assert any("Skip releases no point at all" in c.value for c in at.caption)


def test_budget_too_large_shows_the_library_message():
    at = AppTest.from_function(hide_page, default_timeout=TIMEOUT)
    at.session_state["test_eps"] = 0.05
    at.run()
    at.toggle(key="hide_on").set_value(True).run()
    at.number_input(key="hide_eps").set_value(0.05).run()
    assert not at.exception
    assert "must be smaller than the total epsilon" in at.error[0].value
    assert at.session_state["result"]["enabled"] is False


def test_cap_limits_dummies():
    at = AppTest.from_function(hide_page, default_timeout=TIMEOUT).run()
    at.toggle(key="hide_on").set_value(True).run()
    at.selectbox(key="hide_gen").set_value("greedy").run()  # the cap applies to candidate sets
    at.number_input(key="hide_cap").set_value(3).run()
    r = at.session_state["result"]
    assert 1 <= len(r["mask"]) - len(r["real"]) <= 3


def test_interval_shows_both_counts():
    at = AppTest.from_function(interval_page, default_timeout=TIMEOUT).run()
    assert not at.exception
    assert at.session_state["counts"]["timestamps_after"] == 11_373
    at.number_input(key="interval_min").set_value(5.0).run()
    c = at.session_state["counts"]
    assert c == {"timestamps_before": 11_373, "timestamps_after": 1_259,
                 "landmarks_before": 7_046, "landmarks_after": 825}
    text = " ".join(m.value for m in at.markdown)
    assert "**1,259** of 11,373 moments released" in text
    assert "**825** of 7,046 at your places" in text
