"""Stream baselines through release_values, and the evaluation command at a tiny setting."""

from __future__ import annotations

import numpy as np
import pytest

from lmdk_core.errors import ParameterError
from lmdk_core.patterns import EventStream, Pattern
from lmdk_core.patterns import baselines as bl
from lmdk_core.patterns import evaluate as ev

NS = 1_000_000_000
TYPES = ("A", "B", "C")


def _stream() -> EventStream:
    # two users; user 0 ticks at 0,1,2,10 s, user 1 ticks at 0,5 s
    uid = np.array([0, 0, 0, 0, 1, 1])
    time = np.array([0, 1, 2, 10, 0, 5]) * NS
    return EventStream.from_arrays(tick_uid=uid, tick_time=time,
                                   event_tick=np.array([0, 1, 3, 4, 5]),
                                   event_type=np.array([0, 1, 2, 0, 2]), types=TYPES)


PATS = [Pattern(("A", "B"), 2, private=True), Pattern(("B", "C"), 20)]


def test_max_ticks_in_window():
    s = _stream()
    assert bl.max_ticks_in_window(s, 2) == 3  # user 0: ticks 0, 1, 2
    assert bl.max_ticks_in_window(s, 0) == 1
    assert bl.max_ticks_in_window(s, 100) == 4


@pytest.mark.parametrize("scheme", bl.WEVENT_SCHEMES)
def test_wevent_leaves_other_types_alone(scheme):
    s = _stream()
    rel = bl.wevent(s, PATS, epsilon=1.0, scheme=scheme, types=["A", "B"], rng=3)
    c = s.type_code("C")
    np.testing.assert_array_equal(rel.stream.tick[rel.stream.etype == c], s.tick[s.etype == c])
    assert rel.stream.n_ticks == s.n_ticks


@pytest.mark.parametrize("scheme", bl.LANDMARK_SCHEMES)
def test_landmark_baseline_runs_per_user(scheme):
    s = _stream()
    rel = bl.landmark(s, PATS, epsilon=50.0, scheme=scheme, types=list(TYPES), rng=4)
    # with a huge budget, regular cells come back exactly
    c = s.type_code("C")
    assert set(rel.stream.tick[rel.stream.etype == c]) >= {3, 5} or scheme == "adaptive"
    with pytest.raises(ParameterError):
        bl.landmark(s, PATS, epsilon=1.0, scheme="bd")


def test_evaluate_command_prints_the_table(capsys):
    code = ev.main(["--taxis", "40", "--days", "2", "--seeds", "2", "--baseline-seeds", "1",
                    "--lengths", "2", "--epsilons", "1,8", "--alphas", "0.5", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0
    assert "our own protocol" in out
    for name in ev.MECHANISMS:
        assert name in out
    assert "ε=8" in out


def test_evaluate_uniform_beats_event_rr_at_large_epsilon():
    setup = ev.prepare(taxis=60, days=2)
    runs = ev.evaluate(setup, lengths=[3], epsilons=[8.0], seeds=4,
                       mechanisms=["uniform", "event-rr"])
    table = ev.summarise(runs, [0.5]).set_index("mechanism")
    # the PPM only touches private-pattern types, event-level RR touches all of them
    assert table.loc["uniform", "q"] > table.loc["event-rr", "q"]
