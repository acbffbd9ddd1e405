"""Issue 13 (provenance, stakeholder story) on the page under AppTest: after switching the
release to the TPL-bounded allocation the files are named after it and the private analysis
records the model, α, the time range and the release interval; the stakeholder HTML is built
from what the download button carries, holds no true data by default and counts in the ledger.
Every file is read from the data the download button was given, called as Streamlit does (in
another thread, without the session)."""

from __future__ import annotations

import html
import json
import re

import pytest
from apptest_helpers import APP, TIMEOUT, FakeMap, draw, marked_at_home, run, set_budget
from deferred_download import call_without_session, record_downloads
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime.forward_msg_queue import ForwardMsgQueue
from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext
from streamlit.testing.v1 import AppTest

import dashboard.map_section as map_section
from dashboard.export_section import STORY_LABEL
from lmdk_core.story import PRIVATE_BANNER


@pytest.fixture
def page(monkeypatch, home):
    """The page with Home marked; every download button's data and file name recorded."""
    seen = record_downloads(monkeypatch)
    sent = ScriptRunContext.enqueue

    def enqueue(self, msg):  # the fragment each download button's element is sent from
        if msg.WhichOneof("type") == "delta" and msg.delta.new_element.HasField(
                "download_button"):
            button = msg.delta.new_element.download_button
            seen.setdefault(button.label, {})["fragment"] = msg.delta.fragment_id
        return sent(self, msg)

    monkeypatch.setattr(ScriptRunContext, "enqueue", enqueue)
    fake = FakeMap()
    monkeypatch.setattr(map_section.map_element, "show", fake)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["tiles"] = "none"
    marked_at_home(at, home)  # one run (a click on it is test_app's)
    assert at.session_state["places"]
    draw(at)  # the files exist only for a real draw (ε = 1: the default total budget)
    return at, seen


@pytest.mark.parametrize(("fragments", "kept"), [(None, False), (["export"], True)])
def test_a_rerun_start_keeps_a_download_answer_only_for_a_fragment(fragments, kept):
    """Why the download buttons live in a fragment (CI under load: a public-file button stayed
    disabled for minutes). Streamlit answers a click on a deferred download over the websocket;
    a full rerun that starts before the answer is flushed clears the outgoing queue down to
    lifecycle messages, and the browser waits 180 s for an answer that never comes. A fragment
    rerun keeps every message that is not a delta. Checked on the installed Streamlit, so a
    release that changes either side shows here first."""
    answer = ForwardMsg()
    answer.backend_operation_response.request_id = "r1"
    answer.backend_operation_response.deferred_file.url = "/media/x.csv"
    queue = ForwardMsgQueue()
    queue.enqueue(answer)
    queue.clear(retain_lifecycle_msgs=True, fragment_ids_this_run=fragments)
    left = [m for m in queue.flush() if m.WhichOneof("type") == "backend_operation_response"]
    assert bool(left) is kept


def test_every_download_button_is_drawn_inside_a_fragment(page):
    """So a click on one reruns a fragment, never the whole page (main drew them in the page
    script, where the fragment id is empty)."""
    _, seen = page
    assert {"Public release (CSV)", "Public release (GeoJSON)", STORY_LABEL,
            "PRIVATE places (GeoJSON) — do not share"} <= set(seen)
    assert all(d["fragment"] for d in seen.values()), {k: d["fragment"] for k, d in seen.items()}


def _bounded_expander(at):
    return next(e for e in at.expander if "TPL-bounded allocation" in e.label)


