"""A map click recomputes only what the click changes (issue 27, many people at once: one server
runs every session's clicks in turn). The data selection (person list, the person's points, the
time range) and the suggested places' names and labels are kept per selection in the session;
a click reuses them, a new range or person works them out again, and the page shows what a
fresh computation gives."""

from __future__ import annotations

import datetime as dt

import pandas as pd
from apptest_helpers import add_place_by_click, run

from dashboard import map_section
from lmdk_core import trajectory


def _summary(at) -> str:
    return next(m.value for m in at.markdown if " points** over " in m.value)


def _offered(at) -> list[str]:
    return [b.label for b in at.button if b.key and b.key.startswith("suggest_")]


def test_a_click_reuses_the_selection_and_the_suggestions(app, fake_map, home, monkeypatch,
                                                          _sample_once):
    calls = {"select_user": 0, "labels": 0}
    select_user, labels = trajectory.select_user, map_section.suggestion_labels

    def counted_select(*a, **k):
        calls["select_user"] += 1
        return select_user(*a, **k)

    def counted_labels(*a, **k):
        calls["labels"] += 1
        return labels(*a, **k)

    monkeypatch.setattr(trajectory, "select_user", counted_select)
    monkeypatch.setattr(map_section, "suggestion_labels", counted_labels)
    offered = _offered(app)
    add_place_by_click(app, fake_map, *home)
    assert len(app.session_state["places"]) == 1
    assert calls == {"select_user": 0, "labels": 0}  # nothing of the selection recomputed
    assert _offered(app) == offered  # the same labels, the place's own suggestion now taken

    # a shorter time range: a new selection, its own summary and suggestions
    df = _sample_once
    one = df[df.uid == df.uid.iloc[0]].reset_index(drop=True)
    slider = next(s for s in app.slider if s.label == "Time range (UTC)")
    t0, t1 = slider.value
    end = t0 + (t1 - t0) / 2
    end = end - dt.timedelta(minutes=end.minute % 10, seconds=end.second,
                             microseconds=end.microsecond)  # on the slider's 10-minute step
    slider.set_value((t0, end))
    run(app)
    n = len(trajectory.time_slice(one, pd.Timestamp(t0), pd.Timestamp(end)))
    assert _summary(app).startswith(f"**{n:,} points**")
    assert calls["select_user"] == 1 and calls["labels"] == 1  # the new range's points

    # another person: their own points and suggestions
    app.selectbox(key=f"uid_{app.session_state['data_token']}").set_value(
        trajectory.users(df)[1])
    run(app)
    other = df[df.uid == trajectory.users(df)[1]]
    assert _summary(app).startswith(f"**{len(other):,} points**")
    assert calls["select_user"] == 3 and calls["labels"] == 2  # their times, their points
