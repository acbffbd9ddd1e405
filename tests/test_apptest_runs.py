"""The AppTest harness as the app tests use it: conftest's
``_apptest_runs_as_the_server_does`` replaces Streamlit's 1 ms polling for a run's end by a wait
on the script's thread. A run still returns what the script drew, and a script that outlasts
its timeout still fails with Streamlit's error and is stopped."""

from __future__ import annotations

import time

import pytest
from conftest import await_script_run
from streamlit.testing.v1 import AppTest, local_script_runner


def test_the_harness_awaits_runs_instead_of_polling():
    awaited = local_script_runner.require_widgets_deltas
    assert awaited.func is await_script_run
    assert awaited.keywords["polled"].__module__ == local_script_runner.__name__  # Streamlit's


def test_a_run_returns_what_the_script_drew_once_it_has_finished():
    t0 = time.monotonic()
    at = AppTest.from_string(
        "import time\nimport streamlit as st\ntime.sleep(0.3)\nst.write('after the wait')"
    ).run(timeout=10)
    assert [m.value for m in at.markdown] == ["after the wait"]
    assert 0.3 <= time.monotonic() - t0 < 10


def test_a_script_that_outlasts_its_timeout_fails_and_is_stopped():
    at = AppTest.from_string(
        "import time\nimport streamlit as st\nshown = st.empty()\n"
        "for i in range(200):\n    time.sleep(0.05)\n    shown.write(i)\nst.write('never')"
    )
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"timed out after 0\.3"):
        at.run(timeout=0.3)
    # stopped at its next Streamlit call, long before the 10 s it would take
    assert time.monotonic() - t0 < 5