@pytest.mark.slow
def test_bounded_release_names_every_export_and_the_report_records_provenance(page):
    at, seen = page
    set_budget(at, 100.0)  # room for two more real draws
    at.number_input(key="interval_min").set_value(5.0)  # one location per 5 minutes
    run(at)
    draw(at)
    seen.clear()
    run(at)
    sidebar_scheme = at.selectbox(key="scheme").value
    assert seen["Public release (CSV)"]["file_name"] == (
        f"lmdk_public_release_{sidebar_scheme}_eps1.csv")
    at.session_state["bounded_open"] = True  # the user opens the section (a keyed expander)
    run(at)
    assert _bounded_expander(at).proto.expanded is True
    at.number_input(key="alpha").set_value(0.5)
    at.toggle(key="use_bounded").set_value(True)
    run(at)
    at.toggle(key="release_bounded").set_value(True)
    run(at)
    draw(at)
    seen.clear()
    run(at)
    # the section holding the switch is still open after the whole page reran
    assert at.session_state["bounded_open"] is True
    assert _bounded_expander(at).proto.expanded is True
    assert any("TPL-bounded allocation (α = 0.5)" in m.value for m in at.markdown)
    names = {label: d["file_name"] for label, d in seen.items()}
    assert names["Public release (CSV)"] == "lmdk_public_release_tpl_bounded_eps1.csv"
    assert names["Public release (GeoJSON)"] == "lmdk_public_release_tpl_bounded_eps1.geojson"
    assert names["PRIVATE analysis (JSON) — do not share"] == (
        "lmdk_PRIVATE_analysis_tpl_bounded_eps1_DO_NOT_SHARE.json")
    assert names["Download a report for stakeholders (HTML)"] == (
        "lmdk_story_tpl_bounded_eps1.html")
    assert not any(sidebar_scheme in n for n in names.values())

    analysis = seen["PRIVATE analysis (JSON) — do not share"]["data"]
    report = json.loads(call_without_session(analysis))
    conf = report["configuration"]
    assert conf["allocation"] == "tpl_bounded" and conf["scheme"] == "budget"
    assert report["summary"]["allocation"] == "tpl_bounded"
    assert report["settings"]["released_with"] == "TPL-bounded allocation (α = 0.5)"
    assert report["settings"]["sidebar"]["scheme"] == sidebar_scheme  # recorded apart
    assert conf["release_interval_s"] == 300.0
    assert report["settings"]["release_interval_s"] == 300.0
    tr = conf["time_range"]
    assert tr["n_timestamps"] == conf["n_timestamps"] == len(report["series"]["time"])
    assert tr["start"] == report["series"]["time"][0] and tr["end"] == report["series"]["time"][-1]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", tr["start"])
    corr = report["correlation"]
    assert corr["released_with_bounded_allocation"] is True
    assert corr["alpha"] == 0.5
    assert corr["source"] == "public" and corr["parameters"]["strength"] == "moderate"
    assert corr["parameters"]["cell_m"] > 0 and corr["parameters"]["radius_m"] > 0
    assert corr["allocation_model"]["description"] == corr["description"]
    # with the time interval, the series has one entry per released moment, not per fix
    assert conf["n_timestamps"] < 2000

    story = call_without_session(seen["Download a report for stakeholders (HTML)"]["data"])
    assert "TPL-bounded allocation (α = 0.5)" in story
    assert "<th>Target bound α (TPL)</th><td>0.5</td>" in story
    # budgets chosen from the public preset never saw the places: the story may show them
    assert "How the privacy budget is spent over time" in story
    assert "made-up series" not in story
    assert "PRIVATE" not in story.split("</title>")[0]

    # switching back names the files after the sidebar scheme again
    at.toggle(key="release_bounded").set_value(False)
    seen.clear()
    run(at)
    assert seen["Public release (CSV)"]["file_name"] == (
        f"lmdk_public_release_{sidebar_scheme}_eps1.csv")


@pytest.mark.slow
def test_story_download_counts_like_the_csv_and_private_opt_in_says_private(page):
    at, seen = page
    session = at.session_state["lmdk_session"]
    (drawn,) = session.draws()  # counted when drawn, before any download
    assert len(session.ledger(drawn.person)) == 1 and not session.downloaded(drawn.person)
    button = next(b for b in at.get("download_button")
                  if b.label == "Download a report for stakeholders (HTML)")
    button.click()
    run(at)
    # the HTML shows the released trace: the same real release, already counted
    assert session.downloaded(drawn.person) == (drawn.token,)
    next(b for b in at.get("download_button") if b.label == "Public release (CSV)").click()
    run(at)
    assert len(session.ledger(drawn.person)) == 1  # same release: once
    # the bundled sample's offline roads give the public map bearings; its named points (the
    # sample's people's places) stay out, like the place the user marked
    public = call_without_session(seen[STORY_LABEL]["data"])
    assert "schematic main roads" in public and "<title>PRIVATE" not in public
    context = map_section.sample.load_sample_context()
    names = [f["properties"]["name"] for f in context["features"]
             if f["geometry"]["type"] == "Point"]
    assert names and not any(n in public for n in names)
    assert not any(p["name"] in public for p in at.session_state["places"])

    at.checkbox(key="story_private").check()
    seen.clear()
    run(at)
    label = "Download a PRIVATE report with your true trace and places (HTML)"
    assert seen[label]["file_name"].startswith("lmdk_PRIVATE_story_")
    assert seen[label]["file_name"].endswith("_DO_NOT_SHARE.html")
    doc = call_without_session(seen[label]["data"])
    assert "<title>PRIVATE — " in doc
    assert "Before and after: your true trace, your places and the release" in doc
    assert html.escape(PRIVATE_BANNER) in doc


def test_coarser_model_grid_is_stated_on_every_rerun(monkeypatch):
    """Issue 13: a chosen grid silently became coarser (the warning showed once, then the cached
    model hid it). The page states the cell used, and the private analysis records it."""
    monkeypatch.setattr(map_section.map_element, "show", FakeMap())
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["tiles"] = "none"
    run(at)
    from dashboard.loss_section import SOURCES

    at.radio(key="loss_source").set_value(SOURCES[1])
    run(at)
    at.select_slider(key="cell_m").set_value(200)
    for _ in range(2):  # the second run reads the cached model
        run(at)
        notes = [c.value for c in at.caption if c.value.startswith("Grid cell used:")]
        assert len(notes) == 1, [c.value for c in at.caption]
        used = float(re.search(r"Grid cell used: ([0-9,]+) m", notes[0]).group(1).replace(",",
                                                                                          ""))
        assert used > 200 and "200 m you chose" in notes[0]
        assert f"cells of {used:g} m" in " ".join(c.value for c in at.caption)  # the model's
    info = at.session_state["loss_model_info"]
    assert info["parameters"]["cell_m_requested"] == 200.0
    assert info["parameters"]["cell_m_used"] == used
    assert any("**TPL** (temporal privacy loss)" in c.value for c in at.caption)
