"""Names of new places and renaming in place (issue 27).

A place added by a click or a typed position is named after the suggested place (long stay)
it matches, else neutrally ``Place k``; never "Home" for whatever was clicked first. The
selected place can be renamed from a text field (keyboard) or the table; names stay unique and
a rename keeps the place's position, radius and selection.
"""

from __future__ import annotations

import re

import numpy as np
from apptest_helpers import APP, HOME_STAY, TIMEOUT, add_place_by_click, run
from hypothesis import given
from hypothesis import strategies as hs
from streamlit.testing.v1 import AppTest

from dashboard import state
from lmdk_core import places as pl
from lmdk_core import stays
from lmdk_core.geo import haversine_m, offset_points

names = hs.lists(hs.sampled_from(["Place 1", "Place 2", "Place 3", "Place 5", "Home",
                                  "Home 2", "Stay near x", "a"]), unique=True, max_size=8)


@given(names)
def test_new_place_name_is_neutral_unique_and_counts_the_places(taken):
    name = pl.new_place_name(taken)
    assert name not in taken
    k = int(re.fullmatch(r"Place (\d+)", name).group(1))
    # the smallest free number from one more than the number of places
    assert k >= len(taken) + 1
    assert all(f"Place {j}" in taken for j in range(len(taken) + 1, k))


def test_new_place_name_small_cases():
    assert pl.new_place_name([]) == "Place 1"
    assert pl.new_place_name(["Stay near x"]) == "Place 2"
    assert pl.new_place_name(["Place 1", "Place 2"]) == "Place 3"
    assert pl.new_place_name(["Place 3", "x"]) == "Place 4"


@given(hs.sampled_from(["Home", "Place 1", "Stay near x"]), names)
def test_unique_place_name(base, taken):
    name = pl.unique_place_name(base, taken)
    assert name not in taken
    assert (name == base) is (base not in taken)
    assert name == base or re.fullmatch(re.escape(base) + r" \d+", name)


def test_rename_refusal():
    taken = ["Place 1", "Home"]
    assert pl.rename_refusal("Place 1", "Clinic", taken) is None
    assert pl.rename_refusal("Place 1", "Place 1", taken) is None  # unchanged: nothing to refuse
    assert "already used" in pl.rename_refusal("Place 1", "Home", taken)
    assert "needs a name" in pl.rename_refusal("Place 1", "", taken)


def _places(at) -> list[dict]:
    return at.session_state["places"]


def _rename_field(at):
    return next(w for w in at.text_input if w.label == "Name of the selected place")


def test_click_names_rename_in_place(fake_map, sample, home):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["tiles"] = "none"
    run(at)
    # the first click, on alice's home stay: named after that suggested place (which the
    # sample's offline bearings call "wudaokou home"), not "Home" because it came first
    alice = sample[sample.uid == sample.uid.iloc[0]]
    cands = stays.suggest_places(alice).head(6)
    dist = haversine_m(cands.lat.to_numpy(), cands.lon.to_numpy(), *home)
    assert np.sort(dist)[0] <= 100.0 < np.sort(dist)[1]  # one suggestion matches the click
    add_place_by_click(at, fake_map, *home)
    assert [p["name"] for p in _places(at)] == [HOME_STAY]
    # a click 2 km away matches no suggestion: neutral, numbered after the places
    far = offset_points(home[0], home[1], 2000.0, 90.0)
    assert haversine_m(cands.lat.to_numpy(), cands.lon.to_numpy(), *far).min() > 500.0
    add_place_by_click(at, fake_map, float(far[0]), float(far[1]))
    assert [p["name"] for p in _places(at)] == [HOME_STAY, "Place 2"]
    before = dict(_places(at)[1])
    assert at.session_state["selected"] == "Place 2"
    field = _rename_field(at)
    assert field.value == "Place 2" and not field.disabled
    # rename from the keyboard: position, radius and selection stay; map and table follow
    field.set_value("  Clinic ")
    run(at)
    after = _places(at)[1]
    assert after == dict(before, name="Clinic")
    assert at.session_state["selected"] == "Clinic"
    assert [c["name"] for c in fake_map.circles()] == [HOME_STAY, "Clinic"]
    assert list(at.data_editor[0].value["name"]) == [HOME_STAY, "Clinic"]
    assert _rename_field(at).value == "Clinic"
    # the same field (one key) before and after: the browser keeps the keyboard focus in it
    assert _rename_field(at).key == field.key == state.RENAME_KEY
    # a taken name and an empty name are refused, with the reason next to the field
    for bad, reason in ((HOME_STAY, "already used"), ("", "needs a name")):
        _rename_field(at).set_value(bad)
        run(at)
        assert [p["name"] for p in _places(at)] == [HOME_STAY, "Clinic"]
        assert any(reason in e.value for e in at.error)
        assert _rename_field(at).value == "Clinic"
